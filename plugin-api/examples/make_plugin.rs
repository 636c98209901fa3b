//! The plugin from docs/plugins.md, built as a real library so the guide's code always compiles
//! and works: `cargo build -p buildvise-plugin-api --example make_plugin`.

use buildvise_plugin_api::{
    CommandPlan, Diagnostic, DiagnosticSet, Head, Line, Manifest, ParseContext, ParseResult, Parser, PlanRequest,
    Plugin, Recogniser, Recognisers, RunEnd, Severity, Text, ToolSpec, Wants, relative_to, split_location,
};

#[derive(Default)]
pub struct MakePlugin;

impl Plugin for MakePlugin {
    fn manifest(&self) -> Manifest {
        let build =
            ToolSpec::new("make.build", "Build with make (make ARGS)").with_args_hint("make targets and VAR=value");
        Manifest::new("make", env!("CARGO_PKG_VERSION"), vec![build])
    }

    fn plan(&self, request: &PlanRequest) -> Result<CommandPlan, String> {
        for (i, arg) in request.args.iter().enumerate() {
            if arg.starts_with("SHELL=") {
                return Err("SHELL= would run another program; send targets and variables only".into());
            }
            // `-C DIR` runs make elsewhere: keep it inside the directories this call may use.
            if arg == "-C" {
                request.check_path("-C", request.args.get(i + 1).map_or("", String::as_str))?;
            }
        }
        Ok(CommandPlan::new("make").with_args(request.args.iter().cloned()))
    }

    fn parser(&self, context: &ParseContext) -> Box<dyn Parser> {
        // One line per output format: the plugin-api offers each line only to those that may want it.
        let recognisers = Recognisers::new().add(GccLines);
        let found = Found { cwd: context.cwd.clone(), diagnostics: DiagnosticSet::new() };
        Box::new(MakeParser { recognisers, found })
    }
}

/// What the recognisers found.
struct Found {
    cwd: String,
    diagnostics: DiagnosticSet,
}

/// `file:line:col: error|warning: message`, as gcc and clang print them.
struct GccLines;

impl Recogniser<Found> for GccLines {
    /// Only lines that say `: error: ` or `: warning: ` somewhere: the others never reach `feed`,
    /// and are never decoded.
    fn wants(&self) -> Wants {
        Wants::test(|head: &Head<'_>| head.contains(b": error: ") || head.contains(b": warning: "))
    }

    fn feed(&mut self, line: &Text<'_>, found: &mut Found) -> bool {
        let Some((location, rest)) = line.text.split_once(": ") else { return false };
        let (severity, message) = match rest.split_once(": ") {
            Some(("error", m)) => (Severity::Error, m),
            Some(("warning", m)) => (Severity::Warning, m),
            _ => return false,
        };
        let Some((file, l, col)) = split_location(location) else { return false };
        let d = Diagnostic::new(severity, message)
            .with_location(relative_to(file, &found.cwd), Some(l), col)
            .with_log_range(line.number, line.number);
        found.diagnostics.push(d);
        true
    }
}

struct MakeParser {
    recognisers: Recognisers<Found>,
    found: Found,
}

impl Parser for MakeParser {
    fn feed(&mut self, line: Line<'_>) {
        self.recognisers.feed(&line, &mut self.found);
    }

    fn finish(&mut self, _end: &RunEnd) -> ParseResult {
        self.recognisers.finish(&mut self.found);
        ParseResult::new(std::mem::take(&mut self.found.diagnostics).into_vec())
    }
}

buildvise_plugin_api::export_plugin!(MakePlugin);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_gcc_errors() {
        let parser = MakePlugin.parser(&ParseContext::new("make.build", "/p"));
        let log = b"make: Entering directory '/p'\n/p/src/a.c:3:7: error: boom\nsrc/b.c:9:1: warning: unused\n";
        let result = buildvise_plugin_api::testing::parse_log(parser, log, 2);
        assert_eq!(result.diagnostics.len(), 2);
        assert_eq!(result.diagnostics[0].file.as_deref(), Some("src/a.c"));
        assert_eq!((result.diagnostics[0].line, result.diagnostics[0].column), (Some(3), Some(7)));
        assert_eq!(result.diagnostics[1].severity, Severity::Warning);
    }

    #[test]
    fn keeps_make_inside_the_allowed_directories() {
        let request = |args: &[&str]| {
            PlanRequest::new("make.build", args.iter().map(|a| a.to_string()).collect(), "/p", "/runs/x")
                .with_roots(vec!["/p".into()])
        };
        assert!(MakePlugin.plan(&request(&["-C", "sub", "all"])).is_ok());
        let refused = MakePlugin.plan(&request(&["-C", "/etc", "all"])).unwrap_err();
        assert!(refused.contains("points outside the directories this call may use"), "{refused}");
    }
}
