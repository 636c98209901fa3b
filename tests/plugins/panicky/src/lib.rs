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
    ToolSpec {
        name: name.to_string(),
        description: description.to_string(),
        mutates_workspace: false,
        timeout_secs: None,
        args_hint: Some("a shell script".to_string()),
    }
}

impl Plugin for Panicky {
    fn manifest(&self) -> Manifest {
        Manifest {
            name: "panicky".to_string(),
            version: "0.0.0".to_string(),
            tools: vec![
                tool("panicky.sh", "Run a shell script (test plugin)"),
                tool("panicky.feed", "Run a shell script; the parser panics in feed (test plugin)"),
                tool("panicky.finish", "Run a shell script; the parser panics in finish (test plugin)"),
                tool("panicky.missing", "Plan a program that does not exist (test plugin)"),
            ],
        }
    }

    fn plan(&self, request: &PlanRequest) -> Result<CommandPlan, String> {
        if request.tool == "panicky.missing" {
            return Ok(CommandPlan { program: MISSING_PROGRAM.to_string(), ..CommandPlan::default() });
        }
        let script = request.args.first().map(String::as_str).unwrap_or(DEFAULT_SCRIPT);
        Ok(CommandPlan {
            program: "sh".to_string(),
            args: vec!["-c".to_string(), script.to_string()],
            ..CommandPlan::default()
        })
    }

    fn parser(&self, context: &ParseContext) -> Box<dyn Parser> {
        Box::new(ScriptParser {
            panic_in_feed: context.tool == "panicky.feed",
            panic_in_finish: context.tool == "panicky.finish",
            lines: 0,
            errors: Vec::new(),
        })
    }
}

struct ScriptParser {
    panic_in_feed: bool,
    panic_in_finish: bool,
    lines: u64,
    errors: Vec<Diagnostic>,
}

impl Parser for ScriptParser {
    fn feed(&mut self, line: Line<'_>) {
        if self.panic_in_feed {
            panic!("panicky parser: feed broke on line {}", line.number);
        }
        self.lines += 1;
        if let Some(message) = line.bytes.strip_prefix(b"error: ") {
            let message = String::from_utf8_lossy(message).into_owned();
            self.errors.push(Diagnostic::error(message).with_log_range(line.number, line.number));
        }
    }

    fn finish(self: Box<Self>, _end: &RunEnd) -> ParseResult {
        if self.panic_in_finish {
            panic!("panicky parser: finish broke after {} lines", self.lines);
        }
        ParseResult { diagnostics: self.errors, ..ParseResult::default() }
    }
}

export_plugin!(Panicky);
