//! The MCP server over streamable HTTP: `buildvise serve --http 127.0.0.1:0` (the port the
//! system picks, read back from the line the server prints once bound), driven by rmcp's
//! streamable HTTP client for a whole session, and by raw HTTP requests for what a well-behaved
//! client never does: foreign Host and Origin headers, bodies that are not JSON or not JSON-RPC,
//! DELETE of sessions, sessions left idle, more sessions than the server allows.

mod common;

use common::http::{HttpServer, INITIALIZE};
use common::mcp::Recorder;
use common::{Sandbox, test_plugins};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ClientRequest, ProgressNotificationParam, Request, ServerResult};
use rmcp::service::PeerRequestOptions;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn arguments(value: Value) -> serde_json::Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("arguments must be an object: {other}"),
    }
}

#[tokio::test]
async fn a_whole_session_over_streamable_http_with_progress() {
    let sb = Sandbox::new(&[test_plugins()]);
    let server = HttpServer::start(&sb);
    let recorder = Recorder::default();
    let progress = Arc::clone(&recorder.progress);
    let client = recorder
        .serve(StreamableHttpClientTransport::from_uri(server.url()))
        .await
        .expect("initialize over streamable HTTP");
    let info = client.peer_info().expect("the server introduced itself");
    assert_eq!(info.server_info.as_ref().map(|s| s.name.as_str()), Some("buildvise"), "{info:?}");

    let tools = client.list_all_tools().await.expect("tools/list");
    assert_eq!(tools.iter().map(|t| t.name.as_ref()).collect::<Vec<_>>(), ["build"]);

    // A run of about two seconds: its progress comes over the call's SSE stream.
    let script = "for i in 1 2 3 4 5 6 7 8 9 10; do echo \"error: step $i\"; sleep 0.2; done; exit 1";
    let request = ClientRequest::CallToolRequest(Request::new(
        CallToolRequestParams::new("build")
            .with_arguments(arguments(json!({"action": "exec", "tool": "panicky.sh", "args": [script]}))),
    ));
    let handle = client.send_cancellable_request(request, PeerRequestOptions::no_options()).await.expect("send exec");
    let token = handle.progress_token.clone();
    let response = handle.await_response().await.expect("the exec answers");
    let ServerResult::CallToolResult(result) = response else { panic!("not a tool result: {response:?}") };
    let result = serde_json::to_value(result).expect("serialize");
    assert_ne!(result["isError"], true, "{result:#}");
    let structured = &result["structuredContent"];
    assert_eq!((structured["exitCode"].as_i64(), structured["errors"].as_u64()), (Some(1), Some(10)), "{result:#}");
    let text = result["content"][0]["text"].as_str().expect("text");
    assert!(text.starts_with("FAIL exit 1 · run "), "{text}");

    // Notifications may be handled after the response is delivered: wait for them, boundedly.
    let mine = || -> Vec<ProgressNotificationParam> {
        let all = progress.lock().unwrap_or_else(|e| e.into_inner());
        all.iter().filter(|p| p.progress_token == token).cloned().collect()
    };
    let until = Instant::now() + Duration::from_secs(30);
    while mine().is_empty() {
        assert!(Instant::now() < until, "no progress notification arrived");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for p in mine() {
        let message = p.message.as_deref().unwrap_or_default();
        assert!(message.contains(" lines") && message.contains("step "), "{p:?}");
        assert!((0.0..=10.0).contains(&p.progress), "{p:?}");
    }

    // The same session pages the stored log.
    let id = structured["runId"].as_str().expect("runId");
    let page = client
        .call_tool(
            CallToolRequestParams::new("build")
                .with_arguments(arguments(json!({"action": "log", "runId": id, "startLine": -2}))),
        )
        .await
        .expect("log");
    let page = serde_json::to_value(page).expect("serialize");
    assert_eq!(page["content"][0]["text"], "lines 9-10 of 10\n9|error: step 9\n10|error: step 10\n", "{page:#}");
    client.cancel().await.expect("close the session");
}

#[test]
fn a_request_naming_a_foreign_host_or_origin_is_rejected() {
    let sb = Sandbox::new(&[test_plugins()]);
    let server = HttpServer::start(&sb);
    let own_host = server.addr.to_string();
    let initialize = |headers: &[(&str, &str)]| server.send("POST", headers, Some(INITIALIZE));

    // The same request with the server's own Host is served, so the refusals below are about
    // the names, nothing else.
    let reply = initialize(&[("Host", &own_host)]);
    assert_eq!(reply.status, 200, "{reply}");
    let reply = initialize(&[("Host", &own_host), ("Origin", "http://localhost:3000")]);
    assert_eq!(reply.status, 200, "{reply}");

    for headers in [
        vec![("Host", "evil.example".to_string())],
        vec![("Host", format!("evil.example:{}", server.addr.port()))],
        vec![("Host", own_host.clone()), ("Origin", "http://evil.example".to_string())],
    ] {
        let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let reply = initialize(&headers);
        assert_eq!(reply.status, 403, "{headers:?} was not refused:{reply}");
        let message = reply.json()["error"]["message"].as_str().unwrap_or_default().to_string();
        assert!(message.contains("DNS rebinding") || message.contains("loopback"), "{message}");
        assert!(reply.header("mcp-session-id").is_none(), "{headers:?} opened a session:{reply}");
    }
}

#[test]
fn serving_http_on_a_non_loopback_address_is_refused() {
    let sb = Sandbox::new(&[test_plugins()]);
    let run = sb.run(["serve", "--http", "0.0.0.0:0"]);
    assert_ne!(run.code, Some(0), "{run}");
    assert!(run.stderr.contains("buildvise serves loopback only; send 127.0.0.1:PORT"), "{run}");
    let run = sb.run(["serve", "--http", "localhost"]);
    assert_ne!(run.code, Some(0), "{run}");
    assert!(run.stderr.contains("--http localhost: no port; send HOST:PORT"), "{run}");
}

#[test]
fn serving_http_on_localhost_by_name_binds_a_loopback_address() {
    let sb = Sandbox::new(&[test_plugins()]);
    let server = HttpServer::start_with(&sb, &["--http", "localhost:0"]);
    assert!(server.addr.ip().is_loopback(), "bound {}", server.addr);
    let host = format!("localhost:{}", server.addr.port());
    let reply = server.send("POST", &[("Host", &host)], Some(INITIALIZE));
    assert_eq!(reply.status, 200, "{reply}");
    assert!(reply.body.contains(r#""serverInfo":{"name":"buildvise""#), "{reply}");
}

/// The JSON-RPC error of a refused request: its id, code and message, after checking the reply
/// is HTTP `status` with a JSON-RPC 2.0 error body.
fn jsonrpc_error(reply: &common::http::Reply, status: u16) -> (Value, i64, String) {
    assert_eq!(reply.status, status, "{reply}");
    assert_eq!(reply.header("content-type"), Some("application/json"), "{reply}");
    let body = reply.json();
    assert_eq!(body["jsonrpc"], "2.0", "{reply}");
    let error = &body["error"];
    let message = error["message"].as_str().unwrap_or_else(|| panic!("no message:{reply}")).to_string();
    (body["id"].clone(), error["code"].as_i64().unwrap_or_else(|| panic!("no code:{reply}")), message)
}

#[test]
fn malformed_json_is_a_400_parse_error_saying_what_to_send() {
    let sb = Sandbox::new(&[test_plugins()]);
    let server = HttpServer::start(&sb);
    for body in [r#"{"jsonrpc": "2.0", "id": 1, "method": "#, "tools/list", ""] {
        let reply = server.send("POST", &[], Some(body));
        let (id, code, message) = jsonrpc_error(&reply, 400);
        assert_eq!((id, code), (Value::Null, -32700), "{body:?}:{reply}");
        assert!(message.starts_with("parse error: "), "{message}");
        assert!(message.contains("send one JSON-RPC 2.0 message as JSON"), "{message}");
    }
}

#[test]
fn json_that_is_not_a_json_rpc_message_is_a_400_invalid_request() {
    let sb = Sandbox::new(&[test_plugins()]);
    let server = HttpServer::start(&sb);
    for (body, id, said) in [
        ("[1, 2]", Value::Null, "batch"),
        (r#""ping""#, Value::Null, "\"jsonrpc\": \"2.0\""),
        (r#"{"id": 7, "method": "ping"}"#, json!(7), "\"jsonrpc\": \"2.0\" is missing"),
    ] {
        let reply = server.send("POST", &[], Some(body));
        let (got_id, code, message) = jsonrpc_error(&reply, 400);
        assert_eq!((got_id, code), (id, -32600), "{body}:{reply}");
        assert!(message.contains(said), "{body}: {message}");
    }

    // A request of a known method whose params do not fit: -32602, with its id, before any
    // session is looked up.
    let body = r#"{"jsonrpc": "2.0", "id": "x", "method": "tools/call", "params": {"arguments": {}}}"#;
    let reply = server.send("POST", &[], Some(body));
    let (id, code, message) = jsonrpc_error(&reply, 400);
    assert_eq!((id, code), (json!("x"), -32602), "{reply}");
    assert!(message.contains("missing field `name`") && message.contains("send params like"), "{message}");
}

#[test]
fn every_refusal_of_the_transport_is_a_json_rpc_error_saying_what_to_send() {
    let sb = Sandbox::new(&[test_plugins()]);
    let server = HttpServer::start(&sb);
    let session = server.initialize();
    let in_session = ("Mcp-Session-Id", session.as_str());
    let list = r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#;
    // Method, headers, body; then the status, the id and what the message says to do.
    type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, Option<&'a str>, u16, Value, &'a str);
    let cases: [Case; 6] = [
        (
            "POST",
            vec![in_session, ("Content-Type", "text/plain")],
            Some(list),
            415,
            json!(5),
            "Content-Type: application/json",
        ),
        (
            "POST",
            vec![in_session, ("Accept", "text/plain")],
            Some(list),
            406,
            json!(5),
            "Accept: application/json, text/event-stream",
        ),
        ("GET", vec![in_session, ("Accept", "application/json")], None, 406, Value::Null, "Accept: text/event-stream"),
        ("PUT", vec![in_session], Some(list), 405, Value::Null, "POST a message, GET a stream, DELETE a session"),
        ("POST", vec![], Some(list), 400, json!(5), "Mcp-Session-Id"),
        (
            "POST",
            vec![in_session, ("MCP-Protocol-Version", "1999-01-01")],
            Some(list),
            400,
            json!(5),
            "MCP-Protocol-Version",
        ),
    ];
    for (method, headers, body, status, id, says) in cases {
        let reply = server.send(method, &headers, body);
        let (got_id, code, message) = jsonrpc_error(&reply, status);
        assert_eq!((got_id, code), (id, -32600), "{method} {headers:?}:{reply}");
        assert!(message.contains(says), "{method} {headers:?}: {message}");
    }

    // A method the server does not offer is named, with what it offers.
    let reply = server.send("POST", &[in_session], Some(r#"{"jsonrpc":"2.0","id":6,"method":"prompts/list"}"#));
    let (id, code, message) = jsonrpc_error(&reply, 200);
    assert_eq!((id, code), (json!(6), -32601), "{reply}");
    assert!(message.contains("\"prompts/list\" is not offered") && message.contains("tools/call"), "{message}");
}

#[test]
fn delete_ends_a_known_session_and_answers_404_for_an_unknown_one() {
    let sb = Sandbox::new(&[test_plugins()]);
    let server = HttpServer::start(&sb);
    let session = server.initialize();

    let reply = server.send("DELETE", &[], None);
    let (_, code, message) = jsonrpc_error(&reply, 400);
    assert_eq!(code, -32600, "{reply}");
    assert!(message.contains("without an Mcp-Session-Id header"), "{message}");

    let reply = server.send("DELETE", &[("Mcp-Session-Id", "no-such-session")], None);
    let (_, code, message) = jsonrpc_error(&reply, 404);
    assert_eq!(code, -32001, "{reply}");
    assert!(message.contains("send initialize without Mcp-Session-Id"), "{message}");
    assert_eq!(server.notify(&session).status, 202, "an unknown id ended another session");

    let reply = server.send("DELETE", &[("Mcp-Session-Id", &session)], None);
    assert!(matches!(reply.status, 200 | 204), "{reply}");
    let reply = server.notify(&session);
    assert_eq!(jsonrpc_error(&reply, 404).1, -32001, "the deleted session still answers:{reply}");
    let reply = server.send("DELETE", &[("Mcp-Session-Id", &session)], None);
    assert_eq!(reply.status, 404, "a second DELETE:{reply}");
}

#[test]
fn an_idle_session_expires_and_a_session_with_an_open_stream_does_not() {
    let sb = Sandbox::new(&[test_plugins()]);
    let server = HttpServer::start_with(&sb, &["--http", "127.0.0.1:0", "--session-idle", "1"]);
    let idle = server.initialize();
    let held = server.initialize();
    let (reply, stream) = server.send_and_hold("GET", &[("Mcp-Session-Id", &held)], None);
    assert_eq!(reply.status, 200, "the GET stream:{reply}");
    assert_eq!(server.notify(&idle).status, 202, "the idle session is open before its time");

    // The server says when it ends a session: nothing is sent that would count as a request.
    let expired = |id: &str| server.wait_to_say(&format!("MCP session {id} expired"), Duration::from_secs(10));
    assert!(expired(&idle), "the idle session was not ended");
    let reply = server.notify(&idle);
    let (_, code, message) = jsonrpc_error(&reply, 404);
    assert_eq!(code, -32001, "{reply}");
    assert!(message.contains("went 1 s without a request"), "{message}");
    assert_eq!(server.notify(&held).status, 202, "a session with an open stream expired");

    // Once its client lets the stream go, the session is idle too, and goes the same way.
    drop(stream);
    assert!(expired(&held), "a session idle since its stream closed was not ended");
    assert_eq!(server.notify(&held).status, 404, "a session idle since its stream closed is still open");
}

#[test]
fn at_the_session_cap_the_idlest_session_makes_way_and_when_all_are_busy_initialize_is_refused() {
    let sb = Sandbox::new(&[test_plugins()]);
    let server = HttpServer::start_with(&sb, &["--http", "127.0.0.1:0", "--max-sessions", "1"]);
    let first = server.initialize();
    let second = server.initialize();
    assert_eq!(server.notify(&first).status, 404, "the idle session did not make way");
    assert_eq!(server.notify(&second).status, 202);

    let (reply, _stream) = server.send_and_hold("GET", &[("Mcp-Session-Id", &second)], None);
    assert_eq!(reply.status, 200, "the GET stream:{reply}");
    let reply = server.send("POST", &[], Some(INITIALIZE));
    let (id, code, message) = jsonrpc_error(&reply, 503);
    assert_eq!((id, code), (json!(1), -32000), "{reply}");
    assert!(message.contains("all 1 open (--max-sessions 1) are busy"), "{message}");
    assert!(message.contains("higher --max-sessions"), "{message}");
    assert!(reply.header("mcp-session-id").is_none(), "a refused initialize opened a session:{reply}");
    assert_eq!(server.notify(&second).status, 202, "refusing a newcomer ended a busy session");
}

/// The SSE events of a response body sent in HTTP/1.1 chunks, read one at a time.
struct Events {
    stream: std::net::TcpStream,
    /// Bytes read and not yet de-chunked.
    raw: Vec<u8>,
    /// De-chunked bytes not yet split into events.
    text: String,
}

impl Events {
    fn new(first: &str, stream: std::net::TcpStream) -> Self {
        Events { stream, raw: first.as_bytes().to_vec(), text: String::new() }
    }

    /// The next event's `id` and `data`; None when the stream ended.
    fn next(&mut self) -> Option<(Option<String>, String)> {
        use std::io::Read;
        loop {
            if let Some(end) = self.text.find("\n\n") {
                let event: String = self.text.drain(..end + 2).collect();
                let field = |name: &str| {
                    event
                        .lines()
                        .filter_map(|l| l.strip_prefix(name))
                        .map(|v| v.trim_start().to_string())
                        .reduce(|a, b| a + &b)
                };
                return Some((field("id:"), field("data:").unwrap_or_default()));
            }
            // A chunk: its size in hex, CRLF, that many bytes, CRLF.
            if let Some(at) = self.raw.windows(2).position(|w| w == b"\r\n") {
                let size =
                    usize::from_str_radix(String::from_utf8_lossy(&self.raw[..at]).trim(), 16).expect("a chunk size");
                if size == 0 {
                    return None;
                }
                if self.raw.len() >= at + 2 + size + 2 {
                    let chunk: Vec<u8> = self.raw.drain(..at + 2 + size + 2).skip(at + 2).take(size).collect();
                    self.text.push_str(&String::from_utf8_lossy(&chunk));
                    continue;
                }
            }
            let mut buf = [0u8; 4096];
            match self.stream.read(&mut buf) {
                Ok(0) => return None,
                Ok(n) => self.raw.extend_from_slice(&buf[..n]),
                Err(e) => panic!("reading the stream: {e}"),
            }
        }
    }
}

/// The index of an event id (`INDEX` or `INDEX/REQUEST`).
fn index(id: &str) -> u64 {
    id.split('/').next().and_then(|i| i.parse().ok()).unwrap_or_else(|| panic!("an event id: {id}"))
}

#[test]
fn a_stream_resumed_with_last_event_id_goes_on_after_that_event_not_from_it() {
    let sb = Sandbox::new(&[test_plugins()]);
    let server = HttpServer::start(&sb);
    let session = server.initialize();
    let script = "for i in 1 2 3 4 5 6 7 8; do echo \"step $i\"; sleep 0.3; done";
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "build", "arguments": {"action": "exec", "tool": "panicky.sh", "args": [script]},
        "_meta": {"progressToken": "p"}}});
    let (reply, stream) = server.send_and_hold("POST", &[("Mcp-Session-Id", &session)], Some(&call.to_string()));
    assert_eq!(reply.status, 200, "{reply}");
    let mut events = Events::new(&reply.body, stream);
    let seen = loop {
        let (id, data) = events.next().expect("a progress notification before the stream ends");
        if data.contains("notifications/progress") {
            break id.expect("events carry ids, for resuming");
        }
    };
    // The client loses the connection, and resumes with the last event it had.
    drop(events);
    let (reply, stream) = server.send_and_hold("GET", &[("Mcp-Session-Id", &session), ("Last-Event-ID", &seen)], None);
    assert_eq!(reply.status, 200, "{reply}");
    let mut events = Events::new(&reply.body, stream);
    let mut ids = Vec::new();
    loop {
        let (id, data) = events.next().unwrap_or_else(|| panic!("the stream ended before the result; ids {ids:?}"));
        ids.extend(id);
        if data.contains("\"result\"") {
            assert!(data.contains("ok · run "), "{data}");
            break;
        }
    }
    assert!(ids.iter().all(|id| index(id) > index(&seen)), "after {seen}, the resumed stream sent {ids:?}");
}
