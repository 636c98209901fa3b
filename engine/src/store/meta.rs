//! `meta.json`: what ran, where, when, and how it ended.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum RunStatus {
    Running,
    /// The process exited (the parse result says whether that was a success).
    Exited,
    /// Killed by a signal that buildvise did not send.
    Killed,
    TimedOut,
    Cancelled,
    /// The process could not be started, or buildvise itself failed during the run.
    Failed,
    /// `meta.json` cannot be read; `error` says why.
    Damaged,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunMeta {
    pub id: String,
    pub tool: String,
    pub program: String,
    pub args: Vec<String>,
    pub cwd: String,
    /// Milliseconds since the Unix epoch.
    pub started_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_ms: Option<u64>,
    pub status: RunStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The limit the run had, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<u64>,
    #[serde(default)]
    pub lines: u64,
    #[serde(default)]
    pub bytes: u64,
    /// Why the run failed, when `status` is `failed` or `damaged`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What else went wrong on buildvise's side while the run went on (its log could not be
    /// stored whole, say), each a sentence for the answer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The command the run is indexed under ([`super::CommandKey::id`]), once it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// What the run came to, in numbers; set when it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tally: Option<Tally>,
    /// The lines the output did not end with `\n` (at most one per stream, its last): the log
    /// stores every line with one, and `log --raw` prints these without.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unterminated: Vec<u64>,
    /// The signal that ended the command, when `status` is `killed` and it is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// The command names of the processes the command left running when it exited, which
    /// buildvise ended: one per process.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_running: Vec<String>,
}

/// A finished run's numbers, enough for a listing of runs without reading their results.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tally {
    pub success: bool,
    /// Errors that are not failed tests.
    pub errors: usize,
    pub warnings: usize,
    /// Tests passed and failed, for a test run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests: Option<[u64; 2]>,
    /// Tests that errored (pytest's errors in setup or teardown, apart from its failures), said
    /// as the run's answer says them.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub test_errors: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vs: Option<Versus>,
}

/// How a run compared with the previous run of its command: its problems (errors, warnings,
/// failed tests) fixed since, new, and still there.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Versus {
    /// The run compared with.
    pub run: String,
    pub fixed: usize,
    pub new: usize,
    pub still: usize,
    /// Problems of the run compared with that this run, stopped early, may not have reached.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub not_run: usize,
    /// The arguments of the run compared with, when they were not this run's: a command's first
    /// run is compared with the last run of its tool in its directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Vec<String>>,
}

fn is_zero<N: Default + PartialEq>(n: &N) -> bool {
    *n == N::default()
}

impl Versus {
    /// `1 fixed, 1 new, 2 still`, leaving out what is zero.
    pub fn counts(&self) -> String {
        let parts = [(self.fixed, "fixed"), (self.new, "new"), (self.still, "still"), (self.not_run, "not run")];
        parts.iter().filter(|(n, _)| *n > 0).map(|(n, word)| format!("{n} {word}")).collect::<Vec<_>>().join(", ")
    }

    /// `bafotemu`, or `bafotemu (args: --lib)` when it ran with other arguments.
    pub fn which(&self) -> String {
        match &self.args {
            Some(args) if args.is_empty() => format!("{} (no args)", self.run),
            Some(args) => format!("{} (args: {})", self.run, args.join(" ")),
            None => self.run.clone(),
        }
    }
}

impl RunMeta {
    /// A run starting now.
    pub fn starting(id: &str, tool: &str, program: &str, args: &[String], cwd: &str) -> Self {
        RunMeta {
            id: id.to_string(),
            tool: tool.to_string(),
            program: program.to_string(),
            args: args.to_vec(),
            cwd: cwd.to_string(),
            started_ms: now_ms(),
            ended_ms: None,
            status: RunStatus::Running,
            exit_code: None,
            timeout_secs: None,
            lines: 0,
            bytes: 0,
            error: None,
            notes: Vec::new(),
            command: None,
            tally: None,
            unterminated: Vec::new(),
            signal: None,
            left_running: Vec::new(),
        }
    }

    /// What can be said of a run whose `meta.json` cannot be read.
    pub fn damaged(id: &str, started_ms: u64, error: String) -> Self {
        RunMeta { started_ms, status: RunStatus::Damaged, error: Some(error), ..RunMeta::starting(id, "", "", &[], "") }
    }

    pub fn duration_ms(&self) -> Option<u64> {
        self.ended_ms.map(|end| end.saturating_sub(self.started_ms))
    }
}

pub fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}
