//! libtest's report: `running N tests`, `test name ... FAILED`, the `---- name stdout ----`
//! sections of captured output, the `failures:` name list and the `test result:` lines.

use super::text::{MAX_MESSAGE, clip, is_status_line};
use buildvise_plugin_api::TestSummary;
use memchr::memmem::FinderRev;
use regex::Regex;
use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

/// Between a verdict's name and its outcome. A searcher built once: `str::rsplit_once` builds
/// one per call, which cost more than the search on every `test …` line.
static VERDICT_MARK: LazyLock<FinderRev<'static>> = LazyLock::new(|| FinderRev::new(" ... "));

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
    /// Reads a line no diagnostic claimed; true when it was part of libtest's report.
    pub(crate) fn line(&mut self, text: &str, number: u64) -> bool {
        let text = text.strip_prefix("Couldn't compile the test.").unwrap_or(text);
        let bytes = text.as_bytes();
        if self.listing {
            if bytes.is_empty() {
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
        match bytes.first() {
            Some(b'r') if is_running(text) => {
                let count = text["running ".len()..].split(' ').next().and_then(|n| n.parse::<u64>().ok());
                self.announced = self.announced.saturating_add(count.unwrap_or(0));
                self.close_section();
                self.seen = true;
                self.in_binary = true;
                self.successes = false;
                true
            }
            Some(b't') if text.starts_with("test result: ") => {
                self.close_section();
                self.in_binary = false;
                self.add_result(text);
                true
            }
            Some(b't') if text.starts_with("test ") => self.verdict(text),
            Some(b'-') if text.starts_with("---- ") => self.header(text, number),
            Some(b'f') if text == "failures:" => {
                self.close_section();
                self.successes = false;
                self.listing = true;
                true
            }
            Some(b's') if text == "successes:" => {
                self.close_section();
                self.successes = true;
                true
            }
            Some(b' ') if is_status_line(bytes) => {
                self.close_section();
                self.in_binary = false;
                self.doctests = text.trim_start().starts_with("Doc-tests ");
                false
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

    fn verdict(&mut self, text: &str) -> bool {
        let rest = &text["test ".len()..];
        let Some(at) = VERDICT_MARK.rfind(rest.as_bytes()) else { return false };
        let (name, outcome) = (&rest[..at], &rest[at + " ... ".len()..]);
        // A verdict names its test; without a name it is some other line.
        if bare_name(name).is_empty() {
            return false;
        }
        let outcome = outcome.trim_start();
        let failed = outcome.starts_with("FAILED");
        if failed {
            self.fail(name);
        } else if !(outcome.starts_with("ok") || outcome.starts_with("ignored")) {
            return false;
        }
        self.last_verdict = Some(if failed { Verdict::Failed(bare_name(name).to_string()) } else { Verdict::Passed });
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

    fn add_result(&mut self, text: &str) {
        let Some(c) = RESULT.captures(text) else { return };
        let n = |i: usize| c[i].parse::<u64>().unwrap_or(0);
        let (passed, failed, skipped) = (n(1), n(2), n(3));
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

fn is_running(text: &str) -> bool {
    text.strip_prefix("running ").is_some_and(|rest| {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        digits > 0 && rest[digits..].starts_with(" test")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
