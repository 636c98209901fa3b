//! The last resort: `file:line[:col]: [severity:] message` from a tool no other format knows.
//!
//! Strict, for a line that merely holds colons must not become a diagnostic: the file is one
//! word with an extension (or a Makefile), never a URL or a number; with a severity word
//! (`error`, `warning`, `note`…) any such file passes, without one only a source file's
//! extension does (`example.com:8080: refused` is a host, not a file). A match without a
//! severity is an error when the run failed and a warning when it did not.

use super::{Found, at, int};
use buildvise_plugin_api::{Head, Recogniser, Severity, Text, Wants};
use regex::Regex;
use std::sync::LazyLock;

static LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)^(?P<file>(?:[A-Za-z]:[\\/])?[\w.\\/+-]*?(?:\.[A-Za-z][A-Za-z0-9]{0,7}|makefile|Dockerfile)):(?P<line>\d{1,7})(?::(?P<col>\d{1,5}))?:\s+(?:(?P<sev>fatal error|error|warning|warn|note|info|hint)\s*:\s*)?(?P<msg>\s*\S.*)$",
    )
    .expect("valid regex")
});

/// Extensions of files a tool points at without saying how serious the finding is.
const SOURCE_EXTENSIONS: &[&str] = &[
    "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "m", "mm", "go", "py", "pyi", "rs", "js", "mjs", "cjs", "ts", "tsx",
    "jsx", "vue", "svelte", "java", "kt", "kts", "scala", "rb", "php", "sh", "bash", "zsh", "swift", "cs", "fs", "lua",
    "pl", "pm", "ex", "exs", "erl", "hs", "ml", "mli", "zig", "nim", "dart", "sql", "proto", "tf", "yaml", "yml",
    "toml", "json", "xml", "html", "css", "scss", "md", "rst", "mk", "cmake",
];

pub(crate) struct Fallback;

impl Recogniser<Found> for Fallback {
    fn wants(&self) -> Wants {
        Wants::test(has_a_line_number)
    }

    fn feed(&mut self, line: &Text<'_>, found: &mut Found) -> bool {
        let (text, number) = (line.text, line.number);
        if text.contains("://") {
            return false;
        }
        let Some(caps) = LINE.captures(text) else { return false };
        let file = &caps["file"];
        let extension = file.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
        let severity = match caps.name("sev").map(|m| m.as_str().to_ascii_lowercase()) {
            Some(word) if word.contains("error") => Some(Severity::Error),
            Some(word) if word.starts_with("warn") => Some(Severity::Warning),
            Some(_) => Some(Severity::Info),
            None if extension.is_some_and(|e| SOURCE_EXTENSIONS.contains(&e.as_str())) => None,
            None => return false,
        };
        let (line, col) = (int(caps.name("line")), int(caps.name("col")));
        let d = at(severity.unwrap_or(Severity::Error), &caps["msg"], found.path(file), line, col, number);
        match severity {
            Some(_) => {
                found.push(d);
            }
            None => found.unsure.push(d),
        }
        true
    }
}

/// A colon followed by a digit somewhere, as in `file:12`.
fn has_a_line_number(head: &Head<'_>) -> bool {
    memchr::memchr_iter(b':', head.bytes).any(|colon| head.bytes.get(colon + 1).is_some_and(u8::is_ascii_digit))
}

#[cfg(test)]
mod tests {
    use crate::parse::testing::{brief, parse};

    #[test]
    fn reads_lines_of_the_common_shape() {
        // shellcheck 0.11.0 -f gcc, mypy 2.4.1, gcc 12.2.0 and go vet 1.19, read by this alone.
        let log = "\
deploy.sh:8:6: warning: x is referenced but not assigned. [SC2154]
pkg/core.py:21: error: Incompatible types in assignment (expression has type \"str\", variable has type \"int\")  [assignment]
needs_header.c:1:10: fatal error: missing.h: No such file or directory
vetpkg/v.go:6:2: fmt.Printf format %s has arg n of wrong type int
";
        assert_eq!(
            brief(&parse(&["fallback"], log, 1)),
            [
                "warning deploy.sh:8:6 x is referenced but not assigned. [SC2154]",
                "error pkg/core.py:21 Incompatible types in assignment (expression has type \"str\", variable has type \"int\")  [assignment]",
                "error needs_header.c:1:10 missing.h: No such file or directory",
                "error vetpkg/v.go:6:2 fmt.Printf format %s has arg n of wrong type int",
            ]
        );
        let passed = parse(&["fallback"], "vetpkg/v.go:6:2: fmt.Printf format %s has arg n of wrong type int\n", 0);
        assert_eq!(brief(&passed), ["warning vetpkg/v.go:6:2 fmt.Printf format %s has arg n of wrong type int"]);
    }

    #[test]
    fn lines_that_merely_hold_colons_are_not_diagnostics() {
        let log = "\
Error: Cannot find module 'x'
2024-05-01 12:30:45: starting build
12:30:45: done
Fetching https://example.com:443/path: 200 OK
see http://localhost:8080/status:1: ok
connecting to example.com:8080: connection refused
db.internal:5432: timeout
ERROR: 3 files failed
time: 0:01:02 elapsed
Makefile has 3 targets: all, test: ok
  at Object.<anonymous> (/app/x.js:10:5)
";
        assert!(parse(&["fallback"], log, 1).diagnostics.is_empty(), "{:?}", brief(&parse(&["fallback"], log, 1)));
    }
}
