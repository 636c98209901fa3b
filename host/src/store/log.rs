//! The raw log and its binary line index.
//!
//! `output.log` holds every line byte for byte as the process printed it (ANSI included), each
//! ended by `\n`, both streams in arrival order. `lines.idx` holds one little-endian u64 per line:
//! the line's start offset, with the top bit set for stderr. `stdout.idx` and `stderr.idx` hold,
//! per line of that stream, the u64 index of the line in `lines.idx`. Any page is therefore a
//! few seeks, whatever the log's size.

use super::StoreError;
use buildvise_plugin_api::Stream;
use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

pub const LOG_FILE: &str = "output.log";
const LINES_IDX: &str = "lines.idx";
const STDOUT_IDX: &str = "stdout.idx";
const STDERR_IDX: &str = "stderr.idx";
const STDERR_BIT: u64 = 1 << 63;

/// Appends lines to a run's log and index.
pub struct LogWriter {
    log: BufWriter<File>,
    lines: BufWriter<File>,
    stdout: BufWriter<File>,
    stderr: BufWriter<File>,
    offset: u64,
    count: u64,
}

impl LogWriter {
    pub fn create(dir: &Path) -> Result<Self, StoreError> {
        let open = |name: &str| -> Result<BufWriter<File>, StoreError> {
            let path = dir.join(name);
            let file = File::create(&path).map_err(|e| StoreError::io(&path, e))?;
            Ok(BufWriter::with_capacity(256 * 1024, file))
        };
        Ok(LogWriter {
            log: open(LOG_FILE)?,
            lines: open(LINES_IDX)?,
            stdout: open(STDOUT_IDX)?,
            stderr: open(STDERR_IDX)?,
            offset: 0,
            count: 0,
        })
    }

    /// Appends one line (without its `\n`) and returns its 1-based number.
    pub fn write_line(&mut self, stream: Stream, bytes: &[u8]) -> std::io::Result<u64> {
        let tag = if stream == Stream::Stderr { STDERR_BIT } else { 0 };
        self.lines.write_all(&(self.offset | tag).to_le_bytes())?;
        let per_stream = if stream == Stream::Stderr { &mut self.stderr } else { &mut self.stdout };
        per_stream.write_all(&self.count.to_le_bytes())?;
        self.log.write_all(bytes)?;
        self.log.write_all(b"\n")?;
        self.offset += bytes.len() as u64 + 1;
        self.count += 1;
        Ok(self.count)
    }

    pub fn lines(&self) -> u64 {
        self.count
    }

    pub fn bytes(&self) -> u64 {
        self.offset
    }

    /// Makes what was written so far visible to readers in other processes.
    pub fn flush(&mut self) -> std::io::Result<()> {
        // The log first: a reader trusts the index only as far as the log reaches.
        self.log.flush()?;
        self.lines.flush()?;
        self.stdout.flush()?;
        self.stderr.flush()
    }
}

fn stream_index(stream: Stream) -> &'static str {
    if stream == Stream::Stderr { STDERR_IDX } else { STDOUT_IDX }
}

/// Which lines a page selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamFilter {
    Both,
    Only(Stream),
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
    dir: std::path::PathBuf,
}

impl LogReader {
    pub fn open(dir: &Path) -> Result<Self, StoreError> {
        let open = |name: &str| -> Result<File, StoreError> {
            let path = dir.join(name);
            File::open(&path).map_err(|e| StoreError::io(&path, e))
        };
        let log = open(LOG_FILE)?;
        let log_len = log.metadata().map_err(|e| StoreError::io(&dir.join(LOG_FILE), e))?.len();
        let lines = open(LINES_IDX)?;
        let idx_len = lines.metadata().map_err(|e| StoreError::io(&dir.join(LINES_IDX), e))?.len();
        let mut reader = LogReader { log, log_len, lines, total: idx_len / 8, dir: dir.to_path_buf() };
        // A run still being written may have index entries whose line is not flushed yet.
        while reader.total > 0 && reader.entry(reader.total - 1)?.0 >= reader.log_len {
            reader.total -= 1;
        }
        Ok(reader)
    }

    /// Number of lines of `filter`.
    pub fn count(&self, filter: StreamFilter) -> Result<u64, StoreError> {
        let StreamFilter::Only(stream) = filter else {
            return Ok(self.total);
        };
        let path = self.dir.join(stream_index(stream));
        let mut len = std::fs::metadata(&path).map_err(|e| StoreError::io(&path, e))?.len() / 8;
        // Trailing entries may point at lines not flushed yet; drop them as `open` does.
        while len > 0 && self.stream_numbers(filter, len - 1, 1)?.is_empty() {
            len -= 1;
        }
        Ok(len)
    }

    fn entry(&mut self, index: u64) -> Result<(u64, Stream), StoreError> {
        let mut buf = [0u8; 8];
        self.lines
            .seek(SeekFrom::Start(index * 8))
            .and_then(|_| self.lines.read_exact(&mut buf))
            .map_err(|e| StoreError::io(&self.dir.join(LINES_IDX), e))?;
        let raw = u64::from_le_bytes(buf);
        let stream = if raw & STDERR_BIT != 0 { Stream::Stderr } else { Stream::Stdout };
        Ok((raw & !STDERR_BIT, stream))
    }

    /// Reads line `index` (0-based) of the combined log.
    fn line(&mut self, index: u64) -> Result<LogLine, StoreError> {
        let (start, stream) = self.entry(index)?;
        let end = if index + 1 < self.total { self.entry(index + 1)?.0 } else { self.log_len };
        let len = end.saturating_sub(start).saturating_sub(1);
        let mut bytes = vec![0u8; len as usize];
        self.log
            .seek(SeekFrom::Start(start))
            .and_then(|_| self.log.read_exact(&mut bytes))
            .map_err(|e| StoreError::io(&self.dir.join(LOG_FILE), e))?;
        Ok(LogLine { number: index + 1, stream, bytes })
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

    /// Every line of the selected stream, in order, for a scan such as grep.
    pub fn scan(&mut self, filter: StreamFilter, mut visit: impl FnMut(LogLine) -> bool) -> Result<(), StoreError> {
        const BATCH: u64 = 4096;
        let mut from = 0;
        loop {
            let page = self.page(filter, from, BATCH)?;
            if page.is_empty() {
                return Ok(());
            }
            from += page.len() as u64;
            for line in page {
                if !visit(line) {
                    return Ok(());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(dir: &Path) {
        let mut w = LogWriter::create(dir).unwrap();
        w.write_line(Stream::Stdout, b"one").unwrap();
        w.write_line(Stream::Stderr, b"two \xff\x00 bytes").unwrap();
        w.write_line(Stream::Stdout, b"").unwrap();
        w.write_line(Stream::Stderr, b"four").unwrap();
        w.flush().unwrap();
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
    fn unflushed_tail_is_not_shown() {
        let dir = tempfile::tempdir().unwrap();
        sample(dir.path());
        // An index entry that points past the end of the log, as while a run is being written.
        let mut idx = std::fs::OpenOptions::new().append(true).open(dir.path().join(LINES_IDX)).unwrap();
        idx.write_all(&10_000u64.to_le_bytes()).unwrap();
        let r = LogReader::open(dir.path()).unwrap();
        assert_eq!(r.count(StreamFilter::Both).unwrap(), 4);
    }
}
