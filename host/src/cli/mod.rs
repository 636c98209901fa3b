//! The `buildvise` command line: argument parsing and one module per subcommand. Each command
//! builds a request, calls the engine, and prints what the renderer made of it.

mod exec;
mod list;
mod log;
mod mcp;
mod parse;
mod runs;
mod serve;

use crate::config::Config;
use crate::exec::Engine;
use crate::plugins::Registry;
use crate::render::Detail;
use crate::store::Store;
use clap::{Parser, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "buildvise",
    version,
    about = "Run builds and tests; keep the whole log; answer with only what matters."
)]
pub struct Cli {
    /// Also load plugins from this directory (before the default places). Repeatable.
    #[arg(long, global = true, value_name = "DIR", env = "BUILDVISE_PLUGIN_PATH", value_delimiter = ':')]
    pub plugin_dir: Vec<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the tools the plugins provide, and plugins that failed to load.
    List(list::Args),
    /// Run a tool, store its log, print the diagnostics. Exits with the tool's exit code.
    Exec(exec::Args),
    /// Page, grep or re-render a stored run.
    Log(log::Args),
    /// Recent runs, newest first.
    Runs(runs::Args),
    /// Parse a saved log through a tool's parser, without running anything.
    Parse(parse::Args),
    /// Serve the `build` tool to MCP clients (stdio, or --http).
    Serve(serve::Args),
    /// Set up MCP clients.
    Mcp(mcp::Args),
}

/// Runs the command line; returns the process exit code.
pub fn main() -> anyhow::Result<i32> {
    let cli = Cli::parse();
    match &cli.command {
        Command::List(args) => list::run(&cli, args),
        Command::Exec(args) => exec::run(&cli, args),
        Command::Log(args) => log::run(args),
        Command::Runs(args) => runs::run(args),
        Command::Parse(args) => parse::run(&cli, args),
        Command::Serve(args) => serve::run(&cli, args),
        Command::Mcp(args) => mcp::run(args),
    }
}

/// Settings from the current directory's config, and the plugins they point at.
fn load(cli: &Cli) -> anyhow::Result<(Config, Registry)> {
    let cwd = std::env::current_dir()?;
    let config = Config::load(&cwd)?;
    let mut dirs = cli.plugin_dir.clone();
    dirs.extend(config.plugin_dirs.iter().cloned());
    Ok((config, Registry::discover(&dirs)))
}

fn engine(cli: &Cli) -> anyhow::Result<(Config, Engine)> {
    let (config, registry) = load(cli)?;
    let store = Store::open(&Store::default_root())?;
    Ok((config, Engine { registry, store }))
}

fn open_store() -> anyhow::Result<Store> {
    Ok(Store::open(&Store::default_root())?)
}

fn print_json(value: &serde_json::Value) -> anyhow::Result<()> {
    print_text(&(serde_json::to_string_pretty(value)? + "\n"))
}

/// An answer for a person at a terminal: the status word coloured (red for a failure, green for
/// success), unless `NO_COLOR` is set. Pipes and files get the text exactly as agents read it.
fn for_terminal(text: &str) -> std::borrow::Cow<'_, str> {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() || std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) {
        return std::borrow::Cow::Borrowed(text);
    }
    let (word, rest) = text.split_at(text.find([' ', '\n']).unwrap_or(text.len()));
    let colour = match word {
        "ok" => "32",
        "FAIL" | "TIMEOUT" | "CANCELLED" | "KILLED" | "ERROR" => "31",
        _ => return std::borrow::Cow::Borrowed(text),
    };
    std::borrow::Cow::Owned(format!("\x1b[1;{colour}m{word}\x1b[0m{rest}"))
}

/// Writes to stdout; a closed pipe (`buildvise … | head`) is not an error worth a message.
fn print_text(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

/// Detail level flag shared by exec, log and parse.
#[derive(Debug, Clone, clap::Args)]
struct DetailArgs {
    /// How much to say: summary, standard or full.
    #[arg(long, value_enum, default_value_t = Detail::Standard)]
    detail: Detail,
    /// Most raw output lines in the answer (1..10000; default: config, else 20).
    #[arg(long, value_name = "N")]
    max_lines: Option<i64>,
}

impl DetailArgs {
    fn max_lines(&self, config: &Config) -> anyhow::Result<u32> {
        match self.max_lines {
            Some(n) => crate::config::check_max_lines(n).map_err(anyhow::Error::msg),
            None => Ok(config.max_lines),
        }
    }
}
