//! The run store: one directory per run under the state dir, holding the raw log and its index
//! ([`log`]), `meta.json` ([`meta`]), `result.json` and the artifact directory.
//!
//! Several processes may share a store. Run directories are created exclusively, files are
//! written atomically (write, then rename), and a run being written holds an exclusive lock on
//! its `lock` file, which is how retention ([`retention`]) knows never to touch it.

mod ids;
pub mod log;
pub mod meta;
mod retention;

pub use ids::validate_run_id;
pub use log::{LogLine, LogReader, LogWriter, StreamFilter};
pub use meta::{RunMeta, RunStatus, now_ms};
pub use retention::Retention;

use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fs::File;
use std::path::{Path, PathBuf};

const META_FILE: &str = "meta.json";
const RESULT_FILE: &str = "result.json";
const LOCK_FILE: &str = "lock";
const ARTIFACT_DIR: &str = "artifacts";

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("run id {0:?} is not valid: run ids are 8 characters as printed by exec (e.g. \"bafotemu\")")]
    BadRunId(String),
    #[error(
        "no run {0:?} in the store (it may have been pruned); send a run id from a recent exec answer (the CLI lists them: buildvise runs)"
    )]
    UnknownRun(String),
    #[error("run {0} has no result yet: it is still running (or its process died); page its log instead")]
    StillRunning(String),
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path} is damaged: {message}")]
    Corrupt { path: PathBuf, message: String },
}

impl StoreError {
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        StoreError::Io { path: path.to_path_buf(), source }
    }
}

/// The state directory and the runs in it.
#[derive(Debug, Clone)]
pub struct Store {
    runs: PathBuf,
}

/// A run being written by this process. Dropping it releases the lock.
pub struct ActiveRun {
    pub id: String,
    pub dir: PathBuf,
    _lock: File,
}

impl ActiveRun {
    pub fn artifact_dir(&self) -> PathBuf {
        self.dir.join(ARTIFACT_DIR)
    }
}

impl Store {
    /// `$BUILDVISE_HOME`, else `$XDG_STATE_HOME/buildvise`, else `~/.local/state/buildvise`.
    pub fn default_root() -> PathBuf {
        if let Some(home) = std::env::var_os("BUILDVISE_HOME").filter(|v| !v.is_empty()) {
            return PathBuf::from(home);
        }
        if let Some(state) = std::env::var_os("XDG_STATE_HOME").filter(|v| !v.is_empty()) {
            return PathBuf::from(state).join("buildvise");
        }
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
        home.join(".local/state/buildvise")
    }

    pub fn open(root: &Path) -> Result<Self, StoreError> {
        let runs = root.join("runs");
        std::fs::create_dir_all(&runs).map_err(|e| StoreError::io(&runs, e))?;
        Ok(Store { runs })
    }

    /// Creates a new run directory with a fresh id, locked for this process.
    pub fn create_run(&self) -> Result<ActiveRun, StoreError> {
        loop {
            let id = ids::new_run_id();
            let dir = self.runs.join(&id);
            match std::fs::create_dir(&dir) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(StoreError::io(&dir, e)),
            }
            let lock_path = dir.join(LOCK_FILE);
            let lock = File::create(&lock_path).map_err(|e| StoreError::io(&lock_path, e))?;
            lock.lock().map_err(|e| StoreError::io(&lock_path, e))?;
            let artifacts = dir.join(ARTIFACT_DIR);
            std::fs::create_dir(&artifacts).map_err(|e| StoreError::io(&artifacts, e))?;
            return Ok(ActiveRun { id, dir, _lock: lock });
        }
    }

    /// The directory of an existing run, after validating the id.
    pub fn run_dir(&self, id: &str) -> Result<PathBuf, StoreError> {
        let id = validate_run_id(id)?;
        let dir = self.runs.join(id);
        if dir.join(META_FILE).is_file() { Ok(dir) } else { Err(StoreError::UnknownRun(id.to_string())) }
    }

    pub fn write_meta(&self, dir: &Path, meta: &RunMeta) -> Result<(), StoreError> {
        write_json_atomic(&dir.join(META_FILE), meta)
    }

    pub fn write_result<T: Serialize>(&self, dir: &Path, result: &T) -> Result<(), StoreError> {
        write_json_atomic(&dir.join(RESULT_FILE), result)
    }

    pub fn read_meta(&self, id: &str) -> Result<RunMeta, StoreError> {
        read_json(&self.run_dir(id)?.join(META_FILE))
    }

    /// The stored result, or None while the run is still going.
    pub fn read_result<T: DeserializeOwned>(&self, id: &str) -> Result<Option<T>, StoreError> {
        let path = self.run_dir(id)?.join(RESULT_FILE);
        if path.is_file() { read_json(&path).map(Some) } else { Ok(None) }
    }

    pub fn reader(&self, id: &str) -> Result<LogReader, StoreError> {
        LogReader::open(&self.run_dir(id)?)
    }

    /// Every readable run, newest first. A run whose meta says running but whose lock is free was
    /// left by a process that died; it is shown as failed.
    pub fn list(&self) -> Result<Vec<RunMeta>, StoreError> {
        let mut runs = Vec::new();
        let entries = std::fs::read_dir(&self.runs).map_err(|e| StoreError::io(&self.runs, e))?;
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(id) = name.to_str().filter(|id| validate_run_id(id).is_ok()) else { continue };
            let Ok(mut meta) = read_json::<RunMeta>(&entry.path().join(META_FILE)) else { continue };
            if meta.status == RunStatus::Running && !is_locked(&entry.path()) {
                meta.status = RunStatus::Failed;
                meta.error = Some("the buildvise process running it stopped before it ended".to_string());
            }
            debug_assert_eq!(meta.id, id);
            runs.push(meta);
        }
        runs.sort_by(|a, b| b.started_ms.cmp(&a.started_ms).then_with(|| a.id.cmp(&b.id)));
        Ok(runs)
    }

    /// Applies the retention policy; returns the ids removed.
    pub fn prune(&self, policy: &Retention) -> Result<Vec<String>, StoreError> {
        retention::prune(&self.runs, policy)
    }
}

/// True while some process holds the run's lock (the run is being written).
fn is_locked(dir: &Path) -> bool {
    let Ok(file) = File::open(dir.join(LOCK_FILE)) else { return false };
    match file.try_lock_shared() {
        Ok(()) => false,
        Err(std::fs::TryLockError::WouldBlock) => true,
        Err(std::fs::TryLockError::Error(_)) => false,
    }
}

fn write_json_atomic<T: Serialize>(path: &Path, value: &T) -> Result<(), StoreError> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let bytes = serde_json::to_vec_pretty(value)
        .map_err(|e| StoreError::Corrupt { path: path.to_path_buf(), message: e.to_string() })?;
    std::fs::write(&tmp, bytes).map_err(|e| StoreError::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| StoreError::io(path, e))
}

fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T, StoreError> {
    let bytes = std::fs::read(path).map_err(|e| StoreError::io(path, e))?;
    serde_json::from_slice(&bytes).map_err(|e| StoreError::Corrupt { path: path.to_path_buf(), message: e.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(id: &str) -> RunMeta {
        RunMeta::starting(id, "cargo.build", "cargo", &[], "/p")
    }

    #[test]
    fn create_write_read_list() {
        let root = tempfile::tempdir().unwrap();
        let store = Store::open(root.path()).unwrap();
        let run = store.create_run().unwrap();
        store.write_meta(&run.dir, &meta(&run.id)).unwrap();
        assert!(is_locked(&run.dir));
        assert_eq!(store.list().unwrap()[0].status, RunStatus::Running);
        let id = run.id.clone();
        drop(run);
        // The lock went with the process's handle: the run is now seen as abandoned.
        assert_eq!(store.list().unwrap()[0].status, RunStatus::Failed);
        assert_eq!(store.read_meta(&id).unwrap().id, id);
    }

    #[test]
    fn bad_and_unknown_ids() {
        let root = tempfile::tempdir().unwrap();
        let store = Store::open(root.path()).unwrap();
        assert!(matches!(store.run_dir("../x"), Err(StoreError::BadRunId(_))));
        assert!(matches!(store.run_dir("abcdefgh"), Err(StoreError::UnknownRun(_))));
        let msg = store.run_dir("../../etc").unwrap_err().to_string();
        assert!(msg.contains("8 characters"), "{msg}");
    }
}
