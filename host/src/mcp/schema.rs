//! The `build` tool as clients see it: name, description, input schema, and the server's
//! instructions. Every word here is paid on every turn of every conversation, so each one must
//! earn its place; `tests/mcp_e2e.rs` fails when the tools/list entry grows past its budget.

use rmcp::model::{Tool, ToolAnnotations};
use serde_json::json;
use std::sync::Arc;

pub const TOOL_NAME: &str = "build";

const DESCRIPTION: &str =
    "Run a build/test/lint tool; returns diagnostics, not raw output. The full log is kept: page it with log.";

pub const INSTRUCTIONS: &str = "Use build exec with detail standard (default) to see every error; summary only counts, to check \
that things pass; full adds notes and the output's tail. Fetch raw lines with log only when a diagnostic is unclear, with the \
call the hint gives.";

pub fn tool() -> Tool {
    let schema = json!({
        "type": "object",
        "properties": {
            "action": {"enum": ["exec", "log", "list"]},
            "tool": {"type": "string", "description": "exec: e.g. cargo.test, from list"},
            "args": {"type": "array", "items": {"type": "string"}},
            "cwd": {"type": "string"},
            "timeout": {"type": "number", "description": "seconds"},
            "detail": {"enum": ["summary", "standard", "full"], "description": "log: re-render that run"},
            "maxLines": {"type": "integer", "description": "raw lines cap, 1-10000"},
            "confirm": {"type": "boolean", "description": "run a tool that changes the workspace"},
            "runId": {"type": "string"},
            "startLine": {"type": "integer", "description": "<0: from end"},
            "lineCount": {"type": "integer"},
            "stream": {"enum": ["stdout", "stderr", "both"]},
            "grep": {"type": "string", "description": "regex"}
        },
        "required": ["action"]
    });
    // Of the hints, only this one differs from what a client assumes when it is absent: the
    // tool works on the workspace, not the world. Clients read hints for their own decisions
    // (approvals) and do not pass them to the model, so they cost no turn tokens.
    Tool::new(TOOL_NAME, DESCRIPTION, Arc::new(schema.as_object().cloned().unwrap_or_default()))
        .with_annotations(ToolAnnotations::new().open_world(false))
}
