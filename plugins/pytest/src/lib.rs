//! buildvise plugin for pytest: the `pytest.run` tool.
//!
//! [`plan`] runs the project's own interpreter (uv's `UV_PROJECT_ENVIRONMENT`, `.venv` or `venv`
//! in the cwd or its uv/Poetry root, or the active `VIRTUAL_ENV`, else `python3`) as
//! `python -m pytest ARGS`, with a JUnit XML report written into the run's artifact directory and
//! `COLUMNS=200` so that summary lines are not cut. The printed output stays whatever the user's
//! flags make it.
//!
//! [`parse`] turns that output into diagnostics: failures and setup/teardown errors located at
//! the innermost `path:line: ExcType` frame, collection and conftest import errors, warnings
//! summary entries, skips and xfail/xpass as information, the counts of the final line, and the
//! failed node ids.
//!
//! It is not a pytest plugin and never runs Python: it does not collect tests, rerun them, or
//! read the sources beyond checking that the virtual environment has pytest.

#![forbid(unsafe_code)]

mod parse;
mod plan;

use buildvise_plugin_api::{CommandPlan, FormatSpec, Manifest, ParseContext, Parser, PlanRequest, Plugin, ToolSpec};

#[derive(Default)]
pub struct ThePlugin;

/// The formats a tool defined in a config file can name, with their descriptions.
const FORMATS: [(&str, &str); 2] =
    [("pytest", "pytest report"), ("python-traceback", "Python uncaught exception traceback")];

impl Plugin for ThePlugin {
    fn manifest(&self) -> Manifest {
        // pytest's own command, and the interpreter's: the plan runs the project's venv, which is
        // what either finds when the venv is active. `uv run pytest` and `poetry run pytest` bring
        // the environment in line with the lockfile first, so they run as typed (`--via`).
        let run = ToolSpec::new(plan::TOOL, "python -m pytest in the project's venv")
            .with_args_hint("pytest args; --via=uv|poetry first for `uv run pytest`")
            .runs(&["pytest"])
            .runs(&["python", "-m", "pytest"])
            .runs(&["python3", "-m", "pytest"])
            .runs_with(&["uv", "run", "pytest"], &["--via=uv"])
            .runs_with(&["poetry", "run", "pytest"], &["--via=poetry"]);
        let formats = FORMATS.iter().map(|(name, description)| FormatSpec::new(*name, *description)).collect();
        Manifest::new("pytest", env!("CARGO_PKG_VERSION"), vec![run]).with_formats(formats)
    }

    fn plan(&self, request: &PlanRequest) -> Result<CommandPlan, String> {
        let virtual_env = std::env::var("VIRTUAL_ENV").ok();
        let uv_project_environment = std::env::var("UV_PROJECT_ENVIRONMENT").ok();
        let env = plan::HostEnv {
            virtual_env: virtual_env.as_deref(),
            uv_project_environment: uv_project_environment.as_deref(),
        };
        plan::plan(request, &env)
    }

    fn parser(&self, context: &ParseContext) -> Box<dyn Parser> {
        Box::new(parse::PytestParser::new(context))
    }

    /// `pytest` is everything `pytest.run` reads; `python-traceback` a script's uncaught exception.
    fn format_parser(&self, format: &str, context: &ParseContext) -> Option<Box<dyn Parser>> {
        match format {
            "pytest" => Some(Box::new(parse::PytestParser::new(context))),
            "python-traceback" => Some(Box::new(parse::python_traceback::PythonTracebackParser::new(context))),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{FORMATS, ThePlugin};
    use buildvise_plugin_api::{ParseContext, Plugin};

    #[test]
    fn the_manifest_lists_every_format_and_only_those() {
        let manifest = ThePlugin.manifest();
        let names: Vec<&str> = manifest.formats.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, FORMATS.map(|(name, _)| name));
        let context = ParseContext::new("py.check", "/home/dev/src/app");
        for name in &names {
            assert!(ThePlugin.format_parser(name, &context).is_some(), "{name}");
        }
        assert!(ThePlugin.format_parser("python", &context).is_none());
    }
}
