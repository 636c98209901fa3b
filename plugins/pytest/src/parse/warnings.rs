//! The `warnings summary` section: one warning diagnostic per (test, warning) pair.
//!
//! ```text
//! tests/test_api.py::test_a            <- one or more headers: node ids, `path:line` for
//! tests/test_api.py::test_b               collection time, or `path: 12 warnings` when grouped
//!   /abs/lib/api.py:9: DeprecationWarning: old() is deprecated
//!     warnings.warn("old() is deprecated", DeprecationWarning)
//!                                      <- blank line ends the entry
//! -- Docs: https://docs.pytest.org/...
//! ```

use super::text::{clip, is_dotted_identifier, split_location_line};
use buildvise_plugin_api::Diagnostic;

/// Headers kept per entry. pytest itself collapses more than nine into per-file counts.
const MAX_HEADERS: usize = 64;

#[derive(Debug, Default)]
pub struct WarningsBlock {
    headers: Vec<(String, u64)>,
    entry: Option<Entry>,
}

#[derive(Debug)]
struct Entry {
    file: Option<String>,
    line: Option<u32>,
    category: Option<String>,
    message: String,
    start: u64,
    end: u64,
}

impl WarningsBlock {
    pub fn feed(&mut self, text: &str, number: u64, out: &mut Vec<Diagnostic>) {
        if text.trim().is_empty() || text.starts_with("-- Docs:") {
            self.flush(out);
            return;
        }
        if !text.starts_with(char::is_whitespace) {
            if self.entry.is_some() {
                self.flush(out);
            }
            if self.headers.len() < MAX_HEADERS {
                self.headers.push((clip(text), number));
            }
            return;
        }
        match &mut self.entry {
            Some(entry) => entry.end = number,
            None if !text.starts_with("    ") => self.entry = Some(parse_entry(text.trim_start(), number)),
            None => {}
        }
    }

    /// Emits the pending entry: one diagnostic per header, or one without a test.
    pub fn flush(&mut self, out: &mut Vec<Diagnostic>) {
        let headers = std::mem::take(&mut self.headers);
        let Some(entry) = self.entry.take() else { return };
        let start = headers.first().map_or(entry.start, |(_, n)| *n);
        let tests = headers.iter().map(|(h, _)| test_of_header(h)).collect::<Vec<_>>();
        let tests = if tests.is_empty() { vec![None] } else { tests };
        for test in tests {
            let mut d = Diagnostic::warning(entry.message.clone()).with_log_range(start, entry.end);
            d.file = entry.file.clone();
            d.line = entry.line;
            d.code = entry.category.clone();
            d.test = test;
            out.push(d);
        }
    }
}

/// `/abs/path.py:9: Category: message`.
fn parse_entry(text: &str, number: u64) -> Entry {
    let mut entry = Entry { file: None, line: None, category: None, message: clip(text), start: number, end: number };
    if let Some((file, line, rest)) = split_location_line(text)
        && let Some((category, message)) = rest.trim_start().split_once(':')
        && is_dotted_identifier(category)
    {
        entry.file = Some(file.to_string());
        entry.line = Some(line);
        entry.category = Some(category.to_string());
        entry.message = clip(message.trim());
    }
    entry
}

/// The test a header names: node ids only; `path:line` and `path: N warnings` are not tests.
fn test_of_header(header: &str) -> Option<String> {
    (header.contains("::") && !header.ends_with(" warnings") && !header.ends_with(" warning"))
        .then(|| header.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Vec<Diagnostic> {
        let mut block = WarningsBlock::default();
        let mut out = Vec::new();
        for (i, line) in text.lines().enumerate() {
            block.feed(line, i as u64 + 1, &mut out);
        }
        block.flush(&mut out);
        out
    }

    #[test]
    fn grouped_headers_give_one_warning_per_test() {
        let out = read(
            "tests/test_io.py::test_read\ntests/test_io.py::test_write\n\
             \x20 /home/u/p/io_lib/files.py:31: DeprecationWarning: open_text() is deprecated\n\
             \x20   warnings.warn(\"open_text() is deprecated\", DeprecationWarning)\n\n\
             tests/test_io.py:12\n  /home/u/p/tests/test_io.py:12: PytestUnknownMarkWarning: Unknown pytest.mark.io - is this a typo?\n\
             \x20   @pytest.mark.io\n\n-- Docs: https://docs.pytest.org/en/stable/how-to/capture-warnings.html",
        );
        assert_eq!(out.len(), 3);
        assert_eq!(out[0].test.as_deref(), Some("tests/test_io.py::test_read"));
        assert_eq!(out[1].test.as_deref(), Some("tests/test_io.py::test_write"));
        assert_eq!(out[1].file.as_deref(), Some("/home/u/p/io_lib/files.py"));
        assert_eq!((out[1].line, out[1].code.as_deref()), (Some(31), Some("DeprecationWarning")));
        assert_eq!(out[1].message, "open_text() is deprecated");
        assert_eq!(out[1].log_range.map(|r| (r.start, r.end)), Some((1, 4)));
        assert_eq!((out[2].test.as_deref(), out[2].code.as_deref()), (None, Some("PytestUnknownMarkWarning")));
    }

    #[test]
    fn collapsed_counts_are_not_tests() {
        let out = read("tests/test_big.py: 14 warnings\n  /p/lib.py:3: UserWarning: noisy\n    warn('noisy')\n");
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].test.as_deref(), out[0].code.as_deref()), (None, Some("UserWarning")));
    }

    #[test]
    fn unparsable_entry_keeps_its_text() {
        let out = read("tests/t.py::test_a\n  something odd happened\n");
        assert_eq!((out[0].message.as_str(), out[0].file.as_deref()), ("something odd happened", None));
    }
}
