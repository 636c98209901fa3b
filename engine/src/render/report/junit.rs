//! JUnit XML in the Ant form CI systems read, valid against the widely used schema of Windy Road
//! (`JUnit.xsd`): one `<testsuite>` for the run inside `<testsuites>`, a `<testcase>` per failed
//! test the tool named (passed, skipped or failed, with its duration where printed), per failed
//! test it did not name, and per error outside tests; the counts from the run's test summary.

use super::{Problem, command_line, full_message, place, problems};
use crate::outcome::Finished;
use crate::store::RunStatus;
use buildvise_plugin_api::{Diagnostic, Severity, TestOutcome};
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

/// A `<testcase>`: a test that passed, one skipped (`<skipped/>`), one failed (`<failure>`), or
/// an error outside any test (`<error>`).
struct Case {
    name: String,
    classname: String,
    kind: Kind,
    /// Microseconds, when the tool printed them.
    duration_us: Option<u64>,
    message: String,
    type_: String,
    body: String,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Passed,
    Skipped,
    Failure,
    Error,
}

/// Every test the tool named, in its order, a failure with its diagnostics; then the failed
/// tests it did not name (pytest's `-q` names only those), and the errors outside tests (a
/// compile error), each a case so that a report of a build that failed shows the failure. A run
/// that failed with nothing parsed gets one case for the run itself for the same reason.
fn cases(f: &Finished, problems: &[Problem]) -> Vec<Case> {
    let mut failing = failing_cases(f, problems);
    let mut cases = Vec::with_capacity(f.result.tests.len() + failing.len());
    for test in &f.result.tests {
        let kind = match test.outcome {
            TestOutcome::Passed => Kind::Passed,
            TestOutcome::Failed => Kind::Failure,
            _ => Kind::Skipped,
        };
        let described = (kind == Kind::Failure)
            .then(|| failing.iter().position(|c| c.kind == Kind::Failure && c.name == test.name))
            .flatten();
        let mut case = match described {
            Some(at) => failing.remove(at),
            None => Case {
                name: test.name.clone(),
                classname: classname(f, &test.name),
                kind,
                duration_us: None,
                message: String::new(),
                type_: String::new(),
                body: String::new(),
            },
        };
        case.duration_us = test.duration_us;
        cases.push(case);
    }
    cases.append(&mut failing);
    cases
}

/// The failed tests and the errors outside tests, from the diagnostics and the failed tests.
fn failing_cases(f: &Finished, problems: &[Problem]) -> Vec<Case> {
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

/// `module::test` and `file.py::test` name their class before the last `::`; other tests are
/// classed under the tool.
fn classname(f: &Finished, test: &str) -> String {
    match test.rsplit_once("::") {
        Some((class, _)) if !class.is_empty() => class.to_string(),
        _ => f.meta.tool.clone(),
    }
}

fn test_case(f: &Finished, test: &str, d: &Diagnostic) -> Case {
    Case {
        name: test.to_string(),
        classname: classname(f, test),
        kind: Kind::Failure,
        duration_us: None,
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
        duration_us: None,
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
        duration_us: None,
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
    // The schema requires a time; an unknown one is written as 0, as other writers do.
    let time = c.duration_us.map_or_else(|| "0".to_string(), micros_as_seconds);
    let _ = write!(out, "    <testcase name={} classname={} time=\"{time}\"", attr(&c.name), attr(&c.classname));
    let element = match c.kind {
        Kind::Passed => {
            out.push_str("/>\n");
            return;
        }
        Kind::Skipped => {
            out.push_str(">\n      <skipped/>\n    </testcase>\n");
            return;
        }
        Kind::Failure => "failure",
        Kind::Error => "error",
    };
    let _ = writeln!(
        out,
        ">\n      <{element} message={} type={}>{}</{element}>\n    </testcase>",
        attr(&c.message),
        attr(&c.type_),
        text(&c.body),
    );
}

/// `0.004`, `1.5`: seconds, to the microsecond, without trailing zeros.
fn micros_as_seconds(us: u64) -> String {
    let fraction = format!("{:06}", us % 1_000_000);
    match fraction.trim_end_matches('0') {
        "" => (us / 1_000_000).to_string(),
        digits => format!("{}.{digits}", us / 1_000_000),
    }
}

struct Counts {
    tests: u64,
    failures: u64,
    errors: u64,
    skipped: u64,
}

impl Counts {
    /// The summary's counts where there is one, never fewer than the cases listed: a CI that
    /// counts `<testcase>` elements and one that reads the attributes then agree.
    fn of(f: &Finished, cases: &[Case]) -> Counts {
        let listed = |kind: Kind| cases.iter().filter(|c| c.kind == kind).count() as u64;
        let (failed_cases, error_cases) = (listed(Kind::Failure), listed(Kind::Error));
        let s = f.result.summary.as_ref();
        let failures = s.map_or(0, |s| s.failed).max(failed_cases);
        let skipped = s.map_or(0, |s| s.skipped).max(listed(Kind::Skipped));
        let counted = s.map_or(0, |s| s.total.max(s.passed + s.failed + s.skipped));
        let named = cases.len() as u64 - error_cases;
        Counts {
            tests: counted.max(failures + skipped).max(named) + error_cases,
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
    use buildvise_plugin_api::TestCase;

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
    fn every_named_test_is_a_case_in_order_with_its_duration() {
        let mut f = sample();
        f.result.tests = vec![
            TestCase::new("tests::it_works", TestOutcome::Passed, Some(4_000)),
            TestCase::new("tests::it_adds", TestOutcome::Failed, Some(1_500_000)),
            TestCase::new("tests::slow", TestOutcome::Skipped, None),
        ];
        let out = render(&f, "0.1.0");
        let at = |needle: &str| out.find(needle).unwrap_or_else(|| panic!("no {needle} in {out}"));
        let passed = at(r#"<testcase name="tests::it_works" classname="tests" time="0.004"/>"#);
        let failed = at(r#"<testcase name="tests::it_adds" classname="tests" time="1.5">"#);
        let skipped = at("<testcase name=\"tests::slow\" classname=\"tests\" time=\"0\">\n      <skipped/>");
        // The failed tests the tool did not name, and the build errors, follow the named tests.
        let unnamed = at(r#"<testcase name="tests::it_hangs""#);
        assert!(passed < failed && failed < skipped && skipped < unnamed, "{out}");
        assert_eq!(out.matches(r#"name="tests::it_adds""#).count(), 1, "{out}");
        assert!(
            out[failed..]
                .starts_with("<testcase name=\"tests::it_adds\" classname=\"tests\" time=\"1.5\">\n      <failure")
        );
        assert!(out.contains(r#"tests="8" failures="2" errors="2" skipped="1""#), "{out}");
    }

    #[test]
    fn durations_are_seconds_without_trailing_zeros() {
        assert_eq!(micros_as_seconds(0), "0");
        assert_eq!(micros_as_seconds(4_000), "0.004");
        assert_eq!(micros_as_seconds(2_000_000), "2");
        assert_eq!(micros_as_seconds(1_234_567), "1.234567");
    }

    #[test]
    fn text_and_attributes_are_escaped() {
        assert_eq!(attr("a\"<&>\n\t\u{1b}"), "\"a&quot;&lt;&amp;&gt;&#10;&#9;\u{FFFD}\"");
        assert_eq!(text("x < y && z\r\n\0"), "x &lt; y &amp;&amp; z&#13;\n\u{FFFD}");
    }
}
