//! Where recognisers put what they found, and how file paths are resolved.
//!
//! A tool prints paths relative to where it ran, which under npm workspaces is the package's
//! folder, not the run's cwd. The package is known from npm's banner, but its folder often only
//! later (npm's `workspace`/`location` lines come after the output, on stderr), so relative paths
//! are kept with the package they were printed under and resolved in [`Sink::finish`].

use buildvise_plugin_api::{Diagnostic, DiagnosticSet, Severity, TestSummary, clip, relative_to};
use std::collections::{HashMap, HashSet};

/// Longest message or note kept, in bytes: far above any real one (a tsc message naming two big
/// types), far below a line of minified code.
const MAX_TEXT: usize = 2000;

/// What a diagnostic with no text says instead (when it has no code either).
fn severity_word(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        _ => "info",
    }
}

/// A package whose scripts printed output: its id from the banner (`web@1.0.0`, also its key in
/// [`Sink::package_ids`]) and, once known, its absolute folder.
struct Package {
    id: String,
    location: Option<String>,
}

#[derive(Default)]
pub struct Sink {
    cwd: String,
    /// `workspaces` entries of the root package.json, to place a workspace folder printed with an
    /// absolute path from another machine.
    workspace_globs: Vec<String>,
    items: Vec<(Diagnostic, Option<usize>)>,
    failed_tests: Vec<String>,
    failed_seen: HashSet<String>,
    summary: Option<TestSummary>,
    packages: Vec<Package>,
    /// Where each package id is in `packages`: a script that runs in many workspaces prints a
    /// banner for each.
    package_ids: HashMap<String, usize>,
    current: Option<usize>,
    /// What a runner said it did not run, one phrase per runner.
    stopped_early: Vec<String>,
    /// One-line JSON reports (Jest's, Vitest's `--json`), applied when the output ends.
    pub reports: Vec<super::json_report::Report>,
    /// Every test a JSON report or a runner's text names, for reports (`--format junit`).
    pub tests: buildvise_plugin_api::TestCases,
    /// A JSON report named tests: a text that names them too (Jest's and Vitest's trees) would
    /// count each twice.
    pub report_named_tests: bool,
}

impl Sink {
    pub fn new(cwd: &str, workspace_globs: Vec<String>) -> Self {
        Sink {
            cwd: cwd.to_string(),
            workspace_globs,
            items: Vec::new(),
            failed_tests: Vec::new(),
            failed_seen: HashSet::new(),
            summary: None,
            packages: Vec::new(),
            package_ids: HashMap::new(),
            current: None,
            stopped_early: Vec::new(),
            reports: Vec::new(),
            tests: buildvise_plugin_api::TestCases::new(),
            report_named_tests: false,
        }
    }

    /// The folder the run's relative paths start from.
    pub fn cwd(&self) -> &str {
        &self.cwd
    }

    /// Number of diagnostics added so far; a recogniser compares it across a block to learn
    /// whether another one already reported what the block was about.
    pub fn count(&self) -> usize {
        self.items.len()
    }

    /// Adds a diagnostic whose `file`, if any, is as the tool printed it. Every recogniser's
    /// diagnostics pass here, so this is where text is bounded: a script can print a line of any
    /// length, or a message with no text at all.
    pub fn push(&mut self, mut diagnostic: Diagnostic) {
        diagnostic.test = diagnostic.test.filter(|t| !t.trim().is_empty());
        if diagnostic.message.trim().is_empty() {
            diagnostic.message = diagnostic.code.clone().unwrap_or_else(|| severity_word(diagnostic.severity).into());
        }
        for text in std::iter::once(&mut diagnostic.message).chain(&mut diagnostic.notes) {
            if text.len() > MAX_TEXT {
                *text = clip(text, MAX_TEXT).into_owned();
            }
        }
        let mut package = None;
        if let Some(file) = diagnostic.file.take().filter(|f| !f.trim().is_empty()) {
            let file = file.strip_prefix("file://").unwrap_or(&file);
            if buildvise_plugin_api::is_absolute(file) {
                diagnostic.file = Some(relative_to(file, &self.cwd));
            } else {
                diagnostic.file = Some(relative_to(file, ""));
                package = self.current;
            }
        }
        self.items.push((diagnostic, package));
    }

    /// Records a failed test's name, once.
    pub fn failed_test(&mut self, name: &str) {
        // A test is known by its name; a runner's line cut before it names none.
        if !name.trim().is_empty() && self.failed_seen.insert(name.to_string()) {
            self.failed_tests.push(name.to_string());
        }
    }

    pub fn has_failed_test(&self, name: &str) -> bool {
        self.failed_seen.contains(name)
    }

    /// Names the tests a runner's text named (mocha, `node --test`, Jest, Vitest): a failure only
    /// as its failure block named it, so a hook's failure or a parent failing through its
    /// children adds no case of its own.
    pub fn name_tests(&mut self, named: Vec<buildvise_plugin_api::TestCase>) {
        for test in named {
            if test.outcome != buildvise_plugin_api::TestOutcome::Failed || self.has_failed_test(&test.name) {
                self.tests.push(&test.name, test.outcome, test.duration_us);
            }
        }
    }

    pub fn has_summary(&self) -> bool {
        self.summary.is_some()
    }

    /// Adds one runner's counts; several runs in one script (workspaces) add up. Saturating: a
    /// log can print any number.
    pub fn add_summary(&mut self, counts: TestSummary) {
        let total = self.summary.get_or_insert_with(TestSummary::default);
        total.passed = total.passed.saturating_add(counts.passed);
        total.failed = total.failed.saturating_add(counts.failed);
        total.skipped = total.skipped.saturating_add(counts.skipped);
        total.total = total.total.saturating_add(counts.total);
    }

    /// A runner stopped before running all it was asked (see `ParseResult::stopped_early`).
    pub fn stopped_early(&mut self, what: String) {
        if !self.stopped_early.contains(&what) {
            self.stopped_early.push(what);
        }
    }

    /// The phrases of [`Sink::stopped_early`], joined; None when every runner ran everything.
    pub fn stopped_early_text(&self) -> Option<String> {
        (!self.stopped_early.is_empty()).then(|| self.stopped_early.join("; "))
    }

    /// npm's banner: the output that follows comes from the scripts of package `id`.
    pub fn enter_package(&mut self, id: &str) {
        // A script run again prints the same banner: no need to look its id up again.
        if self.current.is_some_and(|i| self.packages[i].id == id) {
            return;
        }
        self.current = Some(self.package_index(id));
    }

    /// The folder a tool announced it runs in (Vitest's `RUN v3 /abs/root`), for the current package.
    pub fn set_current_location(&mut self, location: &str) {
        let index = match self.current {
            Some(i) => i,
            None => {
                let i = self.package_index("");
                self.current = Some(i);
                i
            }
        };
        self.packages[index].location.get_or_insert_with(|| location.to_string());
    }

    /// npm's `workspace ID` / `location PATH` lines of a failed workspace script.
    pub fn set_location(&mut self, id: &str, location: &str) {
        let index = self.package_index(id);
        self.packages[index].location = Some(location.to_string());
    }

    fn package_index(&mut self, id: &str) -> usize {
        // Every banner comes here, and a script that runs often prints the same one: a known id
        // is no reason to allocate.
        if let Some(&index) = self.package_ids.get(id) {
            return index;
        }
        *self.package_ids.entry(id.to_string()).or_insert_with(|| {
            self.packages.push(Package { id: id.to_string(), location: None });
            self.packages.len() - 1
        })
    }

    /// The package folder relative to the cwd: under it, or, for a path from another machine,
    /// the trailing part that matches a `workspaces` entry. None when it is the cwd or unknown.
    fn package_prefix(&self, index: usize) -> Option<String> {
        let location = self.packages.get(index)?.location.as_deref()?.trim_end_matches(['/', '\\']);
        let rel = relative_to(location, &self.cwd);
        if !buildvise_plugin_api::is_absolute(&rel) {
            return Some(rel).filter(|r| !r.is_empty());
        }
        let location = location.replace('\\', "/");
        self.workspace_globs.iter().find_map(|glob| {
            let glob = glob.trim_start_matches("./").trim_end_matches('/');
            let (parent, wildcard) = match glob.strip_suffix("/*").or_else(|| glob.strip_suffix("/**")) {
                Some(parent) => (parent, true),
                None => (glob, false),
            };
            if wildcard {
                let (dir, name) = location.rsplit_once('/')?;
                (dir.ends_with(&format!("/{parent}")) && !name.is_empty()).then(|| format!("{parent}/{name}"))
            } else {
                location.ends_with(&format!("/{parent}")).then(|| parent.to_string())
            }
        })
    }

    pub fn finish(self) -> (Vec<Diagnostic>, Option<TestSummary>, Vec<String>) {
        let prefixes: Vec<Option<String>> = (0..self.packages.len()).map(|i| self.package_prefix(i)).collect();
        let mut set = DiagnosticSet::new();
        for (mut diagnostic, package) in self.items {
            if let (Some(file), Some(Some(prefix))) = (&diagnostic.file, package.map(|p| &prefixes[p])) {
                diagnostic.file = Some(format!("{prefix}/{file}"));
            }
            set.push(diagnostic);
        }
        (set.into_vec(), self.summary, self.failed_tests)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workspace_paths_resolve_through_location_lines() {
        let mut sink = Sink::new("/repo", Vec::new());
        sink.enter_package("web@1.0.0");
        sink.push(Diagnostic::error("x").with_location("src/app.ts", Some(3), Some(1)));
        sink.push(Diagnostic::error("y").with_location("/repo/lib/a.ts", Some(1), None));
        sink.set_location("web@1.0.0", "/repo/packages/web");
        let (diagnostics, _, _) = sink.finish();
        assert_eq!(diagnostics[0].file.as_deref(), Some("packages/web/src/app.ts"));
        assert_eq!(diagnostics[1].file.as_deref(), Some("lib/a.ts"));
    }

    #[test]
    fn foreign_locations_match_workspace_globs() {
        let mut sink = Sink::new("/here/project", vec!["packages/*".into()]);
        sink.enter_package("@shop/api@2.0.0");
        sink.push(Diagnostic::error("x").with_location("src/a.ts", Some(1), None));
        sink.set_location("@shop/api@2.0.0", "/elsewhere/shop/packages/api");
        let (diagnostics, _, _) = sink.finish();
        assert_eq!(diagnostics[0].file.as_deref(), Some("packages/api/src/a.ts"));
    }

    #[test]
    fn text_is_bounded_and_never_empty() {
        let mut sink = Sink::new("/repo", Vec::new());
        let long = "é".repeat(MAX_TEXT);
        sink.push(Diagnostic::error(long.as_str()).with_notes(vec![long.clone(), "short".into()]));
        sink.push(Diagnostic::warning("  ").with_code("default-case"));
        sink.push(Diagnostic::error("").with_test(" "));
        sink.failed_test(" ");
        let (diagnostics, _, failed) = sink.finish();
        assert!(failed.is_empty());
        assert_eq!(diagnostics[2].test, None);
        assert!(diagnostics[0].message.len() <= MAX_TEXT + "…".len());
        assert!(diagnostics[0].notes[0].len() <= MAX_TEXT + "…".len());
        assert_eq!(diagnostics[0].notes[1], "short");
        assert_eq!(diagnostics[1].message, "default-case");
        assert_eq!(diagnostics[2].message, "error");
    }

    #[test]
    fn counts_printed_past_u64_saturate() {
        let mut sink = Sink::new("/repo", Vec::new());
        sink.add_summary(TestSummary::new(u64::MAX, 1, 0, u64::MAX));
        sink.add_summary(TestSummary::new(2, 1, 0, 3));
        assert_eq!(sink.summary, Some(TestSummary::new(u64::MAX, 2, 0, u64::MAX)));
    }

    #[test]
    fn repeats_are_dropped_and_tests_counted_once() {
        let mut sink = Sink::new("/repo", Vec::new());
        for _ in 0..2 {
            sink.push(Diagnostic::error("boom").with_test("a > b"));
            sink.failed_test("a > b");
        }
        let (diagnostics, _, failed) = sink.finish();
        assert_eq!(diagnostics.len(), 1);
        assert_eq!(failed, ["a > b"]);
    }
}
