//! The report of automake's test harness, as `make check` prints it: a line per test (`FAIL:
//! test-version`; a TAP test's cases as `FAIL: tests/x.test 2 - adds`), then the counts
//! (`# TOTAL: 2`, `# PASS:  1`, …). What a failing test printed went to its `.log` file, not
//! here; `See tests/test-suite.log` says where.
//!
//! FAIL, ERROR (the test could not run as a test) and XPASS (it passed where it was expected to
//! fail, which the harness counts as a failure) are failed tests, each an error named for it.

use super::Found;
use buildvise_plugin_api::{Diagnostic, Recogniser, TestSummary, Text, Wants};
use regex::Regex;
use std::sync::LazyLock;

/// `FAIL: test-version`, `PASS: tests/x.test 1 - parses`: the name is one word, then a TAP case.
static RESULT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<verdict>PASS|FAIL|XFAIL|XPASS|SKIP|ERROR): (?P<test>\S+(?: \d+(?: .*)?)?)$").expect("valid regex")
});

/// `# TOTAL: 2`, `# PASS:  1`.
static COUNT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^# (?P<what>TOTAL|PASS|SKIP|XFAIL|FAIL|XPASS|ERROR): +(?P<n>\d+)$").expect("valid regex")
});

#[derive(Default)]
pub(crate) struct Automake {
    /// The counts, in the order of `COUNT`'s names; None until `# TOTAL:` was read.
    total: Option<u64>,
    counts: [u64; 6],
}

impl Recogniser<Found> for Automake {
    fn wants(&self) -> Wants {
        Wants::starts(&["PASS: ", "FAIL: ", "XFAIL: ", "XPASS: ", "SKIP: ", "ERROR: ", "# "])
    }

    fn feed(&mut self, line: &Text<'_>, found: &mut Found) -> bool {
        if let Some(caps) = RESULT.captures(line.text) {
            if ["FAIL", "ERROR", "XPASS"].contains(&&caps["verdict"]) {
                fail(caps["test"].trim(), &caps["verdict"], line.number, found);
            }
            return true;
        }
        let Some(caps) = COUNT.captures(line.text) else { return false };
        let n = caps["n"].parse().unwrap_or(0);
        match &caps["what"] {
            "TOTAL" => self.total = Some(n),
            what => {
                let at = ["PASS", "SKIP", "XFAIL", "FAIL", "XPASS", "ERROR"].iter().position(|w| *w == what);
                if let Some(at) = at {
                    self.counts[at] = n;
                }
            }
        }
        true
    }

    fn finish(&mut self, found: &mut Found) {
        let Some(total) = self.total.take() else { return };
        let [pass, skip, xfail, fail, xpass, error] = self.counts;
        let mut summary = TestSummary::new(pass, fail + xpass + error, skip, total);
        summary.xfailed = (xfail > 0).then_some(xfail);
        found.summary = Some(summary);
    }
}

/// Test `name` failed; once, however often the harness names it.
fn fail(name: &str, verdict: &str, number: u64, found: &mut Found) {
    if found.failed_tests.iter().any(|t| t == name) {
        return;
    }
    found.failed_tests.push(name.to_string());
    let message = match verdict {
        "ERROR" => "could not run as a test (ERROR)",
        "XPASS" => "passed where it was expected to fail (XPASS)",
        _ => "failed",
    };
    found.push(Diagnostic::error(message).with_test(name).with_log_range(number, number));
}

#[cfg(test)]
mod tests {
    use crate::parse::testing::{brief, parse};
    use buildvise_plugin_api::TestSummary;

    const FORMATS: &[&str] = &["make", "automake", "gcc", "fallback"];

    #[test]
    fn reads_failed_tests_and_the_counts() {
        // automake 1.16.5's harness under GNU Make 4.3, libyaml's `make check`.
        let log = "\
make[3]: Entering directory '/home/dev/src/demo/tests'
../config/test-driver: line 112: 26982 Aborted                 \"$@\" >> \"$log_file\" 2>&1
FAIL: test-version
PASS: test-reader
ERROR: tests/broken.test
XFAIL: tests/known.test 2 - old bug
============================================================================
Testsuite summary for yaml 0.2.5
============================================================================
# TOTAL: 4
# PASS:  1
# SKIP:  0
# XFAIL: 1
# FAIL:  1
# XPASS: 0
# ERROR: 1
============================================================================
See tests/test-suite.log
make[3]: *** [Makefile:804: test-suite.log] Error 1
";
        let result = parse(FORMATS, log, 2);
        assert_eq!(brief(&result), ["error - failed", "error - could not run as a test (ERROR)"]);
        assert_eq!(result.failed_tests, ["test-version", "tests/broken.test"]);
        let mut summary = TestSummary::new(1, 2, 0, 4);
        summary.xfailed = Some(1);
        assert_eq!(result.summary, Some(summary));
    }

    #[test]
    fn a_line_that_only_starts_like_a_result_is_not_one() {
        let log = "ERROR: 3 files failed\n# a comment: 2\n";
        assert!(parse(FORMATS, log, 1).failed_tests.is_empty());
    }
}
