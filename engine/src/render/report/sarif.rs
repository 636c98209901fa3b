//! SARIF 2.1.0 (OASIS), as GitHub code scanning reads it: one run, rules from the diagnostics'
//! codes, one result per problem with a location relative to `%SRCROOT%` (the run's cwd).

use super::{Place, Problem, command_line, file_uri, full_message, place, problems, uri_path};
use crate::outcome::Finished;
use crate::store::RunStatus;
use buildvise_plugin_api::{Diagnostic, Severity};
use serde_json::{Map, Value, json};

const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";
const SRCROOT: &str = "%SRCROOT%";
/// The key of buildvise's fingerprint in `partialFingerprints`, versioned as SARIF asks so a
/// later change of the hash can use another key.
const FINGERPRINT_KEY: &str = "buildvise/v1";

pub(super) fn render(f: &Finished, tool_version: &str) -> String {
    let problems = problems(f);
    let rules = rule_ids(&problems);
    let mut run = json!({
        "tool": { "driver": {
            "name": "buildvise",
            "version": tool_version,
            "rules": rules.iter().map(|id| json!({ "id": id })).collect::<Vec<_>>(),
        }},
        // GitHub code scanning keeps one analysis per category, taken from this id up to its last
        // `/`: naming the tool keeps `cargo.build` and `cargo.test` uploads from replacing each other.
        "automationDetails": { "id": format!("{}/", f.meta.tool) },
        "invocations": [invocation(f)],
        "originalUriBaseIds": { SRCROOT: { "uri": format!("{}/", file_uri(f.meta.cwd.trim_end_matches(['/', '\\']))) } },
        "results": problems.iter().map(|p| result(p, &rules, &f.meta.cwd)).collect::<Vec<_>>(),
        "properties": { "tool": f.meta.tool, "runId": f.meta.id },
    });
    if rules.is_empty() {
        run["tool"]["driver"].as_object_mut().map(|d| d.remove("rules"));
    }
    let log = json!({ "$schema": SCHEMA, "version": "2.1.0", "runs": [run] });
    serde_json::to_string_pretty(&log).expect("a JSON value serialises") + "\n"
}

/// The distinct codes, in the order they first appear.
fn rule_ids(problems: &[Problem]) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for code in problems.iter().filter_map(|p| p.diagnostic.code.as_ref()) {
        if !ids.contains(code) {
            ids.push(code.clone());
        }
    }
    ids
}

/// The command and how it ended. `executionSuccessful` says whether the tool ran to its end (SARIF
/// separates that from what it found): a build that exits 1 over compile errors still succeeded
/// in running; one that timed out, was killed or whose log could not be parsed did not.
fn invocation(f: &Finished) -> Value {
    let m = &f.meta;
    let mut inv = Map::new();
    inv.insert("commandLine".into(), json!(command_line(f)));
    inv.insert("executionSuccessful".into(), json!(m.status == RunStatus::Exited && f.result.parser_error.is_none()));
    if let Some(code) = m.exit_code {
        inv.insert("exitCode".into(), json!(code));
    }
    inv.insert("startTimeUtc".into(), json!(utc(m.started_ms)));
    if let Some(end) = m.ended_ms {
        inv.insert("endTimeUtc".into(), json!(utc(end)));
    }
    let notices: Vec<Value> = [&f.result.parser_error, &f.result.stopped_early, &m.error]
        .into_iter()
        .flatten()
        .map(|text| json!({ "level": "warning", "message": { "text": text } }))
        .collect();
    if !notices.is_empty() {
        inv.insert("toolExecutionNotifications".into(), json!(notices));
    }
    Value::Object(inv)
}

fn utc(ms: u64) -> String {
    let at = chrono::DateTime::from_timestamp_millis(ms as i64).unwrap_or_default();
    at.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

fn result(p: &Problem, rules: &[String], cwd: &str) -> Value {
    let d = &*p.diagnostic;
    let mut r = Map::new();
    if let Some(code) = &d.code {
        r.insert("ruleId".into(), json!(code));
        r.insert("ruleIndex".into(), json!(rules.iter().position(|id| id == code)));
    }
    r.insert("level".into(), json!(level(d.severity)));
    r.insert("message".into(), json!({ "text": full_message(d) }));
    if let Some(file) = &d.file {
        r.insert("locations".into(), json!([{ "physicalLocation": physical_location(d, file, cwd) }]));
    }
    r.insert("partialFingerprints".into(), json!({ FINGERPRINT_KEY: p.fingerprint }));
    if let Some(test) = &d.test {
        r.insert("properties".into(), json!({ "test": test }));
    }
    Value::Object(r)
}

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        _ => "note",
    }
}

fn physical_location(d: &Diagnostic, file: &str, cwd: &str) -> Value {
    let artifact = match place(file, cwd) {
        Place::Checkout(rel) => json!({ "uri": uri_path(&rel), "uriBaseId": SRCROOT }),
        Place::Elsewhere(abs) => json!({ "uri": file_uri(&abs) }),
    };
    let mut loc = Map::new();
    loc.insert("artifactLocation".into(), artifact);
    if let Some(region) = region(d) {
        loc.insert("region".into(), region);
    }
    Value::Object(loc)
}

/// The lines and columns SARIF accepts: all are 1-based, so a 0 from a tool is left out, and a
/// column means nothing without its line. `endColumn` is left out: SARIF's is exclusive, and tools
/// do not agree on whether theirs is.
fn region(d: &Diagnostic) -> Option<Value> {
    let line = d.line.filter(|&l| l >= 1)?;
    let mut region = Map::new();
    region.insert("startLine".into(), json!(line));
    if let Some(col) = d.column.filter(|&c| c >= 1) {
        region.insert("startColumn".into(), json!(col));
    }
    if let Some(end) = d.end_line.filter(|&e| e >= line) {
        region.insert("endLine".into(), json!(end));
    }
    Some(Value::Object(region))
}

#[cfg(test)]
mod tests {
    use super::super::tests::{empty, sample};
    use super::*;

    fn rendered() -> Value {
        serde_json::from_str(&render(&sample(), "0.1.0")).unwrap()
    }

    #[test]
    fn the_sample_run() {
        insta::assert_snapshot!(render(&sample(), "0.1.0"));
    }

    #[test]
    fn rules_come_from_distinct_codes_and_results_point_at_them() {
        let log = rendered();
        let run = &log["runs"][0];
        let ids: Vec<&str> =
            run["tool"]["driver"]["rules"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
        assert_eq!(ids, ["E0308", "E0425", "unused_variables"]);
        assert_eq!(run["results"][2]["ruleIndex"], 2);
        assert!(run["results"][3].get("ruleId").is_none());
    }

    #[test]
    fn paths_are_relative_to_srcroot_or_file_uris() {
        let log = rendered();
        let run = &log["runs"][0];
        assert_eq!(run["originalUriBaseIds"]["%SRCROOT%"]["uri"], "file:///home/dev/proj/");
        let artifact = |i: usize| &run["results"][i]["locations"][0]["physicalLocation"]["artifactLocation"];
        assert_eq!(artifact(1)["uri"], "src/my%20file.rs");
        assert_eq!(artifact(1)["uriBaseId"], "%SRCROOT%");
        assert_eq!(artifact(2)["uri"], "file:///usr/lib/rust/core.rs");
        assert!(artifact(2).get("uriBaseId").is_none());
        assert!(run["results"][4].get("locations").is_none());
    }

    #[test]
    fn regions_keep_only_what_is_known_and_valid() {
        let log = rendered();
        let region = |i: usize| log["runs"][0]["results"][i]["locations"][0]["physicalLocation"]["region"].clone();
        assert_eq!(region(0), json!({ "startLine": 16, "startColumn": 9 }));
        assert_eq!(region(1), json!({ "startLine": 3 }));
        assert_eq!(region(2), json!({ "startLine": 1, "startColumn": 5, "endLine": 2 }));
        let d = Diagnostic::new(Severity::Error, "m").with_location("a.rs", Some(0), Some(3));
        assert_eq!(super::region(&d), None);
    }

    #[test]
    fn the_invocation_tells_how_the_run_ended() {
        let log = rendered();
        let inv = &log["runs"][0]["invocations"][0];
        assert_eq!(inv["commandLine"], "cargo test --features 'a b'");
        assert_eq!(inv["executionSuccessful"], true);
        assert_eq!(inv["exitCode"], 101);
        assert_eq!(inv["startTimeUtc"], "2025-11-28T18:40:00.000Z");
    }

    #[test]
    fn an_empty_run_has_no_rules_and_no_results() {
        let log: Value = serde_json::from_str(&render(&empty(), "0.1.0")).unwrap();
        assert!(log["runs"][0]["tool"]["driver"].get("rules").is_none());
        assert_eq!(log["runs"][0]["results"], json!([]));
    }
}
