//! Hypothesis's minimal failing example, which it adds to the exception's `E` lines:
//!
//! ```text
//! E       Failing test case: test_clamp_low(
//! E           n=0,
//! E           lo=1,
//! E       )
//! ```
//!
//! Hypothesis 6.100 says `Falsifying example:` (`Falsifying explicit example:` for an
//! `@example`), later versions `Failing test case:` (`Failing explicit example:`). A short call
//! may stand on the header line itself.

use super::text::clip;

const LABELS: [&str; 4] =
    ["Falsifying example", "Falsifying explicit example", "Failing test case", "Failing explicit example"];

/// Lines of one example kept: a shrunk example is short; a huge one is cut.
const MAX_LINES: usize = 40;

#[derive(Debug, Default)]
pub struct Example {
    label: &'static str,
    /// The call's text after the test's name and `(`.
    args: String,
    lines: usize,
    done: bool,
}

impl Example {
    /// Starts an example at its header line (an `E` line's content), or None.
    pub fn start(content: &str) -> Option<Example> {
        let (label, call) = content.split_once(": ")?;
        let label = LABELS.iter().find(|l| **l == label)?;
        let (_, args) = call.split_once('(')?;
        let mut example = Example { label, ..Example::default() };
        example.push(args);
        Some(example)
    }

    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Takes the next `E` line's content; the example ends at the line closing the call.
    pub fn push(&mut self, content: &str) {
        let content = content.trim();
        let (text, closes) = match content.strip_suffix(')') {
            // A bare `)` at the start of a line only ever closes the call: inner values close
            // with `),` or `])`.
            Some(inner) if inner.is_empty() || self.lines == 0 => (inner, true),
            _ => (content, false),
        };
        self.lines += 1;
        if !text.is_empty() && self.args.len() < 400 {
            let opens_group = self.args.ends_with(['(', '[', '{']);
            if !self.args.is_empty() && !opens_group {
                self.args.push(' ');
            }
            self.args.push_str(text);
        }
        self.done = closes || self.lines >= MAX_LINES;
    }

    /// `Failing test case: n=0, lo=1`: the arguments, without the test's name.
    pub fn note(&self) -> String {
        let args = self.args.trim_end_matches(',').replace(", )", ")").replace(", ]", "]").replace(", }", "}");
        clip(&format!("{}: {args}", self.label))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(lines: &[&str]) -> Option<String> {
        let mut example = Example::start(lines[0])?;
        for line in &lines[1..] {
            assert!(!example.is_done(), "ended early at {line}");
            example.push(line);
        }
        assert!(example.is_done());
        Some(example.note())
    }

    // Hypothesis 6.170.15 and 6.100.0 under pytest 9.2.0, captured here.

    #[test]
    fn multi_line_calls() {
        assert_eq!(
            note(&["Failing test case: test_clamp_low(", "n=0,", "lo=1,", ")"]).as_deref(),
            Some("Failing test case: n=0, lo=1")
        );
        assert_eq!(
            note(&["Falsifying example: test_mean_within_bounds(", "xs=[],", ")"]).as_deref(),
            Some("Falsifying example: xs=[]")
        );
        assert_eq!(
            note(&["Falsifying explicit example: test_explicit_example(", "n=-1,", ")"]).as_deref(),
            Some("Falsifying explicit example: n=-1")
        );
    }

    #[test]
    fn nested_values_and_one_line_calls() {
        assert_eq!(
            note(&["Failing test case: test_pairs(", "pairs=[", "(0, 0),", "(0, 1),", "],", ")"]).as_deref(),
            Some("Failing test case: pairs=[(0, 0), (0, 1)]")
        );
        assert_eq!(note(&["Falsifying example: test_x(n=0)"]).as_deref(), Some("Falsifying example: n=0"));
        assert!(Example::start("Expected: 3").is_none());
        assert!(Example::start("Failing test case").is_none());
    }

    #[test]
    fn a_call_that_never_closes_ends_after_a_bound() {
        let mut example = Example::start("Failing test case: test_x(").expect("header");
        for _ in 0..MAX_LINES {
            example.push("x=1,");
        }
        assert!(example.is_done());
        assert!(example.note().len() <= 400 + "…".len());
    }
}
