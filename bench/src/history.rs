//! What comparing a run with the previous run of its command costs (issue 14): the time it adds
//! to every `exec`, and the tokens it adds to the answer.
//!
//! The time is everything the comparison adds to exec once a run's result is parsed:
//! fingerprinting its diagnostics, `history::compare_with_previous` (recording the run in its
//! command's index, reading the previous run's result, matching the two), and storing the result
//! again with the comparison in it. It is measured in-process, so that
//! process start does not hide it, on a store of 200 finished runs over 20 commands (the timed
//! runs join it, as exec's would). Beside it, the same step for a command's first run (an agent
//! added a flag), which is compared with the last run of its tool in its directory (issue 35) and
//! records the run in a new index file.
//!
//! The tokens are measured on every corpus case with a problem: its result (`buildvise parse
//! --json`) is given a previous run that had the same problems but the first, and one more, so
//! that the comparison says all three counts as after a typical edit; the standard answer is
//! rendered with and without the comparison.

use crate::report::{Figure, Report, num};
use crate::tokens::Counter;
use crate::{Setup, corpus, median, run_ok};
use anyhow::{Context, bail};
use buildvise_engine::config::DEFAULT_MAX_LINES;
use buildvise_engine::history::{self, Problem, delta};
use buildvise_engine::outcome::{Finished, RunResult};
use buildvise_engine::render::{Detail, Hints, Surface, render_exec};
use buildvise_engine::store::{CommandKey, RunMeta, RunStatus, Store};
use buildvise_plugin_api::Diagnostic;
use serde_json::Value;
use std::time::Instant;

const SECTION: &str = "history";
const COMMANDS: usize = 20;
const RUNS_PER_COMMAND: usize = 10;
/// Goal (issue 14).
const MAX_MS: f64 = 1.0;
/// The run the answers are compared with, and the run they are of: ids as exec prints them.
const PREVIOUS: &str = "bafotemu";
const RUN: &str = "kolivesa";

pub fn run(setup: &Setup, report: &mut Report) -> anyhow::Result<()> {
    let store = Store::open(&setup.fresh_dir("history-store")?)?;
    for run in 0..RUNS_PER_COMMAND {
        for command in 0..COMMANDS {
            finish(&store, &key(command), result(command, run))?;
        }
    }
    let (mut compared, mut first) = (Vec::new(), Vec::new());
    for rep in 0..setup.reps {
        for command in 0..COMMANDS {
            let (seconds, said) = finish(&store, &key(command), result(command, RUNS_PER_COMMAND + rep))?;
            compared.push(seconds);
            let mut new_command = key(command);
            new_command.args.push(format!("--features=f{rep}"));
            let (seconds, said_first) = finish(&store, &new_command, result(command, rep))?;
            first.push(seconds);
            // A comparison that found no previous run would time only the index.
            if !said || !said_first {
                bail!("command {command}: a rerun compared: {said}; a first run compared: {said_first}");
            }
        }
    }
    report.figures.push(Figure::at_most(
        SECTION,
        format!("comparison with the previous run, per exec (≥ {} stored runs)", COMMANDS * RUNS_PER_COMMAND),
        median(&compared) * 1e3,
        MAX_MS,
        "ms",
        "Every exec pays this. It should not grow with the store (the index names the previous run) but \
         only with the two results: look at reading and deserialising the previous result.json, notes \
         included, and at fingerprinting (engine/src/history/).",
    ));
    report.figures.push(Figure::info(
        SECTION,
        "same step for a command's first run (compared with its tool's last run there; creates its index file)",
        num(median(&first) * 1e3, "ms"),
    ));

    let counter = Counter::new()?;
    let mut costs = Vec::new();
    for dir in [setup.corpus.clone(), setup.repo.join("tests/fixtures/cases")] {
        for case in corpus::load(&dir)? {
            let what = format!("buildvise parse --json for {}/{}", case.toolchain, case.id);
            let store = setup.scratch.path().join("history-parse-store");
            let output = run_ok(setup.buildvise(&store).args(case.parse_args()?).arg("--json"), &what)?;
            let json: Value = serde_json::from_slice(&output.stdout).with_context(|| what.clone())?;
            if let Some((answer, line)) = token_cost(&counter, &case.tool, json).with_context(|| what.clone())? {
                costs.push((answer, line, format!("{}/{}", case.toolchain, case.id)));
            }
        }
    }
    let Some((max, _, worst)) = costs.iter().max_by_key(|c| c.0) else { bail!("no corpus case has a problem") };
    let pick = |f: fn(&(usize, usize, String)) -> usize| median(&costs.iter().map(|c| f(c) as f64).collect::<Vec<_>>());
    report.figures.push(Figure::info(
        SECTION,
        format!("median tokens the comparison adds to a standard answer ({} cases with a problem)", costs.len()),
        num(pick(|c| c.0), "tokens"),
    ));
    report.figures.push(Figure::info(SECTION, format!("most it adds ({worst})"), num(*max as f64, "tokens")));
    report.figures.push(Figure::info(SECTION, "median `vs` line alone", num(pick(|c| c.1), "tokens")));
    Ok(())
}

fn key(command: usize) -> CommandKey {
    let tool = ["cargo.check", "cargo.build", "cargo.clippy"][command % 3];
    CommandKey { tool: tool.into(), cwd: format!("/home/dev/p{}", command / 3), args: vec![format!("-p=c{command}")] }
}

/// What exec does once a run's result is parsed, with what the comparison adds timed: the
/// fingerprints, the index and the previous result, and writing the result again with the
/// comparison in it (exec stores the result before indexing the run). Then the run's meta, so that
/// the next run of the command has a real previous run to read. Returns the time and whether the
/// run was compared with one.
fn finish(store: &Store, key: &CommandKey, mut result: RunResult) -> anyhow::Result<(f64, bool)> {
    let run = store.create_run()?;
    let started = Instant::now();
    result.fingerprints = history::fingerprints(&key.tool, &result.diagnostics);
    let fingerprinting = started.elapsed();
    store.write_result(&run.dir, &result)?;
    let started = Instant::now();
    result.vs = history::compare_with_previous(store, key, &run.id, &result);
    if result.vs.is_some() {
        store.write_result(&run.dir, &result)?;
    }
    let seconds = (fingerprinting + started.elapsed()).as_secs_f64();
    let compared = result.vs.is_some();
    let mut meta = RunMeta::starting(&run.id, &key.tool, "cargo", &key.args, &key.cwd);
    (meta.status, meta.exit_code, meta.ended_ms) = (RunStatus::Exited, Some(101), Some(meta.started_ms + 1500));
    meta.tally = Some(result.tally());
    store.write_meta(&run.dir, &meta)?;
    Ok((seconds, compared))
}

/// A run of `command` with 5 to 30 rustc diagnostics; from one run to the next, a few are fixed
/// and a few are new, the rest move down the file.
fn result(command: usize, run: usize) -> RunResult {
    let count = 5 + (command * 7 + run * 11) % 26;
    let diagnostics = (run / 2..run / 2 + count)
        .map(|k| {
            let name = format!("item_{k}");
            let (code, message) = match k % 5 {
                0 => ("E0425", format!("cannot find value `{name}` in this scope")),
                1 => ("E0308", "mismatched types (expected `u32`, found `u64`)".to_string()),
                2 => ("E0599", format!("no method named `{name}` found for struct `Cart` in the current scope")),
                3 => ("E0382", format!("borrow of moved value: `{name}`")),
                _ => ("unused_variables", format!("unused variable: `{name}`")),
            };
            let d = if k % 5 == 4 { Diagnostic::warning(message) } else { Diagnostic::error(message) };
            d.with_code(code)
                .with_location(format!("src/module_{}.rs", k % 7), Some((10 * k + run) as u32), Some(9))
                .with_notes(vec![format!("help: a local variable with a similar name exists: `{name}s`")])
        })
        .collect();
    RunResult { diagnostics, ..RunResult::default() }
}

/// The tokens the comparison adds to the case's standard answer, and those of its `vs` line;
/// None for a case with no problem to compare. `json` is what `parse --json` printed.
fn token_cost(counter: &Counter, tool: &str, mut json: Value) -> anyhow::Result<Option<(usize, usize)>> {
    let exit_code = json["exitCode"].as_i64().unwrap_or(0) as i32;
    // In a result, the diagnostics are one list; `parse --json` splits them by severity, so the
    // first problem here is the first error rather than the first in the log.
    let diagnostics: Vec<Value> =
        ["errors", "warnings", "infos"].iter().flat_map(|k| json[k].as_array().cloned().unwrap_or_default()).collect();
    json["diagnostics"] = Value::Array(diagnostics);
    let mut result: RunResult = serde_json::from_value(json)?;
    result.fingerprints = history::fingerprints(tool, &result.diagnostics);
    // Exec compares no run whose parser failed.
    let Some(mut previous) = without_first_problem(tool, &result).filter(|_| result.parser_error.is_none()) else {
        return Ok(None);
    };
    previous.diagnostics.push(Diagnostic::error("a problem the previous run had").with_code("E0001").with_location(
        "src/gone.rs",
        Some(7),
        None,
    ));
    previous.fingerprints = history::fingerprints(tool, &previous.diagnostics);
    let comparison = history::comparison(PREVIOUS, delta(tool, &previous, tool, &result));
    let plain = answer(tool, exit_code, result.clone());
    result.vs = Some(comparison);
    let compared = answer(tool, exit_code, result);
    let Some(line) = compared.lines().find(|l| l.starts_with("vs ")) else {
        bail!("the answer has no `vs` line:\n{compared}");
    };
    Ok(Some((counter.count(&compared).saturating_sub(counter.count(&plain)), counter.count(&format!("{line}\n")))))
}

/// `result` with its first problem gone (a failed test with every diagnostic naming it), or None
/// when it has no problem.
fn without_first_problem(tool: &str, result: &RunResult) -> Option<RunResult> {
    // A run compared with itself: every problem is still there, in log order.
    let first = *delta(tool, result, tool, result).still.first()?;
    let mut previous = result.clone();
    let test = match first {
        Problem::Diagnostic(i, d) if d.test.is_none() => {
            previous.diagnostics.remove(i);
            None
        }
        Problem::Diagnostic(_, d) => d.test.clone(),
        Problem::Test(test) => Some(test.to_string()),
    };
    if let Some(test) = test {
        previous.diagnostics.retain(|d| d.test.as_ref() != Some(&test));
        previous.failed_tests.retain(|t| *t != test);
    }
    Some(previous)
}

/// The standard answer an MCP client gets for `result`.
fn answer(tool: &str, exit_code: i32, result: RunResult) -> String {
    let mut meta = RunMeta::starting(RUN, tool, tool, &[], "");
    (meta.status, meta.exit_code, meta.ended_ms) = (RunStatus::Exited, Some(exit_code), Some(meta.started_ms));
    let hints = Hints { surface: Surface::Mcp, stored: true };
    render_exec(&Finished { meta, result }, None, Detail::Standard, DEFAULT_MAX_LINES, hints).text
}
