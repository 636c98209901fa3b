//! The `build` tool as clients see it: name, description and input schema. Every word here is
//! paid on every turn of every conversation, so each one must earn its place;
//! `tests/mcp_e2e.rs` fails when what the model reads of tools/list grows past 200 o200k tokens.
//!
//! What was cut, and why (docs/benchmarks.md has each property's cost):
//! - Server instructions: what they said (which detail for what, log only when a diagnostic is
//!   unclear) now lives in the description and `detail`, and not every client shows them.
//! - `stream`: still accepted (`stdout`, `stderr`, `both`), not declared; `grep` finds lines on
//!   either stream, and agents almost never split them.
//! - Enforced limits (`maxLines` 1..10000, the timeout cap): the error text says them when hit.
//!
//! What clients read and the model does not (the title, the annotations, the output schema) is
//! kept small too, under its own budget in the same test, since some clients forward the whole
//! tool: the output schema names the fields a program reads and their types, not every field.
//! The annotations say what is true of the one tool for all three actions: `exec` runs the
//! project's build and tests, which write build outputs (not read-only), and with `confirm`
//! rewrites sources or dependencies (`cargo fmt`, `npm install`): destructive, unless the server
//! is `--read-only`, which hides and refuses every tool that changes the workspace.

use rmcp::model::{Tool, ToolAnnotations};
use serde_json::json;
use std::sync::Arc;

pub const TOOL_NAME: &str = "build";

const DESCRIPTION: &str = "Build, test or lint; returns diagnostics. log pages the raw output when one is unclear.";

/// For people choosing tools in a client: the name alone says little.
const TITLE: &str = "Build, test, lint";

/// The tool; `read_only`: the server hides and refuses every tool that changes the workspace.
pub fn tool(read_only: bool) -> Tool {
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
        .with_title(TITLE)
        .with_annotations(ToolAnnotations::new().destructive(!read_only))
        .with_raw_output_schema(Arc::new(output_schema()))
}

/// What every `structuredContent` validates against, whichever the action: the fields a program
/// reads, typed. Fields not named here are allowed; `tests/mcp_typescript_client.rs` checks real
/// answers of every action against it with Ajv.
pub fn output_schema() -> serde_json::Map<String, serde_json::Value> {
    let schema = json!({
        "type": "object",
        "properties": {
            "runId": {"type": "string"},
            "status": {"type": "string"},
            "exitCode": {"type": "integer"},
            "success": {"type": "boolean"},
            "errors": {"type": "integer"},
            "warnings": {"type": "integer"},
            "diagnostics": {"type": "array"},
            "hint": {"type": "string"},
            "lines": {"type": "array"},
            "tools": {"type": "array"}
        }
    });
    schema.as_object().cloned().unwrap_or_default()
}
