//! What each plugin library said it offers (the manifest of each plugin it holds), kept in the
//! private store, so that a one-shot command loads only the library its call uses.
//!
//! Loading a library costs a millisecond or more (relocations, initialisers), and a command that
//! runs one tool would otherwise pay it for every plugin installed. A library's manifest is reused
//! only while the library is the same file, unchanged (device, inode, size, modification and
//! change times), and only by the same buildvise executable, since another version may read a
//! manifest differently. Anything else, an unreadable or damaged cache included, means loading
//! the library as if there were no cache.
//!
//! A manifest that marks a tool unavailable (its program not on PATH) is kept too, with what it
//! was decided from: PATH, and each of its directories as it was. Installing or removing a
//! program changes its directory, so such a manifest is reused only while nothing on PATH
//! changed, and a program installed since is seen at once. Without this, every command on a
//! machine lacking one of the generic plugin's programs (most machines) loaded that library.
//!
//! The cache decides nothing about trust: it lives in the operator's store, names only libraries
//! found in the operator's plugin directories, and the code that runs is loaded from that same
//! path when a call needs it.

use crate::store::files;
use buildvise_plugin_api::Manifest;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The cache's file name in the store's root.
pub const FILE: &str = "plugin-manifests.json";

/// Which file a path held when it was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i64,
    ctime_ns: i64,
}

impl Stamp {
    #[cfg(unix)]
    pub fn of(path: &Path) -> Option<Stamp> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path).ok()?;
        let ns = |secs: i64, nsecs: i64| secs.saturating_mul(1_000_000_000).saturating_add(nsecs);
        Some(Stamp {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime_ns: ns(m.mtime(), m.mtime_nsec()),
            ctime_ns: ns(m.ctime(), m.ctime_nsec()),
        })
    }

    /// On Windows: the volume and the file's index are not offered by std outside nightly, so a
    /// file is told by its size, its last write and its creation (a library copied in its place
    /// is created anew), in 100 ns since 1601.
    #[cfg(windows)]
    pub fn of(path: &Path) -> Option<Stamp> {
        use std::os::windows::fs::MetadataExt;
        let m = std::fs::metadata(path).ok()?;
        let ticks = |t: u64| i64::try_from(t).unwrap_or(i64::MAX);
        Some(Stamp {
            dev: 0,
            ino: 0,
            size: m.file_size(),
            mtime_ns: ticks(m.last_write_time()),
            ctime_ns: ticks(m.creation_time()),
        })
    }
}

#[derive(Serialize, Deserialize)]
struct Saved {
    /// The executable that wrote it.
    host: Stamp,
    plugins: Vec<Entry>,
}

#[derive(Clone, Serialize, Deserialize)]
struct Entry {
    path: PathBuf,
    stamp: Stamp,
    /// One per plugin the library holds, in its order.
    manifests: Vec<Manifest>,
    /// For manifests that mark a tool unavailable: PATH when they were read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    around: Option<PathStamp>,
}

/// PATH's directories, in order, each with its stamp (None where it cannot be read).
type PathStamp = Vec<(String, Option<Stamp>)>;

fn path_stamp(path: Option<&OsString>) -> PathStamp {
    let dirs = path.map(std::env::split_paths).into_iter().flatten();
    dirs.map(|dir| (dir.to_string_lossy().into_owned(), Stamp::of(&dir))).collect()
}

/// The manifests read from the store, and those this process learned.
pub struct ManifestCache {
    file: Option<PathBuf>,
    host: Option<Stamp>,
    known: HashMap<PathBuf, Entry>,
    /// What this process found, in order: written back when it differs from what was read.
    seen: Vec<Entry>,
    changed: bool,
    path: Option<OsString>,
    /// PATH's stamp, taken once, when a manifest needs it.
    around: OnceLock<PathStamp>,
}

impl ManifestCache {
    /// The cache kept in `file`; with None, a cache that remembers nothing.
    pub fn open(file: Option<PathBuf>) -> Self {
        Self::open_with_path(file, std::env::var_os("PATH"))
    }

    fn open_with_path(file: Option<PathBuf>, path: Option<OsString>) -> Self {
        let host = std::env::current_exe().ok().and_then(|exe| Stamp::of(&exe));
        let saved = file.as_deref().and_then(|f| files::read_json::<Saved>(f).ok()).filter(|s| Some(s.host) == host);
        let known = saved.map(|s| s.plugins.into_iter().map(|e| (e.path.clone(), e)).collect()).unwrap_or_default();
        ManifestCache { file, host, known, seen: Vec::new(), changed: false, path, around: OnceLock::new() }
    }

    fn around(&self) -> &PathStamp {
        self.around.get_or_init(|| path_stamp(self.path.as_ref()))
    }

    /// The manifests of the library at `path`, if they were read from this very file before
    /// (and, if one marks a tool unavailable, with PATH as it is now).
    pub fn get(&mut self, path: &Path, stamp: Stamp) -> Option<Vec<Manifest>> {
        let entry = self.known.get(path)?;
        if entry.stamp != stamp || entry.around.as_ref().is_some_and(|around| around != self.around()) {
            return None;
        }
        let entry = entry.clone();
        let manifests = entry.manifests.clone();
        self.seen.push(entry);
        Some(manifests)
    }

    /// Records the manifests just read from the library at `path`.
    pub fn remember(&mut self, path: &Path, stamp: Stamp, manifests: Vec<Manifest>) {
        self.changed = true;
        let unavailable = manifests.iter().flat_map(|m| &m.tools).any(|t| t.unavailable.is_some());
        let around = unavailable.then(|| self.around().clone());
        self.seen.push(Entry { path: path.to_path_buf(), stamp, manifests, around });
    }

    /// Writes what this process found, when it is not what was read: a library added, changed or
    /// gone. A cache that cannot be written only costs the next command its loading time.
    pub fn save(self) {
        let (Some(file), Some(host)) = (self.file, self.host) else { return };
        if !self.changed && self.seen.len() == self.known.len() {
            return;
        }
        if let Err(e) = files::write_json(&file, &Saved { host, plugins: self.seen }) {
            tracing::debug!("cannot keep plugin manifests: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(name: &str) -> Manifest {
        Manifest::new(name, "1.0.0", vec![])
    }

    #[test]
    fn a_manifest_is_reused_only_for_the_same_file() {
        let dir = tempfile::tempdir().unwrap();
        let (lib, file) = (dir.path().join("lib.so"), dir.path().join(FILE));
        std::fs::write(&lib, b"one").unwrap();
        let stamp = Stamp::of(&lib).unwrap();

        let mut cache = ManifestCache::open(Some(file.clone()));
        assert_eq!(cache.get(&lib, stamp), None);
        cache.remember(&lib, stamp, vec![manifest("x"), manifest("y")]);
        cache.save();

        let mut cache = ManifestCache::open(Some(file.clone()));
        assert_eq!(cache.get(&lib, stamp), Some(vec![manifest("x"), manifest("y")]));

        // Rewritten in place: same inode, another size and times.
        std::fs::write(&lib, b"other").unwrap();
        let mut cache = ManifestCache::open(Some(file.clone()));
        assert_eq!(cache.get(&lib, Stamp::of(&lib).unwrap()), None);

        // Written by another executable: ignored whole.
        let saved: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        let mut other = saved.clone();
        other["host"]["ino"] = serde_json::json!(saved["host"]["ino"].as_u64().unwrap() + 1);
        std::fs::write(&file, serde_json::to_vec(&other).unwrap()).unwrap();
        let mut cache = ManifestCache::open(Some(file.clone()));
        assert_eq!(cache.get(&lib, stamp), None);

        std::fs::write(&file, b"{ damaged").unwrap();
        assert_eq!(ManifestCache::open(Some(file)).get(&lib, stamp), None);
    }

    #[test]
    #[cfg(unix)] // std opens no directory on Windows (that takes FILE_FLAG_BACKUP_SEMANTICS) to set its time
    fn a_manifest_marking_a_tool_unavailable_is_reused_until_path_changes() {
        let dir = tempfile::tempdir().unwrap();
        let (lib, file, bin) = (dir.path().join("lib.so"), dir.path().join(FILE), dir.path().join("bin"));
        std::fs::write(&lib, b"one").unwrap();
        std::fs::create_dir(&bin).unwrap();
        let stamp = Stamp::of(&lib).unwrap();
        let path = Some(OsString::from(format!("{}:/no/such/dir", bin.display())));
        let spec = buildvise_plugin_api::ToolSpec::new("go.test", "go test").unavailable("`go` is not on PATH");
        let unsettled = Manifest::new("x", "1.0.0", vec![spec]);

        let mut cache = ManifestCache::open_with_path(Some(file.clone()), path.clone());
        cache.remember(&lib, stamp, vec![manifest("settled"), unsettled.clone()]);
        cache.save();
        let mut cache = ManifestCache::open_with_path(Some(file.clone()), path.clone());
        assert_eq!(cache.get(&lib, stamp), Some(vec![manifest("settled"), unsettled.clone()]));
        cache.save();

        // Another PATH, or a program installed in one of its directories: read anew.
        let other = Some(OsString::from("/no/such/dir"));
        assert_eq!(ManifestCache::open_with_path(Some(file.clone()), other).get(&lib, stamp), None);
        std::fs::write(bin.join("go"), b"").unwrap();
        // The directory's time says it changed, as a clock with coarse ticks might not by itself.
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(2);
        std::fs::File::open(&bin).unwrap().set_modified(later).unwrap();
        assert_eq!(ManifestCache::open_with_path(Some(file), path).get(&lib, stamp), None);
    }
}
