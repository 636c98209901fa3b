//! JUnit XML in the Ant form CI systems read, valid against the widely used schema of Windy Road
//! (`JUnit.xsd`): one `<testsuite>` for the run inside `<testsuites>`, a `<testcase>` per failed
//! test and per error outside tests, the counts from the run's test summary.

use super::{Problem, command_line, full_message, place, problems};
use crate::outcome::Finished;
use crate::store::RunStatus;
use buildvise_plugin_api::{Diagnostic, Severity};
use std::fmt::Write;

/// The schema requires a host name; a report may be rendered from a saved log long after and
/// elsewhere, so the run's machine is not known and this stands for it.
const HOSTNAME: &str = "localhost";

pub(super) fn render(f: &Finished, tool_version: &str) -> String {
    let problems = problems(f);
    let cases = cases(f, &problems);
    let counts = Counts::of(f, &cases);
    let m = &f.meta;
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
    // `package` and `id` are required of a suite inside `<testsuites>`.
    let _ = writeln!(
        out,
        "  <testsuite name={} package=\"buildvise\" id=\"0\" timestamp=\"{}\" hostname=\"{HOSTNAME}\" tests=\"{}\" \
         failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{}\">",
        attr(&m.tool),
        timestamp(m.started_ms),
        counts.tests,
        counts.failures,
        counts.errors,
        counts.skipped,
        seconds(m.ended_ms.map_or(0, |end| end.saturating_sub(m.started_ms))),
    );
    out.push_str("    <properties>\n");
    for (name, value) in properties(f, tool_version) {
        let _ = writeln!(out, "      <property name={} value={}/>", attr(name), attr(&value));
    }
    out.push_str("    </properties>\n");
    for case in &cases {
        write_case(&mut out, case);
    }
    let _ = writeln!(out, "    <system-out>{}</system-out>", text(&warnings(f, &problems)));
    out.push_str("    <system-err></system-err>\n  </testsuite>\n</testsuites>\n");
    out
}

/// A `<testcase>`: a failed test (`<failure>`) or an error outside any test (`<error>`).
struct Case {
    name: String,
    classname: String,
    kind: Kind,
    message: String,
    type_: String,
    body: String,
}

#[derive(PartialEq, Eq)]
enum Kind {
    Failure,
    Error,
}

/// The failing cases. Passed tests get none: the summary counts them but the parsers do not name
/// them, and cases named after nothing would say less than the counts. Errors outside tests (a
/// compile error) each become a case, so that a report of a build that failed shows the failure;
/// a run that failed with nothing parsed gets one case for the run itself for the same reason.
fn cases(f: &Finished, problems: &[Problem]) -> Vec<Case> {
    let mut cases: Vec<Case> = Vec::new();
    let errors = problems.iter().map(|p| &*p.diagnostic).filter(|d| d.severity == Severity::Error);
    for d in errors {
        match &d.test {
            Some(test) => match cases.iter_mut().find(|c| c.kind == Kind::Failure && &c.name == test) {
                Some(case) => {
                    case.body.push_str("\n\n");
                    case.body.push_str(&described(d, &f.meta.cwd));
                }
                None => cases.push(test_case(f, test, d)),
            },
            None => cases.push(error_case(f, d)),
        }
    }
    if cases.is_empty() && !f.result.success {
        cases.push(run_case(f));
    }
    cases
}

fn test_case(f: &Finished, test: &str, d: &Diagnostic) -> Case {
    // `module::test` and `file.py::test` name their class before the last `::`.
    let (classname, name) = match test.rsplit_once("::") {
        Some((class, _)) if !class.is_empty() => (class.to_string(), test.to_string()),
        _ => (f.meta.tool.clone(), test.to_string()),
    };
    Case {
        name,
        classname,
        kind: Kind::Failure,
        message: d.message.clone(),
        type_: d.code.clone().unwrap_or_else(|| "failure".into()),
        body: described(d, &f.meta.cwd),
    }
}

fn error_case(f: &Finished, d: &Diagnostic) -> Case {
    let classname =
        d.file.as_deref().map_or_else(|| f.meta.tool.clone(), |file| place(file, &f.meta.cwd).path().to_string());
    Case {
        name: location(d, &f.meta.cwd).unwrap_or_else(|| d.message.clone()),
        classname,
        kind: Kind::Error,
        message: d.message.clone(),
        type_: d.code.clone().unwrap_or_else(|| "error".into()),
        body: described(d, &f.meta.cwd),
    }
}

fn run_case(f: &Finished) -> Case {
    let m = &f.meta;
    let how = match (m.status, m.exit_code) {
        (RunStatus::Exited, Some(code)) => format!("exited with code {code}"),
        (status, _) => format!("ended as {status:?}").to_lowercase(),
    };
    let detail =
        [&f.result.parser_error, &f.result.stopped_early, &m.error].into_iter().flatten().cloned().collect::<Vec<_>>();
    Case {
        name: m.tool.clone(),
        classname: m.tool.clone(),
        kind: Kind::Error,
        message: format!("{} {how}", m.tool),
        type_: "run".into(),
        body: detail.join("\n"),
    }
}

/// `file:line:col`, as far as known, the file relative to the checkout when it can be.
fn location(d: &Diagnostic, cwd: &str) -> Option<String> {
    let place = place(d.file.as_deref()?, cwd);
    let file = place.path();
    Some(match (d.line, d.column) {
        (Some(l), Some(c)) => format!("{file}:{l}:{c}"),
        (Some(l), None) => format!("{file}:{l}"),
        _ => file.to_string(),
    })
}

/// The diagnostic as a failure's text: where, then the message and notes.
fn described(d: &Diagnostic, cwd: &str) -> String {
    match location(d, cwd) {
        Some(at) => format!("{at}: {}", full_message(d)),
        None => full_message(d),
    }
}

fn write_case(out: &mut String, c: &Case) {
    let element = match c.kind {
        Kind::Failure => "failure",
        Kind::Error => "error",
    };
    let _ = writeln!(
        out,
        "    <testcase name={} classname={} time=\"0\">\n      <{element} message={} type={}>{}</{element}>\n    </testcase>",
        attr(&c.name),
        attr(&c.classname),
        attr(&c.message),
        attr(&c.type_),
        text(&c.body),
    );
}

struct Counts {
    tests: u64,
    failures: u64,
    errors: u64,
    skipped: u64,
}

impl Counts {
    /// The summary's counts where there is one, never fewer than the cases listed: a CI that
    /// counts `<testcase>` elements and one that reads the attributes then agree on the failures.
    fn of(f: &Finished, cases: &[Case]) -> Counts {
        let listed = |kind: Kind| cases.iter().filter(|c| c.kind == kind).count() as u64;
        let (failed_cases, error_cases) = (listed(Kind::Failure), listed(Kind::Error));
        let s = f.result.summary.as_ref();
        let failures = s.map_or(0, |s| s.failed).max(failed_cases);
        let skipped = s.map_or(0, |s| s.skipped);
        let counted = s.map_or(0, |s| s.total.max(s.passed + s.failed + s.skipped));
        Counts {
            tests: counted.max(failures + skipped) + error_cases,
            failures,
            errors: s.and_then(|s| s.errors).unwrap_or(0) + error_cases,
            skipped,
        }
    }
}

fn properties(f: &Finished, tool_version: &str) -> Vec<(&'static str, String)> {
    let m = &f.meta;
    let mut props = vec![
        ("buildvise.version", tool_version.to_string()),
        ("buildvise.run", m.id.clone()),
        ("command", command_line(f)),
        ("cwd", m.cwd.clone()),
    ];
    if let Some(code) = m.exit_code {
        props.push(("exitCode", code.to_string()));
    }
    props
}

/// The warnings, one per line, for `<system-out>`: they fail nothing, so they get no case, but
/// a reader of the report may still want them.
fn warnings(f: &Finished, problems: &[Problem]) -> String {
    problems
        .iter()
        .map(|p| &*p.diagnostic)
        .filter(|d| d.severity == Severity::Warning)
        .map(|d| format!("warning: {}", described(d, &f.meta.cwd)))
        .chain(f.result.stopped_early.iter().map(|s| format!("stopped early: {s}")))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The schema's timestamp: UTC, to the second, without a zone.
fn timestamp(ms: u64) -> String {
    let at = chrono::DateTime::from_timestamp_millis(ms as i64).unwrap_or_default();
    at.format("%Y-%m-%dT%H:%M:%S").to_string()
}

fn seconds(ms: u64) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

/// A quoted attribute value. Line breaks and tabs are written as references, since a parser
/// turns the bare characters into spaces in an attribute.
fn attr(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in xml_chars(s) {
        match c {
            '"' => out.push_str("&quot;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            _ => push_text_char(&mut out, c),
        }
    }
    out.push('"');
    out
}

/// Character data.
fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in xml_chars(s) {
        push_text_char(&mut out, c);
    }
    out
}

fn push_text_char(out: &mut String, c: char) {
    match c {
        '&' => out.push_str("&amp;"),
        '<' => out.push_str("&lt;"),
        '>' => out.push_str("&gt;"),
        // `\r` would be read as a line break and lost; the reference keeps it.
        '\r' => out.push_str("&#13;"),
        _ => out.push(c),
    }
}

/// The characters XML 1.0 allows: others (ANSI escapes' ESC, NUL) cannot be written even as
/// references, so they become U+FFFD.
fn xml_chars(s: &str) -> impl Iterator<Item = char> + '_ {
    s.chars().map(|c| match c {
        '\t' | '\n' | '\r' => c,
        c if c < ' ' || c == '\u{FFFE}' || c == '\u{FFFF}' => '\u{FFFD}',
        c => c,
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::{empty, sample};
    use super::*;

    #[test]
    fn the_sample_run() {
        insta::assert_snapshot!(render(&sample(), "0.1.0"));
    }

    #[test]
    fn counts_come_from_the_summary_and_the_error_cases() {
        let out = render(&sample(), "0.1.0");
        assert!(out.contains(r#"tests="8" failures="2" errors="2" skipped="1" time="3.250""#), "{out}");
        assert!(out.contains(r#"timestamp="2025-11-28T18:40:00""#));
    }

    #[test]
    fn a_failed_test_holds_all_its_diagnostics() {
        let out = render(&sample(), "0.1.0");
        assert!(out.contains(r#"<testcase name="tests::it_adds" classname="tests" time="0">"#));
        assert!(out.contains("left: 6\nright: 7</failure>"));
        assert!(out.contains(r#"<testcase name="tests::it_hangs" classname="tests""#));
    }

    #[test]
    fn a_build_error_is_a_case_named_for_its_place() {
        let out = render(&sample(), "0.1.0");
        assert!(out.contains(r#"<testcase name="src/lib.rs:16:9" classname="src/lib.rs" time="0">"#), "{out}");
        assert!(out.contains(r#"classname="src/my file.rs""#));
    }

    #[test]
    fn a_failed_run_with_nothing_parsed_is_one_error_case() {
        let mut f = empty();
        f.result.success = false;
        f.meta.exit_code = Some(2);
        let out = render(&f, "0.1.0");
        assert!(out.contains(r#"<error message="cargo.build exited with code 2" type="run">"#), "{out}");
        assert!(out.contains(r#"tests="1" failures="0" errors="1""#));
    }

    #[test]
    fn text_and_attributes_are_escaped() {
        assert_eq!(attr("a\"<&>\n\t\u{1b}"), "\"a&quot;&lt;&amp;&gt;&#10;&#9;\u{FFFD}\"");
        assert_eq!(text("x < y && z\r\n\0"), "x &lt; y &amp;&amp; z&#13;\n\u{FFFD}");
    }
}
