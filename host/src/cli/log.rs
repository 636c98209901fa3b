//! `buildvise log`: pages and greps a stored run, or re-renders its result (`--detail`).

use super::{DetailArgs, for_terminal, open_store, print_json, print_text};
use crate::config::Config;
use crate::render::{LogQuery, Surface, Tail, render_exec, render_log};
use crate::store::StreamFilter;
use buildvise_plugin_api::Stream;
use std::io::Write;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum StreamArg {
    Stdout,
    Stderr,
    Both,
}

impl From<StreamArg> for StreamFilter {
    fn from(s: StreamArg) -> Self {
        match s {
            StreamArg::Stdout => StreamFilter::Only(Stream::Stdout),
            StreamArg::Stderr => StreamFilter::Only(Stream::Stderr),
            StreamArg::Both => StreamFilter::Both,
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run id exec printed.
    run_id: String,
    /// First line, 1-based; negative counts from the end.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
    start: i64,
    /// How many lines (capped by --max-lines).
    #[arg(long)]
    count: Option<u64>,
    #[arg(long, value_enum, default_value_t = StreamArg::Both)]
    stream: StreamArg,
    /// Only lines matching this regular expression.
    #[arg(long, value_name = "RE")]
    grep: Option<String>,
    /// Print the selected lines' bytes exactly as stored, nothing else.
    #[arg(long, conflicts_with_all = ["json", "grep"])]
    raw: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Re-render the run's result at this detail instead of paging the log.
    #[arg(long, value_enum)]
    detail: Option<crate::render::Detail>,
    #[arg(long, value_name = "N")]
    max_lines: Option<i64>,
}

pub fn run(args: &Args) -> anyhow::Result<i32> {
    let store = open_store()?;
    let config = Config::load(&std::env::current_dir()?)?;
    let detail = DetailArgs { detail: args.detail.unwrap_or_default(), max_lines: args.max_lines };
    let max_lines = detail.max_lines(&config)?;
    if let Some(level) = args.detail {
        let finished = crate::exec::stored(&store, &args.run_id)?;
        let rendered = render_exec(Tail::Stored(&store), &finished, level, max_lines, Surface::Cli);
        return emit(&rendered, args.json);
    }
    let mut reader = store.reader(&args.run_id)?;
    let grep = args
        .grep
        .as_deref()
        .map(regex::Regex::new)
        .transpose()
        .map_err(|e| anyhow::anyhow!("--grep is not a valid regular expression: {e}"))?;
    let query = LogQuery { start: args.start, count: args.count, stream: args.stream.into(), grep, max_lines };
    if args.raw {
        let total = reader.count(query.stream)?;
        let first = if query.start < 0 {
            total.saturating_sub(query.start.unsigned_abs())
        } else {
            (query.start.max(1) as u64) - 1
        };
        let mut out = std::io::stdout().lock();
        for line in reader.page(query.stream, first, query.count.unwrap_or(u64::from(max_lines)))? {
            match out.write_all(&line.bytes).and_then(|()| out.write_all(b"\n")) {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(0),
                other => other?,
            }
        }
        return Ok(0);
    }
    let rendered = render_log(&mut reader, &args.run_id, &query, Surface::Cli)?;
    emit(&rendered, args.json)
}

fn emit(rendered: &crate::render::Rendered, json: bool) -> anyhow::Result<i32> {
    if json {
        print_json(&rendered.structured)?;
    } else {
        print_text(&for_terminal(&rendered.text))?;
    }
    Ok(0)
}
