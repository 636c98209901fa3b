//! An MCP client nobody on this project wrote: the official Python SDK (`mcp` from the Python
//! package index) runs `tests/mcp_client.py` against `buildvise serve` over stdio, in scenarios:
//! a whole session (initialize, tools/list, `build` exec of cargo.build on a copy of
//! `tests/fixtures/cargo/broken`, the `log` call its hint names); progress through a real pytest
//! run of 5 s; a client that leaves mid-run; SIGTERM to the server mid-run. The script reports
//! what it received; the checks are here.
//!
//! The SDK is installed once into `target/test-env/mcp-venv` (`python3 -m venv`, then pip) and
//! reused by later runs. Without python3 the tests skip (`common::skip`); a failed download
//! fails them.

mod common;

use common::{Sandbox, root, runs, toolchains};
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

/// `python tests/mcp_client.py SCENARIO CWD -- <buildvise serve as the sandbox runs it>`, with
/// the sandbox's environment, so the server the SDK spawns is the sandboxed one.
fn client_command(python: &Path, sb: &Sandbox, scenario: &str, cwd: &Path) -> Command {
    let server = sb.command(["serve"]);
    let mut cmd = Command::new(python);
    cmd.arg(root().join("tests/mcp_client.py"))
        .arg(scenario)
        .arg(cwd)
        .arg("--")
        .arg(server.get_program())
        .args(server.get_args());
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

/// Runs the client to its end; the JSON it printed.
fn client_report(mut cmd: Command) -> Value {
    let shown = format!("{cmd:?}");
    let out = cmd.output().unwrap_or_else(|e| panic!("{shown}: {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{shown} failed ({}):\n{stderr}", out.status);
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("the client printed no JSON ({e}):\n{}\n{stderr}", String::from_utf8_lossy(&out.stdout))
    })
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text content: {result:#}"))
}

#[test]
fn the_python_sdk_lists_execs_and_follows_the_hint() {
    let Some(venv) = mcp_venv() else {
        common::skip("python3 not found; the Python MCP SDK client test needs it");
        return;
    };
    let sb = Sandbox::new(&[toolchains()]);
    let dir = sb.cargo_fixture("broken");
    let report = client_report(client_command(&venv.join("bin/python"), &sb, "session", &dir));

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

/// A project with the config tool `slow`: it writes its parent's pid (the server's) to
/// `server.pid`, says it started, and would run for a minute.
fn slow_project(sb: &Sandbox) -> PathBuf {
    sb.project_with_config(
        "slow",
        "[tools.\"slow\"]\nrun = [\"sh\", \"-c\", \"echo $PPID > server.pid; echo started; sleep 60; echo finished\"]\n\
         formats = [\"fallback\"]\n",
    )
}

/// The sandbox's only run: cancelled, with the line the tool printed before it was stopped
/// readable in its log.
fn assert_cancelled_with_its_log(sb: &Sandbox) {
    let runs = runs(sb);
    assert_eq!(runs.len(), 1, "{runs:#?}");
    assert_eq!(runs[0]["tool"], "slow");
    assert_eq!(runs[0]["status"], "cancelled", "{runs:#?}");
    let id = runs[0]["id"].as_str().expect("id");
    let log = sb.run(["log", id, "--raw"]);
    log.expect_code(0);
    assert_eq!(log.text(), "started\n", "{log}");
    let pids = common::pids(&sb.work().join("slow/server.pid"));
    assert_eq!(common::wait_gone(&pids), Vec::<u32>::new(), "the server is gone");
}

#[test]
fn progress_rises_strictly_and_counts_tests_against_the_total() {
    let (Some(venv), Some(pytest)) = (mcp_venv(), common::python_venv("pytest-venv", common::PYTEST_REQUIREMENT))
    else {
        common::skip("python3 not found; the Python MCP SDK client test needs it");
        return;
    };
    let sb = Sandbox::new(&[common::toolchains()]);
    let dir = sb.work().join("ticks");
    std::fs::create_dir_all(&dir).unwrap();
    // Five tests of a second each, so that progress is heard between them.
    std::fs::write(
        dir.join("test_ticks.py"),
        "import time\nimport pytest\n\n\n@pytest.mark.parametrize(\"n\", range(5))\ndef test_tick(n):\n    time.sleep(1)\n",
    )
    .unwrap();
    let mut cmd = client_command(&venv.join("bin/python"), &sb, "progress", &dir);
    cmd.env("VIRTUAL_ENV", &pytest);
    let report = client_report(cmd);

    assert!(text(&report["exec"]).starts_with("ok · tests 5 passed"), "{report:#}");
    let heard = report["progress"].as_array().expect("progress list");
    assert!(heard.len() >= 3, "a 5 s run is heard from several times: {report:#}");
    let values: Vec<f64> = heard.iter().map(|p| p["progress"].as_f64().expect("a number")).collect();
    assert!(values.windows(2).all(|w| w[1] > w[0]), "progress must rise strictly: {values:?}");
    // Once pytest said it collected 5 tests, each notification carries the total (the tests and
    // one unit for what came before them) and a value within it.
    let counted: Vec<&Value> = heard.iter().filter(|p| !p["total"].is_null()).collect();
    assert!(!counted.is_empty(), "no notification carried a total: {report:#}");
    for p in &counted {
        assert_eq!(p["total"].as_f64(), Some(6.0), "{p}");
        assert!(p["progress"].as_f64().unwrap() <= 6.0, "{p}");
        assert!(p["message"].as_str().unwrap().contains("/5 tests"), "{p}");
    }
}

/// The client's `scenario` on the `slow` project of a fresh sandbox: the sandbox and the report;
/// None (the test skipped) without python3.
fn slow_scenario(scenario: &str) -> Option<(Sandbox, Value)> {
    let Some(venv) = mcp_venv() else {
        common::skip("python3 not found; the Python MCP SDK client test needs it");
        return None;
    };
    let sb = Sandbox::new(&[]);
    let dir = slow_project(&sb);
    let report = client_report(client_command(&venv.join("bin/python"), &sb, scenario, &dir));
    Some((sb, report))
}

#[test]
fn a_client_that_leaves_mid_run_leaves_the_run_cancelled_with_its_log() {
    let Some((sb, report)) = slow_scenario("leave") else { return };
    // The SDK closes stdin, waits 2 s for the server to exit, then kills it: a server that
    // needed the kill would have left within the SDK's window only by being killed.
    let closed = report["closedInSecs"].as_f64().expect("closedInSecs");
    assert!(closed < 2.0, "the server did not exit on its own once stdin closed: {report:#}");
    assert_cancelled_with_its_log(&sb);
}

#[test]
fn sigterm_to_the_server_mid_run_leaves_the_run_cancelled_with_its_log() {
    let Some((sb, report)) = slow_scenario("sigterm") else { return };
    // The server cancels, answers the pending call if it still can, and exits.
    let call = &report["call"];
    assert!(call.get("error").is_some() || text(call).starts_with("CANCELLED"), "{report:#}");
    assert_cancelled_with_its_log(&sb);
}
