//! buildvise plugin for the .NET toolchain: the tools `dotnet.build`, `dotnet.restore`,
//! `dotnet.test`, `dotnet.run` and `dotnet.format` (which rewrites files unless given
//! `--verify-no-changes`).
//!
//! [`plan`] turns a call into `dotnet build|restore|test|run|format ARGS` with an environment that keeps the
//! console output stable and English (classic console logger, no banner) and, for `dotnet test`, a
//! TRX report written into the run's artifact directory.
//!
//! [`parse`] reads what a person would have seen: MSBuild/Roslyn/NuGet/SDK diagnostics in the
//! classic and Terminal Logger layouts (each once, although MSBuild repeats them), VSTest,
//! Microsoft.Testing.Platform and NUnit console failures with their stack locations, run
//! summaries, and the TRX / NUnit XML reports handed over as artifacts. Mono's `mcs`, `xbuild` and
//! `nunit-console` print close kin of these formats and are understood too.
//!
//! This crate is not a runner: it spawns nothing and only reads files to plan (`global.json`) and
//! the artifacts it is given when a run ends. It does not read MSBuild binary logs.

#![forbid(unsafe_code)]

use buildvise_plugin_api::{CommandPlan, FormatSpec, Manifest, ParseContext, Parser, PlanRequest, Plugin};

pub mod parse;
pub mod plan;

/// The dotnet plugin.
#[derive(Default)]
pub struct DotnetPlugin;

impl Plugin for DotnetPlugin {
    fn manifest(&self) -> Manifest {
        let formats = parse::FORMATS.iter().map(|(name, description)| FormatSpec::new(*name, *description)).collect();
        Manifest::new("dotnet", env!("CARGO_PKG_VERSION"), plan::tool_specs()).with_formats(formats)
    }

    fn plan(&self, request: &PlanRequest) -> Result<CommandPlan, String> {
        plan::plan(request)
    }

    fn parser(&self, context: &ParseContext) -> Box<dyn Parser> {
        Box::new(parse::DotnetParser::new(context))
    }

    fn format_parser(&self, format: &str, context: &ParseContext) -> Option<Box<dyn Parser>> {
        Some(Box::new(parse::DotnetParser::for_format(format, context)?))
    }
}
