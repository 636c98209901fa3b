//! `buildvise hook install`: merges the hook into a client's settings file, or takes it out.
//!
//! The file is changed by the writer `mcp install` uses too (`settings_file`): every other key
//! and hook is kept, and so are a symlink, the mode, a byte-order mark, and comments where the
//! client reads them; the file as it was is kept as `.bak`, a second run changes nothing, and a
//! project's file names `buildvise`. Which file and which entry each client reads is
//! docs/hooks.md's; the shapes are below.

use super::opencode;
use crate::cli::settings_file::{self, JsonDoc, Outcome, PROGRAM, SettingsFile, Syntax};
use anyhow::Context;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

pub use crate::cli::settings_file::{Scope, UserDirs};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Client {
    /// Claude Code: `.claude/settings.json`, `~/.claude/settings.json`.
    Claude,
    /// Codex CLI: `.codex/hooks.json`, `~/.codex/hooks.json` (`$CODEX_HOME`).
    Codex,
    /// Gemini CLI: `.gemini/settings.json`, `~/.gemini/settings.json`.
    Gemini,
    /// Cursor: `.cursor/hooks.json`, `~/.cursor/hooks.json`.
    Cursor,
    /// OpenCode: a plugin, `.opencode/plugins/buildvise.js` or `~/.config/opencode/plugins/`.
    Opencode,
    /// GitHub Copilot CLI: `.github/hooks/buildvise.json`, `~/.copilot/hooks/buildvise.json`.
    Copilot,
}

/// Where a client keeps its hook entries, in a JSON settings file.
enum Shape {
    /// `hooks.EVENT` holds groups `{"matcher": M, "hooks": [entry]}`.
    Grouped { event: &'static str, matcher: &'static str },
    /// `hooks.EVENT` holds the entries themselves, with `"version": 1` beside `hooks`.
    Flat { event: &'static str },
}

impl Client {
    fn name(self) -> &'static str {
        match self {
            Client::Claude => "claude",
            Client::Codex => "codex",
            Client::Gemini => "gemini",
            Client::Cursor => "cursor",
            Client::Opencode => "opencode",
            Client::Copilot => "copilot",
        }
    }

    /// The file the hook goes into, for `scope`.
    fn file(self, scope: Scope, project: &Path, dirs: &UserDirs) -> anyhow::Result<PathBuf> {
        let user = |under_home: &str, own: Option<&PathBuf>| -> anyhow::Result<PathBuf> {
            own.cloned().map_or_else(|| dirs.home().map(|h| h.join(under_home)), Ok)
        };
        Ok(match (self, scope) {
            (Client::Claude, Scope::Project) => project.join(".claude/settings.json"),
            (Client::Claude, Scope::User) => dirs.home()?.join(".claude/settings.json"),
            (Client::Codex, Scope::Project) => project.join(".codex/hooks.json"),
            (Client::Codex, Scope::User) => dirs.codex()?.join("hooks.json"),
            (Client::Gemini, Scope::Project) => project.join(".gemini/settings.json"),
            (Client::Gemini, Scope::User) => dirs.home()?.join(".gemini/settings.json"),
            (Client::Cursor, Scope::Project) => project.join(".cursor/hooks.json"),
            (Client::Cursor, Scope::User) => dirs.home()?.join(".cursor/hooks.json"),
            (Client::Opencode, Scope::Project) => project.join(".opencode/plugins").join(opencode::PLUGIN_FILE),
            (Client::Opencode, Scope::User) => {
                user(".config", dirs.config_home.as_ref())?.join("opencode/plugins").join(opencode::PLUGIN_FILE)
            }
            (Client::Copilot, Scope::Project) => project.join(".github/hooks/buildvise.json"),
            (Client::Copilot, Scope::User) => {
                user(".copilot", dirs.copilot_home.as_ref())?.join("hooks/buildvise.json")
            }
        })
    }

    fn shape(self) -> Shape {
        match self {
            Client::Claude | Client::Codex => Shape::Grouped { event: "PreToolUse", matcher: "Bash" },
            Client::Gemini => Shape::Grouped { event: "BeforeTool", matcher: "run_shell_command" },
            Client::Cursor | Client::Copilot | Client::Opencode => Shape::Flat { event: "preToolUse" },
        }
    }

    /// The hook entry that runs `command`.
    fn entry(self, command: &str) -> Value {
        match self {
            Client::Cursor => json!({"command": command, "matcher": "Shell"}),
            Client::Copilot => json!({"type": "command", "bash": command}),
            _ => json!({"type": "command", "command": command}),
        }
    }

    /// How the client reads its settings file: Gemini CLI's takes comments.
    fn syntax(self) -> Syntax {
        if self == Client::Gemini { Syntax::Jsonc } else { Syntax::Json }
    }

    /// Whether the file is buildvise's own: it goes when the hook is taken out.
    fn owns_file(self) -> bool {
        matches!(self, Client::Copilot | Client::Opencode)
    }
}

/// Adds (or with `remove`, takes out) the hook in `client`'s settings for `scope`; with `show`,
/// only says what it would write.
pub fn install(
    client: Client,
    scope: Scope,
    project: &Path,
    dirs: &UserDirs,
    remove: bool,
    show: bool,
) -> anyhow::Result<Outcome> {
    let file = SettingsFile::read(&client.file(scope, project, dirs)?)?;
    let launch = settings_file::launch(scope);
    let text = if client == Client::Opencode {
        opencode::plugin(file.text(), &launch, remove, &file.path)?
    } else {
        edit_json(client, file.text(), &launch.line(&format!("hook {}", client.name())), remove, &file.path)?
    };
    file.settle(text, &launch, remove, show, false)
}

/// The JSON settings file with the hook put in or taken out; None when nothing but the hook
/// was in a file of ours.
fn edit_json(
    client: Client,
    before: Option<&str>,
    command: &str,
    remove: bool,
    path: &Path,
) -> anyhow::Result<Option<String>> {
    let mut doc = JsonDoc::parse(before, client.syntax(), path)?;
    if before.is_none() && remove {
        return Ok(None);
    }
    let shape = client.shape();
    let changed = if remove {
        take_out(&mut doc.value, &shape, path)?
    } else {
        put_in(&mut doc.value, &shape, client.entry(command), path)?
    };
    if !changed {
        return Ok(before.map(str::to_string));
    }
    let left = doc.value.as_object().is_some_and(|root| root.keys().all(|k| k == "version"));
    if remove && left && client.owns_file() {
        return Ok(None);
    }
    Ok(Some(doc.text()))
}

/// Puts `entry` in, or replaces the entry of ours that differs from it.
fn put_in(doc: &mut Value, shape: &Shape, entry: Value, path: &Path) -> anyhow::Result<bool> {
    if let Shape::Flat { .. } = shape
        && let Some(root) = doc.as_object_mut()
    {
        root.entry("version").or_insert(json!(1));
    }
    let list = event_list(doc, shape, path)?;
    for item in list.iter_mut() {
        let ours = match shape {
            Shape::Grouped { .. } => {
                item.get_mut("hooks").and_then(Value::as_array_mut).and_then(|h| h.iter_mut().find(|h| is_ours(h)))
            }
            Shape::Flat { .. } => Some(item).filter(|h| is_ours(h)),
        };
        if let Some(ours) = ours {
            let changed = *ours != entry;
            *ours = entry;
            return Ok(changed);
        }
    }
    list.push(match shape {
        Shape::Grouped { matcher, .. } => json!({"matcher": matcher, "hooks": [entry]}),
        Shape::Flat { .. } => entry,
    });
    Ok(true)
}

/// Takes out every entry of ours, and the groups and keys it leaves empty.
fn take_out(doc: &mut Value, shape: &Shape, path: &Path) -> anyhow::Result<bool> {
    let event = match shape {
        Shape::Grouped { event, .. } | Shape::Flat { event } => *event,
    };
    if doc.get("hooks").and_then(|h| h.get(event)).is_none() {
        return Ok(false);
    }
    let list = event_list(doc, shape, path)?;
    let before = list.clone();
    match shape {
        Shape::Grouped { .. } => list.retain_mut(|group| {
            let Some(hooks) = group.get_mut("hooks").and_then(Value::as_array_mut) else { return true };
            hooks.retain(|h| !is_ours(h));
            !hooks.is_empty()
        }),
        Shape::Flat { .. } => list.retain(|h| !is_ours(h)),
    }
    let changed = *list != before;
    if list.is_empty()
        && let Some(hooks) = doc.get_mut("hooks").and_then(Value::as_object_mut)
    {
        hooks.remove(event);
        if hooks.is_empty()
            && let Some(root) = doc.as_object_mut()
        {
            root.remove("hooks");
        }
    }
    Ok(changed)
}

/// `hooks.EVENT`, made where it is missing.
fn event_list<'a>(doc: &'a mut Value, shape: &Shape, path: &Path) -> anyhow::Result<&'a mut Vec<Value>> {
    let event = match shape {
        Shape::Grouped { event, .. } | Shape::Flat { event } => *event,
    };
    let shape = || {
        format!(
            "{} does not hold the client's settings (an object whose \"hooks\" is an object of arrays); fix it, then run again",
            path.display()
        )
    };
    let root = doc.as_object_mut().with_context(shape)?;
    let hooks = root.entry("hooks").or_insert_with(|| Value::Object(Map::new())).as_object_mut().with_context(shape)?;
    hooks.entry(event).or_insert_with(|| Value::Array(Vec::new())).as_array_mut().with_context(shape)
}

/// A hook entry that runs one of our hooks, by whatever path or launcher (`npx -y buildvise`).
fn is_ours(hook: &Value) -> bool {
    let command = hook.get("command").or_else(|| hook.get("bash")).and_then(Value::as_str);
    command.is_some_and(|c| {
        let program = c.split(" hook ").next().unwrap_or_default();
        c.contains(" hook ")
            && (program == PROGRAM
                || program.ends_with(&format!("/{PROGRAM}"))
                || program.ends_with(&format!(" {PROGRAM}")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLAUDE: &str = "buildvise hook claude";

    fn project_file(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    fn run(client: Client, dir: &Path, remove: bool) -> Outcome {
        install(client, Scope::Project, dir, &UserDirs::default(), remove, false).unwrap()
    }

    #[test]
    fn merges_beside_what_is_there_once_and_takes_out_only_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let theirs = r#"{"model": "x", "hooks": {"PreToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "lint.sh"}]}]}}"#;
        let path = project_file(dir.path(), ".claude/settings.json", &format!("\u{feff}{theirs}"));
        assert!(run(Client::Claude, dir.path(), false).changed);
        let text = std::fs::read_to_string(&path).unwrap();
        let text = text.strip_prefix('\u{feff}').expect("the byte-order mark stays");
        let doc: Value = serde_json::from_str(text).unwrap();
        assert_eq!(doc["model"], "x");
        assert_eq!(doc["hooks"]["PreToolUse"][0]["hooks"][0]["command"], "lint.sh");
        assert_eq!(
            doc["hooks"]["PreToolUse"][1],
            json!({"matcher": "Bash", "hooks": [{"type": "command", "command": CLAUDE}]})
        );
        assert!(std::fs::read_to_string(path.with_extension("json.bak")).unwrap().contains("lint.sh"));
        assert!(!run(Client::Claude, dir.path(), false).changed, "a second run changes nothing");
        assert!(run(Client::Claude, dir.path(), true).changed);
        let text = std::fs::read_to_string(&path).unwrap();
        let doc: Value = serde_json::from_str(text.trim_start_matches('\u{feff}')).unwrap();
        assert_eq!(doc, serde_json::from_str::<Value>(theirs).unwrap());
        assert!(!run(Client::Claude, dir.path(), true).changed);
    }

    #[test]
    fn show_writes_nothing_and_a_new_file_holds_only_the_hook() {
        let dir = tempfile::tempdir().unwrap();
        let shown = install(Client::Claude, Scope::Project, dir.path(), &UserDirs::default(), false, true).unwrap();
        let text = shown.text.clone().unwrap();
        assert!(shown.changed && text.contains(CLAUDE));
        assert!(!dir.path().join(".claude").exists());
        run(Client::Claude, dir.path(), false);
        let written = std::fs::read_to_string(dir.path().join(".claude/settings.json")).unwrap();
        assert_eq!(written, text);
        assert!(!written.contains(&*dir.path().to_string_lossy()), "no path of this machine in a project file");
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
        run(Client::Claude, dir.path(), false);
        assert!(std::fs::symlink_metadata(dir.path().join(".claude/settings.json")).unwrap().file_type().is_symlink());
        assert!(std::fs::read_to_string(&real).unwrap().contains(CLAUDE));
        assert_eq!(std::fs::metadata(&real).unwrap().permissions().mode() & 0o777, 0o600);
    }

    #[test]
    fn a_file_it_cannot_read_as_settings_is_left_alone_with_a_reason() {
        let dir = tempfile::tempdir().unwrap();
        let path = project_file(dir.path(), ".claude/settings.json", "{ not json");
        let err = install(Client::Claude, Scope::Project, dir.path(), &UserDirs::default(), false, false).unwrap_err();
        assert!(format!("{err:#}").contains("is not JSON as the client reads it"), "{err:#}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{ not json");
        project_file(dir.path(), ".claude/settings.json", r#"{"hooks": []}"#);
        let err = install(Client::Claude, Scope::Project, dir.path(), &UserDirs::default(), false, false).unwrap_err();
        assert!(format!("{err:#}").contains("fix it, then run again"), "{err:#}");
    }

    #[test]
    fn each_client_gets_the_entry_its_file_documents() {
        let dir = tempfile::tempdir().unwrap();
        for (client, file, pointer, entry) in [
            (
                Client::Codex,
                ".codex/hooks.json",
                "/hooks/PreToolUse/0",
                json!({"matcher": "Bash", "hooks": [{"type": "command", "command": "buildvise hook codex"}]}),
            ),
            (
                Client::Gemini,
                ".gemini/settings.json",
                "/hooks/BeforeTool/0",
                json!({"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "buildvise hook gemini"}]}),
            ),
            (
                Client::Cursor,
                ".cursor/hooks.json",
                "/hooks/preToolUse/0",
                json!({"command": "buildvise hook cursor", "matcher": "Shell"}),
            ),
            (
                Client::Copilot,
                ".github/hooks/buildvise.json",
                "/hooks/preToolUse/0",
                json!({"type": "command", "bash": "buildvise hook copilot"}),
            ),
        ] {
            run(client, dir.path(), false);
            let doc: Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join(file)).unwrap()).unwrap();
            assert_eq!(doc.pointer(pointer), Some(&entry), "{client:?}");
        }
        let cursor: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join(".cursor/hooks.json")).unwrap()).unwrap();
        assert_eq!(cursor["version"], 1);
        // Copilot's file is buildvise's own: taking the hook out takes the file.
        run(Client::Copilot, dir.path(), true);
        assert!(!dir.path().join(".github/hooks/buildvise.json").exists());
        assert!(dir.path().join(".github/hooks/buildvise.json.bak").exists());
    }

    #[test]
    fn gemini_settings_keep_their_comments() {
        let dir = tempfile::tempdir().unwrap();
        let theirs = "{\n  // the theme\n  \"theme\": \"dark\",\n}\n";
        let path = project_file(dir.path(), ".gemini/settings.json", theirs);
        run(Client::Gemini, dir.path(), false);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("{\n  // the theme\n  \"theme\": \"dark\","), "{text}");
        assert!(text.contains("buildvise hook gemini"), "{text}");
        run(Client::Gemini, dir.path(), true);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), theirs, "taken out, the file is as it was");
        // Claude Code reads no comments: neither does its install.
        project_file(dir.path(), ".claude/settings.json", "{ // no\n}");
        assert!(install(Client::Claude, Scope::Project, dir.path(), &UserDirs::default(), false, false).is_err());
    }

    #[test]
    fn user_files_follow_the_clients_home_variables() {
        let dirs = UserDirs {
            home: Some(PathBuf::from("/h")),
            codex_home: Some(PathBuf::from("/c")),
            copilot_home: None,
            config_home: None,
        };
        let file = |client: Client| client.file(Scope::User, Path::new("/p"), &dirs).unwrap();
        assert_eq!(file(Client::Codex), Path::new("/c/hooks.json"));
        assert_eq!(file(Client::Copilot), Path::new("/h/.copilot/hooks/buildvise.json"));
        assert_eq!(file(Client::Opencode), Path::new("/h/.config/opencode/plugins/buildvise.js"));
        assert!(Client::Gemini.file(Scope::User, Path::new("/p"), &UserDirs::default()).is_err());
    }
}
