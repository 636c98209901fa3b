//! `buildvise gain`: the tokens buildvise saved, in all, by tool, by project and by day: each
//! stored run's raw log against the answers the agent got about it (docs/gain.md).

use super::{Cli, app, print_json, print_text};
use buildvise_app::{Config, GainStyle, parse_since, render_gain};
use std::io::IsTerminal;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only runs that started from then on: a date (2026-11-01, from local midnight) or a
    /// duration back from now (30m, 24h, 7d, 2w).
    #[arg(long, value_name = "WHEN")]
    since: Option<String>,
    /// Print JSON instead of text (fields in docs/gain.md).
    #[arg(long)]
    json: bool,
}

pub fn run(cli: &Cli, args: &Args) -> anyhow::Result<i32> {
    let since = args.since.as_deref().map(parse_since).transpose().map_err(|e| anyhow::anyhow!("--since {e}"))?;
    let gain = app(cli, Config::load()?, false)?.gain(since)?;
    let colour = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let home = std::env::var("HOME").ok().filter(|h| h.len() > 1);
    let rendered = render_gain(&gain, GainStyle { colour, home: home.as_deref() });
    if args.json {
        print_json(&rendered.structured)?;
    } else {
        print_text(&rendered.text)?;
    }
    Ok(0)
}
