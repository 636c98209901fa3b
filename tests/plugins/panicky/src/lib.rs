//! Test-only plugin for the host's robustness tests: tools whose parsers panic, a tool that runs
//! whatever shell script the test sends, and a tool whose program does not exist.
//!
//! Not a model of a real plugin: real plugins never plan a shell. Here the script is the test's
//! way to make the host face odd processes (grandchildren, timeouts, huge lines, raw bytes).
//!
//! Tools (the script is `args[0]`, else a default that prints two lines and exits 3):
//! - `panicky.sh`: runs the script; its parser reports each `error: MSG` line as an error.
//! - `panicky.feed`: runs the script; its parser panics on the first line it is fed.
//! - `panicky.finish`: runs the script; its parser panics in `finish`.
//! - `panicky.missing`: plans a program that does not exist.
//! - `panicky.loop`: runs the script; its parser loops forever on a line that says `loop`.
//! - `panicky.slow`: runs the script; its parser spends 5 s of CPU on a line that says `slow`.
//! - `panicky.nap`: runs the script; its parser sleeps 5 s on a line that says `nap`, as a parser
//!   a loaded machine does not run would wait.
//! - `panicky.drop`: runs the script; its parser panics in `feed` on a line that says `boom`, and
//!   its `Drop` panics too.
//! - `panicky.mutate`: runs the script, and says it changes the workspace (needs consent).
//! - `panicky.run`: runs `args[0]` as the program, with the other args.

use buildvise_plugin_api::{
    CommandPlan, Diagnostic, Line, Manifest, ParseContext, ParseResult, Parser, PlanRequest, Plugin, RunEnd, ToolSpec,
    export_plugin,
};

/// What the tools run when the test sends no script.
const DEFAULT_SCRIPT: &str = "echo 'to stdout'; echo 'to stderr' >&2; exit 3";
/// A program name no machine has.
const MISSING_PROGRAM: &str = "buildvise-test-no-such-program";

#[derive(Default)]
struct Panicky;

fn tool(name: &str, description: &str) -> ToolSpec {
    ToolSpec::new(name, description).with_args_hint("a shell script")
}

impl Plugin for Panicky {
    fn manifest(&self) -> Manifest {
        let tools = vec![
            tool("panicky.sh", "Run a shell script (test plugin)"),
            tool("panicky.feed", "Run a shell script; the parser panics in feed (test plugin)"),
            tool("panicky.finish", "Run a shell script; the parser panics in finish (test plugin)"),
            tool("panicky.missing", "Plan a program that does not exist (test plugin)"),
            tool("panicky.loop", "Run a shell script; the parser loops forever on `loop` (test plugin)"),
            tool("panicky.slow", "Run a shell script; the parser spends 5 s of CPU on `slow` (test plugin)"),
            tool("panicky.nap", "Run a shell script; the parser sleeps 5 s on `nap` (test plugin)"),
            tool("panicky.drop", "Run a shell script; the parser's Drop panics (test plugin)"),
            tool("panicky.mutate", "Run a shell script that changes the workspace (test plugin)").mutating(),
            tool("panicky.tidy", "Run a shell script; it changes the workspace unless --check (test plugin)")
                .mutating()
                .read_only_with("--check"),
            tool("panicky.run", "Run a program (test plugin)"),
        ];
        Manifest::new("panicky", "0.0.0", tools)
    }

    fn plan(&self, request: &PlanRequest) -> Result<CommandPlan, String> {
        if request.tool == "panicky.missing" {
            return Ok(CommandPlan::new(MISSING_PROGRAM));
        }
        if request.tool == "panicky.run" {
            let (program, args) =
                request.args.split_first().ok_or("panicky.run needs the program as its first argument")?;
            return Ok(CommandPlan::new(program).with_args(args.iter().cloned()));
        }
        let args = match request.args.split_first() {
            Some((flag, rest)) if flag == "--check" => rest,
            _ => request.args.as_slice(),
        };
        let script = args.first().map(String::as_str).unwrap_or(DEFAULT_SCRIPT);
        Ok(CommandPlan::new("sh").with_args(["-c", script]))
    }

    fn parser(&self, context: &ParseContext) -> Box<dyn Parser> {
        let parser = ScriptParser {
            panic_in_feed: context.tool == "panicky.feed",
            panic_in_finish: context.tool == "panicky.finish",
            loop_on: (context.tool == "panicky.loop").then_some(&b"loop"[..]),
            slow_on: (context.tool == "panicky.slow").then_some(&b"slow"[..]),
            nap_on: (context.tool == "panicky.nap").then_some(&b"nap"[..]),
            lines: 0,
            errors: Vec::new(),
        };
        if context.tool == "panicky.drop" { Box::new(DropPanics(parser)) } else { Box::new(parser) }
    }
}

struct ScriptParser {
    panic_in_feed: bool,
    panic_in_finish: bool,
    /// A line that sends `feed` into an endless loop.
    loop_on: Option<&'static [u8]>,
    /// A line that costs `feed` 5 s of CPU.
    slow_on: Option<&'static [u8]>,
    /// A line on which `feed` sleeps 5 s.
    nap_on: Option<&'static [u8]>,
    lines: u64,
    errors: Vec<Diagnostic>,
}

impl Parser for ScriptParser {
    fn feed(&mut self, line: Line<'_>) {
        if self.panic_in_feed {
            panic!("panicky parser: feed broke on line {}", line.number);
        }
        if self.loop_on == Some(line.bytes) {
            // Spins without end, as a parser with a runaway loop or backtracking regex would.
            let mut spins = 0u64;
            loop {
                spins = std::hint::black_box(spins.wrapping_add(1));
            }
        }
        if self.slow_on == Some(line.bytes) {
            spend_cpu(std::time::Duration::from_secs(5));
        }
        if self.nap_on == Some(line.bytes) {
            std::thread::sleep(std::time::Duration::from_secs(5));
        }
        self.lines += 1;
        if let Some(message) = line.bytes.strip_prefix(b"error: ") {
            let message = String::from_utf8_lossy(message).into_owned();
            self.errors.push(Diagnostic::error(message).with_log_range(line.number, line.number));
        }
    }

    fn finish(&mut self, _end: &RunEnd) -> ParseResult {
        if self.panic_in_finish {
            panic!("panicky parser: finish broke after {} lines", self.lines);
        }
        ParseResult::new(std::mem::take(&mut self.errors))
    }
}

/// Spins until this thread has spent `cpu` more CPU time, however long a loaded machine makes
/// that take (Linux's count for the thread; elsewhere, the wall clock).
fn spend_cpu(cpu: std::time::Duration) {
    let spent = || {
        let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
        text.split_whitespace().next()?.parse().ok().map(std::time::Duration::from_nanos)
    };
    let (start, wall) = (spent(), std::time::Instant::now());
    let mut spins = 0u64;
    while match (start, spent()) {
        (Some(start), Some(now)) => now - start < cpu,
        _ => wall.elapsed() < cpu,
    } {
        for _ in 0..100_000 {
            spins = std::hint::black_box(spins.wrapping_add(1));
        }
    }
}

/// A parser that panics on `boom` and panics again when dropped.
struct DropPanics(ScriptParser);

impl Parser for DropPanics {
    fn feed(&mut self, line: Line<'_>) {
        if line.bytes == b"boom" {
            panic!("panicky parser: boom at line {}", line.number);
        }
        self.0.feed(line);
    }

    fn finish(&mut self, end: &RunEnd) -> ParseResult {
        self.0.finish(end)
    }
}

impl Drop for DropPanics {
    fn drop(&mut self) {
        panic!("panicky parser: Drop panicked");
    }
}

export_plugin!(Panicky);
