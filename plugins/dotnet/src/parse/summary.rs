//! Test-run totals as each runner prints them, summed over test assemblies:
//!
//! - VSTest: `Failed!  - Failed: 1, Passed: 4, Skipped: 0, Total: 5, Duration: … - X.dll (net8.0)`
//!   per assembly, or with `console;verbosity=normal` the block `Total tests: N` / `Passed: N` /
//!   … / `Total time:` (`Total tests: Unknown` after a test host crash);
//! - the Terminal Logger: `Test summary: total: 5, failed: 1, succeeded: 4, skipped: 0, …`;
//! - Microsoft.Testing.Platform: `Test run summary: Failed!` then `total: N`, `failed: N`,
//!   `succeeded: N`, `skipped: N` lines;
//! - nunit-console 2: `Tests run: 7, Errors: 1, Failures: 3, Inconclusive: 0, …` and
//!   `Not run: 1, Invalid: 0, Ignored: 1, Skipped: 0`; nunit-console 3: `Test Count: 8, Passed: 3,
//!   Failed: 4, Warnings: 0, Inconclusive: 0, Skipped: 1`.

use super::Found;
use super::text::count_after;
use buildvise_plugin_api::{Recogniser, Text, Wants};

/// Lines MTP's summary may print (one per test assembly) before its counts.
const MAX_MTP_PREAMBLE: u32 = 256;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub passed: u64,
    pub failed: u64,
    pub skipped: u64,
    pub total: u64,
}

impl Counts {
    /// Adds `more` to the totals in `slot`. Saturating: a log can print any number.
    pub fn add(slot: &mut Option<Counts>, more: Counts) {
        let c = slot.get_or_insert_with(Counts::default);
        c.passed = c.passed.saturating_add(more.passed);
        c.failed = c.failed.saturating_add(more.failed);
        c.skipped = c.skipped.saturating_add(more.skipped);
        c.total = c.total.saturating_add(more.total);
    }
}

/// VSTest's long summary being read.
#[derive(Debug, Default)]
struct LongForm {
    total: Option<u64>,
    counts: Counts,
}

/// NUnit 2's two summary lines, which must be combined.
#[derive(Debug, Default, Clone, Copy)]
struct NUnit2 {
    run: u64,
    errors: u64,
    failures: u64,
    inconclusive: u64,
    not_run: u64,
    invalid: u64,
}

#[derive(Debug, Default)]
pub struct Summaries {
    vstest: Option<Counts>,
    vstest_long: Option<Counts>,
    terminal_logger: Option<Counts>,
    mtp: Option<Counts>,
    nunit3: Option<Counts>,
    nunit2: Option<NUnit2>,
    long_form: Option<LongForm>,
    /// Inside MTP's summary block: the counts so far, and how many lines came without one.
    mtp_block: Option<(Counts, Option<u32>)>,
}

impl Summaries {
    /// Inside a block of summary lines (VSTest's long form, MTP's counts), which takes lines
    /// that no prefix announces.
    pub fn in_block(&self) -> bool {
        self.long_form.is_some() || self.mtp_block.is_some()
    }

    /// Reads `trimmed` if it belongs to a summary; returns whether it did.
    fn read(&mut self, trimmed: &str) -> bool {
        if self.long_form.is_some() {
            if self.feed_long_form(trimmed) {
                return true;
            }
        } else if self.mtp_block.is_some() && self.feed_mtp_block(trimmed) {
            return true;
        }
        if ["Failed!", "Passed!", "Skipped!", "Aborted!"].iter().any(|p| trimmed.starts_with(p))
            && let Some(total) = count_after(trimmed, "Total:")
        {
            let counts = Counts {
                passed: count_after(trimmed, "Passed:").unwrap_or(0),
                failed: count_after(trimmed, "Failed:").unwrap_or(0),
                skipped: count_after(trimmed, "Skipped:").unwrap_or(0),
                total,
            };
            Counts::add(&mut self.vstest, counts);
            return true;
        }
        if let Some(rest) = trimmed.strip_prefix("Total tests:") {
            self.long_form = Some(LongForm { total: rest.trim().parse().ok(), counts: Counts::default() });
            return true;
        }
        if trimmed.starts_with("Test summary:") {
            Counts::add(&mut self.terminal_logger, lowercase_counts(trimmed));
            return true;
        }
        if trimmed.starts_with("Test run summary:") {
            let counts = lowercase_counts(trimmed);
            self.mtp_block = Some((counts, (counts == Counts::default()).then_some(0)));
            return true;
        }
        if trimmed.starts_with("Tests run:") {
            let n = self.nunit2.get_or_insert_with(NUnit2::default);
            let count = |label| count_after(trimmed, label).unwrap_or(0);
            n.run = n.run.saturating_add(count("Tests run:"));
            n.errors = n.errors.saturating_add(count("Errors:"));
            n.failures = n.failures.saturating_add(count("Failures:"));
            n.inconclusive = n.inconclusive.saturating_add(count("Inconclusive:"));
            return true;
        }
        if trimmed.starts_with("Not run:")
            && let Some(n) = &mut self.nunit2
        {
            n.not_run = n.not_run.saturating_add(count_after(trimmed, "Not run:").unwrap_or(0));
            n.invalid = n.invalid.saturating_add(count_after(trimmed, "Invalid:").unwrap_or(0));
            return true;
        }
        if trimmed.starts_with("Test Count:") {
            let counts = Counts {
                passed: count_after(trimmed, "Passed:").unwrap_or(0),
                failed: count_after(trimmed, "Failed:").unwrap_or(0),
                skipped: count_after(trimmed, "Skipped:").unwrap_or(0),
                total: count_after(trimmed, "Test Count:").unwrap_or(0),
            };
            Counts::add(&mut self.nunit3, counts);
            return true;
        }
        false
    }

    /// Returns true while the line belongs to the long form.
    fn feed_long_form(&mut self, trimmed: &str) -> bool {
        let Some(form) = &mut self.long_form else {
            return false;
        };
        let slot = if trimmed.starts_with("Passed:") {
            Some(&mut form.counts.passed)
        } else if trimmed.starts_with("Failed:") {
            Some(&mut form.counts.failed)
        } else if trimmed.starts_with("Skipped:") {
            Some(&mut form.counts.skipped)
        } else {
            None
        };
        if let Some(slot) = slot {
            let n = trimmed.split_once(':').and_then(|(_, n)| n.trim().parse::<u64>().ok()).unwrap_or(0);
            *slot = slot.saturating_add(n);
            return true;
        }
        self.close_long_form();
        trimmed.starts_with("Total time:")
    }

    fn close_long_form(&mut self) {
        if let Some(form) = self.long_form.take() {
            let mut counts = form.counts;
            // `Total tests: Unknown` after a crash: the counts that were printed are all there is.
            let printed = counts.passed.saturating_add(counts.failed).saturating_add(counts.skipped);
            counts.total = form.total.unwrap_or(printed);
            Counts::add(&mut self.vstest_long, counts);
        }
    }

    /// Returns true while the line belongs to MTP's summary block.
    fn feed_mtp_block(&mut self, trimmed: &str) -> bool {
        let Some((counts, waiting)) = &mut self.mtp_block else {
            return false;
        };
        let key = trimmed.split_once(':').map(|(k, _)| k);
        let slot = match key {
            Some("total") => Some(&mut counts.total),
            Some("failed") => Some(&mut counts.failed),
            Some("succeeded") => Some(&mut counts.passed),
            Some("skipped") => Some(&mut counts.skipped),
            Some("duration" | "error") => None,
            // Per-assembly lines may come before the counts, but not forever.
            _ if trimmed.is_empty() || waiting.is_some_and(|n| n < MAX_MTP_PREAMBLE) => {
                if let Some(n) = waiting {
                    *n += 1;
                }
                return true;
            }
            _ => {
                self.close_mtp_block();
                return false;
            }
        };
        if let Some(slot) = slot {
            *slot = count_after(trimmed, ":").unwrap_or(0);
        }
        *waiting = None;
        true
    }

    fn close_mtp_block(&mut self) {
        if let Some((counts, _)) = self.mtp_block.take() {
            Counts::add(&mut self.mtp, counts);
        }
    }

    /// The totals of the first format that printed any, after closing open blocks.
    pub fn best(&mut self) -> Option<Counts> {
        self.close_long_form();
        self.close_mtp_block();
        let nunit2 = self.nunit2.map(|n| {
            let failed = n.errors.saturating_add(n.failures).saturating_add(n.invalid);
            Counts {
                passed: n.run.saturating_sub(n.errors.saturating_add(n.failures).saturating_add(n.inconclusive)),
                failed,
                skipped: n.not_run.saturating_sub(n.invalid),
                total: n.run.saturating_add(n.not_run),
            }
        });
        self.vstest.or(self.vstest_long).or(self.terminal_logger).or(self.mtp).or(self.nunit3).or(nunit2)
    }
}

/// The runners' totals, each line read where it is printed; the best of them is the run's at the
/// end.
impl Recogniser<Found> for Summaries {
    fn wants(&self) -> Wants {
        Wants::starts_unindented(&[
            "Failed!",
            "Passed!",
            "Skipped!",
            "Aborted!",
            "Total tests:",
            "Test summary:",
            "Test run summary:",
            "Tests run:",
            "Not run:",
            "Test Count:",
        ])
    }

    fn is_open(&self) -> bool {
        self.in_block()
    }

    fn feed(&mut self, line: &Text<'_>, found: &mut Found) -> bool {
        if super::is_skipped(line.trimmed.as_bytes()) || !self.read(line.trimmed) {
            return false;
        }
        found.last = None;
        true
    }

    fn finish(&mut self, found: &mut Found) {
        found.counts = self.best();
    }
}

/// `total: 5, failed: 1, succeeded: 4, skipped: 0` in any layout.
fn lowercase_counts(text: &str) -> Counts {
    Counts {
        passed: count_after(text, "succeeded:").unwrap_or(0),
        failed: count_after(text, "failed:").unwrap_or(0),
        skipped: count_after(text, "skipped:").unwrap_or(0),
        total: count_after(text, "total:").unwrap_or(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(lines: &[&str]) -> Option<Counts> {
        let mut s = Summaries::default();
        for line in lines {
            s.read(line.trim());
        }
        s.best()
    }

    fn counts(passed: u64, failed: u64, skipped: u64, total: u64) -> Option<Counts> {
        Some(Counts { passed, failed, skipped, total })
    }

    #[test]
    fn vstest_one_liners_are_summed_over_assemblies() {
        let got = read(&[
            "Failed!  - Failed:     2, Passed:     9, Skipped:     1, Total:    12, Duration: 233 ms - A.Tests.dll (net8.0)",
            "Passed!  - Failed:     0, Passed:    37, Skipped:     0, Total:    37, Duration: 140 ms - B.Tests.dll (net8.0)",
        ]);
        assert_eq!(got, counts(46, 2, 1, 49));
    }

    #[test]
    fn vstest_long_form_and_unknown_total() {
        assert_eq!(
            read(&["Test Run Successful.", "Total tests: 11", "     Passed: 11", " Total time: 0.5875 Seconds"]),
            counts(11, 0, 0, 11)
        );
        assert_eq!(
            read(&[
                "Test Run Aborted.",
                "Total tests: Unknown",
                "     Passed: 3",
                "     Failed: 1",
                " Total time: 1 Seconds"
            ]),
            counts(3, 1, 0, 4)
        );
    }

    #[test]
    fn terminal_logger_and_mtp() {
        assert_eq!(
            read(&["Test summary: total: 5, failed: 2, succeeded: 3, skipped: 0, duration: 1.6s"]),
            counts(3, 2, 0, 5)
        );
        assert_eq!(
            read(&[
                "Test run summary: Failed!",
                "  /r/bin/A.Tests.dll (net10.0|x64) failed",
                "",
                "  total: 5",
                "  failed: 1",
                "  succeeded: 3",
                "  skipped: 1",
                "  duration: 705ms",
                "Exit code: 2",
            ]),
            counts(3, 1, 1, 5)
        );
    }

    #[test]
    fn nunit_console_two_and_three() {
        assert_eq!(
            read(&[
                "Tests run: 7, Errors: 1, Failures: 3, Inconclusive: 0, Time: 0.14 seconds",
                "  Not run: 1, Invalid: 0, Ignored: 1, Skipped: 0",
            ]),
            counts(3, 4, 1, 8)
        );
        assert_eq!(
            read(&["  Test Count: 8, Passed: 3, Failed: 4, Warnings: 0, Inconclusive: 0, Skipped: 1"]),
            counts(3, 4, 1, 8)
        );
    }

    #[test]
    fn mtp_summary_without_counts_does_not_swallow_the_rest() {
        let mut s = Summaries::default();
        assert!(s.read("Test run summary: Zero tests ran"));
        for _ in 0..MAX_MTP_PREAMBLE {
            assert!(s.read("/r/bin/A.Tests.dll (net10.0|x64) zero tests ran"));
        }
        assert!(!s.read("Build succeeded."));
        assert!(s.read("Test summary: total: 1, failed: 0, succeeded: 1, skipped: 0"));
    }

    #[test]
    fn nothing_printed_means_none() {
        assert_eq!(read(&["Build succeeded.", "Total time is not a summary"]), None);
    }
}
