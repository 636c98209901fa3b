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
    /// The tools it runs, each named `<name>.<verb>`; `list` shows them in this order.
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
    /// The shell commands this tool stands for, each as the words it starts with (`cargo test`):
    /// a client hook hands a command that starts so to this tool, the words after them becoming
    /// its `args`. Declare one only where the plan runs exactly that command with those args.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<Vec<String>>,
    /// Shell commands this tool stands for only with arguments of its own put first: a hook hands
    /// a command that starts with `words` to this tool with `args` and then the words after them
    /// (`pnpm test` is `npm.test` with `--pm=pnpm`). Added in 1.x: a host that does not know it
    /// leaves such commands as typed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands_with_args: Vec<TypedCommand>,
}

/// A shell command a tool stands for with arguments of its own (see
/// [`ToolSpec::commands_with_args`](ToolSpec#structfield.commands_with_args)).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TypedCommand {
    /// The words the command starts with (`pnpm test`).
    pub words: Vec<String>,
    /// The tool's arguments that stand for them, before the words typed after them.
    pub args: Vec<String>,
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
            commands: Vec::new(),
            commands_with_args: Vec::new(),
        }
    }

    /// Declares a shell command this tool stands for, by the words it starts with (see
    /// [`ToolSpec::commands`](Self#structfield.commands)).
    pub fn runs(mut self, words: &[&str]) -> Self {
        self.commands.push(words.iter().map(|w| w.to_string()).collect());
        self
    }

    /// Declares a shell command this tool stands for with `args` of its own first (see
    /// [`ToolSpec::commands_with_args`](Self#structfield.commands_with_args)).
    pub fn runs_with(mut self, words: &[&str], args: &[&str]) -> Self {
        let owned = |list: &[&str]| list.iter().map(|w| w.to_string()).collect();
        self.commands_with_args.push(TypedCommand { words: owned(words), args: owned(args) });
        self
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

/// One call to plan, given to [`crate::Plugin::plan`]: which tool, with what arguments, where, and
/// where it may reach. The host sends one per `exec`, before anything runs; a plan that needs
/// consent (a [mutating](ToolSpec::mutating) tool) is asked for once more to show the command.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PlanRequest {
    /// The tool's full name, one of the manifest's ([`ToolSpec::name`], `make.build`): a plugin
    /// with several tools plans by it. Never empty.
    pub tool: String,
    /// The call's arguments as the caller sent them (on the CLI, what follows the tool name or
    /// `--`), one argv element each; may be empty. The host adds nothing and checks nothing in
    /// them: pass on what the tool should get, and refuse what it must not.
    #[serde(default)]
    pub args: Vec<String>,
    /// Absolute working directory of the run, already checked against [`roots`](Self::roots).
    /// The host runs the command there.
    pub cwd: String,
    /// Absolute path of an empty directory the host created for this run alone; point the tool's
    /// report files (JUnit XML, TRX, JSON) here and name them in
    /// [`CommandPlan::artifacts`]. When the plan is only shown to ask for consent it is the
    /// placeholder `<run artifacts>`, and nothing runs.
    pub artifact_dir: String,
    /// The directories the operator allowed this call to use (absolute, symlinks resolved); `cwd`
    /// lies in one of them. Empty means no limit. A plan refuses path arguments that lead outside
    /// them: check each with [`PlanRequest::check_path`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roots: Vec<String>,
}

impl PlanRequest {
    /// A request with no roots (no limit), as the CLI sends; for a plugin's tests.
    pub fn new(
        tool: impl Into<String>,
        args: Vec<String>,
        cwd: impl Into<String>,
        artifact_dir: impl Into<String>,
    ) -> Self {
        PlanRequest { tool: tool.into(), args, cwd: cwd.into(), artifact_dir: artifact_dir.into(), roots: Vec::new() }
    }

    /// Sets [`roots`](Self::roots).
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

/// The command a plugin wants the host to run, the answer of [`crate::Plugin::plan`]. The host
/// spawns `program` with `args` directly, never through a shell, in [`PlanRequest::cwd`], with
/// stdin closed and stdout and stderr captured into the run's log.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CommandPlan {
    /// The program: a name looked up on `PATH` (`make`) or an absolute path (a relative path
    /// with a `/` is ambiguous about which directory it starts from). Not empty. When it cannot
    /// be found the call fails, exit code 127, naming it.
    pub program: String,
    /// Its arguments, one argv element each, passed as they are (no quoting, no globbing); may
    /// be empty. Answers and `buildvise runs` show them, with `program`, as the command that ran.
    #[serde(default)]
    pub args: Vec<String>,
    /// Variables set for the command on top of the host's environment (a name the host also
    /// has takes this value); may be empty. For noise only: `NO_COLOR=1`, a wide terminal.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Files the run will write (absolute, usually inside [`PlanRequest::artifact_dir`]); may be
    /// empty. Those that exist as files when the run ends are handed to the parser in
    /// [`RunEnd::artifacts`]; the others are left out without a word.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<String>,
    /// Why this call changes the workspace or runs a command its caller wrote, when its
    /// arguments make it do so although its tool does not ([`ToolSpec::mutates`]): an MSBuild
    /// property holding a command line, a target of the caller's choosing. The host then treats
    /// the call as a mutating tool's: refused on a read-only server, run only with consent. Say
    /// it as what the argument does (``"`-p:PreBuildEvent=…` runs a command"``).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mutates: Option<String>,
    /// Directories outside the project the toolchain writes as its caches (absolute: cargo's
    /// registry, npm's cache, NuGet's packages), each as this machine has it (the variable that
    /// moves it read). A run under the `workspace-write` sandbox may write only its project, the
    /// temp directory and these; may be empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub caches: Vec<String>,
}

impl CommandPlan {
    /// Adds the caches the toolchain writes ([`caches`](Self::caches)).
    pub fn with_caches(mut self, dirs: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.caches.extend(dirs.into_iter().map(Into::into));
        self
    }

    /// `program` with no arguments, environment or artifacts.
    pub fn new(program: impl Into<String>) -> Self {
        CommandPlan { program: program.into(), ..CommandPlan::default() }
    }

    /// Appends `args` to [`args`](Self::args).
    pub fn with_args(mut self, args: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets one variable of [`env`](Self::env).
    pub fn with_env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.insert(key.into(), value.into());
        self
    }

    /// Adds one file to [`artifacts`](Self::artifacts).
    pub fn with_artifact(mut self, path: impl Into<String>) -> Self {
        self.artifacts.push(path.into());
        self
    }

    /// Marks this call as changing the workspace, saying why (see [`mutates`](Self::mutates)).
    pub fn mutating(mut self, why: impl Into<String>) -> Self {
        self.mutates = Some(why.into());
        self
    }
}

/// What a parser is told when it is created ([`crate::Plugin::parser`],
/// [`crate::Plugin::format_parser`]): one per run, and one per saved log `buildvise parse` reads.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ParseContext {
    /// The tool whose output this is (`make.build`), as in [`PlanRequest::tool`]. For a format
    /// parser it is the name of the tool a config file defines: do not branch on it there.
    pub tool: String,
    /// The call's arguments, as the plan received them; empty when parsing a saved log, so a
    /// parser must not need them (use them to expect a format, such as `--message-format=json`).
    #[serde(default)]
    pub args: Vec<String>,
    /// Absolute working directory of the run (for a saved log, the directory `buildvise parse`
    /// was given or ran in). Make diagnostics' files relative to it with [`crate::relative_to`].
    pub cwd: String,
}

impl ParseContext {
    /// A context without arguments, as for a saved log.
    pub fn new(tool: impl Into<String>, cwd: impl Into<String>) -> Self {
        ParseContext { tool: tool.into(), args: Vec::new(), cwd: cwd.into() }
    }

    /// Sets [`args`](Self::args).
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
    /// True when the host killed it at its deadline.
    #[serde(default)]
    pub timed_out: bool,
    /// True when the host ended it on request (a cancelled call, a signal to buildvise).
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
    /// The stream it was printed on.
    pub stream: Stream,
    /// 1-based line number in the stored (combined) log.
    pub number: u64,
    /// The bytes, not necessarily UTF-8.
    pub bytes: &'a [u8],
}

impl<'a> Line<'a> {
    #[inline]
    pub fn new(stream: Stream, number: u64, bytes: &'a [u8]) -> Self {
        Line { stream, number, bytes }
    }

    /// The text, with invalid UTF-8 replaced; borrowed when the line is valid UTF-8.
    #[inline]
    pub fn text(&self) -> std::borrow::Cow<'a, str> {
        // `from_utf8` first: it checks ASCII a word at a time, where `from_utf8_lossy` walks
        // every byte of a valid line as it looks for the first invalid one.
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
    /// The first line.
    pub start: u64,
    /// The last line, not before `start`.
    pub end: u64,
}

impl LogRange {
    /// Lines `start..=end`; an `end` before `start` is taken as `start`.
    pub fn new(start: u64, end: u64) -> Self {
        LogRange { start, end: end.max(start) }
    }
}

/// One thing the tool reported: a compiler error, a lint, a failed test. Answers list errors
/// first, then warnings, one line each (`file:line:col code test: message`); a rerun compares
/// runs by a fingerprint of `file`, `code` and `message` (numbers, addresses and temp paths in
/// it masked), or of `test` alone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Diagnostic {
    /// Errors are what a failed run is answered with; warnings are listed after them (those
    /// [from the toolchain](Self::toolchain) counted in one line); `Info` is listed at `full`
    /// detail only.
    pub severity: Severity,
    /// The tool's headline, one line, without the location and code held in their own fields.
    /// Not empty; [`clip`](crate::clip) long ones (answers cut it to fit anyway).
    pub message: String,
    /// The tool's name for the problem: `E0308`, `TS2322`, `clippy::needless_return`,
    /// `AssertionError`. None when it has none; answers count diagnostics by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// The file it is about, relative to the run's cwd when it lies under it
    /// ([`crate::relative_to`]), else as the tool printed it. None when it names no file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// 1-based line in `file`; None when the tool gives none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// 1-based column on `line`, as the tool counts it (usually characters); None when it gives none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    /// 1-based line where the problem ends, when the tool says (`endLine`); carried in JSON
    /// answers only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_line: Option<u32>,
    /// Column where the problem ends, as `column` counts; JSON answers only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_column: Option<u32>,
    /// For a test failure, the test's name exactly as in [`ParseResult::failed_tests`], so the
    /// answer says it once; None for anything else.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test: Option<String>,
    /// The few help and note lines that matter (at most a handful, each clipped); may be empty.
    /// Shown at `full` detail; a failed test's first `left: 6` / `right: 7` notes go on its line.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The lines of the stored log it was printed on, message to last note: answers point
    /// `log` there. None when it does not come from the log (an artifact).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_range: Option<LogRange>,
    /// Said by the toolchain about itself or the machine, not about the project: npm config
    /// warnings, deprecation notices of the tool itself, rustup and cargo notices. Answers count
    /// these in one line instead of listing them on every run; `full` lists them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub toolchain: bool,
}

impl Diagnostic {
    /// A diagnostic with only its severity and message.
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

    /// An error with only its message.
    pub fn error(message: impl Into<String>) -> Self {
        Self::new(Severity::Error, message)
    }

    /// A warning with only its message.
    pub fn warning(message: impl Into<String>) -> Self {
        Self::new(Severity::Warning, message)
    }

    /// An info with only its message.
    pub fn info(message: impl Into<String>) -> Self {
        Self::new(Severity::Info, message)
    }

    /// Sets [`code`](Self::code).
    pub fn with_code(mut self, code: impl Into<String>) -> Self {
        self.code = Some(code.into());
        self
    }

    /// Sets [`file`](Self::file), [`line`](Self::line) and [`column`](Self::column).
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

    /// Sets [`test`](Self::test).
    pub fn with_test(mut self, test: impl Into<String>) -> Self {
        self.test = Some(test.into());
        self
    }

    /// Sets [`notes`](Self::notes).
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

/// Test counts of a whole run, exactly as the tool counts them (numbers of tests, summed over
/// every test binary or project it ran). The answer's header shows them (`4 passed, 1 failed`);
/// leave [`ParseResult::summary`] None when the tool ran no tests or its counts were not found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TestSummary {
    /// Tests that passed.
    pub passed: u64,
    /// Tests that failed.
    pub failed: u64,
    /// Skipped, ignored, pending and todo tests.
    pub skipped: u64,
    /// Tests the tool counted in all. When the other counts do not add up to it (tests that
    /// never ran), the header says `of N`.
    pub total: u64,
    /// Tests that errored outside their body (pytest's setup and teardown `errors`); None when
    /// the tool has no such count. `buildvise runs` counts them with the failures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<u64>,
    /// Tests expected to fail that did (pytest); None when the tool has no such count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xfailed: Option<u64>,
    /// Tests expected to fail that passed (pytest); None when the tool has no such count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xpassed: Option<u64>,
    /// Test projects that failed to build, so none of their tests ran (dotnet); None elsewhere.
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
    /// Whether the run succeeded, when the parser knows better than the exit code. None (the
    /// usual) leaves it to the exit code: 0 is success. A run that timed out, was cancelled or
    /// killed by a signal never succeeds, whatever this says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub success: Option<bool>,
    /// Everything worth saying, each distinct problem once ([`crate::DiagnosticSet`]), in the
    /// order printed; may be empty.
    #[serde(default)]
    pub diagnostics: Vec<Diagnostic>,
    /// The test counts, when the tool ran tests and printed them; None otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<TestSummary>,
    /// Names of failed tests, each once, as the tool prints them, so that one can be pasted
    /// into the tool's test filter; may be empty. The answer lists those no diagnostic names
    /// (`failed: a, b`); a rerun matches tests across runs by these names (what was fixed, what
    /// is new, flaky tests), so a name must not change from run to run (no durations, no ids).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_tests: Vec<String>,
    /// Set when the tool stopped before doing all it was asked: what did not run and the way on,
    /// in a short phrase (`2 test targets not run; add --no-fail-fast`, `collection interrupted:
    /// collected 5, ran 0`). The answer's header carries it, so that a summary that looks
    /// complete but is not never reads as complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_early: Option<String>,
    /// Every test the tool named, with its outcome and, where it printed one, its duration, in
    /// the order printed (see [`crate::TestCases`], which gathers them). Only reports read them
    /// (`--format junit`): the answer lists failed tests alone. Empty when the tool names no test
    /// that passed (pytest's `-q` dots), and then a report lists the failed ones only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tests: Vec<TestCase>,
}

/// One test the tool named, and how it ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TestCase {
    /// As in [`ParseResult::failed_tests`]: a failed test is named the same in both.
    pub name: String,
    pub outcome: TestOutcome,
    /// How long it ran, in microseconds, when the tool printed it (`PASS [ 0.004s]`, `(5 ms)`);
    /// None otherwise, never a guess.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_us: Option<u64>,
}

impl TestCase {
    pub fn new(name: impl Into<String>, outcome: TestOutcome, duration_us: Option<u64>) -> Self {
        TestCase { name: name.into(), outcome, duration_us }
    }
}

/// How a test ended. An outcome this version does not know reads as `Skipped`: a newer plugin's
/// new word never makes a passing test fail, nor a failing one pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum TestOutcome {
    Passed,
    Failed,
    /// Skipped, ignored, pending, todo, or expected to fail and did (pytest's xfail).
    #[serde(other)]
    Skipped,
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

    pub fn with_tests(mut self, tests: Vec<TestCase>) -> Self {
        self.tests = tests;
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
    /// Errors found so far (failed tests included when the parser counts them as errors).
    #[serde(default)]
    pub errors: u64,
    /// Warnings found so far.
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
