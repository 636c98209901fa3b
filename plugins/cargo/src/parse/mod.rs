//! The parser for what cargo prints: rustc, clippy and rustdoc diagnostics (human text, short
//! form and `--message-format=json`), cargo's own errors, libtest's and cargo-nextest's reports of
//! a test run, the program's panic or error under `cargo run`, and `cargo fmt --check`'s diffs.
//!
//! Lines are read once, in arrival order, each offered to the recognisers of the formats the
//! tool's output may hold ([`recognisers`]), which share what they find ([`Findings`]). A
//! diagnostic that spans lines (a rustc block, a `Caused by:` chain, a panic and its message) is
//! gathered until it ends. Streams are kept apart where it matters (a panic's message is the next
//! line of the panic's own stream), because `buildvise parse` feeds all of stdout before all of
//! stderr.

mod backtrace;
mod block;
mod diagnostics;
mod findings;
mod fmt;
mod json;
mod libtest;
mod lints;
mod nextest;
mod panic;
mod panics;
mod run;
mod short;
mod should_panic;
mod status;
mod text;

use buildvise_plugin_api::{
    Diagnostic, DiagnosticSet, Line, ParseContext, ParseResult, Parser, Progress, Recognisers, RunEnd, Severity, Stream,
};
use diagnostics::Diagnostics;
use findings::{Findings, Kind, Reads};
use fmt::FmtCheck;
use json::JsonMessages;
use libtest::LibtestReport;
use nextest::NextestRun;
use panics::Panics;
use run::ProgramOutput;
use short::ShortForm;
use should_panic::ShouldPanicNotes;
use status::TargetStarts;
use std::collections::{HashMap, HashSet};
use text::{MAX_MESSAGE, MAX_NOTE, clip};

/// What cargo's `test failed, to rerun pass …` means when nothing follows it: without
/// `--no-fail-fast` cargo stopped there, and it never says which targets it left out.
const STOPPED_EARLY: &str = "later test targets not run; add --no-fail-fast";

/// The formats a tool defined in a config file can name, with their descriptions; each is the
/// parser of the tool it comes from with only that format's recognisers on.
pub(crate) const FORMATS: [(&str, &str); 3] = [
    ("rustc", "rustc, clippy and rustdoc diagnostics, cargo's errors"),
    ("libtest", "cargo test / libtest report and panics"),
    ("nextest", "cargo nextest report"),
];

/// The recognisers of a tool's output, in the order a line is offered to them, each with the
/// formats it reads for a tool defined in a config file. A reader of something that spans lines
/// comes before the readers of the lines it holds (a panic's message may look like anything);
/// the tools' own formats come where they take over from cargo's.
fn recognisers(kind: Kind) -> Recognisers<Findings> {
    let mut recognisers = Recognisers::new().add_in(&["libtest"], Panics::default());
    if kind == Kind::Nextest {
        recognisers = recognisers.add_in(&["nextest"], NextestRun::default());
    }
    if kind == Kind::Run {
        recognisers = recognisers.add(ProgramOutput);
    }
    if kind == Kind::Fmt {
        recognisers = recognisers.add(FmtCheck::default());
    }
    recognisers
        .add_in(&["rustc", "libtest"], Diagnostics::default())
        .add_in(&["rustc", "libtest"], JsonMessages)
        .add_in(&["rustc", "libtest"], TargetStarts)
        .add_in(&["libtest"], ShouldPanicNotes::default())
        .add_in(&["libtest"], LibtestReport::default())
        .add_in(&["rustc"], ShortForm)
}

pub(crate) struct CargoParser {
    recognisers: Recognisers<Findings>,
    found: Findings,
}

impl CargoParser {
    pub(crate) fn new(context: &ParseContext) -> Self {
        let found = Findings::new(context, Reads::ALL);
        CargoParser { recognisers: recognisers(found.kind), found }
    }

    /// A parser that reads one of [`FORMATS`] and nothing else; None for another name. Each
    /// reads as the tool it comes from: `libtest` as `cargo.test`, `nextest` as `cargo.nextest`
    /// (which leaves the build to `rustc`), and `rustc` as `cargo.build`, which knows no tests.
    pub(crate) fn for_format(format: &str, context: &ParseContext) -> Option<Self> {
        let tool = match format {
            "libtest" => "cargo.test",
            "nextest" => "cargo.nextest",
            _ => "cargo.build",
        };
        let mut context = context.clone();
        context.tool = tool.to_string();
        let found = Findings::new(&context, Reads::only(format));
        Some(CargoParser { recognisers: recognisers(found.kind).only(format)?, found })
    }
}

impl Parser for CargoParser {
    fn feed(&mut self, line: Line<'_>) {
        self.recognisers.feed(&line, &mut self.found);
        if std::mem::take(&mut self.found.cargo_output_ended) {
            self.recognisers.flush(&mut self.found);
        }
    }

    fn progress(&self) -> Progress {
        let found = &self.found;
        let count = |severity| found.diagnostics.iter().filter(|d| d.severity == severity).count() as u64;
        Progress::new(count(Severity::Error), count(Severity::Warning), found.tests.verdicts)
            .with_tests_total(found.tests.seen.then_some(found.tests.announced))
    }

    fn finish(&mut self, end: &RunEnd) -> ParseResult {
        // The block being read ends first, then each recogniser finishes: a block left open is
        // reported before a panic left open on the other stream.
        self.recognisers.flush(&mut self.found);
        self.recognisers.finish(&mut self.found);
        let found = &mut self.found;
        let program = std::mem::take(&mut found.program);
        let tests = std::mem::take(&mut found.tests);
        let side_panics = std::mem::take(&mut found.side_panics);
        let (lints, crashed) = (&found.lints, &found.crashed);
        let mut kept = DiagnosticSet::new();
        let mut diagnostics = std::mem::take(&mut found.diagnostics).into_vec();
        panics::keep_failing_panics(&mut diagnostics, &found.test_panics);
        // The streams were apart: what stdout held before cargo's first stderr line was the
        // program's, read as cargo's only in case the log was one stream.
        if let (true, Some((first, last))) = (program.seen_stderr, program.stdout_before_stderr) {
            diagnostics.retain(|d| {
                d.log_range.is_none_or(|r| r.start < first || r.start > last || program.json_lines.contains(&r.start))
            });
        }
        // std exits with 1 after printing a returned `Err`; the same line in a run that ended
        // otherwise was only the program talking.
        if let Some(error) = program.main_error
            && end.exit_code == Some(1)
            && !(program.seen_stderr && error.stream == Stream::Stdout)
        {
            diagnostics.push(error.into_diagnostic());
        }
        diagnostics.extend(std::mem::take(&mut found.unformatted));
        // Each test's first diagnostic, by test: a lookup per side panic, not a scan.
        let mut first_of_test: HashMap<String, usize> = HashMap::new();
        for (i, d) in diagnostics.iter().enumerate() {
            if let Some(test) = &d.test {
                first_of_test.entry(test.clone()).or_insert(i);
            }
        }
        for side in side_panics {
            match side.test.as_ref().and_then(|test| first_of_test.get(test)) {
                Some(&own) => {
                    let file = side.file.as_deref().unwrap_or("?");
                    let line = side.line.unwrap_or(0);
                    // The message is clipped already; the path, as printed, can be any length.
                    let note = format!("another thread panicked at {file}:{line}: {}", side.message);
                    diagnostics[own].notes.push(clip(&note, MAX_NOTE + MAX_MESSAGE));
                }
                None => {
                    if let Some(test) = &side.test {
                        first_of_test.insert(test.clone(), diagnostics.len());
                    }
                    diagnostics.push(side);
                }
            }
        }
        for mut d in diagnostics {
            // A passing should_panic test prints its panic too under --nocapture.
            if let Some(test) = &d.test
                && !tests.may_have_failed(test)
                && !crashed.contains(test)
            {
                continue;
            }
            if let Some(expected) = d.test.as_ref().and_then(|t| found.expected_strings.remove(t)) {
                let message = format!("panic did not contain {expected}: {}", d.message);
                d.message = clip(&message, MAX_MESSAGE);
            }
            // The first diagnostic of a lint names it; one printed earlier (another crate,
            // another stream) learns it now.
            if d.code.is_none() && d.file.is_some() && d.test.is_none() {
                d.code = lints.learned_only(&d.message);
            }
            kept.push(d);
        }
        let finished = tests.finish();
        let reported: HashSet<String> = kept.iter().filter_map(|d| d.test.clone()).collect();
        let mut failed_tests = Vec::with_capacity(finished.failed.len());
        for failed in finished.failed {
            if !reported.contains(&failed.name) {
                // A test that failed without a panic (it returned Err, or was killed).
                let message = failed.first_line.unwrap_or_else(|| "test failed".into());
                let mut d = Diagnostic::error(message).with_test(failed.name.clone());
                if let Some((start, end)) = failed.lines {
                    d = d.with_log_range(start, end);
                }
                kept.push(d);
            }
            failed_tests.push(failed.name);
        }
        let result = ParseResult::new(kept.into_vec())
            .with_summary(finished.summary)
            .with_failed_tests(failed_tests)
            .with_tests(finished.tests.into_vec());
        if let Some(run) = found.nextest.take() {
            let mut result =
                result.with_summary(run.summary).with_failed_tests(run.failed_tests).with_tests(run.tests.into_vec());
            result.diagnostics.extend(run.diagnostics);
            result.stopped_early = run.stopped_early;
            return result;
        }
        match &found.last_failed_target {
            Some(_) if found.no_fail_fast => result,
            // The JSON stream listed the targets: count the ones that never started.
            Some(_) if !found.test_targets.is_empty() => {
                match found.test_targets.len().saturating_sub(found.targets_started) {
                    0 => result,
                    1 => result.with_stopped_early("1 test target not run; add --no-fail-fast"),
                    n => result.with_stopped_early(format!("{n} test targets not run; add --no-fail-fast")),
                }
            }
            // Doctests run after every test binary; a lone `--doc` (no `-p`: one package) was the
            // last target there was.
            Some(rerun) if rerun != "--doc" => result.with_stopped_early(STOPPED_EARLY),
            _ => result,
        }
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod format_tests;
