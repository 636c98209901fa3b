//! What a run came to: the plugin's [`ParseResult`] with `success` decided, stored as
//! `result.json` and rendered for every surface.

use crate::store::{RunMeta, Tally, Versus};
use buildvise_plugin_api::{Diagnostic, ParseResult, Severity, TestCase, TestSummary};
use serde::{Deserialize, Serialize};

/// A run that has ended: what ran and how ([`RunMeta`]), and what it came to.
#[derive(Debug, Clone)]
pub struct Finished {
    pub meta: RunMeta,
    pub result: RunResult,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunResult {
    pub success: bool,
    #[serde(default)]
    pub diagnostics: Vec<Diagnostic>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<TestSummary>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_tests: Vec<String>,
    /// What did not run, when the tool stopped early (see [`ParseResult::stopped_early`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_early: Option<String>,
    /// Set when the plugin's parser failed: the diagnostics are then empty and the raw log is the
    /// only source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parser_error: Option<String>,
    /// Every test the tool named (see [`ParseResult::tests`]); only reports read them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tests: Vec<TestCase>,
    /// One per diagnostic, in order (see [`crate::history::fingerprint`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fingerprints: Vec<String>,
    /// What changed since the previous run of the same command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vs: Option<Comparison>,
}

impl RunResult {
    /// Decides success: the plugin's word, else the exit code, and never success when the run
    /// did not exit by itself (`exit_code` None).
    pub fn from_parse(parsed: Result<ParseResult, impl std::fmt::Display>, exit_code: Option<i32>) -> Self {
        let exited_ok = exit_code == Some(0);
        match parsed {
            Ok(p) => RunResult {
                success: exit_code.is_some() && p.success.unwrap_or(exited_ok),
                diagnostics: p.diagnostics,
                summary: p.summary,
                failed_tests: p.failed_tests,
                stopped_early: p.stopped_early,
                parser_error: None,
                tests: p.tests,
                fingerprints: Vec::new(),
                vs: None,
            },
            Err(e) => RunResult { success: exited_ok, parser_error: Some(e.to_string()), ..RunResult::default() },
        }
    }

    /// This result, from a parser that was stopped after log line `line` for spending more than
    /// `patience` of CPU on the lines up to it: it covers those lines, and it says so. Its word on
    /// success is not trusted, since what it did not read may hold the failure: only an exit code
    /// of 0 can say success.
    pub fn parse_stopped(mut self, line: u64, patience: std::time::Duration, exit_code: Option<i32>) -> Self {
        self.parser_error = Some(format!(
            "stopped after log line {line}, having spent more than {}s of CPU on the lines before it; the \
             lines after it were not parsed",
            patience.as_secs()
        ));
        self.success &= exit_code == Some(0);
        self
    }

    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| d.severity == Severity::Error)
    }

    /// The project's warnings: the toolchain's notices about itself are counted apart.
    pub fn warnings(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| d.severity == Severity::Warning && !d.toolchain)
    }

    /// Warnings the toolchain gave about itself or the machine (`npm warn config`…).
    pub fn toolchain_warnings(&self) -> usize {
        self.diagnostics.iter().filter(|d| d.severity == Severity::Warning && d.toolchain).count()
    }

    /// The numbers `buildvise runs` shows, kept in the run's meta.
    pub fn tally(&self) -> Tally {
        Tally {
            success: self.success,
            errors: self.errors().filter(|d| d.test.is_none()).count(),
            warnings: self.warnings().count(),
            tests: self.summary.as_ref().map(|s| [s.passed, s.failed]),
            test_errors: self.summary.as_ref().and_then(|s| s.errors).unwrap_or(0),
            vs: self.vs.as_ref().map(|c| c.counts.clone()),
        }
    }

    pub fn count(&self, severity: Severity) -> usize {
        self.diagnostics.iter().filter(|d| d.severity == severity).count()
    }
}

/// What a run's answer says about the run before it: stored in its `result.json`, so that a
/// re-rendered answer says it again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Comparison {
    #[serde(flatten)]
    pub counts: Versus,
    /// This run's new problems that are diagnostics, by their place among its diagnostics.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub new_diagnostics: Vec<usize>,
    /// This run's new failed tests that no diagnostic names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub new_tests: Vec<String>,
    /// The first fixed problems, as the earlier run reported them (notes left out).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fixed_problems: Vec<OwnedProblem>,
}

impl Comparison {
    /// Whether there is anything to say: two clean runs compare to nothing.
    pub fn says_something(&self) -> bool {
        self.counts.fixed + self.counts.new + self.counts.still + self.counts.not_run > 0
    }
}

/// A problem apart from its run: in a stored comparison and in `buildvise diff --json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OwnedProblem {
    // First: a diagnostic has more fields than `test`, so it never reads as this.
    Test(TestName),
    Diagnostic(Diagnostic),
}

/// `{"test": name}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestName {
    pub test: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn success_rules() {
        let ok = ParseResult::default();
        let parsed = |p: &ParseResult| Ok::<_, String>(p.clone());
        assert!(RunResult::from_parse(parsed(&ok), Some(0)).success);
        assert!(!RunResult::from_parse(parsed(&ok), Some(1)).success);
        assert!(!RunResult::from_parse(parsed(&ok), None).success);
        let says_no = ParseResult::default().with_success(Some(false));
        assert!(!RunResult::from_parse(parsed(&says_no), Some(0)).success);
        let failed = RunResult::from_parse(Err::<ParseResult, _>("stuck on log line 7"), Some(0));
        assert!(failed.parser_error.as_deref().is_some_and(|e| e.contains("log line 7")));
    }
}
