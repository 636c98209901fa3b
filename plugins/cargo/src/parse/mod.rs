//! The parser for what cargo prints: rustc, clippy and rustdoc diagnostics (human text, short
//! form and `--message-format=json`), cargo's own errors, libtest's and cargo-nextest's reports of
//! a test run, the program's panic or error under `cargo run`, and `cargo fmt --check`'s diffs.
//!
//! Lines are read once, in arrival order. A diagnostic that spans lines (a rustc block, a
//! `Caused by:` chain, a panic and its message) is gathered until it ends; every other line is
//! dropped after a few byte comparisons. Streams are kept apart where it matters (a panic's
//! message is the next line of the panic's own stream), because `buildvise parse` feeds all of
//! stdout before all of stderr.

mod backtrace;
mod block;
mod fmt;
mod json;
mod libtest;
mod lints;
mod nextest;
mod panic;
mod run;
mod text;

use backtrace::{Backtrace, Step};
use block::{Block, Flow, HeadlineKind};
use buildvise_plugin_api::{
    Diagnostic, DiagnosticSet, Line, ParseContext, ParseResult, Parser, Progress, RunEnd, Severity, Stream,
    relative_to, split_location,
};
use libtest::{Context, TestRun, Verdict};
use lints::LintMemory;
use nextest::NextestRun;
use panic::PanicStart;
use run::MainError;
use std::collections::{HashMap, HashSet};
use text::{MAX_MESSAGE, MAX_NOTE, clip, status_verb};

/// Most lines a legacy multi-line panic message may take before its location.
const LEGACY_PANIC_LINES: u32 = 40;

/// Most indented lines (an assertion's `left:`/`right:`) kept under a panic message.
const PANIC_NOTES: usize = 3;

/// Longest panic message kept before a ` via file:line:col` suffix: answers show about 160
/// bytes of a message, and the caller's line must stay in view.
const MESSAGE_BEFORE_VIA: usize = 110;

/// What cargo's `test failed, to rerun pass …` means when nothing follows it: without
/// `--no-fail-fast` cargo stopped there, and it never says which targets it left out.
const STOPPED_EARLY: &str = "later test targets not run; add --no-fail-fast";

/// What cargo prints when the `nextest` subcommand is missing.
const NO_NEXTEST: &str = "no such command: `nextest`";

/// The tools whose output needs more than cargo's own formats.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Cargo,
    Test,
    Nextest,
    Run,
    Fmt,
}

/// `cargo run`: where cargo's output ends and the program's begins.
#[derive(Default)]
struct Program {
    /// cargo's `Running `target/…`` was read: every later line is the program's.
    started: bool,
    /// A line came tagged stderr: the streams are apart, and stdout is the program's alone.
    seen_stderr: bool,
    /// The stdout lines read before any stderr line, which were parsed as cargo's in case the
    /// log is one combined stream.
    stdout_before_stderr: Option<(u64, u64)>,
    /// The JSON messages among them, which are cargo's whatever the streams.
    json_lines: HashSet<u64>,
    main_error: Option<MainError>,
}

/// Options that choose test targets; with any of them cargo runs no doctests unless `--doc`
/// asks, so a library's build does not promise them.
const TARGET_OPTIONS: &[&str] = &[
    "--lib",
    "--bin",
    "--bins",
    "--test",
    "--tests",
    "--example",
    "--examples",
    "--bench",
    "--benches",
    "--all-targets",
];

/// The formats a tool defined in a config file can name, with their descriptions.
pub(crate) const FORMATS: [(&str, &str); 3] = [
    ("rustc", "rustc, clippy and rustdoc diagnostics, cargo's errors"),
    ("libtest", "cargo test / libtest report and panics"),
    ("nextest", "cargo nextest report"),
];

/// Which of cargo's formats a parser reads: all of them for cargo's own tools, one for a tool
/// defined in a config file.
#[derive(Clone, Copy)]
struct Reads {
    /// rustc's and cargo's diagnostics, in any of their forms.
    rustc: bool,
    /// libtest's report, and what a failing test printed (panics, `should_panic` notes).
    libtest: bool,
}

pub(crate) struct CargoParser {
    cwd: String,
    kind: Kind,
    reads: Reads,
    /// `cargo.test`: panics count even before a `running N tests` line shows up (streams).
    test_tool: bool,
    nextest: NextestRun,
    program: Program,
    fmt: fmt::FmtCheck,
    diagnostics: DiagnosticSet,
    lints: LintMemory,
    block: Option<Block>,
    /// A panic being read, per stream (stdout, stderr).
    panics: [Option<Panic>; 2],
    tests: TestRun,
    /// Tests whose stack overflowed: the binary died, so no verdict will confirm them.
    crashed: HashSet<String>,
    /// Doctest output under --nocapture, printed before the verdict that names its test.
    orphans: Vec<Diagnostic>,
    /// Panics of threads a test spawned; the test's own panic is the verdict's reason.
    side_panics: Vec<Diagnostic>,
    /// The call asked cargo to run every test target whatever fails.
    no_fail_fast: bool,
    /// The rerun arguments of the last `test failed, to rerun pass …` that no later test
    /// target or `N targets failed` list followed: cargo stopped after that target.
    last_failed_target: Option<String>,
    /// After `note: panic did not contain expected string`: libtest's next lines say what a
    /// `should_panic(expected = …)` test expected.
    expected_panic: bool,
    /// What each such test expected. Applied at the end: under --nocapture the test's panic
    /// was printed long before, with other tests' output between.
    expected_strings: HashMap<String, String>,
    /// The test targets `--message-format=json` announced (cargo prints no such list otherwise).
    test_targets: HashSet<String>,
    /// A library's build announces its doctests (no option chose other targets).
    doctests_expected: bool,
    /// `Running …` and `Doc-tests …` lines: the targets that started.
    targets_started: usize,
}

enum PanicStage {
    Message,
    Notes,
    LegacyLocation { lines_left: u32 },
    Backtrace(Backtrace),
}

/// Where a finished panic goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum PanicOwner {
    /// Its test is known.
    Test,
    /// A doctest's, under --nocapture: the next verdict names it.
    Orphan,
    /// A thread the test spawned.
    Side,
}

struct Panic {
    diag: Diagnostic,
    start: u64,
    last: u64,
    stage: PanicStage,
    owner: PanicOwner,
}

impl CargoParser {
    pub(crate) fn new(context: &ParseContext) -> Self {
        let kind = match context.tool.as_str() {
            "cargo.test" => Kind::Test,
            "cargo.nextest" => Kind::Nextest,
            "cargo.run" => Kind::Run,
            "cargo.fmt" => Kind::Fmt,
            _ => Kind::Cargo,
        };
        CargoParser {
            cwd: context.cwd.clone(),
            kind,
            reads: Reads { rustc: true, libtest: true },
            test_tool: kind == Kind::Test,
            nextest: NextestRun::default(),
            program: Program::default(),
            fmt: fmt::FmtCheck::default(),
            diagnostics: DiagnosticSet::new(),
            lints: LintMemory::default(),
            block: None,
            panics: [None, None],
            tests: TestRun::default(),
            crashed: HashSet::new(),
            orphans: Vec::new(),
            side_panics: Vec::new(),
            no_fail_fast: context.args.iter().take_while(|a| *a != "--").any(|a| a == "--no-fail-fast"),
            last_failed_target: None,
            expected_panic: false,
            expected_strings: HashMap::new(),
            test_targets: HashSet::new(),
            doctests_expected: !context
                .args
                .iter()
                .take_while(|a| *a != "--")
                .any(|a| TARGET_OPTIONS.contains(&a.split('=').next().unwrap_or(a))),
            targets_started: 0,
        }
    }

    /// A parser that reads one of [`FORMATS`] and nothing else; None for another name. `libtest`
    /// reads as `cargo.test` does, `nextest` as `cargo.nextest` does but leaves the build to
    /// `rustc`, and `rustc` knows no tests.
    pub(crate) fn for_format(format: &str, context: &ParseContext) -> Option<Self> {
        let (tool, reads) = match format {
            "rustc" => ("cargo.build", Reads { rustc: true, libtest: false }),
            "libtest" => ("cargo.test", Reads { rustc: false, libtest: true }),
            "nextest" => ("cargo.nextest", Reads { rustc: false, libtest: false }),
            _ => return None,
        };
        let mut context = context.clone();
        context.tool = tool.to_string();
        Some(CargoParser { reads, ..CargoParser::new(&context) })
    }

    fn close_block(&mut self) {
        if let Some(block) = self.block.take() {
            let orphan = block.orphan;
            match block.finish(&mut self.lints, &self.cwd) {
                Some(d) if orphan => self.orphans.push(d),
                Some(d) => {
                    self.diagnostics.push(d);
                }
                None => {}
            }
        }
    }

    fn close_panic(&mut self, slot: usize) {
        if let Some(mut p) = self.panics[slot].take() {
            // The log ended (or the stream moved on) before the line with the panic's message.
            if p.diag.message.is_empty() {
                p.diag.message = "panicked".into();
            }
            if let PanicStage::Backtrace(Backtrace { via: Some(via), .. }) = &p.stage {
                // A path, as printed, can be any length.
                p.diag.message = format!("{} via {}", clip(&p.diag.message, MESSAGE_BEFORE_VIA), clip(via, MAX_NOTE));
            }
            let d = p.diag.with_log_range(p.start, p.last);
            match p.owner {
                PanicOwner::Test => {
                    self.diagnostics.push(d);
                }
                PanicOwner::Orphan => self.orphans.push(d),
                PanicOwner::Side => self.side_panics.push(d),
            }
        }
    }

    /// True while text without a test of its own may belong to the next doctest verdict.
    fn collecting_orphans(&self) -> bool {
        self.tests.doctests && self.tests.in_binary && self.tests.context() == Context::Free
    }

    fn verdict(&mut self, verdict: Verdict) {
        match verdict {
            Verdict::Failed(name) => {
                for mut d in std::mem::take(&mut self.orphans) {
                    d.test = Some(name.clone());
                    self.diagnostics.push(d);
                }
            }
            Verdict::Passed => self.orphans.clear(),
        }
    }

    /// Offers a line to the panic being read on its stream; true when the panic took it.
    fn feed_panic(&mut self, slot: usize, text: &str, number: u64) -> bool {
        let Some(p) = self.panics[slot].as_mut() else { return false };
        match &mut p.stage {
            PanicStage::Message => {
                p.diag.message = if text.trim().is_empty() { "explicit panic".into() } else { clip(text, MAX_MESSAGE) };
                p.stage = PanicStage::Notes;
                p.last = number;
                true
            }
            PanicStage::Notes if text.starts_with(' ') && p.diag.notes.len() < PANIC_NOTES => {
                p.diag.notes.push(clip(text, MAX_NOTE));
                p.last = number;
                true
            }
            PanicStage::Notes if text == backtrace::HEADER => {
                let at = match (&p.diag.file, p.diag.line, p.diag.column) {
                    (Some(file), Some(line), Some(column)) => format!("{file}:{line}:{column}"),
                    (Some(file), Some(line), None) => format!("{file}:{line}"),
                    _ => String::new(),
                };
                p.stage = PanicStage::Backtrace(Backtrace::new(&at, p.diag.test.as_deref()));
                p.last = number;
                true
            }
            PanicStage::Backtrace(trace) => match trace.line(text, &self.cwd) {
                Step::Frame => {
                    p.last = number;
                    true
                }
                Step::End => {
                    p.last = number;
                    self.close_panic(slot);
                    true
                }
                Step::Other => {
                    self.close_panic(slot);
                    false
                }
            },
            PanicStage::Notes => {
                self.close_panic(slot);
                false
            }
            PanicStage::LegacyLocation { lines_left } => {
                p.last = number;
                if let Some((file, line, column)) = panic::legacy_location(text).and_then(split_location) {
                    p.diag.file = Some(relative_to(file, &self.cwd));
                    p.diag.line = Some(line);
                    p.diag.column = column;
                    self.close_panic(slot);
                } else if *lines_left == 0 {
                    self.close_panic(slot);
                    return false;
                } else {
                    *lines_left -= 1;
                }
                true
            }
        }
    }

    fn dispatch(&mut self, line: Line<'_>) {
        let bytes = line.bytes;
        let first = bytes.first().copied().unwrap_or(b'\n');
        if !(self.reads.rustc || self.reads.libtest) {
            return;
        }
        if first == b'{' {
            if self.reads.rustc
                && bytes.starts_with(json::COMPILER_MESSAGE)
                && let Some(d) = json::compiler_message(bytes, line.number, &self.cwd)
            {
                self.diagnostics.push(d);
            } else if self.test_tool
                && bytes.starts_with(json::COMPILER_ARTIFACT)
                && let Some(target) = json::test_target(bytes, self.doctests_expected)
            {
                self.test_targets.insert(target);
            }
            return;
        }
        let status = if first == b' ' { status_verb(bytes) } else { None };
        let relevant = matches!(first, b'e' | b'w' | b't' | b'n' | b'r' | b'-' | b'f' | b's')
            || status.is_some()
            || bytes.starts_with(libtest::COULD_NOT_COMPILE)
            || self.tests.listening()
            || short_form_candidate(bytes);
        if !relevant {
            return;
        }
        if let Some(verb) = status {
            self.status_line(verb);
        }
        if self.expected_panic {
            if first == b' ' {
                self.expected_substring(&line.text(), line.number);
                return;
            }
            self.expected_panic = false;
        }
        if self.reads.libtest && self.tests.line(bytes, line.number, status) {
            if let Some(verdict) = self.tests.last_verdict.take() {
                self.verdict(verdict);
            }
            if !self.tests.in_binary {
                self.orphans.clear();
            }
            return;
        }
        // Decoded only here: most lines that passed the gate were libtest's, read as bytes.
        match first {
            b'e' | b'w' => self.headline(&line.text(), line.stream, line.number),
            b't' if self.reads.libtest => self.panic_start(&line.text(), line.stream, line.number),
            b'n' if self.reads.libtest => self.did_not_panic(&line.text(), line.number),
            _ if self.reads.rustc && short_form_candidate(bytes) => self.short_form(&line.text(), line.number),
            _ => {}
        }
    }

    /// Cargo's `     Running …` and `   Doc-tests …` start a test target.
    fn status_line(&mut self, verb: &[u8]) {
        if verb.starts_with(b"Running ") || verb.starts_with(b"Doc-tests ") {
            // A later target ran: cargo went on after the last failure.
            self.last_failed_target = None;
            self.targets_started += 1;
        }
    }

    fn headline(&mut self, text: &str, stream: Stream, number: u64) {
        let Some(head) = block::headline(text) else { return };
        if self.kind == Kind::Nextest {
            if head.message.starts_with(NO_NEXTEST) {
                let d = Diagnostic::error("cargo-nextest is not installed; run `cargo install cargo-nextest --locked`")
                    .with_log_range(number, number);
                self.diagnostics.push(d);
                return;
            }
            // nextest's word that the build it ran (`cargo test --no-run …`) failed: rustc's
            // errors above say why.
            if head.message.starts_with("command `") && head.message.contains(" --no-run") {
                return;
            }
        }
        let kind = block::classify(&head);
        match kind {
            HeadlineKind::Summary => {
                // `error: 2 targets failed:` ends a --no-fail-fast run, which ran every target.
                if head.message.contains(" failed") {
                    self.last_failed_target = None;
                }
                return;
            }
            HeadlineKind::TestBinary => {
                self.tests.binary_ended();
                self.last_failed_target = Some(block::rerun_args(head.message).to_string());
            }
            HeadlineKind::Report => {}
        }
        // A test binary's end is libtest's news; any other diagnostic is rustc's or cargo's,
        // unless a test printed it.
        let in_test = self.tests.in_binary || matches!(self.tests.context(), Context::Failure(_));
        let wanted = match kind {
            HeadlineKind::TestBinary => self.reads.libtest,
            _ => self.reads.rustc || in_test,
        };
        if !wanted {
            return;
        }
        let orphan = self.collecting_orphans();
        let (test, require_location) = match self.tests.context() {
            Context::Success => return,
            Context::Failure(name) => (Some(name.to_string()), true),
            Context::Free => (None, self.tests.in_binary),
        };
        let mut block = Block::open(&head, kind, stream, number, test, require_location);
        block.orphan = orphan && kind == HeadlineKind::Report;
        self.block = Some(block);
    }

    fn panic_start(&mut self, text: &str, stream: Stream, number: u64) {
        if !(self.test_tool || self.tests.seen) {
            return;
        }
        let Some(start) = panic::start(text) else { return };
        let thread = match &start {
            PanicStart::AwaitMessage { thread, .. }
            | PanicStart::Complete { thread, .. }
            | PanicStart::AwaitLocation { thread, .. }
            | PanicStart::StackOverflow { thread } => *thread,
        };
        // Captured output names the test in its section header; with --nocapture the thread
        // carries the test's name. A doctest runs in its own process, on thread 'main'.
        let orphan = self.collecting_orphans();
        let (test, owner) = match self.tests.context() {
            Context::Failure(name) if thread == name || thread == "main" => (Some(name.to_string()), PanicOwner::Test),
            Context::Failure(name) => (Some(name.to_string()), PanicOwner::Side),
            Context::Success => return,
            Context::Free if thread == "main" && orphan => (None, PanicOwner::Orphan),
            Context::Free
                if matches!(thread, "main" | "<unnamed>" | "rustc") || libtest::bare_name(thread).is_empty() =>
            {
                return;
            }
            Context::Free => (Some(libtest::bare_name(thread).to_string()), PanicOwner::Test),
        };
        self.open_panic(start, test, owner, slot(stream), number);
    }

    /// Starts reading a panic whose first line was just read.
    fn open_panic(&mut self, start: PanicStart<'_>, test: Option<String>, owner: PanicOwner, slot: usize, number: u64) {
        self.close_panic(slot);
        let (diag, stage) = match start {
            PanicStart::AwaitMessage { location, .. } => {
                (self.located(Diagnostic::error(""), location), PanicStage::Message)
            }
            PanicStart::Complete { message, location, .. } => {
                (self.located(Diagnostic::error(clip(message, MAX_MESSAGE)), location), PanicStage::Notes)
            }
            PanicStart::AwaitLocation { message, .. } => (
                Diagnostic::error(clip(message, MAX_MESSAGE)),
                PanicStage::LegacyLocation { lines_left: LEGACY_PANIC_LINES },
            ),
            PanicStart::StackOverflow { .. } => {
                let mut d = Diagnostic::error("stack overflow").with_log_range(number, number);
                if let Some(test) = test {
                    self.crashed.insert(test.clone());
                    d.test = Some(test);
                }
                self.diagnostics.push(d);
                return;
            }
        };
        let mut diag = diag;
        diag.test = test;
        self.panics[slot] = Some(Panic { diag, start: number, last: number, stage, owner });
    }

    /// cargo-nextest: once its run started, its lines and its tests' output are its report's;
    /// before, cargo built the tests and its output is cargo's.
    fn nextest_line(&mut self, line: &Line<'_>) -> bool {
        if !self.nextest.started {
            if line.bytes.first() != Some(&b' ') || !nextest::is_start(&line.text()) {
                return false;
            }
            self.close_block();
            self.nextest.started = true;
        }
        self.nextest.line(&line.text(), line.number, &self.cwd)
    }

    /// `cargo run`: cargo's lines until it starts the program, then the program's, of which
    /// only a panic and `main`'s returned error say how the run ended.
    fn program_line(&mut self, line: &Line<'_>) -> bool {
        let first = line.bytes.first().copied();
        let p = &mut self.program;
        if line.stream == Stream::Stderr {
            p.seen_stderr = true;
        } else if first != Some(b'{') {
            if p.seen_stderr {
                return true;
            }
            let (start, _) = p.stdout_before_stderr.unwrap_or((line.number, line.number));
            p.stdout_before_stderr = Some((start, line.number));
        } else if !p.seen_stderr {
            p.json_lines.insert(line.number);
        }
        if !p.started {
            if first == Some(b' ') && run::is_running(&line.text()) {
                p.started = true;
                self.close_block();
                return true;
            }
            return false;
        }
        let text = line.text();
        if let Some(error) = &mut p.main_error
            && error.stream == line.stream
            && error.line(&text, line.number)
        {
            return true;
        }
        match first {
            Some(b't') => {
                if let Some(start) = panic::start(&text) {
                    self.open_panic(start, None, PanicOwner::Test, slot(line.stream), line.number);
                }
            }
            Some(b'E') => {
                if let Some(error) = MainError::start(&text, line.stream, line.number) {
                    p.main_error = Some(error);
                }
            }
            _ => {}
        }
        true
    }

    fn located(&self, diag: Diagnostic, location: &str) -> Diagnostic {
        match split_location(location) {
            Some((file, line, column)) => diag.with_location(relative_to(file, &self.cwd), Some(line), column),
            None => diag,
        }
    }

    /// `note: test did not panic as expected at src/lib.rs:55:8` (a `should_panic` test), and
    /// `note: panic did not contain expected string`, which explains the panic just read.
    fn did_not_panic(&mut self, text: &str, number: u64) {
        if text.starts_with("note: panic did not contain expected string") {
            self.expected_panic = matches!(self.tests.context(), Context::Failure(_));
            return;
        }
        let Some(rest) = text.strip_prefix("note: test did not panic as expected") else { return };
        let mut diag = Diagnostic::error("test did not panic as expected").with_log_range(number, number);
        if let Some(location) = rest.strip_prefix(" at ") {
            diag = self.located(diag, location.trim());
        }
        match self.tests.context() {
            Context::Failure(name) => diag.test = Some(name.to_string()),
            Context::Success => return,
            Context::Free => {}
        }
        self.diagnostics.push(diag);
    }

    /// ` expected substring: "bang"` under `note: panic did not contain expected string` (before
    /// Rust 1.73 in backticks: `` `"bang"` ``): the test's panic says what it did panic with, and
    /// what it should have said decides the fix, so the message names both.
    fn expected_substring(&mut self, text: &str, number: u64) {
        let Some(expected) = text.trim_start().strip_prefix("expected substring: ") else { return };
        self.expected_panic = false;
        let expected = expected.trim().trim_end_matches(',').trim_matches('`');
        if let Context::Failure(name) = self.tests.context() {
            // Captured output prints the explanation right under the test's panic: then its
            // lines are the panic's too.
            if let Some(last) = self.diagnostics.last_mut()
                && last.test.as_deref() == Some(name)
                && let Some(range) = &mut last.log_range
            {
                range.end = range.end.max(number);
            }
            self.expected_strings.insert(name.to_string(), clip(expected, MAX_NOTE));
        }
    }

    /// `--message-format=short`: `src/a.rs:4:5: warning: unused import: `x``.
    fn short_form(&mut self, text: &str, number: u64) {
        let at = text.match_indices(':').map(|(at, _)| at).find(|&at| {
            let rest = &text[at..];
            rest.starts_with(": error") || rest.starts_with(": warning")
        });
        let Some(at) = at else { return };
        let (Some((file, line, column)), Some(head)) = (split_location(&text[..at]), block::headline(&text[at + 2..]))
        else {
            return;
        };
        // The short form appends the primary label's help or note: `…: help: prefix it …`.
        let tail = [head.message.find(": help: "), head.message.find(": note: ")].into_iter().flatten().min();
        let (message, note) = match tail {
            // A message that is nothing but a help (`error: : help: x`) keeps it as its text.
            Some(at) if at > 0 => (&head.message[..at], Some(&head.message[at + 2..])),
            _ => (head.message, None),
        };
        let mut diag = Diagnostic::new(head.severity, clip(message, MAX_MESSAGE))
            .with_location(relative_to(file, &self.cwd), Some(line), column)
            .with_log_range(number, number);
        diag.code = head.code.map(str::to_string).or_else(|| self.lints.recall(message));
        diag.notes.extend(note.map(|n| clip(n, MAX_NOTE)));
        self.diagnostics.push(diag);
    }
}

impl Parser for CargoParser {
    fn feed(&mut self, line: Line<'_>) {
        let slot = slot(line.stream);
        if self.panics[slot].is_some() && self.feed_panic(slot, &line.text(), line.number) {
            return;
        }
        let taken = match self.kind {
            Kind::Nextest => self.nextest_line(&line),
            Kind::Run => self.program_line(&line),
            Kind::Fmt if line.bytes.first() == Some(&b'D') || self.fmt.in_hunk() => {
                self.fmt.line(&line.text(), line.number, &self.cwd)
            }
            _ => false,
        };
        if taken {
            return;
        }
        if let Some(block) = self.block.as_mut()
            && block.stream == line.stream
        {
            match block.feed(&line.text(), line.number, &self.cwd) {
                Flow::Consumed => return,
                Flow::Closed => {
                    self.close_block();
                    return;
                }
                Flow::Ended => self.close_block(),
            }
        }
        self.dispatch(line);
    }

    fn progress(&self) -> Progress {
        let count = |severity| self.diagnostics.iter().filter(|d| d.severity == severity).count() as u64;
        Progress::new(count(Severity::Error), count(Severity::Warning), self.tests.verdicts)
            .with_tests_total(self.tests.seen.then_some(self.tests.announced))
    }

    fn finish(&mut self, end: &RunEnd) -> ParseResult {
        self.close_block();
        self.close_panic(0);
        self.close_panic(1);
        let program = std::mem::take(&mut self.program);
        let tests = std::mem::take(&mut self.tests);
        let side_panics = std::mem::take(&mut self.side_panics);
        let (lints, crashed) = (&self.lints, &self.crashed);
        let mut kept = DiagnosticSet::new();
        let mut diagnostics = std::mem::take(&mut self.diagnostics).into_vec();
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
        diagnostics.extend(std::mem::take(&mut self.fmt).finish());
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
            if let Some(expected) = d.test.as_ref().and_then(|t| self.expected_strings.remove(t)) {
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
        let result = ParseResult::new(kept.into_vec()).with_summary(finished.summary).with_failed_tests(failed_tests);
        if self.kind == Kind::Nextest {
            let run = std::mem::take(&mut self.nextest).finish();
            let mut result = result.with_summary(run.summary).with_failed_tests(run.failed_tests);
            result.diagnostics.extend(run.diagnostics);
            result.stopped_early = run.stopped_early;
            return result;
        }
        match &self.last_failed_target {
            Some(_) if self.no_fail_fast => result,
            // The JSON stream listed the targets: count the ones that never started.
            Some(_) if !self.test_targets.is_empty() => {
                match self.test_targets.len().saturating_sub(self.targets_started) {
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

fn slot(stream: Stream) -> usize {
    match stream {
        Stream::Stderr => 1,
        // Stdout, and any stream a later API adds (such a tag reads as stdout on the wire).
        _ => 0,
    }
}

/// A line that may be `path.rs:line:col: error…`: the text before its first `:` is a Rust file.
fn short_form_candidate(bytes: &[u8]) -> bool {
    bytes.first().is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'/' | b'_'))
        && memchr::memchr(b':', bytes).is_some_and(|colon| bytes[..colon].ends_with(b".rs"))
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod format_tests;
