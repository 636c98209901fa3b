//! What `npm.test`'s parser costs per line on a flood: lines that look like nothing, and lines
//! that look almost like something. `feed` sees every line of a run on a thread of its own, and
//! must keep up with a pipe into a file: about 1 GB/s, so 100 ns for a 100-byte line.
//!
//! `cargo run --release -p buildvise-plugin-npm --example npm_flood [LINES [MIX]]`

use buildvise_plugin_api::testing::{Flood, flood_main};
use buildvise_plugin_api::{ParseContext, Plugin, RunEnd};
use buildvise_plugin_npm::ThePlugin;

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
    "/srv/web-app/node_modules/.bin/jest:12 is a path with a line, not a crash header",
    "12 items processed in 3 batches, 0 failures, 1234 ms (the program's own summary line)",
    "Tests are flaky when the clock is mocked; see the notes in CONTRIBUTING.md for the details",
    "FAILED: 0 of 12 uploads; the sync job prints this line after every batch of files it sends",
    "npm is mentioned first on this line, but it is not one of npm's error or warning lines",
    "ok 12 - this looks like a TAP line from node:test, but node --test is not running here",
    "# Subtest: not really a subtest, just a comment that a script printed with a hash first",
    "    at Object.<anonymous> (/srv/web-app/src/utils/format.test.ts:12:5) [worker]",
    "> not a banner: a quoted reply in a chat transcript that the test prints for debugging",
    "\x1b[31m\u{2715}\x1b[0m 12 of 1234 retries failed, all within the budget (the program's own cross)",
];

fn main() {
    let floods = Flood::usual(PREAMBLE, NOTHING, ALMOST);
    let parser = || ThePlugin.parser(&ParseContext::new("npm.test", "/srv/web-app"));
    flood_main("npm.test", parser, &RunEnd::exited(1), &floods);
}
