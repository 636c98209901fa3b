//! OpenCode: a plugin file rather than a hook command (docs/hooks.md cites the contract).
//!
//! OpenCode loads every JavaScript file in `.opencode/plugins/` (and the user's plugin folder)
//! at start. The plugin's `tool.execute.before` gets the `bash` tool's arguments before the tool
//! runs and may change them in place; it asks `buildvise hook shell` for the line to run. Nothing
//! is approved on buildvise's side: OpenCode's own permission check sees the rewritten command.

use anyhow::Context;
use std::path::Path;

/// The plugin's file name, in whichever plugin folder.
pub const PLUGIN_FILE: &str = "buildvise.js";

/// What tells a plugin of ours from someone else's file of that name.
const MARK: &str = "// buildvise hook install --client opencode";

/// The plugin, with `program` as the command it runs. The tool's own timeout and a failed or
/// slow `hook shell` leave the command as typed.
fn source(program: &str) -> String {
    let program = serde_json::to_string(program).unwrap_or_default();
    format!(
        r#"{MARK} wrote this file; `--uninstall` removes it.
// Before OpenCode's bash tool runs a command, buildvise says which of its commands a build or
// test tool stands for: those run through `buildvise exec`, the rest as typed.
import {{ spawnSync }} from "node:child_process";
import {{ resolve }} from "node:path";

const PROGRAM = {program};

export const BuildvisePlugin = async ({{ directory }}) => ({{
  "tool.execute.before": async (input, output) => {{
    const args = output?.args;
    if (input?.tool !== "bash" || typeof args?.command !== "string") return;
    const cwd = resolve(directory ?? ".", typeof args.workdir === "string" ? args.workdir : ".");
    const answer = spawnSync(PROGRAM, ["hook", "shell", "--cwd", cwd], {{
      input: args.command,
      encoding: "utf8",
      timeout: 5000,
    }});
    const line = answer.status === 0 && typeof answer.stdout === "string" ? answer.stdout.replace(/\n$/, "") : "";
    if (line) args.command = line;
  }},
}});
"#
    )
}

/// The plugin file's text after install (or None after `--uninstall`); a file of that name that
/// is not ours is left alone.
pub fn plugin(before: Option<&str>, program: &str, remove: bool, path: &Path) -> anyhow::Result<Option<String>> {
    if let Some(before) = before
        && !before.starts_with(MARK)
    {
        return Err(anyhow::anyhow!("not written by buildvise"))
            .with_context(|| format!("{} is someone else's plugin; move it, then run again", path.display()));
    }
    Ok((!remove).then(|| source(program)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plugin_names_the_program_as_a_js_string() {
        let text = plugin(None, "/opt/a \"b\"/buildvise", false, Path::new("p")).unwrap().unwrap();
        assert!(text.contains(r#"const PROGRAM = "/opt/a \"b\"/buildvise";"#), "{text}");
        assert_eq!(plugin(Some(&text), "buildvise", true, Path::new("p")).unwrap(), None);
        assert!(plugin(Some("export const Other = 1"), "buildvise", false, Path::new("p")).is_err());
    }
}
