//! A minimal MCP client over stdio: enough JSON-RPC to start `buildvise serve`, time it to the
//! `initialize` answer, read what `tools/list` costs an agent, and time calls of the `build` tool
//! on a warm server.

use crate::Setup;
use anyhow::{Context, bail};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::time::{Duration, Instant};

/// What a client learns from a fresh server.
pub struct Server {
    /// The `build` tool's tools/list entry as the model reads it: name, description and input
    /// schema, compact JSON. Clients read the rest (title, annotations, output schema) and do not
    /// pass it to the model (docs/mcp.md).
    pub tool_json: String,
    /// The same entry whole, compact JSON as sent.
    pub tool_whole_json: String,
    /// The `tools` array of tools/list as the model reads it: what a client puts before the model
    /// on every turn.
    pub tools_json: String,
    /// The server's `instructions` from the initialize answer.
    pub instructions: String,
}

/// A running `buildvise serve` on stdio.
pub struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    /// The id of the next request; 1 is `initialize`.
    next_id: u64,
}

impl Session {
    /// Starts the server, writing its runs to `store`; nothing is sent yet.
    pub fn start(setup: &Setup, store: &Path) -> anyhow::Result<Self> {
        let mut child = setup
            .buildvise(store)
            .arg("serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("starting buildvise serve")?;
        let stdin = child.stdin.take();
        let Some(stdout) = child.stdout.take() else { bail!("buildvise serve has no stdout") };
        Ok(Session { child, stdin, stdout: BufReader::new(stdout), next_id: 1 })
    }

    /// Starts the server and opens a session as a client does: `initialize`, then `initialized`.
    /// Returns the session and the initialize result.
    pub fn open(setup: &Setup, store: &Path) -> anyhow::Result<(Self, Value)> {
        let mut session = Session::start(setup, store)?;
        let init = session.initialize()?;
        session.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        Ok((session, init))
    }

    fn send(&mut self, message: &Value) -> anyhow::Result<()> {
        let Some(stdin) = self.stdin.as_mut() else { bail!("the server's stdin is closed") };
        writeln!(stdin, "{message}")?;
        stdin.flush()?;
        Ok(())
    }

    /// Sends one request and reads messages until its answer (skipping notifications and logs).
    pub fn request(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        let mut line = String::new();
        loop {
            line.clear();
            if self.stdout.read_line(&mut line)? == 0 {
                bail!("buildvise serve closed its stdout before answering {method} (request {id})");
            }
            let Ok(message) = serde_json::from_str::<Value>(&line) else { continue };
            if message["id"].as_u64() == Some(id) {
                if let Some(error) = message.get("error") {
                    bail!("buildvise serve answered {method} with an error: {error}");
                }
                return Ok(message["result"].clone());
            }
        }
    }

    fn initialize(&mut self) -> anyhow::Result<Value> {
        self.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "buildvise-bench", "version": env!("CARGO_PKG_VERSION")}
            }),
        )
    }

    /// Calls the `build` tool; the text of its answer. An answer flagged as an error fails, so
    /// that no figure times a refusal.
    pub fn build(&mut self, arguments: Value) -> anyhow::Result<String> {
        let shown = arguments.to_string();
        let result = self.request("tools/call", json!({"name": "build", "arguments": arguments}))?;
        let text = result["content"][0]["text"].as_str().unwrap_or_default().to_string();
        if result["isError"].as_bool() == Some(true) {
            bail!("build {shown} was refused: {text}");
        }
        Ok(text)
    }

    /// Closes stdin, which ends a stdio server, and reaps it; kills it if it lingers.
    pub fn stop(mut self) -> anyhow::Result<()> {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if self.child.try_wait()?.is_some() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        self.child.kill()?;
        self.child.wait()?;
        Ok(())
    }
}

/// Wall time from spawning the server to its answer to `initialize`.
pub fn time_to_ready(setup: &Setup) -> anyhow::Result<Duration> {
    let store = setup.scratch.path().join("serve-store");
    let started = Instant::now();
    let mut session = Session::start(setup, &store)?;
    session.initialize()?;
    let ready = started.elapsed();
    session.stop()?;
    Ok(ready)
}

/// One full session: initialize, then tools/list.
pub fn tools_list(setup: &Setup) -> anyhow::Result<Server> {
    let (mut session, init) = Session::open(setup, &setup.scratch.path().join("serve-store"))?;
    let list = session.request("tools/list", json!({}))?;
    session.stop()?;
    let Some(tools) = list["tools"].as_array() else { bail!("tools/list has no `tools` array: {list}") };
    let Some(tool) = tools.iter().find(|t| t["name"] == "build") else {
        bail!("tools/list has no `build` tool: {list}");
    };
    let read = |t: &Value| json!({"name": t["name"], "description": t["description"], "inputSchema": t["inputSchema"]});
    Ok(Server {
        tool_json: serde_json::to_string(&read(tool))?,
        tool_whole_json: serde_json::to_string(tool)?,
        tools_json: serde_json::to_string(&tools.iter().map(read).collect::<Vec<_>>())?,
        instructions: init["instructions"].as_str().unwrap_or_default().to_string(),
    })
}
