//! Reading whatever an npm script printed.
//!
//! The parser cannot know which tool a script runs, so each format has a recogniser that spots
//! its own lines, and [`NpmParser`] offers every line to them in turn until one takes it: npm's
//! lines first (they also mark where one script's output ends), then one-line JSON reports, then
//! Node's own crash reports and process warnings (whatever script ran node), then the bundlers
//! (webpack, esbuild, Vite, Next.js), Prettier, tsc, ESLint, Jest, Vitest, Mocha and node:test.
//! Recognisers keep only the block they are reading, never the lines they passed over.
//!
//! Most lines mean nothing to any recogniser, so dispatch throws them away on their bytes, before
//! they are decoded as text. A recogniser with a block open sees every line. The others are
//! looked up by the line's first four bytes, and its first four after the indentation, in tables
//! made at compile time from the prefixes each recogniser's lines start with ([`FILTERS`],
//! [`Dispatch`]); the few whose prefixes start so then test the line's bytes themselves
//! ([`Recogniser::may_start`]). The three whose lines no start tells (tsc, Node's crash headers,
//! ESLint's file headers) test every line, called directly. A line none of them wants costs eight
//! table loads and those three tests, and no allocation; only a line some recogniser may want is
//! decoded, and offered to those recognisers alone.

mod diff;
mod esbuild;
mod eslint;
mod frames;
mod jest;
mod json_report;
mod mocha;
mod next;
mod node_crash;
mod node_test;
mod node_warning;
mod npm;
mod prettier;
mod sink;
mod tsc;
mod vite;
mod vitest;
mod webpack;

use buildvise_plugin_api::{Line, ParseContext, ParseResult, Parser, RunEnd};
use sink::Sink;

/// One line as recognisers see it: text without ANSI escapes, and its number in the stored log.
pub struct Ln<'a> {
    pub text: &'a str,
    /// `text` without its indentation. This and `trimmed` are worked out once for every
    /// recogniser: each trimming the line again cost more than its own test of it.
    pub unindented: &'a str,
    /// `text` without the whitespace around it.
    pub trimmed: &'a str,
    pub number: u64,
}

impl<'a> Ln<'a> {
    /// The line `head` read, as decoded into `text`.
    fn new(text: &'a str, head: &Head<'_>, number: u64) -> Self {
        // Valid text is the line's bytes themselves, borrowed: its indentation is the one `head`
        // found.
        let unindented = if std::ptr::eq(text.as_bytes(), head.bytes) {
            &text[text.len() - head.unindented.len()..]
        } else {
            text.trim_start()
        };
        Ln { text, unindented, trimmed: trim(unindented), number }
    }
}

/// A line's bytes, as dispatch tests them before the line is decoded as text. A prefix test
/// gives the same answer on the bytes as on the text: decoding only replaces invalid bytes,
/// which no prefix holds.
pub struct Head<'a> {
    pub bytes: &'a [u8],
    /// The bytes of [`Ln::unindented`].
    pub unindented: &'a [u8],
}

impl<'a> Head<'a> {
    #[inline(always)]
    fn new(bytes: &'a [u8]) -> Self {
        // Most lines start with neither whitespace nor a character beyond ASCII.
        if bytes.first().is_some_and(u8::is_ascii_graphic) {
            return Head { bytes, unindented: bytes };
        }
        // Most indentation is a few spaces, counted eight at once, before a character that ends it.
        let spaces = bytes.first_chunk().map_or(0, |word| {
            (u64::from_le_bytes(*word) ^ u64::from_ne_bytes([b' '; 8])).trailing_zeros() as usize / 8
        });
        let rest = match bytes.get(spaces) {
            Some(&b) if !is_ascii_space(b) => &bytes[spaces..],
            _ => skip_ascii_space(bytes),
        };
        let unindented = if may_start_with_wide_space(rest) { trim_wide_space(rest) } else { rest };
        Head { bytes, unindented }
    }

    /// Whether the line may be a one-line JSON report (ESLint's, Jest's, Vitest's), as far as its
    /// first byte tells: the reports' own tests of it cost more.
    fn may_be_json(&self) -> bool {
        matches!(self.bytes.first(), Some(b'[' | b'{'))
    }

    /// Whether the line is empty or only whitespace (an empty [`Ln::trimmed`]).
    fn is_blank(&self) -> bool {
        self.unindented.is_empty()
    }
}

/// Prefixes a recogniser's lines start with, by their first byte: most lines fail on that byte
/// at the cost of one load, and the rest are compared only with the prefixes that start so,
/// eight bytes at once.
pub struct Starts {
    prefixes: &'static [&'static str],
    /// Each prefix's first eight bytes as a word, and the mask of the bytes it has there: a line's
    /// first eight bytes are compared with it at once.
    words: [(u64, u64); 16],
    /// For each byte, the prefixes starting with it, one bit each by index.
    by_first: [u16; 256],
}

impl Starts {
    /// Fails to compile for an empty prefix (which every line would start with), for more than
    /// 16, for a NUL byte in the first eight of one (see [`first_word`]), or for one that starts
    /// with whitespace (a blank line starts nothing: see [`NpmParser::feed`]).
    pub const fn new(prefixes: &'static [&'static str]) -> Self {
        let mut by_first = [0; 256];
        let mut words = [(0, 0); 16];
        let mut i = 0;
        while i < prefixes.len() {
            let prefix = prefixes[i].as_bytes();
            assert!(!is_ascii_space(prefix[0]), "a prefix starts with whitespace");
            by_first[prefix[0] as usize] |= 1 << i;
            words[i] = word_and_mask(prefix);
            i += 1;
        }
        Starts { prefixes, words, by_first }
    }

    /// Whether `bytes` starts with one of the prefixes.
    pub fn test(&self, bytes: &[u8]) -> bool {
        let Some(&first) = bytes.first() else { return false };
        let mut candidates = self.by_first[usize::from(first)];
        // Most lines stop here, before their first word is read.
        if candidates == 0 {
            return false;
        }
        let start = first_word(bytes);
        while candidates != 0 {
            let i = candidates.trailing_zeros() as usize;
            let (word, mask) = self.words[i];
            // A byte at a time past the first eight: a line that gets this far mostly matches, and a
            // call to `memcmp` (what `starts_with` makes of a prefix of unknown length) costs more.
            if start & mask == word
                && self.prefixes[i].as_bytes().get(8..).is_none_or(|rest| {
                    bytes.get(8..8 + rest.len()).is_some_and(|line| line.iter().zip(rest).all(|(b, p)| b == p))
                })
            {
                return true;
            }
            candidates &= candidates - 1;
        }
        false
    }
}

/// [`first_word`] of `bytes` at compile time, and the mask of the bytes it has. Fails to compile
/// for a NUL byte among them, which [`first_word`] could not tell from its end.
const fn word_and_mask(bytes: &[u8]) -> (u64, u64) {
    let (mut word, mut mask) = (0, 0);
    let mut at = 0;
    while at < bytes.len() && at < 8 {
        assert!(bytes[at] != 0, "a NUL byte among the first eight");
        word |= (bytes[at] as u64) << (8 * at);
        mask |= 0xff << (8 * at);
        at += 1;
    }
    (word, mask)
}

/// The first eight bytes of `bytes` as a word, the first the lowest; zeros past its end, which no
/// prefix holds.
fn first_word(bytes: &[u8]) -> u64 {
    match bytes.first_chunk() {
        Some(word) => u64::from_le_bytes(*word),
        None => bytes.iter().rev().fold(0, |word, &b| word << 8 | u64::from(b)),
    }
}

/// The ASCII characters `char::is_whitespace` takes, which `str::trim_start` removes
/// (`u8::is_ascii_whitespace` leaves out the vertical tab).
const fn is_ascii_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t'..=b'\r')
}

/// `bytes` without the ASCII whitespace they start with. Cold: for indentation [`Head::new`]
/// does not tell at once (tabs, more than eight spaces).
#[cold]
fn skip_ascii_space(bytes: &[u8]) -> &[u8] {
    bytes.iter().position(|&b| !is_ascii_space(b)).map_or(&[], |indent| &bytes[indent..])
}

/// Whether `bytes` may start with whitespace beyond ASCII (U+0085, U+00A0, U+1680, U+2000 to
/// U+205F, U+3000), judged on the lead bytes: such indentation is rare enough to decode.
fn may_start_with_wide_space(bytes: &[u8]) -> bool {
    matches!(bytes, [0xc2, 0x85 | 0xa0, ..] | [0xe1, 0x9a, ..] | [0xe2, 0x80 | 0x81, ..] | [0xe3, 0x80, ..])
}

/// `bytes` without the whitespace `str::trim_start` would remove, up to the first invalid byte.
#[cold]
fn trim_wide_space(bytes: &[u8]) -> &[u8] {
    let valid = bytes.utf8_chunks().next().map_or("", |chunk| chunk.valid());
    &bytes[valid.len() - valid.trim_start().len()..]
}

/// One output format.
trait Recogniser {
    /// True while a block is open (or anything a line may end): every line is then offered.
    fn is_open(&self) -> bool;
    /// While no block is open: false when [`Recogniser::feed`] would neither take the line nor
    /// change anything. On the line's bytes, before it is decoded, so a few byte comparisons.
    fn may_start(&self, head: &Head<'_>) -> bool;
    /// Takes the line if it belongs to this format; false leaves it to the others.
    fn feed(&mut self, ln: &Ln<'_>, sink: &mut Sink) -> bool;
    /// Reports the block being read: its output has ended.
    fn flush(&mut self, sink: &mut Sink);
}

/// Where a recogniser's lines may start, as far as their first bytes tell.
enum Filter {
    /// With one of these prefixes.
    Line(&'static Starts),
    /// With one of these prefixes after the indentation.
    Unindented(&'static Starts),
}

/// Each tool recogniser's filter, by index; a recogniser may have several. Those whose lines may
/// start anyhow (Node's crash headers, tsc, ESLint's file headers) have none: their own tests
/// run on every line ([`NpmParser::starting_anywhere`]).
const FILTERS: [(usize, Filter); 11] = [
    (NODE_WARNING, Filter::Line(&node_warning::STARTS)),
    (WEBPACK, Filter::Line(&webpack::STARTS)),
    (ESBUILD, Filter::Line(&esbuild::STARTS)),
    (VITE, Filter::Line(&vite::STARTS)),
    (NEXT, Filter::Line(&next::STARTS)),
    (PRETTIER, Filter::Line(&prettier::STARTS)),
    (JEST, Filter::Unindented(&jest::BULLETS)),
    (JEST, Filter::Unindented(&jest::STARTS)),
    (VITEST, Filter::Unindented(&vitest::STARTS)),
    (MOCHA, Filter::Unindented(&mocha::STARTS)),
    (NODE_TEST, Filter::Unindented(&node_test::STARTS)),
];

/// Bytes at the start of a line that dispatch looks up: with four, most lines that share a first
/// byte with a prefix (`Time:` and `Tests:`, `✓` and `✖`, which share a lead byte) already
/// differ.
const LOOKED_UP: usize = 4;

/// The prefixes of one kind of [`Filter`] (the line's, or after its indentation), each with a
/// bit of its own: a recogniser's bit would let any of its prefixes pass each byte, and one short
/// prefix (node:test's `#`) would let all its lines through.
struct Dispatch {
    /// For each of the first bytes, and each value it may have, the prefixes that have it there
    /// or end before it.
    by_byte: [[u64; 256]; LOOKED_UP],
    /// The index of each prefix's recogniser, by the prefix's bit.
    owner: [u8; 64],
}

static LINE_DISPATCH: Dispatch = Dispatch::new(false);
static UNINDENTED_DISPATCH: Dispatch = Dispatch::new(true);

impl Dispatch {
    /// Fails to compile for more than 64 prefixes.
    const fn new(unindented: bool) -> Self {
        let mut dispatch = Dispatch { by_byte: [[0; 256]; LOOKED_UP], owner: [0; 64] };
        let mut bit = 0;
        let mut i = 0;
        while i < FILTERS.len() {
            let starts = match (&FILTERS[i].1, unindented) {
                (Filter::Line(starts), false) | (Filter::Unindented(starts), true) => Some(*starts),
                _ => None,
            };
            if let Some(starts) = starts {
                let mut p = 0;
                while p < starts.prefixes.len() {
                    dispatch.add(starts.prefixes[p].as_bytes(), bit, FILTERS[i].0);
                    bit += 1;
                    p += 1;
                }
            }
            i += 1;
        }
        dispatch
    }

    const fn add(&mut self, prefix: &[u8], bit: usize, owner: usize) {
        self.owner[bit] = owner as u8;
        let mut at = 0;
        while at < LOOKED_UP {
            let mut byte = 0;
            while byte < 256 {
                if at >= prefix.len() || prefix[at] as usize == byte {
                    self.by_byte[at][byte] |= 1 << bit;
                }
                byte += 1;
            }
            at += 1;
        }
    }

    /// The recognisers one of whose prefixes `bytes` may start with, as far as its first bytes
    /// tell (a line shorter than that, by the bytes it has), one bit each by index.
    fn recognisers(&self, bytes: &[u8]) -> u16 {
        let look_up = |bits, (&b, table): (&u8, &[u64; 256])| bits & table[usize::from(b)];
        let mut prefixes = match bytes.first_chunk::<LOOKED_UP>() {
            Some(start) => start.iter().zip(&self.by_byte).fold(u64::MAX, look_up),
            None if bytes.is_empty() => 0,
            None => bytes.iter().zip(&self.by_byte).fold(u64::MAX, look_up),
        };
        let mut recognisers = 0;
        while prefixes != 0 {
            recognisers |= 1 << self.owner[prefixes.trailing_zeros() as usize];
            prefixes &= prefixes - 1;
        }
        recognisers
    }
}

pub struct NpmParser {
    sink: Sink,
    prev_blank: bool,
    npm: npm::Npm,
    node_crash: node_crash::NodeCrash,
    node_warning: node_warning::NodeWarning,
    webpack: webpack::Webpack,
    esbuild: esbuild::Esbuild,
    vite: vite::Vite,
    next: next::Next,
    prettier: prettier::Prettier,
    tsc: tsc::Tsc,
    eslint: eslint::Eslint,
    jest: jest::Jest,
    vitest: vitest::Vitest,
    mocha: mocha::Mocha,
    node_test: node_test::NodeTest,
    reports: Vec<json_report::Report>,
    /// The recognisers with a block open ([`Recogniser::is_open`]), one bit each by index: kept
    /// up to date after each call that may change it, rather than asked of all on every line.
    open: u16,
    /// The recognisers fed since they were last flushed, one bit each by index: a flush changes
    /// nothing in a recogniser just flushed (nor in one never fed), and npm's lines, which flush
    /// them all, come several in a row.
    unflushed: u16,
    /// A parser of one format (`formats = ["tsc"]` in a config file): the index of its
    /// recogniser (see [`NpmParser::recogniser`]); None reads everything.
    only: Option<usize>,
}

/// Each tool recogniser's index: the order a line is offered to them, and its bit in masks of
/// them.
const NODE_CRASH: usize = 0;
const NODE_WARNING: usize = 1;
const WEBPACK: usize = 2;
const ESBUILD: usize = 3;
const VITE: usize = 4;
const NEXT: usize = 5;
const PRETTIER: usize = 6;
const TSC: usize = 7;
const ESLINT: usize = 8;
const JEST: usize = 9;
const VITEST: usize = 10;
const MOCHA: usize = 11;
const NODE_TEST: usize = 12;

/// The formats a tool defined in a config file can name: (name, description, index of the
/// recogniser).
///
/// npm's own `npm error` / `npm warn` lines belong to none of them: such a tool usually runs the
/// program itself (`npx eslint .`), where npm prints nothing, and when it runs `npm run lint` the
/// `Lifecycle script failed` block only repeats that the script failed, which the exit code says.
/// Those lines reach the recogniser like any other and it leaves them, as every recogniser
/// leaves lines that are not its format.
pub const FORMATS: [(&str, &str, usize); 12] = [
    ("node-crash", "Node.js uncaught exception", NODE_CRASH),
    ("webpack", "webpack build errors", WEBPACK),
    ("esbuild", "esbuild errors and warnings", ESBUILD),
    ("vite", "Vite/Rollup build errors", VITE),
    ("next", "next build errors", NEXT),
    ("prettier", "Prettier --check report", PRETTIER),
    ("tsc", "TypeScript compiler (tsc)", TSC),
    ("eslint", "ESLint report (stylish or JSON)", ESLINT),
    ("jest", "Jest test report", JEST),
    ("vitest", "Vitest test report", VITEST),
    ("mocha", "Mocha test report (spec)", MOCHA),
    ("node-test", "node --test report (spec or TAP)", NODE_TEST),
];

impl NpmParser {
    pub fn new(context: &ParseContext) -> Self {
        NpmParser {
            sink: Sink::new(&context.cwd, workspace_globs(&context.cwd)),
            // A banner opens the output, after an empty line that a saved log may have lost.
            prev_blank: true,
            npm: npm::Npm::default(),
            node_crash: node_crash::NodeCrash::default(),
            node_warning: node_warning::NodeWarning::default(),
            webpack: webpack::Webpack::default(),
            esbuild: esbuild::Esbuild::default(),
            vite: vite::Vite::default(),
            next: next::Next::default(),
            prettier: prettier::Prettier::default(),
            tsc: tsc::Tsc::default(),
            eslint: eslint::Eslint::default(),
            jest: jest::Jest::default(),
            vitest: vitest::Vitest::default(),
            mocha: mocha::Mocha::default(),
            node_test: node_test::NodeTest::default(),
            reports: Vec::new(),
            open: 0,
            unflushed: 0,
            only: None,
        }
    }

    /// A parser that reads one of [`FORMATS`] and nothing else; None for another name.
    pub fn for_format(format: &str, context: &ParseContext) -> Option<Self> {
        let (_, _, index) = FORMATS.iter().find(|(name, _, _)| *name == format)?;
        Some(NpmParser { only: Some(*index), ..NpmParser::new(context) })
    }

    /// One-line JSON reports are Jest's and Vitest's (`--json`).
    fn reads_json_reports(&self) -> bool {
        self.only.is_none_or(|i| i == JEST || i == VITEST)
    }

    /// The sink and the tool recogniser at `index`.
    fn recogniser(&mut self, index: usize) -> (&mut Sink, &mut dyn Recogniser) {
        let recogniser: &mut dyn Recogniser = match index {
            NODE_CRASH => &mut self.node_crash,
            NODE_WARNING => &mut self.node_warning,
            WEBPACK => &mut self.webpack,
            ESBUILD => &mut self.esbuild,
            VITE => &mut self.vite,
            NEXT => &mut self.next,
            PRETTIER => &mut self.prettier,
            TSC => &mut self.tsc,
            ESLINT => &mut self.eslint,
            JEST => &mut self.jest,
            VITEST => &mut self.vitest,
            MOCHA => &mut self.mocha,
            _ => &mut self.node_test,
        };
        (&mut self.sink, recogniser)
    }

    /// The tool recognisers that may want the line, one bit each by index: the open ones, and
    /// those whose lines may start so.
    // Inlined, with `Head::new` and tsc's test, into `feed`: called for every line, the calls and
    // the registers they saved were a tenth of a line's instructions (callgrind on the bench's flood).
    #[inline(always)]
    fn candidates(&self, head: &Head<'_>) -> u16 {
        let by_start = LINE_DISPATCH.recognisers(head.bytes) | UNINDENTED_DISPATCH.recognisers(head.unindented);
        let mut starting = by_start & !self.open;
        let mut candidates = self.open | self.starting_anywhere(head);
        while starting != 0 {
            let index = starting.trailing_zeros() as usize;
            starting &= starting - 1;
            if self.may_start(index, head) {
                candidates |= 1 << index;
            }
        }
        candidates
    }

    /// The recognisers no first bytes rule out that may start on the line, one bit each by index.
    /// Asked of every line, so called directly rather than in the loop over those the first bytes
    /// allow; an open one's answer does not matter, as it is offered the line anyway.
    fn starting_anywhere(&self, head: &Head<'_>) -> u16 {
        u16::from(self.node_crash.may_start(head)) << NODE_CRASH
            | u16::from(self.eslint.may_start(head)) << ESLINT
            | u16::from(self.tsc.may_start(head)) << TSC
    }

    /// [`Recogniser::may_start`] of the recogniser at `index`, called on its type: asked several
    /// times a line, a call through `dyn` cost as much as the test.
    fn may_start(&self, index: usize, head: &Head<'_>) -> bool {
        match index {
            NODE_CRASH => self.node_crash.may_start(head),
            NODE_WARNING => self.node_warning.may_start(head),
            WEBPACK => self.webpack.may_start(head),
            ESBUILD => self.esbuild.may_start(head),
            VITE => self.vite.may_start(head),
            NEXT => self.next.may_start(head),
            PRETTIER => self.prettier.may_start(head),
            TSC => self.tsc.may_start(head),
            ESLINT => self.eslint.may_start(head),
            JEST => self.jest.may_start(head),
            VITEST => self.vitest.may_start(head),
            MOCHA => self.mocha.may_start(head),
            _ => self.node_test.may_start(head),
        }
    }

    /// Offers the line to the `candidates` in turn; true when one took it.
    fn offer(&mut self, ln: &Ln<'_>, mut candidates: u16) -> bool {
        while candidates != 0 {
            let index = candidates.trailing_zeros() as usize;
            candidates &= candidates - 1;
            self.unflushed |= 1 << index;
            let (sink, recogniser) = self.recogniser(index);
            let took = recogniser.feed(ln, sink);
            let open = recogniser.is_open();
            self.set_open(index, open);
            if took {
                return true;
            }
        }
        false
    }

    fn set_open(&mut self, index: usize, open: bool) {
        self.open = self.open & !(1 << index) | u16::from(open) << index;
    }

    /// A parser of one format: its JSON form, then its recogniser.
    fn feed_format(&mut self, index: usize, line: Line<'_>) {
        let head = Head::new(line.bytes);
        let json = match index {
            ESLINT => eslint::may_be_json(head.bytes),
            JEST | VITEST => json_report::may_be_report(head.bytes),
            _ => false,
        };
        let candidates = self.candidates(&head) & 1 << index;
        if !json && candidates == 0 {
            return;
        }
        let text = line.text();
        let ln = Ln::new(&text, &head, line.number);
        if index == ESLINT && eslint::feed_json(&ln, &mut self.sink) {
            return;
        }
        if (index == JEST || index == VITEST)
            && let Some(report) = json_report::from_line(&text)
        {
            self.reports.push(report);
            return;
        }
        self.offer(&ln, candidates);
    }

    fn flush_tools(&mut self) {
        let mut unflushed = std::mem::take(&mut self.unflushed);
        while unflushed != 0 {
            let index = unflushed.trailing_zeros() as usize;
            unflushed &= unflushed - 1;
            let (sink, recogniser) = self.recogniser(index);
            recogniser.flush(sink);
            let open = recogniser.is_open();
            self.set_open(index, open);
        }
    }
}

impl Parser for NpmParser {
    fn feed(&mut self, line: Line<'_>) {
        if let Some(index) = self.only {
            self.feed_format(index, line);
            return;
        }
        let head = Head::new(line.bytes);
        let prev_blank = std::mem::replace(&mut self.prev_blank, head.is_blank());
        // A blank line starts nothing (no prefix, nothing anywhere): it matters only to a block
        // that is open, and ends npm's.
        if head.is_blank() && self.open == 0 {
            self.npm.flush(&mut self.sink);
            return;
        }
        let npm_line = npm::may_be_npm(&head);
        if !npm_line {
            self.npm.flush(&mut self.sink);
        }
        let json = head.may_be_json() && (eslint::may_be_json(head.bytes) || json_report::may_be_report(head.bytes));
        let candidates = self.candidates(&head);
        if !(npm_line || json || candidates != 0) {
            return;
        }
        let text = line.text();
        let ln = Ln::new(&text, &head, line.number);
        // npm's lines come after a script's output (or before the next one's): its blocks end.
        if npm_line && self.npm.feed(&ln, prev_blank, &mut self.sink) {
            self.flush_tools();
            return;
        }
        if json {
            if eslint::feed_json(&ln, &mut self.sink) {
                return;
            }
            if let Some(report) = json_report::from_line(&text) {
                self.reports.push(report);
                return;
            }
        }
        self.offer(&ln, candidates);
    }

    fn finish(&mut self, end: &RunEnd) -> ParseResult {
        self.npm.flush(&mut self.sink);
        self.flush_tools();
        let mut reports = std::mem::take(&mut self.reports);
        if self.reads_json_reports() {
            reports.extend(end.artifacts.iter().filter_map(|path| json_report::from_file(path)));
        }
        for report in reports {
            report.apply(&mut self.sink);
        }
        self.vitest.add_unreported(&mut self.sink);
        let stopped_early = self.sink.stopped_early_text();
        let (diagnostics, summary, failed_tests) = std::mem::take(&mut self.sink).finish();
        let result = ParseResult::new(diagnostics).with_summary(summary).with_failed_tests(failed_tests);
        match stopped_early {
            Some(what) => result.with_stopped_early(what),
            None => result,
        }
    }
}

/// The root package.json's `workspaces` (an array, or `{"packages": [...]}`); empty when there
/// is none. Read once, when the parser is made, to place workspace folders (see [`Sink`]).
fn workspace_globs(cwd: &str) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(std::path::Path::new(cwd).join("package.json")) else {
        return Vec::new();
    };
    let Ok(value) = serde_json::from_str::<serde_json::Value>(&text) else { return Vec::new() };
    let workspaces = value.get("workspaces");
    let list = workspaces.and_then(|w| w.as_array().or_else(|| w.get("packages").and_then(|p| p.as_array())));
    list.map(|l| l.iter().filter_map(|g| g.as_str().map(str::to_string)).collect()).unwrap_or_default()
}

/// `1 test file`, `4 test files`.
fn count_of(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// What a runner that stopped at its first failures (`--bail`) left out, and the way on.
fn bailed(failed: u64, failed_unit: (&str, &str), not_run: u64, unit: (&str, &str)) -> String {
    let not_run = count_of(not_run, unit.0, unit.1);
    if failed == 0 {
        return format!("{not_run} not run");
    }
    format!("bailed after {}; {not_run} not run; rerun without --bail", count_of(failed, failed_unit.0, failed_unit.1))
}

/// The words of a summary's items (`passed`, `failed`), each with the key [`parse_counts`] tells
/// it by: its length and its first eight bytes as a word (see [`first_word`]), made at compile time.
pub struct CountWords<const W: usize> {
    words: [&'static str; W],
    keys: [(usize, u64); W],
}

impl<const W: usize> CountWords<W> {
    pub const fn new(words: [&'static str; W]) -> Self {
        let mut keys = [(0, 0); W];
        let mut i = 0;
        while i < W {
            keys[i] = (words[i].len(), word_and_mask(words[i].as_bytes()).0);
            i += 1;
        }
        CountWords { words, keys }
    }

    /// The index of `word`.
    fn find(&self, word: &[u8]) -> Option<usize> {
        let key = (word.len(), first_word(word));
        self.keys.iter().zip(self.words).position(|(k, w)| *k == key && (word.len() <= 8 || w.as_bytes() == word))
    }
}

/// The N of the first `N word` item (`3 failed`, ` 7 passed`) for each of `words`, 0 for a word
/// no item has; other items are skipped. A summary line comes with every test file: its items are
/// read on their bytes, and a word is told by its key, where `str`'s splits, trims, number
/// parsing and comparisons cost twice as much.
fn parse_counts<const W: usize>(items: &str, separator: u8, words: &CountWords<W>) -> [u64; W] {
    let mut counts = [0; W];
    let mut seen = 0u64;
    for item in items.as_bytes().split(|&b| b == separator) {
        if let Some((n, word)) = count_item(item)
            && let Some(i) = words.find(word)
            && seen & 1 << i == 0
        {
            seen |= 1 << i;
            counts[i] = n;
        }
    }
    counts
}

/// An item `N word`, whitespace around either: N (what `u64::from_str` reads) and the word.
/// `item` is text: a piece of text cut at ASCII bytes.
fn count_item(item: &[u8]) -> Option<(u64, &[u8])> {
    // Spaces before N are the usual whitespace, skipped here rather than by `trim`.
    let mut at = item.iter().position(|&b| b != b' ')?;
    if !item[at].is_ascii_digit() {
        return count_item_after_other_space(item);
    }
    let mut n = 0u64;
    while let Some(&b) = item.get(at)
        && b.is_ascii_digit()
    {
        n = n.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
        at += 1;
    }
    if item.get(at) != Some(&b' ') {
        return None;
    }
    let word = &item[at + 1..];
    match (word.first(), word.last()) {
        (Some(first), Some(last)) if first.is_ascii_graphic() && last.is_ascii_graphic() => Some((n, word)),
        _ => Some((n, trim(std::str::from_utf8(word).ok()?).as_bytes())),
    }
}

/// [`count_item`] for an item that starts with other whitespace than spaces, or with `+`: the
/// same reading once those are off.
#[cold]
fn count_item_after_other_space(item: &[u8]) -> Option<(u64, &[u8])> {
    let item = trim(std::str::from_utf8(item).ok()?).as_bytes();
    let digits = item.strip_prefix(b"+").unwrap_or(item);
    digits.first().is_some_and(u8::is_ascii_digit).then(|| count_item(digits)).flatten()
}

/// `text.rsplit_once(separator)` for an ASCII separator: `str`'s costs more than the few bytes
/// it looks at on a summary line or a banner.
fn rsplit_once_ascii(text: &str, separator: u8) -> Option<(&str, &str)> {
    let at = text.bytes().rposition(|b| b == separator)?;
    Some((&text[..at], &text[at + 1..]))
}

/// `text.trim()`, a byte at a time while the ends are ASCII: `str::trim` decodes every character
/// it looks at.
fn trim(text: &str) -> &str {
    let bytes = text.as_bytes();
    // Most text neither starts nor ends with whitespace.
    if bytes.first().is_some_and(u8::is_ascii_graphic) && bytes.last().is_some_and(u8::is_ascii_graphic) {
        return text;
    }
    let start = bytes.iter().position(|&b| !is_ascii_space(b)).unwrap_or(bytes.len());
    let end = bytes.iter().rposition(|&b| !is_ascii_space(b)).map_or(start, |last| last + 1);
    let trimmed = &text[start..end];
    // Only a few characters beyond ASCII are whitespace (`●` and `✓`, which lines start with, are
    // not): their bytes tell them before `str::trim` decodes them.
    let bytes = trimmed.as_bytes();
    if may_start_with_wide_space(bytes) || may_end_with_wide_space(bytes) { trimmed.trim() } else { trimmed }
}

/// Whether `bytes` may end with whitespace beyond ASCII (see [`may_start_with_wide_space`]),
/// judged on the last bytes of those characters.
fn may_end_with_wide_space(bytes: &[u8]) -> bool {
    matches!(
        bytes,
        [.., 0xc2, 0x85 | 0xa0] | [.., 0xe1, 0x9a, 0x80] | [.., 0xe2, 0x80 | 0x81, _] | [.., 0xe3, 0x80, 0x80]
    )
}

#[cfg(test)]
pub mod tests {
    use super::NpmParser;
    use buildvise_plugin_api::testing::{parse_log, parse_streams};
    use buildvise_plugin_api::{Diagnostic, ParseContext, ParseResult, RunEnd, Severity};

    fn parser(cwd: &str) -> Box<NpmParser> {
        Box::new(NpmParser::new(&ParseContext::new("npm.test", cwd)))
    }

    pub fn parse_in(log: &str, exit_code: i32, cwd: &str) -> ParseResult {
        parse_log(parser(cwd), log.as_bytes(), exit_code)
    }

    pub fn parse(log: &str, exit_code: i32) -> ParseResult {
        parse_in(log, exit_code, "/nonexistent/project")
    }

    pub fn parse_split(stdout: &str, stderr: &str, exit_code: i32) -> ParseResult {
        let end = RunEnd::exited(exit_code);
        parse_streams(parser("/nonexistent/project"), stdout.as_bytes(), stderr.as_bytes(), &end)
    }

    pub fn errors(result: &ParseResult) -> Vec<&Diagnostic> {
        result.diagnostics.iter().filter(|d| d.severity == Severity::Error).collect()
    }

    pub fn warnings(result: &ParseResult) -> Vec<&Diagnostic> {
        result.diagnostics.iter().filter(|d| d.severity == Severity::Warning).collect()
    }

    #[test]
    fn summary_counts_are_what_str_parsing_reads() {
        // What a count means, said with `str`: N (optionally `+N`) after any whitespace, one
        // space, then the word, trimmed; the first item of a word counts.
        fn counts(items: &str, words: [&str; 3]) -> [u64; 3] {
            let mut counts = [None; 3];
            for item in items.split(',') {
                let item = item.trim_start();
                let digits = item.strip_prefix('+').unwrap_or(item);
                let end = digits.find(|c: char| !c.is_ascii_digit()).unwrap_or(digits.len());
                let (Ok(n), Some(word)) = (digits[..end].parse::<u64>(), digits[end..].strip_prefix(' ')) else {
                    continue;
                };
                if let Some(i) = words.iter().position(|w| *w == word.trim()) {
                    counts[i].get_or_insert(n);
                }
            }
            counts.map(|n| n.unwrap_or(0))
        }
        const WORDS: super::CountWords<3> = super::CountWords::new(["passed", "failed", "unexpectedly"]);
        const PIECES: [&str; 16] = [
            "passed",
            "failed",
            "unexpectedly",
            "pass",
            " ",
            "  ",
            "\t",
            "\u{a0}",
            "+",
            "7",
            "12",
            ",",
            "x",
            "18446744073709551616",
            "3 passed",
            ", 12 failed",
        ];
        let mut texts = vec![
            "       3 passed, 1 skipped, 4 total".to_string(),
            " 2 failed, 4 failed, +5 passed , 9 unexpectedly\u{a0}".into(),
            "\t3 passed,3  passed, 3passed, 3 ".into(),
        ];
        // Every text of four pieces, in every order.
        let n = PIECES.len();
        for i in 0..n.pow(4) {
            texts.push([i % n, i / n % n, i / n / n % n, i / n / n / n].map(|p| PIECES[p]).concat());
        }
        for text in &texts {
            assert_eq!(super::parse_counts(text, b',', &WORDS), counts(text, WORDS.words), "{text:?}");
        }
    }

    #[test]
    fn trim_and_head_take_off_what_str_trim_does() {
        let wide =
            ["\u{85}", "\u{a0}", "\u{1680}", "\u{2000}", "\u{200a}", "\u{2028}", "\u{202f}", "\u{205f}", "\u{3000}"];
        let mut texts = vec![
            String::new(),
            " ".into(),
            "\u{b}x\u{c}".into(),
            "\u{25cf} Console".into(),
            "  \u{2713} ok \u{2715}".into(),
            "          deep".into(),
            "\t x".into(),
            "   ".into(),
        ];
        for space in wide {
            texts.extend([
                format!("{space}x"),
                format!("x{space}"),
                format!(" {space} \u{25cf} a {space}"),
                format!("\u{2713}{space}"),
            ]);
        }
        for text in &texts {
            assert_eq!(super::trim(text), text.trim(), "{text:?}");
            assert_eq!(super::Head::new(text.as_bytes()).unindented, text.trim_start().as_bytes(), "{text:?}");
        }
    }

    #[test]
    fn plain_script_output_is_not_a_diagnostic() {
        let result = parse(
            "\n> tools@1.0.0 release\n> node bundle.js\n\ncopying a.js\nCopied 3 files\nbundle step did not complete\n",
            3,
        );
        assert!(result.diagnostics.is_empty());
        assert_eq!((result.summary, result.success), (None, None));
    }

    #[test]
    fn odd_input_does_not_panic() {
        let mut log: Vec<u8> = b"FAIL \xff\xfe\n  \xe2\x97\x8f \xff \xe2\x80\xba\n    at (\n> \xc3\xa9@1 b\n".to_vec();
        log.extend_from_slice(&vec![b'x'; 200_000]);
        log.extend_from_slice(b"\n\xe2\x8e\xaf\xe2\x8e\xaf Failed Tests \n FAIL  a > \n\xe2\x9d\xaf :1:\nnot ok 1\n  ---\n  error: |-\n# tests x\nnpm error code\nnpm warn\n");
        let result = parse_log(parser("/p"), &log, 1);
        assert!(result.diagnostics.len() < 10);
        for cut in [1, 7, 40, 120] {
            let _ = parse_log(parser("/p"), &log[..cut.min(log.len())], 1);
        }
    }
}

#[cfg(test)]
mod format_tests;
