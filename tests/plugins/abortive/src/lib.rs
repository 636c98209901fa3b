//! Test fixture: an ordinary plugin that the robustness tests build a second time with
//! `panic = "abort"`, where `export_plugin!` must refuse to compile it.

use buildvise_plugin_api::{
    CommandPlan, Manifest, ParseContext, ParseResult, Parser, PlanRequest, Plugin, RunEnd, export_plugin,
};

#[derive(Default)]
struct Abortive;

struct Nothing;

impl Parser for Nothing {
    fn feed(&mut self, _line: buildvise_plugin_api::Line<'_>) {}

    fn finish(&mut self, _end: &RunEnd) -> ParseResult {
        ParseResult::default()
    }
}

impl Plugin for Abortive {
    fn manifest(&self) -> Manifest {
        Manifest::new("abortive", "0.0.0", Vec::new())
    }

    fn plan(&self, _request: &PlanRequest) -> Result<CommandPlan, String> {
        Err("nothing to run".into())
    }

    fn parser(&self, _context: &ParseContext) -> Box<dyn Parser> {
        Box::new(Nothing)
    }
}

export_plugin!(Abortive);
