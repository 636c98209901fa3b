//! `buildvise exec`: runs a tool and prints what an agent would get. On a terminal a live
//! progress line goes to stderr; Ctrl-C, SIGTERM and SIGHUP end the whole process tree and keep
//! the run.

use super::{Cli, DetailArgs, app, for_terminal, print_json, print_text};
use crate::access::Access;
use crate::app::{ExecCall, Progress};
use crate::config::Config;
use crate::render::Surface;
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
/// How long, after the answer is out, the process waits for its retention pass to end.
const RETENTION_PATIENCE: std::time::Duration = std::time::Duration::from_secs(2);

/// Exit code when the run timed out, as `timeout(1)` uses.
const EXIT_TIMEOUT: i32 = 124;
/// Exit code when the run was cancelled (128 + SIGINT).
const EXIT_CANCELLED: i32 = 130;

pub fn run(cli: &Cli, args: &Args) -> anyhow::Result<i32> {
    let app = app(cli, Config::load()?, true)?;
    let current = std::env::current_dir()?;
    let call = ExecCall {
        tool: args.tool.clone(),
        args: args.args.clone(),
        cwd: args.cwd.as_ref().map_or_else(|| current.clone(), |dir| current.join(dir)),
        timeout_secs: args.timeout,
        confirm: args.confirm,
        detail: args.detail.detail,
        max_lines: args.detail.max_lines()?,
    };

    let cancel = CancelToken::default();
    let on_signal = cancel.clone();
    // If a handler is already installed (tests calling in-process), the signals keep their default.
    let _ = ctrlc::set_handler(move || on_signal.cancel());

    let live = std::io::stderr().is_terminal() && !args.json;
    // One status line, redrawn in place; cut to the terminal's usual width so it never wraps.
    let mut report = |p: &Progress| {
        if live {
            let shown: String = p.describe().chars().take(STATUS_WIDTH).collect();
            let _ = write!(std::io::stderr(), "\r\x1b[2K{shown}");
        }
    };
    let answer = app.exec(&Access::anywhere(), &call, &cancel, Surface::Cli, &mut report);
    if live {
        let _ = write!(std::io::stderr(), "\r\x1b[2K");
    }
    let answer = answer?;
    if args.json {
        print_json(&answer.rendered.structured)?;
    } else {
        print_text(&for_terminal(&answer.rendered.text))?;
    }
    app.settle_background(RETENTION_PATIENCE);
    Ok(match answer.status {
        RunStatus::TimedOut => EXIT_TIMEOUT,
        RunStatus::Cancelled => EXIT_CANCELLED,
        _ => answer.exit_code.unwrap_or(1),
    })
}
