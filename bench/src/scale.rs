//! buildvise at scale: 1 GiB of output through `exec` (throughput, peak RSS), page latency on the
//! resulting ~10-million-line log, and 10 `exec` processes at once sharing one store.
//!
//! The runs use the test plugin `tests/plugins/panicky`, whose `panicky.sh` tool runs a shell
//! script, because no first-party tool can be told to print a given amount of output.

use crate::report::{Figure, Report, num, size};
use crate::{Setup, median, run_ok};
use anyhow::{Context, bail};
use buildvise_app::{App, LogCall};
use buildvise_engine::access::Access;
use buildvise_engine::config::Config;
use buildvise_engine::plugins::Registry;
use buildvise_engine::render::Surface;
use buildvise_engine::run::CancelToken;
use buildvise_engine::store::{RunStatus, Store, StreamFilter};
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SECTION: &str = "scale";
/// Goals (issue 4).
const MIN_INGEST_MB_S: f64 = 500.0;
const MAX_PEAK_RSS_MIB: f64 = 64.0;
const MAX_PAGE_MS: f64 = 2.0;

/// 99 characters: with its newline a line is 100 bytes, and 1 GiB is 10.7 million lines.
const LINE: &str =
    "ingest 0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789 the quick brown.";
const _: () = assert!(LINE.len() == 99);
/// Lines of a log page, as an agent asks for them.
pub const PAGE_LINES: u64 = 20;
/// Page latency samples per position.
const PAGE_SAMPLES: usize = 50;
const CONCURRENT: usize = 10;
const CONCURRENT_LINES: u64 = 100_000;

/// The first argument that makes this executable the measuring parent of one command.
pub const RUSAGE_MODE: &str = "__measure-child";
/// How the measuring parent reports, on the last line of its stdout.
const RUSAGE_TAG: &str = "bench-measure";

pub fn run(setup: &Setup, report: &mut Report) -> anyhow::Result<()> {
    let plugins = setup.test_plugins.as_path();
    let store = ingest(setup, report, plugins)?;
    pages(setup, report, &store)?;
    // The big log is no longer needed; free the disk before the next figure.
    std::fs::remove_dir_all(&store)?;
    concurrent(setup, report, plugins)
}

/// `buildvise exec panicky.sh -- SCRIPT` with the test plugin, isolated, writing to `store`.
fn exec_script(setup: &Setup, plugins: &Path, store: &Path, script: &str) -> Command {
    let mut command = setup.buildvise(store);
    command.arg("--plugin-dir").arg(plugins).args(["exec", "panicky.sh", "--detail", "summary", "--", script]);
    command
}

fn ingest(setup: &Setup, report: &mut Report, plugins: &Path) -> anyhow::Result<PathBuf> {
    let source = write_source(setup)?;
    let script = format!("cat '{}'", source.display());
    let bytes = setup.ingest_bytes;
    let label = size(bytes);
    let runs = if setup.quick { 1 } else { 3 };
    let mut producer = Vec::with_capacity(runs);
    let mut copy = Vec::with_capacity(runs);
    let mut rates = Vec::with_capacity(runs);
    let mut peak_kib = 0;
    let mut store = PathBuf::new();
    for _ in 0..runs {
        producer.push(mb_per_s(bytes, time_script(&format!("{script} | cat > /dev/null"))?));
        let target = setup.scratch.path().join("copy.log");
        copy.push(mb_per_s(bytes, time_script(&format!("{script} | cat > '{}'", target.display()))?));
        std::fs::remove_file(&target)?;

        store = setup.fresh_dir("ingest-store")?;
        let plain = exec_script(setup, plugins, &store, &script);
        let mut command = Command::new(std::env::current_exe()?);
        setup.isolate(&mut command, &store).arg(RUSAGE_MODE).arg(plain.get_program()).args(plain.get_args());
        sync()?;
        let measured = measure(&mut command)?;
        if measured.code != 0 {
            bail!("buildvise exec of {label} exited with {}", measured.code);
        }
        rates.push(mb_per_s(bytes, measured.wall));
        peak_kib = peak_kib.max(measured.max_rss_kib);
    }
    std::fs::remove_file(&source)?;
    let meta = only_run(&store)?;
    if meta.bytes < bytes {
        bail!("the {label} run stored only {} bytes", meta.bytes);
    }
    report.figures.push(Figure::info(
        SECTION,
        format!("{label} through a pipe, read and dropped (median of {runs})"),
        num(median(&producer), "MB/s"),
    ));
    report.figures.push(Figure::info(
        SECTION,
        format!("{label} through a pipe into a file, `cat | cat > F` (median of {runs})"),
        num(median(&copy), "MB/s"),
    ));
    report.figures.push(Figure::at_least(
        SECTION,
        format!("ingest {label} through `exec`, {} lines (median of {runs})", meta.lines),
        median(&rates),
        MIN_INGEST_MB_S,
        "MB/s",
        INGEST_REMEDY,
    ));
    report.figures.push(Figure::at_most(
        SECTION,
        "peak RSS of `buildvise exec` while ingesting",
        peak_kib as f64 / 1024.0,
        MAX_PEAK_RSS_MIB,
        "MiB",
        "Memory grows with output: something keeps per-line state (the index or parser buffers) \
         instead of streaming it to disk.",
    ));
    Ok(store)
}

/// Writes what the runs print: [`LINE`] over and over, cut at exactly `setup.ingest_bytes`. A
/// file read by `cat` is a producer several times faster than the goal, so the figure measures
/// buildvise.
fn write_source(setup: &Setup) -> anyhow::Result<PathBuf> {
    let path = setup.scratch.path().join("source.log");
    let mut out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&path)?);
    let line = format!("{LINE}\n");
    let mut left = setup.ingest_bytes as usize;
    while left > 0 {
        let take = left.min(line.len());
        out.write_all(&line.as_bytes()[..take])?;
        left -= take;
    }
    out.flush()?;
    Ok(path)
}

/// Flushes dirty pages so that one run's writeback does not slow the next one down.
pub fn sync() -> anyhow::Result<()> {
    run_ok(&mut Command::new("sync"), "sync")?;
    Ok(())
}

/// Wall time of `sh -c script`, after a sync.
pub fn time_script(script: &str) -> anyhow::Result<Duration> {
    sync()?;
    let started = Instant::now();
    run_ok(Command::new("sh").args(["-c", script]), script)?;
    Ok(started.elapsed())
}

/// Throughput in 10^6 bytes a second.
pub fn mb_per_s(bytes: u64, wall: Duration) -> f64 {
    bytes as f64 / wall.as_secs_f64() / 1e6
}

pub fn only_run(store: &Path) -> anyhow::Result<buildvise_engine::store::RunMeta> {
    let runs = Store::open(store)?.list()?;
    match runs.as_slice() {
        [meta] => Ok(meta.clone()),
        _ => bail!("expected one run in {}, found {}", store.display(), runs.len()),
    }
}

fn pages(setup: &Setup, report: &mut Report, store_dir: &Path) -> anyhow::Result<()> {
    let store = Store::open(store_dir)?;
    let meta = only_run(store_dir)?;
    let total = store.reader(&meta.id)?.count(StreamFilter::Both)?;
    let app = App::new(Registry::default(), store, Config::default(), None);
    let log = |call: &LogCall| app.log(&Access::anywhere(), call, &CancelToken::default(), Surface::Mcp, &mut |_| {});
    let positions = page_positions(total);
    let samples = if setup.quick { PAGE_SAMPLES / 2 } else { PAGE_SAMPLES };
    for (name, start) in positions {
        let call = page_call(&meta.id, start);
        let mut times = Vec::with_capacity(samples);
        for _ in 0..samples {
            let started = Instant::now();
            let page = log(&call)?;
            times.push(started.elapsed().as_secs_f64() * 1000.0);
            if !page.text.contains(&format!("{start}|")) {
                bail!("the page at line {start} does not show that line: {}", page.text);
            }
        }
        report.figures.push(Figure::at_most(
            SECTION,
            format!("log page, {name} of {total} lines, in-process (median of {samples})"),
            median(&times),
            MAX_PAGE_MS,
            "ms",
            "Opening a run reads its files' sizes and walks back over unflushed index entries; a page \
             is a few seeks. A miss here means the index is not used (look for a scan in \
             engine/src/store/log.rs).",
        ));
    }
    // A grep that matches nothing reads the whole log: the cost of a scan, per line.
    let grep = LogCall {
        run_id: meta.id.clone(),
        start: 1,
        count: None,
        stream: StreamFilter::Both,
        grep: Some("^never matches$".to_string()),
        detail: None,
        max_lines: Some(PAGE_LINES as u32),
    };
    let started = Instant::now();
    let scanned = log(&grep)?;
    let took = started.elapsed();
    if !scanned.text.starts_with("0 matching") {
        bail!("a grep for nothing matched something: {}", scanned.text);
    }
    report.figures.push(Figure::info(
        SECTION,
        format!("log grep over all {total} lines, no match, in-process"),
        format!("{} ({} ns a line)", num(took.as_secs_f64(), "s"), (took.as_nanos() / u128::from(total.max(1)))),
    ));
    let mut cli_times = Vec::with_capacity(setup.reps);
    for _ in 0..setup.reps {
        let started = Instant::now();
        run_ok(
            setup.buildvise(store_dir).args(["log", &meta.id, "--start", &(total / 2).to_string(), "--count", "20"]),
            "buildvise log",
        )?;
        cli_times.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    report.figures.push(Figure::info(
        SECTION,
        format!("`buildvise log` middle page, process included (median of {})", setup.reps),
        num(median(&cli_times), "ms"),
    ));
    Ok(())
}

/// Where the page figures look in a log of `total` lines: its first, middle and last page.
pub fn page_positions(total: u64) -> [(&'static str, u64); 3] {
    [("start", 1), ("middle", total / 2), ("end", total.saturating_sub(PAGE_LINES - 1))]
}

/// The `log` call for the page at line `start`, as the MCP `log` action makes it.
pub fn page_call(run_id: &str, start: u64) -> LogCall {
    LogCall {
        run_id: run_id.to_string(),
        start: start as i64,
        count: Some(PAGE_LINES),
        stream: StreamFilter::Both,
        grep: None,
        detail: None,
        max_lines: Some(PAGE_LINES as u32),
    }
}

fn concurrent(setup: &Setup, report: &mut Report, plugins: &Path) -> anyhow::Result<()> {
    let script = format!("seq 1 {CONCURRENT_LINES}");
    let alone_store = setup.fresh_dir("alone-store")?;
    let started = Instant::now();
    run_ok(exec_script(setup, plugins, &alone_store, &script).stdout(Stdio::null()), "buildvise exec")?;
    let alone = started.elapsed();

    let store = setup.fresh_dir("concurrent-store")?;
    let started = Instant::now();
    let children = (0..CONCURRENT)
        .map(|_| exec_script(setup, plugins, &store, &script).stdout(Stdio::null()).stderr(Stdio::piped()).spawn())
        .collect::<Result<Vec<_>, _>>()
        .context("starting concurrent buildvise exec")?;
    let mut failures = Vec::new();
    for child in children {
        let output = child.wait_with_output()?;
        if !output.status.success() {
            failures.push(String::from_utf8_lossy(&output.stderr).trim().to_string());
        }
    }
    let wall = started.elapsed();
    let runs = Store::open(&store)?.list()?;
    let complete = runs
        .iter()
        .filter(|m| {
            m.status == RunStatus::Exited
                && m.lines == CONCURRENT_LINES
                && Store::open(&store)
                    .and_then(|s| s.read_result::<serde_json::Value>(&m.id))
                    .is_ok_and(|r| r.is_some())
        })
        .count();
    let pass = complete == CONCURRENT && failures.is_empty();
    report.figures.push(Figure::check(
        SECTION,
        format!("{CONCURRENT} concurrent `exec` of {CONCURRENT_LINES} lines each"),
        format!(
            "{complete}/{CONCURRENT} stored whole; {} total (one alone: {})",
            num(wall.as_secs_f64() * 1000.0, "ms"),
            num(alone.as_secs_f64() * 1000.0, "ms")
        ),
        "all stored",
        pass,
        || {
            format!(
                "{} of {CONCURRENT} runs are missing or incomplete ({} processes failed: {}). Concurrent \
                 writers to one store collide; see engine/src/store/mod.rs (run creation and retention).",
                CONCURRENT - complete,
                failures.len(),
                failures.join(" | ")
            )
        },
    ));
    Ok(())
}

/// What the measuring parent saw of its one child.
pub struct Measured {
    pub wall: Duration,
    pub max_rss_kib: i64,
    pub code: i32,
}

/// Runs `command` (this executable in [`RUSAGE_MODE`]) and reads its report.
pub fn measure(command: &mut Command) -> anyhow::Result<Measured> {
    let output = command.stderr(Stdio::inherit()).output().context("starting the measuring parent")?;
    let text = String::from_utf8_lossy(&output.stdout);
    let parsed = text.lines().rev().find_map(|l| l.strip_prefix(RUSAGE_TAG)).and_then(|rest| {
        let mut fields = rest.split_whitespace().map(str::parse::<i64>);
        match (fields.next(), fields.next(), fields.next()) {
            (Some(Ok(ns)), Some(Ok(kib)), Some(Ok(code))) => {
                Some(Measured { wall: Duration::from_nanos(ns as u64), max_rss_kib: kib, code: code as i32 })
            }
            _ => None,
        }
    });
    parsed.with_context(|| format!("the measuring parent printed no report: {text}"))
}

/// [`RUSAGE_MODE`]: runs `argv` as this process's only child and prints its wall time, peak RSS
/// and exit code. `RUSAGE_CHILDREN` is exact here because this process has no other children;
/// the child's own children (the script) are counted too, but they are a few MiB.
pub fn measure_child(argv: Vec<OsString>) -> anyhow::Result<()> {
    let Some((program, args)) = argv.split_first() else { bail!("{RUSAGE_MODE} needs a command") };
    let started = Instant::now();
    let status = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .with_context(|| format!("starting {}", program.to_string_lossy()))?;
    let wall = started.elapsed();
    #[cfg(unix)]
    let max_rss = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)?.max_rss();
    // The bench measures on Unix; elsewhere peak memory reads as unknown.
    #[cfg(not(unix))]
    let max_rss = 0;
    println!("{RUSAGE_TAG} {} {} {}", wall.as_nanos(), max_rss, status.code().unwrap_or(-1));
    Ok(())
}

const INGEST_REMEDY: &str =
    "Compare with the pipe-into-a-file figure, the ceiling for anything that stores the output.";
