//! The parser for every dotnet tool: one recogniser per kind of line, and at the end the console
//! merged with the reports handed over (TRX, NUnit XML).
//!
//! - [`results`]: every test VSTest's result lines name, for the JUnit report of a saved log;
//! - [`failure`]: failed tests printed by VSTest, the Terminal Logger, Microsoft.Testing.Platform
//!   and nunit-console;
//! - [`crash`]: a test host or program killed by an unhandled exception;
//! - [`summary`]: the runners' totals;
//! - [`runs`]: which test assemblies ran, and nunit-console's sections;
//! - [`msbuild`]: canonical diagnostic lines (MSBuild, Roslyn, NuGet, SDK, mcs, xbuild, Terminal
//!   Logger), each distinct one once, and the notes that follow them;
//! - [`format`]: `dotnet format`'s reports, one per line of a file;
//! - [`report`]: TRX and NUnit XML files.
//!
//! A line no recogniser takes ends the last diagnostic's notes, unless it is blank or a CI
//! command (`##[group]`).

pub mod crash;
pub mod failure;
pub mod format;
pub mod msbuild;
pub mod report;
pub mod results;
pub mod runs;
pub mod summary;
pub mod text;

use buildvise_plugin_api::{
    Diagnostic, DiagnosticSet, Head, Line, ParseContext, ParseResult, Parser, Recognisers, RunEnd, Severity, TestCases,
    TestSummary, clip,
};
use failure::Failure;
use std::collections::HashSet;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use summary::{Counts, Summaries};
use text::{MAX_TEXT, ci_timestamp_len, without_digits};

/// Notes kept on one build diagnostic (NuGet's dependency paths, related locations).
const MAX_NOTES: usize = 5;

/// The formats a tool defined in a config file can name, with their descriptions.
pub const FORMATS: [(&str, &str); 2] =
    [("msbuild", "MSBuild, Roslyn and NuGet diagnostics"), ("vstest", "dotnet test results (VSTest, MTP, NUnit)")];

/// The canonical line a following line may continue.
#[derive(Debug)]
struct LastDiagnostic {
    origin: String,
    code: Option<String>,
    severity: Severity,
    /// Whether it was new (a repeat after `Build FAILED.` takes no notes).
    added: bool,
}

/// What the recognisers found, and what they share.
pub struct Found {
    cwd: String,
    /// Build diagnostics are read (all tools but a config-defined `vstest`).
    reads_build: bool,
    diagnostics: DiagnosticSet,
    /// Build diagnostics seen, keyed without digits in the message: MSBuild's retry warnings
    /// (`MSB3026 … Beginning retry 3 …`) are one diagnostic.
    seen_build: HashSet<u64>,
    last: Option<LastDiagnostic>,
    failed_tests: Vec<String>,
    failed_seen: HashSet<String>,
    /// xunit's `[FAIL]` lines, used only for tests no runner line reported.
    xunit_failures: Vec<(String, u64)>,
    /// Inside nunit-console's `Errors and Failures:` section.
    nunit_section: bool,
    crash_reported: bool,
    /// A test host crashed: its remaining tests never ran.
    host_crashed: bool,
    /// Assemblies that ran (`Test run for …/X.dll`), by file stem.
    test_runs: HashSet<String>,
    /// Projects with build errors, by file stem.
    failed_projects: HashSet<String>,
    /// The runners' totals, once the output ended.
    counts: Option<Counts>,
    /// The tests VSTest's result lines named, used when no report names them.
    console_tests: TestCases,
}

impl Found {
    fn note_on_last(&mut self, note: String, number: u64) {
        if let Some(last) = &self.last
            && last.added
            && let Some(d) = self.diagnostics.last_mut()
        {
            if d.notes.len() < MAX_NOTES {
                d.notes.push(clip(&note, MAX_TEXT).into_owned());
            }
            if let Some(range) = &mut d.log_range {
                range.end = range.end.max(number);
            }
        }
    }

    /// Adds a build diagnostic unless one like it (digits aside) was added; true when it was new.
    fn add_build(&mut self, d: Diagnostic) -> bool {
        self.seen_build.insert(build_key(&d)) && self.diagnostics.push(d)
    }

    /// Records a failed test; a test reported twice (xunit's `[FAIL]` and VSTest's `Failed`, a
    /// re-logged `TESTERROR`, the same test on two target frameworks) is one failure.
    fn add_failure(&mut self, failure: Failure) {
        if !failure.name.is_empty() {
            if !self.failed_seen.insert(failure.name.clone()) {
                return;
            }
            self.failed_tests.push(failure.name.clone());
        }
        self.diagnostics.push(failure.into_diagnostic(&self.cwd));
    }

    /// Test projects that failed to build: projects with build errors that never ran tests.
    fn projects_build_failed(&self) -> u64 {
        self.failed_projects.iter().filter(|p| !self.test_runs.contains(*p)).count() as u64
    }
}

/// Blank, or a CI command (`##[group]`): a line that ends nothing and means nothing. `line` is
/// without its indentation (or its surrounding whitespace).
fn is_skipped(line: &[u8]) -> bool {
    line.is_empty() || line.starts_with(b"##[")
}

pub struct DotnetParser {
    recognisers: Recognisers<Found>,
    found: Found,
    is_test: bool,
    /// `dotnet format`: reports on one line of a file are one diagnostic.
    is_format: bool,
}

impl DotnetParser {
    pub fn new(context: &ParseContext) -> Self {
        // In the order a line is offered: a failed test's block and a crash's stack first, as
        // they take lines that no prefix announces.
        let recognisers = Recognisers::new()
            .add_in(&["vstest"], results::Results)
            .add_in(&["vstest"], failure::Failures::default())
            .add_in(&["vstest"], crash::Crashes::default())
            .add_in(&["vstest"], Summaries::default())
            .add_in(&["vstest"], runs::Runs)
            .add_in(&["msbuild", "vstest"], msbuild::BuildLines);
        let found = Found {
            cwd: context.cwd.clone(),
            reads_build: true,
            diagnostics: DiagnosticSet::new(),
            seen_build: HashSet::new(),
            last: None,
            failed_tests: Vec::new(),
            failed_seen: HashSet::new(),
            xunit_failures: Vec::new(),
            nunit_section: false,
            crash_reported: false,
            host_crashed: false,
            test_runs: HashSet::new(),
            failed_projects: HashSet::new(),
            counts: None,
            console_tests: TestCases::new(),
        };
        DotnetParser {
            recognisers,
            found,
            is_test: context.tool == "dotnet.test",
            is_format: context.tool == "dotnet.format",
        }
    }

    /// A parser that reads one of [`FORMATS`] and nothing else; None for another name.
    /// `vstest` reads as `dotnet.test` does, build errors counting only towards the projects
    /// that did not build.
    pub fn for_format(format: &str, context: &ParseContext) -> Option<Self> {
        let parser = DotnetParser::new(context);
        let recognisers = parser.recognisers.only(format)?;
        let found = Found { reads_build: format == "msbuild", ..parser.found };
        Some(DotnetParser { recognisers, found, is_test: format == "vstest", is_format: false })
    }

    /// What a test run left out: test projects that did not build, tests after a host crash.
    fn stopped_early(&self, summary: Option<&TestSummary>) -> Option<String> {
        let mut what = Vec::new();
        match summary.and_then(|s| s.projects_build_failed) {
            Some(0) | None => {}
            Some(1) => what.push("1 test project not run: build failed".to_string()),
            Some(n) => what.push(format!("{n} test projects not run: build failed")),
        }
        if self.is_test && self.found.host_crashed {
            what.push("test host crashed: the rest of its tests did not run".to_string());
        }
        (!what.is_empty()).then(|| what.join("; "))
    }
}

/// Identity of a build diagnostic with the digits of its message blinded.
fn build_key(d: &Diagnostic) -> u64 {
    let mut h = DefaultHasher::new();
    (d.severity, &d.file, d.line, d.column, &d.code, without_digits(&d.message)).hash(&mut h);
    h.finish()
}

impl Parser for DotnetParser {
    fn feed(&mut self, line: Line<'_>) {
        // CI logs put a timestamp before every line; no recogniser wants it.
        let bytes = &line.bytes[ci_timestamp_len(line.bytes)..];
        let line = Line::new(line.stream, line.number, bytes);
        let head = Head::new(&line);
        if !self.recognisers.feed_head(&head, &mut self.found) && !is_skipped(head.unindented) {
            self.found.last = None;
        }
    }

    fn finish(&mut self, end: &RunEnd) -> ParseResult {
        self.recognisers.finish(&mut self.found);
        let found = &mut self.found;

        let mut from_reports: Option<Counts> = None;
        let mut tests = Vec::new();
        for path in &end.artifacts {
            let Some(report) = report::read(path) else {
                continue;
            };
            Counts::add(&mut from_reports, report.counts);
            tests.extend(report.tests);
            for failure in report.failures {
                if failure.name.is_empty() || !found.failed_seen.contains(&failure.name) {
                    found.add_failure(failure);
                }
            }
            if !found.crash_reported {
                for error in report.run_errors {
                    found.diagnostics.push(Diagnostic::error(clip(&error, MAX_TEXT)));
                }
            }
        }
        for (name, number) in std::mem::take(&mut found.xunit_failures) {
            if !found.failed_seen.contains(&name) {
                found.add_failure(Failure::new(&name, Some(number)));
            }
        }

        let summary = if self.is_test {
            let failed = found.failed_tests.len() as u64;
            let counts = found.counts.or(from_reports).unwrap_or(Counts { failed, total: failed, ..Counts::default() });
            let mut summary = TestSummary::new(counts.passed, counts.failed, counts.skipped, counts.total);
            summary.projects_build_failed = Some(found.projects_build_failed());
            Some(summary)
        } else {
            None
        };
        // A report names every test of its run; the console, only those its verbosity prints.
        if tests.is_empty() {
            tests = std::mem::take(&mut found.console_tests).into_vec();
        }
        let mut diagnostics = std::mem::take(&mut found.diagnostics).into_vec();
        let failed_tests = std::mem::take(&mut found.failed_tests);
        let stopped = self.stopped_early(summary.as_ref());
        if self.is_format {
            diagnostics = format::one_per_line(diagnostics);
        }
        let result =
            ParseResult::new(diagnostics).with_summary(summary).with_failed_tests(failed_tests).with_tests(tests);
        match stopped {
            Some(what) => result.with_stopped_early(what),
            None => result,
        }
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod format_tests;
