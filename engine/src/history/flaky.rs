//! Flaky tests: over a command's recent runs (its arguments unchanged, by construction of the
//! index), a test that failed, then passed, then failed again.
//!
//! Passed-then-failed-then-passed is not enough: that is an edit that broke a test and the edit
//! that fixed it, the loop every agent runs. A failure that comes back after a pass is what a
//! person would want to hear about. Only runs that ran their tests to the end count: a run that
//! stopped early, timed out or was cancelled passed nothing it did not reach.

use crate::outcome::RunResult;
use crate::store::{RunStatus, Store};
use std::collections::BTreeMap;

/// A test that failed by turns.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Flaky {
    pub test: String,
    /// Runs it failed in, of `runs` that ran it to the end.
    pub failed: usize,
    pub runs: usize,
}

/// The flaky tests among `runs`, one command's finished runs, oldest first.
pub fn flaky_tests(store: &Store, runs: &[String]) -> Vec<Flaky> {
    let outcomes: Vec<Vec<String>> = runs.iter().filter_map(|id| failed_tests_if_complete(store, id)).collect();
    find(&outcomes)
}

/// The failed tests of a run that ran its tests to the end, or None.
fn failed_tests_if_complete(store: &Store, id: &str) -> Option<Vec<String>> {
    let meta = store.read_meta(id).ok()?;
    let result: RunResult = store.read_result(id).ok()??;
    let complete = meta.status == RunStatus::Exited
        && result.summary.is_some()
        && result.stopped_early.is_none()
        && result.parser_error.is_none();
    complete.then_some(result.failed_tests)
}

/// `outcomes`: each run's failed tests, oldest run first.
fn find(outcomes: &[Vec<String>]) -> Vec<Flaky> {
    // Per test: 0 not failed yet, 1 failed, 2 failed then passed, 3 failed again.
    let mut seen: BTreeMap<&str, (u8, usize)> = BTreeMap::new();
    for failed in outcomes {
        for (test, (stage, failures)) in seen.iter_mut() {
            let failed_now = failed.iter().any(|t| t == test);
            *stage = match (*stage, failed_now) {
                (1, false) => 2,
                (2, true) => 3,
                (stage, _) => stage,
            };
            *failures += usize::from(failed_now);
        }
        for test in failed {
            seen.entry(test.as_str()).or_insert((1, 1));
        }
    }
    seen.into_iter()
        .filter(|(_, (stage, _))| *stage == 3)
        .map(|(test, (_, failed))| Flaky { test: test.to_string(), failed, runs: outcomes.len() })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(failed: &[&[&str]]) -> Vec<Vec<String>> {
        failed.iter().map(|f| f.iter().map(|t| t.to_string()).collect()).collect()
    }

    #[test]
    fn a_failure_that_comes_back_after_a_pass_is_flaky() {
        let flaky = find(&runs(&[&["t::a", "t::b"], &[], &["t::a"], &["t::a"]]));
        assert_eq!(flaky, [Flaky { test: "t::a".into(), failed: 3, runs: 4 }]);
    }

    #[test]
    fn broken_then_fixed_is_the_edit_loop_not_flakiness() {
        assert!(find(&runs(&[&[], &["t::a"], &[], &["t::b"], &["t::b"]])).is_empty());
    }
}
