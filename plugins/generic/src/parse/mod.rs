//! Reading `file:line: message` output, one recogniser per format.
//!
//! A parser holds the recognisers of its tool's formats, in order, once per stream (so nothing
//! depends on how stdout and stderr interleave); each line goes to the first that takes it. Most
//! of these formats are a line that only a regex tells apart, so their recognisers want every
//! line. What they find is gathered in [`Found`], shared by both streams, and assembled when the
//! run ends: failures that only repeat what another line explains (make's `*** [target] Error 1`,
//! `collect2: error: ld returned 1 exit status`, go's `FAIL pkg [build failed]`) are kept only
//! when nothing else explains the failure.

mod fallback;
mod gcc;
mod go;
mod make;
mod mypy;
mod pyright;
mod ruff;
mod shellcheck;

use buildvise_plugin_api::{
    Diagnostic, DiagnosticSet, FormatSpec, Line, LogRange, ParseContext, ParseResult, Parser, Progress, Recognisers,
    RunEnd, Severity, Stream, TestSummary, clip, relative_to,
};

/// Longest headline or note kept, in bytes.
const MAX_TEXT: usize = 400;

/// The formats this plugin exports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Gcc,
    Make,
    Go,
    Mypy,
    Ruff,
    Pyright,
    Shellcheck,
    Fallback,
}

/// `(format, exported name, description)`.
const FORMATS: &[(Format, &str, &str)] = &[
    (Format::Gcc, "gcc", "gcc/clang diagnostics and ld errors"),
    (Format::Make, "make", "GNU make's own errors"),
    (Format::Go, "go", "go build, vet and test output"),
    (Format::Mypy, "mypy", "mypy errors and notes"),
    (Format::Ruff, "ruff", "ruff check findings"),
    (Format::Pyright, "pyright", "pyright diagnostics"),
    (Format::Shellcheck, "shellcheck", "shellcheck -f gcc findings"),
    (Format::Fallback, "fallback", "any file:line[:col]: [severity:] message"),
];

pub(crate) fn formats() -> Vec<FormatSpec> {
    FORMATS.iter().map(|(_, name, description)| FormatSpec::new(*name, *description)).collect()
}

impl Format {
    pub(crate) fn named(name: &str) -> Option<Format> {
        FORMATS.iter().find(|(_, n, _)| *n == name).map(|(f, ..)| *f)
    }

    /// Adds this format's recogniser to `recognisers`, after those already there.
    fn add_to(self, recognisers: Recognisers<Found>, cwd: &str) -> Recognisers<Found> {
        match self {
            Format::Gcc => recognisers.add(gcc::Gcc::default()),
            Format::Make => recognisers.add(make::Make),
            Format::Go => recognisers.add(go::Go::new(cwd)),
            Format::Mypy => recognisers.add(mypy::Mypy::default()),
            Format::Ruff => recognisers.add(ruff::Ruff::default()),
            Format::Pyright => recognisers.add(pyright::Pyright::default()),
            Format::Shellcheck => recognisers.add(shellcheck::Shellcheck),
            Format::Fallback => recognisers.add(fallback::Fallback),
        }
    }
}

/// What the recognisers found, shared by both streams.
pub(crate) struct Found {
    cwd: String,
    /// Directories make said it entered (`make[1]: Entering directory '…'`), innermost last:
    /// relative paths printed inside are relative to the innermost.
    dirs: Vec<String>,
    diagnostics: DiagnosticSet,
    /// Failures that only report that something above failed; kept when nothing else is an error.
    consequences: Vec<Diagnostic>,
    /// Matches without a severity word: errors when the run failed, warnings otherwise.
    unsure: Vec<Diagnostic>,
    summary: Option<TestSummary>,
    failed_tests: Vec<String>,
}

impl Found {
    /// `file` as the answer shows it: resolved in make's current directory, relative to the cwd.
    fn path(&self, file: &str) -> String {
        match self.dirs.last() {
            Some(dir) if !buildvise_plugin_api::is_absolute(file) => {
                relative_to(&format!("{}/{}", dir.trim_end_matches('/'), file.trim_start_matches("./")), &self.cwd)
            }
            _ => relative_to(file, &self.cwd),
        }
    }

    /// Adds `d`; true when it was new.
    /// Adds `d` unless it says nothing (a line cut right after `make: *** `).
    fn push(&mut self, d: Diagnostic) -> bool {
        !d.message.trim().is_empty() && self.diagnostics.push(d)
    }

    /// The last diagnostic added, to attach a note or extend its log range.
    fn last_mut(&mut self) -> Option<&mut Diagnostic> {
        self.diagnostics.last_mut()
    }
}

/// A diagnostic at `file:line[:col]`, printed on log line `number`.
fn at(severity: Severity, message: &str, file: String, line: Option<u32>, col: Option<u32>, number: u64) -> Diagnostic {
    Diagnostic::new(severity, clip(message.trim(), MAX_TEXT))
        .with_location(file, line, col)
        .with_log_range(number, number)
}

/// Adds `note` to `d`, at most four: the first notes say what matters, later ones repeat.
fn add_note(d: &mut Diagnostic, note: &str, number: u64) {
    if d.notes.len() < 4 {
        d.notes.push(clip(note.trim(), MAX_TEXT).into_owned());
    }
    extend(d, number);
}

/// Extends `d`'s log range to line `number`.
fn extend(d: &mut Diagnostic, number: u64) {
    let start = d.log_range.map_or(number, |r| r.start);
    d.log_range = Some(LogRange::new(start, number));
}

fn int(text: Option<regex::Match<'_>>) -> Option<u32> {
    text.and_then(|m| m.as_str().parse().ok())
}

pub struct GenericParser {
    /// Stdout's recognisers, then stderr's.
    lanes: [Recognisers<Found>; 2],
    found: Found,
}

impl GenericParser {
    pub fn new(context: &ParseContext, formats: &[Format]) -> Self {
        let lane = || formats.iter().fold(Recognisers::new(), |lane, f| f.add_to(lane, &context.cwd));
        GenericParser {
            lanes: [lane(), lane()],
            found: Found {
                cwd: context.cwd.clone(),
                dirs: Vec::new(),
                diagnostics: DiagnosticSet::new(),
                consequences: Vec::new(),
                unsure: Vec::new(),
                summary: None,
                failed_tests: Vec::new(),
            },
        }
    }
}

impl Parser for GenericParser {
    fn feed(&mut self, line: Line<'_>) {
        let lane = match line.stream {
            Stream::Stderr => &mut self.lanes[1],
            _ => &mut self.lanes[0],
        };
        lane.feed(&line, &mut self.found);
    }

    fn progress(&self) -> Progress {
        let count = |s: Severity| self.found.diagnostics.iter().filter(|d| d.severity == s).count() as u64;
        Progress::new(count(Severity::Error), count(Severity::Warning), 0)
    }

    fn finish(&mut self, end: &RunEnd) -> ParseResult {
        for lane in &mut self.lanes {
            lane.finish(&mut self.found);
        }
        let found = &mut self.found;
        let failed = end.exit_code != Some(0);
        for mut d in std::mem::take(&mut found.unsure) {
            d.severity = if failed { Severity::Error } else { Severity::Warning };
            found.diagnostics.push(d);
        }
        if !found.diagnostics.iter().any(|d| d.severity == Severity::Error) {
            for d in std::mem::take(&mut found.consequences) {
                found.diagnostics.push(d);
            }
        }
        let diagnostics = std::mem::take(&mut found.diagnostics).into_vec();
        ParseResult::new(diagnostics)
            .with_summary(found.summary.take())
            .with_failed_tests(std::mem::take(&mut found.failed_tests))
    }
}

#[cfg(test)]
pub(crate) mod testing {
    use super::{Format, GenericParser};
    use buildvise_plugin_api::testing::parse_log;
    use buildvise_plugin_api::{Diagnostic, ParseContext, ParseResult, Severity};

    pub(crate) const CWD: &str = "/home/dev/src/demo";

    /// Parses a combined log with the readers of `formats`.
    pub(crate) fn parse(formats: &[Format], log: &str, exit_code: i32) -> ParseResult {
        let parser = GenericParser::new(&ParseContext::new("t", CWD), formats);
        parse_log(Box::new(parser), log.as_bytes(), exit_code)
    }

    /// `severity file:line:col message [code]` per diagnostic, to compare in one assertion.
    pub(crate) fn brief(result: &ParseResult) -> Vec<String> {
        result.diagnostics.iter().map(one).collect()
    }

    fn one(d: &Diagnostic) -> String {
        let severity = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            _ => "info",
        };
        let mut s = format!("{severity} {}", d.file.as_deref().unwrap_or("-"));
        if let Some(line) = d.line {
            s += &format!(":{line}");
        }
        if let Some(col) = d.column {
            s += &format!(":{col}");
        }
        s += &format!(" {}", d.message);
        if let Some(code) = &d.code {
            s += &format!(" [{code}]");
        }
        s
    }
}
