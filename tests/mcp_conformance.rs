//! The official MCP conformance suite, `@modelcontextprotocol/conformance`, against
//! `buildvise serve --http`: each server scenario that applies to buildvise, read from the
//! suite's JSON results (`-o DIR`), check by check.
//!
//! Applies: server-initialize, ping, tools-list, dns-rebinding-protection,
//! server-sse-multiple-streams, resources-list (with a stored run to list), and of
//! server-sse-polling the checks on the stream itself (a priming event, a retry field): its
//! resumption check calls the suite's own `test_reconnection` tool, which buildvise does not have.
//! Does not apply: the scenarios that need the suite's fixtures, tools such as
//! `test_simple_text`, prompts, and `test://` resources (resources-read-text,
//! resources-read-binary, resources-templates-read, resources-subscribe), and those that need a
//! capability buildvise does not offer (logging, completion, sampling, elicitation).
//!
//! The suite is installed once with `npm install` into `target/test-env/mcp-conformance-VERSION`
//! and reused by later runs. Without node or npm the tests skip (`common::skip`); a failed
//! download fails. The version is pinned to 0.1.13, the last that runs on Node 20.

mod common;

use common::http::HttpServer;
use common::{Sandbox, root, setup_step, test_plugins};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

const PACKAGE: &str = "@modelcontextprotocol/conformance";
const VERSION: &str = "0.1.13";

/// The suite's `conformance` program, installed on first use; None, the test skipped, without
/// node or npm. Several test processes may ask at once: one installs under a file lock while the others
/// wait.
fn suite() -> Option<PathBuf> {
    if !common::have_node("the MCP conformance suite") {
        return None;
    }
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    Some(BIN.get_or_init(install).clone())
}

fn install() -> PathBuf {
    let envs = root().join("target/test-env");
    std::fs::create_dir_all(&envs).expect("create target/test-env");
    let lock = std::fs::File::create(envs.join("mcp-conformance.lock")).expect("create the suite's lock file");
    lock.lock().expect("lock the suite's directory");
    let dir = envs.join(format!("mcp-conformance-{VERSION}"));
    let stamp = dir.join(".buildvise-ready");
    if std::fs::read_to_string(&stamp).ok().as_deref() != Some(VERSION) {
        std::fs::create_dir_all(&dir).expect("create the suite's directory");
        let manifest = serde_json::json!({"private": true, "dependencies": {PACKAGE: VERSION}});
        std::fs::write(dir.join("package.json"), manifest.to_string()).expect("write package.json");
        setup_step(
            Command::new("npm")
                .args(["install", "--no-audit", "--no-fund"])
                .current_dir(&dir)
                .env("npm_config_update_notifier", "false")
                .env("npm_config_cache", common::npm_cache()),
        );
        std::fs::write(&stamp, VERSION).expect("mark the suite ready");
    }
    dir.join("node_modules/.bin/conformance")
}

/// One check of the suite's results: its id, status (SUCCESS, FAILURE, WARNING, INFO…), what it
/// said when it did not pass, and what it saw.
#[derive(Debug)]
struct Check {
    id: String,
    status: String,
    error: String,
    details: Value,
}

/// Runs `scenario` against a fresh `buildvise serve --http`; its checks, or None when skipped.
fn run(scenario: &str, prepare: impl FnOnce(&Sandbox)) -> Option<Vec<Check>> {
    let conformance = suite()?;
    let sb = Sandbox::new(&[test_plugins()]);
    prepare(&sb);
    let server = HttpServer::start(&sb);
    let results = tempfile::tempdir().expect("results dir");
    let out = Command::new(&conformance)
        .args(["server", "--url", &server.url(), "--scenario", scenario, "--output-dir"])
        .arg(results.path())
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", conformance.display()));
    let said = || format!("{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let file = checks_file(results.path()).unwrap_or_else(|| panic!("{scenario} wrote no checks.json:\n{}", said()));
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let checks: Vec<Value> = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", file.display()));
    let field = |check: &Value, name: &str| check[name].as_str().unwrap_or_default().to_string();
    Some(
        checks
            .iter()
            .map(|c| Check {
                id: field(c, "id"),
                status: field(c, "status"),
                error: field(c, "errorMessage"),
                details: c["details"].clone(),
            })
            .collect(),
    )
}

/// `DIR/server-SCENARIO-TIMESTAMP/checks.json`, the one file a run writes.
fn checks_file(dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(dir).ok()?.filter_map(Result::ok).map(|e| e.path().join("checks.json")).find(|f| f.is_file())
}

/// Every check of the scenario that judges something (all but INFO) passed, and among them are
/// `expected`, so a scenario that stopped checking cannot pass by saying nothing; the checks, or
/// None when skipped.
fn passes_whole(scenario: &str, expected: &[&str], prepare: impl FnOnce(&Sandbox)) -> Option<Vec<Check>> {
    let checks = run(scenario, prepare)?;
    assert_checks(scenario, &checks, expected);
    let failed: Vec<&Check> = checks.iter().filter(|c| c.status != "INFO" && c.status != "SUCCESS").collect();
    assert!(failed.is_empty(), "{scenario}: checks that did not pass: {failed:#?}");
    Some(checks)
}

/// The `expected` checks were made and passed.
fn assert_checks(scenario: &str, checks: &[Check], expected: &[&str]) {
    for id in expected {
        let check = checks.iter().find(|c| c.id == *id);
        let check = check.unwrap_or_else(|| panic!("{scenario}: no check {id} among {checks:#?}"));
        assert_eq!(check.status, "SUCCESS", "{scenario}: {id} did not pass: {}\n{checks:#?}", check.error);
    }
}

#[test]
fn server_initialize() {
    passes_whole("server-initialize", &["server-initialize"], |_| ());
}

#[test]
fn ping() {
    passes_whole("ping", &["ping"], |_| ());
}

#[test]
fn tools_list() {
    passes_whole("tools-list", &["tools-list"], |_| ());
}

#[test]
fn dns_rebinding_protection() {
    passes_whole(
        "dns-rebinding-protection",
        &["localhost-host-rebinding-rejected", "localhost-host-valid-accepted"],
        |_| (),
    );
}

#[test]
fn server_sse_multiple_streams() {
    passes_whole(
        "server-sse-multiple-streams",
        &["server-accepts-multiple-post-streams", "server-sse-streams-functional"],
        |_| (),
    );
}

#[test]
fn resources_list_with_a_stored_run() {
    // A run in the store, so the suite checks a listed resource and not only an empty list.
    let stored = |sb: &Sandbox| {
        sb.run(["exec", "panicky.sh", "--", "echo stored"]).expect_code(0);
    };
    let Some(checks) = passes_whole("resources-list", &["resources-list"], stored) else { return };
    let listed = checks.iter().find(|c| c.id == "resources-list").map(|c| &c.details["resourceCount"]);
    assert!(listed.and_then(Value::as_u64).is_some_and(|n| n >= 1), "the stored run is not listed: {checks:#?}");
}

#[test]
fn server_sse_polling_stream_checks() {
    let Some(checks) = run("server-sse-polling", |_| ()) else { return };
    assert_checks("server-sse-polling", &checks, &["server-sse-priming-event", "server-sse-retry-field"]);
}
