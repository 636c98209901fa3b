//! The MCP server: the `build` tool over stdio or streamable HTTP, built on rmcp.

mod args;
mod install;
mod schema;
mod server;

pub use install::{Client, Scope, install};
pub use schema::{INSTRUCTIONS, tool as build_tool};
pub use server::BuildServer;

use crate::app::App;
use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// How long a server shutting down waits for its cancelled runs to be stored: the kill's grace
/// period, a little for leftovers, and a parser's patience.
const SHUTDOWN_PATIENCE: Duration = Duration::from_secs(8);

/// Serves one client on stdin/stdout until it disconnects or the server is told to stop
/// (SIGTERM, SIGINT, SIGHUP); either way, runs in flight are cancelled and stored before exit.
pub async fn serve_stdio(app: Arc<App>, roots: Vec<PathBuf>, home: PathBuf) -> anyhow::Result<()> {
    let service = BuildServer::new(Arc::clone(&app), roots, home).serve(rmcp::transport::stdio()).await?;
    let ended = tokio::select! {
        ended = service.waiting() => ended.map(drop).map_err(anyhow::Error::from),
        () = stop_signal() => Ok(()),
    };
    shut_down(app).await;
    ended
}

/// Serves streamable HTTP at `http://ADDR/mcp` until told to stop. Only loopback addresses are
/// accepted, and requests must name a loopback Host (and Origin, when a browser sends one), which
/// defeats DNS rebinding.
pub async fn serve_http(
    app: Arc<App>,
    roots: Vec<PathBuf>,
    home: PathBuf,
    addr: SocketAddr,
    ready: impl FnOnce(SocketAddr),
) -> anyhow::Result<()> {
    if !addr.ip().is_loopback() {
        anyhow::bail!("--http {addr}: buildvise serves loopback only; send 127.0.0.1:PORT or [::1]:PORT");
    }
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(["localhost", "127.0.0.1", "::1"])
        .with_allowed_origins(["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"]);
    let sessions_app = Arc::clone(&app);
    let service: StreamableHttpService<BuildServer, LocalSessionManager> = StreamableHttpService::new(
        move || Ok(BuildServer::new(Arc::clone(&sessions_app), roots.clone(), home.clone())),
        Default::default(),
        config,
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| anyhow::Error::new(e).context(format!("cannot listen on {addr}")))?;
    ready(listener.local_addr()?);
    let served = axum::serve(listener, router).with_graceful_shutdown(stop_signal()).await;
    shut_down(app).await;
    Ok(served?)
}

/// SIGTERM, SIGINT or SIGHUP.
async fn stop_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut hup)) = (signal(SignalKind::terminate()), signal(SignalKind::hangup())) else {
        let _ = tokio::signal::ctrl_c().await;
        return;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = hup.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}

/// Cancels the runs in flight and waits until they are stored.
async fn shut_down(app: Arc<App>) {
    let _ = tokio::task::spawn_blocking(move || app.shutdown(SHUTDOWN_PATIENCE)).await;
}
