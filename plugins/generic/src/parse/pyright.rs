//! pyright's CLI report: a file's path alone on a line, then its diagnostics indented by two
//! (`  /abs/pkg/core.py:21:14 - error: message`), each continued on lines indented by four more;
//! the rule (`(reportAssignmentType)`) closes the last line of the diagnostic. `information` is
//! info. The closing `4 errors, 0 warnings, 1 information` line is not a diagnostic.

use super::{Found, add_note, at, extend};
use buildvise_plugin_api::{Head, Recogniser, Severity, Text, Wants};
use memchr::memmem::Finder;
use regex::Regex;
use std::sync::LazyLock;

/// In the closing count: `4 errors, 0 warnings, 1 information`, `1 error, …`.
static ERROR_COUNT: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(" error"));

static LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^  (?P<file>\S.*):(?P<line>\d+):(?P<col>\d+) - (?P<sev>error|warning|information): (?P<msg>\s*\S.*)$")
        .expect("valid regex")
});

static RULE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r" \((?P<rule>report[A-Za-z]+)\)$").expect("valid regex"));

#[derive(Default)]
pub(crate) struct Pyright {
    /// The last diagnostic added is this recogniser's: continuation lines belong to it.
    open: bool,
}

impl Recogniser<Found> for Pyright {
    fn wants(&self) -> Wants {
        Wants::starts(&["  "]).or_test(is_a_file_or_the_count)
    }

    /// After a diagnostic: the next line that does not continue it ends it.
    fn is_open(&self) -> bool {
        self.open
    }

    fn feed(&mut self, line: &Text<'_>, found: &mut Found) -> bool {
        let (text, number) = (line.text, line.number);
        if self.open && text.starts_with("    ") {
            if let Some(d) = found.last_mut() {
                let (note, rule) = split_rule(text);
                if let Some(rule) = rule {
                    d.code = Some(rule.to_string());
                }
                add_note(d, note, number);
            }
            return true;
        }
        self.open = false;
        if text.starts_with("  ") && text.contains(" - ") {
            let Some(caps) = LINE.captures(text) else { return false };
            let severity = match &caps["sev"] {
                "error" => Severity::Error,
                "warning" => Severity::Warning,
                _ => Severity::Info,
            };
            let (message, rule) = split_rule(&caps["msg"]);
            let (line, col) = (caps["line"].parse().ok(), caps["col"].parse().ok());
            let mut d = at(severity, message, found.path(&caps["file"]), line, col, number);
            if let Some(rule) = rule {
                d = d.with_code(rule);
            }
            extend(&mut d, number);
            self.open = found.push(d);
            return true;
        }
        // `/abs/pkg/core.py`: the file the next lines are about; `4 errors, 0 warnings, …`.
        (text.ends_with(".py") || text.ends_with(".pyi")) && !text.contains(' ')
            || text.contains(" errors, ") && text.contains(" warnings, ")
            || text.contains(" error, ") && text.contains(" warning")
    }
}

/// `/abs/pkg/core.py`, a file's name alone before its diagnostics, or the closing `4 errors, 0
/// warnings, 1 information`.
fn is_a_file_or_the_count(head: &Head<'_>) -> bool {
    head.bytes.ends_with(b".py") || head.bytes.ends_with(b".pyi") || ERROR_COUNT.find(head.bytes).is_some()
}

/// `message (reportX)` → (`message`, `reportX`).
fn split_rule(text: &str) -> (&str, Option<&str>) {
    match RULE.captures(text) {
        Some(caps) => {
            let start = caps.get(0).map_or(text.len(), |m| m.start());
            (&text[..start], caps.name("rule").map(|m| m.as_str()))
        }
        None => (text, None),
    }
}

#[cfg(test)]
mod tests {
    use crate::parse::testing::{brief, parse};

    /// pyright 1.1.414 (npm), run in /home/dev/src/demo.
    const LOG: &str = "\
/home/dev/src/demo/pkg/core.py
  /home/dev/src/demo/pkg/core.py:21:14 - error: Type \"str\" is not assignable to declared type \"int\"
    \"str\" is not assignable to \"int\" (reportAssignmentType)
  /home/dev/src/demo/pkg/core.py:22:14 - error: Argument of type \"str | None\" cannot be assigned to parameter \"obj\" of type \"Sized\" in function \"len\"
    Type \"str | None\" is not assignable to type \"Sized\"
      \"None\" is incompatible with protocol \"Sized\"
        \"__len__\" is not present (reportArgumentType)
  /home/dev/src/demo/pkg/core.py:23:7 - error: Argument of type \"list[str]\" cannot be assigned to parameter \"xs\" of type \"list[int]\" in function \"total\"
    \"Literal['a']\" is not assignable to \"int\"
    \"Literal['b']\" is not assignable to \"int\" (reportArgumentType)
  /home/dev/src/demo/pkg/core.py:24:13 - information: Type of \"total\" is \"(xs: list[int]) -> int\"
/home/dev/src/demo/pkg/util.py
  /home/dev/src/demo/pkg/util.py:4:16 - error: \"undefined_thing\" is not defined (reportUndefinedVariable)
4 errors, 0 warnings, 1 information
";

    #[test]
    fn reads_diagnostics_their_rules_and_continuations() {
        let result = parse(&["pyright"], LOG, 1);
        assert_eq!(
            brief(&result),
            [
                "error pkg/core.py:21:14 Type \"str\" is not assignable to declared type \"int\" [reportAssignmentType]",
                "error pkg/core.py:22:14 Argument of type \"str | None\" cannot be assigned to parameter \"obj\" of type \"Sized\" in function \"len\" [reportArgumentType]",
                "error pkg/core.py:23:7 Argument of type \"list[str]\" cannot be assigned to parameter \"xs\" of type \"list[int]\" in function \"total\" [reportArgumentType]",
                "info pkg/core.py:24:13 Type of \"total\" is \"(xs: list[int]) -> int\"",
                "error pkg/util.py:4:16 \"undefined_thing\" is not defined [reportUndefinedVariable]",
            ]
        );
        assert_eq!(result.diagnostics[0].notes, ["\"str\" is not assignable to \"int\""]);
        assert_eq!(result.diagnostics[1].notes.len(), 3);
    }
}
