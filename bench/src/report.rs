//! The report: every figure with its goal and verdict, the detail tables, the machine, and the
//! markdown they become (the table on stdout; the whole document with `--write`).

use crate::Setup;
use std::fmt::Write;
use std::process::Command;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Miss,
    /// Context for the other figures; no goal.
    Info,
}

/// One row of the main table.
#[derive(Debug, Clone)]
pub struct Figure {
    pub section: &'static str,
    pub name: String,
    pub value: String,
    pub goal: String,
    pub verdict: Verdict,
    /// For a miss: by how much, and what would close the gap.
    pub gap: Option<String>,
}

impl Figure {
    pub fn info(section: &'static str, name: impl Into<String>, value: impl Into<String>) -> Self {
        Figure {
            section, name: name.into(), value: value.into(), goal: "—".into(), verdict: Verdict::Info, gap: None
        }
    }

    /// A figure whose goal is an upper bound. `remedy` says what would close the gap if missed.
    pub fn at_most(
        section: &'static str,
        name: impl Into<String>,
        value: f64,
        limit: f64,
        unit: &str,
        remedy: &str,
    ) -> Self {
        let pass = value <= limit;
        let gap = (!pass)
            .then(|| format!("over by {} ({:.0}%). {remedy}", num(value - limit, unit), (value / limit - 1.0) * 100.0));
        Figure {
            section,
            name: name.into(),
            value: num(value, unit),
            goal: format!("≤ {}", num(limit, unit)),
            verdict: if pass { Verdict::Pass } else { Verdict::Miss },
            gap,
        }
    }

    /// A figure whose goal is a lower bound.
    pub fn at_least(
        section: &'static str,
        name: impl Into<String>,
        value: f64,
        limit: f64,
        unit: &str,
        remedy: &str,
    ) -> Self {
        let pass = value >= limit;
        let gap = (!pass).then(|| {
            format!("short by {} ({:.0}%). {remedy}", num(limit - value, unit), (1.0 - value / limit) * 100.0)
        });
        Figure {
            section,
            name: name.into(),
            value: num(value, unit),
            goal: format!("≥ {}", num(limit, unit)),
            verdict: if pass { Verdict::Pass } else { Verdict::Miss },
            gap,
        }
    }

    /// A figure with a goal that is not a number, e.g. "every case".
    pub fn check(
        section: &'static str,
        name: impl Into<String>,
        value: impl Into<String>,
        goal: impl Into<String>,
        pass: bool,
        gap: impl FnOnce() -> String,
    ) -> Self {
        Figure {
            section,
            name: name.into(),
            value: value.into(),
            goal: goal.into(),
            verdict: if pass { Verdict::Pass } else { Verdict::Miss },
            gap: (!pass).then(gap),
        }
    }

    /// Shows what the value was measured against in the same run beside it, so that a reader
    /// can tell a slow figure from a slow machine.
    pub fn beside(mut self, reference: impl AsRef<str>) -> Self {
        self.value = format!("{} ({})", self.value, reference.as_ref());
        self
    }
}

/// A byte count as the bench's sizes are chosen: whole GiB or MiB.
pub fn size(bytes: u64) -> String {
    const MIB: u64 = 1 << 20;
    if bytes >= 1 << 30 && bytes.is_multiple_of(1 << 30) {
        format!("{} GiB", bytes >> 30)
    } else if bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else {
        format!("{bytes} bytes")
    }
}

/// A number with a precision that suits its size, and its unit.
pub fn num(value: f64, unit: &str) -> String {
    let digits = match value.abs() {
        v if v >= 100.0 || v == v.trunc() && v >= 10.0 => 0,
        v if v >= 10.0 => 1,
        v if v > 1.0 => 2,
        _ => 3,
    };
    let space = if unit.is_empty() || unit == "%" || unit == "×" { "" } else { " " };
    format!("{value:.digits$}{space}{unit}")
}

/// A titled table of strings.
#[derive(Debug, Clone, Default)]
pub struct Table {
    pub title: String,
    /// Says what the columns mean, under the title.
    pub note: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(title: &str, note: &str, header: &[&str]) -> Self {
        Table {
            title: title.into(),
            note: note.into(),
            header: header.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    fn markdown(&self, out: &mut String) {
        let _ = writeln!(out, "### {}\n", self.title);
        if !self.note.is_empty() {
            let _ = writeln!(out, "{}\n", self.note);
        }
        let _ = writeln!(out, "| {} |", self.header.join(" | "));
        let _ = writeln!(out, "|{}", "---|".repeat(self.header.len()));
        for row in &self.rows {
            let cells: Vec<String> = row.iter().map(|c| cell(c)).collect();
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        out.push('\n');
    }
}

/// A table cell's text: a `|`, even inside a code span, would end the cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// The machine the figures come from.
#[derive(Debug, Clone)]
struct Machine {
    cpus: usize,
    cpu_model: String,
    ram: String,
    os: String,
    rustc: String,
    cargo: String,
    python: String,
    buildvise: String,
    commit: String,
    date: String,
}

pub struct Report {
    pub figures: Vec<Figure>,
    pub tables: Vec<Table>,
    pub elapsed: Duration,
    machine: Machine,
    quick: bool,
    reps: usize,
}

impl Report {
    pub fn new(setup: &Setup) -> anyhow::Result<Self> {
        Ok(Report {
            figures: Vec::new(),
            tables: Vec::new(),
            elapsed: Duration::ZERO,
            machine: machine(setup),
            quick: setup.quick,
            reps: setup.reps,
        })
    }

    /// What goes to stdout: the main table, then the detail tables.
    pub fn tables(&self) -> String {
        let mut out = String::new();
        out.push_str("| area | figure | value | goal | |\n|---|---|---|---|---|\n");
        for f in &self.figures {
            let mark = match f.verdict {
                Verdict::Pass => "pass",
                Verdict::Miss => "**MISS**",
                Verdict::Info => "",
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {mark} |",
                f.section,
                cell(&f.name),
                cell(&f.value),
                cell(&f.goal)
            );
        }
        out.push('\n');
        for table in &self.tables {
            table.markdown(&mut out);
        }
        out
    }

    /// The whole docs/benchmarks.md.
    pub fn document(&self) -> String {
        let m = &self.machine;
        let misses: Vec<&Figure> = self.figures.iter().filter(|f| f.verdict == Verdict::Miss).collect();
        let passes = self.figures.iter().filter(|f| f.verdict == Verdict::Pass).count();
        let mut out = String::new();
        out.push_str("# Benchmarks\n\n");
        out.push_str(
            "What buildvise promises, measured: fewer tokens than the raw log, no information lost, \
             no noticeable cost in speed, flat memory whatever the output. Every figure stands beside \
             its goal. This file is written by the bench; edit `bench/src/report.rs`, not this file.\n\n",
        );
        out.push_str("## Reproduce\n\n```sh\n");
        out.push_str("cargo build --release --workspace && cargo build --profile lean\n");
        out.push_str("target/release/bench --write docs/benchmarks.md\n");
        out.push_str("```\n\n");
        out.push_str(
            "The first line builds the `buildvise` binary, the plugins and the bench, then the shipped \
             build whose size the bench reads; the bench \
             then builds the test plugin `tests/plugins/panicky` (into `target/bench-plugins`) for the \
             scale figures. It needs `cargo`, `python3` and the `shared` folder beside the project \
             (`../shared/corpus`, `../shared/eval/score.py`). `--quick` takes 5 samples instead of 15. \
             From a fresh clone on the 2-core machine below (crates already downloaded, other builds \
             running beside it) the release build took 4 minutes, the lean one 4½ more, and the bench two and a half, the test \
             plugin's build included and most of it the 1 GiB ingests; the goal is under 10 minutes.\n\n",
        );
        let _ = writeln!(
            out,
            "## Results\n\n{} goals met, {} missed{}; the bench ran in {:.0} s{}.\n",
            passes,
            misses.len(),
            if misses.is_empty() { "" } else { " (see [Missed goals](#missed-goals))" },
            self.elapsed.as_secs_f64(),
            if self.quick { format!(" (`--quick`: {} samples per timed figure)", self.reps) } else { String::new() },
        );
        out.push_str(&self.tables());
        out.push_str("## Machine\n\n");
        let _ = writeln!(out, "- CPUs: {} × {}", m.cpus, m.cpu_model);
        let _ = writeln!(out, "- RAM: {}", m.ram);
        let _ = writeln!(out, "- OS: {}", m.os);
        let _ = writeln!(out, "- {}; {}; {}", m.rustc, m.cargo, m.python);
        let _ = writeln!(out, "- {} at commit {}", m.buildvise, m.commit);
        let _ = writeln!(out, "- Date: {}\n", m.date);
        out.push_str(METHOD);
        out.push_str("\n## Missed goals\n\n");
        if misses.is_empty() {
            out.push_str("None.\n");
        }
        for f in misses {
            let _ = writeln!(
                out,
                "- **{} — {}**: {} against a goal of {}; {}",
                f.section,
                f.name,
                f.value,
                f.goal,
                f.gap.as_deref().unwrap_or("")
            );
        }
        out
    }
}

/// How each figure is measured (the bench's source is the exact definition).
const METHOD: &str = "## How each figure is measured

Every process the bench starts sees an empty config home and its own run store
(`BUILDVISE_HOME` under a temporary directory), so the user's settings and runs play no part.

**Tokens** are o200k_base tokens (tiktoken-rs, ordinary encoding). Per corpus case
(`../shared/corpus/<toolchain>/<case>/`):
- *raw*: `combined.log`, the whole output a person would have scrolled through;
- *ideal*: the case's ideal answer written by `python3 ../shared/eval/score.py --ideal DIR` (a status
  line, one line per expected diagnostic with location, code, test and headline, and the test
  summary: the smallest answer that loses nothing);
- *summary*, *standard*, *full*: the text `buildvise parse TOOL --log combined.log --exit-code N
  --cwd project --artifact F… --mcp --detail D` prints, which is the text of an MCP `exec` answer
  (hints worded for MCP); the one difference is the run id, `parsed` (1 token) where a real run
  has an id such as `bafotemu` (about 3);
- *schema*: the `build` entry of `tools/list` as the model reads it (its name, description and
  input schema, compact JSON; clients read the title, annotations and output schema and do not
  pass them to the model, and the whole entry is shown beside), obtained by starting `buildvise
  serve` and speaking JSON-RPC over its stdin/stdout; the server's `instructions` (sent once, in
  `initialize`) are shown beside it, and the `tools` array read the same way plus the
  instructions is what a session costs before its first call.

Token ratios are medians of per-case ratios. \"Failing runs\" are cases whose expected outcome is a
failure. \"Cases with diagnostics\" are cases where the parser reported at least one error or warning
(`parse --json`).

**Information kept** is `score.py --json` over the whole corpus, once with `combined.log` and once
with `stdout.log`/`stderr.log` fed one after the other (`--streams`): recall and precision of the
diagnostics under score.py's matching rules, test summaries exactly equal, success flags equal.

**Exec overhead**: the fixture crate `tests/fixtures/cargo/tests` is copied to a temporary
directory and checked once, so every later `cargo check` is a no-op build. Then pairs of runs, in
alternating order: `buildvise exec cargo.check --cwd DIR` and `cargo check` in DIR (both with
captured output and `CARGO_TERM_COLOR=never`). The figures are the median of the per-pair
differences and the median of the per-pair ratios. To show where the time goes, the median wall
times of `buildvise --version` (process start) and `buildvise list` (start plus opening every
plugin library), and the paired difference between `buildvise exec panicky.sh -- true` and
`sh -c true` (the whole exec path around a command that does nothing).

**No-op exec overhead** (`bench --only noop`): a project whose `buildvise.toml` defines `noop` as
`run = [\"true\"]` (format `fallback`), so that no toolchain's start-up hides buildvise's. After 5
calls to warm up, 51 pairs (15 with `--quick`) in alternating order of `true` run directly
(spawned and waited for by the bench, output captured) and `buildvise exec noop --cwd DIR` (CLI:
process start and plugin loading included), or the `exec` call of `noop` on one `buildvise serve`
session over stdio (warm MCP: request written to answer read). The figure is the median of the
per-pair differences; the medians of both sides stand beside it. Before them, the median time of
creating 200 files in the store's file system: a run creates about ten, and after a flood of writes
and deletes (a previous bench's ingests, a build) creating one took a millisecond rather than
twenty microseconds, enough to turn both figures into misses with the same binary.

**Ingest per plugin** (`bench --only ingest`): 1 GiB through `buildvise exec` with each plugin's
busiest parser (`cargo.test`, `npm.test`, `pytest.run`, `dotnet.build`). The toolchain's program
is a fake first on PATH (for pytest, the project's `.venv/bin/python`; npm's project has a
`package.json` whose test script is `jest`) that execs the bench as a flood writer: about 1 MiB of
that toolchain's lines, built once and written over and over, lines that look like nothing mixed
with lines that look almost like something (`test a::b ... ok`, `warning: unused` without a
location, `PASS src/x.test.js`, `  ● ` without a test, `tests/test_x.py::test_y PASSED [ 10%]`,
`E   assert` outside a failure, `warning CS0168` inside a path; see `bench/src/ingest.rs`). The
reference is the same writer into `cat > FILE`; a third run sends the same flood through the test
plugin's `panicky.sh`, whose parser does next to nothing, to show the host's share. Five rounds
(one with `--quick`) of the three, in alternating order, each run after `sync`; the figures are
medians of the per-round ratios of throughput to the pipe's (10^6 bytes per second of wall time,
`buildvise` spawn to exit), with the medians in MB/s and the lowest and highest round's ratio
beside them: on this kind of machine the same binary's figure moves by a fifth between runs, and
a verdict within that spread says more about the machine than about the change. Peak RSS as for
the scale ingest below.

**Comparison with the previous run** (`bench --only history`): in-process, on a store of 200
finished runs over 20 commands, the time of what the comparison adds to each exec: fingerprinting
the result, recording the run in its command's index and reading the previous run's result, and
writing the result again with the comparison in it; median over the reruns, beside the same step
for a command's first run. Tokens: every corpus case with a problem is given a previous run with
the same problems but its first and with one more, and its standard answer is counted (o200k)
with and without the comparison.

**Gain** (`bench --only gain`): a store of 200 finished runs (retention's default), written as
exec writes them with the corpus's logs and an answer each; `buildvise gain --json` timed from
spawn to exit, first with no counts kept (every log and answer counted; the kept counts removed
before each sample) and then with the counts kept; and one run of a 64 MB log (the corpus's logs
end to end), counted once.

**Server ready**: wall time from spawning `buildvise serve` (stdio) to reading its answer to
`initialize`, which includes loading every plugin; median of the samples.

**Ingest**: the bench writes 1 GiB of 100-byte lines to a file, then runs `buildvise exec
panicky.sh -- \"cat FILE\"` (the test plugin `tests/plugins/panicky` runs a shell script; its parser
looks at every line). Throughput is 10^6 bytes per second of wall time of the whole `buildvise`
process, spawn to exit. Peak RSS is `ru_maxrss` of that process: the bench re-runs itself as the
parent of `buildvise` and reads `getrusage(RUSAGE_CHILDREN)` (the script's `sh` and `cat` count
too, but use a few MiB). Two references are measured the same way, for scale: the file through a pipe
into a reader that drops it (`cat FILE | cat > /dev/null`), and through a pipe into a file (`cat
FILE | cat > COPY`), which writes the same bytes to disk as the log does. Every timed run
starts after `sync`, so one run's writeback does not slow the next.

**Log pages**: on the ingested run's log (about 10 million lines), the time to open the run
(`Store::reader`) and render a 20-line page (`render::render_log`, what the `log` action and
`buildvise log` do), in-process, with the page cache warm; median per position. The same page
through the `buildvise log RUN --start N --count 20` command, process start included, is shown for
scale.

**Log pages through MCP** (`bench --only pages`): a run of `seq 1 10000000` (10 million lines,
through `panicky.sh`); at its start, middle and end, 50 pairs (15 with `--quick`) in alternating order of the 20-line
page rendered in-process (as for the figures above) and the `log` call for it on one `buildvise
serve` session over stdio, request written to answer read. The figure is the median round trip,
with the in-process median and their ratio beside it.

**Concurrent exec**: 10 `buildvise exec panicky.sh` processes started at once, each printing
100,000 lines; the wall time until all have exited, against one such run alone, and whether all 10
runs are in the store with their full line count and a result.

**Parse scale**: for each toolchain's test parser (pytest, `cargo test`, Jest, VSTest), a log of N
failing tests in the runner's default layout, written by the bench (`bench/src/parse_scale.rs`),
for N = 10,000 and 100,000 (pytest also with the JUnit report it writes), parsed in-process
(`buildvise_plugin_api::testing`, which feeds lines as the host does); the least thread CPU time
of 5 runs, which a busy machine's interruptions cannot swell. The ratio of the time per failure at 100,000 to
that at 10,000 is 1× to 2× for a parser whose work grows linearly (a bigger result is slower to
reach in memory), and 10× for one that compares each failure with every earlier one.

**Size** (`bench --only size`): the bytes on disk of `target/lean/buildvise` and the plugin library
beside it (`libbuildvise_plugin_toolchains`, the five plugins), as `cargo build --profile lean` leaves them and every package ships them (docs/install.md).
The files are read, not built: build the profile first (4½ minutes here), or the figure is a miss
that says so.
";

fn machine(setup: &Setup) -> Machine {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu_model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name").and_then(|r| r.split_once(':')).map(|(_, v)| v.trim().to_string()))
        .unwrap_or_else(|| "unknown CPU".into());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let ram = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map(|kib| format!("{:.1} GiB", kib / (1024.0 * 1024.0)))
        .unwrap_or_else(|| "unknown".into());
    let release = std::fs::read_to_string("/etc/os-release").unwrap_or_default();
    let distro = release
        .lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim_matches('"').to_string())
        .unwrap_or_else(|| std::env::consts::OS.into());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    Machine {
        cpus,
        cpu_model,
        ram,
        os: format!("{distro}, Linux {}", kernel.trim()),
        rustc: first_line(Command::new("rustc").arg("--version")),
        cargo: first_line(Command::new("cargo").arg("--version")),
        python: first_line(Command::new("python3").arg("--version")),
        buildvise: first_line(Command::new(&setup.bin).arg("--version")),
        commit: commit(&setup.repo),
        date: first_line(Command::new("date").args(["-u", "+%Y-%m-%d %H:%M UTC"])),
    }
}

/// The checked-out commit, and whether the working tree differs from it.
fn commit(repo: &std::path::Path) -> String {
    let head = first_line(Command::new("git").args(["rev-parse", "--short", "HEAD"]).current_dir(repo));
    let dirty = Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=no"])
        .current_dir(repo)
        .output()
        .is_ok_and(|o| !o.stdout.is_empty());
    if dirty { format!("{head} with uncommitted changes") } else { head }
}

/// The first line a command prints, or "unknown".
fn first_line(command: &mut Command) -> String {
    command
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8_lossy(&o.stdout).lines().next().map(str::to_string))
        .unwrap_or_else(|| "unknown".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_a_precision_that_suits_them() {
        assert_eq!(num(1234.4, "ms"), "1234 ms");
        assert_eq!(num(12.34, "ms"), "12.3 ms");
        assert_eq!(num(20.0, "ms"), "20 ms");
        assert_eq!(num(1.234, "×"), "1.23×");
        assert_eq!(num(0.9712, ""), "0.971");
        assert_eq!(num(1.0, ""), "1.000");
    }

    #[test]
    fn sizes_are_whole_units() {
        assert_eq!(size(1 << 30), "1 GiB");
        assert_eq!(size(16 << 20), "16 MiB");
        assert_eq!(size(1000), "1000 bytes");
    }

    #[test]
    fn a_reference_stands_beside_the_value() {
        let f = Figure::at_most("overhead", "mcp", 1.2, 1.5, "ms", "").beside("direct 0.500 ms");
        assert_eq!(f.value, "1.20 ms (direct 0.500 ms)");
    }

    #[test]
    fn pipes_in_cells_are_escaped() {
        assert_eq!(cell("`cat | cat > F`"), "`cat \\| cat > F`");
    }

    #[test]
    fn a_missed_bound_says_by_how_much() {
        let f = Figure::at_most("tokens", "schema", 262.0, 250.0, "tokens", "Shorten descriptions.");
        assert_eq!(f.verdict, Verdict::Miss);
        assert_eq!(f.gap.as_deref(), Some("over by 12 tokens (5%). Shorten descriptions."));
        let f = Figure::at_least("scale", "ingest", 600.0, 500.0, "MB/s", "");
        assert_eq!(f.verdict, Verdict::Pass);
        assert!(f.gap.is_none());
    }
}
