//! `buildvise runs`.

use super::{open_store, print_json, print_text};
use crate::store::{RunStatus, now_ms};
use std::fmt::Write;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// How many runs to show.
    #[arg(long, default_value_t = 20)]
    limit: usize,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(args: &Args) -> anyhow::Result<i32> {
    let store = open_store()?;
    let runs: Vec<_> = store.list()?.into_iter().take(args.limit).collect();
    if args.json {
        print_json(&serde_json::to_value(&runs)?)?;
        return Ok(0);
    }
    let mut text = String::new();
    if runs.is_empty() {
        text.push_str("no runs yet\n");
    }
    let now = now_ms();
    for m in &runs {
        let status = match (m.status, m.exit_code) {
            (RunStatus::Exited, Some(code)) => format!("exit {code}"),
            (status, _) => format!("{status:?}").to_lowercase(),
        };
        let took = m.duration_ms().map(|ms| format!("{:.1}s", ms as f64 / 1000.0)).unwrap_or_else(|| "-".into());
        let _ = writeln!(
            text,
            "{}  {:<14} {:<9} {:>7} {:>8} lines  {} ago  {}",
            m.id,
            m.tool,
            status,
            took,
            m.lines,
            age(now.saturating_sub(m.started_ms)),
            m.cwd
        );
    }
    print_text(&text)?;
    Ok(0)
}

fn age(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m", s / 60),
        3600..86400 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86400),
    }
}
