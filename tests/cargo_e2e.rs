//! End to end with a real toolchain: the `buildvise` binary runs real cargo, through the cargo
//! plugin, on copies of the fixture crates in `tests/fixtures/cargo/` (`broken`: two type errors
//! and an unused import; `tests`: one passing, two failing and one ignored test), and what it
//! answers is checked field by field against what rustc and libtest printed.

mod common;

use common::{Sandbox, junit_cases, run_id, toolchains};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::Path;

fn sandbox() -> Sandbox {
    Sandbox::new(&[toolchains()])
}

fn cwd_arg(dir: &Path) -> String {
    dir.to_str().expect("UTF-8 path").to_string()
}

/// The fields of a diagnostic that say what and where, for comparing sets of diagnostics.
fn located(d: &Value) -> (String, String, String, u64, u64, String) {
    let s = |k: &str| d[k].as_str().unwrap_or("").to_string();
    let n = |k: &str| d[k].as_u64().unwrap_or(0);
    (s("severity"), s("code"), s("file"), n("line"), n("column"), s("message"))
}

fn diagnostics(answer: &Value) -> Vec<Value> {
    answer["diagnostics"].as_array().cloned().unwrap_or_default()
}

/// Sorts JSON values by their text, so that lists can be compared as multisets.
fn sorted(mut values: Vec<Value>) -> Vec<Value> {
    values.sort_by_key(|v| v.to_string());
    values
}

fn broken_expected() -> BTreeSet<(String, String, String, u64, u64, String)> {
    let d = |sev: &str, code: &str, line, column, message: &str| {
        (sev.to_string(), code.to_string(), "src/lib.rs".to_string(), line, column, message.to_string())
    };
    BTreeSet::from([
        // The primary label says what the headline alone does not.
        d("error", "E0308", 5, 22, "mismatched types (expected `usize`, found `u32`)"),
        d("error", "E0308", 10, 5, "mismatched types (expected `String`, found `&str`)"),
        d("warning", "unused_imports", 1, 5, "unused import: `std::collections::HashMap`"),
    ])
}

#[test]
fn build_errors_are_exact_and_their_log_range_pages_to_them() {
    let sb = sandbox();
    let dir = sb.cargo_fixture("broken");
    let exec = sb.run(["exec", "cargo.build", "--cwd", &cwd_arg(&dir), "--json"]);
    exec.expect_code(101);
    let answer = exec.json();
    let id = run_id(&answer);
    assert_eq!(answer["status"], "failed", "{exec}");
    assert_eq!(answer["exitCode"], 101, "{exec}");
    assert_eq!(answer["success"], false, "{exec}");
    assert_eq!((answer["errors"].as_u64(), answer["warnings"].as_u64()), (Some(2), Some(1)), "{exec}");

    let found: BTreeSet<_> = diagnostics(&answer).iter().map(located).collect();
    assert_eq!(found, broken_expected(), "{exec}");

    // The first error's log range pages exactly to its header and location in the stored log.
    let first = diagnostics(&answer).into_iter().find(|d| d["severity"] == "error").expect("an error");
    let (start, end) = (first["logRange"]["start"].as_u64().unwrap(), first["logRange"]["end"].as_u64().unwrap());
    assert!(start <= end, "{first}");
    let count = end - start + 1;
    let page = sb.run(["log", &id, "--start", &start.to_string(), "--count", &count.to_string()]);
    page.expect_code(0);
    let text = page.text();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with(&format!("lines {start}-{end} of ")), "{page}");
    assert_eq!(lines[1], format!("{start}|error[E0308]: mismatched types"), "{page}");
    let location = format!("| --> {}:{}:{}", first["file"].as_str().unwrap(), first["line"], first["column"]);
    assert_eq!(lines.iter().filter(|l| l.ends_with(&location)).count(), 1, "no `{location}` in:{page}");

    // The hint names that very call.
    assert_eq!(answer["hint"], format!("more: buildvise log {id} --start {start} --count {count}"));

    // The store re-renders the same answer from another process.
    let again = sb.run(["log", &id, "--detail", "standard", "--json"]);
    again.expect_code(0);
    assert_eq!(again.json(), answer, "re-rendered answer differs:{again}");
}

#[test]
fn test_run_summary_and_panic_locations() {
    let sb = sandbox();
    let dir = sb.cargo_fixture("tests");
    let exec = sb.run(["exec", "cargo.test", "--cwd", &cwd_arg(&dir), "--json"]);
    exec.expect_code(101);
    let answer = exec.json();
    assert_eq!(answer["status"], "failed", "{exec}");
    assert_eq!(answer["summary"], json!({"passed": 1, "failed": 2, "skipped": 1, "total": 4}), "{exec}");

    let failed: BTreeSet<&str> =
        answer["failedTests"].as_array().expect("failedTests").iter().filter_map(Value::as_str).collect();
    assert_eq!(failed, BTreeSet::from(["tests::doubles_wrongly", "tests::halves_negative"]), "{exec}");
    assert_eq!(answer["failedTests"].as_array().unwrap().len(), 2, "each failed test once:{exec}");

    // Each failure points at where it panicked: inside `halve` for one, the assert for the other.
    let tests: BTreeSet<(String, String, u64, u64, String)> = diagnostics(&answer)
        .iter()
        .map(|d| {
            assert_eq!(d["severity"], "error", "{d}");
            let (_, _, file, line, column, message) = located(d);
            (d["test"].as_str().unwrap_or("").to_string(), file, line, column, message)
        })
        .collect();
    let expected = BTreeSet::from([
        (
            "tests::halves_negative".to_string(),
            "src/lib.rs".to_string(),
            7,
            9,
            "cannot halve a negative number: -4".to_string(),
        ),
        (
            "tests::doubles_wrongly".to_string(),
            "src/lib.rs".to_string(),
            23,
            9,
            "assertion `left == right` failed".to_string(),
        ),
    ]);
    assert_eq!(tests, expected, "{exec}");

    // The text answer says the same in one line each, with the values an assertion compared.
    let text_run = sb.run(["log", &run_id(&answer), "--detail", "standard"]);
    let text = text_run.text();
    // The library's doctests never ran: cargo stopped at the failing unit tests.
    assert!(
        text.starts_with(
            "FAIL exit 101 · tests 1 passed, 2 failed, 1 skipped · stopped early: later test targets not run; add --no-fail-fast · run "
        ),
        "{text_run}"
    );
    assert_eq!(answer["stoppedEarly"], "later test targets not run; add --no-fail-fast", "{exec}");
    for line in [
        "src/lib.rs:7:9 tests::halves_negative: cannot halve a negative number: -4",
        "src/lib.rs:23:9 tests::doubles_wrongly: assertion `left == right` failed (left 6; right 7)",
    ] {
        assert_eq!(text.lines().filter(|l| *l == line).count(), 1, "`{line}` once in:{text_run}");
    }

    // The JUnit report has every test libtest named, a failure with its panic, the ignored one
    // skipped; libtest prints no times.
    let report = sb.run(["log", &run_id(&answer), "--format", "junit"]);
    let cases: BTreeSet<(String, String, String)> = junit_cases(&report.text()).into_iter().collect();
    let case = |name: &str, inner: &str| (format!("tests::{name}"), "0".to_string(), inner.to_string());
    let expected = BTreeSet::from([
        case("doubles", ""),
        case("doubles_wrongly", "failure"),
        case("halves_negative", "failure"),
        case("slow_one", "skipped"),
    ]);
    assert_eq!(cases, expected, "{report}");
}

/// `list` says libtest's arguments come after a `--` of their own among the args; on the command
/// line that is a second `--`, the first ending buildvise's options. Sent after the first alone
/// they are cargo's, and cargo's tip in the answer says where they go.
#[test]
fn libtest_arguments_need_their_own_dashes_and_cargo_says_so() {
    let sb = sandbox();
    let list = sb.run(["list"]).expect_code(0).text();
    assert!(
        list.lines().any(|l| l.starts_with("cargo.test") && l.ends_with("args: cargo's, then -- and libtest's")),
        "{list}"
    );
    let dir = sb.cargo_fixture("tests");
    let reached = sb.run(["exec", "cargo.test", "--cwd", &cwd_arg(&dir), "--json", "--", "--", "--include-ignored"]);
    reached.expect_code(101);
    // The ignored test ran: libtest got the flag.
    assert_eq!(reached.json()["summary"], json!({"passed": 2, "failed": 2, "skipped": 0, "total": 4}), "{reached}");
    let refused = sb.run(["exec", "cargo.test", "--cwd", &cwd_arg(&dir), "--", "--include-ignored"]);
    refused.expect_code(1);
    let text = refused.text();
    // `new`: the run is compared with the one before it, which had other args.
    assert!(
        text.lines().any(|l| l.trim_start_matches("new ")
            == "unexpected argument '--include-ignored' found; tip: to pass '--include-ignored' as a value, use '-- \
                --include-ignored'"),
        "{text}"
    );
}

#[test]
fn detail_levels_say_more_step_by_step() {
    let sb = sandbox();
    let dir = sb.cargo_fixture("broken");
    let cwd = cwd_arg(&dir);
    let exec = |detail: &str| {
        let run = sb.run(["exec", "cargo.build", "--cwd", &cwd, "--detail", detail]);
        run.expect_code(101);
        run
    };

    let summary_run = exec("summary");
    let summary = summary_run.text();
    assert_eq!(summary.lines().count(), 1, "one file, so only the header:{summary_run}");
    assert!(summary.starts_with("FAIL exit 101 · 2 errors, 1 warning · run "), "{summary_run}");
    assert!(!summary.contains("mismatched"), "summary names no messages:{summary_run}");
    let summary_json = sb.run(["exec", "cargo.build", "--cwd", &cwd, "--detail", "summary", "--json"]).json();
    assert!(summary_json.get("diagnostics").is_none(), "{summary_json:#}");
    assert_eq!(summary_json["files"], json!({"src/lib.rs": [2, 1]}), "{summary_json:#}");

    let standard_run = exec("standard");
    let standard = standard_run.text();
    for line in [
        "src/lib.rs:5:22 E0308 mismatched types (expected `usize`, found `u32`)",
        "src/lib.rs:10:5 E0308 mismatched types (expected `String`, found `&str`)",
    ] {
        assert_eq!(standard.lines().filter(|l| *l == line).count(), 1, "`{line}` once in:{standard_run}");
    }
    assert_eq!(standard.lines().filter(|l| l.contains(" E0308 ")).count(), 2, "{standard_run}");
    assert!(standard.contains("src/lib.rs:1:5 unused_imports unused import"), "{standard_run}");
    assert!(!standard.lines().any(|l| l.starts_with("  ")), "standard carries no notes:{standard_run}");
    assert!(summary.len() * 2 <= standard.len(), "summary is not half of standard:{summary_run}{standard_run}");

    let full_run = exec("full");
    let full = full_run.text();
    let header = full.lines().next().unwrap_or_default();
    let id = header.rsplit("run ").next().expect("run id in the header");
    let stored = sb.run(["log", id, "--detail", "full", "--json"]).json();
    let all = diagnostics(&stored);
    assert_eq!(all.len(), 3, "{stored:#}");
    let mut notes = 0;
    for d in &all {
        let (sev, code, file, line, column, _) = located(d);
        let range = format!("[log {}-{}]", d["logRange"]["start"], d["logRange"]["end"]);
        let prefix = if sev == "warning" { "warning " } else { "" };
        let at = format!("{prefix}{file}:{line}:{column} {code} ");
        assert_eq!(
            full.lines().filter(|l| l.starts_with(&at) && l.ends_with(&range)).count(),
            1,
            "no `{at}… {range}` line in:{full_run}"
        );
        for note in d["notes"].as_array().into_iter().flatten() {
            assert!(full.contains(&format!("\n  {}\n", note.as_str().unwrap())), "note {note} missing:{full_run}");
            notes += 1;
        }
    }
    assert!(notes > 0, "rustc printed notes (expected `usize`, found `u32`):{stored:#}");
    assert!(full.contains("expected `usize`, found `u32`"), "{full_run}");
    assert!(full.lines().any(|l| l.starts_with("last 20 of ") || l.starts_with("output (")), "no tail:{full_run}");
}

/// `parse` of the stored log gives what `exec` gave: the parser does not depend on the live run.
fn parse_matches_exec(fixture: &str, tool: &str) {
    let sb = sandbox();
    let dir = sb.cargo_fixture(fixture);
    let cwd = cwd_arg(&dir);
    let exec = sb.run(["exec", tool, "--cwd", &cwd, "--detail", "full", "--json"]);
    exec.expect_code(101);
    let answer = exec.json();
    let id = run_id(&answer);

    let runs = sb.run(["runs", "--json"]).json();
    let lines = runs[0]["lines"].as_u64().expect("line count");
    assert_eq!(runs[0]["id"], id.as_str());
    let raw = sb.run(["log", &id, "--raw", "--count", &lines.to_string()]);
    raw.expect_code(0);
    assert_eq!(raw.stdout.iter().filter(|b| **b == b'\n').count() as u64, lines, "{raw}");
    assert_eq!(raw.stderr, "", "the whole log needs no word about the rest: {raw}");
    // A page short of the log says so beside the bytes, not in them.
    let page = sb.run(["log", &id, "--raw", "--count", "2"]);
    assert_eq!(page.stdout.iter().filter(|b| **b == b'\n').count(), 2, "{page}");
    assert_eq!(page.stderr, format!("buildvise: printed lines 1-2 of {lines}; --start and --count select others\n"));
    let saved = sb.work().join("saved.log");
    std::fs::write(&saved, &raw.stdout).expect("save log");

    let parse =
        sb.run(["parse", tool, "--log", saved.to_str().unwrap(), "--exit-code", "101", "--cwd", &cwd, "--json"]);
    parse.expect_code(0);
    let parsed = parse.json();
    let mut from_parse = parsed["errors"].as_array().cloned().unwrap_or_default();
    from_parse.extend(parsed["warnings"].as_array().cloned().unwrap_or_default());
    let from_exec = diagnostics(&answer);
    assert!(!from_exec.is_empty(), "{exec}");
    assert_eq!(sorted(from_parse), sorted(from_exec), "parse differs from exec:{exec}{parse}");
    assert_eq!(parsed["summary"], answer.get("summary").cloned().unwrap_or(Value::Null), "{parse}");
    let failed = |v: &Value| sorted(v["failedTests"].as_array().cloned().unwrap_or_default());
    assert_eq!(failed(&parsed), failed(&answer), "{parse}");
    assert_eq!(parsed["success"], false, "{parse}");
}

#[test]
fn parse_of_saved_build_log_equals_exec() {
    parse_matches_exec("broken", "cargo.build");
}

#[test]
fn parse_of_saved_test_log_equals_exec() {
    parse_matches_exec("tests", "cargo.test");
}

/// cargo-nextest is a separate install; without it the test skips.
fn have_nextest() -> bool {
    let ok = std::process::Command::new("cargo")
        .args(["nextest", "--version"])
        .output()
        .is_ok_and(|out| out.status.success());
    if !ok {
        common::skip("`cargo nextest --version` failed; install it with `cargo install cargo-nextest --locked`");
    }
    ok
}

#[test]
fn nextest_failures_point_at_their_panics() {
    if !have_nextest() {
        return;
    }
    let sb = sandbox();
    let dir = sb.cargo_fixture("nextest");
    let exec = sb.run(["exec", "cargo.nextest", "--cwd", &cwd_arg(&dir), "--json", "--", "--no-fail-fast"]);
    exec.expect_code(100);
    let answer = exec.json();
    assert_eq!(answer["summary"], json!({"passed": 1, "failed": 2, "skipped": 1, "total": 4}), "{exec}");
    let found: BTreeSet<(String, String, u64, u64, String)> = diagnostics(&answer)
        .iter()
        .map(|d| {
            let (severity, _, file, line, column, message) = located(d);
            assert_eq!(severity, "error", "{d}");
            (d["test"].as_str().unwrap_or("").to_string(), file, line, column, message)
        })
        .collect();
    let expected = BTreeSet::from([
        (
            "tests::rejects_letters".to_string(),
            "src/lib.rs".to_string(),
            2,
            18,
            "a port is a number: ParseIntError { kind: InvalidDigit }".to_string(),
        ),
        (
            "tests::counts_wrongly".to_string(),
            "src/lib.rs".to_string(),
            21,
            9,
            "assertion `left == right` failed: one plus one".to_string(),
        ),
    ]);
    assert_eq!(found, expected, "{exec}");
    let failed: BTreeSet<&str> =
        answer["failedTests"].as_array().expect("failedTests").iter().filter_map(Value::as_str).collect();
    assert_eq!(failed, BTreeSet::from(["tests::rejects_letters", "tests::counts_wrongly"]), "{exec}");
    assert!(answer.get("stoppedEarly").is_none(), "--no-fail-fast ran every test:{exec}");

    // nextest times each test it names (a process each, never 0 s); it names no skipped test.
    let report = sb.run(["log", &run_id(&answer), "--format", "junit"]);
    let cases = junit_cases(&report.text());
    let failures = cases.iter().filter(|(_, _, inner)| inner == "failure").count();
    assert_eq!((cases.len(), failures), (3, 2), "{report}");
    for (name, time, _) in &cases {
        assert!(time.parse::<f64>().is_ok_and(|t| t > 0.0), "{name}: time {time:?} in {report}");
    }
}

#[test]
fn run_reports_the_programs_panic_and_not_its_output() {
    let sb = sandbox();
    let dir = sb.cargo_fixture("run-panic");
    let exec = sb.run(["exec", "cargo.run", "--cwd", &cwd_arg(&dir), "--json"]);
    exec.expect_code(101);
    let answer = exec.json();
    let found: Vec<_> = diagnostics(&answer).iter().map(located).collect();
    assert_eq!(
        found,
        [(
            "error".to_string(),
            String::new(),
            "src/main.rs".to_string(),
            2,
            18,
            "PORT must be a number: ParseIntError { kind: InvalidDigit }".to_string()
        )],
        "one error, at the panic; the program's `error:`/`warning:` lines are its output:{exec}"
    );
    assert_eq!((answer["errors"].as_u64(), answer["warnings"].as_u64()), (Some(1), Some(0)), "{exec}");
}

#[test]
fn fmt_check_reports_each_file_at_its_first_change_and_fmt_alone_needs_confirm() {
    let sb = sandbox();
    let dir = sb.cargo_fixture("misformatted");
    let before = std::fs::read_to_string(dir.join("src/lib.rs")).expect("fixture source");
    let exec = sb.run(["exec", "cargo.fmt", "--cwd", &cwd_arg(&dir), "--json", "--", "--check"]);
    exec.expect_code(1);
    let answer = exec.json();
    let found: Vec<_> = diagnostics(&answer).iter().map(located).collect();
    assert_eq!(
        found,
        [(
            "error".to_string(),
            String::new(),
            "src/lib.rs".to_string(),
            5,
            0,
            "not formatted (1 place); run cargo fmt".to_string()
        )],
        "{exec}"
    );

    // Without --check, cargo fmt rewrites files: nothing runs without consent.
    let refused = sb.run(["exec", "cargo.fmt", "--cwd", &cwd_arg(&dir)]);
    refused.expect_code(125);
    assert!(refused.stderr.contains("cargo.fmt changes the workspace, so nothing ran"), "{refused}");
    assert_eq!(std::fs::read_to_string(dir.join("src/lib.rs")).expect("source"), before, "{refused}");

    let formatted = sb.run(["exec", "cargo.fmt", "--confirm", "--cwd", &cwd_arg(&dir)]);
    formatted.expect_code(0);
    let after = std::fs::read_to_string(dir.join("src/lib.rs")).expect("source");
    assert!(after.contains("pub fn mul(a: i32, b: i32) -> i32 {"), "{after}");
}
