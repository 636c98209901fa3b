//! The `- Expected` / `+ Received` diff that Jest and Vitest print under a failed deep equality
//! (`toEqual`, `toStrictEqual`, `toMatchObject`, `toHaveBeenCalledWith`). When the difference is
//! one line each way (one property, one array item), that pair is the gist of the failure, and
//! the headline alone (`expected { …(2) } to deeply equal { …(2) }`) does not say it.
//!
//! ```text
//!     - Expected  - 1            Jest indents the block; Vitest does not
//!     + Received  + 1
//!
//!       Object {                 context: two spaces past the marker column
//!     -   "qty": 4,
//!     +   "qty": 3,
//!       }
//! ```
//!
//! The column of `- Expected` is the marker column: a context line holding `-5,` is not a change.

use buildvise_plugin_api::clip;

/// Longest side kept in a gist, in bytes: two sides stay under about 100 characters.
const MAX_SIDE: usize = 44;

/// A matcher's headline without the remark on which equality it used (`expect(received).toBe(expected)
/// // Object.is equality`, `expected 3 to deeply equal 4 // deep equality`): the matcher's name says
/// it already, and the remark costs tokens on every failure.
pub fn without_equality_remark(headline: &str) -> &str {
    match headline.rsplit_once(" // ") {
        Some((matcher, remark)) if remark.ends_with(" equality") && remark.len() < 40 => matcher,
        _ => headline,
    }
}

#[derive(Default)]
pub struct Diff {
    state: State,
    /// Where `-`/`+` stand on a change line.
    column: usize,
    removed: Vec<String>,
    added: Vec<String>,
    /// Context or change lines read: the blank line after them ends the diff.
    body_lines: usize,
}

#[derive(Default, PartialEq, Eq)]
enum State {
    #[default]
    Idle,
    /// `- Expected` read; `+ Received` must follow.
    Header,
    Body,
    Done,
}

impl Diff {
    /// Reads one line of a failure block, ANSI removed and indentation kept.
    pub fn feed(&mut self, text: &str) {
        let trimmed = text.trim();
        match self.state {
            State::Idle => {
                if trimmed.starts_with("- Expected") {
                    self.column = text.len() - text.trim_start().len();
                    self.state = State::Header;
                }
            }
            State::Header => {
                self.state = if trimmed.starts_with("+ Received") { State::Body } else { State::Idle };
            }
            State::Body if trimmed.is_empty() => {
                if self.body_lines > 0 {
                    self.state = State::Done;
                }
            }
            State::Body => {
                self.body_lines += 1;
                let rest = text.get(self.column..).unwrap_or_default();
                let side = match rest.as_bytes().first() {
                    Some(b'-') => &mut self.removed,
                    Some(b'+') => &mut self.added,
                    _ => return,
                };
                // Past a side's second line only "more than one" matters.
                if side.len() < 2 {
                    side.push(rest[1..].trim().trim_end_matches(',').to_string());
                }
            }
            State::Done => {}
        }
    }

    /// `(- "qty": 4, + "qty": 3)` when the diff changes one line each way (or adds or removes
    /// one), else None.
    pub fn gist(&self) -> Option<String> {
        if !matches!(self.state, State::Body | State::Done) || self.removed.len() > 1 || self.added.len() > 1 {
            return None;
        }
        let sides: Vec<String> = (self.removed.iter().map(|r| format!("- {}", clip(r, MAX_SIDE))))
            .chain(self.added.iter().map(|a| format!("+ {}", clip(a, MAX_SIDE))))
            .collect();
        (!sides.is_empty()).then(|| format!("({})", sides.join(", ")))
    }
}

#[cfg(test)]
mod tests {
    use super::{Diff, without_equality_remark};

    #[test]
    fn equality_remarks_are_dropped_and_nothing_else() {
        let jest = "expect(received).toBe(expected) // Object.is equality";
        assert_eq!(without_equality_remark(jest), "expect(received).toBe(expected)");
        assert_eq!(without_equality_remark("expected 'a' to be 'b' // Object.is equality"), "expected 'a' to be 'b'");
        assert_eq!(without_equality_remark("Error: GET http://x // retried"), "Error: GET http://x // retried");
    }

    fn gist(block: &str) -> Option<String> {
        let mut diff = Diff::default();
        block.lines().for_each(|l| diff.feed(l));
        diff.gist()
    }

    #[test]
    fn one_changed_property_is_the_gist() {
        let jest = "    expect(received).toEqual(expected) // deep equality\n\n    - Expected  - 1\n    + Received  + 1\n\n\
\x20     Object {\n        \"amount\": 16,\n    -   \"qty\": 4,\n    +   \"qty\": 3,\n        \"sku\": \"A-1\",\n      }\n\n\
\x20     1 | test('one prop', () => {\n    > 2 |   x\n";
        assert_eq!(gist(jest).as_deref(), Some("(- \"qty\": 4, + \"qty\": 3)"));
        let vitest = "- Expected\n+ Received\n\n  {\n    \"amount\": 16,\n-   \"qty\": 4,\n+   \"qty\": 3,\n    \"sku\": \"A-1\",\n  }\n\n ❯ tests/invoice.test.js:13:23\n";
        assert_eq!(gist(vitest).as_deref(), Some("(- \"qty\": 4, + \"qty\": 3)"));
        let strict = "    - Expected  - 0\n    + Received  + 1\n\n      Object {\n        \"a\": 1,\n    +   \"b\": undefined,\n      }\n";
        assert_eq!(gist(strict).as_deref(), Some("(+ \"b\": undefined)"));
    }

    #[test]
    fn bigger_diffs_and_context_dashes_are_no_gist() {
        let two = "    - Expected  - 2\n    + Received  + 2\n\n      Object {\n    -   \"a\": 2,\n    -   \"b\": 3,\n    +   \"a\": 1,\n    +   \"b\": 2,\n      }\n";
        assert_eq!(gist(two), None);
        let array =
            "    - Expected  - 1\n    + Received  + 1\n\n      Array [\n        -1,\n    -   5,\n    +   2,\n      ]\n";
        assert_eq!(gist(array).as_deref(), Some("(- 5, + 2)"));
        assert_eq!(gist("Expected: 35\nReceived: 40\n"), None);
    }

    #[test]
    fn long_sides_are_clipped() {
        let long = format!(
            "- Expected\n+ Received\n\n  {{\n-   \"msg\": \"{}\",\n+   \"msg\": \"{}\",\n  }}\n",
            "y".repeat(150),
            "x".repeat(150)
        );
        let g = gist(&long).expect("gist");
        assert!(g.chars().count() <= 100, "{g}");
        assert!(g.starts_with("(- \"msg\": \"yyy") && g.contains("…, + \"msg\": \"xxx"));
    }
}
