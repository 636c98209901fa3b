//! End to end with the real pnpm, yarn (classic and berry) and bun: the `buildvise` binary runs
//! the npm plugin's tools on copies of the fixture projects in `tests/fixtures/npm/`, with the
//! managers that `common::managers` installs under `target/test-env/managers/` first on PATH.
//! Each project says which manager it uses (pnpm-app: its `packageManager` field and
//! `pnpm-lock.yaml`; yarn-classic: a v1 `yarn.lock`; yarn-berry: `.yarnrc.yml` and a `yarn.lock`
//! with `__metadata`; bun-app: `bun.lock`), and each plants the same failures:
//!
//! - `test`: `node --test` (bun: `bun test`) on two tests, of which "applies the discount" fails
//!   at `test/total.test.js:10`;
//! - `build`: `node build.js`, which throws an uncaught Error at `build.js:7`;
//! - install: package.json depends on `greet` (a folder inside the project, so that no install
//!   needs a registry), which the lockfile, made before it was added, lacks.
//!
//! Without node or npm (or a bun build for this machine) the tests skip loudly; a failed download
//! fails.

mod common;

use common::managers::{Pm, environment, manager};
use common::{Run, Sandbox, root, run_command, run_id, toolchains};
use serde_json::Value;
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A sandbox with one manager on PATH and a copy of its fixture project.
struct Project {
    sb: Sandbox,
    dir: PathBuf,
    env: Vec<(String, OsString)>,
}

impl Project {
    /// None when the test skipped (see [`manager`]).
    fn new(pm: Pm) -> Option<Project> {
        let bin = manager(pm)?;
        let sb = Sandbox::new(&[toolchains()]);
        let dir = sb.work().join(fixture_name(pm));
        common::copy_tree(&root().join("tests/fixtures/npm").join(fixture_name(pm)), &dir);
        let home = sb.state().with_file_name("home");
        let env = environment(pm, &bin, &home);
        Some(Project { sb, dir, env })
    }

    fn command<I: IntoIterator<Item = S>, S: AsRef<std::ffi::OsStr>>(&self, args: I) -> Command {
        let mut cmd = self.sb.command(args);
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        cmd
    }

    /// `buildvise exec TOOL --cwd DIR --json ARGS…`, with its answer.
    fn exec(&self, tool: &str, args: &[&str]) -> (Run, Value) {
        let mut cmd = self.command(["exec", tool, "--cwd", path_arg(&self.dir), "--json"]);
        cmd.args(args);
        let run = run_command(&mut cmd);
        let answer = run.json();
        (run, answer)
    }

    /// The same call as [`Project::exec`], answered in text for a person or an agent to read.
    fn exec_text(&self, tool: &str, args: &[&str]) -> Run {
        let mut cmd = self.command(["exec", tool, "--cwd", path_arg(&self.dir)]);
        cmd.args(args);
        run_command(&mut cmd)
    }

    /// What `runs --json` recorded of run ID: the program and the arguments it ran.
    fn ran(&self, id: &str) -> (String, Vec<String>) {
        let runs = common::runs(&self.sb);
        let run = runs.iter().find(|r| r["id"] == id).unwrap_or_else(|| panic!("run {id} not listed: {runs:#?}"));
        let args = run["args"].as_array().expect("args").iter().map(|a| a.as_str().expect("arg").to_string());
        (run["program"].as_str().expect("program").to_string(), args.collect())
    }

    /// The whole stored log of run ID, for failure messages.
    fn log(&self, id: &str) -> String {
        let page = self.sb.run(["log", id, "--raw", "--count", "100000"]);
        format!("\n--- stored log of {id} ---\n{}", String::from_utf8_lossy(&page.stdout))
    }

    /// What `hook shell` prints for `line` typed in `dir`.
    fn hooked(&self, line: &str, dir: &Path) -> String {
        let mut cmd = self.command(["hook", "shell", "--cwd", path_arg(dir)]);
        let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("buildvise runs");
        child.stdin.take().expect("stdin").write_all(format!("{line}\n").as_bytes()).expect("write the line");
        let out = child.wait_with_output().expect("buildvise ends");
        assert_eq!(out.status.code(), Some(0), "a hook always exits 0");
        String::from_utf8(out.stdout).expect("UTF-8").trim_end_matches('\n').to_string()
    }

    /// Runs `line` with bash in `dir`, in the sandbox's world with the manager on PATH and the
    /// plugins through the environment, as an installed hook finds them from the user's config.
    fn bash(&self, line: &str, dir: &Path) -> (Option<i32>, String) {
        let probe = self.command(["--version"]);
        let mut cmd = Command::new("bash");
        for (key, value) in probe.get_envs() {
            match value {
                Some(value) => cmd.env(key, value),
                None => cmd.env_remove(key),
            };
        }
        let out = cmd
            .args(["-c", line])
            .current_dir(dir)
            .env("BUILDVISE_PLUGIN_PATH", toolchains())
            .stdin(Stdio::null())
            .output()
            .expect("bash runs");
        (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

fn fixture_name(pm: Pm) -> &'static str {
    match pm {
        Pm::Pnpm => "pnpm-app",
        Pm::YarnClassic => "yarn-classic",
        Pm::YarnBerry => "yarn-berry",
        Pm::Bun => "bun-app",
    }
}

fn path_arg(dir: &Path) -> &str {
    dir.to_str().expect("UTF-8 path")
}

fn errors(answer: &Value) -> Vec<Value> {
    let all = answer["diagnostics"].as_array().cloned().unwrap_or_default();
    all.into_iter().filter(|d| d["severity"] == "error").collect()
}

/// A text answer with what differs between runs and machines replaced: the run id, the
/// project's folder, the time a run took, and berry's checksum of a folder dependency (of its
/// files as checked out).
fn stable(text: &str, id: &str, dir: &Path) -> String {
    let text = text.replace(id, "<id>").replace(path_arg(dir), "<project>");
    let text = regex::Regex::new(r"\[\d+(\.\d+)?m?s\]").unwrap().replace_all(&text, "[<time>]");
    regex::Regex::new(r"hash=[0-9a-f]+").unwrap().replace_all(&text, "hash=<hash>").into_owned()
}

/// `npm.test` runs the project's `test` script with the project's manager, and answers with the
/// failing test, where it failed, the counts, and the script's own exit code. The project, for
/// more calls, unless the test skipped.
fn the_test_script_fails_with_its_test_named(pm: Pm) -> Option<Project> {
    let p = Project::new(pm)?;
    let (run, answer) = p.exec("npm.test", &[]);
    let id = run_id(&answer);
    let log = p.log(&id);
    assert_eq!(run.code, Some(1), "the test runner's exit code{run}{log}");
    assert_eq!(p.ran(&id), (pm.program().to_string(), vec!["run".into(), "test".into()]));
    assert_eq!(answer["summary"]["passed"], 1, "{answer:#}{log}");
    assert_eq!(answer["summary"]["failed"], 1, "{answer:#}{log}");
    let [failure] = &errors(&answer)[..] else { panic!("one error, the failing test's:{answer:#}{log}") };
    assert_eq!(failure["test"], "applies the discount", "{answer:#}{log}");
    assert!(failure["file"].as_str().is_some_and(|f| f.ends_with("test/total.test.js")), "{answer:#}{log}");
    assert_eq!(failure["line"], 10, "{answer:#}{log}");
    Some(p)
}

#[test]
fn pnpm_test_runs_pnpm_and_reports_the_failing_test() {
    the_test_script_fails_with_its_test_named(Pm::Pnpm);
}

#[test]
fn yarn_classic_test_runs_yarn_1_and_reports_the_failing_test() {
    the_test_script_fails_with_its_test_named(Pm::YarnClassic);
}

#[test]
fn yarn_berry_test_runs_yarn_4_and_reports_the_failing_test() {
    the_test_script_fails_with_its_test_named(Pm::YarnBerry);
}

#[test]
fn bun_test_runs_bun_and_reports_its_own_test_runners_failure() {
    let Some(p) = the_test_script_fails_with_its_test_named(Pm::Bun) else { return };
    let first = common::runs(&p.sb)[0]["id"].as_str().expect("the first run's id").to_string();
    // bun's report (its version pinned) read as a whole, as an agent gets it on a rerun.
    let run = p.exec_text("npm.test", &[]);
    run.expect_code(1);
    let id = common::header_id(&run);
    insta::assert_snapshot!("bun_test", stable(&run.text(), &id, &p.dir).replace(&first, "<first>"));
    // bun's result lines name both tests, each with its time, for the JUnit report.
    let report = p.sb.run(["log", &id, "--format", "junit"]);
    let cases = common::junit_cases(&report.text());
    let named: Vec<(&str, &str)> = cases.iter().map(|(name, _, inner)| (name.as_str(), inner.as_str())).collect();
    assert_eq!(named, [("adds the prices", ""), ("applies the discount", "failure")], "{report}");
    assert!(cases.iter().all(|(_, time, _)| time.parse::<f64>().is_ok()), "{report}");
}

/// `npm.build` runs the `build` script with the project's manager: the one error is the script's
/// uncaught Error at its line, and the manager's line saying the script failed is not another.
fn the_build_script_s_error_is_the_only_one(pm: Pm) {
    let Some(p) = Project::new(pm) else { return };
    let (run, answer) = p.exec("npm.build", &[]);
    let id = run_id(&answer);
    let log = p.log(&id);
    assert_eq!(run.code, Some(1), "node's exit code for an uncaught error{run}{log}");
    assert_eq!(p.ran(&id), (pm.program().to_string(), vec!["run".into(), "build".into()]));
    let [error] = &errors(&answer)[..] else { panic!("one error:{answer:#}{log}") };
    assert_eq!(error["message"], "Error: release tag must start with \"v\": 1.0.0", "{answer:#}{log}");
    assert!(error["file"].as_str().is_some_and(|f| f.ends_with("build.js")), "{answer:#}{log}");
    assert_eq!(error["line"], 7, "{answer:#}{log}");
}

#[test]
fn pnpm_build_reports_the_scripts_error_not_elifecycle() {
    the_build_script_s_error_is_the_only_one(Pm::Pnpm);
}

#[test]
fn yarn_classic_build_reports_the_scripts_error_not_command_failed() {
    the_build_script_s_error_is_the_only_one(Pm::YarnClassic);
}

#[test]
fn yarn_berry_build_reports_the_scripts_error() {
    the_build_script_s_error_is_the_only_one(Pm::YarnBerry);
}

#[test]
fn bun_build_reports_the_scripts_error_not_bun_s_exit_line() {
    the_build_script_s_error_is_the_only_one(Pm::Bun);
}

/// `npm.ci` with the lockfile out of date: the manager's frozen install refuses, buildvise
/// answers with the manager's own error and exit code, and nothing was installed.
fn an_outdated_lockfile_is_the_managers_own_error(pm: Pm, frozen: &[&str], code: Option<&str>, message: &str) {
    let Some(p) = Project::new(pm) else { return };
    let run = p.exec_text("npm.ci", &["--confirm"]);
    let id = common::header_id(&run);
    let log = p.log(&id);
    assert_eq!(run.code, Some(1), "the manager's exit code{run}{log}");
    let frozen = frozen.iter().map(|a| a.to_string()).collect();
    assert_eq!(p.ran(&id), (pm.program().to_string(), frozen));
    let text = run.text();
    assert!(text.contains(message), "the manager's error:{run}{log}");
    if let Some(code) = code {
        assert!(text.contains(code), "the manager's code:{run}{log}");
    }
    assert!(!p.dir.join("node_modules/greet").exists(), "a frozen install changes nothing");
    insta::assert_snapshot!(format!("ci_{}", fixture_name(pm)), stable(&text, &id, &p.dir));
}

#[test]
fn pnpm_ci_with_an_outdated_lockfile_reports_err_pnpm_outdated_lockfile() {
    an_outdated_lockfile_is_the_managers_own_error(
        Pm::Pnpm,
        &["install", "--frozen-lockfile"],
        Some("ERR_PNPM_OUTDATED_LOCKFILE"),
        "Cannot install with \"frozen-lockfile\" because pnpm-lock.yaml is not up to date",
    );
}

#[test]
fn yarn_classic_ci_with_an_outdated_lockfile_reports_the_frozen_lockfile_error() {
    an_outdated_lockfile_is_the_managers_own_error(
        Pm::YarnClassic,
        &["install", "--frozen-lockfile"],
        None,
        "Your lockfile needs to be updated, but yarn was run with `--frozen-lockfile`.",
    );
}

#[test]
fn yarn_berry_ci_with_an_outdated_lockfile_reports_yn0028() {
    an_outdated_lockfile_is_the_managers_own_error(
        Pm::YarnBerry,
        &["install", "--immutable"],
        Some("YN0028"),
        "The lockfile would have been modified by this install, which is explicitly forbidden.",
    );
}

#[test]
fn bun_ci_with_an_outdated_lockfile_reports_the_frozen_lockfile_error() {
    an_outdated_lockfile_is_the_managers_own_error(
        Pm::Bun,
        &["install", "--frozen-lockfile"],
        None,
        "lockfile had changes, but lockfile is frozen",
    );
}

/// The hook rewrites the line an agent types for the project's manager into `buildvise exec`,
/// and that line, run with bash, prints buildvise's answer and exits with the tests' code.
fn the_typed_line_runs_through_buildvise(pm: Pm, line: &str, tool_and_args: &str) {
    let Some(p) = Project::new(pm) else { return };
    let exe = env!("CARGO_BIN_EXE_buildvise");
    let rewritten = p.hooked(line, &p.dir);
    assert_eq!(rewritten, format!("{exe} exec {}", common::unconfined(tool_and_args)), "{line}");
    let (code, answer) = p.bash(&rewritten, &p.dir);
    assert_eq!(code, Some(1), "the test script's exit code: {answer}");
    assert!(answer.starts_with("FAIL exit 1 · tests 1 passed, 1 failed"), "{answer}");
    assert!(answer.contains("applies the discount"), "{answer}");
}

#[test]
fn hook_runs_pnpm_test_through_buildvise_with_the_tests_exit_code() {
    the_typed_line_runs_through_buildvise(Pm::Pnpm, "pnpm test", "npm.test -- --pm=pnpm");
}

#[test]
fn hook_runs_yarn_test_through_buildvise_in_a_yarn_classic_project() {
    the_typed_line_runs_through_buildvise(Pm::YarnClassic, "yarn test", "npm.test -- --pm=yarn");
}

#[test]
fn hook_runs_yarn_test_through_buildvise_in_a_yarn_berry_project() {
    the_typed_line_runs_through_buildvise(Pm::YarnBerry, "yarn test", "npm.test -- --pm=yarn");
}

#[test]
fn hook_runs_bun_run_test_through_buildvise() {
    the_typed_line_runs_through_buildvise(Pm::Bun, "bun run test", "npm.run -- --pm=bun test");
}

/// In a project npm runs, each other manager's line stays as typed, although that manager is on
/// PATH and the script exists: a rewrite never changes which manager runs.
#[test]
fn hook_leaves_other_managers_lines_unchanged_in_an_npm_project() {
    let Some(p) = Project::new(Pm::Pnpm) else { return };
    let npm = p.sb.work().join("npm-app");
    common::copy_tree(&root().join("tests/fixtures/npm/yarn-classic"), &npm);
    std::fs::remove_file(npm.join("yarn.lock")).expect("no yarn lockfile");
    std::fs::write(npm.join("package-lock.json"), "{\"name\": \"yarn-classic\", \"lockfileVersion\": 3}\n")
        .expect("npm's lockfile");
    let exe = env!("CARGO_BIN_EXE_buildvise");
    // The project and its script are fine: npm's own line is rewritten.
    assert_eq!(p.hooked("npm test", &npm), format!("{exe} exec npm.test --sandbox off -- --pm=npm"));
    for line in ["pnpm test", "yarn test", "bun run test", "pnpm run build"] {
        assert_eq!(p.hooked(line, &npm), line, "{line}");
    }
}
