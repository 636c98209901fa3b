//! A plugin written outside the workspace, as docs/plugins.md tells an author to: the template in
//! `examples/plugin-template` (a workspace of its own, depending on `plugin-api` by path, its own
//! `Cargo.lock`) builds as an author builds it, its own tests pass, and the real binary loads the
//! library through `--plugin-dir` and answers with what its parser found.
//!
//! The template is built into `target/plugin-template`: the template's own `target/` is an
//! author's, not the tests', and beside the binary in `target/debug` every test's buildvise would
//! load it.

mod common;

use common::{Sandbox, root, run_command};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn template() -> PathBuf {
    root().join("examples/plugin-template")
}

/// Runs `cargo SUBCOMMAND` on the template with its committed lock file; panics with cargo's
/// output, and the way to fix it, when that fails.
fn cargo(subcommand: &str) -> String {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(root())
        .args([subcommand, "--locked", "--manifest-path"])
        .arg(template().join("Cargo.toml"))
        .arg("--target-dir")
        .arg(root().join("target/plugin-template"))
        // The outer `cargo test` may have set these for itself; this build has its own.
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET_DIR")
        .stdin(Stdio::null())
        .output()
        .expect("cargo runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "`cargo {subcommand}` of examples/plugin-template failed; when it says the lock file needs \
         updating, copy the workspace's Cargo.lock over examples/plugin-template/Cargo.lock and run \
         `cargo build --manifest-path examples/plugin-template/Cargo.toml` to trim it:\n{stdout}\n{stderr}"
    );
    format!("{stdout}{stderr}")
}

/// The template's library, built once per test process, alone in a directory of its own.
fn plugin_dir() -> &'static Path {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        cargo("build");
        let file = format!("{}buildvise_plugin_checker{}", std::env::consts::DLL_PREFIX, std::env::consts::DLL_SUFFIX);
        let dir = tempfile::Builder::new().prefix("buildvise-template-").tempdir().expect("temp dir");
        let built = root().join("target/plugin-template/debug").join(&file);
        std::fs::copy(&built, dir.path().join(&file)).unwrap_or_else(|e| panic!("copy {}: {e}", built.display()));
        dir
    })
    .path()
}

/// A stand-in for `checker` on `PATH`: what it prints for a project with one long line and one
/// trailing space, exiting 0 as checker does whatever it found. It refuses to run without the
/// environment the plan sets.
const CHECKER: &str = r#"#!/bin/sh
[ "$NO_COLOR" = 1 ] || { echo "checker: NO_COLOR is not set" >&2; exit 2; }
echo "checking $*"
echo "$(pwd -P)/src/a.txt:3: error: line too long"
echo "  help: wrap it at 80 columns"
echo "src/b.txt:1:5: warning: trailing space"
echo "checker: 1 error, 1 warning"
"#;

#[test]
fn the_template_builds_loads_through_plugin_dir_and_its_tool_runs() {
    let sb = Sandbox::new(&[plugin_dir()]);
    let list = sb.run(["list"]);
    list.expect_code(0);
    assert!(list.text().lines().any(|l| l.starts_with("checker.check ")), "the template's tool is not listed:{list}");
    assert!(!list.text().contains("not loaded"), "{list}");

    let project = sb.work().join("project");
    std::fs::create_dir_all(project.join("src")).expect("project dir");
    std::fs::write(project.join("src/a.txt"), "short\nshort\nfar too long a line\n").expect("write a.txt");
    std::fs::write(project.join("src/b.txt"), "trailing \n").expect("write b.txt");
    let bin = sb.work().join("bin");
    std::fs::create_dir_all(&bin).expect("bin dir");
    let checker = bin.join("checker");
    std::fs::write(&checker, CHECKER).expect("write checker");
    #[cfg(unix)]
    std::fs::set_permissions(&checker, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod checker");
    let path = std::env::join_paths(
        std::iter::once(bin).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .expect("PATH");

    let mut cmd = sb.command(["exec", "checker.check", "--json", "--detail", "full", "--", "src"]);
    let exec = run_command(cmd.current_dir(&project).env("PATH", path));
    // buildvise exits with the tool's own code; the parser read the failure from checker's count.
    exec.expect_code(0);
    let answer = exec.json();
    assert_eq!(answer["success"], false, "checker's count of 1 error fails the run:{exec}");
    // What the parser decides, key by key: the answer adds its own (`new`, fingerprints).
    let found: Vec<Value> = answer["diagnostics"]
        .as_array()
        .unwrap_or_else(|| panic!("no diagnostics:{exec}"))
        .iter()
        .map(|d| {
            let keys = ["severity", "file", "line", "column", "message", "notes", "logRange"];
            keys.iter().filter_map(|&k| Some((k.to_string(), d.get(k)?.clone()))).collect()
        })
        .collect();
    let expected = [
        json!({"severity": "error", "file": "src/a.txt", "line": 3, "message": "line too long",
               "notes": ["help: wrap it at 80 columns"], "logRange": {"start": 2, "end": 3}}),
        json!({"severity": "warning", "file": "src/b.txt", "line": 1, "column": 5, "message": "trailing space",
               "logRange": {"start": 4, "end": 4}}),
    ];
    assert_eq!(found, expected, "{exec}");
}

#[test]
fn the_templates_own_tests_pass() {
    let out = cargo("test");
    let passed: u64 =
        out.lines().filter_map(|l| l.strip_prefix("test result: ok. ")?.split(' ').next()?.parse::<u64>().ok()).sum();
    assert!(passed > 0, "the template's tests did not run:\n{out}");
}
