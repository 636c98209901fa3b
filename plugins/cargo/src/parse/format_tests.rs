//! Each exported format on its own: it reads its own output (snippets of the parser's tests,
//! captured from cargo, rustc, libtest and cargo-nextest) and none of the others'.

use super::findings::Kind;
use super::{FORMATS, recognisers};
use crate::CargoPlugin;
use buildvise_plugin_api::testing::parse_log;
use buildvise_plugin_api::{ParseContext, ParseResult, Plugin, TestCase, TestOutcome};

const RUSTC: &str = "   Compiling shop v0.1.0 (/home/u/proj)
error[E0308]: mismatched types
  --> src/cart.rs:12:24
   |
12 |         let n: usize = self.lines.len() as u32;
   |                -----   ^^^^^^^^^^^^^^^^^^^^^^^ expected `usize`, found `u32`
   |                |
   |                expected due to this

warning: unused import: `std::fmt`
 --> src/lib.rs:1:5
  |
1 | use std::fmt;
  |     ^^^^^^^^
  |
  = note: `#[warn(unused_imports)]` on by default

For more information about this error, try `rustc --explain E0308`.
error: could not compile `shop` (lib) due to 1 previous error; 1 warning emitted
";

const LIBTEST: &str = "     Running unittests src/lib.rs (target/debug/deps/temps-0a1b)

running 3 tests
test tests::mean_of_nothing ... FAILED
test tests::rejects_nan - should panic ... FAILED
test tests::freezing ... ok

failures:

---- tests::mean_of_nothing stdout ----

thread 'tests::mean_of_nothing' (501) panicked at src/lib.rs:25:9:
mean of an empty slice
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace

---- tests::rejects_nan stdout ----
note: test did not panic as expected at src/lib.rs:55:8

failures:
    tests::mean_of_nothing
    tests::rejects_nan

test result: FAILED. 1 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

error: test failed, to rerun pass `--lib`
";

const NEXTEST: &str = "    Starting 2 tests across 1 binary
        FAIL [   0.148s] (1/2) nx-flaky tests::always_fails
  stderr ───

    thread 'tests::always_fails' (31161) panicked at src/lib.rs:23:9:
    assertion `left == right` failed: ports are consecutive
      left: 2
     right: 3
    note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace

        PASS [   0.026s] (2/2) nx-flaky tests::steady
────────────
     Summary [   0.504s] 2 tests run: 1 passed, 1 failed, 0 skipped
        FAIL [   0.148s] (1/2) nx-flaky tests::always_fails
error: test run failed
";

fn parse(format: &str, log: &str) -> ParseResult {
    let context = ParseContext::new("rust.check", "/home/u/proj");
    parse_log(CargoPlugin.format_parser(format, &context).expect("an exported format"), log.as_bytes(), 101)
}

fn messages(result: &ParseResult) -> Vec<&str> {
    result.diagnostics.iter().map(|d| d.message.as_str()).collect()
}

#[test]
fn rustc_reads_diagnostics_and_no_tests() {
    let result = parse("rustc", RUSTC);
    assert_eq!(messages(&result), ["mismatched types (expected `usize`, found `u32`)", "unused import: `std::fmt`"]);
    assert_eq!(result.diagnostics[1].code.as_deref(), Some("unused_imports"));
    for other in [LIBTEST, NEXTEST] {
        let result = parse("rustc", other);
        assert!(result.diagnostics.is_empty() && result.summary.is_none(), "{:?}", result.diagnostics);
    }
}

#[test]
fn libtest_reads_the_report_and_no_compiler_output() {
    let result = parse("libtest", LIBTEST);
    assert_eq!(messages(&result), ["mean of an empty slice", "test did not panic as expected"]);
    assert_eq!(result.failed_tests, ["tests::mean_of_nothing", "tests::rejects_nan"]);
    assert_eq!(result.summary.map(|s| (s.passed, s.failed)), Some((1, 2)));
    assert!(parse("libtest", RUSTC).diagnostics.is_empty());
    // A `cargo test` log holds both: each format takes its own part.
    let both = format!("{RUSTC}{LIBTEST}");
    assert_eq!(parse("libtest", &both).diagnostics.len(), 2);
    assert_eq!(parse("rustc", &both).diagnostics.len(), 2);
}

#[test]
fn nextest_reads_its_report_alone() {
    let result = parse("nextest", NEXTEST);
    assert_eq!(result.failed_tests, ["tests::always_fails"]);
    assert!(messages(&result)[0].starts_with("assertion `left == right` failed"), "{:?}", result.diagnostics);
    for other in [RUSTC, LIBTEST] {
        let result = parse("nextest", other);
        assert!(result.diagnostics.is_empty() && result.failed_tests.is_empty(), "{:?}", result.diagnostics);
    }
    assert!(parse("libtest", NEXTEST).failed_tests.is_empty());
}

#[test]
fn every_verdict_names_its_test_in_order() {
    let tests = parse("libtest", LIBTEST).tests;
    // libtest prints no times; the decoration `- should panic` is not part of the name.
    assert_eq!(
        tests,
        [
            TestCase::new("tests::mean_of_nothing", TestOutcome::Failed, None),
            TestCase::new("tests::rejects_nan", TestOutcome::Failed, None),
            TestCase::new("tests::freezing", TestOutcome::Passed, None),
        ]
    );
    // nextest names each test once, its final list's repeat included, with its time.
    assert_eq!(
        parse("nextest", NEXTEST).tests,
        [
            TestCase::new("tests::always_fails", TestOutcome::Failed, Some(148_000)),
            TestCase::new("tests::steady", TestOutcome::Passed, Some(26_000)),
        ]
    );
}

#[test]
fn the_manifest_lists_every_format_and_only_those() {
    let manifest = CargoPlugin.manifest();
    let names: Vec<&str> = manifest.formats.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, FORMATS.map(|(name, _)| name));
    let context = ParseContext::new("rust.check", "/home/u/proj");
    for name in &names {
        assert!(CargoPlugin.format_parser(name, &context).is_some(), "{name}");
    }
    assert!(CargoPlugin.format_parser("cargo", &context).is_none());
}

#[test]
fn the_exported_formats_are_those_the_recognisers_read() {
    let tools = [Kind::Cargo, Kind::Test, Kind::Nextest, Kind::Run, Kind::Fmt];
    let mut registered: Vec<&str> = tools.into_iter().flat_map(|kind| recognisers(kind).formats()).collect();
    registered.sort_unstable();
    registered.dedup();
    let mut exported = FORMATS.map(|(name, _)| name);
    exported.sort_unstable();
    assert_eq!(registered, exported);
}
