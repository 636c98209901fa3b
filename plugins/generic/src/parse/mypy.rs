//! mypy's lines: `pkg/core.py:21: error: message  [code]` (with `--show-column-numbers`,
//! `file:line:col:`), and the `note:` lines after an error at the same place, which belong to
//! it. A note elsewhere (`reveal_type`, a note alone) is information. The closing `Found 4 errors
//! in 1 file` and `Success: …` lines repeat the count and are not diagnostics.

use super::{Found, add_note, at, int};
use buildvise_plugin_api::{Diagnostic, Head, Recogniser, Severity, Text, Wants};
use memchr::memmem::Finder;
use regex::Regex;
use std::sync::LazyLock;

/// What names a Python file: `pkg/core.py:21`, `stubs/x.pyi:3`.
static PYTHON_FILE: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(".py"));

static LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?P<file>[^\s:][^:]*\.pyi?):(?P<line>\d+):(?:(?P<col>\d+):)?(?:\d+:\d+:)? (?P<sev>error|warning|note): (?P<msg>\s*\S.*?)(?:  \[(?P<code>[a-z0-9-]+)\])?$",
    )
    .expect("valid regex")
});

#[derive(Default)]
pub(crate) struct Mypy {
    /// Whether the last diagnostic added is this recogniser's error, so a note can join it.
    open: bool,
}

impl Recogniser<Found> for Mypy {
    fn wants(&self) -> Wants {
        Wants::starts(&["Found ", "Success: ", "mypy: "]).or_test(names_a_python_file)
    }

    fn feed(&mut self, line: &Text<'_>, found: &mut Found) -> bool {
        let (text, number) = (line.text, line.number);
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
            found.push(at(Severity::Info, message, file, line, col, number));
            return true;
        }
        let severity = if &caps["sev"] == "error" { Severity::Error } else { Severity::Warning };
        let mut d = at(severity, message, file, line, col, number);
        if let Some(code) = caps.name("code") {
            d = d.with_code(code.as_str());
        }
        self.open = found.push(d);
        true
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
}
