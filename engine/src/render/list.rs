//! The answer to `list`: the tools a caller may use, plugins that failed to load, and config
//! tools that cannot be used.
//!
//! ```text
//! cargo.build  cargo build
//! cargo.fmt    cargo fmt [changes workspace unless --check: needs confirm]
//! npm.install  npm install [changes workspace: needs confirm]
//! web.lint     ESLint on the web app [from buildvise.toml]
//! not loaded: libbuildvise_plugin_x.so: ABI version 2, this buildvise speaks 1…
//! ```

use super::Rendered;
use crate::plugins::{Clash, LoadFailure};
use crate::tools::Tool;
use serde::Serialize;
use std::fmt::Write;
use std::path::Path;

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ToolView<'a> {
    name: &'a str,
    description: &'a str,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    mutates: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    read_only_with: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    args: Option<&'a str>,
    /// The config file that defines the tool, as the caller would name it.
    #[serde(skip_serializing_if = "Option::is_none")]
    from: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ListView<'a> {
    tools: Vec<ToolView<'a>>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    failed_plugins: &'a [LoadFailure],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    clashes: &'a [Clash],
    /// Plugin directories the operator named that are missing, or hold no plugin.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    plugin_dir_problems: &'a [String],
    /// Config files, or tools in them, that cannot be used: each says why and what to fix.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    config_problems: &'a [String],
}

/// What went wrong finding plugins, for `list` to say.
pub struct PluginTrouble<'a> {
    pub failures: &'a [LoadFailure],
    pub clashes: &'a [Clash],
    pub dir_problems: &'a [String],
    /// Not one plugin loaded.
    pub none_loaded: bool,
}

/// What `list` and an unknown tool say when no plugin loaded.
pub const NO_PLUGIN: &str =
    "no plugin loaded: `buildvise list` at a terminal says where buildvise looked and how to get plugins";

pub fn render_list<'a>(
    tools: impl Iterator<Item = &'a Tool>,
    trouble: &PluginTrouble<'a>,
    config_problems: &'a [String],
    cwd: &Path,
) -> Rendered {
    let PluginTrouble { failures, clashes, dir_problems, none_loaded } = *trouble;
    let tools: Vec<ToolView<'a>> = tools
        .map(|t| ToolView {
            name: &t.spec.name,
            description: &t.spec.description,
            mutates: t.spec.mutates_workspace,
            read_only_with: t.spec.read_only_with.as_deref().filter(|_| t.spec.mutates_workspace),
            args: t.spec.args_hint.as_deref(),
            from: t.origin().map(|o| o.strip_prefix(cwd).unwrap_or(o).display().to_string()),
        })
        .collect();
    let width = tools.iter().map(|t| t.name.len()).max().unwrap_or(0);
    let mut text = String::new();
    if none_loaded {
        text.push_str(NO_PLUGIN);
        text.push('\n');
    } else if tools.is_empty() {
        text.push_str("no tools: the config in force disables or hides every tool\n");
    }
    for t in &tools {
        let _ = write!(text, "{:width$}  {}", t.name, t.description);
        if let Some(args) = t.args {
            let _ = write!(text, "; args: {args}");
        }
        match (t.mutates, t.read_only_with) {
            (true, Some(flag)) => {
                let _ = write!(text, " [changes workspace unless {flag}: needs confirm]");
            }
            (true, None) => text.push_str(" [changes workspace: needs confirm]"),
            (false, _) => {}
        }
        if let Some(from) = &t.from {
            let _ = write!(text, " [from {from}]");
        }
        text.push('\n');
    }
    for f in failures {
        let name = f.path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
        let _ = writeln!(text, "not loaded: {name}: {}", f.reason);
    }
    for c in clashes {
        let _ =
            writeln!(text, "clash: {} is claimed by {} too; {} wins", c.tool, c.ignored.display(), c.kept.display());
    }
    for problem in dir_problems {
        let _ = writeln!(text, "plugins: {problem}");
    }
    for problem in config_problems {
        let _ = writeln!(text, "not usable: {problem}");
    }
    let view =
        ListView { tools, failed_plugins: failures, clashes, plugin_dir_problems: dir_problems, config_problems };
    Rendered { text, structured: serde_json::to_value(&view).unwrap_or_default() }
}
