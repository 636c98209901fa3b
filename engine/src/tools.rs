//! The tools a call can use: every plugin's, and those the config files in force define
//! (`[tools."web.lint"]`), each able to plan its command and make its run's parser.
//!
//! A config tool runs its `run` argv with the call's args appended, never through a shell, and is
//! read by the formats it names (exported by plugins) and its own patterns. Its name may not be a
//! plugin tool's; its formats must exist. Both mistakes are errors naming the file and the key,
//! found when the tool is looked up.

use crate::config::{Config, Problem, ToolDef};
use crate::parse::{PatternParser, RunParser};
use crate::plugins::{self, Plugin, PluginError, Registry};
use buildvise_plugin_api::{CommandPlan, ParseContext, PlanRequest, ToolSpec};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A tool as a call uses it.
#[derive(Clone)]
pub struct Tool {
    pub spec: ToolSpec,
    runner: Runner,
}

#[derive(Clone)]
enum Runner {
    Plugin(Arc<Plugin>),
    // Boxed: a definition is much larger than a plugin's handle.
    Config { def: Box<ToolDef>, formats: Vec<(String, Arc<Plugin>)> },
}

/// A config tool that cannot be used as written.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ToolError {
    #[error(
        "{}: `tools.\"{name}\"` has the name of a tool of the plugin {}; rename it",
        origin.display(),
        plugin.display()
    )]
    Clash { name: String, origin: PathBuf, plugin: PathBuf },
    #[error(
        "{}: `tools.\"{name}\".formats`: no plugin exports a format `{format}`; send one of: {known}",
        origin.display()
    )]
    UnknownFormat { name: String, origin: PathBuf, format: String, known: String },
    /// Its definition cannot be read as written.
    #[error(transparent)]
    Unusable(Problem),
}

impl Tool {
    fn from_plugin(tool: &plugins::Tool) -> Tool {
        Tool { spec: tool.spec.clone(), runner: Runner::Plugin(Arc::clone(&tool.plugin)) }
    }

    fn from_config(def: &ToolDef, registry: &Registry) -> Result<Tool, ToolError> {
        if let Some(plugin_tool) = registry.get(&def.name) {
            return Err(ToolError::Clash {
                name: def.name.clone(),
                origin: def.origin.clone(),
                plugin: plugin_tool.plugin.path.clone(),
            });
        }
        let formats = def
            .formats
            .iter()
            .map(|name| match registry.format(name) {
                Some(format) => Ok((name.clone(), Arc::clone(&format.plugin))),
                None => Err(ToolError::UnknownFormat {
                    name: def.name.clone(),
                    origin: def.origin.clone(),
                    format: name.clone(),
                    known: registry.formats().map(|f| f.spec.name.as_str()).collect::<Vec<_>>().join(", "),
                }),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let description = def.description.clone().unwrap_or_else(|| def.run.join(" "));
        let mut spec = ToolSpec::new(&def.name, description);
        if def.mutates {
            spec = spec.mutating();
        }
        if let Some(secs) = def.timeout_secs {
            spec = spec.with_timeout_secs(secs);
        }
        // The argv typed as it is, when its program is found on PATH as typed: a path is read
        // against the config file's folder, which a typed line does not know of.
        if !def.run[0].contains(['/', '\\']) {
            spec = spec.runs(&def.run.iter().map(String::as_str).collect::<Vec<_>>());
        }
        Ok(Tool { spec, runner: Runner::Config { def: Box::new(def.clone()), formats } })
    }

    /// The config file that defines the tool; None for a plugin's.
    pub fn origin(&self) -> Option<&Path> {
        match &self.runner {
            Runner::Plugin(_) => None,
            Runner::Config { def, .. } => Some(&def.origin),
        }
    }

    /// The command for one call: the plugin's plan, or the config's argv with the call's args.
    pub fn plan(&self, request: &PlanRequest) -> Result<CommandPlan, PluginError> {
        match &self.runner {
            Runner::Plugin(plugin) => plugin.plan(request),
            Runner::Config { def, .. } => {
                let program = program(&def.run[0], &def.origin);
                Ok(CommandPlan::new(program)
                    .with_args(def.run[1..].iter().chain(&request.args).cloned())
                    .with_caches(def.caches.iter().cloned()))
            }
        }
    }

    /// A fresh parser for one run.
    pub fn parser(&self, context: &ParseContext) -> Result<RunParser, PluginError> {
        match &self.runner {
            Runner::Plugin(plugin) => Ok(RunParser::plugin(plugin.parser(context)?)),
            Runner::Config { def, formats } => {
                let handles = formats
                    .iter()
                    .map(|(name, plugin)| plugin.format_parser(name, context))
                    .collect::<Result<Vec<_>, _>>()?;
                let patterns =
                    (!def.patterns.is_empty()).then(|| PatternParser::new(def.patterns.clone(), &context.cwd));
                Ok(RunParser::combined(handles, patterns))
            }
        }
    }
}

/// `./scripts/check.sh` is the defining file's script, wherever the call's cwd is; a bare name is
/// looked up on PATH as usual.
fn program(first: &str, origin: &Path) -> String {
    match origin.parent() {
        Some(dir) if first.contains('/') && Path::new(first).is_relative() => dir.join(first).display().to_string(),
        _ => first.to_string(),
    }
}

/// The tool called `name` under `config`: a plugin's, or one a config file defines. None when
/// there is no such tool.
pub fn find(registry: &Registry, config: &Config, name: &str) -> Result<Option<Tool>, ToolError> {
    if let Some(problem) = config.problem_of(name) {
        return Err(ToolError::Unusable(problem.clone()));
    }
    if let Some(def) = config.tools.iter().find(|d| d.name == name) {
        return Tool::from_config(def, registry).map(Some);
    }
    Ok(registry.get(name).map(Tool::from_plugin))
}

/// Every tool under `config`, sorted by name, and the config tools that cannot be used (those
/// of `config.problems` are not repeated here).
pub fn all(registry: &Registry, config: &Config) -> (Vec<Tool>, Vec<ToolError>) {
    let mut tools: Vec<Tool> = registry.tools().map(Tool::from_plugin).collect();
    let mut problems = Vec::new();
    for def in &config.tools {
        match Tool::from_config(def, registry) {
            Ok(tool) => tools.push(tool),
            Err(e) => problems.push(e),
        }
    }
    tools.sort_by(|a, b| a.spec.name.cmp(&b.spec.name));
    (tools, problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relative_script_is_the_defining_files() {
        let origin = Path::new("/p/buildvise.toml");
        let joined = Path::new("/p").join("./scripts/check.sh");
        assert_eq!(program("./scripts/check.sh", origin), joined.to_string_lossy());
        assert_eq!(program("make", origin), "make");
        assert_eq!(program("/usr/bin/make", origin), "/usr/bin/make");
    }
}
