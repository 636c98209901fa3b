//! `buildvise list`.

use super::{Cli, load, print_json, print_text};
use crate::exec::Access;
use crate::render::render_list;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(cli: &Cli, args: &Args) -> anyhow::Result<i32> {
    let (config, registry) = load(cli)?;
    let access = Access::default();
    let visible = registry.tools().filter(|t| access.visible(&t.spec, &config));
    let rendered = render_list(visible, &registry.failures, &registry.clashes);
    if args.json {
        print_json(&rendered.structured)?;
    } else {
        print_text(&rendered.text)?;
        if registry.tools().next().is_none() {
            let searched: Vec<String> = registry.searched.iter().map(|d| d.display().to_string()).collect();
            eprintln!("searched: {}", searched.join(", "));
        }
    }
    Ok(0)
}
