//! The MCP server over streamable HTTP: `buildvise serve --http 127.0.0.1:0` (the port the
//! system picks, read back from the line the server prints once bound), driven by rmcp's
//! streamable HTTP client for a whole session, and by raw HTTP requests for the DNS-rebinding
//! guard, which a well-behaved client never trips.

mod common;

use common::mcp::Recorder;
use common::{Sandbox, test_plugins};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ClientRequest, ProgressNotificationParam, Request, ServerResult};
use rmcp::service::PeerRequestOptions;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Stdio};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

/// What the server prints on stderr once it listens.
const READY_PREFIX: &str = "buildvise: serving MCP at http://";

/// A running `buildvise serve --http`, stopped when dropped.
struct HttpServer {
    child: Child,
    addr: SocketAddr,
}

impl HttpServer {
    fn start(sb: &Sandbox) -> Self {
        let mut child = sb
            .command(["serve", "--http", "127.0.0.1:0"])
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn buildvise serve --http");
        let stderr = child.stderr.take().expect("piped stderr");
        // A thread reads stderr to its end, so the server never blocks on a full pipe; the
        // first line naming the address is passed on.
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut said = Vec::new();
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(rest) = line.strip_prefix(READY_PREFIX) {
                    let _ = tx.send(Ok(rest.trim_end_matches("/mcp").to_string()));
                }
                said.push(line);
            }
            let _ = tx.send(Err(said.join("\n")));
        });
        let addr = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(Ok(addr)) => addr.parse().unwrap_or_else(|e| panic!("bad address {addr:?}: {e}")),
            Ok(Err(said)) => panic!("buildvise serve --http ended before listening:\n{said}"),
            Err(e) => panic!("buildvise serve --http did not say where it listens: {e}"),
        };
        HttpServer { child, addr }
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

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

/// Sends one HTTP/1.1 POST of an `initialize` request with these extra headers; returns the
/// status code and the whole response as text (status line, headers, as much body as came).
fn post_initialize(addr: SocketAddr, headers: &[(&str, &str)]) -> (u16, String) {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;
    let mut request = String::from("POST /mcp HTTP/1.1\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str(&format!(
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    ));
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(Duration::from_secs(30))).expect("read timeout");
    stream.write_all(request.as_bytes()).expect("send request");
    // The status line and headers are all that matter; an SSE body may stay open, so read
    // until the headers end (or the server closes), not to the end of the stream.
    let mut response = Vec::new();
    let mut buf = [0u8; 4096];
    while !response.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => response.extend_from_slice(&buf[..n]),
            Err(e) => panic!("reading the response: {e}; so far: {}", String::from_utf8_lossy(&response)),
        }
    }
    let response = String::from_utf8_lossy(&response).into_owned();
    let status = response
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status line in: {response}"));
    (status, response)
}

#[test]
fn a_request_naming_a_foreign_host_or_origin_is_rejected() {
    let sb = Sandbox::new(&[test_plugins()]);
    let server = HttpServer::start(&sb);
    let own_host = server.addr.to_string();

    // The same request with the server's own Host is served, so the refusals below are about
    // the names, nothing else.
    let (status, response) = post_initialize(server.addr, &[("Host", &own_host)]);
    assert_eq!(status, 200, "{response}");
    let (status, response) = post_initialize(server.addr, &[("Host", &own_host), ("Origin", "http://localhost:3000")]);
    assert_eq!(status, 200, "{response}");

    let (status, response) = post_initialize(server.addr, &[("Host", "evil.example")]);
    assert!((400..500).contains(&status), "Host: evil.example was served:\n{response}");
    let (status, response) = post_initialize(server.addr, &[("Host", &format!("evil.example:{}", server.addr.port()))]);
    assert!((400..500).contains(&status), "Host: evil.example:PORT was served:\n{response}");
    let (status, response) = post_initialize(server.addr, &[("Host", &own_host), ("Origin", "http://evil.example")]);
    assert!((400..500).contains(&status), "Origin: http://evil.example was served:\n{response}");
}

#[test]
fn serving_http_on_a_non_loopback_address_is_refused() {
    let sb = Sandbox::new(&[test_plugins()]);
    let run = sb.run(["serve", "--http", "0.0.0.0:0"]);
    assert_ne!(run.code, Some(0), "{run}");
    assert!(run.stderr.contains("buildvise serves loopback only; send 127.0.0.1:PORT"), "{run}");
}
