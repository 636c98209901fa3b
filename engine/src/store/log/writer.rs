//! Appending a run's lines to its log and indexes.

use super::{LOG_FILE, MARK_EVERY, MARKS_IDX, RUN_ENTRY, STREAMS_IDX, encode, pair_bytes, stream_slot};
use crate::store::{StoreError, files};
use buildvise_plugin_api::Stream;
use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Smaller than the blocks a flood brings (a read of up to 256 KiB), which then go straight to
/// the file rather than through a copy in the buffer; a trickle of lines is still gathered.
const WRITE_BUFFER: usize = 64 * 1024;
/// Room kept beyond the stream index when a full disk makes the log give some back: a
/// filesystem allocates whole blocks.
const SPARE: u64 = 8192;

/// Appends lines to a run's log and indexes. A write that fails (a full disk) stops the storing,
/// not the numbering: lines keep their numbers, so that what the parser says about line N stays
/// true of the lines that were stored.
pub struct LogWriter {
    log: BufWriter<File>,
    /// Written unbuffered, a block's marks at once, after the block: a mark is never more than
    /// the log's buffer ahead of the log, so a reader of a run in flight counts at most that
    /// much past the last mark it can use.
    marks: File,
    /// Created at the first switch of stream: most runs never write it.
    streams: Option<BufWriter<File>>,
    /// The stream of the run of lines being appended, and the lines of each stream stored before
    /// it (stdout's first).
    stream: Stream,
    before: [u64; 2],
    offset: u64,
    /// Where the next mark may be: the first line starting at or after it gets one.
    next_mark: u64,
    count: u64,
    stored: u64,
    failure: Option<StoreError>,
    dir: PathBuf,
    /// The marks of the block being appended.
    entries: Vec<u8>,
}

impl LogWriter {
    pub fn create(dir: &Path) -> Result<Self, StoreError> {
        let open = |name: &str| files::private_file(&dir.join(name));
        Ok(LogWriter {
            log: BufWriter::with_capacity(WRITE_BUFFER, open(LOG_FILE)?),
            marks: open(MARKS_IDX)?,
            streams: None,
            stream: Stream::Stdout,
            before: [0; 2],
            offset: 0,
            next_mark: MARK_EVERY,
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

    /// After a failed write (a full disk): makes room for the stream index of what was stored,
    /// and writes it. The log is cut back at the start of a line, far enough to hold the entries
    /// still buffered; bytes still in the log's buffer are dropped rather than written later at
    /// a stale position. Marks past the cut are not used by a reader, and the lines cut off are
    /// simply not shown: losing a few lines beats a stream index that cannot be written, which
    /// would put lines on the wrong stream.
    fn give_back(&mut self) {
        let file = self.log.get_ref();
        let Ok(on_disk) = file.metadata().map(|m| m.len()) else { return };
        let buffered = self.streams.as_ref().map_or(0, |w| w.buffer().len() as u64);
        let limit = on_disk.min(self.offset).saturating_sub(buffered + SPARE);
        // The writer's file is open for writing only.
        let cut = File::open(self.dir.join(LOG_FILE)).and_then(|log| line_start_at_or_before(&log, limit)).unwrap_or(0);
        let _ = file.set_len(cut);
        if let Ok(mut file) = file.try_clone() {
            let _ = file.seek(SeekFrom::Start(cut));
            let failed = std::mem::replace(&mut self.log, BufWriter::new(file));
            drop(failed.into_parts());
        }
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
        // The log before its marks: a mark never leads the bytes it points at by more than the
        // log's buffer.
        self.log.write_all(block).map_err(|e| StoreError::io(&self.dir.join(LOG_FILE), e))?;
        self.mark(block, ends);
        if !self.entries.is_empty() {
            self.marks.write_all(&self.entries).map_err(|e| StoreError::io(&self.dir.join(MARKS_IDX), e))?;
        }
        self.before[stream_slot(stream)] += ends.len() as u64;
        self.offset += block.len() as u64;
        Ok(())
    }

    /// Puts in `entries` the marks of the block's lines: the first line that starts at or after
    /// `next_mark`, then the first [`MARK_EVERY`] bytes after that one, and so on. A block is
    /// searched for them, not walked line by line.
    fn mark(&mut self, block: &[u8], ends: &[usize]) {
        self.entries.clear();
        let (base, first_line) = (self.offset, self.stored);
        let block_end = base + block.len() as u64;
        while self.next_mark < block_end {
            // Line `i` of the block starts after the `\n` ending line `i - 1`.
            let wanted = self.next_mark.saturating_sub(base) as usize;
            let i = if wanted == 0 { 0 } else { ends.partition_point(|&end| end + 1 < wanted) + 1 };
            if i >= ends.len() {
                break;
            }
            let start = if i == 0 { 0 } else { ends[i - 1] + 1 };
            let (line, offset) = (first_line + i as u64, base + start as u64);
            self.entries.extend_from_slice(&pair_bytes(line, offset));
            self.next_mark = offset + MARK_EVERY;
        }
    }

    /// Starts a run of `stream`'s lines at the next line: one entry in `streams.idx`.
    fn switch_to(&mut self, stream: Stream) -> Result<(), StoreError> {
        let streams = match &mut self.streams {
            Some(streams) => streams,
            None => self
                .streams
                .insert(BufWriter::with_capacity(WRITE_BUFFER, files::private_file(&self.dir.join(STREAMS_IDX))?)),
        };
        let entry: [u8; RUN_ENTRY as usize] = pair_bytes(encode(self.stored, stream), self.before[stream_slot(stream)]);
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
        // The log first: a reader trusts the stream index only as far as the log reaches.
        let flushed = self.log.flush().and_then(|()| self.streams.as_mut().map_or(Ok(()), BufWriter::flush));
        if let Err(e) = flushed {
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

/// The offset of the line of `log` that contains byte `limit` (or starts right after it), read
/// backwards a chunk at a time: the start of the log when no `\n` comes before `limit`.
fn line_start_at_or_before(log: &File, limit: u64) -> std::io::Result<u64> {
    const CHUNK: u64 = 64 * 1024;
    let mut end = limit;
    let mut chunk = vec![0u8; CHUNK as usize];
    while end > 0 {
        let start = end.saturating_sub(CHUNK);
        let part = &mut chunk[..(end - start) as usize];
        files::read_exact_at(log, part, start)?;
        if let Some(newline) = memchr::memrchr(b'\n', part) {
            return Ok(start + newline as u64 + 1);
        }
        end = start;
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::super::{MARK_ENTRY, pair};
    use super::*;

    fn marks(dir: &Path) -> Vec<(u64, u64)> {
        let raw = std::fs::read(dir.join(MARKS_IDX)).unwrap();
        raw.chunks_exact(MARK_ENTRY as usize).map(|c| pair(c.try_into().unwrap())).collect()
    }

    /// Every mark is the first line starting at least `MARK_EVERY` bytes after the one before,
    /// however the lines came in blocks: checked against the log itself.
    #[test]
    fn a_mark_is_the_first_line_a_mark_apart_whatever_the_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = LogWriter::create(dir.path()).unwrap();
        let (mut seed, mut written) = (11u32, 0);
        while written < 40 * MARK_EVERY as usize {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            // Blocks of 1 to 64 lines of 0 to 1500 bytes, now and then one of 20 000.
            let (mut block, mut ends) = (Vec::new(), Vec::new());
            for line in 0..(seed >> 8 & 63) + 1 {
                let len = if (seed >> 3).wrapping_add(line) % 97 == 0 { 20_000 } else { (seed >> 14) as usize % 1500 };
                block.extend(std::iter::repeat_n(b'x', len));
                ends.push(block.len());
                block.push(b'\n');
            }
            written += block.len();
            w.write_lines(if seed & 1 == 0 { Stream::Stdout } else { Stream::Stderr }, &block, &ends);
        }
        assert!(w.finish().is_none());
        let log = std::fs::read(dir.path().join(LOG_FILE)).unwrap();
        let starts: Vec<u64> = std::iter::once(0)
            .chain(memchr::memchr_iter(b'\n', &log).map(|i| i as u64 + 1).filter(|&s| s < log.len() as u64))
            .collect();
        let mut want = Vec::new();
        let mut next = MARK_EVERY;
        for (line, &start) in starts.iter().enumerate() {
            if start >= next {
                want.push((line as u64, start));
                next = start + MARK_EVERY;
            }
        }
        assert!(want.len() > 30, "{} marks", want.len());
        assert_eq!(marks(dir.path()), want);
    }

    #[test]
    fn a_cut_falls_at_a_line_start() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        let mut text = b"first\n".to_vec();
        text.extend(std::iter::repeat_n(b'y', 200_000));
        text.extend_from_slice(b"\nlast\n");
        std::fs::write(&path, &text).unwrap();
        let file = File::open(&path).unwrap();
        assert_eq!(line_start_at_or_before(&file, 3).unwrap(), 0);
        assert_eq!(line_start_at_or_before(&file, 6).unwrap(), 6);
        assert_eq!(line_start_at_or_before(&file, 150_000).unwrap(), 6);
        assert_eq!(line_start_at_or_before(&file, text.len() as u64 - 2).unwrap(), text.len() as u64 - 5);
    }
}
