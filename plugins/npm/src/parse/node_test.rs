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
//!
//! Every test is named for reports: TAP's `ok`/`not ok` with `duration_ms` from its YAML block,
//! spec's `✔ name (0.5ms)` and `﹣ name (0.1ms) # SKIP`. Node counts a test that has subtests
//! as a test, and a `describe` (TAP `type: 'suite'`, spec `▶ name (2ms)`) as a suite, not a test,
//! so only the first is named; a parent that failed only through its children is named as its
//! failure is, not at all. A name is qualified by its enclosing tests and suites, as a failure
//! is. The names are kept only when the run's counts agree with them: output broken by a test's
//! own lines names none rather than some.

use super::frames;
use crate::parse::sink::Sink;
use buildvise_plugin_api::occurrences;
use buildvise_plugin_api::{Diagnostic, TestCase, TestOutcome, TestSummary, join_test_name, millis_to_us};
use buildvise_plugin_api::{Recogniser, TestCases, Text, Wants};
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
    Regex::new(r"^(?P<name>.*) \((?P<ms>\d+(?:\.\d+)?)ms\)(?: # (?P<directive>\w+).*)?$").expect("valid regex")
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
    /// TAP: the last result, until its YAML block (duration, type) ends.
    result: Option<Named>,
    /// The tests named since the last counts, waiting for them.
    named: Vec<TestCase>,
}

/// A TAP result being read.
struct Named {
    test: TestCase,
    indent: usize,
    /// A `describe`, which Node does not count as a test.
    suite: bool,
    /// Failed only through its subtests, which are named themselves.
    parent_only: bool,
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
        self.failure.is_some() || self.result.is_some()
    }

    /// How TAP's and spec's lines start: comments (`# Subtest:`, `# tests 3`), results, the version,
    /// and spec's suites, failures and counts.
    fn wants(&self) -> Wants {
        Wants::starts_unindented(&[
            "#",
            "ok ",
            "not ok ",
            "TAP version 1",
            "\u{25b6} ",
            "\u{2716} ",
            "\u{2139} ",
            "\u{2714} ",
            "\u{fe63} ",
        ])
    }

    fn feed(&mut self, ln: &Text<'_>, sink: &mut Sink) -> bool {
        let trimmed = ln.unindented;
        let indent = ln.text.len() - trimmed.len();
        let in_yaml = self.result_line(trimmed, indent);
        if self.failure.is_some() && self.failure_line(trimmed, indent, ln.number, sink) {
            return true;
        }
        if in_yaml {
            return true;
        }
        let Some(first) = trimmed.chars().next() else { return false };
        match first {
            '#' | 'o' | 'n' | 'T' => self.tap_line(trimmed, indent, ln.number, sink),
            '\u{25b6}' | '\u{2716}' | '\u{2139}' | '\u{2714}' | '\u{fe63}' => {
                self.spec_line(trimmed, indent, ln.number)
            }
            _ => false,
        }
    }

    fn flush(&mut self, sink: &mut Sink) {
        self.emit(sink);
        self.end_result();
        self.stack.clear();
        self.repeats = false;
        let named = std::mem::take(&mut self.named);
        if let [Some(tests), pass, fail, cancelled, skipped, todo] = std::mem::take(&mut self.counts) {
            let get = |n: Option<u64>| n.unwrap_or(0);
            let (failed, skipped) = (get(fail).saturating_add(get(cancelled)), get(skipped).saturating_add(get(todo)));
            sink.add_summary(TestSummary::new(get(pass), failed, skipped, tests));
            let count = |outcome| named.iter().filter(|t: &&TestCase| t.outcome == outcome).count() as u64;
            if count(TestOutcome::Passed) == get(pass) && count(TestOutcome::Skipped) == skipped {
                sink.name_tests(named);
            }
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
        self.end_result();
        let excused =
            result.directive.is_some_and(|d| d.eq_ignore_ascii_case("TODO") || d.eq_ignore_ascii_case("SKIP"));
        let mut path: Vec<String> = self.stack.iter().filter(|(i, _)| *i < indent).map(|(_, n)| n.clone()).collect();
        path.push(result.name.map_or_else(String::new, unescape));
        let name = join_test_name(&path);
        if result.failed && !excused {
            self.failure = Some(Failure::new(name.clone(), indent, true, number));
        }
        let outcome = match (excused, result.failed) {
            (true, _) => TestOutcome::Skipped,
            (false, true) => TestOutcome::Failed,
            (false, false) => TestOutcome::Passed,
        };
        let test = TestCase::new(name, outcome, None);
        self.result = Some(Named { test, indent, suite: false, parent_only: false });
        self.stack.retain(|(i, _)| *i < indent);
        true
    }

    /// A line while a TAP result is open: its YAML block's `duration_ms`, `type` and
    /// `failureType` are read; a line no deeper than the result ends it. True for a line of
    /// the block.
    fn result_line(&mut self, trimmed: &str, indent: usize) -> bool {
        let Some(result) = &mut self.result else { return false };
        // A blank line is no one's, and leaves the block open.
        if trimmed.is_empty() {
            return false;
        }
        if indent <= result.indent {
            self.end_result();
            return false;
        }
        if indent == result.indent + 2
            && let Some((key, value)) = trimmed.split_once(": ")
        {
            match key {
                "duration_ms" => result.test.duration_us = millis_to_us(value.trim()),
                "type" => result.suite = unquote(value) == "suite",
                "failureType" => result.parent_only = unquote(value) == "subtestsFailed",
                _ => {}
            }
        }
        true
    }

    /// Keeps the open TAP result's test, unless it is no test of its own.
    fn end_result(&mut self) {
        let Some(result) = self.result.take() else { return };
        let parent_failure = result.parent_only && result.test.outcome == TestOutcome::Failed;
        if !result.suite && !parent_failure {
            self.push_named(result.test);
        }
    }

    /// Keeps a named test, bounded as `TestCases` is: past the cap the counts disagree with the
    /// names, which are then dropped (failures are still reported by their diagnostics).
    fn push_named(&mut self, test: TestCase) {
        if self.named.len() < TestCases::MAX {
            self.named.push(test);
        }
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
        let (failed, rest) = match trimmed.strip_prefix("\u{2716} ") {
            Some(rest) => (true, rest),
            None => match trimmed.strip_prefix("\u{2714} ").or_else(|| trimmed.strip_prefix("\u{fe63} ")) {
                Some(rest) => (false, rest),
                None => return false,
            },
        };
        let Some(caps) = SPEC_RESULT.captures(rest) else { return false };
        if self.repeats {
            return true;
        }
        let name = &caps["name"];
        let duration = millis_to_us(&caps["ms"]);
        let mut path: Vec<&str> = self.stack.iter().filter(|(i, _)| *i < indent).map(|(_, n)| n.as_str()).collect();
        path.push(name);
        let test = join_test_name(&path);
        let excused = caps.name("directive").is_some_and(|d| {
            let d = d.as_str();
            d.eq_ignore_ascii_case("todo") || d.eq_ignore_ascii_case("skip")
        });
        // The end of a test with subtests, which printed `▶ name` before them.
        let parent = self.stack.last().is_some_and(|(i, n)| *i == indent && n == name);
        if parent {
            self.stack.pop();
        }
        if excused || !failed {
            let outcome = if excused { TestOutcome::Skipped } else { TestOutcome::Passed };
            self.push_named(TestCase::new(test, outcome, duration));
            return true;
        }
        if !parent {
            self.push_named(TestCase::new(test.clone(), TestOutcome::Failed, duration));
            self.failure = Some(Failure::new(test, indent, false, number));
        }
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
    use crate::parse::tests::{errors, named, parse};
    use buildvise_plugin_api::TestOutcome::{Failed, Passed, Skipped};
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
        assert_eq!(result.summary.as_ref().map(|s| s.total), Some(2));
        assert_eq!(named(&result), [("math > adds", Passed, Some(500)), ("math > subtracts", Failed, Some(800))]);
    }

    #[test]
    fn tap_names_each_test_with_its_duration_but_not_the_describe_that_failed_through_it() {
        let result = parse(TAP, 1);
        assert_eq!(
            named(&result),
            [
                ("math > adds", Passed, Some(500)),
                ("math > subtracts", Failed, Some(700)),
                ("math > later", Skipped, None)
            ]
        );
    }

    /// A passing describe and a test with a subtest, as Node 20 printed them: the describe is
    /// no test, the test with a subtest is one (`# tests 3`).
    const NESTED_TAP: &str = "TAP version 13\n\
# Subtest: cart\n\
\x20   # Subtest: starts empty\n\
\x20   ok 1 - starts empty\n\
\x20     ---\n\
\x20     duration_ms: 0.995991\n\
\x20     ...\n\
\x20   1..1\n\
ok 1 - cart\n\
\x20 ---\n\
\x20 duration_ms: 4.152948\n\
\x20 type: 'suite'\n\
\x20 ...\n\
# Subtest: checkout\n\
\x20   # Subtest: charges the card\n\
\x20   ok 1 - charges the card\n\
\x20     ---\n\
\x20     duration_ms: 0.226497\n\
\x20     ...\n\
\x20   1..1\n\
ok 2 - checkout\n\
\x20 ---\n\
\x20 duration_ms: 0.571831\n\
\x20 ...\n\
1..2\n\
# tests 3\n\
# suites 1\n\
# pass 3\n\
# fail 0\n\
# cancelled 0\n\
# skipped 0\n\
# todo 0\n\
# duration_ms 138.343213\n";

    #[test]
    fn tap_names_a_test_with_subtests_but_not_a_describe() {
        let result = parse(NESTED_TAP, 0);
        assert_eq!(
            named(&result),
            [
                ("cart > starts empty", Passed, Some(995)),
                ("checkout > charges the card", Passed, Some(226)),
                ("checkout", Passed, Some(571)),
            ]
        );
        assert_eq!(result.summary.map(|s| s.passed), Some(3));
    }

    #[test]
    fn spec_names_passed_and_skipped_tests_under_their_suites() {
        let log = "\u{25b6} cart\n\
\x20 \u{2714} starts empty (1.622453ms)\n\
\x20 \u{fe63} ships abroad (0.144154ms) # SKIP\n\
\u{25b6} cart (9.375968ms)\n\
\u{25b6} checkout\n\
\x20 \u{2714} charges the card (0.247999ms)\n\
\u{2714} checkout (0.620683ms)\n\
\u{2139} tests 4\n\
\u{2139} suites 1\n\
\u{2139} pass 3\n\
\u{2139} fail 0\n\
\u{2139} cancelled 0\n\
\u{2139} skipped 1\n\
\u{2139} todo 0\n\
\u{2139} duration_ms 198.568717\n";
        let result = parse(log, 0);
        assert_eq!(
            named(&result),
            [
                ("cart > starts empty", Passed, Some(1622)),
                ("cart > ships abroad", Skipped, Some(144)),
                ("checkout > charges the card", Passed, Some(247)),
                ("checkout", Passed, Some(620)),
            ]
        );
    }

    #[test]
    fn results_the_counts_disagree_with_name_no_test() {
        let short = NESTED_TAP.replace("# pass 3", "# pass 4");
        assert!(parse(&short, 0).tests.is_empty());
        let uncounted = NESTED_TAP.split("# tests").next().unwrap_or_default().to_string();
        assert!(parse(&uncounted, 0).tests.is_empty());
    }
}
