//! The run store: one directory per run under the state dir, holding the raw log and its index
//! ([`log`]), `meta.json` ([`meta`]), `result.json`, the artifact directory, and what reading the
//! run cost the agent, for `gain` ([`answers`]).
//!
//! Several processes may share a store. Run directories are created exclusively, files are
//! written atomically (write, then rename) and privately ([`files`]), and a run being written
//! holds an exclusive lock on its `lock` file, which is how retention ([`retention`]) knows never
//! to touch it, and how a reader knows that a run marked running lost its writer.
//!
//! Beside the runs, `commands/` indexes finished runs by command ([`index`]), which is how a run
//! finds the one before it; retention keeps it in step with the runs it removes.
//!
//! `layout` holds [`LAYOUT`], the version of all of the above. A store of an older layout (or of
//! none, written before the file existed) is cleared when opened, with a warning that says so: its
//! runs are logs of past commands, and reading every layout ever written would keep code for
//! formats no run of today has. A store of a newer layout is refused, so that an older buildvise
//! never removes what a newer one wrote.

mod answers;
pub(crate) mod files;
mod ids;
mod index;
pub mod log;
pub mod meta;
mod retention;

pub use answers::{AnsweredCall, SentAnswer, TokenCount, Via};
pub use ids::validate_run_id;
pub use index::CommandKey;
pub use log::{LogLine, LogReader, LogWriter, StreamFilter};
pub use meta::{RunMeta, RunStatus, Tally, Versus, now_ms};
pub use retention::Retention;

use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fs::File;
use std::path::{Path, PathBuf};

/// The version of the store's layout, kept in [`LAYOUT_FILE`]: raise it with any change an older
/// reader would misread (a file's format, a file's name, a directory's shape).
pub const LAYOUT: u32 = 1;
const LAYOUT_FILE: &str = "layout";
const META_FILE: &str = "meta.json";
const RESULT_FILE: &str = "result.json";
const LOCK_FILE: &str = "lock";
const ARTIFACT_DIR: &str = "artifacts";
/// Beside `runs/`: its modification time is when the last retention pass started.
const PRUNE_MARK: &str = "pruned";
/// How often retention runs at most while the store keeps to its run count.
const PRUNE_EVERY: std::time::Duration = std::time::Duration::from_secs(60);

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("run id {0:?} is not valid: run ids are 8 characters as printed by exec (e.g. \"bafotemu\")")]
    BadRunId(String),
    #[error(
        "no run {0:?} in the store (it may have been pruned); send a run id from a recent exec answer (the CLI lists them: buildvise runs)"
    )]
    UnknownRun(String),
    #[error("run {0} has no result yet: it is still running; page its log instead")]
    StillRunning(String),
    #[error(
        "the disk holding the run store is full: free space there, e.g. by removing old runs from {} (`buildvise runs` lists them), or set BUILDVISE_HOME to a directory on another disk",
        runs.display()
    )]
    Full {
        runs: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot use {}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} is damaged ({detail}); the run's other files may still be read, or delete its directory", path.display())]
    Corrupt { path: PathBuf, detail: String },
    #[error(
        "the run store at {} was written by a newer buildvise (store layout {found}; this one reads {LAYOUT}): run that buildvise, or set BUILDVISE_HOME to another directory",
        root.display()
    )]
    NewerLayout { root: PathBuf, found: String },
}

impl StoreError {
    /// An I/O failure on `path`, a file or directory inside the store's `runs/`.
    fn io(path: &Path, source: std::io::Error) -> Self {
        if files::is_full(&source) {
            let runs = path.ancestors().find(|a| a.file_name().is_some_and(|n| n == "runs")).unwrap_or(path);
            StoreError::Full { runs: runs.to_path_buf(), source }
        } else {
            StoreError::Io { path: path.to_path_buf(), source }
        }
    }

    /// True when the store's disk is full: pruning may make room.
    pub fn is_full(&self) -> bool {
        matches!(self, StoreError::Full { .. })
    }
}

/// The state directory and the runs in it.
#[derive(Debug, Clone)]
pub struct Store {
    runs: PathBuf,
    index: index::Index,
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

    /// Another hold on the run's lock: the run stays safe from pruning until this is dropped too.
    pub fn hold(&self) -> Option<File> {
        self._lock.try_clone().ok()
    }
}

impl Store {
    /// `$BUILDVISE_HOME`, else `$XDG_STATE_HOME/buildvise`, else (Windows) `%LOCALAPPDATA%\buildvise`,
    /// else `~/.local/state/buildvise`.
    pub fn default_root() -> PathBuf {
        if let Some(home) = std::env::var_os("BUILDVISE_HOME").filter(|v| !v.is_empty()) {
            return PathBuf::from(home);
        }
        if let Some(state) = std::env::var_os("XDG_STATE_HOME").filter(|v| !v.is_empty()) {
            return PathBuf::from(state).join("buildvise");
        }
        // The user's own, unroamed application data, private to them (docs/platforms.md).
        #[cfg(windows)]
        if let Some(local) = std::env::var_os("LOCALAPPDATA").filter(|v| !v.is_empty()) {
            return PathBuf::from(local).join("buildvise");
        }
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
        home.join(".local/state/buildvise")
    }

    pub fn open(root: &Path) -> Result<Self, StoreError> {
        check_layout(root)?;
        let runs = root.join("runs");
        files::private_dir_all(&runs)?;
        Ok(Store { runs, index: index::Index::open(root)? })
    }

    /// Creates a new run directory with a fresh id, locked for this process.
    pub fn create_run(&self) -> Result<ActiveRun, StoreError> {
        loop {
            let id = ids::new_run_id();
            let dir = self.runs.join(&id);
            match files::private_dir(&dir) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(StoreError::io(&dir, e)),
            }
            return match lock_new_run(&dir) {
                Ok(lock) => Ok(ActiveRun { id, dir, _lock: lock }),
                Err(e) => {
                    let _ = std::fs::remove_dir_all(&dir);
                    Err(e)
                }
            };
        }
    }

    /// The directory of an existing run, after validating the id.
    pub fn run_dir(&self, id: &str) -> Result<PathBuf, StoreError> {
        let id = validate_run_id(id)?;
        let dir = self.runs.join(id);
        if dir.join(LOCK_FILE).is_file() || dir.join(META_FILE).is_file() {
            Ok(dir)
        } else {
            Err(StoreError::UnknownRun(id.to_string()))
        }
    }

    pub fn write_meta(&self, dir: &Path, meta: &RunMeta) -> Result<(), StoreError> {
        files::write_json(&dir.join(META_FILE), meta)
    }

    pub fn write_result<T: Serialize>(&self, dir: &Path, result: &T) -> Result<(), StoreError> {
        files::write_json(&dir.join(RESULT_FILE), result)
    }

    /// A run's meta. A run marked running whose writer is gone is settled first (see
    /// [`Store::settle`]).
    pub fn read_meta(&self, id: &str) -> Result<RunMeta, StoreError> {
        let dir = self.run_dir(id)?;
        let meta: RunMeta = files::read_json(&dir.join(META_FILE))?;
        if meta.status == RunStatus::Running && !is_locked(&dir) {
            return self.settle(&dir, meta);
        }
        Ok(meta)
    }

    /// The stored result, or None while there is none (the run is going, or it was never parsed).
    pub fn read_result<T: DeserializeOwned>(&self, id: &str) -> Result<Option<T>, StoreError> {
        let path = self.run_dir(id)?.join(RESULT_FILE);
        match files::read_json(&path) {
            Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => Ok(None),
            read => read.map(Some),
        }
    }

    pub fn reader(&self, id: &str) -> Result<LogReader, StoreError> {
        LogReader::open(&self.run_dir(id)?)
    }

    /// Every run, newest first. A run whose `meta.json` is damaged is listed with that said, so
    /// that it can be seen and pruned; a run marked running whose writer is gone is settled.
    pub fn list(&self) -> Result<Vec<RunMeta>, StoreError> {
        let mut runs = Vec::new();
        let entries = std::fs::read_dir(&self.runs).map_err(|e| StoreError::io(&self.runs, e))?;
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(id) = name.to_str().filter(|id| validate_run_id(id).is_ok()) else { continue };
            let dir = entry.path();
            let meta = match files::read_json::<RunMeta>(&dir.join(META_FILE)) {
                Ok(meta) if meta.status == RunStatus::Running && !is_locked(&dir) => {
                    self.settle(&dir, meta.clone()).unwrap_or(meta)
                }
                Ok(meta) => meta,
                // Being created right now: nothing to show yet.
                Err(StoreError::Io { source, .. })
                    if source.kind() == std::io::ErrorKind::NotFound && is_locked(&dir) =>
                {
                    continue;
                }
                Err(e) => RunMeta::damaged(id, modified_ms(&dir), e.to_string()),
            };
            runs.push(meta);
        }
        runs.sort_by(|a, b| b.started_ms.cmp(&a.started_ms).then_with(|| a.id.cmp(&b.id)));
        Ok(runs)
    }

    /// Applies a retention policy to every run, or only to the runs that ran under `within` (a
    /// project's own policy); returns the ids removed. Runs some process is writing are never
    /// touched.
    /// Whether a retention pass is due: none started in the last minute (in any process), or
    /// the store holds more than `max_runs` runs by more than a sixteenth of them. A pass reads
    /// every run's meta, which a warm server would otherwise do again for each exec; a stat and a
    /// directory listing are cheap. Age and size limits may so be passed by a minute's runs, and
    /// a full store (200 runs, by default) by 12 runs, not by one: a store kept at its limit
    /// would otherwise read every meta at every exec. A full disk makes room at once.
    pub fn prune_due(&self, max_runs: usize) -> bool {
        let started = self.prune_mark().metadata().and_then(|m| m.modified());
        let recent = started.is_ok_and(|t| t.elapsed().is_ok_and(|age| age < PRUNE_EVERY));
        let too_many = max_runs.saturating_add(max_runs / 16);
        !recent || std::fs::read_dir(&self.runs).map_or(true, |dir| dir.count() > too_many)
    }

    /// Notes that a retention pass starts now, so that passes elsewhere wait their minute.
    pub fn mark_pruning(&self) {
        let marked = files::private_file(&self.prune_mark()).and_then(|f| {
            f.set_modified(std::time::SystemTime::now()).map_err(|e| StoreError::io(&self.prune_mark(), e))
        });
        if let Err(e) = marked {
            tracing::warn!("cannot mark the retention pass: {e}");
        }
    }

    fn prune_mark(&self) -> PathBuf {
        self.runs.with_file_name(PRUNE_MARK)
    }

    pub fn prune(&self, policy: &Retention, within: Option<&Path>) -> Result<Vec<String>, StoreError> {
        let removed = retention::prune(&self.runs, policy, within)?;
        self.index.forget_missing(&removed.commands, |id| self.runs.join(id).is_dir());
        Ok(removed.ids)
    }

    /// Records the run `id` as the newest finished run of its command; returns the run that was
    /// newest before it, if any.
    pub fn record_finished(&self, key: &CommandKey, id: &str) -> Result<Option<String>, StoreError> {
        self.index.record(key, id)
    }

    /// Every command with its latest finished runs, oldest first.
    pub fn commands(&self) -> Vec<(CommandKey, Vec<String>)> {
        self.index.all()
    }

    /// Finishes the record of a run whose writer died (killed, crashed) before it ended: the
    /// lines and bytes it stored are counted from the log, and it is marked failed. Its result,
    /// if it has none, is for the caller to make from the log (the store knows no parsers).
    fn settle(&self, dir: &Path, mut meta: RunMeta) -> Result<RunMeta, StoreError> {
        let lock_path = dir.join(LOCK_FILE);
        let lock = File::open(&lock_path).map_err(|e| StoreError::io(&lock_path, e))?;
        if lock.try_lock().is_err() {
            // Someone else holds it now: they are settling it, or it was never abandoned.
            return Ok(meta);
        }
        if let Ok(mut reader) = LogReader::open(dir) {
            meta.lines = reader.count(StreamFilter::Both).unwrap_or(0);
            meta.bytes = reader.bytes();
        }
        meta.status = RunStatus::Failed;
        meta.ended_ms = Some(modified_ms(&dir.join(log::LOG_FILE)).max(meta.started_ms));
        meta.error = Some("the buildvise process running it stopped before the run ended".to_string());
        self.write_meta(dir, &meta)?;
        Ok(meta)
    }

    /// Locks a stored run for rewriting its result (a run settled after its writer died), unless
    /// some process holds it.
    pub fn relock(&self, id: &str) -> Result<Option<ActiveRun>, StoreError> {
        let dir = self.run_dir(id)?;
        let lock_path = dir.join(LOCK_FILE);
        let lock = File::open(&lock_path).map_err(|e| StoreError::io(&lock_path, e))?;
        Ok(lock.try_lock().ok().map(|()| ActiveRun { id: id.to_string(), dir, _lock: lock }))
    }
}

/// Makes `root` a store of [`LAYOUT`]: a new store gets the file first, before any run exists, and
/// a store of an older layout is cleared of its runs and their index.
fn check_layout(root: &Path) -> Result<(), StoreError> {
    let path = root.join(LAYOUT_FILE);
    let found = match files::read_bounded(&path) {
        Ok(bytes) => Some(String::from_utf8_lossy(&bytes).trim().to_string()),
        Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    match found.as_deref().map(|v| v.parse::<u32>()) {
        Some(Ok(layout)) if layout == LAYOUT => return Ok(()),
        Some(Ok(layout)) if layout > LAYOUT => {
            return Err(StoreError::NewerLayout { root: root.to_path_buf(), found: found.unwrap_or_default() });
        }
        // An older layout, one this buildvise cannot read, or no layout file (a new store, or
        // one from before the file existed).
        _ => {}
    }
    let stale: Vec<PathBuf> =
        ["runs", "commands", PRUNE_MARK].iter().map(|name| root.join(name)).filter(|p| p.exists()).collect();
    if !stale.is_empty() {
        tracing::warn!(
            "the run store at {} was written by an older buildvise (layout {}); its runs were removed",
            root.display(),
            found.as_deref().unwrap_or("before 1")
        );
        for path in stale {
            let removed = if path.is_dir() { std::fs::remove_dir_all(&path) } else { std::fs::remove_file(&path) };
            removed.map_err(|e| StoreError::io(&path, e))?;
        }
    }
    files::private_dir_all(root)?;
    files::write_atomic(&path, format!("{LAYOUT}\n").as_bytes())
}

/// The lock of a run directory just made, and its artifact directory.
fn lock_new_run(dir: &Path) -> Result<File, StoreError> {
    let lock_path = dir.join(LOCK_FILE);
    let lock = files::private_file(&lock_path)?;
    lock.lock().map_err(|e| StoreError::io(&lock_path, e))?;
    let artifacts = dir.join(ARTIFACT_DIR);
    files::private_dir(&artifacts).map_err(|e| StoreError::io(&artifacts, e))?;
    Ok(lock)
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

/// When `path` last changed, in ms since the epoch; 0 when unknown.
fn modified_ms(path: &Path) -> u64 {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn meta(id: &str) -> RunMeta {
        RunMeta::starting(id, "cargo.build", "cargo", &[], "/p")
    }

    #[test]
    fn retention_is_due_once_a_minute_or_when_the_store_holds_too_many_runs() {
        let root = tempfile::tempdir().unwrap();
        let store = Store::open(root.path()).unwrap();
        assert!(store.prune_due(10), "no pass ever ran");
        store.mark_pruning();
        assert!(!store.prune_due(10), "a pass just started");
        let runs: Vec<ActiveRun> = (0..3).map(|_| store.create_run().unwrap()).collect();
        assert!(!store.prune_due(3), "three runs are not more than three");
        assert!(store.prune_due(2), "three runs are more than two");
        let runs: Vec<ActiveRun> = runs.into_iter().chain((0..14).map(|_| store.create_run().unwrap())).collect();
        assert!(!store.prune_due(16), "17 runs are not more than 16 by more than one");
        assert!(store.prune_due(15), "17 runs are more than 15 by more than one");
        let a_while_ago = std::time::SystemTime::now() - PRUNE_EVERY - Duration::from_secs(1);
        File::options().write(true).open(store.prune_mark()).unwrap().set_modified(a_while_ago).unwrap();
        assert!(store.prune_due(10), "the last pass started over a minute ago");
        drop(runs);
    }

    /// D6: a symlink to `/dev/zero` in place of `meta.json` grew a reader to gigabytes, and a
    /// FIFO in place of a store file hung it. Each is now damage, named, at once.
    #[test]
    #[cfg(unix)] // a symbolic link needs a privilege on Windows, and a FIFO does not exist there
    fn a_planted_symlink_or_fifo_is_damage_not_a_hang() {
        let root = tempfile::tempdir().unwrap();
        let store = Store::open(root.path()).unwrap();
        let run = store.create_run().unwrap();
        let mut finished = meta(&run.id);
        finished.status = RunStatus::Exited;
        store.write_meta(&run.dir, &finished).unwrap();
        let (id, dir) = (run.id.clone(), run.dir.clone());
        drop(run);
        let outside = root.path().join("elsewhere.json");
        std::fs::write(&outside, serde_json::to_vec(&finished).unwrap()).unwrap();
        std::fs::remove_file(dir.join(META_FILE)).unwrap();
        std::os::unix::fs::symlink(&outside, dir.join(META_FILE)).unwrap();
        let err = store.read_meta(&id).unwrap_err().to_string();
        assert!(err.contains("meta.json") && err.contains("symbolic link"), "{err}");

        nix::unistd::mkfifo(&dir.join(RESULT_FILE), nix::sys::stat::Mode::S_IRWXU).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let reading = Store::open(root.path()).unwrap();
        std::thread::spawn(move || {
            let _ = tx.send(reading.read_result::<serde_json::Value>(&id).map_err(|e| e.to_string()));
        });
        let read = rx.recv_timeout(std::time::Duration::from_secs(20)).expect("reading a FIFO hung");
        let err = read.expect_err("a FIFO read as a result");
        assert!(err.contains("result.json") && err.contains("not a regular file"), "{err}");
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
        let mut log = LogWriter::create(&run.dir).unwrap();
        log.write_line(buildvise_plugin_api::Stream::Stdout, b"stored before the writer died");
        assert!(log.finish().is_none());
        drop(run);
        // The lock went with the writer: the run is settled, with the lines it had stored.
        let settled = store.list().unwrap().remove(0);
        assert_eq!((settled.status, settled.lines), (RunStatus::Failed, 1));
        assert!(settled.error.as_deref().is_some_and(|e| e.contains("stopped before the run ended")));
        assert_eq!(store.read_meta(&id).unwrap(), settled);
    }

    #[test]
    fn pruning_runs_takes_them_out_of_their_commands_index() {
        let root = tempfile::tempdir().unwrap();
        let store = Store::open(root.path()).unwrap();
        let key = CommandKey { tool: "cargo.build".into(), cwd: "/p".into(), args: vec![] };
        let mut ids = Vec::new();
        for n in 0..3 {
            let run = store.create_run().unwrap();
            let mut meta = meta(&run.id);
            (meta.started_ms, meta.status, meta.command) = (1000 + n, RunStatus::Exited, Some(key.id()));
            store.write_meta(&run.dir, &meta).unwrap();
            store.record_finished(&key, &run.id).unwrap();
            ids.push(run.id.clone());
        }
        let removed = store.prune(&Retention { max_runs: 1, max_age: Duration::MAX, ..Retention::default() }, None);
        assert_eq!(removed.unwrap().len(), 2);
        assert_eq!(store.commands(), vec![(key, vec![ids[2].clone()])]);
    }

    #[test]
    fn a_store_of_an_older_layout_is_cleared_and_one_of_a_newer_refused() {
        let root = tempfile::tempdir().unwrap();
        let store = Store::open(root.path()).unwrap();
        assert_eq!(std::fs::read_to_string(root.path().join(LAYOUT_FILE)).unwrap(), format!("{LAYOUT}\n"));
        let run = store.create_run().unwrap();
        drop(run);
        Store::open(root.path()).unwrap();
        assert_eq!(store.list().unwrap().len(), 1, "a store of this layout is kept as it is");

        // A store from before the layout file: its runs are gone, and the store works.
        std::fs::remove_file(root.path().join(LAYOUT_FILE)).unwrap();
        std::fs::write(root.path().join("runs/kolivesa.old"), b"").unwrap();
        let store = Store::open(root.path()).unwrap();
        assert!(store.list().unwrap().is_empty());
        assert!(!root.path().join("runs/kolivesa.old").exists());
        assert!(store.create_run().is_ok());

        std::fs::write(root.path().join(LAYOUT_FILE), b"7\n").unwrap();
        let refused = Store::open(root.path()).unwrap_err().to_string();
        assert!(refused.contains("written by a newer buildvise (store layout 7; this one reads 1)"), "{refused}");
        assert!(store.list().unwrap().len() == 1, "a newer store keeps its runs");
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

    #[test]
    fn a_damaged_meta_is_listed_not_hidden() {
        let root = tempfile::tempdir().unwrap();
        let store = Store::open(root.path()).unwrap();
        let run = store.create_run().unwrap();
        std::fs::write(run.dir.join(META_FILE), b"{ half a meta").unwrap();
        let id = run.id.clone();
        drop(run);
        let listed = store.list().unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!((listed[0].id.as_str(), listed[0].status), (id.as_str(), RunStatus::Damaged));
        assert!(listed[0].error.as_deref().is_some_and(|e| e.contains("meta.json is damaged")), "{listed:?}");
        let err = store.read_meta(&id).unwrap_err().to_string();
        assert!(err.contains("meta.json is damaged"), "{err}");
    }

    #[test]
    #[cfg(unix)] // Windows keeps no mode: the profile's access list applies (see `files`)
    fn the_store_is_private() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let store = Store::open(&root.path().join("state")).unwrap();
        let run = store.create_run().unwrap();
        store.write_meta(&run.dir, &meta(&run.id)).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&root.path().join("state/runs")), 0o700);
        assert_eq!(mode(&run.dir), 0o700);
        assert_eq!(mode(&run.artifact_dir()), 0o700);
        assert_eq!(mode(&run.dir.join(META_FILE)), 0o600);
        assert_eq!(mode(&run.dir.join(LOCK_FILE)), 0o600);
    }
}
