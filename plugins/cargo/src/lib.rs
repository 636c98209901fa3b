//! buildvise plugin for cargo: runs `cargo build`, `check`, `clippy`, `test`, `nextest run`,
//! `run`, `fmt` and `doc`, and reads what they print for a person into structured diagnostics
//! and a test summary.
//!
//! What it understands: rustc and clippy diagnostics (location, error code or lint name,
//! headline, the notes that matter), cargo's own errors (manifest, dependency resolution,
//! build scripts, `cargo::warning`), libtest's failures and results (with the calling line of a
//! panic in a helper, from a `RUST_BACKTRACE` backtrace, and whether a fail-fast run left test
//! targets out), and the `--message-format=json` stream when a caller asks for it.
//!
//! What it is not: a runner (the host spawns cargo and stores the log), nor a rustc JSON
//! client: it never switches cargo's printed output to a machine format, so the stored log
//! stays what a person would have seen. It reads no files.

#![forbid(unsafe_code)]

mod parse;
mod plan;

use buildvise_plugin_api::{CommandPlan, FormatSpec, Manifest, ParseContext, Parser, PlanRequest, Plugin};

/// The cargo toolchain plugin.
#[derive(Default)]
pub struct CargoPlugin;

impl Plugin for CargoPlugin {
    fn manifest(&self) -> Manifest {
        let formats = parse::FORMATS.iter().map(|(name, description)| FormatSpec::new(*name, *description)).collect();
        Manifest::new("cargo", env!("CARGO_PKG_VERSION"), plan::tools()).with_formats(formats)
    }

    fn plan(&self, request: &PlanRequest) -> Result<CommandPlan, String> {
        plan::plan(request)
    }

    fn parser(&self, context: &ParseContext) -> Box<dyn Parser> {
        Box::new(parse::CargoParser::new(context))
    }

    fn format_parser(&self, format: &str, context: &ParseContext) -> Option<Box<dyn Parser>> {
        Some(Box::new(parse::CargoParser::for_format(format, context)?))
    }
}
