//! End to end, the edit → rerun → read loop: the `buildvise` binary reruns a real toolchain after
//! an edit, and its answer says what the edit fixed, broke and left alone.
//! - cargo, over MCP: `tests/fixtures/cargo/history` has three errors; `src/lib.rs.next`, the
//!   edit, moves every line, fixes one and makes another;
//! - pytest, from the CLI: `tests/fixtures/pytest/history` has three failing tests;
//!   `test_calc.py.next` fixes one and breaks the passing one;
//! - a pytest test that fails and passes by turns is called flaky by `runs`.
//!
//! Then `buildvise diff` and `buildvise runs --tool --failed` on those runs, text and JSON. Each
//! rerun's answer is an `insta` snapshot, run ids replaced by their order.

mod common;

use common::mcp::connect;
use common::{Sandbox, root, run_command, toolchains};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// `text` with each run id replaced by `<run N>` (N its place in `ids`), and the seconds a slow
/// machine adds to a header removed, so that snapshots hold what does not vary.
fn stable(text: &str, ids: &[&str]) -> String {
    let mut text = text.to_string();
    for (n, id) in ids.iter().enumerate() {
        text = text.replace(id, &format!("<run {}>", n + 1));
    }
    regex::Regex::new(r" · \d+s").unwrap().replace_all(&text, "").into_owned()
}

/// Applies the fixture's edit: `FILE.next` replaces `FILE`.
fn edit(dir: &Path, file: &str) {
    std::fs::rename(dir.join(format!("{file}.next")), dir.join(file)).expect("apply the edit");
}

fn path_arg(dir: &Path) -> String {
    dir.to_str().expect("UTF-8 path").to_string()
}

#[tokio::test]
async fn a_cargo_rerun_says_what_the_edit_fixed_and_marks_what_it_broke() {
    let sb = Sandbox::new(&[toolchains()]);
    let dir = sb.cargo_fixture("history");
    let session = connect(&sb, &[]).await;
    let check = json!({"action": "exec", "tool": "cargo.check", "cwd": path_arg(&dir)});

    let (first, first_json) = session.ok(check.clone()).await;
    let first_id = first_json["runId"].as_str().expect("runId").to_string();
    assert!(!first.contains("vs "), "a first run compares with nothing:\n{first}");
    assert_eq!(first_json["errors"], 3, "{first}");

    edit(&dir, "src/lib.rs");
    let (second, second_json) = session.ok(check.clone()).await;
    let second_id = second_json["runId"].as_str().expect("runId").to_string();
    let ids = [first_id.as_str(), second_id.as_str()];
    assert_eq!(second.lines().nth(1), Some(format!("vs {first_id}: 1 fixed, 1 new, 2 still").as_str()), "{second}");
    let new: Vec<&str> = second.lines().filter(|l| l.starts_with("new ")).collect();
    assert_eq!(new, ["new src/lib.rs:13:9 E0425 cannot find value `factor` in this scope"], "{second}");
    assert_eq!(second_json["vs"], json!({"run": first_id, "fixed": 1, "new": 1, "still": 2}));
    let marked: Vec<&Value> =
        second_json["diagnostics"].as_array().expect("diagnostics").iter().filter(|d| d["new"] == true).collect();
    assert_eq!(marked.len(), 1, "{second_json:#}");
    insta::assert_snapshot!("cargo_rerun_standard", stable(&second, &ids));

    // The stored answer says it again, and in full names what was fixed.
    let (again, _) = session.ok(json!({"action": "log", "runId": second_id, "detail": "standard"})).await;
    assert_eq!(again, second);
    let (full, full_json) = session.ok(json!({"action": "log", "runId": second_id, "detail": "full"})).await;
    let fixed = full.split("fixed:\n").nth(1).unwrap_or_else(|| panic!("no fixed list:\n{full}"));
    assert!(fixed.starts_with("  src/lib.rs:2:22 E0308 mismatched types (expected `usize`, found `u32`)\n"), "{full}");
    assert_eq!(full_json["vs"]["fixedProblems"][0]["line"], 2, "{full_json:#}");
    let (summary, _) = session.ok(json!({"action": "log", "runId": second_id, "detail": "summary"})).await;
    assert_eq!(summary.lines().nth(1), Some(format!("vs {first_id}: 1 fixed, 1 new, 2 still").as_str()));
    session.close().await;

    // `diff` lists each problem; JSON has the same three lists.
    let diff = sb.run(["diff", &first_id, &second_id]);
    diff.expect_code(0);
    insta::assert_snapshot!("cargo_diff", stable(&diff.text(), &ids));
    let diff_json = sb.run(["diff", &first_id, &second_id, "--json"]).json();
    let messages = |list: &str| -> Vec<String> {
        diff_json[list].as_array().expect(list).iter().map(|d| d["message"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(messages("fixed"), ["mismatched types (expected `usize`, found `u32`)"]);
    assert_eq!(messages("new"), ["cannot find value `factor` in this scope"]);
    assert_eq!(messages("still").len(), 2);

    // Fix everything: a third run succeeds, and `runs --failed` leaves it out.
    std::fs::write(dir.join("src/lib.rs"), "pub fn total(items: &[u32]) -> usize {\n    items.len()\n}\n")
        .expect("write the fix");
    let fixed_run = sb.run(["exec", "cargo.check", "--cwd", &path_arg(&dir)]);
    fixed_run.expect_code(0);
    assert!(fixed_run.text().contains(&format!("vs {second_id}: 3 fixed")), "{fixed_run}");
    let failed = sb.run(["runs", "--tool", "cargo.check", "--failed", "--json"]).json();
    let listed: Vec<&str> = failed.as_array().expect("runs").iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(listed, [second_id.as_str(), first_id.as_str()]);
    assert_eq!(
        failed[0]["tally"],
        json!({
            "success": false, "errors": 3, "warnings": 0,
            "vs": {"run": first_id, "fixed": 1, "new": 1, "still": 2},
        })
    );
    let text = sb.run(["runs", "--tool", "cargo", "--failed"]);
    let text = stable(&text.text(), &ids);
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(rows.len(), 3, "{text}");
    assert!(rows[0].starts_with("run ") && rows[0].contains(" compared "), "{text}");
    assert!(rows[1].starts_with("<run 2>  cargo.check  exit 101") && rows[1].contains("3 errors"), "{text}");
    assert!(rows[1].contains("<run 1>: 1 fixed, 1 new, 2 still"), "{text}");
    assert!(sb.run(["runs", "--tool", "pytest", "--failed"]).text().starts_with("no runs"));
}

/// The shared virtual environment with pytest; None (after skipping the test) when there is no
/// python3.
fn pytest_venv() -> Option<PathBuf> {
    let venv = common::python_venv("pytest-venv", "pytest==9.2.0");
    if venv.is_none() {
        common::skip("python3 not found; the pytest history tests need it");
    }
    venv
}

fn pytest(sb: &Sandbox, dir: &Path, venv: &Path, json: bool) -> common::Run {
    let mut cmd = sb.command(["exec", "pytest.run", "--cwd", &path_arg(dir)]);
    if json {
        cmd.arg("--json");
    }
    cmd.env_remove("PYTEST_ADDOPTS").env_remove("PYTHONPATH").env("VIRTUAL_ENV", venv);
    run_command(&mut cmd)
}

fn pytest_fixture(sb: &Sandbox, name: &str) -> PathBuf {
    let dest = sb.work().join(name);
    common::copy_tree(&root().join("tests/fixtures/pytest").join(name), &dest);
    dest
}

#[test]
fn a_pytest_rerun_says_which_tests_the_edit_fixed_and_which_it_broke() {
    let Some(venv) = pytest_venv() else { return };
    let sb = Sandbox::new(&[toolchains()]);
    let dir = pytest_fixture(&sb, "history");
    let first = pytest(&sb, &dir, &venv, true);
    first.expect_code(1);
    let first_id = common::run_id(&first.json());

    edit(&dir, "test_calc.py");
    let second = pytest(&sb, &dir, &venv, false);
    second.expect_code(1);
    let second_id = common::header_id(&second);
    let ids = [first_id.as_str(), second_id.as_str()];
    let text = second.text();
    assert_eq!(text.lines().nth(1), Some(format!("vs {first_id}: 1 fixed, 1 new, 2 still").as_str()), "{second}");
    let new: Vec<&str> = text.lines().filter(|l| l.starts_with("new ")).collect();
    assert_eq!(new.len(), 1, "{text}");
    assert!(new[0].starts_with("new test_calc.py:10 AssertionError ::test_add: "), "{text}");
    insta::assert_snapshot!("pytest_rerun_standard", stable(&text, &ids));

    let diff = sb.run(["diff", &first_id, &second_id]);
    diff.expect_code(0);
    insta::assert_snapshot!("pytest_diff", stable(&diff.text(), &ids));
    let diff_json = sb.run(["diff", &first_id, &second_id, "--json"]).json();
    let tests = |list: &str| -> Vec<String> {
        diff_json[list].as_array().expect(list).iter().map(|d| d["test"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(tests("fixed"), ["test_calc.py::test_add_wrong"]);
    assert_eq!(tests("new"), ["test_calc.py::test_add"]);
    assert_eq!(tests("still"), ["test_calc.py::test_sub", "test_calc.py::test_mul"]);

    let runs = sb.run(["runs", "--tool", "pytest.run", "--failed", "--json"]).json();
    assert_eq!(runs[0]["id"], second_id);
    assert_eq!(runs[0]["tally"]["tests"], json!([1, 3]));
    assert_eq!(runs[0]["tally"]["vs"], json!({"run": first_id, "fixed": 1, "new": 1, "still": 2}));
    let text = stable(&sb.run(["runs", "--tool", "pytest.run", "--failed"]).text(), &ids);
    assert!(
        text.lines().nth(1).is_some_and(|r| r.contains("1 passed, 3 failed  <run 1>: 1 fixed, 1 new, 2 still")),
        "{text}"
    );
}

#[test]
fn a_test_that_fails_and_passes_by_turns_is_called_flaky() {
    let Some(venv) = pytest_venv() else { return };
    let sb = Sandbox::new(&[toolchains()]);
    let dir = sb.work().join("flaky");
    std::fs::create_dir_all(&dir).expect("project dir");
    std::fs::write(dir.join("pytest.ini"), "[pytest]\n").expect("pytest.ini");
    // Fails on the first and third run, passes on the second, with nothing edited.
    std::fs::write(
        dir.join("test_turns.py"),
        "import pathlib\n\n\ndef test_steady():\n    assert True\n\n\n\
         def test_turns():\n    runs = pathlib.Path(__file__).with_name('runs.txt')\n    \
         n = int(runs.read_text()) if runs.exists() else 0\n    runs.write_text(str(n + 1))\n    \
         assert n % 2 == 1\n",
    )
    .expect("test_turns.py");
    for code in [1, 0, 1] {
        pytest(&sb, &dir, &venv, false).expect_code(code);
    }
    let text = sb.run(["runs", "--tool", "pytest.run"]).text();
    let flaky: Vec<&str> = text.lines().filter(|l| l.trim_start().starts_with("flaky:")).collect();
    assert_eq!(flaky, ["  flaky: test_turns.py::test_turns (failed 2 of the last 3 runs)"], "{text}");
    let runs = sb.run(["runs", "--json"]).json();
    assert_eq!(runs[0]["flaky"], json!([{"test": "test_turns.py::test_turns", "failed": 2, "runs": 3}]));
    assert_eq!(runs[1].get("flaky"), None, "said once, under the newest run: {runs:#}");
}

#[test]
fn processes_finishing_runs_of_one_command_at_once_each_find_a_previous_run() {
    let sb = Sandbox::new(&[common::test_plugins()]);
    let exec = || sb.command(["exec", "panicky.sh", "--json", "--", "echo 'error: still broken'; exit 1"]);
    run_command(&mut exec()).expect_code(1);
    let children: Vec<_> =
        (0..6).map(|_| exec().stdout(std::process::Stdio::piped()).spawn().expect("spawn")).collect();
    let answers: Vec<Value> = children
        .into_iter()
        .map(|child| serde_json::from_slice(&child.wait_with_output().expect("exec ends").stdout).expect("JSON"))
        .collect();
    // The index serialises them: each compares with exactly one earlier run, none twice.
    let mut previous: Vec<&str> = answers.iter().map(|a| a["vs"]["run"].as_str().expect("a vs")).collect();
    previous.sort();
    previous.dedup();
    assert_eq!(previous.len(), 6, "{answers:#?}");
    assert!(answers.iter().all(|a| a["vs"]["still"] == 1), "{answers:#?}");
    let commands = std::fs::read_dir(sb.state().join("commands")).expect("commands/").count();
    assert_eq!(commands, 1);
}

#[test]
fn a_fixed_test_that_still_warns_is_fixed_and_a_new_flag_compares_with_the_last_run() {
    let Some(venv) = pytest_venv() else { return };
    let sb = Sandbox::new(&[toolchains()]);
    let dir = sb.work().join("warns");
    std::fs::create_dir_all(&dir).unwrap();
    // Each test warns and two fail: fixing both leaves the warnings, which are problems of their
    // own, not the failures still there.
    let source = "import warnings\n\n\ndef old():\n    warnings.warn(\"old() is going away\", DeprecationWarning)\n    return 2\n\n\n\
                  def test_a():\n    assert old() == 3\n\n\ndef test_b():\n    assert old() == 4\n\n\ndef test_c():\n    assert old() == 2\n";
    std::fs::write(dir.join("test_warns.py"), source).unwrap();
    let first = pytest(&sb, &dir, &venv, true);
    first.expect_code(1);
    let first_id = common::run_id(&first.json());

    std::fs::write(dir.join("test_warns.py"), source.replace("== 3", "== 2").replace("== 4", "== 2")).unwrap();
    let second = pytest(&sb, &dir, &venv, false);
    second.expect_code(0);
    let second_id = common::header_id(&second);
    let vs = |run: &common::Run| run.text().lines().find(|l| l.starts_with("vs ")).map(str::to_string);
    assert_eq!(vs(&second), Some(format!("vs {first_id}: 2 fixed, 3 still")), "{second}");

    // A flag the agent adds makes a command with no run yet: it is compared with the last run of
    // pytest.run here, which the answer names with its arguments.
    let mut cmd = sb.command(["exec", "pytest.run", "--cwd", &path_arg(&dir), "--", "-q"]);
    cmd.env_remove("PYTEST_ADDOPTS").env_remove("PYTHONPATH").env("VIRTUAL_ENV", &venv);
    let third = run_command(&mut cmd);
    third.expect_code(0);
    assert_eq!(vs(&third), Some(format!("vs {second_id} (no args): 3 still")), "{third}");
}
