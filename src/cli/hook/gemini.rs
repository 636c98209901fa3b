//! `hook gemini`: Gemini CLI's `BeforeTool` hook on its `run_shell_command` tool (docs/hooks.md
//! cites the contract).
//!
//! Gemini CLI runs `BeforeTool` hooks when it executes a tool call, after its own confirmation
//! step, and merges `hookSpecificOutput.tool_input` over the call's arguments. So the answer
//! rewrites without approving anything: what runs is what the user's settings or the user
//! already let through, in the form buildvise runs it. No `decision` is sent.

use serde_json::{Value, json};
use std::path::PathBuf;

/// What the hook reads of the payload.
pub struct Call {
    pub command: String,
    /// Where the command runs: the tool's `dir_path` (`directory` in older releases) against
    /// the payload's `cwd`.
    pub dir: Option<PathBuf>,
}

impl Call {
    /// The `run_shell_command` call in a `BeforeTool` payload; None for anything else.
    pub fn read(payload: &str) -> Option<Call> {
        let payload: Value = serde_json::from_str(payload).ok()?;
        if payload["tool_name"] != "run_shell_command" {
            return None;
        }
        let input = &payload["tool_input"];
        let cwd = payload["cwd"].as_str().map(PathBuf::from);
        let sub = input["dir_path"].as_str().or_else(|| input["directory"].as_str());
        let dir = match (cwd, sub) {
            (Some(cwd), Some(sub)) => Some(cwd.join(sub)),
            (cwd, None) => cwd,
            (None, Some(sub)) => Some(PathBuf::from(sub)),
        };
        Some(Call { command: input["command"].as_str()?.to_string(), dir })
    }

    /// The answer that runs `line` instead.
    pub fn answer(&self, line: &str) -> String {
        json!({"hookSpecificOutput": {"hookEventName": "BeforeTool", "tool_input": {"command": line}}}).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_shell_call_and_where_it_runs() {
        let payload = json!({
            "session_id": "s", "cwd": "/p", "hook_event_name": "BeforeTool", "tool_name": "run_shell_command",
            "tool_input": {"command": "cargo test", "dir_path": "crates/core"},
        });
        let call = Call::read(&payload.to_string()).unwrap();
        assert_eq!(call.command, "cargo test");
        assert_eq!(call.dir, Some(PathBuf::from("/p/crates/core")));
        let answer: Value = serde_json::from_str(&call.answer("bv exec cargo.test")).unwrap();
        assert_eq!(
            answer,
            json!({"hookSpecificOutput": {"hookEventName": "BeforeTool", "tool_input": {"command": "bv exec cargo.test"}}})
        );
        assert!(Call::read(&json!({"tool_name": "read_file", "tool_input": {"file_path": "x"}}).to_string()).is_none());
        assert!(Call::read("{").is_none());
    }
}
