//! Pruning old runs by count, age and total size. A run whose lock is held (being written, by any
//! process) is never touched.

use super::{LOCK_FILE, META_FILE, RunMeta, StoreError, read_json, validate_run_id};
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

struct Candidate {
    id: String,
    started_ms: u64,
    bytes: u64,
}

pub(super) fn prune(runs: &Path, policy: &Retention) -> Result<Vec<String>, StoreError> {
    let mut candidates = Vec::new();
    let entries = std::fs::read_dir(runs).map_err(|e| StoreError::io(runs, e))?;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(id) = name.to_str().filter(|id| validate_run_id(id).is_ok()) else { continue };
        let dir = entry.path();
        // A run without meta yet is being created right now.
        let Ok(meta) = read_json::<RunMeta>(&dir.join(META_FILE)) else { continue };
        candidates.push(Candidate { id: id.to_string(), started_ms: meta.started_ms, bytes: dir_size(&dir) });
    }
    candidates.sort_by_key(|c| std::cmp::Reverse(c.started_ms));

    let oldest_kept = super::now_ms().saturating_sub(policy.max_age.as_millis() as u64);
    let (mut kept, mut kept_bytes, mut removed) = (0usize, 0u64, Vec::new());
    for c in candidates {
        let fits = kept < policy.max_runs && c.started_ms >= oldest_kept && kept_bytes + c.bytes <= policy.max_bytes;
        if fits || !remove_if_idle(&runs.join(&c.id)) {
            kept += 1;
            kept_bytes += c.bytes;
        } else {
            removed.push(c.id);
        }
    }
    Ok(removed)
}

/// Removes a run unless some process holds its lock. The directory is first renamed to a name
/// that is not a run id, so readers never see half a run.
fn remove_if_idle(dir: &Path) -> bool {
    let Ok(lock) = File::open(dir.join(LOCK_FILE)) else { return false };
    if lock.try_lock().is_err() {
        return false;
    }
    let doomed = dir.with_extension("pruned");
    if std::fs::rename(dir, &doomed).is_err() {
        return false;
    }
    drop(lock);
    std::fs::remove_dir_all(&doomed).is_ok()
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
        let run = store.create_run().unwrap();
        std::fs::write(run.dir.join("output.log"), vec![b'x'; payload]).unwrap();
        let meta = RunMeta {
            started_ms,
            ended_ms: Some(started_ms),
            status: RunStatus::Exited,
            exit_code: Some(0),
            ..RunMeta::starting(&run.id, "t.x", "x", &[], "/")
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
        let removed = store.prune(&Retention { max_runs: 2, ..Retention::default() }).unwrap();
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
        let mut removed = store.prune(&policy).unwrap();
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
        let removed = store.prune(&Retention { max_runs: 0, max_age: Duration::ZERO, max_bytes: 0 }).unwrap();
        assert!(removed.is_empty());
        assert!(running.dir.is_dir());
        drop(running);
        assert_eq!(store.prune(&Retention { max_runs: 0, ..Retention::default() }).unwrap().len(), 1);
    }
}
