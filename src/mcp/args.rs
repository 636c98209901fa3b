//! Reading the `build` tool's arguments. Every mistake becomes one sentence that says what to
//! send instead.

use buildvise_app::{Detail, LogCall, StreamFilter, check_max_lines};
use buildvise_plugin_api::Stream;
use serde_json::{Map, Value};

const FIELDS: &[&str] = &[
    "action",
    "tool",
    "args",
    "cwd",
    "timeout",
    "detail",
    "maxLines",
    "confirm",
    "runId",
    "startLine",
    "lineCount",
    "stream",
    "grep",
];

/// A validated call.
#[derive(Debug, Clone)]
pub enum Call {
    Exec(ExecArgs),
    Log(LogCall),
    /// `cwd`: where the caller works, whose config files may define tools.
    List {
        cwd: Option<String>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct ExecArgs {
    pub tool: String,
    pub args: Vec<String>,
    pub cwd: Option<String>,
    pub timeout_secs: Option<u64>,
    /// The timeout as sent, for a note when the server's cap shortens it.
    pub timeout_sent: Option<String>,
    pub detail: Detail,
    pub max_lines: Option<u32>,
    pub confirm: bool,
}

/// A valid call, and notes for its answer: values the call sent that are read otherwise than
/// written (a `startLine` of 0), so that the caller is not left to guess.
pub fn parse(arguments: Option<&Map<String, Value>>) -> Result<(Call, Vec<String>), String> {
    let mut notes = Vec::new();
    if let Some(a) = arguments
        && a.get("action").and_then(Value::as_str) == Some("log")
        && integer(a, "startLine")? == Some(0)
    {
        notes.push("startLine 0 was read as 1: lines count from 1, and a negative startLine from the end".to_string());
    }
    Ok((call(arguments)?, notes))
}

fn call(arguments: Option<&Map<String, Value>>) -> Result<Call, String> {
    let empty = Map::new();
    let a = arguments.unwrap_or(&empty);
    if let Some(unknown) = a.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        return Err(format!("unknown argument {unknown:?}; the arguments are {}", FIELDS.join(", ")));
    }
    let action = string(a, "action")?.ok_or("missing action: send action \"exec\", \"log\" or \"list\"")?;
    match action.as_str() {
        "list" => Ok(Call::List { cwd: string(a, "cwd")? }),
        "exec" => Ok(Call::Exec(ExecArgs {
            tool: string(a, "tool")?.ok_or("exec needs tool: send a tool name from list, e.g. \"cargo.build\"")?,
            args: strings(a, "args")?,
            cwd: string(a, "cwd")?,
            timeout_secs: timeout(a)?,
            timeout_sent: a.get("timeout").filter(|t| t.is_number()).map(Value::to_string),
            detail: detail(a)?.unwrap_or_default(),
            max_lines: max_lines(a)?,
            confirm: boolean(a, "confirm")?.unwrap_or(false),
        })),
        "log" => Ok(Call::Log(LogCall {
            run_id: string(a, "runId")?.ok_or("log needs runId: send the runId an exec answer gave")?,
            start: integer(a, "startLine")?.unwrap_or(1),
            count: match integer(a, "lineCount")? {
                Some(n) if n < 1 => return Err(format!("lineCount must be at least 1, got {n}")),
                n => n.map(|n| n as u64),
            },
            stream: match string(a, "stream")?.as_deref() {
                None | Some("both") => StreamFilter::Both,
                Some("stdout") => StreamFilter::Only(Stream::Stdout),
                Some("stderr") => StreamFilter::Only(Stream::Stderr),
                Some(other) => return Err(format!("stream must be \"stdout\", \"stderr\" or \"both\", got {other:?}")),
            },
            grep: string(a, "grep")?,
            detail: detail(a)?,
            max_lines: max_lines(a)?,
        })),
        other => Err(format!("unknown action {other:?}: send action \"exec\", \"log\" or \"list\"")),
    }
}

fn string(a: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match a.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(format!("{key} must be a string, got {other}")),
    }
}

fn strings(a: &Map<String, Value>, key: &str) -> Result<Vec<String>, String> {
    match a.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str().map(str::to_string).ok_or_else(|| format!("{key} must be an array of strings, got item {v}"))
            })
            .collect(),
        // A single string is a common slip; splitting it would guess at quoting, so say what to send.
        Some(Value::String(s)) => Err(format!(
            "{key} must be an array of strings, e.g. [{}]",
            s.split_whitespace().map(|w| format!("{w:?}")).collect::<Vec<_>>().join(", ")
        )),
        Some(other) => Err(format!("{key} must be an array of strings, got {other}")),
    }
}

fn integer(a: &Map<String, Value>, key: &str) -> Result<Option<i64>, String> {
    match a.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n.as_i64().map(Some).ok_or_else(|| format!("{key} must be a whole number, got {n}")),
        Some(other) => Err(format!("{key} must be a whole number, got {other}")),
    }
}

fn boolean(a: &Map<String, Value>, key: &str) -> Result<Option<bool>, String> {
    match a.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(other) => Err(format!("{key} must be true or false, got {other}")),
    }
}

fn timeout(a: &Map<String, Value>) -> Result<Option<u64>, String> {
    match a.get("timeout") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match n.as_f64() {
            // Saturates: a timeout past u64 seconds is capped by the config like any long one.
            Some(s) if s > 0.0 => Ok(Some(s.ceil() as u64)),
            _ => Err(format!("timeout must be a positive number of seconds, got {n}")),
        },
        Some(other) => Err(format!("timeout must be a number of seconds, got {other}")),
    }
}

fn detail(a: &Map<String, Value>) -> Result<Option<Detail>, String> {
    match string(a, "detail")?.as_deref() {
        None => Ok(None),
        Some("summary") => Ok(Some(Detail::Summary)),
        Some("standard") => Ok(Some(Detail::Standard)),
        Some("full") => Ok(Some(Detail::Full)),
        Some(other) => Err(format!("detail must be \"summary\", \"standard\" or \"full\", got {other:?}")),
    }
}

fn max_lines(a: &Map<String, Value>) -> Result<Option<u32>, String> {
    match a.get("maxLines") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match n.as_i64() {
            Some(n) => check_max_lines(n).map(Some).map_err(|e| e.to_string()),
            None => Err(format!("maxLines must be a whole number between 1 and 10000, got {n}")),
        },
        Some(other) => Err(format!("maxLines must be a whole number between 1 and 10000, got {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(v: Value) -> Result<Call, String> {
        parse(v.as_object()).map(|(call, _)| call)
    }

    #[test]
    fn valid_calls() {
        assert!(matches!(call(json!({"action": "list"})).unwrap(), Call::List { cwd: None }));
        let Call::Exec(e) =
            call(json!({"action": "exec", "tool": "cargo.test", "args": ["--", "x"], "maxLines": 50, "timeout": 2.5}))
                .unwrap()
        else {
            panic!("not exec")
        };
        assert_eq!((e.tool.as_str(), e.args.len(), e.max_lines, e.timeout_secs), ("cargo.test", 2, Some(50), Some(3)));
        let Call::Log(l) =
            call(json!({"action": "log", "runId": "abcdefgh", "startLine": -5, "stream": "stderr"})).unwrap()
        else {
            panic!("not log")
        };
        assert_eq!((l.start, l.stream), (-5, StreamFilter::Only(Stream::Stderr)));
    }

    #[test]
    fn a_start_line_of_zero_is_read_as_one_and_the_answer_says_so() {
        let (_, notes) = parse(json!({"action": "log", "runId": "abcdefgh", "startLine": 0}).as_object()).unwrap();
        assert_eq!(notes, ["startLine 0 was read as 1: lines count from 1, and a negative startLine from the end"]);
        let (_, notes) = parse(json!({"action": "log", "runId": "abcdefgh", "startLine": 1}).as_object()).unwrap();
        assert!(notes.is_empty());
    }

    #[test]
    fn errors_say_what_to_send() {
        let cases = [
            (json!({}), "missing action: send action"),
            (json!({"action": "run"}), "unknown action \"run\": send action"),
            (json!({"action": "exec"}), "exec needs tool"),
            (json!({"action": "log"}), "log needs runId"),
            (json!({"action": "exec", "tool": "x", "maxLines": 0}), "maxLines must be between 1 and 10000, got 0"),
            (json!({"action": "exec", "tool": "x", "maxLines": 20000}), "maxLines must be between 1 and 10000"),
            (json!({"action": "exec", "tool": "x", "maxLines": "50"}), "maxLines must be a whole number"),
            (
                json!({"action": "exec", "tool": "x", "args": "--release -p a"}),
                "args must be an array of strings, e.g. [\"--release\", \"-p\", \"a\"]",
            ),
            (
                json!({"action": "exec", "tool": "x", "detail": "verbose"}),
                "detail must be \"summary\", \"standard\" or \"full\"",
            ),
            (json!({"action": "list", "verbose": true}), "unknown argument \"verbose\""),
            (json!({"action": "log", "runId": "x", "lineCount": 0}), "lineCount must be at least 1"),
            (json!({"action": "exec", "tool": "x", "timeout": -1}), "timeout must be a positive number"),
        ];
        for (args, expected) in cases {
            let err = call(args.clone()).unwrap_err();
            assert!(err.contains(expected), "{args}: {err}");
        }
    }
}
