//! What buildvise costs in time: `exec` against running the same command directly, and how soon a
//! freshly started MCP server answers `initialize`.

use crate::report::{Figure, Report, num};
use crate::{Setup, mcp, median, run_ok};
use anyhow::Context;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

const SECTION: &str = "overhead";
/// Goals (issue 4).
const MAX_EXEC_OVERHEAD_MS: f64 = 10.0;
const MAX_SERVER_READY_MS: f64 = 20.0;

/// The fixture crate, relative to the project root.
const FIXTURE: &str = "tests/fixtures/cargo/tests";

pub fn run(setup: &Setup, report: &mut Report) -> anyhow::Result<()> {
    exec_overhead(setup, report)?;
    server_ready(setup, report)
}

fn exec_overhead(setup: &Setup, report: &mut Report) -> anyhow::Result<()> {
    let krate = setup.fresh_dir("fixture")?;
    copy_sources(&setup.repo.join(FIXTURE), &krate)?;
    let store = setup.fresh_dir("exec-store")?;
    let direct = || {
        let mut c = Command::new("cargo");
        c.arg("check").current_dir(&krate).env("CARGO_TERM_COLOR", "never");
        c
    };
    let through = || {
        let mut c = setup.buildvise(&store);
        c.args(["exec", "cargo.check", "--cwd"]).arg(&krate);
        c
    };
    // The first check builds; after one more of each, every run is a no-op build.
    run_ok(&mut direct(), "cargo check on the fixture crate")?;
    run_ok(&mut through(), "buildvise exec cargo.check on the fixture crate")?;
    run_ok(&mut direct(), "cargo check on the fixture crate")?;

    let mut differences = Vec::with_capacity(setup.reps);
    let mut ratios = Vec::with_capacity(setup.reps);
    let mut direct_ms = Vec::with_capacity(setup.reps);
    for i in 0..setup.reps {
        // Alternating which goes first cancels drift (caches, CPU frequency) between the two.
        let (d, t) = if i % 2 == 0 {
            let d = time_ms(&mut direct(), "cargo check")?;
            (d, time_ms(&mut through(), "buildvise exec cargo.check")?)
        } else {
            let t = time_ms(&mut through(), "buildvise exec cargo.check")?;
            (time_ms(&mut direct(), "cargo check")?, t)
        };
        differences.push(t - d);
        ratios.push(t / d);
        direct_ms.push(d);
    }
    report.figures.push(Figure::info(
        SECTION,
        format!("`cargo check`, no-op, direct (median of {})", setup.reps),
        num(median(&direct_ms), "ms"),
    ));
    report.figures.push(Figure::info(SECTION, "exec/direct, median of paired ratios", num(median(&ratios), "×")));
    report.figures.push(Figure::at_most(
        SECTION,
        "exec − direct, median of paired differences",
        median(&differences),
        MAX_EXEC_OVERHEAD_MS,
        "ms",
        "Most of a no-op exec beyond the tool is process start and plugin loading (every plugin \
         library is opened, whichever tool runs); loading only the plugin that owns the tool would \
         close it.",
    ));
    Ok(())
}

fn server_ready(setup: &Setup, report: &mut Report) -> anyhow::Result<()> {
    mcp::time_to_ready(setup)?; // warms the page cache for the binary and plugins
    let mut samples = Vec::with_capacity(setup.reps);
    for _ in 0..setup.reps {
        samples.push(mcp::time_to_ready(setup)?.as_secs_f64() * 1000.0);
    }
    report.figures.push(Figure::at_most(
        SECTION,
        format!("`serve` start to `initialize` answered (median of {})", setup.reps),
        median(&samples),
        MAX_SERVER_READY_MS,
        "ms",
        "Start-up loads every plugin before answering; loading them after `initialize` (or lazily, \
         on the first `exec`/`list`) would close it.",
    ));
    Ok(())
}

/// Runs a command to its end; its wall time in milliseconds.
fn time_ms(command: &mut Command, what: &str) -> anyhow::Result<f64> {
    let started = Instant::now();
    run_ok(command, what)?;
    Ok(started.elapsed().as_secs_f64() * 1000.0)
}

/// Copies a crate's sources, leaving out any `target/` a test run left there.
fn copy_sources(from: &Path, to: &Path) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let entry = entry?;
        let (source, dest) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type()?;
        if kind.is_dir() {
            if entry.file_name() != "target" {
                std::fs::create_dir_all(&dest)?;
                copy_sources(&source, &dest)?;
            }
        } else if kind.is_file() {
            std::fs::copy(&source, &dest).with_context(|| format!("copying {}", source.display()))?;
        }
    }
    Ok(())
}
