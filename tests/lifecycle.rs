//! How runs end, whatever else happens: a parser that never returns, a CLI or server told to stop
//! (SIGTERM, SIGHUP) or killed outright (SIGKILL), processes that escape the command's group, and
//! a grep over millions of lines. The real binary, over the CLI and over MCP (rmcp's client), with
//! the test-only `panicky` plugin, whose tools run the shell script the test sends.

// Signals, process groups and /proc: Unix only (engine/tests/process_and_store.rs holds on
// Windows).
#![cfg(unix)]

mod common;

use common::mcp::{Session, connect};
use common::{Sandbox, alive, header_id, pids, runs, test_plugins, wait_for, wait_gone};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use rmcp::model::{CallToolRequestParams, ClientRequest, Request};
use rmcp::service::PeerRequestOptions;
use serde_json::{Value, json};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

fn sandbox() -> Sandbox {
    Sandbox::new(&[test_plugins()])
}

fn signal(pid: u32, signal: Signal) {
    kill(Pid::from_raw(pid as i32), signal).expect("signal the process");
}

/// A script that starts a grandchild, records both pids in `file`, prints `say`, and waits.
fn tree_script(file: &Path, say: &str) -> String {
    format!("sh -c 'echo $$ >> {p}; exec sleep 300' & echo $$ >> {p}; {say}; wait", p = file.display())
}

/// A script that leaves three sleepers, each further out of reach than the last: a background
/// child in the command's group, one that left the group with `setsid` and holds its stdout, and
/// a double-forked daemon in a session of its own with its output closed, whose parent is gone.
/// Once all three have written their pids to `file`, it prints `started` and does `then`.
fn leaky_script(file: &Path, then: &str) -> String {
    format!(
        "sh -c 'echo $$ >> {p}; exec sleep 300' & \
         setsid sh -c 'echo $$ >> {p}; exec sleep 300' & \
         sh -c 'setsid sh -c \"echo \\$\\$ >> {p}; exec sleep 300\" </dev/null >/dev/null 2>&1 &'; \
         until [ \"$(wc -l < {p})\" -ge 3 ]; do :; done; echo started; {then}",
        p = file.display()
    )
}

const LEFT_THREE: &str = "note: 3 processes the command left running were ended: sleep ×3\n";

#[test]
fn what_a_command_left_running_is_ended_when_exec_returns_and_the_answer_says_so() {
    let sb = sandbox();
    let pid_file = sb.work().join("pids");
    let exec = sb.run(["exec", "panicky.sh", "--json", "--", &leaky_script(&pid_file, "exit 0")]);
    let left = wait_gone(&pids(&pid_file));
    exec.expect_code(0);
    assert_eq!(pids(&pid_file).len(), 3, "{exec}");
    assert!(left.is_empty(), "processes outlived the run: {left:?}");
    let answer = exec.json();
    assert_eq!(answer["leftRunning"], json!(["sleep", "sleep", "sleep"]), "{answer:#}");
    let text = sb.run(["log", &common::run_id(&answer), "--detail", "standard"]).text();
    assert!(text.starts_with("ok · run ") && text.contains(LEFT_THREE), "{text}");
    // One short line, whatever the command left: the names are capped at three.
    let longest = "note: 12 processes the command left running were ended: python3 ×4, node ×4, sleep ×3, …\n";
    let tokens = (buildvise_app::tokens::count(LEFT_THREE), buildvise_app::tokens::count(longest));
    assert!(tokens.0 <= 18 && tokens.1 <= 32, "{tokens:?} tokens");
}

#[test]
fn a_child_that_ends_within_the_grace_period_is_neither_ended_nor_counted() {
    let sb = sandbox();
    let done = sb.work().join("done");
    let script = format!("(sleep 0.2; echo finished > {d}) >/dev/null & echo started", d = done.display());
    let exec = sb.run(["exec", "panicky.sh", "--json", "--", &script]);
    exec.expect_code(0);
    let answer = exec.json();
    assert!(answer.get("leftRunning").is_none() && answer.get("notes").is_none(), "{answer:#}");
    assert_eq!(std::fs::read_to_string(&done).unwrap_or_default(), "finished\n", "the child ran to its end");
}

/// Two runs at once in one server: the end of the one that leaks ends its processes, and none of
/// the other's, though both are the server's descendants.
#[tokio::test]
async fn under_serve_a_runs_end_ends_its_own_leftovers_and_not_another_runs_processes() {
    let sb = sandbox();
    let (busy, leaky) = (sb.work().join("busy"), sb.work().join("leaky"));
    let session = connect(&sb, &[]).await;
    let handle = session.send_exec(&tree_script(&busy, "echo busy")).await;
    common::mcp::wait_for("the other run's script and its grandchild", || pids(&busy).len() == 2).await;
    let (answer, structured) =
        session.ok(json!({"action": "exec", "tool": "panicky.sh", "args": [leaky_script(&leaky, "exit 0")]})).await;
    let left = wait_gone(&pids(&leaky));
    assert!(left.is_empty(), "processes outlived the leaky run: {left:?}");
    assert!(answer.contains(LEFT_THREE), "{answer}");
    assert_eq!(structured["leftRunning"].as_array().map(Vec::len), Some(3), "{structured:#}");
    let other = pids(&busy);
    assert!(other.iter().all(|&pid| alive(pid)), "the other run's processes were ended: {other:?}");

    handle.cancel(Some("the test cancels".into())).await.expect("send notifications/cancelled");
    let left = wait_gone(&other);
    assert!(left.is_empty(), "processes outlived the cancel: {left:?}");
    session.close().await;
}

/// The guard ends what left the command's group too when buildvise cannot: killed outright, it
/// ends nothing itself.
#[tokio::test]
async fn a_killed_server_still_ends_what_left_the_commands_group() {
    let sb = sandbox();
    let pid_file = sb.work().join("pids");
    let session = connect(&sb, &[]).await;
    let _handle = session.send_exec(&leaky_script(&pid_file, "wait")).await;
    common::mcp::wait_for("the three sleepers", || pids(&pid_file).len() == 3).await;
    signal(session.pid, Signal::SIGKILL);
    let left = wait_gone(&pids(&pid_file));
    assert!(left.is_empty(), "processes outlived a killed server: {left:?}");
}

#[test]
fn a_parser_that_loops_forever_cannot_hold_a_run() {
    let sb = sandbox();
    let pid_file = sb.work().join("pids");
    let started = Instant::now();
    let exec =
        sb.run(["exec", "panicky.loop", "--timeout", "2", "--", &tree_script(&pid_file, "echo loop; echo after")]);
    let took = started.elapsed();
    exec.expect_code(124);
    // The 2 s deadline, TERM, and the parser's 8 s of CPU: about 10 s on a quiet machine, more
    // on a loaded one, where the spinning parser gets less of a core.
    assert!(took < Duration::from_secs(70), "exec took {took:?} with a parser stuck in a loop:{exec}");
    let text = exec.text();
    assert!(text.starts_with("TIMEOUT after 2s · run "), "{exec}");
    assert!(
        text.contains("parser failed: the parser spent more than 8s of CPU on log line 1 and was abandoned"),
        "{exec}"
    );
    // Nothing was parsed, so the answer is the output itself.
    assert!(text.contains("\nloop\nafter\n"), "{exec}");
    let left = wait_gone(&pids(&pid_file));
    assert!(left.is_empty(), "processes outlived the run: {left:?}");
    let id = header_id(&exec);
    assert_eq!(sb.run(["log", &id]).text(), "lines 1-2 of 2\n1|loop\n2|after\n");
}

/// A parser too slow on one batch of lines is given no more: the answer keeps what it found in
/// the lines it read, and says where it stopped. One that read everything, however slowly, says
/// nothing of it.
#[test]
fn a_parser_stopped_for_its_cpu_time_keeps_what_it_found_before() {
    let sb = sandbox();
    let script = "echo 'error: before'; echo slow; seq 100000; echo 'error: after'; exit 3";
    let exec = sb.run(["exec", "panicky.slow", "--", script]);
    exec.expect_code(3);
    let text = exec.text();
    assert!(text.starts_with("FAIL exit 3 · "), "{exec}");
    assert!(text.contains("\nbefore\n") && !text.contains("\nafter"), "{exec}");
    let said = regex::Regex::new(r"parser failed: stopped after log line (\d+), having spent more than 3s of CPU")
        .expect("a regex");
    let read_up_to: u64 = said.captures(&text).map(|c| c[1].parse().expect("a number")).expect("where it stopped");
    assert!((2..100_003).contains(&read_up_to), "{exec}");

    let whole = sb.run(["exec", "panicky.slow", "--", "echo 'error: before'; echo slow; echo 'error: after'; exit 3"]);
    whole.expect_code(3);
    assert!(!whole.text().contains("parser failed") && whole.text().contains("after"), "{whole}");
}

/// Time a parser waits without running (a loaded machine) does not count against it.
#[test]
fn a_parser_is_judged_by_its_cpu_time_not_the_clock() {
    let sb = sandbox();
    let exec = sb.run(["exec", "panicky.nap", "--", "echo 'error: before'; echo nap; echo 'error: after'; exit 3"]);
    exec.expect_code(3);
    let text = exec.text();
    assert!(!text.contains("parser failed"), "{exec}");
    assert!(text.contains("before") && text.contains("after"), "{exec}");
}

#[tokio::test]
async fn cancelling_a_run_whose_parser_loops_forever_works_over_mcp() {
    let sb = sandbox();
    let pid_file = sb.work().join("pids");
    let session = connect(&sb, &[]).await;
    let handle = session.send_tool("panicky.loop", &tree_script(&pid_file, "echo loop")).await;
    common::mcp::wait_for("the script and its grandchild", || pids(&pid_file).len() == 2).await;
    handle.cancel(Some("the test cancels".into())).await.expect("send notifications/cancelled");
    let left = wait_gone(&pids(&pid_file));
    assert!(left.is_empty(), "processes outlived the cancel: {left:?}");
    let mut id = String::new();
    common::mcp::wait_for("the run to be stored as cancelled", || match runs(&sb).as_slice() {
        [run] if run["status"] == "cancelled" => {
            id = run["id"].as_str().unwrap_or_default().to_string();
            true
        }
        _ => false,
    })
    .await;
    let (answer, _) = session.ok(json!({"action": "log", "runId": id, "detail": "standard"})).await;
    assert!(answer.starts_with("CANCELLED · run "), "{answer}");
    assert!(answer.contains("parser failed: the parser spent more than 8s of CPU"), "{answer}");
    // The server serves on, its stuck parser thread notwithstanding.
    let (list, _) = session.ok(json!({"action": "list"})).await;
    assert!(list.contains("panicky.sh"), "{list}");
    session.close().await;
}

/// Threads and open descriptors of a process.
fn footprint(pid: u32) -> (usize, usize) {
    let count = |dir: String| std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(usize::MAX);
    (count(format!("/proc/{pid}/task")), count(format!("/proc/{pid}/fd")))
}

async fn exec_ok(session: &Session, script: String) {
    let result =
        common::mcp::call(session.peer(), json!({"action": "exec", "tool": "panicky.sh", "args": [script]})).await;
    assert_ne!(result["isError"], true, "{result:#}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_holds_no_more_threads_or_fds_after_100_execs_whose_grandchildren_escaped() {
    let sb = sandbox();
    let pid_file = sb.work().join("escaped");
    // Each exec waits out the output its escaped process holds (4 s), since nothing tells that
    // process apart as the run's; a batch runs at once, which is what the test is about, rather
    // than four at a time.
    const BATCH: usize = 33;
    let session = connect(&sb, &["--concurrent-runs", &BATCH.to_string()]).await;
    // `setsid` takes the sleeper out of the command's group (no signal of ours reaches it), `env
    // -i` takes the run's mark from its environment, and it keeps the command's stdout open: the
    // runner must stop reading rather than wait, or leak.
    let script = format!("env -i setsid sh -c 'echo $$ >> {p}; exec sleep 120' & echo started", p = pid_file.display());
    exec_ok(&session, script.clone()).await;
    // Taken once the first exec has answered: threads and descriptors it started and that linger
    // only count against later ones, which the wait below lets retire.
    let after_first = footprint(session.pid);

    for _ in 0..3 {
        let mut batch = tokio::task::JoinSet::new();
        for _ in 0..BATCH {
            let (peer, script) = (session.peer().clone(), script.clone());
            batch.spawn(async move {
                let result =
                    common::mcp::call(&peer, json!({"action": "exec", "tool": "panicky.sh", "args": [script]})).await;
                assert_ne!(result["isError"], true, "{result:#}");
            });
        }
        while let Some(done) = batch.join_next().await {
            done.expect("an exec task");
        }
    }
    assert_eq!(runs(&sb).len(), 100);
    // Idle runtime threads retire on their own (tokio keeps them 10 s); leaked ones never do.
    let until = Instant::now() + Duration::from_secs(30);
    let mut now = footprint(session.pid);
    while (now.0 > after_first.0 || now.1 > after_first.1) && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(250)).await;
        now = footprint(session.pid);
    }
    let escaped = pids(&pid_file);
    for &pid in &escaped {
        let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
    }
    assert_eq!(escaped.len(), 100, "every exec left an escaped sleeper");
    assert!(
        now.0 <= after_first.0 && now.1 <= after_first.1,
        "(threads, fds) after the first exec {after_first:?}, after 100 {now:?}"
    );
    session.close().await;
}

#[test]
fn sigterm_or_sighup_to_the_cli_ends_the_tree_and_keeps_the_run() {
    for sig in [Signal::SIGTERM, Signal::SIGHUP] {
        let sb = sandbox();
        let pid_file = sb.work().join("pids");
        let child = sb
            .command(["exec", "panicky.sh", "--", &tree_script(&pid_file, "echo started")])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn exec");
        wait_for("the script and its grandchild", || pids(&pid_file).len() == 2);
        signal(child.id(), sig);
        let out = child.wait_with_output().expect("exec ends");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(130), "{sig}: {stdout}{}", String::from_utf8_lossy(&out.stderr));
        assert!(stdout.starts_with("CANCELLED · run "), "{sig}: {stdout}");
        let left = wait_gone(&pids(&pid_file));
        assert!(left.is_empty(), "{sig}: processes outlived buildvise: {left:?}");
        let listed = runs(&sb);
        assert_eq!((listed[0]["status"].as_str(), listed[0]["lines"].as_u64()), (Some("cancelled"), Some(1)), "{sig}");
    }
}

#[tokio::test]
async fn sigterm_to_the_server_cancels_and_stores_the_runs_in_flight() {
    let sb = sandbox();
    let pid_file = sb.work().join("pids");
    let session = connect(&sb, &[]).await;
    let _handle = session.send_exec(&tree_script(&pid_file, "echo started")).await;
    common::mcp::wait_for("the script and its grandchild", || pids(&pid_file).len() == 2).await;
    signal(session.pid, Signal::SIGTERM);
    let left = wait_gone(&pids(&pid_file));
    assert!(left.is_empty(), "processes outlived the server: {left:?}");
    common::mcp::wait_for("the server to exit", || !alive(session.pid)).await;
    let listed = runs(&sb);
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (listed[0]["status"].as_str(), listed[0]["lines"].as_u64()),
        (Some("cancelled"), Some(1)),
        "{listed:#?}"
    );
    let id = listed[0]["id"].as_str().expect("id");
    let answer = sb.run(["log", id, "--detail", "standard"]);
    assert!(answer.text().starts_with("CANCELLED · run "), "{answer}");
}

#[tokio::test]
async fn a_killed_server_still_ends_the_tree_and_its_run_is_settled_from_the_log() {
    let sb = sandbox();
    let pid_file = sb.work().join("pids");
    let session = connect(&sb, &[]).await;
    let _handle = session.send_exec(&tree_script(&pid_file, "echo started; echo 'error: seen before the kill'")).await;
    common::mcp::wait_for("the script and its grandchild", || pids(&pid_file).len() == 2).await;
    let id = runs(&sb)[0]["id"].as_str().expect("id").to_string();
    // The writer flushes every 200 ms: the lines must be on disk when the axe falls.
    common::mcp::wait_for("the line on disk", || sb.run(["log", &id, "--raw"]).text().contains("seen before the kill"))
        .await;
    signal(session.pid, Signal::SIGKILL);
    let left = wait_gone(&pids(&pid_file));
    assert!(left.is_empty(), "processes outlived a killed server: {left:?}");

    let listed = runs(&sb);
    assert_eq!((listed[0]["status"].as_str(), listed[0]["lines"].as_u64()), (Some("failed"), Some(2)), "{listed:#?}");
    let answer = sb.run(["log", &id, "--detail", "standard", "--json"]);
    answer.expect_code(0);
    let answer: Value = answer.json();
    assert_eq!(answer["status"], "error", "{answer:#}");
    assert!(answer["note"].as_str().is_some_and(|n| n.contains("stopped before the run ended")), "{answer:#}");
    assert_eq!(answer["diagnostics"][0]["message"], "seen before the kill", "parsed from the log: {answer:#}");
}

#[tokio::test]
async fn a_long_grep_reports_progress_and_can_be_cancelled() {
    let sb = sandbox();
    let exec = sb.run(["exec", "panicky.sh", "--json", "--", "seq 1 2000000"]);
    exec.expect_code(0);
    let id = common::run_id(&exec.json());
    let session = connect(&sb, &[]).await;
    let Value::Object(arguments) = json!({"action": "log", "runId": id, "grep": "^never$"}) else { unreachable!() };
    let request =
        ClientRequest::CallToolRequest(Request::new(CallToolRequestParams::new("build").with_arguments(arguments)));
    let handle =
        session.peer().send_cancellable_request(request, PeerRequestOptions::no_options()).await.expect("send grep");
    let token = handle.progress_token.clone();
    common::mcp::wait_for("grep progress", || !session.progress_for(&token).is_empty()).await;
    let said = session.progress_for(&token)[0].message.clone().unwrap_or_default();
    assert!(said.starts_with("grep: ") && said.contains("of 2000000 lines scanned"), "{said}");
    handle.cancel(Some("the test cancels".into())).await.expect("send notifications/cancelled");

    // The server is free again at once: a page of the same log answers.
    let (page, _) = session.ok(json!({"action": "log", "runId": id, "startLine": -1})).await;
    assert!(page.ends_with("2000000|2000000\n"), "{page}");
    session.close().await;
}
