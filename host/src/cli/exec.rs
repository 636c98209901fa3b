//! `buildvise exec`: runs a tool and prints what an agent would get. On a terminal a live
//! progress line goes to stderr; Ctrl-C ends the whole process tree and keeps the run.

use super::{Cli, DetailArgs, engine, for_terminal, print_json, print_text};
use crate::exec::{Access, ExecRequest, Progress};
use crate::render::{Surface, Tail, render_exec};
use crate::run::CancelToken;
use crate::store::RunStatus;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The tool, e.g. cargo.test (see `buildvise list`).
    tool: String,
    /// Directory to run in (default: the current one).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Seconds before the run is killed (default: the tool's, else config, else 600).
    #[arg(long, value_name = "S")]
    timeout: Option<u64>,
    /// Run a tool that changes the workspace (npm.install).
    #[arg(long)]
    confirm: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    detail: DetailArgs,
    /// Arguments for the tool.
    #[arg(last = true, value_name = "ARGS")]
    args: Vec<String>,
}

const STATUS_WIDTH: usize = 100;

/// Exit code when the run timed out, as `timeout(1)` uses.
const EXIT_TIMEOUT: i32 = 124;
/// Exit code when the run was cancelled (128 + SIGINT).
const EXIT_CANCELLED: i32 = 130;

pub fn run(cli: &Cli, args: &Args) -> anyhow::Result<i32> {
    let (config, engine) = engine(cli)?;
    let max_lines = args.detail.max_lines(&config)?;
    let cwd = match &args.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir()?,
    };
    let request = ExecRequest {
        tool: args.tool.clone(),
        args: args.args.clone(),
        cwd,
        timeout_secs: args.timeout,
        confirm: args.confirm,
    };

    let cancel = CancelToken::default();
    let on_interrupt = cancel.clone();
    // If a handler is already installed (tests calling in-process), Ctrl-C keeps its default.
    let _ = ctrlc::set_handler(move || on_interrupt.cancel());

    let live = std::io::stderr().is_terminal() && !args.json;
    // One status line, redrawn in place; cut to the terminal's usual width so it never wraps.
    let mut report = |p: &Progress| {
        if live {
            let shown: String = p.describe().chars().take(STATUS_WIDTH).collect();
            let _ = write!(std::io::stderr(), "\r\x1b[2K{shown}");
        }
    };
    let finished = engine.exec(&Access::default(), &request, &cancel, &mut report);
    if live {
        let _ = write!(std::io::stderr(), "\r\x1b[2K");
    }
    let finished = finished?;
    let rendered = render_exec(Tail::Stored(&engine.store), &finished, args.detail.detail, max_lines, Surface::Cli);
    if args.json {
        print_json(&rendered.structured)?;
    } else {
        print_text(&for_terminal(&rendered.text))?;
    }
    Ok(match finished.meta.status {
        RunStatus::TimedOut => EXIT_TIMEOUT,
        RunStatus::Cancelled => EXIT_CANCELLED,
        _ => finished.meta.exit_code.unwrap_or(1),
    })
}
