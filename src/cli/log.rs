//! `buildvise log`: pages and greps a stored run, or re-renders its answer (`--detail`).

use super::{Cli, app, for_terminal, json_text, print_text};
use buildvise_app::{Access, AnsweredCall, CancelToken, Config, Detail, LogCall, Sent, StreamFilter, Surface};
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
    /// Re-render the run's answer at this detail instead of paging the log.
    #[arg(long, value_enum)]
    detail: Option<super::DetailArg>,
    #[arg(long, value_name = "NAME[=FILE]", value_parser = super::report_arg, help = super::FORMAT_HELP, conflicts_with_all = ["raw", "json", "grep", "detail"])]
    format: Vec<super::ReportArg>,
    #[arg(long, value_name = "N")]
    max_lines: Option<i64>,
}

pub fn run(cli: &Cli, args: &Args) -> anyhow::Result<i32> {
    let app = app(cli, Config::load()?, false)?;
    let max_lines = args.max_lines.map(buildvise_app::check_max_lines).transpose()?;
    if args.raw {
        let count = args.count.unwrap_or(u64::from(max_lines.unwrap_or(app.config().max_lines)));
        let page = app.raw_lines(&args.run_id, args.stream.into(), args.start, count)?;
        // Said on stderr: stdout holds the stored bytes and nothing else.
        if let Some(partial) = page.partial() {
            eprintln!("buildvise: {partial}");
        }
        let mut out = std::io::stdout().lock();
        return match page.write_to(&mut out).and_then(|()| out.flush()) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(0),
            other => other.map(|()| 0).map_err(Into::into),
        };
    }
    if !args.format.is_empty() {
        super::write_reports(&app, &app.stored(&args.run_id)?, &args.format)?;
        return Ok(0);
    }
    let call = LogCall {
        run_id: args.run_id.clone(),
        start: args.start,
        count: args.count,
        stream: args.stream.into(),
        grep: args.grep.clone(),
        detail: args.detail.map(Detail::from),
        max_lines,
    };
    let rendered = app.log(&Access::anywhere(), &call, &CancelToken::default(), Surface::Cli, &mut |_| {})?;
    // A page read after an exec is part of what the run cost the agent (`gain`); `--raw`, above,
    // copies stored bytes out and is no answer.
    if args.json {
        let json = json_text(&rendered.structured)?;
        print_text(&json)?;
        app.sent(&args.run_id, AnsweredCall::Log, Sent::CliJson(&json));
    } else {
        print_text(&for_terminal(&rendered.text))?;
        app.sent(&args.run_id, AnsweredCall::Log, Sent::Cli(&rendered.text));
    }
    Ok(0)
}
