//! The values that cross the plugin boundary. They travel as camelCase JSON; every field added
//! after v1 must be optional so that plugins built against an older crate keep loading.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a plugin offers: its name, version and the tools it runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    pub name: String,
    pub version: String,
    pub tools: Vec<ToolSpec>,
}

/// One tool, such as `cargo.test`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
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
}

/// One call to plan: which tool, with what arguments, where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanRequest {
    pub tool: String,
    #[serde(default)]
    pub args: Vec<String>,
    /// Absolute working directory of the run.
    pub cwd: String,
    /// An empty directory the host created for this run; artifacts go here.
    pub artifact_dir: String,
}

/// The command a plugin wants the host to run. The host spawns `program` with `args` directly,
/// never through a shell.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
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

/// What a parser is told when it is created.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ParseContext {
    pub tool: String,
    #[serde(default)]
    pub args: Vec<String>,
    /// Absolute working directory of the run; diagnostics' files are made relative to it.
    pub cwd: String,
}

/// How the run ended, given to [`crate::Parser::finish`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
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

/// The stream a line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stream {
    Stdout,
    Stderr,
}

/// One output line as the parser sees it: ANSI escapes and the trailing `\r` removed.
#[derive(Debug, Clone, Copy)]
pub struct Line<'a> {
    pub stream: Stream,
    /// 1-based line number in the stored (combined) log.
    pub number: u64,
    /// The bytes, not necessarily UTF-8.
    pub bytes: &'a [u8],
}

impl<'a> Line<'a> {
    /// The text, with invalid UTF-8 replaced.
    pub fn text(&self) -> std::borrow::Cow<'a, str> {
        String::from_utf8_lossy(self.bytes)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Info,
}

/// An inclusive range of 1-based line numbers in the stored log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogRange {
    pub start: u64,
    pub end: u64,
}

/// One thing the tool reported: a compiler error, a lint, a failed test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
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
        }
    }

    pub fn error(message: impl Into<String>) -> Self {
        Self::new(Severity::Error, message)
    }

    pub fn warning(message: impl Into<String>) -> Self {
        Self::new(Severity::Warning, message)
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

    pub fn with_test(mut self, test: impl Into<String>) -> Self {
        self.test = Some(test.into());
        self
    }

    /// Sets the log range to the lines `start..=end`.
    pub fn with_log_range(mut self, start: u64, end: u64) -> Self {
        self.log_range = Some(LogRange { start, end: end.max(start) });
        self
    }
}

/// Test counts, exactly as the tool counts them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
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

/// What a parser made of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
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
}

/// What a parser has seen so far of a run that is still going.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Progress {
    #[serde(default)]
    pub errors: u64,
    #[serde(default)]
    pub warnings: u64,
    /// Tests finished so far.
    #[serde(default)]
    pub tests: u64,
    /// What the tool is doing now, in a few words (`Compiling serde v1.0.200`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activity: Option<String>,
}
