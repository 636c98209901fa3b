//! Where a run's lines go: the stored log (byte for byte) and the parser worker (cut and
//! stripped), plus periodic flushes and progress reports.

use crate::parse::ParseWorker;
use crate::run::LineSink;
use crate::store::LogWriter;
use buildvise_plugin_api::Stream;
use std::time::{Duration, Instant};

const FLUSH_EVERY: Duration = Duration::from_millis(200);
const PROGRESS_EVERY: Duration = Duration::from_millis(500);
const ACTIVITY_BYTES: usize = 100;

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

pub(super) struct RunSink<'a> {
    pub log: LogWriter,
    pub parser: ParseWorker,
    report: &'a mut dyn FnMut(&Progress),
    last_flush: Instant,
    last_progress: Instant,
}

impl<'a> RunSink<'a> {
    pub fn new(log: LogWriter, parser: ParseWorker, report: &'a mut dyn FnMut(&Progress)) -> Self {
        let now = Instant::now();
        RunSink { log, parser, report, last_flush: now, last_progress: now }
    }

    fn progress(&self) -> Progress {
        let reported = self.parser.progress();
        let parsed = reported.progress.unwrap_or_default();
        Progress {
            lines: self.log.lines(),
            errors: parsed.errors,
            warnings: parsed.warnings,
            tests: parsed.tests,
            activity: parsed.activity.unwrap_or_else(|| {
                let text = String::from_utf8_lossy(&reported.last_line);
                buildvise_plugin_api::clip(text.trim(), ACTIVITY_BYTES).into_owned()
            }),
        }
    }
}

impl LineSink for RunSink<'_> {
    fn line(&mut self, stream: Stream, bytes: &[u8]) {
        let number = self.log.write_line(stream, bytes);
        self.parser.push(stream, number, bytes);
    }

    fn ready(&mut self, wait: Duration) -> bool {
        self.parser.ready(wait)
    }

    fn tick(&mut self) {
        let now = Instant::now();
        if now.duration_since(self.last_flush) >= FLUSH_EVERY {
            self.log.flush();
            self.last_flush = now;
        }
        if now.duration_since(self.last_progress) >= PROGRESS_EVERY {
            let progress = self.progress();
            (self.report)(&progress);
            self.last_progress = now;
        }
    }
}
