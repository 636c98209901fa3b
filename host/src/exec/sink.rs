//! Where a run's lines go: the stored log (byte for byte) and the plugin's parser (ANSI
//! stripped), plus periodic flushes and progress reports.

use crate::plugins::ParserHandle;
use crate::run::LineSink;
use crate::store::LogWriter;
use buildvise_plugin_api::{Stream, strip_ansi};
use std::time::{Duration, Instant};

/// Longest prefix of a line a parser sees. Headlines are short; a multi-megabyte line is data
/// (a minified bundle, a JSON report) and is stored whole but parsed only this far.
pub(crate) const PARSE_LIMIT: usize = 4 << 20;
const FLUSH_EVERY: Duration = Duration::from_millis(200);
const PROGRESS_EVERY: Duration = Duration::from_millis(500);
const ACTIVITY_CHARS: usize = 100;

/// What a running exec reports now and then.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Progress {
    pub lines: u64,
    pub errors: u64,
    pub warnings: u64,
    pub tests: u64,
    /// What the tool is doing now: the parser's word, else the last line printed.
    pub activity: String,
}

impl Progress {
    /// `1532 lines, 2 errors, 40 tests: Compiling serde v1.0.219`, for a progress notification or
    /// a terminal's status line.
    pub fn describe(&self) -> String {
        let mut text = format!("{} lines", self.lines);
        if self.errors > 0 {
            text.push_str(&format!(", {} errors", self.errors));
        }
        if self.tests > 0 {
            text.push_str(&format!(", {} tests", self.tests));
        }
        if !self.activity.is_empty() {
            text.push_str(": ");
            text.push_str(&self.activity);
        }
        text
    }
}

pub struct RunSink<'a> {
    pub log: LogWriter,
    pub parser: ParserHandle,
    /// The first write error; the log stops there but parsing goes on.
    pub write_error: Option<std::io::Error>,
    report: &'a mut dyn FnMut(&Progress),
    /// The start of the last non-blank line, turned into text only when progress is reported.
    last_line: Vec<u8>,
    last_flush: Instant,
    last_progress: Instant,
}

impl<'a> RunSink<'a> {
    pub fn new(log: LogWriter, parser: ParserHandle, report: &'a mut dyn FnMut(&Progress)) -> Self {
        let now = Instant::now();
        RunSink { log, parser, write_error: None, report, last_line: Vec::new(), last_flush: now, last_progress: now }
    }

    fn progress(&mut self) -> Progress {
        let parsed = self.parser.progress().unwrap_or_default();
        Progress {
            lines: self.log.lines(),
            errors: parsed.errors,
            warnings: parsed.warnings,
            tests: parsed.tests,
            activity: parsed.activity.unwrap_or_else(|| {
                String::from_utf8_lossy(&self.last_line).trim().chars().take(ACTIVITY_CHARS).collect()
            }),
        }
    }
}

impl LineSink for RunSink<'_> {
    fn line(&mut self, stream: Stream, bytes: &[u8]) {
        let number = match self.log.write_line(stream, bytes) {
            Ok(n) => n,
            Err(e) => {
                self.write_error.get_or_insert(e);
                self.log.lines() + 1
            }
        };
        let clean = strip_ansi(&bytes[..bytes.len().min(PARSE_LIMIT)]);
        self.parser.feed(stream, number, &clean);
        if clean.iter().any(|b| !b.is_ascii_whitespace()) {
            self.last_line.clear();
            self.last_line.extend_from_slice(&clean[..clean.len().min(ACTIVITY_CHARS * 4)]);
        }
    }

    fn tick(&mut self) {
        let now = Instant::now();
        if now.duration_since(self.last_flush) >= FLUSH_EVERY {
            if let Err(e) = self.log.flush() {
                self.write_error.get_or_insert(e);
            }
            self.last_flush = now;
        }
        if now.duration_since(self.last_progress) >= PROGRESS_EVERY {
            let progress = self.progress();
            (self.report)(&progress);
            self.last_progress = now;
        }
    }
}
