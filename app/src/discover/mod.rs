//! `discover`: the shell commands agents ran on this machine, read from the transcripts Claude
//! Code and Codex keep, with the tokens their output took, and whether buildvise would have run
//! them. It only reads; nothing leaves the machine.
//!
//! A command is judged as the hook would judge it today ([`App::rewrite`]) in the directory the
//! transcript says it ran in. When that directory is gone (a deleted checkout, another machine's
//! transcript), only its words are left to judge: a command counts as handled when it starts with
//! the words a tool declares and the operator's settings allow that tool, without the project's
//! own settings or the plugin's check of the arguments. The answer says how many were judged so.

mod claude;
mod codex;
mod report;

pub use report::{Discovery, Row, Total, Transcripts};

use super::App;
use buildvise_engine::access::Access;
use buildvise_engine::shell_line;
use buildvise_engine::tools;
use serde_json::Value;
use std::collections::HashMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};

/// The agent clients whose transcripts `discover` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Client {
    Claude,
    Codex,
}

/// What to read, and how much to tell.
#[derive(Debug, Clone)]
pub struct DiscoverCall {
    /// One client's transcripts only.
    pub client: Option<Client>,
    /// Leave out commands run before this time (milliseconds since the epoch).
    pub since_ms: Option<u64>,
    /// The most commands each list shows.
    pub limit: usize,
}

/// One shell command an agent ran, and what it read back.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ShellCall {
    /// The line as the agent typed it (for buildvise's MCP tool, `build ACTION TOOL`).
    command: String,
    /// Where it ran, as the transcript says.
    cwd: Option<PathBuf>,
    /// The output the agent read.
    output: String,
    at_ms: Option<u64>,
    /// A call of buildvise's MCP tool rather than of the shell.
    through_mcp: bool,
}

/// What buildvise makes of a command.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Verdict {
    /// It went through buildvise already.
    Through,
    /// buildvise would have run it; `key` is the words of its tool's command (`cargo test`).
    Handled { key: String, by_words: bool },
    /// buildvise would have left it as typed; `key` is its leading words.
    Unhandled { key: String },
}

impl App {
    /// The shell commands in the transcripts of this machine's agent clients, judged.
    pub fn discover(&self, call: &DiscoverCall) -> Discovery {
        let access = Access::anywhere();
        let mut tally = report::Tally::default();
        // An agent runs the same few lines in the same few places: each is judged once.
        let mut judged: HashMap<(String, Option<PathBuf>), Verdict> = HashMap::new();
        for (client, root) in roots(call.client) {
            tally.looked_in(&root);
            for file in transcripts(client, &root) {
                if call.since_ms.is_some_and(|since| modified_ms(&file).is_some_and(|at| at < since)) {
                    continue;
                }
                let Ok(opened) = std::fs::File::open(&file) else {
                    continue;
                };
                tally.transcript(client);
                read(client, std::io::BufReader::with_capacity(1 << 16, opened), |shell| {
                    if call.since_ms.is_some_and(|since| shell.at_ms.is_some_and(|at| at < since)) {
                        return;
                    }
                    let verdict = judged
                        .entry((shell.command.clone(), shell.cwd.clone()))
                        .or_insert_with(|| self.judge(&access, &shell))
                        .clone();
                    tally.add(verdict, crate::tokens::count(&shell.output));
                });
            }
        }
        tally.finish(call.limit)
    }

    /// Whether buildvise would run `shell`: the hook's own decision where it ran, else its words.
    fn judge(&self, access: &Access, shell: &ShellCall) -> Verdict {
        if shell.through_mcp || runs_buildvise(&shell.command) {
            return Verdict::Through;
        }
        let key = || leading_words(&shell.command);
        match shell.cwd.as_deref().filter(|dir| dir.is_dir()) {
            Some(dir) => match self.rewrite(access, &shell.command, dir, "buildvise") {
                Some(_) => {
                    Verdict::Handled { key: self.declared(&shell.command, false).unwrap_or_else(key), by_words: false }
                }
                None => Verdict::Unhandled { key: key() },
            },
            None => match self.declared(&shell.command, true) {
                Some(key) => Verdict::Handled { key, by_words: true },
                None => Verdict::Unhandled { key: key() },
            },
        }
    }

    /// The words of the first command of `line` that a tool declares (`cargo test`). With
    /// `allowed`, only a tool the operator's settings would let run those arguments counts, and
    /// the line must read as the hook reads it, a trimmed last command included.
    fn declared(&self, line: &str, allowed: bool) -> Option<String> {
        let read = shell_line::read(line)?;
        if read.commands.iter().any(|c| c.assignments.contains(&crate::HOOK_OFF)) {
            return None;
        }
        let (all, _) = tools::all(&self.registry, &self.config);
        let matched = |words: &[String]| {
            let (tool, prefix) = all
                .iter()
                .flat_map(|tool| tool.spec.commands.iter().map(move |prefix| (tool, prefix)))
                .filter(|(_, prefix)| words.starts_with(prefix))
                .max_by_key(|(_, prefix)| prefix.len())?;
            let args = &words[prefix.len()..];
            let runs = !allowed
                || (self.config.allows(&tool.spec)
                    && tool.spec.unavailable.is_none()
                    && !self.config.refuses(&tool.spec, args)
                    && (self.config.allow_mutating || !tool.spec.mutates(args)));
            runs.then(|| prefix.join(" "))
        };
        let last = read.commands.last()?;
        if allowed && read.lines_wanted.is_some() && matched(&last.words).is_none() {
            return None;
        }
        read.commands.iter().find_map(|command| matched(&command.words))
    }
}

/// Where each client keeps its transcripts: `CLAUDE_CONFIG_DIR` (else `~/.claude`) and
/// `CODEX_HOME` (else `~/.codex`), as the clients read them.
fn roots(only: Option<Client>) -> Vec<(Client, PathBuf)> {
    let home = std::env::var_os(if cfg!(windows) { "USERPROFILE" } else { "HOME" }).map(PathBuf::from);
    let dir = |var: &str, default: &str| {
        std::env::var_os(var)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(default)))
    };
    let mut roots = Vec::new();
    if let Some(claude) = dir("CLAUDE_CONFIG_DIR", ".claude") {
        roots.push((Client::Claude, claude.join("projects")));
    }
    if let Some(codex) = dir("CODEX_HOME", ".codex") {
        roots.push((Client::Codex, codex.join("sessions")));
        roots.push((Client::Codex, codex.join("archived_sessions")));
    }
    roots.retain(|(client, _)| only.is_none_or(|only| only == *client));
    roots
}

/// The transcript files under `root`, in order. Symbolic links to directories are not followed
/// (they could loop), and Claude Code's `tool-results` folders hold outputs, not transcripts.
fn transcripts(client: Client, root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let (path, name) = (entry.path(), entry.file_name());
            let name = name.to_string_lossy();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() && name != "tool-results" {
                dirs.push(path);
            } else if !kind.is_dir()
                && name.ends_with(".jsonl")
                && (client == Client::Claude || name.starts_with("rollout-"))
            {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

fn modified_ms(file: &Path) -> Option<u64> {
    let modified = std::fs::metadata(file).ok()?.modified().ok()?;
    Some(modified.duration_since(std::time::UNIX_EPOCH).ok()?.as_millis() as u64)
}

/// Reads a transcript a line at a time, never the whole file, handing each finished call on.
fn read(client: Client, mut input: impl BufRead, mut each: impl FnMut(ShellCall)) {
    enum Reader {
        Claude(claude::Reader),
        Codex(codex::Reader),
    }
    let mut reader = match client {
        Client::Claude => Reader::Claude(claude::Reader::default()),
        Client::Codex => Reader::Codex(codex::Reader::default()),
    };
    let (mut line, mut done) = (Vec::new(), Vec::new());
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        match &mut reader {
            Reader::Claude(r) => r.line(&line, &mut done),
            Reader::Codex(r) => r.line(&line, &mut done),
        }
        done.drain(..).for_each(&mut each);
    }
    match reader {
        Reader::Claude(r) => r.finish(&mut done),
        Reader::Codex(r) => r.finish(&mut done),
    }
    done.into_iter().for_each(each);
}

/// A record's `timestamp` (RFC 3339, as both clients write it) in milliseconds since the epoch.
fn timestamp_ms(record: &Value) -> Option<u64> {
    let text = record["timestamp"].as_str()?;
    u64::try_from(chrono::DateTime::parse_from_rfc3339(text).ok()?.timestamp_millis()).ok()
}

/// A tool result's text: a string, or the text of its content blocks (images left out), one
/// block a line. Some Codex versions wrapped it as `{"content": …}`.
fn output_text(output: &Value) -> String {
    match output {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n"),
        Value::Object(fields) => fields.get("content").map(output_text).unwrap_or_default(),
        _ => String::new(),
    }
}

/// Whether a tool name is buildvise's MCP tool, as a client names a server's tool
/// (`mcp__buildvise__build`).
fn through_buildvise_mcp(name: &str) -> bool {
    name.contains("buildvise") && name.ends_with("build")
}

/// An MCP call of buildvise's tool, shown as `build ACTION TOOL`.
fn mcp_command(input: &Value) -> String {
    ["build", input["action"].as_str().unwrap_or("exec"), input["tool"].as_str().unwrap_or_default()]
        .join(" ")
        .trim_end()
        .to_string()
}

/// Whether a line runs buildvise itself (`buildvise exec …`, or the hook's rewrite of a line).
fn runs_buildvise(line: &str) -> bool {
    let is_buildvise = |word: &str| Path::new(word).file_name().is_some_and(|n| n == "buildvise");
    match shell_line::read(line) {
        Some(read) => read.commands.iter().any(|c| c.words.first().is_some_and(|w| is_buildvise(w))),
        None => line.split_whitespace().find(|w| !w.contains('=')).is_some_and(is_buildvise),
    }
}

/// The words a command is known by: its program, and the word after it when that reads as a
/// subcommand (`git status`, not `cat notes.txt`), one more after `run`, `exec` or `-m`
/// (`npm run build`, `python -m pytest`). A leading `cd DIR &&` and `VAR=value` are skipped.
fn leading_words(line: &str) -> String {
    let mut words = line.split_whitespace().peekable();
    let mut program = None;
    while let Some(word) = words.next() {
        if word == "cd" && words.peek().is_some() {
            words.next();
            if words.peek() == Some(&"&&") || words.peek() == Some(&";") {
                words.next();
            }
        } else if word.find('=').is_none_or(|at| at == 0) {
            program = Some(word);
            break;
        }
    }
    let Some(program) = program else {
        return line.trim().chars().take(40).collect();
    };
    let name = Path::new(program).file_name().and_then(|n| n.to_str()).unwrap_or(program);
    let mut key = vec![name];
    let subcommand = |w: &&str| {
        w.len() <= 24
            && w.starts_with(|c: char| c.is_ascii_lowercase())
            && w.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_' || c == ':')
    };
    match words.next() {
        Some(flag @ "-m") => {
            if let Some(module) = words.next().filter(subcommand) {
                key.extend([flag, module]);
            }
        }
        Some(word) if subcommand(&word) => {
            key.push(word);
            if ["run", "exec", "run-script"].contains(&word)
                && let Some(next) = words.next().filter(subcommand)
            {
                key.push(next);
            }
        }
        _ => {}
    }
    key.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_is_known_by_its_program_and_subcommand() {
        for (line, key) in [
            ("git status --short", "git status"),
            ("ls -la", "ls"),
            ("cat notes.txt", "cat"),
            ("npm run build -- --watch", "npm run build"),
            ("python3 -m pytest -q tests", "python3 -m pytest"),
            ("cd web && RUST_LOG=1 /usr/bin/cargo test -p x", "cargo test"),
            ("FOO=1 make", "make"),
            ("rg -n TODO src", "rg"),
        ] {
            assert_eq!(leading_words(line), key, "{line}");
        }
    }

    #[test]
    fn a_line_that_runs_buildvise_is_seen_as_such() {
        assert!(runs_buildvise("buildvise exec cargo.test -- --quiet"));
        assert!(runs_buildvise("cd x && RUST_LOG=1 /opt/bin/buildvise exec npm.test"));
        assert!(runs_buildvise("buildvise log r1 | grep x"));
        assert!(!runs_buildvise("cargo test"));
        assert!(!runs_buildvise("echo buildvise"));
    }

    #[test]
    fn a_transcript_is_read_a_line_at_a_time_to_its_last_line_even_without_an_end() {
        let text = concat!(
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}]}}"#,
            "\n",
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"a"}]}}"#,
        );
        let mut calls = Vec::new();
        read(Client::Claude, text.as_bytes(), |c| calls.push(c));
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].output, "a");
    }
}
