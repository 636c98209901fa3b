//! `buildvise discover`: the shell commands agents ran on this machine without buildvise although
//! it would have run them, and the tokens their output took, read from the transcripts Claude Code
//! and Codex keep. It only reads; nothing leaves the machine.

use super::{Cli, app, print_json, print_text};
use buildvise_app::{Client, Config, DiscoverCall, parse_since};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only commands run since then: a date (2026-03-01) or a span back from now (7d, 12h).
    #[arg(long, value_name = "WHEN")]
    since: Option<String>,
    /// Only this client's transcripts.
    #[arg(long, value_enum)]
    client: Option<ClientArg>,
    /// The most commands each list shows.
    #[arg(long, value_name = "N", default_value_t = 10)]
    limit: usize,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// `--client`: the application's [`Client`], as the command line spells it.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum ClientArg {
    /// Claude Code (`CLAUDE_CONFIG_DIR`, else ~/.claude).
    Claude,
    /// Codex CLI (`CODEX_HOME`, else ~/.codex).
    Codex,
}

pub fn run(cli: &Cli, args: &Args) -> anyhow::Result<i32> {
    let since = args.since.as_deref().map(parse_since).transpose().map_err(|e| anyhow::anyhow!("--since {e}"))?;
    let client = args.client.map(|c| match c {
        ClientArg::Claude => Client::Claude,
        ClientArg::Codex => Client::Codex,
    });
    let call = DiscoverCall { client, since_ms: since, limit: args.limit };
    let found = app(cli, Config::load()?, false)?.discover(&call);
    if args.json {
        print_json(&serde_json::to_value(&found)?)?;
    } else {
        print_text(&found.text())?;
    }
    Ok(0)
}
