//! `buildvise serve`: the MCP server, on stdio (default) or streamable HTTP.

use super::{Cli, app_loading};
use crate::mcp::HttpOptions;
use buildvise_app::{Config, Loading};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Serve streamable HTTP at http://ADDR/mcp instead of stdio. Loopback only: 127.0.0.1:PORT,
    /// [::1]:PORT or localhost:PORT (a name must resolve to loopback addresses only); port 0 takes
    /// any free one.
    #[arg(long, value_name = "ADDR")]
    http: Option<String>,
    /// With --http: end a session after this many seconds with no request and no open stream
    /// (its client then starts a new one).
    #[arg(long, value_name = "SECS", default_value_t = 1800, requires = "http",
          value_parser = clap::value_parser!(u64).range(1..))]
    session_idle: u64,
    /// With --http: the most sessions open at once. A new one takes the place of the session idle
    /// longest; when every session is busy, it is refused (503).
    #[arg(long, value_name = "N", default_value_t = 64, requires = "http",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    max_sessions: usize,
    /// Hide and refuse tools that change the workspace.
    #[arg(long)]
    read_only: bool,
    /// Hide and refuse these tools (comma-separated; `npm.*` for a whole plugin).
    #[arg(long, value_name = "TOOLS", value_delimiter = ',')]
    disable: Vec<String>,
    /// Run at most this many runs at once; further exec calls wait their turn [default: the
    /// config's `concurrent_runs`, else 4].
    #[arg(long, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    concurrent_runs: Option<usize>,
    /// Only run in this directory or below. Repeatable. Default: the client's roots, else the
    /// current directory.
    #[arg(long, value_name = "DIR")]
    root: Vec<PathBuf>,
    #[command(flatten)]
    sandbox: super::SandboxArgs,
}

pub fn run(cli: &Cli, args: &Args) -> anyhow::Result<i32> {
    let mut config = Config::load()?;
    config.read_only |= args.read_only;
    args.sandbox.apply(&mut config);
    config.disable.extend(args.disable.iter().cloned());
    if let Some(n) = args.concurrent_runs {
        config.concurrent_runs = n;
    }
    let roots = args.root.iter().map(std::path::absolute).collect::<Result<Vec<_>, _>>()?;
    for root in &roots {
        anyhow::ensure!(root.is_dir(), "--root {}: no such directory; send an existing directory", root.display());
    }
    let app = Arc::new(app_loading(cli, config, true, Loading::Now)?);
    // A person who typed `buildvise serve` would otherwise face a silent prompt. Clients that log
    // stderr get nothing, and stdout carries the protocol alone.
    if args.http.is_none() && std::io::stderr().is_terminal() {
        eprintln!(
            "buildvise: speaking MCP on stdin/stdout, for an MCP client to start; to connect one, run \
             `buildvise mcp install --client claude|cursor|vscode`; Ctrl-C stops"
        );
    }
    let home = std::env::current_dir()?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let served = runtime.block_on(async move {
        match &args.http {
            None => crate::mcp::serve_stdio(app, roots, home).await,
            Some(listen) => {
                let options = HttpOptions {
                    listen: listen.clone(),
                    session_idle: Duration::from_secs(args.session_idle),
                    max_sessions: args.max_sessions,
                };
                crate::mcp::serve_http(app, roots, home, &options, |bound| {
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
