//! `buildvise mcp install`: registers the server with an MCP client by writing or merging its
//! config file (idempotent, other servers kept), and prints the equivalent for other clients.

use anyhow::Context;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

const SERVER_NAME: &str = "buildvise";

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Client {
    /// Claude Code: `.mcp.json` (project) or `~/.claude.json` (user).
    Claude,
    /// Cursor: `.cursor/mcp.json` (project) or `~/.cursor/mcp.json` (user).
    Cursor,
    /// VS Code: `.vscode/mcp.json` (project only).
    Vscode,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scope {
    Project,
    User,
}

/// What `install` did.
#[derive(Debug)]
pub struct Installed {
    pub path: PathBuf,
    pub changed: bool,
    /// Snippets for the clients not written to.
    pub others: String,
}

/// Writes the server entry into `client`'s config under `project` (or the user's home).
pub fn install(client: Client, scope: Scope, project: &Path, home: Option<&Path>) -> anyhow::Result<Installed> {
    let command = command_name();
    let (path, key, entry) = match (client, scope) {
        (Client::Claude, Scope::Project) => (project.join(".mcp.json"), "mcpServers", stdio_entry(&command, false)),
        (Client::Cursor, Scope::Project) => {
            (project.join(".cursor/mcp.json"), "mcpServers", stdio_entry(&command, false))
        }
        (Client::Vscode, Scope::Project) => (project.join(".vscode/mcp.json"), "servers", stdio_entry(&command, true)),
        (Client::Claude, Scope::User) => {
            (user_home(home)?.join(".claude.json"), "mcpServers", stdio_entry(&command, false))
        }
        (Client::Cursor, Scope::User) => {
            (user_home(home)?.join(".cursor/mcp.json"), "mcpServers", stdio_entry(&command, false))
        }
        (Client::Vscode, Scope::User) => anyhow::bail!(
            "VS Code keeps user MCP servers in its settings UI; use --scope project, or add the snippet printed for vscode by hand"
        ),
    };
    let mut doc = match std::fs::read_to_string(&path) {
        Ok(text) if !text.trim().is_empty() => serde_json::from_str::<Value>(&text)
            .with_context(|| format!("{} is not valid JSON; fix or remove it, then run again", path.display()))?,
        Ok(_) => Value::Object(Map::new()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Value::Object(Map::new()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let root = doc
        .as_object_mut()
        .with_context(|| format!("{} does not hold a JSON object; fix it, then run again", path.display()))?;
    let servers = root.entry(key).or_insert_with(|| Value::Object(Map::new()));
    let servers = servers
        .as_object_mut()
        .with_context(|| format!("{}: \"{key}\" is not an object; fix it, then run again", path.display()))?;
    let changed = servers.get(SERVER_NAME) != Some(&entry);
    if changed {
        servers.insert(SERVER_NAME.to_string(), entry);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let text = serde_json::to_string_pretty(&doc)? + "\n";
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
        std::fs::rename(&tmp, &path).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(Installed { path, changed, others: snippets(client, &command) })
}

fn stdio_entry(command: &str, typed: bool) -> Value {
    if typed {
        json!({"type": "stdio", "command": command, "args": ["serve"]})
    } else {
        json!({"command": command, "args": ["serve"]})
    }
}

/// `buildvise` when the PATH finds this very binary, else this binary's full path.
fn command_name() -> String {
    let exe = std::env::current_exe().ok().and_then(|e| std::fs::canonicalize(e).ok());
    let on_path = std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| std::fs::canonicalize(dir.join(SERVER_NAME)).ok() == exe)
    });
    match exe {
        Some(exe) if !on_path => exe.display().to_string(),
        _ => SERVER_NAME.to_string(),
    }
}

fn user_home(home: Option<&Path>) -> anyhow::Result<PathBuf> {
    home.map(Path::to_path_buf)
        .or_else(|| std::env::var_os("HOME").map(PathBuf::from))
        .context("HOME is not set; use --scope project")
}

fn snippets(written: Client, command: &str) -> String {
    let mut out = String::new();
    if written != Client::Claude {
        out.push_str(&format!("Claude Code: claude mcp add {SERVER_NAME} -- {command} serve\n"));
    }
    if written != Client::Cursor {
        out.push_str(&format!(
            "Cursor (.cursor/mcp.json): {}\n",
            json!({"mcpServers": {SERVER_NAME: stdio_entry(command, false)}})
        ));
    }
    if written != Client::Vscode {
        out.push_str(&format!(
            "VS Code (.vscode/mcp.json): {}\n",
            json!({"servers": {SERVER_NAME: stdio_entry(command, true)}})
        ));
    }
    out.push_str(&format!(
        "Codex (~/.codex/config.toml): [mcp_servers.{SERVER_NAME}] command = {command:?} args = [\"serve\"]\n"
    ));
    out.push_str(&format!(
        "Claude Desktop (claude_desktop_config.json): {}\n",
        json!({"mcpServers": {SERVER_NAME: stdio_entry(command, false)}})
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_idempotently_and_keeps_other_servers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".mcp.json");
        std::fs::write(&path, r#"{"mcpServers": {"other": {"command": "x"}}, "extra": 1}"#).unwrap();
        let first = install(Client::Claude, Scope::Project, dir.path(), None).unwrap();
        assert!(first.changed);
        let second = install(Client::Claude, Scope::Project, dir.path(), None).unwrap();
        assert!(!second.changed);
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(doc["mcpServers"]["other"]["command"], "x");
        assert_eq!(doc["extra"], 1);
        assert_eq!(doc["mcpServers"]["buildvise"]["args"], json!(["serve"]));
        assert!(first.others.contains("VS Code"));
    }

    #[test]
    fn refuses_broken_json_without_touching_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".mcp.json");
        std::fs::write(&path, "{ not json").unwrap();
        let err = install(Client::Claude, Scope::Project, dir.path(), None).unwrap_err().to_string();
        assert!(err.contains("is not valid JSON"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{ not json");
    }

    #[test]
    fn vscode_uses_servers_with_type() {
        let dir = tempfile::tempdir().unwrap();
        install(Client::Vscode, Scope::Project, dir.path(), None).unwrap();
        let doc: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join(".vscode/mcp.json")).unwrap()).unwrap();
        assert_eq!(doc["servers"]["buildvise"]["type"], "stdio");
    }
}
