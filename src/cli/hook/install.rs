//! `buildvise hook install`: merges the hook into a client's settings file, or takes it out.
//!
//! The file is the user's: every other key and hook is kept, a file reached through a symlink is
//! written where the link points, its permissions stay, a byte-order mark is accepted, and the
//! file as it was is kept beside it (`.bak`) before a change. A second run changes nothing. A
//! project's file is meant to be committed, so it names the command `buildvise` (found on PATH),
//! never a path of this machine.

use anyhow::Context;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

/// The command a client runs, and how a hook of ours is recognised in a file.
const COMMAND: &str = "buildvise hook claude";

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Client {
    /// Claude Code: `.claude/settings.json` (project) or `~/.claude/settings.json` (user).
    Claude,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scope {
    Project,
    User,
}

/// What a run of `install` did, or would do with `--show`.
#[derive(Debug)]
pub struct Outcome {
    pub path: PathBuf,
    pub changed: bool,
    /// The file's text after the change.
    pub text: String,
    /// The file names `buildvise`, which PATH does not find as this binary.
    pub needs_path: bool,
}

/// Adds (or with `remove`, takes out) the hook in `client`'s settings for `scope`; with `show`,
/// only says what it would write.
pub fn install(scope: Scope, project: &Path, home: Option<&Path>, remove: bool, show: bool) -> anyhow::Result<Outcome> {
    let path = match scope {
        Scope::Project => project.join(".claude/settings.json"),
        Scope::User => home.context("HOME is not set; set it, or use --scope project")?.join(".claude/settings.json"),
    };
    // Written where a symlink points, so that the link stays a link.
    let path = std::fs::canonicalize(&path).unwrap_or(path);
    let before = match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let mut doc = match before.as_deref().map(|t| t.trim_start_matches('\u{feff}')) {
        Some(text) if !text.trim().is_empty() => serde_json::from_str::<Value>(text).with_context(|| {
            format!("{} is not JSON that Claude Code reads; fix it, then run again", path.display())
        })?,
        _ => Value::Object(Map::new()),
    };
    let command = match scope {
        Scope::Project => COMMAND.to_string(),
        Scope::User => user_command(),
    };
    let changed = if remove { take_out(&mut doc, &path)? } else { put_in(&mut doc, &command, &path)? };
    let text = serde_json::to_string_pretty(&doc)? + "\n";
    if changed && !show {
        write(&path, before.as_deref(), &text)?;
    }
    let needs_path = !remove && command == COMMAND && user_command() != COMMAND;
    Ok(Outcome { path, changed, text, needs_path })
}

/// The hook entry for `command`, in the group for Claude Code's Bash tool.
fn put_in(doc: &mut Value, command: &str, path: &Path) -> anyhow::Result<bool> {
    let entry = json!({"type": "command", "command": command});
    let groups = pre_tool_use(doc, path)?;
    for group in groups.iter_mut() {
        if let Some(hooks) = group.get_mut("hooks").and_then(Value::as_array_mut)
            && let Some(ours) = hooks.iter_mut().find(|h| is_ours(h))
        {
            let changed = *ours != entry;
            *ours = entry;
            return Ok(changed);
        }
    }
    groups.push(json!({"matcher": "Bash", "hooks": [entry]}));
    Ok(true)
}

/// Takes out every hook entry of ours, and the groups and keys it leaves empty.
fn take_out(doc: &mut Value, path: &Path) -> anyhow::Result<bool> {
    if doc.pointer("/hooks/PreToolUse").is_none() {
        return Ok(false);
    }
    let groups = pre_tool_use(doc, path)?;
    let mut changed = false;
    groups.retain_mut(|group| {
        let Some(hooks) = group.get_mut("hooks").and_then(Value::as_array_mut) else { return true };
        let before = hooks.len();
        hooks.retain(|h| !is_ours(h));
        changed |= hooks.len() != before;
        !hooks.is_empty()
    });
    if groups.is_empty()
        && let Some(hooks) = doc.get_mut("hooks").and_then(Value::as_object_mut)
    {
        hooks.remove("PreToolUse");
        if hooks.is_empty()
            && let Some(root) = doc.as_object_mut()
        {
            root.remove("hooks");
        }
    }
    Ok(changed)
}

/// `hooks.PreToolUse`, made where it is missing.
fn pre_tool_use<'a>(doc: &'a mut Value, path: &Path) -> anyhow::Result<&'a mut Vec<Value>> {
    let shape = || {
        format!(
            "{} does not hold Claude Code's settings (an object whose \"hooks\" is an object of arrays); fix it, then run again",
            path.display()
        )
    };
    let root = doc.as_object_mut().with_context(shape)?;
    let hooks = root.entry("hooks").or_insert_with(|| Value::Object(Map::new())).as_object_mut().with_context(shape)?;
    hooks.entry("PreToolUse").or_insert_with(|| Value::Array(Vec::new())).as_array_mut().with_context(shape)
}

/// A hook entry that runs our hook, by whatever path.
fn is_ours(hook: &Value) -> bool {
    hook["command"].as_str().is_some_and(|c| c == COMMAND || c.ends_with(&format!("/{COMMAND}")))
}

/// `buildvise hook claude` when PATH finds this binary, else by its full path: the user's file
/// stays on this machine.
fn user_command() -> String {
    format!("{} hook claude", crate::mcp::command_name())
}

/// Writes `text` to `path` through a file beside it, keeping the old file as `.bak` and its
/// permissions.
fn write(path: &Path, before: Option<&str>, text: &str) -> anyhow::Result<()> {
    let dir = path.parent().context("a settings file has a directory")?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let permissions = std::fs::metadata(path).ok().map(|m| m.permissions());
    if let Some(before) = before {
        let backup = path.with_extension("json.bak");
        std::fs::write(&backup, before).with_context(|| format!("cannot write {}", backup.display()))?;
    }
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    if let Some(permissions) = permissions {
        std::fs::set_permissions(&tmp, permissions).with_context(|| format!("cannot set {}'s mode", tmp.display()))?;
    }
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project_file(dir: &Path, text: &str) -> PathBuf {
        std::fs::create_dir_all(dir.join(".claude")).unwrap();
        let path = dir.join(".claude/settings.json");
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn merges_beside_what_is_there_once_and_takes_out_only_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let theirs = r#"{"model": "x", "hooks": {"PreToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "lint.sh"}]}]}}"#;
        let path = project_file(dir.path(), &format!("\u{feff}{theirs}"));
        let first = install(Scope::Project, dir.path(), None, false, false).unwrap();
        assert!(first.changed);
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(doc["model"], "x");
        assert_eq!(doc["hooks"]["PreToolUse"][0]["hooks"][0]["command"], "lint.sh");
        assert_eq!(
            doc["hooks"]["PreToolUse"][1],
            json!({"matcher": "Bash", "hooks": [{"type": "command", "command": COMMAND}]})
        );
        assert!(std::fs::read_to_string(path.with_extension("json.bak")).unwrap().contains("lint.sh"));
        assert!(
            !install(Scope::Project, dir.path(), None, false, false).unwrap().changed,
            "a second run changes nothing"
        );
        let removed = install(Scope::Project, dir.path(), None, true, false).unwrap();
        assert!(removed.changed);
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(doc, serde_json::from_str::<Value>(theirs).unwrap());
        assert!(!install(Scope::Project, dir.path(), None, true, false).unwrap().changed);
    }

    #[test]
    fn show_writes_nothing_and_a_new_file_holds_only_the_hook() {
        let dir = tempfile::tempdir().unwrap();
        let shown = install(Scope::Project, dir.path(), None, false, true).unwrap();
        assert!(shown.changed && shown.text.contains(COMMAND));
        assert!(!dir.path().join(".claude").exists());
        install(Scope::Project, dir.path(), None, false, false).unwrap();
        let text = std::fs::read_to_string(dir.path().join(".claude/settings.json")).unwrap();
        assert_eq!(text, shown.text);
        assert!(!text.contains(&*dir.path().to_string_lossy()), "no path of this machine in a project file");
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinked_file_is_written_through_and_keeps_its_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("dotfiles.json");
        std::fs::write(&real, "{}").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::create_dir_all(dir.path().join(".claude")).unwrap();
        std::os::unix::fs::symlink(&real, dir.path().join(".claude/settings.json")).unwrap();
        install(Scope::Project, dir.path(), None, false, false).unwrap();
        assert!(std::fs::symlink_metadata(dir.path().join(".claude/settings.json")).unwrap().file_type().is_symlink());
        assert!(std::fs::read_to_string(&real).unwrap().contains(COMMAND));
        assert_eq!(std::fs::metadata(&real).unwrap().permissions().mode() & 0o777, 0o600);
    }

    #[test]
    fn a_file_it_cannot_read_as_settings_is_left_alone_with_a_reason() {
        let dir = tempfile::tempdir().unwrap();
        let path = project_file(dir.path(), "{ not json");
        let err = install(Scope::Project, dir.path(), None, false, false).unwrap_err();
        assert!(format!("{err:#}").contains("is not JSON that Claude Code reads"), "{err:#}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{ not json");
        project_file(dir.path(), r#"{"hooks": []}"#);
        let err = install(Scope::Project, dir.path(), None, false, false).unwrap_err();
        assert!(format!("{err:#}").contains("fix it, then run again"), "{err:#}");
    }
}
