//! What agents read, pinned: the rendered `standard` and `summary` answers for captured logs of
//! each toolchain (`tests/fixtures/corpus/`), through the real binary's `parse`. A change in any
//! answer shows up in review as a snapshot diff (`cargo insta review`).

mod common;

use common::{Sandbox, root, toolchains};

/// (toolchain, case, tool, exit code)
const CASES: &[(&str, &str, &str, i32)] = &[
    ("cargo", "build-e0308-mismatched-types", "cargo.build", 101),
    ("cargo", "test-mixed-failures", "cargo.test", 101),
    ("cargo", "build-warnings-only", "cargo.build", 0),
    ("npm", "tsc-strict-nopretty", "npm.build", 2),
    ("npm", "jest-js-failures", "npm.test", 1),
    ("npm", "eslint-stylish", "npm.run", 1),
    ("npm", "tsc-big", "npm.build", 2),
    ("npm", "script-exit-plain", "npm.run", 3),
    ("pytest", "assert-introspection-default", "pytest.run", 1),
    ("pytest", "fixture-errors-verbose", "pytest.run", 1),
    ("dotnet", "build-cs-errors-nullable-warnings-duplicated", "dotnet.build", 1),
    ("dotnet", "test-xunit-assert-diff-exception-skip", "dotnet.test", 1),
];

fn render(sandbox: &Sandbox, toolchain: &str, case: &str, tool: &str, exit: i32, detail: &str) -> String {
    let dir = root().join("tests/fixtures/corpus").join(toolchain).join(case);
    let mut args: Vec<String> = vec![
        "parse".into(),
        tool.into(),
        "--log".into(),
        dir.join("combined.log").display().to_string(),
        "--exit-code".into(),
        exit.to_string(),
        "--cwd".into(),
        // The captures' own project folder, which does not exist here: paths stay as printed.
        "/home/dev/src/project".into(),
        "--detail".into(),
        detail.into(),
    ];
    for entry in std::fs::read_dir(&dir).expect("case dir") {
        let path = entry.expect("entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
        if name != "combined.log" {
            args.push("--artifact".into());
            args.push(path.display().to_string());
        }
    }
    let run = sandbox.run(&args);
    run.expect_code(0);
    run.text()
}

/// Without `--exit-code`, the log alone: failed tests read as a failure, with no exit code made up.
#[test]
fn a_parsed_log_with_failed_tests_reads_as_a_failure_without_an_exit_code() {
    let sandbox = Sandbox::new(&[toolchains()]);
    let log = root().join("tests/fixtures/corpus/cargo/test-mixed-failures/combined.log");
    let log = log.display().to_string();
    let run = sandbox.run(["parse", "cargo.test", "--log", &log, "--cwd", "/home/dev/src/project"]);
    run.expect_code(0);
    insta::assert_snapshot!("parse_without_exit_code", run.text());
    let json = sandbox.run(["parse", "cargo.test", "--log", &log, "--cwd", "/home/dev/src/project", "--json"]);
    let view: serde_json::Value = serde_json::from_slice(&json.stdout).expect("parse --json is JSON");
    assert_eq!(view["success"], false, "the JSON says what the text says: {view}");
}

#[test]
fn rendered_answers() {
    let sandbox = Sandbox::new(&[toolchains()]);
    for (toolchain, case, tool, exit) in CASES {
        for detail in ["standard", "summary"] {
            let text = render(&sandbox, toolchain, case, tool, *exit, detail);
            insta::assert_snapshot!(format!("{toolchain}__{case}__{detail}"), text);
        }
    }
}
