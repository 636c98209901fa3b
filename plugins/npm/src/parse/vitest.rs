//! Vitest's default reporter.
//!
//! stdout carries `RUN  v3 /root`, the per-file tree (`× a > b 10ms` for a failed test) and the
//! `Tests  2 failed | 5 passed | 1 skipped | 1 todo (9)` summary; stderr the detail sections
//! (`⎯⎯ Failed Suites 1 ⎯⎯`, `⎯⎯ Failed Tests 2 ⎯⎯`, `⎯⎯ Unhandled Errors ⎯⎯`), where each block
//! has one or more ` FAIL  file > a > b` headers, the error, and `❯ [fn] file:line:col` frames.
//! Paths are relative to the root of the RUN line. The tree's `×` lines stand in for blocks
//! that never arrived (a run cut short). A deep-equality diff of one line each way joins the
//! headline ([`Diff`]). Vitest prints nothing when `--bail` stops it, but its counts show it:
//! a total above failed + passed + skipped + todo (`Test Files  1 failed (4)`) is what never ran.
//!
//! With projects (`test.projects`, a workspace file) a header carries the project's label before
//! the file: `|url| test/a.ts` (Vitest 2 and 3), `url  test/a.ts` (Vitest 4, padded). Vitest 4's
//! tree names a failed test without its describe (`× leaf`), beside a block naming it whole. A
//! suite that does not transform has its place in Vite's words (`File: /abs/a.ts:4:16`, esbuild's
//! `/abs/a.ts:4:16: ERROR: msg`, or Rolldown's `╭─[ a.ts:4:17 ]` under `[PARSE_ERROR] msg`), not in
//! a frame. A test environment that cannot load fails every file the same way: Vitest 4 reports
//! `Failed to start forks worker for test files /abs/a.ts.` with the exception under
//! `Caused by:`, once per file; the answer is that exception, once, with the files it hit.
//!
//! The verbose reporter (`--reporter=verbose`, Vitest 3 and 4 alike) prints every test, one
//! space in: `✓ test/a.ts > suite > title 2ms`, `× …` for a failure, `↓ …` skipped or todo, the
//! project's label before the file. A test is named as its failure's header names it, after the
//! file (`suite > title`). Names are kept only when the `Tests` line counts as many passed and
//! skipped tests as the lines named, so output that broke the list names none rather than some;
//! and only when no JSON report (the one the plan asks for) named the tests already.

use super::vite::{is_code, located};
use super::{bailed, counts_of, frames};
use crate::parse::diff::{self, Diff};
use crate::parse::sink::Sink;
use buildvise_plugin_api::{Diagnostic, TestCase, TestCases, TestOutcome, TestSummary, millis_to_us};
use buildvise_plugin_api::{Recogniser, Text, Wants};
use regex::Regex;
use std::sync::LazyLock;

static DURATION: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\s+\d+(?:\.\d+)?m?s$").expect("valid regex"));
/// The time the verbose reporter puts after a test: whole milliseconds.
static VERBOSE_TIME: LazyLock<Regex> = LazyLock::new(|| Regex::new(r" (\d+)ms$").expect("valid regex"));

#[derive(Clone, Copy, PartialEq, Eq)]
enum Section {
    None,
    Tests,
    Suites,
    Errors,
}

/// The lines of the run's summary besides the counts (` Start at  23:09:23`, `  Duration  797ms
/// (transform 77ms, …)`), labels as Vitest pads them.
const SUMMARY_LINES: [&str; 5] = ["Start at  ", "Duration  ", "Snapshots  ", "Type Errors  ", "Errors  "];

pub struct Vitest {
    section: Section,
    block: Option<Block>,
    /// Failed tests named by the tree, with the `→ message` line under them.
    crossed: Vec<(String, String, u64)>,
    /// Test files the `Test Files` line counts but no outcome covers: never run (`--bail`).
    files_not_run: u64,
    /// Test names the blocks reported, which the tree's `×` lines repeat.
    reported: Vec<String>,
    /// Workers that did not start, by the exception that stopped them.
    unstarted: Vec<Unstarted>,
    /// The run's root from the `RUN` line, which the worker errors' absolute paths start with.
    root: String,
    /// The tests the verbose reporter named since the last `Tests` line, waiting for its counts.
    tree: Vec<TestCase>,
    /// The tests of lists whose counts matched, named when the output ends.
    named: Vec<TestCase>,
}

/// One exception that kept workers from starting, and the test files it hit.
struct Unstarted {
    cause: String,
    frame: Option<frames::Frame>,
    pool: String,
    files: Vec<String>,
    start: u64,
    end: u64,
}

/// Test files named in a worker error's message, at most; the rest are counted. Two keep the
/// message of a usual exception within what an answer shows of it (160 bytes).
const MAX_FILES_NAMED: usize = 2;

struct Block {
    /// Test names of the headers; None for a suite or an unhandled error.
    tests: Vec<Option<String>>,
    file: Option<String>,
    start: u64,
    end: u64,
    headline: Option<String>,
    frame: Option<frames::Frame>,
    diff: Diff,
    /// `[PARSE_ERROR]` before a transform's message.
    code: Option<String>,
    /// Where Vite says a transform failed (`File:`, esbuild's or Rolldown's location).
    place: Option<(String, Option<u32>, Option<u32>)>,
    /// The headline said `Transform failed with 1 error:`: the next line says what failed.
    transform: bool,
    /// `Caused by: TypeError: …` and the first frame under it.
    cause: Option<String>,
    cause_frame: Option<frames::Frame>,
}

impl Default for Vitest {
    fn default() -> Self {
        Vitest {
            section: Section::None,
            block: None,
            crossed: Vec::new(),
            files_not_run: 0,
            reported: Vec::new(),
            unstarted: Vec::new(),
            root: String::new(),
            tree: Vec::new(),
            named: Vec::new(),
        }
    }
}

/// How the lines read outside a block start: a section's separator, a header, the RUN line, the
/// counts, the rest of the summary, and the tree's failed tests with their messages.
/// What the lines Vitest starts a block or a summary with start with, after their indentation.
const STARTS: [&str; 14] = [
    "\u{23af}",
    "FAIL ",
    "RUN  v",
    "Tests  ",
    "Test Files  ",
    SUMMARY_LINES[0],
    SUMMARY_LINES[1],
    SUMMARY_LINES[2],
    SUMMARY_LINES[3],
    SUMMARY_LINES[4],
    "\u{00d7} ",
    "\u{2192} ",
    "\u{2713} ",
    "\u{2193} ",
];

impl Recogniser<Sink> for Vitest {
    fn is_open(&self) -> bool {
        // In the unhandled errors' section, any line may start a block.
        self.block.is_some() || self.section == Section::Errors
    }

    fn wants(&self) -> Wants {
        Wants::starts_unindented(&STARTS)
    }

    fn feed(&mut self, ln: &Text<'_>, sink: &mut Sink) -> bool {
        let trimmed = ln.trimmed;
        if let Some(title) = trimmed.strip_prefix('\u{23af}') {
            self.flush(sink);
            if title.contains("Failed Tests") {
                self.section = Section::Tests;
            } else if title.contains("Failed Suites") {
                self.section = Section::Suites;
            } else if title.contains("Unhandled Error") {
                self.section = Section::Errors;
            }
            return true;
        }
        if let Some(header) = trimmed.strip_prefix("FAIL ") {
            return self.header(header.trim(), ln, sink);
        }
        if let Some(rest) = trimmed.strip_prefix("RUN  v") {
            if let Some((_, root)) = rest.split_once(' ') {
                sink.set_current_location(root.trim());
                self.root = root.trim().to_string();
            }
            return true;
        }
        // The counts are stdout's and the blocks stderr's: in a combined log the counts may land
        // inside a block, before its frames, so they leave the block open (a separator or the
        // end closes it).
        if let Some(counts) = trimmed.strip_prefix("Tests  ") {
            self.section = Section::None;
            let counts = summary(counts);
            let tests_not_run = not_run(&counts);
            let files_not_run = std::mem::take(&mut self.files_not_run);
            let failed = ("failed test", "failed tests");
            if files_not_run > 0 {
                sink.stopped_early(bailed(counts.failed, failed, files_not_run, ("test file", "test files")));
            } else if tests_not_run > 0 {
                sink.stopped_early(bailed(counts.failed, failed, tests_not_run, ("test", "tests")));
            }
            let tree = std::mem::take(&mut self.tree);
            let count = |outcome| tree.iter().filter(|t| t.outcome == outcome).count() as u64;
            if count(TestOutcome::Passed) == counts.passed && count(TestOutcome::Skipped) == counts.skipped {
                self.named.extend(tree);
            }
            sink.add_summary(counts);
            return true;
        }
        if let Some(counts) = trimmed.strip_prefix("Test Files  ") {
            self.section = Section::None;
            self.files_not_run = not_run(&summary(counts));
            return true;
        }
        // The rest of stdout's summary says nothing to keep, and landing in a block before its
        // message it would read as the message.
        if SUMMARY_LINES.iter().any(|label| trimmed.starts_with(label)) {
            return true;
        }
        // The list is stdout's: in a combined log it may land inside a block of stderr's.
        if let Some((outcome, name, duration)) = verbose_test(ln) {
            if outcome == TestOutcome::Failed && self.block.is_none() {
                self.crossed.push((name.clone(), String::new(), ln.number));
            }
            // Bounded as `TestCases` is: past the cap the counts disagree, and nothing is named.
            if self.tree.len() < TestCases::MAX {
                self.tree.push(TestCase::new(name, outcome, duration));
            }
            return true;
        }
        if self.block.is_none() {
            if let Some(name) = trimmed.strip_prefix("\u{00d7} ") {
                let name = DURATION.replace(name, "");
                self.crossed.push((name.into_owned(), String::new(), ln.number));
                return true;
            }
            if let Some(message) = trimmed.strip_prefix("\u{2192} ")
                && let Some(last) = self.crossed.last_mut()
                && last.1.is_empty()
            {
                last.1 = message.to_string();
                return true;
            }
            if self.section == Section::Errors
                && !trimmed.is_empty()
                && !trimmed.starts_with("Vitest caught")
                && !trimmed.starts_with("This might cause false positive tests")
            {
                self.block = Some(Block::new(vec![None], None, ln.number));
            } else {
                return false;
            }
        }
        let Some(block) = &mut self.block else { return false };
        block.diff.feed(ln.text);
        if trimmed.is_empty() {
            return true;
        }
        block.end = ln.number;
        if block.headline.is_none() {
            block.transform = trimmed.contains("Transform failed with ");
            block.headline = Some(trimmed.to_string());
        } else if block.transform && !trimmed.starts_with("Plugin: ") && !trimmed.starts_with("File: ") {
            block.transform = false;
            block.transformed(trimmed);
        } else if let Some(place) = trimmed.strip_prefix("File: ") {
            // Vite's column counts from 0, and Vitest 4 gives the file alone.
            if block.place.as_ref().is_none_or(|(_, line, _)| line.is_none()) {
                block.place = located(place, true).or(block.place.take());
            }
        } else if let Some(place) = trimmed.strip_prefix("\u{256d}\u{2500}[") {
            block.place = located(place.trim_end_matches(']').trim(), false);
        } else if let Some(cause) = trimmed.strip_prefix("Caused by: ") {
            block.cause.get_or_insert_with(|| cause.to_string());
        } else if let Some(frame) = trimmed.strip_prefix("\u{276f} ") {
            let frame = frames::parse(frame);
            if block.cause.is_some() && block.cause_frame.is_none() {
                block.cause_frame.clone_from(&frame);
            }
            if block.frame.is_none() {
                block.frame = frame.filter(frames::in_project);
            }
        } else if block.frame.is_none() && trimmed.starts_with("at ") {
            block.frame = frames::project_frame(trimmed);
        } else if let Some(rest) = trimmed.strip_prefix("This error originated in \"") {
            block.file = rest.split('"').next().map(str::to_string);
        }
        true
    }

    fn flush(&mut self, sink: &mut Sink) {
        let Some(block) = self.block.take() else { return };
        if self.unstarted(&block) {
            return;
        }
        let headline = block.headline.unwrap_or_else(|| "test failed".into());
        let mut headline = diff::without_equality_remark(&headline).to_string();
        if let Some(gist) = block.diff.gist() {
            headline = format!("{headline} {gist}");
        }
        for test in block.tests {
            let mut diagnostic = Diagnostic::error(headline.as_str()).with_log_range(block.start, block.end);
            match (&block.frame, &block.file) {
                (Some(frame), _) => {
                    diagnostic = diagnostic.with_location(frame.file.as_str(), Some(frame.line), frame.column)
                }
                (None, _) if let Some((file, line, column)) = &block.place => {
                    diagnostic = diagnostic.with_location(file.as_str(), *line, *column)
                }
                (None, Some(file)) if test.is_none() => {
                    diagnostic = diagnostic.with_location(file.as_str(), None, None)
                }
                _ => {}
            }
            if let Some(code) = &block.code {
                diagnostic = diagnostic.with_code(code.as_str());
            }
            if let Some(test) = test {
                sink.failed_test(&test);
                self.reported.push(test.clone());
                diagnostic = diagnostic.with_test(test);
            }
            sink.push(diagnostic);
        }
    }

    /// The output ended, and the JSON reports, if any, were applied: the tests the tree crossed
    /// out that nothing reported are failures of their own.
    fn finish(&mut self, sink: &mut Sink) {
        self.flush(sink);
        self.add_unstarted(sink);
        self.add_unreported(sink);
        self.tree.clear();
        let named = std::mem::take(&mut self.named);
        if sink.report_named_tests {
            return;
        }
        // A failure is named as a block (or the list's `×` line) reported it.
        sink.name_tests(named);
    }
}

/// A test of the verbose reporter's list, one space in: ` ✓ test/a.ts > suite > title 2ms`,
/// with the project's label before the file; named without the file, as a block's header names
/// it. The default reporter's lines are deeper and name no file; its file lines name no test.
fn verbose_test(ln: &Text<'_>) -> Option<(TestOutcome, String, Option<u64>)> {
    if ln.text.len() - ln.unindented.len() != 1 {
        return None;
    }
    let mut chars = ln.trimmed.chars();
    let outcome = match chars.next()? {
        '\u{2713}' => TestOutcome::Passed,
        '\u{00d7}' => TestOutcome::Failed,
        '\u{2193}' => TestOutcome::Skipped,
        _ => return None,
    };
    let line = chars.as_str().strip_prefix(' ')?;
    let (_, name) = without_label(line).split_once(" > ")?;
    let (name, duration) = match VERBOSE_TIME.captures(name) {
        Some(caps) => (&name[..caps.get(0).map_or(name.len(), |m| m.start())], millis_to_us(&caps[1])),
        None => (name, None),
    };
    Some((outcome, name.to_string(), duration))
}

impl Vitest {
    /// Failed tests the tree named but no detail block (nor a JSON report) reported.
    fn add_unreported(&mut self, sink: &mut Sink) {
        for (name, message, number) in std::mem::take(&mut self.crossed) {
            // Vitest 4's tree drops the describe titles (`× leaf` for `suite > leaf`).
            let whole = |reported: &String| {
                reported.strip_suffix(name.as_str()).is_some_and(|head| head.is_empty() || head.ends_with(" > "))
            };
            if let Some(i) = self.reported.iter().position(whole) {
                self.reported.swap_remove(i);
                continue;
            }
            if !sink.has_failed_test(&name) {
                sink.failed_test(&name);
                let message = if message.is_empty() { "test failed".to_string() } else { message };
                sink.push(Diagnostic::error(message).with_test(name).with_log_range(number, number));
            }
        }
    }
}

impl Vitest {
    /// Takes a block that says a worker did not start (`Error: [vitest-pool]: Failed to start
    /// forks worker for test files /abs/a.ts.`), kept by the exception that caused it.
    fn unstarted(&mut self, block: &Block) -> bool {
        let Some(headline) = &block.headline else { return false };
        let Some((pool, files)) =
            headline.split_once("Failed to start ").and_then(|(_, rest)| rest.split_once(" worker for test files "))
        else {
            return false;
        };
        let cause = block.cause.clone().unwrap_or_else(|| headline.clone());
        let root = format!("{}/", self.root.trim_end_matches('/'));
        let files = files.trim_end_matches('.').split(", ");
        let files = files.map(|file| file.strip_prefix(root.as_str()).unwrap_or(file).to_string());
        match self.unstarted.iter_mut().find(|u| u.cause == cause) {
            Some(known) => {
                known.files.extend(files);
                known.end = block.end;
            }
            None => self.unstarted.push(Unstarted {
                cause,
                frame: block.cause_frame.clone().or_else(|| block.frame.clone()),
                pool: pool.to_string(),
                files: files.collect(),
                start: block.start,
                end: block.end,
            }),
        }
        true
    }

    /// One error per exception that kept workers from starting, naming the files it hit.
    fn add_unstarted(&mut self, sink: &mut Sink) {
        for unstarted in std::mem::take(&mut self.unstarted) {
            let named = unstarted.files.iter().take(MAX_FILES_NAMED).map(String::as_str).collect::<Vec<_>>();
            let files = match unstarted.files.len() {
                1 => named.join(""),
                n if n <= MAX_FILES_NAMED => format!("{n} test files: {}", named.join(", ")),
                n => format!("{n} test files: {}, \u{2026}", named.join(", ")),
            };
            let message = format!("{} (no {} worker started for {files})", unstarted.cause, unstarted.pool);
            let mut diagnostic = Diagnostic::error(message).with_log_range(unstarted.start, unstarted.end);
            if let Some(frame) = unstarted.frame {
                diagnostic = diagnostic.with_location(frame.file, Some(frame.line), frame.column);
            }
            sink.push(diagnostic);
        }
    }
}

impl Block {
    fn new(tests: Vec<Option<String>>, file: Option<String>, start: u64) -> Self {
        Block {
            tests,
            file,
            start,
            end: start,
            headline: None,
            frame: None,
            diff: Diff::default(),
            code: None,
            place: None,
            transform: false,
            cause: None,
            cause_frame: None,
        }
    }

    /// What failed, after `Transform failed with 1 error:`: esbuild's `/abs/a.ts:4:16: ERROR: msg`
    /// (a column from 0), Oxc's `[PARSE_ERROR] msg`, or the message Vite repeats after its
    /// `Plugin:` and `File:` lines (esbuild's line starts like a Node crash's `/abs/a.ts:4`, and
    /// that recogniser, registered first, takes it); it replaces the headline.
    fn transformed(&mut self, line: &str) {
        if let Some((place, message)) = line.split_once(": ERROR: ") {
            self.place = located(place, true);
            self.headline = Some(message.to_string());
        } else if let Some((code, message)) = line.strip_prefix('[').and_then(|l| l.split_once("] "))
            && is_code(code)
        {
            self.code = Some(code.to_string());
            self.headline = Some(message.to_string());
        } else {
            self.headline = Some(line.to_string());
        }
    }
}

impl Vitest {
    /// ` FAIL  file > a > b`, ` FAIL  file [ file ]`: a new block, or one more test sharing the
    /// error of a block whose message has not started yet.
    fn header(&mut self, header: &str, ln: &Text<'_>, sink: &mut Sink) -> bool {
        let header = without_label(header);
        let header = match header.rfind(" [ ") {
            Some(i) if header.ends_with(']') => &header[..i],
            _ => header,
        };
        let (file, names) = match header.split_once(" > ") {
            Some((file, names)) => (file, Some(names)),
            None if self.section != Section::None => (header, None),
            None => return false,
        };
        let test = match self.section {
            Section::Suites | Section::Errors => None,
            _ => names.map(str::to_string),
        };
        if let Some(block) = &mut self.block
            && block.headline.is_none()
        {
            block.tests.push(test);
            block.end = ln.number;
            return true;
        }
        self.flush(sink);
        self.block = Some(Block::new(vec![test], Some(file.to_string()), ln.number));
        true
    }
}

/// A header without its project's label: `|url| test/a.ts` (Vitest 2 and 3, which glue it) or
/// `url  test/a.ts` (Vitest 4, which pads it; a path or title has no two spaces before its `>`).
fn without_label(header: &str) -> &str {
    if let Some(rest) = header.strip_prefix('|')
        && let Some((_, rest)) = rest.split_once('|')
    {
        return rest.trim_start();
    }
    match header.split_once("  ") {
        Some((label, rest)) if !label.contains(" > ") && !rest.trim().is_empty() => rest.trim_start(),
        _ => header,
    }
}

/// What the total counts beyond the outcomes: with `--bail`, Vitest counts what it never ran
/// (`1 failed | 1 passed (3)`).
fn not_run(counts: &TestSummary) -> u64 {
    counts.total.saturating_sub(counts.passed.saturating_add(counts.failed).saturating_add(counts.skipped))
}

/// `2 failed | 5 passed | 1 skipped | 1 todo (9)`, or `no tests`.
fn summary(counts: &str) -> TestSummary {
    let counts = counts.trim();
    let (parts, total) = match counts.rsplit_once(" (") {
        Some((parts, total)) => (parts, total.trim_end_matches(')').trim().parse::<u64>().ok()),
        None => (counts, None),
    };
    let [passed, failed, skipped, todo] = counts_of(parts, '|', ["passed", "failed", "skipped", "todo"]);
    let skipped = skipped.saturating_add(todo);
    TestSummary::new(passed, failed, skipped, total.unwrap_or(passed.saturating_add(failed).saturating_add(skipped)))
}

#[cfg(test)]
mod tests {
    use crate::parse::tests::{errors, named, parse, parse_in, parse_split};

    const STDOUT: &str = "\n> q@0.4.0 test\n> vitest run\n\n\n RUN  v3.2.7 /srv/q\n\n\
\x20\u{276f} tests/queue.test.ts (5 tests | 2 failed | 1 skipped) 18ms\n\
\x20  \u{2713} Queue > starts empty 2ms\n\
\x20  \u{00d7} Queue > pops the highest first 10ms\n\
\x20    \u{2192} expected [ 'low' ] to deeply equal [ 'high' ]\n\
\x20  \u{00d7} parse > reads a list 1ms\n\
\x20    \u{2192} invalid priority\n\
\n\
\x20Test Files  1 failed (1)\n\
\x20     Tests  2 failed | 2 passed | 1 skipped | 1 todo (6)\n";

    const STDERR: &str = "\n\u{23af}\u{23af}\u{23af} Failed Tests 2 \u{23af}\u{23af}\u{23af}\n\n\
\x20FAIL  tests/queue.test.ts > Queue > pops the highest first\n\
AssertionError: expected [ 'low' ] to deeply equal [ 'high' ]\n\
\n\
\x20\u{276f} tests/queue.test.ts:14:25\n\
\x20    14|     expect(q.ids()).toEqual(['high']);\n\
\n\
\u{23af}\u{23af}\u{23af}[1/2]\u{23af}\n\n\
\x20FAIL  tests/queue.test.ts > parse > reads a list\n\
TypeError: invalid priority\n\
\x20\u{276f} parseTask node_modules/lib/index.js:1:1\n\
\x20\u{276f} parseTask src/queue.ts:35:11\n\
\x20\u{276f} tests/queue.test.ts:34:50\n\
\n\
\u{23af}\u{23af}\u{23af}[2/2]\u{23af}\n\n";

    /// Vitest 3.2.7 `--reporter=verbose` on defu's tests (one assertion broken, one test
    /// skipped), cut to a few tests; node:test's TAP lines come from a test file that imports
    /// `describe` from it.
    const VERBOSE_STDOUT: &str = "\n RUN  v3.2.7 /home/dev/src/defu\n\n\
\x20\u{2713} test/defu.test.ts > defu > should copy only missing properties defaults 1ms\n\
\x20\u{00d7} test/defu.test.ts > defu > should copy nested values 7ms\n\
\x20  \u{2192} expected { a: { d: 'e', b: 'c' } } to deeply equal { a: { b: 'c', d: 'f' } }\n\
\x20\u{2193} test/defu.test.ts > defu > multi defaults\n\
TAP version 13\n\
# Subtest: isPlainObject\n\
ok 1 - isPlainObject\n\
\x20 ---\n\
\x20 duration_ms: 2.079704\n\
\x20 type: 'suite'\n\
\x20 ...\n\
\x20\u{2713} test/utils.test.ts > plain objects 1ms\n\
\n\
\x20Test Files  1 failed | 1 passed (2)\n\
\x20     Tests  1 failed | 2 passed | 1 skipped (4)\n";

    const VERBOSE_STDERR: &str = "\n\u{23af}\u{23af}\u{23af} Failed Tests 1 \u{23af}\u{23af}\u{23af}\n\n\
\x20FAIL  test/defu.test.ts > defu > should copy nested values\n\
AssertionError: expected { a: { d: 'e', b: 'c' } } to deeply equal { a: { b: 'c', d: 'f' } }\n\
\x20\u{276f} test/defu.test.ts:28:20\n\
\n\
\u{23af}\u{23af}\u{23af}[1/1]\u{23af}\n\n";

    #[test]
    fn the_verbose_list_names_every_test_without_its_file() {
        use buildvise_plugin_api::TestOutcome;
        let result = parse_split(VERBOSE_STDOUT, VERBOSE_STDERR, 1);
        // Named once, as the header names it: not again with its file from the `×` line.
        assert_eq!(result.failed_tests, ["defu > should copy nested values"]);
        assert_eq!(errors(&result).len(), 1);
        assert_eq!(
            named(&result),
            [
                ("defu > should copy only missing properties defaults", TestOutcome::Passed, Some(1_000)),
                ("defu > should copy nested values", TestOutcome::Failed, Some(7_000)),
                ("defu > multi defaults", TestOutcome::Skipped, None),
                ("plain objects", TestOutcome::Passed, Some(1_000)),
            ]
        );
        let miscounted = VERBOSE_STDOUT.replace("2 passed | 1 skipped (4)", "3 passed | 1 skipped (5)");
        assert!(parse_split(&miscounted, VERBOSE_STDERR, 1).tests.is_empty());
    }

    /// The default reporter's lines under a failed file name no file and are not read as the
    /// verbose list's; its file lines name no test.
    #[test]
    fn the_default_reporter_names_no_test() {
        let result = parse_split(STDOUT, STDERR, 1);
        assert!(result.tests.is_empty(), "{:?}", result.tests);
        let log =
            " \u{2713} test/utils.test.ts (2 tests) 3ms\n\n Test Files  1 passed (1)\n      Tests  2 passed (2)\n";
        assert!(parse(log, 0).tests.is_empty());
    }

    #[test]
    fn failed_tests_from_the_detail_section() {
        let result = parse_split(STDOUT, STDERR, 1);
        let errs = errors(&result);
        assert_eq!(errs.len(), 2, "{errs:?}");
        assert_eq!(errs[0].test.as_deref(), Some("Queue > pops the highest first"));
        assert_eq!(
            (errs[0].file.as_deref(), errs[0].line, errs[0].column),
            (Some("tests/queue.test.ts"), Some(14), Some(25))
        );
        assert_eq!((errs[1].file.as_deref(), errs[1].line), (Some("src/queue.ts"), Some(35)));
        assert_eq!(errs[1].message, "TypeError: invalid priority");
        let s = result.summary.expect("summary");
        assert_eq!((s.passed, s.failed, s.skipped, s.total), (2, 2, 2, 6));
    }

    #[test]
    fn counts_printed_inside_a_block_leave_it_open_for_its_frames() {
        let log = "\x20FAIL  tests/money.test.ts > split > keeps the remainder\n\
AssertionError: expected [ 333 ] to deeply equal [ 334 ]\n\n\
\x20Test Files  1 failed (1)\n\
\x20     Tests  1 failed | 2 passed (3)\n\
\x20  Start at  23:09:23\n\n\
\x20\u{276f} tests/money.test.ts:23:30\n\
\x20    23|       expect(split(1000, 3)).toEqual([334]);\n\n\
\u{23af}\u{23af}\u{23af}[1/1]\u{23af}\n";
        let result = parse(log, 1);
        let errs = errors(&result);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(
            (errs[0].file.as_deref(), errs[0].line, errs[0].column),
            (Some("tests/money.test.ts"), Some(23), Some(30))
        );
        assert_eq!(result.summary.map(|s| (s.passed, s.failed, s.total)), Some((2, 1, 3)));
    }

    #[test]
    fn the_summary_printed_between_a_header_and_its_message_is_not_the_message() {
        // As a loaded machine interleaved stdout and stderr in a real run.
        let log = "\x20FAIL  tests/money.test.ts > money > split > keeps the remainder\n\n\
\x20Test Files  1 failed (1)\n\
\x20     Tests  2 failed | 2 passed | 1 skipped (5)\n\
\x20  Start at  03:09:07\n\
\x20  Duration  797ms (transform 77ms, setup 0ms, collect 44ms, tests 14ms, environment 0ms, prepare 129ms)\n\n\
AssertionError: expected [ 333, 333, 333 ] to deeply equal [ 334, 333, 333 ]\n\n\
\x20\u{276f} tests/money.test.ts:23:30\n\n\
\u{23af}\u{23af}\u{23af}[2/2]\u{23af}\n";
        let result = parse(log, 1);
        let errs = errors(&result);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(errs[0].message.starts_with("AssertionError: expected [ 333, 333, 333 ]"), "{errs:?}");
        assert_eq!((errs[0].file.as_deref(), errs[0].line), (Some("tests/money.test.ts"), Some(23)));
    }

    #[test]
    fn bail_leaves_files_or_tests_unrun() {
        let tail = "\n\x20Test Files  1 failed (5)\n\x20     Tests  1 failed | 1 passed (3)\n";
        let result = parse(tail, 1);
        assert_eq!(
            result.stopped_early.as_deref(),
            Some("bailed after 1 failed test; 4 test files not run; rerun without --bail")
        );
        let result = parse("\x20Test Files  1 failed (1)\n\x20     Tests  1 failed | 1 passed (3)\n", 1);
        assert_eq!(
            result.stopped_early.as_deref(),
            Some("bailed after 1 failed test; 1 test not run; rerun without --bail")
        );
        assert_eq!(parse_split(STDOUT, STDERR, 1).stopped_early, None);
    }

    #[test]
    fn one_line_deep_equality_diff_joins_the_message() {
        let log = "\u{23af}\u{23af} Failed Tests 1 \u{23af}\u{23af}\n\n\
\x20FAIL  tests/invoice.test.js > mergeLines > adds quantities of the same sku\n\
AssertionError: expected { sku: 'A-1', unitPrice: 4, \u{2026}(2) } to deeply equal { sku: 'A-1', unitPrice: 4, \u{2026}(2) }\n\
\n\
- Expected\n\
+ Received\n\
\n\
\x20 {\n\
\x20   \"amount\": 16,\n\
-   \"qty\": 4,\n\
+   \"qty\": 3,\n\
\x20   \"sku\": \"A-1\",\n\
\x20 }\n\
\n\
\x20\u{276f} tests/invoice.test.js:13:23\n\
\x20    13|     expect(merged[0]).toEqual({ sku: 'A-1', unitPrice: 4, qty: 4, amou\u{2026}\n\
\x20      |                       ^\n\
\n\
\x20     Tests  1 failed | 2 passed (3)\n";
        let result = parse(log, 1);
        let errs = errors(&result);
        assert!(
            errs[0]
                .message
                .ends_with("to deeply equal { sku: 'A-1', unitPrice: 4, \u{2026}(2) } (- \"qty\": 4, + \"qty\": 3)"),
            "{}",
            errs[0].message
        );
        assert_eq!((errs[0].line, errs[0].column), (Some(13), Some(23)));
    }

    #[test]
    fn tree_stands_in_when_details_are_missing() {
        let result = parse(STDOUT, 1);
        let errs = errors(&result);
        assert_eq!(errs.len(), 2);
        assert_eq!(errs[1].message, "invalid priority");
        assert_eq!(result.failed_tests, ["Queue > pops the highest first", "parse > reads a list"]);
    }

    #[test]
    fn unhandled_errors_are_errors_without_a_test() {
        let log = "\u{23af}\u{23af} Unhandled Errors \u{23af}\u{23af}\n\n\
Vitest caught 1 unhandled error during the test run.\n\
This might cause false positive tests. Resolve unhandled errors to make sure your tests are not affected.\n\n\
\u{23af}\u{23af} Uncaught Exception \u{23af}\u{23af}\n\
Error: boom\n\
\x20\u{276f} src/timer.ts:5:11\n\n\
This error originated in \"tests/a.test.ts\" test file.\n\
\u{23af}\u{23af}\u{23af}\u{23af}\n\n\
\x20Test Files  1 passed (1)\n\
\x20     Tests  1 passed (1)\n";
        let result = parse(log, 1);
        let errs = errors(&result);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(
            (errs[0].message.as_str(), errs[0].file.as_deref(), errs[0].test.as_deref()),
            ("Error: boom", Some("src/timer.ts"), None)
        );
    }

    #[test]
    fn failed_suites_and_shared_errors() {
        let log = "\u{23af}\u{23af} Failed Suites 1 \u{23af}\u{23af}\n\n\
\x20FAIL  tests/broken.test.ts [ tests/broken.test.ts ]\n\
Error: Cannot find module '../src/missing'\n\
\x20\u{276f} tests/broken.test.ts:2:1\n\
\n\
\u{23af}\u{23af} Failed Tests 2 \u{23af}\u{23af}\n\n\
\x20FAIL  tests/a.test.ts > a > one\n\
\x20FAIL  tests/a.test.ts > a > two\n\
Error: hook failed\n\
\x20\u{276f} tests/a.test.ts:3:9\n\
\n\
\x20     Tests  2 failed (2)\n";
        let result = parse(log, 1);
        let errs = errors(&result);
        assert_eq!(errs.len(), 3);
        assert_eq!((errs[0].test.as_deref(), errs[0].line), (None, Some(2)));
        assert_eq!(errs[2].test.as_deref(), Some("a > two"));
        assert_eq!(result.summary.map(|s| s.failed), Some(2));
    }

    #[test]
    fn a_projects_label_is_not_part_of_the_file() {
        // Vitest 3.2.4 glues the label, 2.1.9 glues it with two spaces after, 4.1.12 pads it. A
        // suite whose only frame is inside Vite is placed by its header's file alone.
        for header in [
            "\x20FAIL  |url| test/is-same.test.ts [ test/is-same.test.ts ]",
            "\x20FAIL |url|  test/is-same.test.ts [ test/is-same.test.ts ]",
            "\x20FAIL   url  test/is-same.test.ts [ test/is-same.test.ts ]",
        ] {
            let log = format!(
                "\u{23af}\u{23af} Failed Suites 1 \u{23af}\u{23af}\n\n{header}\n\
Error: Failed to load url ../src/same (resolved id: ../src/same) in /srv/ufo/test/is-same.test.ts. Does the file exist?\n\
\x20\u{276f} loadAndTransform node_modules/vite/dist/node/chunks/dep-BK3b2jBa.js:51969:17\n\n"
            );
            let result = parse(&log, 1);
            assert_eq!(errors(&result)[0].file.as_deref(), Some("test/is-same.test.ts"), "{header}");
        }
    }

    #[test]
    fn a_suite_that_does_not_transform_is_placed_where_vite_says() {
        // Vitest 3.2.4 (Vite 7, esbuild): the location's column counts from 0.
        let log = "\u{23af}\u{23af} Failed Suites 1 \u{23af}\u{23af}\n\n\
\x20FAIL  |encoding| test/double-slash.test.ts [ test/double-slash.test.ts ]\n\
Error: Transform failed with 1 error:\n\
/srv/ufo/test/double-slash.test.ts:4:16: ERROR: Unexpected \";\"\n\
\x20 Plugin: vite:esbuild\n\
\x20 File: /srv/ufo/test/double-slash.test.ts:4:16\n\
\x20 \n\
\x20 Unexpected \";\"\n\
\x20 4  |  const broken = (;\n\
\x20\u{276f} failureErrorWithLog node_modules/esbuild/lib/main.js:1752:15\n\n";
        let result = parse_in(log, 1, "/srv/ufo");
        let errs = errors(&result);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(
            (errs[0].message.as_str(), errs[0].file.as_deref(), errs[0].line, errs[0].column),
            ("Unexpected \";\"", Some("test/double-slash.test.ts"), Some(4), Some(17))
        );
        // Vitest 4.1.12 (Vite 8, Oxc): a code, Rolldown's frame (from 1), and `File:` without a line.
        let log = "\u{23af}\u{23af} Failed Suites 1 \u{23af}\u{23af}\n\n\
\x20FAIL   encoding  test/double-slash.test.ts [ test/double-slash.test.ts ]\n\
Error: Transform failed with 1 error:\n\n\
[PARSE_ERROR] Unexpected token\n\
\x20  \u{256d}\u{2500}[ test/double-slash.test.ts:4:17 ]\n\
\x20 4 \u{2502} const broken = (;\n\
\u{2500}\u{2500}\u{2500}\u{256f}\n\n\
\x20 Plugin: vite:oxc\n\
\x20 File: /srv/ufo/test/double-slash.test.ts\n\
\x20\u{276f} transformWithOxc node_modules/vite/dist/node/chunks/node.js:7249:19\n\n";
        let result = parse_in(log, 1, "/srv/ufo");
        let errs = errors(&result);
        assert_eq!(
            (errs[0].code.as_deref(), errs[0].message.as_str(), errs[0].line, errs[0].column),
            (Some("PARSE_ERROR"), "Unexpected token", Some(4), Some(17))
        );
    }

    #[test]
    fn the_trees_leaf_name_is_the_blocks_failure_not_another() {
        // Vitest 4.1.12: stdout's tree drops the describe, stderr's block names it.
        let stdout = "\x20RUN  v4.1.12 /srv/ufo\n\n\
\x20\u{276f}  url  test/parse.test.ts (56 tests | 1 failed) 19ms\n\
\x20    \u{00d7} /path/to/.hidden-file,false 6ms\n\n\
\x20Test Files  1 failed (1)\n\x20     Tests  1 failed | 55 passed (56)\n";
        let stderr = "\u{23af}\u{23af} Failed Tests 1 \u{23af}\u{23af}\n\n\
\x20FAIL   url  test/parse.test.ts > parseFilename > /path/to/.hidden-file,false\n\
AssertionError: expected '.hidden-file' to strictly equal 'hidden-file'\n\n\
\x20\u{276f} test/parse.test.ts:293:9\n\n\u{23af}\u{23af}\u{23af}[1/1]\u{23af}\n";
        for result in [parse_split(stdout, stderr, 1), parse(&format!("{stdout}{stderr}"), 1)] {
            assert_eq!(errors(&result).len(), 1, "{:?}", errors(&result));
            assert_eq!(result.failed_tests, ["parseFilename > /path/to/.hidden-file,false"]);
        }
    }

    #[test]
    fn workers_that_did_not_start_give_their_cause_once_with_the_files() {
        // Vitest 4.1.12 with jsdom 31 on Node 20: jsdom's undici throws as it loads.
        let block = |file: &str| {
            format!(
                "\u{23af}\u{23af} Unhandled Error \u{23af}\u{23af}\n\
Error: [vitest-pool]: Failed to start forks worker for test files /srv/ufo/test/{file}.test.ts.\n\
\x20\u{276f} node_modules/vitest/dist/chunks/cli-api.B0Pz1_R7.js:3532:94\n\n\
Caused by: TypeError: Cannot read properties of undefined (reading 'bind')\n\
\x20\u{276f} Object.<anonymous> node_modules/undici/lib/interceptor/decompress.js:78:30\n\
\x20\u{276f} Module._compile node:internal/modules/cjs/loader:1521:14\n\n"
            )
        };
        let head = "\x20RUN  v4.1.12 /srv/ufo\n\n\u{23af}\u{23af} Unhandled Errors \u{23af}\u{23af}\n\n\
Vitest caught 4 unhandled errors during the test run.\n\n";
        let files = ["utilities", "parse", "encoding", "join"];
        let log = format!("{head}{}\x20Test Files  no tests\n", files.map(block).concat());
        let result = parse_in(&log, 1, "/srv/ufo");
        let errs = errors(&result);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(
            errs[0].message,
            "TypeError: Cannot read properties of undefined (reading 'bind') (no forks worker started for \
4 test files: test/utilities.test.ts, test/parse.test.ts, \u{2026})"
        );
        assert_eq!(
            (errs[0].file.as_deref(), errs[0].line),
            (Some("node_modules/undici/lib/interceptor/decompress.js"), Some(78))
        );
        let log = format!("{head}{}", block("index"));
        let result = parse_in(&log, 1, "/srv/ufo");
        assert!(errors(&result)[0].message.ends_with("(no forks worker started for test/index.test.ts)"));
    }
}
