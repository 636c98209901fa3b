//! What a program built with `-fsanitize=address` (or thread, leak, undefined) prints when the
//! sanitizer stops it: a report of stack frames ending in `SUMMARY: AddressSanitizer:
//! heap-use-after-free /home/dev/src/demo/s.c:4 in main`. The summary is the error, at the
//! innermost frame of the program's own code the sanitizer names; the frames above it are the
//! report's body. UBSan's `s.c:3:22: runtime error: …` has gcc's shape and is read there.

use super::{Found, at, int};
use buildvise_plugin_api::{Diagnostic, Recogniser, Severity, Text, Wants};
use regex::Regex;
use std::sync::LazyLock;

/// `SUMMARY: AddressSanitizer: heap-use-after-free /x/s.c:4 in main`; without a place for a leak
/// (`SUMMARY: AddressSanitizer: 4 byte(s) leaked in 1 allocation(s).`).
static SUMMARY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^SUMMARY: (?P<tool>\w+Sanitizer): (?:(?P<kind>\S+) (?P<file>[^\s:()]+):(?P<line>\d+)(?::(?P<col>\d+))?(?: in (?P<function>.+))?|(?P<what>.+))$",
    )
    .expect("valid regex")
});

pub(crate) struct Sanitizer;

impl Recogniser<Found> for Sanitizer {
    fn wants(&self) -> Wants {
        Wants::starts(&["SUMMARY: "])
    }

    fn feed(&mut self, line: &Text<'_>, found: &mut Found) -> bool {
        let Some(caps) = SUMMARY.captures(line.text) else { return false };
        let d = match caps.name("file") {
            Some(file) => {
                let mut message = format!("{}: {}", &caps["tool"], &caps["kind"]);
                if let Some(function) = caps.name("function") {
                    message = format!("{message} in {}", function.as_str());
                }
                let (line_no, col) = (int(caps.name("line")), int(caps.name("col")));
                at(Severity::Error, &message, found.path(file.as_str()), line_no, col, line.number)
            }
            None => Diagnostic::error(format!("{}: {}", &caps["tool"], caps["what"].trim()))
                .with_log_range(line.number, line.number),
        };
        found.push(d);
        true
    }
}

#[cfg(test)]
mod tests {
    use crate::parse::testing::{brief, parse};

    #[test]
    fn a_sanitizer_s_summary_is_the_error_at_the_place_it_names() {
        // gcc 12.2.0, -g -fsanitize=address,undefined, run by `make test`.
        let log = "\
s.c:3:22: runtime error: signed integer overflow: 2147483647 + 1 cannot be represented in type 'int'
=================================================================
==4305==ERROR: AddressSanitizer: heap-use-after-free on address 0x602000000010 at pc 0x55a497d332b0 bp 0x7fff4e4f6680 sp 0x7fff4e4f6678
READ of size 4 at 0x602000000010 thread T0
    #0 0x55a497d332af in main /home/dev/src/demo/s.c:4
    #1 0x7fb336645249 in __libc_start_call_main ../sysdeps/nptl/libc_start_call_main.h:58

SUMMARY: AddressSanitizer: heap-use-after-free /home/dev/src/demo/s.c:4 in main
==4305==ABORTING
make: *** [Makefile:2: test] Error 1
SUMMARY: AddressSanitizer: 4 byte(s) leaked in 1 allocation(s).
";
        assert_eq!(
            brief(&parse(&["make", "gcc", "fallback"], log, 2)),
            [
                "error s.c:3:22 signed integer overflow: 2147483647 + 1 cannot be represented in type 'int'",
                "error s.c:4 AddressSanitizer: heap-use-after-free in main",
                "error - AddressSanitizer: 4 byte(s) leaked in 1 allocation(s).",
            ]
        );
    }
}
