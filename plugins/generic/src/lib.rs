//! buildvise plugin for the toolchains that print `file:line: message` lines: GNU make with
//! gcc or clang, Go, mypy and ruff as tools, and those plus pyright, shellcheck and a strict
//! last-resort recogniser as formats that a tool defined in a config file can name.
//!
//! [`plan`] marks a tool unavailable (left out of `list`, refused by `exec`, still used by `parse`)
//! when its program is not on PATH as the host loads the plugin; mypy and ruff run from the
//! project's `.venv` or `venv` when it has them. [`parse`] reads each
//! format from the printed output alone; it runs nothing and, beyond a Go module's `go.mod` to
//! place test files, reads no files.

#![forbid(unsafe_code)]

mod parse;
mod plan;

use buildvise_plugin_api::{CommandPlan, Manifest, ParseContext, Parser, PlanRequest, Plugin};

#[derive(Default)]
pub struct GenericPlugin;

impl Plugin for GenericPlugin {
    fn manifest(&self) -> Manifest {
        // PATH and the extensions read once for every tool's program.
        let path = std::env::var_os("PATH").unwrap_or_default();
        let extensions = buildvise_plugin_api::program_extensions();
        let on_path = |program: &str| buildvise_plugin_api::find_program(program, &path, &extensions).is_some();
        Manifest::new("generic", env!("CARGO_PKG_VERSION"), plan::tools(on_path)).with_formats(parse::formats())
    }

    fn plan(&self, request: &PlanRequest) -> Result<CommandPlan, String> {
        plan::plan(request)
    }

    fn parser(&self, context: &ParseContext) -> Box<dyn Parser> {
        Box::new(parse::GenericParser::new(context, plan::formats_of(&context.tool)))
    }

    fn format_parser(&self, format: &str, context: &ParseContext) -> Option<Box<dyn Parser>> {
        if !parse::exports(format) {
            return None;
        }
        Some(Box::new(parse::GenericParser::new(context, &[format])))
    }
}
