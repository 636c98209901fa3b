//! End to end for the hooks of Codex CLI, Gemini CLI, Cursor, GitHub Copilot CLI and OpenCode:
//! each client's documented payload (`tests/fixtures/hook/payloads/`, sources in its README) goes
//! to the real `buildvise hook CLIENT`, and the command of its answer runs with bash in a fixture
//! crate with real cargo: buildvise's answer, the tests' own exit code. An unmapped command, a
//! command the user's rules do not let through, and input that is no payload change nothing.
//! `hook install --client` merges into a settings file that holds another hook, twice, and
//! takes only its own out.

mod common;

use common::{Sandbox, toolchains, which};
use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A payload of `tests/fixtures/hook/payloads/`.
fn fixture(name: &str) -> Value {
    let path = common::root().join("tests/fixtures/hook/payloads").join(name);
    serde_json::from_str(&std::fs::read_to_string(&path).expect("read the payload")).expect("a JSON payload")
}

/// `client`'s documented payload for `command` typed in `dir`.
fn payload(client: &str, command: &str, dir: &Path) -> String {
    let mut payload = fixture(&format!("{client}.json"));
    match client {
        "copilot" => {
            let mut args: Value = serde_json::from_str(payload["toolArgs"].as_str().expect("toolArgs")).expect("args");
            args["command"] = json!(command);
            payload["toolArgs"] = json!(args.to_string());
            payload["cwd"] = json!(dir);
        }
        "cursor" => {
            payload["tool_input"]["command"] = json!(command);
            payload["workspace_roots"] = json!([dir]);
        }
        _ => {
            payload["tool_input"]["command"] = json!(command);
            payload["cwd"] = json!(dir);
        }
    }
    payload.to_string()
}

/// What `hook CLIENT` prints for `input`, with `home` as the user's home.
fn hook(sb: &Sandbox, client: &str, input: &str, home: &Path) -> String {
    let mut cmd = sb.command(["hook", client]);
    cmd.env("HOME", home).env_remove("CODEX_HOME");
    let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("buildvise runs");
    child.stdin.take().expect("stdin").write_all(input.as_bytes()).expect("write the payload");
    let out = child.wait_with_output().expect("buildvise ends");
    assert_eq!(out.status.code(), Some(0), "a hook always exits 0");
    String::from_utf8(out.stdout).expect("UTF-8").trim_end().to_string()
}

/// The sandbox's environment, as an installed hook's children see it (plugins through the
/// environment, as the user's config would name them).
fn sandbox_env(sb: &Sandbox, cmd: &mut Command) {
    for (key, value) in sb.command(["--version"]).get_envs() {
        match value {
            Some(value) => cmd.env(key, value),
            None => cmd.env_remove(key),
        };
    }
    cmd.env("BUILDVISE_PLUGIN_PATH", toolchains());
}

/// Runs `line` with bash in `dir`: its exit code and what it printed.
fn bash(sb: &Sandbox, line: &str, dir: &Path) -> (Option<i32>, String) {
    let mut cmd = Command::new("bash");
    sandbox_env(sb, &mut cmd);
    let out = cmd.args(["-c", line]).current_dir(dir).output().expect("bash runs");
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The fixture crate's two failing tests fail `cargo test` with 101, and buildvise says which.
fn assert_buildvise_ran_the_tests(sb: &Sandbox, command: &str, dir: &Path) {
    let exe = env!("CARGO_BIN_EXE_buildvise");
    assert_eq!(command, format!("{exe} exec cargo.test --sandbox off --max-lines 20"));
    let (code, answer) = bash(sb, command, dir);
    assert_eq!(code, Some(101), "{answer}");
    assert!(answer.starts_with("FAIL") && answer.contains("2 failed"), "{answer}");
}

/// A sandbox with the fixture crate, and an empty home for the user's settings.
fn setup() -> (Sandbox, PathBuf, PathBuf) {
    let sb = Sandbox::new(&[toolchains()]);
    let dir = sb.cargo_fixture("tests");
    let home = sb.work().join("home");
    std::fs::create_dir_all(&home).expect("home");
    (sb, dir, home)
}

const TYPED: &str = "cargo test 2>&1 | tail -20";

/// Whatever the client, input that is no payload of its, and a command no tool runs, change
/// nothing: `none` is the client's "no change".
fn assert_no_change_for_the_rest(sb: &Sandbox, client: &str, dir: &Path, home: &Path, none: &str) {
    for input in ["{", "", "\u{0}", &payload(client, "ls -la", dir)] {
        assert_eq!(hook(sb, client, input, home), none, "{client}: {input:?}");
    }
}

#[test]
fn codex_gets_the_rewrite_for_what_it_runs_without_asking() {
    let (sb, dir, home) = setup();
    assert_no_change_for_the_rest(&sb, "codex", &dir, &home, "");
    // Nothing in the user's rules: Codex's own approval flow, untouched.
    assert_eq!(hook(&sb, "codex", &payload("codex", TYPED, &dir), &home), "");
    // What "don't ask again" writes to the user's rules.
    std::fs::create_dir_all(home.join(".codex/rules")).expect("rules dir");
    let rules = "prefix_rule(pattern=[\"cargo\", \"test\"], decision=\"allow\")\n";
    std::fs::write(home.join(".codex/rules/default.rules"), rules).expect("write rules");
    let answer: Value = serde_json::from_str(&hook(&sb, "codex", &payload("codex", TYPED, &dir), &home)).expect("JSON");
    let out = &answer["hookSpecificOutput"];
    assert_eq!((&out["hookEventName"], &out["permissionDecision"]), (&json!("PreToolUse"), &json!("allow")));
    assert_buildvise_ran_the_tests(&sb, out["updatedInput"]["command"].as_str().expect("command"), &dir);
    assert_eq!(hook(&sb, "codex", &payload("codex", "cargo build", &dir), &home), "", "not allowed");
    // A session whose approval policy is never runs everything without asking anyway.
    let mut never: Value = serde_json::from_str(&payload("codex", "cargo build", &dir)).expect("payload");
    never["permission_mode"] = json!("bypassPermissions");
    assert!(hook(&sb, "codex", &never.to_string(), &home).contains("exec cargo.build"));
}

#[test]
fn gemini_gets_the_rewrite_as_a_tool_input_override() {
    let (sb, dir, home) = setup();
    assert_no_change_for_the_rest(&sb, "gemini", &dir, &home, "");
    let answer: Value =
        serde_json::from_str(&hook(&sb, "gemini", &payload("gemini", TYPED, &dir), &home)).expect("JSON");
    let out = &answer["hookSpecificOutput"];
    assert_eq!(out["hookEventName"], "BeforeTool");
    assert!(answer.get("decision").is_none(), "the answer approves nothing");
    assert_buildvise_ran_the_tests(&sb, out["tool_input"]["command"].as_str().expect("command"), &dir);
}

#[test]
fn cursor_gets_the_rewrite_for_what_its_allowlist_runs() {
    let (sb, dir, home) = setup();
    assert_no_change_for_the_rest(&sb, "cursor", &dir, &home, "{}");
    assert_eq!(hook(&sb, "cursor", &payload("cursor", TYPED, &dir), &home), "{}", "nothing allowed yet");
    std::fs::create_dir_all(home.join(".cursor")).expect("cursor dir");
    std::fs::write(
        home.join(".cursor/permissions.json"),
        "{\n  // ours\n  \"terminalAllowlist\": [\"cargo test\"]\n}\n",
    )
    .expect("write permissions.json");
    let answer: Value =
        serde_json::from_str(&hook(&sb, "cursor", &payload("cursor", TYPED, &dir), &home)).expect("JSON");
    assert_eq!(answer["permission"], "allow");
    assert_buildvise_ran_the_tests(&sb, answer["updated_input"]["command"].as_str().expect("command"), &dir);
    assert_eq!(hook(&sb, "cursor", &payload("cursor", "cargo build", &dir), &home), "{}", "not allowed");
}

#[test]
fn copilot_gets_the_rewrite_as_modified_args() {
    let (sb, dir, home) = setup();
    assert_no_change_for_the_rest(&sb, "copilot", &dir, &home, "");
    let answer: Value =
        serde_json::from_str(&hook(&sb, "copilot", &payload("copilot", TYPED, &dir), &home)).expect("JSON");
    assert!(answer.get("permissionDecision").is_none(), "the answer approves nothing");
    assert_eq!(answer["modifiedArgs"]["description"], "Run the tests", "the other arguments are kept");
    assert_buildvise_ran_the_tests(&sb, answer["modifiedArgs"]["command"].as_str().expect("command"), &dir);
}

/// `hook install --client CLIENT` with `args`, in `project`.
fn install(sb: &Sandbox, client: &str, project: &Path, args: &[&str]) -> String {
    let mut cmd = sb.command(["hook", "install", "--client", client]);
    let out = cmd.args(args).current_dir(project).output().expect("buildvise runs");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8")
}

#[test]
fn install_merges_beside_another_hook_once_and_takes_out_only_its_own() {
    let sb = Sandbox::new(&[toolchains()]);
    let project = sb.work().join("project");
    for (client, file, theirs) in [
        (
            "codex",
            ".codex/hooks.json",
            json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}]}}),
        ),
        (
            "gemini",
            ".gemini/settings.json",
            json!({"theme": "dark", "hooks": {"BeforeTool": [{"matcher": "write_file", "hooks": [{"type": "command", "command": "lint.sh"}]}]}}),
        ),
        (
            "cursor",
            ".cursor/hooks.json",
            json!({"version": 1, "hooks": {"afterFileEdit": [{"command": "fmt.sh"}], "preToolUse": [{"command": "audit.sh", "matcher": "Shell"}]}}),
        ),
        (
            "copilot",
            ".github/hooks/buildvise.json",
            json!({"version": 1, "hooks": {"sessionStart": [{"type": "command", "bash": "hello.sh"}]}}),
        ),
    ] {
        let path = project.join(file);
        std::fs::create_dir_all(path.parent().expect("dir")).expect("settings dir");
        std::fs::write(&path, serde_json::to_string_pretty(&theirs).expect("JSON")).expect("write settings");
        assert!(install(&sb, client, &project, &[]).starts_with("wrote"), "{client}");
        assert!(install(&sb, client, &project, &[]).starts_with("already set up"), "{client}: a second run");
        let text = std::fs::read_to_string(&path).expect("read settings");
        assert!(text.contains(&format!("\"buildvise hook {client}\"")), "{client}: {text}");
        assert!(!text.contains(&*project.to_string_lossy()), "{client}: no path of this machine");
        let doc: Value = serde_json::from_str(&text).expect("JSON");
        for key in theirs.as_object().expect("object").keys() {
            assert!(doc.get(key).is_some(), "{client}: {key} kept");
        }
        assert!(install(&sb, client, &project, &["--uninstall"]).starts_with("took the hook out"), "{client}");
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("read settings")).expect("JSON");
        assert_eq!(doc, theirs, "{client}: only its own entry taken out");
    }
}

#[test]
fn opencode_runs_the_rewrite_through_its_plugin() {
    let Some(node) = which("node") else {
        common::skip("node is not on PATH, and OpenCode's plugin is JavaScript");
        return;
    };
    let (sb, dir, _home) = setup();
    assert!(install(&sb, "opencode", &dir, &[]).starts_with("wrote"));
    assert!(install(&sb, "opencode", &dir, &[]).starts_with("already set up"));
    let plugin = dir.join(".opencode/plugins/buildvise.js");
    // Node reads `import` in a .mjs file; OpenCode (Bun) reads the .js as it is.
    let module = sb.work().join("buildvise.mjs");
    std::fs::copy(&plugin, &module).expect("copy the plugin");
    let call = fixture("opencode.json");
    let run = |command: &str| -> String {
        let mut call = call.clone();
        call["output"]["args"]["command"] = json!(command);
        let script = format!(
            "const {{ BuildvisePlugin }} = await import({module});\n\
             const hooks = await BuildvisePlugin({{ directory: {dir} }});\n\
             const {{ input, output }} = {call};\n\
             await hooks[\"tool.execute.before\"](input, output);\n\
             process.stdout.write(JSON.stringify(output));\n",
            module = json!(format!("file://{}", module.display())),
            dir = json!(dir),
        );
        let mut cmd = Command::new(&node);
        sandbox_env(&sb, &mut cmd);
        // The project's plugin names `buildvise`, which PATH finds: this build of it.
        let exe_dir = Path::new(env!("CARGO_BIN_EXE_buildvise")).parent().expect("bin dir").to_path_buf();
        let path = std::env::join_paths(
            std::iter::once(exe_dir).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
        )
        .expect("PATH");
        let out = cmd
            .env("PATH", path)
            .args(["--input-type=module", "-e", &script])
            .current_dir(sb.work())
            .output()
            .expect("node runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let output: Value = serde_json::from_slice(&out.stdout).expect("the output object");
        assert_eq!(output["args"]["description"], "Run the tests", "the other arguments are kept");
        output["args"]["command"].as_str().expect("command").to_string()
    };
    assert_buildvise_ran_the_tests(&sb, &run(TYPED), &dir);
    assert_eq!(run("ls -la"), "ls -la");
    assert!(install(&sb, "opencode", &dir, &["--uninstall"]).starts_with("took the hook out"));
    assert!(!plugin.exists());
}
