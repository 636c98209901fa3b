//! `buildvise list`.

use super::{Cli, app, print_json, print_text};
use crate::config::Config;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(cli: &Cli, args: &Args) -> anyhow::Result<i32> {
    let app = app(cli, Config::load()?, false)?;
    let rendered = app.list();
    if args.json {
        print_json(&rendered.structured)?;
    } else {
        print_text(&rendered.text)?;
        if app.registry.tools().next().is_none() {
            let searched: Vec<String> = app.registry.searched.iter().map(|d| d.display().to_string()).collect();
            eprintln!("searched: {}", searched.join(", "));
        }
    }
    Ok(0)
}
