//! The MCP server handler: one tool, `build`, dispatching to the engine.
//!
//! `exec` runs on a blocking thread; its progress reaches the client as progress notifications
//! (when the call carried a progress token), and `notifications/cancelled` ends the process tree.

use super::args::{self, Call, ExecArgs};
use super::progress::{self, Said};
use super::resources;
use super::schema;
use buildvise_app::{
    Access, AnsweredCall, App, AppError, CancelToken, ExecAnswer, ExecCall, LogCall, Progress, Rendered, Sent, Surface,
    describe,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ContentBlock, CreateTaskResult,
    GetTaskParams, GetTaskResult, Implementation, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::task_manager::{TaskContext, TaskExit, TaskManager, TaskOptions};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// One session's handler. Sessions share the app; each has its own view of the client's roots.
pub struct BuildServer {
    app: Arc<App>,
    /// `--root` dirs; when empty, the client's roots, else `home`.
    roots: Vec<PathBuf>,
    /// The server's working directory: the default cwd and, without other roots, the only root.
    home: PathBuf,
    /// Roots the client announced, fetched on first use (None: not asked yet).
    client_roots: Mutex<Option<Vec<PathBuf>>>,
    /// `exec` calls answered with a task (MCP tasks extension), for a client that declared it.
    tasks: TaskManager,
}

impl BuildServer {
    pub fn new(app: Arc<App>, roots: Vec<PathBuf>, home: PathBuf) -> Self {
        BuildServer { app, roots, home, client_roots: Mutex::new(None), tasks: TaskManager::new() }
    }

    /// `--root` dirs, else the client's roots, else the server's working directory. (rmcp marks
    /// roots deprecated by SEP-2577, but clients still send them and DESIGN.md asks for them.)
    #[allow(deprecated)]
    async fn roots(&self, context: &RequestContext<RoleServer>) -> Vec<PathBuf> {
        if !self.roots.is_empty() {
            return self.roots.clone();
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
                .map(|p| PathBuf::from(percent_encoding::percent_decode_str(p).decode_utf8_lossy().into_owned()))
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

    /// The call's `cwd` (relative to the first root), or the first root.
    fn cwd(roots: &[PathBuf], home: &Path, asked: Option<&str>) -> PathBuf {
        let base = roots.first().map_or(home, PathBuf::as_path);
        match asked {
            Some(dir) if Path::new(dir).is_absolute() => PathBuf::from(dir),
            Some(dir) => base.join(dir),
            None => base.to_path_buf(),
        }
    }

    async fn list(&self, cwd: Option<String>, context: RequestContext<RoleServer>) -> Rendered {
        let roots = self.roots(&context).await;
        let cwd = Self::cwd(&roots, &self.home, cwd.as_deref());
        self.app.list(&Access::within(&roots), &cwd)
    }

    /// The app's call for `a`, within `roots`.
    fn exec_call(&self, a: ExecArgs, roots: &[PathBuf]) -> ExecCall {
        ExecCall {
            cwd: Self::cwd(roots, &self.home, a.cwd.as_deref()),
            tool: a.tool,
            args: a.args,
            timeout_secs: a.timeout_secs,
            confirm: a.confirm,
            detail: a.detail,
            max_lines: a.max_lines,
        }
    }

    async fn exec(&self, a: ExecArgs, context: RequestContext<RoleServer>) -> Result<ExecAnswer, AppError> {
        let roots = self.roots(&context).await;
        let call = self.exec_call(a, &roots);
        let progress = progress::sender(&context, |p: &Progress| Said {
            message: p.describe(),
            tests: p.tests_total.map(|total| (p.tests, total)),
        });
        let app = Arc::clone(&self.app);
        let access = Access::within(&roots);
        blocking(&context, progress, move |cancel, report| {
            app.exec(&access, &call, cancel, Surface::Mcp, &mut |p: &Progress| report(p))
        })
        .await
    }

    /// A note when the call's timeout is over the longest this server allows, which the run
    /// gets instead (or less, when the project's config allows less).
    fn capped(&self, a: &ExecArgs) -> Option<String> {
        let cap = self.app.config().max_timeout.as_secs();
        let (asked, sent) = (a.timeout_secs?, a.timeout_sent.as_deref()?);
        (asked > cap).then(|| {
            format!("timeout {sent} s is over the most this server allows (max_timeout_secs {cap}); the run had {cap} s at most")
        })
    }

    /// `exec` as a task: the client is answered at once with the task, polls `tasks/get` for how
    /// the run goes (its progress, as the task's status message) and for the answer, and may
    /// `tasks/cancel` it, which ends the run as `notifications/cancelled` would.
    async fn exec_task(
        &self,
        a: ExecArgs,
        notes: Vec<String>,
        context: RequestContext<RoleServer>,
    ) -> CreateTaskResult {
        let roots = self.roots(&context).await;
        let call = self.exec_call(a, &roots);
        let (app, recorder) = (Arc::clone(&self.app), Arc::clone(&self.app));
        let access = Access::within(&roots);
        // No time to live: a run waits its turn among `concurrent_runs` and then may take up to
        // the timeout, and a task that expired mid-run would lose its answer while the run went on.
        let options = TaskOptions::new().with_ttl_ms(None).with_poll_interval_ms(1000);
        let task = self.tasks.spawn(options, move |task: TaskContext| {
            Box::pin(async move {
                let cancel = CancelToken::default();
                let watcher = {
                    let (task, cancel) = (task.clone(), cancel.clone());
                    tokio::spawn(async move {
                        task.cancelled().await;
                        cancel.cancel();
                    })
                };
                let status = task.clone();
                let outcome = tokio::task::spawn_blocking(move || {
                    app.exec(&access, &call, &cancel, Surface::Mcp, &mut |p: &Progress| {
                        status.set_status_message(p.describe());
                    })
                })
                .await;
                watcher.abort();
                if task.is_cancel_requested() {
                    return Err(TaskExit::Cancelled);
                }
                match outcome {
                    Ok(Ok(done)) => {
                        let rendered = with_notes(done.rendered, &notes);
                        record_sent(recorder, done.run_id, AnsweredCall::Exec, &rendered);
                        Ok(answer(rendered))
                    }
                    Ok(Err(error)) => Ok(refused(&error)),
                    Err(e) => Err(TaskExit::Error(McpError::internal_error(e.to_string(), None))),
                }
            })
        });
        CreateTaskResult::new(task)
    }

    async fn log(&self, call: LogCall, context: RequestContext<RoleServer>) -> Result<Rendered, AppError> {
        let access = Access::within(&self.roots(&context).await);
        let progress = progress::sender(&context, |said: &String| Said { message: said.clone(), tests: None });
        let app = Arc::clone(&self.app);
        blocking(&context, progress, move |cancel, report| {
            app.log(&access, &call, cancel, Surface::Mcp, &mut |said: &str| report(&said.to_string()))
        })
        .await
    }
}

/// Runs blocking work (a run, a log scan) off the async runtime, cancelled when the client
/// cancels the request, reporting progress through `progress` when the client asked for it.
async fn blocking<T: Clone + Send + 'static, A: Send + 'static>(
    context: &RequestContext<RoleServer>,
    progress: Option<(tokio::sync::mpsc::UnboundedSender<T>, tokio::task::JoinHandle<()>)>,
    work: impl FnOnce(&CancelToken, &dyn Fn(&T)) -> Result<A, AppError> + Send + 'static,
) -> Result<A, AppError> {
    let cancel = CancelToken::default();
    let watcher = {
        let (ct, cancel) = (context.ct.clone(), cancel.clone());
        tokio::spawn(async move {
            ct.cancelled().await;
            cancel.cancel();
        })
    };
    let (tx, reporter) = match progress {
        Some((tx, reporter)) => (Some(tx), Some(reporter)),
        None => (None, None),
    };
    let outcome = tokio::task::spawn_blocking(move || {
        let report = |value: &T| {
            if let Some(tx) = &tx {
                let _ = tx.send(value.clone());
            }
        };
        work(&cancel, &report)
    })
    .await;
    watcher.abort();
    if let Some(reporter) = reporter {
        // The sender went with the blocking task, so the reporter ends after its last send.
        let _ = reporter.await;
    }
    outcome.unwrap_or_else(|e| Err(AppError::Internal(e)))
}

/// Store reads for resources, off the async runtime.
async fn off_runtime<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, McpError> + Send + 'static,
) -> Result<T, McpError> {
    tokio::task::spawn_blocking(work).await.unwrap_or_else(|e| Err(McpError::internal_error(e.to_string(), None)))
}

fn answer(rendered: Rendered) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(rendered.text)]);
    result.structured_content = Some(rendered.structured);
    result
}

/// The answer with `notes` said at its end, in the text as the renderer says notes, and in
/// `structuredContent.notes`.
fn with_notes(mut rendered: Rendered, notes: &[String]) -> Rendered {
    for note in notes {
        // A line of its own, ending as the answer's lines end.
        if rendered.text.ends_with('\n') {
            rendered.text.push_str(&format!("note: {note}\n"));
        } else {
            rendered.text.push_str(&format!("\nnote: {note}"));
        }
        if let Some(object) = rendered.structured.as_object_mut() {
            let listed = object.entry("notes").or_insert_with(|| serde_json::Value::Array(Vec::new()));
            if let Some(listed) = listed.as_array_mut() {
                listed.push(note.clone().into());
            }
        }
    }
    rendered
}

/// Keeps the answer a client got about a run with that run, for `gain`, off the async runtime
/// once the answer is on its way.
fn record_sent(app: Arc<App>, id: String, call: AnsweredCall, rendered: &Rendered) {
    let rendered = rendered.clone();
    tokio::task::spawn_blocking(move || {
        app.sent(&id, call, Sent::Mcp { text: &rendered.text, structured: &rendered.structured });
    });
}

fn refusal(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

fn refused(error: &AppError) -> CallToolResult {
    refusal(describe(error))
}

impl ServerHandler for BuildServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_resources().enable_tasks().build())
            .with_server_info(Implementation::new("buildvise", env!("CARGO_PKG_VERSION")))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult { tools: vec![schema::tool(self.app.config().read_only)], ..Default::default() })
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        (name == schema::TOOL_NAME).then(|| schema::tool(self.app.config().read_only))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        if request.name != schema::TOOL_NAME {
            let message = format!("unknown tool {:?}: this server has one tool, \"build\"; call that", request.name);
            return Err(McpError::invalid_params(message, None));
        }
        let (call, mut notes) = match args::parse(request.arguments.as_ref()) {
            Ok(parsed) => parsed,
            Err(message) => return Ok(refusal(message).into()),
        };
        // An answer about a run is recorded with it for `gain`, once the answer is on its way.
        let result = match call {
            Call::List { cwd } => Ok((None, self.list(cwd, context).await)),
            Call::Log(a) => {
                let run = (a.run_id.clone(), AnsweredCall::Log);
                self.log(a, context).await.map(|rendered| (Some(run), rendered))
            }
            Call::Exec(a) => {
                notes.extend(self.capped(&a));
                if context.client_capabilities().is_some_and(|c| c.supports_tasks()) {
                    return Ok(self.exec_task(a, notes, context).await.into());
                }
                self.exec(a, context).await.map(|answer| (Some((answer.run_id, AnsweredCall::Exec)), answer.rendered))
            }
        };
        Ok(match result {
            Ok((run, rendered)) => {
                let rendered = with_notes(rendered, &notes);
                if let Some((id, call)) = run {
                    record_sent(Arc::clone(&self.app), id, call, &rendered);
                }
                answer(rendered)
            }
            Err(error) => refused(&error),
        }
        .into())
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let access = Access::within(&self.roots(&context).await);
        let app = Arc::clone(&self.app);
        let cursor = request.and_then(|r| r.cursor);
        off_runtime(move || resources::list(&app, &access, cursor.as_deref())).await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(resources::templates())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let access = Access::within(&self.roots(&context).await);
        let app = Arc::clone(&self.app);
        off_runtime(move || resources::read(&app, &access, &request.uri)).await.map(Into::into)
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        self.tasks.get_task(&request.task_id).map(GetTaskResult::new)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.tasks.cancel_task(&request.task_id)
    }

    async fn on_roots_list_changed(&self, _context: NotificationContext<RoleServer>) {
        if let Ok(mut cache) = self.client_roots.lock() {
            *cache = None;
        }
    }
}
