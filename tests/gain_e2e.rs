//! `buildvise gain` end to end: runs made through the real binary, over the CLI (text and
//! `--json`) and MCP, in two projects, each with `log` reads after it; then `gain --json` must
//! give exactly the o200k tokens this test counts itself, with tiktoken-rs, on `log RUN --raw`
//! and on the answers it received.

mod common;

use common::mcp::{connect, wait_for};
use common::{Sandbox, run_id, toolchains};
use serde_json::{Value, json};

/// A tool of the project's own: a script printing a build's worth of lines, one error and one
/// warning, and failing.
const TOOL: &str = r#"
[tools."NAME"]
run = ["sh", "check.sh"]
[[tools."NAME".patterns]]
regex = '^(?P<file>[^:]+):(?P<line>\d+): (?P<severity>error|warning): (?P<message>.*)$'
"#;

const SCRIPT: &str = r#"i=0
while [ $i -lt 150 ]; do echo "  Compiling unit-$i v0.$i.0 (/src/unit-$i) … ok"; i=$((i+1)); done
echo "src/a.c:3: error: width is undefined"
echo "src/b.c:7: warning: unused b" >&2
echo "build failed: 1 error"
exit 2
"#;

fn project(sb: &Sandbox, name: &str, tool: &str) -> String {
    let dir = sb.project_with_config(name, &TOOL.replace("NAME", tool));
    std::fs::write(dir.join("check.sh"), SCRIPT).expect("write check.sh");
    dir.to_str().expect("UTF-8 path").to_string()
}

/// The o200k tokens of `text`, counted here, apart from buildvise.
fn tokens(text: &str) -> u64 {
    static BPE: std::sync::OnceLock<tiktoken_rs::CoreBPE> = std::sync::OnceLock::new();
    BPE.get_or_init(|| tiktoken_rs::o200k_base().expect("o200k loads")).encode_ordinary(text).len() as u64
}

/// The tokens of run `id`'s whole raw log, as `log --raw` prints it.
fn raw_tokens(sb: &Sandbox, id: &str) -> u64 {
    let raw = sb.run(["log", id, "--raw", "--count", "1000000"]);
    raw.expect_code(0);
    tokens(&String::from_utf8_lossy(&raw.stdout))
}

/// A CLI call's stdout, which must have succeeded or failed with `code`.
fn printed(sb: &Sandbox, args: &[&str], code: i32) -> String {
    let run = sb.run(args);
    run.expect_code(code);
    run.text()
}

fn gain(sb: &Sandbox, args: &[&str]) -> Value {
    let run = sb.run([&["gain", "--json"], args].concat());
    run.expect_code(0);
    run.json()
}

/// The row named `name` of a breakdown.
fn row<'a>(gain: &'a Value, breakdown: &str, name: &str) -> &'a Value {
    let rows = gain[breakdown].as_array().unwrap_or_else(|| panic!("no {breakdown}: {gain:#}"));
    rows.iter().find(|r| r["name"] == name).unwrap_or_else(|| panic!("no {name} in {breakdown}: {gain:#}"))
}

/// `{runs, rawTokens, answerTokens, savedTokens, savedPercent}` as gain writes them.
fn sums(runs: u64, raw: u64, answers: u64) -> Value {
    let saved = raw as i64 - answers as i64;
    let percent = (saved as f64 * 1000.0 / raw as f64).round() / 10.0;
    json!({"runs": runs, "rawTokens": raw, "answerTokens": answers, "savedTokens": saved, "savedPercent": percent})
}

fn only_sums(value: &Value) -> Value {
    let keys = ["runs", "rawTokens", "answerTokens", "savedTokens", "savedPercent"];
    Value::Object(keys.iter().map(|k| (k.to_string(), value[*k].clone())).collect())
}

#[tokio::test]
async fn gain_counts_exactly_the_raw_logs_and_the_answers_the_agent_got() {
    let sb = Sandbox::new(&[toolchains()]);
    let alpha = project(&sb, "alpha", "a.check");
    let beta = project(&sb, "beta", "b.check");

    // The CLI: a text answer and a page read of it, a --json answer and its page as JSON.
    let text_answer = printed(&sb, &["exec", "a.check", "--cwd", &alpha], 2);
    let text_run = common::runs(&sb)[0]["id"].as_str().expect("the newest run").to_string();
    assert!(text_answer.contains(&text_run), "the answer names its run:\n{text_answer}");
    let json_answer = printed(&sb, &["exec", "a.check", "--cwd", &alpha, "--json"], 2);
    let json_run = run_id(&serde_json::from_str(&json_answer).expect("exec --json is JSON"));
    let text_page = printed(&sb, &["log", &text_run, "--start", "1", "--count", "5"], 0);
    let json_page = printed(&sb, &["log", &json_run, "--start", "-3", "--json"], 0);
    // A run made by a buildvise that kept no answers: gain leaves it out and says so.
    let old_run =
        run_id(&serde_json::from_str(&printed(&sb, &["exec", "a.check", "--cwd", &alpha, "--json"], 2)).unwrap());
    std::fs::remove_file(sb.state().join("runs").join(&old_run).join("answers.jsonl")).expect("the run has answers");

    // MCP: the text content and the structured content, of the exec and of a log read.
    let session = connect(&sb, &[]).await;
    let (mcp_text, mcp_structured) = session.ok(json!({"action": "exec", "tool": "b.check", "cwd": beta})).await;
    let mcp_run = run_id(&mcp_structured);
    let (page_text, page_structured) =
        session.ok(json!({"action": "log", "runId": mcp_run, "startLine": 10, "lineCount": 3})).await;
    session.close().await;

    let json_text = |v: &Value| serde_json::to_string(v).expect("JSON serializes");
    let alpha_raw = raw_tokens(&sb, &text_run) + raw_tokens(&sb, &json_run);
    let alpha_answers = tokens(&text_answer) + tokens(&text_page) + tokens(&json_answer) + tokens(&json_page);
    let beta_raw = raw_tokens(&sb, &mcp_run);
    let beta_answers = tokens(&mcp_text)
        + tokens(&json_text(&mcp_structured))
        + tokens(&page_text)
        + tokens(&json_text(&page_structured));
    assert!(alpha_raw > 1000 && beta_raw > 500, "the logs are a build's worth: {alpha_raw}, {beta_raw}");

    // The MCP server records its answers once they are on their way: wait until they are there.
    let mut report = Value::Null;
    wait_for("gain to count the MCP answers", || {
        report = gain(&sb, &[]);
        report["byTool"]
            .as_array()
            .and_then(|rows| rows.iter().find(|r| r["name"] == "b.check"))
            .is_some_and(|r| r["answerTokens"].as_u64() >= Some(beta_answers))
    })
    .await;
    assert_eq!(only_sums(&report), sums(3, alpha_raw + beta_raw, alpha_answers + beta_answers), "{report:#}");
    assert_eq!(report["unrecorded"], 1, "{report:#}");
    assert_eq!(only_sums(row(&report, "byTool", "a.check")), sums(2, alpha_raw, alpha_answers));
    assert_eq!(only_sums(row(&report, "byTool", "b.check")), sums(1, beta_raw, beta_answers));
    assert_eq!(only_sums(row(&report, "byProject", &alpha)), sums(2, alpha_raw, alpha_answers));
    assert_eq!(only_sums(row(&report, "byProject", &beta)), sums(1, beta_raw, beta_answers));
    let days = report["byDay"].as_array().expect("byDay");
    assert_eq!(days.iter().map(|d| d["runs"].as_u64().unwrap()).sum::<u64>(), 3, "{report:#}");

    // Counted once and kept; a later page read is added to what its run cost.
    assert!(sb.state().join("runs").join(&text_run).join("tokens.json").is_file());
    assert_eq!(gain(&sb, &[]), report, "a second gain reads the kept counts");
    let later_page = printed(&sb, &["log", &text_run, "--grep", "error"], 0);
    let later = gain(&sb, &[]);
    let alpha_answers = alpha_answers + tokens(&later_page);
    assert_eq!(only_sums(row(&later, "byTool", "a.check")), sums(2, alpha_raw, alpha_answers), "{later:#}");

    // --since: a duration back from now, a date, and neither.
    assert_eq!(only_sums(&gain(&sb, &["--since", "1h"])), only_sums(&later));
    let future = gain(&sb, &["--since", "2099-01-01"]);
    assert_eq!((future["runs"].as_u64(), future["byTool"].as_array().map(Vec::len)), (Some(0), Some(0)));
    assert!(future["sinceMs"].as_u64() > Some(4_000_000_000_000), "{future:#}");
    let refused = sb.run(["gain", "--since", "yesterday"]);
    refused.expect_code(125);
    assert!(refused.stderr.contains("--since \"yesterday\" is neither a date nor a duration"), "{refused}");

    // The text: the sums and each breakdown, with bars and no colour through a pipe.
    let text = printed(&sb, &["gain"], 0);
    assert!(text.starts_with("saved ") && text.contains("tokens (") && text.contains(" in 3 runs\n"), "{text}");
    assert!(text.contains("1 finished run left out: no answer on record"), "{text}");
    for heading in ["\ntool ", "\nproject ", "\nday "] {
        assert!(text.contains(heading), "{heading:?}:\n{text}");
    }
    assert!(text.contains('█') && !text.contains('\x1b'), "{text}");
}
