//! Mocha's spec reporter (all on stdout).
//!
//! The run ends with `  N passing (12ms)`, `  N pending`, `  N failing`, then one block per
//! failure: `  1) Suite` with the nested titles on the following, deeper-indented lines, the last
//! ending in `:`, then the error (`AssertionError [ERR_ASSERTION]: ...`) and its stack. Before the
//! summary, the same `1) title` shape appears in the test tree, so blocks are only read after it.
//! Assertion messages can be printed unindented, so a block runs until the next one.
//!
//! The tree before the summary names every test: `✔ title` (with `(75ms)` only when slow),
//! `N) title` for a failure, `- title` when pending, under suite titles two spaces deeper per
//! level. A test is named with its suite titles joined as a failure block names it
//! (`Suite > nested > title`): that is Mocha's own full title, the one a CI viewer shows, and
//! titles alone repeat across suites (`should set value`). Names are only kept when the summary
//! counts as many as the tree named, so a tree broken by a test's own output names none rather
//! than some.

use super::frames;
use crate::parse::sink::Sink;
use buildvise_plugin_api::{Diagnostic, TestCase, TestOutcome, TestSummary, join_test_name, millis_to_us};
use buildvise_plugin_api::{Recogniser, TestCases, Text, Wants};
use regex::Regex;
use std::sync::LazyLock;

static PASSING: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s+(\d+) passing \(\d+(?:\.\d+)?(?:ms|s|m|h)\)$").expect("valid regex"));
static COUNT: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s+(\d+) (pending|failing)$").expect("valid regex"));
static FAILURE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^  (\d+)\) (.*)$").expect("valid regex"));
static ERR_CODE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\[(ERR_[A-Z0-9_]+)\]").expect("valid regex"));
/// A test of the tree: its mark (`✔`, `1)`, `-`), title, and the milliseconds of a slow one.
static TREE_TEST: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\x{2714}|\d+\)|-) (.+?)(?: \((\d+)ms\))?$").expect("valid regex"));

#[derive(Default)]
pub struct Mocha {
    /// Counts of the summary being read: passing, pending, failing.
    counts: Option<[u64; 3]>,
    /// True once `N failing` was read: failure blocks follow.
    in_failures: bool,
    block: Option<Block>,
    /// The suite titles above the tree line being read: (indentation, title).
    suites: Vec<(usize, String)>,
    /// The tests the tree named so far, waiting for the summary to confirm them.
    tree: Vec<TestCase>,
    /// The tests of a tree whose summary counted them, named once the failures are read.
    named: Vec<TestCase>,
}

struct Block {
    titles: Vec<String>,
    /// Still reading title lines (the last one ends with `:`).
    in_title: bool,
    start: u64,
    end: u64,
    headline: Option<String>,
    frame: Option<frames::Frame>,
}

impl Recogniser<Sink> for Mocha {
    fn is_open(&self) -> bool {
        self.counts.is_some() || self.block.is_some()
    }

    /// The counts and failure titles start with a number, after the indentation; the tree's
    /// suites and tests are indented.
    fn wants(&self) -> Wants {
        Wants::test(|head| {
            head.unindented.first().is_some_and(u8::is_ascii_digit)
                || (head.bytes.first() == Some(&b' ') && !head.unindented.is_empty())
        })
    }

    fn feed(&mut self, ln: &Text<'_>, sink: &mut Sink) -> bool {
        let text = ln.text;
        let first = ln.unindented.as_bytes().first().copied();
        // Mocha indents its summary and failures: a count at column 0 is some program's.
        if first.is_some_and(|b| b.is_ascii_digit()) && text.starts_with(char::is_whitespace) {
            if let Some(caps) = PASSING.captures(text) {
                // The tree just read is this summary's: only the run before it is done.
                self.end_block(sink);
                self.end_summary(sink);
                self.name_tests(sink);
                self.in_failures = false;
                self.counts = Some([caps[1].parse().unwrap_or(0), 0, 0]);
                self.suites.clear();
                return true;
            }
            if let (Some(counts), Some(caps)) = (&mut self.counts, COUNT.captures(text)) {
                let n = caps[1].parse().unwrap_or(0);
                if &caps[2] == "pending" {
                    counts[1] = n;
                } else {
                    counts[2] = n;
                    self.in_failures = true;
                }
                return true;
            }
            if self.in_failures
                && let Some(caps) = FAILURE.captures(text)
            {
                self.end_summary(sink);
                self.end_block(sink);
                let title = caps[2].trim();
                self.block = Some(Block {
                    titles: vec![title.trim_end_matches(':').to_string()],
                    in_title: !title.ends_with(':'),
                    start: ln.number,
                    end: ln.number,
                    headline: None,
                    frame: None,
                });
                return true;
            }
        }
        if self.counts.is_some() && !ln.trimmed.is_empty() && !self.in_failures {
            self.end_summary(sink);
        }
        let Some(block) = &mut self.block else {
            if self.counts.is_none() {
                self.tree_line(ln);
            }
            return false;
        };
        let line = ln.trimmed;
        if line.is_empty() {
            return true;
        }
        block.end = ln.number;
        if block.in_title {
            block.in_title = !line.ends_with(':');
            block.titles.push(line.trim_end_matches(':').to_string());
        } else if block.headline.is_none() {
            block.headline = Some(line.to_string());
        } else if block.frame.is_none() && line.starts_with("at ") {
            block.frame = frames::project_frame(line);
        }
        true
    }

    fn flush(&mut self, sink: &mut Sink) {
        self.end_block(sink);
        self.end_summary(sink);
        self.name_tests(sink);
        self.suites.clear();
        self.tree.clear();
    }
}

impl Mocha {
    fn end_block(&mut self, sink: &mut Sink) {
        let Some(block) = self.block.take() else { return };
        let test = join_test_name(&block.titles);
        let headline = block.headline.unwrap_or_else(|| "test failed".into());
        let mut diagnostic = Diagnostic::error(headline.as_str()).with_test(test.as_str());
        if let Some(code) = ERR_CODE.captures(&headline) {
            diagnostic = diagnostic.with_code(&code[1]);
        }
        if let Some(frame) = block.frame {
            diagnostic = diagnostic.with_location(frame.file, Some(frame.line), frame.column);
        }
        sink.failed_test(&test);
        sink.push(diagnostic.with_log_range(block.start, block.end));
    }

    fn end_summary(&mut self, sink: &mut Sink) {
        if let Some([passed, skipped, failed]) = self.counts.take() {
            let total = passed.saturating_add(skipped).saturating_add(failed);
            sink.add_summary(TestSummary::new(passed, failed, skipped, total));
            let tree = std::mem::take(&mut self.tree);
            let count = |outcome| tree.iter().filter(|t| t.outcome == outcome).count() as u64;
            if count(TestOutcome::Passed) == passed && count(TestOutcome::Skipped) == skipped {
                self.named.extend(tree);
            }
        }
    }

    /// Names the tests of the trees whose summaries were read, after their failure blocks.
    fn name_tests(&mut self, sink: &mut Sink) {
        sink.name_tests(std::mem::take(&mut self.named));
    }

    /// A line of the tree before the summary: a suite's title, or a test under the suites
    /// indented less than it.
    fn tree_line(&mut self, ln: &Text<'_>) {
        let indent = ln.text.len() - ln.unindented.len();
        self.suites.retain(|(i, _)| *i < indent);
        // Most indented lines are no test: the regex only runs on lines that start like one.
        let marked =
            ln.unindented.starts_with(['\u{2714}', '-']) || ln.unindented.starts_with(|c: char| c.is_ascii_digit());
        let caps = if marked { TREE_TEST.captures(ln.trimmed) } else { None };
        let Some(caps) = caps else {
            self.suites.push((indent, ln.trimmed.to_string()));
            return;
        };
        let outcome = match &caps[1] {
            "\u{2714}" => TestOutcome::Passed,
            "-" => TestOutcome::Skipped,
            _ => TestOutcome::Failed,
        };
        // Bounded as `TestCases` is: past the cap the counts disagree with the tree, which then
        // names nothing (failures are still reported by their blocks).
        if self.tree.len() >= TestCases::MAX {
            return;
        }
        let mut path: Vec<&str> = self.suites.iter().map(|(_, title)| title.as_str()).collect();
        path.push(&caps[2]);
        let duration = caps.get(3).and_then(|ms| millis_to_us(ms.as_str()));
        self.tree.push(TestCase::new(join_test_name(&path), outcome, duration));
    }
}

#[cfg(test)]
mod tests {
    use crate::parse::tests::{errors, parse};
    use buildvise_plugin_api::TestOutcome;

    #[test]
    fn spec_reporter_failures_and_summary() {
        let log = "\n> calc@1.0.0 test\n> mocha\n\n\n\
\x20 Calculator\n\
\x20   add\n\
\x20     \u{2714} adds\n\
\x20     1) subtracts\n\
\x20   - multiplies later\n\
\x20 2) top level\n\
\n\
\n\
\x20 1 passing (12ms)\n\
\x20 1 pending\n\
\x20 2 failing\n\
\n\
\x20 1) Calculator\n\
\x20      add\n\
\x20        subtracts:\n\
\n\
\x20     AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:\n\
\n\
3 !== -3\n\
\n\
\x20     + expected - actual\n\
\n\
\x20     at Context.<anonymous> (/srv/calc/node_modules/chai/index.js:1:1)\n\
\x20     at Context.<anonymous> (file:///srv/calc/test/calc.test.mjs:10:14)\n\
\x20     at process.processImmediate (node:internal/timers:478:21)\n\
\n\
\x20 2) top level:\n\
\x20    Error: boom\n\
\x20     at boom (src/calc.js:5:9)\n\
\n\
\n";
        let result = parse(log, 2);
        let errs = errors(&result);
        assert_eq!(errs.len(), 2, "{errs:?}");
        assert_eq!(errs[0].test.as_deref(), Some("Calculator > add > subtracts"));
        assert_eq!(errs[0].code.as_deref(), Some("ERR_ASSERTION"));
        assert_eq!((errs[0].file.as_deref(), errs[0].line), (Some("/srv/calc/test/calc.test.mjs"), Some(10)));
        assert_eq!(errs[1].test.as_deref(), Some("top level"));
        assert_eq!(errs[1].file.as_deref(), Some("src/calc.js"));
        let s = result.summary.expect("summary");
        assert_eq!((s.passed, s.failed, s.skipped, s.total), (1, 2, 1, 4));
        let named: Vec<_> = result.tests.iter().map(|t| (t.name.as_str(), t.outcome)).collect();
        assert_eq!(
            named,
            [
                ("Calculator > add > adds", TestOutcome::Passed),
                ("Calculator > add > subtracts", TestOutcome::Failed),
                ("Calculator > multiplies later", TestOutcome::Skipped),
                ("top level", TestOutcome::Failed),
            ]
        );
    }

    #[test]
    fn slow_tests_carry_their_time_and_suites_end_where_the_indentation_does() {
        let log = "\n\n  Stack\n    push\n      \u{2714} grows (81ms)\n    \u{2714} starts empty\n  \u{2714} loads\n\n\n  3 passing (95ms)\n\n";
        let result = parse(log, 0);
        let named: Vec<_> = result.tests.iter().map(|t| (t.name.as_str(), t.duration_us)).collect();
        assert_eq!(named, [("Stack > push > grows", Some(81_000)), ("Stack > starts empty", None), ("loads", None)]);
    }

    #[test]
    fn a_tree_the_summary_does_not_count_names_no_test() {
        let log = "  suite\n    \u{2714} one\n    \u{2714} two\n\n  3 passing (4ms)\n\n";
        let result = parse(log, 0);
        assert_eq!(result.summary.map(|s| s.passed), Some(3));
        assert!(result.tests.is_empty(), "{:?}", result.tests);
    }

    #[test]
    fn each_run_names_its_own_tree() {
        let run = |pkg: &str| {
            format!("\n> {pkg}@1.0.0 test\n> mocha\n\n  {pkg}\n    \u{2714} works\n\n  1 passing (2ms)\n\n")
        };
        let result = parse(&format!("{}{}", run("a"), run("b")), 0);
        let named: Vec<_> = result.tests.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(named, ["a > works", "b > works"]);
    }

    #[test]
    fn all_passing() {
        let result = parse("  suite\n    \u{2714} works\n\n\n  3 passing (4ms)\n\n", 0);
        assert_eq!(result.summary.map(|s| (s.passed, s.total)), Some((3, 3)));
    }
}
