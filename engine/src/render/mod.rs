//! Turning results into what an agent or a person reads. One renderer serves the MCP server and
//! the CLI, so `buildvise exec` shows exactly what an agent gets; only the wording of hints (a
//! tool call or a command line) differs by [`Surface`].
//!
//! Every response is a compact text (what models read) plus the same information as JSON
//! (`structuredContent`, `--json`).
//!
//! Reports for CI ([`render_report`]) are the exception: one document in a standard format
//! (SARIF, JUnit XML, GitHub workflow commands, GitLab Code Quality) for programs that read it.

mod exec;
mod gain;
mod history;
mod list;
mod log;
mod report;

pub use exec::{ExecView, Tail, needs_tail, render_exec};
pub use gain::{GainStyle, render_gain};
pub use history::{render_diff, render_runs};
pub use list::{NO_PLUGIN, PluginTrouble, render_list};
pub use log::{LINE_BYTES, LogPage, render_log};
pub use report::{Format, UnknownFormat, render_report};

use crate::store::StreamFilter;
use buildvise_plugin_api::{Stream, clip};
use serde::Serialize;

/// How much an exec answer says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Detail {
    /// Status, counts, counts per file; no messages.
    Summary,
    /// Every error as one line, warnings capped, test summary, a hint.
    #[default]
    Standard,
    /// Every diagnostic with notes and log ranges, plus the last lines of output.
    Full,
}

/// Who reads the hints: an MCP client (hints are tool-call arguments) or a terminal user (hints
/// are command lines).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    Mcp,
    Cli,
}

/// How an exec answer's hints are worded: for which surface, and whether there is a stored run
/// to point them at (`parse` answers for a log file that is no run).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hints {
    pub surface: Surface,
    pub stored: bool,
}

/// A response: text for reading, JSON for programs.
#[derive(Debug, Clone)]
pub struct Rendered {
    pub text: String,
    pub structured: serde_json::Value,
}

/// Where a `log` call starts and what it selects.
#[derive(Debug, Clone, Copy, Default)]
struct LogSpan<'a> {
    start: Option<i64>,
    count: Option<u64>,
    stream: StreamFilter,
    grep: Option<&'a str>,
}

/// A call that pages the log, worded for the surface.
fn log_call(surface: Surface, run_id: &str, span: LogSpan<'_>) -> String {
    let LogSpan { start, count, stream, grep } = span;
    let stream = match stream {
        StreamFilter::Both => None,
        StreamFilter::Only(Stream::Stderr) => Some("stderr"),
        StreamFilter::Only(_) => Some("stdout"),
    };
    match surface {
        Surface::Mcp => {
            let mut call = format!("{{\"action\":\"log\",\"runId\":\"{run_id}\"");
            if let Some(s) = stream {
                call.push_str(&format!(",\"stream\":\"{s}\""));
            }
            if let Some(s) = start {
                call.push_str(&format!(",\"startLine\":{s}"));
            }
            if let Some(c) = count {
                call.push_str(&format!(",\"lineCount\":{c}"));
            }
            if let Some(g) = grep {
                call.push_str(&format!(",\"grep\":{}", serde_json::Value::from(g)));
            }
            call.push('}');
            call
        }
        Surface::Cli => {
            let mut call = format!("buildvise log {run_id}");
            if let Some(s) = stream {
                call.push_str(&format!(" --stream {s}"));
            }
            if let Some(s) = start {
                call.push_str(&format!(" --start {s}"));
            }
            if let Some(c) = count {
                call.push_str(&format!(" --count {c}"));
            }
            if let Some(g) = grep {
                call.push_str(&format!(" --grep {}", shell_words([&g.to_string()])));
            }
            call
        }
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Quotes words for display the way a POSIX shell would need them.
pub fn shell_words<'a>(words: impl IntoIterator<Item = &'a String>) -> String {
    words
        .into_iter()
        .map(|w| {
            if !w.is_empty() && w.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./=:@,+%".contains(&b)) {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
