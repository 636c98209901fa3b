//! Parsers at scale: a log with N failing tests, for N = 10 000 and 100 000, through each
//! toolchain's test parser, in-process and fed as the host feeds it
//! (`buildvise_plugin_api::testing`). The time per failure at both sizes shows whether a parser's
//! work grows with the log: one that compares every failure with every earlier one (pytest did,
//! matching section titles to node ids) takes ten times longer per failure at 100 000.
//!
//! The logs are written here in each runner's default layout, one small failure after another.
//! `pytest.run` also hands its parser the JUnit XML report it has pytest write, so pytest is
//! measured with and without one, written as pytest writes it.

use crate::Setup;
use crate::report::{Figure, Report, num};
use anyhow::bail;
use buildvise_plugin_api::testing::parse_streams;
use buildvise_plugin_api::{ParseContext, Plugin, RunEnd};
use std::fmt::Write;

const SECTION: &str = "scale";
const SIZES: [usize; 2] = [10_000, 100_000];
/// Quadratic work gives 10×. Linear work gives 1× in theory and more here: a result ten times
/// bigger outgrows the caches, its hash tables resize more often, and the allocator has more to
/// sort through. pytest's parser is held to 1.5× (issue 34), its per-failure work made constant;
/// the others stay at 3.0×: cargo's measures about 1.5-1.9× on a shared machine, and at 1.5× its
/// figure would fail on noise.
const MAX_GROWTH: f64 = 3.0;
const PYTEST_MAX_GROWTH: f64 = 1.5;

/// One toolchain's test parser and a log of `n` failures in its runner's layout.
struct Shape {
    name: &'static str,
    tool: &'static str,
    plugin: fn() -> Box<dyn Plugin>,
    log: fn(usize) -> String,
    /// The report file the run wrote beside its log, handed to the parser as an artifact.
    report: Option<fn(usize) -> String>,
    max_growth: f64,
}

const SHAPES: [Shape; 5] = [
    Shape {
        name: "pytest",
        tool: "pytest.run",
        plugin: || Box::new(buildvise_plugin_pytest::ThePlugin),
        log: pytest,
        report: None,
        max_growth: PYTEST_MAX_GROWTH,
    },
    Shape {
        name: "pytest with its JUnit report",
        tool: "pytest.run",
        plugin: || Box::new(buildvise_plugin_pytest::ThePlugin),
        log: pytest_with_junit,
        report: Some(pytest_junit),
        max_growth: PYTEST_MAX_GROWTH,
    },
    Shape {
        name: "cargo",
        tool: "cargo.test",
        plugin: || Box::new(buildvise_plugin_cargo::CargoPlugin),
        log: cargo,
        report: None,
        max_growth: MAX_GROWTH,
    },
    Shape {
        name: "npm (jest)",
        tool: "npm.test",
        plugin: || Box::new(buildvise_plugin_npm::ThePlugin),
        log: jest,
        report: None,
        max_growth: MAX_GROWTH,
    },
    Shape {
        name: "dotnet (vstest)",
        tool: "dotnet.test",
        plugin: || Box::new(buildvise_plugin_dotnet::DotnetPlugin),
        log: vstest,
        report: None,
        max_growth: MAX_GROWTH,
    },
];

/// Where the pytest logs say the JUnit report went; the bench writes it there.
const JUNIT_FILE: &str = "junit.xml";

pub fn run(setup: &Setup, report: &mut Report) -> anyhow::Result<()> {
    let reps = if setup.quick { 1 } else { 5 };
    // Each size gets about the same CPU time: the least of five 20 ms parses swung by a third
    // between runs of one binary on a shared machine, more than the growth measured.
    let cwd = setup.scratch.path().to_string_lossy().into_owned();
    for shape in &SHAPES {
        let plugin = (shape.plugin)();
        let mut per_failure = Vec::with_capacity(SIZES.len());
        for n in SIZES {
            let log = (shape.log)(n);
            let mut end = RunEnd::exited(1);
            if let Some(report) = shape.report {
                let path = setup.scratch.path().join(JUNIT_FILE);
                std::fs::write(&path, report(n))?;
                end = end.with_artifacts(vec![path.to_string_lossy().into_owned()]);
            }
            let reps = reps * SIZES[SIZES.len() - 1] / n;
            let mut times = Vec::with_capacity(reps);
            for _ in 0..reps {
                let parser = plugin.parser(&ParseContext::new(shape.tool, cwd.as_str()));
                let started = thread_cpu()?;
                // Reading the report is part of the parse, as it is in `finish` for a real run.
                let result = parse_streams(parser, log.as_bytes(), b"", &end);
                times.push(thread_cpu()? - started);
                // A log the parser did not understand would time nothing worth knowing.
                if result.failed_tests.len() != n || result.diagnostics.len() != n {
                    bail!(
                        "{} read {} failed tests and {} diagnostics from a log of {n} failures",
                        shape.tool,
                        result.failed_tests.len(),
                        result.diagnostics.len()
                    );
                }
            }
            // The least CPU time of the runs: a 10 000-failure parse takes tens of milliseconds, which
            // a busy machine's interruptions would otherwise swamp, and they only ever add time.
            let seconds = times.iter().copied().fold(f64::INFINITY, f64::min);
            per_failure.push(seconds / n as f64);
            report.figures.push(Figure::info(
                SECTION,
                format!("{} parse of {n} failures, {} MB (least CPU of {reps})", shape.name, log.len() / 1_000_000),
                format!("{} ({} a failure)", num(seconds, "s"), num(seconds / n as f64 * 1e6, "µs")),
            ));
        }
        report.figures.push(Figure::at_most(
            SECTION,
            format!("{} parse, time per failure at {} failures / at {}", shape.name, SIZES[1], SIZES[0]),
            per_failure[1] / per_failure[0],
            shape.max_growth,
            "×",
            "The parser's work per failure grows with the number of failures: look for a scan of \
             everything gathered so far (a `find`, `position` or `contains` on a Vec) for each new \
             failure or section, and index it instead.",
        ));
    }
    Ok(())
}

/// pytest's default output: progress lines, one FAILURES section per test, the short summary.
fn pytest(n: usize) -> String {
    pytest_log(n, None)
}

/// The same with `--junitxml`, which pytest announces before the short summary.
fn pytest_with_junit(n: usize) -> String {
    pytest_log(n, Some(JUNIT_FILE))
}

fn pytest_log(n: usize, junit: Option<&str>) -> String {
    let mut log = format!("{}\nrootdir: /home/dev/shop\ncollected {n} items\n\n", banner("test session starts", '='));
    for module in 0..n.div_ceil(50) {
        let _ = writeln!(log, "tests/test_m{module}.py {} [ 50%]", "F".repeat(50.min(n - module * 50)));
    }
    let _ = writeln!(log, "\n{}", banner("FAILURES", '='));
    for i in 0..n {
        let _ = write!(
            log,
            "{}\n\n    def test_case_{i}():\n>       assert compute({i}) == {}\nE       assert {i} == {}\n\
             E        +  where {i} = compute({i})\n\ntests/test_m{}.py:{}: AssertionError\n",
            banner(&format!("test_case_{i}"), '_'),
            i + 1,
            i + 1,
            i / 50,
            i % 50 * 4 + 3,
        );
    }
    if let Some(path) = junit {
        let _ = writeln!(log, "{}", banner(&format!("generated xml file: /home/dev/shop/{path}"), '-'));
    }
    let _ = writeln!(log, "{}", banner("short test summary info", '='));
    for i in 0..n {
        let _ = writeln!(log, "FAILED tests/test_m{}.py::test_case_{i} - assert {i} == {}", i / 50, i + 1);
    }
    let _ = writeln!(log, "{}", banner(&format!("{n} failed in 12.34s"), '='));
    log
}

/// The JUnit XML report of [`pytest_with_junit`]'s run, laid out as pytest 9 writes it: one line
/// up to the first failure's text, each `<failure>` holding the traceback as the terminal shows
/// it (without the blank line that opens it there).
fn pytest_junit(n: usize) -> String {
    let mut xml = format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?><testsuites name=\"pytest tests\"><testsuite name=\"pytest\" \
         errors=\"0\" failures=\"{n}\" skipped=\"0\" tests=\"{n}\" time=\"12.340\" \
         timestamp=\"2026-01-01T00:00:00.000000+00:00\" hostname=\"dev\">"
    );
    for i in 0..n {
        let _ = write!(
            xml,
            "<testcase classname=\"tests.test_m{}\" name=\"test_case_{i}\" time=\"0.001\">\
             <failure message=\"assert {i} == {}&#10; +  where {i} = compute({i})\">def test_case_{i}():\n\
             &gt;       assert compute({i}) == {}\nE       assert {i} == {}\nE        +  where {i} = compute({i})\n\n\
             tests/test_m{}.py:{}: AssertionError</failure></testcase>",
            i / 50,
            i + 1,
            i + 1,
            i + 1,
            i / 50,
            i % 50 * 4 + 3,
        );
    }
    xml.push_str("</testsuite></testsuites>");
    xml
}

/// `==== title ====`, 80 columns wide, as pytest draws it.
fn banner(title: &str, sep: char) -> String {
    let side = 80usize.saturating_sub(title.len() + 2) / 2;
    let line = sep.to_string().repeat(side.max(1));
    format!("{line} {title} {line}")
}

/// `cargo test`: the verdicts, each failure's captured panic, the list of failures, the result.
fn cargo(n: usize) -> String {
    let mut log =
        format!("     Running unittests src/lib.rs (target/debug/deps/shop-0123456789abcdef)\n\nrunning {n} tests\n");
    for i in 0..n {
        let _ = writeln!(log, "test tests::case_{i} ... FAILED");
    }
    log.push_str("\nfailures:\n\n");
    for i in 0..n {
        let _ = write!(
            log,
            "---- tests::case_{i} stdout ----\nthread 'tests::case_{i}' panicked at src/lib.rs:{}:9:\n\
             assertion `left == right` failed\n  left: 1\n right: 2\n\n",
            i % 900 + 10
        );
    }
    log.push_str("\nfailures:\n");
    for i in 0..n {
        let _ = writeln!(log, "    tests::case_{i}");
    }
    let _ = write!(
        log,
        "\ntest result: FAILED. 0 passed; {n} failed; 0 ignored; 0 measured; 0 filtered out; finished in 1.00s\n\n\
         error: test failed, to rerun pass `--lib`\n"
    );
    log
}

/// Jest's default reporter: a `FAIL` block per file, a `●` block per failed test, the counts.
fn jest(n: usize) -> String {
    let mut log = String::from("\n> shop@1.0.0 test\n> jest\n\n");
    let files = n.div_ceil(50);
    for file in 0..files {
        let _ = writeln!(log, "FAIL src/m{file}.test.js");
        for i in file * 50..n.min(file * 50 + 50) {
            let _ = write!(
                log,
                "  \u{25cf} cart \u{203a} case {i}\n\n    expect(received).toBe(expected) // Object.is equality\n\n\
                 \x20   Expected: 2\n    Received: 1\n\n      at Object.toBe (src/m{file}.test.js:{}:17)\n\n",
                i % 50 * 4 + 3
            );
        }
    }
    let _ = writeln!(
        log,
        "Test Suites: {files} failed, {files} total\nTests:       {n} failed, {n} total\nTime:        9.1 s"
    );
    log
}

/// `dotnet test` with VSTest's console logger: a `Failed` block per test, the assembly's line.
fn vstest(n: usize) -> String {
    let mut log = String::from("Test run for /src/T/bin/Debug/net8.0/T.Tests.dll (.NETCoreApp,Version=v8.0)\n");
    for i in 0..n {
        let _ = write!(
            log,
            "  Failed T.Tests.CartTests.Case{i} [1 ms]\n  Error Message:\n   Assert.Equal() Failure: Values differ\n\
             Expected: 2\nActual:   1\n  Stack Trace:\n     at T.Tests.CartTests.Case{i}() in /src/T/CartTests.cs:line {}\n\n",
            i % 900 + 10
        );
    }
    let _ = writeln!(
        log,
        "Failed!  - Failed: {n}, Passed: 0, Skipped: 0, Total: {n}, Duration: 9 s - T.Tests.dll (net8.0)"
    );
    log
}

/// The CPU time this thread has spent, in seconds: the parse runs on it.
#[cfg(target_os = "linux")]
pub(crate) fn thread_cpu() -> anyhow::Result<f64> {
    use nix::sys::resource::{UsageWho, getrusage};
    let usage = getrusage(UsageWho::RUSAGE_THREAD)?;
    let seconds = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
    Ok(seconds(usage.user_time()) + seconds(usage.system_time()))
}

/// Only Linux reports a thread's own usage (`RUSAGE_THREAD`), and the bench measures there.
#[cfg(not(target_os = "linux"))]
pub(crate) fn thread_cpu() -> anyhow::Result<f64> {
    anyhow::bail!("the parse benchmarks read a thread's CPU time, which only Linux reports: run them on Linux")
}
