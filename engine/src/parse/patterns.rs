//! The regex patterns of a config-defined tool, as a parser: each line is tried against the
//! patterns in order, and the first match is one diagnostic.

use crate::config::{Pattern, severity_of};
use buildvise_plugin_api::{Diagnostic, ParseResult, relative_to};
use regex::Captures;

/// Longest line tried: a pattern describes a diagnostic line, and a flood of megabyte lines must
/// not cost a regex pass each.
const LINE_BYTES: usize = 8192;

pub struct PatternParser {
    patterns: Vec<Pattern>,
    cwd: String,
    diagnostics: Vec<Diagnostic>,
}

impl PatternParser {
    pub fn new(patterns: Vec<Pattern>, cwd: &str) -> Self {
        PatternParser { patterns, cwd: cwd.to_string(), diagnostics: Vec::new() }
    }

    pub fn feed(&mut self, number: u64, bytes: &[u8]) {
        if bytes.len() > LINE_BYTES || bytes.is_empty() {
            return;
        }
        let text = String::from_utf8_lossy(bytes);
        let text = text.trim_end_matches('\r');
        let found = self.patterns.iter().find_map(|p| p.regex.captures(text).map(|c| (p, c)));
        if let Some((pattern, captures)) = found {
            self.diagnostics.push(diagnostic(pattern, &captures, &self.cwd).with_log_range(number, number));
        }
    }

    pub fn finish(&mut self) -> ParseResult {
        ParseResult::new(std::mem::take(&mut self.diagnostics))
    }
}

fn diagnostic(pattern: &Pattern, c: &Captures<'_>, cwd: &str) -> Diagnostic {
    let group = |name: &str| c.name(name).map(|m| m.as_str().trim()).filter(|s| !s.is_empty());
    let number = |name: &str| group(name).and_then(|s| s.parse::<u32>().ok());
    let severity = group("severity").and_then(severity_of).unwrap_or(pattern.severity);
    let mut d = Diagnostic::new(severity, group("message").unwrap_or("(no message)"));
    if let Some(file) = group("file") {
        d = d.with_location(relative_to(file, cwd), number("line"), number("column").or_else(|| number("col")));
    }
    match group("code") {
        Some(code) => d.with_code(code),
        None => d,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use buildvise_plugin_api::Severity;
    use regex::Regex;

    fn parser(regex: &str, severity: Severity) -> PatternParser {
        PatternParser::new(vec![Pattern { regex: Regex::new(regex).unwrap(), severity }], "/p")
    }

    #[test]
    fn a_match_is_one_diagnostic_with_what_its_groups_name() {
        let mut p = parser(
            r"^(?P<file>[^:]+):(?P<line>\d+):(?:(?P<column>\d+):)? (?P<severity>error|warning): (?P<message>.*?)(?: \[(?P<code>\w+)\])?$",
            Severity::Error,
        );
        p.feed(1, b"checking...");
        p.feed(2, b"/p/src/a.c:3:7: warning: unused x [W12]");
        p.feed(3, b"src/b.c:9: error: no such thing\r");
        let result = p.finish();
        let d = &result.diagnostics;
        assert_eq!(d.len(), 2);
        assert_eq!(
            (d[0].severity, d[0].file.as_deref(), d[0].line, d[0].column),
            (Severity::Warning, Some("src/a.c"), Some(3), Some(7))
        );
        assert_eq!((d[0].message.as_str(), d[0].code.as_deref()), ("unused x", Some("W12")));
        assert_eq!(
            (d[1].severity, d[1].line, d[1].column, d[1].message.as_str()),
            (Severity::Error, Some(9), None, "no such thing")
        );
        assert_eq!(d[1].log_range.map(|r| (r.start, r.end)), Some((3, 3)));
    }

    #[test]
    fn the_patterns_severity_applies_without_a_group_and_huge_lines_are_skipped() {
        let mut p = parser(r"^TODO: (?P<message>.+)$", Severity::Info);
        p.feed(1, b"TODO: write docs");
        p.feed(2, format!("TODO: {}", "x".repeat(LINE_BYTES)).as_bytes());
        let result = p.finish();
        assert_eq!(result.diagnostics.len(), 1);
        assert_eq!((result.diagnostics[0].severity, result.diagnostics[0].file.as_deref()), (Severity::Info, None));
    }
}
