//! Reading pages and scans of a stored log.

use super::{LOG_FILE, MARK_ENTRY, MARKS_IDX, RUN_ENTRY, STREAMS_IDX, decode, pair};
use crate::store::{StoreError, files};
use buildvise_plugin_api::Stream;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// A page reads from a mark: at most a mark's distance and its own lines.
const PAGE_BUFFER: usize = 16 * 1024;
/// A scan reads the whole log front to back.
const SCAN_BUFFER: usize = 256 * 1024;

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
    /// `marks.idx` (none: only the implied mark at the start of the log).
    marks: Option<File>,
    /// The implied mark and the entries of `marks.idx` that point into the log.
    mark_count: u64,
    /// Lines stored: whole lines of the log.
    total: u64,
    dir: PathBuf,
    /// `streams.idx` and its entries, once a page needs it.
    runs: Option<Runs>,
}

/// Reads lines forward from the start of one, never past the log's length when it was opened.
struct Cursor {
    reader: BufReader<File>,
    /// The line that starts at `pos` (0-based).
    index: u64,
    pos: u64,
    end: u64,
}

impl Cursor {
    fn at(mut file: File, (index, pos): (u64, u64), end: u64, buffer: usize) -> std::io::Result<Cursor> {
        file.seek(SeekFrom::Start(pos))?;
        Ok(Cursor { reader: BufReader::with_capacity(buffer, file), index, pos, end })
    }

    /// What is buffered, up to the end.
    fn fill(&mut self) -> std::io::Result<&[u8]> {
        let room = self.end - self.pos;
        let buf = self.reader.fill_buf()?;
        Ok(&buf[..buf.len().min(usize::try_from(room).unwrap_or(usize::MAX))])
    }

    fn consume(&mut self, bytes: usize, lines: u64) {
        self.reader.consume(bytes);
        self.pos += bytes as u64;
        self.index += lines;
    }

    /// Passes `n` lines; false when the log ends first.
    fn skip(&mut self, mut n: u64) -> std::io::Result<bool> {
        while n > 0 {
            let buf = self.fill()?;
            if buf.is_empty() {
                return Ok(false);
            }
            let (mut seen, mut used) = (0, buf.len());
            for at in memchr::memchr_iter(b'\n', buf) {
                seen += 1;
                if seen == n {
                    used = at + 1;
                    break;
                }
            }
            n -= seen;
            self.consume(used, seen);
        }
        Ok(true)
    }

    /// The next line, without its `\n`, into `out`; false when the log ends before a `\n`.
    fn line(&mut self, out: &mut Vec<u8>) -> std::io::Result<bool> {
        out.clear();
        loop {
            let buf = self.fill()?;
            if buf.is_empty() {
                return Ok(false);
            }
            if let Some(at) = memchr::memchr(b'\n', buf) {
                out.extend_from_slice(&buf[..at]);
                self.consume(at + 1, 1);
                return Ok(true);
            }
            out.extend_from_slice(buf);
            let used = buf.len();
            self.consume(used, 0);
        }
    }
}

/// The streams of a scan's lines, one after another, from `streams.idx` read in order: the
/// stream of the lines so far, and the next switch.
struct StreamWalk {
    file: Option<BufReader<File>>,
    current: Stream,
    next: Option<(u64, Stream)>,
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
        let (log, log_len) = open_sized(dir, LOG_FILE)?.ok_or_else(|| missing(dir, LOG_FILE))?;
        // Without its marks the log alone still holds every line; only the pages cost a scan.
        let (marks, mark_count) = match open_sized(dir, MARKS_IDX)? {
            Some((file, len)) => (Some(file), len / MARK_ENTRY + 1),
            None => (None, 1),
        };
        let mut reader = LogReader { log, log_len, marks, mark_count, total: 0, dir: dir.to_path_buf(), runs: None };
        reader.total = reader.stored_lines()?;
        Ok(reader)
    }

    /// The lines stored. A run still being written (or whose writer ran out of room) may have
    /// marks whose line never reached the log: they are left out.
    fn stored_lines(&mut self) -> Result<u64, StoreError> {
        while self.mark_count > 1 && self.mark(self.mark_count - 1)?.1 >= self.log_len {
            self.mark_count -= 1;
        }
        let last = self.checked_mark(self.mark_count - 1)?;
        let mut cursor = self.cursor(last, PAGE_BUFFER)?;
        cursor.skip(u64::MAX).map_err(|e| StoreError::io(&self.dir.join(LOG_FILE), e))?;
        Ok(cursor.index)
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
        let len = self.runs()?.len;
        let last = self.run(len - 1)?;
        let tail = if last.stream == stream { self.total - last.start } else { 0 };
        Ok(last.before(stream) + tail)
    }

    /// `streams.idx`, opened once; its entries past the stored lines are left out, as `open`
    /// leaves out index entries past the log.
    fn runs(&mut self) -> Result<&mut Runs, StoreError> {
        if self.runs.is_none() {
            let path = self.dir.join(STREAMS_IDX);
            let file = match super::super::files::open_regular(&path) {
                Ok(file) => Some(file),
                Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err(e),
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
            let (first, before) = pair(&raw);
            let (start, stream) = decode(first);
            Ok(Run { start, stream, before })
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

    /// Mark `i`: a line (0-based) and where it starts, as the index says.
    fn mark(&mut self, i: u64) -> Result<(u64, u64), StoreError> {
        if i == 0 {
            return Ok((0, 0));
        }
        let file = self.marks.as_mut().expect("a mark past the first is read from a file");
        let mut raw = [0u8; MARK_ENTRY as usize];
        file.seek(SeekFrom::Start((i - 1) * MARK_ENTRY))
            .and_then(|_| file.read_exact(&mut raw))
            .map_err(|e| StoreError::io(&self.dir.join(MARKS_IDX), e))?;
        Ok(pair(&raw))
    }

    /// Mark `i`, checked against the log: it starts a line there, inside the log, and no more
    /// lines come before it than bytes.
    fn checked_mark(&mut self, i: u64) -> Result<(u64, u64), StoreError> {
        let (line, start) = self.mark(i)?;
        let mut before = [0u8; 1];
        // A positioned read: the cursors share the log's offset.
        let starts_a_line = start == 0
            || (start < self.log_len
                && line <= start
                && files::read_exact_at(&self.log, &mut before, start - 1).is_ok()
                && before[0] == b'\n');
        if !starts_a_line {
            return Err(self.damaged(
                MARKS_IDX,
                format!(
                    "line {} is said to start at byte {start} of a {}-byte log, which no line does",
                    line + 1,
                    self.log_len
                ),
            ));
        }
        Ok((line, start))
    }

    /// The last mark at or before line `index`, checked.
    fn mark_for(&mut self, index: u64) -> Result<(u64, u64), StoreError> {
        let (mut lo, mut hi) = (0, self.mark_count);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if self.mark(mid)?.0 <= index {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        self.checked_mark(lo)
    }

    fn cursor(&self, at: (u64, u64), buffer: usize) -> Result<Cursor, StoreError> {
        let path = self.dir.join(LOG_FILE);
        #[cfg(unix)]
        let file = self.log.try_clone().map_err(|e| StoreError::io(&path, e))?;
        // A clone shares the cursor, which a read at an offset moves on Windows.
        #[cfg(windows)]
        let file = files::open_regular(&path)?;
        Cursor::at(file, at, self.log_len, buffer).map_err(|e| StoreError::io(&path, e))
    }

    /// The streams of lines `indexes` (ascending), as the index says.
    fn streams_of(&mut self, filter: StreamFilter, indexes: &[u64]) -> Result<Vec<Stream>, StoreError> {
        if let StreamFilter::Only(stream) = filter {
            return Ok(vec![stream; indexes.len()]);
        }
        let Some(&first) = indexes.first() else { return Ok(Vec::new()) };
        let len = self.runs()?.len;
        // The run holding the first line, then forward from there.
        let (mut lo, mut hi) = (0, len);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if self.run(mid)?.start <= first {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let mut streams = Vec::with_capacity(indexes.len());
        // Each run is read once, however many of the page's lines it holds.
        let mut run = self.run(lo)?;
        let mut next = if lo + 1 < len { Some(self.run(lo + 1)?) } else { None };
        for &i in indexes {
            while let Some(following) = next
                && following.start <= i
            {
                (lo, run) = (lo + 1, following);
                next = if lo + 1 < len { Some(self.run(lo + 1)?) } else { None };
            }
            streams.push(run.stream);
        }
        Ok(streams)
    }

    /// The 0-based combined indexes of a stream's lines `from..from+count`.
    fn stream_numbers(&mut self, filter: StreamFilter, from: u64, count: u64) -> Result<Vec<u64>, StoreError> {
        let StreamFilter::Only(stream) = filter else {
            return Ok((from..self.total.min(from.saturating_add(count))).collect());
        };
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

    /// Lines `start..start+count` (0-based) of the selected stream.
    pub fn page(&mut self, filter: StreamFilter, start: u64, count: u64) -> Result<Vec<LogLine>, StoreError> {
        let indexes = self.stream_numbers(filter, start, count)?;
        let streams = self.streams_of(filter, &indexes)?;
        let path = self.dir.join(LOG_FILE);
        let mut cursor: Option<Cursor> = None;
        let mut page = Vec::with_capacity(indexes.len());
        for (&index, stream) in indexes.iter().zip(streams) {
            // The next line of the page is usually the cursor's; a gap (another stream's lines)
            // is crossed from the nearer of the cursor and a mark.
            if cursor.as_ref().is_none_or(|c| c.index != index) {
                let mark = self.mark_for(index)?;
                if cursor.as_ref().is_none_or(|c| c.index > index || mark.0 > c.index) {
                    cursor = Some(self.cursor(mark, PAGE_BUFFER)?);
                }
            }
            let c = cursor.as_mut().expect("placed above");
            let mut bytes = Vec::new();
            let found = c.skip(index - c.index).and_then(|passed| Ok(passed && c.line(&mut bytes)?));
            if !found.map_err(|e| StoreError::io(&path, e))? {
                return Err(self.damaged(MARKS_IDX, format!("the log ends before line {}", index + 1)));
            }
            page.push(LogLine { number: index + 1, stream, bytes });
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
        let log_path = self.dir.join(LOG_FILE);
        let mut cursor = self.cursor((0, 0), SCAN_BUFFER)?;
        let mut walk = self.stream_walk()?;
        let mut line = Vec::new();
        for i in 0..self.total {
            if !cursor.line(&mut line).map_err(|e| StoreError::io(&log_path, e))? {
                return Err(self.damaged(MARKS_IDX, format!("the log ends before line {}", i + 1)));
            }
            let stream = self.next_stream(&mut walk, i)?;
            if filter.selects(stream) && !visit(i + 1, stream, &line) {
                break;
            }
        }
        Ok(())
    }

    fn stream_walk(&self) -> Result<StreamWalk, StoreError> {
        let mut file = open_sized(&self.dir, STREAMS_IDX)?.map(|(file, _)| BufReader::with_capacity(4096, file));
        let next = next_switch(&mut file).map_err(|e| StoreError::io(&self.dir.join(STREAMS_IDX), e))?;
        Ok(StreamWalk { file, current: Stream::Stdout, next })
    }

    /// The stream of line `index`, the lines before it walked.
    fn next_stream(&self, walk: &mut StreamWalk, index: u64) -> Result<Stream, StoreError> {
        while let Some((first, stream)) = walk.next
            && first <= index
        {
            walk.current = stream;
            walk.next = next_switch(&mut walk.file).map_err(|e| StoreError::io(&self.dir.join(STREAMS_IDX), e))?;
        }
        Ok(walk.current)
    }
}

/// The next switch `streams.idx` lists, read in order; none at its end.
fn next_switch(file: &mut Option<BufReader<File>>) -> std::io::Result<Option<(u64, Stream)>> {
    let Some(file) = file else { return Ok(None) };
    let mut raw = [0u8; RUN_ENTRY as usize];
    match file.read_exact(&mut raw) {
        Ok(()) => Ok(Some(decode(pair(&raw).0))),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
        Err(e) => Err(e),
    }
}

/// A file of the run and its length; none when it does not exist.
fn open_sized(dir: &Path, name: &str) -> Result<Option<(File, u64)>, StoreError> {
    let path = dir.join(name);
    let file = match super::super::files::open_regular(&path) {
        Ok(file) => file,
        Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let len = file.metadata().map_err(|e| StoreError::io(&path, e))?.len();
    Ok(Some((file, len)))
}

fn missing(dir: &Path, name: &str) -> StoreError {
    StoreError::io(&dir.join(name), std::io::ErrorKind::NotFound.into())
}

#[cfg(test)]
mod tests {
    use super::super::{LogWriter, pair_bytes};
    use super::*;
    use std::io::Write;

    fn sample(dir: &Path) {
        let mut w = LogWriter::create(dir).unwrap();
        w.write_line(Stream::Stdout, b"one");
        w.write_line(Stream::Stderr, b"two \xff\x00 bytes");
        w.write_line(Stream::Stdout, b"");
        w.write_line(Stream::Stderr, b"four");
        assert!(w.finish().is_none());
    }

    fn append(path: &Path, bytes: &[u8]) {
        std::fs::OpenOptions::new().append(true).open(path).unwrap().write_all(bytes).unwrap();
    }

    fn overwrite(path: &Path, at: u64, bytes: &[u8]) {
        let mut file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
        file.seek(SeekFrom::Start(at)).unwrap();
        file.write_all(bytes).unwrap();
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
    fn an_unflushed_tail_is_not_shown() {
        let dir = tempfile::tempdir().unwrap();
        sample(dir.path());
        // A mark past the end of the log, and a line whose end has not been written, as while
        // a run is being written.
        append(&dir.path().join(MARKS_IDX), &pair_bytes(9, 10_000));
        append(&dir.path().join(LOG_FILE), b"half a li");
        let mut r = LogReader::open(dir.path()).unwrap();
        assert_eq!(r.count(StreamFilter::Both).unwrap(), 4);
        assert_eq!(r.page(StreamFilter::Both, 3, 5).unwrap().len(), 1);
    }

    /// The text of line `n` of [`mixed`]: long enough, with `pad`, that a log has many marks.
    fn text(n: usize, pad: usize) -> Vec<u8> {
        format!("line {n} {}", ".".repeat(pad)).into_bytes()
    }

    /// Blocks of 1 to 4 lines, their stream chosen by a fixed pseudo-random sequence: runs of
    /// every length, switches at every place.
    fn mixed(dir: &Path, blocks: usize, pad: usize) -> Vec<Stream> {
        let (mut w, mut streams, mut seed) = (LogWriter::create(dir).unwrap(), Vec::new(), 7u32);
        for _ in 0..blocks {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let stream = if seed >> 16 & 3 == 0 { Stream::Stdout } else { Stream::Stderr };
            let lines = (seed >> 20 & 3) as usize + 1;
            let mut block = Vec::new();
            let mut ends = Vec::new();
            for _ in 0..lines {
                block.extend_from_slice(&text(streams.len() + 1, pad));
                ends.push(block.len());
                block.push(b'\n');
                streams.push(stream);
            }
            w.write_lines(stream, &block, &ends);
        }
        assert!(w.finish().is_none());
        streams
    }

    fn every_page_is_its_lines(dir: &Path, streams: &[Stream], pad: usize) {
        let mut r = LogReader::open(dir).unwrap();
        assert_eq!(r.count(StreamFilter::Both).unwrap(), streams.len() as u64);
        for filter in [StreamFilter::Both, StreamFilter::Only(Stream::Stdout), StreamFilter::Only(Stream::Stderr)] {
            let want: Vec<u64> = (1..).zip(streams).filter(|&(_, s)| filter.selects(*s)).map(|(n, _)| n).collect();
            assert_eq!(r.count(filter).unwrap(), want.len() as u64);
            for from in (0..=want.len() + 1).step_by(7).chain([want.len() - 1]) {
                for count in [0, 1, 2, 5, 1000] {
                    let page = r.page(filter, from as u64, count).unwrap();
                    let got: Vec<u64> = page.iter().map(|l| l.number).collect();
                    let expected: Vec<u64> = want.iter().copied().skip(from).take(count as usize).collect();
                    assert_eq!(got, expected, "{filter:?} from {from}, {count} lines");
                    for line in &page {
                        assert_eq!(line.stream, streams[line.number as usize - 1], "line {}", line.number);
                        assert_eq!(line.bytes, text(line.number as usize, pad), "line {}", line.number);
                    }
                }
            }
            let mut scanned = Vec::new();
            r.scan(filter, |n, stream, bytes| {
                assert_eq!((stream, bytes), (streams[n as usize - 1], &text(n as usize, pad)[..]));
                scanned.push(n);
                true
            })
            .unwrap();
            assert_eq!(scanned, want);
        }
    }

    #[test]
    fn every_page_of_each_stream_is_its_lines_in_order() {
        for (blocks, pad) in [(60, 0), (400, 300), (40, 40_000)] {
            let dir = tempfile::tempdir().unwrap();
            let streams = mixed(dir.path(), blocks, pad);
            let marks = std::fs::metadata(dir.path().join(MARKS_IDX)).unwrap().len() / MARK_ENTRY;
            assert!(pad == 0 || marks > 10, "{marks} marks");
            every_page_is_its_lines(dir.path(), &streams, pad);
        }
    }

    #[test]
    fn a_log_whose_marks_are_lost_is_still_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let streams = mixed(dir.path(), 200, 300);
        std::fs::remove_file(dir.path().join(MARKS_IDX)).unwrap();
        every_page_is_its_lines(dir.path(), &streams, 300);
    }

    #[test]
    fn a_damaged_mark_is_reported_never_used_to_size_a_read() {
        let dir = tempfile::tempdir().unwrap();
        let streams = mixed(dir.path(), 400, 300);
        let marks = dir.path().join(MARKS_IDX);
        // The first mark moved into the middle of its line.
        let raw = std::fs::read(&marks).unwrap();
        let (line, start) = pair(raw[..16].try_into().unwrap());
        overwrite(&marks, 0, &pair_bytes(line, start + 3));
        let mut r = LogReader::open(dir.path()).unwrap();
        assert_eq!(r.count(StreamFilter::Both).unwrap(), streams.len() as u64);
        let error = r.page(StreamFilter::Both, line + 2, 3).unwrap_err().to_string();
        assert!(error.contains("marks.idx is damaged"), "{error}");
        assert!(r.page(StreamFilter::Both, 0, 3).is_ok(), "lines before the mark do not need it");
        // The last mark made to claim more lines than the log has bytes.
        let last = raw.len() as u64 - MARK_ENTRY;
        let (_, start) = pair(raw[last as usize..].try_into().unwrap());
        overwrite(&marks, last, &pair_bytes(u64::MAX >> 2, start));
        let error = LogReader::open(dir.path()).err().expect("a damaged last mark").to_string();
        assert!(error.contains("marks.idx is damaged"), "{error}");
    }

    #[test]
    fn a_short_run_on_stdout_alone_writes_no_marks_and_no_stream_index() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = LogWriter::create(dir.path()).unwrap();
        w.write_lines(Stream::Stdout, b"a\nb\n", &[1, 3]);
        assert!(w.finish().is_none());
        assert_eq!(std::fs::metadata(dir.path().join(MARKS_IDX)).unwrap().len(), 0);
        assert!(!dir.path().join(STREAMS_IDX).exists());
        let mut r = LogReader::open(dir.path()).unwrap();
        assert_eq!(r.count(StreamFilter::Only(Stream::Stdout)).unwrap(), 2);
        assert_eq!(r.count(StreamFilter::Only(Stream::Stderr)).unwrap(), 0);
        assert_eq!(r.page(StreamFilter::Only(Stream::Stdout), 1, 5).unwrap()[0].bytes, b"b");
        assert!(r.page(StreamFilter::Only(Stream::Stderr), 0, 5).unwrap().is_empty());
    }

    #[test]
    fn stream_runs_past_the_stored_lines_are_not_shown() {
        let dir = tempfile::tempdir().unwrap();
        sample(dir.path());
        // A switch written for a line that never reached the log.
        append(&dir.path().join(STREAMS_IDX), &pair_bytes(4, 2));
        let mut r = LogReader::open(dir.path()).unwrap();
        assert_eq!(r.count(StreamFilter::Only(Stream::Stdout)).unwrap(), 2);
        assert_eq!(r.count(StreamFilter::Only(Stream::Stderr)).unwrap(), 2);
    }

    #[test]
    fn a_damaged_stream_run_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        sample(dir.path());
        // The second run (stdout from line 3) said to have 7 stdout lines before it.
        overwrite(&dir.path().join(STREAMS_IDX), RUN_ENTRY + 8, &7u64.to_le_bytes());
        let mut r = LogReader::open(dir.path()).unwrap();
        let error = r.page(StreamFilter::Only(Stream::Stdout), 0, 4).unwrap_err().to_string();
        assert!(error.contains("streams.idx is damaged"), "{error}");
    }
}
