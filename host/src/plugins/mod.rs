//! Finding, loading and indexing plugins: their tools, and the formats they export.
//!
//! Libraries named `buildvise_plugin_*` (with the platform's prefix and suffix) are searched in
//! order: explicit dirs (`--plugin-dir`, `BUILDVISE_PLUGIN_PATH`, config `plugin_dirs`), the
//! executable's directory and its `deps/`, `<exe>/../lib/buildvise/plugins` (where `cargo xtask
//! install` puts them), and the user data dir.
//! A file name seen once is not loaded again from a later dir (cargo puts the same cdylib in
//! `target/release` and `target/release/deps`). A broken library is skipped and reported; when two
//! plugins claim one tool, the first wins and the clash is reported.

mod library;

pub use library::{LineRef, LoadError, ParserHandle, PluginError, PluginLibrary};

use buildvise_plugin_api::{FormatSpec, ToolSpec};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A library that could not be used, and why.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LoadFailure {
    pub path: PathBuf,
    pub reason: String,
}

/// A tool claimed by two plugins.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Clash {
    pub tool: String,
    pub kept: PathBuf,
    pub ignored: PathBuf,
}

/// A tool and the plugin that runs it.
#[derive(Clone)]
pub struct Tool {
    pub spec: ToolSpec,
    pub plugin: Arc<PluginLibrary>,
}

/// A format a plugin exports, for tools defined in config files.
#[derive(Clone)]
pub struct Format {
    pub spec: FormatSpec,
    pub plugin: Arc<PluginLibrary>,
}

/// Every tool and format of every plugin that loaded, plus what went wrong.
#[derive(Default)]
pub struct Registry {
    tools: BTreeMap<String, Tool>,
    formats: BTreeMap<String, Format>,
    /// The libraries that loaded, in the order they were found.
    pub loaded: Vec<Arc<PluginLibrary>>,
    pub failures: Vec<LoadFailure>,
    pub clashes: Vec<Clash>,
    pub searched: Vec<PathBuf>,
}

impl Registry {
    /// Loads every plugin found in `explicit` dirs and then the default places.
    pub fn discover(explicit: &[PathBuf]) -> Self {
        let mut dirs: Vec<PathBuf> = explicit.to_vec();
        dirs.extend(default_dirs());
        let mut registry = Registry::default();
        let mut seen_names = HashSet::new();
        for dir in dirs {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                registry.searched.push(dir);
                continue;
            };
            let mut files: Vec<PathBuf> = entries.flatten().map(|e| e.path()).filter(|p| is_plugin_file(p)).collect();
            files.sort();
            for path in files {
                let name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
                if seen_names.insert(name) {
                    registry.load(&path);
                }
            }
            registry.searched.push(dir);
        }
        registry
    }

    fn load(&mut self, path: &Path) {
        match PluginLibrary::load(path) {
            Ok(plugin) => {
                for spec in &plugin.manifest.tools {
                    if let Some(existing) = self.tools.get(&spec.name) {
                        self.clashes.push(Clash {
                            tool: spec.name.clone(),
                            kept: existing.plugin.path.clone(),
                            ignored: path.to_path_buf(),
                        });
                    } else {
                        self.tools.insert(spec.name.clone(), Tool { spec: spec.clone(), plugin: Arc::clone(&plugin) });
                    }
                }
                for spec in &plugin.manifest.formats {
                    if let Some(existing) = self.formats.get(&spec.name) {
                        self.clashes.push(Clash {
                            tool: format!("format {}", spec.name),
                            kept: existing.plugin.path.clone(),
                            ignored: path.to_path_buf(),
                        });
                    } else {
                        self.formats
                            .insert(spec.name.clone(), Format { spec: spec.clone(), plugin: Arc::clone(&plugin) });
                    }
                }
                self.loaded.push(plugin);
            }
            Err(e) => self.failures.push(LoadFailure { path: path.to_path_buf(), reason: e.to_string() }),
        }
    }

    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.tools.get(name)
    }

    /// All tools, sorted by name.
    pub fn tools(&self) -> impl Iterator<Item = &Tool> {
        self.tools.values()
    }

    pub fn format(&self, name: &str) -> Option<&Format> {
        self.formats.get(name)
    }

    /// All formats, sorted by name.
    pub fn formats(&self) -> impl Iterator<Item = &Format> {
        self.formats.values()
    }
}

fn is_plugin_file(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else { return false };
    let prefix = format!("{}buildvise_plugin_", std::env::consts::DLL_PREFIX);
    name.starts_with(&prefix) && name.ends_with(std::env::consts::DLL_SUFFIX) && path.is_file()
}

fn default_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    // Canonical, so that a symlink to the binary (in `~/bin`, say) finds the plugins beside the
    // real one, and `list` names the prefix without a `..`.
    let exe = std::env::current_exe().and_then(std::fs::canonicalize).ok();
    if let Some(exe_dir) = exe.as_deref().and_then(Path::parent) {
        dirs.extend([exe_dir.to_path_buf(), exe_dir.join("deps")]);
        if let Some(prefix) = exe_dir.parent() {
            dirs.push(prefix.join("lib/buildvise/plugins"));
        }
    }
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")));
    if let Some(data) = data {
        dirs.push(data.join("buildvise/plugins"));
    }
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugin_file_names() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join(format!(
            "{}buildvise_plugin_x{}",
            std::env::consts::DLL_PREFIX,
            std::env::consts::DLL_SUFFIX
        ));
        let other = dir.path().join(format!("{}other{}", std::env::consts::DLL_PREFIX, std::env::consts::DLL_SUFFIX));
        std::fs::write(&good, b"").unwrap();
        std::fs::write(&other, b"").unwrap();
        assert!(is_plugin_file(&good));
        assert!(!is_plugin_file(&other));
    }

    #[test]
    fn garbage_library_is_reported_not_fatal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(format!(
            "{}buildvise_plugin_junk{}",
            std::env::consts::DLL_PREFIX,
            std::env::consts::DLL_SUFFIX
        ));
        std::fs::write(&path, b"not a library").unwrap();
        let mut registry = Registry::default();
        registry.load(&path);
        assert_eq!(registry.failures.len(), 1);
        assert!(registry.failures[0].reason.starts_with("cannot load"), "{}", registry.failures[0].reason);
    }
}
