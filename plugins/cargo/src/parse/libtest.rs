//! libtest's report: `running N tests`, `test name ... FAILED`, the `---- name stdout ----`
//! sections of captured output, the `failures:` name list and the `test result:` lines.
//!
//! A test run prints a line per test, so lines are read as bytes: only what is kept (a failed
//! test's name, a section's first line) is decoded as text.

use super::text::{MAX_MESSAGE, clip};
use buildvise_plugin_api::TestSummary;
use memchr::memmem::{Finder, FinderRev};
use regex::Regex;
use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

/// Between a verdict's name and its outcome. A searcher built once: `str::rsplit_once` builds
/// one per call, which cost more than the search on every `test …` line.
static VERDICT_MARK: LazyLock<FinderRev<'static>> = LazyLock::new(|| FinderRev::new(" ... "));

/// How most verdicts end, and whether the test failed. A line that ends so has its last ` ... `
/// right there (no later one fits in the tail), which spares the search and the decoding.
const USUAL_ENDINGS: [(&[u8], bool); 3] = [(b" ... ok", false), (b" ... ignored", false), (b" ... FAILED", true)];

/// The counts of a `test result:` line that is not ASCII, where `\d` also matches other
/// scripts' digits; ASCII lines are read by hand ([`result_counts`]), at a tenth of the cost.
static RESULT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(\d+) passed; (\d+) failed; (\d+) ignored").expect("valid regex"));

/// rustdoc ends this message without a newline under --nocapture, so a verdict can follow it
/// on the same line.
pub(crate) const COULD_NOT_COMPILE: &[u8] = b"Couldn't compile the test.";

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
    /// Reads a line no diagnostic claimed; true when it was part of libtest's report. `status`:
    /// the verb of one of cargo's status lines, which the caller found
    /// ([`status_verb`](super::text::status_verb)).
    pub(crate) fn line(&mut self, bytes: &[u8], number: u64, status: Option<&[u8]>) -> bool {
        let bytes = bytes.strip_prefix(COULD_NOT_COMPILE).unwrap_or(bytes);
        if self.listing {
            if bytes.is_empty() {
                return true;
            }
            if let Some(name) = bytes.strip_prefix(b"    ")
                && !name.starts_with(b" ")
            {
                self.fail(&String::from_utf8_lossy(name));
                return true;
            }
            self.listing = false;
        }
        match bytes.first() {
            Some(b'r') if is_running(bytes) => {
                let count = bytes[b"running ".len()..].split(|&b| b == b' ').next().map_or(0, parse_count);
                self.announced = self.announced.saturating_add(count);
                self.close_section();
                self.seen = true;
                self.in_binary = true;
                self.successes = false;
                true
            }
            Some(b't') if bytes.starts_with(b"test result: ") => {
                self.close_section();
                self.in_binary = false;
                self.add_result(bytes);
                true
            }
            Some(b't') if bytes.starts_with(b"test ") => self.verdict(bytes),
            Some(b'-') if bytes.starts_with(b"---- ") => self.header(&String::from_utf8_lossy(bytes), number),
            Some(b'f') if bytes == b"failures:" => {
                self.close_section();
                self.successes = false;
                self.listing = true;
                true
            }
            Some(b's') if bytes == b"successes:" => {
                self.close_section();
                self.successes = true;
                true
            }
            Some(b' ') if status.is_some() => {
                self.close_section();
                self.in_binary = false;
                self.doctests = status.is_some_and(|verb| verb.starts_with(b"Doc-tests "));
                false
            }
            _ => {
                if let Some(section) = &mut self.section
                    && section.first.is_none()
                {
                    let text = String::from_utf8_lossy(bytes);
                    if !text.trim().is_empty() {
                        section.first = Some((clip(&text, MAX_MESSAGE), number));
                    }
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

    /// True while a line with no marker of its own may still be libtest's (a failed-test name
    /// under `failures:`, or a test's captured output).
    pub(crate) fn listening(&self) -> bool {
        self.listing || self.section.is_some()
    }

    pub(crate) fn context(&self) -> Context<'_> {
        match &self.section {
            Some(s) if s.success => Context::Success,
            Some(s) => Context::Failure(&s.name),
            None => Context::Free,
        }
    }

    fn verdict(&mut self, line: &[u8]) -> bool {
        let Some((name, failed)) = split_verdict(&line[b"test ".len()..]) else { return false };
        // A verdict names its test; without a name it is some other line.
        if !names_a_test(name) {
            return false;
        }
        self.last_verdict = Some(if failed {
            let name = String::from_utf8_lossy(name);
            self.fail(&name);
            Verdict::Failed(bare_name(&name).to_string())
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

    fn add_result(&mut self, line: &[u8]) {
        let counts =
            if line.is_ascii() { result_counts(line) } else { regex_result_counts(&String::from_utf8_lossy(line)) };
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
        Finished { summary: self.summary, failed }
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
}

fn is_running(line: &[u8]) -> bool {
    line.strip_prefix(b"running ").is_some_and(|rest| {
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        digits > 0 && rest[digits..].starts_with(b" test")
    })
}

/// `name ... outcome` (after `test `): the name, and whether the outcome is a failure; None when
/// the line has no outcome libtest gives.
fn split_verdict(rest: &[u8]) -> Option<(&[u8], bool)> {
    if let Some((name, failed)) =
        USUAL_ENDINGS.iter().find_map(|&(ending, failed)| Some((rest.strip_suffix(ending)?, failed)))
    {
        return Some((name, failed));
    }
    let at = VERDICT_MARK.rfind(rest)?;
    let outcome = String::from_utf8_lossy(&rest[at + b" ... ".len()..]);
    let outcome = outcome.trim_start();
    let failed = outcome.starts_with("FAILED");
    (failed || outcome.starts_with("ok") || outcome.starts_with("ignored")).then_some((&rest[..at], failed))
}

/// True when a verdict's name is more than whitespace. Names are ASCII, which decides without
/// decoding; anything else is trimmed as text.
fn names_a_test(name: &[u8]) -> bool {
    name.iter().any(u8::is_ascii_graphic) || !bare_name(&String::from_utf8_lossy(name)).is_empty()
}

/// `N passed; N failed; N ignored` in an ASCII line, the first place it appears, as [`RESULT`]
/// reads it.
fn result_counts(line: &[u8]) -> Option<[u64; 3]> {
    static PASSED: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(" passed; "));
    PASSED.find_iter(line).find_map(|at| {
        let passed = line[..at].iter().rev().take_while(|b| b.is_ascii_digit()).count();
        let (failed, rest) = count_then(&line[at + b" passed; ".len()..], b" failed; ")?;
        let (ignored, _) = count_then(rest, b" ignored")?;
        (passed > 0).then(|| [parse_count(&line[at - passed..at]), failed, ignored])
    })
}

/// The count at the start of `text` and what follows `word` after it.
fn count_then<'a>(text: &'a [u8], word: &[u8]) -> Option<(u64, &'a [u8])> {
    let digits = text.iter().take_while(|b| b.is_ascii_digit()).count();
    let rest = text[digits..].strip_prefix(word)?;
    (digits > 0).then(|| (parse_count(&text[..digits]), rest))
}

fn regex_result_counts(text: &str) -> Option<[u64; 3]> {
    let c = RESULT.captures(text)?;
    let n = |i: usize| c[i].parse::<u64>().unwrap_or(0);
    Some([n(1), n(2), n(3)])
}

/// ASCII digits as a number; 0 when too big for one, which no real count is.
fn parse_count(digits: &[u8]) -> u64 {
    digits.iter().try_fold(0u64, |n, d| n.checked_mul(10)?.checked_add(u64::from(d - b'0'))).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::super::text::status_verb;
    use super::*;

    fn feed(run: &mut TestRun, text: &str) {
        for (i, line) in text.lines().enumerate() {
            run.line(line.as_bytes(), i as u64 + 1, status_verb(line.as_bytes()));
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
        assert!(!run.line(b"running late", 1, None));
        assert!(!run.line(b"test the waters", 2, None));
        assert!(!run.line(b"test x ... maybe", 3, None));
        assert!(!run.seen);
        assert!(run.finish().summary.is_none());
    }

    #[test]
    fn reads_counts_and_verdicts_as_the_regex_and_the_search_did() {
        fn line(s: &str) -> &[u8] {
            s.as_bytes()
        }
        let cases = [
            "test result: ok. 3 passed; 0 failed; 1 ignored; 0 measured",
            "test result: FAILED. 12 passed; 345 failed; 6 ignored; 2 filtered out",
            "test result: x passed; 1 passed; 2 failed; 3 ignored",
            "test result: 1 passed; 2 failed; x ignored; 4 passed; 5 failed; 6 ignored",
            "test result: 99999999999999999999 passed; 1 failed; 2 ignored",
            "test result: 1 passed; 2 failed; 3 ignore",
        ];
        for case in cases {
            assert_eq!(result_counts(line(case)), regex_result_counts(case), "{case}");
        }
        assert_eq!(split_verdict(b"a::b ... ok"), Some((line("a::b"), false)));
        assert_eq!(split_verdict(b"a ... b ... FAILED"), Some((line("a ... b"), true)));
        assert_eq!(split_verdict(b"a ... ignored, needs network"), Some((line("a"), false)));
        assert_eq!(split_verdict(b"a ...  ok"), Some((line("a"), false)));
        assert_eq!(split_verdict(b"a ... bench: 12 ns/iter"), None);
        assert!(!names_a_test(b" \t "));
        assert!(!names_a_test("\u{3000}".as_bytes()));
        assert!(names_a_test("\u{e9}".as_bytes()));
    }
}
