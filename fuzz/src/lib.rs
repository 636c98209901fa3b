//! A corpus-seeded mutation fuzzer for the plugins' parsers, small enough to run in every
//! `cargo test`.
//!
//! What it is for: finding the inputs real tools never print but a stored log can still hold (a
//! log cut mid-character, a line a test printed 10 MB long, a `file:line` whose line number does
//! not fit in `u32`, a format repeated 50 000 times) and that make a parser panic, produce
//! nonsense, or slow down out of proportion. The seeds are the captured logs of
//! `tests/fixtures/corpus/` and the crafted excerpts and artifacts of `fuzz/seeds/`, which follow
//! the same layout (`<toolchain>/<case>/combined.log`, optional `stdout.log`/`stderr.log`, and
//! artifacts such as `junit.xml`, `results.trx`, `TestResult.xml`, `jest-results.json`).
//!
//! This crate holds the engine: the seeded PRNG ([`Rng`]), the seeds ([`Corpus`]) and the
//! mutations ([`Mutation`]). The harness that feeds every plugin's parsers and checks what they
//! return is the integration test `tests/parsers.rs`; see its documentation for the properties.
//!
//! What it is not: a coverage-guided fuzzer (no instrumentation, no feedback; cargo-fuzz or AFL
//! find deeper bugs given hours), a correctness test (the snapshot and unit tests say what the
//! right answer is; this only says an answer stays sane), or a benchmark (`bench/` measures
//! speed). It needs no network and no fuzzing framework.
//!
//! # Budget
//!
//! The test is deterministic: the same seed and iteration count replay the same inputs, on any
//! number of threads. By default it runs 400 cases from a fixed seed, each through all 12 tools,
//! about twelve seconds in a debug build on two cores. Two variables change that for longer runs:
//!
//! - `BUILDVISE_FUZZ_ITERATIONS=N`: how many mutated inputs to try;
//! - `BUILDVISE_FUZZ_SEED=S`: the starting seed (a `u64`), for a different sequence;
//!
//! and two more help while hunting:
//!
//! - `BUILDVISE_FUZZ_CORPUS=DIR[:DIR…]`: more seed directories in the same layout, such as the
//!   project's shared corpus;
//! - `BUILDVISE_FUZZ_SLOW_MS=N`: lists (without failing) every input a parser took longer than
//!   N ms on, and writes it under `target/fuzz-failures/`; CI never sets it.
//!
//! For example `BUILDVISE_FUZZ_ITERATIONS=2000000 cargo test --release -p buildvise-fuzz`, with
//! `CARGO_PROFILE_RELEASE_OVERFLOW_CHECKS=true` so that arithmetic overflow still panics.

use std::path::{Path, PathBuf};

/// splitmix64: tiny, fast, and good enough to pick mutations. Each case gets its own stream
/// ([`Rng::for_case`]) so that one case replays without the ones before it.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The generator of case `index` of a run started from `seed`.
    pub fn for_case(seed: u64, index: u64) -> Self {
        let mut mixer = Rng(seed ^ index.wrapping_mul(0xA24B_AED4_963E_E407));
        Rng(mixer.next_u64())
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n`; 0 when `n` is 0.
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { (self.next_u64() % n as u64) as usize }
    }

    /// A number in `low..=high`.
    pub fn between(&mut self, low: usize, high: usize) -> usize {
        low + self.below(high - low + 1)
    }

    /// True once in `n` times.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// A captured or crafted log.
#[derive(Debug, Clone)]
pub struct LogSeed {
    /// `<toolchain>/<case>`, relative to its corpus directory.
    pub name: String,
    pub combined: Vec<u8>,
    /// The same run with stdout and stderr captured apart, when the case has them.
    pub streams: Option<(Vec<u8>, Vec<u8>)>,
}

/// A report file a run wrote next to its log.
#[derive(Debug, Clone)]
pub struct ArtifactSeed {
    /// `<toolchain>/<case>/<file>`.
    pub name: String,
    /// The file name, kept when a mutated copy is written: parsers choose reports by extension.
    pub file_name: String,
    pub bytes: Vec<u8>,
}

#[derive(Debug, Default)]
pub struct Corpus {
    pub logs: Vec<LogSeed>,
    pub artifacts: Vec<ArtifactSeed>,
}

/// Extensions of the report files the plugins read.
const ARTIFACT_EXTENSIONS: [&str; 3] = ["xml", "trx", "json"];

impl Corpus {
    /// Reads every case under each directory, in a stable order. Sources under a case's
    /// `project/` and its `case.json` (the expected answer) are not seeds.
    pub fn load(dirs: &[PathBuf]) -> std::io::Result<Corpus> {
        let mut corpus = Corpus::default();
        for dir in dirs {
            let mut cases = Vec::new();
            find_cases(dir, &mut cases)?;
            cases.sort();
            for case in cases {
                corpus.add_case(dir, &case)?;
            }
        }
        Ok(corpus)
    }

    fn add_case(&mut self, root: &Path, case: &Path) -> std::io::Result<()> {
        let name = case.strip_prefix(root).unwrap_or(case).to_string_lossy().replace('\\', "/");
        let stdout = std::fs::read(case.join("stdout.log")).ok();
        let stderr = std::fs::read(case.join("stderr.log")).ok();
        self.logs.push(LogSeed {
            name: name.clone(),
            combined: std::fs::read(case.join("combined.log"))?,
            streams: stdout.zip(stderr),
        });
        let mut files = std::fs::read_dir(case)?.collect::<Result<Vec<_>, _>>()?;
        files.sort_by_key(|entry| entry.file_name());
        for entry in files {
            let file_name = entry.file_name().to_string_lossy().into_owned();
            let extension = file_name.rsplit_once('.').map_or("", |(_, ext)| ext);
            if entry.file_type()?.is_file() && file_name != "case.json" && ARTIFACT_EXTENSIONS.contains(&extension) {
                self.artifacts.push(ArtifactSeed {
                    name: format!("{name}/{file_name}"),
                    file_name,
                    bytes: std::fs::read(entry.path())?,
                });
            }
        }
        Ok(())
    }
}

/// Directories holding a `combined.log`, below `dir`.
fn find_cases(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    if dir.join("combined.log").is_file() {
        out.push(dir.to_path_buf());
        return Ok(());
    }
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() && entry.file_name() != "project" {
            find_cases(&entry.path(), out)?;
        }
    }
    Ok(())
}

/// One way of damaging an input. Most work on lines, since parsers read lines; a few work on raw
/// byte spans, which is what reaches inside a one-line XML or JSON report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mutation {
    /// Overwrites a few bytes of a line with random ones.
    FlipBytes,
    /// Inserts a multibyte character, mostly next to `:`, `\`, `/`, `(`, `,` or a digit, where
    /// parsers cut locations and paths.
    InsertMultibyte,
    /// Inserts bytes that are not UTF-8 (a lone continuation byte, a cut sequence, a surrogate).
    InsertInvalidUtf8,
    /// Inserts a terminal escape sequence, whole or cut short.
    InsertEscape,
    /// Cuts a line at a random byte, maybe inside a character.
    TruncateLine,
    /// Ends the whole input at a random byte: a log cut short.
    TruncateInput,
    DuplicateLine,
    DeleteLines,
    SwapLines,
    /// Copies a few lines of another seed in: formats that never meet in real logs.
    SpliceOtherSeed,
    /// Replaces a number with one that overflows `u32`, `u64` or everything.
    HugeNumber,
    /// Makes a line tens of KiB to a MiB long.
    LongLine,
    /// Inserts empty or blank lines.
    EmptyLines,
    /// Inserts `\r` inside lines, or turns every line ending into `\r\n`.
    CarriageReturns,
    /// Repeats a block of lines hundreds to thousands of times: what makes quadratic work show.
    RepeatBlock,
    /// Repeats a byte span many times in place: elements of a one-line XML or JSON report.
    RepeatSpan,
}

impl Mutation {
    pub const ALL: [Mutation; 16] = [
        Mutation::FlipBytes,
        Mutation::InsertMultibyte,
        Mutation::InsertInvalidUtf8,
        Mutation::InsertEscape,
        Mutation::TruncateLine,
        Mutation::TruncateInput,
        Mutation::DuplicateLine,
        Mutation::DeleteLines,
        Mutation::SwapLines,
        Mutation::SpliceOtherSeed,
        Mutation::HugeNumber,
        Mutation::LongLine,
        Mutation::EmptyLines,
        Mutation::CarriageReturns,
        Mutation::RepeatBlock,
        Mutation::RepeatSpan,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Mutation::FlipBytes => "flip-bytes",
            Mutation::InsertMultibyte => "insert-multibyte",
            Mutation::InsertInvalidUtf8 => "insert-invalid-utf8",
            Mutation::InsertEscape => "insert-escape",
            Mutation::TruncateLine => "truncate-line",
            Mutation::TruncateInput => "truncate-input",
            Mutation::DuplicateLine => "duplicate-line",
            Mutation::DeleteLines => "delete-lines",
            Mutation::SwapLines => "swap-lines",
            Mutation::SpliceOtherSeed => "splice-other-seed",
            Mutation::HugeNumber => "huge-number",
            Mutation::LongLine => "long-line",
            Mutation::EmptyLines => "empty-lines",
            Mutation::CarriageReturns => "carriage-returns",
            Mutation::RepeatBlock => "repeat-block",
            Mutation::RepeatSpan => "repeat-span",
        }
    }
}

/// Inputs are not grown past this, the most of one line the host hands a parser: enough for
/// any line-length or repetition problem to show, small enough for thousands of cases a minute.
pub const MAX_INPUT: usize = 4 << 20;

const MULTIBYTE: [&str; 10] = ["ä", "é", "ß", "日本", "🦀", "\u{200b}", "İ", "ǅ", "\u{fffd}", "\u{301}"];

const INVALID_UTF8: [&[u8]; 7] =
    [b"\xff", b"\x80", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xf0\x9f\xa6", b"\xc0\xaf"];

const ESCAPES: [&[u8]; 6] = [b"\x1b[31m", b"\x1b[0m", b"\x1b]8;;file:///x\x07", b"\x1b[", b"\x1b]8;;", b"\x1b"];

const HUGE_NUMBERS: [&str; 8] = [
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999999999999999999999",
    "0",
    "-1",
    "00000000000000000000000000000000000000001",
];

/// Bytes next to which a multibyte character does the most damage.
fn is_cut_point(b: u8) -> bool {
    matches!(b, b':' | b'\\' | b'/' | b'(' | b')' | b',' | b'[' | b']' | b'\'' | b'"' | b' ') || b.is_ascii_digit()
}

/// Applies `count` random mutations to `input`, taking spliced lines from `donor`. Returns the
/// damaged input and the names of the mutations, in order.
pub fn mutate(input: &[u8], donor: &[u8], count: usize, rng: &mut Rng) -> (Vec<u8>, Vec<&'static str>) {
    let mut data = input.to_vec();
    let mut applied = Vec::with_capacity(count);
    for _ in 0..count {
        let mutation = *rng.pick(&Mutation::ALL);
        apply(mutation, &mut data, donor, rng);
        applied.push(mutation.name());
    }
    (data, applied)
}

/// Applies one mutation.
pub fn apply(mutation: Mutation, data: &mut Vec<u8>, donor: &[u8], rng: &mut Rng) {
    match mutation {
        Mutation::TruncateInput => data.truncate(rng.below(data.len() + 1)),
        Mutation::RepeatSpan => repeat_span(data, rng),
        Mutation::CarriageReturns if rng.one_in(4) => {
            let mut crlf = Vec::with_capacity(data.len() + data.len() / 16);
            for &b in data.iter() {
                if b == b'\n' {
                    crlf.push(b'\r');
                }
                crlf.push(b);
            }
            *data = crlf;
        }
        _ => {
            let mut lines = Lines::split(data);
            lines.mutate(mutation, donor, rng);
            *data = lines.join();
        }
    }
    data.truncate(MAX_INPUT);
}

fn repeat_span(data: &mut Vec<u8>, rng: &mut Rng) {
    if data.is_empty() {
        return;
    }
    let start = rng.below(data.len());
    let len = rng.between(1, (data.len() - start).min(2048));
    let times = repetitions(rng).min(MAX_INPUT / len.max(1) / 2);
    let span = data[start..start + len].to_vec();
    let mut out = Vec::with_capacity(data.len() + span.len() * times);
    out.extend_from_slice(&data[..start]);
    for _ in 0..times {
        out.extend_from_slice(&span);
    }
    out.extend_from_slice(&data[start + len..]);
    *data = out;
}

/// An input as lines, with whether it ended in a newline.
struct Lines {
    lines: Vec<Vec<u8>>,
    trailing_newline: bool,
}

impl Lines {
    fn split(data: &[u8]) -> Lines {
        let trailing_newline = data.ends_with(b"\n");
        let body = data.strip_suffix(b"\n").unwrap_or(data);
        let lines =
            if data.is_empty() { Vec::new() } else { body.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect() };
        Lines { lines, trailing_newline }
    }

    fn join(self) -> Vec<u8> {
        let mut out = self.lines.join(&b'\n');
        if self.trailing_newline && !self.lines.is_empty() {
            out.push(b'\n');
        }
        out
    }

    fn size(&self) -> usize {
        self.lines.iter().map(|l| l.len() + 1).sum()
    }

    /// A random line to damage.
    fn any_line(&mut self, rng: &mut Rng) -> &mut Vec<u8> {
        let i = rng.below(self.lines.len());
        &mut self.lines[i]
    }

    fn mutate(&mut self, mutation: Mutation, donor: &[u8], rng: &mut Rng) {
        // Every mutation below needs a line to work on, even in an empty input.
        if self.lines.is_empty() {
            self.lines.push(Vec::new());
        }
        match mutation {
            Mutation::FlipBytes => {
                let line = self.any_line(rng);
                for _ in 0..rng.between(1, 4) {
                    if !line.is_empty() {
                        let at = rng.below(line.len());
                        line[at] = rng.next_u64() as u8;
                    }
                }
            }
            Mutation::InsertMultibyte => {
                let text = rng.pick(&MULTIBYTE).as_bytes();
                let line = self.any_line(rng);
                let at = insertion_point(line, rng);
                line.splice(at..at, text.iter().copied());
            }
            Mutation::InsertInvalidUtf8 => {
                let bytes = *rng.pick(&INVALID_UTF8);
                let line = self.any_line(rng);
                let at = insertion_point(line, rng);
                line.splice(at..at, bytes.iter().copied());
            }
            Mutation::InsertEscape => {
                let bytes = *rng.pick(&ESCAPES);
                let line = self.any_line(rng);
                let at = rng.below(line.len() + 1);
                line.splice(at..at, bytes.iter().copied());
            }
            Mutation::TruncateLine => {
                let line = self.any_line(rng);
                line.truncate(rng.below(line.len() + 1));
            }
            Mutation::DuplicateLine => {
                let line = self.any_line(rng).clone();
                let at = rng.below(self.lines.len() + 1);
                self.lines.insert(at, line);
            }
            Mutation::DeleteLines => {
                let start = rng.below(self.lines.len());
                let end = (start + rng.between(1, 8)).min(self.lines.len());
                self.lines.drain(start..end);
            }
            Mutation::SwapLines => {
                let (a, b) = (rng.below(self.lines.len()), rng.below(self.lines.len()));
                self.lines.swap(a, b);
            }
            Mutation::SpliceOtherSeed => {
                let donor = Lines::split(donor);
                if donor.lines.is_empty() {
                    return;
                }
                let start = rng.below(donor.lines.len());
                let end = (start + rng.between(1, 12)).min(donor.lines.len());
                let at = rng.below(self.lines.len() + 1);
                self.lines.splice(at..at, donor.lines[start..end].iter().cloned());
            }
            Mutation::HugeNumber => self.huge_number(rng),
            Mutation::LongLine => {
                let target =
                    if rng.one_in(8) { rng.between(1 << 20, MAX_INPUT) } else { rng.between(4 << 10, 64 << 10) };
                let line = self.any_line(rng);
                let unit = if line.is_empty() || rng.one_in(3) { b"x:1 ".to_vec() } else { line.clone() };
                while line.len() < target {
                    line.extend_from_slice(&unit);
                }
            }
            Mutation::EmptyLines => {
                let at = rng.below(self.lines.len() + 1);
                let blank: &[u8] = if rng.one_in(2) { b"" } else { b"   \t" };
                let count = rng.between(1, 50);
                self.lines.splice(at..at, std::iter::repeat_n(blank.to_vec(), count));
            }
            Mutation::CarriageReturns => {
                let line = self.any_line(rng);
                let at = rng.below(line.len() + 1);
                line.insert(at, b'\r');
            }
            Mutation::RepeatBlock => {
                let start = rng.below(self.lines.len());
                let end = (start + rng.between(1, 30)).min(self.lines.len());
                let block: Vec<Vec<u8>> = self.lines[start..end].to_vec();
                let block_size: usize = block.iter().map(|l| l.len() + 1).sum();
                let room = MAX_INPUT.saturating_sub(self.size()) / block_size.max(1);
                let times = repetitions(rng).min(room);
                let repeated = (0..times).flat_map(|_| block.iter().cloned()).collect::<Vec<_>>();
                self.lines.splice(end..end, repeated);
            }
            Mutation::TruncateInput | Mutation::RepeatSpan => unreachable!("whole-input mutations"),
        }
    }

    /// Replaces a run of digits, preferring lines that look like `file:line:col` or `(line,col)`.
    fn huge_number(&mut self, rng: &mut Rng) {
        let number = rng.pick(&HUGE_NUMBERS).as_bytes();
        for _ in 0..16 {
            let line = self.any_line(rng);
            let runs = digit_runs(line);
            if runs.is_empty() {
                continue;
            }
            let (start, end) = *rng.pick(&runs);
            line.splice(start..end, number.iter().copied());
            return;
        }
    }
}

/// How many times to repeat something: mostly a few dozen, one time in eight thousands, which is
/// where work that grows faster than the input shows while most cases stay cheap.
fn repetitions(rng: &mut Rng) -> usize {
    if rng.one_in(8) { rng.between(500, 5000) } else { rng.between(2, 100) }
}

/// Where to insert into `line`: next to a cut point three times in four, else anywhere.
fn insertion_point(line: &[u8], rng: &mut Rng) -> usize {
    if !rng.one_in(4) {
        let points: Vec<usize> = line.iter().enumerate().filter(|(_, b)| is_cut_point(**b)).map(|(i, _)| i).collect();
        if !points.is_empty() {
            return rng.pick(&points) + rng.below(2);
        }
    }
    rng.below(line.len() + 1)
}

/// `(start, end)` of each run of ASCII digits.
fn digit_runs(line: &[u8]) -> Vec<(usize, usize)> {
    let mut runs = Vec::new();
    let mut i = 0;
    while i < line.len() {
        if line[i].is_ascii_digit() {
            let start = i;
            while i < line.len() && line[i].is_ascii_digit() {
                i += 1;
            }
            runs.push((start, i));
        } else {
            i += 1;
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_replay_and_differ() {
        let a: Vec<u64> = (0..4).map(|_| Rng::for_case(7, 3).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        assert_ne!(Rng::for_case(7, 3).next_u64(), Rng::for_case(7, 4).next_u64());
        assert_ne!(Rng::for_case(7, 3).next_u64(), Rng::for_case(8, 3).next_u64());
    }

    #[test]
    fn lines_round_trip() {
        for input in [&b""[..], b"\n", b"a", b"a\n", b"a\n\nb", b"a\nb\n"] {
            assert_eq!(Lines::split(input).join(), input, "{:?}", String::from_utf8_lossy(input));
        }
    }

    #[test]
    fn huge_numbers_replace_digit_runs() {
        let mut data = b"src/a.rs:12:5: error\n".to_vec();
        let mut rng = Rng::new(1);
        apply(Mutation::HugeNumber, &mut data, b"", &mut rng);
        let text = String::from_utf8(data).expect("still text");
        assert!(HUGE_NUMBERS.iter().any(|n| text.contains(n)), "{text}");
        assert_eq!(digit_runs(b"a12b3"), [(1, 3), (4, 5)]);
    }

    #[test]
    fn every_mutation_survives_empty_and_tiny_inputs() {
        let mut rng = Rng::new(42);
        for mutation in Mutation::ALL {
            for input in [&b""[..], b"\n", b"x", "é:1\n".as_bytes()] {
                let mut data = input.to_vec();
                apply(mutation, &mut data, b"donor line\n", &mut rng);
                assert!(data.len() <= MAX_INPUT, "{}", mutation.name());
            }
        }
    }

    #[test]
    fn growth_stays_bounded() {
        let mut rng = Rng::new(9);
        let mut data = vec![b'y'; 1 << 20];
        data.push(b'\n');
        for _ in 0..20 {
            apply(Mutation::RepeatBlock, &mut data, b"", &mut rng);
            apply(Mutation::RepeatSpan, &mut data, b"", &mut rng);
        }
        assert!(data.len() <= MAX_INPUT);
    }
}
