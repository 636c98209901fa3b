//! End to end with real npm: the `buildvise` binary runs npm, through the npm plugin, on copies of
//! the fixture projects in `tests/fixtures/npm/`, and what it answers is checked field by field
//! against what the tools printed:
//!
//! - `tools`: `build` is tsc with three planted type errors, `test` is Jest with two failing, two
//!   passing and one skipped test, `lint` is ESLint with three errors and one warning;
//! - `vitest-app`: `test` is Vitest with two failing, two passing and one skipped test (not named
//!   `vitest`: Vitest drops stack frames under any `/vitest/src/` as its own); `build` is a Vite
//!   build whose `src/main.ts` imports `chart-lib`, which is not installed;
//! - `start-crash`: no dependencies; `start` runs node on an order without lines, which throws an
//!   uncaught TypeError in `src/totals.js`;
//! - `local-dep`: depends only on a folder inside itself, so `npm install` needs no registry;
//! - `mocha-app`: `test` is Mocha's spec reporter over nested suites: two passing tests, one
//!   slow enough for Mocha to print its time, one failing, one pending;
//! - `node-test-app`: no dependencies; `test` is `node --test` (TAP on a pipe) over a describe
//!   with a nested one, a test with a subtest, one failing and one skipped test.
//!
//! Dependencies are installed once with `npm ci` into `target/test-env/npm/NAME-HASH` (HASH of
//! the lockfile, so a changed lockfile gets a fresh install). Each test gets a fresh copy of the
//! fixture's sources and a copy of that `node_modules` (directories anew, files hard-linked):
//! Vitest writes its results cache into `node_modules`, so a shared tree would not stay as
//! `npm ci` left it.
//!
//! Without node or npm the tests that need them skip (`common::skip`); a failing `npm ci` fails.

// Real toolchains behind shell-script shims and links: Unix only.
#![cfg(unix)]

mod common;

use common::{Run, Sandbox, root, run_id, toolchains};
use serde_json::{Value, json};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};

fn sandbox() -> Sandbox {
    Sandbox::new(&[toolchains()])
}

/// True when `node` and `npm` both run; otherwise skips the test, for it to return.
fn have_node() -> bool {
    common::have_node("the npm end-to-end test")
}

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/npm").join(name)
}

/// FNV-1a: a cache key that stays the same across Rust releases, which `DefaultHasher` does not
/// promise.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, b| (hash ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3))
}

/// The directory where fixture NAME has had `npm ci`, installing it on first use. One install per
/// fixture even when tests ask at once; another process installing the same one at the same
/// time loses the final rename harmlessly.
fn prepared(name: &str) -> PathBuf {
    static CELLS: OnceLock<Mutex<HashMap<String, Arc<OnceLock<PathBuf>>>>> = OnceLock::new();
    let cell = {
        let mut cells = CELLS.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
        cells.entry(name.to_string()).or_default().clone()
    };
    cell.get_or_init(|| install(name)).clone()
}

fn install(name: &str) -> PathBuf {
    let lock = std::fs::read(fixture(name).join("package-lock.json")).expect("fixture has a package-lock.json");
    let envs = root().join("target/test-env/npm");
    let done = envs.join(format!("{name}-{:016x}", fnv1a(&lock)));
    if done.join("node_modules").is_dir() {
        return done;
    }
    std::fs::create_dir_all(&envs).expect("create target/test-env/npm");
    let partial = envs.join(format!(".{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&partial);
    copy_sources(&fixture(name), &partial);
    let out = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund"])
        .current_dir(&partial)
        .env("npm_config_update_notifier", "false")
        .env("npm_config_cache", common::npm_cache())
        .stdin(Stdio::null())
        .output()
        .expect("npm runs");
    if !out.status.success() {
        let _ = std::fs::remove_dir_all(&partial);
    }
    assert!(
        out.status.success(),
        "npm ci for fixture {name} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // Only a complete install gets the final name, so a half-done one is never taken for ready.
    if let Err(e) = std::fs::rename(&partial, &done) {
        assert!(done.join("node_modules").is_dir(), "install {name} into {}: {e}", done.display());
        let _ = std::fs::remove_dir_all(&partial);
    }
    done
}

/// Copies a fixture's own files, never a `node_modules` or `target` someone left in it.
fn copy_sources(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create dir");
    for entry in std::fs::read_dir(from).unwrap_or_else(|e| panic!("{}: {e}", from.display())) {
        let entry = entry.expect("dir entry");
        if entry.file_name() == "node_modules" || entry.file_name() == "target" {
            continue;
        }
        let path = entry.path();
        if entry.file_type().expect("file type").is_dir() {
            copy_sources(&path, &to.join(entry.file_name()));
        } else {
            std::fs::copy(&path, to.join(entry.file_name())).expect("copy file");
        }
    }
}

/// Recreates an installed `node_modules`: directories anew, so that what a tool adds (Vitest's
/// results cache) stays in the copy; files as hard links, which is fast and safe because no tool
/// rewrites an installed package's files in place (a copy where links cannot be made); symlinks
/// as symlinks, since `.bin/tsc` finds its package relative to where the link points.
fn copy_installed(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create dir");
    for entry in std::fs::read_dir(from).unwrap_or_else(|e| panic!("{}: {e}", from.display())) {
        let entry = entry.expect("dir entry");
        let (path, dest) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type().expect("file type");
        if kind.is_symlink() {
            let target = std::fs::read_link(&path).expect("read link");
            std::os::unix::fs::symlink(target, &dest).expect("copy link");
        } else if kind.is_dir() {
            copy_installed(&path, &dest);
        } else if std::fs::hard_link(&path, &dest).is_err() {
            std::fs::copy(&path, &dest).expect("copy file");
        }
    }
}

/// A fresh copy of fixture NAME in the sandbox, with its dependencies installed.
fn project(sb: &Sandbox, name: &str) -> PathBuf {
    let dest = sources(sb, name);
    copy_installed(&prepared(name).join("node_modules"), &dest.join("node_modules"));
    dest
}

/// A fresh copy of fixture NAME in the sandbox, without dependencies.
fn sources(sb: &Sandbox, name: &str) -> PathBuf {
    let dest = sb.work().join(name);
    copy_sources(&fixture(name), &dest);
    dest
}

/// Runs the binary like [`Sandbox::run`], with npm reading an empty user config: what the
/// machine's `~/.npmrc` holds (and npm's warnings about it) must not reach the answers. The global
/// config, which may say where the registry is, still applies.
fn run<const N: usize>(sb: &Sandbox, args: [&str; N]) -> Run {
    let userconfig = sb.config().join("npmrc");
    std::fs::write(&userconfig, "").expect("write empty npmrc");
    let mut cmd = sb.command(args);
    cmd.env("npm_config_userconfig", &userconfig);
    let command = format!("{cmd:?}");
    let out = cmd.output().expect("buildvise runs");
    Run {
        command,
        code: out.status.code(),
        stdout: out.stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The whole stored log of run ID, for failure messages.
fn stored_log(sb: &Sandbox, id: &str) -> String {
    let page = sb.run(["log", id, "--raw", "--count", "100000"]);
    format!("\n--- stored log of {id} ---\n{}", String::from_utf8_lossy(&page.stdout))
}

fn cwd_arg(dir: &Path) -> String {
    dir.to_str().expect("UTF-8 path").to_string()
}

fn diagnostics(answer: &Value) -> Vec<Value> {
    answer["diagnostics"].as_array().cloned().unwrap_or_default()
}

/// Severity, code, file, line and column: what a diagnostic says and where.
fn located(d: &Value) -> (String, String, String, u64, u64) {
    let s = |k: &str| d[k].as_str().unwrap_or("").to_string();
    let n = |k: &str| d[k].as_u64().unwrap_or(0);
    (s("severity"), s("code"), s("file"), n("line"), n("column"))
}

fn failed_tests(answer: &Value) -> Vec<String> {
    let list = answer["failedTests"].as_array().unwrap_or_else(|| panic!("no failedTests in {answer:#}"));
    list.iter().map(|t| t.as_str().expect("test name").to_string()).collect()
}

/// The stored runs, newest first.
fn runs(sb: &Sandbox) -> Vec<Value> {
    let run = sb.run(["runs", "--json", "--limit", "100"]);
    run.expect_code(0);
    run.json().as_array().cloned().unwrap_or_else(|| panic!("runs --json is not a list:{run}"))
}

/// The stored log's lines `start..=end` as they were printed, without the pager's decoration.
fn log_lines(sb: &Sandbox, id: &str, start: u64, end: u64) -> Vec<String> {
    let count = (end - start + 1).to_string();
    let page = sb.run(["log", id, "--raw", "--start", &start.to_string(), "--count", &count]);
    page.expect_code(0);
    page.text().lines().map(str::to_string).collect()
}

#[test]
fn build_reports_each_tsc_error_with_file_line_column_and_code() {
    if !have_node() {
        return;
    }
    let sb = sandbox();
    let dir = project(&sb, "tools");
    let exec = run(&sb, ["exec", "npm.build", "--cwd", &cwd_arg(&dir), "--json"]);
    exec.expect_code(2);
    let answer = exec.json();
    assert_eq!(answer["status"], "failed", "{exec}");
    assert_eq!(answer["success"], false, "{exec}");
    assert_eq!((answer["errors"].as_u64(), answer["warnings"].as_u64()), (Some(3), Some(0)), "{exec}");
    assert!(answer.get("summary").is_none(), "a build has no test summary:{exec}");

    let found: BTreeSet<_> =
        diagnostics(&answer).iter().map(|d| (located(d), d["message"].as_str().unwrap_or("").to_string())).collect();
    let error = |file: &str, line, column, code: &str, message: &str| {
        (("error".to_string(), code.to_string(), file.to_string(), line, column), message.to_string())
    };
    let expected = BTreeSet::from([
        error("src/shapes.ts", 23, 14, "TS2322", "Type 'string' is not assignable to type 'number'."),
        error("src/shapes.ts", 27, 41, "TS2339", "Property 'diameter' does not exist on type 'Shape'."),
        error("src/total.ts", 8, 32, "TS2322", "Type 'string' is not assignable to type 'Shape'."),
    ]);
    assert_eq!(found, expected, "{exec}");

    // Each log range is the line tsc printed the error on, plus the elaboration under TS2339.
    let id = run_id(&answer);
    for d in diagnostics(&answer) {
        let (start, end) = (d["logRange"]["start"].as_u64().unwrap(), d["logRange"]["end"].as_u64().unwrap());
        let lines = log_lines(&sb, &id, start, end);
        let head = format!(
            "{}({},{}): error {}: ",
            d["file"].as_str().unwrap(),
            d["line"],
            d["column"],
            d["code"].as_str().unwrap()
        );
        assert!(lines[0].starts_with(&head), "log line {start} is not `{head}…`: {lines:?}");
        if d["code"] == "TS2339" {
            assert_eq!(lines.len(), 2, "{lines:?}");
            assert_eq!(lines[1], "  Property 'diameter' does not exist on type 'Circle'.", "{lines:?}");
        }
    }
}

#[test]
fn jest_failures_carry_the_describe_path_the_failing_line_and_the_counts() {
    if !have_node() {
        return;
    }
    let sb = sandbox();
    let dir = project(&sb, "tools");
    let exec = run(&sb, ["exec", "npm.test", "--cwd", &cwd_arg(&dir), "--json"]);
    exec.expect_code(1);
    let answer = exec.json();
    assert_eq!(answer["status"], "failed", "{exec}");
    assert_eq!(answer["summary"], json!({"passed": 2, "failed": 2, "skipped": 1, "total": 5}), "{exec}");
    let peek = "Stack > peek > shows the top item";
    let pop = "Stack > pop on an empty stack returns undefined";
    let mut failed = failed_tests(&answer);
    failed.sort();
    assert_eq!(failed, [peek, pop], "each failed test once:{exec}");

    // The assertion's line in the test file; the throw's line in lib/, where the error began.
    let mut by_test = HashMap::new();
    for d in diagnostics(&answer) {
        let test = d["test"].as_str().unwrap_or_else(|| panic!("no test on {d}")).to_string();
        assert!(by_test.insert(test, d.clone()).is_none(), "one diagnostic per failed test:{exec}");
    }
    assert_eq!(by_test.len(), 2, "{exec}");
    let at = |d: &Value| (d["file"].as_str().unwrap_or("").to_string(), d["line"].as_u64(), d["column"].as_u64());
    assert_eq!(at(&by_test[peek]), ("test/stack.test.js".to_string(), Some(18), Some(24)), "{exec}");
    assert!(by_test[peek]["message"].as_str().unwrap().contains("expect(received).toBe(expected)"), "{exec}");
    assert_eq!(at(&by_test[pop]), ("lib/stack.js".to_string(), Some(12), Some(13)), "{exec}");
    assert_eq!(by_test[pop]["message"], "RangeError: pop from an empty stack", "{exec}");
    for d in by_test.values() {
        assert_eq!(d["severity"], "error", "{d}");
    }

    // The JSON report the plan asked for is an artifact; the log is still Jest's own report.
    let id = run_id(&answer);
    let report = sb.state().join("runs").join(&id).join("artifacts/jest.json");
    let report: Value =
        serde_json::from_slice(&std::fs::read(&report).expect("jest.json artifact")).expect("jest.json is JSON");
    assert_eq!((report["numFailedTests"].as_u64(), report["numTotalTests"].as_u64()), (Some(2), Some(5)));
    let lines = runs(&sb)[0]["lines"].as_u64().expect("line count");
    let log = log_lines(&sb, &id, 1, lines);
    assert!(log.iter().any(|l| l == &format!("  ● {}", peek.replace(" > ", " › "))), "{log:#?}");
    assert!(log.iter().any(|l| l.starts_with("Tests:       2 failed, 1 skipped, 2 passed, 5 total")), "{log:#?}");
    junit_names_every_test(&sb, &id, &[peek, pop]);
}

/// The JUnit report of run `id` has a case for each of the five tests Jest's or Vitest's JSON
/// report named, `failed` among them with their failures, each with the time the runner gave.
fn junit_names_every_test(sb: &Sandbox, id: &str, failed: &[&str]) {
    let report = run(sb, ["log", id, "--format", "junit"]);
    let cases = common::junit_cases(&report.text());
    let outcomes: Vec<&str> = cases.iter().map(|(_, _, inner)| inner.as_str()).collect();
    assert_eq!(cases.len(), 5, "{report}");
    assert_eq!(outcomes.iter().filter(|o| **o == "failure").count(), 2, "{report}");
    assert_eq!(outcomes.iter().filter(|o| **o == "skipped").count(), 1, "{report}");
    for test in failed {
        let case = cases.iter().find(|(name, _, _)| name == test).unwrap_or_else(|| panic!("no {test}:{report}"));
        assert_eq!(case.2, "failure", "{report}");
    }
    for (name, time, inner) in &cases {
        assert!(inner == "skipped" || time.parse::<f64>().is_ok(), "{name}: time {time:?}");
    }
}

/// The `<testcase>` elements of run `id`'s JUnit report: name, time, and the element inside.
fn junit_of(sb: &Sandbox, id: &str) -> Vec<(String, String, String)> {
    common::junit_cases(&run(sb, ["log", id, "--format", "junit"]).text())
}

/// Names and outcomes (`failure`, `skipped`, or empty for passed) of `cases`, in order.
fn outcomes(cases: &[(String, String, String)]) -> Vec<(&str, &str)> {
    cases.iter().map(|(name, _, inner)| (name.as_str(), inner.as_str())).collect()
}

#[test]
fn mocha_spec_output_names_every_test_in_junit_under_its_suites() {
    if !have_node() {
        return;
    }
    let sb = sandbox();
    let dir = project(&sb, "mocha-app");
    let exec = run(&sb, ["exec", "npm.test", "--cwd", &cwd_arg(&dir), "--json"]);
    exec.expect_code(1);
    let answer = exec.json();
    assert_eq!(answer["summary"]["passed"], 3, "{exec}");
    let cases = junit_of(&sb, &run_id(&answer));
    assert_eq!(
        outcomes(&cases),
        [
            ("Queue > starts empty", ""),
            ("Queue > drains in parallel", "skipped"),
            ("Queue > shift > returns the oldest item", ""),
            ("Queue > shift > returns the newest item", "failure"),
            ("Queue > shift > waits for a slow producer", ""),
        ],
        "{exec}"
    );
    // Mocha prints a time only for a slow test, and that one waits 120ms.
    let slow: f64 = cases[4].1.parse().unwrap_or_else(|e| panic!("time {:?}: {e}", cases[4].1));
    assert!(slow >= 0.1, "{cases:?}");
}

#[test]
fn node_test_tap_names_every_test_in_junit_but_not_its_describes() {
    if !have_node() {
        return;
    }
    let sb = sandbox();
    let dir = sources(&sb, "node-test-app");
    let exec = run(&sb, ["exec", "npm.test", "--cwd", &cwd_arg(&dir), "--json"]);
    exec.expect_code(1);
    let answer = exec.json();
    assert_eq!(answer["summary"]["passed"], 4, "{exec}");
    let cases = junit_of(&sb, &run_id(&answer));
    assert_eq!(
        outcomes(&cases),
        [
            ("cart > starts empty", ""),
            ("cart > totals > adds prices", ""),
            ("cart > totals > applies the coupon", "failure"),
            ("cart > ships abroad", "skipped"),
            ("checkout > charges the card", ""),
            ("checkout", ""),
        ],
        "{exec}"
    );
    for (name, time, _) in &cases {
        assert!(time.parse::<f64>().is_ok_and(|t| t > 0.0), "{name}: time {time:?}");
    }
}

#[test]
fn vitest_failures_carry_the_describe_path_the_failing_line_and_the_counts() {
    if !have_node() {
        return;
    }
    let sb = sandbox();
    let dir = project(&sb, "vitest-app");
    let exec = run(&sb, ["exec", "npm.test", "--cwd", &cwd_arg(&dir), "--json"]);
    exec.expect_code(1);
    let answer = exec.json();
    let log = stored_log(&sb, &run_id(&answer));
    assert_eq!(answer["status"], "failed", "{exec}{log}");
    assert_eq!(answer["summary"], json!({"passed": 2, "failed": 2, "skipped": 1, "total": 5}), "{exec}{log}");
    let whole = "money > cents > reads amounts without a decimal part";
    let remainder = "money > split > keeps the remainder";
    let mut failed = failed_tests(&answer);
    failed.sort();
    assert_eq!(failed, [whole, remainder], "each failed test once:{exec}{log}");

    let found: BTreeSet<_> = diagnostics(&answer)
        .iter()
        .map(|d| {
            let (severity, _, file, line, column) = located(d);
            (d["test"].as_str().unwrap_or("").to_string(), severity, file, line, column)
        })
        .collect();
    let expected = BTreeSet::from([
        // The throw inside src/, the top frame of the project's own code.
        (whole.to_string(), "error".to_string(), "src/money.ts".to_string(), 4, 11),
        (remainder.to_string(), "error".to_string(), "tests/money.test.ts".to_string(), 23, 30),
    ]);
    assert_eq!(found, expected, "{exec}{log}");
    let message = |test: &str| {
        let d = diagnostics(&answer).into_iter().find(|d| d["test"] == test).expect("diagnostic");
        d["message"].as_str().unwrap_or("").to_string()
    };
    assert!(message(whole).contains(r#"TypeError: not an amount: "7""#), "{exec}{log}");
    assert!(message(remainder).contains("expected [ 333, 333, 333 ] to deeply equal [ 334, 333, 333 ]"), "{exec}{log}");

    let report = sb.state().join("runs").join(run_id(&answer)).join("artifacts/vitest.json");
    assert!(report.is_file(), "no vitest.json artifact:{exec}");
    junit_names_every_test(&sb, &run_id(&answer), &[whole, remainder]);
}

#[test]
fn lint_reports_eslint_rule_ids_at_their_locations() {
    if !have_node() {
        return;
    }
    let sb = sandbox();
    let dir = project(&sb, "tools");
    let exec = run(&sb, ["exec", "npm.run", "--cwd", &cwd_arg(&dir), "--json", "--", "lint"]);
    exec.expect_code(1);
    let answer = exec.json();
    assert_eq!(answer["status"], "failed", "{exec}");
    assert_eq!((answer["errors"].as_u64(), answer["warnings"].as_u64()), (Some(3), Some(1)), "{exec}");
    // ESLint prints the absolute path; the answer names the file relative to the project.
    let found: BTreeSet<_> =
        diagnostics(&answer).iter().map(|d| (located(d), d["message"].as_str().unwrap_or("").to_string())).collect();
    let at = |severity: &str, line, column, rule: &str, message: &str| {
        ((severity.to_string(), rule.to_string(), "scripts/report.js".to_string(), line, column), message.to_string())
    };
    let expected = BTreeSet::from([
        at("error", 1, 7, "no-unused-vars", "'path' is assigned a value but never used"),
        at("error", 6, 20, "eqeqeq", "Expected '===' and instead saw '=='"),
        at("warning", 13, 5, "prefer-const", "'label' is never reassigned. Use 'const' instead"),
        at("error", 14, 30, "no-undef", "'rowz' is not defined"),
    ]);
    assert_eq!(found, expected, "{exec}");
}

#[test]
fn a_missing_script_is_refused_before_anything_runs() {
    let sb = sandbox();
    let dir = sources(&sb, "tools");
    let exec = run(&sb, ["exec", "npm.run", "--cwd", &cwd_arg(&dir), "--", "nope"]);
    exec.expect_code(125);
    assert!(exec.stdout.is_empty(), "{exec}");
    assert!(exec.stderr.contains(r#"no script "nope" in package.json; scripts: build, lint, test"#), "{exec}");
    assert!(runs(&sb).is_empty(), "a refused call stores no run");
}

#[test]
fn a_folder_without_package_json_is_a_clear_error() {
    let sb = sandbox();
    let dir = sb.work().join("empty");
    std::fs::create_dir(&dir).expect("create dir");
    for tool in ["npm.build", "npm.test"] {
        let exec = run(&sb, ["exec", tool, "--cwd", &cwd_arg(&dir)]);
        exec.expect_code(125);
        assert!(exec.stderr.contains(&format!("no package.json in {}", dir.display())), "{exec}");
        assert!(exec.stderr.contains("send the cwd of an npm project"), "{exec}");
    }
    assert!(runs(&sb).is_empty(), "a refused call stores no run");
}

#[test]
fn install_without_confirm_says_what_it_would_run_and_runs_nothing() {
    let sb = sandbox();
    let dir = sources(&sb, "local-dep");
    let exec = run(&sb, ["exec", "npm.install", "--cwd", &cwd_arg(&dir), "--", "--no-audit"]);
    exec.expect_code(125);
    assert!(exec.stderr.contains("npm.install changes the workspace, so nothing ran"), "{exec}");
    assert!(exec.stderr.contains("`npm install --no-audit`"), "names the exact command:{exec}");
    assert!(exec.stderr.contains("--confirm"), "says how to consent:{exec}");
    assert!(!dir.join("node_modules").exists(), "{exec}");
    assert!(runs(&sb).is_empty(), "nothing ran, so no run is stored");
}

#[test]
fn install_with_confirm_installs_the_local_dependency() {
    if !have_node() {
        return;
    }
    let sb = sandbox();
    let dir = sources(&sb, "local-dep");
    let exec = run(&sb, ["exec", "npm.install", "--confirm", "--cwd", &cwd_arg(&dir), "--json", "--", "--no-audit"]);
    exec.expect_code(0);
    let answer = exec.json();
    assert_eq!(answer["success"], true, "{exec}");
    assert_eq!(answer["errors"].as_u64(), Some(0), "{exec}");
    let installed = dir.join("node_modules/greet/index.js");
    let greet = std::fs::read_to_string(&installed).unwrap_or_else(|e| panic!("{}: {e}{exec}", installed.display()));
    assert!(greet.contains("hello"), "{greet}");
    let stored = runs(&sb);
    assert_eq!(stored.len(), 1, "{stored:#?}");
    assert_eq!(stored[0]["id"], run_id(&answer).as_str());
}

/// What `npm.exec` answered for `args` in fixture NAME, with its stored log for failure messages.
fn exec_tool(sb: &Sandbox, dir: &Path, args: &[&str], code: i32) -> (Value, String) {
    let cwd = cwd_arg(dir);
    let mut all = vec!["exec", "npm.exec", "--cwd", &cwd, "--json", "--"];
    all.extend_from_slice(args);
    let mut cmd = sb.command(&all);
    let userconfig = sb.config().join("npmrc");
    std::fs::write(&userconfig, "").expect("write empty npmrc");
    cmd.env("npm_config_userconfig", &userconfig);
    let exec = common::run_command(&mut cmd);
    exec.expect_code(code);
    let answer = exec.json();
    let log = stored_log(sb, &run_id(&answer));
    (answer, format!("{exec}{log}"))
}

#[test]
fn exec_runs_tsc_and_eslint_through_the_same_parsers_as_scripts() {
    if !have_node() {
        return;
    }
    let sb = sandbox();
    let dir = project(&sb, "tools");
    let (answer, shown) = exec_tool(&sb, &dir, &["tsc", "--noEmit", "-p", "."], 2);
    let found: BTreeSet<_> = diagnostics(&answer).iter().map(located).collect();
    let tsc =
        |file: &str, line, column, code: &str| ("error".to_string(), code.to_string(), file.to_string(), line, column);
    let expected = BTreeSet::from([
        tsc("src/shapes.ts", 23, 14, "TS2322"),
        tsc("src/shapes.ts", 27, 41, "TS2339"),
        tsc("src/total.ts", 8, 32, "TS2322"),
    ]);
    assert_eq!(found, expected, "{shown}");

    let (answer, shown) = exec_tool(&sb, &dir, &["eslint", "scripts"], 1);
    assert_eq!((answer["errors"].as_u64(), answer["warnings"].as_u64()), (Some(3), Some(1)), "{shown}");
    let rules: BTreeSet<_> = diagnostics(&answer).iter().map(|d| located(d).1).collect();
    assert_eq!(
        rules,
        BTreeSet::from(["eqeqeq", "no-undef", "no-unused-vars", "prefer-const"].map(String::from)),
        "{shown}"
    );
}

#[test]
fn exec_runs_vitest_with_its_failures_and_counts() {
    if !have_node() {
        return;
    }
    let sb = sandbox();
    let dir = project(&sb, "vitest-app");
    let (answer, shown) = exec_tool(&sb, &dir, &["vitest", "run"], 1);
    assert_eq!(answer["summary"], json!({"passed": 2, "failed": 2, "skipped": 1, "total": 5}), "{shown}");
    let mut failed = failed_tests(&answer);
    failed.sort();
    assert_eq!(
        failed,
        ["money > cents > reads amounts without a decimal part", "money > split > keeps the remainder"],
        "{shown}"
    );
}

#[test]
fn exec_of_a_program_the_project_lacks_is_refused_saying_what_to_do() {
    let sb = sandbox();
    let dir = sources(&sb, "tools");
    let exec = run(&sb, ["exec", "npm.exec", "--cwd", &cwd_arg(&dir), "--", "cowsay", "hi"]);
    exec.expect_code(125);
    assert!(exec.stderr.contains("`cowsay` is not installed in this project"), "{exec}");
    assert!(exec.stderr.contains("npm.install"), "says what to do:{exec}");
    assert!(runs(&sb).is_empty(), "nothing ran, so nothing was downloaded");
}

#[test]
fn start_that_throws_is_one_error_at_the_project_s_top_frame() {
    if !have_node() {
        return;
    }
    let sb = sandbox();
    let dir = sources(&sb, "start-crash");
    let exec = run(&sb, ["exec", "npm.run", "--cwd", &cwd_arg(&dir), "--json", "--", "start"]);
    exec.expect_code(1);
    let answer = exec.json();
    let found: Vec<_> = diagnostics(&answer).iter().map(|d| (located(d), d["message"].clone())).collect();
    let at = ("error".to_string(), String::new(), "src/totals.js".to_string(), 9, 28);
    assert_eq!(found, [(at, json!("TypeError: order.lines is not iterable"))], "{exec}");
}

#[test]
fn vite_build_names_the_unresolved_import_and_its_importer() {
    if !have_node() {
        return;
    }
    let sb = sandbox();
    let dir = project(&sb, "vitest-app");
    let exec = run(&sb, ["exec", "npm.build", "--cwd", &cwd_arg(&dir), "--json"]);
    exec.expect_code(1);
    let answer = exec.json();
    let log = stored_log(&sb, &run_id(&answer));
    let found: Vec<_> = diagnostics(&answer).iter().map(|d| (located(d), d["message"].clone())).collect();
    let at = ("error".to_string(), String::new(), "src/main.ts".to_string(), 0, 0);
    assert_eq!(found, [(at, json!("Rollup failed to resolve import \"chart-lib\""))], "{exec}{log}");
}
