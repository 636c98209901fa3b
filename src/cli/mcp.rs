//! `buildvise mcp install`: registers the server with an MCP client by merging its entry into the
//! client's config file (or taking it out), and prints the equivalent for the other clients.
//!
//! The file is changed by the writer `hook install` uses too (`settings_file`): other servers and
//! keys, a symlink, the mode, a byte-order mark, comments and layout all stay, the file as it was
//! is kept as `.bak`, and a second run changes nothing. Where each client keeps its servers, and
//! in what shape, is cited in docs/install.md.

use super::print_text;
use super::settings_file::{self, JsonDoc, Launch, Outcome, Scope, SettingsFile, Syntax, UserDirs};
use anyhow::Context;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

/// The server's name in every client's file, and so what marks the entry as ours.
const SERVER_NAME: &str = "buildvise";

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: McpCommand,
}

#[derive(Debug, clap::Subcommand)]
enum McpCommand {
    /// Merge the server entry into a client's MCP config (or take it out), and print it for the others.
    Install {
        /// Which client's file to write.
        #[arg(long, value_enum, default_value_t = Client::Claude)]
        client: Client,
        /// The project's file (in the current directory) or the user's.
        #[arg(long, value_enum, default_value_t = Scope::Project)]
        scope: Scope,
        /// Print the file as it would be, and write nothing.
        #[arg(long)]
        show: bool,
        /// Take buildvise's entry out, leaving the rest of the file.
        #[arg(long)]
        uninstall: bool,
    },
}

pub fn run(args: &Args) -> anyhow::Result<i32> {
    let McpCommand::Install { client, scope, show, uninstall } = args.command;
    let done = install(client, scope, &std::env::current_dir()?, &UserDirs::from_env(), uninstall, show)?;
    let path = done.path.display();
    let said = match (show, done.changed, uninstall) {
        (true, _, _) => done.text.clone().unwrap_or_else(|| format!("(no file at {path})\n")),
        (false, true, false) => format!("wrote {path}\n"),
        (false, true, true) => format!("took buildvise out of {path}\n"),
        (false, false, false) => format!("already set up: {path}\n"),
        (false, false, true) => format!("no buildvise server in {path}\n"),
    };
    let others = if show || uninstall {
        String::new()
    } else {
        let launch = settings_file::launch(scope);
        let printed: String = snippets(client, &launch).iter().map(Snippet::printed).collect();
        format!("other clients:\n{printed}")
    };
    print_text(&format!("{said}{others}"))?;
    if done.needs_path {
        eprintln!("{}", settings_file::path_warning(&done.path));
    }
    Ok(0)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Client {
    /// Claude Code: `.mcp.json` (project) or `~/.claude.json` (user).
    Claude,
    /// Cursor: `.cursor/mcp.json` (project) or `~/.cursor/mcp.json` (user).
    Cursor,
    /// VS Code: `.vscode/mcp.json` (project) or the user profile's `mcp.json` (user; VS Code 1.102+).
    Vscode,
    /// Codex: `.codex/config.toml` (project, read in trusted projects) or `~/.codex/config.toml`
    /// (user; `$CODEX_HOME`).
    Codex,
}

/// How a client's file holds its servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// A JSON object of servers under `key`; `typed` entries say `"type": "stdio"`.
    Json { key: &'static str, typed: bool, syntax: Syntax },
    /// `[mcp_servers.NAME]` tables in TOML.
    Toml,
}

impl Client {
    fn file(self, scope: Scope, project: &Path, dirs: &UserDirs) -> anyhow::Result<PathBuf> {
        Ok(match (self, scope) {
            (Client::Claude, Scope::Project) => project.join(".mcp.json"),
            (Client::Claude, Scope::User) => dirs.home()?.join(".claude.json"),
            (Client::Cursor, Scope::Project) => project.join(".cursor/mcp.json"),
            (Client::Cursor, Scope::User) => dirs.home()?.join(".cursor/mcp.json"),
            (Client::Vscode, Scope::Project) => project.join(".vscode/mcp.json"),
            (Client::Vscode, Scope::User) => vscode_profile(dirs)?.join("mcp.json"),
            (Client::Codex, Scope::Project) => project.join(".codex/config.toml"),
            (Client::Codex, Scope::User) => dirs.codex()?.join("config.toml"),
        })
    }

    fn format(self) -> Format {
        match self {
            Client::Claude | Client::Cursor => Format::Json { key: "mcpServers", typed: false, syntax: Syntax::Json },
            // VS Code reads its mcp.json as JSON with comments, as all its settings files.
            Client::Vscode => Format::Json { key: "servers", typed: true, syntax: Syntax::Jsonc },
            Client::Codex => Format::Toml,
        }
    }

    /// Whether a new file for `scope` is made private: Claude Code keeps its account and session
    /// state in `~/.claude.json`, which it keeps readable by the user alone.
    fn private(self, scope: Scope) -> bool {
        self == Client::Claude && scope == Scope::User
    }
}

/// VS Code's user profile (`Code/User` in Electron's application data directory), where VS Code
/// 1.102 and later keep the user's MCP servers.
fn vscode_profile(dirs: &UserDirs) -> anyhow::Result<PathBuf> {
    if cfg!(target_os = "macos") {
        return Ok(dirs.home()?.join("Library/Application Support/Code/User"));
    }
    match &dirs.config_home {
        Some(config) => Ok(config.join("Code/User")),
        None => Ok(dirs.home()?.join(".config/Code/User")),
    }
}

/// Puts the server entry into `client`'s config for `scope` (with `remove`, takes it out); with
/// `show`, only says what it would write.
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
    let text = match client.format() {
        _ if remove && file.text().is_none() => None,
        Format::Json { key, typed, syntax } => {
            edit_json(file.text(), syntax, key, (!remove).then(|| entry(&launch, typed)), &file.path)?
        }
        Format::Toml => edit_toml(file.text(), &launch, remove, &file.path)?,
    };
    file.settle(text, &launch, remove, show, client.private(scope))
}

fn entry(launch: &Launch, typed: bool) -> Value {
    let args = launch.with(&["serve"]);
    if typed {
        json!({"type": "stdio", "command": launch.program, "args": args})
    } else {
        json!({"command": launch.program, "args": args})
    }
}

/// The JSON file with `entry` merged in as `key.buildvise` (None takes that out). An entry of
/// ours that is there keeps what else the user put in it (`env`, say).
fn edit_json(
    before: Option<&str>,
    syntax: Syntax,
    key: &str,
    entry: Option<Value>,
    path: &Path,
) -> anyhow::Result<Option<String>> {
    let mut doc = JsonDoc::parse(before, syntax, path)?;
    let shape =
        || format!("{} does not hold an object of servers under \"{key}\"; fix it, then run again", path.display());
    let root = doc.value.as_object_mut().with_context(shape)?;
    match entry {
        Some(entry) => {
            let servers = root.entry(key).or_insert_with(|| Value::Object(Map::new()));
            let servers = servers.as_object_mut().with_context(shape)?;
            match servers.get_mut(SERVER_NAME).and_then(Value::as_object_mut) {
                Some(ours) => {
                    for (field, value) in entry.as_object().into_iter().flatten() {
                        ours.insert(field.clone(), value.clone());
                    }
                }
                None => {
                    servers.insert(SERVER_NAME.to_string(), entry);
                }
            }
        }
        None => {
            let Some(servers) = root.get_mut(key) else { return Ok(before.map(str::to_string)) };
            let servers = servers.as_object_mut().with_context(shape)?;
            servers.shift_remove(SERVER_NAME);
            if servers.is_empty() {
                root.shift_remove(key);
            }
        }
    }
    Ok(Some(doc.text()))
}

/// Codex's `config.toml` with `[mcp_servers.buildvise]` set to run `launch` with `serve` (with
/// `remove`, taken out), edited with `toml_edit` so that comments, order and layout stay. An entry
/// of ours keeps the other keys the user gave it (`env`, `enabled`, tool approvals).
fn edit_toml(before: Option<&str>, launch: &Launch, remove: bool, path: &Path) -> anyhow::Result<Option<String>> {
    use toml_edit::{Array, DocumentMut, Item, Table, value};
    let mut doc: DocumentMut = before
        .unwrap_or_default()
        .parse()
        .with_context(|| format!("{} is not TOML as Codex reads it; fix it, then run again", path.display()))?;
    let shape = || format!("{}: \"mcp_servers\" is not a table of servers; fix it, then run again", path.display());
    let command = launch.program.as_str();
    let args: Array = launch.with(&["serve"]).into_iter().collect();
    if remove {
        let Some(servers) = doc.get_mut("mcp_servers") else { return Ok(before.map(str::to_string)) };
        let table = servers.as_table_like_mut().with_context(shape)?;
        table.remove(SERVER_NAME);
        // A `mcp_servers` that only the entry's header made goes with it.
        if table.is_empty() && servers.as_table().is_some_and(Table::is_implicit) {
            doc.remove("mcp_servers");
        }
        return Ok(Some(doc.to_string()));
    }
    let servers = doc.entry("mcp_servers").or_insert_with(|| {
        let mut table = Table::new();
        table.set_implicit(true);
        Item::Table(table)
    });
    // `TableLike::get_mut`, not `Item::get_mut`: the latter makes the key it looks for.
    match servers.as_table_like_mut().with_context(shape)?.get_mut(SERVER_NAME) {
        Some(ours) => {
            let ours = ours.as_table_like_mut().with_context(shape)?;
            if ours.get("command").and_then(Item::as_str) != Some(command) {
                ours.insert("command", value(command));
            }
            let same_args = ours
                .get("args")
                .and_then(Item::as_array)
                .is_some_and(|a| a.iter().map(|v| v.as_str()).eq(args.iter().map(|v| v.as_str())));
            if !same_args {
                ours.insert("args", value(args));
            }
        }
        None => {
            let mut table = Table::new();
            table.insert("command", value(command));
            table.insert("args", value(args));
            match servers {
                Item::Table(servers) => {
                    servers.insert(SERVER_NAME, Item::Table(table));
                }
                Item::Value(toml_edit::Value::InlineTable(servers)) => {
                    servers.insert(SERVER_NAME, toml_edit::Value::InlineTable(table.into_inline_table()));
                }
                _ => return Err(anyhow::anyhow!("{}", shape())),
            }
        }
    }
    Ok(Some(doc.to_string()))
}

/// What a snippet is written in: a line for a shell, or a file's content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SnippetFormat {
    Shell,
    Json,
    Toml,
}

/// The server entry for a client buildvise did not write to, to paste by hand.
struct Snippet {
    /// The client, and where the text goes.
    label: &'static str,
    format: SnippetFormat,
    text: String,
}

impl Snippet {
    /// A one-line snippet follows its label; a TOML table starts on a line of its own, so that it
    /// can be pasted as printed.
    fn printed(&self) -> String {
        match self.format {
            SnippetFormat::Toml => format!("{}:\n{}", self.label, self.text),
            SnippetFormat::Shell | SnippetFormat::Json => format!("{}: {}\n", self.label, self.text),
        }
    }
}

fn snippets(written: Client, launch: &Launch) -> Vec<Snippet> {
    let json_snippet = |label, key: &str, typed| Snippet {
        label,
        format: SnippetFormat::Json,
        text: json!({key: {SERVER_NAME: entry(launch, typed)}}).to_string(),
    };
    let mut out = Vec::new();
    if written != Client::Claude {
        let words: Vec<String> = std::iter::once(&launch.program).chain(&launch.args).map(|w| shell_word(w)).collect();
        let text = format!("claude mcp add {SERVER_NAME} -- {} serve", words.join(" "));
        out.push(Snippet { label: "Claude Code", format: SnippetFormat::Shell, text });
    }
    if written != Client::Cursor {
        out.push(json_snippet("Cursor (.cursor/mcp.json)", "mcpServers", false));
    }
    if written != Client::Vscode {
        out.push(json_snippet("VS Code (.vscode/mcp.json)", "servers", true));
    }
    out.push(json_snippet("Claude Desktop (claude_desktop_config.json)", "mcpServers", false));
    if written != Client::Codex {
        // The toml crate quotes the command as TOML does (Rust's `{:?}` has escapes TOML lacks).
        let args = toml::Value::from(launch.with(&["serve"]));
        let text = format!(
            "[mcp_servers.{SERVER_NAME}]\ncommand = {}\nargs = {args}\n",
            toml::Value::from(launch.program.as_str())
        );
        out.push(Snippet { label: "Codex (~/.codex/config.toml)", format: SnippetFormat::Toml, text });
    }
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

    /// A launch that runs `program` itself.
    fn plain(program: &str) -> Launch {
        Launch { program: program.to_string(), args: Vec::new(), needs_path: false }
    }

    fn run(client: Client, dir: &Path, remove: bool) -> Outcome {
        install(client, Scope::Project, dir, &UserDirs::default(), remove, false).unwrap()
    }

    fn read(path: &Path) -> Value {
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    #[test]
    fn merges_idempotently_keeps_other_servers_and_takes_out_only_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".mcp.json");
        let theirs = r#"{"mcpServers": {"other": {"command": "x"}}, "extra": 1}"#;
        std::fs::write(&path, theirs).unwrap();
        assert!(run(Client::Claude, dir.path(), false).changed);
        assert!(!run(Client::Claude, dir.path(), false).changed);
        let doc = read(&path);
        assert_eq!(doc["mcpServers"]["other"]["command"], "x");
        assert_eq!(doc["extra"], 1);
        assert_eq!(doc["mcpServers"]["buildvise"], json!({"command": "buildvise", "args": ["serve"]}));
        assert!(run(Client::Claude, dir.path(), true).changed);
        assert_eq!(read(&path), serde_json::from_str::<Value>(theirs).unwrap());
        assert!(!run(Client::Claude, dir.path(), true).changed);
    }

    #[test]
    fn an_entry_of_ours_keeps_what_the_user_added_to_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".mcp.json");
        std::fs::write(&path, r#"{"mcpServers": {"buildvise": {"command": "/old/buildvise", "env": {"A": "1"}}}}"#)
            .unwrap();
        assert!(run(Client::Claude, dir.path(), false).changed);
        assert_eq!(
            read(&path)["mcpServers"]["buildvise"],
            json!({"command": "buildvise", "env": {"A": "1"}, "args": ["serve"]})
        );
    }

    #[test]
    fn refuses_broken_json_without_touching_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".mcp.json");
        std::fs::write(&path, "{ not json").unwrap();
        let err = install(Client::Claude, Scope::Project, dir.path(), &UserDirs::default(), false, false).unwrap_err();
        assert!(format!("{err:#}").contains("is not JSON as the client reads it; fix it, then run again"), "{err:#}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{ not json");
        std::fs::write(&path, r#"{"mcpServers": []}"#).unwrap();
        let err = install(Client::Claude, Scope::Project, dir.path(), &UserDirs::default(), false, false).unwrap_err();
        assert!(format!("{err:#}").contains("does not hold an object of servers under \"mcpServers\""), "{err:#}");
    }

    #[test]
    fn vscode_uses_servers_with_type() {
        let dir = tempfile::tempdir().unwrap();
        run(Client::Vscode, dir.path(), false);
        assert_eq!(read(&dir.path().join(".vscode/mcp.json"))["servers"]["buildvise"]["type"], "stdio");
    }

    #[test]
    fn vscode_user_scope_merges_into_the_user_profiles_mcp_json() {
        let home = tempfile::tempdir().unwrap();
        let config = tempfile::tempdir().unwrap();
        let dirs = UserDirs {
            home: Some(home.path().to_path_buf()),
            config_home: Some(config.path().to_path_buf()),
            ..UserDirs::default()
        };
        let expected = if cfg!(target_os = "macos") {
            home.path().join("Library/Application Support/Code/User/mcp.json")
        } else {
            config.path().join("Code/User/mcp.json")
        };
        std::fs::create_dir_all(expected.parent().unwrap()).unwrap();
        std::fs::write(&expected, r#"{"servers": {"other": {"type": "stdio", "command": "x"}}, "inputs": []}"#)
            .unwrap();
        let installed = install(Client::Vscode, Scope::User, Path::new("/nonexistent"), &dirs, false, false).unwrap();
        assert_eq!(installed.path, expected);
        assert!(installed.changed);
        let doc = read(&expected);
        assert_eq!(doc["servers"]["other"]["command"], "x");
        assert_eq!(doc["inputs"], json!([]));
        assert_eq!(doc["servers"]["buildvise"]["type"], "stdio");
        assert_eq!(doc["servers"]["buildvise"]["args"], json!(["serve"]));
        assert!(!install(Client::Vscode, Scope::User, Path::new("/nonexistent"), &dirs, false, false).unwrap().changed);
    }

    #[cfg(not(target_os = "macos"))]
    #[test]
    fn vscode_user_profile_is_under_dot_config_without_xdg_config_home() {
        let dirs = UserDirs { home: Some(PathBuf::from("/home/me")), ..UserDirs::default() };
        assert_eq!(vscode_profile(&dirs).unwrap(), Path::new("/home/me/.config/Code/User"));
        let err = vscode_profile(&UserDirs::default()).unwrap_err().to_string();
        assert!(err.contains("HOME is not set"), "{err}");
    }

    #[test]
    fn codex_config_keeps_comments_other_servers_and_what_the_user_set_on_ours() {
        let theirs = "# my settings\nmodel = \"o3\" # the model\n\n[mcp_servers.docs]\ncommand = \"docs\" # theirs\n";
        let text = edit_toml(Some(theirs), &plain("buildvise"), false, Path::new("c.toml")).unwrap().unwrap();
        assert!(text.starts_with(theirs), "what was there stays as it was:\n{text}");
        let doc: toml::Table = text.parse().unwrap();
        assert_eq!(doc["mcp_servers"]["buildvise"]["command"].as_str(), Some("buildvise"));
        assert_eq!(edit_toml(Some(&text), &plain("buildvise"), false, Path::new("c.toml")).unwrap().unwrap(), text);
        let set = text.replace("args = [\"serve\"]", "args = [\"serve\"]\nenabled = false # off for now");
        let moved = edit_toml(Some(&set), &plain("/opt/bin/buildvise"), false, Path::new("c.toml")).unwrap().unwrap();
        assert!(moved.contains("enabled = false # off for now") && moved.contains("\"/opt/bin/buildvise\""), "{moved}");
        assert_eq!(edit_toml(Some(&text), &plain("buildvise"), true, Path::new("c.toml")).unwrap().unwrap(), theirs);
        // Servers written inline get ours inline.
        let inline = edit_toml(
            Some("mcp_servers = { docs = { command = \"docs\" } }\n"),
            &plain("buildvise"),
            false,
            Path::new("c.toml"),
        )
        .unwrap()
        .unwrap();
        let doc: toml::Table = inline.parse().unwrap();
        assert_eq!(doc["mcp_servers"]["buildvise"]["args"][0].as_str(), Some("serve"), "{inline}");
        let err = edit_toml(Some("mcp_servers = 3\n"), &plain("buildvise"), false, Path::new("c.toml")).unwrap_err();
        assert!(err.to_string().contains("\"mcp_servers\" is not a table of servers"), "{err}");
        let err = edit_toml(Some("[oops\n"), &plain("buildvise"), false, Path::new("c.toml")).unwrap_err();
        assert!(err.to_string().contains("is not TOML as Codex reads it"), "{err}");
    }

    #[test]
    fn codex_files_follow_codex_home() {
        let dirs =
            UserDirs { home: Some(PathBuf::from("/h")), codex_home: Some(PathBuf::from("/c")), ..UserDirs::default() };
        assert_eq!(Client::Codex.file(Scope::User, Path::new("/p"), &dirs).unwrap(), Path::new("/c/config.toml"));
        let dirs = UserDirs { home: Some(PathBuf::from("/h")), ..UserDirs::default() };
        assert_eq!(
            Client::Codex.file(Scope::User, Path::new("/p"), &dirs).unwrap(),
            Path::new("/h/.codex/config.toml")
        );
        assert_eq!(
            Client::Codex.file(Scope::Project, Path::new("/p"), &dirs).unwrap(),
            Path::new("/p/.codex/config.toml")
        );
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
        // A path with everything a format must escape: spaces, both quotes, a backslash; and a
        // launcher whose words come before `serve`.
        let path = plain(r#"/opt/my tools/it's "bv"\buildvise"#);
        let npx = Launch { program: "npx".into(), args: vec!["-y".into(), "buildvise".into()], needs_path: false };
        let cases = [Client::Claude, Client::Cursor, Client::Vscode, Client::Codex]
            .into_iter()
            .flat_map(|client| [(client, &path), (client, &npx)]);
        for (written, launch) in cases {
            let command = launch.program.as_str();
            let serve = json!(launch.with(&["serve"]));
            let snippets = snippets(written, launch);
            assert_eq!(snippets.len(), 4, "one for each client not written to, and Claude Desktop");
            for snippet in &snippets {
                let label = snippet.label;
                let (found, args) = match snippet.format {
                    SnippetFormat::Shell => {
                        let words = shell_words(&snippet.text);
                        assert_eq!(words[..5], ["claude", "mcp", "add", "buildvise", "--"], "{label}: {words:?}");
                        (Value::from(words[5].as_str()), json!(words[6..]))
                    }
                    SnippetFormat::Json => {
                        let doc: Value = serde_json::from_str(&snippet.text)
                            .unwrap_or_else(|e| panic!("{label}: not JSON ({e}): {}", snippet.text));
                        let key = if label.starts_with("VS Code") { "servers" } else { "mcpServers" };
                        let entry = &doc[key]["buildvise"];
                        (entry["command"].clone(), entry["args"].clone())
                    }
                    SnippetFormat::Toml => {
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
                assert_eq!(args, serve, "{label}: {}", snippet.text);
            }
            let labels: Vec<&str> = snippets.iter().map(|s| s.label).collect();
            assert_eq!(labels.iter().any(|l| l.starts_with("Codex")), written != Client::Codex, "{labels:?}");
            assert!(labels.iter().any(|l| l.starts_with("Claude Desktop")), "{labels:?}");
        }
    }

    #[test]
    fn a_toml_snippet_starts_on_its_own_line_so_it_pastes_as_printed() {
        let codex = snippets(Client::Claude, &plain("buildvise"))
            .into_iter()
            .find(|s| s.format == SnippetFormat::Toml)
            .unwrap();
        assert_eq!(
            codex.printed(),
            "Codex (~/.codex/config.toml):\n[mcp_servers.buildvise]\ncommand = \"buildvise\"\nargs = [\"serve\"]\n"
        );
        assert_eq!(shell_word("/usr/local/bin/buildvise"), "/usr/local/bin/buildvise");
    }
}
