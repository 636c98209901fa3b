//! The `PreToolUse` payload and answer that Claude Code and Codex share: a `Bash` call comes in,
//! and the rewrite goes out as its input with the command replaced, approved. Each client's own
//! file decides when its user already allows the command (claude.rs, codex.rs).

use serde_json::{Value, json};

/// What the hook reads of the payload.
pub struct Call {
    pub command: String,
    pub cwd: Option<String>,
    /// The session runs commands without asking (`permission_mode: bypassPermissions`).
    pub never_asks: bool,
    tool_input: Value,
}

impl Call {
    /// The `Bash` call in a `PreToolUse` payload; None for anything else, and for a call in the
    /// background (Claude Code's `run_in_background`), whose output no answer reaches.
    pub fn read(payload: &str) -> Option<Call> {
        let payload: Value = serde_json::from_str(payload).ok()?;
        if payload["tool_name"] != "Bash" || payload["tool_input"]["run_in_background"] == true {
            return None;
        }
        let tool_input = payload["tool_input"].clone();
        Some(Call {
            command: tool_input["command"].as_str()?.to_string(),
            cwd: payload["cwd"].as_str().map(str::to_string),
            never_asks: payload["permission_mode"] == "bypassPermissions",
            tool_input,
        })
    }

    /// The answer that runs `line` instead, approved; the rest of the input (a description, a
    /// timeout) goes back unchanged.
    pub fn approved_rewrite(&self, line: &str) -> String {
        let mut input = self.tool_input.clone();
        input["command"] = Value::String(line.to_string());
        let answer = json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "allow",
                "permissionDecisionReason": "buildvise runs it and answers with what matters",
                "updatedInput": input,
            }
        });
        answer.to_string()
    }
}
