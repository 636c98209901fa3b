//! Where a run's lines go: the stored log (byte for byte) and the parser worker (cut and
//! stripped), plus periodic flushes and progress reports.

use buildvise_engine::parse::ParseWorker;
use buildvise_engine::run::LineSink;
use buildvise_engine::store::LogWriter;
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
    /// Tests the tool said it would run, once it said.
    pub tests_total: Option<u64>,
    /// What the tool is doing now: the parser's word, else the last line printed.
    pub activity: String,
    /// Not started yet: calls ahead in the queue, and runs going.
    pub queued: Option<(usize, usize)>,
}

impl Progress {
    /// `1532 lines, 2 errors, 40/120 tests: Compiling serde v1.0.219`, for a progress
    /// notification or a terminal's status line.
    pub fn describe(&self) -> String {
        if let Some((ahead, running)) = self.queued {
            return format!(
                "queued: {}, {} ahead",
                count(running as u64, "run going", "runs going"),
                count(ahead as u64, "call", "calls")
            );
        }
        let mut text = count(self.lines, "line", "lines");
        if self.errors > 0 {
            text.push_str(&format!(", {}", count(self.errors, "error", "errors")));
        }
        match self.tests_total {
            Some(total) => text.push_str(&format!(", {}/{}", self.tests, count(total, "test", "tests"))),
            None if self.tests > 0 => text.push_str(&format!(", {}", count(self.tests, "test", "tests"))),
            None => {}
        }
        if !self.activity.is_empty() {
            text.push_str(": ");
            text.push_str(&self.activity);
        }
        text
    }
}

fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

pub(super) struct RunSink<'a> {
    pub log: LogWriter,
    pub parser: ParseWorker,
    report: &'a mut dyn FnMut(&Progress),
    /// Where each line of the current block ends, found once for the log and the parser.
    ends: Vec<usize>,
    /// The lines the output left without `\n` (a stream's last), which `log --raw` prints so.
    pub unterminated: Vec<u64>,
    last_flush: Instant,
    last_progress: Instant,
}

impl<'a> RunSink<'a> {
    pub fn new(log: LogWriter, parser: ParseWorker, report: &'a mut dyn FnMut(&Progress)) -> Self {
        let now = Instant::now();
        RunSink { log, parser, report, ends: Vec::new(), unterminated: Vec::new(), last_flush: now, last_progress: now }
    }

    fn progress(&self) -> Progress {
        let reported = self.parser.progress();
        let parsed = reported.progress.unwrap_or_default();
        Progress {
            lines: self.log.lines(),
            errors: parsed.errors,
            warnings: parsed.warnings,
            tests: parsed.tests,
            tests_total: parsed.tests_total,
            activity: parsed.activity.unwrap_or_else(|| {
                let text = String::from_utf8_lossy(&reported.last_line);
                buildvise_plugin_api::clip(text.trim(), ACTIVITY_BYTES).into_owned()
            }),
            queued: None,
        }
    }
}

impl LineSink for RunSink<'_> {
    fn lines(&mut self, stream: Stream, block: &[u8]) {
        self.ends.clear();
        buildvise_engine::run::line_ends(block, &mut self.ends);
        let first = self.log.write_lines(stream, block, &self.ends);
        self.parser.push_lines(stream, first, block, &self.ends);
    }

    fn ready(&mut self, wait: Duration) -> bool {
        self.parser.ready(wait)
    }

    fn unterminated(&mut self, _stream: Stream) {
        self.unterminated.push(self.log.lines());
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_reads_well_in_the_singular_and_with_a_known_total() {
        let p = Progress { lines: 1, errors: 1, tests: 1, activity: "x".into(), ..Progress::default() };
        assert_eq!(p.describe(), "1 line, 1 error, 1 test: x");
        let p = Progress { lines: 40, tests: 3, tests_total: Some(12), ..Progress::default() };
        assert_eq!(p.describe(), "40 lines, 3/12 tests");
        assert_eq!(
            Progress { queued: Some((1, 4)), ..Progress::default() }.describe(),
            "queued: 4 runs going, 1 call ahead"
        );
    }
}
