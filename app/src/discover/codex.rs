//! Codex CLI's transcripts ("rollouts"): `<CODEX_HOME>/sessions/YYYY/MM/DD/rollout-*.jsonl`, one
//! JSON object a line, `{"timestamp", "type", "payload"}`. `session_meta` and `turn_context` name
//! the `cwd`; a `response_item` whose payload is a `function_call` (`name`, `arguments` as a JSON
//! string, `call_id`) or a `local_shell_call` is a command, and the `function_call_output` with
//! the same `call_id` is what the model read back. Before the envelope, a rollout's lines were the
//! items themselves, and the cwd was only in the `<environment_context>` message. docs/hooks.md
//! ("Transcripts") has where this was found.

use super::{ShellCall, mcp_command, output_text, through_buildvise_mcp, timestamp_ms};
use buildvise_engine::render::shell_words;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One rollout, read a line at a time.
#[derive(Default)]
pub struct Reader {
    /// The session's directory, as the last `session_meta` or `turn_context` named it.
    cwd: Option<PathBuf>,
    /// Calls waiting for their output, by `call_id`.
    waiting: HashMap<String, ShellCall>,
}

impl Reader {
    /// Reads one line; the calls whose output it carries go to `done`. A line that is not what
    /// this expects (cut short, another kind of record, another tool) is passed over.
    pub fn line(&mut self, line: &[u8], done: &mut Vec<ShellCall>) {
        // Only these records matter, and a rollout can be hundreds of megabytes.
        let wanted = ["function_call", "local_shell_call", "session_meta", "turn_context", "environment_context"];
        if !wanted.iter().any(|needle| memchr::memmem::find(line, needle.as_bytes()).is_some()) {
            return;
        }
        let Ok(record) = serde_json::from_slice::<Value>(line) else {
            return;
        };
        let item = match record["type"].as_str() {
            Some("session_meta" | "turn_context") => {
                if let Some(cwd) = record.pointer("/payload/cwd").and_then(Value::as_str) {
                    self.cwd = Some(PathBuf::from(cwd));
                }
                return;
            }
            Some("response_item") => &record["payload"],
            // The rollouts written before the envelope: the line is the item.
            Some(_) => &record,
            None => return,
        };
        match item["type"].as_str() {
            Some("function_call") => self.call(item, &record),
            Some("local_shell_call") => self.local_shell_call(item, &record),
            Some("function_call_output") => {
                let waiting = item["call_id"].as_str().and_then(|id| self.waiting.remove(id));
                if let Some(mut call) = waiting {
                    call.output = output_text(&item["output"]);
                    done.push(call);
                }
            }
            Some("message") if self.cwd.is_none() => self.cwd = environment_cwd(item),
            _ => {}
        }
    }

    /// The calls that never got an output (the session ended or was interrupted), with none.
    pub fn finish(self, done: &mut Vec<ShellCall>) {
        done.extend(self.waiting.into_values());
    }

    /// A `function_call` of one of the shell tools, or of buildvise's MCP tool.
    fn call(&mut self, item: &Value, record: &Value) {
        let (Some(name), Some(id)) = (item["name"].as_str(), item["call_id"].as_str()) else {
            return;
        };
        let args = match &item["arguments"] {
            Value::String(text) => serde_json::from_str(text).unwrap_or(Value::Null),
            other => other.clone(),
        };
        let (command, through_mcp) = match name.strip_prefix("functions.").unwrap_or(name) {
            // `shell` takes an argv; `shell_command` and `exec_command` a command line.
            "shell" | "container.exec" => match argv_line(&args["command"]) {
                Some(line) => (line, false),
                None => return,
            },
            "shell_command" | "exec_command" => match args["cmd"].as_str().or(args["command"].as_str()) {
                Some(line) => (line.to_string(), false),
                None => return,
            },
            name if through_buildvise_mcp(name) => (mcp_command(&args), true),
            _ => return,
        };
        let cwd = self.dir(args["workdir"].as_str());
        self.wait(id, ShellCall { command, cwd, output: String::new(), at_ms: timestamp_ms(record), through_mcp });
    }

    /// The Responses API's own shell call: an argv and a working directory.
    fn local_shell_call(&mut self, item: &Value, record: &Value) {
        let Some(id) = item["call_id"].as_str().or(item["id"].as_str()) else {
            return;
        };
        let Some(command) = argv_line(&item["action"]["command"]) else {
            return;
        };
        let cwd = self.dir(item["action"]["working_directory"].as_str());
        self.wait(
            id,
            ShellCall { command, cwd, output: String::new(), at_ms: timestamp_ms(record), through_mcp: false },
        );
    }

    fn wait(&mut self, id: &str, call: ShellCall) {
        self.waiting.insert(id.to_string(), call);
    }

    /// Where a call ran: its `workdir`, read against the session's directory, or that directory.
    fn dir(&self, workdir: Option<&str>) -> Option<PathBuf> {
        match (workdir.filter(|w| !w.is_empty()), &self.cwd) {
            (Some(workdir), Some(cwd)) => Some(cwd.join(workdir)),
            (Some(workdir), None) => Some(PathBuf::from(workdir)).filter(|w| w.is_absolute()),
            (None, cwd) => cwd.clone(),
        }
    }
}

/// The command line an argv stands for: the script of `bash -lc SCRIPT` (how Codex runs a line),
/// or the words quoted for a shell.
fn argv_line(argv: &Value) -> Option<String> {
    let argv: Vec<String> = argv.as_array()?.iter().map(|w| w.as_str().map(str::to_string)).collect::<Option<_>>()?;
    let shell = |program: &String| {
        let name = Path::new(program).file_name().and_then(|n| n.to_str()).unwrap_or_default();
        ["bash", "sh", "zsh"].contains(&name)
    };
    match argv.as_slice() {
        [] => None,
        [program, flag, script] if shell(program) && (flag == "-lc" || flag == "-c") => Some(script.clone()),
        words => Some(shell_words(words)),
    }
}

/// The `<cwd>` of an `<environment_context>` message, which older rollouts began with.
fn environment_cwd(item: &Value) -> Option<PathBuf> {
    let text = item["content"].as_array()?.iter().find_map(|c| c["text"].as_str())?;
    let rest = &text[text.find("<environment_context>")?..];
    let start = rest.find("<cwd>")? + "<cwd>".len();
    let end = rest[start..].find("</cwd>")?;
    Some(PathBuf::from(&rest[start..start + end]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(lines: &[&str]) -> Vec<ShellCall> {
        let mut reader = Reader::default();
        let mut done = Vec::new();
        for line in lines {
            reader.line(line.as_bytes(), &mut done);
        }
        reader.finish(&mut done);
        done
    }

    const META: &str = r#"{"timestamp":"2025-12-28T12:18:30.533Z","type":"session_meta","payload":{"id":"019b64e5-57fa-7463-b644-fba7e456f905","cwd":"/Users/macmini/Code/homelab-migration","originator":"codex_cli_rs","cli_version":"0.77.0"}}"#;

    #[test]
    fn an_exec_command_call_is_paired_with_its_output() {
        let call = r#"{"timestamp":"2026-05-02T21:41:21.666Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"git status --short --branch\",\"workdir\":\"/w/mvs\",\"yield_time_ms\":1000}","call_id":"call_o"}}"#;
        let output = r#"{"timestamp":"2026-05-02T21:41:22.036Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_o","output":"Chunk ID: c15eb7\nWall time: 0.2054 seconds\nProcess exited with code 0\nOriginal token count: 2358\nOutput:\n## main...origin/main"}}"#;
        let calls = read(&[META, call, output]);
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].command, "git status --short --branch");
        assert_eq!(calls[0].cwd.as_deref(), Some(Path::new("/w/mvs")));
        assert!(calls[0].output.ends_with("## main...origin/main"));
        assert_eq!(calls[0].at_ms, Some(1_777_758_081_666));
    }

    #[test]
    fn a_shell_argv_becomes_its_script_run_in_the_session_s_directory() {
        let call = r#"{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"cargo test\"],\"workdir\":\"crates/a\"}","call_id":"c1"}}"#;
        let output = r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"{\"output\":\"test result: ok\",\"metadata\":{\"exit_code\":0}}"}}"#;
        let calls = read(&[META, call, output]);
        assert_eq!(calls[0].command, "cargo test");
        assert_eq!(calls[0].cwd.as_deref(), Some(Path::new("/Users/macmini/Code/homelab-migration/crates/a")));
        assert!(calls[0].output.contains("test result: ok"));
    }

    #[test]
    fn an_argv_that_is_not_a_shell_script_is_quoted_back_into_a_line() {
        let call = r#"{"type":"response_item","payload":{"type":"local_shell_call","call_id":"c2","status":"completed","action":{"type":"exec","command":["ls","-la","my dir"],"working_directory":"/p"}}}"#;
        let calls = read(&[call]);
        assert_eq!(calls[0].command, "ls -la 'my dir'");
        assert_eq!(calls[0].cwd.as_deref(), Some(Path::new("/p")));
    }

    #[test]
    fn an_output_given_as_content_items_keeps_their_text() {
        let call = r#"{"type":"response_item","payload":{"type":"function_call","name":"shell_command","arguments":"{\"command\":\"npm test\"}","call_id":"c3"}}"#;
        let output = r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"c3","output":[{"type":"input_text","text":"Exit code: 1"},{"type":"input_text","text":"1 failed"}]}}"#;
        assert_eq!(read(&[call, output])[0].output, "Exit code: 1\n1 failed");
    }

    #[test]
    fn rollouts_before_the_envelope_are_read_with_the_cwd_of_their_environment_context() {
        let calls = read(&[
            r#"{"id":"44444444-4444-4444-8444-444444444444","timestamp":"2025-08-04T05:06:07.000Z","instructions":null}"#,
            r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n  <cwd>/old/project</cwd>\n  <shell>zsh</shell>\n</environment_context>"}]}"#,
            r#"{"record_type":"state"}"#,
            r#"{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"pytest -q\"]}","call_id":"call_abc"}"#,
            r#"{"type":"function_call_output","call_id":"call_abc","output":"{\"output\":\"1 passed\\n\",\"metadata\":{\"exit_code\":0,\"duration_seconds\":0.01}}"}"#,
        ]);
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].command, "pytest -q");
        assert_eq!(calls[0].cwd.as_deref(), Some(Path::new("/old/project")));
    }

    #[test]
    fn odd_lines_are_passed_over() {
        let call = r#"{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"make\"}","call_id":"c4"}}"#;
        let output =
            r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"c4","output":"done"}}"#;
        let calls = read(&[
            META,
            &call[..30],
            r#"{"type":"world_state","payload":{"function_call":true}}"#,
            r#"{"type":"response_item","payload":{"type":"function_call","name":"update_plan","arguments":"{}","call_id":"c5"}}"#,
            r#"{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"not json","call_id":"c6"}}"#,
            r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"c5","output":"plan updated"}}"#,
            r#"{"type":"response_item","payload":{"type":"custom_tool_call","name":"apply_patch","input":"*** Begin Patch","call_id":"c7"}}"#,
            call,
            output,
        ]);
        assert_eq!(calls.len(), 1, "{calls:?}");
        assert_eq!((calls[0].command.as_str(), calls[0].output.as_str()), ("make", "done"));
    }

    #[test]
    fn buildvise_s_mcp_tool_is_a_call_through_buildvise() {
        let call = r#"{"type":"response_item","payload":{"type":"function_call","name":"mcp__buildvise__build","arguments":"{\"action\":\"exec\",\"tool\":\"npm.test\"}","call_id":"c8"}}"#;
        let calls = read(&[call]);
        assert_eq!(calls[0].command, "build exec npm.test");
        assert!(calls[0].through_mcp);
    }
}
