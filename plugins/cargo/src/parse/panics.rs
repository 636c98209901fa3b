//! The recogniser of panic reports as a test or a program prints them, one per stream: the
//! `thread '…' panicked at file:line:col:` line, the message under it, the indented notes of an
//! assertion, and the caller a `RUST_BACKTRACE` backtrace names.
//!
//! Whose panic it is comes from the test run: the failed test whose output is being read, the
//! thread a test ran on under --nocapture, the doctest whose verdict comes next, a thread a test
//! spawned, or the program under `cargo run`.

use super::backtrace::{self, Backtrace, Step};
use super::findings::Findings;
use super::libtest::{self, Context};
use super::panic::{self, PanicStart};
use super::text::{MAX_MESSAGE, MAX_NOTE, MESSAGE_BEFORE_VIA, PANIC_NOTES, clip};
use buildvise_plugin_api::{Diagnostic, Recogniser, Stream, Text, Wants, relative_to, split_location};
use std::collections::HashMap;

/// Most lines a legacy multi-line panic message may take before its location.
const LEGACY_PANIC_LINES: u32 = 40;

pub(crate) const STARTS: &[&str] = &[panic::FIRST_WORDS];

/// The panic being read on each stream (stdout, stderr): a panic's message is the next line of
/// its own stream, and `buildvise parse` feeds all of stdout before all of stderr.
#[derive(Default)]
pub(crate) struct Panics {
    reading: [Option<Panic>; 2],
}

struct Panic {
    diag: Diagnostic,
    start: u64,
    last: u64,
    stage: Stage,
    owner: Owner,
}

enum Stage {
    Message,
    Notes,
    LegacyLocation { lines_left: u32 },
    Backtrace(Backtrace),
}

/// Where a finished panic goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Owner {
    /// Its test is known, or it is the program's.
    Test,
    /// A doctest's, under --nocapture: the next verdict names it.
    Orphan,
    /// A thread the test spawned.
    Side,
}

impl Recogniser<Findings> for Panics {
    fn wants(&self) -> Wants {
        Wants::starts(STARTS)
    }

    fn is_open(&self) -> bool {
        self.reading.iter().any(Option::is_some)
    }

    /// A panic's first line is left to the recognisers after this one too: it ends the block
    /// being read on its stream, and it is a line of the test's output.
    fn feed(&mut self, line: &Text<'_>, found: &mut Findings) -> bool {
        let slot = slot(line.stream);
        if self.reading[slot].is_some() && self.read(slot, line, found) {
            return true;
        }
        if let Some(start) = panic::start(line.text)
            && let Some((test, owner)) = owner(&start, line.stream, found)
        {
            self.open(start, test, owner, slot, line.number, found);
        }
        false
    }

    fn finish(&mut self, found: &mut Findings) {
        for slot in 0..self.reading.len() {
            self.close(slot, found);
        }
    }
}

impl Panics {
    /// Offers a line to the panic being read on its stream; true when the panic took it.
    fn read(&mut self, slot: usize, line: &Text<'_>, found: &mut Findings) -> bool {
        let Some(p) = self.reading[slot].as_mut() else { return false };
        let (text, number) = (line.text, line.number);
        match &mut p.stage {
            Stage::Message => {
                p.diag.message = if text.trim().is_empty() { "explicit panic".into() } else { clip(text, MAX_MESSAGE) };
                p.stage = Stage::Notes;
                p.last = number;
                true
            }
            Stage::Notes if text.starts_with(' ') && p.diag.notes.len() < PANIC_NOTES => {
                p.diag.notes.push(clip(text, MAX_NOTE));
                p.last = number;
                true
            }
            Stage::Notes if text == backtrace::HEADER => {
                let at = match (&p.diag.file, p.diag.line, p.diag.column) {
                    (Some(file), Some(line), Some(column)) => format!("{file}:{line}:{column}"),
                    (Some(file), Some(line), None) => format!("{file}:{line}"),
                    _ => String::new(),
                };
                p.stage = Stage::Backtrace(Backtrace::new(&at, p.diag.test.as_deref()));
                p.last = number;
                true
            }
            Stage::Backtrace(trace) => match trace.line(text, &found.cwd) {
                Step::Frame => {
                    p.last = number;
                    true
                }
                Step::End => {
                    p.last = number;
                    self.close(slot, found);
                    true
                }
                Step::Other => {
                    self.close(slot, found);
                    false
                }
            },
            Stage::Notes => {
                self.close(slot, found);
                false
            }
            Stage::LegacyLocation { lines_left } => {
                p.last = number;
                if let Some((file, line, column)) = panic::legacy_location(text).and_then(split_location) {
                    p.diag.file = Some(relative_to(file, &found.cwd));
                    p.diag.line = Some(line);
                    p.diag.column = column;
                    self.close(slot, found);
                } else if *lines_left == 0 {
                    self.close(slot, found);
                    return false;
                } else {
                    *lines_left -= 1;
                }
                true
            }
        }
    }

    /// Starts reading the panic whose first line was just read.
    fn open(
        &mut self,
        start: PanicStart<'_>,
        test: Option<String>,
        owner: Owner,
        slot: usize,
        number: u64,
        found: &mut Findings,
    ) {
        let (diag, stage) = match start {
            PanicStart::AwaitMessage { location, .. } => {
                (found.located(Diagnostic::error(""), location), Stage::Message)
            }
            PanicStart::Complete { message, location, .. } => {
                (found.located(Diagnostic::error(clip(message, MAX_MESSAGE)), location), Stage::Notes)
            }
            PanicStart::AwaitLocation { message, .. } => (
                Diagnostic::error(clip(message, MAX_MESSAGE)),
                Stage::LegacyLocation { lines_left: LEGACY_PANIC_LINES },
            ),
            PanicStart::StackOverflow { .. } => {
                let mut d = Diagnostic::error("stack overflow").with_log_range(number, number);
                if let Some(test) = test {
                    found.crashed.insert(test.clone());
                    d.test = Some(test);
                }
                found.diagnostics.push(d);
                return;
            }
        };
        let mut diag = diag;
        diag.test = test;
        self.reading[slot] = Some(Panic { diag, start: number, last: number, stage, owner });
    }

    fn close(&mut self, slot: usize, found: &mut Findings) {
        let Some(mut p) = self.reading[slot].take() else { return };
        // The log ended (or the stream moved on) before the line with the panic's message.
        if p.diag.message.is_empty() {
            p.diag.message = "panicked".into();
        }
        if let Stage::Backtrace(Backtrace { via: Some(via), .. }) = &p.stage {
            // A path, as printed, can be any length.
            p.diag.message = format!("{} via {}", clip(&p.diag.message, MESSAGE_BEFORE_VIA), clip(via, MAX_NOTE));
        }
        let d = p.diag.with_log_range(p.start, p.last);
        match p.owner {
            Owner::Test => {
                let at = found.diagnostics.len();
                let own = d.test.is_some();
                if found.diagnostics.push(d) && own {
                    found.test_panics.push(at);
                }
            }
            Owner::Orphan => found.orphans.push(d),
            Owner::Side => found.side_panics.push(d),
        }
    }
}

/// One failure per test: a test whose own thread panicked more than once was failed by its last
/// panic, since the ones before it were caught (by `catch_unwind`, or the test would have ended
/// there). The last panic takes the place of the first, and each caught one becomes a note of it.
/// `own` holds where in `diagnostics` each panic of a test's own thread is, in the order read.
pub(crate) fn keep_failing_panics(diagnostics: &mut Vec<Diagnostic>, own: &[usize]) {
    let mut of_test: HashMap<&str, Vec<usize>> = HashMap::new();
    for &at in own {
        if let Some(test) = diagnostics.get(at).and_then(|d| d.test.as_deref()) {
            of_test.entry(test).or_default().push(at);
        }
    }
    let groups: Vec<Vec<usize>> = of_test.into_values().filter(|panics| panics.len() > 1).collect();
    if groups.is_empty() {
        return;
    }
    let mut gone = vec![false; diagnostics.len()];
    for panics in groups {
        let (first, last) = (panics[0], panics[panics.len() - 1]);
        let caught: Vec<String> = panics[..panics.len() - 1].iter().map(|&at| caught_note(&diagnostics[at])).collect();
        diagnostics.swap(first, last);
        diagnostics[first].notes.extend(caught);
        for &at in &panics[1..] {
            gone[at] = true;
        }
    }
    let mut at = 0;
    diagnostics.retain(|_| {
        at += 1;
        !gone[at - 1]
    });
}

/// What a caught panic says in the note of the one that failed its test.
fn caught_note(d: &Diagnostic) -> String {
    let at = match (&d.file, d.line, d.column) {
        (Some(file), Some(line), Some(column)) => format!(" at {file}:{line}:{column}"),
        (Some(file), Some(line), None) => format!(" at {file}:{line}"),
        _ => String::new(),
    };
    // The message is clipped already; the path, as printed, can be any length.
    clip(&format!("caught a panic before{at}: {}", d.message), MAX_NOTE + MAX_MESSAGE)
}

/// Whose panic starts here: the program's under `cargo run`, else a test's (the test, if
/// known); None for a panic that is neither (a build tool's, a passing test's, a program's
/// printout) or that nextest's reader reads.
fn owner(start: &PanicStart<'_>, stream: Stream, found: &Findings) -> Option<(Option<String>, Owner)> {
    if found.nextest_shows_output || found.program.printed(stream) {
        return None;
    }
    if found.program.running {
        return Some((None, Owner::Test));
    }
    if !(found.runs_tests() || found.tests.seen) {
        return None;
    }
    let thread = match start {
        PanicStart::AwaitMessage { thread, .. }
        | PanicStart::Complete { thread, .. }
        | PanicStart::AwaitLocation { thread, .. }
        | PanicStart::StackOverflow { thread } => *thread,
    };
    // Captured output names the test in its section header; with --nocapture the thread
    // carries the test's name. A doctest runs in its own process, on thread 'main'.
    let orphan = found.collecting_orphans();
    match found.tests.context() {
        Context::Failure(name) if thread == name || thread == "main" => Some((Some(name.to_string()), Owner::Test)),
        Context::Failure(name) => Some((Some(name.to_string()), Owner::Side)),
        Context::Success => None,
        Context::Free if thread == "main" && orphan => Some((None, Owner::Orphan)),
        Context::Free if matches!(thread, "main" | "<unnamed>" | "rustc") || libtest::bare_name(thread).is_empty() => {
            None
        }
        Context::Free => Some((Some(libtest::bare_name(thread).to_string()), Owner::Test)),
    }
}

fn slot(stream: Stream) -> usize {
    match stream {
        Stream::Stderr => 1,
        // Stdout, and any stream a later API adds (such a tag reads as stdout on the wire).
        _ => 0,
    }
}
