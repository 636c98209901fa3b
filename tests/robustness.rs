//! The host against hostile plugins, processes and input: the real `buildvise` binary with the
//! test-only plugins of `tests/plugins/` (`panicky`, whose tools run a shell script the test
//! sends and whose parsers may panic, and three libraries that are not valid plugins).

mod common;

use common::{Run, Sandbox, alive, header_id, runs, test_plugins, wait_for};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{Duration, Instant};

fn sandbox() -> Sandbox {
    Sandbox::new(&[test_plugins()])
}

/// `exec panicky.sh -- SCRIPT` with extra exec options before the `--`.
fn sh(sb: &Sandbox, options: &[&str], script: &str) -> Run {
    let mut args = vec!["exec", "panicky.sh"];
    args.extend_from_slice(options);
    args.extend(["--", script]);
    sb.run(args)
}

fn ids(runs: &[Value]) -> Vec<String> {
    runs.iter().map(|r| r["id"].as_str().expect("id").to_string()).collect()
}

/// A parser that panics turns into a "parser failed" answer; the run itself is unharmed: the
/// tool's exit code, the stored log, and the next command all work.
fn parser_panic(tool: &str, said: &str) {
    let sb = sandbox();
    let exec = sb.run(["exec", tool, "--", "echo first; echo second; exit 3"]);
    exec.expect_code(3);
    let text = exec.text();
    assert!(text.starts_with("FAIL exit 3 · run "), "{exec}");
    assert!(text.contains("parser failed"), "{exec}");
    assert!(text.contains(said), "the panic's message is not in the answer:{exec}");
    // Nothing was recognised, so the answer falls back to the output itself.
    assert!(text.contains("\nfirst\nsecond\n"), "{exec}");

    let id = header_id(&exec);
    let stored = sb.run(["log", &id, "--detail", "standard", "--json"]);
    stored.expect_code(0);
    let answer = stored.json();
    assert_eq!(answer["exitCode"], 3, "{stored}");
    assert!(answer["parserError"].as_str().is_some_and(|e| e.contains(said)), "{stored}");

    let page = sb.run(["log", &id, "--start", "2", "--count", "1"]);
    page.expect_code(0);
    assert_eq!(page.text(), "lines 2-2 of 2\n2|second\n", "{page}");

    // The host lives on: the next command is served normally.
    let next = sh(&sb, &[], "echo 'error: real trouble'");
    next.expect_code(0);
    assert!(next.text().starts_with("ok · run "), "{next}");
    assert!(next.text().lines().any(|l| l == "real trouble"), "{next}");
}

#[test]
fn parser_panic_in_feed_is_an_error_answer_not_a_crash() {
    parser_panic("panicky.feed", "feed broke on line 1");
}

#[test]
fn parser_panic_in_finish_is_an_error_answer_not_a_crash() {
    parser_panic("panicky.finish", "finish broke after 2 lines");
}

#[test]
fn broken_libraries_are_skipped_and_listed_with_the_reason() {
    let sb = sandbox();
    let list = sb.run(["list"]);
    list.expect_code(0);
    let text = list.text();
    let reason = |lib: &str| {
        let prefix = format!("not loaded: libbuildvise_plugin_{lib}.so: ");
        text.lines()
            .find_map(|l| l.strip_prefix(prefix.as_str()))
            .unwrap_or_else(|| panic!("{lib} is not reported:{list}"))
            .to_string()
    };
    assert!(reason("badabi").starts_with("built for plugin ABI 2.1, this buildvise speaks ABI 1.1"), "{list}");
    assert!(reason("noentry").contains("no `buildvise_plugin_abi` or `buildvise_plugin_entry` symbol"), "{list}");
    assert!(reason("shorttable").starts_with("function table of 8 bytes"), "{list}");
    for tool in ["panicky.sh", "panicky.feed", "panicky.finish", "panicky.missing"] {
        assert!(text.lines().any(|l| l.starts_with(&format!("{tool} "))), "{tool} not listed:{list}");
    }

    // The JSON form names the same libraries with the same reasons.
    let json = sb.run(["list", "--json"]);
    json.expect_code(0);
    let view = json.json();
    let failed: BTreeMap<String, String> = view["failedPlugins"]
        .as_array()
        .unwrap_or_else(|| panic!("no failedPlugins:{json}"))
        .iter()
        .map(|f| {
            let path = Path::new(f["path"].as_str().expect("path"));
            let name = path.file_name().expect("file name").to_string_lossy().into_owned();
            (name, f["reason"].as_str().expect("reason").to_string())
        })
        .collect();
    let expected: BTreeMap<String, String> = ["badabi", "noentry", "shorttable"]
        .into_iter()
        .map(|lib| (format!("libbuildvise_plugin_{lib}.so"), reason(lib)))
        .collect();
    assert_eq!(failed, expected, "{json}");
    let tools: BTreeSet<&str> =
        view["tools"].as_array().expect("tools").iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(tools.is_superset(&BTreeSet::from(["panicky.sh", "panicky.feed", "panicky.finish", "panicky.missing"])));
}

#[test]
fn timeout_kills_the_child_and_its_grandchild() {
    let sb = sandbox();
    let pids = sb.work().join("pids");
    // The grandchild ignores TERM (and `exec`s so its pid is the sleep's): only the group KILL
    // after the grace period ends it. Its parent waits on it, so neither ends by itself.
    let script = format!(
        "sh -c 'trap \"\" TERM; echo $$ >> {p}; exec sleep 300' & echo $$ >> {p}; echo started; wait",
        p = pids.display()
    );
    let exec = sh(&sb, &["--timeout", "1"], &script);
    exec.expect_code(124);
    assert!(exec.text().starts_with("TIMEOUT after 1s · run "), "{exec}");
    let id = header_id(&exec);
    let stored = sb.run(["log", &id, "--detail", "standard", "--json"]).json();
    assert_eq!(stored["status"], "timedOut", "{stored:#}");
    assert_eq!(stored["success"], false, "{stored:#}");
    assert_eq!(sb.run(["log", &id]).text(), "lines 1-1 of 1\n1|started\n");

    let pids: Vec<u32> = std::fs::read_to_string(&pids)
        .expect("the script wrote its pids")
        .lines()
        .map(|l| l.trim().parse().expect("a pid"))
        .collect();
    assert_eq!(pids.len(), 2, "child and grandchild: {pids:?}");
    // A KILL is delivered asynchronously; give it a moment before calling a survivor a survivor.
    let until = Instant::now() + Duration::from_secs(5);
    while pids.iter().any(|&p| alive(p)) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    for pid in pids {
        assert!(!alive(pid), "process {pid} survived the timeout");
    }
}

const TEN_MB: usize = 10 * 1024 * 1024;

/// A 10 MB line and a line of invalid UTF-8 (with a NUL) between two ordinary ones.
fn huge_script(exit: u8) -> String {
    format!(
        "echo before; head -c {TEN_MB} /dev/zero | tr '\\0' a; printf '\\n\\377\\376\\000x\\n'; echo after; exit {exit}"
    )
}

/// A command a signal ends exits as a shell says so, 128 + N, and the answer names the signal.
#[test]
fn a_command_killed_by_a_signal_exits_128_plus_its_number() {
    let sb = sandbox();
    let exec = sh(&sb, &[], "echo before; kill -SEGV $$");
    exec.expect_code(128 + 11);
    assert!(exec.text().starts_with("KILLED by SIGSEGV · run "), "{exec}");
    let json = sh(&sb, &["--json"], "kill -TERM $$");
    json.expect_code(128 + 15);
    let answer: serde_json::Value = serde_json::from_str(&json.text()).expect("a JSON answer");
    assert_eq!((answer["status"].as_str(), answer["signal"].as_str()), (Some("killed"), Some("SIGTERM")), "{json}");
}

/// Output that does not end with `\n`, on either stream, comes back from `log --raw` as printed.
#[test]
fn a_last_line_without_a_newline_is_given_back_without_one() {
    let sb = sandbox();
    let exec = sh(&sb, &[], "printf 'out\\nlast out'; printf 'err\\nlast err' >&2");
    exec.expect_code(0);
    let id = header_id(&exec);
    let raw = |stream: &str| {
        let run = sb.run(["log", &id, "--raw", "--stream", stream]);
        run.expect_code(0);
        run.stdout
    };
    assert_eq!(raw("stdout"), b"out\nlast out");
    assert_eq!(raw("stderr"), b"err\nlast err");
    let both = raw("both");
    assert_eq!(both.len(), "out\nlast outerr\nlast err".len(), "{:?}", String::from_utf8_lossy(&both));
    // Paging through one line at a time gives the same bytes.
    let last = sb.run(["log", &id, "--raw", "--stream", "stdout", "--start", "-1", "--count", "1"]);
    assert_eq!(last.stdout, b"last out");
}

#[test]
fn huge_line_and_invalid_utf8_are_stored_byte_for_byte_and_paged() {
    let sb = sandbox();
    let exec = sh(&sb, &[], &huge_script(0));
    exec.expect_code(0);
    let id = header_id(&exec);

    let raw = |start: &str, count: &str| {
        let run = sb.run(["log", &id, "--raw", "--start", start, "--count", count]);
        run.expect_code(0);
        run.stdout
    };
    let mut long = vec![b'a'; TEN_MB];
    long.push(b'\n');
    assert!(raw("2", "1") == long, "line 2 is not 10 MB of `a`");
    assert_eq!(raw("3", "1"), b"\xff\xfe\x00x\n");
    assert_eq!(raw("-1", "1"), b"after\n");
    let mut all = b"before\n".to_vec();
    all.extend_from_slice(&long);
    all.extend_from_slice(b"\xff\xfe\x00x\nafter\n");
    assert!(raw("1", "10") == all, "the whole log differs from what was printed");

    let page = sb.run(["log", &id]);
    page.expect_code(0);
    let text = page.text();
    assert!(text.starts_with("lines 1-4 of 4\n1|before\n2|aaaa"), "{page}");
    assert!(text.contains(&format!("(+{} more bytes)", TEN_MB - 2000)), "no word that line 2 goes on:{page}");
    assert!(text.ends_with("\n4|after\n"), "{page}");
    assert!(text.len() < 16 * 1024, "a page of text carried {} bytes", text.len());
}

/// What `--json` answers carry is bounded like their text: a 10 MB line must not ride along in
/// full (an MCP client gets this JSON as `structuredContent`).
#[test]
fn json_answers_stay_bounded_with_a_huge_line() {
    let sb = sandbox();
    // A failure with nothing recognised: the standard answer carries the output's tail.
    let exec = sb.run(["exec", "panicky.sh", "--json", "--", &huge_script(1)]);
    exec.expect_code(1);
    let answer = exec.json();
    assert_eq!(answer["tail"].as_array().map(Vec::len), Some(4), "{exec}");
    let id = common::run_id(&answer);
    let page = sb.run(["log", &id, "--json"]);
    page.expect_code(0);
    assert_eq!(page.json()["totalLines"], 4);
    assert!(exec.stdout.len() < 256 * 1024, "exec --json carried {} bytes", exec.stdout.len());
    assert!(page.stdout.len() < 256 * 1024, "log --json carried {} bytes", page.stdout.len());
}

#[test]
fn a_run_is_readable_from_another_process_after_the_first_exits() {
    let sb = sandbox();
    let exec = sh(&sb, &["--json"], "echo alpha; echo beta >&2; echo gamma");
    exec.expect_code(0);
    let id = common::run_id(&exec.json());

    // `exec` has exited; everything below is read by new processes.
    let listed = runs(&sb);
    assert_eq!(ids(&listed), vec![id.clone()]);
    assert_eq!(listed[0]["status"], "exited", "{listed:?}");
    assert_eq!(listed[0]["exitCode"], 0);
    assert_eq!(listed[0]["lines"], 3);

    let page = sb.run(["log", &id, "--json"]);
    page.expect_code(0);
    let view = page.json();
    assert_eq!(view["totalLines"], 3, "{page}");
    let lines: BTreeSet<(String, String)> = view["lines"]
        .as_array()
        .expect("lines")
        .iter()
        .map(|l| (l["stream"].as_str().unwrap_or("").to_string(), l["text"].as_str().unwrap_or("").to_string()))
        .collect();
    let expected = [("stdout", "alpha"), ("stderr", "beta"), ("stdout", "gamma")];
    assert_eq!(lines, expected.iter().map(|(s, t)| (s.to_string(), t.to_string())).collect(), "{page}");

    let stderr = sb.run(["log", &id, "--stream", "stderr", "--json"]).json();
    assert_eq!(stderr["totalLines"], 1, "{stderr:#}");
    assert_eq!(stderr["lines"][0]["text"], "beta", "{stderr:#}");
    let grep = sb.run(["log", &id, "--grep", "^(alpha|gamma)$"]).text();
    assert!(grep.starts_with("2 matching /^(alpha|gamma)$/ of 3 lines\n"), "{grep}");
}

/// Creates its file when dropped: the signal a waiting script polls for.
struct Release(std::path::PathBuf);

impl Drop for Release {
    fn drop(&mut self) {
        let _ = std::fs::write(&self.0, b"");
    }
}

#[test]
fn retention_prunes_by_count_but_never_a_running_run() {
    let sb = sandbox();
    // The user config keeps two runs; a project that keeps none of its own runs cannot make the
    // user's pruning reach further (that is `a_project_cannot_prune_other_projects_runs`).
    std::fs::create_dir_all(sb.config().join("buildvise")).unwrap();
    std::fs::write(sb.config().join("buildvise/config.toml"), "[retention]\nmax_runs = 2\n").unwrap();
    let keep_two = sb.work().join("keep-two");
    let keep_none = sb.work().join("keep-none");
    std::fs::create_dir_all(&keep_two).unwrap();
    std::fs::create_dir_all(&keep_none).unwrap();
    std::fs::write(keep_none.join("buildvise.toml"), "[retention]\nmax_runs = 0\n").unwrap();

    let mut made = Vec::new();
    for n in 0..4 {
        let exec = sh(&sb, &["--cwd", keep_two.to_str().unwrap(), "--json"], &format!("echo run {n}"));
        exec.expect_code(0);
        made.push(common::run_id(&exec.json()));
    }
    let newest_two: Vec<String> = made.iter().rev().take(2).cloned().collect();
    assert_eq!(ids(&runs(&sb)), newest_two);

    // A run that goes on until the test says so (or the test fails: then the guard says so).
    let go = sb.work().join("go");
    let release = Release(go.clone());
    let script = format!("echo started; while [ ! -e {} ]; do sleep 0.05; done; echo done", go.display());
    let slow = sb
        .command([
            "exec",
            "panicky.sh",
            "--cwd",
            keep_two.to_str().unwrap(),
            "--timeout",
            "120",
            "--json",
            "--",
            &script,
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn the slow exec");
    let mut running = None;
    wait_for("the slow run to start", || {
        running =
            runs(&sb).into_iter().find(|r| r["status"] == "running").map(|r| r["id"].as_str().unwrap().to_string());
        running.is_some()
    });
    let running = running.unwrap();

    let pruner = sh(&sb, &["--cwd", keep_none.to_str().unwrap(), "--json"], "echo pruner");
    pruner.expect_code(0);
    let pruner = common::run_id(&pruner.json());
    let left = runs(&sb);
    let left_ids: BTreeSet<String> = ids(&left).into_iter().collect();
    assert_eq!(left_ids, BTreeSet::from([pruner, running.clone()]), "{left:#?}");
    assert!(left.iter().any(|r| r["id"] == running.as_str() && r["status"] == "running"), "{left:#?}");

    drop(release);
    let out = slow.wait_with_output().expect("the slow exec ends");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let answer: Value = serde_json::from_slice(&out.stdout).expect("JSON answer");
    assert_eq!(answer["runId"], running.as_str());
    assert_eq!(sb.run(["log", &running]).text(), "lines 1-2 of 2\n1|started\n2|done\n");
}

#[test]
fn run_ids_are_refused_before_any_path_is_built() {
    let sb = sandbox();
    let exec = sh(&sb, &["--json"], "echo secret");
    exec.expect_code(0);
    let id = common::run_id(&exec.json());
    // A complete run where `runs/../x` would lead: only validation stands between it and `log`.
    common::copy_tree(&sb.state().join("runs").join(&id), &sb.state().join("x"));

    for bad in ["../x", "../../x", "/etc/passwd", "ABCDEFGH", "abcdefg", "abcdefgh/"] {
        for extra in [&[][..], &["--raw"][..], &["--detail", "full"][..]] {
            let mut args = vec!["log", bad];
            args.extend_from_slice(extra);
            let run = sb.run(&args);
            run.expect_code(125);
            assert!(!run.text().contains("secret"), "{run}");
            assert!(run.stderr.contains(&format!("{bad:?} is not valid")), "{run}");
            assert!(run.stderr.contains("8 characters"), "the message says what to send:{run}");
        }
    }

    let unknown = sb.run(["log", "abcdefgh"]);
    unknown.expect_code(125);
    assert!(unknown.stderr.contains("no run \"abcdefgh\""), "{unknown}");
    assert!(unknown.stderr.contains("buildvise runs"), "the message says where to look:{unknown}");
}

#[test]
fn a_missing_program_is_named() {
    let sb = sandbox();
    let exec = sb.run(["exec", "panicky.missing"]);
    exec.expect_code(127);
    assert!(exec.stderr.contains("`buildvise-test-no-such-program` was not found"), "{exec}");
    assert!(!exec.stderr.contains("panicked"), "{exec}");
    // And the host still serves.
    sh(&sb, &[], "true").expect_code(0);
}

#[test]
fn an_unknown_tool_gets_a_suggestion_and_nothing_runs() {
    let sb = sandbox();
    let exec = sb.run(["exec", "panicky.fed", "--", "touch ran"]);
    exec.expect_code(125);
    assert!(exec.stderr.contains("unknown tool \"panicky.fed\""), "{exec}");
    assert!(exec.stderr.contains("did you mean"), "{exec}");
    assert!(exec.stderr.contains("panicky.feed"), "{exec}");
    assert!(!sb.work().join("ran").exists());
    assert!(runs(&sb).is_empty());

    let saved = sb.work().join("saved.log");
    std::fs::write(&saved, "x\n").unwrap();
    let parse = sb.run(["parse", "panicky.shh", "--log", saved.to_str().unwrap()]);
    parse.expect_code(125);
    assert!(parse.stderr.contains("did you mean") && parse.stderr.contains("panicky.sh"), "{parse}");
}

#[test]
fn two_plugins_claiming_one_tool_are_reported_and_the_first_wins() {
    // The same library under a second name claims every panicky.* tool a second time.
    let twin_dir = tempfile::tempdir().expect("temp dir");
    let name = |stem: &str| format!("{}{stem}{}", std::env::consts::DLL_PREFIX, std::env::consts::DLL_SUFFIX);
    std::fs::copy(
        test_plugins().join(name("buildvise_plugin_panicky")),
        twin_dir.path().join(name("buildvise_plugin_twin")),
    )
    .expect("copy the plugin");
    let sb = Sandbox::new(&[test_plugins(), twin_dir.path()]);
    let list = sb.run(["list", "--json"]);
    list.expect_code(0);
    let answer = list.json();
    let clashes = answer["clashes"].as_array().unwrap_or_else(|| panic!("no clashes reported:{list}"));
    let clashed: BTreeSet<&str> = clashes.iter().map(|c| c["tool"].as_str().expect("tool")).collect();
    assert!(clashed.contains("panicky.sh"), "{list}");
    for clash in clashes {
        assert!(clash["kept"].as_str().expect("kept").ends_with(&name("buildvise_plugin_panicky")), "{list}");
        assert!(clash["ignored"].as_str().expect("ignored").ends_with(&name("buildvise_plugin_twin")), "{list}");
    }
    let text = sb.run(["list"]);
    assert!(text.text().contains("clash: panicky.sh is claimed by"), "{text}");
    // The tool still runs, through the first library.
    sh(&sb, &[], "echo fine").expect_code(0);
}

#[test]
fn several_processes_share_one_store() {
    let sb = sandbox();
    // Retention runs at every exec start, in every process, while the others write.
    let config = sb.config().join("buildvise");
    std::fs::create_dir_all(&config).expect("config dir");
    std::fs::write(config.join("config.toml"), "[retention]\nmax_runs = 50\n").expect("config");
    let children: Vec<_> = (0..6)
        .map(|i| {
            let mut cmd = sb.command([
                "exec",
                "panicky.sh",
                "--json",
                "--",
                &format!("for n in 1 2 3; do echo proc{i} line$n; done"),
            ]);
            cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
            (i, cmd.spawn().expect("spawn exec"))
        })
        .collect();
    let mut seen = BTreeMap::new();
    for (i, child) in children {
        let out = child.wait_with_output().expect("exec ends");
        assert_eq!(out.status.code(), Some(0), "exec {i}: {}", String::from_utf8_lossy(&out.stderr));
        let answer: Value = serde_json::from_slice(&out.stdout).expect("JSON answer");
        seen.insert(answer["runId"].as_str().expect("run id").to_string(), i);
    }
    assert_eq!(seen.len(), 6, "run ids collided: {seen:?}");
    let stored: BTreeSet<String> = ids(&runs(&sb)).into_iter().collect();
    assert_eq!(stored, seen.keys().cloned().collect::<BTreeSet<_>>());
    for (id, i) in &seen {
        let page = sb.run(["log", id, "--grep", "line"]);
        page.expect_code(0);
        let text = page.text();
        assert_eq!(text.matches(&format!("proc{i} line")).count(), 3, "{page}");
        assert!(!text.contains(&format!("proc{} ", (i + 1) % 6)), "another run's lines leaked in:{page}");
    }
}

/// A parser whose `Drop` panics, after finishing normally or after a panic in `feed`: the answer
/// comes back (with the result it finished with), and the host lives on.
#[test]
fn a_panic_in_a_parsers_drop_cannot_abort_the_host() {
    let sb = sandbox();
    let finished = sb.run(["exec", "panicky.drop", "--", "echo 'error: kept'; exit 2"]);
    finished.expect_code(2);
    assert!(finished.text().contains("\nkept\n"), "the result finish gave was lost:{finished}");

    let fed = sb.run(["exec", "panicky.drop", "--", "echo boom; exit 3"]);
    fed.expect_code(3);
    assert!(fed.text().contains("parser failed: parser panicked at log line 1: panicky parser: boom"), "{fed}");
    sh(&sb, &[], "true").expect_code(0);
}

/// The sandbox's buildvise, inside a mount namespace of its own where the store is a 1 MiB
/// tmpfs: `script` runs there with `$BV` set to the buildvise command line.
fn on_a_small_disk(sb: &Sandbox, script: &str) -> std::process::Output {
    let base = sb.command(Vec::<&str>::new());
    let mut command = std::process::Command::new("unshare");
    let preamble = "set -u; mount -t tmpfs -o size=1m tmpfs \"$BUILDVISE_HOME\" || exit 90; BV=\"$*\"; ";
    command.args(["-Urm", "sh", "-c", &format!("{preamble}{script}"), "sh"]);
    command.arg(base.get_program()).args(base.get_args());
    for (key, value) in base.get_envs() {
        match value {
            Some(value) => command.env(key, value),
            None => command.env_remove(key),
        };
    }
    command.current_dir(sb.work()).stdin(std::process::Stdio::null()).output().expect("unshare runs")
}

#[test]
fn a_full_disk_loses_no_answer_and_retention_makes_room() {
    let sb = sandbox();
    let probe = std::process::Command::new("unshare").args(["-Urm", "true"]).output();
    assert!(
        probe.as_ref().is_ok_and(|out| out.status.success()),
        "this test needs `unshare -Urm` (user and mount namespaces) to give the store a small disk: {probe:?}"
    );
    std::fs::create_dir_all(sb.config().join("buildvise")).unwrap();
    std::fs::write(sb.config().join("buildvise/config.toml"), "[retention]\nmax_runs = 2\n").unwrap();
    // 6000 lines of 100 bytes: more than half the disk, so that the second run fills it.
    let lines = "yes 012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012 | head -n 6000";
    let script = format!(
        "$BV exec panicky.sh --json -- '{lines}' > a.json; echo $? > a.code; \
         $BV exec panicky.sh --json -- '{lines}; echo \"error: printed after the disk filled\"; exit 1' > b.json; \
         echo $? > b.code; \
         $BV exec panicky.sh --json -- 'echo fits' > c.json; echo $? > c.code; \
         $BV runs --json > runs.json; \
         for id in $(sed -n 's/.*\"runId\": \"\\([a-z]*\\)\".*/\\1/p' b.json); do $BV log $id --start -1 > b-last.txt; done"
    );
    let out = on_a_small_disk(&sb, &script);
    let work = sb.work();
    let read = |name: &str| std::fs::read_to_string(work.join(name)).unwrap_or_default();
    let shown = format!("\nstatus: {}\nstderr: {}", out.status, String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{shown}");
    assert_eq!((read("a.code").trim(), read("b.code").trim(), read("c.code").trim()), ("0", "1", "0"), "{shown}");

    // The run that filled the disk still answers with what it printed after the disk was full,
    // and says which directory to clear.
    let b: Value = serde_json::from_str(&read("b.json")).unwrap_or_else(|e| panic!("b.json: {e}{shown}"));
    assert_eq!(b["diagnostics"][0]["message"], "printed after the disk filled", "{b:#}");
    let notes = b["notes"].to_string();
    assert!(notes.contains("could be stored") && notes.contains("the disk holding the run store is full"), "{b:#}");
    assert!(notes.contains(&format!("{}/runs", sb.state().display())), "the note names the directory: {b:#}");

    // Retention made room: the oldest run went, the two newest are whole, and B's index agrees
    // with its log.
    let runs: Vec<Value> = serde_json::from_str(&read("runs.json")).unwrap_or_else(|e| panic!("runs.json: {e}{shown}"));
    let ids: Vec<&str> = runs.iter().filter_map(|r| r["id"].as_str()).collect();
    let c: Value = serde_json::from_str(&read("c.json")).unwrap_or_else(|e| panic!("c.json: {e}{shown}"));
    assert_eq!(ids, [c["runId"].as_str().unwrap(), b["runId"].as_str().unwrap()], "{runs:#?}");
    let stored = runs[1]["lines"].as_u64().expect("lines");
    assert_eq!(runs[1]["status"], "exited", "{runs:#?}");
    assert!(stored > 0 && stored < 6001, "{runs:#?}");
    let last = read("b-last.txt");
    assert!(last.starts_with(&format!("lines {stored}-{stored} of {stored}\n")), "{last}");
}

/// D4: the dotnet parser looked back over the whole line at every colon, so a long line of them
/// took time by the square of its length: 100 KB of `:` hit the parser's CPU limit and every
/// diagnostic of the log was lost. Now those lines cost what their length does, and the error
/// after them is still read.
#[test]
fn long_lines_of_colons_leave_the_dotnet_parser_its_diagnostics() {
    let sb = Sandbox::new(&[common::toolchains()]);
    let dir = tempfile::tempdir().expect("temp dir");
    let log = dir.path().join("build.log");
    let mut text = format!("{}\n", ":".repeat(200_000)).repeat(30);
    text.push_str("src/App.cs(3,5): error CS1002: ; expected\n");
    std::fs::write(&log, text).expect("write log");
    let parsed = sb.run(["parse", "dotnet.build", "--log", log.to_str().expect("UTF-8"), "--exit-code", "1", "--json"]);
    let answer = parsed.expect_code(0).json();
    assert!(answer["parserError"].is_null(), "{parsed}");
    assert_eq!(answer["errors"][0]["code"], "CS1002", "{parsed}");
}

/// D8: `parse` held a whole line, so a 300 MB line took 307 MB. A line is now read no further than
/// the parser looks, so `parse` of a 128 MiB line runs under a 100 MB data limit, and the error
/// after the line is still read.
#[test]
fn parse_holds_no_more_of_a_huge_line_than_the_parser_reads() {
    let Some(prlimit) = common::which("prlimit") else {
        return common::skip("no prlimit (util-linux) to run parse under a memory limit");
    };
    let sb = Sandbox::new(&[common::toolchains()]);
    let dir = tempfile::tempdir().expect("temp dir");
    let log = dir.path().join("build.log");
    let mut text = "a".repeat(128 << 20);
    text.push_str("\nsrc/App.cs(3,5): error CS1002: ; expected\n");
    std::fs::write(&log, text).expect("write log");
    let parse = sb.command(["parse", "dotnet.build", "--log", log.to_str().expect("UTF-8"), "--exit-code", "1"]);
    // The sandbox's command, run by prlimit with a 100 MB data limit (heap and mappings).
    let mut cmd = std::process::Command::new(prlimit);
    cmd.arg("--data=100000000").arg("--").arg(parse.get_program()).args(parse.get_args());
    for (key, value) in parse.get_envs() {
        match value {
            Some(value) => cmd.env(key, value),
            None => cmd.env_remove(key),
        };
    }
    cmd.current_dir(parse.get_current_dir().expect("the sandbox sets a directory"));
    let out = cmd.output().expect("run parse");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}\n{text}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("src/App.cs:3:5 CS1002 ; expected"), "{text}");
}
