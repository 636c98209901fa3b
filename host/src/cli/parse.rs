//! `buildvise parse`: a saved log through a tool's parser, as exec would have parsed it.
//! `--json` prints the whole result in the shape `../shared/eval/score.py` reads.

use super::{Cli, DetailArgs, for_terminal, load, print_json, print_text};
use crate::exec::{Finished, SavedLog, parse_saved};
use crate::render::{Surface, Tail, render_exec};
use crate::store::{RunMeta, RunStatus};
use buildvise_plugin_api::Diagnostic;
use serde::Serialize;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The tool whose parser reads the log, e.g. cargo.build.
    tool: String,
    /// The combined log (both streams interleaved).
    #[arg(long, value_name = "FILE", required_unless_present = "stdout", conflicts_with_all = ["stdout", "stderr"])]
    log: Option<PathBuf>,
    /// The stdout log (with --stderr).
    #[arg(long, value_name = "FILE", requires = "stderr")]
    stdout: Option<PathBuf>,
    /// The stderr log (with --stdout).
    #[arg(long, value_name = "FILE", requires = "stdout")]
    stderr: Option<PathBuf>,
    /// The exit code the run ended with.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    exit_code: i32,
    /// An artifact the run wrote (JUnit XML, TRX, a JSON report). Repeatable.
    #[arg(long, value_name = "FILE")]
    artifact: Vec<PathBuf>,
    /// The directory the run ran in; paths are made relative to it (default: the current one).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Print the whole result as JSON.
    #[arg(long)]
    json: bool,
    /// Word hints as the MCP tool does, so the text is exactly what an agent reads.
    #[arg(long)]
    mcp: bool,
    #[command(flatten)]
    detail: DetailArgs,
}

/// The JSON `parse --json` prints: the diagnostics split by severity.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ParseView<'a> {
    success: bool,
    exit_code: i32,
    errors: Vec<&'a Diagnostic>,
    warnings: Vec<&'a Diagnostic>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    infos: Vec<&'a Diagnostic>,
    summary: Option<&'a buildvise_plugin_api::TestSummary>,
    failed_tests: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    parser_error: Option<&'a str>,
}

pub fn run(cli: &Cli, args: &Args) -> anyhow::Result<i32> {
    let (config, registry) = load(cli)?;
    let cwd = match &args.cwd {
        Some(dir) => std::path::absolute(dir)?,
        None => std::env::current_dir()?,
    };
    let log = match (&args.log, &args.stdout, &args.stderr) {
        (Some(log), _, _) => SavedLog::Combined(log.clone()),
        (None, Some(out), Some(err)) => SavedLog::Streams { stdout: out.clone(), stderr: err.clone() },
        _ => anyhow::bail!("send --log FILE, or --stdout FILE with --stderr FILE"),
    };
    let max_lines = args.detail.max_lines(&config)?;
    // The JSON has no tail; the text may need one, when nothing explains a failure.
    let keep = if args.json { 0 } else { max_lines as usize };
    let parsed = parse_saved(&registry, &args.tool, &log, args.exit_code, &cwd, &args.artifact, keep)?;
    let result = parsed.result;
    if args.json {
        let by = |s| result.diagnostics.iter().filter(|d| d.severity == s).collect::<Vec<_>>();
        let view = ParseView {
            success: result.success,
            exit_code: args.exit_code,
            errors: by(buildvise_plugin_api::Severity::Error),
            warnings: by(buildvise_plugin_api::Severity::Warning),
            infos: by(buildvise_plugin_api::Severity::Info),
            summary: result.summary.as_ref(),
            failed_tests: &result.failed_tests,
            parser_error: result.parser_error.as_deref(),
        };
        print_json(&serde_json::to_value(&view)?)?;
        return Ok(0);
    }
    // Not a stored run: no id to page, no duration worth showing.
    let meta = RunMeta {
        started_ms: 0,
        ended_ms: Some(0),
        status: RunStatus::Exited,
        exit_code: Some(args.exit_code),
        ..RunMeta::starting("parsed", &args.tool, "", &[], &cwd.display().to_string())
    };
    let rendered = render_exec(
        Tail::Kept(&parsed.tail, parsed.lines),
        &Finished { meta, result },
        args.detail.detail,
        max_lines,
        if args.mcp { Surface::Mcp } else { Surface::Cli },
    );
    print_text(&for_terminal(&rendered.text))?;
    Ok(0)
}
