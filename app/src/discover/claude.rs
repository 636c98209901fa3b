//! Claude Code's transcripts: `<config dir>/projects/<project>/<session>.jsonl`, one JSON object a
//! line. An `assistant` line's `message.content` holds `tool_use` blocks (`id`, `name`, `input`);
//! the `user` line that answers carries a `tool_result` block with the same `tool_use_id`, its
//! `content` a string or a list of blocks. Every line names its `cwd` and `timestamp`.
//! docs/hooks.md ("Transcripts") has where this was found.

use super::{ShellCall, mcp_command, output_text, through_buildvise_mcp, timestamp_ms};
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;

/// The shell tool's name in a `tool_use` block.
const SHELL: &str = "Bash";

/// One transcript, read a line at a time.
#[derive(Default)]
pub struct Reader {
    /// Calls waiting for their result, by `tool_use` id.
    waiting: HashMap<String, ShellCall>,
}

impl Reader {
    /// Reads one line; the calls whose result it carries go to `done`. A line that is not what
    /// this expects (cut short, another kind of record, another tool) is passed over.
    pub fn line(&mut self, line: &[u8], done: &mut Vec<ShellCall>) {
        // Most lines are prose or bookkeeping, and a transcript can be hundreds of megabytes:
        // only a line with a tool block is worth parsing.
        let finder = |needle: &str| memchr::memmem::find(line, needle.as_bytes()).is_some();
        if !finder("\"tool_use\"") && !finder("\"tool_result\"") {
            return;
        }
        let Ok(record) = serde_json::from_slice::<Value>(line) else {
            return;
        };
        let Some(blocks) = record.pointer("/message/content").and_then(Value::as_array) else {
            return;
        };
        match record["type"].as_str() {
            Some("assistant") => {
                for block in blocks.iter().filter(|b| b["type"] == "tool_use") {
                    let (Some(id), Some(name)) = (block["id"].as_str(), block["name"].as_str()) else {
                        continue;
                    };
                    let (command, through_mcp) = match name {
                        SHELL => match block.pointer("/input/command").and_then(Value::as_str) {
                            Some(command) => (command.to_string(), false),
                            None => continue,
                        },
                        name if through_buildvise_mcp(name) => (mcp_command(&block["input"]), true),
                        _ => continue,
                    };
                    let call = ShellCall {
                        command,
                        cwd: record["cwd"].as_str().map(PathBuf::from),
                        output: String::new(),
                        at_ms: timestamp_ms(&record),
                        through_mcp,
                    };
                    self.waiting.insert(id.to_string(), call);
                }
            }
            Some("user") => {
                for block in blocks.iter().filter(|b| b["type"] == "tool_result") {
                    let waiting = block["tool_use_id"].as_str().and_then(|id| self.waiting.remove(id));
                    if let Some(mut call) = waiting {
                        call.output = output_text(&block["content"]);
                        done.push(call);
                    }
                }
            }
            _ => {}
        }
    }

    /// The calls that never got a result (the session ended or was interrupted), with no output.
    pub fn finish(self, done: &mut Vec<ShellCall>) {
        done.extend(self.waiting.into_values());
    }
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

    const CALL: &str = r#"{"type":"assistant","cwd":"/p","timestamp":"2026-01-23T17:19:55.583Z","message":{"role":"assistant","content":[{"type":"text","text":"Running the tests."},{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"cargo test","description":"Run the tests"}}]}}"#;

    #[test]
    fn a_bash_call_is_paired_with_its_result_given_as_a_string() {
        let result = r#"{"type":"user","cwd":"/p","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"test result: ok","is_error":false}]}}"#;
        let calls = read(&[CALL, result]);
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].command, "cargo test");
        assert_eq!(calls[0].cwd.as_deref(), Some(std::path::Path::new("/p")));
        assert_eq!(calls[0].output, "test result: ok");
        assert_eq!(calls[0].at_ms, Some(1_769_188_795_583));
        assert!(!calls[0].through_mcp);
    }

    #[test]
    fn a_result_given_as_content_blocks_keeps_their_text_and_leaves_images_out() {
        let result = r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"a"},{"type":"image","source":{"type":"base64","data":"iVBORw0KGgo="}},{"type":"text","text":"b"}]}]}}"#;
        assert_eq!(read(&[CALL, result])[0].output, "a\nb");
    }

    #[test]
    fn odd_lines_are_passed_over() {
        let result =
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"ok"}]}}"#;
        let calls = read(&[
            &CALL[..CALL.len() / 2],
            CALL,
            "not json at all",
            r#"{"type":"file-history-snapshot","snapshot":{}}"#,
            r#"{"type":"user","message":{"content":"a prompt that mentions \"tool_result\""}}"#,
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"toolu_2","name":"Read","input":{"file_path":"/x"}}]}}"#,
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_9","content":"no call"}]}}"#,
            &result[..20],
            result,
        ]);
        assert_eq!(calls.len(), 1, "{calls:?}");
        assert_eq!(calls[0].output, "ok");
    }

    #[test]
    fn a_call_without_a_result_counts_with_no_output() {
        let calls = read(&[CALL]);
        assert_eq!((calls.len(), calls[0].output.as_str()), (1, ""));
    }

    #[test]
    fn buildvise_s_mcp_tool_is_a_call_through_buildvise() {
        let call = r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"toolu_3","name":"mcp__buildvise__build","input":{"action":"exec","tool":"cargo.test"}}]}}"#;
        let result = r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_3","content":[{"type":"text","text":"ok 3 passed"}]}]}}"#;
        let calls = read(&[call, result]);
        assert_eq!(calls[0].command, "build exec cargo.test");
        assert!(calls[0].through_mcp);
        assert_eq!(calls[0].output, "ok 3 passed");
    }
}
