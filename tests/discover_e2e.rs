//! End to end for `buildvise discover`: transcripts of Claude Code and Codex, written from public
//! examples (tests/fixtures/discover/SOURCES.md), in a sandbox home where the clients keep them.
//! The real binary reads them and says which commands buildvise would have run and the tokens
//! their output took; the test counts those tokens itself, with tiktoken-rs, from the fixtures.

mod common;

use common::{Sandbox, copy_tree, root, toolchains};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where the fixtures were put: the home, and the project `@PROJECT@` stands for.
struct Homes {
    home: PathBuf,
    project: PathBuf,
}

/// The fixtures under `claude` and `codex` (the clients' folders), with `@PROJECT@` a copy of
/// the hook's fixture project.
fn provision(sb: &Sandbox, claude: &Path, codex: &Path) -> PathBuf {
    let project = sb.work().join("project");
    copy_tree(&root().join("tests/fixtures/hook/project"), &project);
    let fixtures = root().join("tests/fixtures/discover");
    copy_replacing(&fixtures.join("claude"), claude, &project);
    copy_replacing(&fixtures.join("codex"), codex, &project);
    project
}

fn copy_replacing(from: &Path, to: &Path, project: &Path) {
    std::fs::create_dir_all(to).expect("create dir");
    for entry in std::fs::read_dir(from).expect("read fixtures") {
        let entry = entry.expect("entry");
        let dest = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_replacing(&entry.path(), &dest, project);
        } else {
            let text = std::fs::read_to_string(entry.path()).expect("read fixture");
            let project = project.to_str().expect("UTF-8 path");
            std::fs::write(dest, text.replace("@PROJECT@", project)).expect("write fixture");
        }
    }
}

/// The sandbox's home with both clients' transcripts where they keep them by default.
fn default_homes(sb: &Sandbox) -> Homes {
    let home = sb.work().join("home");
    let project = provision(sb, &home.join(".claude"), &home.join(".codex"));
    Homes { home, project }
}

fn discover(sb: &Sandbox, homes: &Homes, args: &[&str]) -> common::Run {
    let mut cmd = sb.command(["discover"].iter().chain(args));
    cmd.env("HOME", &homes.home).env_remove("CLAUDE_CONFIG_DIR").env_remove("CODEX_HOME");
    common::run_command(&mut cmd)
}

/// Each tool result of the fixtures, by the id of its call, as the agent read it: a string, or
/// its text blocks a line each.
fn outputs(homes: &Homes) -> BTreeMap<String, String> {
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    };
    let mut found = BTreeMap::new();
    let mut files = vec![homes.home.clone()];
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(std::fs::read_dir(&path).expect("read dir").map(|e| e.expect("entry").path()));
            continue;
        }
        for line in std::fs::read_to_string(&path).expect("read transcript").lines() {
            let Ok(record) = serde_json::from_str::<Value>(line) else { continue };
            for block in record.pointer("/message/content").and_then(Value::as_array).into_iter().flatten() {
                if let Some(id) = block["tool_use_id"].as_str() {
                    found.insert(id.to_string(), text(&block["content"]));
                }
            }
            let item = if record["type"] == "response_item" { &record["payload"] } else { &record };
            if item["type"] == "function_call_output" {
                found.insert(item["call_id"].as_str().expect("call_id").to_string(), text(&item["output"]));
            }
        }
    }
    found
}

/// The o200k tokens of the outputs of the calls `ids`, counted here.
fn tokens(outputs: &BTreeMap<String, String>, ids: &[&str]) -> u64 {
    let bpe = tiktoken_rs::o200k_base().expect("the o200k vocabulary loads");
    ids.iter()
        .map(|id| bpe.encode_ordinary(outputs.get(*id).unwrap_or_else(|| panic!("no output for {id}"))).len() as u64)
        .sum()
}

/// A list of the answer as (command, count, output tokens), by command.
fn rows(list: &Value) -> Vec<(String, u64, u64)> {
    let mut rows: Vec<_> = list
        .as_array()
        .expect("a list")
        .iter()
        .map(|r| {
            (
                r["command"].as_str().expect("command").to_string(),
                r["count"].as_u64().unwrap(),
                r["outputTokens"].as_u64().unwrap(),
            )
        })
        .collect();
    rows.sort();
    rows
}

const CARGO_TEST: &str = "toolu_01VZtjzGhGTKDSm7rCWRU3Tq";
const CARGO_BUILD: &str = "toolu_01Ppq8ZsD1kV3eGh7Ju5Xy2A";
const GIT_STATUS: &str = "toolu_01Hk2QmXw8s4nYpR5tLbCe9J";
const MCP: &str = "toolu_01Mcp4Lr8uVt2Qz6Ws1Xb3Nd";
const BUILDVISE_EXEC: &str = "toolu_01Bv6Nd2Kc9Ys4Tq8Hm1Lp7E";
const GONE_CARGO_CHECK: &str = "tool_002";
const GONE_LS: &str = "tool_003";
const CODEX_CARGO_TEST: &str = "call_oOWSsoiERNccts8M61EX61l6";
const CODEX_GIT_LOG: &str = "call_9c2TzQ1mJ4fVb7Lx0Rk3Wq8N";
const GONE_CODEX_CLIPPY: &str = "call_Qe5pW2nZr8Hk1Dt4Ys7Lc0Vb";
const LEGACY_GIT_STATUS: &str = "call_abc";

#[test]
fn the_commands_buildvise_would_have_run_are_counted_with_their_output_tokens() {
    let sb = Sandbox::new(&[toolchains()]);
    let homes = default_homes(&sb);
    let out = outputs(&homes);
    let answer = discover(&sb, &homes, &["--json"]).expect_code(0).json();
    assert_eq!(answer["transcripts"], serde_json::json!({"claude": 2, "codex": 2}), "{answer:#}");
    assert_eq!(answer["commands"], 11, "{answer:#}");
    // The project's cargo commands by the hook's own decision; those of checkouts that are gone
    // by their words.
    let handled = [CARGO_TEST, CARGO_BUILD, GONE_CARGO_CHECK, CODEX_CARGO_TEST, GONE_CODEX_CLIPPY];
    assert_eq!(answer["handled"]["count"], 5, "{answer:#}");
    assert_eq!(answer["handled"]["outputTokens"], tokens(&out, &handled), "{answer:#}");
    assert_eq!(answer["judgedByWords"], 2, "{answer:#}");
    assert_eq!(
        rows(&answer["handledTop"]),
        [
            ("cargo build".into(), 1, tokens(&out, &[CARGO_BUILD])),
            ("cargo check".into(), 1, tokens(&out, &[GONE_CARGO_CHECK])),
            ("cargo clippy".into(), 1, tokens(&out, &[GONE_CODEX_CLIPPY])),
            ("cargo test".into(), 2, tokens(&out, &[CARGO_TEST, CODEX_CARGO_TEST])),
        ]
    );
    // The MCP tool and `buildvise exec` went through buildvise already.
    assert_eq!(answer["throughBuildvise"]["count"], 2, "{answer:#}");
    assert_eq!(answer["throughBuildvise"]["outputTokens"], tokens(&out, &[MCP, BUILDVISE_EXEC]));
    assert_eq!(answer["unhandled"]["count"], 4, "{answer:#}");
    assert_eq!(
        rows(&answer["unhandledTop"]),
        [
            ("git log".into(), 1, tokens(&out, &[CODEX_GIT_LOG])),
            ("git status".into(), 2, tokens(&out, &[GIT_STATUS, LEGACY_GIT_STATUS])),
            ("ls".into(), 1, tokens(&out, &[GONE_LS])),
        ]
    );
    assert!(homes.project.is_dir());
}

#[test]
fn the_text_answer_is_short() {
    let sb = Sandbox::new(&[toolchains()]);
    let homes = default_homes(&sb);
    let text = discover(&sb, &homes, &[]).expect_code(0).text();
    insta::assert_snapshot!("discover_text", text);
}

#[test]
fn the_clients_own_variables_move_the_transcripts_and_filters_narrow_them() {
    let sb = Sandbox::new(&[toolchains()]);
    let (claude, codex) = (sb.work().join("elsewhere/claude"), sb.work().join("elsewhere/codex"));
    let project = provision(&sb, &claude, &codex);
    let homes = Homes { home: sb.work().join("empty-home"), project };
    let run = |args: &[&str]| {
        let mut cmd = sb.command(["discover", "--json"].iter().chain(args));
        cmd.env("HOME", &homes.home).env("CLAUDE_CONFIG_DIR", &claude).env("CODEX_HOME", &codex);
        common::run_command(&mut cmd).expect_code(0).json()
    };
    let codex_only = run(&["--client", "codex"]);
    assert_eq!(codex_only["transcripts"], serde_json::json!({"claude": 0, "codex": 2}), "{codex_only:#}");
    assert_eq!(codex_only["commands"], 4, "{codex_only:#}");
    // The newer Claude session only (its commands are of 2026-01-23); the rollout from before
    // the envelope has no times of its own, and counts by its file's time, which is now.
    let since = run(&["--since", "2026-01-01"]);
    assert_eq!(since["commands"], 6, "{since:#}");
    assert_eq!(since["handled"]["count"], 2, "{since:#}");
    let recent = run(&["--since", "1d"]);
    assert_eq!(recent["commands"], 1, "{recent:#}");
    let cut = run(&["--limit", "1"]);
    assert_eq!(cut["unhandledTop"].as_array().map(Vec::len), Some(1), "{cut:#}");
    assert_eq!(cut["unhandledTop"][0]["command"], "git status", "{cut:#}");
}

#[test]
fn without_transcripts_it_says_where_it_looked() {
    let sb = Sandbox::new(&[toolchains()]);
    let homes = Homes { home: sb.work().join("nobody"), project: sb.work() };
    let text = discover(&sb, &homes, &[]).expect_code(0).text();
    assert!(text.starts_with("no transcripts of Claude Code or Codex in "), "{text}");
    assert!(text.contains(".claude/projects"), "{text}");
}

#[test]
fn a_since_it_cannot_read_is_an_error_that_says_what_to_send() {
    let sb = Sandbox::new(&[toolchains()]);
    let homes = default_homes(&sb);
    let run = discover(&sb, &homes, &["--since", "last tuesday"]);
    run.expect_code(125);
    assert!(run.stderr.contains("send a date such as 2026-11-01 or a duration such as 7d"), "{}", run.stderr);
}
