//! `hook claude`: Claude Code's `PreToolUse` hook on its `Bash` tool (docs/hooks.md cites the
//! contract).
//!
//! The answer that rewrites a command also approves it (`permissionDecision: "allow"`), which
//! skips the prompt Claude Code would otherwise show. So a line is rewritten only when the user's
//! own permission rules already run it without asking: every command of it matches an allow
//! rule, or the session bypasses permissions, and none matches a deny or ask rule. Any other line
//! runs as typed, through Claude Code's own checks.

use super::pre_tool_use::Call;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The answer that runs `line` instead, when the user's rules allow `typed` (the commands of the
/// line as typed) without asking.
pub fn answer(call: &Call, line: &str, typed: &[String], rules: &Rules) -> Option<String> {
    let stopped = |command: &str| rules.deny.iter().chain(&rules.ask).any(|rule| matches(rule, command));
    if stopped(&call.command) || typed.iter().any(|c| stopped(c)) {
        return None;
    }
    let allowed = |command: &str| rules.allow.iter().any(|rule| matches(rule, command));
    // Each command on its own: Claude Code reads `a && b` as two commands, so a rule that covers
    // `a` does not cover the line.
    if !call.never_asks && !typed.iter().all(|c| allowed(c)) {
        return None;
    }
    Some(call.approved_rewrite(line))
}

/// The permission rules of the user's settings files, all of them together.
#[derive(Debug, Default)]
pub struct Rules {
    allow: Vec<String>,
    deny: Vec<String>,
    ask: Vec<String>,
}

impl Rules {
    /// The rules of the managed, user, project and local settings; None when one of those files
    /// exists but cannot be read as settings: rules not read cannot be honoured.
    pub fn load(project: &Path, home: Option<&Path>) -> Option<Rules> {
        let mut files = vec![managed_settings()];
        files.extend(home.map(|home| home.join(".claude/settings.json")));
        files.push(project.join(".claude/settings.json"));
        files.push(project.join(".claude/settings.local.json"));
        let mut rules = Rules::default();
        for file in files {
            let text = match std::fs::read_to_string(&file) {
                Ok(text) => text,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(_) => return None,
            };
            let settings: Value = serde_json::from_str(&text).ok()?;
            let permissions = &settings["permissions"];
            for (list, key) in [(&mut rules.allow, "allow"), (&mut rules.deny, "deny"), (&mut rules.ask, "ask")] {
                if let Some(found) = permissions[key].as_array() {
                    list.extend(
                        found.iter().map(|rule| rule.as_str().map(str::to_string)).collect::<Option<Vec<_>>>()?,
                    );
                }
            }
        }
        Some(rules)
    }
}

/// Where an administrator's managed settings live on this system.
fn managed_settings() -> PathBuf {
    PathBuf::from(if cfg!(target_os = "macos") {
        "/Library/Application Support/ClaudeCode/managed-settings.json"
    } else if cfg!(windows) {
        r"C:\Program Files\ClaudeCode\managed-settings.json"
    } else {
        "/etc/claude-code/managed-settings.json"
    })
}

/// Whether a permission rule covers the shell command `command`: `Bash` covers every one,
/// `Bash(PREFIX:*)` the prefix and what follows it after a blank, `Bash(PATTERN)` with `*`
/// anything in their place (a final ` *` also nothing), `Bash(COMMAND)` that command alone.
fn matches(rule: &str, command: &str) -> bool {
    if rule == "Bash" || rule == "Bash(*)" {
        return true;
    }
    let Some(spec) = rule.strip_prefix("Bash(").and_then(|r| r.strip_suffix(')')) else {
        return false;
    };
    if let Some(prefix) = spec.strip_suffix(":*") {
        return command == prefix || command.strip_prefix(prefix).is_some_and(|rest| rest.starts_with(' '));
    }
    if !spec.contains('*') {
        return command == spec;
    }
    if let Some(head) = spec.strip_suffix(" *")
        && !head.contains('*')
        && command == head
    {
        return true;
    }
    glob(spec, command)
}

/// `*` in `pattern` stands for any run of characters, blanks included.
fn glob(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else { return false };
    let parts: Vec<&str> = parts.collect();
    for (i, part) in parts.iter().enumerate() {
        if i == parts.len() - 1 {
            return rest.ends_with(part);
        }
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rules(allow: &[&str], deny: &[&str], ask: &[&str]) -> Rules {
        let owned = |l: &[&str]| l.iter().map(|r| r.to_string()).collect();
        Rules { allow: owned(allow), deny: owned(deny), ask: owned(ask) }
    }

    fn call(command: &str, mode: &str) -> Call {
        let payload = json!({
            "session_id": "s", "transcript_path": "/t", "cwd": "/p", "permission_mode": mode,
            "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": command, "description": "Run the tests"},
        });
        Call::read(&payload.to_string()).unwrap()
    }

    #[test]
    fn rules_match_as_claude_code_documents_them() {
        assert!(matches("Bash", "anything at all"));
        assert!(matches("Bash(cargo test:*)", "cargo test"));
        assert!(matches("Bash(cargo test:*)", "cargo test -p core"));
        assert!(!matches("Bash(cargo test:*)", "cargo testx"));
        assert!(matches("Bash(npm run *)", "npm run lint"));
        assert!(matches("Bash(npm run *)", "npm run"));
        assert!(matches("Bash(git * main)", "git push origin main"));
        assert!(!matches("Bash(git * main)", "git push origin dev"));
        assert!(matches("Bash(npm test)", "npm test"));
        assert!(!matches("Bash(npm test)", "npm test -- --ci"));
        assert!(!matches("Read(./.env)", "cargo test"));
    }

    #[test]
    fn rewrites_only_what_the_user_already_runs_without_asking() {
        let typed = |c: &str| vec![c.to_string()];
        let allowed = rules(&["Bash(cargo test:*)"], &[], &[]);
        let said =
            answer(&call("cargo test", "default"), "bv exec cargo.test", &typed("cargo test"), &allowed).unwrap();
        let said: Value = serde_json::from_str(&said).unwrap();
        let out = &said["hookSpecificOutput"];
        assert_eq!(out["permissionDecision"], "allow");
        assert_eq!(out["updatedInput"], json!({"command": "bv exec cargo.test", "description": "Run the tests"}));
        // Not allowed: Claude Code asks about the command as typed, and buildvise stays out.
        assert_eq!(
            answer(&call("cargo build", "default"), "bv exec cargo.build", &typed("cargo build"), &allowed),
            None
        );
        // Every command of a chain must be allowed: approving the line approves them all.
        let chain = ["cargo test".to_string(), "rm -rf target".to_string()];
        assert_eq!(answer(&call("cargo test && rm -rf target", "default"), "x", &chain, &allowed), None);
        // A deny or ask rule wins, in every mode.
        let stopped = rules(&["Bash"], &[], &["Bash(cargo test:*)"]);
        assert_eq!(answer(&call("cargo test", "bypassPermissions"), "x", &typed("cargo test"), &stopped), None);
        // A session that bypasses permissions runs everything without asking anyway.
        assert!(
            answer(&call("cargo build", "bypassPermissions"), "x", &typed("cargo build"), &Rules::default()).is_some()
        );
    }

    #[test]
    fn only_a_foreground_bash_call_is_read() {
        assert!(Call::read("not json").is_none());
        assert!(Call::read(&json!({"tool_name": "Write", "tool_input": {"file_path": "/x"}}).to_string()).is_none());
        let background =
            json!({"tool_name": "Bash", "tool_input": {"command": "cargo test", "run_in_background": true}});
        assert!(Call::read(&background.to_string()).is_none());
    }

    #[test]
    fn a_settings_file_that_cannot_be_read_stops_the_rewrite() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".claude")).unwrap();
        std::fs::write(
            dir.path().join(".claude/settings.local.json"),
            r#"{"permissions": {"allow": ["Bash(cargo test:*)"]}}"#,
        )
        .unwrap();
        let rules = Rules::load(dir.path(), None).unwrap();
        assert_eq!(rules.allow, ["Bash(cargo test:*)"]);
        std::fs::write(dir.path().join(".claude/settings.json"), "{ not json").unwrap();
        assert!(Rules::load(dir.path(), None).is_none());
    }
}
