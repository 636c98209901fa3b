//! The parser for every dotnet tool: it routes each line to the format that owns it and merges
//! the console with the reports handed over when the run ends.
//!
//! - [`msbuild`]: canonical diagnostic lines (MSBuild, Roslyn, NuGet, SDK, mcs, xbuild, Terminal
//!   Logger), each distinct one once;
//! - [`failure`]: failed tests printed by VSTest, the Terminal Logger, Microsoft.Testing.Platform
//!   and nunit-console;
//! - [`summary`]: the runners' totals;
//! - [`crash`]: a test host or program killed by an unhandled exception;
//! - [`format`]: `dotnet format`'s reports, one per line of a file;
//! - [`report`]: TRX and NUnit XML files.
//!
//! While no block is open, [`triage`] throws away on its bytes a line that none of them would
//! take, before it is decoded as text.

pub mod crash;
pub mod failure;
pub mod format;
pub mod msbuild;
pub mod report;
pub mod summary;
pub mod text;
pub mod triage;

use buildvise_plugin_api::{
    Diagnostic, DiagnosticSet, Line, ParseContext, ParseResult, Parser, RunEnd, Severity, TestSummary, clip,
    relative_to,
};
use failure::{Block, Failure};
use msbuild::Canonical;
use std::collections::HashSet;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use summary::{Counts, Summaries};
use text::{MAX_TEXT, file_stem, indent, is_project_file, strip_ci_timestamp, without_digits};
use triage::{Triage, triage};

/// Notes kept on one build diagnostic (NuGet's dependency paths, related locations).
const MAX_NOTES: usize = 5;

/// The canonical line a following line may continue.
#[derive(Debug)]
struct LastDiagnostic {
    origin: String,
    code: Option<String>,
    severity: Severity,
    /// Whether it was new (a repeat after `Build FAILED.` takes no notes).
    added: bool,
}

/// The formats a tool defined in a config file can name, with their descriptions.
pub const FORMATS: [(&str, &str); 2] =
    [("msbuild", "MSBuild, Roslyn and NuGet diagnostics"), ("vstest", "dotnet test results (VSTest, MTP, NUnit)")];

pub struct DotnetParser {
    cwd: String,
    /// Build diagnostics are read (all tools but a config-defined `vstest`).
    reads_build: bool,
    /// Test results and crashes are read (all tools but a config-defined `msbuild`).
    reads_tests: bool,
    is_test: bool,
    /// `dotnet format`: reports on one line of a file are one diagnostic.
    is_format: bool,
    diagnostics: DiagnosticSet,
    /// Build diagnostics seen, keyed without digits in the message: MSBuild's retry warnings
    /// (`MSB3026 … Beginning retry 3 …`) are one diagnostic.
    seen_build: HashSet<u64>,
    last: Option<LastDiagnostic>,
    block: Option<Block>,
    failed_tests: Vec<String>,
    failed_seen: HashSet<String>,
    /// xunit's `[FAIL]` lines, used only for tests no runner line reported.
    xunit_failures: Vec<(String, u64)>,
    summaries: Summaries,
    /// Inside nunit-console's `Errors and Failures:` section.
    nunit_section: bool,
    crash: Option<Diagnostic>,
    /// The stack printed under the crash's `Unhandled exception.` line, while it is being read.
    crash_stack: Option<crash::Stack>,
    /// The top frame of the crash's stack, once its stack ended.
    crash_frame: Option<(String, u32)>,
    crash_reported: bool,
    /// A test host crashed: its remaining tests never ran.
    host_crashed: bool,
    awaiting_crash_test: bool,
    /// Assemblies that ran (`Test run for …/X.dll`), by file stem.
    test_runs: HashSet<String>,
    /// Projects with build errors, by file stem.
    failed_projects: HashSet<String>,
}

impl DotnetParser {
    pub fn new(context: &ParseContext) -> Self {
        DotnetParser {
            cwd: context.cwd.clone(),
            reads_build: true,
            reads_tests: true,
            is_test: context.tool == "dotnet.test",
            is_format: context.tool == "dotnet.format",
            diagnostics: DiagnosticSet::new(),
            seen_build: HashSet::new(),
            last: None,
            block: None,
            failed_tests: Vec::new(),
            failed_seen: HashSet::new(),
            xunit_failures: Vec::new(),
            summaries: Summaries::default(),
            nunit_section: false,
            crash: None,
            crash_stack: None,
            crash_frame: None,
            crash_reported: false,
            host_crashed: false,
            awaiting_crash_test: false,
            test_runs: HashSet::new(),
            failed_projects: HashSet::new(),
        }
    }

    /// A parser that reads one of [`FORMATS`] and nothing else; None for another name.
    /// `vstest` reads as `dotnet.test` does, build errors counting only towards the projects
    /// that did not build.
    pub fn for_format(format: &str, context: &ParseContext) -> Option<Self> {
        let (reads_build, reads_tests) = match format {
            "msbuild" => (true, false),
            "vstest" => (false, true),
            _ => return None,
        };
        let parser = DotnetParser::new(context);
        Some(DotnetParser { reads_build, reads_tests, is_test: reads_tests, is_format: false, ..parser })
    }

    fn dispatch(&mut self, text: &str, number: u64) {
        let trimmed = text.trim();
        if let Some(stack) = &mut self.crash_stack {
            match stack.feed(trimmed) {
                crash::Take::Frame => {
                    if let Some(range) = self.crash.as_mut().and_then(|c| c.log_range.as_mut()) {
                        range.end = range.end.max(number);
                    }
                    return;
                }
                crash::Take::Maybe => {}
                crash::Take::End => self.end_crash_stack(),
            }
        }
        if trimmed.is_empty() || trimmed.starts_with("##[") {
            return;
        }
        if self.awaiting_crash_test {
            self.awaiting_crash_test = false;
            if let Some(crash) = &mut self.crash {
                crash.test = Some(clip(trimmed, MAX_TEXT).into_owned());
                return;
            }
        }
        if self.reads_tests && self.summaries.feed(trimmed) {
            self.last = None;
            return;
        }
        if self.reads_tests
            && let Some(block) = self.open_block(text, trimmed, number)
        {
            self.block = Some(block);
            self.last = None;
            return;
        }
        if self.marker(text, trimmed, number) {
            return;
        }
        if msbuild::might_be_diagnostic(trimmed.as_bytes())
            && let Some(canonical) = msbuild::parse(trimmed)
        {
            self.canonical(canonical, text, number);
            return;
        }
        self.last = None;
    }

    fn open_block(&self, text: &str, trimmed: &str, number: u64) -> Option<Block> {
        match trimmed.as_bytes().first()? {
            b'F' => Block::vstest(text, number),
            b'f' => Block::mtp(text, number),
            b'0'..=b'9' if self.nunit_section => Block::nunit(trimmed, number),
            _ => None,
        }
    }

    /// Lines that matter without being diagnostics. Returns true when `trimmed` was one.
    fn marker(&mut self, text: &str, trimmed: &str, number: u64) -> bool {
        if self.reads_tests && self.test_marker(trimmed, number) {
            return true;
        }
        // Which projects failed to build counts towards `vstest`'s summary too.
        if text.starts_with("  ")
            && let Some(project) = msbuild::terminal_logger_failed_project(text)
        {
            self.failed_projects.insert(project.to_ascii_lowercase());
            self.last = None;
            return true;
        }
        if !self.reads_build {
            return false;
        }
        if let Some(switch) = trimmed.strip_prefix("Switch: ") {
            self.note_on_last(format!("switch: {switch}"), number);
            return true;
        }
        if (trimmed.ends_with("previous error)") || trimmed.ends_with("previous warning)"))
            && let Some((location, _)) = trimmed.split_once(" (Location of the symbol related to previous")
        {
            self.note_on_last(format!("related: {}", relative_to(location.trim_end_matches(':'), &self.cwd)), number);
            return true;
        }
        false
    }

    /// The test runners' lines that are no failure: which assemblies ran, sections, crashes.
    fn test_marker(&mut self, trimmed: &str, number: u64) -> bool {
        if let Some(rest) = trimmed.strip_prefix("[xUnit.net ") {
            if let Some(name) = rest.strip_suffix("[FAIL]")
                && let Some((_, name)) = name.split_once(']')
            {
                self.xunit_failures.push((name.trim().to_string(), number));
            }
            return true;
        }
        if let Some(rest) = trimmed.strip_prefix("Test run for ") {
            let assembly = rest.rsplit_once(" (").map_or(rest, |(path, _)| path);
            self.test_runs.insert(file_stem(assembly).to_ascii_lowercase());
            self.flush_crash();
            return true;
        }
        if trimmed.starts_with("Errors and Failures:") || trimmed.starts_with("Errors, Failures and Warnings") {
            self.nunit_section = true;
            return true;
        }
        if ["Tests Not Run:", "Run Settings", "Test Run Summary"].iter().any(|p| trimmed.starts_with(p)) {
            self.nunit_section = false;
            return true;
        }
        if let Some(exception) = crash::unhandled_exception(trimmed) {
            // The exception is what the reader needs first; VSTest's own words become a note.
            self.host_crashed |= trimmed.starts_with("The active ");
            let crash = self.crash.get_or_insert_with(|| Diagnostic::error("").with_log_range(number, number));
            let said = std::mem::replace(&mut crash.message, clip(exception, MAX_TEXT).into_owned());
            for note in
                [Some(said.as_str()).filter(|s| !s.is_empty()), crash::abort_reason(trimmed)].into_iter().flatten()
            {
                if crash.notes.len() < MAX_NOTES {
                    crash.notes.push(clip(note, MAX_TEXT).into_owned());
                }
            }
            self.crash_stack = Some(crash::Stack::default());
            self.crash_frame = None;
            return true;
        }
        if trimmed.starts_with("The active test run was aborted")
            || trimmed.starts_with("The active Test Run was aborted")
            || trimmed.starts_with("Test Run Aborted")
        {
            self.host_crashed = true;
            match &mut self.crash {
                Some(crash) => {
                    if crash.notes.len() < MAX_NOTES && !trimmed.starts_with("Test Run Aborted.") {
                        crash.notes.push(clip(trimmed, MAX_TEXT).into_owned());
                    }
                    if let Some(range) = &mut crash.log_range {
                        range.end = range.end.max(number);
                    }
                }
                None => self.crash = Some(Diagnostic::error(clip(trimmed, MAX_TEXT)).with_log_range(number, number)),
            }
            return true;
        }
        if trimmed.starts_with("The test running when the crash occurred:") {
            self.awaiting_crash_test = self.crash.is_some();
            return true;
        }
        false
    }

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

    fn canonical(&mut self, c: Canonical, text: &str, number: u64) {
        if c.code.as_deref() == Some("TESTERROR") {
            if !self.reads_tests {
                return;
            }
            let mut failure = Failure::new("", Some(number));
            failure.code = c.code;
            failure.location = Some((c.origin, c.line));
            self.block = Some(Block::terminal_logger(indent(text), failure));
            self.last = None;
            return;
        }
        if c.indented
            && let Some(last) = &self.last
            && last.origin == c.origin
            && last.code == c.code
            && last.severity == c.severity
        {
            self.note_on_last(c.message, number);
            return;
        }
        if c.severity == Severity::Error {
            let project =
                [Some(c.origin.as_str()), c.project.as_deref()].into_iter().flatten().find(|p| is_project_file(p));
            if let Some(project) = project {
                self.failed_projects.insert(file_stem(project).to_ascii_lowercase());
            }
        }
        if !self.reads_build {
            return;
        }

        let mut d = Diagnostic::new(c.severity, c.message);
        if !c.origin.is_empty() {
            d = d.with_location(relative_to(&c.origin, &self.cwd), c.line, c.column);
        }
        d.end_line = c.end_line;
        d.end_column = c.end_column;
        let code = c.code.clone();
        d.code = c.code;
        d = d.with_log_range(number, number);
        if let Some(help) = c.help {
            d.notes.push(clip(&help, MAX_TEXT).into_owned());
        }
        // When the file is a tool or an SDK .targets file, the project is the only pointer to
        // the culprit.
        let file_is_not_source = !is_project_file(&c.origin)
            && (c.line.is_none() || c.origin.ends_with(".targets") || c.origin.ends_with(".props"));
        if let Some(project) = c.project.filter(|p| file_is_not_source && is_project_file(p)) {
            let project = relative_to(&project, &self.cwd);
            d.notes.push(format!("project: {}", clip(&project, MAX_TEXT)));
        }

        let added = self.seen_build.insert(build_key(&d)) && self.diagnostics.push(d);
        self.last = Some(LastDiagnostic { origin: c.origin, code, severity: c.severity, added });
    }

    fn close_block(&mut self) {
        if let Some(block) = self.block.take() {
            self.add_failure(block.failure);
        }
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

    /// The crash's stack ended: its top frame inside the project locates the crash.
    fn end_crash_stack(&mut self) {
        if let Some(stack) = self.crash_stack.take() {
            self.crash_frame = stack.top_frame(&self.cwd).cloned();
        }
    }

    fn flush_crash(&mut self) {
        self.end_crash_stack();
        if let Some(mut crash) = self.crash.take() {
            if let Some((file, line)) = self.crash_frame.take() {
                crash = crash.with_location(relative_to(&file, &self.cwd), Some(line), None);
            }
            self.diagnostics.push(crash);
            self.crash_reported = true;
        }
        self.awaiting_crash_test = false;
    }

    /// No block takes lines that no prefix announces (a failed test's, a crash's, a summary's):
    /// each line can be judged on its own.
    fn nothing_open(&self) -> bool {
        self.block.is_none() && self.crash_stack.is_none() && !self.awaiting_crash_test && !self.summaries.in_block()
    }

    /// What a test run left out: test projects that did not build, tests after a host crash.
    fn stopped_early(&self, summary: Option<&TestSummary>) -> Option<String> {
        let mut what = Vec::new();
        match summary.and_then(|s| s.projects_build_failed) {
            Some(0) | None => {}
            Some(1) => what.push("1 test project not run: build failed".to_string()),
            Some(n) => what.push(format!("{n} test projects not run: build failed")),
        }
        if self.is_test && self.host_crashed {
            what.push("test host crashed: the rest of its tests did not run".to_string());
        }
        (!what.is_empty()).then(|| what.join("; "))
    }

    /// Test projects that failed to build: projects with build errors that never ran tests.
    fn projects_build_failed(&self) -> u64 {
        self.failed_projects.iter().filter(|p| !self.test_runs.contains(*p)).count() as u64
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
        if self.nothing_open() {
            match triage(line.bytes, self.nunit_section) {
                Triage::Skip => return,
                Triage::Noise => {
                    self.last = None;
                    return;
                }
                Triage::Read => {}
            }
        }
        let text = line.text();
        let text = strip_ci_timestamp(&text);
        if let Some(block) = &mut self.block {
            if block.feed(text, line.number) {
                return;
            }
            self.close_block();
        }
        self.dispatch(text, line.number);
    }

    fn finish(&mut self, end: &RunEnd) -> ParseResult {
        self.close_block();
        self.flush_crash();

        let mut from_reports: Option<Counts> = None;
        for path in &end.artifacts {
            let Some(report) = report::read(path) else {
                continue;
            };
            Counts::add(&mut from_reports, report.counts);
            for failure in report.failures {
                if failure.name.is_empty() || !self.failed_seen.contains(&failure.name) {
                    self.add_failure(failure);
                }
            }
            if !self.crash_reported {
                for error in report.run_errors {
                    self.diagnostics.push(Diagnostic::error(clip(&error, MAX_TEXT)));
                }
            }
        }
        for (name, number) in std::mem::take(&mut self.xunit_failures) {
            if !self.failed_seen.contains(&name) {
                self.add_failure(Failure::new(&name, Some(number)));
            }
        }

        let summary = if self.is_test {
            let failed = self.failed_tests.len() as u64;
            let counts =
                self.summaries.best().or(from_reports).unwrap_or(Counts { failed, total: failed, ..Counts::default() });
            let mut summary = TestSummary::new(counts.passed, counts.failed, counts.skipped, counts.total);
            summary.projects_build_failed = Some(self.projects_build_failed());
            Some(summary)
        } else {
            None
        };
        let stopped = self.stopped_early(summary.as_ref());
        let mut diagnostics = std::mem::take(&mut self.diagnostics).into_vec();
        if self.is_format {
            diagnostics = format::one_per_line(diagnostics);
        }
        let result = ParseResult::new(diagnostics)
            .with_summary(summary)
            .with_failed_tests(std::mem::take(&mut self.failed_tests));
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
