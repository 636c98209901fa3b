//! `mcp install` end to end: the real binary writes each client's file in a sandbox home, and the
//! file stays the user's. A private `~/.claude.json` stays private (its `.bak` too, and a new one
//! is made private); a symlinked config stays a link, its target changed; a byte-order mark and
//! VS Code's comments stay; a project's file names `buildvise` even when PATH does not find this
//! binary; Codex's `config.toml` is merged with its comments and other servers kept. Every run
//! twice changes nothing the second time, and `--uninstall` gives back the file as it was.

mod common;

use common::{Run, Sandbox, run_command};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// A sandbox with an empty home and an empty project, both under its work dir.
fn setup() -> (Sandbox, PathBuf, PathBuf) {
    let sb = Sandbox::new(&[]);
    let (home, project) = (sb.work().join("home"), sb.work().join("project"));
    for dir in [&home, &project] {
        std::fs::create_dir_all(dir).expect("create dir");
    }
    (sb, home, project)
}

/// `buildvise mcp install ARGS` in `project`, with `home` as the user's and a PATH that holds
/// nothing, so that PATH never finds this binary.
fn install(sb: &Sandbox, home: &Path, project: &Path, args: &[&str]) -> Run {
    let empty = sb.work().join("empty-path");
    std::fs::create_dir_all(&empty).expect("create dir");
    let mut cmd = sb.command(["mcp", "install"]);
    cmd.args(args).current_dir(project).env("HOME", home).env("PATH", &empty).env_remove("CODEX_HOME");
    let run = run_command(&mut cmd);
    run.expect_code(0);
    run
}

fn said(run: &Run) -> String {
    run.text().lines().next().unwrap_or_default().to_string()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

fn json(text: &str) -> Value {
    serde_json::from_str(text.trim_start_matches('\u{feff}')).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).expect("metadata").permissions().mode() & 0o777
}

/// Install twice (the second changes nothing), then uninstall twice (the second finds nothing):
/// the file is back as it was, byte for byte.
fn round_trip(sb: &Sandbox, home: &Path, project: &Path, args: &[&str], path: &Path) -> String {
    let before = read(path);
    assert!(said(&install(sb, home, project, args)).starts_with("wrote "), "{args:?}");
    let merged = read(path);
    assert!(said(&install(sb, home, project, args)).starts_with("already set up: "), "{args:?}");
    assert_eq!(read(path), merged, "a second run changes nothing");
    let uninstall: Vec<&str> = args.iter().copied().chain(["--uninstall"]).collect();
    assert!(said(&install(sb, home, project, &uninstall)).starts_with("took buildvise out of "));
    assert_eq!(read(path), before, "only its own entry taken out");
    assert!(said(&install(sb, home, project, &uninstall)).starts_with("no buildvise server in "));
    merged
}

#[cfg(unix)]
#[test]
fn a_private_claude_json_stays_private_and_a_new_one_is_made_private() {
    use std::os::unix::fs::PermissionsExt;
    let (sb, home, project) = setup();
    let path = home.join(".claude.json");
    // Pretty-printed with two spaces, as Claude Code writes it.
    let theirs = "{\n  \"oauthAccount\": {\n    \"emailAddress\": \"me@example.com\"\n  },\n  \"mcpServers\": {\n    \"other\": {\n      \"command\": \"x\"\n    }\n  }\n}";
    std::fs::write(&path, theirs).expect("write");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let merged = round_trip(&sb, &home, &project, &["--scope", "user"], &path);
    let doc = json(&merged);
    assert_eq!(doc["oauthAccount"]["emailAddress"], "me@example.com");
    assert_eq!(doc["mcpServers"]["other"]["command"], "x");
    assert_eq!(doc["mcpServers"]["buildvise"]["args"], json!(["serve"]));
    assert_eq!(mode(&path), 0o600, "the file's mode");
    assert_eq!(mode(&home.join(".claude.json.bak")), 0o600, "a copy of a private file is private");

    std::fs::remove_file(&path).expect("remove");
    install(&sb, &home, &project, &["--scope", "user"]);
    assert_eq!(mode(&path), 0o600, "Claude Code keeps ~/.claude.json private: so does a new one");
}

#[cfg(unix)]
#[test]
fn a_symlinked_config_stays_a_link_and_its_target_changes() {
    let (sb, home, project) = setup();
    let dotfiles = home.join("dotfiles");
    std::fs::create_dir_all(&dotfiles).expect("create dir");
    let target = dotfiles.join("claude.json");
    std::fs::write(&target, "{\"theme\": \"dark\"}\n").expect("write");
    let link = home.join(".claude.json");
    std::os::unix::fs::symlink("dotfiles/claude.json", &link).expect("symlink");
    let run = install(&sb, &home, &project, &["--scope", "user"]);
    assert_eq!(said(&run), format!("wrote {}", target.display()), "names the file it wrote");
    assert!(std::fs::symlink_metadata(&link).expect("lstat").file_type().is_symlink(), "the link is still a link");
    let doc = json(&read(&target));
    assert_eq!(doc["theme"], "dark");
    assert!(doc["mcpServers"]["buildvise"].is_object(), "{doc}");
}

#[test]
fn a_file_with_a_byte_order_mark_is_merged_and_keeps_it() {
    let (sb, home, project) = setup();
    let path = project.join(".mcp.json");
    std::fs::write(&path, "\u{feff}{\n  \"mcpServers\": {\n    \"other\": {\"command\": \"x\"}\n  }\n}\n")
        .expect("write");
    let merged = round_trip(&sb, &home, &project, &[], &path);
    assert!(merged.starts_with('\u{feff}'), "the mark stays:\n{merged}");
    let doc = json(&merged);
    assert_eq!(doc["mcpServers"]["other"]["command"], "x");
    assert_eq!(doc["mcpServers"]["buildvise"], json!({"command": "buildvise", "args": ["serve"]}));
}

#[test]
fn vscode_json_with_comments_is_merged_and_its_comments_stay() {
    let (sb, home, project) = setup();
    let path = project.join(".vscode/mcp.json");
    std::fs::create_dir_all(path.parent().expect("dir")).expect("create dir");
    let theirs = "{\n  // servers for this workspace\n  \"servers\": {\n    \"other\": {\"type\": \"stdio\", \"command\": \"x\"}, // keep\n  },\n  /* none yet */ \"inputs\": [],\n}\n";
    std::fs::write(&path, theirs).expect("write");
    let merged = round_trip(&sb, &home, &project, &["--client", "vscode"], &path);
    for comment in ["// servers for this workspace", "// keep", "/* none yet */"] {
        assert!(merged.contains(comment), "{comment:?} is gone:\n{merged}");
    }
    let stripped: String = merged.lines().map(|l| l.split(" //").next().unwrap_or(l)).collect::<Vec<_>>().join("\n");
    assert!(stripped.contains("\"buildvise\": {") && stripped.contains("\"type\": \"stdio\""), "{merged}");
}

#[test]
fn a_project_file_names_buildvise_when_this_binary_is_not_on_path() {
    let (sb, home, project) = setup();
    let exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_buildvise")).expect("the binary");
    for (client, file) in [("claude", ".mcp.json"), ("cursor", ".cursor/mcp.json"), ("vscode", ".vscode/mcp.json")] {
        let run = install(&sb, &home, &project, &["--client", client]);
        assert!(run.stderr.contains("PATH does not find"), "{client}: no warning:\n{}", run.stderr);
        let text = read(&project.join(file));
        assert!(!text.contains(&*exe.to_string_lossy()), "{client}: a path of this machine:\n{text}");
        let key = if client == "vscode" { "servers" } else { "mcpServers" };
        assert_eq!(json(&text)[key]["buildvise"]["command"], "buildvise", "{client}: {text}");
    }
    install(&sb, &home, &project, &["--client", "codex"]);
    let text = read(&project.join(".codex/config.toml"));
    assert!(!text.contains(&*exe.to_string_lossy()), "codex: a path of this machine:\n{text}");
    let doc: toml::Table = text.parse().expect("TOML");
    assert_eq!(doc["mcp_servers"]["buildvise"]["command"].as_str(), Some("buildvise"), "{text}");
    // The user's own file is for this machine alone: it names this binary, which then runs.
    install(&sb, &home, &project, &["--scope", "user"]);
    let doc = json(&read(&home.join(".claude.json")));
    assert_eq!(doc["mcpServers"]["buildvise"]["command"], json!(exe), "{doc}");
}

#[test]
fn codex_config_toml_is_merged_with_its_comments_and_other_servers() {
    let (sb, home, project) = setup();
    let path = home.join(".codex/config.toml");
    std::fs::create_dir_all(path.parent().expect("dir")).expect("create dir");
    let theirs = "# my Codex settings\nmodel = \"o3\"  # the model\n\n[mcp_servers.docs]\ncommand = \"docs-server\" # local docs\nargs = [\"--port\", \"0\"]\n";
    std::fs::write(&path, theirs).expect("write");
    let merged = round_trip(&sb, &home, &project, &["--client", "codex", "--scope", "user"], &path);
    assert!(merged.starts_with(theirs), "what was there stays as it was:\n{merged}");
    let doc: toml::Table = merged.parse().expect("TOML");
    let exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_buildvise")).expect("the binary");
    assert_eq!(doc["mcp_servers"]["docs"]["command"].as_str(), Some("docs-server"));
    assert_eq!(doc["mcp_servers"]["buildvise"]["command"].as_str(), exe.to_str(), "{merged}");
    assert_eq!(doc["mcp_servers"]["buildvise"]["args"].as_array().map(Vec::len), Some(1), "{merged}");
    // `--show` prints the file as it would be and writes nothing.
    let shown = install(&sb, &home, &project, &["--client", "codex", "--scope", "user", "--show"]);
    assert_eq!(shown.text(), merged);
    assert_eq!(read(&path), theirs);
}

#[test]
fn a_broken_file_is_left_alone_and_the_error_says_what_to_do() {
    let (sb, home, project) = setup();
    let path = project.join(".mcp.json");
    std::fs::write(&path, "{ // a comment Claude Code would not read\n}").expect("write");
    let mut cmd = sb.command(["mcp", "install"]);
    cmd.current_dir(&project).env("HOME", &home);
    let run = run_command(&mut cmd);
    run.expect_code(125);
    assert!(run.stderr.contains("is not JSON as the client reads it; fix it, then run again"), "{}", run.stderr);
    assert_eq!(read(&path), "{ // a comment Claude Code would not read\n}");
}

#[test]
fn hook_install_keeps_comments_and_the_byte_order_mark_too() {
    let (sb, home, project) = setup();
    let path = project.join(".gemini/settings.json");
    std::fs::create_dir_all(path.parent().expect("dir")).expect("create dir");
    let theirs = "\u{feff}{\n  // the theme\n  \"theme\": \"dark\",\n}\n";
    std::fs::write(&path, theirs).expect("write");
    let mut cmd = sb.command(["hook", "install", "--client", "gemini"]);
    cmd.current_dir(&project).env("HOME", &home);
    run_command(&mut cmd).expect_code(0);
    let merged = read(&path);
    assert!(merged.starts_with("\u{feff}{\n  // the theme\n  \"theme\": \"dark\","), "{merged}");
    assert!(merged.contains("\"command\": \"buildvise hook gemini\""), "{merged}");
    let mut cmd = sb.command(["hook", "install", "--client", "gemini", "--uninstall"]);
    cmd.current_dir(&project).env("HOME", &home);
    run_command(&mut cmd).expect_code(0);
    assert_eq!(read(&path), theirs);
}
