//! The index of finished runs by command, so that a run finds the one before it without reading
//! every run: one small file per command (tool, directory, arguments as the caller sent them)
//! under `commands/`, listing the ids of its latest finished runs, oldest first.
//!
//! Several processes may finish runs of one command at once. A command's file is only changed
//! under an exclusive lock on the file itself, read under a shared one, and rewritten in place;
//! a file retention removed while a writer waited for its lock is noticed (the path no longer
//! names the file locked) and the write goes to a new one. A file cut short by a crash reads as
//! an empty history: the next run starts it afresh. Retention updates the files of the commands
//! whose runs it removed, named in their metas.

use super::{StoreError, files, validate_run_id};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::hash::Hasher;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// Runs kept per command: enough to tell a flaky test from one that broke.
const KEPT: usize = 20;

/// What makes two runs runs of the same command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandKey {
    pub tool: String,
    pub cwd: String,
    pub args: Vec<String>,
}

impl CommandKey {
    /// The command's id, a hash of the key, which names its file (the key itself is in the file,
    /// so two keys with one hash are told apart, the later one simply not indexed). A run's meta
    /// keeps it, so that retention updates only the files of the runs it removes.
    pub fn id(&self) -> String {
        let mut h = fnv::FnvHasher::default();
        for part in std::iter::once(&self.tool).chain(std::iter::once(&self.cwd)).chain(&self.args) {
            h.write(part.as_bytes());
            h.write_u8(0);
        }
        format!("{:016x}", h.finish())
    }

    fn file_name(&self) -> String {
        file_name(&self.id())
    }
}

/// The file of the command `id`, or None for what is no command id (a damaged meta's).
fn checked_file_name(id: &str) -> Option<String> {
    (id.len() == 16 && id.bytes().all(|b| b.is_ascii_hexdigit())).then(|| file_name(id))
}

fn file_name(id: &str) -> String {
    format!("{id}.json")
}

#[derive(Debug, Serialize, Deserialize)]
struct CommandFile {
    key: CommandKey,
    /// Oldest first.
    runs: Vec<String>,
}

/// The `commands/` directory.
#[derive(Debug, Clone)]
pub(super) struct Index {
    dir: PathBuf,
}

impl Index {
    pub(super) fn open(root: &Path) -> Result<Self, StoreError> {
        let dir = root.join("commands");
        files::private_dir_all(&dir)?;
        Ok(Index { dir })
    }

    /// Adds `id` as the newest finished run of `key`; returns the run that was newest before it.
    pub(super) fn record(&self, key: &CommandKey, id: &str) -> Result<Option<String>, StoreError> {
        let path = self.dir.join(key.file_name());
        let mut file = lock_current(&path)?;
        let mut runs = match read(&mut file, &path) {
            Some(entry) if entry.key == *key => entry.runs,
            // Another command with the same hash: the earlier one keeps the file.
            Some(_) => return Ok(None),
            None => Vec::new(),
        };
        let previous = runs.last().cloned();
        runs.push(id.to_string());
        let skip = runs.len().saturating_sub(KEPT);
        runs.drain(..skip);
        write(&mut file, &path, &CommandFile { key: key.clone(), runs })?;
        Ok(previous)
    }

    /// Every command with its finished runs, oldest first.
    pub(super) fn all(&self) -> Vec<(CommandKey, Vec<String>)> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else { return Vec::new() };
        let mut all = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(mut file) = files::open_regular(&path) else { continue };
            if file.lock_shared().is_ok()
                && let Some(entry) = read(&mut file, &path)
            {
                all.push((entry.key, entry.runs));
            }
        }
        all
    }

    /// Drops from the files of `commands` the runs `exists` says are gone (retention removed
    /// them); a command left with none loses its file.
    pub(super) fn forget_missing(&self, commands: &[String], exists: impl Fn(&str) -> bool) {
        for name in commands.iter().filter_map(|id| checked_file_name(id)) {
            let path = self.dir.join(name);
            if !path.is_file() {
                continue;
            }
            let Ok(mut file) = lock_current(&path) else { continue };
            let Some(mut command) = read(&mut file, &path) else {
                let _ = std::fs::remove_file(&path);
                continue;
            };
            let before = command.runs.len();
            command.runs.retain(|id| validate_run_id(id).is_ok() && exists(id));
            let result = match command.runs.len() {
                0 => std::fs::remove_file(&path).map_err(|e| StoreError::io(&path, e)),
                n if n < before => write(&mut file, &path, &command),
                _ => Ok(()),
            };
            if let Err(e) = result {
                tracing::warn!("cannot update the index of runs: {e}");
            }
        }
    }
}

/// Opens `path` (creating it) and locks it exclusively, retrying when the file locked is no
/// longer the one at `path` (removed, and maybe made anew, while this waited).
fn lock_current(path: &Path) -> Result<File, StoreError> {
    loop {
        let file = files::private_open(path)?;
        file.lock().map_err(|e| StoreError::io(path, e))?;
        let locked = file.metadata().map_err(|e| StoreError::io(path, e))?;
        match std::fs::metadata(path) {
            Ok(now) if same_file(&now, &locked) => return Ok(file),
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(StoreError::io(path, e)),
        }
    }
}

/// Whether two looks at a file are at the same one.
#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.ino() == b.ino() && a.dev() == b.dev()
}

/// Whether two looks at a file are at the same one: on Windows by its creation time, to the
/// 100 ns (std offers its file index only on nightly), which a file made anew in its place has
/// not.
#[cfg(windows)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::windows::fs::MetadataExt;
    a.creation_time() == b.creation_time()
}

/// The file's command, or None when it is empty or damaged.
/// A command's file; None when it is damaged, and then rewritten by the next record. What is not
/// a regular file, or is larger than the store ever writes, is damage too (see
/// [`files::open_regular`]): it must not block or grow the reader.
fn read(file: &mut File, path: &Path) -> Option<CommandFile> {
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        tracing::warn!("{} is not a regular file; passed over", path.display());
        return None;
    }
    let mut text = Vec::new();
    let read = file.rewind().and_then(|()| (&*file).take(files::READ_WHOLE_MAX_BYTES).read_to_end(&mut text));
    if let Err(e) = read {
        tracing::warn!("cannot read {}: {e}", path.display());
        return None;
    }
    serde_json::from_slice(&text).ok()
}

fn write(file: &mut File, path: &Path, command: &CommandFile) -> Result<(), StoreError> {
    let text = serde_json::to_vec(command).map_err(|e| StoreError::io(path, std::io::Error::other(e)))?;
    file.rewind()
        .and_then(|()| file.set_len(0))
        .and_then(|()| file.write_all(&text))
        .map_err(|e| StoreError::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs_of(index: &Index, key: &CommandKey) -> Vec<String> {
        index.all().into_iter().find(|(k, _)| k == key).map(|(_, runs)| runs).unwrap_or_default()
    }

    fn key(args: &[&str]) -> CommandKey {
        CommandKey { tool: "cargo.check".into(), cwd: "/p".into(), args: args.iter().map(|a| a.to_string()).collect() }
    }

    #[test]
    fn each_run_finds_the_one_before_it_and_only_of_its_command() {
        let root = tempfile::tempdir().unwrap();
        let index = Index::open(root.path()).unwrap();
        assert_eq!(index.record(&key(&[]), "aaaaaaaa").unwrap(), None);
        assert_eq!(index.record(&key(&["--all"]), "bbbbbbbb").unwrap(), None);
        assert_eq!(index.record(&key(&[]), "cccccccc").unwrap().as_deref(), Some("aaaaaaaa"));
        // Across a restart: the index is only files.
        let index = Index::open(root.path()).unwrap();
        assert_eq!(runs_of(&index, &key(&[])), ["aaaaaaaa", "cccccccc"]);
        assert_eq!(index.all().len(), 2);
    }

    #[test]
    fn writers_at_once_lose_nothing() {
        let root = tempfile::tempdir().unwrap();
        let index = Index::open(root.path()).unwrap();
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let index = index.clone();
                std::thread::spawn(move || {
                    for n in 0..5 {
                        index.record(&key(&[]), &format!("run{t}{n}xyz")).unwrap();
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        let mut runs = runs_of(&index, &key(&[]));
        runs.sort();
        let mut want: Vec<String> = (0..4).flat_map(|t| (0..5).map(move |n| format!("run{t}{n}xyz"))).collect();
        want.sort();
        assert_eq!(runs, want);
    }

    #[test]
    fn forgetting_pruned_runs_keeps_the_rest_and_drops_empty_commands() {
        let root = tempfile::tempdir().unwrap();
        let index = Index::open(root.path()).unwrap();
        index.record(&key(&[]), "aaaaaaaa").unwrap();
        index.record(&key(&[]), "cccccccc").unwrap();
        index.record(&key(&["--all"]), "bbbbbbbb").unwrap();
        index.forget_missing(&[key(&[]).id(), key(&["--all"]).id(), "../../x".into()], |id| id == "cccccccc");
        assert_eq!(index.all(), vec![(key(&[]), vec!["cccccccc".to_string()])]);
        assert_eq!(index.record(&key(&["--all"]), "dddddddd").unwrap(), None);
    }

    #[test]
    fn a_damaged_file_is_a_fresh_start() {
        let root = tempfile::tempdir().unwrap();
        let index = Index::open(root.path()).unwrap();
        std::fs::write(root.path().join("commands").join(key(&[]).file_name()), b"{\"key\":").unwrap();
        assert_eq!(index.record(&key(&[]), "aaaaaaaa").unwrap(), None);
        assert_eq!(runs_of(&index, &key(&[])), ["aaaaaaaa"]);
    }
}
