//! What `dotnet.build`'s parser costs per line on a flood: lines that look like nothing, and
//! lines that look almost like something. `feed` sees every line of a run on a thread of its
//! own, and must keep up with a pipe into a file: about 1 GB/s, so 100 ns for a 100-byte line.
//!
//! `cargo run --release -p buildvise-plugin-dotnet --example dotnet_flood [LINES [MIX]]`

use buildvise_plugin_api::{Line, ParseContext, Plugin, RunEnd, Stream, strip_ansi};
use buildvise_plugin_dotnet::DotnetPlugin;
use std::time::Instant;

/// Fed once before the flood: MSBuild's first lines.
const PREAMBLE: &[&str] = &["MSBuild version 17.11.4+37f13ab2c for .NET", "  Determining projects to restore..."];

const NOTHING: &[&str] = &[
    "  Restored /home/dev/src/shop/src/Shop.Core/Shop.Core.csproj (in 123 ms).",
    "  Shop.Core -> /home/dev/src/shop/src/Shop.Core/bin/Debug/net8.0/Shop.Core.dll",
    "2026-01-29T20:02:11.9846651Z   Restored /home/runner/work/shop/src/Shop.Api/Shop.Api.csproj (in 1 ms).",
    "info: Microsoft.Hosting.Lifetime[14] Now listening on: http://localhost:5000 (pid 4242)",
    "Build succeeded.",
    "    0 Warning(s)",
    "Time Elapsed 00:00:12.34",
    "\x1b[32;1mBuild succeeded\x1b[0m in 12.3s; 14 projects, 3 restored, 11 up to date, 0 skipped",
    "ingest 0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789 the quick brown.",
    "",
];

const ALMOST: &[&str] = &[
    "/home/dev/src/shop/src/Shop.Core/Program.cs(10,5): warnin CS0168: typo'd, so not a warning",
    "warning is a word on this line, error too, but neither is followed by a code and a colon",
    "error: the program logged this; a canonical line needs an origin or a code before the colon",
    "Passed!  - this is no VSTest summary: it lacks the total count that every summary carries",
    "Failed to open the cache file, retrying in 12 ms (attempt 3 of 5); not a test failure line",
    "  Shop.Core succeeded with 2 warning(s) (0.9s) \u{2192} src/Shop.Core/bin/Debug/net8.0/Shop.Core.dll",
    "12:34:56 info: worker[3] processed 1234 records: ok, 0 errors: none, 2 warnings: retried",
    "Unhandled exception rate: 0.1% over the last hour; the service restarted no worker process",
    "Test runs for the nightly build are scheduled at 02:00; this is the build's own log line",
    "   at Shop.Core.Worker.Run(CancellationToken token) in /home/dev/src/shop/src/Worker.cs:line 52",
    "[xUnit is mentioned in brackets here, but this is a build, not an xUnit runner's output line",
    "Switched to configuration Release for 14 projects; nothing to do for 3 of them, 11 rebuilt",
    "\x1b[33m  Shop.Api\x1b[0m net8.0 \x1b[33msucceeded with warnings\x1b[0m (3.1s) \u{2192} bin/Debug/net8.0/Shop.Api.dll",
];

fn main() {
    let lines = std::env::args().nth(1).and_then(|n| n.parse().ok()).unwrap_or(1_000_000);
    let only = std::env::args().nth(2);
    for (name, body) in [("nothing", NOTHING), ("almost", ALMOST), ("both", &[NOTHING, ALMOST].concat()[..])] {
        if only.as_ref().is_some_and(|only| only != name) {
            continue;
        }
        let ns = ns_per_line(&DotnetPlugin, body, lines);
        println!("dotnet.build {name:>8}: {ns:6.1} ns/line");
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
    let mut parser = plugin.parser(&ParseContext::new("dotnet.build", "/home/dev/src/shop"));
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
