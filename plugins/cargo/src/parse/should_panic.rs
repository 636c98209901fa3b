//! The recogniser of libtest's notes on `should_panic` tests: `note: test did not panic as
//! expected at src/lib.rs:55:8`, and `note: panic did not contain expected string` with the
//! indented lines under it that say what the test expected.

use super::findings::Findings;
use super::libtest::Context;
use super::text::{MAX_NOTE, clip};
use buildvise_plugin_api::{Diagnostic, Recogniser, Text, Wants};

const DID_NOT_PANIC: &str = "note: test did not panic as expected";
const WRONG_MESSAGE: &str = "note: panic did not contain expected string";

#[derive(Default)]
pub(crate) struct ShouldPanicNotes {
    /// After [`WRONG_MESSAGE`] in a failed test's output: the next indented lines say what the
    /// test expected.
    expecting: bool,
}

impl Recogniser<Findings> for ShouldPanicNotes {
    fn wants(&self) -> Wants {
        Wants::starts(&[DID_NOT_PANIC, WRONG_MESSAGE])
    }

    fn is_open(&self) -> bool {
        self.expecting
    }

    /// The notes are left to the recognisers after this one too: they are lines of the failed
    /// test's output.
    fn feed(&mut self, line: &Text<'_>, found: &mut Findings) -> bool {
        if self.expecting {
            if line.text.starts_with(' ') {
                self.expected_substring(line, found);
                return true;
            }
            self.expecting = false;
        }
        if line.text.starts_with(WRONG_MESSAGE) {
            self.expecting = matches!(found.tests.context(), Context::Failure(_));
        } else if let Some(rest) = line.text.strip_prefix(DID_NOT_PANIC) {
            did_not_panic(rest, line.number, found);
        }
        false
    }
}

impl ShouldPanicNotes {
    /// ` expected substring: "bang"` under [`WRONG_MESSAGE`] (before Rust 1.73 in backticks:
    /// `` `"bang"` ``): the test's panic says what it did panic with, and what it should have
    /// said decides the fix, so the message names both.
    fn expected_substring(&mut self, line: &Text<'_>, found: &mut Findings) {
        let Some(expected) = line.unindented.strip_prefix("expected substring: ") else { return };
        self.expecting = false;
        let expected = expected.trim().trim_end_matches(',').trim_matches('`');
        if let Context::Failure(name) = found.tests.context() {
            // Captured output prints the explanation right under the test's panic: then its
            // lines are the panic's too.
            if let Some(last) = found.diagnostics.last_mut()
                && last.test.as_deref() == Some(name)
                && let Some(range) = &mut last.log_range
            {
                range.end = range.end.max(line.number);
            }
            found.expected_strings.insert(name.to_string(), clip(expected, MAX_NOTE));
        }
    }
}

/// The rest of [`DID_NOT_PANIC`]: ` at src/lib.rs:55:8`, where the test is.
fn did_not_panic(rest: &str, number: u64, found: &mut Findings) {
    let mut diag = Diagnostic::error("test did not panic as expected").with_log_range(number, number);
    if let Some(location) = rest.strip_prefix(" at ") {
        diag = found.located(diag, location.trim());
    }
    match found.tests.context() {
        Context::Failure(name) => diag.test = Some(name.to_string()),
        Context::Success => return,
        Context::Free => {}
    }
    found.diagnostics.push(diag);
}
