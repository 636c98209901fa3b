//! Fingerprints on real output. Every captured case (`tests/fixtures/cases/`) and corpus copy
//! (`tests/fixtures/corpus/`) is parsed by the real binary, then parsed again from its log
//! changed the way a rerun changes it: lines moved by an edit, the project in another temp
//! directory, other addresses and durations. Each problem must keep its fingerprint, and two
//! different problems on one line must not share one. Each change must also have changed some
//! diagnostic, or the test would hold nothing.

mod common;

use buildvise_engine::history::fingerprint;
use buildvise_plugin_api::Diagnostic;
use common::{Sandbox, root, toolchains};
use regex::{Captures, Regex};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A real log and how to parse it.
struct Case {
    name: String,
    tool: String,
    exit_code: i32,
    cwd: String,
    log: String,
}

fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for dir in case_dirs(&root().join("tests/fixtures/cases")) {
        let spec: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("case.json")).unwrap()).unwrap();
        let Ok(log) = std::fs::read_to_string(dir.join("combined.log")) else { continue };
        cases.push(Case {
            name: dir.file_name().unwrap().to_string_lossy().into_owned(),
            tool: spec["tool"].as_str().expect("tool").to_string(),
            exit_code: spec["exit_code"].as_i64().unwrap_or(1) as i32,
            cwd: spec["cwd"].as_str().unwrap_or("/home/dev/src/project").to_string(),
            log,
        });
    }
    // The corpus copies name no tool of their own: the toolchain's usual one.
    let corpus_tool = |toolchain: &str, name: &str| match toolchain {
        "cargo" if name.starts_with("test") => "cargo.test",
        "cargo" => "cargo.build",
        "npm" if name.contains("jest") => "npm.test",
        "npm" if name.contains("eslint") => "npm.run",
        "npm" => "npm.build",
        "pytest" => "pytest.run",
        _ if name.starts_with("test") => "dotnet.test",
        _ => "dotnet.build",
    };
    for dir in case_dirs(&root().join("tests/fixtures/corpus")) {
        let toolchain = dir.parent().unwrap().file_name().unwrap().to_string_lossy().into_owned();
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        cases.push(Case {
            tool: corpus_tool(&toolchain, &name).to_string(),
            exit_code: 1,
            cwd: "/home/dev/src/project".to_string(),
            log: std::fs::read_to_string(dir.join("combined.log")).expect("combined.log"),
            name,
        });
    }
    assert!(cases.len() > 50, "too few cases found: {}", cases.len());
    cases
}

/// `<root>/<toolchain>/<case>/` directories.
fn case_dirs(root: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .filter(|t| t.path().is_dir())
        .flat_map(|t| std::fs::read_dir(t.path()).unwrap().flatten().map(|c| c.path()))
        .filter(|c| c.join("combined.log").is_file())
        .collect();
    dirs.sort();
    dirs
}

fn sandbox() -> Sandbox {
    Sandbox::new(&[toolchains()])
}

/// The diagnostics `buildvise parse` finds in `log`, a variant of `case`'s.
fn parse(sb: &Sandbox, case: &Case, log: &str) -> Vec<Diagnostic> {
    let file = sb.work().join(format!("{}.log", case.name));
    std::fs::write(&file, log).expect("write the log");
    let exit = case.exit_code.to_string();
    let run = sb.run([
        "parse",
        &case.tool,
        "--log",
        file.to_str().unwrap(),
        "--exit-code",
        &exit,
        "--cwd",
        &case.cwd,
        "--detail",
        "full",
        "--json",
    ]);
    let answer = run.json();
    ["errors", "warnings"]
        .iter()
        .flat_map(|key| answer[key].as_array().cloned().unwrap_or_default())
        .map(|d| serde_json::from_value(d).expect("a diagnostic"))
        .collect()
}

/// Sorted fingerprints: what a comparison matches, as a multiset.
fn prints(tool: &str, diagnostics: &[Diagnostic]) -> Vec<String> {
    let mut prints: Vec<String> = diagnostics.iter().map(|d| fingerprint::of(tool, d)).collect();
    prints.sort();
    prints
}

/// Parses every case's log as `first` and `second` change it; asserts that the fingerprints
/// match, and returns how many diagnostics differ between the two in what they say or where
/// (`tests` counts test failures too, whose fingerprint is their name).
fn keeps_prints(first: impl Fn(&Case) -> String, second: impl Fn(&Case) -> String, tests: bool) -> usize {
    let sb = sandbox();
    let mut changed = 0;
    for case in cases() {
        let before = parse(&sb, &case, &first(&case));
        let after = parse(&sb, &case, &second(&case));
        assert_eq!(before.len(), after.len(), "{}: the change made the parser see other problems", case.name);
        assert_eq!(prints(&case.tool, &before), prints(&case.tool, &after), "{}", case.name);
        changed += before.iter().zip(&after).filter(|(b, a)| (tests || b.test.is_none()) && b != a).count();
    }
    changed
}

#[test]
fn a_problem_moved_by_inserted_lines_keeps_its_fingerprint() {
    // `src/lib.rs:12:5`, `App.cs(12,5)`, `File "x.py", line 12`: every place in a source file.
    let place = Regex::new(r#"(\.(?:rs|ts|tsx|js|mjs|py|cs|go|c|h)(?::|\(|", line ))(\d+)"#).unwrap();
    let moved = |case: &Case| {
        place
            .replace_all(&case.log, |c: &Captures| format!("{}{}", &c[1], c[2].parse::<u64>().unwrap() + 7))
            .into_owned()
    };
    let changed = keeps_prints(|case| case.log.clone(), moved, false);
    assert!(changed > 100, "only {changed} diagnostics moved");
}

#[test]
fn a_project_in_another_temp_directory_keeps_its_fingerprints() {
    let in_temp = |n: u32| {
        move |case: &Case| case.log.replace(&case.cwd, &format!("/tmp/pytest-of-dev/pytest-{n}/{}", case.name))
    };
    let changed = keeps_prints(in_temp(7), in_temp(8), false);
    assert!(changed > 10, "only {changed} diagnostics name the project's directory");
}

#[test]
fn other_addresses_and_durations_keep_their_fingerprints() {
    let address = Regex::new(r"0x[0-9a-f]{3,}").unwrap();
    let duration = Regex::new(r"\b(\d+(?:\.\d+)?)( ?)(ms|s)\b").unwrap();
    let other = |case: &Case| {
        let log = address.replace_all(&case.log, |c: &Captures| format!("0x{}", "9".repeat(c[0].len() - 2)));
        duration.replace_all(&log, |c: &Captures| format!("{}3{}{}", &c[1], &c[2], &c[3])).into_owned()
    };
    // Only test failures hold them in these logs; `history::fingerprint`'s unit tests hold other
    // problems' messages with addresses, durations and process ids.
    let changed = keeps_prints(|case| case.log.clone(), other, true);
    assert!(changed > 0, "no diagnostic holds an address or a duration");
}

#[test]
fn different_problems_on_one_line_do_not_share_a_fingerprint() {
    let sb = sandbox();
    let mut pairs = 0;
    for case in cases() {
        let found = parse(&sb, &case, &case.log);
        for (i, a) in found.iter().enumerate() {
            for b in &found[i + 1..] {
                let same_line = a.test.is_none() && b.test.is_none() && (&a.file, a.line) == (&b.file, b.line);
                if same_line && (&a.code, &a.message) != (&b.code, &b.message) {
                    pairs += 1;
                    assert_ne!(
                        fingerprint::of(&case.tool, a),
                        fingerprint::of(&case.tool, b),
                        "{}: {a:?} {b:?}",
                        case.name
                    );
                }
            }
        }
    }
    assert!(pairs >= 5, "only {pairs} pairs of problems on one line");
}
