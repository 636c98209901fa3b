//! The values that cross the plugin boundary, as camelCase JSON.
//!
//! Every type is `#[non_exhaustive]`: a later version may add a field or a variant without
//! breaking a plugin built against this one. Build values with the constructors and `with_*`
//! methods; read and change fields directly. On the wire, every field added after ABI 1.0 is
//! optional, and an enum value a side does not know reads as the nearest one it does (an unknown
//! severity is `info`), so neither side ever drops a whole result over one new word.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a plugin offers: its name, version and the tools it runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Manifest {
    /// The plugin's name, the prefix of its tools (`cargo`).
    pub name: String,
    /// The plugin's own version, shown by `buildvise list --json`.
    pub version: String,
    pub tools: Vec<ToolSpec>,
    /// Output formats the plugin can parse on their own (`tsc`, `rustc`), for tools defined in a
    /// config file. Each is served by [`crate::Plugin::format_parser`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub formats: Vec<FormatSpec>,
}

impl Manifest {
    pub fn new(name: impl Into<String>, version: impl Into<String>, tools: Vec<ToolSpec>) -> Self {
        Manifest { name: name.into(), version: version.into(), tools, formats: Vec::new() }
    }

    /// Declares the formats the plugin exports.
    pub fn with_formats(mut self, formats: Vec<FormatSpec>) -> Self {
        self.formats = formats;
        self
    }
}

/// One output format a plugin exports: a recogniser a config-defined tool can name
/// (`formats = ["eslint"]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct FormatSpec {
    /// A short lowercase name, unique across plugins (`tsc`, `python-traceback`).
    pub name: String,
    /// One line: whose output it reads (`TypeScript compiler diagnostics`).
    pub description: String,
}

impl FormatSpec {
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        FormatSpec { name: name.into(), description: description.into() }
    }
}

/// One tool, such as `cargo.test`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolSpec {
    /// `<plugin>.<verb>`, for example `cargo.test`.
    pub name: String,
    /// One line, shown by `list`.
    pub description: String,
    /// True when the tool changes the workspace (`npm install`); such tools need consent.
    #[serde(default)]
    pub mutates_workspace: bool,
    /// Default timeout in seconds; the host applies its own default when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<u64>,
    /// What `args` means for this tool, in a few words (`extra cargo test arguments`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args_hint: Option<String>,
    /// For a mutating tool: the argument that makes a call only look (`--check` for `cargo fmt`).
    /// A call that passes it needs no consent and stays allowed on a read-only server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_with: Option<String>,
    /// Why the tool cannot run on this machine (`go is not on PATH; install Go to use go.test`):
    /// the host leaves it out of `list`, refuses `exec` with this sentence, and still parses
    /// saved logs with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
}

impl ToolSpec {
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        ToolSpec {
            name: name.into(),
            description: description.into(),
            mutates_workspace: false,
            timeout_secs: None,
            args_hint: None,
            read_only_with: None,
            unavailable: None,
        }
    }

    /// Marks the tool as unable to run here, with the sentence that says why and what to do (see
    /// [`ToolSpec::unavailable`](Self#structfield.unavailable)).
    pub fn unavailable(mut self, reason: impl Into<String>) -> Self {
        self.unavailable = Some(reason.into());
        self
    }

    /// Marks the tool as changing the workspace: the host asks for consent before running it.
    pub fn mutating(mut self) -> Self {
        self.mutates_workspace = true;
        self
    }

    /// Names the argument with which a [`mutating`](Self::mutating) tool changes nothing
    /// (`cargo fmt --check`). The plan must make sure the flag means that wherever it stands, or
    /// refuse the call.
    pub fn read_only_with(mut self, flag: impl Into<String>) -> Self {
        self.read_only_with = Some(flag.into());
        self
    }

    /// Whether a call with these arguments changes the workspace.
    pub fn mutates(&self, args: &[String]) -> bool {
        self.mutates_workspace && !self.read_only_with.as_ref().is_some_and(|flag| args.contains(flag))
    }

    pub fn with_timeout_secs(mut self, secs: u64) -> Self {
        self.timeout_secs = Some(secs);
        self
    }

    pub fn with_args_hint(mut self, hint: impl Into<String>) -> Self {
        self.args_hint = Some(hint.into());
        self
    }
}

/// One call to plan: which tool, with what arguments, where, and where it may reach.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PlanRequest {
    pub tool: String,
    #[serde(default)]
    pub args: Vec<String>,
    /// Absolute working directory of the run.
    pub cwd: String,
    /// An empty directory the host created for this run; artifacts go here.
    pub artifact_dir: String,
    /// The directories the operator allowed this call to use (absolute, symlinks resolved); `cwd`
    /// lies in one of them. Empty means no limit. A plan refuses path arguments that lead outside
    /// them: check each with [`PlanRequest::check_path`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roots: Vec<String>,
}

impl PlanRequest {
    pub fn new(
        tool: impl Into<String>,
        args: Vec<String>,
        cwd: impl Into<String>,
        artifact_dir: impl Into<String>,
    ) -> Self {
        PlanRequest { tool: tool.into(), args, cwd: cwd.into(), artifact_dir: artifact_dir.into(), roots: Vec::new() }
    }

    pub fn with_roots(mut self, roots: Vec<String>) -> Self {
        self.roots = roots;
        self
    }

    /// Checks that `path`, given to the tool by argument `flag` and taken from the run's cwd as the
    /// tool would take it, lies inside the allowed [`roots`](Self::roots) (or the artifact
    /// directory). Symlinks are followed as far as the path exists. The error is the sentence to
    /// refuse the plan with.
    pub fn check_path(&self, flag: &str, path: &str) -> Result<(), String> {
        crate::roots::check(self, flag, path)
    }
}

/// The command a plugin wants the host to run. The host spawns `program` with `args` directly,
/// never through a shell.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CommandPlan {
    pub program: String,
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra environment, added to the host's.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Files the run will write (absolute, usually inside the artifact directory). Those that
    /// exist when the run ends are handed to the parser in [`RunEnd::artifacts`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<String>,
}

impl CommandPlan {
    pub fn new(program: impl Into<String>) -> Self {
        CommandPlan { program: program.into(), ..CommandPlan::default() }
    }

    pub fn with_args(mut self, args: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    pub fn with_env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.insert(key.into(), value.into());
        self
    }

    pub fn with_artifact(mut self, path: impl Into<String>) -> Self {
        self.artifacts.push(path.into());
        self
    }
}

/// What a parser is told when it is created.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ParseContext {
    pub tool: String,
    /// The call's arguments, as the plan received them (empty when parsing a saved log).
    #[serde(default)]
    pub args: Vec<String>,
    /// Absolute working directory of the run; diagnostics' files are made relative to it.
    pub cwd: String,
}

impl ParseContext {
    pub fn new(tool: impl Into<String>, cwd: impl Into<String>) -> Self {
        ParseContext { tool: tool.into(), args: Vec::new(), cwd: cwd.into() }
    }

    pub fn with_args(mut self, args: Vec<String>) -> Self {
        self.args = args;
        self
    }
}

/// How the run ended, given to [`crate::Parser::finish`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RunEnd {
    /// None when the process was killed by a signal.
    #[serde(default)]
    pub exit_code: Option<i32>,
    #[serde(default)]
    pub timed_out: bool,
    #[serde(default)]
    pub cancelled: bool,
    /// Artifact files that exist now (absolute paths).
    #[serde(default)]
    pub artifacts: Vec<String>,
}

impl RunEnd {
    /// A run that exited by itself with `code`.
    pub fn exited(code: i32) -> Self {
        RunEnd { exit_code: Some(code), ..RunEnd::default() }
    }

    /// A run killed at its deadline.
    pub fn timed_out() -> Self {
        RunEnd { timed_out: true, ..RunEnd::default() }
    }

    /// A run ended on request.
    pub fn cancelled() -> Self {
        RunEnd { cancelled: true, ..RunEnd::default() }
    }

    pub fn with_artifacts(mut self, artifacts: Vec<String>) -> Self {
        self.artifacts = artifacts;
        self
    }
}

/// The stream a line came from. Tags the host does not send read as stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Stream {
    Stderr,
    #[serde(other)]
    Stdout,
}

/// One output line as the parser sees it: ANSI escapes and the trailing `\r` removed.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Line<'a> {
    pub stream: Stream,
    /// 1-based line number in the stored (combined) log.
    pub number: u64,
    /// The bytes, not necessarily UTF-8.
    pub bytes: &'a [u8],
}

impl<'a> Line<'a> {
    pub fn new(stream: Stream, number: u64, bytes: &'a [u8]) -> Self {
        Line { stream, number, bytes }
    }

    /// The text, with invalid UTF-8 replaced; borrowed when the line is valid UTF-8.
    pub fn text(&self) -> std::borrow::Cow<'a, str> {
        // Parsers call this on every line. `from_utf8` checks ASCII a word at a time, where
        // `from_utf8_lossy` goes byte by byte: 10 ns against 60 on a 100-byte line.
        match std::str::from_utf8(self.bytes) {
            Ok(text) => std::borrow::Cow::Borrowed(text),
            Err(_) => String::from_utf8_lossy(self.bytes),
        }
    }
}

/// How serious a diagnostic is. A severity this version does not know reads as `Info`: a newer
/// plugin's new word never turns into an error, and never costs the rest of the result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Severity {
    Error,
    Warning,
    #[serde(other)]
    Info,
}

/// An inclusive range of 1-based line numbers in the stored log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LogRange {
    pub start: u64,
    pub end: u64,
}

impl LogRange {
    /// Lines `start..=end`; an `end` before `start` is taken as `start`.
    pub fn new(start: u64, end: u64) -> Self {
        LogRange { start, end: end.max(start) }
    }
}

/// One thing the tool reported: a compiler error, a lint, a failed test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Diagnostic {
    pub severity: Severity,
    /// The tool's headline, one line.
    pub message: String,
    /// `E0308`, `TS2322`, `clippy::needless_return`, `AssertionError`…
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// Relative to the run's cwd when it lies under it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_column: Option<u32>,
    /// The failed test's name, for test failures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test: Option<String>,
    /// The few help/note lines that matter.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Where in the stored log this diagnostic was printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_range: Option<LogRange>,
    /// Said by the toolchain about itself or the machine, not about the project: npm config
    /// warnings, deprecation notices of the tool itself, rustup and cargo notices. Answers count
    /// these in one line instead of listing them on every run; `full` lists them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub toolchain: bool,
}

impl Diagnostic {
    pub fn new(severity: Severity, message: impl Into<String>) -> Self {
        Diagnostic {
            severity,
            message: message.into(),
            code: None,
            file: None,
            line: None,
            column: None,
            end_line: None,
            end_column: None,
            test: None,
            notes: Vec::new(),
            log_range: None,
            toolchain: false,
        }
    }

    pub fn error(message: impl Into<String>) -> Self {
        Self::new(Severity::Error, message)
    }

    pub fn warning(message: impl Into<String>) -> Self {
        Self::new(Severity::Warning, message)
    }

    pub fn info(message: impl Into<String>) -> Self {
        Self::new(Severity::Info, message)
    }

    pub fn with_code(mut self, code: impl Into<String>) -> Self {
        self.code = Some(code.into());
        self
    }

    pub fn with_location(mut self, file: impl Into<String>, line: Option<u32>, column: Option<u32>) -> Self {
        self.file = Some(file.into());
        self.line = line;
        self.column = column;
        self
    }

    /// Where the problem ends, when the tool says (`endLine`, `endColumn`).
    pub fn with_end(mut self, line: Option<u32>, column: Option<u32>) -> Self {
        self.end_line = line;
        self.end_column = column;
        self
    }

    pub fn with_test(mut self, test: impl Into<String>) -> Self {
        self.test = Some(test.into());
        self
    }

    pub fn with_notes(mut self, notes: Vec<String>) -> Self {
        self.notes = notes;
        self
    }

    /// Sets the log range to the lines `start..=end`.
    pub fn with_log_range(mut self, start: u64, end: u64) -> Self {
        self.log_range = Some(LogRange::new(start, end));
        self
    }

    /// Marks the diagnostic as the toolchain's own notice (see [`Diagnostic::toolchain`]).
    pub fn from_toolchain(mut self) -> Self {
        self.toolchain = true;
        self
    }
}

/// Test counts, exactly as the tool counts them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TestSummary {
    pub passed: u64,
    pub failed: u64,
    /// Skipped, ignored, pending and todo tests.
    pub skipped: u64,
    pub total: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xfailed: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xpassed: Option<u64>,
    /// Test projects that failed to build (dotnet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub projects_build_failed: Option<u64>,
}

impl TestSummary {
    /// The four counts every runner has; set the optional ones as fields.
    pub fn new(passed: u64, failed: u64, skipped: u64, total: u64) -> Self {
        TestSummary { passed, failed, skipped, total, ..TestSummary::default() }
    }
}

/// What a parser made of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ParseResult {
    /// Absent means "the exit code was 0".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub success: Option<bool>,
    #[serde(default)]
    pub diagnostics: Vec<Diagnostic>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<TestSummary>,
    /// Names of failed tests, each once, as the tool prints them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_tests: Vec<String>,
    /// Set when the tool stopped before doing all it was asked: what did not run and the way on,
    /// in a short phrase (`2 test targets not run; add --no-fail-fast`, `collection interrupted:
    /// collected 5, ran 0`). The answer's header carries it, so that a summary that looks
    /// complete but is not never reads as complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_early: Option<String>,
}

impl ParseResult {
    pub fn new(diagnostics: Vec<Diagnostic>) -> Self {
        ParseResult { diagnostics, ..ParseResult::default() }
    }

    pub fn with_summary(mut self, summary: Option<TestSummary>) -> Self {
        self.summary = summary;
        self
    }

    pub fn with_failed_tests(mut self, failed_tests: Vec<String>) -> Self {
        self.failed_tests = failed_tests;
        self
    }

    /// Says what did not run (see [`ParseResult::stopped_early`]).
    pub fn with_stopped_early(mut self, what: impl Into<String>) -> Self {
        self.stopped_early = Some(what.into());
        self
    }

    /// Overrides the exit code's word on success (`None` leaves it to the exit code).
    pub fn with_success(mut self, success: Option<bool>) -> Self {
        self.success = success;
        self
    }
}

/// What a parser has seen so far of a run that is still going.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Progress {
    #[serde(default)]
    pub errors: u64,
    #[serde(default)]
    pub warnings: u64,
    /// Tests finished so far.
    #[serde(default)]
    pub tests: u64,
    /// Tests the tool said it would run (`collected 40 items`, `running 12 tests`), summed over
    /// what it announced so far; None until it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests_total: Option<u64>,
    /// What the tool is doing now, in a few words (`Compiling serde v1.0.200`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activity: Option<String>,
}

impl Progress {
    pub fn new(errors: u64, warnings: u64, tests: u64) -> Self {
        Progress { errors, warnings, tests, tests_total: None, activity: None }
    }

    pub fn with_tests_total(mut self, total: Option<u64>) -> Self {
        self.tests_total = total;
        self
    }

    pub fn with_activity(mut self, activity: impl Into<String>) -> Self {
        self.activity = Some(activity.into());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_text_borrows_utf8_and_replaces_the_rest() {
        let text = Line::new(Stream::Stdout, 1, "caf\u{e9}".as_bytes()).text();
        assert!(matches!(text, std::borrow::Cow::Borrowed("caf\u{e9}")));
        assert_eq!(Line::new(Stream::Stdout, 1, b"a\xffb").text(), "a\u{fffd}b");
    }

    #[test]
    fn unknown_words_read_as_the_nearest_known_one() {
        let d: Diagnostic = serde_json::from_str(r#"{"severity":"hint","message":"m"}"#).unwrap();
        assert_eq!(d.severity, Severity::Info);
        let line: Stream = serde_json::from_str(r#""stdtrace""#).unwrap();
        assert_eq!(line, Stream::Stdout);
    }

    #[test]
    fn unknown_fields_are_ignored_and_new_ones_optional() {
        let r: ParseResult =
            serde_json::from_str(r#"{"diagnostics":[{"severity":"error","message":"m","fix":{"x":1}}],"later":true}"#)
                .unwrap();
        assert_eq!(r.diagnostics.len(), 1);
        let p: PlanRequest = serde_json::from_str(r#"{"tool":"t","cwd":"/p","artifactDir":"/a"}"#).unwrap();
        assert!(p.roots.is_empty());
    }

    #[test]
    fn a_mutating_tool_changes_nothing_with_its_read_only_flag() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let fmt = ToolSpec::new("cargo.fmt", "").mutating().read_only_with("--check");
        assert!(fmt.mutates(&args(&["-p", "core"])));
        assert!(!fmt.mutates(&args(&["--check", "-p", "core"])));
        assert!(!fmt.mutates(&args(&["--", "--check"])), "rustfmt takes it after `--` too");
        assert!(!ToolSpec::new("cargo.build", "").read_only_with("--check").mutates(&[]));
        assert!(ToolSpec::new("npm.ci", "").mutating().mutates(&args(&["--check"])));
    }
}
