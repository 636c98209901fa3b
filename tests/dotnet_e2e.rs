//! End to end for the dotnet plugin, in two halves.
//!
//! With a stand-in `dotnet` (a shell script first on PATH that records its argv, environment and
//! cwd, then prints canned MSBuild/VSTest output and writes a TRX report where it was told to),
//! the tests prove that what `plan()` decides reaches the process through the host: the verb and
//! the user's arguments, the environment that keeps output stable, the TRX flags pointing into
//! the run's own artifact directory, and that the printed lines and the report come back as
//! diagnostics. These need no .NET SDK and always run.
//!
//! With the real SDK, on copies of `tests/fixtures/dotnet/` (`broken`: one CS0103; `tests`: an
//! xunit project with one pass, one failure and one skip; `crash`: a program that throws at
//! startup; `misformatted`: a statement indented too deep), the tests check the diagnostics
//! against what the compiler, VSTest, the runtime and `dotnet format` print. Without `dotnet` on
//! PATH they skip (`common::skip`).

// Real toolchains behind shell-script shims and links: Unix only.
#![cfg(unix)]

mod common;

use common::{Sandbox, root, run_command, run_id, toolchains};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn sandbox() -> Sandbox {
    Sandbox::new(&[toolchains()])
}

/// The stand-in SDK. It writes `argv` (one argument a line), `env` and `cwd` next to itself.
/// `build` prints one compiler error twice, as the classic logger does; `restore` one NuGet
/// error; `test` writes a TRX report with one failure into `--results-directory` under the
/// `LogFileName` of `--logger trx;…`, and prints only VSTest's summary line, so that the failure
/// can only come from the report.
const FAKE_DOTNET: &str = r#"#!/bin/sh
here=${0%/*}
: > "$here/argv"
for arg in "$@"; do printf '%s\n' "$arg" >> "$here/argv"; done
env > "$here/env"
pwd > "$here/cwd"
case "$1" in
build)
  error="$PWD/Program.cs(8,16): error CS0103: The name 'totl' does not exist in the current context [$PWD/Broken.csproj]"
  echo "  Determining projects to restore..."
  echo "  All projects are up-to-date for restore."
  echo "$error"
  echo ""
  echo "Build FAILED."
  echo ""
  echo "$error"
  echo "    0 Warning(s)"
  echo "    1 Error(s)"
  echo ""
  echo "Time Elapsed 00:00:01.02"
  exit 1
  ;;
restore)
  echo "  Determining projects to restore..."
  echo "$PWD/Broken.csproj : error NU1101: Unable to find package Nope.Missing. No packages exist with this id in source(s): local-feed"
  echo "  Failed to restore $PWD/Broken.csproj (in 84 ms)."
  exit 1
  ;;
test)
  results=""
  name=""
  previous=""
  for arg in "$@"; do
    if [ "$previous" = "--results-directory" ]; then results=$arg; fi
    case "$arg" in trx\;LogFileName=*) name=${arg#*LogFileName=} ;; esac
    previous=$arg
  done
  if [ -n "$results" ] && [ -n "$name" ]; then
    cat > "$results/$name" <<TRX
<?xml version="1.0" encoding="utf-8"?>
<TestRun id="6b1c3f0e-0000-4000-8000-000000000001" name="fake" xmlns="http://microsoft.com/schemas/VisualStudio/TeamTest/2010">
  <Results>
    <UnitTestResult testName="Calc.Tests.CalcTests.AddsWrongly" outcome="Failed">
      <Output>
        <ErrorInfo>
          <Message>Assert.Equal() Failure: Values differ</Message>
          <StackTrace>   at Calc.Tests.CalcTests.AddsWrongly() in $PWD/CalcTests.cs:line 13</StackTrace>
        </ErrorInfo>
      </Output>
    </UnitTestResult>
    <UnitTestResult testName="Calc.Tests.CalcTests.Adds" outcome="Passed" />
    <UnitTestResult testName="Calc.Tests.CalcTests.Divides" outcome="NotExecuted" />
  </Results>
  <ResultSummary outcome="Failed">
    <Counters total="3" executed="2" passed="1" failed="1" />
  </ResultSummary>
</TestRun>
TRX
    echo "Results File: $results/$name"
  fi
  echo "Failed!  - Failed:     1, Passed:     1, Skipped:     1, Total:     3, Duration: 21 ms - Calc.Tests.dll (net8.0)"
  exit 1
  ;;
esac
exit 3
"#;

/// A directory holding the stand-in `dotnet`, and what it recorded.
struct FakeSdk {
    dir: PathBuf,
}

impl FakeSdk {
    fn install(sb: &Sandbox) -> Self {
        let dir = sb.work().join("fake-sdk");
        std::fs::create_dir_all(&dir).expect("create fake sdk dir");
        let script = dir.join("dotnet");
        std::fs::write(&script, FAKE_DOTNET).expect("write fake dotnet");
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod fake dotnet");
        FakeSdk { dir }
    }

    /// `exec TOOL --json` in `cwd` with the stand-in first on PATH.
    fn exec(&self, sb: &Sandbox, tool: &str, cwd: &Path, args: &[&str]) -> common::Run {
        let mut cmd = sb.command(["exec", tool, "--cwd", cwd.to_str().expect("UTF-8 path"), "--detail", "full"]);
        cmd.arg("--json");
        if !args.is_empty() {
            cmd.arg("--").args(args);
        }
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut dirs = vec![self.dir.clone()];
        dirs.extend(std::env::split_paths(&path));
        cmd.env("PATH", std::env::join_paths(dirs).expect("PATH"));
        // Set in the caller's shell, these would hide whether the plan set them.
        for name in ["DOTNET_CLI_UI_LANGUAGE", "MSBUILDTERMINALLOGGER", "DOTNET_NOLOGO", "DOTNET_CLI_TELEMETRY_OPTOUT"]
        {
            cmd.env_remove(name);
        }
        run_command(&mut cmd)
    }

    fn ran(&self) -> bool {
        self.dir.join("argv").exists()
    }

    fn argv(&self) -> Vec<String> {
        let text = std::fs::read_to_string(self.dir.join("argv")).expect("the fake dotnet ran");
        text.lines().map(str::to_string).collect()
    }

    fn env(&self) -> BTreeMap<String, String> {
        let text = std::fs::read_to_string(self.dir.join("env")).expect("the fake dotnet ran");
        text.lines().filter_map(|l| l.split_once('=')).map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    fn cwd(&self) -> PathBuf {
        let text = std::fs::read_to_string(self.dir.join("cwd")).expect("the fake dotnet ran");
        PathBuf::from(text.trim_end())
    }
}

/// An empty project directory: the stand-in reads no sources.
fn project(sb: &Sandbox, name: &str) -> PathBuf {
    let dir = sb.work().join(name);
    std::fs::create_dir_all(&dir).expect("create project dir");
    dir
}

/// The diagnostics of an answer as (severity, code, file, line, column, test, message).
type Diag = (String, String, String, u64, u64, String, String);

/// The one compile error both build fixtures' canned output reports.
fn program_cs0103() -> Diag {
    (
        "error".to_string(),
        "CS0103".to_string(),
        "Program.cs".to_string(),
        8,
        16,
        String::new(),
        "The name 'totl' does not exist in the current context".to_string(),
    )
}

fn diagnostics(answer: &Value) -> Vec<Diag> {
    let mut found: Vec<_> = answer["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| {
            let s = |k: &str| d[k].as_str().unwrap_or("").to_string();
            let n = |k: &str| d[k].as_u64().unwrap_or(0);
            (s("severity"), s("code"), s("file"), n("line"), n("column"), s("test"), s("message"))
        })
        .collect();
    found.sort();
    found
}

fn strings(values: &[&str]) -> Vec<String> {
    values.iter().map(|s| s.to_string()).collect()
}

fn assert_quiet_english_env(sdk: &FakeSdk) {
    let env = sdk.env();
    for (name, value) in [
        ("DOTNET_CLI_UI_LANGUAGE", "en"),
        ("MSBUILDTERMINALLOGGER", "off"),
        ("DOTNET_NOLOGO", "1"),
        ("DOTNET_CLI_TELEMETRY_OPTOUT", "1"),
    ] {
        assert_eq!(env.get(name).map(String::as_str), Some(value), "{name} in the environment dotnet saw");
    }
}

#[test]
fn build_plan_reaches_dotnet_and_its_error_comes_back_once() {
    let sb = sandbox();
    let sdk = FakeSdk::install(&sb);
    let dir = project(&sb, "Broken");
    let run = sdk.exec(&sb, "dotnet.build", &dir, &["Broken.csproj", "-c", "Release"]);
    run.expect_code(1);

    assert_eq!(sdk.argv(), strings(&["build", "Broken.csproj", "-c", "Release"]));
    assert_eq!(sdk.cwd(), dir);
    assert_quiet_english_env(&sdk);

    let answer = run.json();
    assert_eq!(answer["status"], "failed", "{run}");
    assert_eq!((answer["errors"].as_u64(), answer["warnings"].as_u64()), (Some(1), Some(0)), "{run}");
    // MSBuild printed it twice (inline and after `Build FAILED.`); the path is the project's.
    assert_eq!(diagnostics(&answer), [program_cs0103()], "{run}");
    assert!(answer.get("summary").is_none(), "a build has no test summary:{run}");
    // No test run, so no TRX flags.
    assert!(!sdk.argv().iter().any(|a| a.contains("trx")), "{:?}", sdk.argv());
}

#[test]
fn restore_plan_reaches_dotnet_and_nuget_errors_come_back() {
    let sb = sandbox();
    let sdk = FakeSdk::install(&sb);
    let dir = project(&sb, "Broken");
    let run = sdk.exec(&sb, "dotnet.restore", &dir, &[]);
    run.expect_code(1);
    assert_eq!(sdk.argv(), strings(&["restore"]));
    assert_quiet_english_env(&sdk);
    let answer = run.json();
    let found = diagnostics(&answer);
    assert_eq!(found.len(), 1, "{run}");
    let (severity, code, file, _, _, _, message) = &found[0];
    assert_eq!((severity.as_str(), code.as_str(), file.as_str()), ("error", "NU1101", "Broken.csproj"), "{run}");
    assert!(message.starts_with("Unable to find package Nope.Missing."), "{run}");
}

#[test]
fn test_plan_writes_trx_into_the_runs_artifact_dir_and_the_report_is_read() {
    let sb = sandbox();
    let sdk = FakeSdk::install(&sb);
    let dir = project(&sb, "Calc.Tests");
    let run = sdk.exec(&sb, "dotnet.test", &dir, &["--no-restore", "--", "RunConfiguration.MaxCpuCount=1"]);
    run.expect_code(1);
    let answer = run.json();
    let id = run_id(&answer);

    // The report goes into the run's own artifact directory, and the test platform's settings
    // stay after `--`.
    let artifacts = sb.state().join("runs").join(&id).join("artifacts");
    assert_eq!(
        sdk.argv(),
        strings(&[
            "test",
            "--no-restore",
            "--logger",
            "trx;LogFileName=results.trx",
            "--results-directory",
            artifacts.to_str().unwrap(),
            "--",
            "RunConfiguration.MaxCpuCount=1",
        ])
    );
    assert_quiet_english_env(&sdk);
    let report = artifacts.join("results.trx");
    assert!(report.is_file(), "no report at {}", report.display());

    // The console said only how many failed; which one and where came from the report.
    assert_eq!(answer["status"], "failed", "{run}");
    assert_eq!(
        answer["summary"],
        json!({"passed": 1, "failed": 1, "skipped": 1, "total": 3, "projectsBuildFailed": 0}),
        "{run}"
    );
    assert_eq!(answer["failedTests"], json!(["Calc.Tests.CalcTests.AddsWrongly"]), "{run}");
    assert_eq!(
        diagnostics(&answer),
        [(
            "error".to_string(),
            String::new(),
            "CalcTests.cs".to_string(),
            13,
            0,
            "Calc.Tests.CalcTests.AddsWrongly".to_string(),
            "Assert.Equal() Failure: Values differ".to_string()
        )],
        "{run}"
    );
}

#[test]
fn format_without_verify_no_changes_needs_confirm() {
    let sb = sandbox();
    let sdk = FakeSdk::install(&sb);
    let dir = project(&sb, "Messy");
    let run = sdk.exec(&sb, "dotnet.format", &dir, &[]);
    run.expect_code(125);
    assert!(!sdk.ran(), "dotnet format rewrote files without confirm");
    sdk.exec(&sb, "dotnet.format", &dir, &["--verify-no-changes"]);
    assert_eq!(sdk.argv(), strings(&["format", "--verify-no-changes"]));
}

#[test]
fn a_refused_plan_runs_nothing_and_says_what_to_send() {
    let sb = sandbox();
    let sdk = FakeSdk::install(&sb);
    let dir = project(&sb, "Broken");
    let run = sdk.exec(&sb, "dotnet.build", &dir, &["-tl:on"]);
    run.expect_code(125);
    assert!(run.stderr.contains("-tl:on") && run.stderr.contains("send the arguments without it"), "{run}");
    assert!(!sdk.ran(), "dotnet was started for a refused plan");
    assert_eq!(sb.run(["runs", "--json"]).json(), json!([]));
}

/// The real SDK's major version (`8` from `8.0.404`), or None after skipping the test.
fn real_sdk_or_skip() -> Option<String> {
    let out = Command::new("dotnet").arg("--version").stdin(Stdio::null()).output();
    let version = match out {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).trim().to_string(),
        _ => {
            common::skip("dotnet not found; the real .NET SDK tests need it");
            return None;
        }
    };
    let major = version.split('.').next().unwrap_or_default();
    assert!(major.parse::<u32>().is_ok(), "unexpected `dotnet --version`: {version}");
    Some(major.to_string())
}

/// A copy of `tests/fixtures/dotnet/NAME` that targets the installed SDK's own framework, so that
/// no other targeting pack or runtime is needed.
fn real_fixture(sb: &Sandbox, name: &str, major: &str) -> PathBuf {
    let dest = sb.work().join(name);
    common::copy_tree(&root().join("tests/fixtures/dotnet").join(name), &dest);
    for entry in std::fs::read_dir(&dest).expect("read fixture copy").flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "csproj") {
            let text = std::fs::read_to_string(&path).expect("read csproj");
            std::fs::write(&path, text.replace("net8.0", &format!("net{major}.0"))).expect("write csproj");
        }
    }
    dest
}

fn real_exec(sb: &Sandbox, tool: &str, dir: &Path) -> common::Run {
    real_exec_with(sb, tool, dir, &[])
}

fn real_exec_with(sb: &Sandbox, tool: &str, dir: &Path, args: &[&str]) -> common::Run {
    let mut cmd = sb.command(["exec", tool, "--cwd", dir.to_str().expect("UTF-8 path"), "--detail", "full", "--json"]);
    if !args.is_empty() {
        cmd.arg("--").args(args);
    }
    run_command(&mut cmd)
}

#[test]
fn real_run_reports_the_unhandled_exception_at_its_frame() {
    let Some(major) = real_sdk_or_skip() else { return };
    let sb = sandbox();
    let dir = real_fixture(&sb, "crash", &major);
    let run = real_exec(&sb, "dotnet.run", &dir);
    assert_ne!(run.code, Some(0), "{run}");
    let answer = run.json();
    let errors: Vec<_> = diagnostics(&answer).into_iter().filter(|d| d.0 == "error").collect();
    assert_eq!(errors.len(), 1, "{run}");
    let (_, _, file, line, _, _, message) = &errors[0];
    assert_eq!((file.as_str(), *line), ("Program.cs", 10), "{run}");
    assert_eq!(message, "System.InvalidOperationException: queue is closed", "{run}");
}

#[test]
fn real_format_check_reports_the_misindented_line() {
    let Some(major) = real_sdk_or_skip() else { return };
    let sb = sandbox();
    let dir = real_fixture(&sb, "misformatted", &major);
    let before = std::fs::read_to_string(dir.join("Program.cs")).expect("read Program.cs");
    let run = real_exec_with(&sb, "dotnet.format", &dir, &["--verify-no-changes"]);
    assert_ne!(run.code, Some(0), "{run}");
    let answer = run.json();
    let errors: Vec<_> = diagnostics(&answer).into_iter().filter(|d| d.0 == "error").collect();
    assert_eq!(errors.len(), 1, "one line to fix: {run}");
    assert_eq!((errors[0].2.as_str(), errors[0].3), ("Program.cs", 7), "{run}");
    let after = std::fs::read_to_string(dir.join("Program.cs")).expect("read Program.cs");
    assert_eq!(before, after, "--verify-no-changes changed the file");
}

#[test]
fn real_build_reports_the_compiler_error_once() {
    let Some(major) = real_sdk_or_skip() else { return };
    let sb = sandbox();
    let dir = real_fixture(&sb, "broken", &major);
    let run = real_exec(&sb, "dotnet.build", &dir);
    run.expect_code(1);
    let answer = run.json();
    assert_eq!(answer["status"], "failed", "{run}");
    let errors: Vec<_> = diagnostics(&answer).into_iter().filter(|d| d.0 == "error").collect();
    assert_eq!(errors, [program_cs0103()], "{run}");
}

#[test]
fn real_test_run_reports_the_failure_summary_and_trx() {
    let Some(major) = real_sdk_or_skip() else { return };
    let sb = sandbox();
    let dir = real_fixture(&sb, "tests", &major);
    let run = real_exec(&sb, "dotnet.test", &dir);
    run.expect_code(1);
    let answer = run.json();
    assert_eq!(answer["status"], "failed", "{run}");
    assert_eq!(
        answer["summary"],
        json!({"passed": 1, "failed": 1, "skipped": 1, "total": 3, "projectsBuildFailed": 0}),
        "{run}"
    );
    assert_eq!(answer["failedTests"], json!(["Calc.Tests.CalcTests.AddsWrongly"]), "{run}");
    let failures: Vec<_> = diagnostics(&answer).into_iter().filter(|d| d.0 == "error").collect();
    assert_eq!(failures.len(), 1, "{run}");
    let (_, _, file, line, _, test, message) = &failures[0];
    assert_eq!(
        (file.as_str(), *line, test.as_str()),
        ("CalcTests.cs", 13, "Calc.Tests.CalcTests.AddsWrongly"),
        "{run}"
    );
    assert!(message.starts_with("Assert.Equal() Failure"), "{run}");
    let report = sb.state().join("runs").join(run_id(&answer)).join("artifacts/results.trx");
    assert!(report.is_file(), "no TRX at {}:{run}", report.display());
}
