//! The `build` tool as clients see it: name, description and input schema. Every word here is
//! paid on every turn of every conversation, so each one must earn its place;
//! `tests/mcp_e2e.rs` fails when tools/list grows past 200 o200k tokens.
//!
//! What was cut, and why (docs/benchmarks.md has each property's cost):
//! - Server instructions: what they said (which detail for what, log only when a diagnostic is
//!   unclear) now lives in the description and `detail`, and not every client shows them.
//! - `stream`: still accepted (`stdout`, `stderr`, `both`), not declared; `grep` finds lines on
//!   either stream, and agents almost never split them.
//! - Tool annotations: clients do not pass them to the model, but they cost the budget, and the
//!   one that differs from what a client assumes (`openWorldHint`) decides nothing for a client.
//! - Enforced limits (`maxLines` 1..10000, the timeout cap): the error text says them when hit.

use rmcp::model::Tool;
use serde_json::json;
use std::sync::Arc;

pub const TOOL_NAME: &str = "build";

const DESCRIPTION: &str = "Build, test or lint; returns diagnostics. log pages the raw output when one is unclear.";

pub fn tool() -> Tool {
    let schema = json!({
        "type": "object",
        "properties": {
            "action": {"enum": ["exec", "log", "list"]},
            "tool": {"type": "string", "description": "exec: e.g. cargo.test, from list"},
            "args": {"type": "array", "items": {"type": "string"}},
            "cwd": {"type": "string"},
            "timeout": {"type": "number", "description": "seconds"},
            "detail": {"enum": ["summary", "standard", "full"], "description": "summary: counts; full: notes, tail"},
            "maxLines": {"type": "integer", "description": "raw lines cap"},
            "confirm": {"type": "boolean", "description": "allow workspace changes"},
            "runId": {"type": "string"},
            "startLine": {"type": "integer", "description": "<0: from end"},
            "lineCount": {"type": "integer"},
            "grep": {"type": "string", "description": "regex"}
        },
        "required": ["action"]
    });
    Tool::new(TOOL_NAME, DESCRIPTION, Arc::new(schema.as_object().cloned().unwrap_or_default()))
}
