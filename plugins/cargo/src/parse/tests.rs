//! End-to-end tests of the parser on small excerpts shaped like real cargo output.

use crate::CargoPlugin;
use buildvise_plugin_api::testing::{parse_log, parse_streams};
use buildvise_plugin_api::{Diagnostic, ParseContext, ParseResult, Plugin, RunEnd, Severity, TestSummary};

const CWD: &str = "/home/u/proj";

fn parse(tool: &str, log: &str, exit: i32) -> ParseResult {
    parse_log(parser(tool), log.as_bytes(), exit)
}

fn parser(tool: &str) -> Box<dyn buildvise_plugin_api::Parser> {
    CargoPlugin.parser(&ParseContext::new(tool, CWD))
}

/// `file:line:col code message [test]`, compact enough to compare whole results.
fn brief(d: &Diagnostic) -> String {
    let severity = if d.severity == Severity::Error { "E" } else { "W" };
    let location = format!("{}:{}:{}", d.file.as_deref().unwrap_or("-"), d.line.unwrap_or(0), d.column.unwrap_or(0));
    let test = d.test.as_deref().map(|t| format!(" [{t}]")).unwrap_or_default();
    format!("{severity} {location} {} {}{test}", d.code.as_deref().unwrap_or("-"), d.message)
}

fn briefs(result: &ParseResult) -> Vec<String> {
    result.diagnostics.iter().map(brief).collect()
}

#[test]
fn rustc_errors_with_codes_labels_and_no_summary_lines() {
    let log = "   Compiling shop v0.1.0 (/home/u/proj)
error[E0308]: mismatched types
  --> src/cart.rs:12:24
   |
12 |         let n: usize = self.lines.len() as u32;
   |                -----   ^^^^^^^^^^^^^^^^^^^^^^^ expected `usize`, found `u32`
   |                |
   |                expected due to this
   |
help: you can convert a `u32` to a `usize` and panic if the converted value doesn't fit
   |
12 |         let n: usize = (self.lines.len() as u32).try_into().unwrap();
   |                        +                       +++++++++++++++++++++

error: expected one of `,` or `}`, found `x`
 --> src/main.rs:4:9
  |
4 |     a: 1 x
  |         ^ expected one of `,` or `}`

Some errors have detailed explanations: E0308.
For more information about this error, try `rustc --explain E0308`.
error: could not compile `shop` (lib) due to 2 previous errors
";
    let result = parse("cargo.build", log, 101);
    assert_eq!(
        briefs(&result),
        [
            "E src/cart.rs:12:24 E0308 mismatched types (expected `usize`, found `u32`)",
            // The label only repeats the headline's tokens.
            "E src/main.rs:4:9 - expected one of `,` or `}`, found `x`",
        ]
    );
    let first = &result.diagnostics[0];
    assert_eq!(first.notes[0], "expected `usize`, found `u32`");
    assert!(first.notes[1].starts_with("help: you can convert"));
    assert_eq!(first.log_range.map(|r| (r.start, r.end)), Some((2, 13)));
    assert!(result.summary.is_none() && result.success.is_none());
}

/// bytesize with a misspelled method and hex with swapped arguments: a help that says its fix
/// in one short line joins the headline; one that introduces a snippet or a list does not.
#[test]
fn a_one_line_help_joins_the_error_it_fixes() {
    let log = "error[E0599]: no method named `is_bit` found for enum `Format` in the current scope
   --> src/display.rs:156:35
    |
  9 | pub(crate) enum Format {
    | ---------------------- method `is_bit` not found for this enum
...
156 |         let is_bits = self.format.is_bit();
    |                                   ^^^^^^
    |
help: there is a method `is_bits` with a similar name
    |
156 |         let is_bits = self.format.is_bits();
    |                                         +

error[E0308]: arguments to this function are incorrect
   --> src/lib.rs:356:20
    |
356 |         let byte = val(2 * i, &in_out[2 * i..2 * i + 2])?;
    |                    ^^^ -----  ------------------------- expected `usize`, found `&[u8]`
    |                        |
    |                        expected `&[u8]`, found `usize`
    |
note: function defined here
   --> src/lib.rs:195:4
    |
195 | fn val(bytes: &[u8], idx: usize) -> Result<u8, FromHexError> {
    |    ^^^
help: swap these arguments
    |
356 -         let byte = val(2 * i, &in_out[2 * i..2 * i + 2])?;
356 +         let byte = val(&in_out[2 * i..2 * i + 2], 2 * i)?;
    |

error[E0277]: cannot divide `u32` by `f64`
 --> src/lib.rs:3:7
  |
3 |     a / 2.0
  |       ^ no implementation for `u32 / f64`
  |
  = help: the trait `Div<f64>` is not implemented for `u32`
  = help: the following other types implement trait `Div<Rhs>`:
            `&u32` implements `Div<u32>`
            `u32` implements `Div`

";
    let result = parse("cargo.check", log, 101);
    assert_eq!(
        briefs(&result),
        [
            "E src/display.rs:156:35 E0599 no method named `is_bit` found for enum `Format` in the current scope; \
             help: there is a method `is_bits` with a similar name",
            "E src/lib.rs:356:20 E0308 arguments to this function are incorrect (expected `usize`, found `&[u8]`); \
             help: swap these arguments",
            "E src/lib.rs:3:7 E0277 cannot divide `u32` by `f64` (no implementation for `u32 / f64`); help: the trait \
             `Div<f64>` is not implemented for `u32`",
        ]
    );
}

/// cargo's own errors: glob run with libtest's flag before `--`, and with a test target that
/// does not exist. The tips and the help's list are what to do next.
#[test]
fn cargos_tips_and_listed_helps_join_its_error() {
    let log = "error: unexpected argument '--nocapture' found

  tip: a similar argument exists: '--features'
  tip: to pass '--nocapture' as a value, use '-- --nocapture'

Usage: cargo test --features <FEATURES> [TESTNAME] [-- [ARGS]...]

For more information, try '--help'.
";
    let result = parse("cargo.test", log, 1);
    assert_eq!(
        briefs(&result),
        ["E -:0:0 - unexpected argument '--nocapture' found; tip: a similar argument exists: '--features'; tip: to \
             pass '--nocapture' as a value, use '-- --nocapture'"]
    );
    assert_eq!(result.diagnostics[0].log_range.map(|r| (r.start, r.end)), Some((1, 4)));
    let log = "error: no test target named `pattern` in default-run packages
help: available test targets:
    glob-std
    pattern_panics
";
    let result = parse("cargo.test", log, 101);
    assert_eq!(
        briefs(&result),
        ["E -:0:0 - no test target named `pattern` in default-run packages; help: available test targets: \
             glob-std, pattern_panics"]
    );
}

#[test]
fn lint_names_come_from_the_first_note_the_run_and_the_table() {
    let log = "warning: unused variable: `a`
 --> src/lib.rs:2:9
  |
2 |     let a = 1;
  |         ^ help: if this is intentional, prefix it with an underscore: `_a`
  |
  = note: `#[warn(unused_variables)]` (part of `#[warn(unused)]`) on by default

warning: unused variable: `b`
 --> src/lib.rs:3:9
  |
3 |     let b = 2;
  |         ^ help: if this is intentional, prefix it with an underscore: `_b`

warning: function `old` is never used
  --> src/lib.rs:10:4
   |
10 | fn old() {}
   |    ^^^

warning: `proj` (lib) generated 3 warnings
";
    let result = parse("cargo.build", log, 0);
    assert_eq!(
        briefs(&result),
        [
            "W src/lib.rs:2:9 unused_variables unused variable: `a`",
            "W src/lib.rs:3:9 unused_variables unused variable: `b`",
            "W src/lib.rs:10:4 dead_code function `old` is never used",
        ]
    );
    assert!(result.diagnostics[0].notes.iter().all(|n| !n.contains("on by default")));
}

#[test]
fn lint_learned_later_is_filled_in_earlier() {
    // The same custom lint in two crates, the named one printed second (as when stdout and
    // stderr are read one after the other).
    let log = "warning: this looks suspicious: `x`
 --> crates/a/src/lib.rs:1:1
  |
1 | x
  | ^

warning: this looks suspicious: `y`
 --> crates/b/src/lib.rs:1:1
  |
1 | y
  | ^
  |
  = note: `#[warn(suspicious_thing)]` on by default

";
    let result = parse("cargo.check", log, 0);
    assert!(result.diagnostics.iter().all(|d| d.code.as_deref() == Some("suspicious_thing")), "{result:?}");
}

#[test]
fn clippy_lints_by_link_and_denied_warnings() {
    let log = "    Checking stats v0.1.0 (/home/u/proj)
warning: unneeded `return` statement
 --> src/lib.rs:6:5
  |
6 |     return sum;
  |     ^^^^^^^^^^
  |
  = help: for further information visit https://rust-lang.github.io/rust-clippy/rust-1.95.0/index.html#needless_return
help: remove `return`
  |
6 -     return sum;
6 +     sum
  |

error: length comparison to zero
  --> src/lib.rs:10:5
   |
10 |     v.len() != 0
   |     ^^^^^^^^^^^^ help: using `!is_empty` is clearer and more explicit: `!v.is_empty()`
   |
   = help: for further information visit https://rust-lang.github.io/rust-clippy/rust-1.95.0/index.html#len_zero
   = note: `-D clippy::len-zero` implied by `-D warnings`
   = help: to override `-D warnings` add `#[allow(clippy::len_zero)]`

error: unused variable: `limit`
  --> src/lib.rs:22:9
   |
22 |     let limit = 100;
   |         ^^^^^ help: if this is intentional, prefix it with an underscore: `_limit`
   |
   = note: `-D unused-variables` implied by `-D warnings`

error: could not compile `stats` (lib) due to 2 previous errors; 1 warning emitted
";
    let result = parse("cargo.clippy", log, 101);
    assert_eq!(
        briefs(&result),
        [
            "W src/lib.rs:6:5 clippy::needless_return unneeded `return` statement",
            "E src/lib.rs:10:5 clippy::len_zero length comparison to zero",
            "E src/lib.rs:22:9 unused_variables unused variable: `limit`",
        ]
    );
}

#[test]
fn lint_level_attribute_names_the_lint() {
    let log = "error: constant `LIMIT` is never used
 --> src/lib.rs:3:7
  |
3 | const LIMIT: u32 = 3;
  |       ^^^^^
  |
note: the lint level is defined here
 --> src/lib.rs:1:9
  |
1 | #![deny(dead_code)]
  |         ^^^^^^^^^

error: struct `Thing` should have an upper camel case name
 --> src/lib.rs:5:8
  |
5 | struct thing;
  |        ^^^^^ help: convert the identifier to upper camel case: `Thing`
  |
note: the lint level is defined here
 --> src/lib.rs:1:9
  |
1 | #![deny(warnings)]
  |         ^^^^^^^^
  = note: `#[deny(non_camel_case_types)]` implied by `#[deny(warnings)]`

";
    let result = parse("cargo.build", log, 101);
    let codes: Vec<_> = result.diagnostics.iter().map(|d| d.code.as_deref()).collect();
    assert_eq!(codes, [Some("dead_code"), Some("non_camel_case_types")]);
    assert!(result.diagnostics[0].notes.iter().all(|n| !n.contains("lint level")));
}

#[test]
fn workspace_and_absolute_paths() {
    let log = "error[E0425]: cannot find function `widths` in this scope
 --> crates/cli/src/report.rs:3:18
  |
3 |     let w = widths(a);
  |             ^^^^^^ not found in this scope

error[E0599]: no method named `foo` found for struct `Bar` in the current scope
 --> /home/u/proj/src/main.rs:8:7
  |
8 |     b.foo();
  |       ^^^ method not found in `Bar`

warning: unused import: `x`
 --> /home/u/.cargo/registry/src/index-abc/dep-1.0.0/src/lib.rs:1:5
  |
1 | use x;
  |     ^
  |
  = note: `#[warn(unused_imports)]` on by default

";
    let result = parse("cargo.build", log, 101);
    let files: Vec<_> = result.diagnostics.iter().map(|d| d.file.as_deref().unwrap_or("-")).collect();
    assert_eq!(
        files,
        ["crates/cli/src/report.rs", "src/main.rs", "/home/u/.cargo/registry/src/index-abc/dep-1.0.0/src/lib.rs"]
    );
}

#[test]
fn manifest_errors_new_and_old_style() {
    let new = "error: missing comma between key-value pairs, expected `,`
 --> Cargo.toml:7:28
  |
7 | tinyjson = { version = \"2\" default-features = false }
  |                            ^
";
    assert_eq!(
        briefs(&parse("cargo.build", new, 101)),
        ["E Cargo.toml:7:28 - missing comma between key-value pairs, expected `,`"]
    );
    let old = "error: failed to parse manifest at `/home/u/proj/Cargo.toml`

Caused by:
  TOML parse error at line 7, column 28
    |
  7 | tinyjson = { version = \"2\" default-features = false }
    |                            ^
  expected `,`
";
    assert_eq!(
        briefs(&parse("cargo.build", old, 101)),
        ["E Cargo.toml:7:28 - failed to parse manifest at `/home/u/proj/Cargo.toml`"]
    );
}

#[test]
fn dependency_errors_keep_their_cause_chain() {
    let log = "error: failed to get `units` as a dependency of package `app v0.1.0 (/home/u/proj)`

Caused by:
  failed to load source for dependency `units`

Caused by:
  Unable to update /home/u/proj/crates/units

Caused by:
  failed to read `/home/u/proj/crates/units/Cargo.toml`

Caused by:
  No such file or directory (os error 2)
error: no matching package named `serde_jsn` found
location searched: `mirror` index
required by package `app v0.1.0 (/home/u/proj)`
   Compiling app v0.1.0 (/home/u/proj)
";
    let result = parse("cargo.build", log, 101);
    assert_eq!(
        briefs(&result),
        [
            "E -:0:0 - failed to get `units` as a dependency of package `app v0.1.0 (/home/u/proj)`",
            "E -:0:0 - no matching package named `serde_jsn` found",
        ]
    );
    assert_eq!(
        result.diagnostics[0].notes,
        [
            "failed to load source for dependency `units`",
            "Unable to update /home/u/proj/crates/units",
            "failed to read `/home/u/proj/crates/units/Cargo.toml`",
            "No such file or directory (os error 2)"
        ]
    );
    assert_eq!(
        result.diagnostics[1].notes,
        ["location searched: `mirror` index", "required by package `app v0.1.0 (/home/u/proj)`"]
    );
    assert_eq!(result.diagnostics[0].log_range.map(|r| (r.start, r.end)), Some((1, 13)));
}

#[test]
fn build_script_panic_and_warning() {
    let log = "warning: /home/u/proj/Cargo.toml: unused manifest key: package.colour
   Compiling probe v0.2.0 (/home/u/proj)
warning: probe@0.2.0: using bundled headers
error: failed to run custom build command for `probe v0.2.0 (/home/u/proj)`
note: To improve backtraces for build dependencies, set the CARGO_PROFILE_DEV_BUILD_OVERRIDE_DEBUG=true environment variable to enable debug information generation.

Caused by:
  process didn't exit successfully: `/home/u/proj/target/debug/build/probe-0123/build-script-build` (exit status: 101)
  --- stdout
  cargo::warning=using bundled headers

  --- stderr

  thread 'main' (812) panicked at build.rs:12:30:
  headers/api.h must exist: Os { code: 2, kind: NotFound, message: \"No such file or directory\" }
  stack backtrace:
     0: __rustc::rust_begin_unwind
               at /rustc/5980761/library/std/src/panicking.rs:689:5
  note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.
";
    let result = parse("cargo.build", log, 101);
    assert_eq!(
        briefs(&result),
        [
            "W Cargo.toml:0:0 - /home/u/proj/Cargo.toml: unused manifest key: package.colour",
            "W -:0:0 - probe@0.2.0: using bundled headers",
            "E build.rs:12:30 - headers/api.h must exist: Os { code: 2, kind: NotFound, message: \"No such file or directory\" }",
        ]
    );
    let notes = &result.diagnostics[2].notes;
    assert_eq!(notes[0], "failed to run custom build command for `probe v0.2.0 (/home/u/proj)`");
    assert!(notes.iter().all(|n| !n.contains("backtrace") && !n.contains("rust_begin_unwind")), "{notes:?}");
}

const CAPTURED: &str = "     Running unittests src/lib.rs (target/debug/deps/temps-0a1b)

running 5 tests
test tests::mean_of_nothing ... FAILED
test tests::rejects_nan - should panic ... FAILED
test tests::freezing ... ok
test tests::negative ... FAILED
test tests::slow ... ignored

failures:

---- tests::mean_of_nothing stdout ----

thread 'tests::mean_of_nothing' (501) panicked at src/lib.rs:25:9:
mean of an empty slice
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace

---- tests::rejects_nan stdout ----
note: test did not panic as expected at src/lib.rs:55:8
---- tests::negative stdout ----

thread 'tests::negative' (503) panicked at src/lib.rs:45:9:
assertion `left == right` failed
  left: Some(-3.5)
 right: Some(-3.0)


failures:
    tests::mean_of_nothing
    tests::negative
    tests::rejects_nan

test result: FAILED. 1 passed; 3 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s

error: test failed, to rerun pass `--lib`
   Doc-tests temps

running 2 tests
test src/lib.rs - to_f (line 5) ... ok
test src/lib.rs - parse (line 14) ... FAILED

failures:

---- src/lib.rs - parse (line 14) stdout ----
Test executable failed (exit status: 101).

stderr:

thread 'main' (590) panicked at src/lib.rs:6:1:
assertion `left == right` failed
  left: -4.0
 right: -4.5
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace



failures:
    src/lib.rs - parse (line 14)

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 2 filtered out; finished in 0.20s

error: doctest failed, to rerun pass `--doc`
error: 2 targets failed:
    `--lib`
    `--doc`
";

#[test]
fn libtest_failures_doctests_and_summary() {
    let result = parse("cargo.test", CAPTURED, 101);
    assert_eq!(
        briefs(&result),
        [
            "E src/lib.rs:25:9 - mean of an empty slice [tests::mean_of_nothing]",
            "E src/lib.rs:55:8 - test did not panic as expected [tests::rejects_nan]",
            "E src/lib.rs:45:9 - assertion `left == right` failed [tests::negative]",
            "E src/lib.rs:6:1 - assertion `left == right` failed [src/lib.rs - parse (line 14)]",
        ]
    );
    assert_eq!(result.diagnostics[2].notes, ["left: Some(-3.5)", "right: Some(-3.0)"]);
    assert_eq!(
        result.failed_tests,
        ["tests::mean_of_nothing", "tests::rejects_nan", "tests::negative", "src/lib.rs - parse (line 14)"]
    );
    assert_eq!(result.summary, Some(TestSummary::new(2, 4, 1, 7)));
}

#[test]
fn nocapture_panics_on_stderr_read_after_stdout() {
    let stdout = "
running 3 tests
[drain] popped 1
test tests::drain ... FAILED
test tests::order ... ok
test tests::refuses_full - should panic ... ok

failures:

failures:
    tests::drain

test result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

";
    let stderr = "   Compiling q v0.1.0 (/home/u/proj)
    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.67s
     Running unittests src/lib.rs (target/debug/deps/q-1a2b)
[src/lib.rs:62:22] q.pop() = Some(
    1,
)

thread 'tests::drain' (29172) panicked at src/lib.rs:64:9:
assertion `left != right` failed: queue should not be empty
  left: 0
 right: 0
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace

thread 'tests::refuses_full' (29173) panicked at src/lib.rs:80:9:
queue full
error: test failed, to rerun pass `--lib`
";
    let end = RunEnd::exited(101);
    let result = parse_streams(parser("cargo.test"), stdout.as_bytes(), stderr.as_bytes(), &end);
    assert_eq!(
        briefs(&result),
        ["E src/lib.rs:64:9 - assertion `left != right` failed: queue should not be empty [tests::drain]"]
    );
    assert_eq!(result.failed_tests, ["tests::drain"]);
    assert_eq!(result.summary.map(|s| (s.passed, s.failed, s.total)), Some((2, 1, 3)));
}

/// glob's tests, one test catching a panic it expects before its own assert! fails, another
/// joining a thread that panicked: each test failed once, by its last panic.
#[test]
fn a_caught_panic_before_the_failing_one_is_a_note_of_it() {
    let log = "running 3 tests
test unwrap_of_bad_pattern_panics_and_good_one_matches ... FAILED
test worker_builds_recursive_pattern ... FAILED

failures:

---- unwrap_of_bad_pattern_panics_and_good_one_matches stdout ----

thread 'unwrap_of_bad_pattern_panics_and_good_one_matches' (22104) panicked at tests/pattern_panics.rs:8:60:
called `Result::unwrap()` on an `Err` value: PatternError { pos: 1, msg: \"invalid range pattern\" }
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace

thread 'unwrap_of_bad_pattern_panics_and_good_one_matches' (22104) panicked at tests/pattern_panics.rs:11:5:
pattern *.rs should match src/lib.RS

---- worker_builds_recursive_pattern stdout ----

thread '<unnamed>' (22106) panicked at tests/pattern_panics.rs:16:59:
called `Result::unwrap()` on an `Err` value: PatternError { pos: 4, msg: \"wildcards are either regular `*` or recursive `**`\" }

thread 'worker_builds_recursive_pattern' (22105) panicked at tests/pattern_panics.rs:18:5:
the worker could not build its pattern


failures:
    unwrap_of_bad_pattern_panics_and_good_one_matches
    worker_builds_recursive_pattern

test result: FAILED. 1 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

error: test failed, to rerun pass `--test pattern_panics`
";
    let result = parse("cargo.test", log, 101);
    assert_eq!(
        briefs(&result),
        [
            "E tests/pattern_panics.rs:11:5 - pattern *.rs should match src/lib.RS \
             [unwrap_of_bad_pattern_panics_and_good_one_matches]",
            "E tests/pattern_panics.rs:18:5 - the worker could not build its pattern [worker_builds_recursive_pattern]",
        ]
    );
    assert_eq!(
        result.diagnostics[0].notes,
        ["caught a panic before at tests/pattern_panics.rs:8:60: called `Result::unwrap()` on an `Err` value: \
          PatternError { pos: 1, msg: \"invalid range pattern\" }"]
    );
    assert!(result.diagnostics[1].notes[0].starts_with("another thread panicked at tests/pattern_panics.rs:16"));
}

/// bytesize's test under --nocapture: both panics on stderr, named by the test's thread, the
/// caught one first; the failure keeps the values the failing assert_eq! compared.
#[test]
fn under_nocapture_a_tests_caught_panic_is_a_note_of_the_failing_one() {
    let stdout = "
running 2 tests
test display::tests::ideal_unit_rejects_sizes_below_one_unit ... FAILED
test display::tests::to_string_as ... ok

failures:

failures:
    display::tests::ideal_unit_rejects_sizes_below_one_unit

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

";
    let stderr = "     Running unittests src/lib.rs (target/debug/deps/bytesize-1458ee8f843e71ce)

thread 'display::tests::ideal_unit_rejects_sizes_below_one_unit' (22227) panicked at src/display.rs:209:5:
only called when bytes >= unit
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace

thread 'display::tests::ideal_unit_rejects_sizes_below_one_unit' (22227) panicked at src/display.rs:314:9:
assertion `left == right` failed
  left: 2
 right: 1
error: test failed, to rerun pass `--lib`
";
    let end = RunEnd::exited(101);
    let result = parse_streams(parser("cargo.test"), stdout.as_bytes(), stderr.as_bytes(), &end);
    assert_eq!(
        briefs(&result),
        ["E src/display.rs:314:9 - assertion `left == right` failed \
             [display::tests::ideal_unit_rejects_sizes_below_one_unit]"]
    );
    assert_eq!(
        result.diagnostics[0].notes,
        ["left: 2", "right: 1", "caught a panic before at src/display.rs:209:5: only called when bytes >= unit"]
    );
}

#[test]
fn tests_without_a_panic_and_crashed_binaries() {
    let log = "
running 2 tests
test tests::loads ... FAILED
test tests::deep ... ok

failures:

---- tests::loads stdout ----
Error: Parse(\"bad header\")

failures:
    tests::loads

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s

error: test failed, to rerun pass `--lib`
     Running tests/stack.rs (target/debug/deps/stack-9f)

running 1 test

thread 'recurses' (77) has overflowed its stack
fatal runtime error: stack overflow, aborting
error: test failed, to rerun pass `--test stack`

Caused by:
  process didn't exit successfully: `/home/u/proj/target/debug/deps/stack-9f` (signal: 6, SIGABRT: process abort signal)
";
    let result = parse("cargo.test", log, 101);
    assert_eq!(
        briefs(&result),
        [
            "E -:0:0 - stack overflow [recurses]",
            "E -:0:0 - process didn't exit successfully: `/home/u/proj/target/debug/deps/stack-9f` (signal: 6, SIGABRT: process abort signal)",
            "E -:0:0 - Error: Parse(\"bad header\") [tests::loads]",
        ]
    );
}

#[test]
fn legacy_panic_format() {
    let log = "running 2 tests
test t::a ... FAILED
test t::b ... FAILED

failures:

---- t::a stdout ----
thread 't::a' panicked at 'boom', src/lib.rs:3:5

---- t::b stdout ----
thread 't::b' panicked at 'assertion failed: `(left == right)`
  left: `1`,
 right: `2`', src/lib.rs:9:9

test result: FAILED. 0 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out
";
    assert_eq!(
        briefs(&parse("cargo.test", log, 101)),
        ["E src/lib.rs:3:5 - boom [t::a]", "E src/lib.rs:9:9 - assertion failed: `(left == right)` [t::b]"]
    );
}

#[test]
fn doctest_compile_errors_belong_to_their_test() {
    let log = "running 1 test
test src/lib.rs - area (line 3) ... FAILED

failures:

---- src/lib.rs - area (line 3) stdout ----
error[E0425]: cannot find value `sid` in this scope
 --> src/lib.rs:5:13
  |
3 | let a = area(sid);
  |              ^^^ not found in this scope

error: aborting due to 1 previous error

For more information about this error, try `rustc --explain E0425`.
Couldn't compile the test.

failures:
    src/lib.rs - area (line 3)

test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.05s
";
    assert_eq!(
        briefs(&parse("cargo.test", log, 101)),
        ["E src/lib.rs:5:13 E0425 cannot find value `sid` in this scope [src/lib.rs - area (line 3)]"]
    );
}

#[test]
fn json_stream_with_text_around_it() {
    let log = r#"   Compiling units v0.1.0 (/home/u/proj/crates/units)
{"reason":"compiler-message","package_id":"units","message":{"rendered":"warning: unused variable: `r`\n --> crates/units/src/lib.rs:7:13\n  |\n7 |         let r = true;\n  |             ^\n","children":[],"level":"warning","message":"unused variable: `r`","spans":[{"file_name":"crates/units/src/lib.rs","line_start":7,"column_start":13,"line_end":7,"column_end":14,"is_primary":true,"label":null,"expansion":null}],"code":{"code":"unused_variables","explanation":null}}}
{"reason":"compiler-artifact","package_id":"units","filenames":[]}
{"reason":"compiler-message","package_id":"app","message":{"rendered":"\u001b[1m\u001b[91merror[E0063]\u001b[0m: missing field `name` in initializer of `Route`\n\u001b[1m\u001b[94m --> \u001b[0msrc/main.rs:7:17\n","children":[],"level":"error","message":"missing field `name` in initializer of `Route`","spans":[{"file_name":"src/main.rs","line_start":7,"column_start":17,"line_end":7,"column_end":22,"is_primary":true,"label":"missing `name`","expansion":null}],"code":{"code":"E0063","explanation":"long text"}}}
{"reason":"compiler-message","package_id":"app","message":{"rendered":"Some errors have detailed explanations: E0063.\n","children":[],"level":"failure-note","message":"Some errors have detailed explanations: E0063.","spans":[],"code":null}}
error: could not compile `app` (bin "app") due to 1 previous error; 1 warning emitted
{"reason":"build-finished","success":false}
"#;
    let result = parse("cargo.build", log, 101);
    assert_eq!(
        briefs(&result),
        [
            "W crates/units/src/lib.rs:7:13 unused_variables unused variable: `r`",
            "E src/main.rs:7:17 E0063 missing field `name` in initializer of `Route`",
        ]
    );
    assert_eq!(result.diagnostics[1].notes, ["missing `name`"]);
    assert_eq!(result.diagnostics[1].log_range.map(|r| r.start), Some(4));
}

#[test]
fn short_message_format() {
    let log = "    Checking app v0.1.0 (/home/u/proj)
src/main.rs:4:5: warning: unused import: `std::fmt`
src/main.rs:7:9: warning: unused variable: `x`: help: if this is intentional, prefix it with an underscore: `_x`
src/main.rs:9:13: error[E0308]: mismatched types
src/notes.rs: not a diagnostic
error: could not compile `app` (bin \"app\") due to 1 previous error; 1 warning emitted
";
    assert_eq!(
        briefs(&parse("cargo.check", log, 101)),
        [
            "W src/main.rs:4:5 unused_imports unused import: `std::fmt`",
            "W src/main.rs:7:9 unused_variables unused variable: `x`",
            "E src/main.rs:9:13 E0308 mismatched types"
        ]
    );
}

#[test]
fn a_side_panic_with_a_huge_path_gives_a_bounded_note() {
    let path = format!("src/{}.rs", "x".repeat(100_000));
    let log = format!(
        "running 1 test\ntest t::spawned ... FAILED\n\nfailures:\n\n---- t::spawned stdout ----\n\
         thread '<unnamed>' panicked at {path}:51:31:\nin thread\n\
         thread 't::spawned' panicked at src/lib.rs:51:59:\nboom\n"
    );
    let result = parse("cargo.test", &log, 101);
    let note = &result.diagnostics[0].notes[0];
    assert!(note.starts_with("another thread panicked at src/xxx") && note.len() <= 1000, "{} bytes", note.len());
}

#[test]
fn blank_test_names_name_no_test() {
    // No verdicts: the log was cut, so every panic read counts.
    let thread = "running 1 test\nthread ' ' panicked at src/lib.rs:3:5:\nboom\n";
    let header = "running 1 test\n\nfailures:\n\n----  stdout ----\nthread 'main' panicked at src/lib.rs:4:5:\nbang\n";
    for log in [thread, header] {
        let result = parse("cargo.test", log, 101);
        assert!(
            result.diagnostics.iter().all(|d| d.test.as_deref().is_none_or(|t| !t.trim().is_empty())),
            "{result:#?}"
        );
    }
}

#[test]
fn messages_without_text_keep_a_headline() {
    let log = r#"src/main.rs:4:5: error: : help: remove this
{"reason":"compiler-message","message":{"rendered":null,"children":[],"level":"warning","message":"\n","spans":[],"code":null}}
"#;
    assert_eq!(
        briefs(&parse("cargo.check", log, 101)),
        ["E src/main.rs:4:5 - : help: remove this", "W -:0:0 - warning"]
    );
}

#[test]
fn colour_codes_never_reach_results() {
    let log = "\x1b[0m\x1b[1m\x1b[32m   Compiling\x1b[0m app v0.1.0 (/home/u/proj)
\x1b[0m\x1b[1m\x1b[33mwarning\x1b[0m\x1b[0m\x1b[1m: unused import: `std::fmt`\x1b[0m
\x1b[0m \x1b[0m\x1b[0m\x1b[1m\x1b[38;5;12m--> \x1b[0m\x1b[0msrc/main.rs:1:5\x1b[0m
\x1b[0m  \x1b[0m\x1b[0m\x1b[1m\x1b[38;5;12m|\x1b[0m
\x1b[0m  \x1b[0m\x1b[0m\x1b[1m\x1b[38;5;12m= \x1b[0m\x1b[0m\x1b[1mnote\x1b[0m\x1b[0m: `#[warn(unused_imports)]` on by default\x1b[0m

";
    assert_eq!(briefs(&parse("cargo.build", log, 0)), ["W src/main.rs:1:5 unused_imports unused import: `std::fmt`"]);
}

#[test]
fn cargo_wrap_up_and_test_output_are_not_diagnostics() {
    let log = "warning: `app` (lib) generated 2 warnings (run `cargo fix --lib -p app` to apply 2 suggestions)
warning: `app` (lib test) generated 2 warnings (2 duplicates)
warning: build failed, waiting for other jobs to finish...
error: could not compile `app` (lib test) due to 1 previous error
warning: the following packages contain code that will be rejected by a future version of Rust: old v0.1.0
note: to see what the problems were, use the option `--future-incompat-report`

running 1 test
error: connection refused (printed by the test)
warning: retrying
test net::connects ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

error: 1 target failed:
    `--lib`
";
    let result = parse("cargo.test", log, 101);
    assert!(result.diagnostics.is_empty(), "{:?}", briefs(&result));
    assert_eq!(result.summary.map(|s| s.total), Some(1));
}

#[test]
fn odd_input_never_panics() {
    let mut log: Vec<u8> = Vec::new();
    log.extend_from_slice(b"error[E0308]: mis\xffmatched \xfe types\n --> src/\xff.rs:1:2\n  |\n");
    log.extend_from_slice(b"error[\n --> \nwarning: \n  = note: `#[warn(\n");
    log.extend_from_slice(b"thread '\nthread 'x' panicked at :\nthread 't' (1) panicked at src/a.rs:1:1:\n");
    log.extend_from_slice(b"test result: FAILED. 99999999999999999999999 passed; x failed\n");
    log.extend_from_slice(b"test result: FAILED. 18446744073709551615 passed; 9 failed; 1 ignored\n");
    log.extend_from_slice(b"---- ----\n---- stdout ----\nfailures:\n    \n");
    log.extend_from_slice(
        b"Caused by:\n  --- stderr\n{\"reason\":\"compiler-message\",\"message\":{\"level\":\"error\"}}\n",
    );
    log.extend_from_slice(b"{\"reason\":\"compiler-message\"");
    log.extend_from_slice(b"\nerror: failed to run custom build command for `x`\n\nCaused by:\n  --- stderr\n  thread 'main' panicked at '");
    log.extend(std::iter::repeat_n(b'a', 200_000));
    log.extend_from_slice(b"\nerror: ");
    log.extend(std::iter::repeat_n("é", 100_000).flat_map(|s| s.bytes()));
    log.push(b'\n');
    let result = parse_log(parser("cargo.test"), &log, 101);
    assert!(result.diagnostics.iter().all(|d| d.message.len() <= 1024 && d.notes.iter().all(|n| n.len() <= 1024)));
    assert!(result.diagnostics.iter().any(|d| d.code.as_deref() == Some("E0308")));
}

#[test]
fn spawned_thread_panics_explain_the_tests_own() {
    let log = "running 2 tests
test t::spawned ... FAILED
test t::wrong - should panic ... FAILED

failures:

---- t::spawned stdout ----

thread '<unnamed>' (11) panicked at src/lib.rs:51:31:
in thread
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace

thread 't::spawned' (10) panicked at src/lib.rs:51:59:
called `Result::unwrap()` on an `Err` value: Any { .. }
---- t::wrong stdout ----

thread 't::wrong' (12) panicked at src/lib.rs:43:9:
boom
note: panic did not contain expected string
      panic message: \"boom\"
 expected substring: \"bang\"

failures:
    t::spawned
    t::wrong

test result: FAILED. 0 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s
";
    let result = parse("cargo.test", log, 101);
    assert_eq!(
        briefs(&result),
        [
            "E src/lib.rs:51:59 - called `Result::unwrap()` on an `Err` value: Any { .. } [t::spawned]",
            "E src/lib.rs:43:9 - panic did not contain \"bang\": boom [t::wrong]",
        ]
    );
    assert_eq!(result.diagnostics[0].notes, ["another thread panicked at src/lib.rs:51: in thread"]);
    assert!(result.diagnostics[1].notes.is_empty());
}

#[test]
fn nocapture_doctest_output_goes_to_the_next_verdict() {
    let log = "   Doc-tests geo

running 3 tests
error[E0308]: mismatched types
  --> src/lib.rs:11:14
   |
11 | let x: u32 = \"a\";
   |              ^^^ expected `u32`, found `&str`

error: aborting due to 1 previous error

For more information about this error, try `rustc --explain E0308`.
Couldn't compile the test.test src/lib.rs - area (line 10) ... FAILED
Test executable failed (exit status: 101).

stderr:

thread 'main' (30749) panicked at src/lib.rs:5:1:
assertion `left == right` failed
  left: 3
 right: 4

test src/lib.rs - area (line 6) ... FAILED
test src/lib.rs - perimeter (line 20) ... ok

failures:

failures:
    src/lib.rs - area (line 10)
    src/lib.rs - area (line 6)

test result: FAILED. 1 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.17s
";
    let result = parse("cargo.test", log, 101);
    assert_eq!(
        briefs(&result),
        [
            "E src/lib.rs:11:14 E0308 mismatched types (expected `u32`, found `&str`) [src/lib.rs - area (line 10)]",
            "E src/lib.rs:5:1 - assertion `left == right` failed [src/lib.rs - area (line 6)]",
        ]
    );
    assert_eq!(result.failed_tests, ["src/lib.rs - area (line 10)", "src/lib.rs - area (line 6)"]);
}

#[test]
fn a_log_cut_after_a_header_or_a_panic_line_stays_within_its_lines() {
    let head = "running 1 test\ntest a::b ... FAILED\n\nfailures:\n\n---- a::b stdout ----\n";
    let result = parse("cargo.test", head, 101);
    assert_eq!(briefs(&result), ["E -:0:0 - test failed [a::b]"]);
    assert_eq!(result.diagnostics[0].log_range.map(|r| (r.start, r.end)), Some((6, 6)));
    let result = parse("cargo.test", &format!("{head}\nError: \"no rows\"\n"), 101);
    assert_eq!(briefs(&result), ["E -:0:0 - Error: \"no rows\" [a::b]"]);
    assert_eq!(result.diagnostics[0].log_range.map(|r| (r.start, r.end)), Some((6, 8)));
    let result = parse("cargo.test", &format!("{head}thread 'a::b' panicked at src/lib.rs:3:5:\n"), 101);
    assert_eq!(briefs(&result), ["E src/lib.rs:3:5 - panicked [a::b]"]);
}

/// `cargo test` (1.95) on a lib whose unit test fails, with two integration tests and a doctest
/// that never ran.
const FAIL_FAST: &str = "   Compiling stops v0.1.0 (/home/dev/src/stops)
    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.60s
     Running unittests src/lib.rs (target/debug/deps/stops-c6d5308b731e3dc5)

running 2 tests
test tests::adds_one ... FAILED
test tests::adds_small ... ok

failures:

---- tests::adds_one stdout ----

thread 'tests::adds_one' (3302) panicked at src/lib.rs:21:9:
assertion `left == right` failed
  left: 3
 right: 2
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace


failures:
    tests::adds_one

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

error: test failed, to rerun pass `--lib`
";

#[test]
fn a_failed_target_without_no_fail_fast_stops_the_run() {
    let result = parse("cargo.test", FAIL_FAST, 101);
    assert_eq!(result.stopped_early.as_deref(), Some("later test targets not run; add --no-fail-fast"));
    assert_eq!(result.summary, Some(TestSummary::new(1, 1, 0, 2)));
    // Read as two streams the status lines keep their order on stderr.
    let stdout: String = FAIL_FAST.lines().filter(|l| !l.starts_with("   ") && !l.starts_with("error")).fold(
        String::new(),
        |mut s, l| {
            s.push_str(l);
            s.push('\n');
            s
        },
    );
    let stderr = "    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.03s
     Running unittests src/lib.rs (target/debug/deps/stops-c6d5308b731e3dc5)
error: test failed, to rerun pass `--lib`
";
    let streams = parse_streams(parser("cargo.test"), stdout.as_bytes(), stderr.as_bytes(), &RunEnd::exited(101));
    assert_eq!(streams.stopped_early, result.stopped_early);
}

#[test]
fn runs_that_went_on_or_ended_at_the_last_target_did_not_stop_early() {
    // --no-fail-fast still says `test failed` per target, then runs the rest.
    let went_on = format!(
        "{FAIL_FAST}     Running tests/api.rs (target/debug/deps/api-34de49a7041412e0)

running 1 test
test api_adds ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

error: 1 target failed:
    `--lib`
"
    );
    assert_eq!(parse("cargo.test", &went_on, 101).stopped_early, None);
    // Told by the call's arguments, even when the log was cut before cargo's last word.
    let told = CargoPlugin.parser(&ParseContext::new("cargo.test", CWD).with_args(vec![
        "--no-fail-fast".into(),
        "--".into(),
        "x".into(),
    ]));
    assert_eq!(parse_log(told, FAIL_FAST.as_bytes(), 101).stopped_early, None);
    // Doctests run last; a lone `--doc` names the only package's.
    let doc = "   Doc-tests halves

running 1 test
test src/lib.rs - half_up (line 3) ... FAILED

failures:

---- src/lib.rs - half_up (line 3) stdout ----
Test executable failed (exit status: 101).

failures:
    src/lib.rs - half_up (line 3)

test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.17s

error: doctest failed, to rerun pass `--doc`
";
    assert_eq!(parse("cargo.test", doc, 101).stopped_early, None);
    // A build error explains itself: no test target ran at all.
    let build = "error[E0425]: cannot find value `x` in this scope
 --> src/lib.rs:1:13
  |
1 | fn f() { x }
  |          ^ not found in this scope

error: could not compile `stops` (lib test) due to 1 previous error
";
    assert_eq!(parse("cargo.test", build, 101).stopped_early, None);
}

#[test]
fn a_helper_panic_names_the_calling_line() {
    // `RUST_BACKTRACE=1 cargo test`, Rust 1.95; std frames shortened.
    let log = "running 3 tests
test long_ledgers_balance ... FAILED
test empty_ledger_is_zero ... FAILED
test small_ledgers_balance ... ok

failures:

---- long_ledgers_balance stdout ----

thread 'long_ledgers_balance' (5404) panicked at tests/api.rs:5:5:
assertion `left == right` failed: balance of [5, 5, 5]
  left: 14
 right: 15
stack backtrace:
   0: __rustc::rust_begin_unwind
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/panicking.rs:689:5
   3: core::panicking::assert_failed
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:394:5
   4: api::check_balance
             at ./tests/api.rs:5:5
   5: api::long_ledgers_balance
             at ./tests/api.rs:17:9
   6: api::long_ledgers_balance::{{closure}}
             at ./tests/api.rs:14:26
note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.

---- empty_ledger_is_zero stdout ----

thread 'empty_ledger_is_zero' (5403) panicked at tests/api.rs:23:5:
assertion `left == right` failed: an empty ledger
  left: 0
 right: 1
stack backtrace:
   4: api::empty_ledger_is_zero
             at ./tests/api.rs:23:5
   5: api::empty_ledger_is_zero::{{closure}}
             at ./tests/api.rs:22:26
note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.


failures:
    empty_ledger_is_zero
    long_ledgers_balance

test result: FAILED. 1 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.13s
";
    let result = parse("cargo.test", log, 101);
    assert_eq!(
        briefs(&result),
        [
            "E tests/api.rs:5:5 - assertion `left == right` failed: balance of [5, 5, 5] via tests/api.rs:17:9 \
             [long_ledgers_balance]",
            "E tests/api.rs:23:5 - assertion `left == right` failed: an empty ledger [empty_ledger_is_zero]",
        ]
    );
    assert_eq!(result.diagnostics[0].notes, ["left: 14", "right: 15"]);
    let range = result.diagnostics[0].log_range.map(|r| (r.start, r.end));
    assert_eq!(range, Some((10, 25)));
}

#[test]
fn should_panic_with_the_wrong_message_names_the_expected_one() {
    // Rust 1.95.
    let log = "running 2 tests
test tests::taking_from_empty_panics - should panic ... FAILED
test tests::taking_past_the_end_panics - should panic ... ok

failures:

---- tests::taking_from_empty_panics stdout ----

thread 'tests::taking_from_empty_panics' (5713) panicked at src/lib.rs:12:13:
slot 2 is empty (have 0)
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace
note: panic did not contain expected string
      panic message: \"slot 2 is empty (have 0)\"
 expected substring: \"index out of bounds\"

failures:
    tests::taking_from_empty_panics

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
";
    let result = parse("cargo.test", log, 101);
    assert_eq!(
        briefs(&result),
        ["E src/lib.rs:12:13 - panic did not contain \"index out of bounds\": slot 2 is empty (have 0) \
             [tests::taking_from_empty_panics]"]
    );
    assert_eq!(result.diagnostics[0].log_range.map(|r| (r.start, r.end)), Some((9, 14)));
}

#[test]
fn a_build_script_panic_is_the_error() {
    // `cargo build` 1.95 with the script's own stdout and stderr around the panic.
    let log = "   Compiling probe v0.1.0 (/home/u/proj)
error: failed to run custom build command for `probe v0.1.0 (/home/u/proj)`

Caused by:
  process didn't exit successfully: `/home/u/proj/target/debug/build/probe-320f6bd18be96165/build-script-build` (exit status: 101)
  --- stdout
  cargo::rerun-if-env-changed=PROBE_LIB_DIR

  --- stderr
  probing for libprobe

  thread 'main' (3671) panicked at build.rs:10:17:
  PROBE_LIB_DIR is not set; point it at the libprobe install
  note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace
";
    let result = parse("cargo.build", log, 101);
    assert_eq!(briefs(&result), ["E build.rs:10:17 - PROBE_LIB_DIR is not set; point it at the libprobe install"]);
    assert_eq!(result.diagnostics[0].notes[0], "failed to run custom build command for `probe v0.1.0 (/home/u/proj)`");
    assert_eq!(result.stopped_early, None);
}

#[test]
fn the_primary_label_is_taken_not_a_secondary_one() {
    let log = "error[E0308]: mismatched types
  --> src/lib.rs:16:9
   |
15 |     pub fn kilos(&self) -> u32 {
   |                            --- expected `u32` because of return type
16 |         self.total / 1000
   |         ^^^^^^^^^^^^^^^^^ expected `u32`, found `u64`
   |
help: you can convert a `u64` to a `u32` and panic if the converted value doesn't fit
   |
16 |         (self.total / 1000).try_into().unwrap()
   |         +                 +++++++++++++++++++++

";
    assert_eq!(
        briefs(&parse("cargo.build", log, 101)),
        ["E src/lib.rs:16:9 E0308 mismatched types (expected `u32`, found `u64`)"]
    );
}

#[test]
fn the_json_stream_counts_the_targets_left_out() {
    // `cargo test --message-format=json` 1.95 announces each unit before anything runs; fields
    // the parser does not read are left out.
    let artifact = |kind: &str, name: &str, doctest: bool, test: bool| {
        format!(
            r#"{{"reason":"compiler-artifact","package_id":"path+file:///home/dev/src/stops#stops@0.1.0","target":{{"kind":["{kind}"],"crate_types":["{kind}"],"name":"{name}","doctest":{doctest},"test":true}},"profile":{{"opt_level":"0","test":{test}}},"fresh":true}}"#
        )
    };
    let units = [
        artifact("lib", "stops", true, false),
        artifact("test", "api", false, true),
        artifact("test", "more", false, true),
        artifact("lib", "stops", true, true),
    ]
    .join("\n");
    let log = format!("{units}\n{{\"reason\":\"build-finished\",\"success\":true}}\n{FAIL_FAST}");
    let result = parse("cargo.test", &log, 101);
    assert_eq!(result.stopped_early.as_deref(), Some("3 test targets not run; add --no-fail-fast"));
    // `--lib` chose the targets: the library's build promises no doctests, and the one target ran.
    let lib_only = CargoPlugin.parser(&ParseContext::new("cargo.test", CWD).with_args(vec!["--lib".into()]));
    let only = [artifact("lib", "stops", true, false), artifact("lib", "stops", true, true)].join("\n");
    assert_eq!(parse_log(lib_only, format!("{only}\n{FAIL_FAST}").as_bytes(), 101).stopped_early, None);
}

#[test]
fn under_nocapture_the_expected_string_still_finds_its_panic() {
    // `cargo test -- --nocapture` 1.95: the panics come first, the explanation in the report.
    let log = "running 2 tests

thread 'tests::taking_from_empty_panics' (28160) panicked at src/lib.rs:12:13:
slot 2 is empty (have 0)
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace

thread 'tests::taking_past_the_end_panics' (28161) panicked at src/lib.rs:12:13:
slot 1 is empty (have 0)
test tests::taking_past_the_end_panics - should panic ... ok
test tests::taking_from_empty_panics - should panic ... FAILED

failures:

---- tests::taking_from_empty_panics stdout ----
note: panic did not contain expected string
      panic message: \"slot 2 is empty (have 0)\"
 expected substring: \"index out of bounds\"

failures:
    tests::taking_from_empty_panics

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
";
    let result = parse("cargo.test", log, 101);
    assert_eq!(
        briefs(&result),
        ["E src/lib.rs:12:13 - panic did not contain \"index out of bounds\": slot 2 is empty (have 0) \
          [tests::taking_from_empty_panics]"]
    );
    // Far from the panic: the range stays the panic's own.
    assert_eq!(result.diagnostics[0].log_range.map(|r| (r.start, r.end)), Some((3, 4)));
}
