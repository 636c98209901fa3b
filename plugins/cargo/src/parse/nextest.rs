//! cargo-nextest's report: its result lines (`        FAIL [   0.006s] (1/7) crate tests::name`,
//! `SIGSEGV`, `TIMEOUT`, `LEAK-FAIL`, retries as `TRY 2 FAIL`, `FLAKY 2/3`), the output it
//! shows under a failed test (`  stderr ───` then the lines indented by four; before 0.9.8x
//! `--- STDERR: crate tests::name ---` then the lines as printed), its `Summary` line and its
//! closing warnings. Everything it prints goes to stderr.
//!
//! Each test is one process, and a retried test prints once per attempt: the last attempt
//! decides. One error per test that finally failed, at its panic when it panicked; a test that
//! failed and then passed on retry is flaky, which is worth a warning and not a failure.

use super::backtrace::{self, Backtrace, Step};
use super::findings::Findings;
use super::panic::{self, PanicStart};
use super::text::{MAX_MESSAGE, MAX_NOTE, MESSAGE_BEFORE_VIA, PANIC_NOTES, clip};
use buildvise_plugin_api::{
    Diagnostic, Recogniser, TestCases, TestOutcome, TestSummary, Text, Wants, relative_to, seconds_to_us,
    split_location,
};
use std::collections::HashMap;

/// What a result line says about its test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Passed,
    /// Passed, but left a process or handle open after it ended (`LEAK`).
    Leaked,
    /// Passed on a retry after failing (`FLAKY 2/3`, in the final list).
    Flaky,
    Failed,
    /// Not run (`SKIP`, shown with `--status-level skip`).
    Skipped,
}

/// A result line: `  TRY 2 FAIL [   0.144s] (───) nx-flaky tests::always_fails`.
#[derive(Debug, PartialEq, Eq)]
struct ResultLine<'a> {
    status: &'a str,
    outcome: Option<Outcome>,
    test: &'a str,
    /// `[   0.006s]`; blank on lines of tests that did not run.
    duration_us: Option<u64>,
}

/// Reads a result line; `None` for any other line. `outcome` is `None` for progress lines
/// (`SLOW`, `TERMINATING`, `START`, `RETRY`, `SETUP`), which decide nothing.
fn result_line(text: &str) -> Option<ResultLine<'_>> {
    let trimmed = text.trim_start();
    if !trimmed.starts_with(|c: char| c.is_ascii_uppercase()) {
        return None;
    }
    let (head, rest) = trimmed.split_once(" [")?;
    let valid = head.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b" -+/".contains(&b));
    if !valid {
        return None;
    }
    let (took, rest) = rest.split_once("] ")?;
    let duration_us = took.trim().strip_suffix('s').and_then(seconds_to_us);
    // The `(3/7)` counter appeared in 0.9.7x; the binary id and the test name follow.
    let rest = match rest.strip_prefix('(') {
        Some(counter) => counter.split_once(") ")?.1,
        None => rest,
    };
    let (binary, test) = rest.trim().split_once(' ')?;
    if binary.is_empty() || test.is_empty() || test.contains(' ') {
        return None;
    }
    let status = head.strip_prefix("TRY ").map_or(head, |t| t.trim_start_matches(|c: char| c.is_ascii_digit()).trim());
    let outcome = if status == "PASS" {
        Some(Outcome::Passed)
    } else if status == "LEAK" {
        Some(Outcome::Leaked)
    } else if status.starts_with("FLAKY") {
        Some(Outcome::Flaky)
    } else if status == "SKIP" {
        Some(Outcome::Skipped)
    } else if status.contains("FAIL") || status.starts_with("SIG") || status == "TIMEOUT" || status == "ABORT" {
        Some(Outcome::Failed)
    } else {
        None
    };
    Some(ResultLine { status, outcome, test, duration_us })
}

/// Where the output of an attempt stands in its panic report.
enum Stage {
    Free,
    Message,
    Notes,
    Backtrace(Backtrace),
}

/// One attempt of one test whose output is being read.
struct Attempt {
    test: String,
    status: String,
    failed: bool,
    start: u64,
    last: u64,
    /// The output is printed unindented under `--- STDERR: … ---` headers (older nextest).
    headed: bool,
    panic: Option<Diagnostic>,
    stage: Stage,
    error_line: Option<String>,
    overflow: bool,
    /// nextest's own `(test aborted with signal 11: SIGSEGV)`.
    verdict: Option<String>,
    /// The test's last line of output that is not libtest's: what it was doing when it died.
    last_output: Option<String>,
}

impl Attempt {
    fn new(test: &str, status: &str, failed: bool, number: u64, headed: bool) -> Self {
        Attempt {
            test: test.to_string(),
            status: status.to_string(),
            failed,
            start: number,
            last: number,
            headed,
            panic: None,
            stage: Stage::Free,
            error_line: None,
            overflow: false,
            verdict: None,
            last_output: None,
        }
    }
}

/// What one test came to, over its attempts.
struct Record {
    outcome: Outcome,
    /// The last failed attempt's diagnostic.
    failure: Option<Diagnostic>,
    /// The first failed attempt's, for a test that passed on retry.
    first_failure: Option<Diagnostic>,
    /// The last attempt's time.
    duration_us: Option<u64>,
}

/// The recogniser of nextest's report: open from its `Starting N tests` line on.
#[derive(Default)]
pub(crate) struct NextestRun {
    /// `Starting N tests …` was seen: lines are nextest's from here on.
    started: bool,
    attempt: Option<Attempt>,
    order: Vec<String>,
    records: HashMap<String, Record>,
    summary: Option<TestSummary>,
    stopped_early: Option<String>,
    no_tests: Option<Diagnostic>,
}

pub(crate) struct Finished {
    pub(crate) diagnostics: Vec<Diagnostic>,
    pub(crate) summary: Option<TestSummary>,
    pub(crate) failed_tests: Vec<String>,
    pub(crate) stopped_early: Option<String>,
    pub(crate) tests: TestCases,
}

impl Recogniser<Findings> for NextestRun {
    fn wants(&self) -> Wants {
        Wants::starts_unindented(&[START])
    }

    fn is_open(&self) -> bool {
        self.started
    }

    /// Before its run started, cargo built the tests and its output is cargo's.
    fn feed(&mut self, line: &Text<'_>, found: &mut Findings) -> bool {
        if !self.started {
            if !is_start(line.text) {
                return false;
            }
            self.started = true;
            found.cargo_output_ended = true;
        }
        let took = self.line(line.text, line.number, &found.cwd);
        found.nextest_shows_output = self.attempt.is_some();
        took
    }

    fn finish(&mut self, found: &mut Findings) {
        found.nextest = Some(std::mem::take(self).finished());
    }
}

impl NextestRun {
    /// Reads a line once the run started; true when it was nextest's. Column-0 `error:` and
    /// `warning:` lines it does not know are left to the cargo parser.
    fn line(&mut self, text: &str, number: u64, cwd: &str) -> bool {
        if let Some(result) = result_line(text) {
            self.close_attempt();
            if let Some(outcome) = result.outcome {
                self.result(&result, outcome, number);
            }
            return true;
        }
        if text.starts_with(' ') && self.summary_line(text) {
            return true;
        }
        if text.starts_with("--- ") {
            return self.header(text, number);
        }
        // nextest's separator line, `────────────`.
        if text.starts_with('─') {
            self.close_attempt();
            return true;
        }
        if text.starts_with(['e', 'w', '(']) {
            if self.attempt.as_ref().is_some_and(|a| a.headed) && !text.starts_with("error: test run failed") {
                self.output(text, number, cwd);
                return true;
            }
            self.close_attempt();
            return self.closing(text, number);
        }
        let Some(attempt) = &self.attempt else {
            return text.starts_with(' ') || text.is_empty();
        };
        if attempt.headed {
            self.output(text, number, cwd);
            return true;
        }
        if let Some(content) = text.strip_prefix("    ") {
            self.output(content, number, cwd);
        } else if text.is_empty() || text == "  stdout ───" || text == "  stderr ───" {
            if let Some(a) = &mut self.attempt {
                a.last = a.last.max(number);
            }
        } else {
            // `  Cancelling due to test failure`, or anything else outside the test's output.
            self.close_attempt();
        }
        true
    }

    fn result(&mut self, result: &ResultLine<'_>, outcome: Outcome, number: u64) {
        if !self.records.contains_key(result.test) {
            self.order.push(result.test.to_string());
        }
        let record = self.records.entry(result.test.to_string()).or_insert(Record {
            outcome,
            failure: None,
            first_failure: None,
            duration_us: None,
        });
        // The last word wins: a retry's `PASS` after `TRY 1 FAIL`, then the final list's `FLAKY`.
        // The final list's `FLAKY` line times every attempt; the attempt's own line is kept.
        record.outcome = outcome;
        if outcome != Outcome::Flaky {
            record.duration_us = result.duration_us.or(record.duration_us);
        }
        self.attempt = Some(Attempt::new(result.test, result.status, outcome == Outcome::Failed, number, false));
    }

    /// `--- STDOUT:              crate tests::name ---` (also `--- TRY 2 STDERR: … ---`).
    fn header(&mut self, text: &str, number: u64) -> bool {
        let Some(inner) = text.strip_prefix("--- ").and_then(|t| t.strip_suffix(" ---")) else { return false };
        let Some((kind, name)) = inner.split_once(':') else { return false };
        if !(kind.ends_with("STDOUT") || kind.ends_with("STDERR")) {
            return false;
        }
        let Some(test) = name.split_whitespace().last() else { return false };
        match &mut self.attempt {
            Some(a) if a.test == test => {
                a.headed = true;
                a.stage = Stage::Free;
                a.last = number;
            }
            _ => {
                self.close_attempt();
                let failed = self.records.get(test).is_none_or(|r| r.outcome == Outcome::Failed);
                self.attempt = Some(Attempt::new(test, "FAIL", failed, number, true));
            }
        }
        true
    }

    /// The lines nextest ends with: `error: no tests to run`, `warning: 5/7 tests were not run
    /// due to test failure (…)`, `error: test run failed`; and the `(hint: …)` under the first.
    fn closing(&mut self, text: &str, number: u64) -> bool {
        if text.starts_with("error: test run failed") {
            return true;
        }
        if text.starts_with("error: no tests to run") {
            self.no_tests = Some(Diagnostic::error("no tests to run").with_log_range(number, number));
            return true;
        }
        if let Some(hint) = text.strip_prefix("(hint: ").and_then(|h| h.strip_suffix(')')) {
            if let Some(d) = &mut self.no_tests {
                d.notes.push(clip(hint, MAX_NOTE));
                d.log_range = d.log_range.map(|r| buildvise_plugin_api::LogRange::new(r.start, number));
            }
            return true;
        }
        if let Some(rest) = text.strip_prefix("warning: ")
            && let Some((count, after)) = rest.split_once('/')
            && count.bytes().all(|b| b.is_ascii_digit())
            && let Some((_, reason)) = after.split_once(" not run due to ")
        {
            let tests = if count == "1" { "test" } else { "tests" };
            let reason = reason.split(" (").next().unwrap_or(reason).trim();
            self.stopped_early = Some(if reason == "test failure" {
                format!("{count} {tests} not run; add --no-fail-fast")
            } else {
                format!("{count} {tests} not run ({reason})")
            });
            return true;
        }
        false
    }

    /// A line of the attempt's output, without nextest's indent.
    fn output(&mut self, content: &str, number: u64, cwd: &str) {
        let Some(a) = &mut self.attempt else { return };
        a.last = number;
        loop {
            match &mut a.stage {
                Stage::Message => {
                    if let Some(p) = &mut a.panic {
                        p.message = if content.trim().is_empty() {
                            "explicit panic".into()
                        } else {
                            clip(content, MAX_MESSAGE)
                        };
                        p.log_range = Some(buildvise_plugin_api::LogRange::new(a.start, number));
                    }
                    a.stage = Stage::Notes;
                    return;
                }
                Stage::Notes => {
                    let Some(p) = &mut a.panic else {
                        a.stage = Stage::Free;
                        continue;
                    };
                    if content.starts_with(' ') && p.notes.len() < PANIC_NOTES {
                        p.notes.push(clip(content, MAX_NOTE));
                        return;
                    }
                    if content == backtrace::HEADER {
                        let at = match (&p.file, p.line, p.column) {
                            (Some(file), Some(line), Some(column)) => format!("{file}:{line}:{column}"),
                            (Some(file), Some(line), None) => format!("{file}:{line}"),
                            _ => String::new(),
                        };
                        a.stage = Stage::Backtrace(Backtrace::new(&at, Some(&a.test)));
                        return;
                    }
                    a.stage = Stage::Free;
                }
                Stage::Backtrace(trace) => {
                    let step = trace.line(content, cwd);
                    if step == Step::Frame {
                        return;
                    }
                    if let (Some(via), Some(p)) = (trace.via.take(), &mut a.panic) {
                        p.message = format!("{} via {}", clip(&p.message, MESSAGE_BEFORE_VIA), clip(&via, MAX_NOTE));
                    }
                    a.stage = Stage::Free;
                    if step == Step::End {
                        return;
                    }
                }
                Stage::Free => break,
            }
        }
        let trimmed = content.trim();
        if content.starts_with("thread '") {
            match panic::start(content) {
                Some(PanicStart::StackOverflow { .. }) => a.overflow = true,
                Some(start) if a.panic.is_none() => {
                    let (message, location, stage) = match start {
                        PanicStart::AwaitMessage { location, .. } => ("", location, Stage::Message),
                        PanicStart::Complete { message, location, .. } => (message, location, Stage::Notes),
                        PanicStart::AwaitLocation { message, .. } => (message, "", Stage::Free),
                        PanicStart::StackOverflow { .. } => ("", "", Stage::Free),
                    };
                    let mut d = Diagnostic::error(clip(message, MAX_MESSAGE))
                        .with_test(a.test.clone())
                        .with_log_range(a.start, number);
                    if let Some((file, line, column)) = split_location(location) {
                        d = d.with_location(relative_to(file, cwd), Some(line), column);
                    }
                    a.panic = Some(d);
                    a.stage = stage;
                }
                _ => {}
            }
        } else if let Some(error) = content.strip_prefix("Error: ") {
            // A test returning `Err`: libtest prints the error's Debug form.
            a.error_line.get_or_insert_with(|| clip(error, MAX_MESSAGE));
        } else if trimmed.starts_with("(test ") && trimmed.ends_with(')') {
            a.verdict = Some(clip(&trimmed[1..trimmed.len() - 1], MAX_MESSAGE));
        } else if !trimmed.is_empty() && !content.starts_with(' ') && !is_libtest_line(trimmed) {
            a.last_output = Some(clip(trimmed, MAX_NOTE));
        }
    }

    fn close_attempt(&mut self) {
        let Some(a) = self.attempt.take() else { return };
        if !a.failed {
            return;
        }
        let silent = a.panic.is_none() && a.error_line.is_none() && !a.overflow && a.verdict.is_none();
        // The final list repeats each failure's result line, with no output under it (unless
        // `--failure-output final`): the attempt read before says more.
        if silent && self.records.get(&a.test).is_some_and(|r| r.failure.is_some()) {
            return;
        }
        let range = (a.start, a.last);
        let mut d = match (a.panic, a.error_line) {
            (Some(p), _) if !p.message.is_empty() => p,
            (_, Some(error)) => Diagnostic::error(error),
            _ if a.overflow => Diagnostic::error("stack overflow"),
            _ => {
                let message = a.verdict.unwrap_or_else(|| match a.status.as_str() {
                    "TIMEOUT" => "test timed out".to_string(),
                    status => format!("test failed ({status})"),
                });
                Diagnostic::error(message).with_notes(a.last_output.into_iter().collect())
            }
        };
        d.test = Some(a.test.clone());
        d.log_range = Some(buildvise_plugin_api::LogRange::new(range.0, range.1));
        if let Some(record) = self.records.get_mut(&a.test) {
            record.first_failure.get_or_insert_with(|| d.clone());
            record.failure = Some(d);
        }
    }

    /// `     Summary [   0.044s] 7 tests run: 3 passed, 4 failed, 1 skipped`; also
    /// `2/7 tests run: …`, `3 passed (1 slow, 1 leaky), 1 timed out, 0 skipped`.
    fn summary_line(&mut self, text: &str) -> bool {
        let Some(rest) = text.trim_start().strip_prefix("Summary [") else { return false };
        self.close_attempt();
        let Some((_, counts)) = rest.split_once(" run: ") else { return true };
        let mut summary = TestSummary::default();
        for part in split_counts(counts) {
            let Some((n, label)) = part.trim().split_once(' ') else { continue };
            let Ok(n) = n.parse::<u64>() else { continue };
            let label = label.split(" (").next().unwrap_or(label).trim();
            match label {
                "passed" => summary.passed += n,
                "skipped" => summary.skipped += n,
                "failed" | "timed out" | "exec failed" => summary.failed += n,
                _ => continue,
            }
        }
        summary.total = summary.passed + summary.failed + summary.skipped;
        self.summary = Some(summary);
        true
    }

    fn finished(mut self) -> Finished {
        self.close_attempt();
        let mut diagnostics = Vec::new();
        let mut failed_tests = Vec::new();
        let mut tests = TestCases::new();
        for name in &self.order {
            let Some(record) = self.records.remove(name) else { continue };
            let outcome = match record.outcome {
                Outcome::Failed => TestOutcome::Failed,
                Outcome::Skipped => TestOutcome::Skipped,
                Outcome::Passed | Outcome::Leaked | Outcome::Flaky => TestOutcome::Passed,
            };
            tests.push(name, outcome, record.duration_us);
            match record.outcome {
                Outcome::Failed => {
                    let d = record.failure.unwrap_or_else(|| Diagnostic::error("test failed").with_test(name.clone()));
                    diagnostics.push(d);
                    failed_tests.push(name.clone());
                }
                Outcome::Passed | Outcome::Flaky if record.first_failure.is_some() => {
                    let first = record.first_failure.unwrap_or_else(|| Diagnostic::error(""));
                    let mut d = first.clone();
                    d.severity = buildvise_plugin_api::Severity::Warning;
                    d.message = clip(&format!("flaky, passed on retry; failed first: {}", first.message), MAX_MESSAGE);
                    d.notes.clear();
                    diagnostics.push(d);
                }
                Outcome::Leaked => {
                    diagnostics.push(
                        Diagnostic::warning("passed, but left a process or handle open (LEAK)").with_test(name.clone()),
                    );
                }
                _ => {}
            }
        }
        diagnostics.extend(self.no_tests);
        Finished { diagnostics, summary: self.summary, failed_tests, stopped_early: self.stopped_early, tests }
    }
}

/// The counts after `run: `, split at the commas outside parentheses.
fn split_counts(counts: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in counts.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&counts[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&counts[start..]);
    parts
}

/// libtest's own lines inside a test process's output.
fn is_libtest_line(line: &str) -> bool {
    line.starts_with("running ")
        || line.starts_with("test ")
        || line == "failures:"
        || line == "successes:"
        || line.starts_with("note: run with `RUST_BACKTRACE")
}

/// The word of nextest's line that opens the run.
const START: &str = "Starting ";

/// True for nextest's `    Starting 7 tests across 2 binaries` line, right-aligned as cargo's
/// status lines are.
fn is_start(text: &str) -> bool {
    text.starts_with(' ')
        && text.trim_start().strip_prefix(START).is_some_and(|rest| {
            let count = rest.split(|c: char| !c.is_ascii_digit()).next().unwrap_or("");
            !count.is_empty() && rest[count.len()..].starts_with(" test")
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CargoPlugin;
    use buildvise_plugin_api::testing::{parse_log, parse_streams};
    use buildvise_plugin_api::{ParseContext, ParseResult, Plugin, RunEnd, Severity};

    fn parse(log: &str, exit: i32) -> ParseResult {
        parse_log(CargoPlugin.parser(&ParseContext::new("cargo.nextest", "/home/dev/p")), log.as_bytes(), exit)
    }

    fn brief(result: &ParseResult) -> Vec<String> {
        result
            .diagnostics
            .iter()
            .map(|d| {
                let sev = if d.severity == Severity::Error { "E" } else { "W" };
                let at = format!("{}:{}", d.file.as_deref().unwrap_or("-"), d.line.unwrap_or(0));
                format!("{sev} {at} [{}] {}", d.test.as_deref().unwrap_or("-"), d.message)
            })
            .collect()
    }

    /// cargo-nextest 0.9.143, `--retries 2`: one test fails, then passes; one fails every try.
    const RETRIES: &str = "    Starting 3 tests across 1 binary
  TRY 1 FAIL [   0.148s] (───) nx-flaky tests::always_fails
  stderr ───

    thread 'tests::always_fails' (31161) panicked at src/lib.rs:23:9:
    assertion `left == right` failed: ports are consecutive
      left: 2
     right: 3
    note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace

  TRY 1 FAIL [   0.347s] (───) nx-flaky tests::binds_a_port
  stderr ───

    thread 'tests::binds_a_port' (31171) panicked at src/lib.rs:16:13:
    port 8080 already in use

  TRY 2 PASS [   0.017s] (1/3) nx-flaky tests::binds_a_port
        PASS [   0.026s] (2/3) nx-flaky tests::steady
  TRY 2 FAIL [   0.206s] (3/3) nx-flaky tests::always_fails
  stderr ───

    thread 'tests::always_fails' (31179) panicked at src/lib.rs:23:9:
    assertion `left == right` failed: ports are consecutive

────────────
     Summary [   0.504s] 3 tests run: 2 passed (1 flaky), 1 failed, 0 skipped
   FLAKY 2/3 [   0.017s] (1/3) nx-flaky tests::binds_a_port
  TRY 2 FAIL [   0.206s] (3/3) nx-flaky tests::always_fails
error: test run failed
";

    #[test]
    fn a_retried_failure_counts_once_and_a_flaky_pass_is_a_warning() {
        let result = parse(RETRIES, 100);
        assert_eq!(
            brief(&result),
            [
                "E src/lib.rs:23 [tests::always_fails] assertion `left == right` failed: ports are consecutive",
                "W src/lib.rs:16 [tests::binds_a_port] flaky, passed on retry; failed first: port 8080 already in use",
            ]
        );
        assert_eq!(result.summary, Some(TestSummary::new(2, 1, 0, 3)));
        assert_eq!(result.failed_tests, ["tests::always_fails"]);
        // The same from the streams: nextest writes all of it to stderr.
        let streams = parse_streams(
            CargoPlugin.parser(&ParseContext::new("cargo.nextest", "/home/dev/p")),
            b"",
            RETRIES.as_bytes(),
            &RunEnd::exited(100),
        );
        assert_eq!(brief(&streams), brief(&result));
    }

    #[test]
    fn crashes_say_how_the_test_died_and_what_it_printed_last() {
        let log = "    Starting 2 tests across 1 binary
     SIGSEGV [   0.008s] (1/2) nx-crash tests::writes_through_null
  stdout ───

    running 1 test
    writing the header

    (test aborted with signal 11: SIGSEGV)

     TIMEOUT [   2.013s] (2/2) nx-slow tests::hangs
  stdout ───

    running 1 test

    (test timed out)

────────────
     Summary [   2.025s] 2 tests run: 0 passed, 1 failed, 1 timed out, 0 skipped
warning: 3/5 tests were not run due to test failure (run with --no-fail-fast to run all tests, or run with --max-fail)
error: test run failed
";
        let result = parse(log, 100);
        assert_eq!(
            brief(&result),
            [
                "E -:0 [tests::writes_through_null] test aborted with signal 11: SIGSEGV",
                "E -:0 [tests::hangs] test timed out"
            ]
        );
        assert_eq!(result.diagnostics[0].notes, ["writing the header"]);
        assert_eq!(result.summary, Some(TestSummary::new(0, 2, 0, 2)));
        assert_eq!(result.stopped_early.as_deref(), Some("3 tests not run; add --no-fail-fast"));
    }

    /// The output headers of nextest before 0.9.8x, with the test's lines unindented.
    #[test]
    fn reads_the_older_headed_output() {
        let log = "    Starting 1 test across 1 binary
        FAIL [   0.004s] shop tests::adds
--- STDOUT:              shop tests::adds ---

running 1 test
test tests::adds ... FAILED

--- STDERR:              shop tests::adds ---
thread 'tests::adds' panicked at src/lib.rs:9:9:
error: not what a cargo error looks like
     Summary [   0.004s] 1 test run: 0 passed, 1 failed, 0 skipped
        FAIL [   0.004s] shop tests::adds
error: test run failed
";
        let result = parse(log, 100);
        assert_eq!(brief(&result), ["E src/lib.rs:9 [tests::adds] error: not what a cargo error looks like"]);
        assert_eq!(result.summary, Some(TestSummary::new(0, 1, 0, 1)));
    }

    #[test]
    fn says_when_nothing_ran_or_nextest_is_missing() {
        let none = parse(
            "    Starting 0 tests across 1 binary\n     Summary [   0.000s] 0 tests run: 0 passed, 0 skipped\nerror: no tests to run\n(hint: use `--no-tests` to customize)\n",
            4,
        );
        assert_eq!(brief(&none), ["E -:0 [-] no tests to run"]);
        assert_eq!(none.diagnostics[0].notes, ["use `--no-tests` to customize"]);
        let missing =
            parse("error: no such command: `nextest`\n\nhelp: a command with a similar name exists: `test`\n", 101);
        assert_eq!(
            brief(&missing),
            ["E -:0 [-] cargo-nextest is not installed; run `cargo install cargo-nextest --locked`"]
        );
    }

    #[test]
    fn reads_result_lines() {
        let r = result_line("        FAIL [   0.006s] (1/7) nx-fail tests::adds_wrongly").expect("a result");
        assert_eq!((r.status, r.outcome, r.test), ("FAIL", Some(Outcome::Failed), "tests::adds_wrongly"));
        let r = result_line("  TRY 2 PASS [   0.017s] (1/3) nx-flaky tests::binds_a_port").expect("a retry");
        assert_eq!((r.status, r.outcome), ("PASS", Some(Outcome::Passed)));
        let r = result_line("   FLAKY 2/3 [   0.017s] (1/3) nx-flaky tests::binds_a_port").expect("flaky");
        assert_eq!(r.outcome, Some(Outcome::Flaky));
        let r = result_line("     SIGSEGV [   0.008s] (4/5) nx-crash tests::writes_through_null").expect("a signal");
        assert_eq!(r.outcome, Some(Outcome::Failed));
        let r = result_line("   LEAK-FAIL [   0.107s] (2/4) nx-slow tests::leaks_a_child").expect("a leak");
        assert_eq!(r.outcome, Some(Outcome::Failed));
        let r = result_line("        LEAK [   0.117s] (2/4) nx-slow tests::leaks_a_child").expect("a leak");
        assert_eq!(r.outcome, Some(Outcome::Leaked));
        let r = result_line("        SLOW [>  1.000s] (───) nx-slow tests::a_bit_slow").expect("progress");
        assert_eq!(r.outcome, None);
        let r = result_line("        FAIL [   0.009s] nx-fail::api api_bad").expect("no counter");
        assert_eq!(r.test, "api_bad");
        assert_eq!(result_line("     Summary [   0.044s] 7 tests run: 3 passed, 4 failed, 1 skipped"), None);
        assert_eq!(result_line("    Starting 7 tests across 2 binaries (1 test skipped)"), None);
        assert_eq!(result_line("    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.01s"), None);
    }

    #[test]
    fn sums_the_summary_line() {
        let mut run = NextestRun::default();
        assert!(run.summary_line("     Summary [   2.003s] 4 tests run: 2 passed (1 slow), 1 failed (1 due to being leaky), 1 timed out, 0 skipped"));
        assert_eq!(run.summary, Some(TestSummary::new(2, 2, 0, 4)));
        assert!(run.summary_line("     Summary [   0.009s] 2/7 tests run: 1 passed, 1 failed, 1 skipped"));
        assert_eq!(run.summary, Some(TestSummary::new(1, 1, 1, 3)));
        assert!(run.summary_line("     Summary [   0.000s] 0 tests run: 0 passed, 0 skipped"));
        assert_eq!(run.summary, Some(TestSummary::new(0, 0, 0, 0)));
    }

    #[test]
    fn recognises_the_start() {
        assert!(is_start("    Starting 5 tests across 1 binary"));
        assert!(is_start("    Starting 0 tests across 1 binary"));
        assert!(!is_start("    Starting the server"));
    }
}
