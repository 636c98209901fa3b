//! Small text helpers shared by the format parsers.

/// Longest headline kept; a 10 MB line must not become a 10 MB message.
pub(crate) const MAX_MESSAGE: usize = 400;

/// Longest note kept.
pub(crate) const MAX_NOTE: usize = 240;

/// Most notes kept per diagnostic.
pub(crate) const MAX_NOTES: usize = 4;

/// Most indented lines (an assertion's `left:`/`right:`) kept under a panic message.
pub(crate) const PANIC_NOTES: usize = 3;

/// Longest panic message kept before a ` via file:line:col` suffix: answers show about 160
/// bytes of a message, and the caller's line must stay in view.
pub(crate) const MESSAGE_BEFORE_VIA: usize = 110;

/// `text` trimmed, then cut to at most `max` bytes by the shared [`buildvise_plugin_api::clip`].
pub(crate) fn clip(text: &str, max: usize) -> String {
    buildvise_plugin_api::clip(text.trim(), max).into_owned()
}

/// A line of a rustc code snippet: the `|` gutter (after an optional line number), `...`, or
/// the ` --> `/` ::: ` location lines.
pub(crate) fn is_snippet_line(line: &str) -> bool {
    let rest = line.trim_start().trim_start_matches(|c: char| c.is_ascii_digit()).trim_start();
    rest.starts_with('|') || rest.starts_with("-->") || rest.starts_with(":::") || rest == "..."
}

/// Longest primary label appended to a headline: the line must stay one short line.
pub(crate) const MAX_LABEL: usize = 60;

/// The label after the first caret run of a snippet line (`|  ^^^ expected `u32``), if any. A
/// numbered line is source code, whose `^` is an operator, not a caret.
pub(crate) fn caret_label(line: &str) -> Option<&str> {
    let (gutter, after_gutter) = line.split_once('|')?;
    if !gutter.trim().is_empty() {
        return None;
    }
    let start = after_gutter.find('^')?;
    let rest = after_gutter[start..].trim_start_matches('^');
    let label = after_underlines(rest.strip_prefix(' ')?).trim();
    (!label.is_empty()).then_some(label)
}

/// `text` after the underline runs that open it: when other spans share the caret's line, their
/// runs come first (`^^^ -----  --- expected `usize``) and the label follows the last of them.
/// A run is a word of `-` and `^` alone; a label that starts with a minus sign (`-1`) keeps it.
fn after_underlines(text: &str) -> &str {
    let mut rest = text.trim_start();
    loop {
        let word = rest.split(' ').next().unwrap_or_default();
        if word.is_empty() || !word.bytes().all(|b| b == b'-' || b == b'^') {
            return rest;
        }
        rest = rest[word.len()..].trim_start();
    }
}

/// `headline (label)` when the primary label says something the headline does not: a name or
/// type in backticks that the headline lacks (`mismatched types` + `expected `u32`, found `u64``).
/// Labels that only restate the headline (`not found in this scope`) add nothing and are left out.
pub(crate) fn headline_with_label(headline: &str, label: &str) -> Option<String> {
    let label = label.trim();
    let mut quoted = label.split('`').skip(1).step_by(2);
    if !quoted.any(|q| !q.is_empty() && !headline.contains(q)) {
        return None;
    }
    Some(format!("{headline} ({})", clip(label, MAX_LABEL)))
}

/// Longest headline that takes hints: about what an answer shows of a message, so that a hint
/// it gets is read whole, never cut; one that does not fit is left to the notes (`full`).
pub(crate) const MAX_LINE_WITH_HINTS: usize = 160;

/// Whether a rustc help says something `line` lacks, in few words: it quotes a name the line does
/// not (`help: there is a method `is_bits` with a similar name`), or quotes nothing and is an
/// instruction of at most three words (`help: swap these arguments`). Other helps point at the
/// snippet under them (`help: try using a conversion method`, `help: a local variable with a
/// similar name exists`) or restate the line's types (`help: you can convert an `i32` to an
/// `i64``): the notes keep them for `full`, and answers stay the size of what they say.
pub(crate) fn help_adds_to(line: &str, help: &str) -> bool {
    let text = help.strip_prefix("help: ").unwrap_or(help);
    let mut quoted = text.split('`').skip(1).step_by(2).filter(|q| !q.is_empty()).peekable();
    if quoted.peek().is_none() {
        return text.split_whitespace().count() <= 3;
    }
    quoted.any(|q| !line.contains(q))
}

/// Longest hint added to a headline. Longer ones are sentences that mostly restate the error
/// (`help: you can convert a `u32` to a `usize` and panic if the converted value doesn't fit`,
/// 87 bytes, under every E0308 between integers): the notes keep them for `full`.
pub(crate) const MAX_HINT: usize = 72;

/// `headline; help: …; tip: …` with as many of `hints` as fit in [`MAX_LINE_WITH_HINTS`], in
/// order, each at most [`MAX_HINT`] long; None when none fits.
pub(crate) fn headline_with_hints(headline: &str, hints: &[String]) -> Option<String> {
    let mut line = headline.to_string();
    for hint in hints.iter().filter(|h| h.len() <= MAX_HINT) {
        if line.len() + 2 + hint.len() <= MAX_LINE_WITH_HINTS {
            line.push_str("; ");
            line.push_str(hint);
        }
    }
    (line.len() > headline.len()).then_some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clips_on_char_boundaries() {
        assert_eq!(clip("  short ", 10), "short");
        assert_eq!(clip("ééééé", 3), "é…");
    }

    #[test]
    fn reads_snippets_and_labels() {
        assert!(is_snippet_line("12 |     let x = 1;"));
        assert!(is_snippet_line("   |         ^ help"));
        assert!(is_snippet_line("  ::: src/a.rs:1:1"));
        assert!(!is_snippet_line("   = note: x"));
        assert_eq!(caret_label("   |     ^^^^ expected `u32`, found `i64`"), Some("expected `u32`, found `i64`"));
        assert_eq!(caret_label("   |     ----- value moved here"), None);
        assert_eq!(caret_label("   |     ^^^^"), None);
        assert_eq!(caret_label("16 |     a ^ b"), None);
        // itoa's and hex's swapped arguments: secondary runs stand between the caret run and
        // the label.
        assert_eq!(
            caret_label(
                "    |             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ --------  --- expected `u64`, found `&mut \
                 [MaybeUninit<u8>; 39]`"
            ),
            Some("expected `u64`, found `&mut [MaybeUninit<u8>; 39]`")
        );
        assert_eq!(
            caret_label(
                "    |                    ^^^ -----  ------------------------- expected `usize`, found `&[u8]`"
            ),
            Some("expected `usize`, found `&[u8]`")
        );
        assert_eq!(caret_label("    |                       ^^^^^^^^^^^^^^^------"), None);
        assert_eq!(caret_label("  |     ^^ -1 is out of range"), Some("-1 is out of range"));
    }

    #[test]
    fn a_help_joins_when_it_says_what_the_line_lacks() {
        assert!(help_adds_to(
            "no method named `is_bit` found",
            "help: there is a method `is_bits` with a similar name"
        ));
        assert!(help_adds_to("arguments to this function are incorrect", "help: swap these arguments"));
        assert!(help_adds_to("no field `x` on type `S`", "help: available field is: `ident`"));
        assert!(!help_adds_to(
            "mismatched types (expected `String`, found `&str`)",
            "help: try using a conversion method"
        ));
        assert!(!help_adds_to(
            "cannot find value `totl` in this scope",
            "help: a local variable with a similar name exists"
        ));
        assert!(!help_adds_to(
            "mismatched types (expected `i64`, found `i32`)",
            "help: you can convert an `i32` to an `i64`"
        ));
        // The headline names the type; where to import it from is in the snippet below.
        assert!(!help_adds_to("cannot find type `HashMap` in this scope", "help: consider importing this struct"));
    }

    #[test]
    fn hints_join_the_headline_while_the_line_stays_whole() {
        let hints = |lines: &[&str]| lines.iter().map(|l| l.to_string()).collect::<Vec<_>>();
        // hex's swapped arguments.
        assert_eq!(
            headline_with_hints(
                "arguments to this function are incorrect (expected `usize`, found `&[u8]`)",
                &hints(&["help: swap these arguments"])
            )
            .as_deref(),
            Some(
                "arguments to this function are incorrect (expected `usize`, found `&[u8]`); help: swap these arguments"
            )
        );
        // cargo's two tips for a libtest flag given to cargo: both fit.
        let tips = hints(&[
            "tip: a similar argument exists: '--features'",
            "tip: to pass '--nocapture' as a value, use '-- --nocapture'",
        ]);
        let line = headline_with_hints("unexpected argument '--nocapture' found", &tips).unwrap();
        assert!(line.ends_with("'--features'; tip: to pass '--nocapture' as a value, use '-- --nocapture'"), "{line}");
        // itoa's conversion help is a sentence longer than a hint.
        let long = hints(&["help: you can convert a `u128` to a `u64` and panic if the converted value doesn't fit"]);
        assert_eq!(headline_with_hints("mismatched types (expected `u64`, found `u128`)", &long), None);
        // A hint that would push the line past what an answer shows waits for `full`.
        let headline = "x".repeat(MAX_LINE_WITH_HINTS - 20);
        assert_eq!(headline_with_hints(&headline, &hints(&["help: swap these arguments"])), None);
    }

    #[test]
    fn labels_join_the_headline_only_when_they_add_to_it() {
        assert_eq!(
            headline_with_label("mismatched types", "expected `u32`, found `u64`").as_deref(),
            Some("mismatched types (expected `u32`, found `u64`)")
        );
        assert_eq!(headline_with_label("cannot find value `x` in this scope", "not found in this scope"), None);
        assert_eq!(headline_with_label("no method named `f` found for struct `S`", "method not found in `S`"), None);
        let long = headline_with_label("mismatched types", &format!("expected `{}`", "A".repeat(100))).unwrap();
        assert!(long.len() < "mismatched types ()".len() + MAX_LABEL + 4, "{long}");
    }
}
