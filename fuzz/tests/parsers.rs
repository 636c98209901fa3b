//! The fuzz harness: every seed, mutated, through every tool's parser of every plugin, the way
//! the host feeds them (`buildvise_plugin_api::testing`: lines ANSI-stripped and numbered, the
//! whole log as stdout, or stdout then stderr), with exit code 0 or 1 and, now and then, mutated
//! report files handed over as artifacts.
//!
//! Properties checked on every result:
//! - the parser does not panic (arithmetic overflow included, in debug builds);
//! - every diagnostic's message has text and is at most [`MAX_TEXT`] bytes, and so is each note;
//! - a file or test a diagnostic names is not blank;
//! - every log range lies within the lines fed, start before end;
//! - failed test names are not empty and each is listed once;
//! - the same input gives the same result (checked on one case in eight).
//!
//! On the unmutated seeds, a test summary must also add up (`passed + failed + skipped <= total`).
//! Mutated logs can print counts that do not, and parsers report counts as printed.
//!
//! A failing case is written to `target/fuzz-failures/<tool>-<case>.log` (with `.stderr.log` and
//! the artifacts beside it) and named in the failure message. See the crate documentation for
//! the budget and the variables that change it.

use buildvise_fuzz::{ArtifactSeed, Corpus, LogSeed, Rng, mutate};
use buildvise_plugin_api::testing::{parse_log, parse_streams};
use buildvise_plugin_api::{ParseContext, ParseResult, Plugin, RunEnd};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Once};
use std::time::{Duration, Instant};

/// "buildvis" in ASCII.
const DEFAULT_SEED: u64 = 0x6275_696c_6476_6973;

/// About twelve seconds in a debug build on two cores.
const DEFAULT_ITERATIONS: u64 = 400;

/// Longest message or note that is not a bug: parsers clip headlines to a few hundred bytes.
const MAX_TEXT: usize = 64 << 10;

/// Distinct problems reported in full before the rest are only counted.
const MAX_FINDINGS: usize = 30;

/// Working directories, chosen to make path handling work: under the seeds' paths, Windows
/// drives, and multibyte names that an inserted character can cut across.
const CWDS: [&str; 8] = [
    "",
    "/",
    "/home/dev/shop",
    "/home/dev/ledger",
    "/home/jürgen/日本/proj",
    r"C:\Users\Jürgen\proj",
    r"c:\src\app",
    "/src/Inv",
];

struct Tool {
    plugin: Arc<dyn Plugin>,
    plugin_name: String,
    name: String,
}

fn tools() -> Vec<Tool> {
    let plugins: [Arc<dyn Plugin>; 5] = [
        Arc::new(buildvise_plugin_cargo::CargoPlugin),
        Arc::new(buildvise_plugin_npm::ThePlugin),
        Arc::new(buildvise_plugin_pytest::ThePlugin),
        Arc::new(buildvise_plugin_dotnet::DotnetPlugin),
        Arc::new(buildvise_plugin_generic::GenericPlugin),
    ];
    let mut tools = Vec::new();
    for plugin in plugins {
        let manifest = plugin.manifest();
        for spec in manifest.tools {
            tools.push(Tool { plugin: plugin.clone(), plugin_name: manifest.name.clone(), name: spec.name });
        }
    }
    tools
}

fn workspace() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("fuzz/ lies in the workspace")
}

fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).parent().expect("target/tmp lies in target/").to_path_buf()
}

fn corpus() -> Corpus {
    let mut dirs = vec![
        workspace().join("tests/fixtures/corpus"),
        workspace().join("tests/fixtures/cases"),
        workspace().join("fuzz/seeds"),
    ];
    if let Some(extra) = std::env::var_os("BUILDVISE_FUZZ_CORPUS") {
        dirs.extend(std::env::split_paths(&extra));
    }
    let corpus = Corpus::load(&dirs).expect("the seed directories are readable");
    assert!(corpus.logs.len() >= 10 && corpus.artifacts.len() >= 4, "seeds missing from {dirs:?}");
    corpus
}

fn env_number(name: &str) -> Option<u64> {
    let value = std::env::var(name).ok()?;
    Some(value.trim().parse().unwrap_or_else(|_| panic!("{name}={value} is not a number")))
}

/// What the parser is given, beyond the tool and the cwd.
enum Input {
    /// A combined log, through `parse_log`.
    Combined(Vec<u8>),
    /// Stdout then stderr, through `parse_streams`; also how a combined log reaches a parser
    /// when artifacts come with it.
    Streams { stdout: Vec<u8>, stderr: Vec<u8> },
}

struct Case {
    id: u64,
    seed: String,
    mutations: Vec<String>,
    input: Input,
    exit: i32,
    cwd: &'static str,
    artifacts: Vec<Artifact>,
}

/// A report file written for a case, as the run would have left it.
struct Artifact {
    /// The seed it was made from.
    seed: String,
    bytes: Vec<u8>,
    path: String,
}

impl Case {
    fn lines(&self) -> u64 {
        match &self.input {
            Input::Combined(log) => lines_fed(log),
            Input::Streams { stdout, stderr } => lines_fed(stdout) + lines_fed(stderr),
        }
    }

    fn size(&self) -> usize {
        match &self.input {
            Input::Combined(log) => log.len(),
            Input::Streams { stdout, stderr } => stdout.len() + stderr.len(),
        }
    }

    fn describe(&self) -> String {
        let mode = match &self.input {
            Input::Combined(_) => "combined".to_string(),
            Input::Streams { .. } => "stdout+stderr".to_string(),
        };
        let artifacts: Vec<&str> = self.artifacts.iter().map(|a| a.seed.as_str()).collect();
        format!(
            "case {} (seed {}; mutations [{}]; {mode}; exit {}; cwd {:?}; artifacts [{}])",
            self.id,
            self.seed,
            self.mutations.join(", "),
            self.exit,
            self.cwd,
            artifacts.join(", ")
        )
    }

    fn end(&self) -> RunEnd {
        RunEnd::exited(self.exit).with_artifacts(self.artifacts.iter().map(|a| a.path.clone()).collect())
    }
}

/// How many lines `testing::feed_text` numbers for `text`.
fn lines_fed(text: &[u8]) -> u64 {
    if text.is_empty() {
        return 0;
    }
    let body = text.strip_suffix(b"\n").unwrap_or(text);
    body.iter().filter(|&&b| b == b'\n').count() as u64 + 1
}

/// Splits a log's lines between stdout and stderr: each line by a coin of random weight, or all
/// lines before a random cut on one stream and the rest on the other.
fn split_streams(log: &[u8], rng: &mut Rng) -> (Vec<u8>, Vec<u8>) {
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let lines: Vec<&[u8]> = log.split_inclusive(|&b| b == b'\n').collect();
    if rng.one_in(2) {
        let weight = rng.between(1, 9);
        for line in lines {
            let out = if rng.below(10) < weight { &mut stderr } else { &mut stdout };
            out.extend_from_slice(line);
        }
    } else {
        let cut = rng.below(lines.len() + 1);
        let (first, second) = if rng.one_in(2) { (&mut stdout, &mut stderr) } else { (&mut stderr, &mut stdout) };
        lines[..cut].iter().for_each(|l| first.extend_from_slice(l));
        lines[cut..].iter().for_each(|l| second.extend_from_slice(l));
    }
    (stdout, stderr)
}

/// Makes case `id`: a seed, a few mutations, a way to feed it, and maybe artifacts.
fn make_case(corpus: &Corpus, seed: u64, id: u64, artifact_dir: &Path) -> Case {
    let mut rng = Rng::for_case(seed, id);
    let log: &LogSeed = rng.pick(&corpus.logs);
    let donor = &rng.pick(&corpus.logs).combined;
    let count = rng.between(1, 4);
    let mut mutations = Vec::new();
    let input = match &log.streams {
        Some((stdout, stderr)) if rng.one_in(3) => {
            let (stdout, on_stdout) = mutate(stdout, donor, count, &mut rng);
            let (stderr, on_stderr) = mutate(stderr, donor, rng.below(2), &mut rng);
            mutations.extend(on_stdout.iter().map(|m| format!("stdout:{m}")));
            mutations.extend(on_stderr.iter().map(|m| format!("stderr:{m}")));
            Input::Streams { stdout, stderr }
        }
        _ => {
            let (combined, applied) = mutate(&log.combined, donor, count, &mut rng);
            mutations.extend(applied.iter().map(|m| m.to_string()));
            if rng.one_in(2) {
                let (stdout, stderr) = split_streams(&combined, &mut rng);
                Input::Streams { stdout, stderr }
            } else {
                Input::Combined(combined)
            }
        }
    };
    let mut artifacts = Vec::new();
    if rng.one_in(4) {
        for k in 0..rng.between(1, 2) {
            let artifact: &ArtifactSeed = rng.pick(&corpus.artifacts);
            let (bytes, applied) = mutate(&artifact.bytes, &artifact.bytes, rng.below(4), &mut rng);
            mutations.extend(applied.iter().map(|m| format!("{}:{m}", artifact.file_name)));
            let path = artifact_dir.join(format!("{id}-{k}-{}", artifact.file_name));
            std::fs::write(&path, &bytes).expect("artifact written");
            artifacts.push(Artifact { seed: artifact.name.clone(), bytes, path: path.to_string_lossy().into_owned() });
        }
    }
    let input = match input {
        Input::Combined(log) if !artifacts.is_empty() => Input::Streams { stdout: log, stderr: Vec::new() },
        input => input,
    };
    let (exit, cwd) = (rng.below(2) as i32, rng.pick(&CWDS));
    Case { id, seed: log.name.clone(), mutations, input, exit, cwd, artifacts }
}

thread_local! {
    /// Where and why the last panic on this thread happened, kept by the hook.
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
    /// True while this thread runs a parser: its panics are findings, not noise for stderr.
    static CATCHING: RefCell<bool> = const { RefCell::new(false) };
}

fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if CATCHING.with(|c| *c.borrow()) {
                let location = info.location().map_or("?".to_string(), |l| format!("{}:{}", l.file(), l.line()));
                let payload = info.payload();
                let message = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                LAST_PANIC.with(|p| *p.borrow_mut() = Some(format!("panicked at {location}: {message}")));
            } else {
                default(info);
            }
        }));
    });
}

/// Runs the tool's parser on the case; a panic comes back as its location and message.
fn run(tool: &Tool, case: &Case) -> Result<ParseResult, String> {
    CATCHING.with(|c| *c.borrow_mut() = true);
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let parser = tool.plugin.parser(&ParseContext::new(&tool.name, case.cwd));
        match &case.input {
            Input::Combined(log) => parse_log(parser, log, case.exit),
            Input::Streams { stdout, stderr } => parse_streams(parser, stdout, stderr, &case.end()),
        }
    }));
    CATCHING.with(|c| *c.borrow_mut() = false);
    outcome.map_err(|_| LAST_PANIC.with(|p| p.borrow_mut().take()).unwrap_or_else(|| "panicked".to_string()))
}

/// The properties every result must have.
fn check(result: &ParseResult, lines: u64) -> Result<(), String> {
    for (i, d) in result.diagnostics.iter().enumerate() {
        if d.message.trim().is_empty() {
            return Err(format!("diagnostic {i} has no message: {d:?}"));
        }
        if d.message.len() > MAX_TEXT {
            return Err(format!("diagnostic {i}'s message is {} bytes", d.message.len()));
        }
        if let Some(note) = d.notes.iter().find(|n| n.len() > MAX_TEXT) {
            return Err(format!("diagnostic {i} has a note of {} bytes", note.len()));
        }
        if d.file.as_deref().is_some_and(|f| f.trim().is_empty())
            || d.test.as_deref().is_some_and(|t| t.trim().is_empty())
        {
            return Err(format!("diagnostic {i} names a blank file or test: {d:?}"));
        }
        if let Some(range) = d.log_range
            && (range.start == 0 || range.start > range.end || range.end > lines)
        {
            return Err(format!("diagnostic {i}'s log range {range:?} is not within the {lines} lines fed"));
        }
    }
    let mut seen = std::collections::HashSet::new();
    for name in &result.failed_tests {
        if name.trim().is_empty() {
            return Err("a failed test without a name".to_string());
        }
        if !seen.insert(name) {
            return Err(format!("failed test {name:?} is listed twice"));
        }
    }
    Ok(())
}

/// What went wrong, keyed so that one bug hit a thousand times is reported once.
#[derive(Default)]
struct Findings {
    first: BTreeMap<String, String>,
    hits: BTreeMap<String, u64>,
}

impl Findings {
    fn add(&mut self, tool: &Tool, case: &Case, problem: String) {
        let key = format!("{}: {}", tool.plugin_name, problem_kind(&problem));
        *self.hits.entry(key.clone()).or_default() += 1;
        if self.first.contains_key(&key) || self.first.len() >= MAX_FINDINGS {
            return;
        }
        let files = save(&tool.name, case, "");
        self.first.insert(key, format!("{}: {problem}\n    on {}\n    input: {files}", tool.name, case.describe()));
    }

    fn merge(&mut self, other: Findings) {
        for (key, hits) in other.hits {
            *self.hits.entry(key).or_default() += hits;
        }
        for (key, first) in other.first {
            self.first.entry(key).or_insert(first);
        }
    }

    fn report(&self) -> Option<String> {
        if self.first.is_empty() {
            return None;
        }
        let mut text = format!("{} distinct problems:\n", self.hits.len());
        for (key, hits) in &self.hits {
            let first = self.first.get(key).map_or("(not saved: too many findings)", String::as_str);
            text.push_str(&format!("- [{hits}×] {first}\n"));
        }
        Some(text)
    }
}

/// The part of a problem that names the bug, without the details of one input: a panic's
/// location, or the property that failed.
fn problem_kind(problem: &str) -> String {
    match problem.strip_prefix("panicked at ") {
        Some(rest) => rest.split(": ").next().unwrap_or(rest).to_string(),
        None => {
            let words = problem.split_whitespace().filter(|w| !w.chars().any(|c| c.is_ascii_digit()));
            words.take(6).collect::<Vec<_>>().join(" ")
        }
    }
}

/// Writes the case's input under `target/fuzz-failures/` and returns the paths written.
fn save(tool: &str, case: &Case, tag: &str) -> String {
    let dir = target_dir().join("fuzz-failures");
    std::fs::create_dir_all(&dir).expect("target/fuzz-failures can be created");
    let base = format!("{tag}{tool}-{}", case.id);
    let mut written = Vec::new();
    let mut write = |name: String, bytes: &[u8]| {
        let path = dir.join(name);
        std::fs::write(&path, bytes).expect("failure input written");
        written.push(path.display().to_string());
    };
    match &case.input {
        Input::Combined(log) => write(format!("{base}.log"), log),
        Input::Streams { stdout, stderr } => {
            write(format!("{base}.log"), stdout);
            write(format!("{base}.stderr.log"), stderr);
        }
    }
    for (k, artifact) in case.artifacts.iter().enumerate() {
        let file_name = Path::new(&artifact.path).file_name().map(|n| n.to_string_lossy().into_owned());
        write(format!("{base}.artifact{k}-{}", file_name.unwrap_or_default()), &artifact.bytes);
    }
    written.join(", ")
}

/// What one worker found in its share of the cases.
#[derive(Default)]
struct Share {
    findings: Findings,
    slowest: Option<(Duration, String)>,
    slow_cases: Vec<String>,
}

/// Runs the cases `ids` through every tool.
fn fuzz_share(corpus: &Corpus, tools: &[Tool], seed: u64, ids: impl Iterator<Item = u64>, scratch: &Path) -> Share {
    let slow = env_number("BUILDVISE_FUZZ_SLOW_MS").map(Duration::from_millis);
    let mut share = Share::default();
    for id in ids {
        let case = make_case(corpus, seed, id, scratch);
        let lines = case.lines();
        for tool in tools {
            let clock = Instant::now();
            let outcome = run(tool, &case);
            let took = clock.elapsed();
            if share.slowest.as_ref().is_none_or(|(d, _)| took > *d) {
                share.slowest = Some((took, format!("{} on {} ({} bytes)", tool.name, case.describe(), case.size())));
            }
            if slow.is_some_and(|limit| took > limit) {
                let files = save(&tool.name, &case, "slow-");
                share.slow_cases.push(format!("{took:?} {} on {}: {files}", tool.name, case.describe()));
            }
            let result = match outcome {
                Ok(result) => result,
                Err(panic) => {
                    share.findings.add(tool, &case, panic);
                    continue;
                }
            };
            if let Err(problem) = check(&result, lines) {
                share.findings.add(tool, &case, problem);
            } else if id % 8 == 0 && run(tool, &case).is_ok_and(|again| again != result) {
                share.findings.add(tool, &case, "the same input gave a different result".to_string());
            }
        }
        for artifact in &case.artifacts {
            let _ = std::fs::remove_file(&artifact.path);
        }
    }
    share
}

#[test]
fn mutated_seeds_never_break_a_parser() {
    install_panic_hook();
    let seed = env_number("BUILDVISE_FUZZ_SEED").unwrap_or(DEFAULT_SEED);
    let iterations = env_number("BUILDVISE_FUZZ_ITERATIONS").unwrap_or(DEFAULT_ITERATIONS);
    let corpus = corpus();
    let tools = tools();
    let scratch = tempfile::Builder::new().prefix("fuzz-artifacts").tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let started = Instant::now();
    // Case `id` is the same whichever worker runs it, so a run replays on any machine.
    let shares: Vec<Share> = std::thread::scope(|scope| {
        let (corpus, tools, scratch) = (&corpus, &tools, scratch.path());
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let ids = (w..iterations).step_by(workers as usize);
                scope.spawn(move || fuzz_share(corpus, tools, seed, ids, scratch))
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a worker outside the parsers panicked")).collect()
    });
    let mut findings = Findings::default();
    let mut slowest: Option<(Duration, String)> = None;
    for share in shares {
        findings.merge(share.findings);
        if share.slowest.as_ref().is_some_and(|(d, _)| slowest.as_ref().is_none_or(|(best, _)| d > best)) {
            slowest = share.slowest;
        }
        for line in &share.slow_cases {
            eprintln!("slow: {line}");
        }
    }
    eprintln!(
        "fuzz: seed {seed}, {iterations} cases × {} tools in {:?} on {workers} threads; slowest: {}",
        tools.len(),
        started.elapsed(),
        slowest.map_or("-".to_string(), |(d, what)| format!("{d:?} {what}"))
    );
    if let Some(report) = findings.report() {
        panic!("fuzzing (BUILDVISE_FUZZ_SEED={seed}) found {report}");
    }
}

#[test]
fn unmutated_seeds_give_sane_results() {
    install_panic_hook();
    let corpus = corpus();
    let scratch = tempfile::Builder::new().prefix("fuzz-seeds").tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let mut findings = Findings::default();
    let mut id = 0;
    for tool in tools() {
        for log in &corpus.logs {
            let case_dir = log.name.clone() + "/";
            let own_artifacts: Vec<&ArtifactSeed> =
                corpus.artifacts.iter().filter(|a| a.name.starts_with(&case_dir)).collect();
            let mut inputs = vec![Input::Combined(log.combined.clone())];
            if let Some((stdout, stderr)) = &log.streams {
                inputs.push(Input::Streams { stdout: stdout.clone(), stderr: stderr.clone() });
            }
            for input in inputs {
                let artifacts = own_artifacts
                    .iter()
                    .map(|a| {
                        let path = scratch.path().join(format!("{id}-{}", a.file_name));
                        std::fs::write(&path, &a.bytes).expect("artifact written");
                        Artifact {
                            seed: a.name.clone(),
                            bytes: a.bytes.clone(),
                            path: path.to_string_lossy().into_owned(),
                        }
                    })
                    .collect::<Vec<_>>();
                let input = match input {
                    Input::Combined(log) if !artifacts.is_empty() => Input::Streams { stdout: log, stderr: Vec::new() },
                    input => input,
                };
                let case = Case {
                    id,
                    seed: log.name.clone(),
                    mutations: Vec::new(),
                    input,
                    exit: 1,
                    cwd: "/home/dev/shop",
                    artifacts,
                };
                id += 1;
                let result = match run(&tool, &case) {
                    Ok(result) => result,
                    Err(panic) => {
                        findings.add(&tool, &case, panic);
                        continue;
                    }
                };
                let summary = result.summary.as_ref();
                let sums_up = summary.is_none_or(|s| s.total == 0 || s.passed + s.failed + s.skipped <= s.total);
                let problem = check(&result, case.lines())
                    .err()
                    .or_else(|| (!sums_up).then(|| format!("the summary does not add up: {summary:?}")));
                if let Some(problem) = problem {
                    findings.add(&tool, &case, problem);
                }
            }
        }
    }
    if let Some(report) = findings.report() {
        panic!("unmutated seeds: {report}");
    }
}
