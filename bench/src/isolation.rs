//! In-process or out-of-process parsers: the figures behind that decision (docs/architecture.md,
//! "Why plugins run in-process").
//!
//! Both sides feed the same lines, the cargo corpus logs repeated to about a million lines, to the
//! released cargo plugin's parser:
//! - in-process, through the host's `ParseWorker`, exactly as `exec` does (a thread of its own,
//!   batches of lines through a bounded queue, one FFI call a batch);
//! - out-of-process, through a prototype plugin host: this executable started in [`HOST_MODE`],
//!   which loads the same library and reads length-prefixed batches from a pipe, the way
//!   rust-analyzer isolates proc macros. The prototype exists only here, to be measured.
//!
//! Reported: the time per line each way, their ratio, and what the second process costs a run
//! before its first line (start, load the library, answer an empty run).

use crate::report::{Figure, Report, num};
use crate::{Setup, median};
use anyhow::{Context, bail};
use buildvise_engine::parse::{ParseWorker, RunParser};
use buildvise_engine::plugins::PluginLibrary;
use buildvise_plugin_api::{ParseContext, RunEnd, Stream};
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

const SECTION: &str = "isolation";
/// The first argument that makes this executable the prototype plugin host.
pub const HOST_MODE: &str = "__plugin-host";
const LINES: usize = 1_000_000;
const BATCH: usize = 1024;

pub fn run(setup: &Setup, report: &mut Report) -> anyhow::Result<()> {
    let library = setup.bin.with_file_name(format!(
        "{}buildvise_plugin_toolchains{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    let lines = corpus_lines(&setup.corpus.join("cargo"))?;
    let mut start = Vec::new();
    for _ in 0..setup.reps {
        start.push(out_of_process(&library, &[])?.0.as_secs_f64());
    }
    let start = median(&start);
    let reps = if setup.quick { 3 } else { 7 };
    let (mut inside, mut outside) = (Vec::new(), Vec::new());
    let mut answers = (0, 0);
    for _ in 0..reps {
        let (took, found) = in_process(&library, &lines)?;
        inside.push(took.as_secs_f64());
        answers.0 = found;
        let (took, found) = out_of_process(&library, &lines)?;
        outside.push(took.as_secs_f64());
        answers.1 = found;
    }
    if answers.0 != answers.1 {
        bail!("the two ways found different diagnostics: {} in-process, {} out of process", answers.0, answers.1);
    }
    let per_line = |secs: f64| secs * 1e9 / lines.len() as f64;
    // The host process's start is its own figure below; per line, only the lines count.
    let (inside, outside) = (median(&inside), median(&outside) - start);
    report.figures.push(Figure::info(
        SECTION,
        format!("cargo parser, {} lines, in-process (median of {reps})", lines.len()),
        format!("{} a line", num(per_line(inside), "ns")),
    ));
    report.figures.push(Figure::info(
        SECTION,
        format!("same, out of process over a pipe, its start left out (median of {reps})"),
        format!("{} a line, {:.2}× in-process", num(per_line(outside), "ns"), outside / inside),
    ));
    report.figures.push(Figure::info(
        SECTION,
        format!("a plugin host's start, load and empty answer (median of {})", setup.reps),
        num(start * 1000.0, "ms"),
    ));
    Ok(())
}

/// The cargo corpus' combined logs, repeated to [`LINES`] lines.
fn corpus_lines(dir: &Path) -> anyhow::Result<Vec<Vec<u8>>> {
    let mut one_pass = Vec::new();
    let mut cases: Vec<PathBuf> = std::fs::read_dir(dir)?.flatten().map(|e| e.path().join("combined.log")).collect();
    cases.sort();
    for case in cases.iter().filter(|c| c.is_file()) {
        let text = std::fs::read(case).with_context(|| format!("reading {}", case.display()))?;
        one_pass.extend(text.split(|&b| b == b'\n').map(<[u8]>::to_vec));
    }
    if one_pass.is_empty() {
        bail!("no cargo logs in {}", dir.display());
    }
    Ok(one_pass.iter().cycle().take(LINES).cloned().collect())
}

fn context() -> ParseContext {
    ParseContext::new("cargo.build", "/home/dev/project")
}

/// The cargo plugin of the shipped library at `library`.
fn cargo_plugin(library: &Path) -> anyhow::Result<Arc<PluginLibrary>> {
    let plugins = PluginLibrary::load(library).map_err(|e| anyhow::anyhow!("{}: {e}", library.display()))?;
    plugins
        .into_iter()
        .find(|p| p.manifest.name == "cargo")
        .with_context(|| format!("{} holds no cargo plugin", library.display()))
}

/// Parses `lines` as exec does; returns the time and the number of diagnostics.
fn in_process(library: &Path, lines: &[Vec<u8>]) -> anyhow::Result<(Duration, usize)> {
    let plugin = cargo_plugin(library)?;
    let started = Instant::now();
    let mut worker = ParseWorker::start(RunParser::plugin(plugin.parser(&context())?));
    for (i, line) in lines.iter().enumerate() {
        while !worker.ready(Duration::from_millis(10)) {}
        worker.push(Stream::Stdout, i as u64 + 1, line);
    }
    let result = worker.finish(RunEnd::exited(101));
    if let Some(error) = result.parser_error {
        anyhow::bail!("the parser failed: {error}");
    }
    Ok((started.elapsed(), result.diagnostics.len()))
}

/// Parses `lines` in a prototype plugin host; returns the time (its start included) and the
/// number of diagnostics it answered with.
fn out_of_process(library: &Path, lines: &[Vec<u8>]) -> anyhow::Result<(Duration, usize)> {
    let started = Instant::now();
    let mut child = Command::new(std::env::current_exe()?)
        .arg(HOST_MODE)
        .arg(library)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .context("starting the prototype plugin host")?;
    let mut pipe = BufWriter::with_capacity(64 * 1024, child.stdin.take().context("stdin")?);
    for (b, batch) in lines.chunks(BATCH).enumerate() {
        pipe.write_all(&(batch.len() as u32).to_le_bytes())?;
        for (i, line) in batch.iter().enumerate() {
            pipe.write_all(&((b * BATCH + i) as u64 + 1).to_le_bytes())?;
            pipe.write_all(&(line.len() as u32).to_le_bytes())?;
            pipe.write_all(line)?;
        }
    }
    drop(pipe);
    let mut answer = String::new();
    child.stdout.take().context("stdout")?.read_to_string(&mut answer)?;
    if !child.wait()?.success() {
        bail!("the prototype plugin host failed");
    }
    let found = answer.trim().parse().with_context(|| format!("the plugin host answered {answer:?}"))?;
    Ok((started.elapsed(), found))
}

/// The prototype plugin host: loads the library, feeds every batch from stdin to one parser, and
/// prints how many diagnostics it found.
pub fn serve(args: Vec<std::ffi::OsString>) -> anyhow::Result<()> {
    let library = PathBuf::from(args.first().context("the plugin library")?);
    let plugin = cargo_plugin(&library)?;
    let mut parser = plugin.parser(&context())?;
    let mut input = BufReader::with_capacity(256 * 1024, std::io::stdin().lock());
    let mut data = Vec::new();
    loop {
        let mut count = [0u8; 4];
        match input.read_exact(&mut count) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
            Err(e) => return Err(e.into()),
        }
        let mut spans = Vec::with_capacity(BATCH);
        data.clear();
        for _ in 0..u32::from_le_bytes(count) {
            let (mut number, mut len) = ([0u8; 8], [0u8; 4]);
            input.read_exact(&mut number)?;
            input.read_exact(&mut len)?;
            let start = data.len();
            data.resize(start + u32::from_le_bytes(len) as usize, 0);
            input.read_exact(&mut data[start..])?;
            spans.push((u64::from_le_bytes(number), start, data.len()));
        }
        parser.feed(spans.iter().map(|&(number, start, end)| (Stream::Stdout, number, &data[start..end])));
    }
    let result = parser.finish(&RunEnd::exited(101))?;
    println!("{}", result.diagnostics.len());
    Ok(())
}
