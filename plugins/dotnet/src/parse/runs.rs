//! The test runners' lines that say which tests ran, not how they failed: xUnit's `[FAIL]` lines
//! (used only for tests no runner line reports), VSTest's `Test run for …/X.dll`, and
//! nunit-console's sections.

use super::Found;
use super::text::file_stem;
use buildvise_plugin_api::{Recogniser, Text, Wants};

pub struct Runs;

impl Recogniser<Found> for Runs {
    fn wants(&self) -> Wants {
        Wants::starts_unindented(&[
            "[xUnit.net ",
            "Test run for ",
            "Errors and Failures:",
            "Errors, Failures and Warnings",
            "Tests Not Run:",
            "Run Settings",
            "Test Run Summary",
        ])
    }

    fn feed(&mut self, line: &Text<'_>, found: &mut Found) -> bool {
        let trimmed = line.trimmed;
        if let Some(rest) = trimmed.strip_prefix("[xUnit.net ") {
            if let Some(name) = rest.strip_suffix("[FAIL]")
                && let Some((_, name)) = name.split_once(']')
            {
                found.xunit_failures.push((name.trim().to_string(), line.number));
            }
            return true;
        }
        if let Some(rest) = trimmed.strip_prefix("Test run for ") {
            let assembly = rest.rsplit_once(" (").map_or(rest, |(path, _)| path);
            found.test_runs.insert(file_stem(assembly).to_ascii_lowercase());
            return true;
        }
        if trimmed.starts_with("Errors and Failures:") || trimmed.starts_with("Errors, Failures and Warnings") {
            found.nunit_section = true;
            return true;
        }
        if ["Tests Not Run:", "Run Settings", "Test Run Summary"].iter().any(|p| trimmed.starts_with(p)) {
            found.nunit_section = false;
            return true;
        }
        false
    }
}
