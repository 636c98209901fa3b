//! buildvise plugin for npm: runs `npm run build`, `npm test`, `npm run SCRIPT`, `npm exec -- PROGRAM`,
//! `npm install` and `npm ci`, and reads what they printed.
//!
//! A script can run anything, so the parser does not assume a tool: it recognises tsc, Jest,
//! Vitest, ESLint, Mocha and `node --test` output, and npm's own errors and warnings, from the
//! lines themselves ([`parse`]). Planning ([`plan`]) checks the script against package.json and,
//! for a lone jest or vitest command, asks for a JSON report as an artifact.
//!
//! The project's package manager runs them ([`manager`]): the `packageManager` field of the
//! nearest package.json that has one, else the nearest lockfile (`pnpm-lock.yaml`, `yarn.lock`,
//! `bun.lock`/`bun.lockb`, `package-lock.json`), from the call's folder up to the workspace root;
//! npm when nothing says. A call names one with a first argument `--pm=npm|pnpm|yarn|bun`, which
//! is refused where the project says otherwise: an argument because the tools and their answers
//! stay the same whichever manager runs (`npm.test` is `pnpm run test` in a pnpm project), and a
//! hook's rewrite of `pnpm test` needs the plan to know which manager was typed
//! ([`manager_plan`] has each manager's commands).
//!
//! This crate is not a runner and not an npm client: it spawns nothing, reads only the project's
//! package.json (and test-runner config, to plan) and the artifacts of a run, and never asks a
//! registry anything.

#![forbid(unsafe_code)]

mod manager;
mod manager_plan;
mod parse;
mod plan;

use buildvise_plugin_api::{CommandPlan, FormatSpec, Manifest, ParseContext, Parser, PlanRequest, Plugin, ToolSpec};

#[derive(Default)]
pub struct ThePlugin;

fn tool(name: &str, description: &str, args_hint: Option<&str>) -> ToolSpec {
    let spec = ToolSpec::new(name, description);
    match args_hint {
        Some(hint) => spec.with_args_hint(hint),
        None => spec,
    }
}

/// Every manager ([`manager`]).
const ALL: &[&str] = &["npm", "pnpm", "yarn", "bun"];

/// Declares that `tool` stands for each manager's `MANAGER COMMAND…`, with `--pm=MANAGER` first
/// in its arguments: the plan refuses a manager the project does not use, so a hook that
/// rewrites `pnpm test` in an npm project leaves it as typed rather than run npm. Not declared:
/// `bun test` (bun's own test runner, not the `test` script), the shorthands `pnpm SCRIPT` and
/// `yarn SCRIPT` (a built-in command of the same name wins over the script), `npx`, `bunx` and
/// `yarn exec` (a shell line, not a bin).
fn typed(mut spec: ToolSpec, commands: &[&[&str]], managers: &[&str]) -> ToolSpec {
    for manager in managers {
        let named = format!("{}{manager}", manager::NAMED);
        for command in commands {
            let words: Vec<&str> = std::iter::once(*manager).chain(command.iter().copied()).collect();
            spec = spec.runs_with(&words, &[&named]);
        }
    }
    spec
}

impl Plugin for ThePlugin {
    /// Each description is the command (agents know npm's); `list` is paid for on every session.
    /// The manager is the project's ([`manager`]), so one tool runs `npm test`, `pnpm test`,
    /// `yarn test` or `bun run test`.
    fn manifest(&self) -> Manifest {
        let script_args = Some("script args; npm options before --");
        let tools = vec![
            typed(tool("npm.build", "npm run build", script_args), &[&["run", "build"]], ALL),
            typed(tool("npm.test", "npm test", script_args), &[&["test"]], &["npm", "pnpm", "yarn"]),
            typed(tool("npm.run", "npm run SCRIPT", Some("SCRIPT, its args; npm options before --")), &[&["run"]], ALL),
            // Not `npx`: it downloads a package it does not find, which npm.exec refuses.
            typed(tool("npm.exec", "npx PROGRAM, installed bins only", Some("PROGRAM ARGS")), &[&["exec"]], &["pnpm"]),
            typed(tool("npm.install", "npm install", None).mutating(), &[&["install"]], ALL),
            typed(tool("npm.ci", "npm ci", None).mutating(), &[&["ci"]], &["npm"]),
        ];
        let formats = parse::FORMATS.iter().map(|(name, description)| FormatSpec::new(*name, *description)).collect();
        Manifest::new("npm", env!("CARGO_PKG_VERSION"), tools).with_formats(formats)
    }

    fn plan(&self, request: &PlanRequest) -> Result<CommandPlan, String> {
        plan::plan(request)
    }

    fn parser(&self, context: &ParseContext) -> Box<dyn Parser> {
        Box::new(parse::NpmParser::new(context))
    }

    fn format_parser(&self, format: &str, context: &ParseContext) -> Option<Box<dyn Parser>> {
        Some(Box::new(parse::NpmParser::for_format(format, context)?))
    }
}
