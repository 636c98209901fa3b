//! What the parsers of `make` (make, gcc and the last-resort formats) and `go.test` cost per line
//! on a flood: lines that look like nothing, and lines that look almost like something. `feed`
//! sees every line of a run on a thread of its own, and must keep up with a pipe into a file:
//! about 1 GB/s, so 100 ns for a 100-byte line.
//!
//! `cargo run --release -p buildvise-plugin-generic --example generic_flood [LINES [MIX]]`

use buildvise_plugin_api::testing::{Flood, flood_main};
use buildvise_plugin_api::{ParseContext, Plugin, RunEnd};
use buildvise_plugin_generic::GenericPlugin;

/// Fed once before make's flood: a recursive make entering a directory.
const MAKE_PREAMBLE: &[&str] = &["make -C src all", "make[1]: Entering directory '/srv/engine/src'"];

const MAKE_NOTHING: &[&str] = &[
    "cc -O2 -g -Wall -Wextra -Iinclude -Ithird_party/zstd/lib -c net/socket_pool.c -o build/net/socket_pool.o",
    "[ 45%] Building C object src/CMakeFiles/engine.dir/storage/page_cache_eviction_policy.c.o",
    "ar rcs build/libengine.a build/net/socket_pool.o build/storage/page_cache.o build/util/arena.o",
    "[2026-11-24T02:54:18Z INFO  engine::worker] processed batch 1234: 512 records in 0.84 ms",
    "    at depth 12 the tree holds 3 children and a payload of 4096 bytes (checksum ok, 0x7ffd5a3c)",
    "ingest 0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789 the quick brown.",
    "",
];

const MAKE_ALMOST: &[&str] = &[
    "makefile generator finished: 12 targets written to build/Makefile.gen in 0.84 s, none stale",
    "warning: the compiler cache at /srv/cache is 92% full; 12 GiB could be freed by make clean",
    "error: is a word this program prints in its own log, with no file and no line before it",
    "note: the build is shared by 4 workers; each holds a lock on its own objects directory",
    "gcc version 12.2.0 (Debian 12.2.0-14) selected by the toolchain file: ok, no override",
    "src/lib.c:62 value = 3; other.c:14 value = 4; neither is the location of a diagnostic",
    "2026-11-24 02:54:18: processed batch 1234 of 99999, 512 records/s, elapsed 00:00:12",
    "fetching http://localhost:8080/status:1: 200 OK after 12 ms, the mirror is healthy",
    "    12 | cached objects reused from the previous build, none rebuilt, 0 | 0 evicted",
    "*** [backup] copied 1234 files: 12 MiB in 0.84 s, the archive is at /srv/backup/1234",
    "Entering directory '/srv/engine/src' is what make prints; this line is the program's own",
];

/// Fed once before go's flood: a verbose test run, so the flood is a test's output.
const GO_PREAMBLE: &[&str] = &["=== RUN   TestIngest"];

const GO_NOTHING: &[&str] = &[
    "2026/11/24 02:54:18 worker 3: processed batch 1234 (512 records) in 0.84 ms, queue depth 17",
    "[GIN-debug] GET    /api/v1/users/:id         --> example.com/api.GetUser (3 handlers)",
    "{\"level\":\"info\",\"ts\":1732416858.123,\"msg\":\"request served\",\"status\":200,\"ms\":0.84}",
    "    processing record 1234 of 99999: ok (0.84 ms), cache hit ratio 0.97, retries 0",
    "ingest 0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789 the quick brown.",
    "",
];

const GO_ALMOST: &[&str] = &[
    "    ingest_test.go:42: processed batch 1234 of 99999 in 0.84 ms, all records valid",
    "--- shard 3 of 8: 1234 items, 12 MiB, checksum 0x7ffd5a3c, started at 02:54:18 ---",
    "okay: 1234 requests answered in under 10 ms, 6 took longer than the budget allows",
    "FAILED to connect to 10.0.0.3:5432 after 3 attempts, retrying in 250 ms (attempt 2/5)",
    "panicked workers: 0 of 12, restarts 0, the supervisor reports every worker healthy",
    "#12 of 1234 goroutines parked, heap 12 MiB, GC pause 0.84 ms (p99 1.2 ms), ok",
    "===> checkpoint 1234 reached after 12 s; the next one is due in 30 s, at 02:55:00",
    "go:generate directives found: 12 in 3 packages, all of them up to date, none run",
    "main.go:12 is where the flood is printed from, says the program's own log line",
    "PASS rate 99.9%: 1234 of 1235 cases green, the one red case is retried at the end",
    "?? unknown flag --turbo in the config at /srv/ingest/config.yaml, ignored",
];

fn main() {
    let parser = |tool: &'static str, cwd: &'static str| move || GenericPlugin.parser(&ParseContext::new(tool, cwd));
    let make = Flood::usual(MAKE_PREAMBLE, MAKE_NOTHING, MAKE_ALMOST);
    flood_main("make", parser("make", "/srv/engine"), &RunEnd::exited(2), &make);
    let go = Flood::usual(GO_PREAMBLE, GO_NOTHING, GO_ALMOST);
    flood_main("go.test", parser("go.test", "/srv/ingest"), &RunEnd::exited(1), &go);
}
