//! Every error a user can cause, as the real binary prints it: one snapshot of the messages and
//! exit codes, so that a change in what people read shows up in review, and a check that each
//! message says its cause once. buildvise's own failures exit with 125, a program that cannot be
//! run with 126 or 127, never with a code a wrapped tool uses.

mod common;

use common::{Sandbox, test_plugins, toolchains};
use std::fmt::Write;

fn sandbox() -> Sandbox {
    Sandbox::new(&[test_plugins(), toolchains()])
}

/// The exit code and stderr of `args`, with the sandbox's paths and run ids made stable.
fn error_of(sb: &Sandbox, args: &[&str]) -> (Option<i32>, String) {
    let run = sb.run(args);
    assert!(run.stdout.is_empty() || run.code == Some(0), "an error printed an answer too:{run}");
    let root = sb.work().parent().expect("sandbox root").display().to_string();
    let stderr = run.stderr.replace(&root, "<sandbox>");
    (run.code, stderr)
}

/// No part of the message (the headline, each cause) is said twice.
fn says_each_cause_once(case: &str, message: &str) {
    let parts: Vec<&str> = message.trim_end().split("\n  caused by: ").map(str::trim).collect();
    for (i, a) in parts.iter().enumerate() {
        for b in &parts[i + 1..] {
            assert!(!a.contains(b) && !b.contains(a), "{case}: a cause is said twice:\n{message}");
        }
    }
}

#[test]
fn every_error_a_user_can_cause_says_what_to_do_once() {
    let sb = sandbox();
    let work = sb.work();
    let ok = sb.run(["exec", "panicky.sh", "--json", "--", "echo one; echo two"]);
    ok.expect_code(0);
    let id = common::run_id(&ok.json());
    let damaged = common::run_id(&sb.run(["exec", "panicky.sh", "--json", "--", "echo x"]).json());

    let npm = work.join("npm-project");
    std::fs::create_dir_all(&npm).unwrap();
    std::fs::write(npm.join("package.json"), r#"{"scripts": {"build": "tsc"}}"#).unwrap();
    let not_toml = work.join("not-toml");
    std::fs::create_dir_all(&not_toml).unwrap();
    std::fs::write(not_toml.join("buildvise.toml"), "plugin_dirs = [\"plugins\"\n").unwrap();
    let not_executable = work.join("not-executable");
    std::fs::write(&not_executable, "#!/bin/sh\n").unwrap();
    let saved_missing = work.join("missing.log");

    let state = sb.state().join("runs").join(&damaged);
    std::fs::write(state.join("meta.json"), b"{ \"id\": ").unwrap();
    // Enough lines for the log to have marks; each moved into the middle of its line.
    let broken_index = common::run_id(&sb.run(["exec", "panicky.sh", "--json", "--", "seq 1 10000"]).json());
    let index = sb.state().join("runs").join(&broken_index).join("marks.idx");
    let mut marks = std::fs::read(&index).unwrap();
    assert!(!marks.is_empty(), "no marks in a 48 KB log");
    for mark in marks.chunks_exact_mut(16) {
        let start = u64::from_le_bytes(mark[8..].try_into().unwrap());
        mark[8..].copy_from_slice(&(start + 1).to_le_bytes());
    }
    std::fs::write(&index, marks).unwrap();

    let cases: Vec<(&str, Vec<String>)> = vec![
        ("unknown tool", vec!["exec".into(), "panicky.shh".into()]),
        ("unknown flag", vec!["exec".into(), "panicky.sh".into(), "--bogus".into()]),
        ("bad run id", vec!["log".into(), "../x".into()]),
        ("unknown run", vec!["log".into(), "abcdefgh".into()]),
        ("program not found", vec!["exec".into(), "panicky.missing".into()]),
        (
            "program not executable",
            vec!["exec".into(), "panicky.run".into(), "--".into(), not_executable.display().to_string()],
        ),
        (
            "plan refused",
            vec![
                "exec".into(),
                "npm.run".into(),
                "--cwd".into(),
                npm.display().to_string(),
                "--".into(),
                "nope".into(),
            ],
        ),
        ("consent needed", vec!["exec".into(), "panicky.mutate".into(), "--".into(), "touch x".into()]),
        ("no such cwd", vec!["exec".into(), "panicky.sh".into(), "--cwd".into(), "missing".into()]),
        ("system cwd", vec!["exec".into(), "panicky.sh".into(), "--cwd".into(), "/etc".into()]),
        ("project file not TOML", vec!["exec".into(), "panicky.sh".into(), "--cwd".into(), "not-toml".into()]),
        ("max lines out of range", vec!["exec".into(), "panicky.sh".into(), "--max-lines".into(), "0".into()]),
        ("bad grep", vec!["log".into(), id.clone(), "--grep".into(), "(".into()]),
        (
            "missing saved log",
            vec!["parse".into(), "panicky.sh".into(), "--log".into(), saved_missing.display().to_string()],
        ),
        ("damaged meta", vec!["log".into(), damaged.clone(), "--detail".into(), "standard".into()]),
        ("damaged index", vec!["log".into(), broken_index.clone()]),
        ("serve root missing", vec!["serve".into(), "--root".into(), "missing".into()]),
        ("serve not loopback", vec!["serve".into(), "--http".into(), "10.1.2.3:80".into()]),
        ("gain since neither", vec!["gain".into(), "--since".into(), "yesterday".into()]),
    ];
    let mut report = String::new();
    for (case, args) in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, stderr) = error_of(&sb, &args);
        let message = stderr.trim_end().replace(&damaged, "<damaged>").replace(&broken_index, "<broken-index>");
        let message = message.replace(&id, "<id>");
        says_each_cause_once(case, &message);
        let _ = writeln!(report, "## {case} (exit {})\n{message}\n", code.map_or("none".into(), |c| c.to_string()));
        assert!(matches!(code, Some(125..=127)), "{case}: exit {code:?}, not one of buildvise's own:\n{message}");
    }

    // A user config that cannot be read stops every command, and says which file.
    std::fs::create_dir_all(sb.config().join("buildvise")).unwrap();
    std::fs::write(sb.config().join("buildvise/config.toml"), "max_lines = \n").unwrap();
    let (code, stderr) = error_of(&sb, &["list"]);
    says_each_cause_once("user config", &stderr);
    let _ = writeln!(report, "## user config syntax (exit {})\n{}", code.unwrap_or(-1), stderr.trim_end());
    insta::assert_snapshot!("cli_errors", report);
}
