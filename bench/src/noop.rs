//! What `exec` adds to a command that does nothing (issue 16), through the CLI and through a warm
//! MCP server, each against running the same command directly in the same run.
//!
//! The command is `true`, as a tool the project's `buildvise.toml` defines (`noop`), so that no
//! toolchain's own start-up hides the cost: what remains is buildvise's (for the CLI, process
//! start and plugin loading; for both, config, plan, store, parser thread, history and render;
//! for MCP, a JSON-RPC round trip). Pairs alternate which side goes first, and the figure is the
//! median of the per-pair differences.
//!
//! Beside them, the time this machine takes to create a file, measured in the same run: a run
//! creates about ten files and directories in the store, and after a flood of writes and deletes
//! (an ingest figure's gigabyte, a build) creating one took a millisecond instead of twenty
//! microseconds, which turned both figures from a pass into a miss with the same binary.

use crate::mcp::Session;
use crate::overhead::{median_difference, paired, time_ms};
use crate::report::{Figure, Report, num};
use crate::{Setup, median};
use serde_json::json;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

const SECTION: &str = "overhead";
/// Goals (issue 16).
const MAX_WARM_MCP_MS: f64 = 1.5;
const MAX_CLI_MS: f64 = 5.0;

/// Pairs per figure: each takes milliseconds, and a difference of a millisecond needs many.
const PAIRS: usize = 51;
const QUICK_PAIRS: usize = 15;
/// Calls before the timed ones: the first exec of a command creates its index file, and the
/// first of a server loads the project's config and fills the caches.
const WARM_UP: usize = 5;

const CONFIG: &str = "[tools.\"noop\"]\nrun = [\"true\"]\nformats = [\"fallback\"]\n";

pub fn run(setup: &Setup, report: &mut Report) -> anyhow::Result<()> {
    let project = setup.fresh_dir("noop-project")?;
    std::fs::write(project.join("buildvise.toml"), CONFIG)?;
    let pairs = if setup.quick { QUICK_PAIRS } else { PAIRS };
    file_creation(setup, report)?;
    cli(setup, report, &project, pairs)?;
    warm_mcp(setup, report, &project, pairs)
}

/// Files created (opened with `O_CREAT`, closed) one after another, as the store creates a run's.
const CREATED: usize = 200;

fn file_creation(setup: &Setup, report: &mut Report) -> anyhow::Result<()> {
    let dir = setup.fresh_dir("noop-creation")?;
    let times = (0..CREATED)
        .map(|i| {
            let started = Instant::now();
            std::fs::File::create(dir.join(format!("f{i}")))?;
            Ok(started.elapsed().as_secs_f64() * 1e6)
        })
        .collect::<anyhow::Result<Vec<f64>>>()?;
    std::fs::remove_dir_all(&dir)?;
    report.figures.push(Figure::info(
        SECTION,
        format!("creating a file in the store's file system, median of {CREATED} (context for the two below)"),
        num(median(&times), "µs"),
    ));
    Ok(())
}

/// `true`, spawned and waited for with its output captured, as buildvise runs a command.
fn direct() -> anyhow::Result<f64> {
    time_ms(&mut Command::new("true"), "true")
}

fn cli(setup: &Setup, report: &mut Report, project: &Path, pairs: usize) -> anyhow::Result<()> {
    let store = setup.fresh_dir("noop-cli-store")?;
    let exec = || {
        let mut command = setup.buildvise(&store);
        command.args(["exec", "noop", "--cwd"]).arg(project);
        time_ms(&mut command, "buildvise exec noop")
    };
    for _ in 0..WARM_UP {
        exec()?;
    }
    let pairs = paired(pairs, direct, exec)?;
    report.figures.push(
        Figure::at_most(
            SECTION,
            format!("CLI `exec` of `true` − `true`, median of {} paired differences", pairs.len()),
            median_difference(&pairs),
            MAX_CLI_MS,
            "ms",
            "Compare with the `buildvise --version` and `buildvise list` figures: what is beyond them is the \
             exec path (config, the guard process, the library the tool needs, about ten files and \
             directories created per run, the parser thread, history, render). `perf record` over a \
             loop of such execs shows where.",
        )
        .beside(sides(&pairs)),
    );
    Ok(())
}

fn warm_mcp(setup: &Setup, report: &mut Report, project: &Path, pairs: usize) -> anyhow::Result<()> {
    let store = setup.fresh_dir("noop-mcp-store")?;
    let (mut session, _) = Session::open(setup, &store)?;
    let call = json!({"action": "exec", "tool": "noop", "cwd": project});
    let mut exec = || {
        let started = Instant::now();
        session.build(call.clone())?;
        Ok(started.elapsed().as_secs_f64() * 1000.0)
    };
    for _ in 0..WARM_UP {
        exec()?;
    }
    let pairs = paired(pairs, direct, exec)?;
    session.stop()?;
    report.figures.push(
        Figure::at_most(
            SECTION,
            format!("warm MCP `exec` of `true` − `true`, median of {} paired differences", pairs.len()),
            median_difference(&pairs),
            MAX_WARM_MCP_MS,
            "ms",
            "Trace one call of a warm server (`strace -f -tt` or `perf trace`): what the run does beyond \
             spawning the command (fsyncs, meta writes, retention, thread spawns, the plan over FFI) and \
             what durability does not need.",
        )
        .beside(sides(&pairs)),
    );
    Ok(())
}

/// The two sides' medians, shown beside the difference.
fn sides(pairs: &[(f64, f64)]) -> String {
    let direct: Vec<f64> = pairs.iter().map(|(d, _)| *d).collect();
    let through: Vec<f64> = pairs.iter().map(|(_, t)| *t).collect();
    format!("exec {} against {}", num(median(&through), "ms"), num(median(&direct), "ms"))
}
