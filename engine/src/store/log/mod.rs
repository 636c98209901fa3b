//! The raw log and the indexes that make any page of it a few seeks.
//!
//! `output.log` holds every line byte for byte as the process printed it (ANSI included), each
//! ended by `\n`, both streams in arrival order. It is the truth: a line is a `\n`-ended run of
//! its bytes, and the indexes only say where to start looking.
//!
//! - `marks.idx` holds a mark at the first line that starts at least [`MARK_EVERY`] bytes after
//!   the previous mark (the first line of the log is an implied mark): a pair of little-endian u64,
//!   the line's index (0-based) and its offset in the log. A page seeks to the last mark at or
//!   before its first line and counts `\n` forward, at most [`MARK_EVERY`] bytes and one line.
//!   A flood of short lines costs its index a few bytes a thousand lines (an entry per line wrote
//!   a third as many bytes again as the log on a flood of 24-byte lines, and made the host's path
//!   up to 3.5 times slower).
//! - `streams.idx` says where each stream is, as runs of lines: one pair of u64 per switch of
//!   stream, the index of the run's first line (top bit set for stderr) and how many lines of that
//!   stream came before it. A run that never switched from stdout has none. The Nth line of a
//!   stream is a binary search away.
//!
//! An index is trusted only as far as it agrees with the log: entries past the log's end (lines a
//! writer has not flushed yet, or could not store) are not used, and one that contradicts the log
//! is reported as damage, never used to size a read.

mod reader;
mod writer;

pub use reader::{LogLine, LogReader, StreamFilter};
pub use writer::LogWriter;

use buildvise_plugin_api::Stream;

pub const LOG_FILE: &str = "output.log";
const MARKS_IDX: &str = "marks.idx";
const STREAMS_IDX: &str = "streams.idx";
const STDERR_BIT: u64 = 1 << 63;
/// Log bytes between marks: a page reads at most this much more than its own lines, a run of
/// 16 KiB lines or longer has a mark on every line, and a gigabyte of log has a megabyte of marks.
const MARK_EVERY: u64 = 16 * 1024;
/// Bytes of one entry of `marks.idx`.
const MARK_ENTRY: u64 = 16;
/// Bytes of one entry of `streams.idx`.
const RUN_ENTRY: u64 = 16;

fn stream_slot(stream: Stream) -> usize {
    usize::from(stream == Stream::Stderr)
}

fn encode(start: u64, stream: Stream) -> u64 {
    if stream == Stream::Stderr { start | STDERR_BIT } else { start }
}

fn decode(raw: u64) -> (u64, Stream) {
    let stream = if raw & STDERR_BIT != 0 { Stream::Stderr } else { Stream::Stdout };
    (raw & !STDERR_BIT, stream)
}

/// Two little-endian u64, as both `marks.idx` and `streams.idx` hold them.
fn pair(raw: &[u8; 16]) -> (u64, u64) {
    let word = |at: usize| u64::from_le_bytes(raw[at..at + 8].try_into().expect("8 bytes"));
    (word(0), word(8))
}

fn pair_bytes(a: u64, b: u64) -> [u8; 16] {
    let mut raw = [0u8; 16];
    raw[..8].copy_from_slice(&a.to_le_bytes());
    raw[8..].copy_from_slice(&b.to_le_bytes());
    raw
}
