//! The parser of one run: a plugin tool's own parser, or, for a tool defined in a config file,
//! the formats it names and its patterns, each fed every line, their results merged.
//!
//! Merging follows the order the file gives: a line an earlier format made a diagnostic of is not
//! made one again by a later format (`formats = ["gcc", "fallback"]` reports a gcc error once).

use super::patterns::PatternParser;
use crate::plugins::{ParserHandle, PluginError};
use buildvise_plugin_api::Stream;
use buildvise_plugin_api::{LogRange, ParseResult, Progress, RunEnd};

/// What reads one run's output.
pub struct RunParser {
    parts: Vec<Part>,
}

enum Part {
    Plugin(ParserHandle),
    Patterns(PatternParser),
}

impl RunParser {
    /// A plugin tool's parser.
    pub fn plugin(handle: ParserHandle) -> Self {
        RunParser { parts: vec![Part::Plugin(handle)] }
    }

    /// A config tool's formats, in order, then its patterns, if it has any.
    pub fn combined(formats: Vec<ParserHandle>, patterns: Option<PatternParser>) -> Self {
        let mut parts: Vec<Part> = formats.into_iter().map(Part::Plugin).collect();
        parts.extend(patterns.map(Part::Patterns));
        RunParser { parts }
    }

    /// Feeds lines, in order: each its stream, its number in the log, and its bytes.
    pub fn feed<'a>(&mut self, lines: impl Iterator<Item = (Stream, u64, &'a [u8])> + Clone) {
        for part in &mut self.parts {
            match part {
                Part::Plugin(handle) => handle.feed(lines.clone()),
                Part::Patterns(patterns) => lines.clone().for_each(|(_, number, bytes)| patterns.feed(number, bytes)),
            }
        }
    }

    /// The counts of the parts that keep any, added up.
    pub fn progress(&mut self) -> Option<Progress> {
        let mut total: Option<Progress> = None;
        for part in &mut self.parts {
            if let Part::Plugin(handle) = part
                && let Some(p) = handle.progress()
            {
                let sum = total.get_or_insert_with(Progress::default);
                sum.errors += p.errors;
                sum.warnings += p.warnings;
                sum.tests += p.tests;
                if let Some(announced) = p.tests_total {
                    sum.tests_total = Some(sum.tests_total.unwrap_or(0) + announced);
                }
                if sum.activity.is_none() {
                    sum.activity = p.activity;
                }
            }
        }
        total
    }

    pub fn finish(self, end: &RunEnd) -> Result<ParseResult, PluginError> {
        let mut results = Vec::with_capacity(self.parts.len());
        for part in self.parts {
            results.push(match part {
                Part::Plugin(handle) => handle.finish(end)?,
                Part::Patterns(mut patterns) => patterns.finish(),
            });
        }
        Ok(merge(results))
    }
}

/// One result of several, in order: diagnostics from lines no earlier part claimed, the first
/// summary and stop, every failed test once, and a failure if any part saw one.
fn merge(results: Vec<ParseResult>) -> ParseResult {
    let mut results = results.into_iter();
    let Some(mut merged) = results.next() else { return ParseResult::default() };
    for result in results {
        let claimed: Vec<LogRange> = merged.diagnostics.iter().filter_map(|d| d.log_range).collect();
        let overlaps = |r: &LogRange| claimed.iter().any(|c| c.start <= r.end && r.start <= c.end);
        merged
            .diagnostics
            .extend(result.diagnostics.into_iter().filter(|d| !d.log_range.as_ref().is_some_and(overlaps)));
        merged.summary = merged.summary.or(result.summary);
        merged.stopped_early = merged.stopped_early.or(result.stopped_early);
        for test in result.failed_tests {
            if !merged.failed_tests.contains(&test) {
                merged.failed_tests.push(test);
            }
        }
        merged.success = match (merged.success, result.success) {
            (Some(false), _) | (_, Some(false)) => Some(false),
            (a, b) => a.or(b),
        };
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;
    use buildvise_plugin_api::{Diagnostic, TestSummary};

    #[test]
    fn a_line_claimed_by_an_earlier_format_is_not_reported_again() {
        let gcc = ParseResult::new(vec![Diagnostic::error("x undeclared").with_log_range(3, 5)]);
        let fallback = ParseResult::new(vec![
            Diagnostic::error("error: x undeclared").with_log_range(3, 3),
            Diagnostic::warning("make: warning").with_log_range(9, 9),
            Diagnostic::error("no line"),
        ]);
        let merged = merge(vec![gcc, fallback]);
        let messages: Vec<&str> = merged.diagnostics.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(messages, ["x undeclared", "make: warning", "no line"]);
    }

    #[test]
    fn the_first_summary_and_stop_win_and_failures_add_up() {
        let a = ParseResult::default().with_failed_tests(vec!["t1".into()]).with_success(Some(true));
        let b = ParseResult::default()
            .with_summary(Some(TestSummary::new(1, 1, 0, 2)))
            .with_failed_tests(vec!["t1".into(), "t2".into()])
            .with_stopped_early("bailed")
            .with_success(Some(false));
        let merged = merge(vec![a, b]);
        assert_eq!(merged.summary, Some(TestSummary::new(1, 1, 0, 2)));
        assert_eq!(merged.failed_tests, ["t1", "t2"]);
        assert_eq!((merged.stopped_early.as_deref(), merged.success), (Some("bailed"), Some(false)));
        assert_eq!(merge(Vec::new()), ParseResult::default());
    }
}
