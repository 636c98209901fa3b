//! `node --test`: TAP (Node's default on a pipe) and the spec reporter.
//!
//! TAP nests subtests by indentation under `# Subtest: name`; a failure is `not ok N - name`
//! followed by a YAML block (`location`, `failureType`, `error`, `code`, `stack`). `location` is
//! where the test is declared, so the stack's first project frame is preferred. A describe whose
//! children failed is reported as its own `not ok` with `failureType: 'subtestsFailed'`: not a
//! failure of its own. Counts come from `# tests N` / `# pass N` ... (spec: `ℹ tests N`).
//!
//! Spec prints `▶ suite` before its first child and `▶ suite (2ms)` after its last, `✖ test (1ms)`
//! for a failure with the error indented below it, and repeats the failures after
//! `✖ failing tests:`, which are not read again.

use super::frames;
use crate::parse::sink::Sink;
use buildvise_plugin_api::occurrences;
use buildvise_plugin_api::{Diagnostic, TestSummary, join_test_name};
use buildvise_plugin_api::{Recogniser, Text, Wants};
use memchr::memmem::Finder;
use regex::Regex;
use std::sync::LazyLock;

/// A TAP result line, `(not )?ok N( - name)?( # DIRECTIVE ...)?`, is read in parts: as one regex
/// with captures (the name is lazy, up to a directive) it took microseconds per line, and a run
/// prints one per test.
static TAP_HEAD: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^(?:not )?ok \d+").expect("valid regex"));
static TAP_DIRECTIVE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^ # (\w+)").expect("valid regex"));
static DIRECTIVE_MARK: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(" # "));
static SPEC_RESULT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<name>.*) \(\d+(?:\.\d+)?ms\)(?: # (?P<directive>\w+).*)?$").expect("valid regex")
});

static ERR_CODE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\[(ERR_[A-Z0-9_]+)\]").expect("valid regex"));

const SUMMARY_KEYS: [&str; 6] = ["tests", "pass", "fail", "cancelled", "skipped", "todo"];

#[derive(Default)]
pub struct NodeTest {
    /// Open subtests or suites: (indentation, name).
    stack: Vec<(usize, String)>,
    failure: Option<Failure>,
    counts: [Option<u64>; 6],
    /// After spec's `✖ failing tests:`: repeats only.
    repeats: bool,
}

struct Failure {
    test: String,
    indent: usize,
    tap: bool,
    start: u64,
    end: u64,
    message: Option<String>,
    code: Option<String>,
    declared: Option<frames::Frame>,
    frame: Option<frames::Frame>,
    /// TAP: the failure is only its children's (`subtestsFailed`).
    parent_only: bool,
    /// TAP: the YAML key whose block value (`|-`) the next lines continue.
    key: Option<String>,
}

impl Recogniser<Sink> for NodeTest {
    fn is_open(&self) -> bool {
        self.failure.is_some()
    }

    /// How TAP's and spec's lines start: comments (`# Subtest:`, `# tests 3`), results, the version,
    /// and spec's suites, failures and counts.
    fn wants(&self) -> Wants {
        Wants::starts_unindented(&["#", "ok ", "not ok ", "TAP version 1", "\u{25b6} ", "\u{2716} ", "\u{2139} "])
    }

    fn feed(&mut self, ln: &Text<'_>, sink: &mut Sink) -> bool {
        let trimmed = ln.unindented;
        let indent = ln.text.len() - trimmed.len();
        if self.failure.is_some() && self.failure_line(trimmed, indent, ln.number, sink) {
            return true;
        }
        let Some(first) = trimmed.chars().next() else { return false };
        match first {
            '#' | 'o' | 'n' | 'T' => self.tap_line(trimmed, indent, ln.number, sink),
            '\u{25b6}' | '\u{2716}' | '\u{2139}' => self.spec_line(trimmed, indent, ln.number),
            _ => false,
        }
    }

    fn flush(&mut self, sink: &mut Sink) {
        self.emit(sink);
        self.stack.clear();
        self.repeats = false;
        if let [Some(tests), pass, fail, cancelled, skipped, todo] = std::mem::take(&mut self.counts) {
            let get = |n: Option<u64>| n.unwrap_or(0);
            let (failed, skipped) = (get(fail).saturating_add(get(cancelled)), get(skipped).saturating_add(get(todo)));
            sink.add_summary(TestSummary::new(get(pass), failed, skipped, tests));
        }
    }
}

impl NodeTest {
    fn tap_line(&mut self, trimmed: &str, indent: usize, number: u64, sink: &mut Sink) -> bool {
        if trimmed == "TAP version 13" || trimmed == "TAP version 14" {
            return true;
        }
        if let Some(name) = trimmed.strip_prefix("# Subtest: ") {
            self.stack.retain(|(i, _)| *i < indent);
            self.stack.push((indent, unescape(name)));
            return true;
        }
        if let Some(rest) = trimmed.strip_prefix("# ").filter(|_| indent == 0) {
            return self.count(rest);
        }
        if !(trimmed.starts_with("ok ") || trimmed.starts_with("not ok ")) {
            return false;
        }
        let Some(result) = tap_result(trimmed) else { return false };
        self.emit(sink);
        let excused =
            result.directive.is_some_and(|d| d.eq_ignore_ascii_case("TODO") || d.eq_ignore_ascii_case("SKIP"));
        if result.failed && !excused {
            let mut path: Vec<String> =
                self.stack.iter().filter(|(i, _)| *i < indent).map(|(_, n)| n.clone()).collect();
            path.push(result.name.map_or_else(String::new, unescape));
            self.failure = Some(Failure::new(join_test_name(&path), indent, true, number));
        }
        self.stack.retain(|(i, _)| *i < indent);
        true
    }

    fn spec_line(&mut self, trimmed: &str, indent: usize, number: u64) -> bool {
        if let Some(rest) = trimmed.strip_prefix("\u{2139} ") {
            return self.count(rest);
        }
        if trimmed.starts_with("\u{2716} failing tests:") {
            self.repeats = true;
            return true;
        }
        if let Some(name) = trimmed.strip_prefix("\u{25b6} ") {
            if SPEC_RESULT.is_match(name) {
                self.stack.retain(|(i, _)| *i < indent);
            } else {
                self.stack.retain(|(i, _)| *i < indent);
                self.stack.push((indent, name.to_string()));
            }
            return true;
        }
        let Some(rest) = trimmed.strip_prefix("\u{2716} ") else { return false };
        let Some(caps) = SPEC_RESULT.captures(rest) else { return false };
        if self.repeats {
            return true;
        }
        let name = &caps["name"];
        if self.stack.last().is_some_and(|(i, n)| *i == indent && n == name) {
            self.stack.pop();
            return true;
        }
        if caps.name("directive").is_some_and(|d| d.as_str().eq_ignore_ascii_case("todo")) {
            return true;
        }
        let mut path: Vec<&str> = self.stack.iter().filter(|(i, _)| *i < indent).map(|(_, n)| n.as_str()).collect();
        path.push(name);
        self.failure = Some(Failure::new(join_test_name(&path), indent, false, number));
        true
    }

    fn count(&mut self, rest: &str) -> bool {
        let Some((key, value)) = rest.split_once(' ') else { return false };
        let Some(slot) = SUMMARY_KEYS.iter().position(|k| *k == key) else {
            return matches!(key, "suites" | "duration_ms");
        };
        match value.trim().parse::<u64>() {
            Ok(n) => {
                self.counts[slot] = Some(n);
                true
            }
            Err(_) => false,
        }
    }

    /// A line while a failure is open; false when it ends the failure and belongs to others.
    fn failure_line(&mut self, trimmed: &str, indent: usize, number: u64, sink: &mut Sink) -> bool {
        let Some(failure) = &mut self.failure else { return false };
        if trimmed.is_empty() {
            return true;
        }
        if indent <= failure.indent {
            self.emit(sink);
            return false;
        }
        failure.end = number;
        if failure.tap {
            failure.yaml_line(trimmed, indent);
        } else if failure.message.is_none() {
            failure.message = Some(trimmed.to_string());
            failure.code = ERR_CODE.captures(trimmed).map(|c| c[1].to_string());
        } else if failure.frame.is_none() && trimmed.starts_with("at ") {
            failure.frame = frames::project_frame(trimmed);
        } else if let Some(code) = trimmed.strip_prefix("code: ") {
            failure.code.get_or_insert_with(|| unquote(code.trim_end_matches(',')).to_string());
        }
        true
    }

    fn emit(&mut self, sink: &mut Sink) {
        let Some(failure) = self.failure.take() else { return };
        if failure.parent_only {
            return;
        }
        let mut diagnostic = Diagnostic::error(failure.message.unwrap_or_else(|| "test failed".into()))
            .with_test(failure.test.as_str())
            .with_log_range(failure.start, failure.end);
        if let Some(code) = failure.code.filter(|c| c.starts_with("ERR_")) {
            diagnostic = diagnostic.with_code(code);
        }
        if let Some(frame) = failure.frame.or(failure.declared) {
            diagnostic = diagnostic.with_location(frame.file, Some(frame.line), frame.column);
        }
        sink.failed_test(&failure.test);
        sink.push(diagnostic);
    }
}

impl Failure {
    fn new(test: String, indent: usize, tap: bool, start: u64) -> Self {
        Failure {
            test,
            indent,
            tap,
            start,
            end: start,
            message: None,
            code: None,
            declared: None,
            frame: None,
            parent_only: false,
            key: None,
        }
    }

    /// One line of the YAML block under `not ok`.
    fn yaml_line(&mut self, trimmed: &str, indent: usize) {
        let key_indent = self.indent + 2;
        if indent > key_indent {
            match self.key.as_deref() {
                Some("error") if self.message.is_none() => self.message = Some(trimmed.to_string()),
                Some("stack") if self.frame.is_none() => self.frame = frames::parse(trimmed).filter(frames::in_project),
                _ => {}
            }
            return;
        }
        self.key = None;
        let Some((key, value)) = trimmed.split_once(':') else { return };
        let value = value.trim();
        if matches!(value, "|-" | "|" | ">-" | ">" | "") {
            self.key = Some(key.to_string());
            return;
        }
        match key {
            "error" => self.message = Some(unquote(value).to_string()),
            "code" => self.code = Some(unquote(value).to_string()),
            "failureType" => self.parent_only = unquote(value) == "subtestsFailed",
            "location" => self.declared = frames::parse(unquote(value)),
            _ => {}
        }
    }
}

fn unquote(value: &str) -> &str {
    let value = value.trim();
    value
        .strip_prefix('\'')
        .and_then(|v| v.strip_suffix('\''))
        .or_else(|| value.strip_prefix('"').and_then(|v| v.strip_suffix('"')))
        .unwrap_or(value)
}

/// A TAP result line taken apart.
#[derive(Debug, PartialEq, Eq)]
struct TapResult<'a> {
    failed: bool,
    name: Option<&'a str>,
    directive: Option<&'a str>,
}

/// Reads `(not )?ok N( - name)?( # DIRECTIVE ...)?`. The name runs to the first ` # word`, which
/// starts the directive.
fn tap_result(line: &str) -> Option<TapResult<'_>> {
    let head = TAP_HEAD.find(line)?;
    let rest = &line[head.end()..];
    let directive_at =
        |text: &str| occurrences(&DIRECTIVE_MARK, text.as_bytes()).find(|&at| TAP_DIRECTIVE.is_match(&text[at..]));
    let (name, tail) = match rest.strip_prefix(" - ") {
        Some(named) => {
            let end = directive_at(named).unwrap_or(named.len());
            (Some(&named[..end]), &named[end..])
        }
        None => (None, rest),
    };
    let directive = match tail {
        "" => None,
        tail => Some(TAP_DIRECTIVE.captures(tail)?.get(1)?.as_str()),
    };
    Some(TapResult { failed: line.starts_with("not "), name, directive })
}

/// TAP escapes `#` and `\` in names.
fn unescape(name: &str) -> String {
    // Every test's `# Subtest:` line comes here; few names hold an escape.
    if !name.contains('\\') {
        return name.to_string();
    }
    name.replace("\\#", "#").replace("\\\\", "\\")
}

#[cfg(test)]
mod tests {
    use super::{TapResult, tap_result};
    use crate::parse::tests::{errors, parse};
    use regex::Regex;

    #[test]
    fn tap_results_read_as_the_one_regex_did() {
        let whole = Regex::new(r"^(?P<not>not )?ok \d+(?: - (?P<name>.*?))?(?: # (?P<directive>\w+).*)?$").unwrap();
        for line in [
            "ok 1 - adds",
            "not ok 2 - subtracts",
            "ok 3 - later # SKIP",
            "not ok 4 - flaky # TODO fix the clock",
            "ok 5",
            "ok 6 # skip no network",
            "ok 7 - ",
            "ok 8 - a # ! b # Skip c",
            "ok 9 - a \\# SKIP escaped # todo",
            "ok 10 -",
            "ok 11 foo",
            "ok 12abc",
            "not ok 13 - \u{e9}t\u{e9} # \u{e9}t\u{e9}",
            "ok \u{663} - arabic digit",
            "ok 14 -  # SKIP",
            "ok 15 # ",
            "ok x",
        ] {
            let expected = whole.captures(line).map(|c| TapResult {
                failed: c.name("not").is_some(),
                name: c.name("name").map(|m| m.as_str()),
                directive: c.name("directive").map(|m| m.as_str()),
            });
            assert_eq!(tap_result(line), expected, "{line}");
        }
    }

    const TAP: &str = "TAP version 13\n\
# Subtest: math\n\
\x20   # Subtest: adds\n\
\x20   ok 1 - adds\n\
\x20     ---\n\
\x20     duration_ms: 0.5\n\
\x20     ...\n\
\x20   # Subtest: subtracts\n\
\x20   not ok 2 - subtracts\n\
\x20     ---\n\
\x20     duration_ms: 0.7\n\
\x20     location: '/srv/m/test/math.test.js:8:3'\n\
\x20     failureType: 'testCodeFailure'\n\
\x20     error: |-\n\
\x20       Expected values to be strictly equal:\n\
\x20       \n\
\x20       3 !== -3\n\
\x20     code: 'ERR_ASSERTION'\n\
\x20     stack: |-\n\
\x20       TestContext.<anonymous> (file:///srv/m/test/math.test.js:10:12)\n\
\x20       Test.runInAsyncScope (node:async_hooks:206:9)\n\
\x20     ...\n\
\x20   # Subtest: later\n\
\x20   ok 3 - later # SKIP\n\
\x20   1..3\n\
not ok 1 - math\n\
\x20 ---\n\
\x20 duration_ms: 2\n\
\x20 location: '/srv/m/test/math.test.js:3:1'\n\
\x20 failureType: 'subtestsFailed'\n\
\x20 error: '1 subtest failed'\n\
\x20 code: 'ERR_TEST_FAILURE'\n\
\x20 ...\n\
1..1\n\
# tests 3\n\
# suites 1\n\
# pass 1\n\
# fail 1\n\
# cancelled 0\n\
# skipped 1\n\
# todo 0\n\
# duration_ms 50\n";

    #[test]
    fn tap_failures_without_the_enclosing_describe() {
        let result = parse(TAP, 1);
        let errs = errors(&result);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(errs[0].test.as_deref(), Some("math > subtracts"));
        assert_eq!((errs[0].file.as_deref(), errs[0].line), (Some("/srv/m/test/math.test.js"), Some(10)));
        assert_eq!(errs[0].code.as_deref(), Some("ERR_ASSERTION"));
        assert_eq!(errs[0].message, "Expected values to be strictly equal:");
        let s = result.summary.expect("summary");
        assert_eq!((s.passed, s.failed, s.skipped, s.total), (1, 1, 1, 3));
    }

    #[test]
    fn spec_reporter_with_repeated_failures() {
        let log = "\u{25b6} math\n\
\x20 \u{2714} adds (0.5ms)\n\
\x20 \u{2716} subtracts (0.8ms)\n\
\x20   AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:\n\
\x20   \n\
\x20       at TestContext.<anonymous> (file:///srv/m/test/math.test.js:10:12)\n\
\x20       at Test.runInAsyncScope (node:async_hooks:206:9) {\n\
\x20     code: 'ERR_ASSERTION',\n\
\x20   }\n\
\n\
\u{25b6} math (2ms)\n\
\u{2139} tests 2\n\
\u{2139} suites 1\n\
\u{2139} pass 1\n\
\u{2139} fail 1\n\
\u{2139} cancelled 0\n\
\u{2139} skipped 0\n\
\u{2139} todo 0\n\
\u{2139} duration_ms 40\n\
\n\
\u{2716} failing tests:\n\
\n\
\u{2716} subtracts (0.8ms)\n\
\x20 AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:\n";
        let result = parse(log, 1);
        let errs = errors(&result);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(errs[0].test.as_deref(), Some("math > subtracts"));
        assert_eq!(errs[0].line, Some(10));
        assert_eq!(result.failed_tests, ["math > subtracts"]);
        assert_eq!(result.summary.map(|s| s.total), Some(2));
    }
}
