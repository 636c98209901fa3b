//! GitLab Code Quality JSON: an array of issues, each with a description, check name,
//! fingerprint, severity and a location in the checkout, shown in the merge request.

use super::{Place, Problem, full_message, place, problems};
use crate::outcome::Finished;
use buildvise_plugin_api::Severity;
use serde_json::{Value, json};
use std::collections::HashMap;

pub(super) fn render(f: &Finished) -> String {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let issues: Vec<Value> = problems(f)
        .iter()
        // GitLab requires a path in the repository: a problem without a file (a failed test, a
        // linker error) or in a file outside the checkout (a system header a template error
        // points into) has no place in the diff, and the JUnit report carries it.
        .filter(|p| {
            p.diagnostic.file.as_deref().is_some_and(|file| matches!(place(file, &f.meta.cwd), Place::Checkout(_)))
        })
        .map(|p| issue(p, f, unique_fingerprint(&p.fingerprint, &mut seen)))
        .collect();
    serde_json::to_string_pretty(&issues).expect("a JSON value serialises") + "\n"
}

/// GitLab shows one issue per fingerprint, and buildvise's leave out the line (so that an error
/// keeps its identity as code moves): the second issue with one gets `-2` appended, and so on.
fn unique_fingerprint(fingerprint: &str, seen: &mut HashMap<String, usize>) -> String {
    let n = seen.entry(fingerprint.to_string()).or_default();
    *n += 1;
    match *n {
        1 => fingerprint.to_string(),
        n => format!("{fingerprint}-{n}"),
    }
}

fn issue(p: &Problem, f: &Finished, fingerprint: String) -> Value {
    let d = &*p.diagnostic;
    let path = d.file.as_deref().map(|file| place(file, &f.meta.cwd).path().to_string()).unwrap_or_default();
    json!({
        "description": full_message(d),
        "check_name": d.code.as_deref().or(d.test.as_deref()).unwrap_or(&f.meta.tool),
        "fingerprint": fingerprint,
        "severity": severity(d.severity),
        // `lines.begin` is required; a file without a line is placed at its first.
        "location": { "path": path, "lines": { "begin": d.line.filter(|&l| l >= 1).unwrap_or(1) } },
    })
}

/// Errors break the build and warnings do not; GitLab's scale has five steps for that one
/// difference, and `critical` sorts errors above every linter's `major`.
fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Error => "critical",
        Severity::Warning => "minor",
        _ => "info",
    }
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
    fn issues_have_the_required_fields_and_skip_problems_outside_the_checkout() {
        let issues: Vec<Value> = serde_json::from_str(&render(&sample())).unwrap();
        // Of the six problems, the warning in /usr/lib and the failed test without a file go.
        assert_eq!(issues.len(), 3);
        assert_eq!(issues[1]["location"], json!({ "path": "src/my file.rs", "lines": { "begin": 3 } }));
        assert_eq!(issues[2]["check_name"], "tests::it_adds");
        for issue in &issues {
            for key in ["description", "check_name", "fingerprint", "severity", "location"] {
                assert!(issue.get(key).is_some(), "{key} in {issue}");
            }
        }
    }

    #[test]
    fn repeated_fingerprints_are_made_unique() {
        let mut seen = HashMap::new();
        let got: Vec<String> = ["a", "b", "a", "a"].iter().map(|f| unique_fingerprint(f, &mut seen)).collect();
        assert_eq!(got, ["a", "b", "a-2", "a-3"]);
    }

    #[test]
    fn an_empty_run_is_an_empty_array() {
        assert_eq!(render(&empty()), "[]\n");
    }
}
