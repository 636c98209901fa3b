//! What `pytest.run`'s parser costs per line on a flood: lines that look like nothing, and lines
//! that look almost like something, in the progress region and inside a failure's section.
//! `feed` sees every line of a run on a thread of its own, and must keep up with a pipe into a
//! file: about 1 GB/s, so 100 ns for a 100-byte line.
//!
//! `cargo run --release -p buildvise-plugin-pytest --example pytest_flood [LINES [MIX]]`

use buildvise_plugin_api::testing::{Flood, flood_main};
use buildvise_plugin_api::{ParseContext, Plugin, RunEnd};
use buildvise_plugin_pytest::ThePlugin;

/// Fed once before the flood: the session header, so the flood is the progress region.
const PREAMBLE: &[&str] = &[
    "============================= test session starts ==============================",
    "platform linux -- Python 3.12.3, pytest-8.3.3, pluggy-1.5.0",
    "rootdir: /srv/shop",
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
    "  File \"/srv/shop/app/worker.py\", line 12, in run: logged by the program itself",
    "ValueError: the program logs exceptions it handled; this is one of them, and it goes on",
    "__init__.py is a name with underscores at both ends, like a section title's rule, __",
    "--- Captured-ish lines: dashes around a phrase the program prints, like pytest's own ---",
    "collected data from 12 sources in 0.84 s; 3 were skipped because they were not reachable",
];

fn main() {
    let mut floods = Flood::usual(PREAMBLE, NOTHING, ALMOST);
    floods.push(Flood {
        name: "in failure",
        preamble: [PREAMBLE, IN_FAILURE].concat(),
        body: [NOTHING, ALMOST].concat(),
    });
    let parser = || ThePlugin.parser(&ParseContext::new("pytest.run", "/srv/shop"));
    flood_main("pytest.run", parser, &RunEnd::exited(1), &floods);
}
