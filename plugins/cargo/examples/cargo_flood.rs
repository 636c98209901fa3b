//! What `cargo.test`'s parser costs per line on a flood: lines that look like nothing, and lines
//! that look almost like something. `feed` sees every line of a run on a thread of its own, and
//! must keep up with a pipe into a file: about 1 GB/s, so 100 ns for a 100-byte line.
//!
//! `cargo run --release -p buildvise-plugin-cargo --example cargo_flood [LINES [MIX]]`

use buildvise_plugin_api::testing::{Flood, flood_main};
use buildvise_plugin_api::{ParseContext, Plugin, RunEnd};
use buildvise_plugin_cargo::CargoPlugin;

/// Fed once before the flood: the flood is a test binary's output.
const PREAMBLE: &[&str] = &[
    "   Compiling queue-sim v0.1.0 (/srv/queue-sim)",
    "    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.67s",
    "     Running unittests src/lib.rs (target/debug/deps/queue_sim-1a87832fa6a80fae)",
    "",
    "running 1200 tests",
];

const NOTHING: &[&str] = &[
    "   Compiling serde_derive v1.0.210 (/srv/workspace/crates/serde_derive_internals_extra)",
    "\x1b[1m\x1b[32m   Compiling\x1b[0m queue-sim v0.1.0 (/srv/workspace/crates/queue-sim-with-extras)",
    "    Finished `test` profile [unoptimized + debuginfo] target(s) in 12.67s, 1234 units rebuilt",
    "[2026-11-24T02:54:18Z INFO  queue_sim::worker] processed batch 1234: 512 records in 0.84 ms",
    "Processed 1234 of 99999 records (1.2%), 512 records/s, elapsed 00:00:12, remaining 00:13:20",
    "    at depth 12: node 0x7ffd5a3c2e10 has 3 children and a payload of 4096 bytes (checksum ok)",
    "{\"event\":\"tick\",\"n\":1234,\"elapsed_ms\":0.84,\"queue\":[1,2,3,4,5,6,7,8],\"state\":\"running\"}",
    "ingest 0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789 the quick brown.",
    "",
];

const ALMOST: &[&str] = &[
    "warning: the build cache at target/debug is 92% full; 12 GiB could be freed by cargo clean",
    "errors: 0, warnings: 3, notes: 12 - the summary the program under test prints at its exit",
    "terror level: high; the error budget is 12% spent and the warning threshold is set to 90%",
    "test tests::fifo_order_under_contention_with_many_producers_and_many_consumers ... ok",
    "test results are uploaded to the dashboard after every run: 1234 so far, none failed, ok",
    "thread 'worker-3' started processing batch 1234 of 99999 with 512 records in the queue",
    "note: the queue is configured with capacity 1024 and a high-water mark of 900 items, ok",
    "src/lib.rs:62:22: q.pop() = Some(1), printed by the program with no severity after it",
    "main.rs:12 value = 3; other.rs:14 value = 4; neither is the location of a diagnostic",
    "running late: 3 requests queued behind a slow consumer, retrying in 250 ms (attempt 2/5)",
    "failures: none so far; the retry budget has 12 of 16 attempts left for this shard of work",
    "successes: 1234 of 1240 requests answered in under 10 ms, 6 took longer than the budget",
    "--- shard 3 of 8: 1234 items, 12 MiB, checksum 0x7ffd5a3c, started at 02:54:18.123 ---",
    "\x1b[33mwarning\x1b[0m: the terminal is narrower than 80 columns; output will be wrapped at 60",
];

fn main() {
    let floods = Flood::usual(PREAMBLE, NOTHING, ALMOST);
    let parser = || CargoPlugin.parser(&ParseContext::new("cargo.test", "/srv/queue-sim"));
    flood_main("cargo.test", parser, &RunEnd::exited(101), &floods);
}
