//! What `buildvise gain` costs: over a full store (200 runs, the default retention, their logs
//! the corpus's), the first call, which counts every log and answer, and the next, which reads
//! the counts kept with the runs; and how fast a big log is counted.
//!
//! The runs are written through the store as exec writes them (log, meta, the answer a surface
//! sent), so that only `gain` is timed. Counting never runs on the exec path: the `noop` figures
//! are exec's, with answers recorded.

use crate::overhead::time_ms;
use crate::report::{Figure, Report, num};
use crate::{Setup, corpus, median};
use anyhow::Context;
use buildvise_engine::store::{AnsweredCall, LogWriter, RunMeta, RunStatus, SentAnswer, Store, Via};
use buildvise_plugin_api::Stream;
use std::path::Path;

const SECTION: &str = "gain";
/// Runs in the store: retention's default.
const RUNS: usize = 200;
/// The size of the one big log.
const BIG_LOG: usize = 64 << 20;

pub fn run(setup: &Setup, report: &mut Report) -> anyhow::Result<()> {
    let logs: Vec<Vec<u8>> =
        corpus::load(&setup.corpus)?.iter().map(corpus::Case::raw_log).collect::<anyhow::Result<_>>()?;
    let root = setup.fresh_dir("gain-store")?;
    let store = Store::open(&root)?;
    let mut bytes = 0;
    for i in 0..RUNS {
        let log = &logs[i % logs.len()];
        bytes += log.len();
        store_run(&store, log)?;
    }
    let reps = setup.reps;
    let mut first = Vec::with_capacity(reps);
    for _ in 0..reps {
        forget_counts(&root)?;
        first.push(gain(setup, &root)?);
    }
    let kept = (0..reps).map(|_| gain(setup, &root)).collect::<anyhow::Result<Vec<f64>>>()?;
    let what = format!("{RUNS} runs, {:.1} MB of corpus logs", bytes as f64 / 1e6);
    report.figures.push(Figure::info(
        SECTION,
        format!("`gain` over {what}, counting every run (median of {reps})"),
        num(median(&first), "ms"),
    ));
    report.figures.push(Figure::info(
        SECTION,
        format!("`gain` over the same runs, counts kept (median of {reps})"),
        num(median(&kept), "ms"),
    ));

    let root = setup.fresh_dir("gain-big-store")?;
    let store = Store::open(&root)?;
    let mut big = Vec::with_capacity(BIG_LOG);
    for log in logs.iter().cycle() {
        if big.len() >= BIG_LOG {
            break;
        }
        big.extend_from_slice(log);
    }
    store_run(&store, &big)?;
    let ms = gain(setup, &root)?;
    report.figures.push(Figure::info(
        SECTION,
        format!("`gain` counting one {} MB log, process included", big.len() / 1_000_000),
        format!("{} ({} MB/s)", num(ms / 1000.0, "s"), num(big.len() as f64 / ms / 1000.0, "")),
    ));
    Ok(())
}

/// A finished run holding `log`, answered with its first lines, as exec leaves one.
fn store_run(store: &Store, log: &[u8]) -> anyhow::Result<()> {
    let run = store.create_run()?;
    let mut meta = RunMeta::starting(&run.id, "cargo.build", "cargo", &[], "/bench/project");
    let mut writer = LogWriter::create(&run.dir)?;
    let mut block = log.to_vec();
    if !block.ends_with(b"\n") {
        block.push(b'\n');
    }
    let ends: Vec<usize> = block.iter().enumerate().filter(|(_, b)| **b == b'\n').map(|(i, _)| i).collect();
    writer.write_lines(Stream::Stdout, &block, &ends);
    (meta.lines, meta.bytes) = (writer.lines(), writer.bytes());
    if let Some(failure) = writer.finish() {
        return Err(failure).context("writing a bench run's log");
    }
    (meta.status, meta.exit_code, meta.ended_ms) = (RunStatus::Exited, Some(1), Some(meta.started_ms));
    store.write_meta(&run.dir, &meta)?;
    let head: Vec<&[u8]> = log.split(|&b| b == b'\n').take(10).collect();
    let answer = String::from_utf8_lossy(&head.join(&b'\n')).into_owned();
    store.append_answer(&run.id, &SentAnswer { call: AnsweredCall::Exec, via: Via::Cli, parts: vec![answer] })?;
    Ok(())
}

/// Removes every run's kept counts, so that the next `gain` counts them all.
fn forget_counts(root: &Path) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(root.join("runs"))? {
        match std::fs::remove_file(entry?.path().join("tokens.json")) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
            _ => {}
        }
    }
    Ok(())
}

fn gain(setup: &Setup, store: &Path) -> anyhow::Result<f64> {
    time_ms(setup.buildvise(store).args(["gain", "--json"]), "buildvise gain")
}
