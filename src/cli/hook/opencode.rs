//! OpenCode: a plugin file rather than a hook command (docs/hooks.md cites the contract).
//!
//! OpenCode loads every JavaScript file in `.opencode/plugins/` (and the user's plugin folder)
//! at start. The plugin's `tool.execute.before` gets the `bash` tool's arguments before the tool
//! runs and may change them in place; it asks `buildvise hook shell` for the line to run. Nothing
//! is approved on buildvise's side: OpenCode's own permission check sees the rewritten command.

use crate::cli::settings_file::Launch;
use anyhow::Context;
use std::path::Path;

/// The plugin's file name, in whichever plugin folder.
pub const PLUGIN_FILE: &str = "buildvise.js";

/// What tells a plugin of ours from someone else's file of that name.
const MARK: &str = "// buildvise hook install --client opencode";

/// The plugin, running `launch`. The tool's own timeout and a failed or slow `hook shell` leave
/// the command as typed.
fn source(launch: &Launch) -> String {
    let program = serde_json::to_string(&launch.program).unwrap_or_default();
    // The launcher's words, then the hook's, each a JS string; the cwd comes last in the file.
    let args: Vec<String> =
        launch.with(&["hook", "shell", "--cwd"]).iter().map(|a| serde_json::to_string(a).unwrap_or_default()).collect();
    let args = format!("[{}", args.join(", "));
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
    const answer = spawnSync(PROGRAM, {args}, cwd], {{
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
pub fn plugin(before: Option<&str>, launch: &Launch, remove: bool, path: &Path) -> anyhow::Result<Option<String>> {
    if let Some(before) = before
        && !before.starts_with(MARK)
    {
        return Err(anyhow::anyhow!("not written by buildvise"))
            .with_context(|| format!("{} is someone else's plugin; move it, then run again", path.display()));
    }
    Ok((!remove).then(|| source(launch)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plugin_names_the_program_as_a_js_string() {
        let launch = |program: &str, args: &[&str]| Launch {
            program: program.into(),
            args: args.iter().map(|a| a.to_string()).collect(),
            needs_path: false,
        };
        let text = plugin(None, &launch("/opt/a \"b\"/buildvise", &[]), false, Path::new("p")).unwrap().unwrap();
        assert!(text.contains(r#"const PROGRAM = "/opt/a \"b\"/buildvise";"#), "{text}");
        assert!(text.contains(r#"spawnSync(PROGRAM, ["hook", "shell", "--cwd", cwd], {"#), "{text}");
        let npx = plugin(None, &launch("npx", &["-y", "buildvise"]), false, Path::new("p")).unwrap().unwrap();
        assert!(npx.contains(r#"spawnSync(PROGRAM, ["-y", "buildvise", "hook", "shell", "--cwd", cwd], {"#), "{npx}");
        assert_eq!(plugin(Some(&text), &launch("buildvise", &[]), true, Path::new("p")).unwrap(), None);
        assert!(plugin(Some("export const Other = 1"), &launch("buildvise", &[]), false, Path::new("p")).is_err());
    }
}
