//! buildvise plugin for npm (skeleton: being written).

use buildvise_plugin_api::{
    CommandPlan, Line, Manifest, ParseContext, ParseResult, Parser, PlanRequest, Plugin, RunEnd, ToolSpec,
};

#[derive(Default)]
pub struct ThePlugin;

impl Plugin for ThePlugin {
    fn manifest(&self) -> Manifest {
        Manifest {
            name: "npm".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            tools: vec![ToolSpec {
                name: "npm.run".into(),
                description: "skeleton".into(),
                mutates_workspace: false,
                timeout_secs: None,
                args_hint: None,
            }],
        }
    }

    fn plan(&self, request: &PlanRequest) -> Result<CommandPlan, String> {
        Ok(CommandPlan { program: "npm".into(), args: request.args.clone(), ..CommandPlan::default() })
    }

    fn parser(&self, _context: &ParseContext) -> Box<dyn Parser> {
        Box::new(Nothing)
    }
}

struct Nothing;

impl Parser for Nothing {
    fn feed(&mut self, _line: Line<'_>) {}
    fn finish(self: Box<Self>, _end: &RunEnd) -> ParseResult {
        ParseResult::default()
    }
}

buildvise_plugin_api::export_plugin!(ThePlugin);
