//! `cargo fmt --check`: rustfmt prints each region it would change as `Diff in PATH:LINE:` and a
//! diff whose lines start with ` ` (context), `-` or `+`. LINE is where the hunk's context
//! starts, so the first changed line is LINE plus the context lines before the first change.
//!
//! One diagnostic per file, at its first changed line: the fix is the same for every hunk
//! (run `cargo fmt`), so a hunk count says the rest. It is an error: `--check` fails the run
//! (exit 1) on it, which is what CI gates on.

use super::findings::Findings;
use buildvise_plugin_api::{Diagnostic, Recogniser, Text, Wants, relative_to};
use std::collections::HashMap;

struct File {
    path: String,
    first_line: u32,
    hunks: u32,
    start: u64,
    end: u64,
}

/// The hunk being read: its file's index, and the context lines before its first change.
struct Hunk {
    file: usize,
    line: u32,
    context: u32,
    changed: bool,
}

/// The recogniser of rustfmt's diffs: open while a hunk is being read.
#[derive(Default)]
pub(crate) struct FmtCheck {
    files: Vec<File>,
    index: HashMap<String, usize>,
    hunk: Option<Hunk>,
}

/// How a hunk's header starts.
const HEADER: &str = "Diff in ";

/// `Diff in /p/src/lib.rs:8:` (rustfmt 1.4.x and later) or `Diff in /p/src/lib.rs at line 8:`.
fn diff_header(text: &str) -> Option<(&str, u32)> {
    let rest = text.strip_prefix(HEADER)?.strip_suffix(':')?;
    let (path, line) = rest.rsplit_once(" at line ").or_else(|| rest.rsplit_once(':'))?;
    Some((path, line.parse().ok()?))
}

impl Recogniser<Findings> for FmtCheck {
    fn wants(&self) -> Wants {
        Wants::starts(&[HEADER])
    }

    fn is_open(&self) -> bool {
        self.hunk.is_some()
    }

    fn feed(&mut self, line: &Text<'_>, found: &mut Findings) -> bool {
        self.line(line.text, line.number, &found.cwd)
    }

    fn finish(&mut self, found: &mut Findings) {
        found.unformatted = std::mem::take(self).diagnostics();
    }
}

impl FmtCheck {
    /// True when the line was rustfmt's diff.
    fn line(&mut self, text: &str, number: u64, cwd: &str) -> bool {
        if let Some((path, line)) = diff_header(text) {
            let path = relative_to(path, cwd);
            let file = match self.index.get(&path) {
                Some(&i) => i,
                None => {
                    self.index.insert(path.clone(), self.files.len());
                    self.files.push(File { path, first_line: line, hunks: 0, start: number, end: number });
                    self.files.len() - 1
                }
            };
            self.files[file].hunks += 1;
            self.hunk = Some(Hunk { file, line, context: 0, changed: false });
            return true;
        }
        let Some(hunk) = &mut self.hunk else { return false };
        match text.chars().next() {
            Some(' ') | None => hunk.context += u32::from(!hunk.changed),
            Some('-' | '+') if !hunk.changed => {
                hunk.changed = true;
                let file = &mut self.files[hunk.file];
                let at = hunk.line.saturating_add(hunk.context);
                if file.hunks == 1 || at < file.first_line {
                    file.first_line = at;
                }
            }
            Some('-' | '+') => {}
            _ => {
                self.hunk = None;
                return false;
            }
        }
        self.files[hunk.file].end = number;
        true
    }

    fn diagnostics(self) -> Vec<Diagnostic> {
        self.files
            .into_iter()
            .map(|f| {
                let places = if f.hunks == 1 { "1 place".to_string() } else { format!("{} places", f.hunks) };
                Diagnostic::error(format!("not formatted ({places}); run cargo fmt"))
                    .with_location(f.path, Some(f.first_line), None)
                    .with_log_range(f.start, f.end)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_header_forms() {
        assert_eq!(diff_header("Diff in /p/src/lib.rs:8:"), Some(("/p/src/lib.rs", 8)));
        assert_eq!(diff_header("Diff in /p/src/lib.rs at line 8:"), Some(("/p/src/lib.rs", 8)));
        assert_eq!(diff_header("Diff in /p/src/lib.rs:x:"), None);
        assert_eq!(diff_header("Differences: 3"), None);
    }

    #[test]
    fn puts_each_file_at_its_first_changed_line() {
        let log = "Diff in /p/src/lib.rs:1:\n pub mod net;\n \n-pub fn add(a:i32,b:i32)->i32{\n+pub fn add(a: i32, b: i32) -> i32 {\n }\n\
                   Diff in /p/src/lib.rs:8:\n     a * 2\n }\n \n-pub fn  spaced( x: u8 ) -> u8 { x }\n+pub fn spaced(x: u8) -> u8 {\n \n\
                   Diff in /p/src/net/mod.rs:1:\n-pub fn port()->u16{8080}\n+pub fn port() -> u16 {\n";
        let mut check = FmtCheck::default();
        for (i, line) in log.lines().enumerate() {
            assert!(check.line(line, i as u64 + 1, "/p"), "{line}");
        }
        assert!(!check.line("error: something else", 99, "/p"));
        let found: Vec<_> =
            check.diagnostics().into_iter().map(|d| (d.file.unwrap(), d.line.unwrap(), d.message)).collect();
        assert_eq!(
            found,
            [
                ("src/lib.rs".to_string(), 3, "not formatted (2 places); run cargo fmt".to_string()),
                ("src/net/mod.rs".to_string(), 1, "not formatted (1 place); run cargo fmt".to_string()),
            ]
        );
    }
}
