//! What the MCP tests share: `buildvise serve` in a sandbox, and a client that records the
//! progress notifications it receives.

use super::Sandbox;
use rmcp::model::{CallToolRequestParams, ClientRequest, ProgressNotificationParam, Request};
use rmcp::service::{NotificationContext, Peer, PeerRequestOptions, RequestHandle, RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{Value, json};
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

/// One `buildvise serve` process and the client talking to it.
pub struct Session {
    pub pid: u32,
    pub client: RunningService<RoleClient, Recorder>,
    pub progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
}

/// Starts `buildvise serve OPTIONS…` in the sandbox (cwd: its work dir) and initializes a session.
pub async fn connect(sb: &Sandbox, options: &[&str]) -> Session {
    let mut args = vec!["serve"];
    args.extend_from_slice(options);
    let command = tokio::process::Command::from(sb.command(args));
    let transport = TokioChildProcess::new(command).expect("spawn buildvise serve");
    let pid = transport.id().expect("the server has a pid");
    let recorder = Recorder::default();
    let progress = Arc::clone(&recorder.progress);
    let client = recorder.serve(transport).await.expect("MCP initialize with buildvise serve");
    Session { pid, client, progress }
}

/// Calls the `build` tool; the result as the client received it, as JSON.
pub async fn call(peer: &Peer<RoleClient>, arguments: Value) -> Value {
    let Value::Object(arguments) = arguments else { panic!("arguments must be an object: {arguments}") };
    let shown = Value::Object(arguments.clone());
    let result = peer
        .call_tool(CallToolRequestParams::new("build").with_arguments(arguments))
        .await
        .unwrap_or_else(|e| panic!("build {shown}: {e}"));
    serde_json::to_value(result).expect("a tool result serializes")
}

/// The one text block of a tool result.
pub fn text(result: &Value) -> &str {
    let content = result["content"].as_array().unwrap_or_else(|| panic!("no content: {result:#}"));
    assert_eq!(content.len(), 1, "one text block: {result:#}");
    assert_eq!(content[0]["type"], "text", "{result:#}");
    content[0]["text"].as_str().unwrap_or_else(|| panic!("no text: {result:#}"))
}

impl Session {
    pub fn peer(&self) -> &Peer<RoleClient> {
        self.client.peer()
    }

    /// Sends `exec panicky.sh SCRIPT` as a request the test can cancel and follow the progress of.
    pub async fn send_exec(&self, script: &str) -> RequestHandle<RoleClient> {
        self.send_tool("panicky.sh", script).await
    }

    /// Sends `exec TOOL SCRIPT` (a panicky tool) as a request the test can cancel.
    pub async fn send_tool(&self, tool: &str, script: &str) -> RequestHandle<RoleClient> {
        let Value::Object(arguments) = json!({"action": "exec", "tool": tool, "args": [script]}) else {
            unreachable!("a JSON object literal")
        };
        let request =
            ClientRequest::CallToolRequest(Request::new(CallToolRequestParams::new("build").with_arguments(arguments)));
        self.peer().send_cancellable_request(request, PeerRequestOptions::no_options()).await.expect("send the exec")
    }

    /// A successful call: its text and its structured content.
    pub async fn ok(&self, arguments: Value) -> (String, Value) {
        let result = call(self.peer(), arguments.clone()).await;
        assert_ne!(result["isError"], true, "build {arguments} was refused: {result:#}");
        let structured = result["structuredContent"].clone();
        assert!(structured.is_object(), "no structuredContent for {arguments}: {result:#}");
        (text(&result).to_string(), structured)
    }

    /// A refused call: a tool error of one line, which is returned.
    pub async fn refused(&self, arguments: Value) -> String {
        let result = call(self.peer(), arguments.clone()).await;
        assert_eq!(result["isError"], true, "build {arguments} was not refused: {result:#}");
        let message = text(&result).to_string();
        assert!(!message.trim().is_empty() && !message.trim().contains('\n'), "not one line: {message:?}");
        message
    }

    /// Progress notifications received so far for `token`.
    pub fn progress_for(&self, token: &rmcp::model::ProgressToken) -> Vec<ProgressNotificationParam> {
        let all = self.progress.lock().unwrap_or_else(|e| e.into_inner());
        all.iter().filter(|p| &p.progress_token == token).cloned().collect()
    }

    pub async fn close(self) {
        self.client.cancel().await.expect("the session closes");
    }
}

/// Waits, up to a generous bound, for `ready`; the bound only keeps a broken server from hanging
/// the suite, it is not what the test asserts.
pub async fn wait_for(what: &str, mut ready: impl FnMut() -> bool) {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !ready() {
        assert!(std::time::Instant::now() < until, "gave up waiting for {what}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}
