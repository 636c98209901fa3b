//! `buildvise list`.

use super::{Cli, app, print_json, print_text};
use crate::access::Access;
use crate::config::Config;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// List the formats plugins export, for tools defined in config (`formats = ["eslint"]`).
    #[arg(long)]
    formats: bool,
}

pub fn run(cli: &Cli, args: &Args) -> anyhow::Result<i32> {
    let app = app(cli, Config::load()?, false)?;
    // The tools of the project here: those its buildvise.toml defines are listed too.
    if args.formats {
        let formats: Vec<_> = app.registry.formats().map(|f| &f.spec).collect();
        if args.json {
            print_json(&serde_json::to_value(&formats)?)?;
        } else {
            let width = formats.iter().map(|f| f.name.len()).max().unwrap_or(0);
            let lines: String = formats.iter().map(|f| format!("{:width$}  {}\n", f.name, f.description)).collect();
            print_text(&lines)?;
        }
        return Ok(0);
    }
    let cwd = std::env::current_dir()?;
    let rendered = app.list(&Access::anywhere(), &cwd);
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
