//! Reading whatever an npm script printed.
//!
//! The parser cannot know which tool a script runs, so each format has a recogniser that spots
//! its own lines, and [`NpmParser`] offers every line to them in turn until one takes it: npm's
//! lines first (they also mark where one script's output ends), then one-line JSON reports, then
//! Node's own crash reports and process warnings (whatever script ran node), then the bundlers
//! (webpack, esbuild, Vite, Next.js), Prettier, tsc, ESLint, Jest, Vitest, Mocha and node:test. Each first checks a cheap prefix; a line none
//! of them wants costs a few comparisons and no allocation. Recognisers keep only the block they
//! are reading, never the lines they passed over.

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
mod prettier;
mod sink;
mod tsc;
mod vite;
mod vitest;
mod webpack;

use buildvise_plugin_api::{Line, ParseContext, ParseResult, Parser, RunEnd};
use sink::Sink;

/// One line as recognisers see it: text without ANSI escapes, and its number in the stored log.
pub struct Ln<'a> {
    pub text: &'a str,
    /// `text` without its indentation. This and `trimmed` are worked out once for every
    /// recogniser: each trimming the line again cost more than its own test of it.
    pub unindented: &'a str,
    /// `text` without the whitespace around it.
    pub trimmed: &'a str,
    pub number: u64,
}

impl<'a> Ln<'a> {
    fn new(text: &'a str, number: u64) -> Self {
        let unindented = text.trim_start();
        Ln { text, unindented, trimmed: unindented.trim_end(), number }
    }
}

/// One output format.
trait Recogniser {
    /// Takes the line if it belongs to this format; false leaves it to the others.
    fn feed(&mut self, ln: &Ln<'_>, sink: &mut Sink) -> bool;
    /// Reports the block being read: its output has ended.
    fn flush(&mut self, sink: &mut Sink);
}

pub struct NpmParser {
    sink: Sink,
    prev_blank: bool,
    npm: npm::Npm,
    node_crash: node_crash::NodeCrash,
    node_warning: node_warning::NodeWarning,
    webpack: webpack::Webpack,
    esbuild: esbuild::Esbuild,
    vite: vite::Vite,
    next: next::Next,
    prettier: prettier::Prettier,
    tsc: tsc::Tsc,
    eslint: eslint::Eslint,
    jest: jest::Jest,
    vitest: vitest::Vitest,
    mocha: mocha::Mocha,
    node_test: node_test::NodeTest,
    reports: Vec<json_report::Report>,
    /// A parser of one format (`formats = ["tsc"]` in a config file): the index of its
    /// recogniser in [`NpmParser::recognisers`]; None reads everything.
    only: Option<usize>,
}

/// The formats a tool defined in a config file can name: (name, description, index of the
/// recogniser in [`NpmParser::recognisers`]).
///
/// npm's own `npm error` / `npm warn` lines belong to none of them: such a tool usually runs the
/// program itself (`npx eslint .`), where npm prints nothing, and when it runs `npm run lint` the
/// `Lifecycle script failed` block only repeats that the script failed, which the exit code says.
/// Those lines reach the recogniser like any other and it leaves them, as every recogniser
/// leaves lines that are not its format.
pub const FORMATS: [(&str, &str, usize); 12] = [
    ("node-crash", "Node.js uncaught exception", 0),
    ("webpack", "webpack build errors", 2),
    ("esbuild", "esbuild errors and warnings", 3),
    ("vite", "Vite/Rollup build errors", 4),
    ("next", "next build errors", 5),
    ("prettier", "Prettier --check report", 6),
    ("tsc", "TypeScript compiler (tsc)", 7),
    ("eslint", "ESLint report (stylish or JSON)", ESLINT),
    ("jest", "Jest test report", JEST),
    ("vitest", "Vitest test report", VITEST),
    ("mocha", "Mocha test report (spec)", 11),
    ("node-test", "node --test report (spec or TAP)", 12),
];

impl NpmParser {
    pub fn new(context: &ParseContext) -> Self {
        NpmParser {
            sink: Sink::new(&context.cwd, workspace_globs(&context.cwd)),
            // A banner opens the output, after an empty line that a saved log may have lost.
            prev_blank: true,
            npm: npm::Npm::default(),
            node_crash: node_crash::NodeCrash::default(),
            node_warning: node_warning::NodeWarning::default(),
            webpack: webpack::Webpack::default(),
            esbuild: esbuild::Esbuild::default(),
            vite: vite::Vite::default(),
            next: next::Next::default(),
            prettier: prettier::Prettier::default(),
            tsc: tsc::Tsc::default(),
            eslint: eslint::Eslint::default(),
            jest: jest::Jest::default(),
            vitest: vitest::Vitest::default(),
            mocha: mocha::Mocha::default(),
            node_test: node_test::NodeTest::default(),
            reports: Vec::new(),
            only: None,
        }
    }

    /// A parser that reads one of [`FORMATS`] and nothing else; None for another name.
    pub fn for_format(format: &str, context: &ParseContext) -> Option<Self> {
        let (_, _, index) = FORMATS.iter().find(|(name, _, _)| *name == format)?;
        Some(NpmParser { only: Some(*index), ..NpmParser::new(context) })
    }

    /// One-line JSON reports are Jest's and Vitest's (`--json`).
    fn reads_json_reports(&self) -> bool {
        self.only.is_none_or(|i| i == JEST || i == VITEST)
    }

    /// The sink and every tool recogniser, in the order a line is offered to them.
    fn recognisers(&mut self) -> (&mut Sink, [&mut dyn Recogniser; 13]) {
        let NpmParser {
            sink,
            node_crash,
            node_warning,
            webpack,
            esbuild,
            vite,
            next,
            prettier,
            tsc,
            eslint,
            jest,
            vitest,
            mocha,
            node_test,
            ..
        } = self;
        let recognisers: [&mut dyn Recogniser; 13] = [
            node_crash,
            node_warning,
            webpack,
            esbuild,
            vite,
            next,
            prettier,
            tsc,
            eslint,
            jest,
            vitest,
            mocha,
            node_test,
        ];
        (sink, recognisers)
    }

    /// Offers the line to the tool recognisers in turn (or to the one format read); true when
    /// one took it.
    fn offer(&mut self, ln: &Ln<'_>) -> bool {
        let only = self.only;
        let (sink, recognisers) = self.recognisers();
        match only {
            Some(index) => recognisers.into_iter().nth(index).is_some_and(|r| r.feed(ln, sink)),
            None => recognisers.into_iter().any(|r| r.feed(ln, sink)),
        }
    }

    /// A parser of one format: its JSON form, then its recogniser.
    fn feed_format(&mut self, index: usize, ln: &Ln<'_>) {
        let text = ln.text;
        if index == ESLINT && text.starts_with('[') && eslint::feed_json(ln, &mut self.sink) {
            return;
        }
        if (index == JEST || index == VITEST)
            && text.starts_with('{')
            && let Some(report) = json_report::from_line(text)
        {
            self.reports.push(report);
            return;
        }
        self.offer(ln);
    }

    fn flush_tools(&mut self) {
        let (sink, recognisers) = self.recognisers();
        for recogniser in recognisers {
            recogniser.flush(sink);
        }
    }
}

impl Parser for NpmParser {
    fn feed(&mut self, line: Line<'_>) {
        let text = line.text();
        let ln = Ln::new(&text, line.number);
        if let Some(index) = self.only {
            self.feed_format(index, &ln);
            return;
        }
        let prev_blank = std::mem::replace(&mut self.prev_blank, ln.trimmed.is_empty());
        if text.starts_with("npm ") || text.starts_with("> ") || text.starts_with("sh: ") {
            // npm's lines come after a script's output (or before the next one's): its blocks end.
            if self.npm.feed(&ln, prev_blank, &mut self.sink) {
                self.flush_tools();
                return;
            }
        } else {
            self.npm.flush(&mut self.sink);
        }
        if text.starts_with('[') || text.starts_with('{') {
            if eslint::feed_json(&ln, &mut self.sink) {
                return;
            }
            if let Some(report) = json_report::from_line(&text) {
                self.reports.push(report);
                return;
            }
        }
        self.offer(&ln);
    }

    fn finish(&mut self, end: &RunEnd) -> ParseResult {
        self.npm.flush(&mut self.sink);
        self.flush_tools();
        let mut reports = std::mem::take(&mut self.reports);
        if self.reads_json_reports() {
            reports.extend(end.artifacts.iter().filter_map(|path| json_report::from_file(path)));
        }
        for report in reports {
            report.apply(&mut self.sink);
        }
        self.vitest.add_unreported(&mut self.sink);
        let stopped_early = self.sink.stopped_early_text();
        let (diagnostics, summary, failed_tests) = std::mem::take(&mut self.sink).finish();
        let result = ParseResult::new(diagnostics).with_summary(summary).with_failed_tests(failed_tests);
        match stopped_early {
            Some(what) => result.with_stopped_early(what),
            None => result,
        }
    }
}

/// Indices in [`NpmParser::recognisers`] of the formats that also come as JSON.
const ESLINT: usize = 8;
const JEST: usize = 9;
const VITEST: usize = 10;

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

/// `N word` items (`3 failed`, ` 7 passed`) as (word, N); others are skipped.
fn parse_counts<'a>(parts: impl Iterator<Item = &'a str>) -> Vec<(&'a str, u64)> {
    parts
        .filter_map(|part| {
            let (n, word) = part.trim().split_once(' ')?;
            Some((word.trim(), n.parse().ok()?))
        })
        .collect()
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
