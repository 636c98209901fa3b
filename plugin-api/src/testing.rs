//! Running a parser in-process, without the host: for plugins' unit tests and benchmarks.

use crate::plugin::Parser;
use crate::strip_ansi;
use crate::types::{Line, ParseResult, RunEnd, Stream};

/// Feeds `text` line by line as the host would (ANSI and `\r` stripped, numbered from `first`),
/// and returns the number of the next line.
pub fn feed_text(parser: &mut dyn Parser, stream: Stream, text: &[u8], first: u64) -> u64 {
    let mut number = first;
    let body = text.strip_suffix(b"\n").unwrap_or(text);
    if text.is_empty() {
        return number;
    }
    for raw in body.split(|&b| b == b'\n') {
        let clean = strip_ansi(raw);
        parser.feed(Line { stream, number, bytes: &clean });
        number += 1;
    }
    number
}

/// Parses a combined log (every line tagged stdout) that ended with `exit_code`.
pub fn parse_log(mut parser: Box<dyn Parser>, log: &[u8], exit_code: i32) -> ParseResult {
    feed_text(parser.as_mut(), Stream::Stdout, log, 1);
    parser.finish(&RunEnd { exit_code: Some(exit_code), ..RunEnd::default() })
}

/// Parses stdout and then stderr, as `buildvise parse --stdout F --stderr G` does.
pub fn parse_streams(mut parser: Box<dyn Parser>, stdout: &[u8], stderr: &[u8], end: &RunEnd) -> ParseResult {
    let next = feed_text(parser.as_mut(), Stream::Stdout, stdout, 1);
    feed_text(parser.as_mut(), Stream::Stderr, stderr, next);
    parser.finish(end)
}
