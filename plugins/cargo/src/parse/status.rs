//! cargo's right-aligned status lines (`   Compiling x`, `     Running …`, `   Doc-tests x`), and
//! the recogniser of those that start a test target: the targets that started tell whether a
//! fail-fast run left some out.

use super::findings::Findings;
use buildvise_plugin_api::{Recogniser, Text, Wants};

/// The verbs of the status lines that start a test target.
pub(crate) const TARGET_VERBS: &[&str] = &["Running ", "Doc-tests "];

pub(crate) struct TargetStarts;

impl Recogniser<Findings> for TargetStarts {
    fn wants(&self) -> Wants {
        Wants::starts_unindented(TARGET_VERBS)
    }

    /// Left to the recognisers after this one too: a test target starting ends the previous
    /// one's report.
    fn feed(&mut self, line: &Text<'_>, found: &mut Findings) -> bool {
        if is_status_line(line.text) {
            // A later target ran: cargo went on after the last failure.
            found.last_failed_target = None;
            found.targets_started += 1;
        }
        false
    }
}

/// A capitalised verb of letters and dashes that ends at column 12, indented by spaces to get
/// there.
pub(crate) fn is_status_line(line: &str) -> bool {
    let Some(head) = line.get(..12) else { return false };
    let verb = head.trim_start_matches(' ');
    verb.len() < head.len()
        && verb.starts_with(|c: char| c.is_ascii_uppercase())
        && verb.chars().all(|c| c.is_ascii_alphabetic() || c == '-')
        && line[12..].starts_with(' ')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_status_lines() {
        assert!(is_status_line("   Compiling foo v0.1.0 (/x)"));
        assert!(is_status_line("   Doc-tests foo"));
        assert!(is_status_line("     Running unittests src/lib.rs (target/debug/deps/x)"));
        assert!(!is_status_line("  = note: x"));
        assert!(!is_status_line("12 |     let x = 1;"));
        assert!(!is_status_line("    tests::a_failing_test"));
        assert!(!is_status_line("   Short"));
    }
}
