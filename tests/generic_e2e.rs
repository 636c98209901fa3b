//! End to end with the generic plugin's default tools and real programs on the fixture projects
//! of `tests/fixtures/generic/`: `make` on a C project (a compile error; a link error), `go.test`
//! on a module (a failing test; a package that does not compile), and `python.mypy` and
//! `python.ruff` on a Python package, with mypy and ruff from a venv under `target/`.

mod common;

use common::{Sandbox, codes, copy_tree, findings, junit_cases, python_venv, root, run_command, toolchains};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn sandbox() -> Sandbox {
    Sandbox::new(&[toolchains()])
}

/// A fresh copy of `tests/fixtures/generic/NAME` under the sandbox's work dir.
fn fixture(sb: &Sandbox, name: &str) -> PathBuf {
    let dest = sb.work().join(name);
    copy_tree(&root().join("tests/fixtures/generic").join(name), &dest);
    dest
}

/// True when `program` can be started; otherwise skips the test. Whether it exits 0 does not
/// matter: `go --version` is an error, and go is installed all the same.
fn installed(program: &str) -> bool {
    let found = Command::new(program).arg("--version").stdin(Stdio::null()).output().is_ok();
    if !found {
        common::skip(&format!("`{program}` is not installed"));
    }
    found
}

fn cwd(dir: &Path) -> &str {
    dir.to_str().expect("UTF-8 path")
}

#[test]
fn make_reports_the_compilers_error_and_the_linkers() {
    if !installed("make") || !installed("cc") {
        return;
    }
    let sb = sandbox();
    let dir = fixture(&sb, "c-project");
    let exec = sb.run(["exec", "make", "--cwd", cwd(&dir), "--json"]);
    exec.expect_code(2);
    let errors: Vec<_> = findings(&exec.json()).into_iter().filter(|d| d.0 == "error").collect();
    assert_eq!(errors.len(), 1, "the compiler's error, not make's `Error 1` that repeats it:{exec}");
    assert_eq!((errors[0].1.as_str(), errors[0].2), ("main.c", 7), "{exec}");
    assert!(errors[0].3.contains("undefined_name") && errors[0].3.contains("undeclared"), "{exec}");

    let link = sb.run(["exec", "make", "--cwd", cwd(&dir), "--json", "--", "link"]);
    link.expect_code(2);
    let errors: Vec<_> = findings(&link.json()).into_iter().filter(|d| d.0 == "error").collect();
    assert_eq!(errors.len(), 1, "{link}");
    assert_eq!(errors[0].1, "linkmain.c", "the undefined reference is the source file's:{link}");
    assert!(errors[0].3.contains("undefined reference to `compute'"), "{link}");
}

#[test]
fn go_test_reports_the_failing_test_and_the_package_that_did_not_build() {
    if !installed("go") {
        return;
    }
    let sb = sandbox();
    let dir = fixture(&sb, "go-module");
    // Go's caches stay under target/, not in the home directory.
    let cache = root().join("target/test-env/go-cache");
    let mut cmd = sb.command(["exec", "go.test", "--cwd", cwd(&dir), "--json"]);
    cmd.env("GOCACHE", &cache).env("GOFLAGS", "-mod=mod").env("GOTOOLCHAIN", "local");
    let exec = run_command(&mut cmd);
    // A package that does not build makes go exit 2 where a failing test alone gives 1, at least
    // up to go 1.19; later releases may give 1 for both.
    assert!(matches!(exec.code, Some(1 | 2)), "{exec}");
    let answer = exec.json();
    let errors: Vec<_> = findings(&answer).into_iter().filter(|d| d.0 == "error").collect();
    assert!(
        errors.iter().any(|d| d.1 == "shapes/area.go" && d.2 == 8 && d.3.contains("undefined: factor")),
        "the compile error:{exec}"
    );
    assert!(
        errors.iter().any(|d| d.1 == "geom/geom_test.go" && d.2 == 7 && d.3.contains("Perimeter(2, 3) = 5, want 10")),
        "the failing test at its line:{exec}"
    );
    let failed: Vec<&str> = answer["failedTests"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    assert!(failed.iter().any(|t| t.ends_with("TestPerimeter")), "{exec}");
}

#[test]
fn go_test_v_names_every_leaf_test_in_the_junit_report() {
    if !installed("go") {
        return;
    }
    let sb = sandbox();
    let dir = fixture(&sb, "go-module");
    let cache = root().join("target/test-env/go-cache");
    let args = ["exec", "go.test", "--cwd", cwd(&dir), "--format", "junit", "--", "-v", "./geom/"];
    let mut cmd = sb.command(args);
    cmd.env("GOCACHE", &cache).env("GOFLAGS", "-mod=mod").env("GOTOOLCHAIN", "local");
    let exec = run_command(&mut cmd);
    assert_eq!(exec.code, Some(1), "{exec}");
    let cases = junit_cases(&exec.text());
    let named: Vec<(&str, &str)> = cases.iter().map(|(name, _, inner)| (name.as_str(), inner.as_str())).collect();
    assert_eq!(
        named,
        [
            ("TestPerimeter", "failure"),
            ("TestPerimeterZero", ""),
            ("TestPerimeterOrder/wide", ""),
            ("TestPerimeterOrder/negative", "skipped")
        ],
        "leaf tests in go's order, the parent TestPerimeterOrder left out:{exec}"
    );
    for (name, time, _) in &cases {
        assert!(time.parse::<f64>().is_ok(), "{name}: time {time:?}");
    }
}

/// `buildvise exec TOOL` with the venv's programs on PATH, where the generic plugin finds them.
fn with_venv(sb: &Sandbox, venv: &Path, args: &[&str]) -> common::Run {
    let path = format!("{}:{}", venv.join("bin").display(), std::env::var("PATH").unwrap_or_default());
    let mut cmd = sb.command(args);
    cmd.env("PATH", path).env("MYPY_CACHE_DIR", root().join("target/test-env/mypy-cache"));
    run_command(&mut cmd)
}

#[test]
fn mypy_and_ruff_report_each_finding_at_its_line() {
    let (Some(mypy), Some(ruff)) = (python_venv("mypy", "mypy==2.4.1"), python_venv("ruff", "ruff==0.17.6")) else {
        common::skip("python3 is not installed; mypy and ruff are pip-installed with it");
        return;
    };
    let sb = sandbox();
    let dir = fixture(&sb, "python-lint");
    let types = with_venv(&sb, &mypy, &["exec", "python.mypy", "--cwd", cwd(&dir), "--json"]);
    types.expect_code(1);
    assert_eq!(
        findings(&types.json()),
        [(
            "error".to_string(),
            "pkg/core.py".to_string(),
            5,
            "Incompatible types in assignment (expression has type \"str\", variable has type \"int\")".to_string()
        )],
        "{types}"
    );
    assert_eq!(types.json()["diagnostics"][0]["code"], "assignment", "{types}");

    let lint = with_venv(
        &sb,
        &ruff,
        &["exec", "python.ruff", "--cwd", cwd(&dir), "--json", "--", "--no-cache", "--select", "F401,E711"],
    );
    lint.expect_code(1);
    assert_eq!(codes(&lint.json()), [("F401".to_string(), 1), ("E711".to_string(), 5)], "{lint}");
}

#[test]
fn a_tool_whose_program_is_missing_is_not_listed_and_says_what_to_install() {
    let sb = sandbox();
    let dir = fixture(&sb, "python-lint");
    let nowhere = sb.work().join("empty-path");
    std::fs::create_dir_all(&nowhere).expect("empty dir");
    let list = run_command(sb.command(["list"]).env("PATH", &nowhere));
    let listed: Vec<String> =
        list.text().lines().filter_map(|l| l.split_whitespace().next()).map(String::from).collect();
    assert!(listed.iter().all(|t| !["python.mypy", "go.test", "make"].contains(&t.as_str())), "{list}");
    let exec = run_command(sb.command(["exec", "python.mypy", "--cwd", cwd(&dir)]).env("PATH", &nowhere));
    exec.expect_code(125);
    assert!(
        exec.stderr.contains("python.mypy cannot run here: `mypy` is not on PATH; install it to use python.mypy"),
        "{exec}"
    );

    // The manifest that said so is kept, but only while PATH is as it was: installed since, the
    // program's tool is listed at once.
    std::fs::write(nowhere.join("mypy"), "#!/bin/sh\n").expect("a mypy on PATH");
    let list = run_command(sb.command(["list"]).env("PATH", &nowhere));
    assert!(list.text().lines().any(|l| l.starts_with("python.mypy ")), "{list}");
}
