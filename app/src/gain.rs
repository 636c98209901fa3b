//! `gain`: the tokens buildvise saved the agent, run by run: the raw log (what the agent would
//! have read running the command itself) against every answer it got about the run, the exec's
//! and each `log` read of it, which surfaces record with [`App::sent`] as they send them.
//!
//! Nothing is counted on the exec path: loading the tokenizer alone takes longer than an exec. A
//! surface hands over the text it sent, which is appended to the run's `answers.jsonl` after the
//! answer is out; the first `gain` after a run counts its log and its answers and keeps the
//! counts with the run (`tokens.json`), counting again only a file that has grown since (the
//! answer to a later `log`). A run with no answer on record is left out and said to be.

use super::tokens::{self, Source};
use super::{App, AppError};
use buildvise_engine::gain::{self, BadSince, CountedRun, Gain};
use buildvise_engine::store::{AnsweredCall, RunMeta, RunStatus, SentAnswer, TokenCount, Via};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// An answer as a surface sent it to the agent.
#[derive(Debug, Clone, Copy)]
pub enum Sent<'a> {
    /// The command line's text, as a pipe gets it (without the colour a terminal gets).
    Cli(&'a str),
    /// The command line's `--json`, as printed.
    CliJson(&'a str),
    /// An MCP tool result: its text content and its structured content. Clients differ in what
    /// they put in the model's context (Claude Code the structured content alone, others the
    /// text, some both), so both are counted: a saving is never made to look larger than it is.
    Mcp { text: &'a str, structured: &'a serde_json::Value },
}

/// The start of the period `text` names (`2026-11-01`, from its local midnight, or `7d`, `24h`,
/// `30m` back from now), in ms since the epoch.
pub fn parse_since(text: &str) -> Result<u64, BadSince> {
    gain::since_ms(text, &chrono::Local::now())
}

/// A run whose counts are being made: what is kept of it, and which of its sums are counted anew.
struct Pending {
    meta: RunMeta,
    count: TokenCount,
    /// Index of its raw sum, when the log is counted anew.
    raw: Option<usize>,
    /// Index of its answers' sum, when they are counted anew.
    answers: Option<usize>,
}

impl App {
    /// Records that `sent` was sent about run `run_id`, in answer to `call`. Called once the
    /// answer is out; a failure to record it is logged, never the caller's: the agent has its
    /// answer, and only the savings report will miss it.
    pub fn sent(&self, run_id: &str, call: AnsweredCall, sent: Sent<'_>) {
        let (via, parts) = match sent {
            Sent::Cli(text) => (Via::Cli, vec![text.to_string()]),
            Sent::CliJson(text) => (Via::CliJson, vec![text.to_string()]),
            Sent::Mcp { text, structured } => (Via::Mcp, vec![text.to_string(), structured.to_string()]),
        };
        if let Err(e) = self.store.append_answer(run_id, &SentAnswer { call, via, parts }) {
            tracing::debug!("cannot record the answer about run {run_id}: {}", super::describe(&e));
        }
    }

    /// The tokens saved by the finished runs that started from `since_ms` on (every stored run
    /// without it), counting what was not counted before.
    pub fn gain(&self, since_ms: Option<u64>) -> Result<Gain, AppError> {
        let zone = chrono::Local;
        let mut projects: HashMap<String, String> = HashMap::new();
        let (mut pending, mut unrecorded, mut sums) = (Vec::new(), 0u64, 0usize);
        for meta in self.store.list()? {
            let finished = !matches!(meta.status, RunStatus::Running | RunStatus::Damaged);
            if !finished || since_ms.is_some_and(|since| meta.started_ms < since) {
                continue;
            }
            // A run pruned since the listing is simply not there any more.
            let Ok((log_bytes, answers_bytes)) = self.store.counted_sizes(&meta.id) else { continue };
            if answers_bytes == 0 {
                unrecorded += 1;
                continue;
            }
            let kept = self.store.token_count(&meta.id);
            let project = match &kept {
                Some(kept) => kept.project.clone(),
                None => projects.entry(meta.cwd.clone()).or_insert_with(|| project_root(Path::new(&meta.cwd))).clone(),
            };
            let mut count =
                kept.clone().unwrap_or(TokenCount { raw: 0, log_bytes, answers: 0, answers_bytes, project });
            let mut next = || {
                sums += 1;
                Some(sums - 1)
            };
            let raw = if kept.as_ref().is_some_and(|k| k.log_bytes == log_bytes) { None } else { next() };
            let answers = if kept.as_ref().is_some_and(|k| k.answers_bytes == answers_bytes) { None } else { next() };
            (count.log_bytes, count.answers_bytes) = (log_bytes, answers_bytes);
            pending.push(Pending { meta, count, raw, answers });
        }

        let mut unreadable = vec![false; sums];
        let sources = pending.iter().flat_map(|p| {
            let mut sources = Vec::new();
            if let Some(sum) = p.raw {
                match self.store.open_log(&p.meta.id) {
                    Ok(file) => sources.push((sum, Source::Log(file))),
                    // A run stopped before its log was made read nothing: it has no tokens.
                    Err(_) if p.count.log_bytes == 0 => {}
                    Err(_) => unreadable[sum] = true,
                }
            }
            if let Some(sum) = p.answers {
                match self.store.answers(&p.meta.id) {
                    Ok(answers) => {
                        sources.extend(answers.into_iter().flat_map(|a| a.parts).map(|t| (sum, Source::Text(t))))
                    }
                    Err(_) => unreadable[sum] = true,
                }
            }
            sources
        });
        let counted = tokens::count_all(sources, sums);

        let mut runs = Vec::with_capacity(pending.len());
        for Pending { meta, mut count, raw, answers } in pending {
            let sum = |at: Option<usize>, kept: u64| match at {
                None => Some(kept),
                Some(at) if unreadable[at] => None,
                Some(at) => counted[at],
            };
            let (Some(raw_tokens), Some(answer_tokens)) = (sum(raw, count.raw), sum(answers, count.answers)) else {
                tracing::warn!("cannot count the tokens of run {}: its files could not be read", meta.id);
                continue;
            };
            (count.raw, count.answers) = (raw_tokens, answer_tokens);
            if (raw.is_some() || answers.is_some())
                && let Err(e) = self.store.write_token_count(&meta.id, &count)
            {
                tracing::debug!("cannot keep the token count of run {}: {}", meta.id, super::describe(&e));
            }
            runs.push(CountedRun {
                tool: meta.tool,
                project: count.project,
                day: gain::day(meta.started_ms, &zone),
                raw: count.raw,
                answers: count.answers,
            });
        }
        let since = since_ms.map(|ms| (ms, gain::minute(ms, &zone)));
        Ok(gain::aggregate(&runs, since, unrecorded))
    }
}

/// The project a directory belongs to: its nearest ancestor (itself included) holding `.git` or
/// a `buildvise.toml`, else the directory itself.
fn project_root(cwd: &Path) -> String {
    let marked = |dir: &&Path| dir.join(".git").exists() || dir.join(buildvise_engine::config::PROJECT_FILE).is_file();
    let root: PathBuf = cwd.ancestors().find(marked).unwrap_or(cwd).to_path_buf();
    root.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_is_the_nearest_directory_with_git_or_a_buildvise_toml() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        let member = repo.join("crates/member");
        std::fs::create_dir_all(member.join("src")).unwrap();
        std::fs::create_dir(repo.join(".git")).unwrap();
        assert_eq!(project_root(&member.join("src")), repo.display().to_string());
        std::fs::write(member.join("buildvise.toml"), "").unwrap();
        assert_eq!(project_root(&member.join("src")), member.display().to_string());
        let loose = dir.path().join("loose");
        std::fs::create_dir(&loose).unwrap();
        assert_eq!(project_root(&loose), loose.display().to_string(), "no marker: the directory itself");
    }
}
