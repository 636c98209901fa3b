//! Reading pytest's terminal output, completed by its JUnit XML report when the run wrote one.
//!
//! The output is a sequence of regions opened by `=== title ===` banners: the session header and
//! progress lines, `ERRORS` and `FAILURES` (one `___ title ___` section per test, holding a
//! traceback and maybe captured output), `warnings summary`, `short test summary info`, and the
//! final counts line. Each stream is read by its own [`Lane`], so nothing depends on how stdout
//! and stderr interleave (pytest only writes startup errors to stderr).
//!
//! Section titles name tests by function (`TestA.test_x[1]`); node ids come from the short
//! summary, `-v` progress lines or the JUnit report, and are matched to the sections in
//! [`PytestParser::finish`], once everything has been read.
//!
//! Most lines of a run are progress lines and a test's own output, before the first banner: there,
//! each kind of line pytest prints is a recogniser ([`top`]), offered only the lines it may want.

mod doctest;
mod hypothesis;
mod ids;
mod junit;
pub mod python_traceback;
mod stop;
mod summary;
mod text;
mod top;
mod traceback;
mod warnings;

use buildvise_plugin_api::{
    Diagnostic, DiagnosticSet, Head, Line, ParseContext, ParseResult, Parser, Progress, Recognisers, RunEnd, Severity,
    Stream, TestCase, TestCases, TestOutcome, TestSummary, Text, is_absolute, relative_to,
};
use hashbrown::{HashMap, HashSet};
use ids::{IdSet, InOrder, SuffixIndex, ends_with_segments};
use std::collections::VecDeque;
use stop::{Stop, counted};
use summary::{Entry, Outcome};
use text::{clip, leading_exception, sep_title, without_warning_module};
use traceback::{Location, Reading, Traceback};
use warnings::WarningsBlock;

pub struct PytestParser {
    cwd: String,
    args: Vec<String>,
    /// Stdout, then stderr.
    lanes: [Lane; 2],
    found: Found,
}

impl PytestParser {
    pub fn new(context: &ParseContext) -> Self {
        PytestParser {
            cwd: context.cwd.clone(),
            args: context.args.clone(),
            lanes: Default::default(),
            found: Found { cwd: context.cwd.clone(), ..Found::default() },
        }
    }
}

impl Parser for PytestParser {
    fn feed(&mut self, line: Line<'_>) {
        let lane = match line.stream {
            Stream::Stderr => &mut self.lanes[1],
            // Stdout, and any stream a later API adds (such a tag reads as stdout on the wire).
            _ => &mut self.lanes[0],
        };
        lane.feed(&line, &mut self.found);
    }

    fn progress(&self) -> Progress {
        let found = &self.found;
        let open = self.lanes.iter().filter(|l| l.section.as_ref().is_some_and(|s| s.kind != Kind::Ignored)).count();
        Progress::new(
            (found.sections.len() + open + found.errors.len()) as u64,
            found.warnings.len() as u64,
            found.tests_done,
        )
        .with_tests_total(found.collected)
    }

    fn finish(&mut self, end: &RunEnd) -> ParseResult {
        for lane in &mut self.lanes {
            lane.close(&mut self.found);
        }
        let junit = end.artifacts.iter().filter(|p| p.ends_with(".xml")).find_map(|p| {
            let bytes = std::fs::read(p).ok()?;
            let report = junit::read(&String::from_utf8_lossy(&bytes));
            (report.summary.is_some()).then_some(report)
        });
        explain_unrecognized(&mut self.found.errors, &self.args);
        let stopped = Assembly::stopped_early(&self.found, &self.args);
        let result = Assembly::new(&self.cwd, std::mem::take(&mut self.found), junit.unwrap_or_default()).run();
        match stopped {
            Some(what) => result.with_stopped_early(what),
            None => result,
        }
    }
}

/// What the lanes found, shared by both streams.
#[derive(Default)]
struct Found {
    cwd: String,
    rootdir: Option<String>,
    /// The terminal width, from the first banner: real separators are never narrower, so a
    /// banner-like line printed by a test inside captured output can be told apart.
    width: Option<usize>,
    sections: Vec<Finished>,
    warnings: Vec<Diagnostic>,
    infos: Vec<Diagnostic>,
    /// Errors outside any test: usage errors, a missing pytest, an internal error.
    errors: Vec<Diagnostic>,
    reported: Reported,
    summary: Option<TestSummary>,
    /// Tests finished according to the progress lines, for [`Parser::progress`].
    tests_done: u64,
    /// The tests `-v` lines named, in order; a test with a teardown error is named twice.
    named: TestCases,
    /// Tests the header said would run (`collected 7 items / 2 deselected`).
    collected: Option<u64>,
    /// Why the session ended early, from its `!!! ... !!!` line.
    stop: Option<Stop>,
    /// The frames of the last `INTERNALERROR>` traceback, outermost first (bounded).
    internal_frames: Vec<Location>,
    /// A conftest or plugin could not be loaded: pytest never started.
    startup_failed: bool,
}

impl Found {
    fn wide_enough(&self, line: &str) -> bool {
        self.width.is_none_or(|w| line.chars().count() + 1 >= w)
    }
}

/// Failed and errored node ids as the one-line reports give them, in order, each once.
#[derive(Default)]
struct Reported {
    items: Vec<Report>,
    /// Per node id, its item for each outcome (see [`outcome_slot`]).
    index: HashMap<String, [Option<usize>; 2]>,
}

struct Report {
    outcome: Outcome,
    id: String,
    message: Option<String>,
    line: u64,
}

impl Reported {
    fn add(&mut self, outcome: Outcome, id: &str, message: Option<&str>, line: u64) {
        let id = id.trim();
        let message = message.filter(|m| !m.trim().is_empty());
        if id.is_empty() {
            return;
        }
        let slot = &mut self.index.entry_ref(id).or_default()[outcome_slot(outcome)];
        match *slot {
            Some(i) => {
                let item = &mut self.items[i];
                if item.message.is_none() && message.is_some() {
                    item.message = message.map(clip);
                    item.line = line;
                }
            }
            None => {
                *slot = Some(self.items.len());
                self.items.push(Report { outcome, id: id.to_string(), message: message.map(clip), line });
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Failure,
    Error,
    /// `ImportError while loading conftest ...`: pytest could not start.
    Startup,
    /// Sections of `PASSES` and the like: read past, not reported.
    Ignored,
}

struct Section {
    kind: Kind,
    title: Option<String>,
    start: u64,
    end: u64,
    tb: Traceback,
    /// Inside `--- Captured stdout call ---` and the like: the test's own output, not pytest's.
    captured: bool,
}

impl Section {
    fn new(kind: Kind, title: Option<&str>, start: u64) -> Self {
        Section { kind, title: title.map(clip), start, end: start, tb: Traceback::default(), captured: false }
    }

    fn finish(self) -> Finished {
        Finished { kind: self.kind, title: self.title, start: self.start, end: self.end, reading: self.tb.finish() }
    }
}

struct Finished {
    kind: Kind,
    title: Option<String>,
    start: u64,
    end: u64,
    reading: Reading,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Region {
    /// Before the first banner, the session header and progress lines, and after the final line.
    #[default]
    Top,
    Failures,
    Errors,
    /// Any other banner (`PASSES`, `XPASSES`, `slowest durations`): nothing to report.
    Other,
    Warnings,
    Short,
}

/// The reading state of one stream.
struct Lane {
    region: Region,
    section: Option<Section>,
    warnings: WarningsBlock,
    /// What reads the progress region: the header, pytest's own errors, progress lines.
    top: Recognisers<Found>,
}

impl Default for Lane {
    fn default() -> Self {
        Lane { region: Region::Top, section: None, warnings: WarningsBlock::default(), top: top::recognisers() }
    }
}

impl Lane {
    fn feed(&mut self, line: &Line<'_>, found: &mut Found) {
        // Most lines of a run are in the progress region, and most of those are no separator
        // (`===`, `!!!`) and no final count: they go to the recognisers, which decode only the
        // lines one of them may want.
        let may_end_region =
            matches!(line.bytes.first(), Some(b'=' | b'!' | b'0'..=b'9')) || line.bytes.starts_with(b"no tests ran");
        if self.region == Region::Top && !may_end_region {
            self.top.feed(line, found);
            return;
        }
        let text = line.text();
        let t = Text::new(&text, line.stream, line.number);
        self.feed_text(&t, &Head::new(line), found);
    }

    fn feed_text(&mut self, line: &Text<'_>, head: &Head<'_>, found: &mut Found) {
        let (t, n) = (line.text, line.number);
        let captured = self.section.as_ref().is_some_and(|s| s.captured);
        if t.starts_with('=')
            && let Some(title) = sep_title(t, b'=')
            && (!captured || found.wide_enough(t))
        {
            self.banner(title, t, found);
            return;
        }
        if t.starts_with("!!!") {
            // `!!! Interrupted: 2 errors during collection !!!`, `!!! stopping after 1 failures !!!`.
            if !captured {
                self.close(found);
                if found.stop.is_none()
                    && found.wide_enough(t)
                    && let Some(title) = sep_title(t, b'!')
                {
                    found.stop = stop::stop_of(title);
                }
            }
            return;
        }
        if (t.starts_with(|c: char| c.is_ascii_digit()) || t.starts_with("no tests ran"))
            && let Some(counts) = summary::final_counts(t)
        {
            // `-q` prints the final line bare. A fake one in captured output comes before the
            // real one, which overwrites it.
            found.summary = Some(counts);
            if !captured {
                self.close(found);
                self.region = Region::Top;
            }
            return;
        }
        match self.region {
            Region::Top => {
                self.top.offer(line, self.top.candidates(head), found);
            }
            Region::Failures | Region::Errors | Region::Other => self.section_line(t, n, found),
            Region::Warnings => self.warnings.feed(t, n, &mut found.warnings),
            Region::Short => short_line(t, n, found),
        }
    }

    fn banner(&mut self, title: &str, line: &str, found: &mut Found) {
        self.close(found);
        if found.width.is_none() {
            found.width = Some(line.chars().count());
        }
        if let Some(counts) = summary::final_counts(title) {
            found.summary = Some(counts);
            self.region = Region::Top;
            return;
        }
        self.region = match title {
            "FAILURES" => Region::Failures,
            "ERRORS" => Region::Errors,
            "short test summary info" => Region::Short,
            "test session starts" => Region::Top,
            t if t.starts_with("warnings summary") => Region::Warnings,
            _ => Region::Other,
        };
    }

    fn section_line(&mut self, t: &str, n: u64, found: &mut Found) {
        let captured = self.section.as_ref().is_some_and(|s| s.captured);
        if t.starts_with('_')
            && let Some(title) = sep_title(t, b'_')
            && (!captured || found.wide_enough(t))
        {
            self.close(found);
            let kind = match self.region {
                Region::Failures => Kind::Failure,
                Region::Errors => Kind::Error,
                _ => Kind::Ignored,
            };
            self.section = Some(Section::new(kind, Some(title), n));
            return;
        }
        let Some(section) = self.section.as_mut().filter(|s| !s.captured && s.kind != Kind::Ignored) else { return };
        if t.starts_with('-')
            && let Some(title) = sep_title(t, b'-')
        {
            // `--- Captured stdout call ---`, `- generated xml file: ... -`.
            section.captured = title.starts_with("Captured ");
            return;
        }
        section.end = n;
        section.tb.feed(t);
    }

    /// Ends the open section and the pending warning entry.
    fn close(&mut self, found: &mut Found) {
        if let Some(s) = self.section.take()
            && s.kind != Kind::Ignored
        {
            found.sections.push(s.finish());
        }
        self.top.flush(found);
        self.warnings.flush(&mut found.warnings);
    }
}

/// Counts the tests a progress line finished, and keeps the failure or error a `-v` one reports.
fn progress_line(t: &str, n: u64, found: &mut Found) {
    if let Some(progress) = summary::progress(t) {
        found.tests_done += progress.finished;
        if let Some((id, outcome)) = progress.outcome {
            found.reported.add(outcome, id, None, n);
        }
        if let Some((id, outcome)) = progress.named {
            found.named.push(id, outcome, None);
        }
    }
}

/// The tests `-v` lines named, each once where it was first named: a test that passed and then
/// errored at teardown is named twice, and is a failure.
fn verbose_tests(named: TestCases) -> Vec<TestCase> {
    let mut tests: Vec<TestCase> = Vec::with_capacity(named.len());
    let mut at: HashMap<String, usize> = HashMap::with_capacity(named.len());
    for test in named.into_vec() {
        match at.get(&test.name) {
            Some(&i) if test.outcome == TestOutcome::Failed => tests[i].outcome = TestOutcome::Failed,
            Some(_) => {}
            None => {
                at.insert(test.name.clone(), tests.len());
                tests.push(test);
            }
        }
    }
    tests
}

fn short_line(t: &str, n: u64, found: &mut Found) {
    match summary::short_entry(t) {
        Some(Entry::Outcome { outcome, id, message }) => found.reported.add(outcome, id, message, n),
        Some(Entry::Skipped { file, line, reason }) => {
            let mut d = Diagnostic::new(Severity::Info, clip(reason)).with_code("SKIPPED").with_log_range(n, n);
            d.file = Some(file.to_string());
            d.line = line;
            found.infos.push(d);
        }
        Some(Entry::Expected { word, id, reason }) => {
            let d = Diagnostic::new(Severity::Info, clip(reason.unwrap_or(word)));
            found.infos.push(d.with_code(word).with_test(id).with_log_range(n, n));
        }
        None => {}
    }
}

/// `-p no:NAME` removes a plugin with its options, so pytest then calls them unrecognized
/// (`-p no:cacheprovider --lf`): the error says which `-p no:` took them away.
fn explain_unrecognized(errors: &mut [Diagnostic], args: &[String]) {
    let mut disabled = Vec::new();
    let mut iter = args.iter().take_while(|a| a.as_str() != "--");
    while let Some(arg) = iter.next() {
        let value = match arg.strip_prefix("-p") {
            Some("") => iter.next().map(String::as_str),
            Some(rest) => Some(rest.strip_prefix('=').unwrap_or(rest)),
            None => None,
        };
        if let Some(name) = value.and_then(|v| v.strip_prefix("no:")) {
            disabled.push(format!("-p no:{name}"));
        }
    }
    if disabled.is_empty() {
        return;
    }
    for d in errors.iter_mut().filter(|d| d.message.starts_with("unrecognized arguments: ")) {
        let verb = if disabled.len() == 1 { "removes its plugin's" } else { "remove their plugins'" };
        d.notes.push(format!("{} {verb} options too", disabled.join(", ")));
    }
}

/// Turns what was found into the result: sections matched to node ids, then the JUnit report
/// and the short summary for failures no section described.
struct Assembly<'a> {
    cwd: &'a str,
    /// The rootdir a log was captured under, when the log comes from elsewhere.
    foreign_root: Option<String>,
    found: Found,
    junit: junit::Report,
    diagnostics: DiagnosticSet,
    /// Per outcome (see [`outcome_slot`]), the node ids a diagnostic now describes.
    covered: [IdSet; 2],
    /// JUnit keys of the tests a diagnostic now describes.
    covered_keys: IdSet,
    failed_tests: Vec<String>,
    /// The reported ids, failed then errored, by their trailing segments (see [`Self::resolve`]).
    reported_ids: Option<[SuffixIndex; 2]>,
    /// The reported ids, failed then errored, in report order.
    reported_in_order: [InOrder; 2],
    /// The JUnit cases' guessed node ids, and the same by their trailing segments.
    junit_ids: Vec<String>,
    junit_index: SuffixIndex,
    /// JUnit cases by key, in report order, for the reports no section explained.
    junit_by_key: HashMap<String, VecDeque<usize>>,
}

impl<'a> Assembly<'a> {
    fn new(cwd: &'a str, found: Found, junit: junit::Report) -> Self {
        let foreign_root = found.rootdir.clone().filter(|root| is_foreign(root, cwd));
        let mut reported_in_order = [InOrder::default(), InOrder::default()];
        for (i, r) in found.reported.items.iter().enumerate() {
            reported_in_order[outcome_slot(r.outcome)].push(i);
        }
        let junit_ids: Vec<String> = junit.cases.iter().map(junit::Case::guessed_id).collect();
        let mut junit_index = SuffixIndex::default();
        let mut junit_by_key: HashMap<String, VecDeque<usize>> = HashMap::new();
        for (i, case) in junit.cases.iter().enumerate() {
            junit_index.insert(&junit_ids[i], i);
            junit_by_key.entry(case.key()).or_default().push_back(i);
        }
        Assembly {
            cwd,
            foreign_root,
            found,
            junit,
            diagnostics: DiagnosticSet::new(),
            covered: Default::default(),
            covered_keys: IdSet::default(),
            failed_tests: Vec::new(),
            reported_ids: None,
            reported_in_order,
            junit_ids,
            junit_index,
            junit_by_key,
        }
    }

    fn run(mut self) -> ParseResult {
        let internal_frame = self.project_frame(&self.found.internal_frames).cloned();
        for mut d in std::mem::take(&mut self.found.errors) {
            if d.code.as_deref() == Some("INTERNALERROR") && d.file.is_none() {
                // A warning a plugin issued is found at the plugin's call when no frame is the
                // project's: that is the code to update, or the warning to filter.
                let warned = top::warning_turned_error(&mut d);
                let issuer = || warned.then(|| top::issuer(&self.found.internal_frames)).flatten();
                if let Some(frame) = internal_frame.as_ref().or_else(issuer) {
                    d.file = Some(self.path(&frame.file));
                    d.line = Some(frame.line);
                }
            }
            self.push(d);
        }
        for section in std::mem::take(&mut self.found.sections) {
            self.section(section);
        }
        self.unexplained_reports();
        self.unexplained_junit_cases();
        for d in std::mem::take(&mut self.found.warnings).into_iter().chain(std::mem::take(&mut self.found.infos)) {
            let mut d = self.relative(d);
            if d.code.as_deref().is_some_and(|code| TOOLCHAIN_WARNINGS.contains(&code)) {
                d = d.from_toolchain();
            }
            self.push(d);
        }
        let reported_failed = self.found.reported.items.iter().filter(|r| r.outcome == Outcome::Failed);
        let mut failed_tests = std::mem::take(&mut self.failed_tests);
        failed_tests.extend(reported_failed.map(|r| r.id.clone()));
        // Each id once, where it first came; the set borrows the ids rather than copying them.
        let first: Vec<bool> = {
            let mut seen = HashSet::with_capacity(failed_tests.len());
            failed_tests.iter().map(|id| seen.insert(id.as_str())).collect()
        };
        let mut first = first.into_iter();
        failed_tests.retain(|_| first.next() == Some(true));
        let tests = self.named_tests(&failed_tests);
        ParseResult::new(self.diagnostics.into_vec())
            .with_summary(self.found.summary.or(self.junit.summary))
            .with_failed_tests(failed_tests)
            .with_tests(tests)
    }

    /// Every test of the JUnit report, named as the terminal output named it where it did (a
    /// failure's node id, so that a report joins the test to its diagnostics), else by the node
    /// id its dotted class name gives. Without a report, the tests `-v` lines named, untimed.
    fn named_tests(&mut self, failed_tests: &[String]) -> Vec<TestCase> {
        let named = std::mem::take(&mut self.junit.tests);
        if named.is_empty() {
            return verbose_tests(std::mem::take(&mut self.found.named));
        }
        let terminal = failed_tests.iter().chain(self.diagnostics.iter().filter_map(|d| d.test.as_ref()));
        let mut ids: HashMap<String, &String> = HashMap::new();
        for id in terminal {
            ids.entry(junit::node_key(id)).or_insert(id);
        }
        named
            .into_iter()
            .map(|t| {
                let name = ids.get(&t.key).map_or_else(|| junit::guessed_id(&t.classname, &t.name), |id| (*id).clone());
                TestCase::new(name, t.outcome, t.duration_us)
            })
            .collect()
    }

    fn section(&mut self, mut section: Finished) {
        let title = section.title.as_deref().unwrap_or("");
        // Outside a test (a conftest or plugin that failed to load, a module that failed to
        // import) the innermost frame is often the library the project called: the project's
        // own frame is where to look. A module none of whose frames is the project's (a warning
        // that `filterwarnings = error` turned into an error inside pytest's collection) is
        // itself the place: pytest's own file is nothing to edit.
        let mut module_alone = None;
        if section.kind == Kind::Startup || title.starts_with("ERROR collecting ") {
            match self.project_frame(&section.reading.frames).cloned() {
                Some(frame) => section.reading.location = Some(frame),
                // A syntax error is located at its line, which is the project's.
                None if section.reading.location.as_ref().is_some_and(|l| in_project(&self.path(&l.file))) => {}
                None => module_alone = title.strip_prefix("ERROR collecting ").filter(|m| in_project(&self.path(m))),
            }
        }
        let module_alone = module_alone.map(|m| self.path(m));
        let mut test = None;
        let mut phase = None;
        let mut subtest_note = None;
        match section.kind {
            Kind::Failure | Kind::Error => {
                if let Some(module) = title.strip_prefix("ERROR collecting ") {
                    self.cover(Outcome::Error, module);
                } else {
                    let (name, outcome) =
                        match (title.strip_prefix("ERROR at setup of "), title.strip_prefix("ERROR at teardown of ")) {
                            (Some(name), _) => (name, Outcome::Error),
                            (_, Some(name)) => (name, Outcome::Error),
                            _ if section.kind == Kind::Error => (title, Outcome::Error),
                            _ => (title, Outcome::Failed),
                        };
                    phase = title.strip_prefix("ERROR at ").and_then(|t| t.split(' ').next());
                    let (name, subtest) = split_subtest(name);
                    subtest_note = subtest.map(|s| format!("subtest {s}"));
                    let id = self.resolve(name, outcome);
                    if outcome == Outcome::Failed {
                        self.failed_tests.push(id.clone());
                    }
                    self.cover(outcome, &id);
                    test = Some(id);
                }
            }
            Kind::Startup | Kind::Ignored => {}
        }
        let fallback = match section.kind {
            Kind::Failure => "test failed",
            Kind::Startup => "conftest could not be imported",
            _ => "error",
        };
        let mut d = self.diagnostic_of(section.reading, fallback).with_log_range(section.start, section.end);
        if let Some(module) = module_alone {
            (d.file, d.line) = (Some(module), None);
        }
        if let Some(phase) = phase {
            d.notes.insert(0, format!("raised during {phase}"));
        }
        if let Some(note) = subtest_note {
            d.notes.insert(0, note);
        }
        d.test = test;
        self.push(d);
    }

    /// The node id for a section title: the first not yet used id, among those reported with the
    /// same outcome (then the other), then in the JUnit report, that ends with the title's test
    /// path. Looked up in the indexes, since every section asks: a scan of every id per section
    /// made a run with 100 000 failures take minutes.
    fn resolve(&mut self, name: &str, outcome: Outcome) -> String {
        let tail = title_to_tail(name);
        let other = if outcome == Outcome::Failed { Outcome::Error } else { Outcome::Failed };
        let Assembly { found, covered, reported_ids, reported_in_order, junit_ids, junit_index, .. } = self;
        let reports = &found.reported.items;
        // Ids only ever become used, as `first_unused` requires: `covered` only grows.
        let used = |id: &str| covered[outcome_slot(outcome)].contains(id);
        // pytest describes failures in the order its summary reports them: the first id not yet
        // used, if it ends so, is the one the index would find, without building the index.
        if let Some(i) = reported_in_order[outcome_slot(outcome)].first_unused(outcome, |i| used(&reports[i].id))
            && ends_with_segments(&reports[i].id, &tail)
        {
            return reports[i].id.clone();
        }
        let reported_ids = reported_ids.get_or_insert_with(|| {
            let mut index = [SuffixIndex::default(), SuffixIndex::default()];
            for (i, r) in reports.iter().enumerate() {
                index[outcome_slot(r.outcome)].insert(&r.id, i);
            }
            index
        });
        for wanted in [outcome, other] {
            let index = &mut reported_ids[outcome_slot(wanted)];
            if let Some(i) = index.first_unused(&tail, outcome, |i| used(&reports[i].id)) {
                return reports[i].id.clone();
            }
        }
        if let Some(i) = junit_index.first_unused(&tail, outcome, |i| used(&junit_ids[i])) {
            return junit_ids[i].clone();
        }
        // Subtests share their test's id, so an id already used is still better than none.
        for wanted in [outcome, other] {
            if let Some(&i) = reported_ids[outcome_slot(wanted)].ending_with(&tail).first() {
                return reports[i].id.clone();
            }
        }
        junit_index.ending_with(&tail).first().map_or(tail, |&i| junit_ids[i].clone())
    }

    /// Adds a diagnostic. A line cut short can leave one without text (`SKIPPED [1] t.py:3: `, a
    /// warning entry that ends at its category), which then says what kind of report it was, or
    /// name a blank file or test (`XPASS `), which it then does not name.
    fn push(&mut self, mut d: Diagnostic) {
        d.file = d.file.filter(|f| !f.trim().is_empty());
        d.test = d.test.filter(|t| !t.trim().is_empty());
        if d.message.trim().is_empty() {
            d.message = match (&d.code, d.severity) {
                (Some(code), _) => code.clone(),
                (None, Severity::Error) => "error".to_string(),
                (None, Severity::Warning) => "warning".to_string(),
                (None, _) => "info".to_string(),
            };
        }
        self.diagnostics.push(d);
    }

    fn cover(&mut self, outcome: Outcome, id: &str) {
        self.covered[outcome_slot(outcome)].insert(id);
        // Only the JUnit report's cases are looked up by key.
        if !self.junit.cases.is_empty() {
            self.covered_keys.insert(&junit::node_key(id));
        }
    }

    /// Failures and errors the short summary or `-v` named but no section described (`--tb=no`,
    /// `--tb=line`): from the JUnit report when it has them, else from the summary line.
    fn unexplained_reports(&mut self) {
        let reports = std::mem::take(&mut self.found.reported.items);
        for r in &reports {
            if self.covered[outcome_slot(r.outcome)].contains(&r.id) {
                continue;
            }
            // The case taken stays in the report, but `cover` below marks its key as described.
            let case = self.junit_by_key.get_mut(&junit::node_key(&r.id)).and_then(VecDeque::pop_front);
            let is_test = r.id.contains("::");
            let mut d = match case {
                Some(i) => {
                    let reading = std::mem::take(&mut self.junit.cases[i].reading);
                    self.diagnostic_of(reading, outcome_word(r.outcome))
                }
                None => {
                    let message = r
                        .message
                        .as_deref()
                        .map_or_else(|| outcome_word(r.outcome).to_string(), |m| without_warning_module(m).to_string());
                    let mut d = Diagnostic::error(message.clone()).with_log_range(r.line, r.line);
                    d.code = leading_exception(&message)
                        .or_else(|| message.starts_with("assert ").then_some("AssertionError"))
                        .map(str::to_string);
                    d
                }
            };
            if d.file.is_none() {
                // Without a traceback the node id still says which file.
                d.file = Some(r.id.split("::").next().unwrap_or(&r.id).to_string());
            }
            if is_test {
                d.test = Some(r.id.clone());
            }
            if r.outcome == Outcome::Failed {
                self.failed_tests.push(r.id.clone());
            }
            self.cover(r.outcome, &r.id);
            self.push(d);
        }
        self.found.reported.items = reports;
    }

    /// JUnit cases that failed although the terminal output never said so (a log cut short).
    fn unexplained_junit_cases(&mut self) {
        for case in std::mem::take(&mut self.junit.cases) {
            if self.covered_keys.contains(&case.key()) {
                continue;
            }
            let id = case.guessed_id();
            let word = if case.outcome == junit::CaseOutcome::Failure { "test failed" } else { "error" };
            let mut d = self.diagnostic_of(case.reading, word);
            if id.contains("::") {
                d.test = Some(id.clone());
            }
            if case.outcome == junit::CaseOutcome::Failure {
                self.failed_tests.push(id);
            }
            self.push(d);
        }
    }

    fn diagnostic_of(&self, reading: Reading, fallback: &str) -> Diagnostic {
        let mut d = Diagnostic::error(reading.message.unwrap_or_else(|| fallback.to_string()));
        d.code = reading.code;
        if let Some(location) = reading.location {
            d.file = Some(self.path(&location.file));
            d.line = Some(location.line);
        }
        d.notes = reading.notes;
        d
    }

    /// The innermost of `frames` that lies in the project: under the cwd (or the rootdir of a
    /// log captured elsewhere) and not in an installed package.
    fn project_frame<'f>(&self, frames: &'f [Location]) -> Option<&'f Location> {
        frames.iter().rev().find(|frame| in_project(&self.path(&frame.file)))
    }

    /// What did not run when the session ended early, and the way on; None when everything ran.
    fn stopped_early(found: &Found, args: &[String]) -> Option<String> {
        // The final line counts a module that failed to import as an error: it is no test.
        let module_errors = found
            .sections
            .iter()
            .filter(|s| s.title.as_deref().is_some_and(|t| t.starts_with("ERROR collecting ")))
            .count()
            .max(found.reported.items.iter().filter(|r| r.outcome == Outcome::Error && !r.id.contains("::")).count())
            as u64;
        let ran = found
            .summary
            .as_ref()
            .map_or(found.tests_done, |s| s.total.saturating_sub(module_errors.min(s.errors.unwrap_or(0))));
        let not_run = found.collected.map(|c| c.saturating_sub(ran));
        let collected = found.collected.map(|c| format!("collected {c}, ")).unwrap_or_default();
        let not_run_phrase = |not_run: Option<u64>| match not_run {
            Some(n) => format!("{} not run", counted(n, "test")),
            None => "the rest did not run".to_string(),
        };
        match &found.stop {
            Some(Stop::Collection) => Some(format!("collection interrupted: {collected}ran {ran}")),
            Some(Stop::MaxFail { failures }) => {
                if not_run == Some(0) {
                    return None;
                }
                let flag = if *failures == 1 && !args.iter().any(|a| a.starts_with("--maxfail")) {
                    "-x".to_string()
                } else {
                    format!("--maxfail={failures}")
                };
                Some(format!("stopped after {} ({flag}); {}", counted(*failures, "failure"), not_run_phrase(not_run)))
            }
            // The header already says "stopped early": pytest's own words follow it as they are.
            Some(Stop::Other(reason)) => Some(match not_run {
                Some(0) => reason.clone(),
                n => format!("{reason}; {}", not_run_phrase(n)),
            }),
            None if found.errors.iter().any(|d| d.code.as_deref() == Some("INTERNALERROR")) => {
                Some(match (found.collected, ran) {
                    (None, 0) => "pytest internal error: no tests ran".to_string(),
                    _ => format!("pytest internal error: {collected}ran {ran}"),
                })
            }
            // The error names what failed to load; the header need only say that nothing ran.
            None => found.startup_failed.then(|| "no tests ran".to_string()),
        }
    }

    fn relative(&self, mut d: Diagnostic) -> Diagnostic {
        d.file = d.file.map(|f| self.path(&f));
        d
    }

    /// Relative to the cwd when under it; for a log captured elsewhere, relative to the rootdir
    /// it printed, which is where the project was.
    fn path(&self, path: &str) -> String {
        let rel = relative_to(path, self.cwd);
        match &self.foreign_root {
            Some(root) if is_absolute(&rel) => relative_to(&rel, root),
            _ => rel,
        }
    }
}

/// True for a path, relative to the project, of the project's own code: under it and not in an
/// installed package.
fn in_project(rel: &str) -> bool {
    !rel.is_empty()
        && !is_absolute(rel)
        && !rel.starts_with("..")
        && !rel.starts_with('<')
        && !rel.split(['/', '\\']).any(|part| part == "site-packages" || part == "dist-packages")
}

/// Warning categories about the machine rather than the project: pytest could not write its
/// cache (a read-only checkout, a container). pytest's other categories (`PytestConfigWarning`,
/// `PytestUnknownMarkWarning`, `PytestCollectionWarning`...) are about the project's own config
/// and code.
const TOOLCHAIN_WARNINGS: [&str; 1] = ["PytestCacheWarning"];

/// Where an outcome's ids are in [`Assembly::reported_in_order`], and its slot in per-outcome arrays.
fn outcome_slot(outcome: Outcome) -> usize {
    match outcome {
        Outcome::Failed => 0,
        Outcome::Error => 1,
    }
}

fn outcome_word(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Failed => "FAILED",
        Outcome::Error => "ERROR",
    }
}

/// `TestA.test_x (i=1)` / `test_y [msg] (i=1)` (a subtest's section title) → the test's title
/// and the subtest's description. Parametrize ids follow the name without a space.
fn split_subtest(title: &str) -> (&str, Option<&str>) {
    match title.split_once(' ') {
        Some((name, rest)) if rest.starts_with(['(', '[']) => (name, Some(rest.trim())),
        _ => (title, None),
    }
}

/// `TestA.test_x[1.5]` (a section title) → `TestA::test_x[1.5]` (the end of its node id). A
/// doctest's title (`[doctest] pkg.mod.func`) already ends its node id.
fn title_to_tail(title: &str) -> String {
    if let Some(doctest) = title.strip_prefix("[doctest] ") {
        return doctest.to_string();
    }
    let (names, params) = title.find('[').map_or((title, ""), |at| title.split_at(at));
    format!("{}{params}", names.replace('.', "::"))
}

/// True when `root` and `cwd` are unrelated: the log was captured on another machine or in
/// another checkout.
fn is_foreign(root: &str, cwd: &str) -> bool {
    let trim = |p: &str| p.trim_end_matches(['/', '\\']).to_string();
    let (root, cwd) = (trim(root), trim(cwd));
    !cwd.is_empty() && root != cwd && relative_to(&cwd, &root) == cwd && relative_to(&root, &cwd) == root
}

#[cfg(test)]
mod tests {
    use super::*;
    use buildvise_plugin_api::testing::{parse_log, parse_streams};

    const CWD: &str = "/home/dev/shop";

    /// passed, failed, skipped, errors, xfailed, xpassed, total.
    type Counts = (u64, u64, u64, Option<u64>, Option<u64>, Option<u64>, u64);

    fn parser() -> Box<dyn Parser> {
        Box::new(PytestParser::new(&ParseContext::new("pytest.run", CWD)))
    }

    fn errors(r: &ParseResult) -> Vec<&Diagnostic> {
        r.diagnostics.iter().filter(|d| d.severity == Severity::Error).collect()
    }

    fn counts(r: &ParseResult) -> Option<Counts> {
        r.summary.as_ref().map(|s| (s.passed, s.failed, s.skipped, s.errors, s.xfailed, s.xpassed, s.total))
    }

    fn place(d: &Diagnostic) -> (Option<&str>, Option<u32>, Option<&str>, Option<&str>) {
        (d.file.as_deref(), d.line, d.code.as_deref(), d.test.as_deref())
    }

    const DEFAULT: &str = "\
============================= test session starts ==============================
platform linux -- Python 3.12.1, pytest-9.2.0, pluggy-1.7.0
rootdir: /home/dev/shop
collected 4 items

tests/test_basket.py .FF.                                                [100%]

=================================== FAILURES ===================================
__________________________________ test_total __________________________________

    def test_total():
>       assert total([1, 2]) == {\"sum\": 4}
E       AssertionError: assert {'sum': 3} == {'sum': 4}
E         Differing items:
E         {'sum': 3} != {'sum': 4}

tests/test_basket.py:8: AssertionError
________________________________ test_discount _________________________________

    def test_discount():
>       assert apply(\"HALF\") == 5
               ^^^^^^^^^^^^^

tests/test_basket.py:12: 
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 

code = 'HALF'

    def apply(code):
>       return RATES[code]
E       KeyError: 'HALF'

shop/rates.py:4: KeyError
----------------------------- Captured stdout call -----------------------------
FAILED tests/test_basket.py::test_fake - AssertionError: printed by the test
tests/test_basket.py:99: ValueError
================ 9 failed in 0.01s =================
=========================== short test summary info ============================
FAILED tests/test_basket.py::test_total - AssertionError: assert {'sum': 3} =...
FAILED tests/test_basket.py::test_discount - KeyError: 'HALF'
========================= 2 failed, 2 passed in 0.05s ==========================
";

    #[test]
    fn default_verbosity_failures() {
        let r = parse_log(parser(), DEFAULT.as_bytes(), 1);
        let e = errors(&r);
        assert_eq!(e.len(), 2, "{e:#?}");
        assert_eq!(
            place(e[0]),
            (Some("tests/test_basket.py"), Some(8), Some("AssertionError"), Some("tests/test_basket.py::test_total"))
        );
        assert_eq!(e[0].message, "AssertionError: assert {'sum': 3} == {'sum': 4}");
        assert_eq!(e[0].notes, ["Differing items:", "{'sum': 3} != {'sum': 4}"]);
        assert_eq!(e[0].log_range.map(|l| (l.start, l.end)), Some((9, 17)));
        assert_eq!(
            place(e[1]),
            (Some("shop/rates.py"), Some(4), Some("KeyError"), Some("tests/test_basket.py::test_discount"))
        );
        assert_eq!(e[1].log_range.map(|l| (l.start, l.end)), Some((18, 33)), "captured output is not part of it");
        assert_eq!(counts(&r), Some((2, 2, 0, Some(0), Some(0), Some(0), 4)));
        assert_eq!(r.failed_tests, ["tests/test_basket.py::test_total", "tests/test_basket.py::test_discount"]);
        assert_eq!(r.success, None);
    }

    #[test]
    fn verbose_setup_teardown_and_missing_fixture() {
        let log = "\
============================= test session starts ==============================
rootdir: /home/dev/shop
collecting ... collected 4 items

tests/test_db.py::test_write PASSED                                      [ 25%]
tests/test_db.py::test_write ERROR                                       [ 25%]
tests/test_db.py::test_read ERROR                                        [ 50%]
tests/test_db.py::test_query ERROR                                       [ 75%]
tests/test_db.py::test_count FAILED                                      [100%]

==================================== ERRORS ====================================
_______________________ ERROR at teardown of test_write ________________________

    @pytest.fixture
    def conn():
        yield Conn()
>       assert not Conn.open, \"connection left open\"
E       AssertionError: connection left open

tests/conftest.py:9: AssertionError
________________________ ERROR at setup of test_read ___________________________

    @pytest.fixture
    def server():
>       return connect(\"db://x\")
E       ConnectionRefusedError: cannot reach db://x

tests/conftest.py:4: ConnectionRefusedError
________________________ ERROR at setup of test_query __________________________
file /home/dev/shop/tests/test_db.py, line 14
  def test_query(cursor):
E       fixture 'cursor' not found
>       available fixtures: cache, capsys, conn, server
>       use 'pytest --fixtures [testpath]' for help on them.

/home/dev/shop/tests/test_db.py:14
=================================== FAILURES ===================================
__________________________________ test_count __________________________________

    def test_count(conn):
>       assert conn.count() == 1
E       assert 0 == 1

tests/test_db.py:18: AssertionError
=========================== short test summary info ============================
FAILED tests/test_db.py::test_count - assert 0 == 1
ERROR tests/test_db.py::test_write - AssertionError: connection left open
ERROR tests/test_db.py::test_read - ConnectionRefusedError: cannot reach db://x
ERROR tests/test_db.py::test_query
==================== 1 failed, 1 passed, 3 errors in 0.08s =====================
";
        let r = parse_log(parser(), log.as_bytes(), 1);
        let e = errors(&r);
        assert_eq!(e.len(), 4, "{e:#?}");
        assert_eq!(
            place(e[0]),
            (Some("tests/conftest.py"), Some(9), Some("AssertionError"), Some("tests/test_db.py::test_write"))
        );
        assert_eq!(e[0].notes[0], "raised during teardown");
        assert_eq!(place(e[2]), (Some("tests/test_db.py"), Some(14), None, Some("tests/test_db.py::test_query")));
        assert_eq!(e[2].message, "fixture 'cursor' not found");
        assert_eq!(
            place(e[3]),
            (Some("tests/test_db.py"), Some(18), Some("AssertionError"), Some("tests/test_db.py::test_count"))
        );
        assert_eq!(counts(&r), Some((1, 1, 0, Some(3), Some(0), Some(0), 5)));
        assert_eq!(r.failed_tests, ["tests/test_db.py::test_count"]);
    }

    #[test]
    fn collection_errors_without_tests() {
        let log = "\
============================= test session starts ==============================
collected 2 items / 2 errors

==================================== ERRORS ====================================
___________________ ERROR collecting tests/test_import.py ______________________
ImportError while importing test module '/home/dev/shop/tests/test_import.py'.
Traceback:
/usr/lib/python3.12/importlib/__init__.py:90: in import_module
    return _bootstrap._gcd_import(name[level:], package, level)
tests/test_import.py:2: in <module>
    from shop.missing import thing
E   ModuleNotFoundError: No module named 'shop.missing'
___________________ ERROR collecting tests/test_syntax.py ______________________
/usr/lib/python3.12/ast.py:52: in parse
    return compile(source, filename, mode, flags,
E     File \"/home/dev/shop/tests/test_syntax.py\", line 6
E       def test_x(:
E                  ^
E   SyntaxError: invalid syntax
=========================== short test summary info ============================
ERROR tests/test_import.py
ERROR tests/test_syntax.py
!!!!!!!!!!!!!!!!!!! Interrupted: 2 errors during collection !!!!!!!!!!!!!!!!!!!!
============================== 2 errors in 0.21s ===============================
";
        let r = parse_log(parser(), log.as_bytes(), 2);
        let e = errors(&r);
        assert_eq!(e.len(), 2, "{e:#?}");
        assert_eq!(place(e[0]), (Some("tests/test_import.py"), Some(2), Some("ModuleNotFoundError"), None));
        assert_eq!(place(e[1]), (Some("tests/test_syntax.py"), Some(6), Some("SyntaxError"), None));
        assert_eq!(counts(&r), Some((0, 0, 0, Some(2), Some(0), Some(0), 2)));
        assert!(r.failed_tests.is_empty());
    }

    #[test]
    fn conftest_import_error_on_stderr() {
        let stderr = "\
ImportError while loading conftest '/home/dev/shop/tests/conftest.py'.
tests/conftest.py:5: in <module>
    from shop.fixtures import make
E   ModuleNotFoundError: No module named 'shop.fixtures'
";
        let end = RunEnd::exited(4);
        let r = parse_streams(parser(), b"", stderr.as_bytes(), &end);
        let e = errors(&r);
        assert_eq!(e.len(), 1);
        assert_eq!(place(e[0]), (Some("tests/conftest.py"), Some(5), Some("ModuleNotFoundError"), None));
        assert_eq!(e[0].log_range.map(|l| (l.start, l.end)), Some((1, 4)));
        assert_eq!(r.summary, None);
    }

    #[test]
    fn quiet_parametrized_ids() {
        let log = "\
..F.F.                                                                   [100%]
=================================== FAILURES ===================================
__________________________ test_scale[-1.5-2--3.0] _____________________________

x = -1.5, k = 2, want = -3.0

    @pytest.mark.parametrize(\"x, k, want\", CASES)
    def test_scale(x, k, want):
>       assert scale(x, k) == want
E       assert -3.5 == -3.0

tests/test_scale.py:9: AssertionError
____________________________ test_scale[big-one] _______________________________

x = 1e+300, k = 10, want = inf

    @pytest.mark.parametrize(\"x, k, want\", CASES)
    def test_scale(x, k, want):
>       assert scale(x, k) == want
E       assert 1e+301 == inf

tests/test_scale.py:9: AssertionError
=========================== short test summary info ============================
FAILED tests/test_scale.py::test_scale[-1.5-2--3.0] - assert -3.5 == -3.0
FAILED tests/test_scale.py::test_scale[big-one] - assert 1e+301 == inf
2 failed, 4 passed in 0.03s
";
        let r = parse_log(parser(), log.as_bytes(), 1);
        let tests = errors(&r).iter().map(|d| d.test.clone().unwrap_or_default()).collect::<Vec<_>>();
        assert_eq!(tests, ["tests/test_scale.py::test_scale[-1.5-2--3.0]", "tests/test_scale.py::test_scale[big-one]"]);
        assert_eq!(counts(&r), Some((4, 2, 0, Some(0), Some(0), Some(0), 6)));
    }

    #[test]
    fn skips_xfail_xpass_are_information() {
        let log = "\
collected 5 items / 1 skipped

tests/test_fmt.py .sxX                                                   [100%]

=================================== XPASSES ====================================
=========================== short test summary info ============================
SKIPPED [1] tests/test_yaml.py:2: no yaml
SKIPPED [1] tests/test_fmt.py:10: windows only
XFAIL tests/test_fmt.py::test_hours - not supported yet
XPASS tests/test_fmt.py::test_round - flaky
============= 1 passed, 2 skipped, 1 xfailed, 1 xpassed in 0.02s ==============
";
        let r = parse_log(parser(), log.as_bytes(), 0);
        assert!(errors(&r).is_empty());
        let infos = r.diagnostics.iter().filter(|d| d.severity == Severity::Info).collect::<Vec<_>>();
        assert_eq!(infos.len(), 4);
        assert_eq!(
            (infos[1].file.as_deref(), infos[1].line, infos[1].message.as_str()),
            (Some("tests/test_fmt.py"), Some(10), "windows only")
        );
        assert_eq!(
            (infos[3].code.as_deref(), infos[3].test.as_deref()),
            (Some("XPASS"), Some("tests/test_fmt.py::test_round"))
        );
        assert_eq!(counts(&r), Some((1, 0, 2, Some(0), Some(1), Some(1), 5)));
        assert!(r.failed_tests.is_empty());
    }

    #[test]
    fn strict_xpass_is_a_failure_without_location() {
        let log = "\
=================================== FAILURES ===================================
________________________________ test_must_fail ________________________________
[XPASS(strict)] known bug
=========================== short test summary info ============================
FAILED tests/test_bug.py::test_must_fail - [XPASS(strict)] known bug
============================== 1 failed in 0.01s ===============================
";
        let r = parse_log(parser(), log.as_bytes(), 1);
        let e = errors(&r);
        assert_eq!(place(e[0]), (None, None, None, Some("tests/test_bug.py::test_must_fail")));
        assert!(e[0].message.contains("XPASS(strict)"));
        assert_eq!(r.failed_tests, ["tests/test_bug.py::test_must_fail"]);
    }

    #[test]
    fn warnings_summary_with_absolute_paths() {
        let log = "\
=============================== warnings summary ===============================
tests/test_api.py:30
  /home/dev/shop/tests/test_api.py:30: PytestUnknownMarkWarning: Unknown pytest.mark.slow - is this a typo?
    @pytest.mark.slow

tests/test_api.py::test_a
tests/test_api.py::test_b
  /home/dev/shop/shop/api.py:12: DeprecationWarning: get() is deprecated
    warnings.warn(\"get() is deprecated\", DeprecationWarning)

-- Docs: https://docs.pytest.org/en/stable/how-to/capture-warnings.html
======================== 2 passed, 3 warnings in 0.02s =========================
";
        let r = parse_log(parser(), log.as_bytes(), 0);
        let w = r.diagnostics.iter().filter(|d| d.severity == Severity::Warning).collect::<Vec<_>>();
        assert_eq!(w.len(), 3);
        assert_eq!(place(w[0]), (Some("tests/test_api.py"), Some(30), Some("PytestUnknownMarkWarning"), None));
        assert_eq!(
            place(w[2]),
            (Some("shop/api.py"), Some(12), Some("DeprecationWarning"), Some("tests/test_api.py::test_b"))
        );
        assert_eq!(counts(&r), Some((2, 0, 0, Some(0), Some(0), Some(0), 2)));
    }

    #[test]
    fn xdist_unittest_and_stop_after_first() {
        let log = "\
created: 2/2 workers
2 workers [3 items]

.F
=================================== FAILURES ===================================
_____________________________ TestParser.test_empty ____________________________
[gw1] linux -- Python 3.12.1 /home/dev/shop/.venv/bin/python

self = <tests.test_parser.TestParser testMethod=test_empty>

    def test_empty(self):
>       self.assertEqual(parse(\"\"), [])
E       AssertionError: None != []

tests/test_parser.py:7: AssertionError
=========================== short test summary info ============================
FAILED tests/test_parser.py::TestParser::test_empty - AssertionError: None != []
!!!!!!!!!!!!!!!!!!!!!!!!!! stopping after 1 failures !!!!!!!!!!!!!!!!!!!!!!!!!!!
========================= 1 failed, 1 passed in 0.40s ==========================
";
        let r = parse_log(parser(), log.as_bytes(), 1);
        let e = errors(&r);
        assert_eq!(e.len(), 1);
        assert_eq!(
            place(e[0]),
            (
                Some("tests/test_parser.py"),
                Some(7),
                Some("AssertionError"),
                Some("tests/test_parser.py::TestParser::test_empty")
            )
        );
        assert_eq!(counts(&r).map(|c| c.6), Some(2));
    }

    #[test]
    fn doctests_and_subtests_get_their_node_ids() {
        let log = "\
=================================== FAILURES ===================================
____________________________ [doctest] util.shout ______________________________
014 
015     >>> shout(\"a\")
Expected:
    'A!'
Got:
    'A'

/home/dev/shop/util.py:15: DocTestFailure
__________________________ TestSplit.test_parts (n=2) __________________________

self = <test_split.TestSplit testMethod=test_parts>

>               self.assertEqual(len(split(n)), n)
E               AssertionError: 1 != 2

tests/test_split.py:9: AssertionError
=========================== short test summary info ============================
FAILED util.py::util.shout
SUBFAILED(n=2) tests/test_split.py::TestSplit::test_parts - AssertionError: 1 != 2
========================= 2 failed, 1 passed in 0.02s ==========================
";
        let r = parse_log(parser(), log.as_bytes(), 1);
        let e = errors(&r);
        assert_eq!(e.len(), 2, "{e:#?}");
        assert_eq!(place(e[0]), (Some("util.py"), Some(15), Some("DocTestFailure"), Some("util.py::util.shout")));
        assert_eq!(e[0].message, "expected 'A!', got 'A'");
        assert_eq!(place(e[1]).3, Some("tests/test_split.py::TestSplit::test_parts"));
        assert_eq!(e[1].notes[0], "subtest (n=2)");
    }

    #[test]
    fn unrecognized_options_of_a_disabled_plugin() {
        // pytest 9.2.0: `python -m pytest -p no:cacheprovider --lf`, all on stderr, exit 4.
        let log = "ERROR: usage: python -m pytest [options] [file_or_dir] [file_or_dir] [...]\n\
                   python -m pytest: error: unrecognized arguments: --lf\n  inifile: None\n  rootdir: /home/dev/shop\n";
        let with_args = |args: &[&str]| {
            let context = ParseContext::new("pytest.run", CWD).with_args(args.iter().map(|a| a.to_string()).collect());
            parse_log(Box::new(PytestParser::new(&context)), log.as_bytes(), 4)
        };
        let r = with_args(&["-p", "no:cacheprovider", "--lf"]);
        assert_eq!(errors(&r)[0].message, "unrecognized arguments: --lf");
        assert_eq!(errors(&r)[0].notes, ["-p no:cacheprovider removes its plugin's options too"]);
        let r = with_args(&["-pno:cacheprovider", "-p=no:doctest", "--lf"]);
        assert_eq!(errors(&r)[0].notes, ["-p no:cacheprovider, -p no:doctest remove their plugins' options too"]);
        assert!(errors(&with_args(&["--lf", "--", "-p", "no:x"]))[0].notes.is_empty());
    }

    #[test]
    fn tb_no_uses_the_junit_report() {
        let log = "\
=========================== short test summary info ============================
FAILED tests/test_units.py::TestMeters::test_cm[1.5] - assert 150 == 151
============================== 1 failed in 0.01s ===============================
";
        let xml = "<testsuites><testsuite errors=\"0\" failures=\"1\" skipped=\"0\" tests=\"1\">\
            <testcase classname=\"tests.test_units.TestMeters\" name=\"test_cm[1.5]\"><failure message=\"assert 150 == 151\">\
            &gt;       assert to_cm(1.5) == 151\nE       assert 150 == 151\n\ntests/test_units.py:9: AssertionError\
            </failure></testcase></testsuite></testsuites>";
        let path = std::env::temp_dir().join(format!("bv-pytest-junit-{}.xml", std::process::id()));
        std::fs::write(&path, xml).expect("write junit");
        let end = RunEnd::exited(1).with_artifacts(vec![path.to_string_lossy().into_owned()]);
        let r = parse_streams(parser(), log.as_bytes(), b"", &end);
        let _ = std::fs::remove_file(&path);
        let e = errors(&r);
        assert_eq!(e.len(), 1, "{e:#?}");
        assert_eq!(
            place(e[0]),
            (
                Some("tests/test_units.py"),
                Some(9),
                Some("AssertionError"),
                Some("tests/test_units.py::TestMeters::test_cm[1.5]")
            )
        );
    }

    #[test]
    fn tb_no_without_report_uses_the_summary_line() {
        let log = "FAILED tests/t.py::test_a - ValueError: bad\n1 failed in 0.01s\n";
        let with_banner =
            format!("=========================== short test summary info ============================\n{log}");
        let r = parse_log(parser(), with_banner.as_bytes(), 1);
        assert_eq!(place(errors(&r)[0]), (Some("tests/t.py"), None, Some("ValueError"), Some("tests/t.py::test_a")));
    }

    #[test]
    fn startup_errors() {
        let r = parse_log(parser(), b"/usr/bin/python3: No module named pytest\n", 1);
        let e = errors(&r);
        assert_eq!((e[0].message.as_str(), e[0].notes.len()), ("No module named pytest", 1));
        assert!(e[0].notes[0].contains("`/usr/bin/python3 -m pip install pytest`"), "{:?}", e[0].notes);
        let r = parse_log(parser(), b"/home/dev/shop/.venv/bin/python: No module named pytest\n", 1);
        assert_eq!(
            errors(&r)[0].notes,
            ["pytest is not installed for .venv/bin/python; install it with `.venv/bin/python -m pip install pytest` \
              and run again"],
            "the project's own venv, as typed from the project"
        );
        let usage = "ERROR: usage: python -m pytest [options] [file_or_dir] [file_or_dir] [...]\n\
                     python -m pytest: error: unrecognized arguments: --bogus\n  inifile: None\n  rootdir: /home/dev/shop\n";
        let r = parse_log(parser(), usage.as_bytes(), 4);
        assert_eq!(
            errors(&r).iter().map(|d| d.message.as_str()).collect::<Vec<_>>(),
            ["unrecognized arguments: --bogus"]
        );
        let r = parse_log(parser(), b"ERROR: file or directory not found: tests/nope.py\n\n", 4);
        assert_eq!(errors(&r)[0].message, "file or directory not found: tests/nope.py");
        let internal = "INTERNALERROR> Traceback (most recent call last):\nINTERNALERROR>   File \"/v/x.py\", line 3, in f\nINTERNALERROR> ValueError: broken hook\n";
        let r = parse_log(parser(), internal.as_bytes(), 3);
        let e = errors(&r);
        assert_eq!((e.len(), e[0].message.as_str()), (1, "ValueError: broken hook"));
        assert_eq!(e[0].log_range.map(|l| (l.start, l.end)), Some((1, 3)));
    }

    #[test]
    fn log_from_elsewhere_is_made_relative_to_its_rootdir() {
        let log = "rootdir: /home/ci/build\n=============================== warnings summary ===============================\n\
                   tests/t.py::test_a\n  /home/ci/build/lib/m.py:3: UserWarning: careful\n    warn('careful')\n\n\
                   ============================== 1 passed, 1 warning in 0.01s ===============================\n";
        let r = parse_log(parser(), log.as_bytes(), 0);
        assert_eq!(r.diagnostics[0].file.as_deref(), Some("lib/m.py"));
        assert!(is_foreign("/home/ci/build", CWD));
        assert!(!is_foreign("/home/dev", CWD));
        assert!(!is_foreign("/home/dev/shop/", CWD));
    }

    #[test]
    fn odd_input_never_panics() {
        let mut log = b"=== FAILURES ===\n___ test_x ___\nE   \xff\xfe broken\n".to_vec();
        log.extend(std::iter::repeat_n(b'=', 1 << 20));
        log.extend(b"\n_ _ _\ntests/t.py:\nt.py:1:\n:3: X\nSKIPPED [\nFAILED \nXFAIL\n[gw] [\n1 passed in\n");
        log.extend(
            b"=== short test summary info ===\nFAILED\nSKIPPED [1] x\n=== ERRORS ===\n___ ERROR at setup of  ___\n",
        );
        let r = parse_log(parser(), &log, 1);
        assert_eq!(r.summary, None);
        assert_eq!(errors(&r).len(), 2);
    }

    #[test]
    fn reports_cut_after_their_colon_still_say_what_they_are() {
        let log = [
            "ERROR: ",
            "=============================== warnings summary ===============================",
            "tests/t.py::test_a",
            "  /home/dev/shop/lib/m.py:3: UserWarning: ",
            "=========================== short test summary info ============================",
            "SKIPPED [1] tests/t.py:3: ",
            "XFAIL tests/t.py::test_x - ",
            "FAILED tests/t.py::test_b - ",
            "XPASS ",
            "SKIPPED [1] : no file",
            "============================== 1 failed in 0.01s ===============================",
        ]
        .join("\n");
        let r = parse_log(parser(), log.as_bytes(), 1);
        let messages: Vec<&str> = r.diagnostics.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(messages, ["error", "FAILED", "UserWarning", "SKIPPED", "XFAIL", "XPASS", "no file"]);
        let named = |d: &&Diagnostic| d.file.as_deref() == Some("") || d.test.as_deref() == Some("");
        assert_eq!(r.diagnostics.iter().find(named), None);
    }

    #[test]
    fn collection_interrupted_says_what_did_not_run() {
        let log = "\
rootdir: /home/dev/shop
collected 5 items / 2 errors

==================================== ERRORS ====================================
______________________ ERROR collecting tests/test_tax.py ______________________
tests/test_tax.py:1: in <module>
    from shop.tax import rate
E   ModuleNotFoundError: No module named 'shop.tax'
______________________ ERROR collecting tests/test_fmt.py ______________________
E     File \"/home/dev/shop/tests/test_fmt.py\", line 5
E   SyntaxError: invalid syntax
=========================== short test summary info ============================
ERROR tests/test_tax.py
ERROR tests/test_fmt.py
!!!!!!!!!!!!!!!!!!! Interrupted: 2 errors during collection !!!!!!!!!!!!!!!!!!!!
============================== 2 errors in 0.30s ===============================
";
        let r = parse_log(parser(), log.as_bytes(), 2);
        assert_eq!(r.stopped_early.as_deref(), Some("collection interrupted: collected 5, ran 0"));
    }

    #[test]
    fn maxfail_says_how_many_tests_did_not_run() {
        let log = |stop: &str, counts: &str| {
            format!(
                "collected 7 items\n\ntests/test_more.py .F                                                    [ 28%]\n\
                 tests/test_units.py .F\n\n{stop}\n{counts}\n"
            )
        };
        let bang = "!!!!!!!!!!!!!!!!!!!!!!!!!! stopping after 2 failures !!!!!!!!!!!!!!!!!!!!!!!!!!!";
        let end = "========================= 2 failed, 2 passed in 0.04s ==========================";
        let r = parse_log(parser(), log(bang, end).as_bytes(), 1);
        assert_eq!(r.stopped_early.as_deref(), Some("stopped after 2 failures (--maxfail=2); 3 tests not run"));
        let bang = "!!!!!!!!!!!!!!!!!!!!!!!!!! stopping after 1 failures !!!!!!!!!!!!!!!!!!!!!!!!!!!";
        let end = "========================= 1 failed, 1 passed in 0.03s ==========================";
        let r = parse_log(parser(), log(bang, end).as_bytes(), 1);
        assert_eq!(r.stopped_early.as_deref(), Some("stopped after 1 failure (-x); 5 tests not run"));
        let quiet = format!(".F\n{bang}\n1 failed, 1 passed in 0.03s\n");
        let r = parse_log(parser(), quiet.as_bytes(), 1);
        assert_eq!(r.stopped_early.as_deref(), Some("stopped after 1 failure (-x); the rest did not run"));
        // The last test failed: nothing was left to run.
        let all = format!("collected 2 items\n\n.F\n{bang}\n1 failed, 1 passed in 0.03s\n");
        assert_eq!(parse_log(parser(), all.as_bytes(), 1).stopped_early, None);
    }

    #[test]
    fn pytest_exit_after_the_final_line_is_a_stop() {
        let log = "\
collected 4 items

tests/test_db.py .

============================== 1 passed in 0.16s ===============================
!!!!! _pytest.outcomes.Exit: SHOP_DB is not set; start the database first !!!!!!
";
        let r = parse_log(parser(), log.as_bytes(), 3);
        assert_eq!(
            r.stopped_early.as_deref(),
            Some("pytest.exit(): SHOP_DB is not set; start the database first; 3 tests not run")
        );
        assert_eq!(parse_log(parser(), DEFAULT.as_bytes(), 1).stopped_early, None);
    }

    #[test]
    fn startup_failures_point_at_the_projects_own_frame() {
        let stderr = "\
ImportError while loading conftest '/home/dev/shop/tests/conftest.py'.
tests/conftest.py:6: in <module>
    FIXTURES = json.loads(Path(__file__).with_name(\"data.json\").read_text())
               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
/home/dev/.pyenv/versions/3.11.7/lib/python3.11/json/__init__.py:346: in loads
    return _default_decoder.decode(s)
../venv/lib/python3.11/site-packages/simplejson/decoder.py:353: in raw_decode
    obj, end = self.scan_once(s, idx)
E   json.decoder.JSONDecodeError: Expecting property name enclosed in double quotes: line 3 column 18 (char 48)
";
        let r = parse_streams(parser(), b"", stderr.as_bytes(), &RunEnd::exited(4));
        let e = errors(&r);
        assert_eq!(e.len(), 1);
        assert_eq!(place(e[0]), (Some("tests/conftest.py"), Some(6), Some("json.decoder.JSONDecodeError"), None));
        assert_eq!(r.stopped_early.as_deref(), Some("no tests ran"));
        let plugin = "\
Error while loading plugin \"shop_plugin\".
shop_plugin.py:4: in <module>
    DEFAULT = TIMEOUTS[\"medium\"]
              ^^^^^^^^^^^^^^^^^^
E   KeyError: 'medium'
";
        let r = parse_streams(parser(), b"", plugin.as_bytes(), &RunEnd::exited(3));
        let e = errors(&r);
        assert_eq!(place(e[0]), (Some("shop_plugin.py"), Some(4), Some("KeyError"), None));
        assert_eq!(e[0].message, "KeyError: 'medium'");
        assert_eq!(r.stopped_early.as_deref(), Some("no tests ran"));
    }

    #[test]
    fn internal_error_points_at_the_projects_hook() {
        let log = "\
rootdir: /home/dev/shop
collected 2 items
INTERNALERROR> Traceback (most recent call last):
INTERNALERROR>   File \"/home/dev/venv/lib/python3.11/site-packages/_pytest/main.py\", line 333, in wrap_session
INTERNALERROR>     session.exitstatus = doit(config, session) or 0
INTERNALERROR>   File \"/home/dev/shop/conftest.py\", line 3, in pytest_collection_modifyitems
INTERNALERROR>     items.sort(key=lambda item: order[speed_of(item)])
INTERNALERROR>   File \"/home/dev/shop/conftest.py\", line 8, in <lambda>
INTERNALERROR>     return order[marker]
INTERNALERROR>   File \"/home/dev/shop/.venv/lib/python3.11/site-packages/pluggy/_hooks.py\", line 9, in get
INTERNALERROR>     raise KeyError(name)
INTERNALERROR> KeyError: 'medium'

============================ no tests ran in 0.02s =============================
";
        let r = parse_log(parser(), log.as_bytes(), 3);
        let e = errors(&r);
        assert_eq!(e.len(), 1);
        assert_eq!(place(e[0]), (Some("conftest.py"), Some(8), Some("INTERNALERROR"), None));
        assert_eq!(e[0].message, "KeyError: 'medium'");
        assert_eq!(r.stopped_early.as_deref(), Some("pytest internal error: collected 2, ran 0"));
        // Outside the project, or on stderr before the session started: no place, still the error.
        let bare = "INTERNALERROR> Traceback (most recent call last):\n\
                    INTERNALERROR>   File \"/usr/lib/python3/x.py\", line 3, in f\nINTERNALERROR> ValueError: bad\n";
        let r = parse_streams(parser(), b"", bare.as_bytes(), &RunEnd::exited(3));
        assert_eq!(place(errors(&r)[0]), (None, None, Some("INTERNALERROR"), None));
        assert_eq!(r.stopped_early.as_deref(), Some("pytest internal error: no tests ran"));
    }

    #[test]
    fn a_plugins_warning_turned_into_an_internal_error_is_that_warning_at_the_plugins_call() {
        // pytest 8.4.2 and pytest-asyncio 0.24.0 under `python -W error -m pytest` (on stderr):
        // the plugin's `pytest_configure` warns, and the warning ends pytest before it starts.
        let log = "\
INTERNALERROR> Traceback (most recent call last):
INTERNALERROR>   File \"/home/dev/shop/.venv/lib/python3.11/site-packages/_pytest/main.py\", line 285, in wrap_session
INTERNALERROR>     config._do_configure()
INTERNALERROR>   File \"/home/dev/shop/.venv/lib/python3.11/site-packages/pluggy/_execution.py\", line 147, in _multicall
INTERNALERROR>     res = hook_impl.function(*args)
INTERNALERROR>           ^^^^^^^^^^^^^^^^^^^^^^^^^
INTERNALERROR>   File \"/home/dev/shop/.venv/lib/python3.11/site-packages/pytest_asyncio/plugin.py\", line 208, in pytest_configure
INTERNALERROR>     warnings.warn(PytestDeprecationWarning(_DEFAULT_FIXTURE_LOOP_SCOPE_UNSET))
INTERNALERROR> pytest.PytestDeprecationWarning: The configuration option \"asyncio_default_fixture_loop_scope\" is unset.
INTERNALERROR> The event loop scope for asynchronous fixtures will default to the fixture caching scope.
";
        let r = parse_streams(parser(), b"", log.as_bytes(), &RunEnd::exited(3));
        let e = errors(&r);
        assert_eq!(e.len(), 1);
        assert_eq!(
            place(e[0]),
            (
                Some(".venv/lib/python3.11/site-packages/pytest_asyncio/plugin.py"),
                Some(208),
                Some("PytestDeprecationWarning"),
                None
            )
        );
        assert_eq!(e[0].message, "The configuration option \"asyncio_default_fixture_loop_scope\" is unset.");
        assert_eq!(r.stopped_early.as_deref(), Some("pytest internal error: no tests ran"));
    }

    #[test]
    fn a_module_whose_collection_failed_inside_pytest_is_the_place_and_its_warning_the_code() {
        // pytest 9.2.0 with `filterwarnings = error` (python-humanize/humanize's config): a test
        // parametrized with a generator; every frame of the traceback is pytest's or pluggy's.
        let log = "\
collected 0 items / 1 error

==================================== ERRORS ====================================
_____________________ ERROR collecting tests/test_lists.py _____________________
.venv/lib/python3.11/site-packages/_pytest/python.py:1396: in parametrize
    argnames, parametersets = ParameterSet._for_parametrize(
.venv/lib/python3.11/site-packages/_pytest/mark/structures.py:212: in _for_parametrize
    warnings.warn(
E   pytest.PytestRemovedIn10Warning: Passing a non-Collection iterable to parametrize is deprecated.
E   Test: tests/test_lists.py::test_natural_list_from_words, argvalues type: generator
=========================== short test summary info ============================
ERROR tests/test_lists.py - pytest.PytestRemovedIn10Warning: Passing a non-Co...
!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
=============================== 1 error in 1.16s ===============================
";
        let r = parse_log(parser(), log.as_bytes(), 2);
        let e = errors(&r);
        assert_eq!(e.len(), 1);
        assert_eq!(place(e[0]), (Some("tests/test_lists.py"), None, Some("PytestRemovedIn10Warning"), None));
        assert!(e[0].message.starts_with("PytestRemovedIn10Warning: Passing a non-Collection iterable"));
    }

    #[test]
    fn a_warning_the_short_summary_alone_reports_is_named_by_its_class() {
        // pytest 9.2.0, python-humanize/humanize: the short summary's line, all that reports the
        // error when no section does (`--tb=no`), qualifies the class with its module.
        let short = "\
=========================== short test summary info ============================
ERROR tests/test_lists.py - pytest.PytestRemovedIn10Warning: Passing a non-Co...
!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
=============================== 1 error in 1.16s ===============================
";
        let r = parse_log(parser(), short.as_bytes(), 2);
        assert_eq!(errors(&r)[0].code.as_deref(), Some("PytestRemovedIn10Warning"));
        assert_eq!(errors(&r)[0].message, "PytestRemovedIn10Warning: Passing a non-Co...");
    }

    #[test]
    fn cache_warnings_are_the_toolchains() {
        let log = "\
=============================== warnings summary ===============================
../venv/lib/python3.11/site-packages/_pytest/cacheprovider.py:487
  /home/dev/venv/lib/python3.11/site-packages/_pytest/cacheprovider.py:487: PytestCacheWarning: could not create cache path /home/dev/shop/.pytest_cache/v/cache/nodeids: [Errno 30] Read-only file system: '/home/dev/shop/pytest-cache-files-kj05hccr'
    config.cache.set(\"cache/nodeids\", sorted(str(n) for n in self.cached_nodeids))

tests/test_a.py:30
  /home/dev/shop/tests/test_a.py:30: PytestUnknownMarkWarning: Unknown pytest.mark.slow - is this a typo?
    @pytest.mark.slow

-- Docs: https://docs.pytest.org/en/stable/how-to/capture-warnings.html
======================== 2 passed, 2 warnings in 0.02s =========================
";
        let r = parse_log(parser(), log.as_bytes(), 0);
        let w: Vec<_> = r.diagnostics.iter().map(|d| (d.code.as_deref(), d.toolchain)).collect();
        assert_eq!(w, [(Some("PytestCacheWarning"), true), (Some("PytestUnknownMarkWarning"), false)]);
    }

    #[test]
    fn progress_counts_while_running() {
        let mut p = parser();
        let lines = [
            "collecting ... collected 6 items",
            "",
            "tests/t.py ..F.                 [ 66%]",
            "tests/u.py .s                   [100%]",
        ];
        p.feed(Line::new(Stream::Stdout, 1, lines[0].as_bytes()));
        assert_eq!((p.progress().tests, p.progress().tests_total), (0, Some(6)), "the total is known once collected");
        for (i, l) in lines.iter().enumerate().skip(1) {
            p.feed(Line::new(Stream::Stdout, i as u64 + 1, l.as_bytes()));
        }
        assert_eq!(p.progress().tests, 6);
    }
}
