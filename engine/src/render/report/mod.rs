//! Reports in the formats CI systems already read: SARIF 2.1.0 (code scanning), JUnit XML (test
//! reports), GitHub Actions workflow commands (pull-request annotations) and GitLab Code Quality
//! JSON. Each is a pure function of a [`Finished`] run, so `exec`, `parse` and `log` can all offer
//! them; `docs/reports.md` says what each holds and why.

mod github;
mod gitlab;
mod junit;
mod sarif;

use crate::history::fingerprint;
use crate::outcome::Finished;
use buildvise_plugin_api::{Diagnostic, Severity};
use std::borrow::Cow;
use std::str::FromStr;

/// A report format, named on the command line by [`Format::name`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Sarif,
    Junit,
    Github,
    Gitlab,
}

impl Format {
    pub const ALL: [Format; 4] = [Format::Sarif, Format::Junit, Format::Github, Format::Gitlab];

    /// The word that selects it: `sarif`, `junit`, `github` or `gitlab`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Sarif => "sarif",
            Format::Junit => "junit",
            Format::Github => "github",
            Format::Gitlab => "gitlab",
        }
    }
}

/// A format name that is none of the four; its message names them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown report format `{0}`: expected sarif, junit, github or gitlab")]
pub struct UnknownFormat(pub String);

impl FromStr for Format {
    type Err = UnknownFormat;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Format::ALL.into_iter().find(|f| f.name() == s).ok_or_else(|| UnknownFormat(s.to_string()))
    }
}

/// The run as a report in `format`. `tool_version` is buildvise's own version, which SARIF and
/// JUnit record as the producer. The text ends with a newline, except an empty GitHub report.
pub fn render_report(f: &Finished, format: Format, tool_version: &str) -> String {
    match format {
        Format::Sarif => sarif::render(f, tool_version),
        Format::Junit => junit::render(f, tool_version),
        Format::Github => github::render(f),
        Format::Gitlab => gitlab::render(f),
    }
}

/// One thing a report lists: a diagnostic, or a failed test the parser gave no diagnostic for
/// (so that every failed test is reported), with its fingerprint.
struct Problem<'a> {
    diagnostic: Cow<'a, Diagnostic>,
    fingerprint: String,
}

/// What the reports list, in order. The toolchain's own warnings and notices are left out: they
/// are about the machine, not the code under review, and answers count them apart for the same
/// reason. Its errors stay, since they may be why the run failed.
fn problems(f: &Finished) -> Vec<Problem<'_>> {
    let r = &f.result;
    // A saved log parsed outside a run has no stored fingerprints: they are computed the same way.
    let stored = r.fingerprints.len() == r.diagnostics.len();
    let mut list: Vec<Problem> = r
        .diagnostics
        .iter()
        .enumerate()
        .filter(|(_, d)| !d.toolchain || d.severity == Severity::Error)
        .map(|(i, d)| Problem {
            diagnostic: Cow::Borrowed(d),
            fingerprint: if stored { r.fingerprints[i].clone() } else { fingerprint::of(&f.meta.tool, d) },
        })
        .collect();
    for test in r.failed_tests.iter().filter(|t| !r.diagnostics.iter().any(|d| d.test.as_ref() == Some(t))) {
        list.push(Problem {
            diagnostic: Cow::Owned(Diagnostic::new(Severity::Error, format!("test {test} failed")).with_test(test)),
            fingerprint: fingerprint::of_test(&f.meta.tool, test),
        });
    }
    list
}

/// The message with its notes, one per line.
fn full_message(d: &Diagnostic) -> String {
    std::iter::once(d.message.as_str()).chain(d.notes.iter().map(String::as_str)).collect::<Vec<_>>().join("\n")
}

/// The command line of the run, quoted for a POSIX shell.
fn command_line(f: &Finished) -> String {
    super::shell_words(std::iter::once(&f.meta.program).chain(&f.meta.args))
}

/// Where a diagnostic's file is, as the reports need it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Place {
    /// Relative to the run's cwd (the checkout), with `/` separators.
    Checkout(String),
    /// An absolute path outside the cwd, as printed.
    Elsewhere(String),
}

impl Place {
    /// The path itself: relative when it can be, else absolute.
    fn path(&self) -> &str {
        match self {
            Place::Checkout(p) | Place::Elsewhere(p) => p,
        }
    }
}

/// Places `file` relative to `cwd`. Plugins already make paths under the cwd relative, but a
/// saved log parsed elsewhere, or a tool that prints absolute paths, may still give one.
fn place(file: &str, cwd: &str) -> Place {
    let windows = is_windows_absolute(file) || is_windows_absolute(cwd) || (file.contains('\\') && !file.contains('/'));
    let unify = |p: &str| if windows { p.replace('\\', "/") } else { p.to_string() };
    let (file, cwd) = (unify(file), unify(cwd));
    if !(file.starts_with('/') || is_windows_absolute(&file)) {
        return Place::Checkout(file.trim_start_matches("./").to_string());
    }
    let base = cwd.trim_end_matches('/');
    match file.strip_prefix(base).and_then(|rest| rest.strip_prefix('/')) {
        Some(rest) if !base.is_empty() && !rest.is_empty() => Place::Checkout(rest.to_string()),
        _ => Place::Elsewhere(file),
    }
}

/// `C:\x` or `C:/x`.
fn is_windows_absolute(path: &str) -> bool {
    let b = path.as_bytes();
    b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && (b[2] == b'\\' || b[2] == b'/')
}

/// `path` (with `/` separators) as a URI path: every byte but the unreserved ones and `/` is
/// percent-encoded (RFC 3986), which also keeps a `:` in a relative path from reading as a scheme.
fn uri_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// An absolute path as a `file://` URI: `/a b` is `file:///a%20b`, `C:\x\y.cs` is
/// `file:///C:/x/y.cs` (RFC 8089).
fn file_uri(path: &str) -> String {
    let path = if is_windows_absolute(path) { path.replace('\\', "/") } else { path.to_string() };
    match path.get(..2) {
        Some(drive) if is_windows_absolute(&path) => format!("file:///{drive}{}", uri_path(&path[2..])),
        _ => format!("file://{}", uri_path(&path)),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::outcome::RunResult;
    use crate::store::{RunMeta, RunStatus};
    use buildvise_plugin_api::TestSummary;

    pub(crate) fn meta(tool: &str, cwd: &str) -> RunMeta {
        let args = ["test", "--features", "a b"].map(String::from);
        let mut meta = RunMeta::starting("r1", tool, "cargo", &args, cwd);
        meta.started_ms = 1_764_355_200_000;
        meta.ended_ms = Some(1_764_355_203_250);
        meta.status = RunStatus::Exited;
        meta.exit_code = Some(101);
        meta
    }

    /// A run with a bit of everything: errors, a warning, a failed test with and one without a
    /// diagnostic, a diagnostic without a file, an absolute path and text that needs escaping.
    pub(crate) fn sample() -> Finished {
        let diagnostics = vec![
            Diagnostic::new(Severity::Error, "mismatched types: expected `u32`, found `u64` <&> 100%")
                .with_code("E0308")
                .with_location("src/lib.rs", Some(16), Some(9))
                .with_notes(vec!["expected due to this, a: b".into()]),
            Diagnostic::new(Severity::Error, "cannot find value `x`").with_code("E0425").with_location(
                "/home/dev/proj/src/my file.rs",
                Some(3),
                None,
            ),
            Diagnostic::new(Severity::Warning, "unused variable: `y`")
                .with_code("unused_variables")
                .with_location("/usr/lib/rust/core.rs", Some(1), Some(5))
                .with_end(Some(2), Some(7)),
            Diagnostic::new(Severity::Error, "assertion failed: left == right\r\nthen \"quoted\"")
                .with_test("tests::it_adds")
                .with_location("src/lib.rs", Some(40), None)
                .with_notes(vec!["left: 6".into(), "right: 7".into()]),
            Diagnostic::new(Severity::Info, "could not compile `proj` due to 2 previous errors"),
        ];
        let result = RunResult {
            success: false,
            diagnostics,
            summary: Some(TestSummary::new(3, 2, 1, 6)),
            failed_tests: vec!["tests::it_adds".into(), "tests::it_hangs".into()],
            ..RunResult::default()
        };
        Finished { meta: meta("cargo.test", "/home/dev/proj"), result }
    }

    pub(crate) fn empty() -> Finished {
        let mut meta = meta("cargo.build", "/home/dev/proj");
        meta.exit_code = Some(0);
        Finished { meta, result: RunResult { success: true, ..RunResult::default() } }
    }

    #[test]
    fn formats_parse_by_name_and_refuse_others_naming_the_four() {
        for f in Format::ALL {
            assert_eq!(f.name().parse::<Format>(), Ok(f));
        }
        let err = "xml".parse::<Format>().unwrap_err().to_string();
        assert_eq!(err, "unknown report format `xml`: expected sarif, junit, github or gitlab");
    }

    #[test]
    fn problems_add_failed_tests_without_a_diagnostic_and_compute_fingerprints() {
        let f = sample();
        let list = problems(&f);
        assert_eq!(list.len(), 6);
        assert_eq!(list[5].diagnostic.message, "test tests::it_hangs failed");
        assert_eq!(list[5].fingerprint, fingerprint::of_test("cargo.test", "tests::it_hangs"));
        assert_eq!(list[0].fingerprint, fingerprint::of("cargo.test", &f.result.diagnostics[0]));
    }

    #[test]
    fn problems_use_stored_fingerprints_and_leave_out_toolchain_notices() {
        let mut f = sample();
        f.result.diagnostics.truncate(1);
        f.result.diagnostics.push(Diagnostic::new(Severity::Warning, "npm warn config").from_toolchain());
        f.result.fingerprints = vec!["aaa".into(), "bbb".into()];
        f.result.failed_tests.clear();
        let list = problems(&f);
        assert_eq!(list.len(), 1);
        assert_eq!(list[0].fingerprint, "aaa");
    }

    #[test]
    fn places_are_relative_to_the_checkout_when_they_can_be() {
        let cwd = "/home/dev/proj";
        assert_eq!(place("src/a.rs", cwd), Place::Checkout("src/a.rs".into()));
        assert_eq!(place("./src/a.rs", cwd), Place::Checkout("src/a.rs".into()));
        assert_eq!(place("/home/dev/proj/src/a.rs", cwd), Place::Checkout("src/a.rs".into()));
        assert_eq!(place("/home/dev/project/a.rs", cwd), Place::Elsewhere("/home/dev/project/a.rs".into()));
        assert_eq!(place(r"C:\src\app\x\y.cs", r"C:\src\app"), Place::Checkout("x/y.cs".into()));
        assert_eq!(place(r"x\y.cs", "/home/dev/proj"), Place::Checkout("x/y.cs".into()));
        assert_eq!(place(r"D:\other\y.cs", r"C:\src\app"), Place::Elsewhere("D:/other/y.cs".into()));
    }

    #[test]
    fn uris_are_percent_encoded() {
        assert_eq!(uri_path("src/my file#1.rs"), "src/my%20file%231.rs");
        assert_eq!(uri_path("é"), "%C3%A9");
        assert_eq!(file_uri("/a b/c.rs"), "file:///a%20b/c.rs");
        assert_eq!(file_uri(r"C:\x\y z.cs"), "file:///C:/x/y%20z.cs");
    }

    #[test]
    fn every_format_renders_an_empty_run() {
        for format in Format::ALL {
            let out = render_report(&empty(), format, "0.1.0");
            match format {
                Format::Github => assert_eq!(out, ""),
                Format::Gitlab => assert_eq!(out, "[]\n"),
                Format::Sarif => assert!(serde_json::from_str::<serde_json::Value>(&out).is_ok()),
                Format::Junit => assert!(out.contains("tests=\"0\"")),
            }
        }
    }

    /// The run a captured case expects, built from its `case.json`: the parsers are not run here,
    /// so what is checked is that every format takes the corpus's paths, codes and messages.
    fn expected_run(case: &serde_json::Value) -> Finished {
        let text = |v: &serde_json::Value, key: &str| v[key].as_str().map(str::to_string);
        let number = |v: &serde_json::Value, key: &str| v[key].as_u64().map(|n| n as u32);
        let diagnostic = |severity: Severity, v: &serde_json::Value| {
            let mut d = Diagnostic::new(severity, text(v, "message_contains").unwrap_or_else(|| "problem".into()));
            d.code = text(v, "code");
            d.test = text(v, "test");
            if let Some(file) = text(v, "file") {
                d = d.with_location(file, number(v, "line"), number(v, "column"));
            }
            d
        };
        let expected = &case["expected"];
        let listed = |key: &str, severity: Severity| -> Vec<Diagnostic> {
            expected[key].as_array().into_iter().flatten().map(|v| diagnostic(severity, v)).collect()
        };
        let count = |key: &str| expected["summary"][key].as_u64().unwrap_or(0);
        let mut meta = meta(case["tool"].as_str().unwrap(), case["cwd"].as_str().unwrap());
        meta.exit_code = case["exit_code"].as_i64().map(|c| c as i32);
        let result = RunResult {
            success: case["success"].as_bool().unwrap_or(false),
            diagnostics: [listed("errors", Severity::Error), listed("warnings", Severity::Warning)].concat(),
            summary: expected["summary"]
                .is_object()
                .then(|| TestSummary::new(count("passed"), count("failed"), count("skipped"), count("total"))),
            failed_tests: expected["failed_tests"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|t| t.as_str().map(str::to_string))
                .collect(),
            ..RunResult::default()
        };
        Finished { meta, result }
    }

    #[test]
    fn every_format_renders_every_captured_case() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/cases");
        let mut rendered = 0;
        for toolchain in std::fs::read_dir(&root).unwrap() {
            for case in std::fs::read_dir(toolchain.unwrap().path()).unwrap() {
                let Ok(json) = std::fs::read_to_string(case.unwrap().path().join("case.json")) else { continue };
                let f = expected_run(&serde_json::from_str(&json).unwrap());
                for format in Format::ALL {
                    let out = render_report(&f, format, "0.1.0");
                    match format {
                        Format::Sarif | Format::Gitlab => {
                            assert!(serde_json::from_str::<serde_json::Value>(&out).is_ok())
                        }
                        Format::Github => assert!(out.lines().all(|l| l.starts_with("::"))),
                        Format::Junit => assert!(out.ends_with("</testsuites>\n")),
                    }
                }
                rendered += 1;
            }
        }
        assert!(rendered > 0, "no case under {}", root.display());
    }
}
