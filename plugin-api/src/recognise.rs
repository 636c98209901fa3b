//! Recognisers: one output format each, and the dispatch that offers a line only to the
//! recognisers that may want it.
//!
//! A tool's output mixes formats (a script runs tsc, then Jest; cargo prints rustc's blocks, then
//! libtest's report), and most of its lines belong to none of them. A [`Recogniser`] reads one
//! format and says which lines it may start on ([`Wants`]: prefixes, prefixes after the
//! indentation, a cheap test on the bytes). [`Recognisers`] builds the dispatch once, when a
//! parser is made, and then per line: looks the first byte up (and the first after the
//! indentation), runs the few tests, and decodes the line as text only when some recogniser may
//! want it. A recogniser that is reading a block ([`Recogniser::is_open`]) is offered every line.
//!
//! A parser holds one [`Recognisers`] over a state of its own (`S`: what the recognisers find,
//! and what they share), and adding a format is one file with its recogniser and one line that
//! registers it:
//!
//! ```
//! use buildvise_plugin_api::{Diagnostic, Recogniser, Recognisers, Text, Wants};
//!
//! /// `ERROR file:line message`.
//! struct Errors;
//!
//! impl Recogniser<Vec<Diagnostic>> for Errors {
//!     fn wants(&self) -> Wants {
//!         Wants::starts(&["ERROR "])
//!     }
//!     fn feed(&mut self, line: &Text<'_>, found: &mut Vec<Diagnostic>) -> bool {
//!         let message = &line.text["ERROR ".len()..];
//!         found.push(Diagnostic::error(message).with_log_range(line.number, line.number));
//!         true
//!     }
//! }
//!
//! let recognisers = Recognisers::new().add_in(&["errors"], Errors);
//! # let _ = recognisers;
//! ```

use crate::prefixes::PrefixSet;
use crate::types::{Line, Stream};

/// A line as dispatch sees it: its bytes, before they are decoded.
#[derive(Debug, Clone, Copy)]
pub struct Head<'a> {
    pub bytes: &'a [u8],
    /// `bytes` without the whitespace they start with (what `str::trim_start` removes).
    pub unindented: &'a [u8],
    pub stream: Stream,
    pub number: u64,
}

impl<'a> Head<'a> {
    #[inline]
    pub fn new(line: &Line<'a>) -> Self {
        Head { bytes: line.bytes, unindented: unindent(line.bytes), stream: line.stream, number: line.number }
    }

    /// Whether the line is empty or only whitespace.
    #[inline]
    pub fn is_blank(&self) -> bool {
        self.unindented.is_empty()
    }

    /// Whether `needle` occurs anywhere in the line's bytes: a test for lines that hold a word
    /// somewhere, `: error: ` say, rather than at their start. It finds the needle's first byte
    /// with `memchr` and compares the rest there, which for a line and a word is several times
    /// cheaper than building a `memchr::memmem::Finder` per call (the ingest bench showed that
    /// build as a sixth of the dotnet plugin's time); a needle that starts with a byte most lines
    /// hold many of (a space) costs more than one that starts with a rare one.
    #[inline]
    pub fn contains(&self, needle: &[u8]) -> bool {
        let Some((&first, rest)) = needle.split_first() else {
            return true;
        };
        memchr::memchr_iter(first, self.bytes).any(|at| self.bytes[at + 1..].starts_with(rest))
    }
}

/// `bytes` without the whitespace `str::trim_start` removes.
#[inline]
fn unindent(bytes: &[u8]) -> &[u8] {
    // Most lines start with a visible ASCII character: one comparison, no loop.
    if bytes.first().is_none_or(|&first| first > b' ' && first < 0x80) {
        return bytes;
    }
    let mut rest = bytes;
    loop {
        let width = match rest {
            [b' ' | b'\t'..=b'\r', ..] => 1,
            [..] => wide_space_len(rest),
        };
        if width == 0 {
            return rest;
        }
        rest = &rest[width..];
    }
}

/// `text` without the whitespace it ends with, as `str::trim_end`.
#[inline]
fn trim_end(text: &str) -> &str {
    match text.as_bytes().last() {
        Some(&last) if last > b' ' && last < 0x80 => text,
        _ => text.trim_end(),
    }
}

/// The length of the whitespace character beyond ASCII that `bytes` starts with (U+0085, U+00A0,
/// U+1680, U+2000 to U+200A, U+2028, U+2029, U+202F, U+205F, U+3000, as UTF-8), or 0. Told by
/// their bytes: decoding the first character of every indented line that starts with `✓` or `●`
/// cost more than the rest of its dispatch.
#[inline]
fn wide_space_len(bytes: &[u8]) -> usize {
    match bytes {
        [0xc2, 0x85 | 0xa0, ..] => 2,
        [0xe1, 0x9a, 0x80, ..]
        | [0xe2, 0x80, 0x80..=0x8a | 0xa8 | 0xa9 | 0xaf, ..]
        | [0xe2, 0x81, 0x9f, ..]
        | [0xe3, 0x80, 0x80, ..] => 3,
        _ => 0,
    }
}

/// A line as a recogniser reads it: decoded (invalid UTF-8 replaced), with its indentation and
/// its surrounding whitespace worked out once for all of them.
#[derive(Debug, Clone, Copy)]
pub struct Text<'a> {
    pub text: &'a str,
    /// `text` without its indentation.
    pub unindented: &'a str,
    /// `text` without the whitespace around it.
    pub trimmed: &'a str,
    pub stream: Stream,
    /// The line's 1-based number in the stored log.
    pub number: u64,
}

impl<'a> Text<'a> {
    #[inline]
    pub fn new(text: &'a str, stream: Stream, number: u64) -> Self {
        // `unindent` removes whole whitespace characters, so what it leaves starts on a character
        // boundary; it and `trim_end` below answer most lines from one byte, where `str`'s trims
        // decode a character at each end.
        let unindented = &text[text.len() - unindent(text.as_bytes()).len()..];
        Text { text, unindented, trimmed: trim_end(unindented), stream, number }
    }
}

/// The lines a recogniser may start on while it is not open: those that start with one of its
/// prefixes, or with one after their indentation, or that its test accepts. A line it wants
/// nothing of costs it nothing: it is never offered.
#[derive(Clone, Copy)]
pub struct Wants {
    starts: &'static [&'static str],
    starts_unindented: &'static [&'static str],
    test: Option<LineTest>,
    every: bool,
}

/// A recogniser's cheap test of a line's bytes ([`Wants::test`]).
pub type LineTest = fn(&Head<'_>) -> bool;

impl Wants {
    /// Lines that start with one of `prefixes`.
    pub const fn starts(prefixes: &'static [&'static str]) -> Self {
        Wants { starts: prefixes, starts_unindented: &[], test: None, every: false }
    }

    /// Lines that start with one of `prefixes` after their indentation (none or any).
    pub const fn starts_unindented(prefixes: &'static [&'static str]) -> Self {
        Wants { starts: &[], starts_unindented: prefixes, test: None, every: false }
    }

    /// Lines `test` accepts. It runs on every line dispatch looks at: keep it to a few byte
    /// comparisons (a `memchr` at most), and use prefixes where they say it.
    pub const fn test(test: fn(&Head<'_>) -> bool) -> Self {
        Wants { starts: &[], starts_unindented: &[], test: Some(test), every: false }
    }

    /// Every line: for a format whose lines nothing cheap tells apart.
    pub const fn every() -> Self {
        Wants { starts: &[], starts_unindented: &[], test: None, every: true }
    }

    /// These lines, and those starting with one of `prefixes` after their indentation.
    pub const fn or_unindented(self, prefixes: &'static [&'static str]) -> Self {
        Wants { starts_unindented: prefixes, ..self }
    }

    /// These lines, and those `test` accepts.
    pub const fn or_test(self, test: fn(&Head<'_>) -> bool) -> Self {
        Wants { test: Some(test), ..self }
    }
}

/// One output format's reader, over the parser's state `S`.
pub trait Recogniser<S>: Send {
    /// The lines it may start on. Asked once, when it is registered.
    fn wants(&self) -> Wants;

    /// Whether it is in the middle of something (a block, a report) that a later line may add to
    /// or end: it is then offered every line. Asked after each line it is fed.
    fn is_open(&self) -> bool {
        false
    }

    /// Takes the line if it belongs to this format (true), even only to drop it; false leaves it
    /// to the recognisers after this one.
    fn feed(&mut self, line: &Text<'_>, state: &mut S) -> bool;

    /// Ends what it was reading: another format's output began, or the output ended.
    fn flush(&mut self, _state: &mut S) {}

    /// The output ended: [`Recogniser::flush`], and anything it keeps for the end.
    fn finish(&mut self, state: &mut S) {
        self.flush(state);
    }
}

/// The most recognisers one [`Recognisers`] holds: each is a bit of a word.
pub const MAX_RECOGNISERS: usize = 64;

/// A parser's recognisers, in the order lines are offered to them, and the dispatch built from
/// what they want.
pub struct Recognisers<S> {
    entries: Vec<Entry<S>>,
    /// Prefixes of the line, each with its recogniser's bit.
    starts: PrefixSet<u64>,
    /// Prefixes after the indentation, likewise.
    starts_unindented: PrefixSet<u64>,
    /// The recognisers with a test, each with its bit, in order.
    tests: Vec<(u64, LineTest)>,
    /// The recognisers that want every line, one bit each.
    every: u64,
    /// The recognisers that are open, kept up to date after each feed rather than asked of all on
    /// every line.
    open: u64,
    /// The recognisers fed since they were last flushed: a flush changes nothing in one that was
    /// not (nor in one never fed).
    unflushed: u64,
}

struct Entry<S> {
    recogniser: Box<dyn Recogniser<S>>,
    /// The formats it reads for a tool defined in a config file (`formats = ["tsc"]`).
    formats: &'static [&'static str],
}

impl<S> Default for Recognisers<S> {
    fn default() -> Self {
        Recognisers {
            entries: Vec::new(),
            starts: PrefixSet::new(),
            starts_unindented: PrefixSet::new(),
            tests: Vec::new(),
            every: 0,
            open: 0,
            unflushed: 0,
        }
    }
}

impl<S> Recognisers<S> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a recogniser that only the plugin's own tools use: lines are offered to
    /// recognisers in the order they were registered.
    // A builder's `add`, which `std::ops::Add` (arithmetic on two values) would not fit.
    #[allow(clippy::should_implement_trait)]
    pub fn add(self, recogniser: impl Recogniser<S> + 'static) -> Self {
        self.add_in(&[], recogniser)
    }

    /// Registers a recogniser that also reads `formats`, the names a tool defined in a config
    /// file uses ([`Recognisers::only`]).
    ///
    /// # Panics
    /// Past [`MAX_RECOGNISERS`].
    pub fn add_in(mut self, formats: &'static [&'static str], recogniser: impl Recogniser<S> + 'static) -> Self {
        self.push(formats, Box::new(recogniser));
        self
    }

    /// Only the recognisers of `format`, for a tool defined in a config file; None when none
    /// reads it.
    pub fn only(self, format: &str) -> Option<Self> {
        let mut kept = Recognisers::new();
        for entry in self.entries.into_iter().filter(|entry| entry.formats.contains(&format)) {
            kept.push(entry.formats, entry.recogniser);
        }
        (!kept.entries.is_empty()).then_some(kept)
    }

    fn push(&mut self, formats: &'static [&'static str], recogniser: Box<dyn Recogniser<S>>) {
        let index = self.entries.len();
        assert!(index < MAX_RECOGNISERS, "more than {MAX_RECOGNISERS} recognisers in one parser: split the parser");
        let bit = 1 << index;
        let wants = recogniser.wants();
        for prefix in wants.starts {
            self.starts.insert(prefix, bit);
        }
        for prefix in wants.starts_unindented {
            self.starts_unindented.insert(prefix, bit);
        }
        self.tests.extend(wants.test.map(|test| (bit, test)));
        self.every |= if wants.every { bit } else { 0 };
        self.open |= if recogniser.is_open() { bit } else { 0 };
        self.entries.push(Entry { recogniser, formats });
    }

    /// Every format some recogniser reads, each once, in the order they were registered.
    pub fn formats(&self) -> Vec<&'static str> {
        let mut formats: Vec<&'static str> = Vec::new();
        for format in self.entries.iter().flat_map(|e| e.formats) {
            if !formats.contains(format) {
                formats.push(format);
            }
        }
        formats
    }

    /// The recognisers that may want `head`, one bit each: the open ones, and those whose
    /// prefixes or test it passes.
    #[inline]
    pub fn candidates(&self, head: &Head<'_>) -> u64 {
        let mut wanted = self.open | self.every;
        for bit in self.starts.matches(head.bytes) {
            wanted |= bit;
        }
        for bit in self.starts_unindented.matches(head.unindented) {
            wanted |= bit;
        }
        for &(bit, test) in &self.tests {
            if wanted & bit == 0 && test(head) {
                wanted |= bit;
            }
        }
        wanted
    }

    /// Offers `line` to the recognisers that may want it, in order, until one takes it; true when
    /// one did. The line is decoded only when one may want it.
    pub fn feed(&mut self, line: &Line<'_>, state: &mut S) -> bool {
        self.feed_head(&Head::new(line), state)
    }

    /// [`Recognisers::feed`], for a parser that has looked at the line's [`Head`] already.
    pub fn feed_head(&mut self, head: &Head<'_>, state: &mut S) -> bool {
        let candidates = self.candidates(head);
        if candidates == 0 {
            return false;
        }
        let text = Line::new(head.stream, head.number, head.bytes).text();
        self.offer(&Text::new(&text, head.stream, head.number), candidates, state)
    }

    /// Offers a decoded line to the `candidates` (from [`Recognisers::candidates`]), in order,
    /// until one takes it; true when one did.
    pub fn offer(&mut self, line: &Text<'_>, mut candidates: u64, state: &mut S) -> bool {
        while candidates != 0 {
            let index = candidates.trailing_zeros() as usize;
            candidates &= candidates - 1;
            let bit = 1 << index;
            self.unflushed |= bit;
            let recogniser = &mut self.entries[index].recogniser;
            let took = recogniser.feed(line, state);
            self.open = if recogniser.is_open() { self.open | bit } else { self.open & !bit };
            if took {
                return true;
            }
        }
        false
    }

    /// Whether some recogniser is open.
    pub fn any_open(&self) -> bool {
        self.open != 0
    }

    /// Ends what every recogniser fed since the last flush was reading.
    pub fn flush(&mut self, state: &mut S) {
        let mut unflushed = std::mem::take(&mut self.unflushed);
        while unflushed != 0 {
            let index = unflushed.trailing_zeros() as usize;
            unflushed &= unflushed - 1;
            let recogniser = &mut self.entries[index].recogniser;
            recogniser.flush(state);
            self.set_open(index);
        }
    }

    /// The output ended: every recogniser finishes, in order.
    pub fn finish(&mut self, state: &mut S) {
        for index in 0..self.entries.len() {
            self.entries[index].recogniser.finish(state);
            self.set_open(index);
        }
        self.unflushed = 0;
    }

    fn set_open(&mut self, index: usize) {
        let bit = 1 << index;
        self.open = if self.entries[index].recogniser.is_open() { self.open | bit } else { self.open & !bit };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the recognisers under test did, as `name:line` for each line they took.
    type Log = Vec<String>;

    /// Takes the lines it is offered, but for those holding `pass` when it does not want every
    /// line; a line `NAME open` opens it and `NAME close` closes it.
    struct Probe {
        name: &'static str,
        wants: Wants,
        open: bool,
        flushes: usize,
    }

    fn probe(name: &'static str, wants: Wants) -> Probe {
        Probe { name, wants, open: false, flushes: 0 }
    }

    impl Recogniser<Log> for Probe {
        fn wants(&self) -> Wants {
            self.wants
        }
        fn is_open(&self) -> bool {
            self.open
        }
        fn feed(&mut self, line: &Text<'_>, log: &mut Log) -> bool {
            if line.text.contains("pass") && !self.wants.every {
                return false;
            }
            if let Some(rest) = line.trimmed.strip_prefix(self.name) {
                match rest.trim() {
                    "open" => self.open = true,
                    "close" => self.open = false,
                    _ => {}
                }
            }
            log.push(format!("{}:{}", self.name, line.number));
            true
        }
        fn flush(&mut self, log: &mut Log) {
            self.flushes += 1;
            self.open = false;
            log.push(format!("{} flushed", self.name));
        }
    }

    fn feed_all(recognisers: &mut Recognisers<Log>, lines: &[&str]) -> Log {
        let mut log = Log::new();
        for (i, text) in lines.iter().enumerate() {
            let line = Line::new(Stream::Stdout, i as u64 + 1, text.as_bytes());
            recognisers.feed(&line, &mut log);
        }
        log
    }

    fn is_digit_line(head: &Head<'_>) -> bool {
        head.bytes.first().is_some_and(u8::is_ascii_digit)
    }

    #[test]
    fn a_line_goes_to_the_first_recogniser_that_wants_it_and_takes_it() {
        let mut recognisers = Recognisers::new()
            .add(probe("a", Wants::starts(&["a", "both"])))
            .add(probe("b", Wants::starts_unindented(&["b", "both"])))
            .add(probe("c", Wants::test(is_digit_line)))
            .add(probe("d", Wants::every()));
        let log = feed_all(&mut recognisers, &["a x", "  b x", "b", "both", "both pass", "7", "zzz", "  a"]);
        // `both pass` is refused by a and b, which want it, and taken by d, which wants all;
        // `  a` is not a's: its prefix is the line's own.
        assert_eq!(log, ["a:1", "b:2", "b:3", "a:4", "d:5", "c:6", "d:7", "d:8"]);
    }

    #[test]
    fn an_open_recogniser_is_offered_every_line_until_it_closes() {
        let mut recognisers =
            Recognisers::new().add(probe("x", Wants::starts(&["x"]))).add(probe("y", Wants::starts(&["y"])));
        let log = feed_all(&mut recognisers, &["x open", "anything", "y", "x close", "anything", "y"]);
        assert_eq!(log, ["x:1", "x:2", "x:3", "x:4", "y:6"]);
    }

    #[test]
    fn a_head_finds_a_word_anywhere_in_the_line() {
        let line = Line::new(Stream::Stdout, 1, b"src/a.c:3:7: error: boom");
        assert!(Head::new(&line).contains(b": error: "));
        assert!(!Head::new(&line).contains(b": warning: "));
        assert!(Head::new(&line).contains(b""), "as str::contains");
    }

    #[test]
    fn indentation_is_what_trim_start_takes_off() {
        let wide: String = (0..=0x3000u32).filter_map(char::from_u32).filter(|c| c.is_whitespace()).collect();
        assert_eq!(Head::new(&Line::new(Stream::Stdout, 1, format!("{wide}x").as_bytes())).unindented, b"x");
        for text in ["\t b", "\u{a0}b", " \u{3000}\u{2009}b", "\u{b}b", "\u{2008}\u{200b}"] {
            let line = Line::new(Stream::Stdout, 1, text.as_bytes());
            assert_eq!(Head::new(&line).unindented, text.trim_start().as_bytes(), "{text:?}");
        }
        for text in ["", "  ", "\u{2713} b", "\u{e9}", "\u{e2}\u{80}"] {
            let line = Line::new(Stream::Stdout, 1, text.as_bytes());
            assert_eq!(Head::new(&line).unindented, text.trim_start().as_bytes(), "{text:?}");
        }
        let invalid = Line::new(Stream::Stdout, 1, b" \xe2\x80");
        assert_eq!(Head::new(&invalid).unindented, b"\xe2\x80", "an invalid byte ends the indentation");
    }

    #[test]
    fn a_text_is_trimmed_as_str_trims() {
        for text in ["", " ", "a", " a b ", "\ta\r", "\u{a0}a\u{3000}", "\u{2713} b\u{85}", "a\u{7f}", "\u{e9} "] {
            let line = Text::new(text, Stream::Stdout, 1);
            assert_eq!((line.unindented, line.trimmed), (text.trim_start(), text.trim()), "{text:?}");
        }
    }

    #[test]
    fn a_flush_reaches_only_the_recognisers_fed_since_the_last_one() {
        let mut recognisers =
            Recognisers::new().add(probe("x", Wants::starts(&["x"]))).add(probe("y", Wants::starts(&["y"])));
        let mut log = feed_all(&mut recognisers, &["x open"]);
        recognisers.flush(&mut log);
        recognisers.flush(&mut log);
        assert_eq!(log, ["x:1", "x flushed"]);
        assert!(!recognisers.any_open(), "a flush closes what it ends");
        recognisers.finish(&mut log);
        assert_eq!(log[2..], ["x flushed", "y flushed"], "finishing reaches them all");
    }

    #[test]
    fn only_keeps_the_recognisers_of_one_format_in_their_order() {
        let recognisers = || {
            Recognisers::new()
                .add(probe("own", Wants::every()))
                .add_in(&["one"], probe("a", Wants::starts(&["a"])))
                .add_in(&["one", "two"], probe("b", Wants::starts(&["b"])))
        };
        assert_eq!(recognisers().formats(), ["one", "two"]);
        let mut one = recognisers().only("one").expect("format one");
        assert_eq!(feed_all(&mut one, &["b", "a", "own"]), ["b:1", "a:2"]);
        let mut two = recognisers().only("two").expect("format two");
        assert_eq!(feed_all(&mut two, &["b", "a"]), ["b:1"]);
        assert!(recognisers().only("three").is_none());
    }

    #[test]
    fn a_line_nobody_may_want_is_not_decoded() {
        // A recogniser that wants nothing but is offered a line would push to the log.
        let mut recognisers = Recognisers::new().add(probe("n", Wants::starts(&["x"])));
        let mut log = Log::new();
        let line = Line::new(Stream::Stdout, 1, b"n \xff");
        assert_eq!(recognisers.candidates(&Head::new(&line)), 0);
        assert!(!recognisers.feed(&line, &mut log));
        assert!(log.is_empty());
    }

    #[test]
    #[should_panic(expected = "more than 64 recognisers in one parser")]
    fn a_65th_recogniser_is_refused_with_the_reason() {
        let mut recognisers = Recognisers::new();
        for _ in 0..=MAX_RECOGNISERS {
            recognisers = recognisers.add(probe("p", Wants::every()));
        }
    }
}
