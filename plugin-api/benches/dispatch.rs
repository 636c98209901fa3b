//! What the recogniser dispatch costs a line: `PrefixSet` on its own, and `Recognisers::feed` over a
//! parser's worth of recognisers (prefixes, prefixes after the indentation, tests), on lines none
//! of them wants and on lines some of them is offered and refuses. These are the lines a big
//! build prints most of; the end-to-end figure (a flood through `buildvise exec`) is the bench's
//! ingest section.
//!
//! `cargo bench -p buildvise-plugin-api --bench dispatch [nothing|almost]`

use buildvise_plugin_api::{Head, Line, PrefixSet, Recogniser, Recognisers, Stream, Text, Wants};
use std::hint::black_box;
use std::time::Instant;

const LINES: usize = 2_000_000;

/// Lines no recogniser below wants.
const NOTHING: &[&str] = &[
    "   Compiling proc-macro2 v1.0.93",
    "      [worker 3] processed batch 1234: 512 records in 0.84 ms, queue depth 17, retries 0",
    "Compiled successfully in 1234 ms; 12 assets, 3 chunks, total size 1.2 MiB (gzip 345 KiB)",
    "ingest 0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789",
    "",
];

/// Lines some recogniser is offered (a prefix or its test passes) and then refuses.
const ALMOST: &[&str] = &[
    "error is a word this line starts with, but it is no diagnostic",
    "    \u{2713} renders the button with the given label (12 ms)",
    "test store::tests::keeps_errors ... ok",
    "FAILED: 0 of 12 uploads; the sync job prints this after every batch",
    "src/components/Button.tsx(12,5): said twice",
];

/// Refuses every line it is offered, as a recogniser does with lines that only look like its own.
struct Refuses(Wants);

impl Recogniser<u64> for Refuses {
    fn wants(&self) -> Wants {
        self.0
    }
    fn feed(&mut self, line: &Text<'_>, offered: &mut u64) -> bool {
        *offered += line.number & 1;
        false
    }
}

fn has_paren_location(head: &Head<'_>) -> bool {
    memchr::memchr(b'(', head.bytes).is_some_and(|at| head.bytes.get(at + 1).is_some_and(u8::is_ascii_digit))
}

fn starts_with_digit(head: &Head<'_>) -> bool {
    head.bytes.first().is_some_and(u8::is_ascii_digit)
}

/// About what npm's parser registers: a dozen formats.
fn recognisers() -> Recognisers<u64> {
    Recognisers::new()
        .add(Refuses(Wants::starts(&["npm error", "npm warn", "npm ERR!"])))
        .add(Refuses(Wants::starts(&["(node:"]).or_test(starts_with_digit)))
        .add(Refuses(Wants::starts(&["ERROR in ", "WARNING in "])))
        .add(Refuses(Wants::starts(&["\u{2718} [ERROR]", "\u{25b2} [WARNING]"])))
        .add(Refuses(Wants::starts(&["error during build:", "[vite]"])))
        .add(Refuses(Wants::starts(&["Failed to compile", "Type error:"])))
        .add(Refuses(Wants::starts(&["[warn] ", "[error] "])))
        .add(Refuses(Wants::test(has_paren_location)))
        .add(Refuses(Wants::starts_unindented(&["\u{25cf} ", "PASS ", "FAIL ", "Tests:", "Test Suites:"])))
        .add(Refuses(Wants::starts_unindented(&["\u{2713} ", "\u{00d7} ", "\u{276f} ", "Test Files "])))
        .add(Refuses(Wants::starts_unindented(&["passing (", "failing", "pending"])))
        .add(Refuses(Wants::starts_unindented(&["# Subtest:", "not ok ", "ok ", "# tests "])))
        .add(Refuses(Wants::starts(&["error", "warning", "test ", "FAILED"])))
}

/// The lines of `pool` in a fixed pseudo-random order, `LINES` of them.
fn lines(pool: &[&'static str]) -> Vec<&'static [u8]> {
    let mut order = 0x2545_f491_4f6c_dd1d_u64;
    (0..LINES)
        .map(|_| {
            order ^= order << 13;
            order ^= order >> 7;
            order ^= order << 17;
            pool[(order % pool.len() as u64) as usize].as_bytes()
        })
        .collect()
}

fn ns_per_line(mut work: impl FnMut(u64, &[u8]), lines: &[&[u8]]) -> f64 {
    let start = Instant::now();
    for (number, bytes) in (1..).zip(lines) {
        work(number, bytes);
    }
    start.elapsed().as_nanos() as f64 / lines.len() as f64
}

fn main() {
    let mut prefixes = PrefixSet::new();
    for (i, prefix) in ["error", "warning", "test ", "FAILED", "npm error", "\u{2713} ", "\u{25cf} "].iter().enumerate()
    {
        prefixes.insert(prefix, i);
    }
    let only = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    for (name, pool) in [("nothing", NOTHING), ("almost", ALMOST)] {
        if only.as_deref().is_some_and(|only| only != name) {
            continue;
        }
        let lines = lines(pool);
        let matched = ns_per_line(
            |_, bytes| {
                black_box(prefixes.first_match(black_box(bytes)));
            },
            &lines,
        );
        let mut dispatch = recognisers();
        let mut offered = 0;
        let fed = ns_per_line(
            |number, bytes| {
                black_box(dispatch.feed(&Line::new(Stream::Stdout, number, black_box(bytes)), &mut offered));
            },
            &lines,
        );
        println!("{name:>8}: PrefixSet::first_match {matched:5.1} ns/line, Recognisers::feed {fed:5.1} ns/line");
        black_box(offered);
    }
}
