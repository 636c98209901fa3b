//! GoogleTest's report, as a C++ project's test binary prints it (run by `make test`, or by
//! ctest with `--output-on-failure`): `[ RUN      ] suite.name`, a failed assertion's
//! `file.cc:140: Failure` and what it expected, `[  FAILED  ] suite.name (0 ms)`, and the counts
//! (`[==========] 13 tests from 1 test suite ran.`, `[  PASSED  ] 11 tests.`, `[  FAILED  ] 2
//! tests, listed below:`).
//!
//! A failed test is an error named for it, at its first failed assertion, whose lines make the
//! headline. The counts are the summary unless ctest's own (which counts test programs) is there.
//! Likewise the tests a report names: each `[       OK ]`, `[  SKIPPED ]` and `[  FAILED  ]` line
//! that ends a test with its time (`(0 ms)`; the lists at the end repeat names without one),
//! unless a runner around the program named its own, the programs its summary counts: a test
//! must not be there twice, and the passed ones named are the passed ones counted.

use super::{Found, at, int};
use buildvise_plugin_api::{
    Diagnostic, Head, Recogniser, Severity, TestCases, TestOutcome, TestSummary, Text, Wants, millis_to_us,
};
use regex::Regex;
use std::sync::LazyLock;

/// `/x/test/args-test.cc:140: Failure`.
static FAILURE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+): Failure$").expect("valid regex"));

/// `[==========] 13 tests from 1 test suite ran.`, `[  PASSED  ] 11 tests.`, `[  FAILED  ] 2
/// tests, listed below:`, `[  SKIPPED ] 1 test, listed below:`.
static COUNT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\[(?P<what>==========|  PASSED  |  FAILED  |  SKIPPED )\] (?P<n>\d+) tests?(?: from .* ran\.|\.|, listed below:)")
        .expect("valid regex")
});

/// The most lines of an assertion's message kept in the headline.
const MESSAGE_LINES: usize = 5;

/// A failed assertion being read: where, and its message's lines.
struct Failure {
    file: String,
    line: Option<u32>,
    number: u64,
    message: Vec<String>,
}

#[derive(Default)]
pub(crate) struct Gtest {
    /// The test `[ RUN ]` started.
    running: Option<String>,
    /// Its first failed assertion.
    failure: Option<Failure>,
    /// Whether the lines after an assertion's `Failure` are being read.
    in_failure: bool,
    /// total, passed, failed, skipped; None until a count was read.
    counts: Option<[u64; 4]>,
    /// The tests whose end was read, given to the run's unless a runner named its own.
    tests: TestCases,
}

impl Recogniser<Found> for Gtest {
    fn wants(&self) -> Wants {
        Wants::starts(&["[ RUN", "[       OK", "[  FAILED", "[  PASSED", "[  SKIPPED", "[=========="])
            .or_test(is_failure)
    }

    fn is_open(&self) -> bool {
        self.in_failure
    }

    fn feed(&mut self, line: &Text<'_>, found: &mut Found) -> bool {
        let text = line.text;
        if self.in_failure {
            if !text.starts_with('[') {
                if let Some(failure) = &mut self.failure
                    && failure.message.len() < MESSAGE_LINES
                    && !text.trim().is_empty()
                {
                    failure.message.push(text.trim().to_string());
                }
                return true;
            }
            self.in_failure = false;
        }
        if let Some(name) = text.strip_prefix("[ RUN      ] ") {
            self.running = Some(name.trim().to_string());
            self.failure = None;
        } else if let Some(caps) = FAILURE.captures(text) {
            if self.failure.is_none() {
                let (file, line_no) = (found.path(&caps["file"]), int(caps.name("line")));
                self.failure = Some(Failure { file, line: line_no, number: line.number, message: Vec::new() });
            }
            self.in_failure = true;
        } else if let Some(caps) = COUNT.captures(text) {
            self.count(&caps["what"], caps["n"].parse().unwrap_or(0));
        } else if let Some(rest) = text.strip_prefix("[  FAILED  ] ") {
            self.ended(rest, TestOutcome::Failed);
            self.failed(rest, line.number, found);
        } else if let Some(rest) = text.strip_prefix("[       OK ] ") {
            self.ended(rest, TestOutcome::Passed);
        } else if let Some(rest) = text.strip_prefix("[  SKIPPED ] ") {
            self.ended(rest, TestOutcome::Skipped);
        } else {
            return false;
        }
        true
    }

    fn finish(&mut self, found: &mut Found) {
        // ctest names its tests as it reads them; a summary is set by a runner (ctest, automake)
        // before this, registered after them, finishes.
        let runner = found.summary.is_some() || !found.tests.is_empty();
        if let Some([total, passed, failed, skipped]) = self.counts.take()
            && found.summary.is_none()
        {
            found.summary = Some(TestSummary::new(passed, failed, skipped, total));
        }
        let tests = std::mem::take(&mut self.tests).into_vec();
        if !runner {
            for test in tests {
                found.tests.push(&test.name, test.outcome, test.duration_us);
            }
        }
    }
}

impl Gtest {
    fn count(&mut self, what: &str, n: u64) {
        let counts = self.counts.get_or_insert([0; 4]);
        let at = match what {
            "==========" => 0,
            "  PASSED  " => 1,
            "  FAILED  " => 2,
            _ => 3,
        };
        counts[at] += n;
    }

    /// `suite.name (0 ms)` after a test's verdict: the test ended so. The lists at the end name
    /// tests again without a time, and are not read here.
    fn ended(&mut self, rest: &str, outcome: TestOutcome) {
        let Some((named, took)) = rest.rsplit_once(" (") else { return };
        let Some(millis) = took.strip_suffix(" ms)") else { return };
        // `suite/0.name/1, where GetParam() = 4`: the name is before the parameter.
        let name = named.split([' ', ',']).next().unwrap_or(named);
        if !name.is_empty() {
            self.tests.push(name, outcome, millis_to_us(millis));
        }
    }

    /// `[  FAILED  ] suite.name (0 ms)` as the test ends, or `[  FAILED  ] suite.name` in the list
    /// at the end (`, where GetParam() = 4` after a parameterised one's name).
    fn failed(&mut self, rest: &str, number: u64, found: &mut Found) {
        let name = rest.split([' ', ',']).next().unwrap_or(rest);
        if name.is_empty() || found.failed_tests.iter().any(|t| t == name) {
            return;
        }
        found.failed_tests.push(name.to_string());
        let failure = self.failure.take().filter(|_| self.running.as_deref() == Some(name));
        let d = match failure {
            Some(failure) => {
                let message = failure.message.join(" ");
                at(Severity::Error, &message, failure.file, failure.line, None, failure.number)
            }
            None => Diagnostic::error("failed").with_log_range(number, number),
        };
        found.push(d.with_test(name));
    }
}

/// `file.cc:140: Failure`.
fn is_failure(head: &Head<'_>) -> bool {
    head.bytes.ends_with(b": Failure") || head.bytes.ends_with(b": Failure\r")
}

#[cfg(test)]
mod tests {
    use crate::parse::testing::{brief, parse};
    use buildvise_plugin_api::{TestCase, TestOutcome, TestSummary};

    const FORMATS: &[&str] = &["make", "ctest", "gtest", "gcc", "fallback"];

    /// fmt's args-test (GoogleTest 1.x as fmt bundles it), built by g++ 12.2.0, with
    /// dynamic_format_arg_store::clear no longer clearing its arguments.
    const ARGS_TEST: &str = "\
[ RUN      ] args_test.named_custom_format
[       OK ] args_test.named_custom_format (0 ms)
[ RUN      ] args_test.clear
/home/dev/src/demo/test/args-test.cc:140: Failure
Expected equality of these values:
  \"44\"
  result
    Which is: \"42\"
[  FAILED  ] args_test.clear (0 ms)
[ RUN      ] args_test.size
/home/dev/src/demo/test/args-test.cc:201: Failure
Expected equality of these values:
  store.size()
    Which is: 2
  0
[  FAILED  ] args_test.size (0 ms)
[----------] 13 tests from args_test (0 ms total)

[----------] Global test environment tear-down
[==========] 13 tests from 1 test suite ran. (0 ms total)
[  PASSED  ] 11 tests.
[  FAILED  ] 2 tests, listed below:
[  FAILED  ] args_test.clear
[  FAILED  ] args_test.size

 2 FAILED TESTS
";

    #[test]
    fn a_failed_test_is_an_error_at_its_first_failed_assertion() {
        let result = parse(FORMATS, ARGS_TEST, 1);
        assert_eq!(
            brief(&result),
            [
                "error test/args-test.cc:140 Expected equality of these values: \"44\" result Which is: \"42\"",
                "error test/args-test.cc:201 Expected equality of these values: store.size() Which is: 2 0",
            ]
        );
        assert_eq!(result.failed_tests, ["args_test.clear", "args_test.size"]);
        assert_eq!(result.summary, Some(TestSummary::new(11, 2, 0, 13)));
    }

    #[test]
    fn under_ctest_the_summary_is_ctest_s() {
        let log = format!(
            "1/1 Test #1: args-test ........................***Failed    0.01 sec\n{ARGS_TEST}\n0% tests passed, 1 tests failed out of 1\n"
        );
        let result = parse(FORMATS, &log, 8);
        assert_eq!(result.failed_tests, ["args-test", "args_test.clear", "args_test.size"]);
        assert_eq!(result.summary, Some(TestSummary::new(0, 1, 0, 1)));
        assert_eq!(
            result.tests,
            [TestCase::new("args-test", TestOutcome::Failed, Some(10_000))],
            "ctest's programs are the tests named, as they are the ones counted"
        );
    }

    /// The names and outcomes a run named, in order.
    fn named(log: &str, exit_code: i32) -> Vec<(String, TestOutcome)> {
        parse(FORMATS, log, exit_code).tests.into_iter().map(|t| (t.name, t.outcome)).collect()
    }

    #[test]
    fn alone_every_test_that_ended_is_named_once() {
        let result = parse(FORMATS, ARGS_TEST, 1);
        assert_eq!(result.tests[0], TestCase::new("args_test.named_custom_format", TestOutcome::Passed, Some(0)));
        assert_eq!(result.tests.len(), 3, "the list at the end names no test again");
        // GoogleTest 1.18 (google/googletest), its own gtest_skip_test run directly.
        let skipped = "\
[ RUN      ] SkipTest.DoesSkip
/home/dev/src/demo/googletest/test/gtest_skip_test.cc:38: Skipped
skipping single test

[  SKIPPED ] SkipTest.DoesSkip (0 ms)
[----------] 1 test from SkipTest (0 ms total)

[==========] 1 test from 1 test suite ran. (0 ms total)
[  PASSED  ] 0 tests.
[  SKIPPED ] 1 test, listed below:
[  SKIPPED ] SkipTest.DoesSkip
";
        assert_eq!(named(skipped, 0), [("SkipTest.DoesSkip".to_string(), TestOutcome::Skipped)]);
        // A parameterised test built against it: its failure names its parameter after the name.
        let parameterised = "\
[ RUN      ] Small/Even.IsEven/0
[       OK ] Small/Even.IsEven/0 (0 ms)
[ RUN      ] Small/Even.IsEven/1
p.cc:3: Failure
Expected equality of these values:
  0
  GetParam() % 2
    Which is: 1

[  FAILED  ] Small/Even.IsEven/1, where GetParam() = 3 (0 ms)
[----------] 2 tests from Small/Even (0 ms total)

[==========] 2 tests from 1 test suite ran. (0 ms total)
[  PASSED  ] 1 test.
[  FAILED  ] 1 test, listed below:
[  FAILED  ] Small/Even.IsEven/1, where GetParam() = 3

 1 FAILED TEST
";
        let result = parse(FORMATS, parameterised, 1);
        let names: Vec<(&str, TestOutcome)> = result.tests.iter().map(|t| (t.name.as_str(), t.outcome)).collect();
        assert_eq!(names, [("Small/Even.IsEven/0", TestOutcome::Passed), ("Small/Even.IsEven/1", TestOutcome::Failed)]);
        assert_eq!(result.failed_tests, ["Small/Even.IsEven/1"]);
    }
}
