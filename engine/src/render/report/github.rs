//! GitHub Actions workflow commands: one `::error`, `::warning` or `::notice` line per problem,
//! which the runner turns into an annotation on the pull request.

use super::{Problem, full_message, place, problems};
use crate::outcome::Finished;
use buildvise_plugin_api::{Diagnostic, Severity};

pub(super) fn render(f: &Finished) -> String {
    problems(f).iter().map(|p| line(p, f) + "\n").collect()
}

/// `::error file=F,line=L,col=C,endLine=E,title=T::message`, with only the properties known.
fn line(p: &Problem, f: &Finished) -> String {
    let d = &*p.diagnostic;
    let properties = properties(d, f).iter().map(|(k, v)| format!("{k}={}", escape_property(v))).collect::<Vec<_>>();
    let command = command(d.severity);
    match properties.is_empty() {
        true => format!("::{command}::{}", escape_data(&full_message(d))),
        false => format!("::{command} {}::{}", properties.join(","), escape_data(&full_message(d))),
    }
}

fn command(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        _ => "notice",
    }
}

/// The location, relative to the checkout so GitHub can place it in the diff, and a title: the
/// code, else the failed test's name. The end of the range is given only when the tool said it.
fn properties(d: &Diagnostic, f: &Finished) -> Vec<(&'static str, String)> {
    let mut props = Vec::new();
    if let Some(file) = &d.file {
        props.push(("file", place(file, &f.meta.cwd).path().to_string()));
        if let Some(line) = d.line.filter(|&l| l >= 1) {
            props.push(("line", line.to_string()));
            if let Some(col) = d.column.filter(|&c| c >= 1) {
                props.push(("col", col.to_string()));
            }
            if let Some(end) = d.end_line.filter(|&e| e >= line) {
                props.push(("endLine", end.to_string()));
                if let Some(end_col) = d.end_column.filter(|&c| c >= 1) {
                    props.push(("endColumn", end_col.to_string()));
                }
            }
        }
    }
    if let Some(title) = d.code.as_ref().or(d.test.as_ref()) {
        props.push(("title", title.clone()));
    }
    props
}

/// The message's escapes, as GitHub's toolkit writes them (`escapeData`).
fn escape_data(s: &str) -> String {
    s.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// A property's escapes: the message's, and `:` and `,`, which end a property (`escapeProperty`).
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::super::tests::{empty, sample};
    use super::*;

    #[test]
    fn the_sample_run() {
        insta::assert_snapshot!(render(&sample()));
    }

    #[test]
    fn one_line_per_problem_with_the_known_properties() {
        let out = render(&sample());
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 6);
        assert_eq!(
            lines[0],
            "::error file=src/lib.rs,line=16,col=9,title=E0308::mismatched types: expected `u32`, found `u64` <&> 100%25%0A\
             expected due to this, a: b"
        );
        assert_eq!(lines[1], "::error file=src/my file.rs,line=3,title=E0425::cannot find value `x`");
        assert!(lines[2].starts_with("::warning file=/usr/lib/rust/core.rs,line=1,col=5,endLine=2,endColumn=7,title="));
        assert!(lines[3].starts_with("::error file=src/lib.rs,line=40,title=tests%3A%3Ait_adds::assertion failed"));
        assert!(lines[3].contains("%0D%0Athen \"quoted\"%0Aleft: 6"));
        assert_eq!(lines[4], "::notice::could not compile `proj` due to 2 previous errors");
        assert_eq!(lines[5], "::error title=tests%3A%3Ait_hangs::test tests::it_hangs failed");
    }

    #[test]
    fn properties_escape_their_separators() {
        assert_eq!(escape_property("a:b,c%\n"), "a%3Ab%2Cc%25%0A");
        assert_eq!(escape_data("a:b,c%\r"), "a:b,c%25%0D");
    }

    #[test]
    fn an_empty_run_writes_nothing() {
        assert_eq!(render(&empty()), "");
    }
}
