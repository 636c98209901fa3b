//! Finding, loading and indexing plugins: their tools, and the formats they export.
//!
//! Libraries named `buildvise_plugin_*` (with the platform's prefix and suffix) are searched in
//! order: explicit dirs (`--plugin-dir`, `BUILDVISE_PLUGIN_PATH`, config `plugin_dirs`), the
//! executable's directory and its `deps/`, `<exe>/../lib/buildvise/plugins` (where `cargo xtask
//! install` puts them), and the user data dir (`%LOCALAPPDATA%` on Windows).
//! A file name seen once is not loaded again from a later dir (cargo puts the same cdylib in
//! `target/release` and `target/release/deps`). A broken library is skipped and reported; when two
//! plugins claim one tool, the first wins and the clash is reported.
//!
//! Every library found counts, whichever tool a call uses, but a one-shot command loads only the
//! one it calls: the others are known by the manifests they gave before ([`cache`]). A server
//! loads every library when it starts, so that a plugin reinstalled under a running server does
//! not change what the server offers.

pub mod cache;
mod library;

pub use library::{LoadError, ParserHandle, PluginError, PluginLibrary};

use buildvise_plugin_api::abi::Linked;
use buildvise_plugin_api::{CommandPlan, FormatSpec, Manifest, ParseContext, PlanRequest, ToolSpec};
use cache::{ManifestCache, Stamp};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

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

/// A plugin found on disk: what its manifest offers, and its library once a call needs it.
pub struct Plugin {
    pub path: PathBuf,
    /// Which of the library's plugins this is.
    index: usize,
    pub manifest: Manifest,
    library: OnceLock<Result<Arc<PluginLibrary>, PluginError>>,
}

impl Plugin {
    fn loaded(library: Arc<PluginLibrary>) -> Self {
        Plugin {
            path: library.path.clone(),
            index: library.index,
            manifest: library.manifest.clone(),
            library: OnceLock::from(Ok(library)),
        }
    }

    fn known(path: &Path, index: usize, manifest: Manifest) -> Self {
        Plugin { path: path.to_path_buf(), index, manifest, library: OnceLock::new() }
    }

    /// The library, loaded on first use. A library that no longer gives the manifest it was
    /// known by is refused: what was listed is what runs.
    pub fn library(&self) -> Result<&Arc<PluginLibrary>, PluginError> {
        let loaded = self.library.get_or_init(|| {
            let library = PluginLibrary::load_one(&self.path, self.index).map_err(|e| match e {
                LoadError::NoSuchPlugin { .. } => PluginError::Changed { path: self.path.clone() },
                e => PluginError::Load { path: self.path.clone(), reason: e.to_string() },
            })?;
            if library.manifest != self.manifest {
                return Err(PluginError::Changed { path: self.path.clone() });
            }
            Ok(library)
        });
        loaded.as_ref().map_err(Clone::clone)
    }

    pub fn plan(&self, request: &PlanRequest) -> Result<CommandPlan, PluginError> {
        self.library()?.plan(request)
    }

    pub fn parser(&self, context: &ParseContext) -> Result<ParserHandle, PluginError> {
        self.library()?.parser(context)
    }

    pub fn format_parser(&self, format: &str, context: &ParseContext) -> Result<ParserHandle, PluginError> {
        self.library()?.format_parser(format, context)
    }
}

/// A tool and the plugin that runs it.
#[derive(Clone)]
pub struct Tool {
    pub spec: ToolSpec,
    pub plugin: Arc<Plugin>,
}

/// A format a plugin exports, for tools defined in config files.
#[derive(Clone)]
pub struct Format {
    pub spec: FormatSpec,
    pub plugin: Arc<Plugin>,
}

/// When libraries are loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Loading {
    /// Each when a call first needs it, the others known by their cached manifests.
    OnUse,
    /// All of them now.
    Now,
}

/// Every tool and format of every plugin found, plus what went wrong.
#[derive(Default)]
pub struct Registry {
    tools: BTreeMap<String, Tool>,
    formats: BTreeMap<String, Format>,
    /// The usable plugins, in the order they were found.
    pub plugins: Vec<Arc<Plugin>>,
    pub failures: Vec<LoadFailure>,
    pub clashes: Vec<Clash>,
    /// What is wrong with the directories the operator named (`--plugin-dir` and the like): each
    /// says what to fix. The default places may well be missing or hold other libraries.
    pub dir_problems: Vec<String>,
    pub searched: Vec<PathBuf>,
}

impl Registry {
    /// Finds the plugins `linked` into this executable (a static build's), then every plugin in
    /// `explicit` dirs and the default places. `cache` is where the manifests of libraries loaded
    /// before are kept (in the store), if anywhere.
    pub fn discover(explicit: &[PathBuf], linked: Option<&Linked>, cache: Option<PathBuf>, loading: Loading) -> Self {
        let mut dirs: Vec<PathBuf> = explicit.to_vec();
        dirs.extend(default_dirs());
        let mut registry = Registry::default();
        if let Some(linked) = linked {
            registry.link(linked);
        }
        let mut cache = ManifestCache::open(cache);
        let mut seen_names = HashSet::new();
        for (i, dir) in dirs.into_iter().enumerate() {
            // Only the dirs the operator named are checked for mistakes.
            let named = (i < explicit.len()).then_some(&mut registry.dir_problems);
            for path in plugin_files(&dir, named) {
                let name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
                if seen_names.insert(name) {
                    registry.find(&path, &mut cache, loading);
                }
            }
            registry.searched.push(dir);
        }
        cache.save();
        registry
    }

    fn find(&mut self, path: &Path, cache: &mut ManifestCache, loading: Loading) {
        let stamp = Stamp::of(path);
        if loading == Loading::OnUse
            && let Some(manifests) = stamp.and_then(|stamp| cache.get(path, stamp))
        {
            for (index, manifest) in manifests.into_iter().enumerate() {
                self.add(Arc::new(Plugin::known(path, index, manifest)));
            }
            return;
        }
        match PluginLibrary::load(path) {
            Ok(plugins) => {
                if let Some(stamp) = stamp {
                    let manifests: Vec<Manifest> = plugins.iter().map(|p| p.manifest.clone()).collect();
                    cache.remember(path, stamp, manifests);
                }
                for plugin in plugins {
                    self.add(Arc::new(Plugin::loaded(plugin)));
                }
            }
            Err(e) => self.failures.push(LoadFailure { path: path.to_path_buf(), reason: e.to_string() }),
        }
    }

    /// Adds the plugins linked into this executable, shown as the executable's.
    fn link(&mut self, linked: &Linked) {
        let exe = std::env::current_exe().unwrap_or_default();
        match PluginLibrary::linked(&exe, linked) {
            Ok(plugins) => plugins.into_iter().for_each(|plugin| self.add(Arc::new(Plugin::loaded(plugin)))),
            Err(e) => self.failures.push(LoadFailure { path: exe, reason: e.to_string() }),
        }
    }

    #[cfg(test)]
    fn load(&mut self, path: &Path) {
        self.find(path, &mut ManifestCache::open(None), Loading::Now);
    }

    fn add(&mut self, plugin: Arc<Plugin>) {
        for spec in &plugin.manifest.tools {
            if let Some(existing) = self.tools.get(&spec.name) {
                self.clashes.push(Clash {
                    tool: spec.name.clone(),
                    kept: existing.plugin.path.clone(),
                    ignored: plugin.path.clone(),
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
                    ignored: plugin.path.clone(),
                });
            } else {
                self.formats.insert(spec.name.clone(), Format { spec: spec.clone(), plugin: Arc::clone(&plugin) });
            }
        }
        self.plugins.push(plugin);
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

/// The plugin libraries in `dir`, sorted. With `problems`, the dir is one the operator named,
/// and what is wrong with it goes there: it cannot be read, holds a library not named as a plugin,
/// or holds no plugin at all.
fn plugin_files(dir: &Path, mut problems: Option<&mut Vec<String>>) -> Vec<PathBuf> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            if let Some(problems) = problems {
                problems.push(format!(
                    "plugin dir {} cannot be read ({e}); fix --plugin-dir, BUILDVISE_PLUGIN_PATH or plugin_dirs in the config",
                    dir.display()
                ));
            }
            return Vec::new();
        }
    };
    let (mut files, mut others) = (Vec::new(), Vec::new());
    for path in entries.flatten().map(|e| e.path()) {
        if is_plugin_file(&path) {
            files.push(path);
        } else if problems.is_some() && is_library(&path) {
            others.push(path);
        }
    }
    files.sort();
    others.sort();
    if let Some(problems) = problems.as_mut() {
        for path in &others {
            problems.push(format!(
                "{} is not loaded: a plugin library's name starts with {}buildvise_plugin_; rename it if it is one",
                path.display(),
                std::env::consts::DLL_PREFIX
            ));
        }
        if files.is_empty() && others.is_empty() {
            problems.push(format!(
                "plugin dir {} holds no {}buildvise_plugin_*{} library",
                dir.display(),
                std::env::consts::DLL_PREFIX,
                std::env::consts::DLL_SUFFIX
            ));
        }
    }
    files
}

fn is_plugin_file(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else { return false };
    let prefix = format!("{}buildvise_plugin_", std::env::consts::DLL_PREFIX);
    name.starts_with(&prefix) && is_library(path)
}

fn is_library(path: &Path) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(std::env::consts::DLL_SUFFIX))
        && path.is_file()
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
    // Windows keeps a user's programs' data in `%LOCALAPPDATA%`, beside the store.
    let windows = if cfg!(windows) { std::env::var_os("LOCALAPPDATA").filter(|v| !v.is_empty()) } else { None };
    let data = windows.map(PathBuf::from).or_else(|| {
        std::env::var_os("XDG_DATA_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
    });
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
