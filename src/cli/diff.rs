//! `buildvise diff RUN_A RUN_B`: what was fixed, is new and is still there from one stored run to
//! another, matched as `exec` matches a run with the one before it.

use super::{Cli, app, print_json, print_text};
use buildvise_app::Config;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The earlier run.
    before: String,
    /// The later run.
    after: String,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(cli: &Cli, args: &Args) -> anyhow::Result<i32> {
    let rendered = app(cli, Config::load()?, false)?.diff(&args.before, &args.after)?;
    if args.json {
        print_json(&rendered.structured)?;
    } else {
        print_text(&rendered.text)?;
    }
    Ok(0)
}
