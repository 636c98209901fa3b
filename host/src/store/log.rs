//! The raw log and its binary line index.
//!
//! `output.log` holds every line byte for byte as the process printed it (ANSI included), each
//! ended by `\n`, both streams in arrival order. `lines.idx` holds one little-endian u64 per line:
//! the line's start offset, with the top bit set for stderr. `streams.idx` says where each stream
//! is, as runs of lines rather than an entry per line: one pair of u64 per switch of stream, the
//! index of the run's first line (top bit set for stderr) and how many lines of that stream came
//! before it. A run that never switched from stdout has none. So a flood of one stream costs its
//! index one entry per line, not two, and the Nth line of a stream is a binary search away. Any
//! page is therefore a few seeks, whatever the log's size, and a scan (grep) reads the log and
//! `lines.idx` front to back.
//!
//! Runs stored before `streams.idx` existed have `stdout.idx` and `stderr.idx` instead: per line of
//! that stream, the u64 index of the line in `lines.idx`. They are still read.
//!
//! The index is trusted only as far as it agrees with the log: entries past the log's end (lines
//! a writer has not flushed yet, or could not store) are not shown, and an entry that contradicts
//! the log is reported as damage, never used to size a read.

use super::{StoreError, files};
use buildvise_plugin_api::Stream;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

pub const LOG_FILE: &str = "output.log";
const LINES_IDX: &str = "lines.idx";
const STREAMS_IDX: &str = "streams.idx";
/// The per-stream indexes of runs stored before `streams.idx`.
const STDOUT_IDX: &str = "stdout.idx";
const STDERR_IDX: &str = "stderr.idx";
const STDERR_BIT: u64 = 1 << 63;
/// Smaller than the blocks a flood brings (a read of up to 256 KiB), which then go straight to
/// the file rather than through a copy in the buffer; a trickle of lines is still gathered.
const WRITE_BUFFER: usize = 64 * 1024;
/// Room kept beyond the index when a full disk makes the log give some back: a filesystem
/// allocates whole blocks.
const SPARE: u64 = 8192;

/// Appends lines to a run's log and index. A write that fails (a full disk) stops the storing,
/// not the numbering: lines keep their numbers, so that what the parser says about line N stays
/// true of the lines that were stored.
pub struct LogWriter {
    log: BufWriter<File>,
    lines: BufWriter<File>,
    /// Created at the first switch of stream: most runs never write it.
    streams: Option<BufWriter<File>>,
    /// The stream of the run of lines being appended, and the lines of each stream stored before
    /// it (stdout's first).
    stream: Stream,
    before: [u64; 2],
    offset: u64,
    count: u64,
    stored: u64,
    failure: Option<StoreError>,
    dir: PathBuf,
    /// The index entries of the block being appended.
    entries: Vec<u8>,
}

impl LogWriter {
    pub fn create(dir: &Path) -> Result<Self, StoreError> {
        let open = |name: &str| -> Result<BufWriter<File>, StoreError> {
            Ok(BufWriter::with_capacity(WRITE_BUFFER, files::private_file(&dir.join(name))?))
        };
        Ok(LogWriter {
            log: open(LOG_FILE)?,
            lines: open(LINES_IDX)?,
            streams: None,
            stream: Stream::Stdout,
            before: [0; 2],
            offset: 0,
            count: 0,
            stored: 0,
            failure: None,
            dir: dir.to_path_buf(),
            entries: Vec::new(),
        })
    }

    /// Appends a block of whole lines of one stream, each ended by `\n`, whose ends (the offsets
    /// of their `\n` in `block`) are `ends`; returns the 1-based number of the first.
    pub fn write_lines(&mut self, stream: Stream, block: &[u8], ends: &[usize]) -> u64 {
        let first = self.count + 1;
        self.count += ends.len() as u64;
        if self.failure.is_none() {
            match self.append(stream, block, ends) {
                Ok(()) => self.stored = self.count,
                Err(e) => {
                    self.failure = Some(e);
                    self.give_back();
                }
            }
        }
        first
    }

    /// After a failed write (a full disk): makes room for the index of what was stored, and
    /// writes it. The log is cut back at the start of a line, far enough to hold the index entries
    /// still buffered; bytes still in the log's buffer are dropped rather than written later at a
    /// stale position. A reader trusts the index only as far as the log reaches, so the lines cut
    /// off are simply not shown: losing a few lines beats an index that cannot be written, which
    /// would show none.
    fn give_back(&mut self) {
        let file = self.log.get_ref();
        let Ok(on_disk) = file.metadata().map(|m| m.len()) else { return };
        let buffered: u64 = std::iter::once(&self.lines).chain(&self.streams).map(|w| w.buffer().len() as u64).sum();
        let limit = on_disk.min(self.offset).saturating_sub(buffered + SPARE);
        let starts = self.lines.buffer().chunks_exact(8).map(|entry| {
            let mut raw = [0u8; 8];
            raw.copy_from_slice(entry);
            u64::from_le_bytes(raw) & !STDERR_BIT
        });
        let (mut first, mut cut) = (None, None);
        for start in starts {
            first.get_or_insert(start);
            if start <= limit {
                cut = Some(start);
            }
        }
        let cut = cut.or(first).unwrap_or(on_disk.min(self.offset)).min(on_disk);
        let _ = file.set_len(cut);
        if let Ok(mut file) = file.try_clone() {
            let _ = file.seek(SeekFrom::Start(cut));
            let failed = std::mem::replace(&mut self.log, BufWriter::new(file));
            drop(failed.into_parts());
        }
        let _ = self.lines.flush();
        if let Some(streams) = &mut self.streams {
            let _ = streams.flush();
        }
    }

    /// Appends one line (without its `\n`) and returns its number.
    #[cfg(test)]
    pub fn write_line(&mut self, stream: Stream, bytes: &[u8]) -> u64 {
        let block = [bytes, b"\n"].concat();
        self.write_lines(stream, &block, &[bytes.len()])
    }

    fn append(&mut self, stream: Stream, block: &[u8], ends: &[usize]) -> Result<(), StoreError> {
        if stream != self.stream {
            self.switch_to(stream)?;
        }
        let log_error = |e| StoreError::io(&self.dir.join(LOG_FILE), e);
        // The log before the index: an entry never leads the bytes it points at.
        self.log.write_all(block).map_err(log_error)?;
        // A block's entries are put together first and written once: a write per entry cost
        // more than finding the lines.
        let entries = &mut self.entries;
        entries.resize(ends.len() * 8, 0);
        let starts = std::iter::once(0).chain(ends.iter().map(|&end| end as u64 + 1));
        for (entry, start) in entries.chunks_exact_mut(8).zip(starts) {
            entry.copy_from_slice(&encode(self.offset + start, stream).to_le_bytes());
        }
        self.lines.write_all(entries).map_err(log_error)?;
        self.before[stream_slot(stream)] += ends.len() as u64;
        self.offset += block.len() as u64;
        Ok(())
    }

    /// Starts a run of `stream`'s lines at the next line: one entry in `streams.idx`.
    fn switch_to(&mut self, stream: Stream) -> Result<(), StoreError> {
        let streams = match &mut self.streams {
            Some(streams) => streams,
            None => self
                .streams
                .insert(BufWriter::with_capacity(WRITE_BUFFER, files::private_file(&self.dir.join(STREAMS_IDX))?)),
        };
        let mut entry = [0u8; RUN_ENTRY as usize];
        entry[..8].copy_from_slice(&encode(self.stored, stream).to_le_bytes());
        entry[8..].copy_from_slice(&self.before[stream_slot(stream)].to_le_bytes());
        streams.write_all(&entry).map_err(|e| StoreError::io(&self.dir.join(STREAMS_IDX), e))?;
        self.stream = stream;
        Ok(())
    }

    /// Lines numbered so far.
    pub fn lines(&self) -> u64 {
        self.count
    }

    pub fn bytes(&self) -> u64 {
        self.offset
    }

    /// Makes what was written so far visible to readers in other processes.
    pub fn flush(&mut self) {
        if self.failure.is_some() {
            return;
        }
        // The log first: a reader trusts the index only as far as the log reaches.
        let flushed = self.log.flush().and_then(|()| self.lines.flush());
        if let Err(e) = flushed.and_then(|()| self.streams.as_mut().map_or(Ok(()), BufWriter::flush)) {
            self.failure = Some(StoreError::io(&self.dir.join(LOG_FILE), e));
            self.give_back();
        }
    }

    /// Flushes, and hands back the first failure, if storing failed.
    pub fn finish(mut self) -> Option<StoreError> {
        self.flush();
        self.failure.take()
    }
}

/// Bytes of one entry of `streams.idx`.
const RUN_ENTRY: u64 = 16;

fn stream_slot(stream: Stream) -> usize {
    usize::from(stream == Stream::Stderr)
}

fn legacy_stream_index(stream: Stream) -> &'static str {
    if stream == Stream::Stderr { STDERR_IDX } else { STDOUT_IDX }
}

/// Which lines a page selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StreamFilter {
    #[default]
    Both,
    Only(Stream),
}

impl StreamFilter {
    fn selects(self, stream: Stream) -> bool {
        match self {
            StreamFilter::Both => true,
            StreamFilter::Only(s) => s == stream,
        }
    }
}

/// One line of a page: its number in the combined log, stream, and bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    pub number: u64,
    pub stream: Stream,
    pub bytes: Vec<u8>,
}

/// Reads pages of a stored log.
pub struct LogReader {
    log: File,
    log_len: u64,
    lines: File,
    total: u64,
    dir: PathBuf,
    /// Stored before `streams.idx`: one index per stream.
    legacy: bool,
    /// `streams.idx` and its entries, once a page of one stream needs it.
    runs: Option<Runs>,
}

/// The runs of lines of one stream or the other, as `streams.idx` lists them after the run that
/// every log starts with (stdout, from line 0), which it does not.
struct Runs {
    file: Option<File>,
    /// Entries, the implicit first one included, that start at a stored line.
    len: u64,
}

/// One run of lines: its first line (0-based), its stream, and how many lines of its stream came
/// before it.
#[derive(Debug, Clone, Copy)]
struct Run {
    start: u64,
    stream: Stream,
    before: u64,
}

impl Run {
    /// The run every log starts with, which `streams.idx` does not list.
    const FIRST: Run = Run { start: 0, stream: Stream::Stdout, before: 0 };

    /// Lines of `stream` before this run.
    fn before(&self, stream: Stream) -> u64 {
        if self.stream == stream { self.before } else { self.start.saturating_sub(self.before) }
    }
}

impl LogReader {
    pub fn open(dir: &Path) -> Result<Self, StoreError> {
        let open = |name: &str| -> Result<(File, u64), StoreError> {
            let path = dir.join(name);
            let file = File::open(&path).map_err(|e| StoreError::io(&path, e))?;
            let len = file.metadata().map_err(|e| StoreError::io(&path, e))?.len();
            Ok((file, len))
        };
        let (log, log_len) = open(LOG_FILE)?;
        let (lines, idx_len) = open(LINES_IDX)?;
        let legacy = dir.join(STDOUT_IDX).exists();
        let mut reader =
            LogReader { log, log_len, lines, total: idx_len / 8, dir: dir.to_path_buf(), legacy, runs: None };
        // A run still being written (or whose writer ran out of room) may have index entries
        // whose line never reached the log.
        while reader.total > 0 && reader.entry(reader.total - 1)?.0 >= reader.log_len {
            reader.total -= 1;
        }
        Ok(reader)
    }

    /// Bytes in the log.
    pub fn bytes(&self) -> u64 {
        self.log_len
    }

    /// Number of lines of `filter`.
    pub fn count(&mut self, filter: StreamFilter) -> Result<u64, StoreError> {
        let StreamFilter::Only(stream) = filter else {
            return Ok(self.total);
        };
        if self.legacy {
            return self.legacy_count(stream);
        }
        let len = self.runs()?.len;
        let last = self.run(len - 1)?;
        let tail = if last.stream == stream { self.total - last.start } else { 0 };
        Ok(last.before(stream) + tail)
    }

    fn legacy_count(&self, stream: Stream) -> Result<u64, StoreError> {
        let path = self.dir.join(legacy_stream_index(stream));
        let mut len = std::fs::metadata(&path).map_err(|e| StoreError::io(&path, e))?.len() / 8;
        // Trailing entries may point at lines not stored; drop them as `open` does.
        while len > 0 && self.legacy_numbers(stream, len - 1, 1)?.is_empty() {
            len -= 1;
        }
        Ok(len)
    }

    /// `streams.idx`, opened once; its entries past the stored lines are left out, as `open`
    /// leaves out index entries past the log.
    fn runs(&mut self) -> Result<&mut Runs, StoreError> {
        if self.runs.is_none() {
            let path = self.dir.join(STREAMS_IDX);
            let file = match File::open(&path) {
                Ok(file) => Some(file),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err(StoreError::io(&path, e)),
            };
            let entries = match &file {
                Some(file) => file.metadata().map_err(|e| StoreError::io(&path, e))?.len() / RUN_ENTRY,
                None => 0,
            };
            self.runs = Some(Runs { file, len: entries + 1 });
            let mut len = entries + 1;
            while len > 1 && self.run(len - 1)?.start >= self.total {
                len -= 1;
            }
            self.runs.as_mut().expect("opened above").len = len;
        }
        Ok(self.runs.as_mut().expect("opened above"))
    }

    /// Run `i` (0 is the implicit first), checked against the one before it.
    fn run(&mut self, i: u64) -> Result<Run, StoreError> {
        if i == 0 {
            return Ok(Run::FIRST);
        }
        let read = |runs: &mut Runs, i: u64| -> std::io::Result<Run> {
            let file = runs.file.as_mut().ok_or(std::io::ErrorKind::UnexpectedEof)?;
            let mut raw = [0u8; RUN_ENTRY as usize];
            file.seek(SeekFrom::Start((i - 1) * RUN_ENTRY)).and_then(|_| file.read_exact(&mut raw))?;
            let (start, stream) = decode(u64::from_le_bytes(raw[..8].try_into().expect("8 bytes")));
            Ok(Run { start, stream, before: u64::from_le_bytes(raw[8..].try_into().expect("8 bytes")) })
        };
        let path = self.dir.join(STREAMS_IDX);
        let (run, previous) = {
            let runs = self.runs.as_mut().expect("runs are opened before they are read");
            let run = read(runs, i).map_err(|e| StoreError::io(&path, e))?;
            let previous = if i == 1 { None } else { Some(read(runs, i - 1).map_err(|e| StoreError::io(&path, e))?) };
            (run, previous)
        };
        let previous = previous.unwrap_or(Run::FIRST);
        // Each stream's count before a run is the previous run's, plus that run's lines if it
        // was of the same stream: anything else would send a page to the wrong lines.
        let lines = run.start.checked_sub(previous.start);
        let consistent = lines.is_some_and(|lines| {
            run.before <= run.start
                && previous.before <= previous.start
                && [Stream::Stdout, Stream::Stderr].iter().all(|&s| {
                    let grown = previous.before(s) + if previous.stream == s { lines } else { 0 };
                    run.before(s) == grown
                })
        });
        if !consistent {
            return Err(self.damaged(STREAMS_IDX, format!("entry {i} does not follow from the one before it")));
        }
        Ok(run)
    }

    fn damaged(&self, file: &str, detail: String) -> StoreError {
        StoreError::Corrupt { path: self.dir.join(file), detail }
    }

    fn entry(&mut self, index: u64) -> Result<(u64, Stream), StoreError> {
        let mut buf = [0u8; 8];
        let path = self.dir.join(LINES_IDX);
        self.lines
            .seek(SeekFrom::Start(index * 8))
            .and_then(|_| self.lines.read_exact(&mut buf))
            .map_err(|e| StoreError::io(&path, e))?;
        Ok(decode(u64::from_le_bytes(buf)))
    }

    /// Line `index` (0-based) of the combined log.
    fn line(&mut self, index: u64) -> Result<LogLine, StoreError> {
        let (start, stream) = self.entry(index)?;
        let end = if index + 1 < self.total { self.entry(index + 1)?.0 } else { self.log_len };
        let len = self.line_len(index, start, end)?;
        let mut bytes = vec![0u8; len];
        let path = self.dir.join(LOG_FILE);
        self.log
            .seek(SeekFrom::Start(start))
            .and_then(|_| self.log.read_exact(&mut bytes))
            .map_err(|e| StoreError::io(&path, e))?;
        Ok(LogLine { number: index + 1, stream, bytes })
    }

    /// The length (without `\n`) of line `index`, which the index says spans `start..end`,
    /// after checking that the log can hold it.
    fn line_len(&self, index: u64, start: u64, end: u64) -> Result<usize, StoreError> {
        if start >= end || end > self.log_len {
            return Err(self.damaged(
                LINES_IDX,
                format!("line {} is said to span bytes {start}..{end} of a {}-byte log", index + 1, self.log_len),
            ));
        }
        usize::try_from(end - start - 1).map_err(|e| self.damaged(LINES_IDX, e.to_string()))
    }

    /// The 0-based combined indexes of a stream's lines `from..from+count`.
    fn stream_numbers(&mut self, filter: StreamFilter, from: u64, count: u64) -> Result<Vec<u64>, StoreError> {
        let StreamFilter::Only(stream) = filter else {
            return Ok((from..self.total.min(from.saturating_add(count))).collect());
        };
        if self.legacy {
            return self.legacy_numbers(stream, from, count);
        }
        let len = self.runs()?.len;
        // The last run with at most `from` lines of the stream before it.
        let (mut lo, mut hi) = (0, len);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if self.run(mid)?.before(stream) <= from {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let (mut numbers, mut ordinal) = (Vec::new(), from);
        for i in lo..len {
            let wanted = count - numbers.len() as u64;
            if wanted == 0 {
                break;
            }
            let run = self.run(i)?;
            if run.stream != stream {
                continue;
            }
            let end = if i + 1 < len { self.run(i + 1)?.start } else { self.total };
            let first = run.start + ordinal.saturating_sub(run.before);
            let take = end.saturating_sub(first).min(wanted);
            numbers.extend(first..first + take);
            ordinal += take;
        }
        Ok(numbers)
    }

    fn legacy_numbers(&self, stream: Stream, from: u64, count: u64) -> Result<Vec<u64>, StoreError> {
        let path = self.dir.join(legacy_stream_index(stream));
        let mut file = File::open(&path).map_err(|e| StoreError::io(&path, e))?;
        let len = file.metadata().map_err(|e| StoreError::io(&path, e))?.len() / 8;
        let end = len.min(from.saturating_add(count));
        if from >= end {
            return Ok(Vec::new());
        }
        let mut buf = vec![0u8; ((end - from) * 8) as usize];
        file.seek(SeekFrom::Start(from * 8))
            .and_then(|_| file.read_exact(&mut buf))
            .map_err(|e| StoreError::io(&path, e))?;
        Ok(buf
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
            .filter(|&i| i < self.total)
            .collect())
    }

    /// Lines `start..start+count` (0-based) of the selected stream.
    pub fn page(&mut self, filter: StreamFilter, start: u64, count: u64) -> Result<Vec<LogLine>, StoreError> {
        let indexes = self.stream_numbers(filter, start, count)?;
        let mut page = Vec::with_capacity(indexes.len());
        for i in indexes {
            let line = self.line(i)?;
            if let StreamFilter::Only(stream) = filter
                && line.stream != stream
            {
                let index = if self.legacy { legacy_stream_index(stream) } else { STREAMS_IDX };
                let name = if stream == Stream::Stderr { "stderr" } else { "stdout" };
                return Err(self.damaged(index, format!("line {} is not on {name}", i + 1)));
            }
            page.push(line);
        }
        Ok(page)
    }

    /// Every line of the selected stream, in order, read front to back; `visit` returns false to
    /// stop early.
    pub fn scan(
        &mut self,
        filter: StreamFilter,
        mut visit: impl FnMut(u64, Stream, &[u8]) -> bool,
    ) -> Result<(), StoreError> {
        let (idx_path, log_path) = (self.dir.join(LINES_IDX), self.dir.join(LOG_FILE));
        let mut index =
            BufReader::with_capacity(64 * 1024, self.lines.try_clone().map_err(|e| StoreError::io(&idx_path, e))?);
        let mut log =
            BufReader::with_capacity(256 * 1024, self.log.try_clone().map_err(|e| StoreError::io(&log_path, e))?);
        index.seek(SeekFrom::Start(0)).map_err(|e| StoreError::io(&idx_path, e))?;
        log.seek(SeekFrom::Start(0)).map_err(|e| StoreError::io(&log_path, e))?;
        let next_entry = |index: &mut BufReader<File>| -> Result<(u64, Stream), StoreError> {
            let mut raw = [0u8; 8];
            index.read_exact(&mut raw).map_err(|e| StoreError::io(&idx_path, e))?;
            Ok(decode(u64::from_le_bytes(raw)))
        };
        let mut line = Vec::new();
        let mut current = if self.total > 0 { Some(next_entry(&mut index)?) } else { None };
        let mut position = 0u64;
        for i in 0..self.total {
            let Some((start, stream)) = current else { break };
            current = if i + 1 < self.total { Some(next_entry(&mut index)?) } else { None };
            let end = current.map_or(self.log_len, |(next, _)| next);
            if start != position {
                return Err(self.damaged(LINES_IDX, format!("line {} starts at byte {start}, not {position}", i + 1)));
            }
            let len = self.line_len(i, start, end)?;
            line.resize(len + 1, 0);
            log.read_exact(&mut line).map_err(|e| StoreError::io(&log_path, e))?;
            position = end;
            if filter.selects(stream) && !visit(i + 1, stream, &line[..len]) {
                break;
            }
        }
        Ok(())
    }
}

fn encode(start: u64, stream: Stream) -> u64 {
    if stream == Stream::Stderr { start | STDERR_BIT } else { start }
}

fn decode(raw: u64) -> (u64, Stream) {
    let stream = if raw & STDERR_BIT != 0 { Stream::Stderr } else { Stream::Stdout };
    (raw & !STDERR_BIT, stream)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(dir: &Path) {
        let mut w = LogWriter::create(dir).unwrap();
        w.write_line(Stream::Stdout, b"one");
        w.write_line(Stream::Stderr, b"two \xff\x00 bytes");
        w.write_line(Stream::Stdout, b"");
        w.write_line(Stream::Stderr, b"four");
        assert!(w.finish().is_none());
    }

    #[test]
    fn pages_both_and_each_stream() {
        let dir = tempfile::tempdir().unwrap();
        sample(dir.path());
        let mut r = LogReader::open(dir.path()).unwrap();
        assert_eq!(r.count(StreamFilter::Both).unwrap(), 4);
        let all = r.page(StreamFilter::Both, 1, 2).unwrap();
        assert_eq!(all[0].bytes, b"two \xff\x00 bytes");
        assert_eq!((all[0].number, all[0].stream), (2, Stream::Stderr));
        assert_eq!(all[1].bytes, b"");
        let err = r.page(StreamFilter::Only(Stream::Stderr), 0, 10).unwrap();
        assert_eq!(err.iter().map(|l| l.number).collect::<Vec<_>>(), vec![2, 4]);
        assert_eq!(r.count(StreamFilter::Only(Stream::Stdout)).unwrap(), 2);
        assert!(r.page(StreamFilter::Both, 10, 5).unwrap().is_empty());
    }

    #[test]
    fn scans_front_to_back() {
        let dir = tempfile::tempdir().unwrap();
        sample(dir.path());
        let mut r = LogReader::open(dir.path()).unwrap();
        let mut seen = Vec::new();
        r.scan(StreamFilter::Only(Stream::Stderr), |n, _, bytes| {
            seen.push((n, bytes.to_vec()));
            true
        })
        .unwrap();
        assert_eq!(seen, vec![(2, b"two \xff\x00 bytes".to_vec()), (4, b"four".to_vec())]);
    }

    #[test]
    fn unflushed_tail_is_not_shown() {
        let dir = tempfile::tempdir().unwrap();
        sample(dir.path());
        // An index entry that points past the end of the log, as while a run is being written.
        let mut idx = std::fs::OpenOptions::new().append(true).open(dir.path().join(LINES_IDX)).unwrap();
        idx.write_all(&10_000u64.to_le_bytes()).unwrap();
        let mut r = LogReader::open(dir.path()).unwrap();
        assert_eq!(r.count(StreamFilter::Both).unwrap(), 4);
    }

    #[test]
    fn a_damaged_entry_is_reported_never_used_to_size_a_read() {
        let dir = tempfile::tempdir().unwrap();
        sample(dir.path());
        // Line 2's entry made huge: read as a length, it would ask for exabytes.
        let mut idx = std::fs::OpenOptions::new().write(true).open(dir.path().join(LINES_IDX)).unwrap();
        idx.seek(SeekFrom::Start(8)).unwrap();
        idx.write_all(&0x0fff_ffff_ffff_fff0u64.to_le_bytes()).unwrap();
        drop(idx);
        let mut r = LogReader::open(dir.path()).unwrap();
        let page = r.page(StreamFilter::Both, 0, 4).unwrap_err().to_string();
        assert!(page.contains("lines.idx is damaged"), "{page}");
        let scan = r.scan(StreamFilter::Both, |_, _, _| true).unwrap_err().to_string();
        assert!(scan.contains("lines.idx is damaged"), "{scan}");
    }

    /// Blocks of 1 to 4 lines, their stream chosen by a fixed pseudo-random sequence: runs of
    /// every length, switches at every place.
    fn mixed(dir: &Path, blocks: usize) -> Vec<Stream> {
        let (mut w, mut streams, mut seed) = (LogWriter::create(dir).unwrap(), Vec::new(), 7u32);
        for _ in 0..blocks {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let stream = if seed >> 16 & 3 == 0 { Stream::Stdout } else { Stream::Stderr };
            let lines = (seed >> 20 & 3) as usize + 1;
            let mut block = Vec::new();
            let mut ends = Vec::new();
            for _ in 0..lines {
                block.extend_from_slice(format!("line {}", streams.len() + 1).as_bytes());
                ends.push(block.len());
                block.push(b'\n');
                streams.push(stream);
            }
            w.write_lines(stream, &block, &ends);
        }
        assert!(w.finish().is_none());
        streams
    }

    #[test]
    fn every_page_of_each_stream_is_its_lines_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let streams = mixed(dir.path(), 60);
        let mut r = LogReader::open(dir.path()).unwrap();
        for stream in [Stream::Stdout, Stream::Stderr] {
            let want: Vec<u64> = (1..).zip(&streams).filter(|&(_, s)| *s == stream).map(|(n, _)| n).collect();
            let filter = StreamFilter::Only(stream);
            assert_eq!(r.count(filter).unwrap(), want.len() as u64);
            for from in 0..=want.len() + 1 {
                for count in [0, 1, 2, 5, 1000] {
                    let page = r.page(filter, from as u64, count).unwrap();
                    let got: Vec<u64> = page.iter().map(|l| l.number).collect();
                    let expected: Vec<u64> = want.iter().copied().skip(from).take(count as usize).collect();
                    assert_eq!(got, expected, "{stream:?} from {from}, {count} lines");
                    assert!(
                        page.iter().all(|l| l.stream == stream && l.bytes == format!("line {}", l.number).as_bytes())
                    );
                }
            }
        }
    }

    #[test]
    fn a_run_on_stdout_alone_writes_no_stream_index() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = LogWriter::create(dir.path()).unwrap();
        w.write_lines(Stream::Stdout, b"a\nb\n", &[1, 3]);
        assert!(w.finish().is_none());
        assert!(!dir.path().join(STREAMS_IDX).exists());
        let mut r = LogReader::open(dir.path()).unwrap();
        assert_eq!(r.count(StreamFilter::Only(Stream::Stdout)).unwrap(), 2);
        assert_eq!(r.count(StreamFilter::Only(Stream::Stderr)).unwrap(), 0);
        assert_eq!(r.page(StreamFilter::Only(Stream::Stdout), 1, 5).unwrap()[0].bytes, b"b");
        assert!(r.page(StreamFilter::Only(Stream::Stderr), 0, 5).unwrap().is_empty());
    }

    #[test]
    fn runs_stored_with_an_index_per_stream_are_still_read() {
        let dir = tempfile::tempdir().unwrap();
        let streams = mixed(dir.path(), 20);
        // The layout before `streams.idx`: per stream, each line's index in `lines.idx`.
        std::fs::remove_file(dir.path().join(STREAMS_IDX)).unwrap();
        for (stream, name) in [(Stream::Stdout, STDOUT_IDX), (Stream::Stderr, STDERR_IDX)] {
            let entries: Vec<u8> =
                (0u64..).zip(&streams).filter(|&(_, s)| *s == stream).flat_map(|(i, _)| i.to_le_bytes()).collect();
            std::fs::write(dir.path().join(name), entries).unwrap();
        }
        let mut r = LogReader::open(dir.path()).unwrap();
        let errors = streams.iter().filter(|&&s| s == Stream::Stderr).count() as u64;
        assert_eq!(r.count(StreamFilter::Only(Stream::Stderr)).unwrap(), errors);
        let page = r.page(StreamFilter::Only(Stream::Stderr), 1, 3).unwrap();
        let want: Vec<u64> =
            (1..).zip(&streams).filter(|&(_, s)| *s == Stream::Stderr).map(|(n, _)| n).skip(1).take(3).collect();
        assert_eq!(page.iter().map(|l| l.number).collect::<Vec<_>>(), want);
    }

    #[test]
    fn stream_runs_past_the_stored_lines_are_not_shown() {
        let dir = tempfile::tempdir().unwrap();
        sample(dir.path());
        // A switch written for a line that never reached `lines.idx`.
        let mut idx = std::fs::OpenOptions::new().append(true).open(dir.path().join(STREAMS_IDX)).unwrap();
        idx.write_all(&[4u64.to_le_bytes(), 2u64.to_le_bytes()].concat()).unwrap();
        let mut r = LogReader::open(dir.path()).unwrap();
        assert_eq!(r.count(StreamFilter::Only(Stream::Stdout)).unwrap(), 2);
        assert_eq!(r.count(StreamFilter::Only(Stream::Stderr)).unwrap(), 2);
    }

    #[test]
    fn a_damaged_stream_run_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        sample(dir.path());
        // The second run (stdout from line 3) said to have 7 stdout lines before it.
        let mut idx = std::fs::OpenOptions::new().write(true).open(dir.path().join(STREAMS_IDX)).unwrap();
        idx.seek(SeekFrom::Start(RUN_ENTRY + 8)).unwrap();
        idx.write_all(&7u64.to_le_bytes()).unwrap();
        drop(idx);
        let mut r = LogReader::open(dir.path()).unwrap();
        let error = r.page(StreamFilter::Only(Stream::Stdout), 0, 4).unwrap_err().to_string();
        assert!(error.contains("streams.idx is damaged"), "{error}");
    }
}
