//! Jest's `--json` report, which Vitest's json reporter imitates: from an artifact file the plan
//! asked for, or printed on stdout as one line. It fills in what the text lost (a run cut short,
//! a truncated log): failed tests the text did not report, and the counts when the text has no
//! summary line. It never replaces what the text said.

use super::frames;
use crate::parse::sink::Sink;
use buildvise_plugin_api::{
    Diagnostic, Recogniser, TestOutcome, TestSummary, Text, Wants, join_test_name, strip_ansi_str,
};
use serde::Deserialize;

/// How a report on one line starts: its first key, `numFailedTestSuites` and the like.
const START: &str = "{\"num";

/// Jest's and Vitest's `--json` report printed on the console, one line: kept, and applied when
/// the output ends, with the report files the run wrote.
pub struct JsonReports;

impl Recogniser<Sink> for JsonReports {
    fn wants(&self) -> Wants {
        Wants::starts(&[START])
    }

    fn feed(&mut self, ln: &Text<'_>, sink: &mut Sink) -> bool {
        match from_line(ln.text) {
            Some(report) => {
                sink.reports.push(report);
                true
            }
            None => false,
        }
    }
}

/// Larger files are not read: no real report comes near it, and memory must stay bounded.
const MAX_REPORT_BYTES: u64 = 256 * 1024 * 1024;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    num_total_tests: u64,
    #[serde(default)]
    num_passed_tests: u64,
    #[serde(default)]
    num_failed_tests: u64,
    #[serde(default)]
    num_pending_tests: u64,
    #[serde(default)]
    num_todo_tests: u64,
    #[serde(default)]
    test_results: Vec<FileResult>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FileResult {
    #[serde(default)]
    name: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    assertion_results: Vec<Assertion>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Assertion {
    #[serde(default)]
    ancestor_titles: Vec<String>,
    #[serde(default)]
    title: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    failure_messages: Vec<String>,
    #[serde(default)]
    location: Option<Location>,
    /// Milliseconds, as both runners write it; null or absent for a test that did not run.
    #[serde(default)]
    duration: Option<f64>,
}

#[derive(Deserialize)]
struct Location {
    line: u32,
    column: Option<u32>,
}

/// A report printed on one stdout line (`jest --json`, `vitest --reporter=json`).
pub fn from_line(text: &str) -> Option<Report> {
    if !text.starts_with(START) {
        return None;
    }
    serde_json::from_str(text.trim_end()).ok()
}

/// A report in an artifact file; None for any other file.
pub fn from_file(path: &str) -> Option<Report> {
    let size = std::fs::metadata(path).ok()?.len();
    if size > MAX_REPORT_BYTES {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    serde_json::from_slice(&bytes).ok()
}

impl Report {
    pub fn apply(self, sink: &mut Sink) {
        let had_summary = sink.has_summary();
        for file in &self.test_results {
            for assertion in &file.assertion_results {
                name(sink, assertion);
            }
            let mut any_failed = false;
            for assertion in file.assertion_results.iter().filter(|a| a.status == "failed") {
                any_failed = true;
                let mut names = assertion.ancestor_titles.clone();
                names.push(assertion.title.clone());
                let test = join_test_name(&names);
                if sink.has_failed_test(&test) {
                    continue;
                }
                let text =
                    assertion.failure_messages.first().map(|m| strip_ansi_str(m).into_owned()).unwrap_or_default();
                let mut diagnostic =
                    Diagnostic::error(headline(&text).unwrap_or("test failed")).with_test(test.as_str());
                if let Some(frame) = text.lines().find_map(|l| frames::project_frame(l.trim())) {
                    diagnostic = diagnostic.with_location(frame.file, Some(frame.line), frame.column);
                } else if let Some(loc) = &assertion.location {
                    diagnostic = diagnostic.with_location(file.name.as_str(), Some(loc.line), loc.column);
                }
                sink.failed_test(&test);
                sink.push(diagnostic);
            }
            // A file that failed with no failed test did not load; the text reports that itself
            // unless it was lost.
            if !had_summary && !any_failed && file.status == "failed" {
                let text = file.message.as_deref().map(strip_ansi_str).unwrap_or_default();
                let message = text
                    .lines()
                    .map(str::trim)
                    .find(|l| !l.is_empty() && !l.starts_with('\u{25cf}'))
                    .unwrap_or("test suite failed to run");
                let mut diagnostic = Diagnostic::error(message);
                if !file.name.is_empty() {
                    diagnostic = diagnostic.with_location(file.name.as_str(), None, None);
                }
                sink.push(diagnostic);
            }
        }
        if !had_summary {
            sink.add_summary(TestSummary::new(
                self.num_passed_tests,
                self.num_failed_tests,
                self.num_pending_tests.saturating_add(self.num_todo_tests),
                self.num_total_tests,
            ));
        }
    }
}

/// Adds a test to those the run named: `passed` and `failed` as they are; `pending`, `skipped`,
/// `todo` and `disabled` did not run.
fn name(sink: &mut Sink, assertion: &Assertion) {
    let outcome = match assertion.status.as_str() {
        "passed" => TestOutcome::Passed,
        "failed" => TestOutcome::Failed,
        _ => TestOutcome::Skipped,
    };
    let mut names = assertion.ancestor_titles.clone();
    names.push(assertion.title.clone());
    let duration_us =
        assertion.duration.filter(|ms| ms.is_finite() && *ms >= 0.0).map(|ms| (ms * 1000.0).round() as u64);
    sink.tests.push(&join_test_name(&names), outcome, duration_us);
    sink.report_named_tests = true;
}

/// The first line of a failure message, without the `Error: ` that Jest adds to matcher errors.
fn headline(text: &str) -> Option<&str> {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    Some(line.strip_prefix("Error: ").unwrap_or(line))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::tests::{errors, parse};

    const REPORT: &str = r#"{"numFailedTestSuites":2,"numFailedTests":2,"numPassedTests":5,"numPendingTests":1,"numTodoTests":1,"numTotalTests":9,"testResults":[{"name":"/srv/l/test/ledger.test.ts","status":"failed","message":"","assertionResults":[{"ancestorTitles":["Ledger"],"title":"records","status":"failed","failureMessages":["Error: expect(received).toEqual(expected)\n    at Object.<anonymous> (/srv/l/test/ledger.test.ts:18:30)\n    at Promise.finally.completed (/srv/l/node_modules/jest-circus/build/a.js:1:1)"]},{"ancestorTitles":["Ledger"],"title":"adds","status":"passed","failureMessages":[]}]},{"name":"/srv/l/test/report.test.ts","status":"failed","message":"  \u001b[1m● \u001b[22mTest suite failed to run\n\n    test/report.test.ts:5:11 - error TS2322: Type 'string' is not assignable to type 'number'.\n","assertionResults":[]}]}"#;

    #[test]
    fn names_every_test_with_its_outcome_and_time() {
        let mut sink = Sink::new("/srv/l", Vec::new());
        let timed = REPORT
            .replace(r#""title":"adds","status":"passed","#, r#""title":"adds","status":"passed","duration":2.5,"#);
        from_line(&timed).expect("report").apply(&mut sink);
        let named: Vec<_> = sink.tests.iter().map(|t| (t.name.as_str(), t.outcome, t.duration_us)).collect();
        assert_eq!(
            named,
            [("Ledger > records", TestOutcome::Failed, None), ("Ledger > adds", TestOutcome::Passed, Some(2_500))]
        );
    }

    #[test]
    fn fills_a_log_that_lost_everything() {
        let mut sink = Sink::new("/srv/l", Vec::new());
        from_line(REPORT).expect("report").apply(&mut sink);
        let (diagnostics, summary, failed) = sink.finish();
        assert_eq!(failed, ["Ledger > records"]);
        assert_eq!(diagnostics.len(), 2);
        assert_eq!(diagnostics[0].message, "expect(received).toEqual(expected)");
        assert_eq!((diagnostics[0].file.as_deref(), diagnostics[0].line), (Some("test/ledger.test.ts"), Some(18)));
        assert_eq!(diagnostics[1].file.as_deref(), Some("test/report.test.ts"));
        assert!(diagnostics[1].message.contains("TS2322"));
        let s = summary.expect("summary");
        assert_eq!((s.passed, s.failed, s.skipped, s.total), (5, 2, 2, 9));
    }

    #[test]
    fn text_wins_over_a_printed_report() {
        let log = format!(
            "FAIL test/ledger.test.ts\n  \u{25cf} Ledger \u{203a} records\n\n    expect(received).toEqual(expected)\n\n      at Object.<anonymous> (test/ledger.test.ts:18:30)\n\nTests:       1 failed, 1 passed, 2 total\n{REPORT}\n"
        );
        let result = parse(&log, 1);
        assert_eq!(errors(&result).len(), 1);
        assert_eq!(result.summary.map(|s| s.total), Some(2));
    }
}
