//! Lines that read like a failure in output no parser explained: a test runner nobody wrote a
//! plugin for prints 200,000 lines and two mismatches among them, and the answer's tail shows
//! only the last lines. These are found by words (`error`, `failed`, `mismatch`, `expected`…),
//! not by format, so they are pointers into the log, never diagnostics: they count toward no
//! error and no fingerprint.

use crate::store::{LogLine, LogReader, StoreError, StreamFilter};
use buildvise_plugin_api::{Stream, strip_ansi};
use regex::bytes::Regex;
use std::sync::LazyLock;

use super::saved::read_line_bounded;
use super::{SavedError, SavedLog};

/// The words, at the start of a word and in any case. Also the `grep` an answer offers for the
/// rest, so what it finds is what was counted (less the lines that say none failed).
pub const TROUBLE_WORDS: &str =
    r"(?i)\b(error|fail|mismatch|panic|exception|traceback|fatal|abort|assert|expected|not ok|segmentation fault)";

/// Flagged lines kept to show; the rest are counted.
const KEPT: usize = 5;
/// Longest flagged line kept, in bytes (the answer clips far shorter).
const KEPT_LINE_BYTES: usize = 4096;

static TROUBLE: LazyLock<Regex> = LazyLock::new(|| Regex::new(TROUBLE_WORDS).expect("a valid pattern"));

/// The first flagged lines of a log and how many there are.
#[derive(Debug, Default)]
pub struct Flagged {
    pub lines: Vec<LogLine>,
    pub count: u64,
}

impl Flagged {
    fn visit(&mut self, number: u64, stream: Stream, bytes: &[u8]) {
        let clean = strip_ansi(bytes);
        if !says_trouble(&clean) {
            return;
        }
        self.count += 1;
        if self.lines.len() < KEPT {
            self.lines.push(LogLine { number, stream, bytes: bytes[..bytes.len().min(KEPT_LINE_BYTES)].to_vec() });
        }
    }
}

/// Whether a line uses one of the words, other than to count none of it.
pub fn says_trouble(line: &[u8]) -> bool {
    TROUBLE.find_iter(line).any(|m| !counts_none(&line[..m.start()], &line[m.end()..]))
}

/// `0 errors`, `no failures`, `failed: 0`: the word with a count of none before or after it.
fn counts_none(before: &[u8], after: &[u8]) -> bool {
    let before = before.trim_ascii_end();
    let zero_before = before == b"0" || before.ends_with(b" 0") || ends_with_word(before, b"no");
    let after = &after[after.iter().take_while(|b| b.is_ascii_alphabetic()).count()..];
    let after = after.strip_prefix(b":").unwrap_or(after).trim_ascii_start();
    let zero_after = after.first() == Some(&b'0') && !after.get(1).is_some_and(u8::is_ascii_digit);
    zero_before || zero_after
}

fn ends_with_word(text: &[u8], word: &[u8]) -> bool {
    text.len() >= word.len()
        && text[text.len() - word.len()..].eq_ignore_ascii_case(word)
        && text.len().checked_sub(word.len() + 1).is_none_or(|i| !text[i].is_ascii_alphanumeric())
}

/// The flagged lines among a stored run's first `before` lines.
pub fn flag_stored(reader: &mut LogReader, before: u64) -> Result<Flagged, StoreError> {
    let mut flagged = Flagged::default();
    reader.scan(StreamFilter::Both, |number, stream, bytes| {
        if number > before {
            return false;
        }
        flagged.visit(number, stream, bytes);
        true
    })?;
    Ok(flagged)
}

/// The flagged lines among a saved log's first `before` lines, numbered as [`super::parse_saved`]
/// numbers them (stdout's, then stderr's).
pub fn flag_saved(log: &SavedLog, before: u64) -> Result<Flagged, SavedError> {
    let mut flagged = Flagged::default();
    let mut number = 0;
    let files = match log {
        SavedLog::Combined(path) => vec![(path, Stream::Stdout)],
        SavedLog::Streams { stdout, stderr } => vec![(stdout, Stream::Stdout), (stderr, Stream::Stderr)],
    };
    for (path, stream) in files {
        let read_error = |source| SavedError::Read { path: path.clone(), source };
        let file = std::fs::File::open(path).map_err(read_error)?;
        let mut reader = std::io::BufReader::with_capacity(256 * 1024, file);
        let mut line = Vec::new();
        while number < before && read_line_bounded(&mut reader, &mut line).map_err(read_error)? {
            number += 1;
            flagged.visit(number, stream, &line);
        }
    }
    Ok(flagged)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_flags_by_its_words_not_by_a_count_of_none() {
        for line in [
            "case 70000: expected 42, got 41 (mismatch)",
            "FAILED tests/a.py::t",
            "thread 'main' panicked at src/x.rs:3:5",
            "Traceback (most recent call last):",
            "not ok 3 - adds",
            "ERROR: cannot open db",
            "Segmentation fault (core dumped)",
            "3 errors, 0 warnings",
        ] {
            assert!(says_trouble(line.as_bytes()), "{line}");
        }
        for line in [
            "case 12: ok",
            "0 errors, 2 warnings",
            "no failures",
            "failed: 0",
            "Tests: 12 passed, 0 failed",
            "test_expected_total PASSED",
            "terrorist",
        ] {
            assert!(!says_trouble(line.as_bytes()), "{line}");
        }
        assert!(says_trouble(b"failed: 10"), "a count of ten is not none");
    }

    #[test]
    fn a_saved_log_keeps_the_first_flagged_lines_and_counts_them_all() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        let mut text = String::new();
        for i in 1..=100 {
            text.push_str(&if i % 10 == 0 { format!("case {i}: mismatch\n") } else { format!("case {i}: ok\n") });
        }
        std::fs::write(&path, text).unwrap();
        let flagged = flag_saved(&SavedLog::Combined(path), 95).unwrap();
        assert_eq!(flagged.count, 9, "line 100 is past the first 95");
        let numbers: Vec<u64> = flagged.lines.iter().map(|l| l.number).collect();
        assert_eq!(numbers, [10, 20, 30, 40, 50]);
    }
}
