//! The MCP server: the `build` tool over stdio or streamable HTTP, built on rmcp.

mod args;
mod http;
mod jsonrpc;
mod progress;
mod resources;
mod schema;
mod server;
mod stdio;

pub use http::{HttpOptions, serve_http};
pub use server::BuildServer;
pub use stdio::serve_stdio;

use buildvise_app::App;
use std::sync::Arc;
use std::time::Duration;

/// How long a server shutting down waits for its cancelled runs to be stored: the kill's grace
/// period, a little for leftovers, and a parser's patience.
const SHUTDOWN_PATIENCE: Duration = Duration::from_secs(8);

/// SIGTERM, SIGINT or SIGHUP.
#[cfg(unix)]
pub(super) async fn stop_signal() {
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

/// Ctrl-C or Ctrl-Break, the console closed, or the system shutting down.
#[cfg(windows)]
pub(super) async fn stop_signal() {
    use tokio::signal::windows::{ctrl_break, ctrl_close, ctrl_shutdown};
    let (Ok(mut brk), Ok(mut close), Ok(mut shutdown)) = (ctrl_break(), ctrl_close(), ctrl_shutdown()) else {
        let _ = tokio::signal::ctrl_c().await;
        return;
    };
    tokio::select! {
        _ = brk.recv() => {}
        _ = close.recv() => {}
        _ = shutdown.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}

/// Cancels the runs in flight and waits until they are stored.
pub(super) async fn shut_down(app: Arc<App>) {
    let _ = tokio::task::spawn_blocking(move || app.shutdown(SHUTDOWN_PATIENCE)).await;
}
