//! `buildvise serve`: the MCP server, on stdio (default) or streamable HTTP.

use super::{Cli, app};
use crate::config::Config;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Serve streamable HTTP at http://ADDR/mcp instead of stdio (loopback only, e.g. 127.0.0.1:8765).
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// Hide and refuse tools that change the workspace.
    #[arg(long)]
    read_only: bool,
    /// Hide and refuse these tools (comma-separated; `npm.*` for a whole plugin).
    #[arg(long, value_name = "TOOLS", value_delimiter = ',')]
    disable: Vec<String>,
    /// Only run in this directory or below. Repeatable. Default: the client's roots, else the
    /// current directory.
    #[arg(long, value_name = "DIR")]
    root: Vec<PathBuf>,
}

pub fn run(cli: &Cli, args: &Args) -> anyhow::Result<i32> {
    let mut config = Config::load()?;
    config.read_only |= args.read_only;
    config.disable.extend(args.disable.iter().cloned());
    let roots = args.root.iter().map(std::path::absolute).collect::<Result<Vec<_>, _>>()?;
    for root in &roots {
        anyhow::ensure!(root.is_dir(), "--root {}: no such directory; send an existing directory", root.display());
    }
    let app = Arc::new(app(cli, config, true)?);
    let home = std::env::current_dir()?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let served = runtime.block_on(async move {
        match args.http {
            None => crate::mcp::serve_stdio(app, roots, home).await,
            Some(addr) => {
                crate::mcp::serve_http(app, roots, home, addr, |bound| {
                    eprintln!("buildvise: serving MCP at http://{bound}/mcp")
                })
                .await
            }
        }
    });
    // The runs are stored by now; what may still block (a read of stdin) must not keep the
    // process alive.
    runtime.shutdown_background();
    served?;
    Ok(0)
}
