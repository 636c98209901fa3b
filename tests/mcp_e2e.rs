//! The MCP server end to end over stdio: the real `buildvise serve` driven by rmcp's client
//! (`TokioChildProcess`), as an agent would drive it. Real cargo on a copy of
//! `tests/fixtures/cargo/broken`, the test-only `panicky` plugin for odd processes (its
//! `panicky.sh` runs the script the test sends), and the npm plugin for the consent rules (nothing
//! npm-related ever runs: every npm call here must be refused before a process starts).
//!
//! Every refusal is checked for the same shape: a tool error (`isError: true`) of one line that
//! names what to send instead, and no run stored.

mod common;

use common::mcp::{call, connect, text, wait_for};
use common::{Sandbox, alive, pids, runs, test_plugins, toolchains};
use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequestParams, CancelTaskParams, ClientCapabilities, ClientConfig, ClientRequest, GetTaskParams,
    Implementation, Request, ServerResult, TaskStatus,
};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// o200k tokens the model reads of tools/list (each tool's name, description and input schema,
/// compact JSON) and the server's instructions may cost together: they are paid on every turn.
const TOOL_TOKEN_BUDGET: usize = 200;

/// o200k tokens the rest of the tool may cost (title, annotations, output schema): clients read
/// it and do not pass it to the model, but a client that forwards the whole tool pays it too.
const TOOL_EXTRAS_BUDGET: usize = 100;

fn sandbox() -> Sandbox {
    Sandbox::new(&[toolchains(), test_plugins(), toolchains()])
}

fn path_arg(dir: &Path) -> String {
    dir.to_str().expect("UTF-8 path").to_string()
}

/// The `build` arguments a hint names: either a JSON object an agent sends as is, or
/// `log startLine N lineCount M` (the words of the call, for the run the answer is about).
fn hint_call(hint: &str, run_id: &str) -> Value {
    if let Some(start) = hint.find('{') {
        return serde_json::from_str(&hint[start..]).unwrap_or_else(|e| panic!("hint is not JSON ({e}): {hint}"));
    }
    let mut words = hint.split_whitespace();
    let mut call = serde_json::Map::new();
    call.insert("action".to_string(), json!(words.next().unwrap_or_else(|| panic!("empty hint"))));
    while let Some(key) = words.next() {
        let value = words.next().unwrap_or_else(|| panic!("`{key}` has no value in the hint: {hint}"));
        call.insert(key.to_string(), serde_json::from_str(value).unwrap_or_else(|_| json!(value)));
    }
    call.entry("runId").or_insert_with(|| json!(run_id));
    Value::Object(call)
}

#[tokio::test]
async fn a_failing_build_leads_through_the_hint_to_the_first_error() {
    let sb = sandbox();
    let dir = sb.cargo_fixture("broken");
    let session = connect(&sb, &[]).await;

    let tools = session.client.list_all_tools().await.expect("tools/list");
    assert_eq!(tools.iter().map(|t| t.name.as_ref()).collect::<Vec<_>>(), ["build"]);

    let (list, _) = session.ok(json!({"action": "list"})).await;
    for tool in ["cargo.build", "cargo.test", "panicky.sh", "npm.install"] {
        assert!(list.lines().any(|l| l.starts_with(&format!("{tool} "))), "{tool} not listed:\n{list}");
    }

    let (answer, structured) =
        session.ok(json!({"action": "exec", "tool": "cargo.build", "cwd": path_arg(&dir)})).await;
    let id = structured["runId"].as_str().unwrap_or_else(|| panic!("no runId: {structured:#}")).to_string();
    assert!(answer.starts_with("FAIL exit 101 · run "), "{answer}");
    assert_eq!(answer.lines().next().and_then(|l| l.rsplit_once(" run ")).map(|(_, id)| id), Some(id.as_str()));
    assert_eq!((structured["status"].as_str(), structured["exitCode"].as_i64()), (Some("failed"), Some(101)));

    // The hint names the `log` call that shows the first error: the same line in the text and
    // in structuredContent.hint.
    let hint_line = answer.lines().find(|l| l.starts_with("log startLine ")).unwrap_or_else(|| {
        panic!("no hint line in:\n{answer}");
    });
    assert_eq!(structured["hint"], hint_line, "{structured:#}");
    let hint = hint_call(hint_line, &id);
    assert_eq!((hint["action"].as_str(), hint["runId"].as_str()), (Some("log"), Some(id.as_str())), "{hint}");

    let first = structured["diagnostics"]
        .as_array()
        .and_then(|d| d.iter().find(|d| d["severity"] == "error"))
        .cloned()
        .unwrap_or_else(|| panic!("no error diagnostic: {structured:#}"));
    let (page, _) = session.ok(hint.clone()).await;
    let start = hint["startLine"].as_u64().expect("startLine");
    let count = hint["lineCount"].as_u64().expect("lineCount");
    let lines: Vec<&str> = page.lines().collect();
    assert!(lines[0].starts_with(&format!("lines {start}-{} of ", start + count - 1)), "{page}");
    // The message adds rustc's primary label to the headline the log shows.
    let headline = first["message"].as_str().unwrap().split(" (").next().unwrap();
    assert_eq!(lines[1], format!("{start}|error[{}]: {headline}", first["code"].as_str().unwrap()));
    let location = format!(" --> {}:{}:{}", first["file"].as_str().unwrap(), first["line"], first["column"]);
    assert_eq!(lines.iter().filter(|l| l.ends_with(&location)).count(), 1, "no `{location}` in:\n{page}");
    session.close().await;
}

#[tokio::test]
async fn each_detail_level_says_more() {
    let sb = sandbox();
    let dir = sb.cargo_fixture("broken");
    let session = connect(&sb, &[]).await;
    let exec = |detail: &str| json!({"action": "exec", "tool": "cargo.build", "cwd": path_arg(&dir), "detail": detail});

    let (summary, summary_json) = session.ok(exec("summary")).await;
    let (standard, standard_json) = session.ok(exec("standard")).await;
    let (full, full_json) = session
        .ok(json!({
            "action": "exec", "tool": "cargo.build", "cwd": path_arg(&dir), "detail": "full", "maxLines": 5
        }))
        .await;
    // Standard lists every diagnostic, so its header does not count them again.
    assert!(standard.starts_with("FAIL exit 101 · run "), "{standard}");
    for (text, structured) in [(&summary, &summary_json), (&standard, &standard_json), (&full, &full_json)] {
        if !std::ptr::eq(text, &standard) {
            assert!(text.starts_with("FAIL exit 101 · 2 errors, 1 warning · run "), "{text}");
        }
        assert_eq!((structured["errors"].as_u64(), structured["warnings"].as_u64()), (Some(2), Some(1)));
    }

    // summary: counts only, at most half of standard.
    assert!(!summary.contains("mismatched types"), "{summary}");
    assert!(
        summary.len() * 2 <= standard.len(),
        "summary ({}) vs standard ({}):\n{summary}",
        summary.len(),
        standard.len()
    );

    // standard: every error in one line, the warning, a hint; no notes.
    for line in [
        "src/lib.rs:5:22 E0308 mismatched types (expected `usize`, found `u32`)",
        "src/lib.rs:10:5 E0308 mismatched types (expected `String`, found `&str`)",
    ] {
        assert_eq!(standard.lines().filter(|l| *l == line).count(), 1, "`{line}` once in:\n{standard}");
    }
    assert!(standard.lines().any(|l| l == "src/lib.rs:1:5 unused_imports unused import: `std::collections::HashMap`"));
    assert!(!standard.lines().any(|l| l.starts_with("  ")), "no notes in standard:\n{standard}");

    // full: notes and log ranges, then the last maxLines lines of output.
    assert!(
        full.lines()
            .any(|l| l.starts_with("src/lib.rs:5:22 E0308 mismatched types (expected `usize`, found `u32`) [log ")),
        "{full}"
    );
    assert!(full.lines().any(|l| l == "  expected `usize`, found `u32`"), "{full}");
    let tail_json: Vec<&str> =
        full_json["tail"].as_array().into_iter().flatten().filter_map(|l| l["text"].as_str()).collect();
    assert_eq!(tail_json.len(), 5, "the tail is maxLines long: {full_json:#}");
    let (_, tail) = full.split_once("\nlast 5 of ").unwrap_or_else(|| panic!("no tail header in:\n{full}"));
    let tail: Vec<&str> = tail.lines().skip(1).take(5).collect();
    assert_eq!(tail, tail_json, "the text shows the tail structuredContent holds:\n{full}");
    assert!(tail.iter().any(|l| l.starts_with("error: could not compile `broken`")), "{full}");
    session.close().await;
}

#[tokio::test]
async fn eight_concurrent_execs_are_all_stored_and_retrievable() {
    const JOBS: usize = 8;
    let sb = sandbox();
    // Beyond the default of 4 runs at once, so that all eight run side by side.
    sb.user_config("concurrent_runs = 8\n");
    std::fs::create_dir(sb.work().join("jobs")).expect("create jobs dir");
    let session = connect(&sb, &[]).await;

    // Each job waits (boundedly) until every job has started, so the count it prints shows
    // whether the server really ran them side by side.
    let mut set = tokio::task::JoinSet::new();
    for i in 0..JOBS {
        let script = format!(
            "touch ready.{i}; n=0; while [ $(ls ready.* | wc -l) -lt {JOBS} ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n+1)); done; \
             echo \"error: job {i} saw $(ls ready.* | wc -l) of {JOBS}\"; exit 1"
        );
        let peer = session.peer().clone();
        set.spawn(async move {
            let args = json!({"action": "exec", "tool": "panicky.sh", "cwd": "jobs", "args": [script]});
            (i, call(&peer, args).await)
        });
    }
    let mut ids = Vec::new();
    while let Some(joined) = set.join_next().await {
        let (i, result) = joined.expect("the call task ends");
        assert_ne!(result["isError"], true, "job {i}: {result:#}");
        let structured = &result["structuredContent"];
        let diagnostics = structured["diagnostics"].as_array().cloned().unwrap_or_default();
        let messages: Vec<&str> = diagnostics.iter().filter_map(|d| d["message"].as_str()).collect();
        assert_eq!(messages, [format!("job {i} saw {JOBS} of {JOBS}")], "job {i}: {result:#}");
        ids.push((i, structured["runId"].as_str().expect("runId").to_string()));
    }
    let distinct: BTreeSet<&str> = ids.iter().map(|(_, id)| id.as_str()).collect();
    assert_eq!(distinct.len(), JOBS, "run ids: {ids:?}");

    // Each one's log is its own.
    for (i, id) in &ids {
        let (page, _) = session.ok(json!({"action": "log", "runId": id})).await;
        assert_eq!(page, format!("lines 1-1 of 1\n1|error: job {i} saw {JOBS} of {JOBS}\n"), "run {id}");
    }
    let stored: BTreeSet<String> = runs(&sb).iter().filter_map(|r| r["id"].as_str().map(str::to_string)).collect();
    assert_eq!(stored, distinct.iter().map(|s| s.to_string()).collect(), "the store holds exactly these runs");
    session.close().await;
}

#[tokio::test]
async fn a_cancelled_run_leaves_no_process_and_is_kept_as_cancelled() {
    let sb = sandbox();
    let pid_file = sb.work().join("pids");
    let session = connect(&sb, &[]).await;
    // The grandchild ignores TERM (and `exec`s so its pid is the sleep's): only the group KILL
    // after the grace period ends it. Its parent waits on it, so neither ends by itself.
    let script = format!(
        "sh -c 'trap \"\" TERM; echo $$ >> {p}; exec sleep 300' & echo $$ >> {p}; echo started; wait",
        p = pid_file.display()
    );
    let handle = session.send_exec(&script).await;

    wait_for("the script and its grandchild to start", || pids(&pid_file).len() == 2).await;
    let pids = pids(&pid_file);
    assert!(pids.iter().all(|&p| alive(p)), "both run before the cancel: {pids:?}");
    handle.cancel(Some("the test cancels".to_string())).await.expect("send notifications/cancelled");

    wait_for("the child and grandchild to die", || pids.iter().all(|&p| !alive(p))).await;
    let mut id = String::new();
    wait_for("the run to be stored as cancelled", || {
        let listed = runs(&sb);
        match listed.as_slice() {
            [run] if run["status"] == "cancelled" => {
                id = run["id"].as_str().unwrap_or_default().to_string();
                true
            }
            _ => false,
        }
    })
    .await;

    // The session lives on, and the kept run is readable through it.
    let (again, structured) = session.ok(json!({"action": "log", "runId": id, "detail": "standard"})).await;
    assert!(again.starts_with("CANCELLED · run "), "{again}");
    assert_eq!(structured["status"], "cancelled", "{structured:#}");
    let (page, _) = session.ok(json!({"action": "log", "runId": id})).await;
    assert_eq!(page, "lines 1-1 of 1\n1|started\n");
    session.close().await;
}

#[tokio::test]
async fn a_run_longer_than_a_second_sends_progress() {
    let sb = sandbox();
    let session = connect(&sb, &[]).await;
    let script = "for i in 1 2 3 4 5 6 7 8 9 10; do echo \"step $i\"; sleep 0.2; done";
    let handle = session.send_exec(script).await;
    let token = handle.progress_token.clone();
    let response = handle.await_response().await.expect("the exec answers");
    let ServerResult::CallToolResult(result) = response else { panic!("not a tool result: {response:?}") };
    assert_ne!(result.is_error, Some(true), "{result:?}");

    // Notifications may be handled after the response is delivered: wait for them, boundedly.
    wait_for("a progress notification", || !session.progress_for(&token).is_empty()).await;
    let progress = session.progress_for(&token);
    let values: Vec<f64> = progress.iter().map(|p| p.progress).collect();
    assert!(values.windows(2).all(|w| w[0] < w[1]), "each notification goes further: {values:?}");
    for p in &progress {
        let message = p.message.as_deref().unwrap_or_default();
        assert!(message.contains(" lines") && message.contains("step "), "progress says what happens: {p:?}");
    }
    session.close().await;
}

/// A run silent for longer than the heartbeat is still heard from, with how long it has been
/// going: a client that resets its timeout on progress must not give up on a quiet test.
#[tokio::test]
async fn a_silent_run_is_heard_from_at_least_every_ten_seconds() {
    let sb = sandbox();
    let session = connect(&sb, &[]).await;
    let handle = session.send_exec("echo started; sleep 12; echo done").await;
    let token = handle.progress_token.clone();
    let response = handle.await_response().await.expect("the exec answers");
    let ServerResult::CallToolResult(result) = response else { panic!("not a tool result: {response:?}") };
    assert_ne!(result.is_error, Some(true), "{result:?}");

    let heartbeat = |p: &rmcp::model::ProgressNotificationParam| {
        p.message.as_deref().is_some_and(|m| m.starts_with("10 s: ") || m.starts_with("11 s: "))
    };
    wait_for("a notification during the silence", || session.progress_for(&token).iter().any(heartbeat)).await;
    let progress = session.progress_for(&token);
    let values: Vec<f64> = progress.iter().map(|p| p.progress).collect();
    assert!(values.windows(2).all(|w| w[0] < w[1]), "each notification goes further: {values:?}");
    let beat = progress.iter().find(|p| heartbeat(p)).expect("found above");
    assert!(beat.message.as_deref().unwrap().ends_with("1 line: started"), "it says what came last: {beat:?}");
    session.close().await;
}

#[tokio::test]
async fn calls_beyond_concurrent_runs_wait_their_turn_and_say_so() {
    let sb = sandbox();
    sb.user_config("concurrent_runs = 1\n");
    let session = connect(&sb, &[]).await;
    let marks = sb.work().join("marks");
    let script = |name: &str| format!("echo {name} start >> {0}; sleep 1; echo {name} end >> {0}", marks.display());
    let first = session.send_exec(&script("first")).await;
    wait_for("the first run to start", || std::fs::read_to_string(&marks).is_ok_and(|m| m.contains("first start")))
        .await;
    let second = session.send_exec(&script("second")).await;
    let token = second.progress_token.clone();
    for handle in [first, second] {
        let response = handle.await_response().await.expect("the exec answers");
        let ServerResult::CallToolResult(result) = response else { panic!("not a tool result: {response:?}") };
        assert_ne!(result.is_error, Some(true), "{result:?}");
    }
    // One at a time: the second started once the first ended.
    let marks = std::fs::read_to_string(&marks).unwrap();
    assert_eq!(marks, "first start\nfirst end\nsecond start\nsecond end\n");
    let heard = session.progress_for(&token);
    assert_eq!(
        heard.first().and_then(|p| p.message.as_deref()),
        Some("queued: 1 run going, 0 calls ahead"),
        "{heard:?}"
    );
    session.close().await;
}

#[tokio::test]
async fn a_parser_panic_does_not_end_the_session() {
    let sb = sandbox();
    let session = connect(&sb, &[]).await;
    let (answer, structured) = session
        .ok(json!({"action": "exec", "tool": "panicky.feed", "args": ["echo first; echo second; exit 3"]}))
        .await;
    assert!(answer.starts_with("FAIL exit 3 · run "), "{answer}");
    assert!(answer.contains("parser failed") && answer.contains("feed broke on line 1"), "{answer}");
    // Nothing was recognised, so the answer falls back to the output itself.
    assert!(answer.contains("\nfirst\nsecond\n"), "{answer}");
    assert_eq!(structured["exitCode"], 3, "{structured:#}");

    let (next, next_json) =
        session.ok(json!({"action": "exec", "tool": "panicky.sh", "args": ["echo 'error: real trouble'"]})).await;
    assert!(next.starts_with("ok · run "), "{next}");
    assert_eq!(next_json["diagnostics"][0]["message"], "real trouble", "{next_json:#}");
    let (list, _) = session.ok(json!({"action": "list"})).await;
    assert!(list.contains("panicky.feed"), "{list}");
    session.close().await;
}

#[tokio::test]
async fn bad_arguments_are_refused_with_what_to_send() {
    let sb = sandbox();
    let session = connect(&sb, &[]).await;
    let cases = [
        (json!({}), "missing action: send action \"exec\", \"log\" or \"list\""),
        (json!({"action": "run"}), "unknown action \"run\": send action \"exec\", \"log\" or \"list\""),
        (json!({"action": "exec"}), "exec needs tool: send a tool name from list"),
        (json!({"action": "log"}), "log needs runId: send the runId an exec answer gave"),
        (json!({"action": "exec", "tool": "panicky.sh", "maxLines": 0}), "maxLines must be between 1 and 10000, got 0"),
        (
            json!({"action": "exec", "tool": "panicky.sh", "maxLines": 20000}),
            "maxLines must be between 1 and 10000, got 20000",
        ),
        (
            json!({"action": "exec", "tool": "panicky.sh", "maxLines": "50"}),
            "maxLines must be a whole number between 1 and 10000, got \"50\"",
        ),
        (json!({"action": "log", "runId": "abcdefgh"}), "no run \"abcdefgh\" in the store"),
        (json!({"action": "log", "runId": "../x"}), "run id \"../x\" is not valid: run ids are 8 characters"),
        (
            json!({"action": "exec", "tool": "panicky.sh", "args": "--release -p a"}),
            "args must be an array of strings, e.g. [\"--release\", \"-p\", \"a\"]",
        ),
        (
            json!({"action": "exec", "tool": "panicky.sh", "verbose": true}),
            "unknown argument \"verbose\"; the arguments are action, tool,",
        ),
    ];
    for (arguments, expected) in cases {
        let message = session.refused(arguments.clone()).await;
        assert!(message.contains(expected), "build {arguments}:\n  got: {message}\n  want: …{expected}…");
    }
    // None of them ran anything.
    assert_eq!(runs(&sb), Vec::<Value>::new());
    session.close().await;
}

#[tokio::test]
async fn a_value_read_otherwise_than_sent_is_said_in_the_answer() {
    let sb = sandbox();
    sb.user_config("max_timeout_secs = 30\n");
    let session = connect(&sb, &[]).await;
    let (text, structured) = session
        .ok(json!({"action": "exec", "tool": "panicky.sh", "args": ["echo one; echo two"], "timeout": 1e20}))
        .await;
    // The timeout as JSON writes the number it was sent as.
    let note = "timeout 1e+20 s is over the most this server allows (max_timeout_secs 30); the run had 30 s at most";
    assert_eq!(text.lines().last(), Some(format!("note: {note}").as_str()), "{text}");
    assert_eq!(structured["notes"], json!([note]), "{structured:#}");

    let id = structured["runId"].as_str().expect("runId");
    let (text, structured) = session.ok(json!({"action": "log", "runId": id, "startLine": 0})).await;
    let note = "startLine 0 was read as 1: lines count from 1, and a negative startLine from the end";
    assert!(text.starts_with("lines 1-2 of 2\n1|one\n"), "{text}");
    assert_eq!(text.lines().last(), Some(format!("note: {note}").as_str()), "{text}");
    assert_eq!(structured["notes"], json!([note]), "{structured:#}");
    session.close().await;
}

#[tokio::test]
async fn unknown_tools_are_refused_with_the_closest_names() {
    let sb = sandbox();
    let session = connect(&sb, &[]).await;

    // An MCP tool other than `build` is a protocol error, as the spec has it.
    let refused = session
        .peer()
        .call_tool(
            CallToolRequestParams::new("biuld")
                .with_arguments(serde_json::Map::from_iter([("action".to_string(), json!("list"))])),
        )
        .await
        .expect_err("an unknown MCP tool is refused");
    let rmcp::ServiceError::McpError(error) = refused else { panic!("not a JSON-RPC error: {refused:?}") };
    assert_eq!(error.code, rmcp::model::ErrorCode::INVALID_PARAMS);
    assert_eq!(error.message, "unknown tool \"biuld\": this server has one tool, \"build\"; call that");

    let message = session.refused(json!({"action": "exec", "tool": "cargo.biuld"})).await;
    assert!(message.starts_with("unknown tool \"cargo.biuld\" (did you mean cargo.build"), "{message}");
    assert!(message.ends_with("send a tool name that list shows"), "{message}");
    let message = session.refused(json!({"action": "exec", "tool": "panicky.fed", "args": ["touch ran"]})).await;
    assert!(message.contains("did you mean") && message.contains("panicky.feed"), "{message}");
    assert!(!sb.work().join("ran").exists(), "the unknown tool ran something");
    assert_eq!(runs(&sb), Vec::<Value>::new());
    session.close().await;
}

#[tokio::test]
async fn a_cwd_outside_the_roots_or_in_a_system_directory_is_refused() {
    let sb = sandbox();
    let inside = sb.work().join("inside");
    let outside = sb.work().join("outside");
    for dir in [&inside, &outside] {
        std::fs::create_dir(dir).expect("create dir");
    }
    let session = connect(&sb, &["--root", &path_arg(&inside)]).await;
    let touch =
        |cwd: &Path| json!({"action": "exec", "tool": "panicky.sh", "cwd": path_arg(cwd), "args": ["touch ran"]});

    let message = session.refused(touch(&outside)).await;
    assert_eq!(
        message,
        format!(
            "cwd {} is outside the allowed roots ({}); send a directory inside one",
            outside.display(),
            inside.display()
        )
    );
    assert!(!outside.join("ran").exists(), "ran outside the root");
    let message = session.refused(touch(Path::new("/etc"))).await;
    assert_eq!(message, "cwd /etc is a system directory; send a project directory");
    assert_eq!(runs(&sb), Vec::<Value>::new());

    // The root itself is allowed, and is where a call without cwd runs.
    session.ok(touch(&inside)).await;
    assert!(inside.join("ran").is_file());
    session.ok(json!({"action": "exec", "tool": "panicky.sh", "args": ["touch default"]})).await;
    assert!(inside.join("default").is_file(), "a call without cwd runs in the first root");
    session.close().await;

    // Without --root, system directories are still refused.
    let session = connect(&sb, &[]).await;
    let message = session.refused(touch(Path::new("/usr"))).await;
    assert_eq!(message, "cwd /usr is a system directory; send a project directory");
    session.close().await;
}

/// A directory with a package.json, as `npm install` expects.
fn npm_project(sb: &Sandbox) -> PathBuf {
    let dir = sb.work().join("web");
    std::fs::create_dir(&dir).expect("create dir");
    std::fs::write(dir.join("package.json"), "{\"name\": \"web\", \"version\": \"1.0.0\", \"private\": true}\n")
        .expect("write package.json");
    dir
}

#[tokio::test]
async fn a_mutating_tool_without_confirm_says_what_would_run_and_runs_nothing() {
    let sb = sandbox();
    let dir = npm_project(&sb);
    let session = connect(&sb, &[]).await;
    let message = session
        .refused(json!({"action": "exec", "tool": "npm.install", "cwd": path_arg(&dir), "args": ["left-pad"]}))
        .await;
    assert_eq!(
        message,
        "npm.install changes the workspace, so nothing ran; to run `npm install left-pad`, call again with confirm: true (CLI: --confirm)"
    );
    let left: Vec<_> = std::fs::read_dir(&dir).expect("read dir").map(|e| e.expect("entry").file_name()).collect();
    assert_eq!(left, ["package.json"], "npm.install touched the project");
    assert_eq!(runs(&sb), Vec::<Value>::new());
    // `confirm: false` is no consent either.
    let again = session
        .refused(json!({"action": "exec", "tool": "npm.install", "cwd": path_arg(&dir), "confirm": false}))
        .await;
    assert!(again.contains("to run `npm install`, call again with confirm: true"), "{again}");
    session.close().await;
}

#[tokio::test]
async fn read_only_and_disable_hide_and_refuse_tools() {
    let sb = sandbox();
    let dir = npm_project(&sb);
    let session = connect(&sb, &["--read-only", "--disable", "cargo.clippy,panicky.*"]).await;
    let (list, _) = session.ok(json!({"action": "list"})).await;
    let listed: BTreeSet<&str> = list.lines().filter_map(|l| l.split_whitespace().next()).collect();
    for hidden in ["npm.install", "cargo.clippy", "panicky.sh", "panicky.feed"] {
        assert!(!listed.contains(hidden), "{hidden} is listed:\n{list}");
    }
    for shown in ["cargo.build", "cargo.check", "npm.test"] {
        assert!(listed.contains(shown), "{shown} is not listed:\n{list}");
    }
    // Nothing this server runs rewrites the workspace, and the tool says so to the client.
    let tools = session.client.list_all_tools().await.expect("tools/list");
    let annotations = tools[0].annotations.as_ref().expect("annotations");
    assert_eq!(annotations.destructive_hint, Some(false), "{annotations:?}");

    let refused = [
        json!({"action": "exec", "tool": "npm.install", "cwd": path_arg(&dir), "confirm": true}),
        json!({"action": "exec", "tool": "cargo.clippy", "cwd": path_arg(&dir)}),
        json!({"action": "exec", "tool": "panicky.sh", "args": ["touch ran"]}),
    ];
    for arguments in refused {
        let tool = arguments["tool"].as_str().unwrap().to_string();
        let message = session.refused(arguments).await;
        assert!(message.starts_with(&format!("unknown tool \"{tool}\"")), "{message}");
        assert!(message.ends_with("send a tool name that list shows"), "{message}");
        // A suggestion never names a hidden tool.
        let suggested = message.split_once("did you mean").map(|(_, s)| s).unwrap_or_default();
        assert!(!["npm.install", "cargo.clippy", "panicky."].iter().any(|h| suggested.contains(h)), "{message}");
    }
    assert!(!dir.join("node_modules").exists() && !sb.work().join("ran").exists());
    assert_eq!(runs(&sb), Vec::<Value>::new());
    session.close().await;
}

#[tokio::test]
async fn the_build_tool_fits_its_token_budget() {
    let sb = Sandbox::new(&[toolchains()]);
    let session = connect(&sb, &[]).await;
    let tools = session.client.list_all_tools().await.expect("tools/list");
    assert_eq!(tools.iter().map(|t| t.name.as_ref()).collect::<Vec<_>>(), ["build"]);
    let instructions = session.client.peer_info().and_then(|info| info.instructions.clone()).unwrap_or_default();
    let bpe = tiktoken_rs::o200k_base().expect("the o200k vocabulary loads");
    let count = |text: &str| bpe.encode_with_special_tokens(text).len();
    let whole = serde_json::to_value(&tools).expect("tools serialize");
    let read: Vec<Value> = whole
        .as_array()
        .expect("a list")
        .iter()
        .map(|t| json!({"name": t["name"], "description": t["description"], "inputSchema": t["inputSchema"]}))
        .collect();
    let listed = serde_json::to_string(&read).expect("serialize");
    let tokens = count(&listed) + count(&instructions);
    let all = count(&whole.to_string()) + count(&instructions);
    eprintln!("tools/list as the model reads it: {tokens} o200k tokens (budget {TOOL_TOKEN_BUDGET}); whole: {all}");
    assert!(tokens > 0, "{listed}");
    assert!(tokens <= TOOL_TOKEN_BUDGET, "{tokens} o200k tokens > {TOOL_TOKEN_BUDGET}:\n{listed}\n{instructions}");
    assert!(
        all - tokens <= TOOL_EXTRAS_BUDGET,
        "title, annotations, output schema: {} > {TOOL_EXTRAS_BUDGET}:\n{whole}",
        all - tokens
    );
    session.close().await;
}

#[tokio::test]
async fn a_damaged_store_file_is_an_error_naming_the_run_not_a_crash() {
    let sb = sandbox();
    let session = connect(&sb, &[]).await;
    let (_, exec) = session.ok(json!({"action": "exec", "tool": "panicky.sh", "args": ["seq 1 10000"]})).await;
    let id = exec["runId"].as_str().expect("run id").to_string();
    // Every mark of the index moved into the middle of its line: none may be used.
    let index = sb.state().join("runs").join(&id).join("marks.idx");
    let mut marks = std::fs::read(&index).expect("marks.idx");
    assert!(!marks.is_empty(), "no marks in a 48 KB log");
    for mark in marks.chunks_exact_mut(16) {
        let start = u64::from_le_bytes(mark[8..].try_into().expect("8 bytes"));
        mark[8..].copy_from_slice(&(start + 1).to_le_bytes());
    }
    std::fs::write(&index, marks).expect("damage marks.idx");

    let result = call(session.peer(), json!({"action": "log", "runId": id})).await;
    assert_eq!(result["isError"], true, "{result:#}");
    let message = text(&result);
    assert!(message.contains(&format!("runs/{id}/marks.idx is damaged")), "{message}");
    // The server is still there, and so is the rest of the run.
    let (answer, _) = session.ok(json!({"action": "log", "runId": id, "detail": "standard"})).await;
    assert!(answer.starts_with("ok · run "), "{answer}");
    session.close().await;
}

/// A client that declared the MCP tasks extension: `exec` answers with a task it polls.
async fn connect_with_tasks(sb: &Sandbox) -> RunningService<RoleClient, ClientConfig> {
    let command = tokio::process::Command::from(sb.command(["serve"]));
    let transport = TokioChildProcess::new(command).expect("spawn buildvise serve");
    let config =
        ClientConfig::new(ClientCapabilities::builder().enable_tasks().build(), Implementation::new("tasks", "0"));
    config.serve(transport).await.expect("MCP initialize with buildvise serve")
}

/// Sends `exec panicky.sh SCRIPT`; the id of the task it was answered with.
async fn exec_task(client: &RunningService<RoleClient, ClientConfig>, script: &str) -> String {
    let arguments = json!({"action": "exec", "tool": "panicky.sh", "args": [script]});
    let Value::Object(arguments) = arguments else { unreachable!("an object literal") };
    let request =
        ClientRequest::CallToolRequest(Request::new(CallToolRequestParams::new("build").with_arguments(arguments)));
    let response = client.send_request(request).await.expect("tools/call");
    let ServerResult::CreateTaskResult(created) = response else { panic!("not a task: {response:?}") };
    assert_eq!(created.task.status, TaskStatus::Working, "{created:?}");
    created.task.task_id
}

/// `tasks/get` until `done` holds of the task (as JSON), boundedly; the task then.
async fn poll_task(
    client: &RunningService<RoleClient, ClientConfig>,
    id: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let got = client.get_task(GetTaskParams::new(id)).await.expect("tasks/get");
        let got = serde_json::to_value(got).expect("serialize");
        if done(&got) {
            return got;
        }
        assert!(std::time::Instant::now() < until, "gave up polling task {id}: {got:#}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_client_that_declares_tasks_gets_exec_as_a_task_it_can_poll_and_cancel() {
    let sb = sandbox();
    let client = connect_with_tasks(&sb).await;
    let info = client.peer_info().expect("the server introduced itself");
    assert!(info.capabilities.supports_tasks(), "{info:?}");

    let id = exec_task(&client, "echo started; sleep 1; echo 'error: broke'; exit 1").await;
    let task = poll_task(&client, &id, |t| t["status"] != "working").await;
    assert_eq!(task["status"], "completed", "{task:#}");
    let result = &task["result"];
    assert!(result["content"][0]["text"].as_str().is_some_and(|t| t.starts_with("FAIL exit 1 · ")), "{task:#}");
    assert_eq!(result["structuredContent"]["exitCode"], 1, "{task:#}");

    // A long run: its progress is the task's status message, and tasks/cancel ends it.
    let id = exec_task(&client, "echo started; sleep 60").await;
    let task = poll_task(&client, &id, |t| t["statusMessage"].as_str().is_some_and(|m| m.contains("started"))).await;
    assert_eq!(task["status"], "working", "{task:#}");
    client.cancel_task(CancelTaskParams::new(&id)).await.expect("tasks/cancel");
    let task = poll_task(&client, &id, |t| t["status"] != "working").await;
    assert_eq!(task["status"], "cancelled", "{task:#}");
    let runs = runs(&sb);
    assert!(runs.iter().any(|r| r["status"] == "cancelled"), "{runs:#?}");
    client.cancel().await.expect("the session closes");
}
