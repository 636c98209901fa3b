//! mypy's lines: `pkg/core.py:21: error: message  [code]` (with `--show-column-numbers`,
//! `file:line:col:`), and the `note:` lines after an error at the same place, which belong to
//! it. A note elsewhere (`reveal_type`, a note alone) is information. The closing `Found 4 errors
//! in 1 file` and `Success: …` lines repeat the count and are not diagnostics.
//!
//! An error about a whole file names no line (`pkg/a.py: error: Duplicate module named "a"`), and
//! its notes neither; a note with no line that follows no such error is context
//! (`--show-error-context`'s `file.py: note: In function "f":`), not a finding.
//!
//! `--pretty` (often set in a project's config) wraps an error's message to the terminal's width,
//! 80 columns through a pipe: the message goes on over unindented lines, the last of which ends
//! with the `[code]` (or is the code alone), and then come the source line and a caret line, each
//! indented by four spaces. Notes are never wrapped.
//!
//! ```text
//! src/itsdangerous/timed.py:33: error: Incompatible return value type (got
//! "float", expected "int")  [return-value]
//!             return time.time()
//!                    ^~~~~~~~~~~
//! ```

use super::{Found, MAX_TEXT, add_note, at, extend, int};
use buildvise_plugin_api::{Diagnostic, Head, Recogniser, Severity, Text, Wants, clip};
use memchr::memmem::Finder;
use regex::Regex;
use std::sync::LazyLock;

/// What names a Python file: `pkg/core.py:21`, `stubs/x.pyi:3`.
static PYTHON_FILE: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(".py"));

static LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?P<file>[^\s:][^:]*\.pyi?):(?:(?P<line>\d+):(?:(?P<col>\d+):)?(?:\d+:\d+:)?)? (?P<sev>error|warning|note): (?P<msg>\s*\S.*?)(?:  \[(?P<code>[a-z0-9-]+)\])?$",
    )
    .expect("valid regex")
});

/// A line of mypy's own, `file.py:…` (`--show-error-context` prints `file.py: note: In function
/// "f":` without a line): never a wrapped message's next line.
static LOCATION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"^[^\s:"][^:]*\.pyi?:(?:\d+:| (?:error|warning|note): )"#).expect("valid regex"));

/// The code a wrapped message ends with, one or two spaces before it as the wrap left them.
static WRAPPED_CODE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\s+\[(?P<code>[a-z0-9-]+)\]$").expect("valid regex"));

/// Lines a wrapped message goes on over, at most: mypy wraps at the terminal's width, and a
/// message of [`MAX_TEXT`] bytes fills six lines of 80 columns.
const MAX_WRAPPED: u8 = 8;

#[derive(Default)]
pub(crate) struct Mypy {
    /// Whether the last diagnostic added is this recogniser's error, so a note can join it.
    open: bool,
    /// The error read last, kept until the lines that may go on with it (`--pretty`) are read,
    /// for its whole message decides whether it repeats one already found.
    pending: Option<Pending>,
}

struct Pending {
    d: Diagnostic,
    /// Lines the message went on over.
    wrapped: u8,
    /// The source and caret lines read after it: the message is whole once one is.
    shown: u8,
}

impl Pending {
    /// Takes `text` when it goes on with the error: a wrapped message's next line, or the source
    /// line and the caret line `--pretty` prints after it.
    fn takes(&mut self, text: &str, number: u64) -> bool {
        let taken = if text.starts_with("    ") && !text.trim().is_empty() {
            // The source line, then the caret line under it, nothing more.
            let caret = text.trim().bytes().all(|b| b == b'^' || b == b'~');
            let fits = if self.shown == 0 { !caret } else { self.shown == 1 && caret };
            if fits {
                self.shown += 1;
            }
            fits
        } else if self.shown == 0 && self.d.code.is_none() && self.wrapped < MAX_WRAPPED {
            let next = text.trim();
            let code_alone = next.starts_with('[') && text.len() - text.trim_start().len() <= 1;
            let goes_on = !next.is_empty()
                && (code_alone || !text.starts_with(char::is_whitespace))
                && !LOCATION.is_match(text)
                && !text.starts_with("Found ")
                && !text.starts_with("Success: ");
            if goes_on {
                self.wrapped += 1;
                self.d.message.push(' ');
                self.d.message.push_str(next);
            }
            goes_on
        } else {
            false
        };
        if taken {
            extend(&mut self.d, number);
        }
        taken
    }

    /// The error as found: a wrapped message's code taken off its end, the message cut to size.
    fn finish(mut self) -> Diagnostic {
        if self.wrapped > 0
            && self.d.code.is_none()
            && let Some(caps) = WRAPPED_CODE.captures(&self.d.message)
        {
            let (at, code) = (caps.get(0).map_or(0, |m| m.start()), caps["code"].to_string());
            self.d.message.truncate(at);
            self.d.code = Some(code);
        }
        self.d.message = clip(&self.d.message, MAX_TEXT).into_owned();
        self.d
    }
}

impl Mypy {
    fn push_pending(&mut self, found: &mut Found) {
        if let Some(pending) = self.pending.take() {
            self.open = found.push(pending.finish());
        }
    }
}

impl Recogniser<Found> for Mypy {
    fn wants(&self) -> Wants {
        Wants::starts(&["Found ", "Success: ", "mypy: "]).or_test(names_a_python_file)
    }

    fn is_open(&self) -> bool {
        self.pending.is_some()
    }

    fn feed(&mut self, line: &Text<'_>, found: &mut Found) -> bool {
        let (text, number) = (line.text, line.number);
        if let Some(pending) = &mut self.pending {
            if pending.takes(text, number) {
                return true;
            }
            self.push_pending(found);
        }
        if text.starts_with("Found ") && text.contains(" error") || text.starts_with("Success: ") {
            return true;
        }
        if let Some(message) = text.strip_prefix("mypy: ") {
            found.push(Diagnostic::error(message.trim()).with_log_range(number, number));
            self.open = false;
            return true;
        }
        if !text.contains(": ") {
            return false;
        }
        let Some(caps) = LINE.captures(text) else { return false };
        let file = found.path(&caps["file"]);
        let (line, col) = (int(caps.name("line")), int(caps.name("col")));
        let message = &caps["msg"];
        if &caps["sev"] == "note" {
            if self.open
                && let Some(d) = found.last_mut()
                && d.file.as_deref() == Some(file.as_str())
                && d.line == line
            {
                add_note(d, message, number);
                return true;
            }
            self.open = false;
            if line.is_some() {
                found.push(at(Severity::Info, message, file, line, col, number));
            }
            return true;
        }
        let severity = if &caps["sev"] == "error" { Severity::Error } else { Severity::Warning };
        let mut d = at(severity, message, file, line, col, number);
        if let Some(code) = caps.name("code") {
            d = d.with_code(code.as_str());
        }
        self.pending = Some(Pending { d, wrapped: 0, shown: 0 });
        true
    }

    fn flush(&mut self, found: &mut Found) {
        self.push_pending(found);
    }
}

/// `pkg/core.py:21: …`: a line about a Python file.
fn names_a_python_file(head: &Head<'_>) -> bool {
    PYTHON_FILE.find(head.bytes).is_some()
}

#[cfg(test)]
mod tests {
    use crate::parse::testing::{brief, parse};

    /// mypy 2.4.1 (compiled) on a package with type errors and a `reveal_type`.
    const LOG: &str = "\
pkg/core.py:21: error: Incompatible types in assignment (expression has type \"str\", variable has type \"int\")  [assignment]
pkg/core.py:22: error: Argument 1 to \"len\" has incompatible type \"str | None\"; expected \"Sized\"  [arg-type]
pkg/core.py:23: error: List item 0 has incompatible type \"str\"; expected \"int\"  [list-item]
pkg/core.py:23: error: List item 1 has incompatible type \"str\"; expected \"int\"  [list-item]
pkg/core.py:24: note: Revealed type is \"def (xs: list[int]) -> int\"
Found 4 errors in 1 file (checked 3 source files)
";

    #[test]
    fn reads_errors_with_their_codes_and_a_note_alone_as_information() {
        assert_eq!(
            brief(&parse(&["mypy"], LOG, 1)),
            [
                "error pkg/core.py:21 Incompatible types in assignment (expression has type \"str\", variable has type \"int\") [assignment]",
                "error pkg/core.py:22 Argument 1 to \"len\" has incompatible type \"str | None\"; expected \"Sized\" [arg-type]",
                "error pkg/core.py:23 List item 0 has incompatible type \"str\"; expected \"int\" [list-item]",
                "error pkg/core.py:23 List item 1 has incompatible type \"str\"; expected \"int\" [list-item]",
                "info pkg/core.py:24 Revealed type is \"def (xs: list[int]) -> int\"",
            ]
        );
    }

    #[test]
    fn a_note_at_the_error_s_place_joins_it() {
        // mypy 2.4.1 on a call to an overloaded method with no matching variant.
        let log = "\
app.py:2: error: No overload variant of \"get\" of \"dict\" matches argument types \"int\", \"int\", \"int\"  [call-overload]
app.py:2: note: Possible overload variants:
app.py:2: note:     def get(self, str, None = ..., /) -> int | None
app.py:2: note:     def get(self, str, int, /) -> int
app.py:2: note:     def [_T] get(self, str, _T, /) -> int | _T
Found 1 error in 1 file (checked 1 source file)
";
        let result = parse(&["mypy"], log, 1);
        assert_eq!(result.diagnostics.len(), 1);
        assert_eq!(result.diagnostics[0].code.as_deref(), Some("call-overload"));
        assert_eq!(
            result.diagnostics[0].notes[..2],
            ["Possible overload variants:", "def get(self, str, None = ..., /) -> int | None"]
        );
        assert_eq!(result.diagnostics[0].log_range.map(|r| (r.start, r.end)), Some((1, 5)));
    }

    #[test]
    fn syntax_errors_and_columns() {
        let log = "\
bad.py:1: error: Expected a parameter or the end of the parameter list  [syntax]
Found 1 error in 1 file (errors prevented further checking)
";
        assert_eq!(
            brief(&parse(&["mypy"], log, 2)),
            ["error bad.py:1 Expected a parameter or the end of the parameter list [syntax]"]
        );
        // `--show-column-numbers`.
        let columns = "\
pkg/core.py:23:13: error: List item 1 has incompatible type \"str\"; expected \"int\"  [list-item]
pkg/core.py:24:13: note: Revealed type is \"def (xs: list[int]) -> int\"
";
        assert_eq!(
            brief(&parse(&["mypy"], columns, 1)),
            [
                "error pkg/core.py:23:13 List item 1 has incompatible type \"str\"; expected \"int\" [list-item]",
                "info pkg/core.py:24:13 Revealed type is \"def (xs: list[int]) -> int\"",
            ]
        );
    }

    #[test]
    fn a_pretty_error_keeps_its_wrapped_message_and_its_code() {
        // mypy 2.4.1 with `pretty = true` (pallets/itsdangerous's config), through a pipe.
        let log = "\
src/itsdangerous/timed.py:33: error: Incompatible return value type (got
\"float\", expected \"int\")  [return-value]
            return time.time()
                   ^~~~~~~~~~~
src/itsdangerous/timed.py:164: error: No overload variant of \"unsign\" of
\"TimestampSigner\" matches argument types \"str | bytes\", \"str\"  [call-overload]
                self.unsign(signed_value, max_age=str(max_age))
                ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
src/itsdangerous/timed.py:164: note: Possible overload variants:
src/itsdangerous/timed.py:164: note:     def unsign(self, signed_value: str | bytes, max_age: int | None = ..., return_timestamp: Literal[False] = ...) -> bytes
Found 2 errors in 1 file (checked 8 source files)
";
        let result = parse(&["mypy"], log, 1);
        assert_eq!(
            brief(&result),
            [
                "error src/itsdangerous/timed.py:33 Incompatible return value type (got \"float\", expected \"int\") [return-value]",
                "error src/itsdangerous/timed.py:164 No overload variant of \"unsign\" of \"TimestampSigner\" matches argument types \"str | bytes\", \"str\" [call-overload]",
            ]
        );
        // The source and caret lines belong to the error, and so do the notes after them.
        let ranges: Vec<_> = result.diagnostics.iter().map(|d| d.log_range.map(|r| (r.start, r.end))).collect();
        assert_eq!(ranges, [Some((1, 4)), Some((5, 10))]);
        assert_eq!(result.diagnostics[1].notes[0], "Possible overload variants:");
    }

    #[test]
    fn a_code_wrapped_onto_a_line_of_its_own_is_the_code() {
        // mypy 2.4.1 --pretty: the line breaks between the two spaces before the code, leaving
        // one at the end of the first line.
        let log = "\
p.py:2: error: Incompatible return value type (got \"int\", expected \"str\") \n\
[return-value]
        return x
               ^
Found 1 error in 1 file (checked 1 source file)
";
        assert_eq!(
            brief(&parse(&["mypy"], log, 1)),
            ["error p.py:2 Incompatible return value type (got \"int\", expected \"str\") [return-value]"]
        );
    }

    #[test]
    fn pretty_errors_with_their_context_and_columns() {
        // mypy 1.20.2 `--show-error-context --show-column-numbers` with `pretty = true`
        // (python-humanize/humanize): the context line names no line and starts no message.
        let log = "\
src/humanize/lists.py: note: In function \"natural_list\":
src/humanize/lists.py:34:9: error: Returning Any from function declared to
return \"str\"  [no-any-return]
            return items[0].upper()
            ^~~~~~~~~~~~~~~~~~~~~~~
src/humanize/__init__.py:35:1: error: Cannot find implementation or library
stub for module named \"humanize._version\"  [import-not-found]
    from ._version import __version__
    ^
src/humanize/__init__.py:35:1: note: See https://mypy.readthedocs.io/en/stable/running_mypy.html#missing-imports
Found 2 errors in 2 files (checked 6 source files)
";
        let result = parse(&["mypy"], log, 1);
        assert_eq!(
            brief(&result),
            [
                "error src/humanize/lists.py:34:9 Returning Any from function declared to return \"str\" [no-any-return]",
                "error src/humanize/__init__.py:35:1 Cannot find implementation or library stub for module named \"humanize._version\" [import-not-found]",
            ]
        );
        assert_eq!(result.diagnostics[1].notes.len(), 1);
    }

    #[test]
    fn without_pretty_the_next_line_starts_afresh() {
        // mypy 2.4.1 `--hide-error-codes`: an error without a code is followed by mypy's next
        // line, never taken as the rest of its message.
        let log = "\
src/itsdangerous/timed.py:33: error: Incompatible return value type (got \"float\", expected \"int\")
src/itsdangerous/timed.py:48: error: Argument 1 to \"int_to_bytes\" has incompatible type \"str\"; expected \"int\"
Found 2 errors in 1 file (checked 8 source files)
";
        assert_eq!(
            brief(&parse(&["mypy"], log, 1)),
            [
                "error src/itsdangerous/timed.py:33 Incompatible return value type (got \"float\", expected \"int\")",
                "error src/itsdangerous/timed.py:48 Argument 1 to \"int_to_bytes\" has incompatible type \"str\"; expected \"int\"",
            ]
        );
    }

    #[test]
    fn an_error_about_a_whole_file_has_no_line_and_its_notes_join_it() {
        // mypy 2.4.1 with `pretty = true` (hynek/structlog), given one module twice: the error
        // names no line, and its message wraps.
        let log = "\
src/structlog/processors.py: error: Duplicate module named
\"structlog.processors\" (also at \"src/structlog/processors.py\")
src/structlog/processors.py: note: See https://mypy.readthedocs.io/en/stable/running_mypy.html#mapping-file-paths-to-modules for more info
src/structlog/processors.py: note: Common resolutions include:
src/structlog/processors.py: note:     a) using `--exclude` to avoid checking one of them,
Found 1 error in 1 file (errors prevented further checking)
";
        let result = parse(&["mypy"], log, 2);
        assert_eq!(
            brief(&result),
            [
                "error src/structlog/processors.py Duplicate module named \"structlog.processors\" (also at \"src/structlog/processors.py\")"
            ]
        );
        assert_eq!(result.diagnostics[0].notes.len(), 3);
        assert_eq!(result.diagnostics[0].log_range.map(|r| (r.start, r.end)), Some((1, 5)));
    }

    #[test]
    fn a_context_note_is_no_finding() {
        // mypy 2.4.1 --show-error-context, without pretty.
        let log = "\
pkg/core.py: note: In function \"f\":
pkg/core.py:3: error: Incompatible return value type (got \"int\", expected \"str\")  [return-value]
Found 1 error in 1 file (checked 1 source file)
";
        assert_eq!(
            brief(&parse(&["mypy"], log, 1)),
            ["error pkg/core.py:3 Incompatible return value type (got \"int\", expected \"str\") [return-value]"]
        );
    }
}
