//! An MCP client nobody on this project wrote: the official Python SDK (`mcp` from the Python
//! package index) runs `tests/mcp_client.py` against `buildvise serve` over stdio: initialize,
//! tools/list, `build` exec of cargo.build on a copy of `tests/fixtures/cargo/broken`, and the
//! `log` call its hint names. The script reports what it received; the checks are here.
//!
//! The SDK is installed once into `target/test-env/mcp-venv` (`python3 -m venv`, then pip) and
//! reused by later runs. Without python3 the test says SKIPPED and passes; a failed download
//! fails it.

mod common;

use common::{Sandbox, cargo_plugin, root};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The SDK the client runs: its 2.x API (the script reads results in their wire form, which the
/// SDK keeps stable within a major version).
const MCP_REQUIREMENT: &str = "mcp>=2.3,<3";

/// The virtual environment with the SDK, made on first use; None when there is no python3.
fn mcp_venv() -> Option<PathBuf> {
    common::python_venv("mcp-venv", MCP_REQUIREMENT)
}

/// `python tests/mcp_client.py CWD -- <buildvise serve as the sandbox runs it>`, with the
/// sandbox's environment, so the server the SDK spawns is the sandboxed one.
fn client_command(python: &Path, sb: &Sandbox, cwd: &Path) -> Command {
    let server = sb.command(["serve"]);
    let mut cmd = Command::new(python);
    cmd.arg(root().join("tests/mcp_client.py")).arg(cwd).arg("--").arg(server.get_program()).args(server.get_args());
    for (key, value) in server.get_envs() {
        match value {
            Some(value) => cmd.env(key, value),
            None => cmd.env_remove(key),
        };
    }
    if let Some(dir) = server.get_current_dir() {
        cmd.current_dir(dir);
    }
    cmd.stdin(Stdio::null());
    cmd
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text content: {result:#}"))
}

#[test]
fn the_python_sdk_lists_execs_and_follows_the_hint() {
    let Some(venv) = mcp_venv() else {
        eprintln!("SKIPPED: python3 not found; the Python MCP SDK client test needs it");
        return;
    };
    let sb = Sandbox::new(&[cargo_plugin()]);
    let dir = sb.cargo_fixture("broken");
    let mut cmd = client_command(&venv.join("bin/python"), &sb, &dir);
    let shown = format!("{cmd:?}");
    let out = cmd.output().unwrap_or_else(|e| panic!("{shown}: {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{shown} failed ({}):\n{stderr}", out.status);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("the client printed no JSON ({e}):\n{}\n{stderr}", String::from_utf8_lossy(&out.stdout))
    });

    assert_eq!(report["server"]["name"], "buildvise", "{report:#}");
    let tools = report["tools"].as_array().expect("tools");
    assert_eq!(tools.len(), 1, "{report:#}");
    assert_eq!(tools[0]["name"], "build");
    assert_eq!(tools[0]["inputSchema"]["required"], serde_json::json!(["action"]), "{report:#}");

    let exec = &report["exec"];
    assert_eq!(exec["isError"], false, "{exec:#}");
    assert!(text(exec).starts_with("FAIL exit 101 · run "), "{exec:#}");
    let structured = &exec["structuredContent"];
    let id = structured["runId"].as_str().expect("runId");
    assert_eq!((structured["errors"].as_u64(), structured["warnings"].as_u64()), (Some(2), Some(1)), "{exec:#}");

    // The client followed the hint to the first error's lines, header and location included.
    assert_eq!(report["logCall"]["runId"], id, "{report:#}");
    let log = &report["log"];
    assert_eq!(log["isError"], false, "{log:#}");
    let first = structured["diagnostics"]
        .as_array()
        .and_then(|d| d.iter().find(|d| d["severity"] == "error"))
        .unwrap_or_else(|| panic!("no error: {exec:#}"));
    let page = text(log);
    let start = first["logRange"]["start"].as_u64().expect("logRange");
    assert_eq!(page.lines().nth(1), Some(format!("{start}|error[E0308]: mismatched types").as_str()), "{page}");
    let location = format!(" --> {}:{}:{}", first["file"].as_str().unwrap(), first["line"], first["column"]);
    assert!(page.lines().any(|l| l.ends_with(&location)), "no `{location}` in:\n{page}");
}
