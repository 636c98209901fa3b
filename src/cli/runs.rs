//! `buildvise runs`: recent runs, newest first, with what each came to and how it compared with
//! the run before it; flaky tests under the newest run of their command.

use super::{Cli, app, print_json, print_text};
use buildvise_app::{Config, RunsFilter, now_ms, render_runs};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// How many runs to show.
    #[arg(long, default_value_t = 20)]
    limit: usize,
    /// Only runs of this tool (`cargo.test`), or of a plugin's tools (`cargo`).
    #[arg(long)]
    tool: Option<String>,
    /// Only runs in this directory or below it.
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Only runs that did not succeed.
    #[arg(long)]
    failed: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(cli: &Cli, args: &Args) -> anyhow::Result<i32> {
    let cwd = match &args.cwd {
        // As exec stores it: absolute, symlinks resolved.
        Some(dir) => Some(
            std::fs::canonicalize(dir)
                .map_err(|e| anyhow::anyhow!("--cwd {}: {e}; send a directory that exists", dir.display()))?,
        ),
        None => None,
    };
    let filter = RunsFilter { tool: args.tool.clone(), cwd, failed: args.failed, limit: args.limit };
    let runs = app(cli, Config::load()?, false)?.runs(&filter)?;
    let rendered = render_runs(&runs, now_ms());
    if args.json {
        print_json(&rendered.structured)?;
    } else {
        print_text(&rendered.text)?;
    }
    Ok(0)
}
