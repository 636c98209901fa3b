//! The reports CI systems read (`--format sarif|junit|github|gitlab`), made by the real binary
//! for every captured case with diagnostics or tests (this repository's and the shared corpus
//! beside it), each checked by a validator buildvise has no part in: SARIF against the OASIS
//! 2.1.0 JSON schema with Python's `jsonschema`, JUnit XML against the Ant JUnit XSD with
//! `xmllint`, GitHub's workflow commands against the syntax GitHub documents, GitLab's Code
//! Quality issues against the fields GitLab documents. Each report must also say what the
//! answer said: as many results and annotations as diagnostics, as many failed testcases as
//! failed tests.

mod common;

use common::cases::{Case, case_dirs, sandbox};
use common::{Sandbox, debian_program, junit_cases, python_venv, root, skip};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

/// A case, the JSON answer buildvise gives it, and the report in each format.
struct Reported {
    case: Case,
    answer: Value,
}

impl Reported {
    /// The diagnostics of `severity` a report lists: all but the toolchain's notices about
    /// itself (its errors stay: they may be why the run failed).
    fn listed(&self, severity: &str) -> Vec<&Value> {
        let all = self.answer[format!("{severity}s")].as_array().into_iter().flatten();
        all.filter(|d| severity == "error" || d["toolchain"] != true).collect()
    }

    fn diagnostics(&self, severity: &str) -> usize {
        self.listed(severity).len()
    }

    /// Failed tests no diagnostic names: a report lists each as an error of its own.
    fn bare_failed_tests(&self) -> usize {
        let named: Vec<&Value> = self.answer["errors"].as_array().into_iter().flatten().map(|d| &d["test"]).collect();
        let failed = self.answer["failedTests"].as_array().into_iter().flatten();
        failed.filter(|t| !named.contains(t)).count()
    }

    fn has_findings(&self) -> bool {
        self.diagnostics("error") + self.diagnostics("warning") > 0 || !self.answer["summary"].is_null()
    }

    fn report(&self, sandbox: &Sandbox, format: &str) -> String {
        let mut args = self.case.parse_args(false, "standard");
        args.extend(["--format".into(), format.into()]);
        sandbox.run(&args).expect_code(0).text()
    }
}

/// Every case whose answer has a diagnostic or a test summary: the ones a report has to carry.
fn reported(sandbox: &Sandbox) -> Vec<Reported> {
    let mut dirs = case_dirs(&root().join("tests/fixtures/cases"));
    let shared = root().join("../shared/corpus");
    if shared.is_dir() {
        dirs.extend(case_dirs(&shared));
    } else {
        skip(&format!("the shared corpus ({}) is absent; only this repository's cases were read", shared.display()));
    }
    let all: Vec<Reported> = dirs
        .iter()
        .map(|dir| {
            let case = Case::read(dir);
            let mut args = case.parse_args(false, "standard");
            args.push("--json".into());
            let answer = sandbox.run(&args).expect_code(0).json();
            Reported { case, answer }
        })
        .collect();
    let kept: Vec<Reported> = all.into_iter().filter(Reported::has_findings).collect();
    assert!(kept.len() > 100, "only {} cases with findings: is the fixture folder missing?", kept.len());
    kept
}

/// The reports of `format`, written to files named after their cases, for a validator to read.
fn write_reports(sandbox: &Sandbox, cases: &[Reported], format: &str, ext: &str) -> (tempfile::TempDir, Vec<PathBuf>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let files = cases
        .iter()
        .map(|r| {
            let file = dir.path().join(format!("{}__{}.{ext}", r.case.toolchain, r.case.id));
            std::fs::write(&file, r.report(sandbox, format)).expect("write report");
            file
        })
        .collect();
    (dir, files)
}

fn schema(name: &str) -> PathBuf {
    root().join("tests/fixtures/schemas").join(name)
}

/// Runs a validator; panics with what it printed unless it succeeded.
fn validate(cmd: &mut Command, what: &str) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what} refused reports:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn sarif_reports_are_valid_sarif_2_1_0_and_carry_every_diagnostic() {
    let Some(venv) = python_venv("jsonschema-venv", "jsonschema==4.23.0") else {
        return skip("no python3 to run the JSON schema validator");
    };
    let sandbox = sandbox();
    let cases = reported(&sandbox);
    let (_dir, files) = write_reports(&sandbox, &cases, "sarif", "sarif");
    for (r, file) in cases.iter().zip(&files) {
        let sarif: Value = serde_json::from_slice(&std::fs::read(file).expect("read")).expect("SARIF is JSON");
        let results = sarif["runs"][0]["results"].as_array().map_or(0, Vec::len);
        let listed = r.diagnostics("error") + r.diagnostics("warning") + r.diagnostics("info") + r.bare_failed_tests();
        assert_eq!(results, listed, "{}: one result per diagnostic and failed test", r.case.name());
    }
    // The schema declares draft 4; the validator is told so rather than trusting a guess.
    let script = "import json, sys\nfrom jsonschema import Draft4Validator\n\
                  v = Draft4Validator(json.load(open(sys.argv[1])))\nbad = 0\n\
                  for f in sys.argv[2:]:\n    for e in v.iter_errors(json.load(open(f))):\n\
                  \x20       bad += 1\n        print(f, list(e.absolute_path), e.message)\nsys.exit(1 if bad else 0)\n";
    validate(
        Command::new(venv.join("bin/python")).arg("-c").arg(script).arg(schema("sarif-schema-2.1.0.json")).args(&files),
        "jsonschema with the SARIF 2.1.0 schema",
    );
}

#[test]
fn junit_reports_are_valid_against_the_ant_junit_schema_and_count_the_failures() {
    let Some(xmllint) = debian_program("libxml2-utils", "xmllint") else {
        return skip("no apt-get and dpkg to unpack xmllint from Debian's libxml2-utils");
    };
    let sandbox = sandbox();
    let cases = reported(&sandbox);
    let (_dir, files) = write_reports(&sandbox, &cases, "junit", "xml");
    validate(Command::new(xmllint).arg("--noout").arg("--schema").arg(schema("JUnit.xsd")).args(&files), "xmllint");
    for (r, file) in cases.iter().zip(&files) {
        let xml = std::fs::read_to_string(file).expect("read");
        let failed = r.answer["failedTests"].as_array().map_or(0, Vec::len);
        let failures = xml.matches("<failure").count();
        assert!(failures >= failed, "{}: {failures} <failure> for {failed} failed tests:\n{xml}", r.case.name());
        if !r.answer["success"].as_bool().unwrap_or(false) {
            assert!(
                failures + xml.matches("<error").count() > 0,
                "{}: a failed run reports no failure:\n{xml}",
                r.case.name()
            );
        }
        // Where the parser named the tests that passed, it named each the tool counted; pytest
        // counts a test that errored at teardown as passed too, and a report as failed.
        let cases = junit_cases(&xml);
        let passed = cases.iter().filter(|(_, _, inner)| inner.is_empty()).count() as u64;
        let counted = r.answer["summary"]["passed"].as_u64().unwrap_or(0);
        let errors = r.answer["summary"]["errors"].as_u64().unwrap_or(0);
        assert!(
            passed == 0 || (passed <= counted && counted <= passed + errors),
            "{}: {passed} passed testcases, {counted} counted:\n{xml}",
            r.case.name()
        );
    }
}

#[test]
fn github_annotations_follow_the_documented_workflow_command_syntax() {
    let sandbox = sandbox();
    for r in reported(&sandbox) {
        let text = r.report(&sandbox, "github");
        let mut counted = [0usize; 2];
        for line in text.lines() {
            let command = workflow_command(line).unwrap_or_else(|why| panic!("{}: {why}: {line}", r.case.name()));
            match command {
                "error" => counted[0] += 1,
                "warning" => counted[1] += 1,
                _ => {}
            }
        }
        let expected = [r.diagnostics("error") + r.bare_failed_tests(), r.diagnostics("warning")];
        assert_eq!(counted, expected, "{}:\n{text}", r.case.name());
    }
}

/// The command of one line GitHub reads as a workflow command, checked against GitHub's
/// "Workflow commands for GitHub Actions" reference: `::NAME k=v,k=v::MESSAGE`, NAME one of the
/// annotation commands, keys among those documented, numbers where numbers go, and `%`, CR, LF
/// (and in values `:` and `,`) only escaped.
fn workflow_command(line: &str) -> Result<&str, String> {
    let rest = line.strip_prefix("::").ok_or("not a workflow command")?;
    let (head, message) = rest.split_once("::").ok_or("no `::` before the message")?;
    let (name, properties) = head.split_once(' ').unwrap_or((head, ""));
    if !["error", "warning", "notice"].contains(&name) {
        return Err(format!("`{name}` is no annotation command"));
    }
    escaped(message, false)?;
    for property in properties.split(',').filter(|p| !p.is_empty()) {
        let (key, value) = property.split_once('=').ok_or("a property without `=`")?;
        match key {
            "file" | "title" => escaped(value, true)?,
            "line" | "endLine" | "col" | "endColumn" => {
                value.parse::<u32>().map_err(|_| format!("{key}={value} is no line or column number"))?;
            }
            _ => return Err(format!("`{key}` is no documented property")),
        }
    }
    Ok(name)
}

fn escaped(text: &str, property: bool) -> Result<(), String> {
    if text.contains(['\r', '\n']) || (property && text.contains([',', ':'])) {
        return Err(format!("`{text}` holds a character that must be escaped"));
    }
    let mut rest = text;
    while let Some(at) = rest.find('%') {
        let code = rest.get(at..at + 3).unwrap_or("");
        let allowed: &[&str] = if property { &["%25", "%0D", "%0A", "%3A", "%2C"] } else { &["%25", "%0D", "%0A"] };
        if !allowed.contains(&code) {
            return Err(format!("`{text}` has a `%` that is no escape"));
        }
        rest = &rest[at + 3..];
    }
    Ok(())
}

#[test]
fn gitlab_code_quality_issues_have_the_documented_fields() {
    let sandbox = sandbox();
    for r in reported(&sandbox) {
        let text = r.report(&sandbox, "gitlab");
        let issues: Vec<Value> =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: not a JSON array: {e}", r.case.name()));
        let mut fingerprints = std::collections::HashSet::new();
        for issue in &issues {
            let field = |path: &[&str]| path.iter().fold(issue, |v, k| &v[*k]).clone();
            for key in ["description", "check_name", "fingerprint"] {
                assert!(
                    field(&[key]).as_str().is_some_and(|s| !s.is_empty()),
                    "{}: no {key} in {issue}",
                    r.case.name()
                );
            }
            let severity = field(&["severity"]);
            assert!(
                ["info", "minor", "major", "critical", "blocker"].contains(&severity.as_str().unwrap_or("")),
                "{}: severity {severity}",
                r.case.name()
            );
            // A path in the repository: relative, neither `/x` nor `C:\x`.
            let relative = |p: &str| !p.is_empty() && !p.starts_with('/') && p.get(1..2) != Some(":");
            assert!(field(&["location", "path"]).as_str().is_some_and(relative), "{}: {issue}", r.case.name());
            assert!(
                field(&["location", "lines", "begin"]).as_u64().is_some_and(|n| n >= 1),
                "{}: {issue}",
                r.case.name()
            );
            assert!(
                fingerprints.insert(field(&["fingerprint"]).to_string()),
                "{}: a fingerprint twice: {issue}",
                r.case.name()
            );
        }
        let placed = |severity: &str| {
            r.answer[format!("{severity}s")].as_array().into_iter().flatten().filter(|d| d["file"].is_string()).count()
        };
        let most = placed("error") + placed("warning") + placed("info");
        assert!(issues.len() <= most, "{}: more issues than diagnostics with a file", r.case.name());
    }
}

/// A CI step: `exec` keeps the tool's exit code, prints GitHub's annotations on stdout and writes
/// SARIF and JUnit to files; `log` gives the stored run again in another format without running
/// it; two reports that both want stdout are refused, naming what to send.
#[test]
fn exec_writes_the_reports_ci_reads_and_keeps_the_tools_exit_code() {
    let sb = Sandbox::new(&[common::toolchains()]);
    let config = r#"
[tools."ci.check"]
run = ["sh", "-c", "echo 'src/a.c:3: error: width is undefined'; echo 'src/b.c:7: warning: unused b'; exit 2"]
[[tools."ci.check".patterns]]
regex = '^(?P<file>[^:]+):(?P<line>\d+): (?P<severity>error|warning): (?P<message>.*)$'
"#;
    let dir = sb.project_with_config("reported", config);
    let cwd = dir.to_str().expect("UTF-8 path");
    let (sarif, junit) = (dir.join("out.sarif"), dir.join("junit.xml"));
    let sarif_arg = format!("sarif={}", sarif.display());
    let junit_arg = format!("junit={}", junit.display());
    let exec = sb
        .run(["exec", "ci.check", "--cwd", cwd, "--format", "github", "--format", &sarif_arg, "--format", &junit_arg]);
    exec.expect_code(2);
    assert_eq!(
        exec.text(),
        "::error file=src/a.c,line=3::width is undefined\n::warning file=src/b.c,line=7::unused b\n",
        "{exec}"
    );
    let report: Value = serde_json::from_slice(&std::fs::read(&sarif).expect("the SARIF file")).expect("JSON");
    let uri = &report["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"];
    assert_eq!(uri, "src/a.c", "{report:#}");
    assert!(
        std::fs::read_to_string(&junit).expect("the JUnit file").contains("<error"),
        "a failed build is an error case"
    );

    let id = common::runs(&sb)[0]["id"].as_str().expect("a run id").to_string();
    let gitlab = sb.run(["log", &id, "--format", "gitlab"]);
    let issues: Value = gitlab.expect_code(0).json();
    assert_eq!(issues.as_array().map(Vec::len), Some(2), "{gitlab}");

    let both = sb.run(["log", &id, "--format", "sarif", "--format", "junit"]);
    assert_ne!(both.code, Some(0), "{both}");
    assert!(both.stderr.contains("give every --format but one a file"), "{both}");
}
