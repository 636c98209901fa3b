//! ctest's report, as `ctest`, `make test` and `cmake --build … --target test` print it: a line
//! per test (`14/22 Test #14: misc_tests ....***Failed    0.01 sec`), the count (`91% tests
//! passed, 2 tests failed out of 22`), then the lists of the tests that failed and of those that
//! did not run (a tab, then `14 - misc_tests (Failed)`).
//!
//! Each failed test is an error named for it; the lists name them again and add only what a
//! quiet run (`-Q`) left out. `Errors while running CTest` repeats that some failed.
//!
//! ctest's count leaves disabled tests out and counts a test it could not start (`***Not Run`: its
//! program or a required file missing) as failed, and one skipped by its return code
//! (`***Skipped`) as passed: the summary reads the result lines and lists to say which is which.
//! Every result line names its test, with its time, for reports.

use super::Found;
use buildvise_plugin_api::{Diagnostic, Head, Recogniser, TestOutcome, TestSummary, Text, Wants, seconds_to_us};
use regex::Regex;
use std::sync::LazyLock;

/// ` 2/22 Test  #2: parse_examples ......   Passed    0.00 sec`, `…***Failed  0.01 sec`,
/// `…***Exception: SegFault  0.01 sec`.
static RESULT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*\d+/\d+ Test\s+#\d+: (?P<name>\S+) \.*\s*(?P<verdict>.*?)\s+(?P<took>[\d.]+) sec$")
        .expect("valid regex")
});

/// `91% tests passed, 2 tests failed out of 22`.
static COUNT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\d+% tests passed, (?P<failed>\d+) tests? failed out of (?P<total>\d+)$").expect("valid regex")
});

/// `14 - misc_tests (Failed)` in a list, after a tab.
static LISTED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s+\d+ - (?P<name>\S+) \((?P<why>[^)]*)\)$").expect("valid regex"));

/// Which list is being read.
#[derive(Clone, Copy, PartialEq)]
enum List {
    Failed,
    NotRun,
}

/// How a test that did not pass or fail ended, as its result line or a list says.
#[derive(Clone, Copy, PartialEq)]
enum NotRun {
    /// `***Skipped`: its return code said so; ctest counts it in its total.
    Skipped,
    /// `***Not Run (Disabled)`: its `DISABLED` property; ctest leaves it out of its total.
    Disabled,
}

#[derive(Default)]
pub(crate) struct Ctest {
    list: Option<List>,
    not_run: Vec<(String, NotRun)>,
    count: Option<(u64, u64)>,
}

impl Recogniser<Found> for Ctest {
    fn wants(&self) -> Wants {
        Wants::starts(&["The following tests ", "Errors while running CTest"]).or_test(is_result_or_count)
    }

    fn is_open(&self) -> bool {
        self.list.is_some()
    }

    fn feed(&mut self, line: &Text<'_>, found: &mut Found) -> bool {
        let (text, number) = (line.text, line.number);
        if let Some(list) = self.list {
            if let Some(caps) = LISTED.captures(text) {
                match list {
                    List::Failed => fail(&caps["name"], &caps["why"], number, found),
                    List::NotRun => self.skip(&caps["name"], not_run(&caps["why"])),
                }
                return true;
            }
            self.list = None;
        }
        if text.starts_with("The following tests FAILED:") {
            self.list = Some(List::Failed);
        } else if text.starts_with("The following tests did not run:") {
            self.list = Some(List::NotRun);
        } else if let Some(caps) = RESULT.captures(text) {
            self.result(&caps["name"], caps["verdict"].trim_start_matches('*'), &caps["took"], number, found);
        } else if let Some(caps) = COUNT.captures(text) {
            self.count = Some((caps["failed"].parse().unwrap_or(0), caps["total"].parse().unwrap_or(0)));
        } else if !text.starts_with("Errors while running CTest") {
            return false;
        }
        true
    }

    fn finish(&mut self, found: &mut Found) {
        self.list = None;
        if let Some((failed, counted)) = self.count.take() {
            let how_many = |how: NotRun| self.not_run.iter().filter(|(_, h)| *h == how).count() as u64;
            let (skipped, disabled) = (how_many(NotRun::Skipped), how_many(NotRun::Disabled));
            let passed = counted.saturating_sub(failed + skipped);
            found.summary = Some(TestSummary::new(passed, failed, skipped + disabled, counted + disabled));
        }
    }
}

impl Ctest {
    /// A result line: `name`'s verdict (`Passed`, `Failed`, `Not Run (Disabled)`, `Exception:
    /// SegFault`) after `***`, and its time in seconds.
    fn result(&mut self, name: &str, verdict: &str, took: &str, number: u64, found: &mut Found) {
        let outcome = if verdict == "Passed" {
            TestOutcome::Passed
        } else if verdict == "Skipped" || verdict.contains("Disabled") {
            self.skip(name, not_run(verdict));
            TestOutcome::Skipped
        } else {
            fail(name, verdict, number, found);
            TestOutcome::Failed
        };
        found.tests.push(name, outcome, seconds_to_us(took));
    }

    fn skip(&mut self, name: &str, how: NotRun) {
        if !self.not_run.iter().any(|(s, _)| s == name) {
            self.not_run.push((name.to_string(), how));
        }
    }
}

/// Why a test did not run, from its verdict or its entry in the list (`Disabled`, `Skipped`).
fn not_run(why: &str) -> NotRun {
    if why.contains("Disabled") { NotRun::Disabled } else { NotRun::Skipped }
}

/// Test `name` failed (`Failed`, `Exception: SegFault`, `Timeout`); once, whichever line names
/// it first.
fn fail(name: &str, why: &str, number: u64, found: &mut Found) {
    if found.failed_tests.iter().any(|t| t == name) {
        return;
    }
    found.failed_tests.push(name.to_string());
    // The answer shows the test's name beside the message: the message is ctest's verdict alone.
    found.push(Diagnostic::error(why).with_test(name).with_log_range(number, number));
}

/// A test's result line or the count: ` Test ` then `#`, or `tests passed, `.
fn is_result_or_count(head: &Head<'_>) -> bool {
    head.contains(b" tests passed, ") || (head.contains(b" Test ") && head.contains(b": "))
}

#[cfg(test)]
mod tests {
    use crate::parse::testing::{brief, parse};
    use buildvise_plugin_api::{TestCase, TestOutcome, TestSummary};

    const FORMATS: &[&str] = &["make", "ctest", "gcc", "fallback"];

    #[test]
    fn reads_failed_and_skipped_tests_and_the_count() {
        // ctest 3.25.1 under `cmake --build build --target test` (gmake).
        let log = "\
Test project /home/dev/src/demo/build
      Start  1: cJSON_test
 1/4 Test  #1: cJSON_test .......................   Passed    0.00 sec
      Start  2: misc_tests
 2/4 Test  #2: misc_tests .......................***Failed    0.01 sec
 3/4 Test  #3: crashes ..........................***Exception: SegFault  0.01 sec
 4/4 Test  #4: later ............................***Skipped   0.00 sec

50% tests passed, 2 tests failed out of 4

Total Test time (real) =   0.09 sec

The following tests did not run:
	  4 - later (Skipped)

The following tests FAILED:
	  2 - misc_tests (Failed)
	  3 - crashes (SEGFAULT)
Errors while running CTest
gmake: *** [Makefile:71: test] Error 8
";
        let result = parse(FORMATS, log, 2);
        assert_eq!(brief(&result), ["error - Failed", "error - Exception: SegFault"]);
        assert_eq!(result.failed_tests, ["misc_tests", "crashes"]);
        assert_eq!(result.summary, Some(TestSummary::new(1, 2, 1, 4)));
    }

    #[test]
    fn a_quiet_run_s_failures_come_from_the_list() {
        let log = "\
0% tests passed, 1 tests failed out of 1

The following tests FAILED:
	  1 - only (Failed)
";
        let result = parse(FORMATS, log, 8);
        assert_eq!(result.failed_tests, ["only"]);
        assert_eq!(result.summary, Some(TestSummary::new(0, 1, 0, 1)));
    }

    #[test]
    fn not_run_is_a_failure_and_disabled_is_outside_ctest_s_count() {
        // ctest 3.25.1 on tests of `true` and `false`: one disabled, one skipped by
        // SKIP_RETURN_CODE, one missing a REQUIRED_FILES file, one whose program is missing.
        let log = "\
Test project /home/dev/src/demo/b
    Start 1: ok
1/6 Test #1: ok ...............................   Passed    0.00 sec
    Start 2: bad
2/6 Test #2: bad ..............................***Failed    0.01 sec
    Start 3: off
3/6 Test #3: off ..............................***Not Run (Disabled)   0.00 sec
    Start 4: skipper
4/6 Test #4: skipper ..........................***Skipped   0.00 sec
    Start 5: needs
Unable to find required file: /nonexistent/file
5/6 Test #5: needs ............................***Not Run   0.00 sec
    Start 6: missing
Could not find executable nonexistent_prog_xyz
Looked in the following places:
nonexistent_prog_xyz
Unable to find executable: nonexistent_prog_xyz
6/6 Test #6: missing ..........................***Not Run   0.00 sec

40% tests passed, 3 tests failed out of 5

Total Test time (real) =   0.02 sec

The following tests did not run:
\t  3 - off (Disabled)
\t  4 - skipper (Skipped)

The following tests FAILED:
\t  2 - bad (Failed)
\t  5 - needs (Not Run)
\t  6 - missing (Not Run)
Errors while running CTest
";
        let result = parse(FORMATS, log, 8);
        assert_eq!(result.failed_tests, ["bad", "needs", "missing"]);
        assert_eq!(result.summary, Some(TestSummary::new(1, 3, 2, 6)));
        let named: Vec<(&str, TestOutcome)> = result.tests.iter().map(|t| (t.name.as_str(), t.outcome)).collect();
        let (passed, failed, skipped) = (TestOutcome::Passed, TestOutcome::Failed, TestOutcome::Skipped);
        assert_eq!(
            named,
            [
                ("ok", passed),
                ("bad", failed),
                ("off", skipped),
                ("skipper", skipped),
                ("needs", failed),
                ("missing", failed)
            ]
        );
        assert_eq!(result.tests[1], TestCase::new("bad", failed, Some(10_000)));
    }
}
