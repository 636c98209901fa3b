//! What the recognisers find and share: the diagnostics so far, the test run whose context tells
//! them whose output a line is, and what the end of the run is judged by (the targets that
//! started, the last one that failed, what each tool's own reader kept).

use super::libtest::{Context, TestRun, Verdict};
use super::lints::LintMemory;
use super::nextest;
use super::run::Program;
use buildvise_plugin_api::{Diagnostic, DiagnosticSet, ParseContext, relative_to, split_location};
use std::collections::{HashMap, HashSet};

/// The tools whose output needs more than cargo's own formats.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Cargo,
    Test,
    Nextest,
    Run,
    Fmt,
}

impl Kind {
    pub(crate) fn of(tool: &str) -> Kind {
        match tool {
            "cargo.test" => Kind::Test,
            "cargo.nextest" => Kind::Nextest,
            "cargo.run" => Kind::Run,
            "cargo.fmt" => Kind::Fmt,
            _ => Kind::Cargo,
        }
    }
}

/// Which of cargo's formats a parser reads: all of them for cargo's own tools, one for a tool
/// defined in a config file. The recognisers both formats share read differently with one off.
#[derive(Clone, Copy)]
pub(crate) struct Reads {
    /// rustc's and cargo's diagnostics, in any of their forms.
    pub(crate) rustc: bool,
    /// libtest's report, and what a failing test printed (panics, `should_panic` notes).
    pub(crate) libtest: bool,
}

impl Reads {
    pub(crate) const ALL: Reads = Reads { rustc: true, libtest: true };

    pub(crate) fn only(format: &str) -> Reads {
        Reads { rustc: format == "rustc", libtest: format == "libtest" }
    }
}

/// Options that choose test targets; with any of them cargo runs no doctests unless `--doc`
/// asks, so a library's build does not promise them.
const TARGET_OPTIONS: &[&str] = &[
    "--lib",
    "--bin",
    "--bins",
    "--test",
    "--tests",
    "--example",
    "--examples",
    "--bench",
    "--benches",
    "--all-targets",
];

pub(crate) struct Findings {
    pub(crate) cwd: String,
    pub(crate) kind: Kind,
    pub(crate) reads: Reads,
    pub(crate) diagnostics: DiagnosticSet,
    pub(crate) lints: LintMemory,
    pub(crate) tests: TestRun,
    /// Tests whose stack overflowed: the binary died, so no verdict will confirm them.
    pub(crate) crashed: HashSet<String>,
    /// Doctest output under --nocapture, printed before the verdict that names its test.
    pub(crate) orphans: Vec<Diagnostic>,
    /// Panics of threads a test spawned; the test's own panic is the verdict's reason.
    pub(crate) side_panics: Vec<Diagnostic>,
    /// Where in `diagnostics` the panics of tests' own threads are, in the order they came.
    pub(crate) test_panics: Vec<usize>,
    /// What each `should_panic(expected = …)` test expected. Applied at the end: under
    /// --nocapture the test's panic was printed long before, with other tests' output between.
    pub(crate) expected_strings: HashMap<String, String>,
    /// The call asked cargo to run every test target whatever fails.
    pub(crate) no_fail_fast: bool,
    /// The rerun arguments of the last `test failed, to rerun pass …` that no later test
    /// target or `N targets failed` list followed: cargo stopped after that target.
    pub(crate) last_failed_target: Option<String>,
    /// The test targets `--message-format=json` announced (cargo prints no such list otherwise).
    pub(crate) test_targets: HashSet<String>,
    /// A library's build announces its doctests (no option chose other targets).
    pub(crate) doctests_expected: bool,
    /// `Running …` and `Doc-tests …` lines: the targets that started.
    pub(crate) targets_started: usize,
    /// Under `cargo run`, whose lines are whose.
    pub(crate) program: Program,
    /// nextest is showing a test's output, whose panic its own reader reads.
    pub(crate) nextest_shows_output: bool,
    /// Set by the reader of a format that follows cargo's own output (the program under
    /// `cargo run`, nextest's run) on its first line: the parser then flushes the recognisers,
    /// which ends the diagnostic block cargo was printing.
    pub(crate) cargo_output_ended: bool,
    /// What the readers of the tools' own formats kept for the end.
    pub(crate) unformatted: Vec<Diagnostic>,
    pub(crate) nextest: Option<nextest::Finished>,
}

impl Findings {
    pub(crate) fn new(context: &ParseContext, reads: Reads) -> Self {
        let options = || context.args.iter().take_while(|a| *a != "--");
        Findings {
            cwd: context.cwd.clone(),
            kind: Kind::of(&context.tool),
            reads,
            diagnostics: DiagnosticSet::new(),
            lints: LintMemory::default(),
            tests: TestRun::default(),
            crashed: HashSet::new(),
            orphans: Vec::new(),
            side_panics: Vec::new(),
            test_panics: Vec::new(),
            expected_strings: HashMap::new(),
            no_fail_fast: options().any(|a| a == "--no-fail-fast"),
            last_failed_target: None,
            test_targets: HashSet::new(),
            doctests_expected: !options().any(|a| TARGET_OPTIONS.contains(&a.split('=').next().unwrap_or(a))),
            targets_started: 0,
            program: Program::default(),
            nextest_shows_output: false,
            cargo_output_ended: false,
            unformatted: Vec::new(),
            nextest: None,
        }
    }

    /// `cargo.test`: panics count even before a `running N tests` line shows up (streams).
    pub(crate) fn runs_tests(&self) -> bool {
        self.kind == Kind::Test
    }

    /// True while text without a test of its own may belong to the next doctest verdict.
    pub(crate) fn collecting_orphans(&self) -> bool {
        self.tests.doctests && self.tests.in_binary && self.tests.context() == Context::Free
    }

    /// A verdict names the doctest whose output came before it.
    pub(crate) fn verdict(&mut self, verdict: Verdict) {
        match verdict {
            Verdict::Failed(name) => {
                for mut d in std::mem::take(&mut self.orphans) {
                    d.test = Some(name.clone());
                    self.diagnostics.push(d);
                }
            }
            Verdict::Passed => self.orphans.clear(),
        }
    }

    /// `diag` at `location` (`src/lib.rs:5:9`), made relative to the run's folder.
    pub(crate) fn located(&self, diag: Diagnostic, location: &str) -> Diagnostic {
        match split_location(location) {
            Some((file, line, column)) => diag.with_location(relative_to(file, &self.cwd), Some(line), column),
            None => diag,
        }
    }
}
