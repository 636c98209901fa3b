//! Reading whatever an npm script printed.
//!
//! The parser cannot know which tool a script runs, so each format has a recogniser that spots
//! its own lines, and [`NpmParser`] offers each line to those that may want it, in the order they
//! are registered in [`NpmParser::new`] until one takes it: npm's own lines first (they also mark
//! where one script's output ends, so they end every other block), then one-line JSON reports,
//! then Node's own crash reports and process warnings (whatever script ran node), then the
//! bundlers (webpack, esbuild, Vite, Next.js), Prettier, tsc, ESLint, Jest, Vitest, Mocha and
//! node:test, and last pnpm's, yarn's and bun's own lines (the managers that may run the scripts
//! instead; last, because their `error ` and `error: ` lines are other tools' words too).
//! Recognisers keep only the block they are reading, never the lines they passed over.

mod bun;
mod diff;
mod esbuild;
mod eslint;
mod frames;
mod jest;
mod json_report;
mod mocha;
mod next;
mod node_crash;
mod node_test;
mod node_warning;
mod npm;
mod pnpm;
mod prettier;
mod sink;
mod tsc;
mod vite;
mod vitest;
mod webpack;
mod yarn;

use buildvise_plugin_api::{Head, Line, ParseContext, ParseResult, Parser, Recognisers, RunEnd, Text};
use sink::Sink;

/// The formats a tool defined in a config file can name, with their descriptions: each is
/// the recognisers [`NpmParser::new`] registers under its name.
///
/// npm's own `npm error` / `npm warn` lines belong to none of them: such a tool usually runs the
/// program itself (`npx eslint .`), where npm prints nothing, and when it runs `npm run lint` the
/// `Lifecycle script failed` block only repeats that the script failed, which the exit code says.
pub const FORMATS: [(&str, &str); 12] = [
    ("node-crash", "Node.js uncaught exception"),
    ("webpack", "webpack build errors"),
    ("esbuild", "esbuild errors and warnings"),
    ("vite", "Vite/Rollup build errors"),
    ("next", "next build errors"),
    ("prettier", "Prettier --check report"),
    ("tsc", "TypeScript compiler (tsc)"),
    ("eslint", "ESLint report (stylish or JSON)"),
    ("jest", "Jest test report"),
    ("vitest", "Vitest test report"),
    ("mocha", "Mocha test report (spec)"),
    ("node-test", "node --test report (spec or TAP)"),
];

pub struct NpmParser {
    sink: Sink,
    /// npm's own lines, which end the other recognisers' blocks: they come between scripts.
    npm: npm::Npm,
    recognisers: Recognisers<Sink>,
    prev_blank: bool,
    /// Whether npm's own lines are read: not by a format of a config tool, which reads its own.
    reads_npm: bool,
    /// Whether Jest's and Vitest's report files are read at the end (not for a config tool of
    /// another format).
    reads_reports: bool,
}

impl NpmParser {
    pub fn new(context: &ParseContext) -> Self {
        let recognisers = Recognisers::new()
            .add_in(&["eslint"], eslint::EslintJson)
            .add_in(&["jest", "vitest"], json_report::JsonReports)
            .add_in(&["node-crash"], node_crash::NodeCrash::default())
            .add(node_warning::NodeWarning::default())
            .add_in(&["webpack"], webpack::Webpack::default())
            .add_in(&["esbuild"], esbuild::Esbuild::default())
            .add_in(&["vite"], vite::Vite::default())
            .add_in(&["next"], next::Next::default())
            .add_in(&["prettier"], prettier::Prettier::default())
            .add_in(&["tsc"], tsc::Tsc::default())
            .add_in(&["eslint"], eslint::Eslint::default())
            .add_in(&["jest"], jest::Jest::default())
            .add_in(&["vitest"], vitest::Vitest::default())
            .add_in(&["mocha"], mocha::Mocha::default())
            .add_in(&["node-test"], node_test::NodeTest::default())
            .add(pnpm::Pnpm::default())
            .add(yarn::Yarn::default())
            .add(bun::Bun::default());
        NpmParser {
            sink: Sink::new(&context.cwd, workspace_globs(&context.cwd)),
            npm: npm::Npm::default(),
            recognisers,
            // A banner opens the output, after an empty line that a saved log may have lost.
            prev_blank: true,
            reads_npm: true,
            reads_reports: true,
        }
    }

    /// A parser that reads one of [`FORMATS`] and nothing else (not npm's own lines); None for
    /// another name.
    pub fn for_format(format: &str, context: &ParseContext) -> Option<Self> {
        let parser = NpmParser::new(context);
        let recognisers = parser.recognisers.only(format)?;
        let reads_reports = ["jest", "vitest"].contains(&format);
        Some(NpmParser { recognisers, reads_npm: false, reads_reports, ..parser })
    }

    /// npm's line, if it is one: it ends every block the recognisers have open.
    fn npm_line(&mut self, line: &Line<'_>, head: &Head<'_>, prev_blank: bool) -> bool {
        if !npm::may_be_npm(head) {
            self.npm.flush(&mut self.sink);
            return false;
        }
        let text = line.text();
        if !self.npm.feed(&Text::new(&text, line.stream, line.number), prev_blank, &mut self.sink) {
            return false;
        }
        self.recognisers.flush(&mut self.sink);
        true
    }
}

impl Parser for NpmParser {
    fn feed(&mut self, line: Line<'_>) {
        let head = Head::new(&line);
        let prev_blank = std::mem::replace(&mut self.prev_blank, head.is_blank());
        if self.reads_npm && self.npm_line(&line, &head, prev_blank) {
            return;
        }
        self.recognisers.feed_head(&head, &mut self.sink);
    }

    fn finish(&mut self, end: &RunEnd) -> ParseResult {
        self.npm.flush(&mut self.sink);
        self.recognisers.flush(&mut self.sink);
        let mut reports = std::mem::take(&mut self.sink.reports);
        if self.reads_reports {
            reports.extend(end.artifacts.iter().filter_map(|path| json_report::from_file(path)));
        }
        for report in reports {
            report.apply(&mut self.sink);
        }
        self.recognisers.finish(&mut self.sink);
        let stopped_early = self.sink.stopped_early_text();
        let tests = std::mem::take(&mut self.sink.tests).into_vec();
        let (diagnostics, summary, failed_tests) = std::mem::take(&mut self.sink).finish();
        let result =
            ParseResult::new(diagnostics).with_summary(summary).with_failed_tests(failed_tests).with_tests(tests);
        match stopped_early {
            Some(what) => result.with_stopped_early(what),
            None => result,
        }
    }
}

/// The root package.json's `workspaces` (an array, or `{"packages": [...]}`); empty when there
/// is none. Read once, when the parser is made, to place workspace folders (see [`Sink`]).
fn workspace_globs(cwd: &str) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(std::path::Path::new(cwd).join("package.json")) else {
        return Vec::new();
    };
    let Ok(value) = serde_json::from_str::<serde_json::Value>(&text) else { return Vec::new() };
    let workspaces = value.get("workspaces");
    let list = workspaces.and_then(|w| w.as_array().or_else(|| w.get("packages").and_then(|p| p.as_array())));
    list.map(|l| l.iter().filter_map(|g| g.as_str().map(str::to_string)).collect()).unwrap_or_default()
}

/// `1 test file`, `4 test files`.
fn count_of(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// What a runner that stopped at its first failures (`--bail`) left out, and the way on.
fn bailed(failed: u64, failed_unit: (&str, &str), not_run: u64, unit: (&str, &str)) -> String {
    let not_run = count_of(not_run, unit.0, unit.1);
    if failed == 0 {
        return format!("{not_run} not run");
    }
    format!("bailed after {}; {not_run} not run; rerun without --bail", count_of(failed, failed_unit.0, failed_unit.1))
}

/// The N of the first `N word` item (`3 failed`, ` 7 passed`, `+5 passed`) for each of `words`, 0
/// for a word no item has; other items are skipped.
fn counts_of<const W: usize>(items: &str, separator: char, words: [&str; W]) -> [u64; W] {
    let mut counts = [None; W];
    for item in items.split(separator) {
        let item = item.trim_start();
        let digits = item.strip_prefix('+').unwrap_or(item);
        let end = digits.find(|c: char| !c.is_ascii_digit()).unwrap_or(digits.len());
        let (Ok(n), Some(word)) = (digits[..end].parse::<u64>(), digits[end..].strip_prefix(' ')) else {
            continue;
        };
        if let Some(i) = words.iter().position(|w| *w == word.trim()) {
            counts[i].get_or_insert(n);
        }
    }
    counts.map(|n| n.unwrap_or(0))
}

#[cfg(test)]
pub mod tests {
    use super::NpmParser;
    use buildvise_plugin_api::testing::{parse_log, parse_streams};
    use buildvise_plugin_api::{Diagnostic, ParseContext, ParseResult, RunEnd, Severity};

    fn parser(cwd: &str) -> Box<NpmParser> {
        Box::new(NpmParser::new(&ParseContext::new("npm.test", cwd)))
    }

    pub fn parse_in(log: &str, exit_code: i32, cwd: &str) -> ParseResult {
        parse_log(parser(cwd), log.as_bytes(), exit_code)
    }

    pub fn parse(log: &str, exit_code: i32) -> ParseResult {
        parse_in(log, exit_code, "/nonexistent/project")
    }

    pub fn parse_split(stdout: &str, stderr: &str, exit_code: i32) -> ParseResult {
        let end = RunEnd::exited(exit_code);
        parse_streams(parser("/nonexistent/project"), stdout.as_bytes(), stderr.as_bytes(), &end)
    }

    pub fn errors(result: &ParseResult) -> Vec<&Diagnostic> {
        result.diagnostics.iter().filter(|d| d.severity == Severity::Error).collect()
    }

    pub fn warnings(result: &ParseResult) -> Vec<&Diagnostic> {
        result.diagnostics.iter().filter(|d| d.severity == Severity::Warning).collect()
    }

    /// The tests a result names: name, outcome and time, in order.
    pub fn named(result: &ParseResult) -> Vec<(&str, buildvise_plugin_api::TestOutcome, Option<u64>)> {
        result.tests.iter().map(|t| (t.name.as_str(), t.outcome, t.duration_us)).collect()
    }

    #[test]
    fn a_summary_counts_each_word_once_wherever_and_however_its_item_is_spaced() {
        let words = ["passed", "failed", "skipped"];
        assert_eq!(super::counts_of("       3 passed, 1 skipped, 4 total", ',', words), [3, 0, 1]);
        assert_eq!(super::counts_of(" 2 failed, 4 failed, +5 passed , 9 skipped\u{a0}", ',', words), [5, 2, 9]);
        assert_eq!(super::counts_of("\t3 passed,3  passed, 3passed, 3 ", ',', words), [3, 0, 0]);
        assert_eq!(super::counts_of("1 failed | 18446744073709551616 passed | 2 passed", '|', words), [2, 1, 0]);
        assert_eq!(super::counts_of("", ',', words), [0, 0, 0]);
    }

    #[test]
    fn plain_script_output_is_not_a_diagnostic() {
        let result = parse(
            "\n> tools@1.0.0 release\n> node bundle.js\n\ncopying a.js\nCopied 3 files\nbundle step did not complete\n",
            3,
        );
        assert!(result.diagnostics.is_empty());
        assert_eq!((result.summary, result.success), (None, None));
    }

    #[test]
    fn odd_input_does_not_panic() {
        let mut log: Vec<u8> = b"FAIL \xff\xfe\n  \xe2\x97\x8f \xff \xe2\x80\xba\n    at (\n> \xc3\xa9@1 b\n".to_vec();
        log.extend_from_slice(&vec![b'x'; 200_000]);
        log.extend_from_slice(b"\n\xe2\x8e\xaf\xe2\x8e\xaf Failed Tests \n FAIL  a > \n\xe2\x9d\xaf :1:\nnot ok 1\n  ---\n  error: |-\n# tests x\nnpm error code\nnpm warn\n");
        let result = parse_log(parser("/p"), &log, 1);
        assert!(result.diagnostics.len() < 10);
        for cut in [1, 7, 40, 120] {
            let _ = parse_log(parser("/p"), &log[..cut.min(log.len())], 1);
        }
    }
}

#[cfg(test)]
mod format_tests;
#[cfg(test)]
mod manager_tests;
