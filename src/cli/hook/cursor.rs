//! `hook cursor`: Cursor's `preToolUse` hook on its `Shell` tool (docs/hooks.md cites the
//! contract).
//!
//! Cursor applies `updated_input` when it comes with `"permission": "allow"`, and that answer
//! runs the command without Cursor asking. So a line is rewritten only when the user's own
//! allowlists already run every command of it without asking (the `terminalAllowlist` of
//! `permissions.json`, the CLI's `Shell(…)` allow rules) and no `Shell(…)` deny rule touches
//! it. Cursor wants a JSON answer on every path: `{}` is "no change".

use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// What the hook reads of the payload.
pub struct Call {
    pub command: String,
    pub cwd: Option<PathBuf>,
    /// The workspace's folders, where its `.cursor/` settings live.
    pub roots: Vec<PathBuf>,
    tool_input: Value,
}

impl Call {
    /// The `Shell` call in a `preToolUse` payload; None for anything else. Cursor has been seen
    /// to send a byte-order mark first.
    pub fn read(payload: &str) -> Option<Call> {
        let payload: Value = serde_json::from_str(payload.trim_start_matches('\u{feff}')).ok()?;
        if payload["tool_name"] != "Shell" {
            return None;
        }
        let tool_input = payload["tool_input"].clone();
        let roots: Vec<PathBuf> = payload["workspace_roots"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(PathBuf::from)
            .collect();
        let cwd = [&tool_input["cwd"], &payload["cwd"]].into_iter().find_map(Value::as_str).map(PathBuf::from);
        Some(Call {
            command: tool_input["command"].as_str()?.to_string(),
            cwd: cwd.or_else(|| roots.first().cloned()),
            roots,
            tool_input,
        })
    }

    /// The answer that runs `line` instead, when the user's allowlists run `typed` (the
    /// commands of the line as typed) without asking.
    pub fn answer(&self, line: &str, typed: &[String], rules: &Rules) -> Option<String> {
        let words: Vec<Vec<String>> = typed.iter().map(|c| shlex::split(c)).collect::<Option<_>>()?;
        if words.iter().any(|w| rules.deny.iter().any(|rule| rule.denies(w))) {
            return None;
        }
        if !words.iter().all(|w| rules.allow.iter().any(|rule| w.starts_with(rule))) {
            return None;
        }
        let mut input = self.tool_input.clone();
        input["command"] = Value::String(line.to_string());
        Some(json!({"permission": "allow", "updated_input": input}).to_string())
    }
}

/// A CLI deny rule: the words of `Shell(…)`, or every command when it has a wildcard.
#[derive(Debug)]
pub struct Deny(Option<Vec<String>>);

impl Deny {
    fn denies(&self, words: &[String]) -> bool {
        self.0.as_ref().is_none_or(|rule| words.starts_with(rule))
    }
}

/// What the user lets run without asking, and what never: each allow rule as the words a
/// command must start with.
#[derive(Debug, Default)]
pub struct Rules {
    allow: Vec<Vec<String>>,
    deny: Vec<Deny>,
}

impl Rules {
    /// The rules of `~/.cursor/permissions.json`, `~/.cursor/cli-config.json` and, in each
    /// workspace folder, `.cursor/permissions.json` and `.cursor/cli.json`; None when one of
    /// them exists but cannot be read: rules not read cannot be honoured.
    pub fn load(roots: &[PathBuf], home: Option<&Path>) -> Option<Rules> {
        let mut rules = Rules::default();
        let dirs: Vec<PathBuf> =
            home.map(|h| h.join(".cursor")).into_iter().chain(roots.iter().map(|r| r.join(".cursor"))).collect();
        for (at, dir) in dirs.iter().enumerate() {
            if let Some(permissions) = read(&dir.join("permissions.json"))? {
                rules.allow.extend(strings(&permissions["terminalAllowlist"])?.iter().filter_map(|e| plain_words(e)));
            }
            let cli = if home.is_some() && at == 0 { "cli-config.json" } else { "cli.json" };
            if let Some(config) = read(&dir.join(cli))? {
                for rule in strings(&config["permissions"]["allow"])? {
                    rules.allow.extend(shell_rule(&rule).and_then(plain_words));
                }
                for rule in strings(&config["permissions"]["deny"])? {
                    if let Some(spec) = shell_rule(&rule) {
                        rules.deny.push(Deny(plain_words(spec)));
                    }
                }
            }
        }
        Some(rules)
    }
}

/// A settings file (JSON with comments): Some(None) when there is none.
fn read(path: &Path) -> Option<Option<Value>> {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            serde_json::from_reader(json_comments::StripComments::new(text.trim_start_matches('\u{feff}').as_bytes()))
                .ok()
                .map(Some)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(None),
        Err(_) => None,
    }
}

/// A list of strings, or none; None when it is something else.
fn strings(value: &Value) -> Option<Vec<String>> {
    match value {
        Value::Null => Some(Vec::new()),
        Value::Array(items) => Some(items.iter().filter_map(|i| i.as_str().map(str::to_string)).collect()),
        _ => None,
    }
}

/// What `Shell(…)` holds.
fn shell_rule(rule: &str) -> Option<&str> {
    rule.strip_prefix("Shell(")?.strip_suffix(')')
}

/// The words of a rule; None when it has a wildcard, which is not read as an allow.
fn plain_words(rule: &str) -> Option<Vec<String>> {
    let words = shlex::split(rule)?;
    (!words.is_empty() && !rule.contains('*')).then_some(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(command: &str) -> Call {
        let payload = json!({
            "conversation_id": "c", "generation_id": "g", "hook_event_name": "preToolUse",
            "workspace_roots": ["/w"], "tool_name": "Shell", "tool_input": {"command": command},
        });
        Call::read(&format!("\u{feff}{payload}")).unwrap()
    }

    fn typed(commands: &[&str]) -> Vec<String> {
        commands.iter().map(|c| c.to_string()).collect()
    }

    #[test]
    fn rewrites_only_what_the_allowlists_run_and_no_deny_rule_touches() {
        let dir = tempfile::tempdir().unwrap();
        let cursor = dir.path().join(".cursor");
        std::fs::create_dir(&cursor).unwrap();
        std::fs::write(
            cursor.join("permissions.json"),
            "{\n  // ours\n  \"terminalAllowlist\": [\"cargo test\", \"npm *\"]\n}",
        )
        .unwrap();
        std::fs::write(
            cursor.join("cli.json"),
            r#"{"permissions": {"allow": ["Shell(make)"], "deny": ["Shell(make install)"]}}"#,
        )
        .unwrap();
        let rules = Rules::load(&[dir.path().to_path_buf()], None).unwrap();
        let c = call("cargo test");
        assert_eq!(c.cwd, Some(PathBuf::from("/w")));
        let answer: Value =
            serde_json::from_str(&c.answer("bv exec cargo.test", &typed(&["cargo test"]), &rules).unwrap()).unwrap();
        assert_eq!(answer, json!({"permission": "allow", "updated_input": {"command": "bv exec cargo.test"}}));
        assert!(c.answer("x", &typed(&["cargo test -p core", "make"]), &rules).is_some());
        // Not allowed, a wildcard entry, a denied command, a chain with one unallowed part.
        assert!(c.answer("x", &typed(&["cargo build"]), &rules).is_none());
        assert!(c.answer("x", &typed(&["npm test"]), &rules).is_none());
        assert!(c.answer("x", &typed(&["make install"]), &rules).is_none());
        assert!(c.answer("x", &typed(&["cargo test", "rm -rf x"]), &rules).is_none());
        std::fs::write(cursor.join("cli.json"), "{ nope").unwrap();
        assert!(Rules::load(&[dir.path().to_path_buf()], None).is_none());
    }

    #[test]
    fn only_a_shell_call_is_read() {
        assert!(Call::read("{").is_none());
        assert!(Call::read(&json!({"tool_name": "Read", "tool_input": {"file_path": "x"}}).to_string()).is_none());
    }
}
