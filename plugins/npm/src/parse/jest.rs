//! Jest 29 and 30 (also with ts-jest and babel-jest): the report Jest writes to stderr.
//!
//! `FAIL path` opens a test file; each failure is a block under `  ● A › B › test` with the
//! message, a code frame and `at fn (file:line:col)` frames (Jest 30 adds a `Cause:` block for
//! timeouts whose frame points at the `test(` call). `● Test suite failed to run` is a file that
//! did not load: ts-jest prints the type errors inside it tsc-style (the tsc recogniser reports
//! those), babel a `SyntaxError: /abs/file: msg (line:col)` with a 0-based column. With many
//! suites, Jest prints every block again under "Summary of all failing tests"; the sink drops
//! the repeats. A deep-equality diff of one line each way joins the headline ([`Diff`]), and
//! `Test Suites: 1 failed, 1 of 5 total` says `--bail` left test files unrun.
//!
//! Jest 29 puts babel's `SyntaxError` under `Details:` of "Jest encountered an unexpected
//! token", after frames of the file that imported the broken one. The transformers' own warnings
//! come before the report, unindented: ts-jest's `ts-jest[module] (WARN) message` and babel's
//! `WARNING (@babel/preset-env): message`. Under `--coverage` ts-jest without source maps gives
//! stack lines of the instrumented code, past the end of a short file: such a line is dropped.
//!
//! With `--verbose`, or for a single test file, Jest prints each file's tests under its suite
//! line: describe titles indented two spaces per level, and `✓ title (5 ms)`, `✕ title`,
//! `○ skipped title`, `✎ todo title` (the time only when Jest measured a millisecond or more).
//! A test is named with its describe titles joined as its failure's `●` header names it
//! (`Suite > nested > title`). Names are kept only when the `Tests:` line counts as many passed
//! and skipped tests as the tree named, so a tree broken by other output names none rather than
//! some; and only when no JSON report (the one the plan asks for) named the tests already.

use super::{bailed, counts_of, frames};
use crate::parse::diff::{self, Diff};
use crate::parse::sink::Sink;
use buildvise_plugin_api::{Diagnostic, TestCase, TestCases, TestOutcome, TestSummary, join_test_name, millis_to_us};
use buildvise_plugin_api::{Recogniser, Text, Wants};
use regex::Regex;
use std::sync::LazyLock;

static BABEL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^SyntaxError: (?P<file>.+?): (?P<msg>.*) \((?P<line>\d+):(?P<col>\d+)\)$").expect("valid regex")
});

/// A test of the verbose tree: its mark, title, and milliseconds.
static TREE_TEST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\x{2713}|\x{2715}|\x{25cb} skipped|\x{270e} todo) (.+?)(?: \((\d+) ms\))?$").expect("valid regex")
});

const MAX_NOTES: usize = 3;

/// ts-jest's warning lines: `ts-jest[ts-jest-transformer] (WARN) Define ...`.
const TS_JEST: &str = "ts-jest[";
/// Babel's warnings about its configuration: `WARNING (@babel/preset-env): We noticed ...`.
const BABEL_WARNING: &str = "WARNING (@babel/";

#[derive(Default)]
pub struct Jest {
    /// The test file of the last `FAIL` line.
    suite_file: Option<String>,
    block: Option<Block>,
    /// Reading the tree under the last suite line.
    in_tree: bool,
    /// The describe titles above the tree line being read: (indentation, title).
    describes: Vec<(usize, String)>,
    /// The tests the trees named since the last `Tests:` line, waiting for its counts.
    tree: Vec<TestCase>,
    /// The tests of trees whose counts matched, named when the output ends.
    named: Vec<TestCase>,
}

struct Block {
    /// None for "Test suite failed to run".
    test: Option<String>,
    suite_file: Option<String>,
    start: u64,
    end: u64,
    headline: Option<String>,
    notes: Vec<String>,
    frame: Option<frames::Frame>,
    /// The sink's size when the block opened: grown means ts-jest's type errors were reported.
    reported_before: usize,
    diff: Diff,
}

/// A failure's header: `  ● A › B › test`.
const BULLET: &str = "  \u{25cf} ";
const SUMMARY: &str = "Summary of all failing tests";

impl Recogniser<Sink> for Jest {
    /// A tree's describe titles are any indented text: it reads every line until the tree ends.
    fn is_open(&self) -> bool {
        self.block.is_some() || self.in_tree
    }

    /// A failure's header, the bullet at its column (`feed` leaves one that names nothing to the
    /// others), and the lines read outside a block, after the indentation: suite lines, counts and
    /// the repeats' heading.
    fn wants(&self) -> Wants {
        Wants::starts(&[BULLET, TS_JEST, BABEL_WARNING]).or_unindented(&[
            "FAIL ",
            "PASS ",
            "Tests:",
            "Test Suites:",
            SUMMARY,
        ])
    }

    fn feed(&mut self, ln: &Text<'_>, sink: &mut Sink) -> bool {
        let text = ln.text;
        let trimmed = ln.unindented;
        if let Some(title) = text.strip_prefix(BULLET).map(str::trim)
            // A bullet that names nothing is some program's output, not a Jest failure.
            && !title.is_empty()
        {
            self.flush(sink);
            self.in_tree = false;
            if title == "Console" {
                return true;
            }
            let test = (title != "Test suite failed to run")
                .then(|| join_test_name(&title.split(" \u{203a} ").collect::<Vec<_>>()));
            self.block = Some(Block {
                test,
                suite_file: self.suite_file.clone(),
                start: ln.number,
                end: ln.number,
                headline: None,
                notes: Vec::new(),
                frame: None,
                reported_before: sink.count(),
                diff: Diff::default(),
            });
            return true;
        }
        if let Some(path) = trimmed.strip_prefix("FAIL ").or_else(|| trimmed.strip_prefix("PASS ")) {
            let path = path.trim();
            // Vitest's `FAIL  file > test` and `FAIL  file [ file ]` are not Jest's.
            if names_a_vitest_test(path) || path.ends_with(']') || path.is_empty() {
                return false;
            }
            self.flush(sink);
            // Searched for only when the line ends as a duration does: most suite lines have none.
            let duration = if path.ends_with(')') { duration_at(path) } else { None };
            let path = duration.map_or(path, |i| &path[..i]);
            // One buffer for the run: a passing suite's line is no reason to allocate.
            let suite_file = self.suite_file.get_or_insert_with(String::new);
            suite_file.clear();
            suite_file.push_str(path);
            self.in_tree = true;
            self.describes.clear();
            return true;
        }
        if self.in_tree {
            // The tree is indented and ends at a blank or unindented line.
            if ln.unindented.len() < text.len() && !ln.trimmed.is_empty() {
                return self.tree_line(ln);
            }
            self.in_tree = false;
        }
        if let Some(counts) = trimmed.strip_prefix("Tests:") {
            self.flush(sink);
            let words = ["passed", "failed", "skipped", "todo", "pending", "total"];
            let [passed, failed, skipped, todo, pending, total] = counts_of(counts, ',', words);
            let skipped = skipped.saturating_add(todo).saturating_add(pending);
            sink.add_summary(TestSummary::new(passed, failed, skipped, total));
            let tree = std::mem::take(&mut self.tree);
            let count = |outcome| tree.iter().filter(|t| t.outcome == outcome).count() as u64;
            if count(TestOutcome::Passed) == passed && count(TestOutcome::Skipped) == skipped {
                self.named.extend(tree);
            }
            return true;
        }
        if let Some(counts) = trimmed.strip_prefix("Test Suites:") {
            self.flush(sink);
            suites_not_run(counts, sink);
            return true;
        }
        if trimmed.starts_with(SUMMARY) {
            self.flush(sink);
            return true;
        }
        if text.starts_with(TS_JEST) || text.starts_with(BABEL_WARNING) {
            return transformer_warning(text.trim_end(), ln.number, sink);
        }
        let Some(block) = &mut self.block else { return false };
        block.diff.feed(text);
        let line = ln.trimmed;
        if line.is_empty() {
            return true;
        }
        block.end = ln.number;
        // Babel's error opens a suite's block, or (Jest 29) follows `Details:` below Jest's own
        // headline and frames of the file that imported the broken one.
        if block.test.is_none()
            && line.starts_with("SyntaxError: ")
            && let Some(caps) = BABEL.captures(line)
        {
            let number = |name: &str| caps[name].parse::<u32>().ok();
            block.headline = Some(format!("SyntaxError: {}", &caps["msg"]));
            // Babel counts columns from 0.
            block.frame = number("line").map(|l| frames::Frame {
                file: caps["file"].to_string(),
                line: l,
                column: number("col").and_then(|c| c.checked_add(1)),
            });
        } else if block.headline.is_none() {
            block.headline = Some(line.to_string());
        } else if block.frame.is_none() && line.starts_with("at ") {
            block.frame = frames::project_frame(line);
        } else if block.notes.len() < MAX_NOTES && (line.starts_with("Expected") || line.starts_with("Received")) {
            block.notes.push(line.to_string());
        }
        true
    }

    fn flush(&mut self, sink: &mut Sink) {
        let Some(block) = self.block.take() else { return };
        if block.test.is_none() && sink.count() > block.reported_before {
            return;
        }
        let headline = block.headline.unwrap_or_else(|| "test failed".into());
        let mut headline = diff::without_equality_remark(&headline).to_string();
        if let Some(gist) = block.diff.gist() {
            headline = format!("{headline} {gist}");
        }
        let mut diagnostic = Diagnostic::error(headline);
        diagnostic.notes = block.notes;
        // A line past the file's end says nothing true: the file alone is kept.
        let past_end = block.frame.as_ref().and_then(|f| lines_if_fewer(sink.cwd(), &f.file, f.line));
        if let (Some(lines), Some(f)) = (past_end, &block.frame) {
            diagnostic.notes.push(format!(
                "the stack says line {} of {}, which has {lines} lines: --coverage without a source map shifts lines; rerun without it for the real line",
                f.line, f.file
            ));
        }
        match (block.frame, block.suite_file) {
            (Some(frame), _) if past_end.is_some() => diagnostic = diagnostic.with_location(frame.file, None, None),
            (Some(frame), _) => diagnostic = diagnostic.with_location(frame.file, Some(frame.line), frame.column),
            (None, Some(file)) if block.test.is_none() => diagnostic = diagnostic.with_location(file, None, None),
            _ => {}
        }
        if let Some(test) = &block.test {
            sink.failed_test(test);
            diagnostic = diagnostic.with_test(test);
        }
        sink.push(diagnostic.with_log_range(block.start, block.end));
    }

    /// The output ended and the JSON reports were applied: the trees name the tests when no
    /// report did, a failure only as its `●` block named it.
    fn finish(&mut self, sink: &mut Sink) {
        self.flush(sink);
        self.in_tree = false;
        self.tree.clear();
        let named = std::mem::take(&mut self.named);
        if sink.report_named_tests {
            return;
        }
        sink.name_tests(named);
    }
}

impl Jest {
    /// A line of the tree: a describe's title, or a test under the describes indented less than
    /// it. Only a test is taken: a describe title may be some other program's output.
    fn tree_line(&mut self, ln: &Text<'_>) -> bool {
        let indent = ln.text.len() - ln.unindented.len();
        self.describes.retain(|(i, _)| *i < indent);
        // Most indented lines are no test: the regex only runs on lines that start like one.
        let marked = ln.unindented.starts_with(['\u{2713}', '\u{2715}', '\u{25cb}', '\u{270e}']);
        let Some(caps) = marked.then(|| TREE_TEST.captures(ln.trimmed)).flatten() else {
            self.describes.push((indent, ln.trimmed.to_string()));
            return false;
        };
        let outcome = match &caps[1] {
            "\u{2713}" => TestOutcome::Passed,
            "\u{2715}" => TestOutcome::Failed,
            _ => TestOutcome::Skipped,
        };
        // Bounded as `TestCases` is: past the cap the counts disagree with the tree, which then
        // names nothing (failures are still reported by their blocks).
        if self.tree.len() < TestCases::MAX {
            let mut path: Vec<&str> = self.describes.iter().map(|(_, title)| title.as_str()).collect();
            path.push(&caps[2]);
            let duration = caps.get(3).and_then(|ms| millis_to_us(ms.as_str()));
            self.tree.push(TestCase::new(join_test_name(&path), outcome, duration));
        }
        true
    }
}

/// A warning a transformer prints before Jest's report: ts-jest's `ts-jest[ts-jest-transformer]
/// (WARN) Define ...` and babel's `WARNING (@babel/preset-env): We noticed ...`. The lines after
/// them only show the fix (a config snippet, a link): the first names the problem. Each worker
/// prints ts-jest's again; the sink keeps one.
fn transformer_warning(text: &str, number: u64, sink: &mut Sink) -> bool {
    let (source, message) = if let Some(rest) = text.strip_prefix("WARNING (") {
        let Some((package, message)) = rest.split_once("): ") else { return false };
        (package, message)
    } else {
        let Some((source, message)) = text.split_once("] (WARN) ") else { return false };
        (source.trim_start_matches("ts-jest["), message)
    };
    let tool = if source.starts_with('@') { source } else { "ts-jest" };
    sink.push(Diagnostic::warning(format!("{tool}: {}", message.trim())).with_log_range(number, number));
    true
}

/// How many lines `file` has, when it can be read from `cwd` and has fewer than `line`.
fn lines_if_fewer(cwd: &str, file: &str, line: u32) -> Option<usize> {
    let path = std::path::Path::new(cwd).join(file);
    let text = std::fs::read(path).ok()?;
    let lines = text.split(|&b| b == b'\n').count() - usize::from(text.ends_with(b"\n"));
    (lines < line as usize).then_some(lines)
}

/// Whether a suite line's path holds ` > `, as Vitest's `FAIL  file > test` does. By its `>`,
/// which few paths hold: a suite line comes with every test file, and a substring searcher costs
/// more than the line.
fn names_a_vitest_test(path: &str) -> bool {
    let bytes = path.as_bytes();
    memchr::memchr_iter(b'>', bytes).any(|at| at > 0 && bytes[at - 1] == b' ' && bytes.get(at + 1) == Some(&b' '))
}

/// Where the last ` (` in a suite line's path is, which starts its duration (`src/a.test.js (5.1 s)`).
/// A byte at a time from the end: the duration is a few bytes long, and a searcher costs more.
fn duration_at(path: &str) -> Option<usize> {
    let bytes = path.as_bytes();
    let mut end = bytes.len();
    while let Some(open) = bytes[..end].iter().rposition(|&b| b == b'(') {
        if open > 0 && bytes[open - 1] == b' ' {
            return Some(open - 1);
        }
        end = open;
    }
    None
}

/// `1 failed, 1 of 5 total`: Jest stopped (`--bail`) before running every test file; a complete
/// run says `5 total`.
fn suites_not_run(counts: &str, sink: &mut Sink) {
    let (parts, last) = counts.rsplit_once(',').unwrap_or(("", counts));
    let Some(ran_of_total) = last.trim().strip_suffix(" total") else { return };
    // A complete run says `N total`: no `of` to look for, and looking costs a searcher.
    if !ran_of_total.contains(' ') {
        return;
    }
    let Some((ran, total)) = ran_of_total.split_once(" of ") else { return };
    let (Ok(ran), Ok(total)) = (ran.trim().parse::<u64>(), total.trim().parse::<u64>()) else { return };
    if ran >= total {
        return;
    }
    let [failed] = counts_of(parts, ',', ["failed"]);
    sink.stopped_early(bailed(
        failed,
        ("failed test file", "failed test files"),
        total - ran,
        ("test file", "test files"),
    ));
}

#[cfg(test)]
mod tests {
    use crate::parse::tests::{errors, named, parse, parse_in, warnings};
    use buildvise_plugin_api::TestOutcome;

    const JEST30: &str = "\n> kit@1.0.0 test\n> jest\n\n\
FAIL test/users.test.js\n\
\x20 \u{25cf} users \u{203a} loads within the deadline\n\
\n\
\x20   thrown: \"Exceeded timeout of 200 ms for a test.\n\
\x20   Add a timeout value to this test to increase the timeout.\"\n\
\n\
\x20     at _getError (node_modules/jest-circus/build/jestAdapterInit.js:1985:12)\n\
\x20         at Array.map (<anonymous>)\n\
\n\
\x20   Cause:\n\
\x20       > 13 |   test('loads within the deadline', async () => {\n\
\x20         at test (test/users.test.js:13:3)\n\
\x20         at Object.describe (test/users.test.js:3:1)\n\
\n\
FAIL test/strings.test.js\n\
\x20 \u{25cf} strings \u{203a} csv \u{203a} rejects a bad quote\n\
\n\
\x20   SyntaxError: Unterminated quoted field\n\
\n\
\x20   > 31 |     throw new SyntaxError(`Unterminated`);\n\
\n\
\x20     at parseCsvLine (src/strings.js:31:11)\n\
\x20     at Object.parseCsvLine (test/strings.test.js:24:14)\n\
\n\
PASS test/cap.test.js\n\
\n\
Test Suites: 2 failed, 1 passed, 3 total\n\
Tests:       2 failed, 1 skipped, 2 todo, 7 passed, 12 total\n\
Snapshots:   0 total\n\
Time:        0.982 s, estimated 2 s\n\
Ran all test suites.\n";

    #[test]
    fn a_vitest_test_name_is_seen_wherever_its_arrow_falls() {
        for len in 0..40 {
            let path = "s".repeat(len);
            assert!(!super::names_a_vitest_test(&path));
            for at in 0..len {
                for arrow in [" > ", ">", "> ", " >", " >> "] {
                    let named = format!("{}{arrow}{}", &path[..at], &path[at..]);
                    assert_eq!(super::names_a_vitest_test(&named), named.contains(" > "), "{named:?}");
                }
            }
        }
    }

    #[test]
    fn bullets_that_name_no_test_are_not_failures() {
        let log = "PASS test/a.test.js\n".to_string()
            + &"\x20 \u{25cf} \n".repeat(10_000)
            + "Tests:       1 passed, 1 total\n";
        let result = parse(&log, 0);
        assert_eq!(errors(&result).len(), 0);
        assert_eq!(result.summary.map(|s| (s.passed, s.failed)), Some((1, 0)));
    }

    #[test]
    fn failures_locate_at_the_first_project_frame() {
        let result = parse(JEST30, 1);
        let errs = errors(&result);
        assert_eq!(errs.len(), 2);
        assert_eq!(errs[0].test.as_deref(), Some("users > loads within the deadline"));
        assert_eq!(
            (errs[0].file.as_deref(), errs[0].line, errs[0].column),
            (Some("test/users.test.js"), Some(13), Some(3))
        );
        assert!(errs[0].message.starts_with("thrown: \"Exceeded timeout"));
        assert_eq!(errs[1].test.as_deref(), Some("strings > csv > rejects a bad quote"));
        assert_eq!((errs[1].file.as_deref(), errs[1].line), (Some("src/strings.js"), Some(31)));
        let summary = result.summary.expect("summary");
        assert_eq!((summary.passed, summary.failed, summary.skipped, summary.total), (7, 2, 3, 12));
        assert_eq!(result.failed_tests.len(), 2);
    }

    #[test]
    fn bail_leaves_test_files_unrun() {
        let log = "FAIL test/totals.test.js\n\
\x20 \u{25cf} checkout total\n\
\n\
\x20   expect(received).toBe(expected) // Object.is equality\n\
\n\
\x20     at Object.toBe (test/totals.test.js:6:35)\n\
\n\
Test Suites: 1 failed, 1 of 5 total\n\
Tests:       1 failed, 1 passed, 2 total\n";
        let result = parse(log, 1);
        assert_eq!(
            result.stopped_early.as_deref(),
            Some("bailed after 1 failed test file; 4 test files not run; rerun without --bail")
        );
        assert_eq!(result.summary.map(|s| (s.failed, s.total)), Some((1, 2)));
        assert_eq!(parse(JEST30, 1).stopped_early, None);
        // With workers, files that passed before the failure count too.
        let log = "Test Suites: 1 failed, 1 passed, 2 of 5 total\nTests:       1 failed, 3 passed, 4 total\n";
        let said = parse(log, 1).stopped_early.unwrap_or_default();
        assert!(said.starts_with("bailed after 1 failed test file; 3 test files not run"), "{said}");
    }

    #[test]
    fn one_line_deep_equality_diff_joins_the_message() {
        let log = "FAIL test/d.test.js\n\
\x20 \u{25cf} one prop\n\
\n\
\x20   expect(received).toEqual(expected) // deep equality\n\
\n\
\x20   - Expected  - 1\n\
\x20   + Received  + 1\n\
\n\
\x20     Object {\n\
\x20       \"amount\": 16,\n\
\x20   -   \"qty\": 4,\n\
\x20   +   \"qty\": 3,\n\
\x20       \"sku\": \"A-1\",\n\
\x20     }\n\
\n\
\x20     1 | test('one prop', () => {\n\
\n\
\x20     at Object.toEqual (test/d.test.js:2:60)\n\
\n\
Tests:       1 failed, 1 total\n";
        let result = parse(log, 1);
        let errs = errors(&result);
        assert_eq!(errs[0].message, "expect(received).toEqual(expected) (- \"qty\": 4, + \"qty\": 3)");
        assert_eq!((errs[0].line, errs[0].column), (Some(2), Some(60)));
    }

    #[test]
    fn summary_of_all_failing_tests_counts_once() {
        let block = "\x20 \u{25cf} calc \u{203a} adds\n\n\x20   expect(received).toBe(expected)\n\n\x20     at Object.toBe (test/calc.test.js:9:32)\n\n";
        let log = format!(
            "FAIL test/calc.test.js\n{block}Summary of all failing tests\nFAIL test/calc.test.js\n{block}\nTests:       1 failed, 1 total\n"
        );
        let result = parse(&log, 1);
        assert_eq!(errors(&result).len(), 1);
        assert_eq!(result.failed_tests, ["calc > adds"]);
    }

    #[test]
    fn ts_jest_type_error_is_reported_once_by_tsc() {
        let log = "FAIL test/report.test.ts\n\
\x20 \u{25cf} Test suite failed to run\n\
\n\
\x20   \x1b[96mtest/report.test.ts\x1b[0m:\x1b[93m5\x1b[0m:\x1b[93m11\x1b[0m - \x1b[91merror\x1b[0m\x1b[90m TS2322: \x1b[0mType 'string' is not assignable to type 'number'.\n\
\n\
\x20   \x1b[7m5\x1b[0m     const n: number = summarize([]);\n\
\n\
Test Suites: 1 failed, 1 total\n\
Tests:       0 total\n";
        let result = parse(log, 1);
        let errs = errors(&result);
        assert_eq!(errs.len(), 1);
        assert_eq!((errs[0].code.as_deref(), errs[0].line, errs[0].test.as_deref()), (Some("TS2322"), Some(5), None));
        assert_eq!(result.summary.map(|s| s.total), Some(0));
    }

    /// Jest 29.4.3 with babel-jest 28 (luxon, `jest --coverage`): the SyntaxError under
    /// `Details:` is the broken file; the frame after it is the file that imported it.
    #[test]
    fn babel_syntax_error_under_details_locates_the_broken_file() {
        let log = "FAIL test/datetime/invalid.test.js\n\
\x20 \u{25cf} Test suite failed to run\n\
\n\
\x20   Jest encountered an unexpected token\n\
\n\
\x20   Details:\n\
\n\
\x20   SyntaxError: /tmp/luxon/src/impl/invalid.js: Unterminated template. (9:49)\n\
\n\
\x20     at constructor (node_modules/@babel/parser/src/parse-error.ts:81:19)\n\
\x20         at parser.next (<anonymous>)\n\
\x20     at Object.require (src/impl/conversions.js:11:1)\n\
\n\
Tests:       0 total\n";
        let result = parse(log, 1);
        let errs = errors(&result);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(errs[0].message, "SyntaxError: Unterminated template.");
        assert_eq!(
            (errs[0].file.as_deref(), errs[0].line, errs[0].column),
            (Some("/tmp/luxon/src/impl/invalid.js"), Some(9), Some(50))
        );
    }

    /// ts-jest 29.4.15 (class-validator's `globals` config) and @babel/preset-env 7.20
    /// (`useBuiltIns` without `corejs`): the first line of each is the warning.
    #[test]
    fn transformer_config_warnings_are_warnings() {
        let log = "ts-jest[ts-jest-transformer] (WARN) Define `ts-jest` config under `globals` is deprecated. Please do\n\
transform: {\n\
\x20   <transform_regex>: ['ts-jest', { /* ts-jest config goes here in Jest */ }],\n\
},\n\
WARNING (@babel/preset-env): We noticed you're using the `useBuiltIns` option without declaring a core-js version. Currently, we assume version 2.x when no version is passed.\n\
ts-jest[ts-jest-transformer] (WARN) Define `ts-jest` config under `globals` is deprecated. Please do\n\
PASS test/a.spec.ts\n\
Tests:       1 passed, 1 total\n";
        let result = parse(log, 0);
        let warns = warnings(&result);
        let said: Vec<&str> = warns.iter().map(|w| w.message.as_str()).collect();
        assert_eq!(said.len(), 2, "{said:?}");
        assert_eq!(said[0], "ts-jest: Define `ts-jest` config under `globals` is deprecated. Please do");
        assert!(
            said[1].starts_with("@babel/preset-env: We noticed you're using the `useBuiltIns` option"),
            "{}",
            said[1]
        );
        assert_eq!(warns[0].log_range.map(|r| (r.start, r.end)), Some((1, 1)));
        assert!(errors(&result).is_empty());
    }

    /// ts-jest 29.4.15 under `--coverage` with `sourceMap: false` (class-validator): the stack
    /// says line 312 of a 28-line file. A line inside the file is kept as printed.
    #[test]
    fn a_stack_line_past_the_file_s_end_is_not_reported() {
        let cwd = std::env::temp_dir().join(format!("buildvise-jest-past-end-{}", std::process::id()));
        std::fs::create_dir_all(cwd.join("src")).expect("temp dir");
        std::fs::write(cwd.join("src/IsOptional.ts"), "line\n".repeat(28)).expect("source");
        let log = "FAIL test/functional/validation-error.spec.ts\n\
\x20 \u{25cf} ValidationError \u{203a} should correctly log error message without ANSI escape codes\n\
\n\
\x20   TypeError: object[propertyName].trim is not a function\n\
\n\
\x20     at Array.args.constraints (src/IsOptional.ts:LINE:60)\n\
\x20     at Object.<anonymous> (test/functional/validation-error.spec.ts:64:50)\n\
\n\
Tests:       1 failed, 1 total\n";
        let result = parse_in(&log.replace("LINE", "312"), 1, &cwd.to_string_lossy());
        let err = errors(&result)[0].clone();
        assert_eq!((err.file.as_deref(), err.line, err.column), (Some("src/IsOptional.ts"), None, None));
        assert_eq!(
            err.notes,
            [
                "the stack says line 312 of src/IsOptional.ts, which has 28 lines: --coverage without a source map shifts lines; rerun without it for the real line"
            ]
        );
        let result = parse_in(&log.replace("LINE", "28"), 1, &cwd.to_string_lossy());
        assert_eq!((errors(&result)[0].line, errors(&result)[0].notes.len()), (Some(28), 0));
        // A file that cannot be read is taken at its word.
        let result = parse(&log.replace("LINE", "312"), 1);
        assert_eq!(errors(&result)[0].line, Some(312));
        std::fs::remove_dir_all(&cwd).expect("cleanup");
    }

    /// Jest 29.7.0 `--verbose` on luxon's localeWeek tests (one assertion broken, one test
    /// skipped, one todo added), cut to a few tests of each kind.
    const VERBOSE: &str = "FAIL test/datetime/localeWeek.test.js\n\
\x20 \u{2713} startOf(week) with useLocaleWeeks adheres to the locale (28 ms)\n\
\x20 \u{2713} endOf(week) with useLocaleWeeks handles crossing into the next year\n\
\x20 localWeekNumber in locale de-DE\n\
\x20   \u{2713} Jan  2 2012 should be week 1, year 2012 (1 ms)\n\
\x20   \u{2715} Jan  8 2012 should be week 1, year 2012 (2 ms)\n\
\x20 localWeekday in locale en-US\n\
\x20   \u{2713} Sunday should be reported as the 1st day of the week\n\
\x20   \u{25cb} skipped Monday should be reported as the 2nd day of the week\n\
\x20   \u{270e} todo Sunday in locale ar-EG\n\
\x20 weeksInLocalWeekYear\n\
\x20   \u{2713} 2018 should have 53 weeks in en-US\n\
\n\
\x20 \u{25cf} localWeekNumber in locale de-DE \u{203a} Jan  8 2012 should be week 1, year 2012\n\
\n\
\x20   expect(received).toBe(expected) // Object.is equality\n\
\n\
\x20     at Object.toBe (test/datetime/localeWeek.test.js:109:32)\n\
\n\
PASS test/interval/parse.test.js\n\
\x20 \u{2713} Interval.fromISO can parse a variety of ISO formats (8 ms)\n\
\x20 Interval.fromISO defaults missing values in end to start\n\
\x20   \u{2713} Gregorian, end just time (1 ms)\n\
\n\
Test Suites: 1 failed, 1 passed, 2 total\n\
Tests:       1 failed, 1 skipped, 1 todo, 7 passed, 10 total\n";

    #[test]
    fn the_verbose_tree_names_every_test_as_its_failure_is_named() {
        let result = parse(VERBOSE, 1);
        assert_eq!(result.failed_tests, ["localWeekNumber in locale de-DE > Jan  8 2012 should be week 1, year 2012"]);
        assert_eq!(
            named(&result),
            [
                ("startOf(week) with useLocaleWeeks adheres to the locale", TestOutcome::Passed, Some(28_000)),
                ("endOf(week) with useLocaleWeeks handles crossing into the next year", TestOutcome::Passed, None),
                (
                    "localWeekNumber in locale de-DE > Jan  2 2012 should be week 1, year 2012",
                    TestOutcome::Passed,
                    Some(1_000)
                ),
                (
                    "localWeekNumber in locale de-DE > Jan  8 2012 should be week 1, year 2012",
                    TestOutcome::Failed,
                    Some(2_000)
                ),
                (
                    "localWeekday in locale en-US > Sunday should be reported as the 1st day of the week",
                    TestOutcome::Passed,
                    None
                ),
                (
                    "localWeekday in locale en-US > Monday should be reported as the 2nd day of the week",
                    TestOutcome::Skipped,
                    None
                ),
                ("localWeekday in locale en-US > Sunday in locale ar-EG", TestOutcome::Skipped, None),
                ("weeksInLocalWeekYear > 2018 should have 53 weeks in en-US", TestOutcome::Passed, None),
                ("Interval.fromISO can parse a variety of ISO formats", TestOutcome::Passed, Some(8_000)),
                (
                    "Interval.fromISO defaults missing values in end to start > Gregorian, end just time",
                    TestOutcome::Passed,
                    Some(1_000)
                ),
            ]
        );
        // The text answer is the same as without the tree.
        assert_eq!(errors(&result).len(), 1);
    }

    #[test]
    fn a_tree_the_counts_do_not_match_names_no_test() {
        let result = parse(&VERBOSE.replace("7 passed, 10 total", "8 passed, 11 total"), 1);
        assert!(result.tests.is_empty(), "{:?}", result.tests);
        assert_eq!(result.summary.map(|s| s.passed), Some(8));
    }

    /// The JSON report the plan asks for names the tests: the tree would name them again.
    #[test]
    fn a_json_report_names_the_tests_instead_of_the_tree() {
        let report = r#"{"numFailedTests":0,"numPassedTests":1,"numTotalTests":1,"testResults":[{"name":"/srv/a.test.js","status":"passed","assertionResults":[{"ancestorTitles":[],"title":"one","status":"passed","failureMessages":[]}]}]}"#;
        let log = format!("PASS test/a.test.js\n  \u{2713} one (3 ms)\n\nTests:       1 passed, 1 total\n{report}\n");
        let result = parse(&log, 0);
        assert_eq!(named(&result), [("one", TestOutcome::Passed, None)]);
    }

    /// Without `--verbose`, several files print their suite lines only, and console output
    /// under them is no test.
    #[test]
    fn suite_lines_alone_name_no_test() {
        let log =
            "PASS test/a.test.js\n  console.log\n    hello\n\nPASS test/b.test.js\nTests:       2 passed, 2 total\n";
        let result = parse(log, 0);
        assert!(result.tests.is_empty(), "{:?}", result.tests);
        assert_eq!(result.summary.map(|s| s.passed), Some(2));
    }

    #[test]
    fn babel_column_past_u32_is_dropped() {
        let log = "FAIL test/a.test.js\n\x20 \u{25cf} Test suite failed to run\n\n\
\x20   SyntaxError: /abs/src/a.js: Unexpected token (7:4294967295)\n\nTests:       0 total\n";
        let result = parse(log, 1);
        let errs = errors(&result);
        assert_eq!((errs[0].line, errs[0].column), (Some(7), None));
    }

    #[test]
    fn suite_failures_are_errors() {
        let log = "FAIL test/a.test.js\n\
\x20 \u{25cf} Test suite failed to run\n\
\n\
\x20   SyntaxError: /abs/src/a.js: Unexpected token, expected \",\" (7:48)\n\
\n\
\x20     at constructor (node_modules/@babel/parser/lib/index.js:367:19)\n\
\n\
FAIL test/b.test.js\n\
\x20 \u{25cf} Test suite failed to run\n\
\n\
\x20   Cannot find module '../src/nope' from 'test/b.test.js'\n\
\n\
\x20     at Resolver._throwModNotFoundError (node_modules/jest-resolve/build/index.js:863:11)\n\
\x20     at Object.<anonymous> (test/b.test.js:1:1)\n\
\n\
Tests:       0 total\n";
        let result = parse(log, 1);
        let errs = errors(&result);
        assert_eq!(errs.len(), 2);
        assert_eq!((errs[0].file.as_deref(), errs[0].line, errs[0].column), (Some("/abs/src/a.js"), Some(7), Some(49)));
        assert_eq!(
            (errs[1].file.as_deref(), errs[1].line, errs[1].test.as_deref()),
            (Some("test/b.test.js"), Some(1), None)
        );
    }
}
