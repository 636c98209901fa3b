//! Comparing two runs' problems: which were fixed, which are new, which are still there.
//!
//! A run's problems are its errors and its project's warnings (the toolchain's notices about
//! itself are not the project's problems), and its failed tests, each test's failure once whether
//! or not a diagnostic names it; a warning that names a test is a problem apart from its failure.
//! Problems are matched by fingerprint as multisets: two identical errors before and one now is
//! one fixed and one still. Among problems sharing a fingerprint, the first ones in log order are
//! taken to be the ones that stayed. A run that stopped early did not reach some of what the run
//! before had: what it no longer has is "not run", not fixed.

use super::fingerprint;
use crate::outcome::{Comparison, OwnedProblem, RunResult, TestName};
use crate::store::Versus;
use buildvise_plugin_api::{Diagnostic, Severity};
use std::collections::{HashMap, HashSet};

/// Fixed problems a stored comparison keeps, for `full` to list.
const FIXED_KEPT: usize = 50;

/// One problem of a run, as the run holds it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Problem<'a> {
    /// A diagnostic, and its place among the run's diagnostics.
    Diagnostic(usize, &'a Diagnostic),
    /// A failed test no diagnostic names.
    Test(&'a str),
}

impl Problem<'_> {
    /// The problem as stored and printed: a diagnostic without its notes, or `{"test": name}`.
    pub fn owned(self) -> OwnedProblem {
        match self {
            Problem::Diagnostic(_, d) => OwnedProblem::Diagnostic(d.clone().with_notes(Vec::new())),
            Problem::Test(test) => OwnedProblem::Test(TestName { test: test.to_string() }),
        }
    }
}

/// The problems of `r`, with their fingerprints, in log order.
fn problems<'a>(tool: &str, r: &'a RunResult) -> Vec<(String, Problem<'a>)> {
    let mut seen_tests = HashSet::new();
    let mut out = Vec::new();
    for (i, d) in r.diagnostics.iter().enumerate() {
        let counts = d.severity == Severity::Error || (d.severity == Severity::Warning && !d.toolchain);
        let failure = d.test.as_deref().filter(|_| d.severity == Severity::Error);
        if !counts || failure.is_some_and(|t| !seen_tests.insert(t)) {
            continue;
        }
        let print = r.fingerprints.get(i).cloned().unwrap_or_else(|| fingerprint::of(tool, d));
        out.push((print, Problem::Diagnostic(i, d)));
    }
    for test in &r.failed_tests {
        if seen_tests.insert(test.as_str()) {
            out.push((fingerprint::of_test(tool, test), Problem::Test(test)));
        }
    }
    out
}

/// Two runs' problems side by side.
#[derive(Debug, Default)]
pub struct Delta<'a> {
    /// The earlier run's problems the later one does not have.
    pub fixed: Vec<Problem<'a>>,
    /// The later run's problems the earlier one did not have.
    pub new: Vec<Problem<'a>>,
    /// The later run's problems the earlier one had too.
    pub still: Vec<Problem<'a>>,
    /// The earlier run's problems the later one does not have, when it stopped early: it may not
    /// have reached them.
    pub not_run: Vec<Problem<'a>>,
}

/// Compares the run `before` (of `before_tool`) with `after`. A problem that went away from a run
/// that stopped early is not called fixed but not run: it may only not have been reached.
pub fn delta<'a>(before_tool: &str, before: &'a RunResult, after_tool: &str, after: &'a RunResult) -> Delta<'a> {
    let mut earlier: HashMap<String, Vec<Problem<'a>>> = HashMap::new();
    let mut order = Vec::new();
    for (print, problem) in problems(before_tool, before) {
        earlier.entry(print.clone()).or_default().push(problem);
        order.push(print);
    }
    let mut delta = Delta::default();
    for (print, problem) in problems(after_tool, after) {
        match earlier.get_mut(&print).filter(|left| !left.is_empty()) {
            Some(left) => {
                left.remove(0);
                delta.still.push(problem);
            }
            None => delta.new.push(problem),
        }
    }
    // In the earlier run's order, each unmatched problem once.
    let gone = if after.stopped_early.is_none() { &mut delta.fixed } else { &mut delta.not_run };
    for print in order {
        if let Some(left) = earlier.get_mut(&print)
            && !left.is_empty()
        {
            gone.push(left.remove(0));
        }
    }
    delta
}

/// What `delta` says about the run before, `previous`, as the later run stores it.
pub fn comparison(previous: &str, delta: Delta<'_>) -> Comparison {
    let mut new_diagnostics = Vec::new();
    let mut new_tests = Vec::new();
    for problem in &delta.new {
        match problem {
            Problem::Diagnostic(i, _) => new_diagnostics.push(*i),
            Problem::Test(test) => new_tests.push(test.to_string()),
        }
    }
    let fixed_problems = delta.fixed.iter().take(FIXED_KEPT).map(|p| p.owned()).collect();
    let counts = Versus {
        run: previous.to_string(),
        fixed: delta.fixed.len(),
        new: delta.new.len(),
        still: delta.still.len(),
        not_run: delta.not_run.len(),
        args: None,
    };
    Comparison { counts, new_diagnostics, new_tests, fixed_problems }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(file: &str, line: u32, code: &str, message: &str) -> Diagnostic {
        Diagnostic::error(message).with_code(code).with_location(file, Some(line), None)
    }

    fn result(diagnostics: Vec<Diagnostic>, failed_tests: &[&str]) -> RunResult {
        RunResult {
            diagnostics,
            failed_tests: failed_tests.iter().map(|t| t.to_string()).collect(),
            ..RunResult::default()
        }
    }

    fn files(problems: &[Problem<'_>]) -> Vec<String> {
        problems
            .iter()
            .map(|p| match p {
                Problem::Diagnostic(_, d) => format!("{}:{}", d.file.as_deref().unwrap_or("-"), d.line.unwrap_or(0)),
                Problem::Test(test) => test.to_string(),
            })
            .collect()
    }

    #[test]
    fn fixed_new_and_still_survive_moved_lines() {
        let before = result(
            vec![
                error("src/lib.rs", 3, "E0425", "cannot find value `x` in this scope"),
                error("src/lib.rs", 8, "E0308", "mismatched types"),
                error("src/lib.rs", 9, "E0308", "mismatched types"),
            ],
            &[],
        );
        // Two lines inserted at the top; one `mismatched types` fixed, one new error.
        let after = result(
            vec![
                error("src/lib.rs", 5, "E0425", "cannot find value `x` in this scope"),
                error("src/lib.rs", 5, "E0425", "cannot find value `y` in this scope"),
                error("src/lib.rs", 11, "E0308", "mismatched types"),
            ],
            &[],
        );
        let d = delta("cargo.check", &before, "cargo.check", &after);
        assert_eq!(files(&d.fixed), ["src/lib.rs:9"]);
        assert_eq!(files(&d.new), ["src/lib.rs:5"]);
        assert_eq!(files(&d.still), ["src/lib.rs:5", "src/lib.rs:11"]);
        let c = comparison("bafotemu", d);
        assert_eq!((c.counts.counts().as_str(), c.new_diagnostics.as_slice()), ("1 fixed, 1 new, 2 still", &[1][..]));
    }

    #[test]
    fn failed_tests_count_once_with_or_without_a_diagnostic() {
        let named = Diagnostic::error("assert 1 == 2").with_test("t::a");
        let before = result(vec![named.clone(), named], &["t::a", "t::b"]);
        let after = result(vec![Diagnostic::error("assert 1 == 3").with_test("t::a")], &["t::a", "t::c"]);
        let d = delta("pytest.run", &before, "pytest.run", &after);
        assert_eq!(
            (files(&d.fixed), files(&d.new), files(&d.still)),
            (vec!["t::b".into()], vec!["t::c".into()], vec!["-:0".into()])
        );
    }

    #[test]
    fn a_run_that_stopped_early_fixes_nothing_it_did_not_reach() {
        let before = result(vec![], &["t::a", "t::b"]);
        let mut after = result(vec![], &["t::a"]);
        after.stopped_early = Some("1 test target not run".into());
        let d = delta("cargo.test", &before, "cargo.test", &after);
        assert_eq!(
            (files(&d.fixed), files(&d.still), files(&d.not_run)),
            (vec![], vec!["t::a".into()], vec!["t::b".into()])
        );
        assert_eq!(comparison("bafotemu", d).counts.counts(), "1 still, 1 not run");
    }

    #[test]
    fn a_fixed_failure_is_fixed_though_its_test_still_warns() {
        // pytest's order: the failure's section, then the warnings summary naming the same test.
        let failure = Diagnostic::error("assert 1 == 2").with_test("t.py::test_a");
        let warning = Diagnostic::warning("datetime.utcnow() is deprecated")
            .with_code("DeprecationWarning")
            .with_location("t.py", Some(4), None)
            .with_test("t.py::test_a");
        let before = result(vec![failure, warning.clone()], &["t.py::test_a"]);
        let after = result(vec![warning], &[]);
        let d = delta("pytest.run", &before, "pytest.run", &after);
        assert_eq!(
            (files(&d.fixed), files(&d.new), files(&d.still)),
            (vec!["-:0".into()], vec![], vec!["t.py:4".into()])
        );
    }

    #[test]
    fn the_toolchains_notices_are_no_problem_of_the_project() {
        let notice = Diagnostic::warning("npm warn config production").from_toolchain();
        let (before, after) = (result(vec![notice], &[]), result(vec![], &[]));
        assert!(!comparison("bafotemu", delta("npm.test", &before, "npm.test", &after)).says_something());
    }
}
