//! Captured cases (`tests/fixtures/cases/<toolchain>/<case>/`): real output of the real tools,
//! each with the diagnostics a person wrote down from reading the raw log (`case.json`, the layout
//! of `../shared/corpus`). Every case is parsed through the real binary, combined and by stream,
//! and must give exactly the expected errors, warnings, test counts and "what did not run" (and,
//! where it says, the kinds of `<testcase>` its JUnit report holds); its `standard` answer is
//! pinned as a snapshot. A last test reads every case it can find, these and
//! the shared corpus beside the project, and holds the rule that a failed run is never answered
//! with its status line alone.

mod common;

use common::cases::{Case, case_dirs, sandbox};
use common::{junit_cases, root};
use serde_json::Value;

// ---- matching, with the rules of `../shared/eval/score.py` ----

fn norm_path(p: &str) -> String {
    let mut p = p.replace('\\', "/");
    while let Some(rest) = p.strip_prefix("./") {
        p = rest.to_string();
    }
    p
}

fn same_file(expected: &str, produced: Option<&str>) -> bool {
    let Some(produced) = produced else { return false };
    let (e, p) = (norm_path(expected), norm_path(produced));
    e == p || p.ends_with(&format!("/{e}")) || e.ends_with(&format!("/{p}"))
}

fn norm_text(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

fn norm_test(s: &str) -> String {
    let text = norm_text(s);
    let mut out = String::new();
    let mut rest = text.as_str();
    while !rest.is_empty() {
        let sep = [" › ", " > ", "::", ">", ".", "/"].iter().find(|sep| rest.starts_with(**sep));
        match sep {
            Some(sep) => {
                out = out.trim_end().to_string();
                out.push('/');
                rest = rest[sep.len()..].trim_start();
            }
            None => {
                let c = rest.chars().next().expect("char");
                out.push(c);
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    out
}

fn matches(expected: &Value, got: &Value) -> bool {
    let text = |v: &Value, key: &str| v[key].as_str().map(str::to_string);
    if let Some(test) = text(expected, "test") {
        if let Some(got_test) = text(got, "test") {
            let (e, g) = (norm_test(&test), norm_test(&got_test));
            if e == g || g.ends_with(&format!("/{e}")) || e.ends_with(&format!("/{g}")) {
                return true;
            }
        }
        return expected["file"].as_str().is_some_and(|f| same_file(f, got["file"].as_str()))
            && !expected["line"].is_null()
            && got["line"] == expected["line"];
    }
    if let Some(file) = expected["file"].as_str() {
        if !same_file(file, got["file"].as_str()) {
            return false;
        }
        if !expected["line"].is_null() && got["line"] != expected["line"] {
            return false;
        }
        if let Some(code) = expected["code"].as_str() {
            return got["code"].as_str().is_some_and(|c| norm_text(c) == norm_text(code));
        }
        return true;
    }
    if let Some(code) = expected["code"].as_str() {
        return got["code"].as_str().is_some_and(|c| norm_text(c) == norm_text(code));
    }
    let wanted = norm_text(expected["message_contains"].as_str().unwrap_or_default());
    norm_text(got["message"].as_str().unwrap_or_default()).contains(&wanted)
}

/// What differs between the expected diagnostics of one class and those produced.
fn compare(class: &str, expected: &[Value], produced: &[Value]) -> Vec<String> {
    let mut used = vec![false; produced.len()];
    let mut problems = Vec::new();
    for e in expected {
        let hit = produced.iter().enumerate().find(|(i, g)| !used[*i] && matches(e, g));
        match hit {
            Some((i, _)) => used[i] = true,
            None => problems.push(format!("missed {class}: {e}")),
        }
    }
    for (g, _) in produced.iter().zip(&used).filter(|(_, used)| !**used) {
        problems.push(format!("extra {class}: {g}"));
    }
    problems
}

fn check(case: &Case, got: &Value, how: &str) -> Vec<String> {
    let expected = &case.spec["expected"];
    let list = |v: &Value| v.as_array().cloned().unwrap_or_default();
    let mut problems = compare("error", &list(&expected["errors"]), &list(&got["errors"]));
    problems.extend(compare("warning", &list(&expected["warnings"]), &list(&got["warnings"])));
    if let Some(summary) = expected["summary"].as_object() {
        for (key, want) in summary {
            if got["summary"][key] != *want && !(want.is_null() && got["summary"][key].is_null()) {
                problems.push(format!("summary {key}: expected {want}, got {}", got["summary"][key]));
            }
        }
    } else if !got["summary"].is_null() {
        problems.push(format!("a summary where none was expected: {}", got["summary"]));
    }
    if let Some(success) = case.spec["success"].as_bool()
        && got["success"] != success
    {
        problems.push(format!("success: expected {success}, got {}", got["success"]));
    }
    match (case.spec["stopped_early"].as_str(), got["stoppedEarly"].as_str()) {
        (Some(want), Some(said)) if !said.contains(want) => {
            problems.push(format!("stopped early: expected it to contain {want:?}, got {said:?}"))
        }
        (Some(want), None) => problems.push(format!("stopped early: expected {want:?}, nothing said")),
        (None, Some(said)) => problems.push(format!("stopped early where nothing stopped: {said:?}")),
        _ => {}
    }
    problems.into_iter().map(|p| format!("{} ({how}): {p}", case.name())).collect()
}

/// What differs between the `<testcase>`s a case's JUnit report holds, by kind (`passed`,
/// `skipped`, `failed`, `error`), and its `junit_testcases`: the tests the tool named and the
/// failures known otherwise. Nothing for a case that does not say.
fn check_junit(case: &Case, sandbox: &common::Sandbox, streams: bool) -> Vec<String> {
    let Some(expected) = case.spec["junit_testcases"].as_object() else { return Vec::new() };
    let mut args = case.parse_args(streams, "standard");
    args.extend(["--format".into(), "junit".into()]);
    let xml = sandbox.run(&args).expect_code(0).text();
    let cases = junit_cases(&xml);
    let how = if streams { "streams" } else { "combined" };
    let mut problems = Vec::new();
    for (kind, want) in expected {
        let inner = match kind.as_str() {
            "passed" => "",
            "failed" => "failure",
            other => other,
        };
        let got = cases.iter().filter(|(_, _, i)| i == inner).count() as u64;
        if want.as_u64() != Some(got) {
            problems
                .push(format!("{} ({how}): {got} {kind} testcases in the JUnit report, expected {want}", case.name()));
        }
    }
    problems
}

#[test]
fn captured_cases_give_exactly_the_expected_answers() {
    let cases: Vec<Case> = case_dirs(&root().join("tests/fixtures/cases")).iter().map(|d| Case::read(d)).collect();
    assert!(!cases.is_empty(), "no cases under tests/fixtures/cases");
    let sandbox = sandbox();
    let mut problems = Vec::new();
    for case in &cases {
        let ways: &[bool] = if case.has_streams() { &[false, true] } else { &[false] };
        for &streams in ways {
            let mut args = case.parse_args(streams, "standard");
            args.push("--json".into());
            let run = sandbox.run(&args);
            run.expect_code(0);
            problems.extend(check(case, &run.json(), if streams { "streams" } else { "combined" }));
            problems.extend(check_junit(case, &sandbox, streams));
        }
    }
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
    for case in &cases {
        let standard = sandbox.run(case.parse_args(false, "standard"));
        insta::assert_snapshot!(format!("{}__{}", case.toolchain, case.id), standard.text());
    }
}

#[test]
fn a_failed_run_is_never_answered_with_its_status_line_alone() {
    let mut dirs = case_dirs(&root().join("tests/fixtures/cases"));
    let shared = root().join("../shared/corpus");
    if shared.is_dir() {
        dirs.extend(case_dirs(&shared));
    } else {
        common::skip(&format!(
            "the shared corpus ({}) is absent; only the cases in this repository were read",
            shared.display()
        ));
    }
    let sandbox = sandbox();
    let mut bare = Vec::new();
    for dir in &dirs {
        let case = Case::read(dir);
        let mut args = case.parse_args(false, "standard");
        args.push("--mcp".into());
        let text = sandbox.run(&args).expect_code(0).text();
        if !text.starts_with("FAIL") {
            continue;
        }
        args.push("--json".into());
        let parsed = sandbox.run(&args).expect_code(0).json();
        let has = |key: &str| parsed[key].as_array().is_some_and(|a| !a.is_empty());
        // An error or a failed test is listed (by line, or counted when over budget), or else the
        // output's last lines are shown: a status line with warnings or a hint explains nothing.
        let explained = (has("errors") || has("failedTests")) && text.lines().count() > 1;
        let tail = text.lines().any(|l| ["last ", "output (", "other output ("].iter().any(|p| l.starts_with(p)));
        if !explained && !tail {
            bare.push(format!("{}:\n{text}", case.name()));
        }
    }
    assert!(!dirs.is_empty());
    assert!(bare.is_empty(), "failed runs answered with the status line alone:\n{}", bare.join("\n"));
}
