//! Running a parser in-process, without the host: for plugins' unit tests and benchmarks.
//!
//! Behind the `testing` feature, off by default: enable it in your plugin's
//! `[dev-dependencies]` only (`buildvise-plugin-api = { …, features = ["testing"] }`), so that
//! the library you ship carries none of it.

use crate::plugin::Parser;
use crate::strip_ansi;
use crate::types::{Line, ParseResult, RunEnd, Stream};
use std::path::{Path, PathBuf};

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

/// Runs `parser` over a saved log as the host would, and returns what it made of it.
///
/// - `parser`: a fresh parser, from [`Plugin::parser`](crate::Plugin::parser) or
///   [`Plugin::format_parser`](crate::Plugin::format_parser); it is consumed.
/// - `log`: the output as printed, `\n`-separated, a final `\n` optional. Every line is tagged
///   stdout and numbered from 1, as a combined log is; ANSI escapes and a trailing `\r` are
///   stripped first, as the host strips them. May be empty (no line is fed).
/// - `exit_code`: the process's exit code given to [`Parser::finish`] in [`RunEnd::exit_code`];
///   the run did not time out, was not cancelled, and wrote no artifacts (use [`parse_streams`]
///   with a [`RunEnd`] for those).
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

/// What `parser` costs per line on a flood, for a plugin's benchmarks: feeds `preamble` (the
/// output that puts the parser where the flood happens, say inside a test binary's run), then
/// `lines` lines drawn from `body` in a fixed pseudo-random order, and returns the mean
/// nanoseconds per flood line, `finish` with `end` included. Escapes are stripped beforehand, as
/// the host strips them: that is not the parser's cost.
pub fn flood_ns_per_line(
    mut parser: Box<dyn Parser>,
    preamble: &[&str],
    body: &[&str],
    lines: usize,
    end: &RunEnd,
) -> f64 {
    let body: Vec<Vec<u8>> = body.iter().map(|l| strip_ansi(l.as_bytes()).into_owned()).collect();
    let mut order = 0x2545_f491_4f6c_dd1d_u64;
    let picks: Vec<usize> = (0..lines)
        .map(|_| {
            // xorshift64: the same order every run, and no dependency for it.
            order ^= order << 13;
            order ^= order >> 7;
            order ^= order << 17;
            (order % body.len() as u64) as usize
        })
        .collect();
    let mut number = 0;
    for text in preamble {
        number += 1;
        parser.feed(Line { stream: Stream::Stdout, number, bytes: text.as_bytes() });
    }
    let start = std::time::Instant::now();
    for &i in &picks {
        number += 1;
        parser.feed(Line { stream: Stream::Stdout, number, bytes: &body[i] });
    }
    std::hint::black_box(parser.finish(end));
    start.elapsed().as_nanos() as f64 / lines.max(1) as f64
}

/// `log` with every line's escapes and trailing `\r` stripped, and no final `\n`.
fn strip_ansi_lines(log: &[u8]) -> Vec<u8> {
    let body = log.strip_suffix(b"\n").unwrap_or(log);
    let lines: Vec<_> = body.split(|&b| b == b'\n').map(strip_ansi).collect();
    lines.join(&b'\n')
}

/// A named flood: the lines that lead up to it, and the lines it is drawn from.
pub struct Flood<'a> {
    pub name: &'a str,
    pub preamble: Vec<&'a str>,
    pub body: Vec<&'a str>,
}

impl<'a> Flood<'a> {
    /// The floods every plugin measures, each after `preamble`: lines that look like `nothing` to
    /// the parser, lines that look `almost` like something, and `both` mixed.
    pub fn usual(preamble: &[&'a str], nothing: &[&'a str], almost: &[&'a str]) -> Vec<Flood<'a>> {
        let flood = |name, body: Vec<&'a str>| Flood { name, preamble: preamble.to_vec(), body };
        vec![
            flood("nothing", nothing.to_vec()),
            flood("almost", almost.to_vec()),
            flood("both", [nothing, almost].concat()),
        ]
    }
}

/// The `main` of a plugin's flood example (`cargo run --release --example X_flood [LINES
/// [FLOOD]]`): measures each of `floods` (or the one named) with [`flood_ns_per_line`], a fresh
/// parser from `parser` each, and prints `TOOL NAME: N ns/line`.
///
/// Given a file instead (`X_flood FILE`), it feeds the file's lines in order, once, and prints
/// the cost per line of that: a saved log, or the bench's flood (`bench __flood TOOLCHAIN BYTES >
/// FILE`).
pub fn flood_main(tool: &str, parser: impl Fn() -> Box<dyn Parser>, end: &RunEnd, floods: &[Flood<'_>]) {
    let first = std::env::args().nth(1);
    if let Some(path) = first.as_deref().filter(|a| Path::new(a).is_file()) {
        let log = std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
        // Stripped beforehand, as the host strips them: that is not the parser's cost.
        let log = strip_ansi_lines(&log);
        // Split beforehand too: the host hands lines over already split.
        let split: Vec<&[u8]> = log.split(|&b| b == b'\n').collect();
        let mut parser = parser();
        let start = std::time::Instant::now();
        let mut lines = 0;
        for bytes in split {
            lines += 1;
            parser.feed(Line { stream: Stream::Stdout, number: lines, bytes });
        }
        std::hint::black_box(parser.finish(end));
        let ns = start.elapsed().as_nanos() as f64 / lines.max(1) as f64;
        println!("{tool} {path}: {ns:6.1} ns/line over {lines} lines");
        return;
    }
    let lines = first.and_then(|n| n.parse().ok()).unwrap_or(1_000_000);
    let only = std::env::args().nth(2);
    for flood in floods.iter().filter(|f| only.as_deref().is_none_or(|name| name == f.name)) {
        let ns = flood_ns_per_line(parser(), &flood.preamble, &flood.body, lines, end);
        println!("{tool} {:>10}: {ns:6.1} ns/line", flood.name);
    }
}

/// A fresh directory of a test's own under the system's temp dir, removed when dropped, whether
/// the test passed or not: for plans that read project files (`package.json`, a venv). It reads
/// as the [`Path`] it is.
pub struct ScratchDir(PathBuf);

impl ScratchDir {
    /// A new empty directory whose name starts with `prefix`, unique in this process and across
    /// processes.
    pub fn new(prefix: &str) -> Self {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("{prefix}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        ScratchDir(dir)
    }
}

impl std::ops::Deref for ScratchDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
