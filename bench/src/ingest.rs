//! Ingest per plugin (issue 16): a flood of output through `buildvise exec` with each plugin's
//! busiest parser (`cargo.test`, `npm.test`, `pytest.run`, `dotnet.build`), as a ratio to the same
//! flood piped into a file, measured in the same run.
//!
//! The toolchain's program is a fake, first on PATH (for pytest, the project's `.venv/bin/python`,
//! which the plan prefers to any other interpreter), that runs this executable in [`FLOOD_MODE`]:
//! it builds the toolchain's flood once, about a megabyte of lines, and writes it over and over,
//! so the writer costs next to nothing and the figure is the reader's. A flood mixes lines that
//! look like nothing with lines that look almost like something to that toolchain's parser (a
//! test that passed, `warning: unused` with no location, `error` inside a word or a path): the
//! lines a parser must throw away cheaply, which are most of what a big build prints.
//!
//! The reference is the same writer piped into `cat > FILE`, which stores the same bytes the log
//! does, through the same kind of pipe. Beside them, the same flood goes through the test plugin's
//! `panicky.sh`, whose parser does next to nothing: the host's share, apart from the plugin's. The
//! three alternate in order, each after a `sync`, and the figures are medians of per-round ratios
//! to the pipe, so that a machine busy with something else slows all three alike.

use crate::report::{Figure, Report, num, size};
use crate::scale::{Measured, RUSAGE_MODE, mb_per_s, measure, only_run, sync, time_script};
use crate::{Setup, median};
use anyhow::{Context, bail};
use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::path::PathBuf;
use std::process::Command;

const SECTION: &str = "ingest";
/// Goals (issue 16; the ratio raised to 0.90 by issue 32, which traded parser tricks for plain
/// code on the condition that this figure holds).
const MIN_RATIO: f64 = 0.90;
const MAX_PEAK_RSS_MIB: f64 = 32.0;

/// The first argument that makes this executable a flood writer: `__flood TOOLCHAIN BYTES`.
pub const FLOOD_MODE: &str = "__flood";
/// About how much of a flood is built before it repeats: enough lines that test names and paths
/// vary as in a big project, small enough to stay in the CPU's caches.
const BUFFER: usize = 1 << 20;

/// One plugin's busiest tool, the fake program that runs instead of its toolchain, and the flood.
struct Subject {
    tool: &'static str,
    /// The flood's name on the writer's command line.
    toolchain: &'static str,
    /// Where the fake program goes, relative to the project; its folder goes first on PATH.
    program: &'static str,
    /// Files the plan reads, relative to the project, and their text.
    files: &'static [(&'static str, &'static str)],
    /// The flood's lines, `{n}` standing for a counter that makes each round's names its own.
    lines: &'static [&'static str],
}

const SUBJECTS: [Subject; 4] = [
    Subject {
        tool: "cargo.test",
        toolchain: "cargo",
        program: "fake-bin/cargo",
        files: &[],
        lines: &[
            "   Compiling proc-macro2 v1.0.{n}",
            "   Compiling app-core-{n} v0.1.0 (/home/dev/project/crates/core-{n})",
            "    Finished `test` profile [unoptimized + debuginfo] target(s) in 4.{n}s",
            "     Running unittests src/lib.rs (target/debug/deps/app_core-{n}f3a9c1)",
            "",
            "running 4 tests",
            "test store::tests::keeps_errors_{n} ... ok",
            "test parse::tests::warning_without_location_{n} ... ok",
            "test render::tests::an_error_in_a_word_{n} ... ok",
            "test net::tests::reconnects_{n} ... ignored",
            "",
            "test result: ok. 3 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.01s",
            "",
            "warning: unused",
            "[2026-11-24T03:00:00Z INFO  app_core] request {n}: mirror_errors=0 terrorless=true",
            "thread 'worker-{n}' started with 4 MiB of stack",
            "   --> not a location",
            "   Doc-tests app_core_{n}",
        ],
    },
    Subject {
        tool: "npm.test",
        toolchain: "npm",
        program: "fake-bin/npm",
        files: &[("package.json", r#"{"name": "app", "version": "1.0.0", "scripts": {"test": "jest"}}"#)],
        lines: &[
            "",
            "> app@1.0.0 test",
            "> jest",
            "",
            "PASS src/components/Button{n}.test.js",
            "PASS src/utils/format{n}.test.ts (5.{n} s)",
            "  Button",
            "    ✓ renders without crashing ({n} ms)",
            "    ✓ shows the error state when the request fails (3 ms)",
            "    ○ skipped shows a warning banner",
            "  ● ",
            "  ● Console",
            "",
            "    console.log",
            "      fetched user {n} without error",
            "",
            "Test Suites: 2 passed, 2 total",
            "Tests:       3 passed, 1 skipped, 4 total",
            "Snapshots:   0 total",
            "Time:        6.{n} s",
            "Ran all test suites matching /error|warning/i.",
        ],
    },
    Subject {
        tool: "pytest.run",
        toolchain: "pytest",
        program: ".venv/bin/python",
        files: &[("pyproject.toml", "[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n")],
        lines: &[
            "============================= test session starts ==============================",
            "platform linux -- Python 3.11.7, pytest-8.3.{n}, pluggy-1.5.0",
            "rootdir: /home/dev/project",
            "configfile: pyproject.toml",
            "collected 240 items",
            "",
            "tests/test_api.py::test_get_user_{n} PASSED                                    [ 10%]",
            "tests/test_models.py::TestUser::test_error_message_{n} PASSED                  [ 20%]",
            "tests/test_io.py::test_reads_warnings_{n} SKIPPED (needs network)              [ 30%]",
            "tests/test_io.py::test_slow_{n} XFAIL (known issue)                            [ 40%]",
            "E   assert-like text printed by a test {n}",
            "E       assert {n} == {n}",
            ">       assert result.ok",
            "    def test_parses_error_{n}():",
            "tests/test_cli.py .......................................                      [ 80%]",
            "tests/test_db.py ..s..x..                                                      [100%]",
            "",
            "================== 236 passed, 3 skipped, 1 xfailed in 12.{n}s ==================",
        ],
    },
    Subject {
        tool: "dotnet.build",
        toolchain: "dotnet",
        program: "fake-bin/dotnet",
        files: &[("App.csproj", "<Project Sdk=\"Microsoft.NET.Sdk\" />\n")],
        lines: &[
            "  Determining projects to restore...",
            "  Restored /home/dev/src/App{n}/App{n}.csproj (in 102 ms).",
            "  All projects are up-to-date for restore.",
            "  App{n}.Core -> /home/dev/src/App{n}.Core/bin/Debug/net8.0/App{n}.Core.dll",
            "  Copying file from \"/home/dev/src/warning CS0168/obj/App{n}.dll\" to \"/home/dev/out/App{n}.dll\".",
            "  Restored /home/dev/src/error CS{n} tests/Tests.csproj (in 88 ms).",
            "  _GenerateRestoreGraph: Skipping target because all output files are up-to-date.",
            "  CoreCompile: csc.dll /noconfig /nowarn:1701,1702,CS{n} /warnaserror- /out:obj/Debug/App{n}.dll",
            "",
            "Build succeeded.",
            "    0 Warning(s)",
            "    0 Error(s)",
            "",
            "Time Elapsed 00:00:04.{n}",
        ],
    },
];

pub fn run(setup: &Setup, report: &mut Report) -> anyhow::Result<()> {
    // Five rounds: on a shared machine one round in three may run at a third of the speed.
    let runs = if setup.quick { 1 } else { 5 };
    for subject in &SUBJECTS {
        measure_subject(setup, report, subject, runs).with_context(|| format!("ingest through {}", subject.tool))?;
    }
    Ok(())
}

fn measure_subject(setup: &Setup, report: &mut Report, subject: &Subject, runs: usize) -> anyhow::Result<()> {
    let bytes = flood_len(&buffer(subject.lines), setup.ingest_bytes);
    let writer =
        format!("'{}' {FLOOD_MODE} {} {}", std::env::current_exe()?.display(), subject.toolchain, setup.ingest_bytes);
    let project = project(setup, subject, &writer)?;
    let copy = setup.scratch.path().join("ingest-copy.log");
    let copy_script = format!("{writer} | cat > '{}'", copy.display());
    let path = std::env::join_paths(
        std::iter::once(project.join(subject.program).with_file_name(""))
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )?;
    let (mut peak_kib, mut lines) = (0, 0);
    let mut pipe = || -> anyhow::Result<f64> {
        let rate = mb_per_s(bytes, time_script(&copy_script)?);
        let copied = std::fs::metadata(&copy)?.len();
        std::fs::remove_file(&copy)?;
        if copied != bytes {
            bail!("the reference stored {copied} bytes of {bytes}");
        }
        Ok(rate)
    };
    let mut tool = || -> anyhow::Result<f64> {
        let mut args = vec![OsString::from("exec"), subject.tool.into(), "--detail".into(), "summary".into()];
        args.extend(["--cwd".into(), project.clone().into_os_string()]);
        let (rate, measured, stored) = exec_rate(setup, &path, bytes, &args)?;
        peak_kib = peak_kib.max(measured.max_rss_kib);
        lines = stored;
        Ok(rate)
    };
    let mut floor = || -> anyhow::Result<f64> {
        let mut args = vec![OsString::from("--plugin-dir"), setup.test_plugins.clone().into_os_string()];
        args.extend(["exec", "panicky.sh", "--detail", "summary", "--", &writer].map(OsString::from));
        Ok(exec_rate(setup, &path, bytes, &args)?.0)
    };
    let mut rates = Vec::with_capacity(runs);
    for round in 0..runs {
        let legs: [&mut dyn FnMut() -> anyhow::Result<f64>; 3] = [&mut pipe, &mut tool, &mut floor];
        let mut rate = [0.0; 3];
        // Alternating the order, so that drift falls on every leg alike.
        for leg in if round % 2 == 0 { [0, 1, 2] } else { [2, 1, 0] } {
            rate[leg] = legs[leg]()?;
        }
        rates.push(rate);
    }
    let leg = |i: usize| median(&rates.iter().map(|r| r[i]).collect::<Vec<_>>());
    let ratios = |i: usize| rates.iter().map(|r| r[i] / r[0]).collect::<Vec<_>>();
    // The rounds' spread, beside the median: on a shared machine the same binary's figure moves
    // by a fifth from one run to the next, and a verdict inside that spread is the machine's.
    let tool_ratios = ratios(1);
    let lowest = tool_ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let highest = tool_ratios.iter().copied().fold(0.0, f64::max);
    report.figures.push(
        Figure::at_least(
            SECTION,
            format!(
                "`exec {}` / pipe into a file, {}, {lines} lines (median of {runs} rounds)",
                subject.tool,
                size(setup.ingest_bytes)
            ),
            median(&tool_ratios),
            MIN_RATIO,
            "×",
            &format!(
                "The `panicky.sh` figure for this flood is the host's share (a parser that does next to \
                 nothing); what lies between the two is this plugin's parser, which the reader waits for \
                 once the queue is full: profile plugins/{}/src/parse on this flood (`perf record` on \
                 `buildvise exec {}`) for per-line allocation, regexes or scans that a cheap prefix test \
                 would skip.",
                subject.toolchain, subject.tool
            ),
        )
        .beside(format!(
            "{} against {}; rounds {}–{}",
            num(leg(1), "MB/s"),
            num(leg(0), "MB/s"),
            num(lowest, ""),
            num(highest, "×")
        )),
    );
    report.figures.push(Figure::info(
        SECTION,
        format!("the `{}` flood through `panicky.sh` (host path, trivial parser) / pipe into a file", subject.tool),
        format!("{} ({})", num(median(&ratios(2)), "×"), num(leg(2), "MB/s")),
    ));
    report.figures.push(Figure::at_most(
        SECTION,
        format!("peak RSS of `buildvise exec {}`", subject.tool),
        peak_kib as f64 / 1024.0,
        MAX_PEAK_RSS_MIB,
        "MiB",
        "Memory grows with output: the parser keeps something per line (test names, a block that never \
         ends, every `warning:` seen) instead of a count or a bounded set.",
    ));
    Ok(())
}

/// Runs `buildvise ARGS` under the measuring parent, with `path` as PATH, in a store of its own;
/// checks that the run stored the whole flood. Returns its throughput, what the parent measured,
/// and the lines stored.
fn exec_rate(setup: &Setup, path: &OsStr, bytes: u64, args: &[OsString]) -> anyhow::Result<(f64, Measured, u64)> {
    let store = setup.fresh_dir("ingest-store")?;
    let mut command = Command::new(std::env::current_exe()?);
    setup.isolate(&mut command, &store).env("PATH", path).arg(RUSAGE_MODE).arg(&setup.bin).args(args);
    sync()?;
    let measured = measure(&mut command)?;
    if measured.code != 0 {
        bail!("buildvise {args:?} exited with {}", measured.code);
    }
    let meta = only_run(&store)?;
    if meta.bytes != bytes {
        bail!("buildvise {args:?} stored {} bytes of {bytes}", meta.bytes);
    }
    std::fs::remove_dir_all(&store)?;
    Ok((mb_per_s(bytes, measured.wall), measured, meta.lines))
}

/// The project the tool runs in: the files its plan reads, and the fake program, which execs
/// `writer`.
fn project(setup: &Setup, subject: &Subject, writer: &str) -> anyhow::Result<PathBuf> {
    let dir = setup.fresh_dir(&format!("ingest-{}", subject.toolchain))?;
    for (name, text) in subject.files {
        std::fs::write(dir.join(name), text)?;
    }
    let program = dir.join(subject.program);
    std::fs::create_dir_all(program.with_file_name(""))?;
    // The program ignores its arguments (the plan's flags, a report path): it only prints.
    std::fs::write(&program, format!("#!/bin/sh\nexec {writer}\n"))
        .with_context(|| format!("writing {}", program.display()))?;
    #[cfg(unix)]
    std::fs::set_permissions(&program, std::os::unix::fs::PermissionsExt::from_mode(0o755))?;
    Ok(dir)
}

/// One round of a flood's lines after another, each round with its own `{n}`, to about
/// [`BUFFER`] bytes.
fn buffer(lines: &[&str]) -> Vec<u8> {
    let mut out = Vec::with_capacity(BUFFER + 4096);
    let mut n = 0u64;
    while out.len() < BUFFER {
        let counter = n.to_string();
        for line in lines {
            out.extend_from_slice(line.replace("{n}", &counter).as_bytes());
            out.push(b'\n');
        }
        n += 1;
    }
    out
}

/// How much of `limit` the writer prints: whole buffers, then the whole lines of one that fit.
fn flood_len(buffer: &[u8], limit: u64) -> u64 {
    let whole = limit / buffer.len() as u64 * buffer.len() as u64;
    whole + whole_lines(buffer, (limit - whole) as usize).len() as u64
}

/// The whole lines at the start of `buffer` that fit in `room` bytes.
fn whole_lines(buffer: &[u8], room: usize) -> &[u8] {
    let end = buffer[..room].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    &buffer[..end]
}

/// [`FLOOD_MODE`]: writes a toolchain's flood to stdout, [`flood_len`] bytes of it.
pub fn flood(args: Vec<OsString>) -> anyhow::Result<()> {
    let [toolchain, limit] = args.as_slice() else { bail!("{FLOOD_MODE} needs a toolchain and a byte count") };
    let Some(subject) = SUBJECTS.iter().find(|s| toolchain == s.toolchain) else {
        bail!("no flood for {}", toolchain.to_string_lossy());
    };
    let mut left: u64 = limit.to_string_lossy().parse().context("the byte count")?;
    let buffer = buffer(subject.lines);
    // Straight to the descriptor: std's stdout would go through its line buffer.
    #[cfg(unix)]
    let mut out = std::fs::File::from(std::os::fd::AsFd::as_fd(&std::io::stdout()).try_clone_to_owned()?);
    // The bench measures on Unix (its programs are shell scripts); elsewhere this only compiles.
    #[cfg(not(unix))]
    let mut out = std::io::stdout().lock();
    while left >= buffer.len() as u64 {
        out.write_all(&buffer)?;
        left -= buffer.len() as u64;
    }
    out.write_all(whole_lines(&buffer, left as usize))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_is_whole_lines_of_its_rounds() {
        let buffer = buffer(&["a {n}", "bb"]);
        assert!(buffer.len() >= BUFFER);
        assert!(buffer.starts_with(b"a 0\nbb\na 1\nbb\n"));
        assert_eq!(flood_len(&buffer, 5), 4);
        assert_eq!(flood_len(&buffer, buffer.len() as u64 * 2 + 7), buffer.len() as u64 * 2 + 7);
    }
}
