//! What `pytest.run`'s parser costs per line on a flood: lines that look like nothing, and lines
//! that look almost like something, in the progress region and inside a failure's section.
//! `feed` sees every line of a run on a thread of its own, and must keep up with a pipe into a
//! file: about 1 GB/s, so 100 ns for a 100-byte line.
//!
//! `cargo run --release -p buildvise-plugin-pytest --example pytest_flood [LINES [MIX]]`

use buildvise_plugin_api::{Line, ParseContext, Plugin, RunEnd, Stream, strip_ansi};
use buildvise_plugin_pytest::ThePlugin;
use std::time::Instant;

/// Fed once before the flood: the session header, so the flood is the progress region.
const PREAMBLE: &[&str] = &[
    "============================= test session starts ==============================",
    "platform linux -- Python 3.12.3, pytest-8.3.3, pluggy-1.5.0",
    "rootdir: /home/dev/src/shop",
    "collected 1200 items",
    "",
];

/// Fed after [`PREAMBLE`] for a flood inside a failed test's section.
const IN_FAILURE: &[&str] = &[
    "=================================== FAILURES ===================================",
    "_______________________________ test_checkout _________________________________",
    "",
];

const NOTHING: &[&str] = &[
    "tests/test_models.py ........................................................ [ 45%]",
    "processing record 1234 of 99999: ok (0.84 ms), cache hit ratio 0.97, queue depth 17, ok",
    "DEBUG:urllib3.connectionpool:Starting new HTTPS connection (1): api.example.com:443 ok",
    "    return self._send(request, timeout=timeout, allow_redirects=allow_redirects, **kw)",
    "\x1b[32m.\x1b[0m\x1b[32m.\x1b[0m\x1b[32m.\x1b[0m\x1b[32m.\x1b[0m\x1b[32m.\x1b[0m\x1b[32m.\x1b[0m\x1b[32m.\x1b[0m",
    "ingest 0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789 the quick brown.",
    "",
];

const ALMOST: &[&str] = &[
    "tests/test_api.py::TestUsers::test_create_user_with_a_long_parametrized_id[case-17] PASSED [ 10%]",
    "test_x.py::test_y PASSED                                                        [ 10%]",
    "E   assert {'id': 17, 'name': 'Ann'} == {'id': 17, 'name': 'Anne'}, printed by the program",
    "    def test_checkout_with_an_empty_cart_and_a_discount_code_that_expired(cart, code):",
    "2026-11-24 02:54:18,123 INFO worker: processed 1234 records in 0.84s, 3 failed, 0 errors",
    "12 of 1234 retries failed in the last minute, all within the budget the service allows",
    "ERROR is a word on this line, and so is FAILED, but it is not a progress line [ fine ]",
    "worker.py:12: error: this is the program's own log line, not pytest's usage error line",
    "  File \"/home/dev/src/shop/app/worker.py\", line 12, in run: logged by the program itself",
    "ValueError: the program logs exceptions it handled; this is one of them, and it goes on",
    "__init__.py is a name with underscores at both ends, like a section title's rule, __",
    "--- Captured-ish lines: dashes around a phrase the program prints, like pytest's own ---",
    "collected data from 12 sources in 0.84 s; 3 were skipped because they were not reachable",
];

fn main() {
    let lines = std::env::args().nth(1).and_then(|n| n.parse().ok()).unwrap_or(1_000_000);
    let only = std::env::args().nth(2);
    let both = [NOTHING, ALMOST].concat();
    for (name, region, body) in [
        ("nothing", &[][..], NOTHING),
        ("almost", &[][..], ALMOST),
        ("both", &[][..], &both[..]),
        ("in failure", IN_FAILURE, &both[..]),
    ] {
        if only.as_ref().is_some_and(|only| only != name) {
            continue;
        }
        let ns = ns_per_line(&ThePlugin, region, body, lines);
        println!("pytest.run {name:>10}: {ns:6.1} ns/line");
    }
}

/// Feeds [`PREAMBLE`] and `region`, then `lines` lines drawn from `body` in a fixed
/// pseudo-random order, as the host would, and returns the mean time per flood line, `finish`
/// included. Escapes are stripped beforehand: the host strips them, and `strip_ansi` is not the
/// parser's cost.
fn ns_per_line(plugin: &dyn Plugin, region: &[&str], body: &[&str], lines: usize) -> f64 {
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
    let mut parser = plugin.parser(&ParseContext::new("pytest.run", "/home/dev/src/shop"));
    let mut number = 0;
    for text in PREAMBLE.iter().chain(region) {
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
