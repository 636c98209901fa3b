//! `--message-format=json` streams: cargo writes one JSON object per line on stdout, and rustc's
//! diagnostics arrive as `compiler-message` objects with the rendered text, the spans and the
//! lint's name for every occurrence.

use super::block::names_the_fix;
use super::findings::Findings;
use super::lints;
use super::text::{MAX_MESSAGE, MAX_NOTE, MAX_NOTES, caret_label, clip, headline_with_label};
use buildvise_plugin_api::{
    Diagnostic, Recogniser, Severity, Text, Wants, is_absolute, relative_to, split_location, strip_ansi_str,
};
use serde::Deserialize;

/// The prefix cargo gives every diagnostic message (`reason` is serialised first).
const COMPILER_MESSAGE: &str = r#"{"reason":"compiler-message""#;

/// The prefix of each built (or fresh) unit: under `cargo test`, the list of what will run.
const COMPILER_ARTIFACT: &str = r#"{"reason":"compiler-artifact""#;

/// Every line of the stream is a JSON object.
pub(crate) const STARTS: &[&str] = &["{"];

/// The recogniser of the JSON stream. It takes every line that starts like an object, whatever
/// it holds: cargo's other messages, and a program's JSON, are nobody's diagnostics.
pub(crate) struct JsonMessages;

impl Recogniser<Findings> for JsonMessages {
    fn wants(&self) -> Wants {
        Wants::starts(STARTS)
    }

    fn feed(&mut self, line: &Text<'_>, found: &mut Findings) -> bool {
        let text = line.text;
        if found.reads.rustc
            && text.starts_with(COMPILER_MESSAGE)
            && let Some(d) = compiler_message(text.as_bytes(), line.number, &found.cwd)
        {
            found.diagnostics.push(d);
        } else if found.runs_tests()
            && text.starts_with(COMPILER_ARTIFACT)
            && let Some(target) = test_target(text.as_bytes(), found.doctests_expected)
        {
            found.test_targets.insert(target);
        }
        true
    }
}

#[derive(Deserialize)]
struct Artifact {
    package_id: String,
    target: ArtifactTarget,
    profile: ArtifactProfile,
}

#[derive(Deserialize)]
struct ArtifactTarget {
    kind: Vec<String>,
    name: String,
    #[serde(default)]
    doctest: bool,
}

#[derive(Deserialize)]
struct ArtifactProfile {
    #[serde(default)]
    test: bool,
}

/// What a `compiler-artifact` line will run under `cargo test`: a test binary (a unit built
/// with the test profile), or a library's doctests (its plain build, when it has doctests).
/// Keys tell targets apart, so a unit reported twice counts once.
fn test_target(line: &[u8], with_doctests: bool) -> Option<String> {
    let a: Artifact = serde_json::from_slice(line).ok()?;
    let kinds = a.target.kind.join(",");
    if a.profile.test {
        return Some(format!("test {} {kinds} {}", a.package_id, a.target.name));
    }
    let library = a.target.kind.iter().any(|k| matches!(k.as_str(), "lib" | "rlib" | "dylib" | "proc-macro"));
    (with_doctests && library && a.target.doctest).then(|| format!("doc {} {}", a.package_id, a.target.name))
}

#[derive(Deserialize)]
struct Envelope {
    message: Message,
}

#[derive(Deserialize)]
struct Message {
    message: String,
    level: String,
    #[serde(default)]
    code: Option<Code>,
    #[serde(default)]
    spans: Vec<Span>,
    #[serde(default)]
    children: Vec<Child>,
    #[serde(default)]
    rendered: Option<String>,
}

#[derive(Deserialize)]
struct Code {
    code: String,
}

#[derive(Deserialize)]
struct Span {
    file_name: String,
    line_start: u32,
    column_start: u32,
    line_end: u32,
    column_end: u32,
    is_primary: bool,
    #[serde(default)]
    label: Option<String>,
    #[serde(default)]
    expansion: Option<Box<Expansion>>,
}

#[derive(Deserialize)]
struct Expansion {
    span: Span,
}

#[derive(Deserialize)]
struct Child {
    message: String,
    level: String,
}

/// The diagnostic in one `compiler-message` line, or None for notes such as "Some errors have
/// detailed explanations" and for lines that are not valid JSON.
fn compiler_message(line: &[u8], number: u64, cwd: &str) -> Option<Diagnostic> {
    let envelope: Envelope = serde_json::from_slice(line).ok()?;
    let m = envelope.message;
    let severity = match m.level.as_str() {
        "error" | "error: internal compiler error" => Severity::Error,
        "warning" => Severity::Warning,
        _ => return None,
    };
    // rustc's messages never start blank; a stream cut or garbled elsewhere still names the level.
    let headline = m.message.lines().find(|l| !l.trim().is_empty()).unwrap_or(&m.level);
    let mut diag = Diagnostic::new(severity, clip(headline, MAX_MESSAGE)).with_log_range(number, number);
    diag.code = m.code.map(|c| c.code);

    let primary = m.spans.iter().find(|s| s.is_primary);
    // The rendered text shows where a person should look (the macro call site, not std's
    // macros.rs), so it wins over the primary span.
    let shown = m.rendered.as_deref().and_then(rendered_location);
    if let Some((file, line, column)) = shown {
        diag = diag.with_location(relative_to(&file, cwd), Some(line), column);
    } else if let Some(span) = primary.map(|s| call_site(s, cwd)) {
        diag = diag.with_location(relative_to(&span.file_name, cwd), Some(span.line_start), Some(span.column_start));
        diag.end_line = Some(span.line_end);
        diag.end_column = Some(span.column_end);
    }

    let label = primary.and_then(|s| s.label.as_deref()).map(|l| clip(l, MAX_NOTE));
    let children = m
        .children
        .iter()
        .filter(|c| c.level == "note" || c.level == "help")
        .map(|c| format!("{}: {}", c.level, c.message))
        .filter(|note| !lints::is_level_boilerplate(note) && !lints::is_level_boilerplate(&format!("= {note}")))
        .map(|note| clip(&note, MAX_NOTE));
    if let Some(label) = &label
        && names_the_fix(&diag)
        && let Some(message) = headline_with_label(&diag.message, label)
    {
        diag.message = message;
    }
    diag.notes = label.into_iter().chain(children).take(MAX_NOTES).collect();
    Some(diag)
}

/// Follows macro expansions out of files that are not the project's (std's `macros.rs`).
fn call_site<'a>(mut span: &'a Span, cwd: &str) -> &'a Span {
    while is_foreign(&span.file_name, cwd)
        && let Some(expansion) = &span.expansion
    {
        span = &expansion.span;
    }
    span
}

fn is_foreign(file: &str, cwd: &str) -> bool {
    file.starts_with('<') || (is_absolute(file) && is_absolute(&relative_to(file, cwd)))
}

/// The location the rendered text points at: its first ` --> ` line, or the prefix of the
/// short form `src/a.rs:1:5: warning: …`.
fn rendered_location(rendered: &str) -> Option<(String, u32, Option<u32>)> {
    let rendered = strip_ansi_str(rendered);
    let mut lines = rendered.lines();
    let first = lines.next()?;
    if let Some(location) = first.split(": ").next().filter(|l| l.ends_with(|c: char| c.is_ascii_digit()))
        && let Some((file, line, column)) = split_location(location)
        && (first.contains(": warning") || first.contains(": error"))
    {
        return Some((file.to_string(), line, column));
    }
    for line in lines {
        if line.starts_with("note:") || line.starts_with("help:") {
            return None;
        }
        if let Some(location) = line.trim_start().strip_prefix("--> ") {
            let (file, line, column) = split_location(location.trim())?;
            return Some((file.to_string(), line, column));
        }
        if caret_label(line).is_some() {
            return None;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const WARNING: &str = r#"{"reason":"compiler-message","package_id":"x","message":{"rendered":"warning: unused variable: `n`\n --> crates/core/src/lib.rs:4:9\n  |\n4 |     let n = 1;\n  |         ^ help: prefix it\n  |\n  = note: `#[warn(unused_variables)]` (part of `#[warn(unused)]`) on by default\n\n","children":[{"children":[],"code":null,"level":"note","message":"`#[warn(unused_variables)]` (part of `#[warn(unused)]`) on by default","rendered":null,"spans":[]}],"level":"warning","message":"unused variable: `n`","spans":[{"byte_end":1,"byte_start":0,"column_end":10,"column_start":9,"expansion":null,"file_name":"crates/core/src/lib.rs","is_primary":true,"label":null,"line_end":4,"line_start":4,"suggested_replacement":null,"suggestion_applicability":null,"text":[]}],"code":{"code":"unused_variables","explanation":null}}}"#;

    #[test]
    fn reads_a_lint_with_its_code() {
        let d = compiler_message(WARNING.as_bytes(), 7, "/w").expect("a diagnostic");
        assert_eq!(d.severity, Severity::Warning);
        assert_eq!(d.code.as_deref(), Some("unused_variables"));
        assert_eq!((d.file.as_deref(), d.line, d.column), (Some("crates/core/src/lib.rs"), Some(4), Some(9)));
        assert!(d.notes.is_empty(), "{:?}", d.notes);
    }

    #[test]
    fn follows_macro_expansions_out_of_std_without_rendered_text() {
        let line = r#"{"reason":"compiler-message","message":{"level":"warning","message":"unused result","code":{"code":"unused_must_use"},"spans":[{"file_name":"/rustc/abc/library/std/src/macros.rs","line_start":140,"column_start":1,"line_end":140,"column_end":5,"is_primary":true,"expansion":{"span":{"file_name":"src/main.rs","line_start":3,"column_start":5,"line_end":3,"column_end":20,"is_primary":false}}}],"children":[]}}"#;
        let d = compiler_message(line.as_bytes(), 1, "/w").expect("a diagnostic");
        assert_eq!((d.file.as_deref(), d.line, d.column), (Some("src/main.rs"), Some(3), Some(5)));
    }

    #[test]
    fn a_vague_error_carries_its_primary_label() {
        // cargo 1.95 `--message-format=json`, the explanation and the child's spans left out.
        let line = r#"{"reason":"compiler-message","package_id":"path+file:///home/dev/src/meter#meter@0.1.0","message":{"rendered":"error[E0308]: mismatched types\n  --> src/lib.rs:16:9\n   |\n15 |     pub fn kilos(&self) -> u32 {\n   |                            --- expected `u32` because of return type\n16 |         self.total / 1000\n   |         ^^^^^^^^^^^^^^^^^ expected `u32`, found `u64`\n","$message_type":"diagnostic","children":[{"children":[],"code":null,"level":"help","message":"you can convert a `u64` to a `u32` and panic if the converted value doesn't fit","rendered":null,"spans":[]}],"level":"error","message":"mismatched types","spans":[{"byte_end":278,"byte_start":261,"column_end":26,"column_start":9,"expansion":null,"file_name":"src/lib.rs","is_primary":true,"label":"expected `u32`, found `u64`","line_end":16,"line_start":16,"suggested_replacement":null,"suggestion_applicability":null,"text":[]},{"byte_end":250,"byte_start":247,"column_end":31,"column_start":28,"expansion":null,"file_name":"src/lib.rs","is_primary":false,"label":"expected `u32` because of return type","line_end":15,"line_start":15,"suggested_replacement":null,"suggestion_applicability":null,"text":[]}],"code":{"code":"E0308","explanation":null}}}"#;
        let d = compiler_message(line.as_bytes(), 1, "/home/dev/src/meter").expect("a diagnostic");
        assert_eq!(d.message, "mismatched types (expected `u32`, found `u64`)");
        assert_eq!((d.file.as_deref(), d.line, d.column), (Some("src/lib.rs"), Some(16), Some(9)));
        // A lint's label is a suggestion, not the missing half of its headline.
        let lint = compiler_message(WARNING.as_bytes(), 1, "/w").expect("a diagnostic");
        assert_eq!(lint.message, "unused variable: `n`");
    }

    #[test]
    fn artifacts_name_the_test_targets_to_run() {
        // `cargo test --message-format=json` 1.95, `profile` shortened to the field read.
        let lib = r#"{"reason":"compiler-artifact","package_id":"path+file:///home/dev/src/stops#stops@0.1.0","manifest_path":"/home/dev/src/stops/Cargo.toml","target":{"kind":["lib"],"crate_types":["lib"],"name":"stops","src_path":"/home/dev/src/stops/src/lib.rs","edition":"2021","doc":true,"doctest":true,"test":true},"profile":{"opt_level":"0","test":false},"features":[],"filenames":[],"executable":null,"fresh":true}"#;
        let api = r#"{"reason":"compiler-artifact","package_id":"path+file:///home/dev/src/stops#stops@0.1.0","manifest_path":"/home/dev/src/stops/Cargo.toml","target":{"kind":["test"],"crate_types":["bin"],"name":"api","src_path":"/home/dev/src/stops/tests/api.rs","edition":"2021","doc":false,"doctest":false,"test":true},"profile":{"opt_level":"0","test":true},"features":[],"filenames":[],"executable":"/home/dev/src/stops/target/debug/deps/api-34de49a7041412e0","fresh":true}"#;
        assert_eq!(
            test_target(lib.as_bytes(), true).as_deref(),
            Some("doc path+file:///home/dev/src/stops#stops@0.1.0 stops")
        );
        assert_eq!(test_target(lib.as_bytes(), false), None);
        assert!(test_target(api.as_bytes(), false).is_some_and(|k| k.starts_with("test ") && k.ends_with(" api")));
        assert_eq!(test_target(br#"{"reason":"compiler-artifact","target":{}}"#, true), None);
    }

    #[test]
    fn skips_failure_notes_and_garbage() {
        let note = r#"{"reason":"compiler-message","message":{"level":"failure-note","message":"Some errors have detailed explanations: E0063.","spans":[],"children":[],"code":null}}"#;
        assert!(compiler_message(note.as_bytes(), 1, "/w").is_none());
        assert!(compiler_message(br#"{"reason":"compiler-message","message":{"lev"#, 1, "/w").is_none());
        assert!(compiler_message(b"{\"reason\":\"compiler-message\",\xff}", 1, "/w").is_none());
    }

    #[test]
    fn reads_short_rendered_locations() {
        assert_eq!(
            rendered_location("src/a.rs:2:7: error[E0425]: cannot find value `x`\n"),
            Some(("src/a.rs".to_string(), 2, Some(7)))
        );
    }
}
