//! Reading `file:line: message` output, one [`Recogniser`] per format, each in a file of its own.
//!
//! [`recognisers`] registers them all, in the order a line is offered to them; a parser keeps
//! those of the formats its tool reads (a tool defined in a config file: one format), once per
//! stream, so nothing depends on how stdout and stderr interleave. What they find is gathered in
//! [`Found`], shared by both streams, and assembled when the run ends: failures that only repeat
//! what another line explains (make's `*** [target] Error 1`, `collect2: error: ld returned 1
//! exit status`, go's `FAIL pkg [build failed]`) are kept only when nothing else explains the
//! failure.

mod automake;
mod cmake;
mod ctest;
mod fallback;
mod gcc;
mod go;
mod gtest;
mod make;
mod mypy;
mod ninja;
mod pyright;
mod ruff;
mod sanitizer;
mod shellcheck;

use buildvise_plugin_api::{
    Diagnostic, DiagnosticSet, FormatSpec, Line, LogRange, ParseContext, ParseResult, Parser, Progress, Recogniser,
    Recognisers, RunEnd, Severity, Stream, TestCases, TestSummary, clip, relative_to,
};

/// Longest headline or note kept, in bytes.
const MAX_TEXT: usize = 400;

/// The formats this plugin exports, `(name, description)`: each is the name its recogniser is
/// registered with in [`recognisers`].
const FORMATS: &[(&str, &str)] = &[
    ("gcc", "gcc/clang diagnostics, ld errors and sanitizer reports"),
    ("make", "GNU make's own errors"),
    ("cmake", "CMake's errors and warnings"),
    ("ninja", "ninja's own errors"),
    ("ctest", "ctest's test report"),
    ("automake", "make check's test harness report"),
    ("gtest", "GoogleTest's test report"),
    ("go", "go build, vet and test output"),
    ("mypy", "mypy errors and notes"),
    ("ruff", "ruff check findings"),
    ("pyright", "pyright diagnostics"),
    ("shellcheck", "shellcheck -f gcc findings"),
    ("fallback", "any file:line[:col]: [severity:] message"),
];

pub(crate) fn formats() -> Vec<FormatSpec> {
    FORMATS.iter().map(|(name, description)| FormatSpec::new(*name, *description)).collect()
}

/// Whether `format` is one this plugin exports.
pub(crate) fn exports(format: &str) -> bool {
    FORMATS.iter().any(|(name, _)| *name == format)
}

/// The recognisers of the formats in `reads`, in the order a line is offered to them: make's
/// before gcc's, for a makefile's `Makefile:5: warning: …` has gcc's shape too, and the last
/// resort last.
fn recognisers(reads: &[&str]) -> Recognisers<Found> {
    Registration::of(reads)
        .add_in(&["make"], make::Make)
        .add_in(&["cmake"], cmake::Cmake::default())
        .add_in(&["ninja"], ninja::Ninja)
        .add_in(&["ctest"], ctest::Ctest::default())
        .add_in(&["automake"], automake::Automake::default())
        .add_in(&["gtest"], gtest::Gtest::default())
        .add_in(&["gcc"], gcc::Gcc::default())
        .add_in(&["gcc"], sanitizer::Sanitizer)
        .add_in(&["go"], go::Go::default())
        .add_in(&["mypy"], mypy::Mypy::default())
        .add_in(&["ruff"], ruff::Ruff::default())
        .add_in(&["pyright"], pyright::Pyright::default())
        .add_in(&["shellcheck"], shellcheck::Shellcheck)
        .add_in(&["fallback"], fallback::Fallback)
        .recognisers
}

/// Registers the recognisers of some formats and leaves the others out: a tool reads several
/// formats, and [`Recognisers::only`] keeps one.
struct Registration<'a> {
    reads: &'a [&'a str],
    recognisers: Recognisers<Found>,
}

impl<'a> Registration<'a> {
    fn of(reads: &'a [&'a str]) -> Self {
        Registration { reads, recognisers: Recognisers::new() }
    }

    fn add_in(mut self, formats: &'static [&'static str], recogniser: impl Recogniser<Found> + 'static) -> Self {
        if formats.iter().any(|format| self.reads.contains(format)) {
            self.recognisers = self.recognisers.add_in(formats, recogniser);
        }
        self
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
    /// Every test named, for reports: each recogniser adds those of the level the summary counts
    /// (ctest's programs rather than the GoogleTest cases they print), so no test is there twice.
    tests: TestCases,
}

impl Found {
    /// `file` as the answer shows it: resolved in make's current directory, relative to the cwd.
    fn path(&self, file: &str) -> String {
        match self.dirs.last() {
            Some(dir) if !buildvise_plugin_api::is_absolute(file) => {
                relative_to(&without_dot_dirs(&format!("{}/{}", dir.trim_end_matches('/'), file)), &self.cwd)
            }
            _ => relative_to(&without_dot_dirs(file), &self.cwd),
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

/// `path` without its `.` and `dir/..` parts: a sub-make in `programs/` compiles `../lib/x.c`,
/// which is `lib/x.c` of the project. A relative path keeps the `..` that climbs above it.
fn without_dot_dirs(path: &str) -> String {
    if !path.contains("/.") && !path.starts_with("./") {
        return path.to_string();
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "." => {}
            ".." if parts.last().is_some_and(|p| !p.is_empty() && *p != "..") => {
                parts.pop();
            }
            _ => parts.push(part),
        }
    }
    parts.join("/")
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
    streams: [Recognisers<Found>; 2],
    found: Found,
}

impl GenericParser {
    /// A parser reading `formats`, names from [`FORMATS`].
    pub fn new(context: &ParseContext, formats: &[&str]) -> Self {
        GenericParser {
            streams: [recognisers(formats), recognisers(formats)],
            found: Found {
                cwd: context.cwd.clone(),
                dirs: Vec::new(),
                diagnostics: DiagnosticSet::new(),
                consequences: Vec::new(),
                unsure: Vec::new(),
                summary: None,
                failed_tests: Vec::new(),
                tests: TestCases::new(),
            },
        }
    }
}

impl Parser for GenericParser {
    fn feed(&mut self, line: Line<'_>) {
        let stream = match line.stream {
            Stream::Stderr => &mut self.streams[1],
            _ => &mut self.streams[0],
        };
        stream.feed(&line, &mut self.found);
    }

    fn progress(&self) -> Progress {
        let count = |s: Severity| self.found.diagnostics.iter().filter(|d| d.severity == s).count() as u64;
        Progress::new(count(Severity::Error), count(Severity::Warning), 0)
    }

    fn finish(&mut self, end: &RunEnd) -> ParseResult {
        for stream in &mut self.streams {
            stream.finish(&mut self.found);
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
            .with_tests(std::mem::take(&mut found.tests).into_vec())
    }
}

#[cfg(test)]
pub(crate) mod testing {
    use super::GenericParser;
    use buildvise_plugin_api::testing::parse_log;
    use buildvise_plugin_api::{Diagnostic, ParseContext, ParseResult, Severity};

    pub(crate) const CWD: &str = "/home/dev/src/demo";

    /// Parses a combined log with the recognisers of `formats`.
    pub(crate) fn parse(formats: &[&str], log: &str, exit_code: i32) -> ParseResult {
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

#[cfg(test)]
mod tests {
    use super::{FORMATS, recognisers, without_dot_dirs};

    #[test]
    fn paths_lose_their_dot_and_dot_dot_parts() {
        assert_eq!(without_dot_dirs("/home/dev/src/demo/programs/../lib/x.c"), "/home/dev/src/demo/lib/x.c");
        assert_eq!(without_dot_dirs("./src/./a.c"), "src/a.c");
        assert_eq!(without_dot_dirs("../shared/a.c"), "../shared/a.c");
        assert_eq!(without_dot_dirs("a/b/../../../c.c"), "../c.c");
        assert_eq!(without_dot_dirs("main.c"), "main.c");
    }
    use crate::plan;

    #[test]
    fn every_exported_format_has_its_recogniser_and_every_recogniser_its_format() {
        let names: Vec<&str> = FORMATS.iter().map(|(name, _)| *name).collect();
        let mut registered = recognisers(&names).formats();
        registered.sort_unstable();
        let mut exported = names.clone();
        exported.sort_unstable();
        assert_eq!(registered, exported);
    }

    #[test]
    fn every_format_a_tool_reads_is_exported() {
        for tool in plan::tools(|_| true).into_iter().map(|t| t.name).chain(["unknown".to_string()]) {
            for format in plan::formats_of(&tool) {
                assert!(super::exports(format), "{tool} reads {format}");
            }
        }
    }
}
