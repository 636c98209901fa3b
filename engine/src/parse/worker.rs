//! A plugin's parser on a thread of its own, fed in batches through a bounded queue.
//!
//! The process side never waits on the parser for longer than it chooses: [`ParseWorker::ready`]
//! waits at most the time it is given. A parser is judged by the CPU time its thread spent
//! ([`ThreadCpu`]), so that a loaded machine keeping it waiting does not count against it. One
//! that has spent more than [`PATIENCE`] on a batch is stopped: it gets no more lines, and once it
//! returns its result covers the lines before that batch, saying where it stopped. One that has
//! not returned by [`LAST_CHANCE`] (or by [`WALL_LIMIT`], whatever its CPU time) is abandoned, and
//! the result is a parser error. An abandoned parser's thread is left to its fate; if the plugin
//! ever returns, the thread sees it was abandoned, frees the parser and ends.

use super::RunParser;
use super::thread_cpu::ThreadCpu;
use crate::outcome::RunResult;
use crate::plugins::PluginError;
use buildvise_plugin_api::{ParseResult, Progress, RunEnd, Stream, strip_ansi};
use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// CPU time a parser may spend on one batch of lines before it is stopped. A batch is at most
/// [`BATCH_LINES`] lines; real parsers take microseconds per line.
pub const PATIENCE: Duration = Duration::from_secs(3);
/// CPU time on one batch, or on `finish`, after which a parser is abandoned with no result.
const LAST_CHANCE: Duration = Duration::from_secs(8);
/// Wall time on one batch, or on `finish`, after which a parser is abandoned whatever its CPU time:
/// a thread a starved machine never runs would otherwise hold the answer without end.
const WALL_LIMIT: Duration = Duration::from_secs(60);
/// Longest prefix of a line a parser sees. Headlines are short; a multi-megabyte line is data
/// (a minified bundle, a JSON report) and is stored whole but parsed only this far.
pub(super) const PARSE_LIMIT: usize = 4 << 20;
/// Longest last line kept for [`Reported::last_line`].
const LAST_LINE_BYTES: usize = 400;
/// Lines and bytes gathered before a batch is queued.
const BATCH_LINES: usize = 4096;
const BATCH_BYTES: usize = 64 * 1024;
/// Bytes queued for the parser before the process side is told to wait.
const QUEUE_BYTES: usize = 4 << 20;
/// How often the host checks on a parser it waits for.
const CHECK: Duration = Duration::from_millis(50);
/// How long lines may wait in a batch that is not full, so that a slow trickle of output still
/// reaches the parser (and its progress) promptly.
const STALE: Duration = Duration::from_millis(20);

/// Why a parse produced no result.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ParseFailure {
    #[error(transparent)]
    Plugin(#[from] PluginError),
    #[error("the parser spent more than {}s of CPU on log line {line} and was abandoned", LAST_CHANCE.as_secs())]
    Stuck { line: u64 },
}

/// Most emptied batches kept for reuse: a batch is allocated once, not once per 1024 lines (the
/// allocator gave freed batches back to the kernel and took them again, a tenth of ingest time).
const SPARE_BATCHES: usize = 4;

/// Lines of one batch, their bytes kept end to end in `data`, so that a block of lines read from
/// a pipe is one copy.
struct Batch {
    data: Vec<u8>,
    lines: Vec<Span>,
}

/// One line of a [`Batch`]: its stream, its number in the log, and where its bytes are in `data`.
#[derive(Clone, Copy)]
struct Span {
    stream: Stream,
    number: u64,
    start: u32,
    len: u32,
}

impl Default for Batch {
    /// Sized for a full batch up front: grown by doubling, a batch held twice what it counted.
    fn default() -> Self {
        Batch { data: Vec::with_capacity(BATCH_BYTES + 1024), lines: Vec::with_capacity(BATCH_LINES) }
    }
}

impl Batch {
    fn push(&mut self, stream: Stream, number: u64, bytes: &[u8]) {
        self.lines.push(Span { stream, number, start: self.data.len() as u32, len: bytes.len() as u32 });
        self.data.extend_from_slice(bytes);
    }

    /// Takes the lines of `block` that end at `ends` (offsets of their `\n`), the first of them
    /// starting at `start` and numbered `first`, with one copy.
    fn push_block(&mut self, stream: Stream, first: u64, block: &[u8], start: usize, ends: &[usize]) {
        let Some(&last) = ends.last() else { return };
        let here = self.data.len();
        self.data.extend_from_slice(&block[start..=last]);
        let mut line = start;
        for (number, &end) in (first..).zip(ends) {
            self.lines.push(Span { stream, number, start: (here + line - start) as u32, len: (end - line) as u32 });
            line = end + 1;
        }
    }

    fn is_full(&self) -> bool {
        self.lines.len() >= BATCH_LINES || self.data.len() >= BATCH_BYTES
    }

    fn size(&self) -> usize {
        self.data.len() + self.lines.len() * size_of::<Span>()
    }

    fn first_line(&self) -> u64 {
        self.lines.first().map_or(0, |line| line.number)
    }

    fn last_number(&self) -> u64 {
        self.lines.last().map_or(0, |line| line.number)
    }

    fn clear(&mut self) {
        self.data.clear();
        self.lines.clear();
    }

    /// The lines as parsers see them: escapes and a trailing `\r` removed, in place (stripping
    /// never lengthens a line). One search of the whole batch spares most runs, which print
    /// neither ESC nor CR, a look at each line.
    fn strip(&mut self) {
        if memchr::memchr2(0x1b, b'\r', &self.data).is_none() {
            return;
        }
        for span in &mut self.lines {
            let line = &mut self.data[span.start as usize..(span.start + span.len) as usize];
            span.len = strip_in_place(line) as u32;
        }
    }

    /// The lines in order: stream, number and bytes.
    fn iter(&self) -> impl DoubleEndedIterator<Item = (Stream, u64, &[u8])> + Clone {
        self.lines
            .iter()
            .map(|span| (span.stream, span.number, &self.data[span.start as usize..(span.start + span.len) as usize]))
    }

    /// The last line that is not blank.
    fn last_line(&self) -> Option<&[u8]> {
        self.iter().map(|(_, _, bytes)| bytes).rev().find(|line| line.iter().any(|c| !c.is_ascii_whitespace()))
    }
}

#[derive(Default)]
struct Queue {
    batches: VecDeque<Batch>,
    bytes: usize,
    end: Option<RunEnd>,
    /// Fed batches, emptied, for the host to fill again.
    spare: Vec<Batch>,
}

/// What the host and the worker thread share.
struct Shared {
    queue: Mutex<Queue>,
    changed: Condvar,
    /// When the worker began its current batch or `finish` (ms since `epoch`), 0 while idle.
    busy_since_ms: AtomicU64,
    /// The worker thread's CPU time then, in ns.
    busy_cpu_ns: AtomicU64,
    /// The worker thread's CPU clock, once the thread has said it.
    cpu: OnceLock<Option<ThreadCpu>>,
    /// Set when the parser was stopped: batches still queued are dropped, not fed.
    stopped: AtomicBool,
    /// Set while the worker is in `finish`.
    finishing: AtomicBool,
    /// The first line of the batch being fed: where a stuck parser is stuck.
    busy_line: AtomicU64,
    /// The last line of the batch being fed: a parser stopped on it has read up to there.
    busy_last: AtomicU64,
    epoch: Instant,
    want_progress: AtomicBool,
    reported: Mutex<Reported>,
    abandoned: AtomicBool,
}

/// What the worker tells the host about the lines it has fed.
#[derive(Default, Clone)]
pub struct Reported {
    /// The parser's counts, as of the first batch after the host last asked.
    pub progress: Option<Progress>,
    /// The last line fed that is not blank, as the parser saw it (cut to a few hundred bytes).
    pub last_line: Vec<u8>,
}

impl Shared {
    fn queue(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How long the worker has been on its current item, if it is on one: the CPU time it spent
    /// on it where the system tells, else the wall time; and the wall time.
    fn busy_for(&self) -> Option<(Duration, Duration)> {
        let wall = match self.busy_since_ms.load(Ordering::SeqCst) {
            0 => return None,
            since => self.epoch.elapsed().saturating_sub(Duration::from_millis(since)),
        };
        let cpu = self
            .cpu
            .get()
            .and_then(Option::as_ref)
            .and_then(ThreadCpu::spent)
            .map(|now| now.saturating_sub(Duration::from_nanos(self.busy_cpu_ns.load(Ordering::SeqCst))));
        Some((cpu.unwrap_or(wall), wall))
    }

    /// Whether the worker has spent more than `cpu` on its current item, or [`WALL_LIMIT`].
    fn busy_over(&self, cpu: Duration) -> bool {
        self.busy_for().is_some_and(|(spent, wall)| spent > cpu || wall > WALL_LIMIT)
    }

    fn mark_busy(&self, line: u64) {
        self.busy_line.store(line, Ordering::SeqCst);
        let cpu = ThreadCpu::own().map_or(0, |cpu| cpu.as_nanos() as u64);
        self.busy_cpu_ns.store(cpu, Ordering::SeqCst);
        // 1 at the least: 0 means idle.
        self.busy_since_ms.store((self.epoch.elapsed().as_millis() as u64).max(1), Ordering::SeqCst);
    }
}

/// The host's side of a parser running on its own thread.
pub struct ParseWorker {
    shared: Arc<Shared>,
    pending: Batch,
    /// When the oldest line of `pending` arrived.
    pending_since: Option<Instant>,
    /// Bytes queued when this side last looked: a look under the lock only when it was too many.
    queued: usize,
    result: Receiver<Result<ParseResult, PluginError>>,
    /// Set when the parser was stopped: the last line it was given.
    stuck_at: Option<u64>,
    /// Whether lines were left unparsed because it was stopped.
    dropped: bool,
}

impl ParseWorker {
    pub fn start(parser: RunParser) -> Self {
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue::default()),
            changed: Condvar::new(),
            busy_since_ms: AtomicU64::new(0),
            busy_cpu_ns: AtomicU64::new(0),
            cpu: OnceLock::new(),
            stopped: AtomicBool::new(false),
            finishing: AtomicBool::new(false),
            busy_line: AtomicU64::new(0),
            busy_last: AtomicU64::new(0),
            epoch: Instant::now(),
            want_progress: AtomicBool::new(false),
            reported: Mutex::new(Reported::default()),
            abandoned: AtomicBool::new(false),
        });
        let (tx, result) = channel();
        let theirs = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("buildvise-parser".into())
            .spawn(move || work(parser, &theirs, &tx))
            .map(drop)
            .unwrap_or_else(|e| {
                // No thread, no parser: the answer says so and the run goes on.
                tracing::warn!("cannot start a parser thread: {e}");
                shared.abandoned.store(true, Ordering::SeqCst);
            });
        ParseWorker {
            shared,
            pending: Batch::default(),
            pending_since: None,
            queued: 0,
            result,
            stuck_at: None,
            dropped: false,
        }
    }

    /// Queues one line as it was printed; the worker thread strips its escapes, so the reading
    /// side does no more than copy it. Never blocks.
    pub fn push(&mut self, stream: Stream, number: u64, bytes: &[u8]) {
        if self.stuck_at.is_some() {
            self.dropped = true;
            return;
        }
        self.pending.push(stream, number, &bytes[..bytes.len().min(PARSE_LIMIT)]);
        self.pending_since.get_or_insert_with(Instant::now);
        if self.pending.is_full() {
            self.flush();
        }
    }

    /// Queues a block of lines numbered from `first`, each ended by `\n` at the offsets `ends`, a
    /// batch's worth at a time with one copy each. Never blocks.
    pub fn push_lines(&mut self, stream: Stream, first: u64, block: &[u8], ends: &[usize]) {
        self.dropped |= self.stuck_at.is_some() && !ends.is_empty();
        let (mut start, mut done) = (0, 0);
        while done < ends.len() && self.stuck_at.is_none() {
            let room = BATCH_BYTES.saturating_sub(self.pending.data.len());
            let fit = ends[done..]
                .partition_point(|&end| end + 1 - start <= room)
                .min(BATCH_LINES.saturating_sub(self.pending.lines.len()));
            if fit == 0 {
                // A line that does not fit goes alone, and no more of it than is parsed.
                self.push(stream, first + done as u64, &block[start..ends[done]]);
                start = ends[done] + 1;
                done += 1;
                continue;
            }
            let piece = &ends[done..done + fit];
            self.pending.push_block(stream, first + done as u64, block, start, piece);
            start = piece[fit - 1] + 1;
            done += fit;
            self.pending_since.get_or_insert_with(Instant::now);
            if self.pending.is_full() {
                self.flush();
            }
        }
    }

    fn flush(&mut self) {
        self.pending_since = None;
        if self.pending.lines.is_empty() {
            return;
        }
        let mut queue = self.shared.queue();
        let next = queue.spare.pop().unwrap_or_default();
        let batch = std::mem::replace(&mut self.pending, next);
        // Only a worker that found the queue empty waits: a wake-up for each batch would cost a
        // system call each.
        let worker_waits = queue.batches.is_empty();
        queue.bytes += batch.size();
        queue.batches.push_back(batch);
        self.queued = queue.bytes;
        drop(queue);
        if worker_waits {
            self.shared.changed.notify_all();
        }
    }

    /// Hands over lines that waited long enough, then waits at most `wait` for the queue to have
    /// room; says whether it has. A parser busy for longer than [`PATIENCE`] is stopped here, and
    /// from then on there is always room.
    pub fn ready(&mut self, wait: Duration) -> bool {
        if self.stuck_at.is_some() {
            return true;
        }
        if self.pending_since.is_some_and(|since| since.elapsed() >= STALE) {
            self.flush();
        }
        if self.queued <= QUEUE_BYTES {
            return true;
        }
        let queue = self.shared.queue();
        let (queue, _) = self
            .shared
            .changed
            .wait_timeout_while(queue, wait, |q| q.bytes > QUEUE_BYTES)
            .unwrap_or_else(|e| e.into_inner());
        self.queued = queue.bytes;
        let room = queue.bytes <= QUEUE_BYTES;
        drop(queue);
        if !room && self.shared.busy_over(PATIENCE) {
            self.stop();
            return true;
        }
        room
    }

    /// Feeds the parser nothing more: the lines queued and to come are dropped. Its result, if it
    /// returns, covers the lines before the batch it is on.
    fn stop(&mut self) {
        self.stuck_at = Some(self.shared.busy_last.load(Ordering::SeqCst));
        self.shared.stopped.store(true, Ordering::SeqCst);
        let mut queue = self.shared.queue();
        self.dropped |= !queue.batches.is_empty() || !self.pending.lines.is_empty();
        queue.batches.clear();
        queue.bytes = 0;
        drop(queue);
        self.pending.clear();
        self.shared.changed.notify_all();
    }

    /// What the worker last reported; asks for fresh counts for next time.
    pub fn progress(&self) -> Reported {
        self.shared.want_progress.store(true, Ordering::SeqCst);
        self.shared.reported.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// Feeds what is left, then the end, and makes the run's result of what the parser says: it
    /// waits as long as the parser keeps within its time (see the module's doc).
    pub fn finish(self, end: RunEnd) -> RunResult {
        let exit_code = end.exit_code;
        let (parsed, read_up_to) = self.parsed(end);
        let result = RunResult::from_parse(parsed, exit_code);
        match read_up_to {
            Some(line) => result.parse_stopped(line, PATIENCE, exit_code),
            None => result,
        }
    }

    /// The parser's result, and the last line it read when it was stopped before reading them all.
    fn parsed(mut self, end: RunEnd) -> (Result<ParseResult, ParseFailure>, Option<u64>) {
        self.flush();
        self.shared.queue().end = Some(end);
        self.shared.changed.notify_all();
        loop {
            match self.result.recv_timeout(CHECK) {
                Ok(result) => return (result.map_err(ParseFailure::Plugin), self.stuck_at.filter(|_| self.dropped)),
                Err(RecvTimeoutError::Timeout) => {
                    // A parser slow in `finish` has been fed everything: stopping it saves nothing.
                    if self.stuck_at.is_none()
                        && !self.shared.finishing.load(Ordering::SeqCst)
                        && self.shared.busy_over(PATIENCE)
                    {
                        self.stop();
                    }
                    if self.shared.busy_over(LAST_CHANCE) {
                        let line = self.shared.busy_line.load(Ordering::SeqCst);
                        self.shared.abandoned.store(true, Ordering::SeqCst);
                        self.shared.changed.notify_all();
                        return (Err(ParseFailure::Stuck { line }), None);
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let line = self.shared.busy_line.load(Ordering::SeqCst);
                    return (Err(ParseFailure::Stuck { line }), None);
                }
            }
        }
    }
}

/// The worker thread: batches to the parser until the end arrives, then the result.
fn work(mut parser: RunParser, shared: &Shared, result: &Sender<Result<ParseResult, PluginError>>) {
    let _ = shared.cpu.set(ThreadCpu::current());
    let mut fed: Option<Batch> = None;
    loop {
        let mut queue = shared.queue();
        if let Some(batch) = fed.take()
            && queue.spare.len() < SPARE_BATCHES
        {
            queue.spare.push(batch);
        }
        while queue.batches.is_empty() && queue.end.is_none() && !shared.abandoned.load(Ordering::SeqCst) {
            queue = shared.changed.wait(queue).unwrap_or_else(|e| e.into_inner());
        }
        if shared.abandoned.load(Ordering::SeqCst) {
            return;
        }
        if let Some(mut batch) = queue.batches.pop_front() {
            // The host waits only while the queue is over its limit.
            let host_waits = queue.bytes > QUEUE_BYTES;
            queue.bytes -= batch.size();
            let room = queue.bytes <= QUEUE_BYTES;
            drop(queue);
            if host_waits && room {
                shared.changed.notify_all();
            }
            if shared.stopped.load(Ordering::SeqCst) {
                batch.clear();
                fed = Some(batch);
                continue;
            }
            shared.busy_last.store(batch.last_number(), Ordering::SeqCst);
            shared.mark_busy(batch.first_line());
            batch.strip();
            parser.feed(batch.iter());
            let last_line = batch.last_line();
            let progress = shared.want_progress.swap(false, Ordering::SeqCst).then(|| parser.progress());
            if let Ok(mut reported) = shared.reported.lock() {
                if let Some(line) = last_line {
                    reported.last_line.clear();
                    reported.last_line.extend_from_slice(&line[..line.len().min(LAST_LINE_BYTES)]);
                }
                if let Some(progress) = progress {
                    reported.progress = progress;
                }
            }
            shared.busy_since_ms.store(0, Ordering::SeqCst);
            batch.clear();
            fed = Some(batch);
            continue;
        }
        let end = queue.end.take().unwrap_or_default();
        drop(queue);
        shared.finishing.store(true, Ordering::SeqCst);
        shared.mark_busy(shared.busy_line.load(Ordering::SeqCst));
        let parsed = parser.finish(&end);
        if !shared.abandoned.load(Ordering::SeqCst) {
            let _ = result.send(parsed);
        }
        return;
    }
}

/// Strips `line` as [`strip_ansi`] does, into its own first bytes; returns the new length.
fn strip_in_place(line: &mut [u8]) -> usize {
    let stripped = match strip_ansi(line) {
        Cow::Borrowed(kept) => return kept.len(),
        Cow::Owned(stripped) => stripped,
    };
    line[..stripped.len()].copy_from_slice(&stripped);
    stripped.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stripped(batch: &mut Batch) -> Vec<(Stream, u64, Vec<u8>)> {
        batch.strip();
        batch.iter().map(|(stream, number, bytes)| (stream, number, bytes.to_vec())).collect()
    }

    #[test]
    fn lines_are_stripped_in_place_and_keep_their_streams_and_numbers() {
        let mut batch = Batch::default();
        let block = b"plain\n\x1b[31merror\x1b[0m: x\r\n\n";
        batch.push_block(Stream::Stderr, 7, block, 0, &[5, 24, 25]);
        batch.push(Stream::Stdout, 10, b"crlf\r");
        batch.push_block(Stream::Stdout, 11, b"a\nb\n", 0, &[1, 3]);
        batch.push_block(Stream::Stdout, 20, b"x\nskipped\n", 2, &[9]);
        let line = |stream, number, bytes: &[u8]| (stream, number, bytes.to_vec());
        assert_eq!(
            stripped(&mut batch),
            [
                line(Stream::Stderr, 7, b"plain"),
                line(Stream::Stderr, 8, b"error: x"),
                line(Stream::Stderr, 9, b""),
                line(Stream::Stdout, 10, b"crlf"),
                line(Stream::Stdout, 11, b"a"),
                line(Stream::Stdout, 12, b"b"),
                line(Stream::Stdout, 20, b"skipped"),
            ]
        );
        assert_eq!(batch.last_line(), Some(&b"skipped"[..]));
        let mut fresh = Batch::default();
        fresh.push_block(Stream::Stdout, 2, b"x\nsecond\n", 2, &[8]);
        assert_eq!(stripped(&mut fresh), [line(Stream::Stdout, 2, b"second")], "a block's later lines first");
    }

    #[test]
    fn a_carriage_return_is_stripped_only_at_a_lines_end() {
        let view = |block: &[u8], ends: &[usize]| {
            let mut batch = Batch::default();
            batch.push_block(Stream::Stdout, 1, block, 0, ends);
            stripped(&mut batch).into_iter().map(|(_, _, bytes)| bytes).collect::<Vec<_>>()
        };
        assert_eq!(view(b"50%\r100%\r\nok\n", &[9, 12]), [b"50%\r100%".to_vec(), b"ok".to_vec()]);
        assert_eq!(view(b"plain\nlines\n", &[5, 11]), [b"plain".to_vec(), b"lines".to_vec()]);
        assert_eq!(view(b"a\r\n\x1b[1mb\x1b[0m\n", &[2, 12]), [b"a".to_vec(), b"b".to_vec()]);
    }
}
