//! libtest's report: `running N tests`, `test name ... FAILED`, the `---- name stdout ----`
//! sections of captured output, the `failures:` name list and the `test result:` lines. The
//! run's state ([`TestRun`]) is shared: whose output a line is decides what a panic or an
//! error printed in it means.

use super::findings::Findings;
use super::status::{TARGET_VERBS, is_status_line};
use super::text::{MAX_MESSAGE, clip};
use buildvise_plugin_api::{Recogniser, TestCases, TestOutcome, TestSummary, Text, Wants};
use memchr::memmem::FinderRev;
use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

/// Between a verdict's name and its outcome, the last one in the line (a name may hold one).
/// A searcher built once: `str::rsplit_once` builds one per call, which costs more than the
/// search on every `test …` line.
static VERDICT_MARK: LazyLock<FinderRev<'static>> = LazyLock::new(|| FinderRev::new(" ... "));

/// rustdoc ends this message without a newline under --nocapture, so a verdict can follow it
/// on the same line.
const COULD_NOT_COMPILE: &str = "Couldn't compile the test.";

/// How the lines of the report start. A line that starts otherwise is libtest's only inside a
/// section of captured output or the `failures:` list, or when it is one of cargo's status lines,
/// which end a test binary's output: the recogniser is open while that may matter, and wants
/// the status lines that start a test target otherwise.
pub(crate) const STARTS: &[&str] = &["running ", "test ", "---- ", "failures:", "successes:", COULD_NOT_COMPILE];

/// The recogniser of libtest's report, into the shared [`TestRun`].
#[derive(Default)]
pub(crate) struct LibtestReport {
    /// The run was listening ([`TestRun::listening`]) after the last line this read. Only this
    /// recogniser starts to listen; others may stop it (a test binary ended), which leaves
    /// this open one line too long, for a line that then changes nothing.
    listening: bool,
}

impl Recogniser<Findings> for LibtestReport {
    fn wants(&self) -> Wants {
        Wants::starts(STARTS).or_unindented(TARGET_VERBS)
    }

    fn is_open(&self) -> bool {
        self.listening
    }

    fn feed(&mut self, line: &Text<'_>, found: &mut Findings) -> bool {
        let took = found.tests.line(line.text, line.number);
        if took {
            if let Some(verdict) = found.tests.last_verdict.take() {
                found.verdict(verdict);
            }
            if !found.tests.in_binary {
                found.orphans.clear();
            }
        }
        self.listening = found.tests.listening();
        took
    }
}

/// Whose output a line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Context<'a> {
    /// Inside the captured output of this failed test.
    Failure(&'a str),
    /// Inside the captured output of a passing test (`--show-output`).
    Success,
    /// Anywhere else.
    Free,
}

struct Section {
    name: String,
    header: u64,
    success: bool,
    /// The first line of the test's output, and its number.
    first: Option<(String, u64)>,
}

/// A `test name ... outcome` line. Only a failure's name is kept: most verdicts pass, and a
/// name per passing test was an allocation per line of a test run.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    Passed,
    Failed(String),
}

/// What libtest reported so far, over every test binary of the run.
#[derive(Default)]
pub(crate) struct TestRun {
    /// A `running N tests` line was seen: this run runs tests.
    pub(crate) seen: bool,
    /// Between `running N tests` and `test result:`: text here is the tests' own.
    pub(crate) in_binary: bool,
    /// Tests the `running N tests` lines announced, and verdicts read, over every binary.
    pub(crate) announced: u64,
    pub(crate) verdicts: u64,
    /// After `Doc-tests`: each test is a process whose output comes before its verdict.
    pub(crate) doctests: bool,
    /// The verdict the last line gave.
    pub(crate) last_verdict: Option<Verdict>,
    /// Every verdict's test, in order, for reports.
    tests: TestCases,
    section: Option<Section>,
    successes: bool,
    listing: bool,
    summary: Option<TestSummary>,
    failed: Vec<String>,
    failed_set: HashSet<String>,
    verdicts_seen: bool,
    /// First line of each failed test's captured output, with the lines from the section's
    /// header to that one.
    first_lines: HashMap<String, (Option<String>, (u64, u64))>,
}

/// libtest decorates some names in its verdicts (`x - should panic`); results name them bare.
pub(crate) fn bare_name(name: &str) -> &str {
    let name = name.trim();
    [" - should panic", " - compile fail", " - compile"].iter().find_map(|s| name.strip_suffix(s)).unwrap_or(name)
}

impl TestRun {
    /// Reads a line no diagnostic claimed; true when it was part of libtest's report.
    pub(crate) fn line(&mut self, line: &str, number: u64) -> bool {
        let text = line.strip_prefix(COULD_NOT_COMPILE).unwrap_or(line);
        if self.listing {
            if text.is_empty() {
                return true;
            }
            if let Some(name) = text.strip_prefix("    ")
                && !name.starts_with(' ')
            {
                self.fail(name);
                return true;
            }
            self.listing = false;
        }
        if is_status_line(line) {
            // The test binary whose output this was ended. After `Doc-tests` each test is a
            // process whose output comes before its verdict.
            self.close_section();
            self.in_binary = false;
            self.doctests = text.trim_start().starts_with("Doc-tests ");
            return false;
        }
        if let Some(count) = announced_tests(text) {
            self.announced = self.announced.saturating_add(count);
            self.close_section();
            self.seen = true;
            self.in_binary = true;
            self.successes = false;
            return true;
        }
        if text.starts_with("test result: ") {
            self.close_section();
            self.in_binary = false;
            self.add_result(text);
            return true;
        }
        if let Some(verdict) = text.strip_prefix("test ") {
            return self.verdict(verdict);
        }
        if text.starts_with("---- ") {
            return self.header(text, number);
        }
        match text {
            "failures:" => {
                self.close_section();
                self.successes = false;
                self.listing = true;
                true
            }
            "successes:" => {
                self.close_section();
                self.successes = true;
                true
            }
            _ => {
                if let Some(section) = &mut self.section
                    && section.first.is_none()
                    && !text.trim().is_empty()
                {
                    section.first = Some((clip(text, MAX_MESSAGE), number));
                }
                false
            }
        }
    }

    /// Cargo's `error: test failed, to rerun pass …` comes after the binary exited, whether or
    /// not it printed a result.
    pub(crate) fn binary_ended(&mut self) {
        self.close_section();
        self.in_binary = false;
    }

    /// True while a line with no marker of its own may still be libtest's: a failed test's name
    /// under `failures:`, a test's captured output, or any of cargo's status lines, which end a
    /// test binary's output (or the doctests' run).
    pub(crate) fn listening(&self) -> bool {
        self.listing || self.section.is_some() || self.in_binary || self.doctests
    }

    pub(crate) fn context(&self) -> Context<'_> {
        match &self.section {
            Some(s) if s.success => Context::Success,
            Some(s) => Context::Failure(&s.name),
            None => Context::Free,
        }
    }

    /// `name ... outcome`, after `test `.
    fn verdict(&mut self, rest: &str) -> bool {
        let Some((name, outcome)) = split_verdict(rest) else { return false };
        // A verdict names its test; without a name it is some other line.
        if !names_a_test(name) {
            return false;
        }
        // libtest prints no durations without the unstable `--report-time`.
        self.tests.push(bare_name(name), outcome, None);
        let failed = outcome == TestOutcome::Failed;
        self.last_verdict = Some(if failed {
            self.fail(name);
            Verdict::Failed(bare_name(name).to_string())
        } else {
            Verdict::Passed
        });
        self.verdicts_seen = true;
        self.verdicts += 1;
        true
    }

    fn header(&mut self, text: &str, number: u64) -> bool {
        let Some(inner) = text.strip_prefix("---- ").and_then(|t| t.strip_suffix(" ----")) else { return false };
        let name = inner.strip_suffix(" stdout").or_else(|| inner.strip_suffix(" stderr")).unwrap_or(inner);
        if bare_name(name).is_empty() {
            return false;
        }
        self.close_section();
        self.section =
            Some(Section { name: bare_name(name).to_string(), header: number, success: self.successes, first: None });
        true
    }

    fn close_section(&mut self) {
        if let Some(s) = self.section.take()
            && !s.success
        {
            let end = s.first.as_ref().map_or(s.header, |(_, number)| *number);
            self.first_lines.entry(s.name).or_insert((s.first.map(|(text, _)| text), (s.header, end)));
        }
    }

    fn fail(&mut self, name: &str) {
        let name = bare_name(name);
        if !name.is_empty() && self.failed_set.insert(name.to_string()) {
            self.failed.push(name.to_string());
        }
        self.verdicts_seen = true;
    }

    fn add_result(&mut self, line: &str) {
        let counts = result_counts(line);
        let Some([passed, failed, skipped]) = counts else { return };
        let s = self.summary.get_or_insert_with(TestSummary::default);
        s.passed = s.passed.saturating_add(passed);
        s.failed = s.failed.saturating_add(failed);
        s.skipped = s.skipped.saturating_add(skipped);
        s.total = s.total.saturating_add(passed).saturating_add(failed).saturating_add(skipped);
        self.verdicts_seen = true;
    }

    /// True when `name` failed, or when no verdict at all was read (the run was cut short, so a
    /// panic cannot be checked against the results).
    pub(crate) fn may_have_failed(&self, name: &str) -> bool {
        !self.verdicts_seen || self.failed_set.contains(name)
    }

    /// The summary and the failed tests, each with the first line of its captured output and
    /// the lines from its section's header to that one.
    pub(crate) fn finish(mut self) -> Finished {
        self.close_section();
        let first_lines = self.first_lines;
        let failed = self
            .failed
            .into_iter()
            .map(|name| {
                let (first_line, lines) = first_lines.get(&name).cloned().unzip();
                FailedTest { name, first_line: first_line.flatten(), lines }
            })
            .collect();
        Finished { summary: self.summary, failed, tests: self.tests }
    }
}

pub(crate) struct FailedTest {
    pub(crate) name: String,
    pub(crate) first_line: Option<String>,
    /// The section's header and the first line of output, as far as the log shows them.
    pub(crate) lines: Option<(u64, u64)>,
}

pub(crate) struct Finished {
    pub(crate) summary: Option<TestSummary>,
    pub(crate) failed: Vec<FailedTest>,
    pub(crate) tests: TestCases,
}

/// The count of `running N tests` (`running 1 test`); 0 for a count too big for a number.
fn announced_tests(line: &str) -> Option<u64> {
    let rest = line.strip_prefix("running ")?;
    let (count, after) = rest.split_at(rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len()));
    (!count.is_empty() && after.starts_with(" test")).then(|| count.parse().unwrap_or(0))
}

/// `name ... outcome` (after `test `): the name, and whether the outcome is a failure; None when
/// the line has no outcome libtest gives.
fn split_verdict(rest: &str) -> Option<(&str, TestOutcome)> {
    let at = VERDICT_MARK.rfind(rest)?;
    let (name, outcome) = (&rest[..at], rest[at + " ... ".len()..].trim_start());
    let outcome = if outcome.starts_with("FAILED") {
        TestOutcome::Failed
    } else if outcome.starts_with("ok") {
        TestOutcome::Passed
    } else if outcome.starts_with("ignored") {
        TestOutcome::Skipped
    } else {
        return None;
    };
    Some((name, outcome))
}

/// True when a verdict's name is more than whitespace.
fn names_a_test(name: &str) -> bool {
    !bare_name(name).is_empty()
}

/// `N passed; N failed; N ignored`, the first place it appears; a count too big for a number
/// reads as 0.
fn result_counts(text: &str) -> Option<[u64; 3]> {
    text.match_indices(" passed; ").find_map(|(at, mark)| {
        let before = &text[..at];
        let passed = &before[before.trim_end_matches(|c: char| c.is_ascii_digit()).len()..];
        let (failed, rest) = leading_number(&text[at + mark.len()..])?;
        let (ignored, rest) = leading_number(rest.strip_prefix(" failed; ")?)?;
        rest.starts_with(" ignored").then_some(())?;
        Some([count(passed)?, failed, ignored])
    })
}

/// The digits `text` starts with, as a count, and what follows them.
fn leading_number(text: &str) -> Option<(u64, &str)> {
    let digits = text.len() - text.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    Some((count(&text[..digits])?, &text[digits..]))
}

/// A run of digits as a count: None when there are none, 0 when too big.
fn count(digits: &str) -> Option<u64> {
    (!digits.is_empty()).then(|| digits.parse().unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_counts_are_the_first_full_triple() {
        let line = "test result: FAILED. 12 passed; 3 failed; 1 ignored; 0 measured; 0 filtered out";
        assert_eq!(result_counts(line), Some([12, 3, 1]));
        assert_eq!(result_counts("x passed; 1 failed; 2 ignored, then 4 passed; 5 failed; 6 ignored"), Some([4, 5, 6]));
        assert_eq!(result_counts("1 passed; 2 failed"), None);
        assert_eq!(result_counts("99999999999999999999 passed; 0 failed; 0 ignored"), Some([0, 0, 0]));
    }

    fn feed(run: &mut TestRun, text: &str) {
        for (i, line) in text.lines().enumerate() {
            run.line(line, i as u64 + 1);
        }
    }

    #[test]
    fn sums_results_and_collects_failures() {
        let mut run = TestRun::default();
        feed(
            &mut run,
            "\nrunning 3 tests\ntest a::one ... ok\ntest a::two - should panic ... FAILED\n\
             test a::three ... ignored\n\nfailures:\n\n---- a::two stdout ----\nnote: test did not panic as expected\n\n\
             failures:\n    a::two\n\ntest result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out\n\n\
             running 1 test\ntest src/lib.rs - f (line 3) ... ok\n\n\
             test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 2 filtered out; finished in 0.1s\n",
        );
        assert!(run.may_have_failed("a::two"));
        assert!(!run.may_have_failed("a::one"));
        let done = run.finish();
        assert_eq!(done.summary, Some(TestSummary::new(2, 1, 1, 4)));
        assert_eq!(done.failed.len(), 1);
        assert_eq!(done.failed[0].name, "a::two");
        assert_eq!(done.failed[0].first_line.as_deref(), Some("note: test did not panic as expected"));
        assert_eq!(done.failed[0].lines, Some((9, 10)));
    }

    #[test]
    fn knows_whose_output_it_reads() {
        let mut run = TestRun::default();
        feed(&mut run, "running 1 test\nsuccesses:\n\n---- b::ok stdout ----\nhello");
        assert_eq!(run.context(), Context::Success);
        feed(&mut run, "failures:\n\n---- b::bad stdout ----");
        assert_eq!(run.context(), Context::Failure("b::bad"));
        feed(&mut run, "     Running tests/it.rs (target/debug/deps/it-0)");
        assert_eq!(run.context(), Context::Free);
        assert!(!run.in_binary);
    }

    #[test]
    fn ignores_lookalikes() {
        let mut run = TestRun::default();
        assert!(!run.line("running late", 1));
        assert!(!run.line("test the waters", 2));
        assert!(!run.line("test x ... maybe", 3));
        assert!(!run.seen);
        assert!(run.finish().summary.is_none());
    }

    #[test]
    fn reads_counts_and_verdicts() {
        let cases = [
            ("test result: ok. 3 passed; 0 failed; 1 ignored; 0 measured", Some([3, 0, 1])),
            ("test result: FAILED. 12 passed; 345 failed; 6 ignored; 2 filtered out", Some([12, 345, 6])),
            ("test result: x passed; 1 passed; 2 failed; 3 ignored", Some([1, 2, 3])),
            ("test result: 1 passed; 2 failed; x ignored; 4 passed; 5 failed; 6 ignored", Some([4, 5, 6])),
            ("test result: 99999999999999999999 passed; 1 failed; 2 ignored", Some([0, 1, 2])),
            ("test result: 1 passed; 2 failed; 3 ignore", None),
        ];
        for (case, counts) in cases {
            assert_eq!(result_counts(case), counts, "{case}");
        }
        assert_eq!(split_verdict("a::b ... ok"), Some(("a::b", TestOutcome::Passed)));
        assert_eq!(split_verdict("a ... b ... FAILED"), Some(("a ... b", TestOutcome::Failed)));
        assert_eq!(split_verdict("a ... ignored, needs network"), Some(("a", TestOutcome::Skipped)));
        assert_eq!(split_verdict("a ...  ok"), Some(("a", TestOutcome::Passed)));
        assert_eq!(split_verdict("a ... bench: 12 ns/iter"), None);
        assert!(!names_a_test(" \t "));
        assert!(!names_a_test("\u{3000}"));
        assert!(names_a_test("\u{e9}"));
    }
}
