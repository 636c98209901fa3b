//! `ruff check` findings, in the forms ruff prints: the default full form (a `F401 [*] message`
//! headline, then ` --> path:line:col` and a code frame), the concise one
//! (`path:line:col: F401 [*] message`) and the grouped one (a `path:` line, then an indented
//! `line:col F401 [*] message` per finding). Each finding is an error: ruff counts them as errors
//! and fails the run on any. Syntax errors read `invalid-syntax: message` in place of a code, and
//! `ruff format --check` reports a file to reformat as `unformatted: File would be reformatted`
//! in the full form. The closing `Found 6 errors.` and the fixable count are not diagnostics.
//!
//! When ruff cannot run (a config it cannot read), it prints `ruff failed` and a chain of
//! `  Cause: …` lines, a TOML error's code frame and its reason: one error, at the file and line
//! the causes name.

use super::{Found, at, extend};
use buildvise_plugin_api::{Diagnostic, Recogniser, Severity, Text, Wants};
use regex::Regex;
use std::sync::LazyLock;

/// The full form's headline: a rule code, or a kebab-case kind with a colon.
static HEADLINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:(?P<code>[A-Z]+[0-9]+)|(?P<kind>[a-z][a-z-]*):) (?:\[\*\] )?(?P<msg>\s*\S.*)$")
        .expect("valid regex")
});

static ARROW: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*--> (?P<file>.+):(?P<line>\d+):(?P<col>\d+)$").expect("valid regex"));

static CONCISE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+): (?:(?P<code>[A-Z]+[0-9]+)|(?P<kind>[a-z][a-z-]*):) (?:\[\*\] )?(?P<msg>\s*\S.*)$",
    )
    .expect("valid regex")
});

/// A grouped finding: `  12:5  F841 [*] message`, under its file's `path:` line.
static GROUPED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\s+(?P<line>\d+):(?P<col>\d+)\s+(?:(?P<code>[A-Z]+[0-9]+)|(?P<kind>[a-z][a-z-]*):) (?:\[\*\] )?(?P<msg>\s*\S.*)$",
    )
    .expect("valid regex")
});

/// A TOML error's place, in a `Cause:` line.
static TOML_PLACE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"at line (?P<line>\d+), column (?P<col>\d+)").expect("valid regex"));

#[derive(Default)]
pub(crate) struct Ruff {
    /// A headline waiting for its ` --> ` line: code, message, log line.
    headline: Option<(String, String, u64)>,
    /// Inside a finding's frame: its lines belong to the last diagnostic.
    in_frame: bool,
    /// The file of the grouped findings being read.
    group: Option<String>,
    /// `ruff failed` and what it has said since.
    failure: Option<Failure>,
}

#[derive(Default)]
struct Failure {
    causes: Vec<String>,
    /// The file a cause names (`Failed to parse /…/pyproject.toml`).
    file: Option<String>,
    line: Option<u32>,
    col: Option<u32>,
    /// The line after a code frame, which says what is wrong there.
    reason: Option<String>,
    start: u64,
    end: u64,
}

impl Failure {
    /// Takes a line of the failure's report; false at the first that is not one.
    fn takes(&mut self, text: &str, number: u64) -> bool {
        if let Some(cause) = text.strip_prefix("  Cause: ") {
            if let Some(file) = cause.strip_prefix("Failed to parse ") {
                self.file = Some(file.trim().to_string());
            }
            if let Some(caps) = TOML_PLACE.captures(cause) {
                self.line = caps["line"].parse().ok();
                self.col = caps["col"].parse().ok();
            }
            self.causes.push(cause.trim().to_string());
        } else if is_frame_line(text) {
            // The code frame under a TOML error.
        } else if self.reason.is_none() && !self.causes.is_empty() && !text.trim().is_empty() {
            self.reason = Some(text.trim().to_string());
        } else {
            return false;
        }
        self.end = number;
        true
    }

    fn diagnostic(self, found: &Found) -> Diagnostic {
        let message = self.reason.clone().or_else(|| self.causes.last().cloned()).unwrap_or("ruff failed".into());
        let mut d = Diagnostic::error(message).with_log_range(self.start, self.end);
        if let Some(file) = &self.file {
            d = d.with_location(found.path(file), self.line, self.col);
        }
        d.notes = self.causes;
        d
    }
}

/// A code frame's line: `    |`, `223 | line-length = "79"`, `    |               ^^^^`.
fn is_frame_line(text: &str) -> bool {
    let rest = text.trim_start_matches(|c: char| c == ' ' || c.is_ascii_digit());
    rest.len() < text.len() && rest.starts_with('|')
}

impl Recogniser<Found> for Ruff {
    /// Every line: a headline starts with any rule code or kind, and the concise form with a path.
    fn wants(&self) -> Wants {
        Wants::every()
    }

    fn is_open(&self) -> bool {
        self.failure.is_some()
    }

    fn feed(&mut self, line: &Text<'_>, found: &mut Found) -> bool {
        let (text, number) = (line.text, line.number);
        if let Some(failure) = &mut self.failure {
            if failure.takes(text, number) {
                return true;
            }
            self.flush(found);
        }
        if text == "ruff failed" {
            self.failure = Some(Failure { start: number, end: number, ..Failure::default() });
            return true;
        }
        if self.group.is_some() && self.grouped(text, number, found) {
            return true;
        }
        if let Some((code, message, start)) = self.headline.take()
            && let Some(caps) = ARROW.captures(text)
        {
            let (line, col) = (caps["line"].parse().ok(), caps["col"].parse().ok());
            let mut d = at(Severity::Error, &message, found.path(&caps["file"]), line, col, start);
            extend(&mut d, number);
            if !code.is_empty() {
                d = d.with_code(code);
            }
            self.in_frame = found.push(d);
            return true;
        }
        if self.in_frame {
            if text.is_empty() {
                self.in_frame = false;
                return true;
            }
            if text.starts_with(' ')
                || text.starts_with(|c: char| c.is_ascii_digit())
                || text.starts_with("help: ")
                || text.starts_with("note: ")
            {
                if let Some(d) = found.last_mut() {
                    extend(d, number);
                }
                return true;
            }
            self.in_frame = false;
        }
        if text.starts_with("Found ") && text.ends_with(['.', ')']) && text.contains(" error")
            || text.starts_with("[*] ")
            || text == "All checks passed!"
        {
            return true;
        }
        if let Some(caps) = HEADLINE.captures(text) {
            let code = caps.name("code").or(caps.name("kind")).map_or("", |m| m.as_str());
            self.headline = Some((code.to_string(), caps["msg"].to_string(), number));
            return true;
        }
        if let Some(file) = text.strip_suffix(':').filter(|f| !f.is_empty() && !f.contains(char::is_whitespace)) {
            self.group = Some(file.to_string());
            return true;
        }
        if !text.contains(": ") {
            return false;
        }
        let Some(caps) = CONCISE.captures(text) else { return false };
        let (line, col) = (caps["line"].parse().ok(), caps["col"].parse().ok());
        let code = caps.name("code").or(caps.name("kind")).map_or("", |m| m.as_str());
        let d = at(Severity::Error, &caps["msg"], found.path(&caps["file"]), line, col, number).with_code(code);
        found.push(d);
        true
    }

    fn flush(&mut self, found: &mut Found) {
        if let Some(failure) = self.failure.take() {
            let d = failure.diagnostic(found);
            found.push(d);
        }
    }
}

impl Ruff {
    /// A line under a grouped file's `path:` line: a finding, or the blank line that ends the
    /// group (true), or anything else, which ends it too (false).
    fn grouped(&mut self, text: &str, number: u64, found: &mut Found) -> bool {
        if text.trim().is_empty() {
            self.group = None;
            return true;
        }
        let Some(caps) = GROUPED.captures(text) else {
            self.group = None;
            return false;
        };
        let file = found.path(self.group.as_deref().unwrap_or_default());
        let (line, col) = (caps["line"].parse().ok(), caps["col"].parse().ok());
        let code = caps.name("code").or(caps.name("kind")).map_or("", |m| m.as_str());
        found.push(at(Severity::Error, &caps["msg"], file, line, col, number).with_code(code));
        true
    }
}

#[cfg(test)]
mod tests {
    use crate::parse::testing::{brief, parse};

    /// ruff 0.17.6, `ruff check .` (the default, full output).
    const FULL: &str = "\
F401 [*] `os` imported but unused
 --> pkg/core.py:1:8
  |
1 | import os
  |        ^^
2 | import sys
3 | from typing import Optional
  |
help: Remove unused import: `os`
  |
  - import os
1 | import sys
  |

UP045 [*] Use `X | None` for type annotations
  --> pkg/core.py:14:38
   |
14 | def find(xs: list[str], key: str) -> Optional[str]:
   |                                      ^^^^^^^^^^^^^
15 |     for x in xs:
16 |         if x == key:
   |
help: Convert to `X | None`
   |
13 |
   - def find(xs: list[str], key: str) -> Optional[str]:
14 + def find(xs: list[str], key: str) -> str | None:
15 |     for x in xs:
   |

F841 Local variable `l` is assigned to but never used
 --> pkg/util.py:2:5
  |
1 | def f(x):
2 |     l = 1
  |     ^
3 |     if x == None:
4 |         return undefined_thing
  |
help: Remove assignment to unused variable `l`
  |
1 | def f(x):
  -     l = 1
2 |     if x == None:
  |
note: This is an unsafe fix and may change runtime behavior

F821 Undefined name `undefined_thing`
 --> pkg/util.py:4:16
  |
2 |     l = 1
3 |     if x == None:
4 |         return undefined_thing
  |                ^^^^^^^^^^^^^^^
5 |     return x
  |

Found 4 errors.
[*] 2 fixable with `--fix` (1 unsafe fix available with `--fix --unsafe-fixes`).
";

    #[test]
    fn reads_the_full_form() {
        let result = parse(&["ruff"], FULL, 1);
        assert_eq!(
            brief(&result),
            [
                "error pkg/core.py:1:8 `os` imported but unused [F401]",
                "error pkg/core.py:14:38 Use `X | None` for type annotations [UP045]",
                "error pkg/util.py:2:5 Local variable `l` is assigned to but never used [F841]",
                "error pkg/util.py:4:16 Undefined name `undefined_thing` [F821]",
            ]
        );
        assert_eq!(result.diagnostics[0].log_range.map(|r| (r.start, r.end)), Some((1, 13)), "the frame and help");
    }

    #[test]
    fn reads_the_concise_form() {
        let log = "\
pkg/util.py:2:5: F841 Local variable `l` is assigned to but never used
pkg/core.py:1:8: F401 [*] `os` imported but unused
Found 2 errors.
1 unsafe fix available with `--fix --unsafe-fixes`.
";
        assert_eq!(
            brief(&parse(&["ruff"], log, 1)),
            [
                "error pkg/util.py:2:5 Local variable `l` is assigned to but never used [F841]",
                "error pkg/core.py:1:8 `os` imported but unused [F401]",
            ]
        );
    }

    #[test]
    fn reads_syntax_errors() {
        let log = "\
invalid-syntax: Expected a parameter or the end of the parameter list
 --> bad.py:1:7
  |
1 | def f(:
  |       ^
2 |     pass
  |

Found 1 error.
";
        assert_eq!(
            brief(&parse(&["ruff"], log, 1)),
            ["error bad.py:1:7 Expected a parameter or the end of the parameter list [invalid-syntax]"]
        );
    }

    #[test]
    fn reads_the_grouped_form() {
        // ruff 0.17.6 `--output-format grouped`, with a syntax error in a second file.
        let log = "\
src/markupsafe/_native.py:
  1:8  F401 [*] `re` imported but unused
  4:54 B006 Do not use mutable data structures for argument defaults

bad.py:
  1:7 invalid-syntax: Expected a parameter or the end of the parameter list

Found 3 errors.
[*] 1 fixable with `--fix`.
";
        assert_eq!(
            brief(&parse(&["ruff"], log, 1)),
            [
                "error src/markupsafe/_native.py:1:8 `re` imported but unused [F401]",
                "error src/markupsafe/_native.py:4:54 Do not use mutable data structures for argument defaults [B006]",
                "error bad.py:1:7 Expected a parameter or the end of the parameter list [invalid-syntax]",
            ]
        );
    }

    #[test]
    fn reads_format_check_findings() {
        // ruff 0.17.6 `ruff format --check`.
        let log = "\
unformatted: File would be reformatted
   --> more_itertools/recipes.py:126:13
    |
125 |     \"\"\"
    -     if n < 0 :
126 +     if n < 0:
    |

1 file would be reformatted, 12 files already formatted
";
        assert_eq!(
            brief(&parse(&["ruff"], log, 1)),
            ["error more_itertools/recipes.py:126:13 File would be reformatted [unformatted]"]
        );
    }

    #[test]
    fn a_config_ruff_cannot_read_is_one_error_where_the_causes_point() {
        // ruff 0.17.6 with `line-length = "79"` in pyproject.toml.
        let log = "\
ruff failed
  Cause: Failed to parse /home/dev/src/demo/pyproject.toml
  Cause: TOML parse error at line 223, column 15
    |
223 | line-length = \"79\"
    |               ^^^^
invalid type: string \"79\", expected i64

";
        let result = parse(&["ruff"], log, 2);
        assert_eq!(brief(&result), ["error pyproject.toml:223:15 invalid type: string \"79\", expected i64"]);
        assert_eq!(result.diagnostics[0].notes.len(), 2);
        let selector = "ruff failed\n  Cause: Unknown rule selector `XYZ9` in `select` from the CLI\n";
        assert_eq!(
            brief(&parse(&["ruff"], selector, 2)),
            ["error - Unknown rule selector `XYZ9` in `select` from the CLI"]
        );
    }
}
