//! Which lint a rustc or clippy diagnostic belongs to.
//!
//! The human output names a lint only in the first diagnostic of each lint per crate
//! (``= note: `#[warn(unused_variables)]` on by default``), in the `-D` notes of denied lints,
//! and in clippy's documentation link. Later diagnostics of the same lint carry no name, so the
//! parser remembers what it learned per headline shape and falls back on a table of the headlines
//! of rustc's warn-by-default and deny-by-default lints.

use regex::Regex;
use std::collections::HashMap;
use std::sync::LazyLock;

/// `= note: `#[warn(unused_imports)]` (part of `#[warn(unused)]`) on by default`, or the same
/// with `deny`/`forbid` and `implied by`.
static ATTRIBUTE_NOTE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^= note: `#\[(?:warn|deny|forbid|expect)\(([A-Za-z0-9_:]+)\)\]`").expect("valid regex")
});

/// `= note: `-D clippy::needless-return` implied by `-D warnings``.
static FLAG_NOTE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^= note: `-[DWF] ([A-Za-z0-9_:-]+)` implied by").expect("valid regex"));

/// `= help: to override `-D warnings` add `#[allow(unused_variables)]``.
static OVERRIDE_HELP: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^= help: to override .* add `#\[allow\(([A-Za-z0-9_:]+)\)\]`").expect("valid regex"));

/// Lint groups: an attribute naming one of these does not name the lint that fired.
const GROUPS: &[&str] = &[
    "warnings",
    "unused",
    "nonstandard_style",
    "future_incompatible",
    "let_underscore",
    "keyword_idents",
    "refining_impl_trait",
    "rust_2018_idioms",
    "rust_2018_compatibility",
    "rust_2021_compatibility",
    "rust_2024_compatibility",
    "clippy::all",
    "clippy::pedantic",
    "clippy::nursery",
    "clippy::restriction",
    "clippy::cargo",
    "clippy::complexity",
    "clippy::correctness",
    "clippy::perf",
    "clippy::style",
    "clippy::suspicious",
];

/// The lint a `= note:`/`= help:` body line names, given the line with its leading gutter removed.
pub(crate) fn from_note(body: &str) -> Option<String> {
    if !body.starts_with("= ") {
        return None;
    }
    if let Some(c) = ATTRIBUTE_NOTE.captures(body) {
        return Some(c[1].to_string());
    }
    if let Some(c) = FLAG_NOTE.captures(body) {
        return Some(c[1].replace('-', "_"));
    }
    OVERRIDE_HELP.captures(body).map(|c| c[1].to_string())
}

/// The clippy lint behind `= help: for further information visit …/rust-clippy/…#needless_return`,
/// which clippy prints on every occurrence.
pub(crate) fn from_clippy_link(body: &str) -> Option<String> {
    let link = body.strip_prefix("= help: for further information visit ")?;
    if !link.contains("rust-clippy/") {
        return None;
    }
    let (_, anchor) = link.rsplit_once('#')?;
    let anchor = anchor.trim();
    let valid = !anchor.is_empty() && anchor.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    valid.then(|| format!("clippy::{}", anchor.to_ascii_lowercase()))
}

/// True for notes that only state a lint's level or documentation: they are used to find the
/// lint's name and are not worth showing.
pub(crate) fn is_level_boilerplate(body: &str) -> bool {
    from_note(body).is_some()
        || body.starts_with("= help: for further information visit ")
        || body.starts_with("= note: requested on the command line with")
        || body.starts_with("note: the lint level is defined here")
}

/// A lint name written in a `#![deny(name)]` attribute, unless it is a group.
pub(crate) fn attribute_name(name: &str) -> Option<String> {
    let name = name.trim();
    let valid = !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':');
    (valid && !GROUPS.contains(&name)).then(|| name.to_string())
}

/// The headline with every `quoted` part blanked, so that `unused variable: `a`` and
/// `unused variable: `b`` share one shape.
pub(crate) fn shape(headline: &str) -> String {
    let mut out = String::with_capacity(headline.len());
    let mut quoted = false;
    for c in headline.chars() {
        if c == '`' {
            quoted = !quoted;
            out.push(c);
        } else if !quoted {
            out.push(c);
        }
    }
    out
}

/// How a headline is recognised in [`BUILTIN`].
enum Match {
    Prefix(&'static str),
    Contains(&'static str),
}

/// Headlines of rustc's lints that are on by default, most specific first. Clippy is absent: it
/// names its lint on every occurrence.
const BUILTIN: &[(Match, &str)] = &[
    (Match::Prefix("unused import"), "unused_imports"),
    (Match::Prefix("unused `#[macro_use]` import"), "unused_imports"),
    (Match::Prefix("unused variable"), "unused_variables"),
    (Match::Contains("is assigned to, but never used"), "unused_variables"),
    (Match::Prefix("variable does not need to be mutable"), "unused_mut"),
    (Match::Prefix("value assigned to "), "unused_assignments"),
    (Match::Prefix("value captured by "), "unused_assignments"),
    (Match::Contains("is never used"), "dead_code"),
    (Match::Contains("are never used"), "dead_code"),
    (Match::Contains("is never read"), "dead_code"),
    (Match::Contains("are never read"), "dead_code"),
    (Match::Contains("is never constructed"), "dead_code"),
    (Match::Contains("are never constructed"), "dead_code"),
    (Match::Contains("that must be used"), "unused_must_use"),
    (Match::Prefix("unused return value of "), "unused_must_use"),
    (Match::Prefix("unreachable pattern"), "unreachable_patterns"),
    (Match::Prefix("unreachable "), "unreachable_code"),
    (Match::Contains("should have a snake case name"), "non_snake_case"),
    (Match::Contains("should have an upper camel case name"), "non_camel_case_types"),
    (Match::Contains("should have an upper case name"), "non_upper_case_globals"),
    (Match::Prefix("unnecessary parentheses"), "unused_parens"),
    (Match::Prefix("unnecessary braces"), "unused_braces"),
    (Match::Prefix("unnecessary `unsafe` block"), "unused_unsafe"),
    (Match::Prefix("use of deprecated "), "deprecated"),
    (Match::Prefix("unused doc comment"), "unused_doc_comments"),
    (Match::Prefix("unused macro definition"), "unused_macros"),
    (Match::Prefix("unused label"), "unused_labels"),
    (Match::Prefix("unused attribute"), "unused_attributes"),
    (Match::Prefix("path statement"), "path_statements"),
    (Match::Prefix("comparison is useless due to type limits"), "unused_comparisons"),
    (Match::Prefix("literal out of range for "), "overflowing_literals"),
    (Match::Prefix("function cannot return without recursing"), "unconditional_recursion"),
    (Match::Prefix("denote infinite loops with"), "while_true"),
    (Match::Prefix("unexpected `cfg` condition"), "unexpected_cfgs"),
    (Match::Prefix("irrefutable "), "irrefutable_let_patterns"),
    (Match::Prefix("this arithmetic operation will overflow"), "arithmetic_overflow"),
    (Match::Prefix("this operation will panic at runtime"), "unconditional_panic"),
    (Match::Contains("reference to mutable static"), "static_mut_refs"),
    (Match::Prefix("trait objects without an explicit `dyn` are deprecated"), "bare_trait_objects"),
    (Match::Prefix("unknown lint: "), "unknown_lints"),
    (Match::Contains("has been stable since"), "stable_features"),
    (Match::Prefix("unnecessary trailing semicolon"), "redundant_semicolons"),
    (Match::Prefix("unnecessary trailing semicolons"), "redundant_semicolons"),
    (Match::Prefix("panic message is not a string literal"), "non_fmt_panics"),
    (Match::Prefix("non-local `impl` definition"), "non_local_definitions"),
    (Match::Prefix("ambiguous glob re-exports"), "ambiguous_glob_reexports"),
    (Match::Prefix("calls to `std::mem::drop` with a reference"), "dropping_references"),
    (Match::Prefix("calls to `std::mem::drop` with a value that implements `Copy`"), "dropping_copy_types"),
];

/// The built-in guess for a headline.
pub(crate) fn builtin(headline: &str) -> Option<&'static str> {
    BUILTIN.iter().find_map(|(m, lint)| {
        let hit = match m {
            Match::Prefix(p) => headline.starts_with(p),
            Match::Contains(c) => headline.contains(c),
        };
        hit.then_some(*lint)
    })
}

/// Lint names learned from this run's own notes, keyed by headline [`shape`].
#[derive(Default)]
pub(crate) struct LintMemory {
    learned: HashMap<String, String>,
}

impl LintMemory {
    pub(crate) fn learn(&mut self, headline: &str, lint: &str) {
        self.learned.entry(shape(headline)).or_insert_with(|| lint.to_string());
    }

    /// What this run taught about `headline`, else the built-in table's guess.
    pub(crate) fn recall(&self, headline: &str) -> Option<String> {
        self.learned_only(headline).or_else(|| builtin(headline).map(str::to_string))
    }

    /// Only what this run taught; used to fill in diagnostics seen before the lesson.
    pub(crate) fn learned_only(&self, headline: &str) -> Option<String> {
        if self.learned.is_empty() {
            return None;
        }
        self.learned.get(&shape(headline)).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_level_notes_flags_and_links() {
        assert_eq!(
            from_note("= note: `#[warn(unused_mut)]` (part of `#[warn(unused)]`) on by default").as_deref(),
            Some("unused_mut")
        );
        assert_eq!(
            from_note("= note: `#[deny(unused_variables)]` implied by `#[deny(unused)]`").as_deref(),
            Some("unused_variables")
        );
        assert_eq!(
            from_note("= note: `-D clippy::needless-return` implied by `-D warnings`").as_deref(),
            Some("clippy::needless_return")
        );
        assert_eq!(
            from_note("= help: to override `-D warnings` add `#[allow(dead_code)]`").as_deref(),
            Some("dead_code")
        );
        assert_eq!(from_note("= note: borrow occurs due to deref coercion"), None);
        assert_eq!(
            from_clippy_link(
                "= help: for further information visit https://example.org/rust-clippy/master/index.html#len_zero"
            )
            .as_deref(),
            Some("clippy::len_zero")
        );
        assert_eq!(from_clippy_link("= help: for further information visit https://example.org/other#x"), None);
    }

    #[test]
    fn shapes_blank_quoted_names() {
        assert_eq!(shape("unused variable: `seen`"), shape("unused variable: `total`"));
        assert_ne!(shape("field `a` is never read"), shape("function `a` is never used"));
    }

    #[test]
    fn learned_names_win_over_the_table() {
        let mut memory = LintMemory::default();
        assert_eq!(memory.recall("function `old` is never used").as_deref(), Some("dead_code"));
        assert_eq!(memory.recall("value assigned to `x` is never read").as_deref(), Some("unused_assignments"));
        assert_eq!(memory.recall("mismatched types"), None);
        memory.learn("this looks odd: `a`", "custom_lint");
        assert_eq!(memory.recall("this looks odd: `b`").as_deref(), Some("custom_lint"));
    }

    #[test]
    fn groups_are_not_lints() {
        assert_eq!(attribute_name("warnings"), None);
        assert_eq!(attribute_name("clippy::pedantic"), None);
        assert_eq!(attribute_name("dead_code").as_deref(), Some("dead_code"));
        assert_eq!(attribute_name("dead code"), None);
    }
}
