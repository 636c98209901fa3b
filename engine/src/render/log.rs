//! The answer to `log`: numbered lines of a stored run, a page at a time.
//!
//! ```text
//! lines 2-13 of 40
//! 2|error[E0308]: mismatched types
//! 3|  --> src/lib.rs:14:28
//! more: {"action":"log","runId":"bafotemu","startLine":14}
//! ```

use super::{LogSpan, Rendered, Surface, clip, log_call};
use crate::store::{LogLine, StreamFilter};
use buildvise_plugin_api::{Stream, strip_ansi};
use serde::Serialize;
use std::fmt::Write;

/// Longest line shown, in bytes; the rest of a longer line is counted, and `buildvise log --raw`
/// prints it.
pub const LINE_BYTES: usize = 2000;

/// A page of a stored log, as the caller selected it.
#[derive(Debug)]
pub struct LogPage<'a> {
    pub run_id: &'a str,
    pub stream: StreamFilter,
    /// Lines of the selected stream in the whole log.
    pub total: u64,
    pub lines: Vec<LogLine>,
    /// The 1-based position of the page's first line in the selected stream.
    pub first: u64,
    /// The pattern the lines matched, for a grep.
    pub grep: Option<&'a str>,
    /// Where the next page starts (1-based, in the selected stream), when there is more.
    pub next: Option<u64>,
    /// The count the caller asked for, repeated in the hint for the next page.
    pub count: Option<u64>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct LogView {
    run_id: String,
    total_lines: u64,
    lines: Vec<ViewLine>,
    has_more: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    next_start_line: Option<u64>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ViewLine {
    n: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream: Option<&'static str>,
    /// Clipped like the text answer: JSON is bounded too.
    text: String,
    #[serde(skip_serializing_if = "is_zero")]
    more_bytes: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Renders a page, or the grep matches of one.
pub fn render_log(page: LogPage<'_>, surface: Surface) -> Rendered {
    let LogPage { run_id, stream, total, lines: picked, first, grep, next, count } = page;
    let mut text = String::new();
    // A stream's page counts in that stream, while each line keeps its number in the whole log
    // (the one diagnostics and hints use): the header says which is which.
    let (name, numbering) = match stream {
        StreamFilter::Both => ("", ""),
        StreamFilter::Only(Stream::Stderr) => ("stderr ", "; numbered as in the whole log"),
        StreamFilter::Only(_) => ("stdout ", "; numbered as in the whole log"),
    };
    let last = first + (picked.len() as u64).saturating_sub(1);
    let _ = match (grep, picked.is_empty()) {
        (Some(re), _) => writeln!(text, "{} matching /{re}/ of {total} {name}lines{numbering}", picked.len()),
        (None, false) => writeln!(text, "{name}lines {first}-{last} of {total}{numbering}"),
        (None, true) => writeln!(text, "no lines (the log has {total} {name}lines)"),
    };
    let mut view = LogView {
        run_id: run_id.to_string(),
        total_lines: total,
        lines: Vec::new(),
        has_more: next.is_some(),
        next_start_line: next,
    };
    for line in picked {
        let clean = String::from_utf8_lossy(&strip_ansi(&line.bytes)).into_owned();
        let shown = clip(&clean, LINE_BYTES);
        let more_bytes = clean.len().saturating_sub(LINE_BYTES);
        let _ = writeln!(text, "{}|{shown}", line.number);
        if more_bytes > 0 {
            let _ = writeln!(text, "  (+{more_bytes} more bytes)");
        }
        let stream =
            (stream == StreamFilter::Both).then_some(if line.stream == Stream::Stderr { "stderr" } else { "stdout" });
        view.lines.push(ViewLine { n: line.number, stream, text: shown.into_owned(), more_bytes });
    }
    if let Some(n) = next {
        let span = LogSpan { start: Some(n as i64), count, stream, grep };
        let _ = writeln!(text, "more: {}", log_call(surface, run_id, span));
    }
    Rendered { text, structured: serde_json::to_value(&view).unwrap_or_default() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(stream: StreamFilter, grep: Option<&str>) -> LogPage<'_> {
        let lines = vec![
            LogLine { number: 4, stream: Stream::Stderr, bytes: b"error: one".to_vec() },
            LogLine { number: 9, stream: Stream::Stderr, bytes: b"error: two".to_vec() },
        ];
        LogPage { run_id: "bafotemu", stream, total: 6, lines, first: 2, grep, next: Some(4), count: Some(2) }
    }

    #[test]
    fn a_stream_page_counts_in_its_stream_and_its_hint_keeps_the_stream() {
        let text = render_log(page(StreamFilter::Only(Stream::Stderr), None), Surface::Mcp).text;
        assert_eq!(
            text,
            "stderr lines 2-3 of 6; numbered as in the whole log\n4|error: one\n9|error: two\n\
             more: {\"action\":\"log\",\"runId\":\"bafotemu\",\"stream\":\"stderr\",\"startLine\":4,\"lineCount\":2}\n"
        );
    }

    #[test]
    fn a_grep_hint_keeps_the_pattern_and_the_stream() {
        let text = render_log(page(StreamFilter::Only(Stream::Stderr), Some("error")), Surface::Cli).text;
        assert!(text.starts_with("2 matching /error/ of 6 stderr lines"), "{text}");
        assert!(
            text.ends_with("more: buildvise log bafotemu --stream stderr --start 4 --count 2 --grep error\n"),
            "{text}"
        );
    }
}
