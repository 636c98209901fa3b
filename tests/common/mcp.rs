//! What the MCP tests share: a client that records the progress notifications it receives.

use rmcp::ClientHandler;
use rmcp::model::ProgressNotificationParam;
use rmcp::service::{NotificationContext, RoleClient};
use std::sync::{Arc, Mutex};

/// A client that keeps every progress notification the server sends.
#[derive(Clone, Default)]
pub struct Recorder {
    pub progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
}

impl ClientHandler for Recorder {
    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        self.progress.lock().unwrap_or_else(|e| e.into_inner()).push(params);
    }
}
