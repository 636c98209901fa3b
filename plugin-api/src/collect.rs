//! What parsers share when they gather results: deduplication of repeated diagnostics,
//! test-name joining, and the tests a run named.

use crate::types::{Diagnostic, TestCase, TestOutcome};
use std::collections::HashMap;
use std::collections::hash_map::{Entry, RandomState};
use std::hash::BuildHasher;

/// Joins describe/suite titles and a test title the way results show them: `a > b > test`.
pub fn join_test_name<S: AsRef<str>>(parts: &[S]) -> String {
    parts.iter().map(|p| p.as_ref().trim()).filter(|p| !p.is_empty()).collect::<Vec<_>>().join(" > ")
}

/// Diagnostics in first-seen order, each distinct one once. Tools repeat themselves (MSBuild after
/// `Build FAILED.`, cargo for lib and lib-test, jest's "Summary of all failing tests"); identity is
/// severity, file, line, column, code, message and test, as they were when pushed.
#[derive(Debug, Default)]
pub struct DiagnosticSet {
    items: Vec<Diagnostic>,
    /// A hash of each kept diagnostic's identity, and its index in `items`. Hashing the borrowed
    /// fields, rather than keeping a copy of them as the key, spares a repeat (the common case in
    /// a flood) its allocations. The keys are random per set, so that a log cannot be made to
    /// collide with a diagnostic and hide it.
    seen: HashMap<u64, usize>,
    hasher: RandomState,
    /// The index of the diagnostic the last push added or repeated.
    last: Option<usize>,
    /// Whether that diagnostic was just added and not lent out by `last_mut` since: then a
    /// push of the same diagnostic again, a tool's usual way of repeating itself, is recognised
    /// by comparing the two, without hashing.
    last_intact: bool,
}

type Fields<'a> =
    (crate::Severity, &'a Option<String>, Option<u32>, Option<u32>, &'a Option<String>, &'a str, &'a Option<String>);

/// What makes two diagnostics the same one.
fn identity(d: &Diagnostic) -> Fields<'_> {
    (d.severity, &d.file, d.line, d.column, &d.code, &d.message, &d.test)
}

impl DiagnosticSet {
    pub fn new() -> Self {
        Self::default()
    }

    fn hash(&self, d: &Diagnostic) -> u64 {
        self.hasher.hash_one(identity(d))
    }

    /// Adds `d` unless an identical one is already here; returns whether it was added.
    pub fn push(&mut self, d: Diagnostic) -> bool {
        let repeats_last =
            self.last.filter(|_| self.last_intact).is_some_and(|i| identity(&self.items[i]) == identity(&d));
        if repeats_last {
            return false;
        }
        match self.seen.entry(self.hash(&d)) {
            Entry::Occupied(kept) => {
                // Kept earlier, it may have been lent out since.
                self.last = Some(*kept.get());
                self.last_intact = false;
                false
            }
            Entry::Vacant(slot) => {
                slot.insert(self.items.len());
                self.last = Some(self.items.len());
                self.last_intact = true;
                self.items.push(d);
                true
            }
        }
    }

    /// True when an identical diagnostic is already here.
    pub fn contains(&self, d: &Diagnostic) -> bool {
        self.seen.contains_key(&self.hash(d))
    }

    /// The diagnostic the last [`push`](Self::push) added or, when that push was dropped as a
    /// repeat, the kept one it repeated: the one the lines that follow belong to (notes, a longer
    /// log range). None before the first push. A tool that prints a diagnostic's notes again with
    /// each repeat would add them twice: add notes only while `push` returned true.
    pub fn last_mut(&mut self) -> Option<&mut Diagnostic> {
        self.last_intact = false;
        self.items.get_mut(self.last?)
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Diagnostic> {
        self.items.iter()
    }

    pub fn into_vec(self) -> Vec<Diagnostic> {
        self.items
    }
}

/// The tests a run named, in the order read, for [`crate::ParseResult::tests`]. A log is
/// untrusted and a test line is short, so the passed and skipped tests kept stop at
/// [`TestCases::MAX`]; failed ones are always kept, as [`crate::ParseResult::failed_tests`] keeps
/// them.
#[derive(Debug, Default)]
pub struct TestCases {
    cases: Vec<TestCase>,
    /// Passed and skipped tests past the cap, left out.
    dropped: u64,
}

impl TestCases {
    /// Passed and skipped tests kept at most: a report of a hundred thousand tests is already
    /// more than a CI page shows, and each costs a result file about 60 bytes.
    pub const MAX: usize = 100_000;

    pub fn new() -> Self {
        TestCases::default()
    }

    pub fn push(&mut self, name: &str, outcome: TestOutcome, duration_us: Option<u64>) {
        if outcome != TestOutcome::Failed && self.cases.len() >= Self::MAX {
            self.dropped += 1;
            return;
        }
        self.cases.push(TestCase::new(name, outcome, duration_us));
    }

    pub fn len(&self) -> usize {
        self.cases.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cases.is_empty()
    }

    /// Passed and skipped tests left out past [`TestCases::MAX`].
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    pub fn iter(&self) -> impl Iterator<Item = &TestCase> {
        self.cases.iter()
    }

    pub fn into_vec(self) -> Vec<TestCase> {
        self.cases
    }
}

/// A duration printed in seconds (`0.004`, `1.5`), as microseconds; None unless it is digits
/// with at most one dot.
pub fn seconds_to_us(text: &str) -> Option<u64> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || !digits(fraction) {
        return None;
    }
    let whole: u64 = if whole.is_empty() { 0 } else { whole.parse().ok()? };
    // Six digits of the fraction are microseconds; more are below what is kept.
    let micros =
        fraction.bytes().chain(std::iter::repeat(b'0')).take(6).fold(0u64, |n, b| n * 10 + u64::from(b - b'0'));
    whole.checked_mul(1_000_000)?.checked_add(micros)
}

/// A duration printed in milliseconds (`5`, `1.234567`), as microseconds.
pub fn millis_to_us(text: &str) -> Option<u64> {
    seconds_to_us(text).map(|us| us / 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_test_names() {
        assert_eq!(join_test_name(&["Calc ", "", "adds"]), "Calc > adds");
    }

    #[test]
    fn drops_exact_repeats_only() {
        let mut set = DiagnosticSet::new();
        let d = Diagnostic::error("boom").with_location("a.rs", Some(1), Some(2));
        assert!(set.push(d.clone()));
        assert!(!set.push(d.clone()));
        assert!(set.push(d.with_code("E1")));
        assert_eq!(set.len(), 2);
    }

    #[test]
    fn last_mut_after_a_dropped_repeat_is_the_kept_diagnostic() {
        let mut set = DiagnosticSet::new();
        let first = Diagnostic::error("first").with_location("a.rs", Some(1), None);
        assert!(set.push(first.clone()));
        assert!(set.push(Diagnostic::error("second")));
        assert!(!set.push(first));
        set.last_mut().expect("a diagnostic").notes.push("help: about first".into());
        let notes: Vec<_> = set.iter().map(|d| (d.message.as_str(), d.notes.len())).collect();
        assert_eq!(notes, [("first", 1), ("second", 0)]);
    }

    #[test]
    fn identity_is_as_pushed_even_when_last_mut_changes_it() {
        let mut set = DiagnosticSet::new();
        let d = Diagnostic::error("boom");
        assert!(set.push(d.clone()));
        assert!(!set.push(d.clone()), "a repeat straight after is dropped");
        set.last_mut().expect("a diagnostic").message = "boom: the details".into();
        assert!(!set.push(d), "still the same diagnostic as pushed");
        assert!(set.push(Diagnostic::error("boom: the details")), "what it became was never pushed");
        assert_eq!(set.len(), 2);
    }

    #[test]
    fn durations_read_as_microseconds() {
        assert_eq!(seconds_to_us("0.004"), Some(4_000));
        assert_eq!(seconds_to_us("1.5"), Some(1_500_000));
        assert_eq!(seconds_to_us("12"), Some(12_000_000));
        assert_eq!(seconds_to_us(".25"), Some(250_000));
        assert_eq!(seconds_to_us("0.1234567"), Some(123_456));
        assert_eq!(millis_to_us("5"), Some(5_000));
        assert_eq!(millis_to_us("1.234567"), Some(1_234));
        for bad in ["", ".", "1.2.3", "-1", "1e3", "ms", "99999999999999999999"] {
            assert_eq!(seconds_to_us(bad), None, "{bad}");
        }
    }

    #[test]
    fn passed_tests_past_the_cap_are_counted_and_failures_kept() {
        let mut cases = TestCases::new();
        for i in 0..TestCases::MAX {
            cases.push(&format!("t{i}"), TestOutcome::Passed, None);
        }
        cases.push("one more", TestOutcome::Passed, Some(1));
        cases.push("broken", TestOutcome::Failed, None);
        assert_eq!((cases.len(), cases.dropped()), (TestCases::MAX + 1, 1));
        assert_eq!(cases.into_vec().last().map(|c| c.name.as_str()), Some("broken"));
    }
}
