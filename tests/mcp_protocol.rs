//! The protocol by the book, with raw JSON-RPC lines on `buildvise serve`'s stdin: the error
//! codes a client gets for what no SDK would send (malformed JSON, batches, bad params, unknown
//! tools), and stored runs as resources (`resources/list`, `resources/templates/list`,
//! `resources/read` of a run's answer and of its log, a page at a time), seen only from the
//! session's roots, as the `log` action sees them.

mod common;

use common::Sandbox;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Stdio};

/// A `buildvise serve` on stdio, initialized, spoken to one line at a time.
struct RawServer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl RawServer {
    /// Serves from `cwd`, its only root.
    fn start(sb: &Sandbox, cwd: &Path) -> Self {
        let mut child = sb
            .command(["serve"])
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn buildvise serve");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut server = RawServer { child, stdin, stdout };
        let init = server.ask(
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#,
        );
        assert!(init["result"]["capabilities"]["resources"].is_object(), "{init}");
        server.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        server
    }

    fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").expect("write to the server");
        self.stdin.flush().expect("flush");
    }

    /// Sends `line` and returns the next message from the server.
    fn ask(&mut self, line: &str) -> Value {
        self.send(line);
        let mut reply = String::new();
        self.stdout.read_line(&mut reply).expect("read from the server");
        serde_json::from_str(&reply).unwrap_or_else(|e| panic!("not JSON ({e}): {reply:?} after {line}"))
    }

    /// The `build` tool's answer to `arguments`.
    fn call(&mut self, id: u32, arguments: Value) -> Value {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "build", "arguments": arguments}});
        self.ask(&request.to_string())
    }
}

impl Drop for RawServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The error of a reply, as (id, code, message).
fn error(reply: &Value) -> (Value, i64, String) {
    let e = &reply["error"];
    assert!(e.is_object(), "not an error: {reply}");
    (reply["id"].clone(), e["code"].as_i64().unwrap(), e["message"].as_str().unwrap().to_string())
}

#[test]
fn what_no_sdk_would_send_gets_the_json_rpc_code_with_the_reason() {
    let sb = Sandbox::new(&[]);
    let mut server = RawServer::start(&sb, &sb.work());

    let (id, code, message) = error(&server.ask(r#"{"jsonrpc":"2.0","id":1,"method":"#));
    assert_eq!((id, code), (Value::Null, -32700));
    assert!(
        message.starts_with("parse error: ") && message.ends_with("send one JSON-RPC 2.0 message as JSON"),
        "{message}"
    );

    let (id, code, message) = error(&server.ask(r#"[{"jsonrpc":"2.0","id":2,"method":"ping"}]"#));
    assert_eq!((id, code), (Value::Null, -32600));
    assert!(message.contains("batch"), "{message}");

    let (id, code, message) = error(&server.ask(r#"{"id":3,"method":"ping"}"#));
    assert_eq!((id, code), (json!(3), -32600));
    assert!(message.contains("\"jsonrpc\": \"2.0\""), "{message}");

    let (id, code, message) = error(
        &server.ask(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"arguments":{"action":"list"}}}"#),
    );
    assert_eq!((id, code), (json!(4), -32602));
    assert!(
        message.starts_with("invalid params for tools/call: missing field `name`; send params like {"),
        "{message}"
    );

    let (id, code, message) = error(
        &server.ask(r#"{"jsonrpc":"2.0","id":"five","method":"tools/call","params":{"name":"build","arguments":[1]}}"#),
    );
    assert_eq!((id, code), (json!("five"), -32602));
    assert!(message.contains("expected a map"), "{message}");

    let (id, code, message) =
        error(&server.ask(r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"make","arguments":{}}}"#));
    assert_eq!((id, code), (json!(6), -32602));
    assert_eq!(message, "unknown tool \"make\": this server has one tool, \"build\"; call that");

    let (id, code, message) = error(&server.ask(r#"{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{}}"#));
    assert_eq!((id, code), (json!(7), -32602));
    assert!(message.contains("missing field `uri`"), "{message}");

    // A method the server does not offer, known to MCP or not: named, with what is offered.
    for method in ["prompts/list", "completion/complete", "tasks/list", "buildvise/run"] {
        let (id, code, message) =
            error(&server.ask(&format!(r#"{{"jsonrpc":"2.0","id":"{method}","method":"{method}","params":{{}}}}"#)));
        assert_eq!((id, code), (json!(method), -32601));
        assert!(
            message.starts_with(&format!("method \"{method}\" is not offered by this server: it answers ")),
            "{message}"
        );
        assert!(message.contains("tools/call") && message.contains("\"build\""), "{message}");
    }

    // Arguments the tool's schema refuses are the tool's error, which the model reads and fixes.
    let answer = server.call(8, json!({"action": "exec"}));
    assert_eq!(answer["result"]["isError"], true, "{answer}");

    // After all that, the session still works.
    assert_eq!(
        server.ask(r#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#),
        json!({"jsonrpc": "2.0", "id": 9, "result": {}})
    );
}

/// A config tool printing 2500 numbered lines, then failing with exit 3.
const PRINTS: &str = r#"[tools."prints"]
run = ["sh", "-c", "i=1; while [ $i -le 2500 ]; do echo \"line $i\"; i=$((i+1)); done; exit 3"]
formats = ["fallback"]
"#;

#[test]
fn stored_runs_are_resources_of_the_sessions_roots_paged_and_only_theirs() {
    let sb = Sandbox::new(&[]);
    let mine = sb.project_with_config("mine", PRINTS);
    let theirs = sb.project_with_config("theirs", PRINTS);
    let theirs = theirs.display().to_string();
    let other_id = common::header_id(&sb.run(["exec", "prints", "--cwd", &theirs]));
    let mut server = RawServer::start(&sb, &mine);
    let executed = server.call(1, json!({"action": "exec", "tool": "prints"}));
    let id = executed["result"]["structuredContent"]["runId"].as_str().expect("runId").to_string();

    let templates = server.ask(r#"{"jsonrpc":"2.0","id":2,"method":"resources/templates/list"}"#);
    let uris: Vec<&str> = templates["result"]["resourceTemplates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["uriTemplate"].as_str().unwrap())
        .collect();
    assert_eq!(uris, ["buildvise://run/{id}", "buildvise://run/{id}/log{?start,count}"]);

    // Only the run made in this session's root is listed.
    let listed = server.ask(r#"{"jsonrpc":"2.0","id":3,"method":"resources/list"}"#);
    let resources = listed["result"]["resources"].as_array().expect("resources");
    assert_eq!(resources.len(), 1, "{listed}");
    assert_eq!(resources[0]["uri"], format!("buildvise://run/{id}"));
    assert_eq!(resources[0]["name"], format!("prints {id}"));
    assert_eq!(resources[0]["mimeType"], "text/plain");
    assert!(resources[0]["description"].as_str().unwrap().ends_with(": failed, exit 3"), "{listed}");

    // The run's answer reads as exec gave it.
    let read = |server: &mut RawServer, n: u32, uri: &str| {
        server.ask(&json!({"jsonrpc": "2.0", "id": n, "method": "resources/read", "params": {"uri": uri}}).to_string())
    };
    let answer = read(&mut server, 4, &format!("buildvise://run/{id}"));
    let contents = &answer["result"]["contents"][0];
    assert_eq!(contents["text"], executed["result"]["content"][0]["text"], "{answer}");

    // The log, a page at a time: the first page stops at its size and names the next.
    let page = read(&mut server, 5, &format!("buildvise://run/{id}/log"));
    let text = page["result"]["contents"][0]["text"].as_str().unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!((lines[0], lines[1999]), ("line 1", "line 2000"));
    assert_eq!(
        lines[2000],
        format!("[buildvise: lines 1-2000 of 2500; next page: buildvise://run/{id}/log?start=2001]")
    );
    let page = read(&mut server, 6, &format!("buildvise://run/{id}/log?start=2499&count=5"));
    assert_eq!(page["result"]["contents"][0]["text"], "line 2499\nline 2500\n", "{page}");

    // Another project's run, a run that does not exist, and other URIs are not found.
    for (n, uri) in [
        (7, format!("buildvise://run/{other_id}")),
        (8, format!("buildvise://run/{other_id}/log")),
        (9, "buildvise://run/zzzzzzzz".to_string()),
        (10, "file:///etc/passwd".to_string()),
        (11, format!("buildvise://run/{id}/raw")),
    ] {
        let (_, code, message) = error(&read(&mut server, n, &uri));
        assert_eq!(code, -32002, "{uri}: {message}");
        assert!(message.contains("send buildvise://run/ID"), "{message}");
    }
    let (_, code, message) = error(&read(&mut server, 12, &format!("buildvise://run/{id}/log?start=0")));
    assert_eq!(code, -32602, "{message}");

    // The `log` action holds to the same roots.
    let refused = server.call(13, json!({"action": "log", "runId": other_id}));
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let message = refused["result"]["content"][0]["text"].as_str().unwrap();
    assert!(message.starts_with(&format!("no run \"{other_id}\" in the store")), "{message}");
    let page = server.call(14, json!({"action": "log", "runId": id, "startLine": -1}));
    assert_eq!(page["result"]["isError"], false, "{page}");
}

#[test]
fn a_run_with_thousands_of_arguments_has_a_short_resource_description() {
    let sb = Sandbox::new(&[]);
    let dir = sb.project_with_config("many", "[tools.\"takes\"]\nrun = [\"true\"]\nformats = [\"fallback\"]\n");
    let mut server = RawServer::start(&sb, &dir);
    let args: Vec<String> = (0..5000).map(|n| format!("--argument-{n:04}")).collect();
    let executed = server.call(1, json!({"action": "exec", "tool": "takes", "args": args}));
    assert_ne!(executed["result"]["isError"], true, "{executed}");

    let listed = server.ask(r#"{"jsonrpc":"2.0","id":2,"method":"resources/list"}"#);
    let description = listed["result"]["resources"][0]["description"].as_str().expect("a description");
    assert!(description.len() <= 400, "{} bytes: {description}", description.len());
    assert!(description.starts_with("true --argument-0000 --argument-0001"), "{description}");
    assert!(description.contains("… (5000 args) in ") && description.ends_with(": passed"), "{description}");
}
