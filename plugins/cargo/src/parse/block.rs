//! One diagnostic block of cargo's human output: a rustc or clippy diagnostic with its snippet,
//! notes and helps, or a cargo error with its `Caused by:` chain, including the indented output
//! of a failed build script.

use super::lints::{self, LintMemory};
use super::panic::{self, PanicStart};
use super::status::is_status_line;
use super::text::{
    MAX_MESSAGE, MAX_NOTE, MAX_NOTES, caret_label, clip, headline_with_hints, headline_with_label, help_adds_to,
    is_snippet_line,
};
use super::{diagnostics, json, libtest, panics};
use buildvise_plugin_api::{Diagnostic, Severity, Stream, relative_to, split_location};
use regex::Regex;
use std::sync::LazyLock;

/// Old cargo manifest errors: `failed to parse manifest at `/p/Cargo.toml`` then, in the
/// chain, `TOML parse error at line 7, column 28`.
static MANIFEST_PATH: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"manifest at `([^`]+)`").expect("valid regex"));
static TOML_POSITION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^TOML parse error at line (\d+), column (\d+)").expect("valid regex"));

/// Most column-0 lines taken as the continuation of a cargo error.
const MAX_CONTINUATIONS: usize = 6;

/// A column-0 `error…:`/`warning…:` headline.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Headline<'a> {
    pub(crate) severity: Severity,
    pub(crate) code: Option<&'a str>,
    pub(crate) message: &'a str,
}

/// Reads `error[E0308]: msg`, `error: msg` or `warning: msg`.
pub(crate) fn headline(line: &str) -> Option<Headline<'_>> {
    let (severity, rest) = if let Some(rest) = line.strip_prefix("error") {
        (Severity::Error, rest)
    } else if let Some(rest) = line.strip_prefix("warning") {
        (Severity::Warning, rest)
    } else {
        return None;
    };
    let (code, rest) = match rest.strip_prefix('[') {
        Some(coded) => {
            let (code, after) = coded.split_once(']')?;
            let valid = !code.is_empty() && code.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':');
            if !valid {
                return None;
            }
            (Some(code), after)
        }
        None => (None, rest),
    };
    let message = rest.strip_prefix(": ")?.trim();
    (!message.is_empty()).then_some(Headline { severity, code, message })
}

/// Warnings cargo gives about the machine rather than the project: `spurious network error (2
/// tries remaining): …` says a download is being retried; the project is fine, and the error
/// that follows (if the retries fail) is what to act on.
fn is_toolchain_notice(head: &Headline<'_>) -> bool {
    head.severity == Severity::Warning && head.message.starts_with("spurious network error")
}

/// The arguments in `test failed, to rerun pass `--test api``: `--test api`. Cargo before 1.66
/// quoted them with `'`.
pub(crate) fn rerun_args(message: &str) -> &str {
    message.split_once("to rerun pass ").map_or("", |(_, rest)| rest.trim().trim_matches(['`', '\'']))
}

/// What a headline means to the parser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HeadlineKind {
    /// A diagnostic worth reporting.
    Report,
    /// Cargo's own wrap-up (`could not compile`, `generated N warnings`, …): not a diagnostic.
    Summary,
    /// `error: test failed, to rerun pass …`: a summary, unless a `Caused by:` chain shows the
    /// test binary crashed.
    TestBinary,
}

pub(crate) fn classify(head: &Headline<'_>) -> HeadlineKind {
    let m = head.message;
    if m.starts_with("test failed, to rerun pass") || m.starts_with("doctest failed, to rerun pass") {
        return HeadlineKind::TestBinary;
    }
    let summary = match head.severity {
        Severity::Error => {
            m.starts_with("could not compile `")
                || m.starts_with("could not document `")
                || m.starts_with("aborting due to")
                // cargo-nextest's last word on a failed run, whose tests say why.
                || m == "test run failed"
                || (m.starts_with(|c: char| c.is_ascii_digit()) && m.contains(" target") && m.contains(" failed"))
                || (m.starts_with(|c: char| c.is_ascii_digit()) && m.ends_with(" emitted"))
        }
        _ => {
            (m.starts_with('`') && m.contains(") generated ") && m.contains(" warning"))
                || m.starts_with("build failed, waiting for other jobs")
                || (m.starts_with(|c: char| c.is_ascii_digit()) && m.contains(" emitted"))
                || m.starts_with("the following packages contain code that will be rejected by a future version")
        }
    };
    if summary { HeadlineKind::Summary } else { HeadlineKind::Report }
}

/// What the block did with a line.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    /// The line belongs to the block.
    Consumed,
    /// The line closed the block and belongs to it.
    Closed,
    /// The block ended before this line; the line is someone else's.
    Ended,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Only the headline so far.
    Head,
    /// The primary location and its snippet.
    Primary,
    /// Column-0 `note:`/`help:` children.
    Children,
    /// A blank line after the headline or a cause: a `Caused by:` may follow.
    Blank { after_cause: bool },
    /// Inside a `Caused by:` section; `fresh` until its first line was read.
    Cause { fresh: bool },
}

/// The indented output of a failed build script inside its `Caused by:` section.
#[derive(Default)]
struct BuildScript {
    in_stderr: bool,
    awaiting_message: bool,
    awaiting_legacy_location: bool,
    panic_message: Option<String>,
    stderr_lines: Vec<String>,
}

/// The diagnostic being read.
pub(crate) struct Block {
    pub(crate) stream: Stream,
    /// Doctest output under --nocapture: the next verdict names its test.
    pub(crate) orphan: bool,
    diag: Diagnostic,
    start: u64,
    last: u64,
    stage: Stage,
    /// Snippet or `= note` lines were seen: rustc wrote this, and a blank line ends it.
    compiler: bool,
    label: Option<String>,
    /// The `help:` and `tip:` lines that say in one line how to fix the error or call the tool.
    hints: Vec<String>,
    /// The last hint ends with `:` and cargo lists what it means on the indented lines below.
    hint_list: bool,
    notes: Vec<String>,
    causes: Vec<String>,
    lint_note: Option<String>,
    clippy_link: Option<String>,
    in_level_note: bool,
    level_source: Option<String>,
    level_lint: Option<String>,
    build_script: Option<BuildScript>,
    test_binary: bool,
    require_location: bool,
    continuations: usize,
}

impl Block {
    /// Opens a block at a headline. `test` names the failed test whose output this is;
    /// `require_location` drops the block at the end unless it found a location (text printed
    /// by tests can look like a cargo error).
    pub(crate) fn open(
        head: &Headline<'_>,
        kind: HeadlineKind,
        stream: Stream,
        number: u64,
        test: Option<String>,
        require_location: bool,
    ) -> Block {
        let mut diag = Diagnostic::new(head.severity, clip(head.message, MAX_MESSAGE));
        if is_toolchain_notice(head) {
            diag = diag.from_toolchain();
        }
        diag.code = head.code.map(str::to_string);
        diag.test = test;
        let build_script = head.message.starts_with("failed to run custom build command").then(BuildScript::default);
        Block {
            stream,
            orphan: false,
            diag,
            start: number,
            last: number,
            stage: Stage::Head,
            compiler: false,
            label: None,
            hints: Vec::new(),
            hint_list: false,
            notes: Vec::new(),
            causes: Vec::new(),
            lint_note: None,
            clippy_link: None,
            in_level_note: false,
            level_source: None,
            level_lint: None,
            build_script,
            test_binary: kind == HeadlineKind::TestBinary,
            require_location: require_location && kind != HeadlineKind::TestBinary,
            continuations: 0,
        }
    }

    pub(crate) fn feed(&mut self, line: &str, number: u64, cwd: &str) -> Flow {
        if line.trim().is_empty() {
            return self.blank();
        }
        if line == "Caused by:" && !self.compiler {
            self.stage = Stage::Cause { fresh: true };
            self.last = number;
            return Flow::Consumed;
        }
        match self.stage {
            Stage::Blank { after_cause: true } | Stage::Cause { .. }
                if line.starts_with(' ') && !is_status_line(line) =>
            {
                let fresh = matches!(self.stage, Stage::Cause { fresh: true });
                self.stage = Stage::Cause { fresh: false };
                self.last = number;
                self.cause_line(line, fresh, cwd);
                return Flow::Consumed;
            }
            // cargo's argument errors give their tips indented under a blank line.
            Stage::Blank { after_cause: false } | Stage::Children if !self.compiler && is_tip(line) => {
                self.stage = Stage::Children;
                self.last = number;
                self.push_note(line.trim());
                self.hints.push(clip(line, MAX_NOTE));
                return Flow::Consumed;
            }
            Stage::Blank { .. } | Stage::Cause { .. } => return Flow::Ended,
            _ => {}
        }
        if is_status_line(line) {
            return Flow::Ended;
        }
        if line.starts_with("note:") || line.starts_with("help:") {
            // Not proof of a rustc block: cargo adds notes to its own errors before their
            // `Caused by:` chain (`note: To improve backtraces for build dependencies, …`).
            self.stage = Stage::Children;
            self.last = number;
            self.child(line);
            return Flow::Consumed;
        }
        let snippet = is_snippet_line(line);
        if !snippet && !line.starts_with(' ') {
            if self.continues_headline(line) {
                self.continuations += 1;
                self.push_note(line);
                self.last = number;
                return Flow::Consumed;
            }
            return Flow::Ended;
        }
        self.last = number;
        let body = line.trim_start();
        if let Some(location) = body.strip_prefix("--> ") {
            if self.stage == Stage::Head {
                self.set_location(location, cwd);
                self.stage = Stage::Primary;
            }
            self.compiler = true;
        } else if snippet {
            self.compiler = true;
            if self.stage == Stage::Head {
                self.stage = Stage::Primary;
            }
            self.snippet(line);
        } else if self.hint_list && self.stage == Stage::Children {
            self.list_in_hint(body);
        } else if body.starts_with("= ") {
            self.compiler = true;
            if self.stage == Stage::Head {
                self.stage = Stage::Primary;
            }
            self.body_note(body);
        }
        Flow::Consumed
    }

    /// Cargo's own errors go on at column 0 (`location searched: …`, `required by package …`).
    /// Not inside test output, where any line may follow, and never over a line that starts
    /// something else.
    fn continues_headline(&self, line: &str) -> bool {
        self.stage == Stage::Head
            && !self.compiler
            && !self.require_location
            && !self.test_binary
            && self.continuations < MAX_CONTINUATIONS
            && !starts_a_report(line)
    }

    fn blank(&mut self) -> Flow {
        match self.stage {
            Stage::Primary | Stage::Children if self.compiler => Flow::Closed,
            Stage::Cause { .. } => {
                self.stage = Stage::Blank { after_cause: true };
                Flow::Consumed
            }
            Stage::Blank { .. } => Flow::Consumed,
            _ => {
                self.stage = Stage::Blank { after_cause: false };
                Flow::Consumed
            }
        }
    }

    fn set_location(&mut self, location: &str, cwd: &str) {
        if let Some((file, line, column)) = split_location(location.trim()) {
            self.diag.file = Some(relative_to(file, cwd));
            self.diag.line = Some(line);
            self.diag.column = column;
        }
    }

    fn child(&mut self, line: &str) {
        self.hint(line);
        self.in_level_note = line.starts_with("note: the lint level is defined here");
        if !self.in_level_note && !line.starts_with("note: To improve backtraces for build dependencies") {
            self.push_note(line);
        }
    }

    fn body_note(&mut self, body: &str) {
        if self.lint_note.is_none() {
            self.lint_note = lints::from_note(body);
        }
        if self.clippy_link.is_none() {
            self.clippy_link = lints::from_clippy_link(body);
        }
        if !lints::is_level_boilerplate(body) {
            self.push_note(&body[2..]);
        }
        self.hint(&body[2..]);
    }

    /// Keeps a `help:` line that says all it says on that line. One ending with `:` introduces
    /// what follows: in rustc's output a snippet or a list of types, too long for a line; in
    /// cargo's a short list of names on indented lines (`help: available test targets:`).
    fn hint(&mut self, line: &str) {
        self.hint_list = false;
        if !line.starts_with("help: ") {
            return;
        }
        if !line.trim_end().ends_with(':') {
            self.hints.push(clip(line, MAX_NOTE));
        } else if !self.compiler {
            self.hints.push(clip(line, MAX_NOTE));
            self.hint_list = true;
        }
    }

    /// A name of the list the last hint introduced, added to it while the hint stays a note's
    /// length.
    fn list_in_hint(&mut self, name: &str) {
        let Some(hint) = self.hints.last_mut() else { return };
        let separator = if hint.ends_with(':') { " " } else { ", " };
        if hint.len() + separator.len() + name.len() <= MAX_NOTE {
            hint.push_str(separator);
            hint.push_str(name.trim());
        }
    }

    fn push_note(&mut self, note: &str) {
        if self.notes.len() < MAX_NOTES {
            self.notes.push(clip(note, MAX_NOTE));
        }
    }

    fn snippet(&mut self, line: &str) {
        if self.in_level_note {
            self.level_snippet(line);
        } else if self.stage == Stage::Primary && self.label.is_none() {
            self.label = caret_label(line).map(|l| clip(l, MAX_NOTE));
        }
    }

    /// Under `note: the lint level is defined here`, the caret marks the lint's name in the
    /// `#![deny(name)]` attribute.
    fn level_snippet(&mut self, line: &str) {
        let Some((gutter, code)) = line.split_once('|') else { return };
        if gutter.trim().bytes().any(|b| b.is_ascii_digit()) {
            self.level_source = Some(code.to_string());
            return;
        }
        let (Some(source), Some(start)) = (&self.level_source, code.find('^')) else { return };
        let end = start + code[start..].bytes().take_while(|&b| b == b'^').count();
        if let Some(name) = source.get(start..end) {
            self.level_lint = self.level_lint.take().or_else(|| lints::attribute_name(name));
        }
    }

    fn cause_line(&mut self, line: &str, fresh: bool, cwd: &str) {
        if fresh {
            self.causes.push(clip(line, MAX_NOTE));
        }
        let Some(script) = &mut self.build_script else { return };
        let text = line.strip_prefix("  ").unwrap_or(line);
        match text.trim_end() {
            "--- stderr" => script.in_stderr = true,
            "--- stdout" => script.in_stderr = false,
            _ if !script.in_stderr => {}
            _ if script.awaiting_message => {
                script.awaiting_message = false;
                script.panic_message = Some(clip(text, MAX_NOTE));
            }
            _ if script.awaiting_legacy_location => {
                if let Some(location) = panic::legacy_location(text) {
                    script.awaiting_legacy_location = false;
                    self.set_location(location, cwd);
                }
            }
            _ => match panic::start(text) {
                Some(PanicStart::AwaitMessage { location, .. }) => {
                    script.awaiting_message = true;
                    self.set_location(location, cwd);
                }
                Some(PanicStart::Complete { message, location, .. }) => {
                    script.panic_message = Some(clip(message, MAX_NOTE));
                    self.set_location(location, cwd);
                }
                Some(PanicStart::AwaitLocation { message, .. }) => {
                    script.panic_message = Some(clip(message, MAX_NOTE));
                    script.awaiting_legacy_location = true;
                }
                _ if script.panic_message.is_none()
                    && script.stderr_lines.len() < MAX_NOTES
                    && !text.starts_with("note: run with `RUST_BACKTRACE") =>
                {
                    script.stderr_lines.push(clip(text, MAX_NOTE));
                }
                _ => {}
            },
        }
    }

    /// The finished diagnostic, or None when the block turned out not to be one.
    pub(crate) fn finish(self, memory: &mut LintMemory, cwd: &str) -> Option<Diagnostic> {
        let Block { mut diag, start, last, notes, causes, label, hints, build_script, .. } = self;
        if self.test_binary {
            // A test binary that ended without a verdict: the cause says how it died.
            let cause = causes.first()?;
            let mut crashed = Diagnostic::error(cause.clone()).with_log_range(start, last);
            crashed.notes.push(diag.message);
            return Some(crashed);
        }
        if diag.file.is_none() {
            locate_manifest_error(&mut diag, &causes, cwd);
        }
        if diag.file.is_none()
            && let Some(path) = manifest_named_first(&diag.message)
        {
            diag.file = Some(relative_to(path, cwd));
        }
        if self.require_location && diag.file.is_none() {
            return None;
        }
        if diag.code.is_none() && self.compiler {
            let explicit = self.lint_note.or(self.clippy_link).or(self.level_lint);
            match explicit {
                Some(lint) => {
                    memory.learn(&diag.message, &lint);
                    diag.code = Some(lint);
                }
                None if diag.file.is_some() => diag.code = memory.recall(&diag.message),
                None => {}
            }
        }
        if let Some(label) = &label
            && names_the_fix(&diag)
            && let Some(message) = headline_with_label(&diag.message, label)
        {
            diag.message = message;
        }
        let mut front = Vec::new();
        if let Some(script) = build_script {
            match script.panic_message {
                // The script crashed: its panic is the error, and cargo's headline only says
                // which package's script it was.
                Some(message) => front.push(std::mem::replace(&mut diag.message, message)),
                None => front = script.stderr_lines,
            }
        }
        // cargo's own helps and tips say how to call it; rustc's only some of the time.
        let mut hints = hints;
        if self.compiler {
            hints.retain(|help| help_adds_to(&diag.message, help));
        }
        if names_the_fix(&diag)
            && let Some(message) = headline_with_hints(&diag.message, &hints)
        {
            diag.message = message;
        }
        front.extend(label);
        // The notes' own vector takes what goes before them: usually nothing, and then finishing
        // allocates no vector of its own.
        let mut all = notes;
        all.splice(0..0, front);
        all.extend(cause_notes(causes, MAX_NOTES.saturating_sub(all.len())));
        all.truncate(MAX_NOTES);
        diag.notes = all;
        Some(diag.with_log_range(start, last))
    }
}

/// `  tip: to pass '--nocapture' as a value, use '-- --nocapture'`: a tip of cargo's argument
/// parser.
fn is_tip(line: &str) -> bool {
    line.starts_with(' ') && line.trim_start().starts_with("tip: ")
}

/// A line that starts a diagnostic, a JSON message, libtest's report or a panic: the words the
/// recognisers of those formats start on.
fn starts_a_report(line: &str) -> bool {
    [diagnostics::STARTS, json::STARTS, libtest::STARTS, panics::STARTS]
        .iter()
        .flat_map(|starts| starts.iter())
        .any(|start| line.starts_with(start))
}

/// True for a compiler error whose headline may need its primary label to say what to fix
/// (`mismatched types`). Lints name their problem in the headline already, and their labels are
/// suggestions that would only lengthen every line.
pub(crate) fn names_the_fix(diag: &Diagnostic) -> bool {
    diag.severity == Severity::Error && diag.code.as_deref().is_none_or(is_error_code)
}

/// `E0308`: rustc's error codes, as opposed to lint names.
fn is_error_code(code: &str) -> bool {
    code.len() == 5 && code.starts_with('E') && code[1..].bytes().all(|b| b.is_ascii_digit())
}

/// The first causes and the root one, at most `room` of them.
fn cause_notes(mut causes: Vec<String>, room: usize) -> Vec<String> {
    if causes.len() > room && room > 0 {
        let root = causes.pop();
        causes.truncate(room - 1);
        causes.extend(root);
    }
    causes.truncate(room);
    causes
}

/// `/p/Cargo.toml: …`: the manifest a cargo error names before its first `: `.
fn manifest_named_first(message: &str) -> Option<&str> {
    let at = message.match_indices(':').map(|(at, _)| at).find(|&at| message[at..].starts_with(": "))?;
    let path = &message[..at];
    (path.ends_with("Cargo.toml") && !path.contains(' ')).then_some(path)
}

fn locate_manifest_error(diag: &mut Diagnostic, causes: &[String], cwd: &str) {
    let Some(path) = MANIFEST_PATH.captures(&diag.message).and_then(|c| c.get(1)) else { return };
    let position = causes.iter().find_map(|c| TOML_POSITION.captures(c));
    if let Some(p) = position {
        diag.file = Some(relative_to(path.as_str(), cwd));
        diag.line = p[1].parse().ok();
        diag.column = p[2].parse().ok();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_headlines() {
        assert_eq!(
            headline("error[E0308]: mismatched types"),
            Some(Headline { severity: Severity::Error, code: Some("E0308"), message: "mismatched types" })
        );
        assert_eq!(
            headline("warning: unused import: `a`"),
            Some(Headline { severity: Severity::Warning, code: None, message: "unused import: `a`" })
        );
        assert_eq!(headline("errors: 3"), None);
        assert_eq!(headline("error[E03"), None);
        assert_eq!(headline("error: "), None);
        assert_eq!(headline("warnings are fine"), None);
    }

    #[test]
    fn classifies_cargo_wrap_up_lines() {
        let kind = |line: &str| headline(line).map(|h| classify(&h));
        assert_eq!(kind("error: could not compile `x` (lib) due to 2 previous errors"), Some(HeadlineKind::Summary));
        assert_eq!(kind("warning: `x` (lib test) generated 2 warnings (1 duplicate)"), Some(HeadlineKind::Summary));
        assert_eq!(kind("error: 2 targets failed:"), Some(HeadlineKind::Summary));
        assert_eq!(kind("warning: 1 warning emitted"), Some(HeadlineKind::Summary));
        assert_eq!(kind("warning: build failed, waiting for other jobs to finish..."), Some(HeadlineKind::Summary));
        assert_eq!(kind("error: test failed, to rerun pass `--lib`"), Some(HeadlineKind::TestBinary));
        assert_eq!(kind("warning: unused manifest key: package.colour"), Some(HeadlineKind::Report));
        assert_eq!(kind("error: no matching package named `nope` found"), Some(HeadlineKind::Report));
        assert_eq!(rerun_args("test failed, to rerun pass `--test api`"), "--test api");
        let notice = headline(
            "warning: spurious network error (2 tries remaining): failed to connect to 127.0.0.1: Connection \
             refused; class=Os (2)",
        );
        assert!(notice.is_some_and(|h| is_toolchain_notice(&h)));
        let project = headline("warning: unused manifest key: package.colour");
        assert!(project.is_some_and(|h| !is_toolchain_notice(&h)));
        assert_eq!(rerun_args("doctest failed, to rerun pass `-p core --doc`"), "-p core --doc");
        assert_eq!(rerun_args("test failed, to rerun pass '--doc'"), "--doc");
    }

    #[test]
    fn keeps_first_causes_and_the_root() {
        let causes: Vec<String> = (1..=6).map(|i| format!("c{i}")).collect();
        assert_eq!(cause_notes(causes.clone(), 3), ["c1", "c2", "c6"]);
        assert_eq!(cause_notes(causes[..2].to_vec(), 3), ["c1", "c2"]);
        assert!(cause_notes(causes, 0).is_empty());
    }
}
