//! Parsing a saved log without running anything (`buildvise parse`): the file is read line by
//! line, so a log far larger than memory is fine, and fed through the same worker as a live run.

use super::worker::PARSE_LIMIT;
use super::{ParseWorker, RunParser};
use crate::outcome::RunResult;
use crate::plugins::PluginError;
use crate::store::{LogLine, LogReader, StoreError, StreamFilter};
use buildvise_plugin_api::{RunEnd, Stream};
use std::collections::VecDeque;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A saved log.
pub enum SavedLog {
    /// Both streams interleaved; every line is tagged stdout.
    Combined(PathBuf),
    /// The streams apart: all of stdout is fed, then all of stderr.
    Streams { stdout: PathBuf, stderr: PathBuf },
}

/// What [`parse_saved`] made of a saved log: the result, the last lines (as many as asked for),
/// and how many lines the log had.
pub struct Parsed {
    pub result: RunResult,
    pub tail: Vec<LogLine>,
    pub lines: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum SavedError {
    #[error("cannot read {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Plugin(#[from] PluginError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Longest tail line kept: the answer clips lines far shorter, and a flood of huge lines must not
/// grow memory.
const KEPT_LINE_BYTES: usize = 4096;
/// Bytes pushed between two looks at the worker's queue (a line counts a byte more than its
/// length, so that a flood of empty lines is looked at too): a small part of the queue's bound.
const READY_EVERY_BYTES: usize = 64 * 1024;

/// Parses `log` through `parser` as a run that ended with `end` would have been parsed.
pub fn parse_saved(parser: RunParser, log: &SavedLog, end: RunEnd, keep_tail: usize) -> Result<Parsed, SavedError> {
    let mut worker = ParseWorker::start(parser);
    let mut number = 0;
    let mut tail: VecDeque<LogLine> = VecDeque::with_capacity(keep_tail.min(1024));
    let mut unchecked = 0;
    let mut feed = |path: &Path, stream: Stream| -> Result<(), SavedError> {
        let read_error = |source| SavedError::Read { path: path.to_path_buf(), source };
        let file = std::fs::File::open(path).map_err(read_error)?;
        let mut reader = std::io::BufReader::with_capacity(256 * 1024, file);
        let mut line = Vec::new();
        loop {
            if !read_line_bounded(&mut reader, &mut line).map_err(read_error)? {
                return Ok(());
            }
            number += 1;
            let body = line.as_slice();
            // A look at the queue every so many lines or bytes: asking at each line read the
            // clock each time, a fifth of a big log's parse.
            unchecked += 1 + body.len();
            if unchecked >= READY_EVERY_BYTES {
                while !worker.ready(Duration::from_millis(100)) {}
                unchecked = 0;
            }
            worker.push(stream, number, body);
            if keep_tail > 0 {
                // The line that leaves the tail lends its buffer to the one that joins it.
                let mut kept = match tail.len() == keep_tail {
                    true => tail.pop_front().map(|old| old.bytes).unwrap_or_default(),
                    false => Vec::new(),
                };
                kept.clear();
                kept.extend_from_slice(&body[..body.len().min(KEPT_LINE_BYTES)]);
                tail.push_back(LogLine { number, stream, bytes: kept });
            }
        }
    };
    match log {
        SavedLog::Combined(path) => feed(path, Stream::Stdout)?,
        SavedLog::Streams { stdout, stderr } => {
            feed(stdout, Stream::Stdout)?;
            feed(stderr, Stream::Stderr)?;
        }
    }
    let result = worker.finish(end);
    Ok(Parsed { result, tail: tail.into(), lines: number })
}

/// Reads the next line into `line`, without its `\n` and no further than the parser would look
/// ([`PARSE_LIMIT`]): the rest of a longer line is passed over, not held, so a 300 MB line costs
/// no more memory than a short one. False at the end of the input.
pub(super) fn read_line_bounded(reader: &mut impl BufRead, line: &mut Vec<u8>) -> std::io::Result<bool> {
    line.clear();
    let mut any = false;
    loop {
        let buf = match reader.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok(any);
        }
        any = true;
        let (taken, ended) = match memchr::memchr(b'\n', buf) {
            Some(end) => (end, true),
            None => (buf.len(), false),
        };
        let room = PARSE_LIMIT.saturating_sub(line.len());
        line.extend_from_slice(&buf[..taken.min(room)]);
        reader.consume(taken + usize::from(ended));
        if ended {
            return Ok(true);
        }
    }
}

/// Parses a stored run's log, for a run whose writer died before it could parse it.
pub fn parse_stored(parser: RunParser, reader: &mut LogReader, end: RunEnd) -> Result<RunResult, SavedError> {
    let mut worker = ParseWorker::start(parser);
    reader.scan(StreamFilter::Both, |number, stream, bytes| {
        while !worker.ready(Duration::from_millis(100)) {}
        worker.push(stream, number, bytes);
        true
    })?;
    Ok(worker.finish(end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_read_no_further_than_the_parser_looks() {
        let mut input = vec![b'a'; PARSE_LIMIT + 10];
        input.extend_from_slice(b"\nnext\nlast");
        let mut reader = std::io::BufReader::with_capacity(64 * 1024, input.as_slice());
        let mut line = Vec::new();
        assert!(read_line_bounded(&mut reader, &mut line).unwrap());
        assert_eq!(line.len(), PARSE_LIMIT, "the rest of the long line is passed over");
        assert!(read_line_bounded(&mut reader, &mut line).unwrap());
        assert_eq!(line, b"next");
        assert!(read_line_bounded(&mut reader, &mut line).unwrap());
        assert_eq!(line, b"last", "a last line without its newline");
        assert!(!read_line_bounded(&mut reader, &mut line).unwrap());
    }
}
