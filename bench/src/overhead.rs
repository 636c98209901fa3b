//! What buildvise costs in time: `exec` against running the same command directly, and how soon a
//! freshly started MCP server answers `initialize`.

use crate::report::{Figure, Report, num};
use crate::{Setup, mcp, median, run_ok};
use anyhow::{Context, bail};
use std::path::Path;
use std::process::Command;
use std::time::Instant;

const SECTION: &str = "overhead";
/// Goals (issue 4).
const MAX_EXEC_OVERHEAD_MS: f64 = 10.0;
const MAX_SERVER_READY_MS: f64 = 20.0;
/// Goal for a client hook's decision (issue 33).
const MAX_HOOK_MS: f64 = 10.0;
/// Goal for what the default sandbox adds to an exec, the reading of the log for refusals
/// included (issue 38).
const MAX_SANDBOX_MS: f64 = 5.0;
/// Lines of the log the sandbox's refusal reading is measured on: a large test run's.
const SANDBOX_LOG_LINES: u32 = 200_000;

/// The fixture crate, relative to the project root.
const FIXTURE: &str = "tests/fixtures/cargo/tests";

pub fn run(setup: &Setup, report: &mut Report) -> anyhow::Result<()> {
    exec_overhead(setup, report)?;
    breakdown(setup, report)?;
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

    let pairs = paired_commands(setup.reps, direct, through)?;
    let ratios: Vec<f64> = pairs.iter().map(|(d, t)| t / d).collect();
    let direct_ms: Vec<f64> = pairs.iter().map(|(d, _)| *d).collect();
    report.figures.push(Figure::info(
        SECTION,
        format!("`cargo check`, no-op, direct (median of {})", setup.reps),
        num(median(&direct_ms), "ms"),
    ));
    report.figures.push(Figure::info(SECTION, "exec/direct, median of paired ratios", num(median(&ratios), "×")));
    report.figures.push(Figure::at_most(
        SECTION,
        "exec − direct, median of paired differences",
        median_difference(&pairs),
        MAX_EXEC_OVERHEAD_MS,
        "ms",
        "Most of a no-op exec beyond the tool is process start and plugin loading (every plugin \
         library is opened, whichever tool runs); loading only the plugin that owns the tool would \
         close it.",
    ));
    Ok(())
}

/// Where a no-op exec's time goes: process start, plugin loading, and the rest of `exec` (store,
/// threads, parser, render) on a command that does nothing.
fn breakdown(setup: &Setup, report: &mut Report) -> anyhow::Result<()> {
    let store = setup.fresh_dir("breakdown-store")?;
    let mut start = Vec::with_capacity(setup.reps);
    let mut loading = Vec::with_capacity(setup.reps);
    for _ in 0..setup.reps {
        start.push(time_ms(setup.buildvise(&store).arg("--version"), "buildvise --version")?);
        loading.push(time_ms(setup.buildvise(&store).arg("list"), "buildvise list")?);
    }
    let pairs = paired_commands(
        setup.reps,
        || {
            let mut c = Command::new("sh");
            c.args(["-c", "true"]);
            c
        },
        || {
            let mut c = setup.buildvise(&store);
            c.arg("--plugin-dir").arg(&setup.test_plugins).args(["exec", "panicky.sh", "--", "true"]);
            c
        },
    )?;
    report.figures.push(Figure::info(SECTION, "`buildvise --version` (process start)", num(median(&start), "ms")));
    report.figures.push(Figure::info(
        SECTION,
        "`buildvise list` (start + loading the plugins)",
        num(median(&loading), "ms"),
    ));
    report.figures.push(Figure::info(
        SECTION,
        "`exec panicky.sh -- true` − `sh -c true`, median of paired differences",
        num(median_difference(&pairs), "ms"),
    ));
    sandbox_cost(setup, &store, report)?;
    hook_decision(setup, &store, report)
}

/// What the default sandbox (workspace-write, on Linux) adds to an exec: the ruleset built and
/// enforced, and the log read again for refusals. Measured against `--sandbox off`, on a command
/// that does nothing and on one that prints a large test run's lines.
fn sandbox_cost(setup: &Setup, store: &Path, report: &mut Report) -> anyhow::Result<()> {
    let exec = |script: &str, sandbox: Option<&str>| {
        let mut c = setup.buildvise(store);
        c.arg("--plugin-dir").arg(&setup.test_plugins).args(["exec", "panicky.sh"]);
        if let Some(mode) = sandbox {
            c.args(["--sandbox", mode]);
        }
        c.args(["--", script]);
        c
    };
    let flood = format!("seq {SANDBOX_LOG_LINES}");
    for (what, script) in [("`true`", "true"), (&*format!("`{flood}`"), &*flood)] {
        let pairs = paired_commands(setup.reps, || exec(script, Some("off")), || exec(script, None))?;
        report.figures.push(Figure::at_most(
            SECTION,
            format!("sandbox: exec {what} by default − with `--sandbox off`, median of paired differences"),
            median_difference(&pairs),
            MAX_SANDBOX_MS,
            "ms",
            "The ruleset costs a few system calls; the rest is reading the log again for the lines that \
             say a write was refused, which a scan during the run would spare.",
        ));
    }
    Ok(())
}

/// What a client hook costs an agent's command: `hook shell` reading a line and printing the
/// line to run, process start and the cargo plugin's plan included.
fn hook_decision(setup: &Setup, store: &Path, report: &mut Report) -> anyhow::Result<()> {
    const LINE: &str = "cargo test 2>&1 | tail -30";
    let line_file = setup.fresh_dir("hook")?.join("line");
    std::fs::write(&line_file, format!("{LINE}\n"))?;
    let hook = || -> anyhow::Result<Command> {
        let mut c = setup.buildvise(store);
        c.args(["hook", "shell"]).stdin(std::fs::File::open(&line_file)?);
        Ok(c)
    };
    // Measured only where it decides something: the line comes back rewritten.
    let printed = run_ok(&mut hook()?, "buildvise hook shell")?;
    if !String::from_utf8_lossy(&printed.stdout).contains(" exec cargo.test --sandbox off --max-lines 30") {
        bail!("`hook shell` did not rewrite `{LINE}`: {}", String::from_utf8_lossy(&printed.stdout));
    }
    let mut times = Vec::with_capacity(setup.reps);
    for _ in 0..setup.reps {
        times.push(time_ms(&mut hook()?, "buildvise hook shell")?);
    }
    report.figures.push(Figure::at_most(
        SECTION,
        format!("`hook shell` on `{LINE}`, process start included (median of {})", setup.reps),
        median(&times),
        MAX_HOOK_MS,
        "ms",
        "The hook runs before every command an agent types: past process start, its time is loading \
         the plugins' manifests and one plugin's plan (engine/src/plugins, app/src/rewrite.rs).",
    ));
    client_hook_decision(setup, store, LINE, report)
}

/// The same decision as a client makes it: Claude Code's payload read, its settings files looked
/// through for rules, and the answer written.
fn client_hook_decision(setup: &Setup, store: &Path, line: &str, report: &mut Report) -> anyhow::Result<()> {
    let dir = setup.fresh_dir("hook-claude")?;
    let payload = serde_json::json!({
        "session_id": "bench", "transcript_path": dir.join("t.jsonl"), "cwd": dir,
        "permission_mode": "bypassPermissions", "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": line},
    });
    let payload_file = dir.join("payload.json");
    std::fs::write(&payload_file, payload.to_string())?;
    let hook = || -> anyhow::Result<Command> {
        let mut c = setup.buildvise(store);
        c.args(["hook", "claude"]).current_dir(&dir).stdin(std::fs::File::open(&payload_file)?);
        Ok(c)
    };
    let printed = run_ok(&mut hook()?, "buildvise hook claude")?;
    if !String::from_utf8_lossy(&printed.stdout).contains("updatedInput") {
        bail!("`hook claude` did not rewrite `{line}`: {}", String::from_utf8_lossy(&printed.stdout));
    }
    let mut times = Vec::with_capacity(setup.reps);
    for _ in 0..setup.reps {
        times.push(time_ms(&mut hook()?, "buildvise hook claude")?);
    }
    report.figures.push(Figure::at_most(
        SECTION,
        format!("`hook claude` on a PreToolUse payload, process start included (median of {})", setup.reps),
        median(&times),
        MAX_HOOK_MS,
        "ms",
        "A client's hook adds reading its payload and its settings files to `hook shell`'s work \
         (src/cli/hook/).",
    ));
    Ok(())
}

/// `reps` pairs of (direct, through buildvise) times in ms, each taken by its closure, in
/// alternating order so that drift (caches, CPU frequency, other load) falls on both sides alike.
pub fn paired(
    reps: usize,
    mut direct: impl FnMut() -> anyhow::Result<f64>,
    mut through: impl FnMut() -> anyhow::Result<f64>,
) -> anyhow::Result<Vec<(f64, f64)>> {
    let mut pairs = Vec::with_capacity(reps);
    for i in 0..reps {
        let pair = if i % 2 == 0 {
            let d = direct()?;
            (d, through()?)
        } else {
            let t = through()?;
            (direct()?, t)
        };
        pairs.push(pair);
    }
    Ok(pairs)
}

/// [`paired`] for two commands, each run to its end.
fn paired_commands(
    reps: usize,
    direct: impl Fn() -> Command,
    through: impl Fn() -> Command,
) -> anyhow::Result<Vec<(f64, f64)>> {
    paired(
        reps,
        || time_ms(&mut direct(), "the direct command"),
        || time_ms(&mut through(), "the command through buildvise"),
    )
}

/// The median of the per-pair differences (through − direct).
pub fn median_difference(pairs: &[(f64, f64)]) -> f64 {
    median(&pairs.iter().map(|(d, t)| t - d).collect::<Vec<_>>())
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
pub fn time_ms(command: &mut Command, what: &str) -> anyhow::Result<f64> {
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
