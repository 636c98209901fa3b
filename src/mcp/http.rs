//! MCP over streamable HTTP: rmcp's service behind a guard of ours.
//!
//! Left alone, rmcp answers a body that is not JSON-RPC with a bare 415, answers every DELETE with
//! 202, and ends a session after a fixed silence even while a run in it is still going. The
//! guard in front of it judges each request in this order: the Host and Origin it names (so a web
//! page reaching us through DNS rebinding is refused before anything else), the body of a POST
//! (JSON-RPC 2.0, screened as on stdio), then the session it names. Sessions expire after
//! `session_idle` without a request or an open response, and there are at most `max_sessions`.

use super::jsonrpc::{INVALID_PARAMS, INVALID_REQUEST, Rejection, screen, unoffered};
use super::{BuildServer, shut_down, stop_signal};
use anyhow::Context as _;
use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Request, State};
use axum::http::header::{ALLOW, CONTENT_TYPE, HOST, ORIGIN};
use axum::http::uri::Authority;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use buildvise_app::App;
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::{SessionId, SessionManager};
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::Value;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// The largest POST body read: a `build` call is a few hundred bytes, and rmcp's own limit is the
/// same.
const MAX_BODY: usize = 4 << 20;

const SESSION_HEADER: &str = "mcp-session-id";
const LAST_EVENT_ID: &str = "last-event-id";

/// The names a request may address this server by: it listens on loopback only.
const LOOPBACK_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];
const LOOPBACK_ORIGINS: [&str; 3] = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];

/// JSON-RPC codes of our own, in the range left to servers: the one the TypeScript SDK uses for
/// an unknown session, and one for a server with no room.
const SESSION_NOT_FOUND: i32 = -32001;
const NO_ROOM: i32 = -32000;
const INTERNAL_ERROR: i32 = -32603;

/// How `serve --http` was asked to serve.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// `--http`: `IP:PORT` or `NAME:PORT`, loopback only.
    pub listen: String,
    /// `--session-idle`: how long a session may go without a request or an open response.
    pub session_idle: Duration,
    /// `--max-sessions`.
    pub max_sessions: usize,
}

/// Serves streamable HTTP at `http://ADDR/mcp` until told to stop (SIGTERM, SIGINT, SIGHUP), then
/// ends the sessions and stores the runs they had in flight. Only loopback addresses are served,
/// and requests must name a loopback Host (and Origin, when a browser sends one), which defeats
/// DNS rebinding.
pub async fn serve_http(
    app: Arc<App>,
    roots: Vec<PathBuf>,
    home: PathBuf,
    options: &HttpOptions,
    ready: impl FnOnce(SocketAddr),
) -> anyhow::Result<()> {
    let addr = loopback(&options.listen).await?;
    // rmcp checks the names again behind the guard, so its service stays safe however it is
    // mounted; the guard checks first, before any body is read, and says why it refuses.
    let config =
        StreamableHttpServerConfig::default().with_allowed_hosts(LOOPBACK_NAMES).with_allowed_origins(LOOPBACK_ORIGINS);
    // Open response streams end with this token; without it a client holding one would keep
    // the graceful shutdown waiting for ever.
    let end_streams = config.cancellation_token.clone();
    let mut manager = LocalSessionManager::default();
    // rmcp's idle timer counts a run that prints nothing for a while as idleness and ends its
    // session mid-run; `Sessions` expires sessions instead, knowing which are busy.
    manager.session_config.keep_alive = None;
    let manager = Arc::new(manager);
    let sessions = Arc::new(Sessions {
        rmcp: Arc::clone(&manager),
        idle: options.session_idle,
        max: options.max_sessions,
        table: Mutex::default(),
    });
    let sessions_app = Arc::clone(&app);
    let service = StreamableHttpService::new(
        move || Ok(BuildServer::new(Arc::clone(&sessions_app), roots.clone(), home.clone())),
        manager,
        config,
    );
    let router = axum::Router::new()
        .nest_service("/mcp", service)
        .route_layer(axum::middleware::from_fn_with_state(Arc::clone(&sessions), guard));
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| anyhow::Error::new(e).context(format!("cannot listen on {addr}")))?;
    ready(listener.local_addr()?);
    let sweeper = tokio::spawn(sessions.sweep());
    let served = axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            stop_signal().await;
            end_streams.cancel();
        })
        .await;
    sweeper.abort();
    shut_down(app).await;
    Ok(served?)
}

/// The address `--http` names: an IP and port, or a host name and port whose every address is
/// loopback, bound at its IPv4 address when it has one, as `localhost` usually does. A name with
/// any other address is refused rather than bound at its loopback one: which address a client
/// reaches by that name is up to the client's resolver.
async fn loopback(listen: &str) -> anyhow::Result<SocketAddr> {
    const REFUSED: &str = "buildvise serves loopback only; send 127.0.0.1:PORT or [::1]:PORT";
    if let Ok(addr) = listen.parse::<SocketAddr>() {
        anyhow::ensure!(addr.ip().is_loopback(), "--http {addr}: {REFUSED}");
        return Ok(addr);
    }
    let Some((host, port)) = listen.rsplit_once(':') else {
        anyhow::bail!("--http {listen}: no port; send HOST:PORT, such as 127.0.0.1:8765 or localhost:8765");
    };
    let Ok(port) = port.parse::<u16>() else {
        anyhow::bail!(
            "--http {listen}: {port:?} is not a port; send HOST:PORT, such as localhost:8765 (0: any free port)"
        );
    };
    let found: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
        .await
        .with_context(|| format!("--http {listen}: cannot resolve {host}; send 127.0.0.1:PORT or localhost:PORT"))?
        .collect();
    if let Some(elsewhere) = found.iter().find(|a| !a.ip().is_loopback()) {
        anyhow::bail!("--http {listen}: {host} resolves to {}; {REFUSED}", elsewhere.ip());
    }
    found
        .iter()
        .find(|a| a.is_ipv4())
        .or(found.first())
        .copied()
        .with_context(|| format!("--http {listen}: {host} resolves to no address; send 127.0.0.1:PORT"))
}

/// The sessions rmcp holds, as the guard sees them.
struct Sessions {
    rmcp: Arc<LocalSessionManager>,
    idle: Duration,
    max: usize,
    table: Mutex<Table>,
}

#[derive(Default)]
struct Table {
    open: HashMap<SessionId, Use>,
    /// Initializes let in whose session is not in `open` yet: they count against the cap.
    admitting: usize,
}

struct Use {
    last: Instant,
    /// Responses still streaming (a call in flight, a client's GET stream): while there is one,
    /// the session is busy, whatever the clock says.
    streaming: usize,
}

impl Sessions {
    fn table(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Room for one more session. At the cap, the session idle longest makes way (returned, for
    /// the caller to close): its client, if it comes back, gets 404 and starts a new one, as the
    /// MCP spec tells it to. When every session is busy, none is taken from its client: the
    /// number open is returned instead.
    fn admit(self: &Arc<Self>) -> Result<(Admission, Option<SessionId>), usize> {
        let mut table = self.table();
        let mut evicted = None;
        if table.open.len() + table.admitting >= self.max {
            let idlest = table.open.iter().filter(|(_, u)| u.streaming == 0).min_by_key(|(_, u)| u.last);
            let Some((id, _)) = idlest else {
                return Err(table.open.len() + table.admitting);
            };
            let id = id.clone();
            table.open.remove(&id);
            evicted = Some(id);
        }
        table.admitting += 1;
        Ok((Admission(Arc::clone(self)), evicted))
    }

    /// A session rmcp just created, busy with the response that announces it.
    fn register(self: &Arc<Self>, id: SessionId) -> Busy {
        self.table().open.insert(id.clone(), Use { last: Instant::now(), streaming: 1 });
        Busy { sessions: Arc::clone(self), id }
    }

    /// A request in session `id`, busy until its response ends; None when no such session is open.
    fn enter(self: &Arc<Self>, id: &str) -> Option<Busy> {
        let mut table = self.table();
        let used = table.open.get_mut(id)?;
        used.last = Instant::now();
        used.streaming += 1;
        Some(Busy { sessions: Arc::clone(self), id: SessionId::from(id) })
    }

    /// Takes session `id` out of the table; false when it was not open.
    fn forget(&self, id: &str) -> bool {
        self.table().open.remove(id).is_some()
    }

    async fn close(&self, id: &SessionId) {
        if let Err(e) = self.rmcp.close_session(id).await {
            tracing::warn!("closing MCP session {id}: {e}");
        }
    }

    /// Ends the sessions idle past their time, and forgets those rmcp ended by itself (a client
    /// that never finished initializing), until the task is aborted.
    async fn sweep(self: Arc<Self>) {
        // A fraction of the idle time, so a session outlives it by little; bounded both ways so a
        // short setting does not spin and a long one is still checked now and then.
        let tick = (self.idle / 4).clamp(Duration::from_millis(100), Duration::from_secs(30));
        let mut ticks = tokio::time::interval(tick);
        loop {
            ticks.tick().await;
            let expired: Vec<SessionId> = {
                let mut table = self.table();
                let now = Instant::now();
                let expired: Vec<SessionId> = table
                    .open
                    .iter()
                    .filter(|(_, u)| u.streaming == 0 && now.duration_since(u.last) >= self.idle)
                    .map(|(id, _)| id.clone())
                    .collect();
                for id in &expired {
                    table.open.remove(id);
                }
                expired
            };
            for id in &expired {
                tracing::info!("MCP session {id} expired: {} s without a request", self.idle.as_secs());
                self.close(id).await;
            }
            let listed: Vec<SessionId> = self.table().open.keys().cloned().collect();
            for id in listed {
                if !self.rmcp.has_session(&id).await.unwrap_or(true) {
                    self.forget(&id);
                }
            }
        }
    }
}

/// An initialize let in, counted against the cap until its session is registered or it failed.
struct Admission(Arc<Sessions>);

impl Drop for Admission {
    fn drop(&mut self) {
        self.0.table().admitting -= 1;
    }
}

/// A response of session `id` still streaming.
struct Busy {
    sessions: Arc<Sessions>,
    id: SessionId,
}

impl Drop for Busy {
    fn drop(&mut self) {
        if let Some(used) = self.sessions.table().open.get_mut(&self.id) {
            used.streaming -= 1;
            used.last = Instant::now();
        }
    }
}

/// A response body that keeps its session busy until it ends or the client goes.
struct Streaming {
    body: Body,
    _busy: Busy,
}

impl HttpBody for Streaming {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// A resumed stream without the event its client already had. rmcp replays a stream from the
/// event named by `Last-Event-ID` rather than after it (its cache is skipped up to that index,
/// not past it), so the client heard that event twice: a progress notification, or a whole
/// result. The first event carrying an id is dropped when it is the one named; after that, or
/// when it is not (a fixed rmcp), every byte passes as it came.
struct SkipSeen {
    body: Body,
    /// The id to drop, until the first event with an id has gone by.
    seen: Option<String>,
    /// Bytes of an event not yet complete, while `seen` is still looked for.
    pending: Vec<u8>,
}

impl SkipSeen {
    /// Takes the complete events out of `pending`, dropping the one named `seen`; the bytes to
    /// pass on, and once an event with an id has gone by, whatever remains.
    fn sift(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        while let Some(seen) = &self.seen {
            let Some(end) = memchr::memmem::find(&self.pending, b"\n\n") else { break };
            let event: Vec<u8> = self.pending.drain(..end + 2).collect();
            let text = String::from_utf8_lossy(&event);
            let id = text.lines().find_map(|line| line.strip_prefix("id:")).map(|id| id.trim_start_matches(' '));
            match id {
                None => out.extend_from_slice(&event),
                Some(id) => {
                    if id != seen {
                        out.extend_from_slice(&event);
                    }
                    self.seen = None;
                }
            }
        }
        if self.seen.is_none() {
            out.append(&mut self.pending);
        }
        out
    }
}

impl HttpBody for SkipSeen {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        loop {
            if self.seen.is_none() && self.pending.is_empty() {
                return Pin::new(&mut self.body).poll_frame(cx);
            }
            match Pin::new(&mut self.body).poll_frame(cx) {
                Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                    Ok(data) => {
                        self.pending.extend_from_slice(&data);
                        let out = self.sift();
                        if !out.is_empty() {
                            return Poll::Ready(Some(Ok(http_body::Frame::data(Bytes::from(out)))));
                        }
                    }
                    Err(frame) => return Poll::Ready(Some(Ok(frame))),
                },
                Poll::Ready(None) if !self.pending.is_empty() => {
                    let rest = std::mem::take(&mut self.pending);
                    self.seen = None;
                    return Poll::Ready(Some(Ok(http_body::Frame::data(Bytes::from(rest)))));
                }
                other => return other,
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.pending.is_empty() && self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        http_body::SizeHint::default()
    }
}

fn streaming(response: Response, busy: Busy) -> Response {
    response.map(|body| Body::new(Streaming { body, _busy: busy }))
}

/// Everything rmcp serves passes through here first.
async fn guard(State(sessions): State<Arc<Sessions>>, request: Request, next: Next) -> Response {
    if let Some((status, message)) = foreign(request.headers()) {
        return refuse(status, Value::Null, INVALID_REQUEST, message);
    }
    // A session id that is not text cannot be one of ours: it reads as an unknown session.
    let session = request.headers().get(SESSION_HEADER).map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    match (request.method().clone(), session) {
        (Method::POST, session) => post(&sessions, request, session, next).await,
        (Method::GET, Some(session)) => match sessions.enter(&session) {
            Some(busy) => {
                let resumed =
                    request.headers().get(LAST_EVENT_ID).map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
                let response = as_jsonrpc(&Method::GET, Value::Null, next.run(request).await).await;
                let response = match resumed {
                    Some(seen) if response.status().is_success() => {
                        response.map(|body| Body::new(SkipSeen { body, seen: Some(seen), pending: Vec::new() }))
                    }
                    _ => response,
                };
                streaming(response, busy)
            }
            None => unknown_session(&sessions, Value::Null, &session),
        },
        (Method::DELETE, Some(session)) => {
            if !sessions.forget(&session) {
                return unknown_session(&sessions, Value::Null, &session);
            }
            sessions.close(&SessionId::from(session)).await;
            StatusCode::NO_CONTENT.into_response()
        }
        (Method::DELETE, None) => refuse(
            StatusCode::BAD_REQUEST,
            Value::Null,
            INVALID_REQUEST,
            "DELETE /mcp without an Mcp-Session-Id header; send the id the initialize response gave, to end that session",
        ),
        (method, _) => as_jsonrpc(&method, Value::Null, next.run(request).await).await,
    }
}

async fn post(sessions: &Arc<Sessions>, request: Request, session: Option<String>, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = match read_body(body).await {
        Ok(bytes) => bytes,
        Err(refusal) => return refusal,
    };
    let message = match screen(&bytes) {
        Ok(message) => message,
        Err(rejection) => return reply(StatusCode::BAD_REQUEST, &rejection),
    };
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    // `screen` judges the params of the requests this server answers; rmcp reads every message
    // into its own types, and would answer one that does not fit them with a bare 415.
    if let Err(e) = serde_json::from_slice::<ClientJsonRpcMessage>(&bytes) {
        let (code, what) = match message.get("method").and_then(Value::as_str) {
            Some(method) => (INVALID_PARAMS, format!("the params of {method} do not fit its MCP schema")),
            None => (INVALID_REQUEST, "a response that fits no MCP result".to_string()),
        };
        let message = format!("{what} ({e}); send them as the MCP schema defines them");
        return refuse(StatusCode::BAD_REQUEST, id, code, message);
    }
    let request = Request::from_parts(parts, Body::from(bytes));
    if let Some(session) = session {
        return match sessions.enter(&session) {
            Some(_) if let Some(rejection) = unoffered(&message) => reply(StatusCode::OK, &rejection),
            Some(busy) => streaming(as_jsonrpc(&Method::POST, id, next.run(request).await).await, busy),
            None => unknown_session(sessions, id, &session),
        };
    }
    if message.get("method").and_then(Value::as_str) != Some("initialize") {
        if let Some(rejection) = unoffered(&message) {
            return reply(StatusCode::OK, &rejection);
        }
        // rmcp says a session is needed, or serves the request without one (MCP 2026-07-28).
        return as_jsonrpc(&Method::POST, id, next.run(request).await).await;
    }
    let (admission, evicted) = match sessions.admit() {
        Ok(admitted) => admitted,
        Err(open) => {
            let message = format!(
                "no room for another MCP session: all {open} open (--max-sessions {}) are busy with a call or a \
                 stream; end one (DELETE /mcp with its Mcp-Session-Id), retry once one is idle, or restart \
                 `buildvise serve` with a higher --max-sessions",
                sessions.max
            );
            return refuse(StatusCode::SERVICE_UNAVAILABLE, id, NO_ROOM, message);
        }
    };
    if let Some(evicted) = evicted {
        sessions.close(&evicted).await;
    }
    let response = as_jsonrpc(&Method::POST, id, next.run(request).await).await;
    let created = response.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok()).map(SessionId::from);
    let response = match created {
        Some(created) => streaming(response, sessions.register(created)),
        None => response,
    };
    drop(admission);
    response
}

/// The body of a POST, up to [`MAX_BODY`].
async fn read_body(mut body: Body) -> Result<Bytes, Response> {
    let mut bytes = Vec::new();
    while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
        let frame = frame.map_err(|e| {
            let message = format!("the request body could not be read ({e}); send the request again");
            refuse(StatusCode::BAD_REQUEST, Value::Null, INVALID_REQUEST, message)
        })?;
        let Ok(data) = frame.into_data() else { continue };
        if bytes.len() + data.len() > MAX_BODY {
            let message = format!(
                "the request body is over {} MiB, the most this server reads; send one JSON-RPC message under that size",
                MAX_BODY >> 20
            );
            return Err(refuse(StatusCode::PAYLOAD_TOO_LARGE, Value::Null, INVALID_REQUEST, message));
        }
        bytes.extend_from_slice(&data);
    }
    Ok(Bytes::from(bytes))
}

/// rmcp's refusal of a request (415, 406, 405, 400, …) as a JSON-RPC error body, which the MCP
/// spec has servers send and clients parse, with what to do; anything else as it came. `id` is
/// the request's, when it had one.
async fn as_jsonrpc(method: &Method, id: Value, response: Response) -> Response {
    let status = response.status();
    let json = response.headers().get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|t| {
        t.split(';').next().is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
    });
    if !(status.is_client_error() || status.is_server_error()) || json {
        return response;
    }
    let allow = response.headers().get(ALLOW).cloned();
    // rmcp's refusals are a line of text; a bound keeps a surprise from being read whole.
    let said = match axum::body::to_bytes(response.into_body(), 64 << 10).await {
        Ok(bytes) => String::from_utf8_lossy(&bytes).trim().to_string(),
        Err(_) => String::new(),
    };
    let said = if said.is_empty() { status.canonical_reason().unwrap_or("refused").to_string() } else { said };
    let todo = match status {
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "send the message with Content-Type: application/json",
        StatusCode::NOT_ACCEPTABLE if *method == Method::GET => "send Accept: text/event-stream to open a stream",
        StatusCode::NOT_ACCEPTABLE => "send Accept: application/json, text/event-stream with each POST",
        StatusCode::METHOD_NOT_ALLOWED => match allow.as_ref().and_then(|a| a.to_str().ok()) {
            Some(allowed) => &format!("/mcp takes {allowed}: POST a message, GET a stream, DELETE a session"),
            None => "/mcp takes POST (a message), GET (a stream) and DELETE (a session)",
        },
        StatusCode::NOT_FOUND => "send initialize without Mcp-Session-Id to start a new session",
        _ if said.contains("Protocol-Version") => {
            "send MCP-Protocol-Version with the version initialize agreed, or leave the header out"
        }
        _ if said.contains("ession") => "send the Mcp-Session-Id header the initialize response gave",
        StatusCode::BAD_REQUEST => "send the request as MCP's streamable HTTP transport defines it",
        _ => "try again; if it persists, the server's log says why",
    };
    let code = match status {
        StatusCode::NOT_FOUND => SESSION_NOT_FOUND,
        s if s.is_server_error() => INTERNAL_ERROR,
        _ => INVALID_REQUEST,
    };
    let mut refused = refuse(status, id, code, format!("{said}; {todo}"));
    if let Some(allow) = allow {
        refused.headers_mut().insert(ALLOW, allow);
    }
    refused
}

/// Why a request must be refused for the names it carries, if it must: a Host other than a
/// loopback name, or an Origin other than a page served from one.
fn foreign(headers: &HeaderMap) -> Option<(StatusCode, String)> {
    const SEND: &str = "connect to http://127.0.0.1:PORT/mcp or http://localhost:PORT/mcp";
    let host = headers.get(HOST).and_then(|h| h.to_str().ok());
    let Some(authority) = host.and_then(|h| h.parse::<Authority>().ok()) else {
        return Some((StatusCode::BAD_REQUEST, format!("no readable Host header; {SEND}")));
    };
    if !is_loopback_name(authority.host()) {
        let message = format!(
            "Host {authority} is not this server: buildvise answers requests addressed to localhost, 127.0.0.1 or \
             [::1] only, so that web pages cannot reach it by DNS rebinding; {SEND}"
        );
        return Some((StatusCode::FORBIDDEN, message));
    }
    let origin = headers.get(ORIGIN)?;
    let text = String::from_utf8_lossy(origin.as_bytes());
    let local = text.parse::<Uri>().is_ok_and(|uri| {
        uri.scheme_str() == Some("http") && uri.authority().is_some_and(|a| is_loopback_name(a.host()))
    });
    (!local).then(|| {
        let message = format!(
            "Origin {text} is not a page served from this machine's loopback; buildvise answers browsers only for \
             pages from http://localhost, http://127.0.0.1 or http://[::1]; call it from a local MCP client"
        );
        (StatusCode::FORBIDDEN, message)
    })
}

fn is_loopback_name(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    LOOPBACK_NAMES.iter().any(|name| host.eq_ignore_ascii_case(name))
}

/// 404 for a session that is not open: per the MCP spec the client then starts a new one.
fn unknown_session(sessions: &Sessions, id: Value, session: &str) -> Response {
    let message = format!(
        "no session {session} is open: it was ended, went {} s without a request, made way for a new one under \
         --max-sessions, or the server restarted; send initialize without Mcp-Session-Id to start a new session",
        sessions.idle.as_secs()
    );
    refuse(StatusCode::NOT_FOUND, id, SESSION_NOT_FOUND, message)
}

fn refuse(status: StatusCode, id: Value, code: i32, message: impl Into<String>) -> Response {
    reply(status, &Rejection { id, code, message: message.into() })
}

fn reply(status: StatusCode, rejection: &Rejection) -> Response {
    (status, [(CONTENT_TYPE, "application/json")], rejection.to_json()).into_response()
}
