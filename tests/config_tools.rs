//! Tools defined in config files (`[tools."NAME"]` in a project's buildvise.toml or the user's
//! config.toml), end to end: the real binary runs what the file says, reads it through the
//! formats plugins export or the file's own patterns, lists it with where it comes from, and holds
//! it to every restriction the operator set.

mod common;

use common::mcp::connect;
use common::{Sandbox, codes, findings, run_id, runs, toolchains};
use serde_json::json;
use std::path::Path;

/// A project under the sandbox's work dir whose buildvise.toml holds `config`.
fn cwd(dir: &Path) -> &str {
    dir.to_str().expect("UTF-8 path")
}

/// A checker that prints two findings in its own format and fails, and the patterns that read
/// it; the call's args are appended to `run`, as `$1`.
const CHECKER: &str = r#"
[tools."ci.check"]
run = ["sh", "-c", "echo 'checking'; echo \"src/a.c:3: error: $1 is undefined\"; echo 'src/b.c:7: warning: unused b'; exit 2", "sh"]
description = "the project's own checker"
[[tools."ci.check".patterns]]
regex = '^(?P<file>[^:]+):(?P<line>\d+): (?P<severity>error|warning): (?P<message>.*)$'
"#;

/// `cargo check` read by the cargo plugin's `rustc` format.
const RUSTC_TOOL: &str =
    "[tools.\"rs.check\"]\nrun = [\"cargo\", \"check\", \"--color\", \"never\"]\nformats = [\"rustc\"]\n";

#[test]
fn a_tool_with_patterns_runs_its_argv_with_the_call_args_and_reads_its_findings() {
    let sb = Sandbox::new(&[toolchains()]);
    let dir = sb.project_with_config("checked", CHECKER);
    let exec = sb.run(["exec", "ci.check", "--cwd", cwd(&dir), "--json", "--", "width"]);
    exec.expect_code(2);
    let answer = exec.json();
    assert_eq!(
        findings(&answer),
        [
            ("error".into(), "src/a.c".into(), 3, "width is undefined".into()),
            ("warning".into(), "src/b.c".into(), 7, "unused b".into())
        ],
        "{exec}"
    );
    let page = sb.run(["log", &run_id(&answer), "--start", "1", "--count", "1"]);
    assert!(page.text().starts_with("lines 1-1 of 3\n1|checking\n"), "the raw log is kept and paged:{page}");

    let list = sb.command(["list"]).current_dir(&dir).output().expect("list");
    let text = String::from_utf8_lossy(&list.stdout);
    assert!(
        text.lines()
            .any(|l| l.starts_with("ci.check") && l.ends_with("the project's own checker [from buildvise.toml]")),
        "listed with where it comes from:\n{text}"
    );
    let elsewhere = sb.run(["list"]).text();
    assert!(!elsewhere.contains("ci.check"), "a project's tool is its own:\n{elsewhere}");
}

#[test]
fn a_tool_reads_its_output_through_a_format_a_plugin_exports() {
    let sb = Sandbox::new(&[toolchains()]);
    let dir = sb.cargo_fixture("broken");
    std::fs::write(dir.join("buildvise.toml"), RUSTC_TOOL).expect("write buildvise.toml");
    let exec = sb.run(["exec", "rs.check", "--cwd", cwd(&dir), "--json"]);
    exec.expect_code(101);
    let answer = exec.json();
    let mut found = codes(&answer);
    found.sort();
    assert_eq!(
        found,
        [("E0308".into(), 5), ("E0308".into(), 10), ("unused_imports".into(), 1)],
        "rustc's diagnostics, as cargo.build reads them:{exec}"
    );
}

#[test]
fn mistakes_in_a_tool_definition_name_the_file_and_the_key() {
    let sb = Sandbox::new(&[toolchains()]);
    let unknown = sb.project_with_config("unknown", "[tools.lint]\nrun = [\"true\"]\nformats = [\"eslnt\"]\n");
    let exec = sb.run(["exec", "lint", "--cwd", cwd(&unknown)]);
    exec.expect_code(125);
    assert!(
        exec.stderr
            .contains("buildvise.toml: `tools.\"lint\".formats`: no plugin exports a format `eslnt`; send one of: ")
            && exec.stderr.contains("rustc"),
        "{exec}"
    );
    let list = sb.command(["list"]).current_dir(&unknown).output().expect("list");
    let text = String::from_utf8_lossy(&list.stdout);
    assert!(text.contains("not usable: ") && text.contains("cargo.build"), "the rest is still listed:\n{text}");

    let clash = sb.project_with_config("clash", "[tools.\"cargo.build\"]\nrun = [\"true\"]\n");
    let exec = sb.run(["exec", "cargo.build", "--cwd", cwd(&clash)]);
    exec.expect_code(125);
    assert!(
        exec.stderr.contains("`tools.\"cargo.build\"` has the name of a tool of the plugin ")
            && exec.stderr.contains("buildvise_plugin_toolchains"),
        "names both:{exec}"
    );

    let regex =
        sb.project_with_config("regex", "[tools.x]\nrun = [\"true\"]\n[[tools.x.patterns]]\nregex = '(?P<message>'\n");
    let exec = sb.run(["exec", "x", "--cwd", cwd(&regex)]);
    exec.expect_code(125);
    assert!(exec.stderr.contains("buildvise.toml: `tools.\"x\".patterns[0]`: `regex` is not a valid"), "{exec}");
    assert!(runs(&sb).is_empty(), "nothing ran");
}

/// A mistake leaves out only what it concerns: the tool with a bad regex, a tool without
/// `message`, a key the project may not set. The plugins' tools and the file's good tool run, and
/// `list` names every problem with its file and key.
#[test]
fn a_mistake_leaves_out_only_what_it_concerns() {
    let sb = Sandbox::new(&[toolchains()]);
    let dir = sb.project_with_config(
        "partly",
        "allow_mutating = true\n[tools.good]\nrun = [\"echo\", \"fine\"]\n\
         [tools.bad]\nrun = [\"true\"]\n[[tools.bad.patterns]]\nregex = '(?P<message>'\n\
         [tools.bare]\nrun = [\"true\"]\n[[tools.bare.patterns]]\nregex = '^(.*)$'\n",
    );
    sb.run(["exec", "good", "--cwd", cwd(&dir)]).expect_code(0);
    let plugin = sb.run(["exec", "cargo.build", "--cwd", cwd(&dir), "--", "--version"]);
    assert!(!plugin.stderr.contains("buildvise.toml"), "a plugin tool paid for the file's mistakes:{plugin}");
    let bad = sb.run(["exec", "bad", "--cwd", cwd(&dir)]);
    bad.expect_code(125);
    assert!(bad.stderr.contains("`tools.\"bad\".patterns[0]`: `regex` is not a valid"), "{bad}");
    let list = sb.command(["list"]).current_dir(&dir).output().expect("list");
    let text = String::from_utf8_lossy(&list.stdout);
    for key in ["`allow_mutating`: only the operator", "`tools.\"bad\".patterns[0]`", "`tools.\"bare\".patterns[0]`"] {
        assert!(text.contains(&format!("buildvise.toml: {key}")), "{key} is not listed:\n{text}");
    }
    assert!(text.contains("good") && text.contains("cargo.build"), "the rest is still listed:\n{text}");
}

#[test]
fn a_projects_tools_obey_what_the_operator_set() {
    let sb = Sandbox::new(&[toolchains()]);
    sb.user_config("read_only = true\ndisable = [\"ci.*\"]\nmax_timeout_secs = 1\n");
    let dir = sb.project_with_config(
        "narrowed",
        &format!(
            "{CHECKER}\n[tools.\"fix.all\"]\nrun = [\"touch\", \"fixed\"]\nmutates = true\n\
             [tools.\"slow.one\"]\nrun = [\"sleep\", \"30\"]\ntimeout_secs = 100\n"
        ),
    );
    for tool in ["ci.check", "fix.all"] {
        let exec = sb.run(["exec", tool, "--confirm", "--cwd", cwd(&dir)]);
        exec.expect_code(125);
        assert!(exec.stderr.contains(&format!("unknown tool \"{tool}\"")), "disabled or read-only:{exec}");
    }
    assert!(!dir.join("fixed").exists());
    let slow = sb.run(["exec", "slow.one", "--cwd", cwd(&dir)]);
    slow.expect_code(124);
    assert!(slow.text().starts_with("TIMEOUT after 1s"), "the operator's cap holds:{slow}");
}

#[test]
fn a_mutating_tool_needs_consent() {
    let sb = Sandbox::new(&[toolchains()]);
    let dir = sb.project_with_config("mutating", "[tools.\"fix.all\"]\nrun = [\"touch\", \"fixed\"]\nmutates = true\n");
    let exec = sb.run(["exec", "fix.all", "--cwd", cwd(&dir)]);
    exec.expect_code(125);
    assert!(exec.stderr.contains("fix.all changes the workspace, so nothing ran; to run `touch fixed`"), "{exec}");
    assert!(!dir.join("fixed").exists());
    sb.run(["exec", "fix.all", "--confirm", "--cwd", cwd(&dir)]).expect_code(0);
    assert!(dir.join("fixed").exists());
}

#[tokio::test]
async fn over_mcp_a_projects_tools_are_listed_for_its_cwd_and_run_with_patterns_or_formats() {
    let sb = Sandbox::new(&[toolchains()]);
    let dir = sb.project_with_config("served", CHECKER);
    let session = connect(&sb, &[]).await;
    let (list, structured) = session.ok(json!({"action": "list", "cwd": cwd(&dir)})).await;
    assert!(list.contains("ci.check") && list.contains("[from buildvise.toml]"), "{list}");
    let listed = structured["tools"].as_array().expect("tools");
    let tool = listed.iter().find(|t| t["name"] == "ci.check").expect("ci.check listed");
    assert_eq!(tool["from"], "buildvise.toml", "{structured:#}");
    let (plain, _) = session.ok(json!({"action": "list"})).await;
    assert!(!plain.contains("ci.check"), "the server's own dir has no such tool:\n{plain}");

    let (answer, structured) =
        session.ok(json!({"action": "exec", "tool": "ci.check", "cwd": cwd(&dir), "args": ["depth"]})).await;
    assert!(answer.starts_with("FAIL exit 2 · run "), "{answer}");
    assert!(answer.contains("src/a.c:3 depth is undefined\n"), "{answer}");
    assert_eq!(structured["errors"], 1, "{structured:#}");

    let crate_dir = sb.cargo_fixture("broken");
    std::fs::write(crate_dir.join("buildvise.toml"), RUSTC_TOOL).expect("write buildvise.toml");
    let (answer, structured) = session.ok(json!({"action": "exec", "tool": "rs.check", "cwd": cwd(&crate_dir)})).await;
    assert!(answer.contains("src/lib.rs:5:22 E0308 mismatched types (expected `usize`, found `u32`)\n"), "{answer}");
    assert_eq!((structured["errors"].as_u64(), structured["warnings"].as_u64()), (Some(2), Some(1)), "{structured:#}");
    session.close().await;
}

/// A runner no parser knows floods its output with passing cases and hides seven mismatches
/// among them: the answer names the first lines beyond the tail it shows, and its grep finds the
/// rest.
#[test]
fn a_flood_that_no_parser_explains_points_at_the_lines_that_read_like_failures() {
    let sb = Sandbox::new(&[toolchains()]);
    let script = "i=0; while [ $i -lt 30000 ]; do i=$((i+1)); \
                  if [ $((i % 3000)) -eq 0 ] && [ $i -le 21000 ]; then echo \"case $i: expected 42, got 41\"; \
                  else echo \"case $i: ok\"; fi; done; echo 'cases: 0 errors, 7 failed'; exit 1";
    // Debug's escaping of a plain ASCII string is a valid TOML basic string.
    let dir = sb.project_with_config("flood", &format!("[tools.\"ci.cases\"]\nrun = [\"sh\", \"-c\", {script:?}]\n"));
    let exec = sb.run(["exec", "ci.cases", "--cwd", cwd(&dir)]);
    exec.expect_code(1);
    let text = exec.text();
    let flagged: Vec<&str> = text.lines().skip_while(|l| !l.starts_with("lines that read like")).take(7).collect();
    assert_eq!(
        flagged[..6],
        [
            "lines that read like failures (7):",
            "3000: case 3000: expected 42, got 41",
            "6000: case 6000: expected 42, got 41",
            "9000: case 9000: expected 42, got 41",
            "12000: case 12000: expected 42, got 41",
            "15000: case 15000: expected 42, got 41",
        ],
        "{exec}"
    );
    assert!(text.contains("last 20 of 30001 lines:\n"), "the tail still follows:{exec}");
    let grep =
        flagged[6].split_once(" --grep ").map(|(_, re)| re.trim_matches('\'')).unwrap_or_else(|| panic!("{exec}"));
    assert!(flagged[6].starts_with("+2 more: buildvise log "), "{exec}");

    let id = text.split_once("· run ").map(|(_, rest)| rest.lines().next().unwrap_or_default()).expect("run id");
    let rest = sb.run(["log", id.trim(), "--grep", grep]);
    for n in [18000, 21000] {
        assert!(rest.text().contains(&format!("{n}|case {n}: expected 42")), "the grep finds the rest:{rest}");
    }
}
