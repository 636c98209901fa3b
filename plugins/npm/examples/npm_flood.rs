//! What `npm.test`'s parser costs per line on a flood: lines that look like nothing, and lines
//! that look almost like something. `feed` sees every line of a run on a thread of its own, and
//! must keep up with a pipe into a file: about 1 GB/s, so 100 ns for a 100-byte line.
//!
//! `cargo run --release -p buildvise-plugin-npm --example npm_flood [LINES [MIX]]`

use buildvise_plugin_api::{Line, ParseContext, Plugin, RunEnd, Stream, strip_ansi};
use buildvise_plugin_npm::ThePlugin;
use std::time::Instant;

/// Fed once before the flood: npm's banner for the test script.
const PREAMBLE: &[&str] = &["", "> web-app@1.4.2 test", "> jest --ci", ""];

const NOTHING: &[&str] = &[
    "PASS src/components/__tests__/Button.test.js (5.123 s)",
    "\x1b[0m\x1b[7m\x1b[1m\x1b[32m PASS \x1b[39m\x1b[22m\x1b[27m\x1b[0m \x1b[2msrc/utils/\x1b[22m\x1b[1mformat.test.ts\x1b[22m",
    "      \u{2713} renders the button with the given label and forwards the ref to the element (12 ms)",
    " \u{2713} src/utils/format.test.ts (12 tests) 45ms",
    "    console.log",
    "      [worker 3] processed batch 1234: 512 records in 0.84 ms, queue depth 17, retries 0",
    "[webpack-dev-server] Project is running at: http://localhost:8080/, Loopback: 127.0.0.1:8080",
    "Compiled successfully in 1234 ms; 12 assets, 3 chunks, total size 1.2 MiB (gzip 345 KiB)",
    "ingest 0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789 the quick brown.",
    "",
];

const ALMOST: &[&str] = &[
    "\u{25cf} the server logs a bullet like jest's, at column 0, in a passing run's console output",
    "    \u{25cf} indented deeper than jest's failure headers, in the console output of a passing run",
    "error TS is not what this line is about, but it says error TS anyway, then (12,5) and more",
    "src/components/Button.tsx(12,5): warnin TS2322: Type 'string' is not assignable, typo'd",
    "(node:1234) is a pid in parentheses, but this is not one of node's process warnings at all",
    "/home/dev/src/web-app/node_modules/.bin/jest:12 is a path with a line, not a crash header",
    "12 items processed in 3 batches, 0 failures, 1234 ms (the program's own summary line)",
    "Tests are flaky when the clock is mocked; see the notes in CONTRIBUTING.md for the details",
    "FAILED: 0 of 12 uploads; the sync job prints this line after every batch of files it sends",
    "npm is mentioned first on this line, but it is not one of npm's error or warning lines",
    "ok 12 - this looks like a TAP line from node:test, but node --test is not running here",
    "# Subtest: not really a subtest, just a comment that a script printed with a hash first",
    "    at Object.<anonymous> (/home/dev/src/web-app/src/utils/format.test.ts:12:5) [worker]",
    "> not a banner: a quoted reply in a chat transcript that the test prints for debugging",
    "\x1b[31m\u{2715}\x1b[0m 12 of 1234 retries failed, all within the budget (the program's own cross)",
];

fn main() {
    let lines = std::env::args().nth(1).and_then(|n| n.parse().ok()).unwrap_or(1_000_000);
    let only = std::env::args().nth(2);
    for (name, body) in [("nothing", NOTHING), ("almost", ALMOST), ("both", &[NOTHING, ALMOST].concat()[..])] {
        if only.as_ref().is_some_and(|only| only != name) {
            continue;
        }
        let ns = ns_per_line(&ThePlugin, body, lines);
        println!("npm.test {name:>8}: {ns:6.1} ns/line");
    }
}

/// Feeds [`PREAMBLE`], then `lines` lines drawn from `body` in a fixed pseudo-random order, as
/// the host would, and returns the mean time per flood line, `finish` included. Escapes are
/// stripped beforehand: the host strips them, and `strip_ansi` is not the parser's cost.
fn ns_per_line(plugin: &dyn Plugin, body: &[&str], lines: usize) -> f64 {
    let body: Vec<Vec<u8>> = body.iter().map(|l| strip_ansi(l.as_bytes()).into_owned()).collect();
    let mut order = 0x2545_f491_4f6c_dd1d_u64;
    let picks: Vec<usize> = (0..lines)
        .map(|_| {
            order ^= order << 13;
            order ^= order >> 7;
            order ^= order << 17;
            (order % body.len() as u64) as usize
        })
        .collect();
    let mut parser = plugin.parser(&ParseContext::new("npm.test", "/home/dev/src/web-app"));
    let mut number = 0;
    for text in PREAMBLE {
        number += 1;
        parser.feed(Line::new(Stream::Stdout, number, text.as_bytes()));
    }
    let start = Instant::now();
    for &i in &picks {
        number += 1;
        parser.feed(Line::new(Stream::Stdout, number, &body[i]));
    }
    std::hint::black_box(parser.finish(&RunEnd::exited(1)));
    start.elapsed().as_nanos() as f64 / lines as f64
}
