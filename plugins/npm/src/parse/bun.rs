//! bun's own lines (bun 1.x, on stderr): `error: message` with `note:` lines and an `at
//! path:line:col` below it, where `error: script "x" exited with code N` only wraps a failing
//! script; and `bun test`'s report: a `path:` line per test file, an error block per failure
//! closed by `(fail) name [time]`, and the counts ` 2 pass`, ` 1 fail`, `Ran 4 tests across 2
//! files.`. Each test's result line, `(pass) name [0.02ms]`, `(fail)`, `(skip)` or `(todo)`,
//! names it for the reports, with its time.

use crate::parse::sink::Sink;
use buildvise_plugin_api::{Diagnostic, LogRange, Recogniser, TestOutcome, TestSummary, Text, Wants, millis_to_us};

const MAX_NOTES: usize = 3;

#[derive(Default)]
pub struct Bun {
    /// An error whose notes and location may follow.
    open: Option<Diagnostic>,
    /// The counts seen so far: pass, fail, skip, todo.
    counts: [u64; 4],
}

/// How an `expect()` failure's lines begin, below its `error:` line.
const EXPECTATIONS: [&str; 4] = ["Expected", "Received", "- Expected", "+ Received"];

const COUNTS: [&str; 4] = [" pass", " fail", " skip", " todo"];

impl Recogniser<Sink> for Bun {
    fn wants(&self) -> Wants {
        Wants::starts(&["error: ", "(fail) ", "(pass) ", "(skip) ", "(todo) ", "Ran "]).or_test(|head| {
            // ` 2 pass`: a space, then a digit.
            matches!(head.bytes, [b' ', b'0'..=b'9', ..])
        })
    }

    fn is_open(&self) -> bool {
        self.open.is_some()
    }

    fn feed(&mut self, ln: &Text<'_>, sink: &mut Sink) -> bool {
        let text = ln.text.trim_end();
        if let Some(message) = text.strip_prefix("error: ") {
            self.flush(sink);
            if !(message.starts_with("script \"") && message.contains("\" exited with code ")) {
                self.open = Some(Diagnostic::error(message).with_log_range(ln.number, ln.number));
            }
            return true;
        }
        if let Some(name) = text.strip_prefix("(fail) ") {
            let (name, us) = timed(name);
            sink.failed_test(name);
            sink.tests.push(name, TestOutcome::Failed, us);
            if let Some(open) = self.open.take() {
                sink.push(open.with_test(name));
            }
            return true;
        }
        let passed = text.strip_prefix("(pass) ").map(|name| (name, TestOutcome::Passed));
        let skipped =
            || ["(skip) ", "(todo) "].iter().find_map(|p| text.strip_prefix(p)).map(|n| (n, TestOutcome::Skipped));
        if let Some((name, outcome)) = passed.or_else(skipped) {
            self.flush(sink);
            let (name, us) = timed(name);
            sink.tests.push(name, outcome, us);
            return true;
        }
        if let Some(rest) = text.strip_prefix("Ran ")
            && rest.contains(" test")
            && rest.contains(" across ")
        {
            let [passed, failed, skipped, todo] = std::mem::take(&mut self.counts);
            let total = rest.split(' ').next().and_then(|n| n.parse().ok()).unwrap_or(passed + failed + skipped + todo);
            sink.add_summary(TestSummary::new(passed, failed, skipped + todo, total));
            return true;
        }
        if let Some(count) = count(text) {
            self.counts[count.0] = count.1;
            return true;
        }
        let Some(open) = &mut self.open else { return false };
        let trimmed = ln.trimmed;
        if let Some(place) = trimmed.strip_prefix("at ") {
            if open.file.is_none()
                && let Some((file, line, column)) = location(place)
            {
                open.file = Some(file.to_string());
                open.line = Some(line);
                open.column = Some(column);
            }
        } else if let Some(note) = trimmed.strip_prefix("note: ") {
            if open.notes.len() < MAX_NOTES {
                open.notes.push(note.to_string());
            }
        } else if EXPECTATIONS.iter().any(|p| trimmed.starts_with(p)) {
            if open.notes.len() < MAX_NOTES {
                open.notes.push(trimmed.to_string());
            }
        } else if !trimmed.is_empty() {
            // Anything else is the next file's code frame or the script's own output.
            self.flush(sink);
            return false;
        }
        let start = open.log_range.map_or(ln.number, |r| r.start);
        open.log_range = Some(LogRange::new(start, ln.number));
        true
    }

    fn flush(&mut self, sink: &mut Sink) {
        if let Some(open) = self.open.take() {
            sink.push(open);
        }
    }
}

/// ` 2 pass`: which count, and its number.
fn count(text: &str) -> Option<(usize, u64)> {
    let rest = text.strip_prefix(' ')?;
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let n = rest[..digits].parse().ok()?;
    COUNTS.iter().position(|word| &rest[digits..] == *word).map(|i| (i, n))
}

/// `adds up [0.27ms]`: the name without its time, and the time in µs when it is in
/// milliseconds, the unit bun was seen printing.
fn timed(name: &str) -> (&str, Option<u64>) {
    match name.rsplit_once(" [") {
        Some((name, time)) if time.ends_with("s]") => (name, time.strip_suffix("ms]").and_then(millis_to_us)),
        _ => (name, None),
    }
}

/// `<anonymous> (/p/test/b.test.js:2:39)` or `/p/test/a.test.js:2:27`: the file, line, column.
fn location(place: &str) -> Option<(&str, u32, u32)> {
    let place = match place.rsplit_once(" (") {
        Some((_, inner)) => inner.strip_suffix(')')?,
        None => place,
    };
    let (rest, column) = place.rsplit_once(':')?;
    let (file, line) = rest.rsplit_once(':')?;
    if file.starts_with("node:") {
        return None;
    }
    Some((file, line.parse().ok()?, column.parse().ok()?))
}
