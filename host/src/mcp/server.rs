//! The MCP server handler: one tool, `build`, dispatching to the engine.
//!
//! `exec` runs on a blocking thread; its progress reaches the client as progress notifications
//! (when the call carried a progress token), and `notifications/cancelled` ends the process tree.

use super::args::{self, Call, ExecArgs, LogArgs};
use super::schema;
use crate::config::Config;
use crate::exec::{Access, Engine, ExecRequest, Progress};
use crate::render::{self, LogQuery, Rendered, Surface};
use crate::run::CancelToken;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// One session's handler. Sessions share the engine; each has its own view of the client's roots.
pub struct BuildServer {
    engine: Arc<Engine>,
    access: Access,
    /// The server's working directory: the default cwd and, without other roots, the only root.
    home: PathBuf,
    /// Roots the client announced, fetched on first use (None: not asked yet).
    client_roots: Mutex<Option<Vec<PathBuf>>>,
}

impl BuildServer {
    pub fn new(engine: Arc<Engine>, access: Access, home: PathBuf) -> Self {
        BuildServer { engine, access, home, client_roots: Mutex::new(None) }
    }

    /// `--root` dirs, else the client's roots, else the server's working directory. (rmcp marks
    /// roots deprecated by SEP-2577, but clients still send them and DESIGN.md asks for them.)
    #[allow(deprecated)]
    async fn roots(&self, context: &RequestContext<RoleServer>) -> Vec<PathBuf> {
        if !self.access.roots.is_empty() {
            return self.access.roots.clone();
        }
        if let Some(cached) = self.client_roots.lock().ok().and_then(|g| g.clone()) {
            return cached;
        }
        let announced = context.peer.peer_info().is_some_and(|info| info.capabilities.roots.is_some());
        let mut roots = Vec::new();
        if announced && let Ok(list) = context.peer.list_roots().await {
            roots = list
                .roots
                .iter()
                .filter_map(|r| r.uri.strip_prefix("file://"))
                .map(|p| PathBuf::from(percent_decode(p)))
                .collect();
        }
        if roots.is_empty() {
            roots.push(self.home.clone());
        }
        if let Ok(mut cache) = self.client_roots.lock() {
            *cache = Some(roots.clone());
        }
        roots
    }

    async fn exec(&self, a: ExecArgs, context: RequestContext<RoleServer>) -> Result<Rendered, String> {
        let roots = self.roots(&context).await;
        let base = roots.first().cloned().unwrap_or_else(|| self.home.clone());
        let cwd = match &a.cwd {
            Some(dir) if Path::new(dir).is_absolute() => PathBuf::from(dir),
            Some(dir) => base.join(dir),
            None => base,
        };
        let config = Config::load(&cwd).map_err(|e| e.to_string())?;
        let max_lines = a.max_lines.unwrap_or(config.max_lines);
        let request = ExecRequest { tool: a.tool, args: a.args, cwd, timeout_secs: a.timeout_secs, confirm: a.confirm };

        let cancel = CancelToken::default();
        let watcher = {
            let (ct, cancel) = (context.ct.clone(), cancel.clone());
            tokio::spawn(async move {
                ct.cancelled().await;
                cancel.cancel();
            })
        };
        let (progress_tx, mut progress_rx) = tokio::sync::mpsc::unbounded_channel::<Progress>();
        let reporter = context.meta.get_progress_token().map(|token| {
            let peer = context.peer.clone();
            tokio::spawn(async move {
                while let Some(p) = progress_rx.recv().await {
                    let _ = peer
                        .notify_progress(
                            ProgressNotificationParam::new(token.clone(), p.lines as f64).with_message(p.describe()),
                        )
                        .await;
                }
            })
        });

        let engine = Arc::clone(&self.engine);
        let access = Access { roots, ..self.access.clone() };
        let outcome = tokio::task::spawn_blocking(move || {
            let finished = engine.exec(&access, &request, &cancel, &mut |p: &Progress| {
                let _ = progress_tx.send(p.clone());
            });
            finished.map(|f| {
                render::render_exec(render::Tail::Stored(&engine.store), &f, a.detail, max_lines, Surface::Mcp)
            })
        })
        .await;
        watcher.abort();
        if let Some(reporter) = reporter {
            // The sender is gone with the blocking task, so the reporter ends after its last send.
            let _ = reporter.await;
        }
        match outcome {
            Ok(result) => result.map_err(|e| e.to_string()),
            Err(e) => Err(format!("the run failed inside buildvise: {e}")),
        }
    }

    fn log(&self, a: LogArgs) -> Result<Rendered, String> {
        let store = &self.engine.store;
        let config = Config::load(&self.home).map_err(|e| e.to_string())?;
        let max_lines = a.max_lines.unwrap_or(config.max_lines);
        if let Some(detail) = a.detail {
            let finished = crate::exec::stored(store, &a.run_id).map_err(|e| e.to_string())?;
            return Ok(render::render_exec(render::Tail::Stored(store), &finished, detail, max_lines, Surface::Mcp));
        }
        let grep = match a.grep.as_deref().map(regex::Regex::new) {
            Some(Err(e)) => return Err(format!("grep is not a valid regular expression: {e}")),
            other => other.and_then(Result::ok),
        };
        let mut reader = store.reader(&a.run_id).map_err(|e| e.to_string())?;
        let query = LogQuery { start: a.start, count: a.count, stream: a.stream, grep, max_lines };
        render::render_log(&mut reader, &a.run_id, &query, Surface::Mcp).map_err(|e| e.to_string())
    }

    fn list(&self) -> Rendered {
        let config = Config::load(&self.home).unwrap_or_default();
        let registry = &self.engine.registry;
        let visible = registry.tools().filter(|t| self.access.visible(&t.spec, &config));
        render::render_list(visible, &registry.failures, &registry.clashes)
    }
}

/// Decodes `%20`-style escapes in a file URI's path.
fn percent_decode(path: &str) -> String {
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = path.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn answer(rendered: Rendered) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(rendered.text)]);
    result.structured_content = Some(rendered.structured);
    result
}

fn refusal(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

impl ServerHandler for BuildServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("buildvise", env!("CARGO_PKG_VERSION")))
            .with_instructions(schema::INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult { tools: vec![schema::tool()], ..Default::default() })
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        (name == schema::TOOL_NAME).then(schema::tool)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        if request.name != schema::TOOL_NAME {
            return Ok(refusal(format!("unknown tool {:?}: this server has one tool, \"build\"", request.name)).into());
        }
        let call = match args::parse(request.arguments.as_ref()) {
            Ok(call) => call,
            Err(message) => return Ok(refusal(message).into()),
        };
        let result = match call {
            Call::List => Ok(self.list()),
            Call::Log(a) => self.log(a),
            Call::Exec(a) => self.exec(a, context).await,
        };
        Ok(match result {
            Ok(rendered) => answer(rendered),
            Err(message) => refusal(message),
        }
        .into())
    }

    async fn on_roots_list_changed(&self, _context: NotificationContext<RoleServer>) {
        if let Ok(mut cache) = self.client_roots.lock() {
            *cache = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_file_uri_paths() {
        assert_eq!(percent_decode("/home/a%20b/c"), "/home/a b/c");
        assert_eq!(percent_decode("/x%zz"), "/x%zz");
    }
}
