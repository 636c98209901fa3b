//! Mocha's spec reporter (all on stdout).
//!
//! The run ends with `  N passing (12ms)`, `  N pending`, `  N failing`, then one block per
//! failure: `  1) Suite` with the nested titles on the following, deeper-indented lines, the last
//! ending in `:`, then the error (`AssertionError [ERR_ASSERTION]: ...`) and its stack. Before the
//! summary, the same `1) title` shape appears in the test tree, so blocks are only read after it.
//! Assertion messages can be printed unindented, so a block runs until the next one.

use super::frames;
use crate::parse::sink::Sink;
use buildvise_plugin_api::{Diagnostic, TestSummary, join_test_name};
use buildvise_plugin_api::{Recogniser, Text, Wants};
use regex::Regex;
use std::sync::LazyLock;

static PASSING: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s+(\d+) passing \(\d+(?:\.\d+)?(?:ms|s|m|h)\)$").expect("valid regex"));
static COUNT: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s+(\d+) (pending|failing)$").expect("valid regex"));
static FAILURE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^  (\d+)\) (.*)$").expect("valid regex"));
static ERR_CODE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\[(ERR_[A-Z0-9_]+)\]").expect("valid regex"));

#[derive(Default)]
pub struct Mocha {
    /// Counts of the summary being read: passing, pending, failing.
    counts: Option<[u64; 3]>,
    /// True once `N failing` was read: failure blocks follow.
    in_failures: bool,
    block: Option<Block>,
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

    /// The counts and failure titles start with a number, after the indentation.
    fn wants(&self) -> Wants {
        // Mocha's counts and numbered failures start with a digit after the indentation.
        Wants::test(|head| head.unindented.first().is_some_and(u8::is_ascii_digit))
    }

    fn feed(&mut self, ln: &Text<'_>, sink: &mut Sink) -> bool {
        let text = ln.text;
        let first = ln.unindented.as_bytes().first().copied();
        // Mocha indents its summary and failures: a count at column 0 is some program's.
        if first.is_some_and(|b| b.is_ascii_digit()) && text.starts_with(char::is_whitespace) {
            if let Some(caps) = PASSING.captures(text) {
                self.flush(sink);
                self.in_failures = false;
                self.counts = Some([caps[1].parse().unwrap_or(0), 0, 0]);
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
        let Some(block) = &mut self.block else { return false };
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
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::parse::tests::{errors, parse};

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
    }

    #[test]
    fn all_passing() {
        let result = parse("  suite\n    \u{2714} works\n\n\n  3 passing (4ms)\n\n", 0);
        assert_eq!(result.summary.map(|s| (s.passed, s.total)), Some((3, 3)));
    }
}
