//! CMake's own messages: a header naming the severity and, mostly, the place in a CMakeLists.txt
//! (`CMake Error at CMakeLists.txt:245 (add_executable):`, `CMake Deprecation Warning at
//! tests/CMakeLists.txt:1 (cmake_minimum_required):`, `CMake Warning:`), then the message,
//! indented by two spaces, in paragraphs, and sometimes a `Call Stack (most recent call first):`
//! naming the calls that led there.
//!
//! The first paragraph is the headline, with the second when the first only introduces it
//! (`Cannot find source file:` then `test_dump.c`); the call stack's places are notes. The
//! `-- Configuring incomplete, errors occurred!` and `CMake Generate step failed.` that close a
//! failed configure only repeat that there were errors, and are left to no one.

use super::{Found, add_note, at};
use buildvise_plugin_api::{Diagnostic, Recogniser, Severity, Text, Wants, clip};
use regex::Regex;
use std::sync::LazyLock;

/// `CMake Error at CMakeLists.txt:245 (add_executable):`, `CMake Warning (dev) in x.cmake:`,
/// `CMake Error: The source directory "/x" does not exist.`
static HEADER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^CMake (?P<kind>Error|Warning|Deprecation Warning|Deprecation Error)(?: \(dev\))?(?: (?:at|in) (?P<file>.+?)(?::(?P<line>\d+))?(?: \([^)]*\))?)?:(?P<rest>.*)$",
    )
    .expect("valid regex")
});

/// A message being read: its header's place and severity, and the lines so far.
struct Block {
    severity: Severity,
    file: Option<String>,
    line: Option<u32>,
    number: u64,
    last: u64,
    /// The message's paragraphs, each its lines joined.
    paragraphs: Vec<String>,
    /// Whether the last line was blank, so the next indented one starts a paragraph.
    gap: bool,
    /// Whether the call stack is being read.
    stack: bool,
    calls: Vec<String>,
}

#[derive(Default)]
pub(crate) struct Cmake {
    block: Option<Block>,
}

impl Recogniser<Found> for Cmake {
    fn wants(&self) -> Wants {
        Wants::starts(&["CMake Error", "CMake Warning", "CMake Deprecation", "Error: "])
    }

    fn is_open(&self) -> bool {
        self.block.is_some()
    }

    fn feed(&mut self, line: &Text<'_>, found: &mut Found) -> bool {
        if let Some(block) = &mut self.block
            && block.take(line)
        {
            return true;
        }
        self.flush(found);
        if let Some(caps) = HEADER.captures(line.text) {
            let severity = if caps["kind"].ends_with("Error") { Severity::Error } else { Severity::Warning };
            let mut block = Block {
                severity,
                file: caps.name("file").map(|f| found.path(f.as_str())),
                line: caps.name("line").and_then(|l| l.as_str().parse().ok()),
                number: line.number,
                last: line.number,
                paragraphs: Vec::new(),
                gap: true,
                stack: false,
                calls: Vec::new(),
            };
            if !caps["rest"].trim().is_empty() {
                block.paragraphs.push(caps["rest"].trim().to_string());
            }
            self.block = Some(block);
            return true;
        }
        // `cmake --build` on a folder never configured: `Error: could not load cache`. Only a
        // consequence: a make recipe's script may print `Error: …` about what a compiler says.
        if let Some(message) = line.text.strip_prefix("Error: ") {
            found.consequences.push(Diagnostic::error(message.trim()).with_log_range(line.number, line.number));
            return true;
        }
        false
    }

    fn flush(&mut self, found: &mut Found) {
        if let Some(block) = self.block.take() {
            found.push(block.diagnostic());
        }
    }
}

impl Block {
    /// Takes `line` when it continues the message: an indented line, a blank one, or the call
    /// stack's header.
    fn take(&mut self, line: &Text<'_>) -> bool {
        let text = line.text;
        if text.trim().is_empty() {
            self.gap = true;
        } else if text == "Call Stack (most recent call first):" {
            self.stack = true;
        } else if text.starts_with("  ") {
            let words = text.trim();
            if self.stack {
                self.calls.push(words.to_string());
            } else if self.gap || self.paragraphs.is_empty() {
                self.paragraphs.push(words.to_string());
            } else if let Some(paragraph) = self.paragraphs.last_mut() {
                paragraph.push(' ');
                paragraph.push_str(words);
            }
            self.gap = false;
            self.last = line.number;
        } else {
            return false;
        }
        true
    }

    fn diagnostic(self) -> Diagnostic {
        let mut paragraphs = self.paragraphs.into_iter();
        let mut message = paragraphs.next().unwrap_or_default();
        if message.ends_with(':')
            && let Some(next) = paragraphs.next()
        {
            message = format!("{message} {next}");
        }
        let mut d = match self.file {
            Some(file) => at(self.severity, &message, file, self.line, None, self.number),
            None => Diagnostic::new(self.severity, clip(message.trim(), super::MAX_TEXT))
                .with_log_range(self.number, self.number),
        };
        for call in &self.calls {
            add_note(&mut d, &format!("called from {call}"), self.last);
        }
        super::extend(&mut d, self.last);
        d
    }
}

#[cfg(test)]
mod tests {
    use crate::parse::testing::{brief, parse};

    const FORMATS: &[&str] = &["cmake", "make", "gcc", "fallback"];

    #[test]
    fn reads_errors_at_a_line_of_a_cmakelists_with_their_indented_message() {
        // cmake 3.25.1, an add_executable naming a file that does not exist.
        let log = "\
-- Configuring done
CMake Error at CMakeLists.txt:245 (add_executable):
  Cannot find source file:

    test_dump.c

  Tried extensions .c .C .c++ .cc .cpp .cxx .cu .mpp .m .M .mm .ixx .cppm .h
  .hh .h++ .hm .hpp .hxx .in .txx .f .F .for .f77 .f90 .f95 .f03 .hip .ispc


CMake Error at CMakeLists.txt:245 (add_executable):
  No SOURCES given to target: cJSON_test


CMake Generate step failed.  Build files cannot be regenerated correctly.
";
        let result = parse(FORMATS, log, 1);
        assert_eq!(
            brief(&result),
            [
                "error CMakeLists.txt:245 Cannot find source file: test_dump.c",
                "error CMakeLists.txt:245 No SOURCES given to target: cJSON_test"
            ]
        );
        assert_eq!(result.diagnostics[0].log_range.map(|r| (r.start, r.end)), Some((2, 8)));
    }

    #[test]
    fn reads_warnings_messages_without_a_place_and_the_call_stack() {
        let log = "\
CMake Deprecation Warning at tests/CMakeLists.txt:1 (cmake_minimum_required):
  Compatibility with CMake < 2.8.12 will be removed from a future version of
  CMake.

  Update the VERSION argument <min> value or use a ...<max> suffix to tell
  CMake that the project does not need compatibility with older versions.


CMake Warning (dev) at cmake/util.cmake:4 (message):
  check this
Call Stack (most recent call first):
  CMakeLists.txt:12 (include)
This warning is for project developers.  Use -Wno-dev to suppress it.

CMake Warning:
  Manually-specified variables were not used by the project:

    ENABLE_CJSON_UTIL


CMake Error: The source directory \"/home/dev/src/demo/nope\" does not exist.
-- Configuring incomplete, errors occurred!
";
        let result = parse(FORMATS, log, 1);
        assert_eq!(
            brief(&result),
            [
                "warning tests/CMakeLists.txt:1 Compatibility with CMake < 2.8.12 will be removed from a future version of CMake.",
                "warning cmake/util.cmake:4 check this",
                "warning - Manually-specified variables were not used by the project: ENABLE_CJSON_UTIL",
                "error - The source directory \"/home/dev/src/demo/nope\" does not exist.",
            ]
        );
        assert_eq!(result.diagnostics[1].notes, ["called from CMakeLists.txt:12 (include)"]);
    }

    #[test]
    fn a_build_folder_never_configured_is_an_error_when_nothing_else_is() {
        let log = "Error: could not load cache\n";
        assert_eq!(brief(&parse(FORMATS, log, 1)), ["error - could not load cache"]);
    }
}
