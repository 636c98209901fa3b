//! What changed since the last run of the same command.
//!
//! An agent's loop is edit → rerun → read. So each finished run is compared with the previous
//! finished run of its command (same tool, directory and arguments), found through the store's
//! index of commands, never by reading every run: its problems are matched by [`fingerprint`]
//! and counted as fixed, new and still ([`compare`]). The comparison is stored with the run's
//! result, so that a re-rendered answer says it again; [`flaky`] reads a command's history for
//! tests that fail and pass by turns.
//!
//! Not here: what the answer says about it (`render/`), and where runs live (`store/`).

pub mod compare;
pub mod fingerprint;
pub mod flaky;

pub use compare::{Delta, Problem, comparison, delta};
pub use flaky::Flaky;

use crate::outcome::{Comparison, RunResult};
use crate::store::{CommandKey, Store};
use buildvise_plugin_api::Diagnostic;

/// The fingerprint of each diagnostic, in order.
pub fn fingerprints(tool: &str, diagnostics: &[Diagnostic]) -> Vec<String> {
    diagnostics.iter().map(|d| fingerprint::of(tool, d)).collect()
}

/// Records the finished run `id` of `key` and compares `result` with the run before it: of the
/// same command, or for a command's first run (an agent added a flag), the last run of its tool
/// in its directory, whose arguments the comparison then names. None when there is none (or it
/// is gone, pruned), and for two runs with no problems.
pub fn compare_with_previous(store: &Store, key: &CommandKey, id: &str, result: &RunResult) -> Option<Comparison> {
    let (previous, args) = match store.record_finished(key, id) {
        Ok(Some(previous)) => (previous, None),
        Ok(None) => {
            let (other, previous) = last_of_tool_elsewhere(store, key)?;
            (previous, Some(other.args))
        }
        Err(e) => {
            tracing::warn!("cannot index run {id}: {}", crate::describe(&e));
            return None;
        }
    };
    let before: RunResult = store.read_result(&previous).ok()??;
    let mut comparison = comparison(&previous, delta(&key.tool, &before, &key.tool, result));
    comparison.counts.args = args;
    comparison.says_something().then_some(comparison)
}

/// The newest finished run of `key`'s tool in its directory run with other arguments, and its
/// command.
fn last_of_tool_elsewhere(store: &Store, key: &CommandKey) -> Option<(CommandKey, String)> {
    store
        .commands()
        .into_iter()
        .filter(|(other, _)| other.tool == key.tool && other.cwd == key.cwd && other.args != key.args)
        .filter_map(|(other, mut runs)| {
            let last = runs.pop()?;
            let ended = store.read_meta(&last).ok()?.ended_ms?;
            Some((ended, other, last))
        })
        .max_by_key(|(ended, ..)| *ended)
        .map(|(_, other, last)| (other, last))
}

/// A listed run, with its command's flaky tests when it is the newest listed run of a command
/// that has some.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ListedRun {
    #[serde(flatten)]
    pub meta: crate::store::RunMeta,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub flaky: Vec<Flaky>,
}
