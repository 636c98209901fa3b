//! What reading a run cost the agent: `answers.jsonl`, every answer a surface sent about the run
//! (the exec's, then each `log` read of it), one JSON line each, appended once it was sent; and
//! `tokens.json`, the tokens of those answers and of the raw log, counted by the first `gain`
//! after them and kept.
//!
//! Neither file is read by anything but `gain`, and both may be missing (a run of a buildvise
//! that did not record answers, a run nobody asked `gain` about), so the store's layout is the
//! same with or without them.

use super::{Store, StoreError, files};
use serde::{Deserialize, Serialize};
use std::io::Write;

const ANSWERS_FILE: &str = "answers.jsonl";
const TOKENS_FILE: &str = "tokens.json";

/// Which call an answer was to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AnsweredCall {
    Exec,
    Log,
}

/// How an answer reached the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Via {
    /// The command line's text, as a pipe gets it.
    Cli,
    /// The command line's `--json`.
    CliJson,
    /// An MCP tool result.
    Mcp,
}

/// One answer as sent: its parts are the texts the agent's context may hold (one for the command
/// line; the text content and the structured content's JSON for MCP).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SentAnswer {
    pub call: AnsweredCall,
    pub via: Via,
    pub parts: Vec<String>,
}

/// A run's tokens as `gain` counted them, with the sizes of the files they were counted from:
/// a file that has grown since (an answer to a later `log`) is counted again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenCount {
    /// o200k tokens of `output.log`, of `log_bytes` bytes.
    pub raw: u64,
    pub log_bytes: u64,
    /// o200k tokens of every part of every answer of `answers.jsonl`, of `answers_bytes` bytes.
    pub answers: u64,
    pub answers_bytes: u64,
    /// The project root of the run's directory when the run was first counted (the directory
    /// may be gone by the next `gain`).
    pub project: String,
}

impl Store {
    /// Appends an answer sent about run `id` to its `answers.jsonl`, in one write, so that
    /// answers sent at once by several processes never interleave.
    pub fn append_answer(&self, id: &str, answer: &SentAnswer) -> Result<(), StoreError> {
        let path = self.run_dir(id)?.join(ANSWERS_FILE);
        let mut line = serde_json::to_vec(answer)
            .map_err(|e| StoreError::Corrupt { path: path.clone(), detail: e.to_string() })?;
        line.push(b'\n');
        files::private_options()
            .append(true)
            .create(true)
            .open(&path)
            .and_then(|mut file| file.write_all(&line))
            .map_err(|e| StoreError::io(&path, e))
    }

    /// The answers sent about run `id`, oldest first; a line a failed write left half-written is
    /// passed over.
    pub fn answers(&self, id: &str) -> Result<Vec<SentAnswer>, StoreError> {
        let path = self.run_dir(id)?.join(ANSWERS_FILE);
        let bytes = match super::files::read_bounded(&path) {
            Ok(bytes) => bytes,
            Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Vec::new());
            }
            Err(e) => return Err(e),
        };
        Ok(bytes.split(|&b| b == b'\n').filter_map(|line| serde_json::from_slice(line).ok()).collect())
    }

    /// The sizes of run `id`'s raw log and of its answers (0 for a file that is not there).
    pub fn counted_sizes(&self, id: &str) -> Result<(u64, u64), StoreError> {
        let dir = self.run_dir(id)?;
        let size = |name: &str| match std::fs::metadata(dir.join(name)) {
            Ok(meta) => Ok(meta.len()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
            Err(e) => Err(StoreError::io(&dir.join(name), e)),
        };
        Ok((size(super::log::LOG_FILE)?, size(ANSWERS_FILE)?))
    }

    /// Run `id`'s raw log, for counting: the file as it is on disk.
    pub fn open_log(&self, id: &str) -> Result<std::fs::File, StoreError> {
        let path = self.run_dir(id)?.join(super::log::LOG_FILE);
        super::files::open_regular(&path)
    }

    /// The tokens kept for run `id`, if any; a damaged file reads as none, to be counted again.
    pub fn token_count(&self, id: &str) -> Option<TokenCount> {
        let path = self.run_dir(id).ok()?.join(TOKENS_FILE);
        path.is_file().then(|| files::read_json(&path).ok()).flatten()
    }

    pub fn write_token_count(&self, id: &str, count: &TokenCount) -> Result<(), StoreError> {
        files::write_json(&self.run_dir(id)?.join(TOKENS_FILE), count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::RunMeta;

    fn answer(call: AnsweredCall, via: Via, parts: &[&str]) -> SentAnswer {
        SentAnswer { call, via, parts: parts.iter().map(|p| p.to_string()).collect() }
    }

    #[test]
    fn answers_are_appended_and_read_back_in_order() {
        let root = tempfile::tempdir().unwrap();
        let store = Store::open(root.path()).unwrap();
        let run = store.create_run().unwrap();
        store.write_meta(&run.dir, &RunMeta::starting(&run.id, "t", "sh", &[], "/p")).unwrap();
        assert_eq!(store.answers(&run.id).unwrap(), []);
        assert_eq!(store.counted_sizes(&run.id).unwrap(), (0, 0));
        let exec = answer(AnsweredCall::Exec, Via::Mcp, &["ok · abc", "{\"runId\":\"abc\"}"]);
        let page = answer(AnsweredCall::Log, Via::Cli, &["lines 1-1 of 1\n1|x\n"]);
        store.append_answer(&run.id, &exec).unwrap();
        store.append_answer(&run.id, &page).unwrap();
        // A write the disk cut short leaves half a line, which is passed over.
        let path = run.dir.join(ANSWERS_FILE);
        let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(b"{\"call\":\"log\",\"via\"").unwrap();
        assert_eq!(store.answers(&run.id).unwrap(), [exec, page]);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("{\"call\":\"exec\",\"via\":\"mcp\",\"parts\":[\"ok · abc\""), "{text}");
        #[cfg(unix)] // Windows keeps no mode: the profile's access list applies (see `files`)
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
    }

    #[test]
    fn a_token_count_is_kept_and_a_damaged_one_reads_as_none() {
        let root = tempfile::tempdir().unwrap();
        let store = Store::open(root.path()).unwrap();
        let run = store.create_run().unwrap();
        store.write_meta(&run.dir, &RunMeta::starting(&run.id, "t", "sh", &[], "/p")).unwrap();
        assert_eq!(store.token_count(&run.id), None);
        let count = TokenCount { raw: 10, log_bytes: 40, answers: 3, answers_bytes: 50, project: "/p".into() };
        store.write_token_count(&run.id, &count).unwrap();
        assert_eq!(store.token_count(&run.id), Some(count));
        std::fs::write(run.dir.join(TOKENS_FILE), b"{\"raw\":").unwrap();
        assert_eq!(store.token_count(&run.id), None);
        assert!(store.append_answer("zzzzzzzz", &answer(AnsweredCall::Exec, Via::Cli, &["x"])).is_err());
    }
}
