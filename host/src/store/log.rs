//! The raw log and its binary line index.
//!
//! `output.log` holds every line byte for byte as the process printed it (ANSI included), each
//! ended by `\n`, both streams in arrival order. `lines.idx` holds one little-endian u64 per line:
//! the line's start offset, with the top bit set for stderr. `stdout.idx` and `stderr.idx` hold,
//! per line of that stream, the u64 index of the line in `lines.idx`. Any page is therefore a
//! few seeks, whatever the log's size, and a scan (grep) reads both files front to back.
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
    stdout: BufWriter<File>,
    stderr: BufWriter<File>,
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
            stdout: open(STDOUT_IDX)?,
            stderr: open(STDERR_IDX)?,
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
                    self.failure = Some(StoreError::io(&self.dir.join(LOG_FILE), e));
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
        let buffered: u64 = [&self.lines, &self.stdout, &self.stderr].iter().map(|w| w.buffer().len() as u64).sum();
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
        let _ = self.stdout.flush();
        let _ = self.stderr.flush();
    }

    /// Appends one line (without its `\n`) and returns its number.
    #[cfg(test)]
    pub fn write_line(&mut self, stream: Stream, bytes: &[u8]) -> u64 {
        let block = [bytes, b"\n"].concat();
        self.write_lines(stream, &block, &[bytes.len()])
    }

    fn append(&mut self, stream: Stream, block: &[u8], ends: &[usize]) -> std::io::Result<()> {
        // The log before the index: an entry never leads the bytes it points at.
        self.log.write_all(block)?;
        let tag = if stream == Stream::Stderr { STDERR_BIT } else { 0 };
        let per_stream = if stream == Stream::Stderr { &mut self.stderr } else { &mut self.stdout };
        // A block's entries are put together first and written once per file: a write per
        // entry cost more than finding the lines.
        let entries = &mut self.entries;
        entries.resize(ends.len() * 8, 0);
        let starts = std::iter::once(0).chain(ends.iter().map(|&end| end as u64 + 1));
        for (entry, start) in entries.chunks_exact_mut(8).zip(starts) {
            entry.copy_from_slice(&((self.offset + start) | tag).to_le_bytes());
        }
        self.lines.write_all(entries)?;
        for (entry, line) in entries.chunks_exact_mut(8).zip(self.stored..) {
            entry.copy_from_slice(&line.to_le_bytes());
        }
        per_stream.write_all(entries)?;
        self.offset += block.len() as u64;
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
        let flushed = self.log.flush().and_then(|()| self.lines.flush()).and_then(|()| self.stdout.flush());
        if let Err(e) = flushed.and_then(|()| self.stderr.flush()) {
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

fn stream_index(stream: Stream) -> &'static str {
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
        let mut reader = LogReader { log, log_len, lines, total: idx_len / 8, dir: dir.to_path_buf() };
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
    pub fn count(&self, filter: StreamFilter) -> Result<u64, StoreError> {
        let StreamFilter::Only(stream) = filter else {
            return Ok(self.total);
        };
        let path = self.dir.join(stream_index(stream));
        let mut len = std::fs::metadata(&path).map_err(|e| StoreError::io(&path, e))?.len() / 8;
        // Trailing entries may point at lines not stored; drop them as `open` does.
        while len > 0 && self.stream_numbers(filter, len - 1, 1)?.is_empty() {
            len -= 1;
        }
        Ok(len)
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
    fn stream_numbers(&self, filter: StreamFilter, from: u64, count: u64) -> Result<Vec<u64>, StoreError> {
        let StreamFilter::Only(stream) = filter else {
            return Ok((from..self.total.min(from.saturating_add(count))).collect());
        };
        let path = self.dir.join(stream_index(stream));
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
        indexes.into_iter().map(|i| self.line(i)).collect()
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
        let r = LogReader::open(dir.path()).unwrap();
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
}
