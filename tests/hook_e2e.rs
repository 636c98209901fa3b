//! End to end for the client hook: `buildvise hook shell` gets a command line an agent typed,
//! and the line it prints runs under bash in a fixture project with real cargo: the answer is
//! buildvise's, the exit code the command's own. Lines it must not touch come back as they were.

mod common;

use common::{Sandbox, toolchains};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// What `hook shell` prints for `line` typed in `dir`.
fn hooked(sb: &Sandbox, line: &str, dir: &Path) -> String {
    hooked_with(sb, line, dir, |_| {})
}

/// [`hooked`], with `setup` applied to the command first.
fn hooked_with(sb: &Sandbox, line: &str, dir: &Path, setup: impl FnOnce(&mut Command)) -> String {
    let mut cmd = sb.command(["hook", "shell", "--cwd", dir.to_str().expect("UTF-8 path")]);
    setup(&mut cmd);
    let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("buildvise runs");
    child.stdin.take().expect("stdin").write_all(format!("{line}\n").as_bytes()).expect("write the line");
    let out = child.wait_with_output().expect("buildvise ends");
    assert_eq!(out.status.code(), Some(0), "a hook always exits 0");
    String::from_utf8(out.stdout).expect("UTF-8").trim_end_matches('\n').to_string()
}

/// Runs `line` with bash in `dir`, in the sandbox's world (the plugins through the environment,
/// as an installed hook finds them from the user's config).
fn bash(sb: &Sandbox, line: &str, dir: &Path) -> (Option<i32>, String) {
    let out = bash_command(sb, line, dir).env("BUILDVISE_PLUGIN_PATH", toolchains()).output().expect("bash runs");
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned())
}

/// bash running `line` in `dir` with the sandbox's environment, for the caller to add to.
fn bash_command(sb: &Sandbox, line: &str, dir: &Path) -> Command {
    let probe = sb.command(["--version"]);
    let mut cmd = Command::new("bash");
    for (key, value) in probe.get_envs() {
        match value {
            Some(value) => cmd.env(key, value),
            None => cmd.env_remove(key),
        };
    }
    cmd.args(["-c", line]).current_dir(dir);
    cmd
}

#[test]
fn a_cargo_test_line_runs_through_buildvise_with_the_tests_exit_code() {
    let sb = Sandbox::new(&[toolchains()]);
    let dir = sb.cargo_fixture("tests");
    let line = hooked(&sb, "RUST_BACKTRACE=0 cargo test 2>&1 | tail -15", &dir);
    let exe = env!("CARGO_BIN_EXE_buildvise");
    assert_eq!(line, format!("RUST_BACKTRACE=0 {exe} exec cargo.test --sandbox off --max-lines 15"));
    let (code, answer) = bash(&sb, &line, &dir);
    // The fixture's two failing tests fail `cargo test` with 101, and buildvise says which.
    assert_eq!(code, Some(101), "{answer}");
    assert!(answer.starts_with("FAIL"), "{answer}");
    assert!(answer.contains("2 failed"), "{answer}");
}

/// The typed command ran as the agent's harness confines it; a rewrite keeps that, and adds
/// buildvise's sandbox only where the operator asked for one (read again when the line runs).
#[test]
fn a_rewrite_is_confined_only_by_the_sandbox_the_operator_asked_for() {
    let sb = Sandbox::new(&[toolchains()]);
    let dir = sb.cargo_fixture("tests");
    let exe = env!("CARGO_BIN_EXE_buildvise");
    assert_eq!(hooked(&sb, "cargo build", &dir), format!("{exe} exec cargo.build --sandbox off"));
    sb.user_config("sandbox = \"read-only\"\n");
    assert_eq!(hooked(&sb, "cargo build", &dir), format!("{exe} exec cargo.build"));
}

#[test]
fn each_command_of_a_chain_that_a_tool_runs_is_rewritten_and_the_rest_kept() {
    let sb = Sandbox::new(&[toolchains()]);
    let dir = sb.cargo_fixture("tests");
    let exe = env!("CARGO_BIN_EXE_buildvise");
    let work = dir.parent().expect("the work dir");
    let line = hooked(&sb, "cd tests && cargo build --quiet; echo built", work);
    assert_eq!(line, format!("cd tests && {exe} exec cargo.build --sandbox off -- --quiet; echo built"));
    let (code, answer) = bash(&sb, &line, work);
    assert_eq!(code, Some(0), "{answer}");
    assert!(answer.starts_with("ok"), "{answer}");
    assert!(answer.ends_with("built\n"), "{answer}");
}

#[test]
fn lines_it_cannot_run_as_typed_come_back_unchanged() {
    let sb = Sandbox::new(&[toolchains()]);
    let dir = sb.cargo_fixture("tests");
    for line in [
        // Nothing a tool stands for.
        "ls -la",
        "git status && git diff",
        // Read differently by a shell than by its words.
        "cargo test | grep FAILED",
        "cargo test > out.txt",
        "cargo test $FLAGS",
        // `tail -n +5` prints from the fifth line on: no line budget says that.
        "cargo test 2>&1 | tail -n +5",
        // A directory change the hook cannot follow: the next command would be checked where it
        // does not run.
        "pushd src && cargo test",
        "cd -P src && cargo test",
        // Turned off by the agent.
        "BUILDVISE_HOOK=0 cargo test",
        // A call buildvise would refuse: cargo fmt rewrites sources without consent.
        "cargo fmt",
        // A trim on a command no tool runs keeps its pipe.
        "cargo test && echo done | tail -3",
        // Not a command line at all.
        "",
        "\u{0}\u{1}",
    ] {
        assert_eq!(hooked(&sb, line, &dir), line, "{line:?}");
    }
}

#[test]
fn a_broken_setup_leaves_the_line_unchanged() {
    let sb = Sandbox::new(&[toolchains()]);
    let dir = sb.cargo_fixture("tests");
    sb.user_config("this is not toml = = =");
    assert_eq!(hooked(&sb, "cargo test", &dir), "cargo test");
}

#[test]
fn each_plugin_takes_the_commands_it_declares() {
    let sb = Sandbox::new(&[common::toolchains()]);
    let root = common::root();
    let exe = env!("CARGO_BIN_EXE_buildvise");
    let npm = root.join("tests/fixtures/npm/tools");
    let pytest = root.join("tests/fixtures/pytest/failures");
    let dotnet = root.join("tests/fixtures/dotnet/tests");
    for (dir, line, tool_and_args) in [
        (&npm, "npm test -- --ci", "npm.test -- --pm=npm -- --ci"),
        (&npm, "npm run build", "npm.build -- --pm=npm"),
        (&npm, "npm run lint", "npm.run -- --pm=npm lint"),
        (&pytest, "python -m pytest -x -q", "pytest.run -- -x -q"),
        (&pytest, "pytest", "pytest.run"),
        (&dotnet, "dotnet test --no-build", "dotnet.test -- --no-build"),
        (&dotnet, "dotnet build", "dotnet.build"),
    ] {
        assert_eq!(hooked(&sb, line, dir), format!("{exe} exec {}", common::unconfined(tool_and_args)), "{line}");
    }
    for (dir, line) in [
        // A script package.json does not have: npm.run's plan refuses it, so the line stays.
        (&npm, "npm run nonesuch"),
        // npm ci changes node_modules: the operator has not allowed mutating tools.
        (&npm, "npm ci"),
        (&npm, "npx jest"),
    ] {
        assert_eq!(hooked(&sb, line, dir), line, "{line}");
    }
}

/// A line names its manager, and runs through buildvise only in a project that manager runs: the
/// rewrite never swaps pnpm for npm or the other way round.
#[test]
fn a_managers_line_is_rewritten_only_where_that_manager_runs_the_project() {
    let plugins = [common::toolchains()];
    let sb = Sandbox::new(&plugins);
    let exe = env!("CARGO_BIN_EXE_buildvise");
    let project = sb.work().join("project");
    common::copy_tree(&common::root().join("tests/fixtures/hook/project"), &project);
    std::fs::remove_file(project.join("package-lock.json")).expect("no npm lockfile");
    std::fs::write(project.join("pnpm-lock.yaml"), "lockfileVersion: '9.0'\n").expect("pnpm's lockfile");
    for (line, tool_and_args) in [
        ("pnpm test", "npm.test -- --pm=pnpm"),
        ("pnpm run lint --fix", "npm.run -- --pm=pnpm lint --fix"),
        ("pnpm run build 2>&1 | tail -5", "npm.build --max-lines 5 -- --pm=pnpm"),
    ] {
        assert_eq!(hooked(&sb, line, &project), format!("{exe} exec {}", common::unconfined(tool_and_args)), "{line}");
    }
    for line in [
        // Other managers than the project's.
        "npm test",
        "npm run build",
        "yarn test",
        "bun run lint",
        // `pnpm test` reads this option as its own; buildvise would pass it to the script.
        "pnpm test --reporter=silent",
        // Not the test script but bun's own test runner.
        "bun test",
        // A built-in command could win over a script of the same name.
        "pnpm lint",
    ] {
        assert_eq!(hooked(&sb, line, &project), line, "{line}");
    }
    std::fs::remove_file(project.join("pnpm-lock.yaml")).expect("no lockfile");
    std::fs::write(project.join("yarn.lock"), "__metadata:\n  version: 8\n").expect("berry's lockfile");
    assert_eq!(hooked(&sb, "yarn test", &project), format!("{exe} exec npm.test --sandbox off -- --pm=yarn"));
    assert_eq!(hooked(&sb, "pnpm test", &project), "pnpm test");
}

/// Claude Code's `PreToolUse` payload for its Bash tool, as its hooks reference documents it.
fn claude_payload(command: &str, cwd: &Path, mode: &str) -> String {
    serde_json::json!({
        "session_id": "e2e",
        "transcript_path": cwd.join("transcript.jsonl"),
        "cwd": cwd,
        "permission_mode": mode,
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "Run the tests"},
        "tool_use_id": "toolu_e2e",
    })
    .to_string()
}

/// What `hook claude` prints for `payload`, with `home` as the user's home.
fn claude(sb: &Sandbox, payload: &str, home: &Path, project: &Path) -> String {
    let mut cmd = sb.command(["hook", "claude"]);
    cmd.env("HOME", home).env("CLAUDE_PROJECT_DIR", project);
    let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("buildvise runs");
    child.stdin.take().expect("stdin").write_all(payload.as_bytes()).expect("write the payload");
    let out = child.wait_with_output().expect("buildvise ends");
    assert_eq!(out.status.code(), Some(0), "a hook always exits 0");
    String::from_utf8(out.stdout).expect("UTF-8")
}

#[test]
fn claude_code_gets_the_rewrite_only_for_what_its_user_already_allows() {
    let sb = Sandbox::new(&[toolchains()]);
    let dir = sb.cargo_fixture("tests");
    let home = sb.work().join("home");
    std::fs::create_dir_all(dir.join(".claude")).expect("settings dir");
    std::fs::create_dir_all(&home).expect("home");
    // What "don't ask again" leaves after the user approved `cargo test` once.
    let settings = r#"{"permissions": {"allow": ["Bash(cargo test:*)"]}}"#;
    std::fs::write(dir.join(".claude/settings.local.json"), settings).expect("write settings");

    let answer = claude(&sb, &claude_payload("cargo test 2>&1 | tail -20", &dir, "default"), &home, &dir);
    let answer: serde_json::Value = serde_json::from_str(&answer).expect("a JSON answer");
    let out = &answer["hookSpecificOutput"];
    assert_eq!(out["hookEventName"], "PreToolUse");
    assert_eq!(out["permissionDecision"], "allow");
    assert_eq!(out["updatedInput"]["description"], "Run the tests", "the rest of the input is kept");
    let command = out["updatedInput"]["command"].as_str().expect("the command");
    let (code, text) = bash(&sb, command, &dir);
    assert_eq!(code, Some(101), "{text}");
    assert!(text.starts_with("FAIL") && text.contains("2 failed"), "{text}");

    // A command the user has not allowed, and one no tool runs: Claude Code's own flow.
    for command in ["cargo build", "ls -la"] {
        assert_eq!(claude(&sb, &claude_payload(command, &dir, "default"), &home, &dir), "", "{command}");
    }
    // A session that bypasses permissions gets the rewrite without an allow rule.
    let bypass = claude(&sb, &claude_payload("cargo build", &dir, "bypassPermissions"), &home, &dir);
    assert!(bypass.contains("exec cargo.build"), "{bypass}");
    // Not a payload at all.
    assert_eq!(claude(&sb, "{", &home, &dir), "");
}

/// The command lines of `tests/fixtures/hook/lines.tsv`, each as its source shows it, through
/// every plugin in a project that has a crate, a package.json and a pytest config.
#[test]
fn real_agent_command_lines_become_what_the_table_says() {
    let sb = Sandbox::new(&[common::toolchains()]);
    let fixtures = common::root().join("tests/fixtures/hook");
    let project = sb.work().join("project");
    common::copy_tree(&fixtures.join("project"), &project);
    let table = std::fs::read_to_string(fixtures.join("lines.tsv")).expect("read lines.tsv");
    // `bin/` holds a stand-in ruff, so that `ruff check` reads the same whether or not this
    // machine has one: the hook asks only whether it is on PATH.
    let path = std::env::join_paths(
        std::iter::once(fixtures.join("bin"))
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .expect("PATH");
    let mut wrong = Vec::new();
    let mut count = 0;
    for row in table.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let [source, expected, line] = row.splitn(3, '\t').collect::<Vec<_>>()[..] else {
            panic!("a row is source, expected and line, tab-separated: {row:?}");
        };
        count += 1;
        let printed = hooked_with(&sb, line, &project, |cmd| {
            cmd.env("PATH", &path);
        });
        let tools = if printed == line {
            "-".to_string()
        } else {
            let words: Vec<&str> = printed.split(' ').collect();
            let after_exec = words.windows(2).filter(|w| w[0] == "exec").map(|w| w[1]);
            after_exec.collect::<Vec<_>>().join(",")
        };
        if tools != expected {
            wrong.push(format!("{line:?} ({source}): expected {expected}, got {tools}: {printed}"));
        }
    }
    assert!(count >= 157, "the table has {count} rows");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_tool_a_project_defines_takes_its_own_command() {
    let sb = Sandbox::new(&[toolchains()]);
    let config = "[tools.\"web.lint\"]\nrun = [\"eslint\", \"src\"]\nformats = []\npatterns = [{ regex = '^(?P<file>\\S+):(?P<line>\\d+) (?P<message>.+)$', severity = \"error\" }]\n\n[tools.\"web.check\"]\nrun = [\"./scripts/check.sh\"]\npatterns = [{ regex = '^(?P<message>x)$', severity = \"error\" }]\n";
    let dir = sb.project_with_config("web", config);
    let exe = env!("CARGO_BIN_EXE_buildvise");
    assert_eq!(
        hooked(&sb, "eslint src --max-warnings 0", &dir),
        format!("{exe} exec web.lint --sandbox off -- --max-warnings 0")
    );
    // A program named by a path is found beside the config file, not where the line runs.
    assert_eq!(hooked(&sb, "./scripts/check.sh", &dir), "./scripts/check.sh");
}

/// `uv run pytest` runs through buildvise as uv runs it (the environment synced with the
/// project's lockfile first), answering with pytest's exit code: uv from the Python registry,
/// pytest from it too, through uv, on a fixture project.
#[test]
fn a_uv_run_pytest_line_runs_through_buildvise_as_uv_runs_it() {
    let Some(uv_venv) = common::python_venv("uv-venv", "uv==0.13.9") else {
        common::skip("python3 not found; the uv hook test needs it to install uv");
        return;
    };
    let sb = Sandbox::new(&[common::toolchains()]);
    let dir = sb.work().join("uv_project");
    common::copy_tree(&common::root().join("tests/fixtures/pytest/uv_project"), &dir);
    let path = format!("{}:{}", uv_venv.join("bin").display(), std::env::var("PATH").unwrap_or_default());
    let cache = common::root().join("target/test-env/uv-cache");
    let line = hooked_with(&sb, "uv run pytest -q 2>&1 | tail -20", &dir, |cmd| {
        cmd.env("PATH", &path);
    });
    let exe = env!("CARGO_BIN_EXE_buildvise");
    assert_eq!(line, format!("{exe} exec pytest.run --sandbox off --max-lines 20 -- --via=uv -q"));
    let out = bash_command(&sb, &line, &dir)
        .env("PATH", &path)
        .env("UV_CACHE_DIR", cache)
        .env("BUILDVISE_PLUGIN_PATH", common::toolchains())
        .output()
        .expect("bash runs");
    let answer = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{answer}{}", String::from_utf8_lossy(&out.stderr));
    assert!(answer.starts_with("FAIL exit 1"), "{answer}");
    assert!(answer.contains("test_total_applies_the_discount"), "{answer}");
    assert!(dir.join("uv.lock").is_file(), "uv did not sync the project first");
}
