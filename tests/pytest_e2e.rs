//! End to end with real pytest: the `buildvise` binary runs `pytest.run` through the pytest plugin
//! on copies of the fixture projects in `tests/fixtures/pytest/`, with a real virtual environment
//! holding a pinned pytest, and what it answers is checked against what pytest printed:
//! - `failures`: two passing and three failing tests (an assert, a KeyError raised in library
//!   code, a parametrized method in a class);
//! - `fixture_error`: a fixture that raises during setup, next to a passing test;
//! - `collection_error`: a SyntaxError and a missing import, so nothing runs;
//! - `skips`: three skips of different kinds with their reasons, and one pass;
//! - `doctest`: `--doctest-modules` (from `pytest.ini`) with one failing docstring example;
//! - `own_venv`: a test that passes only when run by the project's own `.venv` interpreter.
//!
//! The virtual environment is made once in `target/test-env/pytest-venv` (`python3 -m venv`, then
//! pip) and reused by later runs. Without python3 the tests skip (`common::skip`); a failed
//! download fails them.

// Real toolchains behind shell-script shims and links: Unix only.
#![cfg(unix)]

mod common;

use common::{Sandbox, junit_cases, root, run_command, run_id, setup_step, toolchains};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The shared virtual environment with pytest, made on first use; None when there is no python3.
fn pytest_venv() -> Option<&'static Path> {
    static VENV: OnceLock<Option<PathBuf>> = OnceLock::new();
    VENV.get_or_init(|| common::python_venv("pytest-venv", common::PYTEST_REQUIREMENT)).as_deref()
}

/// The cached venv, or None after skipping the test.
fn venv_or_skip() -> Option<&'static Path> {
    let venv = pytest_venv();
    if venv.is_none() {
        common::skip("python3 not found; the pytest end-to-end tests need it");
    }
    venv
}

fn site_packages(venv: &Path) -> PathBuf {
    let lib = venv.join("lib");
    std::fs::read_dir(&lib)
        .unwrap_or_else(|e| panic!("{}: {e}", lib.display()))
        .flatten()
        .map(|entry| entry.path().join("site-packages"))
        .find(|dir| dir.is_dir())
        .unwrap_or_else(|| panic!("no lib/python*/site-packages in {}", venv.display()))
}

fn sandbox() -> Sandbox {
    Sandbox::new(&[toolchains()])
}

/// A fresh copy of `tests/fixtures/pytest/NAME` in the sandbox: pytest writes caches next to
/// the sources, and the tests add virtual environments.
fn fixture(sb: &Sandbox, name: &str) -> PathBuf {
    let dest = sb.work().join(name);
    common::copy_tree(&root().join("tests/fixtures/pytest").join(name), &dest);
    dest
}

/// `exec pytest.run` in `dir` at full detail, with `VIRTUAL_ENV` set to `venv` or unset.
fn exec(sb: &Sandbox, dir: &Path, venv: Option<&Path>, pytest_args: &[&str]) -> common::Run {
    let mut cmd = sb.command(["exec", "pytest.run", "--cwd", dir.to_str().expect("UTF-8 path"), "--detail", "full"]);
    cmd.arg("--json");
    if !pytest_args.is_empty() {
        cmd.arg("--").args(pytest_args);
    }
    // What the developer's shell has set would change which interpreter runs and what it prints.
    cmd.env_remove("VIRTUAL_ENV").env_remove("PYTEST_ADDOPTS").env_remove("PYTHONPATH");
    if let Some(venv) = venv {
        cmd.env("VIRTUAL_ENV", venv);
    }
    run_command(&mut cmd)
}

/// What and where, for comparing sets of diagnostics: severity, code, file, line, test, message.
type Located = (String, String, String, u64, String, String);

fn located(d: &Value) -> Located {
    let s = |k: &str| d[k].as_str().unwrap_or("").to_string();
    (s("severity"), s("code"), s("file"), d["line"].as_u64().unwrap_or(0), s("test"), s("message"))
}

fn loc(severity: &str, code: &str, file: &str, line: u64, test: &str, message: &str) -> Located {
    (severity.into(), code.into(), file.into(), line, test.into(), message.into())
}

fn diagnostics(answer: &Value) -> BTreeSet<Located> {
    answer["diagnostics"].as_array().into_iter().flatten().map(located).collect()
}

fn failed_tests(answer: &Value) -> Vec<&str> {
    answer["failedTests"].as_array().into_iter().flatten().filter_map(Value::as_str).collect()
}

/// The stored record of the newest run, as `runs --json` lists it.
fn newest_run(sb: &Sandbox) -> Value {
    let runs = sb.run(["runs", "--json"]);
    runs.expect_code(0);
    runs.json()[0].clone()
}

fn summary(passed: u64, failed: u64, skipped: u64, errors: u64) -> Value {
    json!({
        "passed": passed, "failed": failed, "skipped": skipped,
        "total": passed + failed + skipped + errors,
        "errors": errors, "xfailed": 0, "xpassed": 0,
    })
}

#[test]
fn failures_are_located_at_the_raising_line_with_exact_node_ids() {
    let Some(venv) = venv_or_skip() else { return };
    let sb = sandbox();
    let dir = fixture(&sb, "failures");
    let run = exec(&sb, &dir, Some(venv), &[]);
    run.expect_code(1);
    let answer = run.json();
    assert_eq!(answer["status"], "failed", "{run}");
    assert_eq!(answer["success"], false, "{run}");
    assert_eq!(answer["summary"], summary(2, 3, 0, 0), "{run}");
    assert_eq!((answer["errors"].as_u64(), answer["warnings"].as_u64()), (Some(3), Some(0)), "{run}");

    // Each failure sits at the closing `path:line: ExcType` line: the KeyError one in the library
    // module the test called, not in the test.
    let expected = BTreeSet::from([
        loc(
            "error",
            "AssertionError",
            "test_inventory.py",
            11,
            "test_inventory.py::test_restock_total_is_wrong",
            "assert 3 == 4",
        ),
        loc(
            "error",
            "KeyError",
            "inventory.py",
            11,
            "test_inventory.py::test_unknown_item_has_no_stock",
            "KeyError: 'pear'",
        ),
        loc(
            "error",
            "AssertionError",
            "test_inventory.py",
            21,
            "test_inventory.py::TestHalf::test_half[3-1.5]",
            "assert 1 == 1.5",
        ),
    ]);
    assert_eq!(diagnostics(&answer), expected, "{run}");
    assert_eq!(
        failed_tests(&answer),
        [
            "test_inventory.py::test_restock_total_is_wrong",
            "test_inventory.py::test_unknown_item_has_no_stock",
            "test_inventory.py::TestHalf::test_half[3-1.5]",
        ],
        "{run}"
    );

    // The interpreter was the one VIRTUAL_ENV names.
    let meta = newest_run(&sb);
    assert_eq!(meta["id"], run_id(&answer).as_str());
    assert_eq!(meta["program"], venv.join("bin/python").to_str().unwrap(), "{meta:#}");
}

#[test]
fn the_junit_report_names_every_test_with_its_time_from_pytests_own_report() {
    let Some(venv) = venv_or_skip() else { return };
    let sb = sandbox();
    let dir = fixture(&sb, "failures");
    let answer = exec(&sb, &dir, Some(venv), &[]).json();
    let report = sb.run(["log", &run_id(&answer), "--format", "junit"]);
    report.expect_code(0);
    let cases = junit_cases(&report.text());
    let named: Vec<(&str, &str)> = cases.iter().map(|(name, _, inner)| (name.as_str(), inner.as_str())).collect();
    // Passing tests by the id their class name gives, failures by the terminal's node id, each
    // once, its failure inside: the order is pytest's.
    assert_eq!(
        named,
        [
            ("test_inventory.py::test_restock_adds", ""),
            ("test_inventory.py::test_restock_total_is_wrong", "failure"),
            ("test_inventory.py::test_unknown_item_has_no_stock", "failure"),
            ("test_inventory.py::TestHalf::test_half[4-2]", ""),
            ("test_inventory.py::TestHalf::test_half[3-1.5]", "failure"),
        ],
        "{report}"
    );
    // pytest times every test; a time is seconds, never blank.
    for (name, time, _) in &cases {
        assert!(time.parse::<f64>().is_ok_and(|t| t >= 0.0), "{name}: time {time:?}");
    }
}

#[test]
fn a_fixture_error_counts_as_an_error_not_a_failure() {
    let Some(venv) = venv_or_skip() else { return };
    let sb = sandbox();
    let dir = fixture(&sb, "fixture_error");
    let run = exec(&sb, &dir, Some(venv), &[]);
    run.expect_code(1);
    let answer = run.json();
    assert_eq!(answer["status"], "failed", "{run}");
    assert_eq!(answer["summary"], summary(1, 0, 0, 1), "{run}");
    assert_eq!(
        diagnostics(&answer),
        BTreeSet::from([loc(
            "error",
            "ConnectionError",
            "test_orders.py",
            6,
            "test_orders.py::test_query_orders",
            "ConnectionError: database is down",
        )]),
        "{run}"
    );
    // pytest reports it as ERROR, not FAILED.
    assert!(failed_tests(&answer).is_empty(), "{run}");
    let notes = &answer["diagnostics"][0]["notes"];
    assert!(notes.as_array().into_iter().flatten().any(|n| n.as_str().is_some_and(|n| n.contains("setup"))), "{run}");
}

#[test]
fn collection_errors_stop_the_run_before_any_test() {
    let Some(venv) = venv_or_skip() else { return };
    let sb = sandbox();
    let dir = fixture(&sb, "collection_error");
    let run = exec(&sb, &dir, Some(venv), &[]);
    // pytest's exit code for "interrupted": the one good module never ran.
    run.expect_code(2);
    let answer = run.json();
    assert_eq!(answer["status"], "failed", "{run}");
    assert_eq!(answer["summary"], summary(0, 0, 0, 2), "{run}");
    assert_eq!(
        diagnostics(&answer),
        BTreeSet::from([
            loc(
                "error",
                "ModuleNotFoundError",
                "test_imports.py",
                1,
                "",
                "ModuleNotFoundError: No module named 'buildvise_missing_module'",
            ),
            loc("error", "SyntaxError", "test_syntax.py", 2, "", "SyntaxError: invalid syntax"),
        ]),
        "{run}"
    );
    assert!(failed_tests(&answer).is_empty(), "{run}");
}

#[test]
fn a_failing_doctest_is_located_at_its_example_with_expected_and_got() {
    let Some(venv) = venv_or_skip() else { return };
    let sb = sandbox();
    let dir = fixture(&sb, "doctest");
    let run = exec(&sb, &dir, Some(venv), &[]);
    run.expect_code(1);
    let answer = run.json();
    assert_eq!(answer["summary"], summary(2, 1, 0, 0), "{run}");
    assert_eq!(
        diagnostics(&answer),
        BTreeSet::from([loc(
            "error",
            "DocTestFailure",
            "inventory/stock.py",
            9,
            "inventory/stock.py::inventory.stock.restock",
            "expected 5, got 4",
        )]),
        "{run}"
    );
    assert_eq!(failed_tests(&answer), ["inventory/stock.py::inventory.stock.restock"], "{run}");
}

#[test]
fn skips_carry_their_reasons_and_count_in_the_summary() {
    let Some(venv) = venv_or_skip() else { return };
    let sb = sandbox();
    let dir = fixture(&sb, "skips");
    // `-ra` makes pytest print each skip's location and reason.
    let run = exec(&sb, &dir, Some(venv), &["-ra"]);
    run.expect_code(0);
    let answer = run.json();
    assert_eq!(answer["status"], "ok", "{run}");
    assert_eq!(answer["success"], true, "{run}");
    assert_eq!(answer["summary"], summary(1, 0, 3, 0), "{run}");
    assert_eq!((answer["errors"].as_u64(), answer["warnings"].as_u64()), (Some(0), Some(0)), "{run}");
    // Markers are located at the decorator, `pytest.skip()` at its call.
    assert_eq!(
        diagnostics(&answer),
        BTreeSet::from([
            loc("info", "SKIPPED", "test_platform.py", 6, "", "exporter not written yet"),
            loc("info", "SKIPPED", "test_platform.py", 11, "", "only on Python 2"),
            loc("info", "SKIPPED", "test_platform.py", 17, "", "no network in the sandbox"),
        ]),
        "{run}"
    );

    let text_run = sb.run(["log", &run_id(&answer), "--detail", "standard"]);
    text_run.expect_code(0);
    assert!(text_run.text().starts_with("ok · tests 1 passed, 3 skipped · run "), "{text_run}");
}

/// Makes `DIR/.venv` without pip; with `with_pytest`, its site-packages is the shared venv's, so
/// pytest imports there without a second download.
fn make_project_venv(dir: &Path, shared: &Path, with_pytest: bool) -> PathBuf {
    let venv = dir.join(".venv");
    setup_step(Command::new("python3").args(["-m", "venv", "--without-pip"]).arg(&venv));
    if with_pytest {
        let own = site_packages(&venv);
        std::fs::remove_dir(&own).unwrap_or_else(|e| panic!("{}: {e}", own.display()));
        std::os::unix::fs::symlink(site_packages(shared), &own).expect("link site-packages");
    }
    venv
}

#[test]
fn the_projects_own_venv_runs_with_or_without_virtual_env() {
    let Some(shared) = venv_or_skip() else { return };
    let sb = sandbox();
    let dir = fixture(&sb, "own_venv");
    let venv = make_project_venv(&dir, shared, true);
    let python = venv.join("bin/python");

    // The fixture's test fails unless `sys.prefix` is the project's `.venv`.
    for active in [None, Some(shared)] {
        let run = exec(&sb, &dir, active, &[]);
        run.expect_code(0);
        let answer = run.json();
        assert_eq!(answer["status"], "ok", "VIRTUAL_ENV {active:?}:{run}");
        assert_eq!(answer["summary"], summary(1, 0, 0, 0), "{run}");
        let meta = newest_run(&sb);
        assert_eq!(meta["id"], run_id(&answer).as_str());
        assert_eq!(meta["program"], python.to_str().unwrap(), "VIRTUAL_ENV {active:?}: {meta:#}");
    }
}

#[test]
fn a_project_venv_without_pytest_is_refused_with_the_pip_fix() {
    let Some(shared) = venv_or_skip() else { return };
    let sb = sandbox();
    let dir = fixture(&sb, "own_venv");
    make_project_venv(&dir, shared, false);
    let run = exec(&sb, &dir, Some(shared), &[]);
    run.expect_code(125);
    assert!(run.stdout.is_empty(), "{run}");
    assert!(
        run.stderr.contains("pytest is not installed for .venv/bin/python")
            && run.stderr.contains("`.venv/bin/python -m pip install pytest`"),
        "{run}"
    );
    // Nothing ran, so nothing was stored.
    assert_eq!(sb.run(["runs", "--json"]).json(), json!([]));
}

#[test]
fn a_project_venv_that_reaches_pytest_through_a_pth_file_runs() {
    let Some(shared) = venv_or_skip() else { return };
    let sb = sandbox();
    let dir = fixture(&sb, "own_venv");
    let venv = make_project_venv(&dir, shared, false);
    // How editable installs and shared package dirs put pytest on the path: site-packages holds
    // only a `.pth` file naming the directory that has it.
    let pth = site_packages(&venv).join("shared.pth");
    std::fs::write(&pth, format!("{}\n", site_packages(shared).display())).expect("write .pth");
    let run = exec(&sb, &dir, None, &[]);
    run.expect_code(0);
    assert_eq!(run.json()["summary"], summary(1, 0, 0, 0), "{run}");
    assert_eq!(newest_run(&sb)["program"], venv.join("bin/python").to_str().unwrap());
}

#[test]
fn a_project_venv_that_runs_without_pytest_names_the_pip_fix() {
    let Some(shared) = venv_or_skip() else { return };
    let sb = sandbox();
    let dir = fixture(&sb, "own_venv");
    let venv = make_project_venv(&dir, shared, false);
    // A `.pth` file may bring pytest, so the plan lets the run start; this one names an empty
    // directory, and it is Python that says pytest is missing.
    let empty = dir.join("no-packages");
    std::fs::create_dir(&empty).expect("create dir");
    std::fs::write(site_packages(&venv).join("empty.pth"), format!("{}\n", empty.display())).expect("write .pth");
    let run = exec(&sb, &dir, None, &[]);
    run.expect_code(1);
    let answer = run.json();
    let errors: Vec<&Value> =
        answer["diagnostics"].as_array().into_iter().flatten().filter(|d| d["severity"] == "error").collect();
    assert_eq!(errors.len(), 1, "{run}");
    assert_eq!(
        (&errors[0]["message"], &errors[0]["code"]),
        (&json!("No module named pytest"), &json!("ModuleNotFoundError"))
    );
    assert_eq!(
        errors[0]["notes"],
        json!([
            "pytest is not installed for .venv/bin/python; install it with `.venv/bin/python -m pip install pytest` \
             and run again"
        ]),
        "{run}"
    );
}

#[test]
fn the_junit_report_is_kept_in_the_runs_artifact_dir() {
    let Some(venv) = venv_or_skip() else { return };
    let sb = sandbox();
    let dir = fixture(&sb, "failures");
    let run = exec(&sb, &dir, Some(venv), &[]);
    run.expect_code(1);
    let id = run_id(&run.json());

    let report = sb.state().join("runs").join(&id).join("artifacts/junit.xml");
    let meta = newest_run(&sb);
    let flag = format!("--junitxml={}", report.display());
    assert!(meta["args"].as_array().unwrap().iter().any(|a| a == flag.as_str()), "{flag} not in {meta:#}");
    let xml = std::fs::read_to_string(&report).unwrap_or_else(|e| panic!("{}: {e}", report.display()));
    assert!(xml.contains(r#"tests="5""#) && xml.contains(r#"failures="3""#), "{xml}");
    for name in ["test_restock_total_is_wrong", "test_unknown_item_has_no_stock", "test_half[3-1.5]"] {
        assert!(xml.contains(&format!(r#"name="{name}""#)), "{name} missing from {xml}");
    }
    // The project stays clean: the report is the run's, not the project's.
    assert!(!dir.join("junit.xml").exists());
}
