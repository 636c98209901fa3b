//! Pruning old runs by count, age and total size. A run whose lock is held (being written, by any
//! process) is never touched. A run whose `meta.json` is damaged is judged by its directory's
//! age, so damage never makes a run immortal. A removal that failed half-way is finished on the
//! next pass.

use super::{LOCK_FILE, META_FILE, RunMeta, StoreError, files, modified_ms, validate_run_id};
use std::fs::File;
use std::path::Path;
use std::time::Duration;

/// Limits on what the store keeps. The newest runs are kept first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retention {
    pub max_runs: usize,
    pub max_age: Duration,
    pub max_bytes: u64,
}

impl Default for Retention {
    fn default() -> Self {
        Retention { max_runs: 200, max_age: Duration::from_secs(14 * 24 * 3600), max_bytes: 2 << 30 }
    }
}

/// What a pruned directory is renamed to before it is removed: not a run id, so never listed.
const DOOMED: &str = "pruned";

struct Candidate {
    id: String,
    started_ms: u64,
    bytes: u64,
    /// The command it is indexed under, if any.
    command: Option<String>,
}

/// What a pass removed: run ids, and the commands whose index named some of them.
#[derive(Debug, Default)]
pub(super) struct Removed {
    pub ids: Vec<String>,
    pub commands: Vec<String>,
}

pub(super) fn prune(runs: &Path, policy: &Retention, within: Option<&Path>) -> Result<Removed, StoreError> {
    let mut candidates = Vec::new();
    let entries = std::fs::read_dir(runs).map_err(|e| StoreError::io(runs, e))?;
    for entry in entries.flatten() {
        let dir = entry.path();
        if dir.extension().is_some_and(|e| e == DOOMED) {
            remove_doomed(&dir);
            continue;
        }
        let name = entry.file_name();
        let Some(id) = name.to_str().filter(|id| validate_run_id(id).is_ok()) else { continue };
        let (started_ms, command) = match files::read_json::<RunMeta>(&dir.join(META_FILE)) {
            Ok(meta) if within.is_some_and(|root| !Path::new(&meta.cwd).starts_with(root)) => continue,
            Ok(meta) => (meta.started_ms, meta.command),
            // Another project's damaged run is not this project's to judge.
            Err(_) if within.is_some() => continue,
            Err(_) => (modified_ms(&dir), None),
        };
        candidates.push(Candidate { id: id.to_string(), started_ms, bytes: dir_size(&dir), command });
    }
    candidates.sort_by_key(|c| std::cmp::Reverse(c.started_ms));

    let max_age_ms = u64::try_from(policy.max_age.as_millis()).unwrap_or(u64::MAX);
    let oldest_kept = super::now_ms().saturating_sub(max_age_ms);
    let (mut kept, mut kept_bytes, mut removed) = (0usize, 0u64, Removed::default());
    for c in candidates {
        let fits = kept < policy.max_runs
            && c.started_ms >= oldest_kept
            && kept_bytes.saturating_add(c.bytes) <= policy.max_bytes;
        if fits || !remove_if_idle(&runs.join(&c.id)) {
            kept += 1;
            kept_bytes = kept_bytes.saturating_add(c.bytes);
        } else {
            removed.ids.push(c.id);
            removed.commands.extend(c.command.filter(|c| !removed.commands.contains(c)));
        }
    }
    Ok(removed)
}

/// Removes a run unless some process holds its lock (a run without a lock file is being created
/// right now). The directory is first renamed to a name that is not a run id, so readers never
/// see half a run.
fn remove_if_idle(dir: &Path) -> bool {
    let Ok(lock) = File::open(dir.join(LOCK_FILE)) else { return false };
    if lock.try_lock().is_err() {
        return false;
    }
    let doomed = dir.with_extension(DOOMED);
    if let Err(e) = std::fs::rename(dir, &doomed) {
        tracing::warn!("cannot prune {}: {e}", dir.display());
        return false;
    }
    drop(lock);
    remove_doomed(&doomed)
}

fn remove_doomed(doomed: &Path) -> bool {
    match std::fs::remove_dir_all(doomed) {
        Ok(()) => true,
        Err(e) => {
            tracing::warn!("cannot remove {} (retried at the next prune): {e}", doomed.display());
            false
        }
    }
}

fn dir_size(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_size(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::super::{RunStatus, Store};
    use super::*;

    fn finished_run(store: &Store, started_ms: u64, payload: usize) -> String {
        finished_run_in(store, started_ms, payload, "/")
    }

    fn finished_run_in(store: &Store, started_ms: u64, payload: usize, cwd: &str) -> String {
        let run = store.create_run().unwrap();
        std::fs::write(run.dir.join("output.log"), vec![b'x'; payload]).unwrap();
        let meta = RunMeta {
            started_ms,
            ended_ms: Some(started_ms),
            status: RunStatus::Exited,
            exit_code: Some(0),
            ..RunMeta::starting(&run.id, "t.x", "x", &[], cwd)
        };
        store.write_meta(&run.dir, &meta).unwrap();
        run.id
    }

    fn ids(store: &Store) -> Vec<String> {
        store.list().unwrap().into_iter().map(|m| m.id).collect()
    }

    #[test]
    fn prunes_by_count_keeping_newest() {
        let root = tempfile::tempdir().unwrap();
        let store = Store::open(root.path()).unwrap();
        let now = super::super::now_ms();
        let old = finished_run(&store, now - 3000, 10);
        let mid = finished_run(&store, now - 2000, 10);
        let new = finished_run(&store, now - 1000, 10);
        let removed = store.prune(&Retention { max_runs: 2, ..Retention::default() }, None).unwrap();
        assert_eq!(removed, vec![old]);
        assert_eq!(ids(&store), vec![new, mid]);
    }

    #[test]
    fn prunes_by_age_and_size() {
        let root = tempfile::tempdir().unwrap();
        let store = Store::open(root.path()).unwrap();
        let now = super::super::now_ms();
        let ancient = finished_run(&store, now - 10 * 24 * 3600 * 1000, 10);
        let big = finished_run(&store, now - 5000, 50_000);
        let small = finished_run(&store, now - 1000, 10);
        let policy = Retention { max_age: Duration::from_secs(24 * 3600), max_bytes: 20_000, ..Retention::default() };
        let mut removed = store.prune(&policy, None).unwrap();
        removed.sort();
        let mut expected = vec![ancient, big];
        expected.sort();
        assert_eq!(removed, expected);
        assert_eq!(ids(&store), vec![small]);
    }

    #[test]
    fn never_prunes_a_running_run() {
        let root = tempfile::tempdir().unwrap();
        let store = Store::open(root.path()).unwrap();
        let running = store.create_run().unwrap();
        let meta = RunMeta { started_ms: 1, ..RunMeta::starting(&running.id, "t.x", "x", &[], "/") };
        store.write_meta(&running.dir, &meta).unwrap();
        let removed = store.prune(&Retention { max_runs: 0, max_age: Duration::ZERO, max_bytes: 0 }, None).unwrap();
        assert!(removed.is_empty());
        assert!(running.dir.is_dir());
        drop(running);
        assert_eq!(store.prune(&Retention { max_runs: 0, ..Retention::default() }, None).unwrap().len(), 1);
    }

    #[test]
    fn a_project_policy_prunes_only_that_projects_runs() {
        let root = tempfile::tempdir().unwrap();
        let store = Store::open(root.path()).unwrap();
        let now = super::super::now_ms();
        let other = finished_run_in(&store, now - 3000, 10, "/home/dev/other");
        let mine_old = finished_run_in(&store, now - 2000, 10, "/home/dev/mine/sub");
        let mine_new = finished_run_in(&store, now - 1000, 10, "/home/dev/mine");
        let nothing = Retention { max_runs: 0, max_age: Duration::ZERO, max_bytes: 0 };
        let mut removed = store.prune(&nothing, Some(Path::new("/home/dev/mine"))).unwrap();
        removed.sort();
        let mut expected = vec![mine_old, mine_new];
        expected.sort();
        assert_eq!(removed, expected);
        assert_eq!(ids(&store), vec![other]);
    }

    #[test]
    fn damaged_runs_are_pruned_and_half_removals_finished() {
        let root = tempfile::tempdir().unwrap();
        let store = Store::open(root.path()).unwrap();
        let damaged = store.create_run().unwrap();
        std::fs::write(damaged.dir.join(META_FILE), b"{").unwrap();
        drop(damaged);
        let leftover = root.path().join("runs/bafotemu.pruned");
        std::fs::create_dir_all(leftover.join("artifacts")).unwrap();
        let removed = store.prune(&Retention { max_runs: 0, ..Retention::default() }, None).unwrap();
        assert_eq!(removed.len(), 1);
        assert!(store.list().unwrap().is_empty());
        assert!(!leftover.exists(), "a half-removed run stayed");
    }

    #[test]
    fn huge_limits_keep_everything() {
        let root = tempfile::tempdir().unwrap();
        let store = Store::open(root.path()).unwrap();
        let id = finished_run(&store, super::super::now_ms() - 1000, 10);
        let policy = Retention { max_runs: usize::MAX, max_age: Duration::MAX, max_bytes: u64::MAX };
        assert!(store.prune(&policy, None).unwrap().is_empty());
        assert_eq!(ids(&store), vec![id]);
    }
}
