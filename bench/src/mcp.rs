//! A minimal MCP client over stdio: enough JSON-RPC to start `buildvise serve`, time it to the
//! `initialize` answer, and read what `tools/list` costs an agent.

use crate::Setup;
use anyhow::{Context, bail};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::time::{Duration, Instant};

/// What a client learns from a fresh server.
pub struct Server {
    /// The `build` tool's tools/list entry, compact JSON as sent.
    pub tool_json: String,
    /// The server's `instructions` from the initialize answer.
    pub instructions: String,
}

/// A running `buildvise serve` on stdio.
struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Session {
    fn start(setup: &Setup) -> anyhow::Result<Self> {
        let store = setup.scratch.path().join("serve-store");
        let mut child = setup
            .buildvise(&store)
            .arg("serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("starting buildvise serve")?;
        let stdin = child.stdin.take();
        let Some(stdout) = child.stdout.take() else { bail!("buildvise serve has no stdout") };
        Ok(Session { child, stdin, stdout: BufReader::new(stdout) })
    }

    fn send(&mut self, message: &Value) -> anyhow::Result<()> {
        let Some(stdin) = self.stdin.as_mut() else { bail!("the server's stdin is closed") };
        writeln!(stdin, "{message}")?;
        stdin.flush()?;
        Ok(())
    }

    /// Reads messages until the answer to request `id` (skipping notifications and logs).
    fn answer(&mut self, id: u64) -> anyhow::Result<Value> {
        let mut line = String::new();
        loop {
            line.clear();
            if self.stdout.read_line(&mut line)? == 0 {
                bail!("buildvise serve closed its stdout before answering request {id}");
            }
            let Ok(message) = serde_json::from_str::<Value>(&line) else { continue };
            if message["id"].as_u64() == Some(id) {
                if let Some(error) = message.get("error") {
                    bail!("buildvise serve answered request {id} with an error: {error}");
                }
                return Ok(message["result"].clone());
            }
        }
    }

    fn initialize(&mut self) -> anyhow::Result<Value> {
        self.send(&json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "buildvise-bench", "version": env!("CARGO_PKG_VERSION")}
            }
        }))?;
        self.answer(1)
    }

    /// Closes stdin, which ends a stdio server, and reaps it; kills it if it lingers.
    fn stop(mut self) -> anyhow::Result<()> {
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
    let started = Instant::now();
    let mut session = Session::start(setup)?;
    session.initialize()?;
    let ready = started.elapsed();
    session.stop()?;
    Ok(ready)
}

/// One full session: initialize, then tools/list.
pub fn tools_list(setup: &Setup) -> anyhow::Result<Server> {
    let mut session = Session::start(setup)?;
    let init = session.initialize()?;
    session.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
    session.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}))?;
    let list = session.answer(2)?;
    session.stop()?;
    let tools = list["tools"].as_array().cloned().unwrap_or_default();
    let Some(tool) = tools.iter().find(|t| t["name"] == "build") else {
        bail!("tools/list has no `build` tool: {list}");
    };
    Ok(Server {
        tool_json: serde_json::to_string(tool)?,
        instructions: init["instructions"].as_str().unwrap_or_default().to_string(),
    })
}
