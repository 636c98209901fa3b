//! `buildvise parse`: a saved log through a tool's parser, as exec would have parsed it.
//! `--json` prints the whole result in the shape `../shared/eval/score.py` reads.

use super::{Cli, DetailArgs, app, for_terminal, print_json, print_text};
use buildvise_app::{Config, Hints, ParseCall, SavedLog, Surface};
use buildvise_plugin_api::{Diagnostic, Severity};
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
    /// The exit code the run ended with. A log that shows failed tests or errors reads as a
    /// failure whatever the code (except with --mcp, which answers exactly as exec would).
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
    #[arg(long, value_name = "NAME[=FILE]", value_parser = super::report_arg, help = super::FORMAT_HELP, conflicts_with_all = ["json", "mcp"])]
    format: Vec<super::ReportArg>,
    /// Answer exactly as the MCP tool's `exec` would, run id and hints included (`parsed` stands
    /// in for the id); without it the answer names no run, since none was stored.
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
    stopped_early: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parser_error: Option<&'a str>,
}

pub fn run(cli: &Cli, args: &Args) -> anyhow::Result<i32> {
    let app = app(cli, Config::load()?, false)?;
    let cwd = match &args.cwd {
        Some(dir) => std::path::absolute(dir)?,
        None => std::env::current_dir()?,
    };
    let log = match (&args.log, &args.stdout, &args.stderr) {
        (Some(log), _, _) => SavedLog::Combined(log.clone()),
        (None, Some(out), Some(err)) => SavedLog::Streams { stdout: out.clone(), stderr: err.clone() },
        _ => anyhow::bail!("send --log FILE, or --stdout FILE with --stderr FILE"),
    };
    let call = ParseCall {
        tool: args.tool.clone(),
        log,
        exit_code: args.exit_code,
        artifacts: args.artifact.clone(),
        cwd,
        detail: args.detail.detail.into(),
        max_lines: args.detail.max_lines()?,
    };
    let hints = if args.mcp {
        Hints { surface: Surface::Mcp, stored: true }
    } else {
        Hints { surface: Surface::Cli, stored: false }
    };
    let (finished, rendered) = app.parse(&call, hints)?;
    if super::write_reports(&app, &finished, &args.format)? {
        return Ok(0);
    }
    let result = &finished.result;
    if args.json {
        let by = |s| result.diagnostics.iter().filter(|d| d.severity == s).collect::<Vec<_>>();
        let view = ParseView {
            // The answer's word, as the text's: a log that shows a failure is one, whatever
            // exit code `parse` was told (0 when told none).
            success: rendered.structured["success"].as_bool().unwrap_or(false),
            exit_code: args.exit_code,
            errors: by(Severity::Error),
            warnings: by(Severity::Warning),
            infos: by(Severity::Info),
            summary: result.summary.as_ref(),
            failed_tests: &result.failed_tests,
            stopped_early: result.stopped_early.as_deref(),
            parser_error: result.parser_error.as_deref(),
        };
        print_json(&serde_json::to_value(&view)?)?;
    } else {
        print_text(&for_terminal(&rendered.text))?;
    }
    Ok(0)
}
