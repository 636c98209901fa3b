//! The answer to `log`: numbered lines of a stored run, a page at a time.
//!
//! ```text
//! lines 2-13 of 40
//! 2|error[E0308]: mismatched types
//! 3|  --> src/lib.rs:14:28
//! more: {"action":"log","runId":"bafotemu","startLine":14}
//! ```

use super::{Rendered, Surface, clip, log_call};
use crate::store::{LogReader, StoreError, StreamFilter};
use buildvise_plugin_api::{Stream, strip_ansi};
use serde::Serialize;
use std::fmt::Write;

/// Longest line shown; the rest of a longer line is counted, and `buildvise log --raw` prints it.
const LINE_CHARS: usize = 2000;
/// Most text one page carries, whatever the line count.
const PAGE_BYTES: usize = 64 * 1024;

/// What to show.
#[derive(Debug, Clone)]
pub struct LogQuery {
    /// 1-based; negative counts from the end (-1 is the last line).
    pub start: i64,
    /// Lines wanted; capped by `max_lines`.
    pub count: Option<u64>,
    pub stream: StreamFilter,
    pub grep: Option<regex::Regex>,
    pub max_lines: u32,
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
    more_chars: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Renders a page, or the grep matches from `start` on.
pub fn render_log(
    reader: &mut LogReader,
    run_id: &str,
    q: &LogQuery,
    surface: Surface,
) -> Result<Rendered, StoreError> {
    let total = reader.count(q.stream)?;
    let want = q.count.unwrap_or(u64::from(q.max_lines)).min(u64::from(q.max_lines)).max(1);
    let first = if q.start < 0 { total.saturating_sub(q.start.unsigned_abs()) } else { (q.start.max(1) as u64) - 1 };

    let mut picked = Vec::new();
    let mut next: Option<u64> = None;
    let mut bytes = 0usize;
    match &q.grep {
        None => {
            for line in reader.page(q.stream, first, want)? {
                bytes += line.bytes.len().min(LINE_CHARS * 4);
                picked.push(line);
                if bytes > PAGE_BYTES {
                    break;
                }
            }
            let shown_end = first + picked.len() as u64;
            if shown_end < total {
                next = Some(shown_end + 1);
            }
        }
        Some(re) => {
            let mut position = 0u64;
            reader.scan(q.stream, |line| {
                position += 1;
                if position <= first {
                    return true;
                }
                if picked.len() as u64 >= want || bytes > PAGE_BYTES {
                    next = Some(position);
                    return false;
                }
                let text = strip_ansi(&line.bytes);
                if re.is_match(&String::from_utf8_lossy(&text)) {
                    bytes += line.bytes.len().min(LINE_CHARS * 4);
                    picked.push(line);
                }
                true
            })?;
        }
    }

    let mut text = String::new();
    let stream_name = match q.stream {
        StreamFilter::Both => "",
        StreamFilter::Only(Stream::Stdout) => " (stdout)",
        StreamFilter::Only(Stream::Stderr) => " (stderr)",
    };
    match (&q.grep, picked.first(), picked.last()) {
        (Some(re), _, _) => {
            let _ = writeln!(text, "{} matching /{}/ of {total} lines{stream_name}", picked.len(), re.as_str());
        }
        (None, Some(a), Some(b)) => {
            let _ = writeln!(text, "lines {}-{} of {total}{stream_name}", a.number, b.number);
        }
        _ => {
            let _ = writeln!(text, "no lines (the log has {total}{stream_name})");
        }
    }
    let mut view = LogView {
        run_id: run_id.to_string(),
        total_lines: total,
        lines: Vec::new(),
        has_more: next.is_some(),
        next_start_line: next,
    };
    for line in picked {
        let clean = String::from_utf8_lossy(&strip_ansi(&line.bytes)).into_owned();
        let shown = clip(&clean, LINE_CHARS);
        let more_chars = clean.chars().count().saturating_sub(LINE_CHARS);
        let _ = writeln!(text, "{}|{shown}", line.number);
        if more_chars > 0 {
            let _ = writeln!(text, "  (+{more_chars} more characters)");
        }
        let stream =
            (q.stream == StreamFilter::Both).then_some(if line.stream == Stream::Stderr { "stderr" } else { "stdout" });
        view.lines.push(ViewLine { n: line.number, stream, text: shown.into_owned(), more_chars });
    }
    if let Some(n) = next {
        let grep = q.grep.as_ref().map(|r| r.as_str());
        let _ = writeln!(text, "more: {}", log_call(surface, run_id, Some(n as i64), q.count, grep));
    }
    Ok(Rendered { text, structured: serde_json::to_value(&view).unwrap_or_default() })
}
