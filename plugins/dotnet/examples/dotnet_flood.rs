//! What `dotnet.build`'s parser costs per line on a flood: lines that look like nothing, and
//! lines that look almost like something. `feed` sees every line of a run on a thread of its
//! own, and must keep up with a pipe into a file: about 1 GB/s, so 100 ns for a 100-byte line.
//!
//! `cargo run --release -p buildvise-plugin-dotnet --example dotnet_flood [LINES [MIX]]`

use buildvise_plugin_api::testing::{Flood, flood_main};
use buildvise_plugin_api::{ParseContext, Plugin, RunEnd};
use buildvise_plugin_dotnet::DotnetPlugin;

/// Fed once before the flood: MSBuild's first lines.
const PREAMBLE: &[&str] = &["MSBuild version 17.11.4+37f13ab2c for .NET", "  Determining projects to restore..."];

const NOTHING: &[&str] = &[
    "  Restored /srv/shop/src/Shop.Core/Shop.Core.csproj (in 123 ms).",
    "  Shop.Core -> /srv/shop/src/Shop.Core/bin/Debug/net8.0/Shop.Core.dll",
    "2026-01-29T20:02:11.9846651Z   Restored /srv/ci/shop/src/Shop.Api/Shop.Api.csproj (in 1 ms).",
    "info: Microsoft.Hosting.Lifetime[14] Now listening on: http://localhost:5000 (pid 4242)",
    "Build succeeded.",
    "    0 Warning(s)",
    "Time Elapsed 00:00:12.34",
    "\x1b[32;1mBuild succeeded\x1b[0m in 12.3s; 14 projects, 3 restored, 11 up to date, 0 skipped",
    "ingest 0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789 the quick brown.",
    "",
];

const ALMOST: &[&str] = &[
    "/srv/shop/src/Shop.Core/Program.cs(10,5): warnin CS0168: typo'd, so not a warning",
    "warning is a word on this line, error too, but neither is followed by a code and a colon",
    "error: the program logged this; a canonical line needs an origin or a code before the colon",
    "Passed!  - this is no VSTest summary: it lacks the total count that every summary carries",
    "Failed to open the cache file, retrying in 12 ms (attempt 3 of 5); not a test failure line",
    "  Shop.Core succeeded with 2 warning(s) (0.9s) \u{2192} src/Shop.Core/bin/Debug/net8.0/Shop.Core.dll",
    "12:34:56 info: worker[3] processed 1234 records: ok, 0 errors: none, 2 warnings: retried",
    "Unhandled exception rate: 0.1% over the last hour; the service restarted no worker process",
    "Test runs for the nightly build are scheduled at 02:00; this is the build's own log line",
    "   at Shop.Core.Worker.Run(CancellationToken token) in /srv/shop/src/Worker.cs:line 52",
    "[xUnit is mentioned in brackets here, but this is a build, not an xUnit runner's output line",
    "Switched to configuration Release for 14 projects; nothing to do for 3 of them, 11 rebuilt",
    "\x1b[33m  Shop.Api\x1b[0m net8.0 \x1b[33msucceeded with warnings\x1b[0m (3.1s) \u{2192} bin/Debug/net8.0/Shop.Api.dll",
];

fn main() {
    let floods = Flood::usual(PREAMBLE, NOTHING, ALMOST);
    let parser = || DotnetPlugin.parser(&ParseContext::new("dotnet.build", "/srv/shop"));
    flood_main("dotnet.build", parser, &RunEnd::exited(1), &floods);
}
