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
    /// VS Code: `.vscode/mcp.json` (project) or the user profile's `mcp.json` (user; VS Code 1.102+).
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
    /// Snippets for the clients not written to, as printed.
    pub others: String,
}

/// Writes the server entry into `client`'s config under `project` (or the user's).
pub fn install(client: Client, scope: Scope, project: &Path) -> anyhow::Result<Installed> {
    install_in(client, scope, project, &UserDirs::from_env())
}

fn install_in(client: Client, scope: Scope, project: &Path, user: &UserDirs) -> anyhow::Result<Installed> {
    let command = command_name();
    let (path, key, entry) = match (client, scope) {
        (Client::Claude, Scope::Project) => (project.join(".mcp.json"), "mcpServers", stdio_entry(&command, false)),
        (Client::Cursor, Scope::Project) => {
            (project.join(".cursor/mcp.json"), "mcpServers", stdio_entry(&command, false))
        }
        (Client::Vscode, Scope::Project) => (project.join(".vscode/mcp.json"), "servers", stdio_entry(&command, true)),
        (Client::Claude, Scope::User) => {
            (user.home()?.join(".claude.json"), "mcpServers", stdio_entry(&command, false))
        }
        (Client::Cursor, Scope::User) => {
            (user.home()?.join(".cursor/mcp.json"), "mcpServers", stdio_entry(&command, false))
        }
        (Client::Vscode, Scope::User) => {
            (user.vscode_profile()?.join("mcp.json"), "servers", stdio_entry(&command, true))
        }
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
    let others = snippets(client, &command).iter().map(Snippet::printed).collect();
    Ok(Installed { path, changed, others })
}

/// Where the user's client files live: from the environment, or a test's own.
struct UserDirs {
    home: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME`, where VS Code keeps its profile on Linux.
    config: Option<PathBuf>,
}

impl UserDirs {
    fn from_env() -> Self {
        // The XDG spec says to ignore a relative directory, as VS Code does.
        let dir = |name| std::env::var_os(name).map(PathBuf::from).filter(|p| p.is_absolute());
        UserDirs { home: dir("HOME"), config: dir("XDG_CONFIG_HOME") }
    }

    fn home(&self) -> anyhow::Result<&Path> {
        self.home.as_deref().context("HOME is not set; set it, or use --scope project")
    }

    /// VS Code's user profile (`Code/User` in Electron's application data directory), where VS
    /// Code 1.102 and later keep the user's MCP servers.
    fn vscode_profile(&self) -> anyhow::Result<PathBuf> {
        if cfg!(target_os = "macos") {
            return Ok(self.home()?.join("Library/Application Support/Code/User"));
        }
        match &self.config {
            Some(config) => Ok(config.join("Code/User")),
            None => Ok(self.home()?.join(".config/Code/User")),
        }
    }
}

fn stdio_entry(command: &str, typed: bool) -> Value {
    if typed {
        json!({"type": "stdio", "command": command, "args": ["serve"]})
    } else {
        json!({"command": command, "args": ["serve"]})
    }
}

/// `buildvise` when the PATH finds this very binary, else this binary's full path.
pub fn command_name() -> String {
    let exe = std::env::current_exe().ok().and_then(|e| std::fs::canonicalize(e).ok());
    let on_path = std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| std::fs::canonicalize(dir.join(SERVER_NAME)).ok() == exe)
    });
    match exe {
        Some(exe) if !on_path => exe.display().to_string(),
        _ => SERVER_NAME.to_string(),
    }
}

/// What a snippet is written in: a line for a shell, or a file's content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Shell,
    Json,
    Toml,
}

/// The server entry for a client buildvise did not write to, to paste by hand.
struct Snippet {
    /// The client, and where the text goes.
    label: &'static str,
    format: Format,
    text: String,
}

impl Snippet {
    /// A one-line snippet follows its label; a TOML table starts on a line of its own, so that it
    /// can be pasted as printed.
    fn printed(&self) -> String {
        match self.format {
            Format::Toml => format!("{}:\n{}", self.label, self.text),
            Format::Shell | Format::Json => format!("{}: {}\n", self.label, self.text),
        }
    }
}

fn snippets(written: Client, command: &str) -> Vec<Snippet> {
    let json_snippet = |label, key: &str, typed| Snippet {
        label,
        format: Format::Json,
        text: json!({key: {SERVER_NAME: stdio_entry(command, typed)}}).to_string(),
    };
    let mut out = Vec::new();
    if written != Client::Claude {
        let text = format!("claude mcp add {SERVER_NAME} -- {} serve", shell_word(command));
        out.push(Snippet { label: "Claude Code", format: Format::Shell, text });
    }
    if written != Client::Cursor {
        out.push(json_snippet("Cursor (.cursor/mcp.json)", "mcpServers", false));
    }
    if written != Client::Vscode {
        out.push(json_snippet("VS Code (.vscode/mcp.json)", "servers", true));
    }
    out.push(json_snippet("Claude Desktop (claude_desktop_config.json)", "mcpServers", false));
    // The toml crate quotes the command as TOML does (Rust's `{:?}` has escapes TOML lacks).
    let text = format!("[mcp_servers.{SERVER_NAME}]\ncommand = {}\nargs = [\"serve\"]\n", toml::Value::from(command));
    out.push(Snippet { label: "Codex (~/.codex/config.toml)", format: Format::Toml, text });
    out
}

/// `word` as one word for a POSIX shell: as is when nothing in it is special, else single-quoted.
fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-./,:@%+=".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nobody() -> UserDirs {
        UserDirs { home: None, config: None }
    }

    #[test]
    fn merges_idempotently_and_keeps_other_servers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".mcp.json");
        std::fs::write(&path, r#"{"mcpServers": {"other": {"command": "x"}}, "extra": 1}"#).unwrap();
        let first = install_in(Client::Claude, Scope::Project, dir.path(), &nobody()).unwrap();
        assert!(first.changed);
        let second = install_in(Client::Claude, Scope::Project, dir.path(), &nobody()).unwrap();
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
        let err = install_in(Client::Claude, Scope::Project, dir.path(), &nobody()).unwrap_err().to_string();
        assert!(err.contains("is not valid JSON"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{ not json");
    }

    #[test]
    fn vscode_uses_servers_with_type() {
        let dir = tempfile::tempdir().unwrap();
        install_in(Client::Vscode, Scope::Project, dir.path(), &nobody()).unwrap();
        let doc: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join(".vscode/mcp.json")).unwrap()).unwrap();
        assert_eq!(doc["servers"]["buildvise"]["type"], "stdio");
    }

    #[test]
    fn vscode_user_scope_merges_into_the_user_profiles_mcp_json() {
        let home = tempfile::tempdir().unwrap();
        let config = tempfile::tempdir().unwrap();
        let user = UserDirs { home: Some(home.path().to_path_buf()), config: Some(config.path().to_path_buf()) };
        let expected = if cfg!(target_os = "macos") {
            home.path().join("Library/Application Support/Code/User/mcp.json")
        } else {
            config.path().join("Code/User/mcp.json")
        };
        std::fs::create_dir_all(expected.parent().unwrap()).unwrap();
        std::fs::write(&expected, r#"{"servers": {"other": {"type": "stdio", "command": "x"}}, "inputs": []}"#)
            .unwrap();
        let installed = install_in(Client::Vscode, Scope::User, Path::new("/nonexistent"), &user).unwrap();
        assert_eq!(installed.path, expected);
        assert!(installed.changed);
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&expected).unwrap()).unwrap();
        assert_eq!(doc["servers"]["other"]["command"], "x");
        assert_eq!(doc["inputs"], json!([]));
        assert_eq!(doc["servers"]["buildvise"]["type"], "stdio");
        assert_eq!(doc["servers"]["buildvise"]["args"], json!(["serve"]));
        assert!(!install_in(Client::Vscode, Scope::User, Path::new("/nonexistent"), &user).unwrap().changed);
    }

    #[cfg(not(target_os = "macos"))]
    #[test]
    fn vscode_user_profile_is_under_dot_config_without_xdg_config_home() {
        let user = UserDirs { home: Some(PathBuf::from("/home/me")), config: None };
        assert_eq!(user.vscode_profile().unwrap(), Path::new("/home/me/.config/Code/User"));
        let err = nobody().vscode_profile().unwrap_err().to_string();
        assert!(err.contains("HOME is not set"), "{err}");
    }

    /// The words of a line as a POSIX shell splits them, for lines without expansions: plain
    /// characters, single quotes, and backslashes outside them.
    fn shell_words(line: &str) -> Vec<String> {
        let (mut words, mut word, mut in_word) = (Vec::new(), String::new(), false);
        let mut chars = line.chars();
        while let Some(c) = chars.next() {
            match c {
                ' ' if in_word => words.push(std::mem::take(&mut word)),
                ' ' => {}
                '\'' => word.extend(chars.by_ref().take_while(|&c| c != '\'')),
                '\\' => word.extend(chars.next()),
                c => word.push(c),
            }
            in_word = c != ' ';
        }
        if in_word {
            words.push(word);
        }
        words
    }

    #[test]
    fn every_printed_snippet_parses_and_runs_the_command_with_serve() {
        // A path with everything a format must escape: spaces, both quotes, a backslash.
        let command = r#"/opt/my tools/it's "bv"\buildvise"#;
        for written in [Client::Claude, Client::Cursor, Client::Vscode] {
            let snippets = snippets(written, command);
            assert_eq!(snippets.len(), 4, "one for each client not written to");
            for snippet in &snippets {
                let label = snippet.label;
                let (found, args) = match snippet.format {
                    Format::Shell => {
                        let words = shell_words(&snippet.text);
                        assert_eq!(words[..5], ["claude", "mcp", "add", "buildvise", "--"], "{label}: {words:?}");
                        (Value::from(words[5].as_str()), json!(words[6..]))
                    }
                    Format::Json => {
                        let doc: Value = serde_json::from_str(&snippet.text)
                            .unwrap_or_else(|e| panic!("{label}: not JSON ({e}): {}", snippet.text));
                        let key = if label.starts_with("VS Code") { "servers" } else { "mcpServers" };
                        let entry = &doc[key]["buildvise"];
                        (entry["command"].clone(), entry["args"].clone())
                    }
                    Format::Toml => {
                        let doc: toml::Table = snippet
                            .text
                            .parse()
                            .unwrap_or_else(|e| panic!("{label}: not TOML ({e}): {}", snippet.text));
                        let entry = &doc["mcp_servers"]["buildvise"];
                        let args: Vec<&str> =
                            entry["args"].as_array().unwrap().iter().filter_map(toml::Value::as_str).collect();
                        (Value::from(entry["command"].as_str().unwrap()), json!(args))
                    }
                };
                assert_eq!(found, command, "{label}: {}", snippet.text);
                assert_eq!(args, json!(["serve"]), "{label}: {}", snippet.text);
            }
            let labels: Vec<&str> = snippets.iter().map(|s| s.label).collect();
            assert!(labels.iter().any(|l| l.starts_with("Codex")), "{labels:?}");
            assert!(labels.iter().any(|l| l.starts_with("Claude Desktop")), "{labels:?}");
        }
    }

    #[test]
    fn a_toml_snippet_starts_on_its_own_line_so_it_pastes_as_printed() {
        let codex = snippets(Client::Claude, "buildvise").into_iter().find(|s| s.format == Format::Toml).unwrap();
        assert_eq!(
            codex.printed(),
            "Codex (~/.codex/config.toml):\n[mcp_servers.buildvise]\ncommand = \"buildvise\"\nargs = [\"serve\"]\n"
        );
        assert_eq!(shell_word("/usr/local/bin/buildvise"), "/usr/local/bin/buildvise");
    }
}
