//! Every test VSTest names on the console, for the JUnit report of a saved log: its result lines,
//! `  Passed Name [12 ms]`, `  Skipped Name [< 1 ms]` and `  Failed Name [4 ms]` (two blanks).
//! Passed ones are printed at `--logger "console;verbosity=normal"` and above; failed and skipped
//! ones at every verbosity. On `exec` the TRX report names them all, and wins.
//!
//! The line is only noted: the failure recogniser after this one still reads a failed test's block.

use super::Found;
use buildvise_plugin_api::{Recogniser, TestOutcome, Text, Wants, millis_to_us};

pub struct Results;

impl Recogniser<Found> for Results {
    fn wants(&self) -> Wants {
        Wants::starts(&["  Passed ", "  Skipped ", "  Failed "])
    }

    fn feed(&mut self, line: &Text<'_>, found: &mut Found) -> bool {
        if let Some((name, outcome, duration_us)) = result(line.text) {
            found.console_tests.push(name, outcome, duration_us);
        }
        false
    }
}

/// The test a result line names, its outcome, and its time in µs when printed in a form read
/// here (`12 ms`; `< 1 ms` as 0).
fn result(text: &str) -> Option<(&str, TestOutcome, Option<u64>)> {
    let (outcome, rest) =
        [("  Passed ", TestOutcome::Passed), ("  Skipped ", TestOutcome::Skipped), ("  Failed ", TestOutcome::Failed)]
            .into_iter()
            .find_map(|(prefix, outcome)| text.strip_prefix(prefix).map(|rest| (outcome, rest)))?;
    let body = rest.trim_end().strip_suffix(']')?;
    let (name, duration) = body.rsplit_once(" [")?;
    let name = name.trim_end();
    if name.is_empty() || name.starts_with(' ') || !duration.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    let us = match duration {
        "< 1 ms" => Some(0),
        _ => duration.strip_suffix(" ms").and_then(millis_to_us),
    };
    Some((name, outcome, us))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_lines_as_vstest_prints_them() {
        // Lines of captured logs: xunit on Windows at normal verbosity, and the NUnit adapter.
        assert_eq!(
            result("  Passed Wintap.Tests.RegistryCaptureEnablerTests.AcquireHandleRejectsNullFieldValue [12 ms]"),
            Some((
                "Wintap.Tests.RegistryCaptureEnablerTests.AcquireHandleRejectsNullFieldValue",
                TestOutcome::Passed,
                Some(12_000)
            ))
        );
        assert_eq!(
            result("  Passed Wintap.Tests.RegistryCaptureEnablerTests.NativeStructLayoutsMatchWindowsX64Abi [< 1 ms]"),
            Some((
                "Wintap.Tests.RegistryCaptureEnablerTests.NativeStructLayoutsMatchWindowsX64Abi",
                TestOutcome::Passed,
                Some(0)
            ))
        );
        assert_eq!(
            result("  Failed Parse(\"91,0\") [< 1 ms]"),
            Some(("Parse(\"91,0\")", TestOutcome::Failed, Some(0)))
        );
        assert_eq!(result("  Skipped Shop.Tests.CartTests.Later [1 ms]").map(|r| r.1), Some(TestOutcome::Skipped));
        // A duration in a form not seen: the test is named, untimed.
        assert_eq!(result("  Passed T.M [1 m 2 s]"), Some(("T.M", TestOutcome::Passed, None)));
    }

    #[test]
    fn other_lines_that_start_alike_are_not_results() {
        assert_eq!(result("  Failed to restore /p/App.csproj (in 2.1 sec)."), None);
        assert_eq!(result("   Passed X [1 ms]"), None);
        assert_eq!(result("  Passed [1 ms]"), None);
        assert_eq!(result("  Passed Name [no time]"), None);
    }
}
