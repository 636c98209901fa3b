//! An MCP client nobody on this project wrote: the official TypeScript SDK
//! (`@modelcontextprotocol/sdk`) runs `tests/mcp_client.cjs` against `buildvise serve` over
//! stdio, with Ajv judging every structured result against the tool's `outputSchema`, and a
//! run silent for 90 s under the SDK's default request timeout. The script reports what it
//! received; the checks are here.
//!
//! The SDK and Ajv are installed once with `npm install` into
//! `target/test-env/mcp-typescript-VERSION` and reused by later runs. Without node or npm the
//! tests skip (`common::skip`); a failed download fails them.

mod common;

use common::{Sandbox, root, setup_step};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// The SDK's version (its 1.x line is the one clients ship) and Ajv's, pinned so that what they
/// accept does not drift under the tests.
const SDK_VERSION: &str = "1.32.2";
const AJV_VERSION: &str = "8.20.0";

/// The node_modules with the SDK and Ajv, installed on first use; None, the test skipped,
/// without node or npm. Several test processes may ask at once: one installs under a file lock
/// while the others wait.
fn node_modules() -> Option<PathBuf> {
    if !common::have_node("the TypeScript MCP SDK client test") {
        return None;
    }
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    Some(DIR.get_or_init(install).clone())
}

fn install() -> PathBuf {
    let envs = root().join("target/test-env");
    std::fs::create_dir_all(&envs).expect("create target/test-env");
    let lock = std::fs::File::create(envs.join("mcp-typescript.lock")).expect("create the SDK's lock file");
    lock.lock().expect("lock the SDK's directory");
    let wanted = format!("{SDK_VERSION} {AJV_VERSION}");
    let dir = envs.join(format!("mcp-typescript-{SDK_VERSION}"));
    let stamp = dir.join(".buildvise-ready");
    if std::fs::read_to_string(&stamp).ok().as_deref() != Some(wanted.as_str()) {
        std::fs::create_dir_all(&dir).expect("create the SDK's directory");
        let manifest = serde_json::json!({
            "private": true,
            "dependencies": {"@modelcontextprotocol/sdk": SDK_VERSION, "ajv": AJV_VERSION}
        });
        std::fs::write(dir.join("package.json"), manifest.to_string()).expect("write package.json");
        setup_step(
            Command::new("npm")
                .args(["install", "--no-audit", "--no-fund"])
                .current_dir(&dir)
                .env("npm_config_update_notifier", "false")
                .env("npm_config_cache", common::npm_cache()),
        );
        std::fs::write(&stamp, &wanted).expect("mark the SDK ready");
    }
    dir.join("node_modules")
}

/// `node tests/mcp_client.cjs SCENARIO CWD -- <buildvise serve as the sandbox runs it>`, with the
/// sandbox's environment and working directory, so the server the SDK spawns is the sandboxed
/// one; the JSON it printed.
fn client_report(modules: &Path, sb: &Sandbox, scenario: &str, cwd: &Path) -> Value {
    let server = sb.command(["serve"]);
    let mut cmd = Command::new("node");
    cmd.arg(root().join("tests/mcp_client.cjs"))
        .arg(scenario)
        .arg(cwd)
        .arg("--")
        .arg(server.get_program())
        .args(server.get_args())
        .env("NODE_PATH", modules);
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
    let shown = format!("{cmd:?}");
    let out = cmd.output().unwrap_or_else(|e| panic!("{shown}: {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{shown} failed ({}):\n{stderr}", out.status);
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("the client printed no JSON ({e}):\n{}\n{stderr}", String::from_utf8_lossy(&out.stdout))
    })
}

/// A project whose buildvise.toml defines a checker that finds an error and a warning and fails,
/// a tool that passes, one that outlasts a 1 s timeout, and one silent for 90 s.
fn project(sb: &Sandbox) -> PathBuf {
    sb.project_with_config(
        "ts",
        r#"
[tools."ci.check"]
run = ["sh", "-c", "echo 'checking'; echo \"src/a.c:3: error: $1 is undefined\"; echo 'src/b.c:7: warning: unused b'; exit 2", "sh"]
[[tools."ci.check".patterns]]
regex = '^(?P<file>[^:]+):(?P<line>\d+): (?P<severity>error|warning): (?P<message>.*)$'
[tools.ok]
run = ["sh", "-c", "echo fine"]
formats = ["fallback"]
[tools.slow]
run = ["sh", "-c", "echo started; sleep 30"]
formats = ["fallback"]
[tools.quiet]
run = ["sh", "-c", "echo started; sleep 90; echo finished"]
formats = ["fallback"]
"#,
    )
}

#[test]
fn every_structured_result_validates_against_the_output_schema_with_ajv() {
    let Some(modules) = node_modules() else { return };
    let sb = Sandbox::new(&[]);
    let dir = project(&sb);
    let report = client_report(&modules, &sb, "schema", &dir);

    let tool = &report["tool"];
    assert_eq!(tool["title"], "Build, test, lint", "{tool:#}");
    assert_eq!(tool["annotations"]["destructiveHint"], true, "{tool:#}");
    assert_eq!(tool["outputSchema"]["type"], "object", "{tool:#}");

    let calls = report["calls"].as_array().expect("calls");
    assert_eq!(calls.len(), 10, "{report:#}");
    for call in calls {
        assert!(call.get("thrown").is_none(), "the SDK refused the result: {call:#}");
        assert_eq!(call["isError"], false, "{call:#}");
        assert_eq!(call["valid"], true, "Ajv: structuredContent does not fit outputSchema: {call:#}");
    }
    // The calls reached every shape an answer has: a list, failed, passed and timed-out runs at
    // each detail level, a page, a grep and a re-rendered run.
    let statuses: Vec<&str> = calls.iter().filter_map(|c| c["structured"]["status"].as_str()).collect();
    for status in ["failed", "ok", "timedOut"] {
        assert!(statuses.contains(&status), "no {status} run among {statuses:?}");
    }
    // Values read otherwise than sent are said, in the text and in the structured notes.
    for (call, says) in [(&calls[4], "max_timeout_secs"), (&calls[7], "startLine 0 was read as 1")] {
        let notes = call["structured"]["notes"].as_array().unwrap_or_else(|| panic!("no notes: {call:#}"));
        assert!(notes.iter().any(|n| n.as_str().is_some_and(|n| n.contains(says))), "{call:#}");
        assert!(call["text"].as_str().unwrap().contains("note: "), "{call:#}");
    }
    let listed = calls[0]["structured"]["tools"].as_array().expect("list gives tools");
    assert!(listed.iter().any(|t| t["name"] == "ci.check"), "{:#}", calls[0]);
    assert!(calls[1]["structured"]["diagnostics"].as_array().is_some_and(|d| d.len() == 2), "{:#}", calls[1]);
    assert!(calls[6]["structured"]["lines"].as_array().is_some_and(|l| l.len() == 3), "{:#}", calls[6]);
}

#[test]
fn a_run_silent_for_90_s_completes_under_the_sdks_default_timeout() {
    let Some(modules) = node_modules() else { return };
    let sb = Sandbox::new(&[]);
    let dir = project(&sb);
    let report = client_report(&modules, &sb, "silent", &dir);

    let result = &report["result"];
    assert!(result.get("thrown").is_none(), "the SDK gave up on the call: {report:#}");
    let text = result["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text: {report:#}"));
    assert!(text.starts_with("ok · "), "{report:#}");
    assert!(report["seconds"].as_f64().is_some_and(|s| s >= 90.0), "{report:#}");
    // The SDK would have timed out after 60 s without a notification: none came further apart.
    let mut at = vec![0.0];
    at.extend(report["progress"].as_array().expect("progress").iter().filter_map(|p| p["atSecs"].as_f64()));
    at.push(report["seconds"].as_f64().unwrap());
    let widest = at.windows(2).map(|w| w[1] - w[0]).fold(0.0, f64::max);
    assert!(widest < 15.0, "{widest} s without a notification: {report:#}");
}
