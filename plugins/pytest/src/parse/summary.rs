//! pytest's one-line reports: the final counts line, `-v` progress lines and the entries of the
//! `short test summary info` section.

use super::text::{has_double_colon, split_id_message, trim_rules};
use buildvise_plugin_api::{TestOutcome, TestSummary};

/// The counts of the final line (`== 1 failed, 3 passed, 2 warnings in 0.12s ==`, or without the
/// `=` under `-q`), or None when `text` is not one. Deselected tests and warnings are not tests,
/// and counts a plugin adds (`1 rerun`) are left out of the total as well.
pub fn final_counts(text: &str) -> Option<TestSummary> {
    let text = trim_rules(text, b'=').trim();
    let at = rfind_in(text)?;
    let (counts, duration) = (&text[..at], &text[at + " in ".len()..]);
    let seconds = split_at_byte(duration, b' ').map_or(duration, |(first, _)| first).strip_suffix('s')?;
    if !is_decimal(seconds) && seconds.parse::<f64>().is_err() {
        return None;
    }
    let mut summary = TestSummary::default();
    summary.errors = Some(0);
    summary.xfailed = Some(0);
    summary.xpassed = Some(0);
    if counts != "no tests ran" {
        for (i, item) in split_at_bytes(counts, b',').enumerate() {
            // Items are separated by `, `, and a comma without its space would be inside an item,
            // which no item allows: split at commas, spared a searcher for `, `.
            let item = if i == 0 { item } else { item.strip_prefix(' ')? };
            let (n, word) = split_at_byte(item, b' ')?;
            let n: u64 = n.parse().ok()?;
            if !word.bytes().all(|c| c.is_ascii_lowercase() || c == b' ' || c == b'-') {
                return None;
            }
            match word {
                "passed" => summary.passed = summary.passed.saturating_add(n),
                "failed" => summary.failed = summary.failed.saturating_add(n),
                "skipped" => summary.skipped = summary.skipped.saturating_add(n),
                "error" | "errors" => summary.errors = Some(n),
                "xfailed" => summary.xfailed = Some(n),
                "xpassed" => summary.xpassed = Some(n),
                _ => {}
            }
        }
    }
    // Saturating: a log can print any number.
    summary.total = [summary.failed, summary.skipped]
        .into_iter()
        .chain([summary.errors, summary.xfailed, summary.xpassed].map(|n| n.unwrap_or(0)))
        .fold(summary.passed, u64::saturating_add);
    Some(summary)
}

/// True for digits around at most one dot (`12.34`), as pytest prints a duration: a number, told
/// for less than parsing it costs.
fn is_decimal(text: &str) -> bool {
    let digits = text.bytes().filter(u8::is_ascii_digit).count();
    digits > 0 && text.len() - digits <= 1 && text.bytes().all(|b| b.is_ascii_digit() || b == b'.')
}

/// Where the last ` in ` of `text` starts. Every line that starts with a digit (a timestamp, a
/// count) and every banner's title is looked at, mostly short: found from the last `i` back,
/// which costs less than setting up a substring search.
fn rfind_in(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    memchr::memrchr_iter(b'i', bytes)
        .find(|&i| i > 0 && bytes[i - 1] == b' ' && bytes[i + 1..].starts_with(b"n "))
        .map(|i| i - 1)
}

/// `text` split around its first `sep`, an ASCII byte. Between the separators of a counts line
/// are a few bytes, which a loop goes over for less than `split_once` costs to start.
fn split_at_byte(text: &str, sep: u8) -> Option<(&str, &str)> {
    let at = text.bytes().position(|b| b == sep)?;
    Some((&text[..at], &text[at + 1..]))
}

/// `text` split at every `sep`, an ASCII byte, as [`split_at_byte`] splits it once.
fn split_at_bytes(text: &str, sep: u8) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let current = rest?;
        let (item, more) = split_at_byte(current, sep).map_or((current, None), |(item, more)| (item, Some(more)));
        rest = more;
        Some(item)
    })
}

/// A failed or errored test as one-line reports name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    Failed,
    Error,
}

/// What a progress line reports: the tests it finished, one per status letter
/// (`tests/t.py .F.sx  [ 40%]`, `-q`'s `..F.  [ 50%]`) or one for a `-v` line, and the failure or
/// error a `-v` line reports (`tests/t.py::test_a FAILED   [ 50%]`, or with xdist
/// `[gw1] [ 50%] ERROR tests/t.py::test_a`).
#[derive(Debug, PartialEq, Eq)]
pub struct Progress<'a> {
    pub finished: u64,
    pub outcome: Option<(&'a str, Outcome)>,
    /// The test a `-v` line names, whatever its outcome.
    pub named: Option<(&'a str, TestOutcome)>,
}

/// Reads a progress line; None for a line that is none (it neither ends with `[ 40%]` nor starts
/// with xdist's `[gw1]`).
pub fn progress(text: &str) -> Option<Progress<'_>> {
    if let Some(rest) = text.strip_prefix("[gw") {
        let named = xdist_named(rest);
        return Some(Progress { finished: progress_is_xdist_result(text) as u64, outcome: xdist_outcome(rest), named });
    }
    let (body, percent) = text.trim_end().strip_suffix("%]")?.rsplit_once('[')?;
    let body = body.trim_end();
    let outcome = match percent.trim().parse::<u32>() {
        Ok(_) => [(" FAILED", Outcome::Failed), (" ERROR", Outcome::Error)]
            .into_iter()
            .find_map(|(word, outcome)| Some((body.strip_suffix(word)?, outcome)))
            .filter(|(id, _)| has_double_colon(id.as_bytes())),
        Err(_) => None,
    };
    let named = percent.trim().parse::<u32>().ok().and_then(|_| verbose_named(body));
    Some(Progress { finished: finished(body.as_bytes()), outcome, named })
}

/// The words a `-v` line gives a test's outcome, and what each is for a report: an xfail did
/// not pass as a test, and pytest counts an XPASS that is not strict as no failure.
const VERBOSE_WORDS: [(&str, TestOutcome); 6] = [
    ("PASSED", TestOutcome::Passed),
    ("FAILED", TestOutcome::Failed),
    ("ERROR", TestOutcome::Failed),
    ("SKIPPED", TestOutcome::Skipped),
    ("XFAIL", TestOutcome::Skipped),
    ("XPASS", TestOutcome::Passed),
];

/// `tests/t.py::test_a PASSED`, `… SKIPPED (no yaml)`: the body of a `-v` line before its
/// `[ 40%]`. The id may hold spaces (`test_p[a b]`), so the word is the last one, or the one
/// before a parenthesised reason.
fn verbose_named(body: &str) -> Option<(&str, TestOutcome)> {
    VERBOSE_WORDS.iter().find_map(|&(word, outcome)| {
        let (id, rest) = body.rsplit_once(&format!(" {word}")[..])?;
        (rest.is_empty() || rest.starts_with(" (")).then_some(())?;
        has_double_colon(id.as_bytes()).then_some((id.trim(), outcome))
    })
}

/// `[gw1] [ 50%] PASSED tests/t.py::test_a`, after its `[gw`.
fn xdist_named(rest: &str) -> Option<(&str, TestOutcome)> {
    let (_, rest) = rest.split_once("] [")?;
    let (percent, rest) = rest.split_once("] ")?;
    percent.trim().strip_suffix('%')?;
    let (word, id) = rest.split_once(' ')?;
    let id = id.trim_end();
    let outcome = VERBOSE_WORDS.iter().find(|(w, _)| *w == word)?.1;
    has_double_colon(id.as_bytes()).then_some((id, outcome))
}

/// The tests a progress line's text before its `[ 40%]` (trimmed) finished: one for a `-v` line,
/// which names its test, else one per status letter of the marks after the last space.
fn finished(body: &[u8]) -> u64 {
    if has_double_colon(body) {
        return 1;
    }
    let marks = &body[memchr::memrchr(b' ', body).map_or(0, |space| space + 1)..];
    let mark = |b: &u8| matches!(b, b'.' | b'F' | b'E' | b's' | b'x' | b'X');
    if marks.iter().all(mark) { marks.len() as u64 } else { 0 }
}

/// The failure or error an xdist result line (after its `[gw`) reports.
fn xdist_outcome(rest: &str) -> Option<(&str, Outcome)> {
    let (_, rest) = rest.split_once("] [")?;
    let (percent, rest) = rest.split_once("] ")?;
    percent.trim().strip_suffix('%')?;
    let (word, id) = rest.split_once(' ')?;
    let id = id.trim_end();
    Some((id, outcome_word(word)?)).filter(|(id, _)| has_double_colon(id.as_bytes()))
}

/// `[gw1] [ 50%] PASSED tests/t.py::test_a`, as opposed to the line announcing the test.
fn progress_is_xdist_result(text: &str) -> bool {
    text.split_once("] [").is_some_and(|(_, rest)| rest.contains("%] "))
}

fn outcome_word(word: &str) -> Option<Outcome> {
    match word {
        "FAILED" => Some(Outcome::Failed),
        "ERROR" => Some(Outcome::Error),
        _ => None,
    }
}

/// One entry of the short test summary.
#[derive(Debug, PartialEq, Eq)]
pub enum Entry<'a> {
    Outcome {
        outcome: Outcome,
        id: &'a str,
        message: Option<&'a str>,
    },
    /// `SKIPPED [2] tests/t.py:16: reason`.
    Skipped {
        file: &'a str,
        line: Option<u32>,
        reason: &'a str,
    },
    /// `XFAIL id - reason` / `XPASS id - reason`.
    Expected {
        word: &'a str,
        id: &'a str,
        reason: Option<&'a str>,
    },
}

pub fn short_entry(text: &str) -> Option<Entry<'_>> {
    let (word, rest) = text.split_once(' ')?;
    match word {
        "FAILED" | "ERROR" => {
            let outcome = outcome_word(word)?;
            let (id, message) = split_id_message(rest);
            Some(Entry::Outcome { outcome, id, message })
        }
        "SKIPPED" => {
            let rest = rest.strip_prefix('[')?.split_once("] ")?.1;
            let (place, reason) = rest.split_once(": ")?;
            match place.rsplit_once(':') {
                Some((file, line)) if line.parse::<u32>().is_ok() => {
                    Some(Entry::Skipped { file, line: line.parse().ok(), reason })
                }
                _ => Some(Entry::Skipped { file: place, line: None, reason }),
            }
        }
        w if w.starts_with("SUBFAILED") => {
            // `SUBFAILED(i=1) id - msg` or `SUBFAILED[msg] (i=1) id - msg`: the test failed. The
            // id is the first word holding `::`.
            let start = text
                .match_indices(' ')
                .map(|(at, _)| at + 1)
                .find(|&at| text[at..].split(' ').next().is_some_and(|word| word.contains("::")))?;
            let (id, message) = split_id_message(&text[start..]);
            Some(Entry::Outcome { outcome: Outcome::Failed, id, message })
        }
        "XFAIL" | "XPASS" => {
            let (id, reason) = split_id_message(rest);
            Some(Entry::Expected { word, id, reason })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// passed, failed, skipped, errors, xfailed, xpassed, total.
    type Counts = (u64, u64, u64, Option<u64>, Option<u64>, Option<u64>, u64);

    fn counts(s: &TestSummary) -> Counts {
        (s.passed, s.failed, s.skipped, s.errors, s.xfailed, s.xpassed, s.total)
    }

    #[test]
    fn final_lines() {
        let s = final_counts("=============== 2 failed, 3 passed, 1 skipped, 1 error in 0.13s ================");
        assert_eq!(s.as_ref().map(counts), Some((3, 2, 1, Some(1), Some(0), Some(0), 7)));
        let s = final_counts("3 passed, 4 skipped, 1 xfailed, 1 xpassed, 2 warnings in 0.09s");
        assert_eq!(s.as_ref().map(counts), Some((3, 0, 4, Some(0), Some(1), Some(1), 9)));
        let s = final_counts("== 2 errors, 1 deselected in 61.20s (0:01:01) ==");
        assert_eq!(s.as_ref().map(counts), Some((0, 0, 0, Some(2), Some(0), Some(0), 2)));
        assert_eq!(final_counts("==== no tests ran in 0.01s ====").map(|s| s.total), Some(0));
    }

    #[test]
    fn counts_past_u64_saturate() {
        let s = final_counts("== 18446744073709551615 passed, 1 failed, 18446744073709551615 passed in 0.01s ==");
        assert_eq!(s.as_ref().map(counts), Some((u64::MAX, 1, 0, Some(0), Some(0), Some(0), u64::MAX)));
    }

    #[test]
    fn not_final_lines() {
        assert_eq!(final_counts("=== short test summary info ==="), None);
        assert_eq!(final_counts("2 failed in the end"), None);
        assert_eq!(final_counts("we passed in 2s"), None);
        assert_eq!(final_counts("1 Failed in 2s"), None);
    }

    fn progress_outcome(text: &str) -> Option<(&str, Outcome)> {
        progress(text).and_then(|p| p.outcome)
    }

    fn finished_tests(text: &str) -> u64 {
        progress(text).map_or(0, |p| p.finished)
    }

    #[test]
    fn progress_lines() {
        assert_eq!(
            progress_outcome("tests/t.py::test_p[a b] FAILED                     [ 50%]"),
            Some(("tests/t.py::test_p[a b]", Outcome::Failed))
        );
        assert_eq!(
            progress_outcome("[gw1] [ 21%] ERROR tests/t.py::test_s "),
            Some(("tests/t.py::test_s", Outcome::Error))
        );
        assert_eq!(progress_outcome("tests/t.py::test_ok PASSED      [100%]"), None);
        assert_eq!(progress_outcome("tests/t.py .F.   [100%]"), None);
        assert_eq!(progress_outcome("[gw0] [ 7%] PASSED tests/t.py::test_ok"), None);
    }

    #[test]
    fn verbose_lines_name_their_test_whatever_its_outcome() {
        let named = |text| progress(text).and_then(|p| p.named);
        assert_eq!(
            named("tests/t.py::test_p[a b] PASSED                     [ 50%]"),
            Some(("tests/t.py::test_p[a b]", TestOutcome::Passed))
        );
        assert_eq!(
            named("tests/t.py::test_y SKIPPED (no yaml)          [ 60%]"),
            Some(("tests/t.py::test_y", TestOutcome::Skipped))
        );
        assert_eq!(
            named("tests/t.py::test_x XFAIL (later)     [ 70%]"),
            Some(("tests/t.py::test_x", TestOutcome::Skipped))
        );
        assert_eq!(named("tests/t.py::test_d ERROR    [ 80%]"), Some(("tests/t.py::test_d", TestOutcome::Failed)));
        assert_eq!(named("[gw0] [ 7%] PASSED tests/t.py::test_ok"), Some(("tests/t.py::test_ok", TestOutcome::Passed)));
        assert_eq!(
            named("[gw0] [ 7%] FAILED tests/t.py::test_no "),
            Some(("tests/t.py::test_no", TestOutcome::Failed))
        );
        // Status letters name no test; nor does a line that only ends like one.
        assert_eq!(named("tests/t.py .F.sxX                       [ 60%]"), None);
        assert_eq!(named("[gw0] darwin -- Python 3.12.1"), None);
        assert_eq!(named("tests/t.py PASSED     [ 10%]"), None);
    }

    #[test]
    fn finished_test_counts() {
        assert_eq!(finished_tests("tests/t.py .F.sxX                       [ 60%]"), 6);
        assert_eq!(finished_tests("..F.                                    [100%]"), 4);
        assert_eq!(finished_tests("tests/t.py::test_a PASSED               [ 10%]"), 1);
        assert_eq!(finished_tests("[gw0] [ 10%] PASSED tests/t.py::test_a "), 1);
        assert_eq!(finished_tests("printed [by a test]"), 0);
        assert_eq!(progress("printed by a test, 50%"), None);
    }

    #[test]
    fn short_summary_entries() {
        assert_eq!(
            short_entry("FAILED tests/t.py::test_p[-0.5-0--1.0] - assert 0.0 =..."),
            Some(Entry::Outcome {
                outcome: Outcome::Failed,
                id: "tests/t.py::test_p[-0.5-0--1.0]",
                message: Some("assert 0.0 =...")
            })
        );
        assert_eq!(
            short_entry("ERROR tests/t.py"),
            Some(Entry::Outcome { outcome: Outcome::Error, id: "tests/t.py", message: None })
        );
        assert_eq!(
            short_entry("SKIPPED [1] tests/t.py:16: needs: a GPU"),
            Some(Entry::Skipped { file: "tests/t.py", line: Some(16), reason: "needs: a GPU" })
        );
        assert_eq!(
            short_entry("XPASS tests/t.py::test_r - flaky"),
            Some(Entry::Expected { word: "XPASS", id: "tests/t.py::test_r", reason: Some("flaky") })
        );
        assert_eq!(
            short_entry("SUBFAILED[check] (i=1) tests/t.py::test_s - assert 1 == 0"),
            Some(Entry::Outcome { outcome: Outcome::Failed, id: "tests/t.py::test_s", message: Some("assert 1 == 0") })
        );
        assert_eq!(short_entry("SUBFAILED(i=1)"), None);
        assert_eq!(short_entry("second line of a -vv message"), None);
    }
}
