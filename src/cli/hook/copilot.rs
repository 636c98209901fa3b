//! `hook copilot`: GitHub Copilot CLI's `preToolUse` hook on its `bash` tool (docs/hooks.md
//! cites the contract).
//!
//! The answer carries `modifiedArgs`, the tool's arguments to use instead, and no
//! `permissionDecision`: Copilot CLI's own permission flow still decides whether the command
//! runs, so the hook approves nothing the user did not.

use serde_json::{Value, json};

/// What the hook reads of the payload.
pub struct Call {
    pub command: String,
    pub cwd: Option<String>,
    args: Value,
}

impl Call {
    /// The `bash` call in a `preToolUse` payload, in its camelCase form (`toolName`, `toolArgs`,
    /// which Copilot CLI sends as a JSON string) or its VS Code-compatible one (`tool_name`,
    /// `tool_input`); None for anything else.
    pub fn read(payload: &str) -> Option<Call> {
        let payload: Value = serde_json::from_str(payload).ok()?;
        let tool = payload.get("toolName").or_else(|| payload.get("tool_name"))?;
        if tool != "bash" {
            return None;
        }
        let args = payload.get("toolArgs").or_else(|| payload.get("tool_input"))?;
        let args = match args {
            Value::String(text) => serde_json::from_str(text).ok()?,
            other => other.clone(),
        };
        Some(Call {
            command: args["command"].as_str()?.to_string(),
            cwd: payload["cwd"].as_str().map(str::to_string),
            args,
        })
    }

    /// The answer that runs `line` instead, the other arguments kept.
    pub fn answer(&self, line: &str) -> String {
        let mut args = self.args.clone();
        args["command"] = Value::String(line.to_string());
        json!({"modifiedArgs": args}).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_payload_forms_and_keeps_the_other_arguments() {
        let camel = json!({"sessionId": "s", "timestamp": 1, "cwd": "/p", "toolName": "bash",
            "toolArgs": "{\"command\":\"cargo test\",\"description\":\"Run tests\"}"});
        let call = Call::read(&camel.to_string()).unwrap();
        assert_eq!((call.command.as_str(), call.cwd.as_deref()), ("cargo test", Some("/p")));
        let answer: Value = serde_json::from_str(&call.answer("bv exec cargo.test")).unwrap();
        assert_eq!(answer, json!({"modifiedArgs": {"command": "bv exec cargo.test", "description": "Run tests"}}));
        let snake = json!({"hook_event_name": "PreToolUse", "cwd": "/p", "tool_name": "bash", "tool_input": {"command": "npm test"}});
        assert_eq!(Call::read(&snake.to_string()).unwrap().command, "npm test");
        assert!(Call::read(&json!({"toolName": "view", "toolArgs": "{}"}).to_string()).is_none());
        assert!(Call::read(&json!({"toolName": "bash", "toolArgs": "not json"}).to_string()).is_none());
    }
}
