//! buildvise plugin for npm: runs `npm run build`, `npm test`, `npm run SCRIPT`, `npm exec -- PROGRAM`,
//! `npm install` and `npm ci`, and reads what they printed.
//!
//! A script can run anything, so the parser does not assume a tool: it recognises tsc, Jest,
//! Vitest, ESLint, Mocha and `node --test` output, and npm's own errors and warnings, from the
//! lines themselves ([`parse`]). Planning ([`plan`]) checks the script against package.json and,
//! for a lone jest or vitest command, asks for a JSON report as an artifact.
//!
//! This crate is not a runner and not an npm client: it spawns nothing, reads only the project's
//! package.json (and test-runner config, to plan) and the artifacts of a run, and never asks a
//! registry anything.

#![forbid(unsafe_code)]

mod parse;
mod plan;

use buildvise_plugin_api::{CommandPlan, Manifest, ParseContext, Parser, PlanRequest, Plugin, ToolSpec};

#[derive(Default)]
pub struct ThePlugin;

fn tool(name: &str, description: &str, mutates_workspace: bool, args_hint: &str) -> ToolSpec {
    let spec = ToolSpec::new(name, description).with_args_hint(args_hint);
    if mutates_workspace { spec.mutating() } else { spec }
}

impl Plugin for ThePlugin {
    fn manifest(&self) -> Manifest {
        let script_args = "script args; npm options first, then `--` (`-w web -- --coverage`)";
        let tools = vec![
            tool("npm.build", "npm run build: tsc/eslint/bundler errors", false, script_args),
            tool("npm.test", "npm test: jest/vitest/mocha/node:test failures and counts", false, script_args),
            tool(
                "npm.run",
                "npm run SCRIPT: whatever the script runs",
                false,
                "script name, then its args; npm options before `--`",
            ),
            tool("npm.exec", "npx PROGRAM: an installed bin (tsc, eslint, vitest)", false, "program and its args"),
            tool("npm.install", "npm install: dependency errors and warnings", true, "npm install arguments"),
            tool("npm.ci", "npm ci: clean install from the lockfile", true, "npm ci options"),
        ];
        Manifest::new("npm", env!("CARGO_PKG_VERSION"), tools)
    }

    fn plan(&self, request: &PlanRequest) -> Result<CommandPlan, String> {
        plan::plan(request)
    }

    fn parser(&self, context: &ParseContext) -> Box<dyn Parser> {
        Box::new(parse::NpmParser::new(context))
    }
}

buildvise_plugin_api::export_plugin!(ThePlugin);
