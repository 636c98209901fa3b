//! The answer to `exec` at each detail level.
//!
//! Standard text, for a failed build:
//!
//! ```text
//! FAIL exit 101 · run kipomeru
//! vs bafotemu: 1 fixed, 1 new, 1 still
//! src/lib.rs:14:28 E0308 mismatched types
//! new src/main.rs:3:5 E0425 cannot find value `x` in this scope
//! log startLine 2 lineCount 12
//! ```
//!
//! The `vs` line compares the run with the previous run of the same command (see
//! [`crate::history`]); `new` marks what that run did not have.
//!
//! A standard answer stays under about 2000 tokens whatever the run: past a budget the rest of
//! the errors are counted by file and code, with the call that lists them all. Diagnostics that
//! say the same thing (a missing fixture in nine tests, one deprecation warned in fifteen places)
//! are one line, `×9`, with the places where the others are.

use super::{Detail, Hints, LogSpan, Rendered, Surface, clip, log_call, plural};
use crate::outcome::{Comparison, Finished, OwnedProblem, RunResult};
use crate::store::{LogLine, RunStatus, Versus};
use buildvise_plugin_api::{Diagnostic, Severity, TestSummary};
use serde::Serialize;
use std::collections::{BTreeMap, HashSet};
use std::fmt::Write;

/// Characters of diagnostic lines a standard answer lists before counting the rest: about 1750
/// tokens at the 2.86 characters a token measured on the densest corpus case (paths, codes).
const STANDARD_BUDGET: usize = 5000;
/// Warnings a standard answer lists when there are errors too, and when there are none.
const WARNINGS_WITH_ERRORS: usize = 5;
const WARNINGS_ALONE: usize = 15;
/// Longest note put on a standard test-failure line, in bytes.
const NOTE_BYTES: usize = 60;
/// Files and codes named when the rest is counted, and files a summary names.
const REST_FILES: usize = 8;
const REST_CODES: usize = 6;
const SUMMARY_FILES: usize = 10;
/// Longest tail line, in bytes.
const TAIL_LINE_BYTES: usize = 400;
/// Places a grouped line names besides its own before counting the rest.
const GROUP_PLACES: usize = 6;
/// Bytes of diagnostic lines and notes a `full` answer lists before counting the rest.
const FULL_BUDGET: usize = 3 * STANDARD_BUDGET;
/// Diagnostics that say the same thing are grouped from this many: a pair's two lines cost about
/// what one line and the other's place do, and keep both whole.
const GROUP_LEAST: usize = 3;

/// The JSON form of an exec answer (`structuredContent`, `--json`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecView<'a> {
    pub run_id: &'a str,
    pub tool: &'a str,
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The signal that killed the command (`SIGSEGV`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
    pub success: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    pub errors: usize,
    pub warnings: usize,
    /// Warnings the toolchain gave about itself, counted apart (listed in `full`).
    #[serde(skip_serializing_if = "is_zero")]
    pub toolchain_warnings: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<&'a TestSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped_early: Option<&'a str>,
    /// Per file: [errors, warnings] (summary detail).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub files: BTreeMap<&'a str, [usize; 2]>,
    /// What changed since the previous run of the same command.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vs: Option<VsView<'a>>,
    /// As the detail level shows them: notes only in `full`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<ViewDiagnostic>,
    /// Diagnostics not listed, when the answer was capped.
    #[serde(skip_serializing_if = "is_zero")]
    pub omitted: usize,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failed_tests: Vec<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parser_error: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<&'a str>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub notes: &'a [String],
    /// The processes the command left running, which were ended: a command name each.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub left_running: &'a [String],
    /// Lines before the tail that read like a failure, where nothing explained it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub flagged: Vec<TailLine>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tail: Vec<TailLine>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// A diagnostic as an answer shows it, marked when the previous run did not have it.
#[derive(Debug, Serialize)]
pub struct ViewDiagnostic {
    #[serde(flatten)]
    pub diagnostic: Diagnostic,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub new: bool,
}

/// The comparison with the previous run: counts, and in `full` what was fixed.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VsView<'a> {
    #[serde(flatten)]
    pub counts: &'a Versus,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub fixed_problems: &'a [OwnedProblem],
}

#[derive(Debug, Serialize)]
pub struct TailLine {
    pub n: u64,
    pub text: String,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A signal's name as a shell shows it (`SIGSEGV`), or `signal N` for one this system does not
/// name.
fn signal_name(signal: i32) -> String {
    #[cfg(unix)]
    {
        nix::sys::signal::Signal::try_from(signal)
            .map_or_else(|_| format!("signal {signal}"), |s| s.as_str().to_string())
    }
    // Windows has no signals to name: a run ends by its exit code there.
    #[cfg(not(unix))]
    format!("signal {signal}")
}

fn status_word(f: &Finished, success: bool) -> &'static str {
    match f.meta.status {
        RunStatus::TimedOut => "timedOut",
        RunStatus::Cancelled => "cancelled",
        RunStatus::Killed => "killed",
        RunStatus::Running => "running",
        RunStatus::Failed => "error",
        RunStatus::Damaged => "damaged",
        RunStatus::Exited if success => "ok",
        RunStatus::Exited => "failed",
    }
}

/// Whether the answer calls the run a success. A run's exit code is the tool's own, and the
/// plugin's reading of it stands; a parsed file's is whatever `parse` was told, 0 when it was told
/// nothing, so there a log that shows failed tests or errors is a failure whatever the code.
fn succeeded(r: &RunResult, hints: Hints) -> bool {
    let shows_failure = r.errors().next().is_some()
        || !r.failed_tests.is_empty()
        || r.summary.as_ref().is_some_and(|s| s.failed > 0 || s.errors.is_some_and(|n| n > 0));
    r.success && (hints.stored || !shows_failure)
}

/// What the previous run of the command did not have.
struct New<'a> {
    /// Addresses of the run's new diagnostics, which are the run's own.
    diagnostics: HashSet<*const Diagnostic>,
    tests: &'a [String],
}

impl<'a> New<'a> {
    fn of(r: &'a RunResult) -> Self {
        let Some(vs) = &r.vs else { return New { diagnostics: HashSet::new(), tests: &[] } };
        let diagnostics =
            vs.new_diagnostics.iter().filter_map(|&i| r.diagnostics.get(i)).map(std::ptr::from_ref).collect();
        New { diagnostics, tests: &vs.new_tests }
    }

    fn diagnostic(&self, d: &Diagnostic) -> bool {
        self.diagnostics.contains(&std::ptr::from_ref(d))
    }

    /// `d` as the answer shows it, with its notes when `notes`.
    fn view(&self, d: &Diagnostic, notes: bool) -> ViewDiagnostic {
        let diagnostic = if notes { d.clone() } else { d.clone().with_notes(Vec::new()) };
        ViewDiagnostic { diagnostic, new: self.diagnostic(d) }
    }
}

/// The last lines of a run's output, for an answer that shows them.
#[derive(Clone, Copy)]
pub struct Tail<'a> {
    /// At least as many last lines as the answer may show.
    pub lines: &'a [LogLine],
    /// Lines in the whole log.
    pub total: u64,
    /// The first lines before the tail's window that read like a failure, and how many there
    /// are ([`crate::parse::flag_stored`]): what the tail of a flood does not show.
    pub flagged: &'a [LogLine],
    pub flagged_count: u64,
    /// The `grep` that finds every flagged line, offered for those not shown.
    pub flagged_grep: &'a str,
}

/// Whether an answer at `detail` shows the output's tail: always in full; in standard when
/// nothing explains a failure. Warnings explain nothing: a crash after a config warning still
/// needs its last lines.
pub fn needs_tail(f: &Finished, detail: Detail) -> bool {
    let r = &f.result;
    let unexplained = !r.success && r.errors().next().is_none() && unlisted_failed_tests(r).is_empty();
    detail == Detail::Full || (unexplained && detail == Detail::Standard)
}

/// Renders a finished run. `tail` is read by the caller when [`needs_tail`] says so.
pub fn render_exec(f: &Finished, tail: Option<Tail<'_>>, detail: Detail, max_lines: u32, hints: Hints) -> Rendered {
    let r = &f.result;
    let id = f.meta.id.as_str();
    let errors: Vec<&Diagnostic> = r.errors().collect();
    let warnings: Vec<&Diagnostic> = r.warnings().collect();
    // In standard every diagnostic is listed or counted in a `+N more` line, so the header's counts
    // would say it twice.
    let success = succeeded(r, hints);
    let mut text = header(f, success, errors.len(), warnings.len(), detail != Detail::Standard, hints.stored);
    let mut view = ExecView {
        run_id: id,
        tool: &f.meta.tool,
        status: status_word(f, success),
        exit_code: f.meta.exit_code,
        signal: f.meta.signal.map(signal_name),
        success,
        duration_ms: f.meta.duration_ms(),
        errors: errors.len(),
        warnings: warnings.len(),
        toolchain_warnings: r.toolchain_warnings(),
        summary: r.summary.as_ref(),
        stopped_early: r.stopped_early.as_deref(),
        files: BTreeMap::new(),
        vs: r.vs.as_ref().filter(|c| c.says_something()).map(|c| VsView {
            counts: &c.counts,
            fixed_problems: if detail == Detail::Full { &c.fixed_problems } else { &[] },
        }),
        diagnostics: Vec::new(),
        omitted: 0,
        failed_tests: Vec::new(),
        parser_error: r.parser_error.as_deref(),
        note: f.meta.error.as_deref(),
        notes: &f.meta.notes,
        left_running: &f.meta.left_running,
        flagged: Vec::new(),
        tail: Vec::new(),
        hint: None,
    };

    if let Some(vs) = r.vs.as_ref().filter(|c| c.says_something()) {
        let _ = writeln!(text, "vs {}: {}", vs.counts.which(), vs.counts.counts());
    }
    let new = New::of(r);
    if let Some(e) = &r.parser_error {
        let _ = writeln!(text, "parser failed: {e}");
    }
    for note in f.meta.error.iter().chain(&f.meta.notes) {
        let _ = writeln!(text, "note: {note}");
    }
    match detail {
        Detail::Summary => summary_body(&mut text, &mut view, r),
        Detail::Standard => standard_body(&mut text, &mut view, &errors, &warnings, &new, hints),
        Detail::Full => full_body(&mut text, &mut view, r, &new, hints),
    }
    let unlisted_failed = unlisted_failed_tests(r);
    if !unlisted_failed.is_empty() && detail != Detail::Summary {
        let marked: Vec<String> = unlisted_failed
            .iter()
            .map(|t| if new.tests.iter().any(|n| n == t) { format!("new {t}") } else { t.to_string() })
            .collect();
        let _ = writeln!(text, "failed: {}", marked.join(", "));
    }
    if let Some(vs) = r.vs.as_ref().filter(|_| detail == Detail::Full) {
        fixed_list(&mut text, vs);
    }
    view.failed_tests = r.failed_tests.iter().map(String::as_str).collect();

    if let Some(tail) = tail.filter(|_| needs_tail(f, detail)) {
        flagged_lines(&mut text, &mut view, &tail, hints);
        let window = &tail.lines[tail.lines.len().saturating_sub(max_lines as usize)..];
        // In standard, lines a listed diagnostic stands for (`[warn] src/a.ts`) are said already.
        let said = |n: u64| {
            detail == Detail::Standard
                && view
                    .diagnostics
                    .iter()
                    .filter_map(|d| d.diagnostic.log_range)
                    .any(|r| (r.start..=r.end).contains(&n))
        };
        let lines: Vec<&LogLine> = window.iter().filter(|l| !said(l.number)).collect();
        if !lines.is_empty() {
            let (shown, total) = (lines.len(), tail.total);
            let _ = writeln!(
                text,
                "{}:",
                if lines.len() < window.len() {
                    format!("other output ({shown} of {total} lines)")
                } else if shown as u64 == total {
                    format!("output ({})", plural(total as usize, "line", "lines"))
                } else {
                    format!("last {shown} of {total} lines")
                }
            );
            for line in lines {
                let clean = String::from_utf8_lossy(&buildvise_plugin_api::strip_ansi(&line.bytes)).into_owned();
                let shown = clip(&clean, TAIL_LINE_BYTES).into_owned();
                let _ = writeln!(text, "{shown}");
                view.tail.push(TailLine { n: line.number, text: shown });
            }
            if (window.len() as u64) < total && detail == Detail::Standard && hints.stored {
                let span = LogSpan { start: Some(-(i64::from(max_lines) * 2)), ..LogSpan::default() };
                let hint = format!("earlier: {}", log_call(hints.surface, id, span));
                let _ = writeln!(text, "{hint}");
                view.hint = Some(hint);
            }
        }
    }
    Rendered { text, structured: serde_json::to_value(&view).unwrap_or_default() }
}

/// The lines before the tail that read like a failure, numbered, and a grep for the rest: a
/// flood's tail alone hides the two mismatches in the middle.
fn flagged_lines(text: &mut String, view: &mut ExecView<'_>, tail: &Tail<'_>, hints: Hints) {
    if tail.flagged.is_empty() {
        return;
    }
    let _ = writeln!(text, "lines that read like failures ({}):", tail.flagged_count);
    for line in tail.flagged {
        let clean = String::from_utf8_lossy(&buildvise_plugin_api::strip_ansi(&line.bytes)).into_owned();
        let shown = clip(&clean, TAIL_LINE_BYTES).into_owned();
        let _ = writeln!(text, "{}: {shown}", line.number);
        view.flagged.push(TailLine { n: line.number, text: shown });
    }
    let rest = tail.flagged_count - tail.flagged.len() as u64;
    if rest > 0 && hints.stored {
        let span = LogSpan { grep: Some(tail.flagged_grep), ..LogSpan::default() };
        let _ = writeln!(text, "+{rest} more: {}", log_call(hints.surface, view.run_id, span));
    }
}

fn header(f: &Finished, success: bool, errors: usize, warnings: usize, counts: bool, stored: bool) -> String {
    let r = &f.result;
    let mut parts: Vec<String> = Vec::new();
    parts.push(match f.meta.status {
        // The limit that was hit, so the agent knows what `timeout` to send instead.
        RunStatus::TimedOut => match f.meta.timeout_secs {
            Some(limit) => format!("TIMEOUT after {limit}s"),
            None => "TIMEOUT".to_string(),
        },
        RunStatus::Cancelled => "CANCELLED".to_string(),
        RunStatus::Killed => match f.meta.signal {
            Some(signal) => format!("KILLED by {}", signal_name(signal)),
            None => "KILLED".to_string(),
        },
        RunStatus::Running => "RUNNING".to_string(),
        RunStatus::Failed => "ERROR".to_string(),
        RunStatus::Damaged => "DAMAGED".to_string(),
        RunStatus::Exited => match (success, f.meta.exit_code) {
            (true, Some(0)) | (true, None) => "ok".to_string(),
            (true, Some(code)) => format!("ok exit {code}"),
            // A parsed file's 0 is most likely `--exit-code` left at its default: no fact to state.
            (false, Some(0)) if !stored => "FAIL".to_string(),
            (false, Some(code)) => format!("FAIL exit {code}"),
            (false, None) => "FAIL".to_string(),
        },
    });
    // Failed tests are counted by the test summary; the error count is for everything else.
    let errors = if r.summary.is_some() { r.errors().filter(|d| d.test.is_none()).count() } else { errors };
    let mut shown = Vec::new();
    if counts && errors > 0 {
        shown.push(plural(errors, "error", "errors"));
    }
    if counts && warnings > 0 {
        shown.push(plural(warnings, "warning", "warnings"));
    }
    // Counted on every level and listed only in full: the same notice on every run is noise.
    match r.toolchain_warnings() {
        0 => {}
        1 => shown.push("1 toolchain warning".to_string()),
        n => shown.push(format!("{n} toolchain warnings")),
    }
    if !shown.is_empty() {
        parts.push(shown.join(", "));
    }
    if let Some(s) = &r.summary {
        parts.push(format!("tests {}", test_counts(s)));
    }
    if let Some(what) = &r.stopped_early {
        parts.push(format!("stopped early: {what}"));
    }
    if let Some(ms) = f.meta.duration_ms().filter(|ms| *ms >= 5000 && f.meta.status != RunStatus::TimedOut) {
        parts.push(format!("{}s", ms / 1000));
    }
    if stored {
        parts.push(format!("run {}", f.meta.id));
    }
    parts.join(" · ") + "\n"
}

/// `4 passed, 5 failed, 1 skipped`; `of N` only when the counts do not add up to the total (tests
/// that never ran), so it says something whenever it is there.
fn test_counts(s: &TestSummary) -> String {
    let mut parts = vec![format!("{} passed", s.passed)];
    let mut add = |n: u64, one: &str, many: &str| {
        if n > 0 {
            parts.push(plural(n as usize, one, many));
        }
    };
    add(s.failed, "failed", "failed");
    add(s.errors.unwrap_or(0), "error", "errors");
    add(s.skipped, "skipped", "skipped");
    add(s.xfailed.unwrap_or(0), "xfailed", "xfailed");
    add(s.xpassed.unwrap_or(0), "xpassed", "xpassed");
    add(s.projects_build_failed.unwrap_or(0), "project failed to build", "projects failed to build");
    let counted =
        s.passed + s.failed + s.skipped + s.errors.unwrap_or(0) + s.xfailed.unwrap_or(0) + s.xpassed.unwrap_or(0);
    match counted == s.total {
        true => parts.join(", "),
        false => format!("{} of {}", parts.join(", "), s.total),
    }
}

/// One diagnostic as one line: `file:line:col code test: message`.
pub(super) fn diagnostic_line(d: &Diagnostic, cut: Cut) -> String {
    let mut line = String::new();
    if let Some(file) = &d.file {
        line.push_str(file);
        if let Some(l) = d.line {
            let _ = write!(line, ":{l}");
            if let Some(c) = d.column {
                let _ = write!(line, ":{c}");
            }
        }
        line.push(' ');
    }
    if let Some(code) = &d.code {
        line.push_str(code);
        line.push(' ');
    }
    if let Some(test) = &d.test {
        line.push_str(test_name(test, d.file.as_deref()));
        line.push_str(": ");
    }
    // `AssertionError: assert x` under code AssertionError says the code twice.
    let message = d.message.trim();
    let message = d
        .code
        .as_deref()
        .and_then(|c| message.strip_prefix(c))
        .and_then(|m| m.strip_prefix(':'))
        .map(str::trim_start)
        .unwrap_or(message);
    line.push_str(&cut.apply(message));
    line
}

/// A test as its runner names it, so it can be copied into a rerun, less the file the line has
/// just named: pytest's `tests/test_cart.py::test_total` at `tests/test_cart.py:19` is
/// `::test_total`, rustdoc's `src/lib.rs - parse (line 14)` at `src/lib.rs:6:1` is
/// `parse (line 14)`.
fn test_name<'a>(test: &'a str, file: Option<&str>) -> &'a str {
    let Some(rest) = file.and_then(|f| test.strip_prefix(f)) else { return test };
    if rest.starts_with("::") {
        return rest;
    }
    rest.strip_prefix(" - ").unwrap_or(test)
}

/// Where a headline is cut in standard; full shows it whole.
#[derive(Clone, Copy)]
pub(super) struct Cut {
    /// Longest headline kept, in bytes.
    at: usize,
    /// Bytes a cut must save to be made at all.
    unless_within: usize,
}

impl Cut {
    /// An error's. The first error cut short gets a pointer to its log lines (`log startLine 4
    /// lineCount 2`), so it is cut only where that saves more than the pointer costs.
    const ERROR: Cut = Cut { at: 160, unless_within: 40 };
    /// A warning's, whose first words say what it is about; no pointer follows it.
    const WARNING: Cut = Cut { at: 100, unless_within: 0 };
    pub(super) const WHOLE: Cut = Cut { at: usize::MAX, unless_within: 0 };

    fn cuts(self, message: &str) -> bool {
        message.len() > self.at.saturating_add(self.unless_within)
    }

    fn apply(self, message: &str) -> std::borrow::Cow<'_, str> {
        if self.cuts(message) { clip(message, self.at) } else { message.into() }
    }
}

/// A test failure's headline is often only the matcher (`assertion `left == right` failed`); the
/// values it compared sit in the first short notes (`left: 6`, `right: 7`). They go on the line,
/// which spares the agent a `log` call for the most common question.
fn with_compared_values(mut line: String, d: &Diagnostic) -> String {
    let mut values = compared_values(d);
    // A value the headline already shows (`assert 37.0 == 37.5 ± 0.01`) is not said twice.
    if values.iter().all(|(_, value)| line.contains(value)) {
        values.clear();
    }
    if !values.is_empty() {
        // Inside the parentheses a colon after the label is one more token that says nothing.
        let values: Vec<String> = values.iter().map(|(label, value)| format!("{label} {value}")).collect();
        let _ = write!(line, " ({})", values.join("; "));
    }
    line
}

/// The first two `label: value` notes of a failed test, split; the value without the alignment a
/// terminal needed (`Actual:   100.00`).
fn compared_values(d: &Diagnostic) -> Vec<(&str, &str)> {
    if d.test.is_none() {
        return Vec::new();
    }
    d.notes.iter().map(|n| n.trim()).filter(|n| n.len() <= NOTE_BYTES).filter_map(labelled_value).take(2).collect()
}

/// `Expected: 6`, `left: Some(3)`, `Actual:   100.00`: a short label, a colon, a value. Prose
/// (`Omitting 2 identical items`) and headings (`Differing items:`) are not.
fn labelled_value(note: &str) -> Option<(&str, &str)> {
    let (label, value) = note.split_once(':')?;
    let value = value.trim();
    let is_label =
        (1..=24).contains(&label.len()) && label.chars().all(|c| c.is_alphanumeric() || c == ' ' || c == '_');
    (is_label && !value.is_empty()).then_some((label, value))
}

fn summary_body<'a>(text: &mut String, view: &mut ExecView<'a>, r: &'a RunResult) {
    let mut files: BTreeMap<&str, [usize; 2]> = BTreeMap::new();
    for d in &r.diagnostics {
        let slot = match d.severity {
            Severity::Error => 0,
            Severity::Warning => 1,
            _ => continue,
        };
        if !d.toolchain {
            files.entry(d.file.as_deref().unwrap_or("(no file)")).or_default()[slot] += 1;
        }
    }
    // Worth a line only when some file has several: otherwise it is as long as the listing.
    if files.len() > 1 && files.values().any(|[e, w]| e + w > 1) {
        let mut ranked: Vec<(&str, [usize; 2])> = files.iter().map(|(f, n)| (*f, *n)).collect();
        ranked.sort_by(|a, b| (b.1[0] + b.1[1]).cmp(&(a.1[0] + a.1[1])).then(a.0.cmp(b.0)));
        // With one kind the header names it and a bare count reads plainly; with both, words.
        let mixed = files.values().any(|[e, _]| *e > 0) && files.values().any(|[_, w]| *w > 0);
        let mut parts: Vec<String> = ranked
            .iter()
            .take(SUMMARY_FILES)
            .map(|(file, [e, w])| match (mixed, e, w) {
                (false, e, w) => format!("{file} {}", e + w),
                (true, e, 0) => format!("{file} {}", plural(*e, "error", "errors")),
                (true, 0, w) => format!("{file} {}", plural(*w, "warning", "warnings")),
                (true, e, w) => {
                    format!("{file} {} {}", plural(*e, "error", "errors"), plural(*w, "warning", "warnings"))
                }
            })
            .collect();
        if ranked.len() > SUMMARY_FILES {
            parts.push(format!("{} more files", ranked.len() - SUMMARY_FILES));
        }
        let _ = writeln!(text, "{}", parts.join(if mixed { "; " } else { ", " }));
    }
    view.files = files;
}

fn standard_body<'a>(
    text: &mut String,
    view: &mut ExecView<'a>,
    errors: &[&'a Diagnostic],
    warnings: &[&'a Diagnostic],
    new: &New<'_>,
    hints: Hints,
) {
    let mut budget = STANDARD_BUDGET;
    let (listed_errors, mut unnamed) = list_within(text, errors, &mut budget, usize::MAX, Cut::ERROR, new);
    let errors_left = not_in(errors, &listed_errors);
    let warning_cap = if errors.is_empty() { WARNINGS_ALONE } else { WARNINGS_WITH_ERRORS };
    if !warnings.is_empty() && errors_left.is_empty() {
        // The header no longer counts them, so the label is what says these are warnings.
        text.push_str("warnings:\n");
        let (listed, unnamed_warnings) = list_within(text, warnings, &mut budget, warning_cap, Cut::WARNING, new);
        unnamed |= unnamed_warnings;
        view.diagnostics.extend(listed.iter().map(|d| new.view(d, false)));
        let left = not_in(warnings, &listed);
        count_rest(text, "warnings", &left);
        view.omitted += left.len();
    } else {
        view.omitted += warnings.len();
        if !warnings.is_empty() {
            count_rest(text, "warnings", warnings);
        }
    }
    view.diagnostics.splice(0..0, listed_errors.iter().map(|d| new.view(d, false)));
    if !errors_left.is_empty() {
        count_rest(text, "errors", &errors_left);
        view.omitted += errors_left.len();
    }
    let run_id = view.run_id;
    let hint = if view.omitted > 0 || unnamed {
        Some(format!("all: {}", full_call(hints, run_id)))
    } else {
        // The first error whose log says more than its line shows: a code frame, a diff, a trace.
        errors.iter().filter(|d| lacks_detail(d)).find_map(|d| d.log_range).map(|range| {
            let count = (range.end - range.start + 1).min(200);
            first_error_call(hints, run_id, range.start, count)
        })
    };
    if let Some(h) = hint {
        let _ = writeln!(text, "{h}");
        view.hint = Some(h);
    }
}

/// Whether the log holds more about `d` than its standard line says: the rest of a headline
/// cut short, or a block of three lines or more (a code frame, a trace, a diff; a two-line panic is its line and a location) with notes the
/// line does not already carry (a label, the values a test compared).
fn lacks_detail(d: &Diagnostic) -> bool {
    let Some(range) = d.log_range else { return false };
    // A headline cut short, here or by its parser: the rest of it is in the log.
    let message = d.message.trim();
    if Cut::ERROR.cuts(message) || message.ends_with('…') {
        return true;
    }
    if range.end < range.start + 2 {
        return false;
    }
    let line = with_compared_values(diagnostic_line(d, Cut::ERROR), d);
    // A compared value is carried when its value is on the line, with or without its label.
    let carried = |note: &str| line.contains(labelled_value(note).map_or(note, |(_, value)| value));
    d.notes.is_empty() || d.notes.iter().any(|n| !carried(n.trim()))
}

/// Where the first error stands in the log, in full (`more:` is the cheapest word that says so).
/// For MCP the run id is in the header already and the line is the call itself, so it names only
/// the action and the two numbers the `log` call needs.
fn first_error_call(hints: Hints, run_id: &str, start: u64, count: u64) -> String {
    match (hints.stored, hints.surface) {
        // A parsed file is no run to page: the lines are named for whoever holds the file.
        (false, _) => format!("more: log lines {start}-{}", start + count - 1),
        (true, Surface::Mcp) => format!("log startLine {start} lineCount {count}"),
        (true, Surface::Cli) => {
            let span = LogSpan { start: Some(start as i64), count: Some(count), ..LogSpan::default() };
            format!("more: {}", log_call(Surface::Cli, run_id, span))
        }
    }
}

/// The call that re-renders a stored run in full, without running it again.
fn full_call(hints: Hints, run_id: &str) -> String {
    match (hints.stored, hints.surface) {
        (false, _) => "add --detail full".to_string(),
        (true, Surface::Mcp) => format!("{{\"action\":\"log\",\"runId\":\"{run_id}\",\"detail\":\"full\"}}"),
        (true, Surface::Cli) => format!("buildvise log {run_id} --detail full"),
    }
}

/// Appends diagnostics, a line per group of those that say the same thing, while the budget
/// and `cap` lines last; returns those listed, in the order listed, and whether a group's line
/// left some of its places unnamed.
fn list_within<'a>(
    text: &mut String,
    items: &[&'a Diagnostic],
    budget: &mut usize,
    cap: usize,
    cut: Cut,
    new: &New<'_>,
) -> (Vec<&'a Diagnostic>, bool) {
    let mut listed = Vec::new();
    let mut unnamed = false;
    for group in grouped(items, new).into_iter().take(cap) {
        let first = group[0];
        let mut line = with_compared_values(diagnostic_line(first, cut), first);
        if new.diagnostic(first) {
            line.insert_str(0, "new ");
        }
        if group.len() > 1 {
            let _ = write!(line, " ×{} ({})", group.len(), places(first, &group[1..]));
        }
        if line.len() + 1 > *budget {
            break;
        }
        *budget -= line.len() + 1;
        text.push_str(&line);
        text.push('\n');
        unnamed |= group.len() > GROUP_PLACES + 1;
        listed.extend(group);
    }
    (listed, unnamed)
}

/// `items` in groups of those that say the same thing (severity, code, headline, compared values,
/// and whether new), [`GROUP_LEAST`] or more, each group where its first is; the others alone, in
/// their order.
fn grouped<'a>(items: &[&'a Diagnostic], new: &New<'_>) -> Vec<Vec<&'a Diagnostic>> {
    type Key<'k> = (Severity, bool, Option<&'k str>, &'k str, Vec<(&'k str, &'k str)>, bool);
    let mut groups: Vec<Vec<&Diagnostic>> = Vec::new();
    let mut group_of: Vec<usize> = Vec::with_capacity(items.len());
    let mut index: std::collections::HashMap<Key<'_>, usize> = std::collections::HashMap::new();
    for &d in items {
        let key = (d.severity, d.toolchain, d.code.as_deref(), d.message.trim(), compared_values(d), new.diagnostic(d));
        let g = *index.entry(key).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[g].push(d);
        group_of.push(g);
    }
    let sizes: Vec<usize> = groups.iter().map(Vec::len).collect();
    let mut out = Vec::new();
    for (&d, &g) in items.iter().zip(&group_of) {
        if sizes[g] < GROUP_LEAST {
            out.push(vec![d]);
        } else if groups[g].first().is_some_and(|&first| std::ptr::eq(first, d)) {
            out.push(std::mem::take(&mut groups[g]));
        }
    }
    out
}

/// Where the others of a group are: each one's test, with its place when not the first's, or its
/// file and line; the first few, then how many more.
fn places(first: &Diagnostic, others: &[&Diagnostic]) -> String {
    let at = |d: &Diagnostic| match (&d.file, d.line) {
        (Some(file), Some(line)) => format!("{file}:{line}"),
        (Some(file), None) => file.clone(),
        (None, _) => "-".to_string(),
    };
    let place = |d: &Diagnostic| match &d.test {
        Some(test) if (&d.file, d.line) == (&first.file, first.line) => test_name(test, d.file.as_deref()).to_string(),
        Some(test) => format!("{test} ({})", at(d)),
        None => at(d),
    };
    let mut said: Vec<String> = others.iter().take(GROUP_PLACES).map(|d| place(d)).collect();
    if others.len() > GROUP_PLACES {
        said.push(format!("+{} more", others.len() - GROUP_PLACES));
    }
    format!("also {}", said.join(", "))
}

/// The diagnostics of `all` that `listed` does not hold, in order.
fn not_in<'a>(all: &[&'a Diagnostic], listed: &[&'a Diagnostic]) -> Vec<&'a Diagnostic> {
    let listed: HashSet<*const Diagnostic> = listed.iter().map(|&d| std::ptr::from_ref(d)).collect();
    all.iter().copied().filter(|&d| !listed.contains(&std::ptr::from_ref(d))).collect()
}

/// `+12 more errors (E0308 7, E0425 5) in 3 files: src/a.rs 8, src/b.rs 3, src/c.rs 1`.
fn count_rest(text: &mut String, what: &str, rest: &[&Diagnostic]) {
    if rest.is_empty() {
        return;
    }
    let by_code = ranked(rest.iter().filter_map(|d| d.code.as_deref()));
    let by_file = ranked(rest.iter().filter_map(|d| d.file.as_deref()));
    let codes = if by_code.is_empty() { String::new() } else { format!(" ({})", top(&by_code, REST_CODES, "codes")) };
    let what = if rest.len() == 1 { what.trim_end_matches('s') } else { what };
    // Those that name no file (npm's engine warnings) are counted, not placed in a file `-`.
    let files = match by_file.len() {
        0 => String::new(),
        n => format!(" in {}: {}", plural(n, "file", "files"), top(&by_file, REST_FILES, "files")),
    };
    let _ = writeln!(text, "+{} more {what}{codes}{files}", rest.len());
}

/// Distinct values with their counts, most frequent first.
fn ranked<'a>(values: impl Iterator<Item = &'a str>) -> Vec<(&'a str, usize)> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for v in values {
        *counts.entry(v).or_default() += 1;
    }
    let mut ranked: Vec<(&str, usize)> = counts.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    ranked
}

/// `a 3, b 2, 4 more files`.
fn top(ranked: &[(&str, usize)], limit: usize, noun: &str) -> String {
    let mut parts: Vec<String> = ranked.iter().take(limit).map(|(v, n)| format!("{v} {n}")).collect();
    if ranked.len() > limit {
        parts.push(format!("{} more {noun}", ranked.len() - limit));
    }
    parts.join(", ")
}

/// Every diagnostic with its notes and log range, grouped as in standard, within a budget three
/// times standard's: a run with thousands of warnings made `full` thousands of lines. Past it,
/// the rest are counted and the hint pages the log from the first of them.
fn full_body<'a>(text: &mut String, view: &mut ExecView<'a>, r: &'a RunResult, new: &New<'_>, hints: Hints) {
    let items: Vec<&Diagnostic> = r.diagnostics.iter().collect();
    let mut budget = FULL_BUDGET;
    let mut listed = Vec::new();
    for group in grouped(&items, new) {
        let d = group[0];
        let mut line = diagnostic_line(d, Cut::WHOLE);
        if new.diagnostic(d) {
            line.insert_str(0, "new ");
        }
        if d.severity == Severity::Warning {
            line.insert_str(0, "warning ");
        } else if d.severity == Severity::Info {
            line.insert_str(0, "info ");
        }
        if d.toolchain {
            line.insert_str(0, "toolchain ");
        }
        if let Some(range) = d.log_range {
            let _ = write!(line, " [log {}-{}]", range.start, range.end);
        }
        if group.len() > 1 {
            let _ = write!(line, " ×{} ({})", group.len(), places(d, &group[1..]));
        }
        line.push('\n');
        for note in &d.notes {
            let _ = writeln!(line, "  {note}");
        }
        if line.len() > budget {
            break;
        }
        budget -= line.len();
        text.push_str(&line);
        listed.extend(group);
    }
    view.diagnostics = listed.iter().map(|d| new.view(d, true)).collect();
    let left = not_in(&items, &listed);
    if left.is_empty() {
        return;
    }
    count_rest(text, "diagnostics", &left);
    view.omitted = left.len();
    if let Some(range) = left.iter().find_map(|d| d.log_range) {
        let hint = first_error_call(hints, view.run_id, range.start, 200);
        let _ = writeln!(text, "{hint}");
        view.hint = Some(hint);
    }
}

/// What the previous run had and this one does not, as the previous run reported it.
fn fixed_list(text: &mut String, vs: &Comparison) {
    let fixed = vs.counts.fixed;
    if fixed == 0 {
        return;
    }
    text.push_str("fixed:\n");
    for problem in &vs.fixed_problems {
        let line = match problem {
            OwnedProblem::Diagnostic(d) => diagnostic_line(d, Cut::WHOLE),
            OwnedProblem::Test(t) => t.test.clone(),
        };
        let _ = writeln!(text, "  {line}");
    }
    if fixed > vs.fixed_problems.len() {
        let _ = writeln!(text, "  +{} more", fixed - vs.fixed_problems.len());
    }
}

/// Failed tests that no diagnostic names.
fn unlisted_failed_tests(r: &RunResult) -> Vec<&str> {
    // Indexed once: looking through every diagnostic for each failed test made a run with 100 000
    // failures take most of a minute to answer.
    let listed: std::collections::HashSet<&str> = r.diagnostics.iter().filter_map(|d| d.test.as_deref()).collect();
    r.failed_tests.iter().map(String::as_str).filter(|t| !listed.contains(t)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_failures_carry_the_compared_values() {
        let mut d = Diagnostic::error("assertion `left == right` failed").with_location("src/lib.rs", Some(4), Some(9));
        d.notes = vec![
            "left: 6".into(),
            "Differing items:".into(),
            "Omitting 2 identical items".into(),
            "right:    7".into(),
        ];
        assert_eq!(
            with_compared_values(diagnostic_line(&d, Cut::ERROR), &d),
            "src/lib.rs:4:9 assertion `left == right` failed"
        );
        let d = d.with_test("tests::adds");
        assert_eq!(
            with_compared_values(diagnostic_line(&d, Cut::ERROR), &d),
            "src/lib.rs:4:9 tests::adds: assertion `left == right` failed (left 6; right 7)"
        );
    }

    #[test]
    fn a_test_line_does_not_name_its_file_twice() {
        let at = |file: &str, test: &str| {
            diagnostic_line(&Diagnostic::error("boom").with_location(file, Some(19), None).with_test(test), Cut::ERROR)
        };
        assert_eq!(
            at("tests/test_cart.py", "tests/test_cart.py::test_total"),
            "tests/test_cart.py:19 ::test_total: boom"
        );
        assert_eq!(at("src/lib.rs", "src/lib.rs - parse (line 14)"), "src/lib.rs:19 parse (line 14): boom");
        // Named whole where the failure stands in another file, or the id only starts alike.
        assert_eq!(
            at("shop/cart.py", "tests/test_cart.py::test_total"),
            "shop/cart.py:19 tests/test_cart.py::test_total: boom"
        );
        assert_eq!(at("tests/t.py", "tests/t.pyx::test_a"), "tests/t.py:19 tests/t.pyx::test_a: boom");
    }

    #[test]
    fn a_headline_is_cut_only_where_the_cut_saves_more_than_its_pointer() {
        let Cut { at, unless_within } = Cut::ERROR;
        let just_over = "x".repeat(at + unless_within);
        assert_eq!(Cut::ERROR.apply(&just_over), just_over);
        let long = "x".repeat(at + unless_within + 1);
        assert_eq!(Cut::ERROR.apply(&long), format!("{}…", &long[..at]));
        // A warning's gets no pointer, so nothing spares it.
        assert!(Cut::WARNING.cuts(&"x".repeat(101)));
    }

    fn finished(diagnostics: Vec<Diagnostic>, exit_code: i32) -> Finished {
        let mut meta = crate::store::RunMeta::starting("bafotemu", "npm.run", "npm", &[], "/p");
        meta.status = RunStatus::Exited;
        meta.exit_code = Some(exit_code);
        meta.ended_ms = Some(meta.started_ms);
        let result = RunResult { success: exit_code == 0, diagnostics, ..RunResult::default() };
        Finished { meta, result }
    }

    const MCP: Hints = Hints { surface: Surface::Mcp, stored: true };

    fn standard(f: &Finished, tail: &[LogLine], hints: Hints) -> String {
        let tail = Tail { lines: tail, total: tail.len() as u64, flagged: &[], flagged_count: 0, flagged_grep: "" };
        render_exec(f, Some(tail), Detail::Standard, 20, hints).text
    }

    fn line(number: u64, text: &str) -> LogLine {
        LogLine { number, stream: buildvise_plugin_api::Stream::Stdout, bytes: text.as_bytes().to_vec() }
    }

    #[test]
    fn a_failure_that_only_warnings_explain_shows_the_output_tail() {
        let f = finished(vec![Diagnostic::warning("some lint").with_location("src/a.js", Some(1), None)], 1);
        let text = standard(&f, &[line(1, "warn: some lint"), line(2, "cannot reach the service")], MCP);
        assert!(text.contains("output (2 lines):\n") && text.ends_with("cannot reach the service\n"), "{text}");
        let f = finished(vec![Diagnostic::error("boom").with_location("src/a.js", Some(1), None)], 1);
        assert!(!standard(&f, &[line(1, "boom")], MCP).contains("output ("));
    }

    #[test]
    fn the_tail_leaves_out_lines_a_listed_warning_stands_for() {
        let warned = |n: u64, file: &str| {
            Diagnostic::warning("not formatted").with_location(file, None, None).with_log_range(n, n)
        };
        let f = finished(vec![warned(2, "src/a.ts"), warned(3, "src/b.js")], 1);
        let lines = [
            line(1, "Checking formatting..."),
            line(2, "[warn] src/a.ts"),
            line(3, "[warn] src/b.js"),
            line(4, "[warn] 2 files"),
        ];
        let text = standard(&f, &lines, MCP);
        assert!(text.ends_with("other output (2 of 4 lines):\nChecking formatting...\n[warn] 2 files\n"), "{text}");
        let full = render_exec(
            &f,
            Some(Tail { lines: &lines, total: 4, flagged: &[], flagged_count: 0, flagged_grep: "" }),
            Detail::Full,
            20,
            MCP,
        )
        .text;
        assert!(full.contains("output (4 lines):\nChecking formatting...\n[warn] src/a.ts\n"), "{full}");
    }

    #[test]
    fn diagnostics_that_say_the_same_are_one_line_with_the_others_places() {
        let missing = |test: &str| {
            Diagnostic::error("fixture 'db' not found").with_location("tests/test_db.py", Some(3), None).with_test(test)
        };
        let deprecated = |file: &str, line: u32| {
            Diagnostic::warning("utcnow() is deprecated").with_code("DeprecationWarning").with_location(
                file,
                Some(line),
                None,
            )
        };
        let mut diagnostics: Vec<Diagnostic> =
            (0..9).map(|i| missing(&format!("tests/test_db.py::test_{i}"))).collect();
        diagnostics.insert(1, Diagnostic::error("assert 1 == 2").with_location("tests/test_x.py", Some(8), None));
        diagnostics.extend([deprecated("src/a.py", 4), deprecated("src/b.py", 9), deprecated("src/a.py", 12)]);
        let elsewhere = Diagnostic::error("fixture 'db' not found").with_location("tests/t2.py", Some(5), None);
        diagnostics.insert(2, elsewhere.with_test("tests/t2.py::test_z"));
        let f = finished(diagnostics, 1);
        let text = standard(&f, &[], MCP);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[1..],
            [
                "tests/test_db.py:3 ::test_0: fixture 'db' not found ×10 (also tests/t2.py::test_z (tests/t2.py:5), \
                 ::test_1, ::test_2, ::test_3, ::test_4, ::test_5, +3 more)",
                "tests/test_x.py:8 assert 1 == 2",
                "warnings:",
                "src/a.py:4 DeprecationWarning utcnow() is deprecated ×3 (also src/b.py:9, src/a.py:12)",
                "all: {\"action\":\"log\",\"runId\":\"bafotemu\",\"detail\":\"full\"}",
            ],
            "{text}"
        );
        let json = render_exec(&f, None, Detail::Standard, 20, MCP).structured;
        assert_eq!(json["diagnostics"].as_array().map(Vec::len), Some(14), "every one is in the JSON: {json}");
        let pair = finished(vec![deprecated("src/a.py", 4), deprecated("src/b.py", 9)], 0);
        assert!(standard(&pair, &[], MCP).ends_with("src/a.py:4 DeprecationWarning utcnow() is deprecated\nsrc/b.py:9 DeprecationWarning utcnow() is deprecated\n"), "a pair stays two lines");
        assert_eq!(json.get("omitted"), None, "{json}");
    }

    #[test]
    fn full_lists_within_its_budget_and_pages_the_log_from_the_first_it_left_out() {
        let warned = |i: u32| {
            Diagnostic::warning(format!("unused variable `v{i}`"))
                .with_code("unused_variables")
                .with_location("src/lib.rs", Some(i), None)
                .with_log_range(u64::from(i) * 4, u64::from(i) * 4 + 3)
                .with_notes(vec![format!("help: prefix it with an underscore: `_v{i}`")])
        };
        let f = finished((1..=2000).map(warned).collect(), 0);
        let rendered = render_exec(&f, None, Detail::Full, 20, MCP);
        let text = rendered.text;
        assert!(text.len() < FULL_BUDGET + 1000, "{} bytes", text.len());
        let listed = text.lines().filter(|l| l.starts_with("warning ")).count();
        assert!(listed > 100, "{listed} listed");
        let first_left = 4 * (listed as u64 + 1);
        assert!(
            text.contains(&format!(
                "+{} more diagnostics (unused_variables {}) in 1 file: src/lib.rs {}\n",
                2000 - listed,
                2000 - listed,
                2000 - listed
            )),
            "{text}"
        );
        assert!(text.ends_with(&format!("log startLine {first_left} lineCount 200\n")), "{text}");
        assert_eq!(rendered.structured["omitted"], 2000 - listed, "the JSON counts what the text left out");

        let same = |i: u32| Diagnostic::warning("deprecated").with_location("src/a.rs", Some(i), None);
        let f = finished((1..=3).map(same).collect(), 0);
        let full = render_exec(&f, None, Detail::Full, 20, MCP).text;
        assert!(full.contains("warning src/a.rs:1 deprecated ×3 (also src/a.rs:2, src/a.rs:3)\n"), "{full}");
    }

    #[test]
    fn a_headline_cut_short_points_at_the_rest_in_the_log() {
        let long = format!(
            "Type '{{ id: number; }}' is missing the following properties from type 'Order': {}",
            "total, items, customer, ".repeat(8)
        );
        let d = Diagnostic::error(long)
            .with_code("TS2740")
            .with_location("src/a.ts", Some(3), Some(7))
            .with_log_range(12, 12);
        let text = standard(&finished(vec![d], 2), &[], MCP);
        assert!(text.contains("…\n") && text.ends_with("log startLine 12 lineCount 1\n"), "{text}");
    }

    #[test]
    fn toolchain_warnings_are_counted_in_the_header_and_listed_only_in_full() {
        let notice = Diagnostic::warning("config production Use `--omit=dev` instead.").from_toolchain();
        let f = finished(vec![notice.clone(), notice], 0);
        assert_eq!(standard(&f, &[], MCP), "ok · 2 toolchain warnings · run bafotemu\n");
        let full = render_exec(&f, None, Detail::Full, 20, MCP).text;
        assert!(full.contains("toolchain warning config production"), "{full}");
    }

    #[test]
    fn the_total_is_named_only_when_the_counts_do_not_reach_it() {
        assert_eq!(test_counts(&TestSummary::new(4, 5, 1, 10)), "4 passed, 5 failed, 1 skipped");
        // Two tests that never ran (a dotnet `NotExecuted`, a cancelled run) are what `of` says.
        assert_eq!(test_counts(&TestSummary::new(4, 3, 1, 10)), "4 passed, 3 failed, 1 skipped of 10");
        let mut pytest = TestSummary::new(3, 0, 0, 6);
        (pytest.errors, pytest.xfailed) = (Some(1), Some(2));
        assert_eq!(test_counts(&pytest), "3 passed, 1 error, 2 xfailed");
    }

    #[test]
    fn a_tool_that_stopped_early_says_so_in_the_header() {
        let mut f = finished(vec![], 101);
        f.result.summary = Some(TestSummary::new(3, 1, 0, 4));
        f.result.stopped_early = Some("2 test targets not run; add --no-fail-fast".into());
        let text = render_exec(&f, None, Detail::Summary, 20, MCP).text;
        assert_eq!(
            text.lines().next(),
            Some(
                "FAIL exit 101 · tests 3 passed, 1 failed · stopped early: 2 test targets not run; add --no-fail-fast · run bafotemu"
            )
        );
    }

    #[test]
    fn the_hint_points_at_the_first_error_with_more_to_read() {
        let one_line = Diagnostic::error("a").with_location("src/a.rs", Some(1), None).with_log_range(3, 3);
        let block = Diagnostic::error("b").with_location("src/b.rs", Some(2), None).with_log_range(7, 12);
        let f = finished(vec![one_line, block], 1);
        assert!(standard(&f, &[], MCP).ends_with("\nlog startLine 7 lineCount 6\n"));
    }

    #[test]
    fn an_answer_for_a_parsed_file_names_no_run() {
        let block = Diagnostic::error("b").with_location("src/b.rs", Some(2), None).with_log_range(7, 12);
        let f = finished(vec![block], 1);
        let text = standard(&f, &[], Hints { surface: Surface::Cli, stored: false });
        assert_eq!(text, "FAIL exit 1\nsrc/b.rs:2 b\nmore: log lines 7-12\n");
    }

    #[test]
    fn a_parsed_file_that_shows_failures_never_reads_ok() {
        let mut f = finished(vec![], 0);
        f.result.summary = Some(TestSummary::new(4, 1, 0, 5));
        f.result.failed_tests = vec!["t::one".into()];
        let parsed = Hints { surface: Surface::Cli, stored: false };
        assert_eq!(standard(&f, &[], parsed), "FAIL · tests 4 passed, 1 failed\nfailed: t::one\n");
        // A run's exit code is the tool's own word, which the answer does not overrule.
        assert!(standard(&f, &[], MCP).starts_with("ok · tests 4 passed, 1 failed"));
    }

    #[test]
    fn counts_are_singular_for_one() {
        let mut text = String::new();
        let d = Diagnostic::error("x").with_code("E1").with_location("a.rs", Some(1), None);
        count_rest(&mut text, "errors", &[&d]);
        assert_eq!(text, "+1 more error (E1 1) in 1 file: a.rs 1\n");
    }

    #[test]
    fn lines_drop_what_they_would_say_twice() {
        let d = Diagnostic::error("AssertionError: assert 1 == 2")
            .with_code("AssertionError")
            .with_location("tests/test_a.py", Some(3), None)
            .with_test("tests/test_a.py::test_one");
        assert_eq!(diagnostic_line(&d, Cut::ERROR), "tests/test_a.py:3 AssertionError ::test_one: assert 1 == 2");
    }
}
