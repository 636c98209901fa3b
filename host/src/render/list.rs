//! The answer to `list`: the tools a caller may use, and plugins that failed to load.
//!
//! ```text
//! cargo.build  cargo build
//! cargo.fmt    cargo fmt [changes workspace unless --check: needs confirm]
//! npm.install  npm install [changes workspace: needs confirm]
//! not loaded: libbuildvise_plugin_x.so: ABI version 2, this buildvise speaks 1…
//! ```

use super::Rendered;
use crate::plugins::{Clash, LoadFailure, Tool};
use serde::Serialize;
use std::fmt::Write;

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
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ListView<'a> {
    tools: Vec<ToolView<'a>>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    failed_plugins: &'a [LoadFailure],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    clashes: &'a [Clash],
}

pub fn render_list<'a>(
    tools: impl Iterator<Item = &'a Tool>,
    failures: &'a [LoadFailure],
    clashes: &'a [Clash],
) -> Rendered {
    let tools: Vec<ToolView<'a>> = tools
        .map(|t| ToolView {
            name: &t.spec.name,
            description: &t.spec.description,
            mutates: t.spec.mutates_workspace,
            read_only_with: t.spec.read_only_with.as_deref().filter(|_| t.spec.mutates_workspace),
            args: t.spec.args_hint.as_deref(),
        })
        .collect();
    let width = tools.iter().map(|t| t.name.len()).max().unwrap_or(0);
    let mut text = String::new();
    if tools.is_empty() {
        text.push_str("no tools: no plugin was found (see `buildvise list` for where it looked)\n");
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
    let view = ListView { tools, failed_plugins: failures, clashes };
    Rendered { text, structured: serde_json::to_value(&view).unwrap_or_default() }
}
