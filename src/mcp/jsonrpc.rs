//! Screening of incoming messages, before rmcp sees them, on both transports.
//!
//! rmcp drops a line that is not JSON without a word and answers a known method with bad params
//! as an unknown method (-32601), so a client never learns what it sent wrong. Here each gets the
//! answer JSON-RPC 2.0 prescribes, with the reason and what to send instead.

use rmcp::model::{CallToolRequestParams, InitializeRequestParams, ReadResourceRequestParams};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

pub const PARSE_ERROR: i32 = -32700;
pub const INVALID_REQUEST: i32 = -32600;
pub const INVALID_PARAMS: i32 = -32602;
pub const METHOD_NOT_FOUND: i32 = -32601;

/// The requests this server answers. rmcp answers any other with -32601 and the bare method
/// name, which tells a client nothing about what it may call instead.
const OFFERED: &[&str] = &[
    "initialize",
    "server/discover",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "tasks/get",
    "tasks/cancel",
];

/// An error reply to a message rmcp should not see.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejection {
    /// The request's id, or null when there is none to echo.
    pub id: Value,
    pub code: i32,
    pub message: String,
}

impl Rejection {
    fn new(id: Value, code: i32, message: impl Into<String>) -> Self {
        Rejection { id, code, message: message.into() }
    }

    /// The JSON-RPC error response, on one line.
    pub fn to_json(&self) -> String {
        json!({"jsonrpc": "2.0", "id": self.id, "error": {"code": self.code, "message": self.message}}).to_string()
    }
}

/// Parses one incoming message (a stdio line or an HTTP body) and checks what rmcp would
/// mishandle: JSON that does not parse, a message that is not a JSON-RPC 2.0 object, and the
/// params of the requests this server answers. Everything else is rmcp's to judge.
pub fn screen(bytes: &[u8]) -> Result<Value, Rejection> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| {
        Rejection::new(Value::Null, PARSE_ERROR, format!("parse error: {e}; send one JSON-RPC 2.0 message as JSON"))
    })?;
    let Some(message) = value.as_object() else {
        let why = if value.is_array() {
            "a batch: MCP takes one JSON-RPC message at a time; send each on its own"
        } else {
            "not a JSON-RPC message; send an object with \"jsonrpc\": \"2.0\""
        };
        return Err(Rejection::new(Value::Null, INVALID_REQUEST, why));
    };
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    if message.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(Rejection::new(id, INVALID_REQUEST, "\"jsonrpc\": \"2.0\" is missing; send it in every message"));
    }
    let method = match message.get("method") {
        // A response to a request of ours (roots/list).
        None => return Ok(value),
        Some(Value::String(method)) => method.as_str(),
        Some(_) => return Err(Rejection::new(id, INVALID_REQUEST, "\"method\" must be a string")),
    };
    if !message.contains_key("id") {
        // A notification gets no reply, even when it is wrong.
        return Ok(value);
    }
    let params = message.get("params");
    let checked = match method {
        "tools/call" => check::<CallToolRequestParams>(params, r#"{"name": "build", "arguments": {"action": "list"}}"#),
        "resources/read" => check::<ReadResourceRequestParams>(params, r#"{"uri": "buildvise://run/RUN_ID"}"#),
        "initialize" => check::<InitializeRequestParams>(
            params,
            r#"{"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "…", "version": "…"}}"#,
        ),
        _ => Ok(()),
    };
    match checked {
        Ok(()) => Ok(value),
        Err(reason) => Err(Rejection::new(id, INVALID_PARAMS, format!("invalid params for {method}: {reason}"))),
    }
}

/// The -32601 reply to a request for a method this server does not offer, naming the method and
/// what it offers; None for a request it answers, a notification or a response.
pub fn unoffered(message: &Value) -> Option<Rejection> {
    let method = message.get("method")?.as_str()?;
    let id = message.get("id")?;
    if OFFERED.contains(&method) {
        return None;
    }
    let message = format!(
        "method {method:?} is not offered by this server: it answers {}; its one tool is \"build\" \
         (tools/call with action exec, log or list)",
        OFFERED.join(", ")
    );
    Some(Rejection::new(id.clone(), METHOD_NOT_FOUND, message))
}

/// Whether `params` read as `T`; the reason and an example of good params when not.
fn check<T: DeserializeOwned>(params: Option<&Value>, example: &str) -> Result<(), String> {
    let Some(params) = params else {
        return Err(format!("params are missing; send params like {example}"));
    };
    T::deserialize(params).map(drop).map_err(|e| format!("{e}; send params like {example}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rejected(text: &str) -> Rejection {
        screen(text.as_bytes()).expect_err(text)
    }

    #[test]
    fn malformed_json_is_a_parse_error_without_an_id() {
        let r = rejected(r#"{"jsonrpc": "2.0", "id": 1, "method": "#);
        assert_eq!((r.code, &r.id), (PARSE_ERROR, &Value::Null));
        assert!(r.message.starts_with("parse error: EOF while parsing"), "{}", r.message);
        let reply: Value = serde_json::from_str(&r.to_json()).unwrap();
        assert_eq!(reply, json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": r.message}}));
    }

    #[test]
    fn what_is_not_a_json_rpc_object_is_an_invalid_request() {
        assert_eq!(rejected("[1, 2]").code, INVALID_REQUEST);
        assert!(rejected("[1, 2]").message.contains("batch"));
        assert_eq!(rejected("42").code, INVALID_REQUEST);
        let r = rejected(r#"{"id": 7, "method": "ping"}"#);
        assert_eq!((r.code, r.id), (INVALID_REQUEST, json!(7)));
        assert_eq!(rejected(r#"{"jsonrpc": "2.0", "id": 7, "method": 3}"#).code, INVALID_REQUEST);
    }

    #[test]
    fn bad_params_of_a_known_request_are_invalid_params_with_the_id_and_the_reason() {
        let r = rejected(r#"{"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": {"arguments": {}}}"#);
        assert_eq!((r.code, r.id), (INVALID_PARAMS, json!("a")));
        assert!(
            r.message.starts_with("invalid params for tools/call: missing field `name`; send params like {"),
            "{}",
            r.message
        );
        let r = rejected(
            r#"{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "build", "arguments": "x"}}"#,
        );
        assert!(r.message.contains("invalid type: string \"x\", expected a map"), "{}", r.message);
        let r = rejected(r#"{"jsonrpc": "2.0", "id": 3, "method": "tools/call"}"#);
        assert!(r.message.starts_with("invalid params for tools/call: params are missing"), "{}", r.message);
        let r = rejected(r#"{"jsonrpc": "2.0", "id": 4, "method": "resources/read", "params": {}}"#);
        assert!(r.message.contains("missing field `uri`"), "{}", r.message);
    }

    #[test]
    fn a_method_not_offered_is_named_with_what_is() {
        let request = json!({"jsonrpc": "2.0", "id": 9, "method": "prompts/list"});
        let r = unoffered(&request).expect("prompts/list is not offered");
        assert_eq!((r.code, r.id), (METHOD_NOT_FOUND, json!(9)));
        assert!(r.message.starts_with("method \"prompts/list\" is not offered by this server: it answers initialize,"));
        assert!(r.message.contains("tools/call, resources/list"), "{}", r.message);
        assert!(unoffered(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call"})).is_none());
        assert!(unoffered(&json!({"jsonrpc": "2.0", "method": "notifications/whatever"})).is_none());
        assert!(unoffered(&json!({"jsonrpc": "2.0", "id": 1, "result": {}})).is_none());
    }

    #[test]
    fn good_messages_notifications_and_responses_pass_unchanged() {
        for text in [
            r#"{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "build", "arguments": {"action": "list"}}}"#,
            r#"{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}"#,
            r#"{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"bogus": true}}"#,
            r#"{"jsonrpc": "2.0", "id": 0, "result": {"roots": []}}"#,
        ] {
            assert_eq!(screen(text.as_bytes()), Ok(serde_json::from_str(text).unwrap()), "{text}");
        }
    }
}
