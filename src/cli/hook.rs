//! `buildvise hook`: what a client's shell hook runs before a command.
//!
//! `hook shell` reads the command line from stdin and prints the line to run instead: the same
//! line with each command a tool stands for run through `buildvise exec`, or the line as it came.
//! A hook never stands in the agent's way, so nothing here fails: a line it cannot read, a
//! config it cannot load, a plugin that is missing all print the line unchanged, and the exit
//! code is always 0. docs/hooks.md has the rules.

use super::{Cli, app};
use buildvise_app::{Access, Config};
use std::io::{Read, Write};
use std::path::PathBuf;

/// The longest line read: a command an agent types is a line, not a file.
const MAX_LINE: u64 = 64 * 1024;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    client: Client,
}

#[derive(Debug, clap::Subcommand)]
enum Client {
    /// Read a shell command line on stdin; print the line to run instead (or the same line).
    Shell {
        /// The directory the line runs in (default: the current one).
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
    },
}

pub fn run(cli: &Cli, args: &Args) -> anyhow::Result<i32> {
    let Client::Shell { cwd } = &args.client;
    let mut line = String::new();
    // A line that is not text, or too long, is printed back as far as it was read.
    let _ = std::io::stdin().take(MAX_LINE).read_to_string(&mut line);
    let line = line.strip_suffix('\n').unwrap_or(&line);
    let rewritten = rewrite(cli, line, cwd.as_ref());
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", rewritten.as_deref().unwrap_or(line));
    Ok(0)
}

/// The line to run instead, when there is one.
fn rewrite(cli: &Cli, line: &str, cwd: Option<&PathBuf>) -> Option<String> {
    let here = std::env::current_dir().ok()?;
    let dir = cwd.map_or(here.clone(), |dir| here.join(dir));
    let app = app(cli, Config::load().ok()?, false).ok()?;
    let program = std::env::current_exe().ok()?;
    let rewrite = app.rewrite(&Access::anywhere(), line, &dir, &program.to_string_lossy())?;
    tracing::debug!("hook: {line:?} runs as {:?} ({})", rewrite.line, rewrite.tools.join(", "));
    Some(rewrite.line)
}
