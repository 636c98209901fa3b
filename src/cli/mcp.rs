//! `buildvise mcp install`: registers buildvise with an MCP client.

use super::print_text;
use crate::mcp::{Client, Scope, install};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: McpCommand,
}

#[derive(Debug, clap::Subcommand)]
enum McpCommand {
    /// Write (or merge) the server entry into a client's MCP config, and print it for the others.
    Install {
        /// Which client's file to write.
        #[arg(long, value_enum, default_value_t = Client::Claude)]
        client: Client,
        /// The project's file (in the current directory) or the user's.
        #[arg(long, value_enum, default_value_t = Scope::Project)]
        scope: Scope,
    },
}

pub fn run(args: &Args) -> anyhow::Result<i32> {
    let McpCommand::Install { client, scope } = args.command;
    let installed = install(client, scope, &std::env::current_dir()?)?;
    let verb = if installed.changed { "wrote" } else { "already set up:" };
    print_text(&format!("{verb} {}\nother clients:\n{}", installed.path.display(), installed.others))?;
    Ok(0)
}
