//! The MCP server: the `build` tool over stdio or streamable HTTP, built on rmcp.

mod args;
mod install;
mod schema;
mod server;

pub use install::{Client, Scope, install};
pub use schema::{INSTRUCTIONS, tool as build_tool};
pub use server::BuildServer;

use crate::exec::{Access, Engine};
use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

/// Serves one client on stdin/stdout until it disconnects.
pub async fn serve_stdio(engine: Arc<Engine>, access: Access, home: PathBuf) -> anyhow::Result<()> {
    let service = BuildServer::new(engine, access, home).serve(rmcp::transport::stdio()).await?;
    service.waiting().await?;
    Ok(())
}

/// Serves streamable HTTP at `http://ADDR/mcp` until Ctrl-C. Only loopback addresses are
/// accepted, and requests must name a loopback Host (and Origin, when a browser sends one), which
/// defeats DNS rebinding.
pub async fn serve_http(
    engine: Arc<Engine>,
    access: Access,
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
    let service: StreamableHttpService<BuildServer, LocalSessionManager> = StreamableHttpService::new(
        move || Ok(BuildServer::new(Arc::clone(&engine), access.clone(), home.clone())),
        Default::default(),
        config,
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener =
        tokio::net::TcpListener::bind(addr).await.map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))?;
    ready(listener.local_addr()?);
    axum::serve(listener, router)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}
