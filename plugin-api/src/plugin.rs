//! The safe traits a plugin implements. `export_plugin!` turns them into the C ABI.

use crate::types::{CommandPlan, Line, Manifest, ParseContext, ParseResult, PlanRequest, Progress, RunEnd};

/// Knowledge of one toolchain: which command to run for a tool, and what its output means.
///
/// A plugin never spawns processes and never touches the run store; the host does both.
pub trait Plugin: Send + Sync + 'static {
    /// The plugin's name, version and tools. Called once, when the host loads the library.
    fn manifest(&self) -> Manifest;

    /// The command for one call. Refuse with a sentence saying what to send instead
    /// (`no script "lint" in package.json; scripts: build, test`).
    fn plan(&self, request: &PlanRequest) -> Result<CommandPlan, String>;

    /// A fresh parser for one run of `context.tool`.
    fn parser(&self, context: &ParseContext) -> Box<dyn Parser>;

    /// A fresh parser that reads only `format`, one of the manifest's
    /// [`formats`](crate::Manifest::formats), for a run of a tool defined in a config file
    /// (`context.tool` is that tool's name). None for a format the plugin does not export.
    fn format_parser(&self, format: &str, context: &ParseContext) -> Option<Box<dyn Parser>> {
        let _ = (format, context);
        None
    }
}

/// Turns the lines of one run into a [`ParseResult`].
///
/// Lines arrive in the order they were printed, each tagged with its stream. When the host parses
/// saved logs with the streams apart (`buildvise parse --stdout F --stderr G`), it feeds all of
/// stdout and then all of stderr, so a parser must not depend on the two streams interleaving.
///
/// The host feeds a parser from one thread at a time, but not always the thread that created it.
pub trait Parser: Send {
    /// One line of output. Called for every line, so it is the hot path: skip irrelevant lines
    /// with a cheap test before any allocation or regex.
    fn feed(&mut self, line: Line<'_>);

    /// The result, once every line was fed. Called once; the parser is dropped afterwards (take
    /// what you gather with `std::mem::take`).
    fn finish(&mut self, end: &RunEnd) -> ParseResult;

    /// Counts so far, for the live progress of a run still going: the terminal's status line and
    /// MCP progress notifications (`1532 lines, 2 errors, 40/120 tests: Compiling serde`). The
    /// host calls it between two feeds, about twice a second, never after `finish`; keep it cheap
    /// (return counters you keep, compute nothing). Set
    /// [`tests_total`](Progress::tests_total) once the tool announced how many tests it runs, and
    /// clients draw a bar over the tests. The default reports nothing: the host then shows the
    /// line count and the last line printed.
    fn progress(&self) -> Progress {
        Progress::default()
    }
}
