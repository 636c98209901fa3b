//! `bench`: measures buildvise against the goals users choose it for — fewer tokens, no lost
//! information, no cost in speed, flat memory at scale — and prints one table with every figure
//! beside its goal. `--write docs/benchmarks.md` also writes the machine, the method and, for each
//! missed goal, the gap.
//!
//! It drives the real release binary (`buildvise` next to this executable) as a user or an MCP
//! client would; only the log page latency (through the host library) and the parsers at scale
//! (through the plugin crates) are measured in-process, so that process start does not hide them.
//! It is not a test: nothing here fails the build, and the figures depend on the machine.
//!
//! Reproduce: `cargo build --release --workspace && cargo build --profile lean`, then
//! `target/release/bench --write docs/benchmarks.md`.

mod corpus;
mod gain;
mod history;
mod ingest;
mod isolation;
mod long_lines;
mod mcp;
mod noop;
mod overhead;
mod pages;
mod parse_scale;
mod report;
mod scale;
mod size;
mod tokens;

use anyhow::{Context, bail};
use clap::Parser;
use report::Report;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Repeated measurements per figure; `--quick` trades precision for time.
const REPS: usize = 15;
const QUICK_REPS: usize = 5;

#[derive(Debug, Parser)]
#[command(name = "bench", about = "Measure buildvise: tokens, information kept, overhead, scale.")]
struct Args {
    /// Fewer repetitions (5 instead of 15) for the timed figures.
    #[arg(long)]
    quick: bool,
    /// Also write the report (table, machine, method, gaps) to this markdown file.
    #[arg(long, value_name = "FILE")]
    write: Option<PathBuf>,
    /// The buildvise binary (default: `buildvise` next to this executable).
    #[arg(long, value_name = "FILE")]
    bin: Option<PathBuf>,
    /// The project root (default: the checkout this binary was built from).
    #[arg(long, value_name = "DIR")]
    repo: Option<PathBuf>,
    /// The folder holding `corpus/` and `eval/score.py` (default: `../shared` beside the project root).
    #[arg(long, value_name = "DIR")]
    shared: Option<PathBuf>,
    /// Measure only these sections (tokens, overhead, noop, ingest, scale, pages, parse, long, isolation,
    /// history, gain, size); default: all.
    #[arg(long, value_name = "SECTION", value_delimiter = ',')]
    only: Vec<String>,
    /// MiB each ingest run prints (the scale and ingest sections); less for a quick check of the
    /// bench itself, since the figures are for 1 GiB.
    #[arg(long, value_name = "MIB", default_value_t = 1024)]
    ingest_mib: u64,
}

/// Where everything is, and the scratch space every measured process runs in.
pub struct Setup {
    pub repo: PathBuf,
    pub bin: PathBuf,
    pub corpus: PathBuf,
    pub scorer: PathBuf,
    /// The directory holding the test plugin `panicky` (see [`build_test_plugin`]).
    pub test_plugins: PathBuf,
    pub reps: usize,
    pub quick: bool,
    /// Bytes each ingest run prints.
    pub ingest_bytes: u64,
    /// Holds an empty config home and per-figure run stores; removed when the bench ends.
    pub scratch: tempfile::TempDir,
}

impl Setup {
    /// A `buildvise` command that sees neither the user's config, plugins and runs nor a project
    /// `buildvise.toml`, writing its runs to `store`.
    pub fn buildvise(&self, store: &Path) -> Command {
        let mut command = Command::new(&self.bin);
        self.isolate(&mut command, store);
        command
    }

    /// Gives a command (and the `buildvise` processes it starts) that isolation.
    pub fn isolate<'a>(&self, command: &'a mut Command, store: &Path) -> &'a mut Command {
        command
            .current_dir(self.scratch.path())
            .env("BUILDVISE_HOME", store)
            .env("XDG_CONFIG_HOME", self.scratch.path().join("config"))
            .env_remove("BUILDVISE_PLUGIN_PATH")
            .env_remove("XDG_STATE_HOME")
    }

    /// A fresh, empty directory under the scratch space.
    pub fn fresh_dir(&self, name: &str) -> anyhow::Result<PathBuf> {
        let dir = self.scratch.path().join(name);
        if dir.exists() {
            std::fs::remove_dir_all(&dir).with_context(|| format!("clearing {}", dir.display()))?;
        }
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        Ok(dir)
    }
}

fn main() -> anyhow::Result<()> {
    // The scale figures re-run this executable as a thin parent of `buildvise` to read its peak
    // RSS from the children's rusage (see `scale::measure_child`).
    if std::env::args().nth(1).as_deref() == Some(scale::RUSAGE_MODE) {
        return scale::measure_child(std::env::args_os().skip(2).collect());
    }
    // The isolation figures re-run it as a prototype out-of-process plugin host.
    if std::env::args().nth(1).as_deref() == Some(isolation::HOST_MODE) {
        return isolation::serve(std::env::args_os().skip(2).collect());
    }
    // The ingest figures re-run it as the fake toolchain program that prints a flood.
    if std::env::args().nth(1).as_deref() == Some(ingest::FLOOD_MODE) {
        return ingest::flood(std::env::args_os().skip(2).collect());
    }
    let args = Args::parse();
    let setup = setup(&args)?;
    let started = Instant::now();
    let mut report = Report::new(&setup)?;

    let wanted = |name: &str| args.only.is_empty() || args.only.iter().any(|o| name.starts_with(o.as_str()));
    section(wanted, "tokens and information kept", || {
        let cases = corpus::load(&setup.corpus)?;
        let ideal = corpus::ideal_answers(&setup, &setup.corpus)?;
        let measured = tokens::measure(&setup, &cases, &ideal)?;
        let server = mcp::tools_list(&setup)?;
        tokens::report(&mut report, &measured, &server)?;
        let captured_dir = setup.repo.join("tests/fixtures/cases");
        let captured = corpus::load(&captured_dir)?;
        let ideal = corpus::ideal_answers(&setup, &captured_dir)?;
        tokens::report_captured(&mut report, &tokens::measure(&setup, &captured, &ideal)?);
        for streams in [false, true] {
            let scores = corpus::score(&setup, streams)?;
            corpus::report(&mut report, &scores, streams);
        }
        Ok(())
    })?;
    section(wanted, "overhead", || overhead::run(&setup, &mut report))?;
    section(wanted, "noop exec", || noop::run(&setup, &mut report))?;
    section(wanted, "ingest per plugin", || ingest::run(&setup, &mut report))?;
    section(wanted, "scale", || scale::run(&setup, &mut report))?;
    section(wanted, "pages through MCP", || pages::run(&setup, &mut report))?;
    section(wanted, "parse scale", || parse_scale::run(&setup, &mut report))?;
    section(wanted, "long lines", || long_lines::run(&setup, &mut report))?;
    section(wanted, "isolation", || isolation::run(&setup, &mut report))?;
    section(wanted, "history", || history::run(&setup, &mut report))?;
    section(wanted, "gain", || gain::run(&setup, &mut report))?;
    section(wanted, "size", || size::run(&setup, &mut report))?;
    report.elapsed = started.elapsed();

    print!("{}", report.tables());
    if let Some(path) = &args.write {
        std::fs::write(path, report.document()).with_context(|| format!("writing {}", path.display()))?;
        eprintln!("bench: wrote {}", path.display());
    }
    Ok(())
}

/// Runs one part of the bench, if wanted, telling the person waiting what is going on.
fn section(wanted: impl Fn(&str) -> bool, name: &str, body: impl FnOnce() -> anyhow::Result<()>) -> anyhow::Result<()> {
    if !wanted(name) {
        return Ok(());
    }
    eprintln!("bench: {name}…");
    let started = Instant::now();
    body().with_context(|| format!("measuring {name}"))?;
    eprintln!("bench: {name} done in {:.1} s", started.elapsed().as_secs_f64());
    Ok(())
}

fn setup(args: &Args) -> anyhow::Result<Setup> {
    let repo = match &args.repo {
        Some(dir) => dir.clone(),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join(".."),
    };
    let repo = std::fs::canonicalize(&repo).with_context(|| format!("project root {}", repo.display()))?;
    let bin = match &args.bin {
        Some(bin) => bin.clone(),
        None => std::env::current_exe()?.with_file_name("buildvise"),
    };
    if !bin.is_file() {
        bail!("{} is missing: build it first with `cargo build --release --workspace` (or pass --bin)", bin.display());
    }
    let shared = args.shared.clone().unwrap_or_else(|| repo.join("../shared"));
    let corpus = shared.join("corpus");
    let scorer = shared.join("eval/score.py");
    if !corpus.is_dir() || !scorer.is_file() {
        bail!(
            "the corpus and scorer are missing: expected {} and {} (the `shared` folder beside the \
             project; pass --shared DIR if it is elsewhere)",
            corpus.display(),
            scorer.display()
        );
    }
    let scratch = tempfile::Builder::new().prefix("buildvise-bench-").tempdir()?;
    std::fs::create_dir_all(scratch.path().join("config"))?;
    Ok(Setup {
        test_plugins: build_test_plugin(&repo)?,
        repo,
        bin: std::fs::canonicalize(&bin)?,
        corpus: std::fs::canonicalize(corpus)?,
        scorer: std::fs::canonicalize(scorer)?,
        reps: if args.quick { QUICK_REPS } else { REPS },
        quick: args.quick,
        ingest_bytes: args.ingest_mib << 20,
        scratch,
    })
}

/// Builds the test plugin `tests/plugins/panicky` into its own target dir and returns the
/// directory holding the library. Its `panicky.sh` tool runs a shell script: the only way to
/// make `exec` run a given command, since no first-party tool runs arbitrary programs.
fn build_test_plugin(repo: &Path) -> anyhow::Result<PathBuf> {
    let target = repo.join("target/bench-plugins");
    eprintln!("bench: building the test plugin tests/plugins/panicky…");
    run_ok(
        Command::new("cargo")
            .args(["build", "--release", "--quiet", "-p", "buildvise-plugin-panicky", "--manifest-path"])
            .arg(repo.join("tests/plugins/Cargo.toml"))
            .arg("--target-dir")
            .arg(&target),
        "building the test plugin tests/plugins/panicky",
    )?;
    Ok(target.join("release"))
}

/// Runs a command to its end and fails with its stderr when it fails.
pub fn run_ok(command: &mut Command, what: &str) -> anyhow::Result<std::process::Output> {
    let output = command.output().with_context(|| format!("starting {what}"))?;
    if !output.status.success() {
        bail!("{what} failed ({}): {}", output.status, String::from_utf8_lossy(&output.stderr).trim_end());
    }
    Ok(output)
}

/// The median of some samples (the mean of the middle two for an even count).
pub fn median(samples: &[f64]) -> f64 {
    if samples.is_empty() {
        return f64::NAN;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 { sorted[mid] } else { (sorted[mid - 1] + sorted[mid]) / 2.0 }
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&[]).is_nan());
    }
}
