//! The report of a failed doctest example, inside its `[doctest] name` section.
//!
//! pytest prints the docstring's numbered source down to the failing example, then one of:
//! - `Expected:` and `Got:` blocks, each line indented by four spaces (`Expected nothing` and
//!   `Got nothing` when one side is empty);
//! - under `--doctest-report udiff|ndiff|cdiff`, `Differences (...):` and an indented diff;
//! - `UNEXPECTED EXCEPTION: ValueError(...)` and Python's traceback of it.
//!
//! The section closes with `path:line: DocTestFailure` (or `UnexpectedException`) at the
//! example's line; `--doctest-continue-on-failure` repeats the report for each failing example.

use super::text::clip;

/// The classes of the closing `path:line: Class` line of a doctest report.
pub const CLOSING_CLASSES: [&str; 2] = ["DocTestFailure", "UnexpectedException"];

/// Lines kept from one `Expected:`/`Got:` block: enough to find the first difference.
const MAX_LINES: usize = 200;

/// Longest expected or got text that stands in the headline whole.
const SHORT: usize = 100;

/// What the lines after a label belong to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Block {
    Expected,
    Got,
    Unified,
    Ndiff,
    /// A context diff: its `*** a,b ****` part shows the expected lines, `--- a,b ----` the output.
    Context {
        output_side: bool,
    },
}

#[derive(Debug, Default)]
pub struct Doctest {
    block: Option<Block>,
    /// An empty block is `nothing`.
    expected: Option<Vec<String>>,
    got: Option<Vec<String>>,
    /// The first line a diff removes from the expected output, and the first it adds.
    removed: Option<String>,
    added: Option<String>,
    exception: Option<String>,
}

impl Doctest {
    /// Reads the line if it belongs to a doctest report; true when it did.
    pub fn feed(&mut self, line: &str) -> bool {
        if let Some(block) = self.block {
            if let Some(content) = line.strip_prefix("    ") {
                self.block_line(block, content);
                return true;
            }
            self.block = None;
        }
        match line {
            "Expected:" => self.open(Block::Expected),
            "Got:" => self.open(Block::Got),
            "Expected nothing" => self.expected = Some(Vec::new()),
            "Got nothing" => self.got = Some(Vec::new()),
            _ if line.starts_with("Differences (") && line.ends_with("):") => {
                self.block = Some(if line.contains("unified diff") {
                    Block::Unified
                } else if line.contains("context diff") {
                    Block::Context { output_side: false }
                } else {
                    Block::Ndiff
                });
            }
            _ if line.starts_with("UNEXPECTED EXCEPTION: ") => self.exception = Some(clip(line)),
            _ => return false,
        }
        true
    }

    fn open(&mut self, block: Block) {
        self.block = Some(block);
        match block {
            Block::Expected => self.expected = Some(Vec::new()),
            _ => self.got = Some(Vec::new()),
        }
    }

    fn block_line(&mut self, block: Block, content: &str) {
        let (removed, added) = match block {
            Block::Expected | Block::Got => {
                let lines = if block == Block::Expected { &mut self.expected } else { &mut self.got };
                if let Some(lines) = lines.as_mut().filter(|l| l.len() < MAX_LINES) {
                    lines.push(clip(content));
                }
                return;
            }
            Block::Unified if content.starts_with("@@") => return,
            Block::Unified => (content.strip_prefix('-'), content.strip_prefix('+')),
            Block::Ndiff => (content.strip_prefix("- "), content.strip_prefix("+ ")),
            Block::Context { output_side } => {
                if content.starts_with("*** ") || content.starts_with("--- ") {
                    self.block = Some(Block::Context { output_side: content.starts_with("--- ") });
                    return;
                }
                let changed = content.strip_prefix("! ");
                if output_side {
                    (None, changed.or_else(|| content.strip_prefix("+ ")))
                } else {
                    (changed.or_else(|| content.strip_prefix("- ")), None)
                }
            }
        };
        if self.removed.is_none() {
            self.removed = removed.map(clip);
        }
        if self.added.is_none() {
            self.added = added.map(clip);
        }
    }

    /// The headline: what was expected and what came, or the unexpected exception.
    pub fn message(self) -> Option<String> {
        if let Some(exception) = self.exception {
            return Some(exception);
        }
        if let (Some(expected), Some(got)) = (&self.expected, &self.got) {
            return Some(compared(expected, got));
        }
        match (self.removed, self.added) {
            (Some(removed), Some(added)) => Some(format!("expected {removed}, got {added}")),
            (Some(removed), None) => Some(format!("missing output line: {removed}")),
            (None, Some(added)) => Some(format!("unexpected output line: {added}")),
            (None, None) => None,
        }
    }
}

/// `expected 300, got 301`; a short multi-line output joined with `⏎`; for long outputs, the
/// first line that differs.
fn compared(expected: &[String], got: &[String]) -> String {
    let joined = |lines: &[String]| if lines.is_empty() { "nothing".to_string() } else { lines.join("⏎") };
    let (e, g) = (joined(expected), joined(got));
    if e.len() <= SHORT && g.len() <= SHORT {
        return format!("expected {e}, got {g}");
    }
    let at = expected.iter().zip(got).take_while(|(e, g)| e == g).count();
    let line = |lines: &[String]| lines.get(at).map_or_else(|| "nothing".to_string(), |l| clip(l.trim()));
    format!("output line {}: expected {}, got {}", at + 1, line(expected), line(got))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(report: &str) -> Option<String> {
        let mut d = Doctest::default();
        for line in report.lines() {
            d.feed(line);
        }
        d.message()
    }

    // Reports below are pytest 9.2.0's (Python 3.11.7), captured here.

    #[test]
    fn one_line_values() {
        assert_eq!(message("Expected:\n    300\nGot:\n    301\n").as_deref(), Some("expected 300, got 301"));
        assert_eq!(
            message("Expected nothing\nGot:\n    'cleared'\n").as_deref(),
            Some("expected nothing, got 'cleared'")
        );
    }

    #[test]
    fn multi_line_values_are_joined_when_short() {
        let report = "Expected:\n    [('apple', 2),\n     ('pear', 1)]\nGot:\n    [('apple', 2)]\n";
        assert_eq!(message(report).as_deref(), Some("expected [('apple', 2),⏎ ('pear', 1)], got [('apple', 2)]"));
        let report = "Expected:\n    fig x1\n    kiwi x2\nGot:\n    fig x1\n    kiwi x3\n";
        assert_eq!(message(report).as_deref(), Some("expected fig x1⏎kiwi x2, got fig x1⏎kiwi x3"));
    }

    #[test]
    fn long_values_give_the_first_differing_line() {
        let rows = |last: &str| (1..30).map(|i| format!("    row {i:02} of the table\n")).collect::<String>() + last;
        let report = format!("Expected:\n{}Got:\n{}", rows("    end\n"), rows("    END\n"));
        assert_eq!(message(&report).as_deref(), Some("output line 30: expected end, got END"));
        let report = format!("Expected:\n{}Got:\n{}", rows(""), rows("    extra\n"));
        assert_eq!(message(&report).as_deref(), Some("output line 30: expected nothing, got extra"));
    }

    #[test]
    fn diff_reports() {
        let udiff = "Differences (unified diff with -expected +actual):\n    @@ -1,4 +1,4 @@\n     a 1\n     b 2\n\
                     \x20   -c 3\n    +c 9\n     d 4\n\n/p/m.py:4: DocTestFailure";
        assert_eq!(message(udiff).as_deref(), Some("expected c 3, got c 9"));
        let ndiff =
            "Differences (ndiff with -expected +actual):\n      a 1\n    - c 3\n    ?   ^\n    + c 9\n    ?   ^\n";
        assert_eq!(message(ndiff).as_deref(), Some("expected c 3, got c 9"));
        let cdiff = "Differences (context diff with expected followed by actual):\n    ***************\n\
                     \x20   *** 1,4 ****\n      a 1\n    ! c 3\n    --- 1,4 ----\n      a 1\n    ! c 9\n";
        assert_eq!(message(cdiff).as_deref(), Some("expected c 3, got c 9"));
        let added = "Differences (unified diff with -expected +actual):\n    @@ -1,3 +1,4 @@\n     a\n    +b\n";
        assert_eq!(message(added).as_deref(), Some("unexpected output line: b"));
    }

    #[test]
    fn unexpected_exception_and_other_lines() {
        let report = "UNEXPECTED EXCEPTION: ValueError(\"invalid literal for int() with base 10: ''\")";
        assert_eq!(message(report).as_deref(), Some(report));
        let mut d = Doctest::default();
        assert!(!d.feed("006     >>> parse_qty(\"\")"));
        assert!(d.feed("Expected:") && d.feed("    3") && !d.feed("") && !d.feed("    3"));
        assert_eq!(d.message(), None, "no Got block");
    }
}
