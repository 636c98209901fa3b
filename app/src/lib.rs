//! The application: `exec`, `log` and `list` (and `parse`, `runs`, `diff`, `gain`), each written once. A surface
//! (the CLI or the MCP server) maps its arguments to a call, asks the [`App`], and prints the
//! answer. Everything in between happens here, always in this order: where the call may act
//! (access), what is allowed and preferred there (config), the work (plugins, the run, the store),
//! and the answer (render, a pure function of what the work produced).

mod discover;
mod error;
mod exec;
mod gain;
mod history;
mod log;
mod parse;
mod rewrite;
mod sink;
mod slots;
pub mod tokens;

pub use discover::{Client, DiscoverCall, Discovery, Row, Total, Transcripts};
pub use error::AppError;
pub use exec::{ExecAnswer, ExecCall};
pub use gain::{Sent, parse_since};
pub use history::RunsFilter;
pub use log::{LogCall, RawPage};
pub use parse::ParseCall;
pub use rewrite::{HOOK_OFF, Rewrite};
pub use sink::Progress;

// The engine's values a surface names: a surface depends on this crate alone, so what it may use
// of the engine is what is listed here.
pub use buildvise_engine::access::Access;
pub use buildvise_engine::config::{Config, check_max_lines};
pub use buildvise_engine::describe;
pub use buildvise_engine::gain::{BadSince, Gain};
pub use buildvise_engine::history::ListedRun;
pub use buildvise_engine::outcome::Finished;
pub use buildvise_engine::parse::SavedLog;
pub use buildvise_engine::plugins::Loading;
pub use buildvise_engine::render::Format as ReportFormat;
pub use buildvise_engine::render::{
    Detail, GainStyle, Hints, Rendered, Surface, render_gain, render_runs, shell_words,
};
pub use buildvise_engine::run::{CancelToken, RunError};
pub use buildvise_engine::sandbox::Mode as SandboxMode;
pub use buildvise_engine::store::{AnsweredCall, RunMeta, RunStatus, StreamFilter, now_ms};
pub use log::Page;

use buildvise_engine::parse::{Flagged, TROUBLE_WORDS, flag_stored};
use buildvise_engine::plugins::{self, Registry};
use buildvise_engine::render::{self, Tail};
use buildvise_engine::run::Guard;
use buildvise_engine::store::Store;
use buildvise_engine::tools::{self, Tool};
use buildvise_plugin_api::FormatSpec;
use buildvise_plugin_api::abi::Linked;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Plugins, the store, and what the operator allowed; shared by every call of a process.
pub struct App {
    registry: Registry,
    store: Store,
    /// The operator's settings; a call's project may narrow them.
    config: Config,
    guard: Option<Guard>,
    in_flight: InFlight,
    slots: slots::Slots,
    /// Set while a retention pass runs, so that passes do not pile up in a busy server.
    pruning: Arc<Pruning>,
}

/// A plugin library that loaded, for a person who wants to know where it came from.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LoadedPlugin {
    pub name: String,
    pub version: String,
    pub path: PathBuf,
}

impl App {
    /// The application with the operator's `config`: the run store at its default place, and the
    /// plugins `linked` into the executable (a static build's) and those of `plugin_dirs` and the
    /// config's directories (never a project's), loaded as `loading` says. With `guard`, a helper
    /// process ends the runs in flight if this process is killed outright.
    pub fn open(
        config: Config,
        plugin_dirs: &[PathBuf],
        linked: Option<&Linked>,
        guard: bool,
        loading: Loading,
    ) -> Result<App, AppError> {
        let mut dirs = plugin_dirs.to_vec();
        dirs.extend(config.plugin_dirs.iter().cloned());
        let guard = guard.then(Guard::start);
        let root = Store::default_root();
        let store = Store::open(&root)?;
        let registry = Registry::discover(&dirs, linked, Some(root.join(plugins::cache::FILE)), loading);
        Ok(App::new(registry, store, config, guard))
    }

    /// The application over a registry and a store made elsewhere (the bench, tests).
    pub fn new(registry: Registry, store: Store, config: Config, guard: Option<Guard>) -> Self {
        let slots = slots::Slots::new(config.concurrent_runs);
        App { registry, store, config, guard, in_flight: InFlight::default(), slots, pruning: Arc::default() }
    }

    /// The operator's settings.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The formats the plugins export, for tools defined in config.
    pub fn formats(&self) -> Vec<&FormatSpec> {
        self.registry.formats().map(|f| &f.spec).collect()
    }

    /// The plugin libraries that loaded.
    pub fn plugins(&self) -> Vec<LoadedPlugin> {
        let loaded = |p: &buildvise_engine::plugins::Plugin| LoadedPlugin {
            name: p.manifest.name.clone(),
            version: p.manifest.version.clone(),
            path: p.path.clone(),
        };
        self.registry.plugins.iter().map(|p| loaded(p)).collect()
    }

    /// The directories searched for plugins, in order.
    pub fn plugins_searched(&self) -> &[PathBuf] {
        &self.registry.searched
    }

    /// The tools a caller in `cwd` may use (the plugins', and those its config files define), and
    /// what could not be loaded. A project file that cannot be read is one of those problems.
    pub fn list(&self, access: &Access, cwd: &Path) -> Rendered {
        let mut problems = Vec::new();
        let narrowed = access
            .check_cwd(cwd)
            .map_err(AppError::from)
            .and_then(|place| Ok(self.config.for_project(&place.dir, place.root.as_deref())?.0));
        let config = narrowed.unwrap_or_else(|e| {
            problems.push(describe(&e));
            self.config.clone()
        });
        let (tools, broken) = tools::all(&self.registry, &config);
        problems.extend(config.problems.iter().map(ToString::to_string));
        problems.extend(broken.iter().map(ToString::to_string));
        let visible = tools.iter().filter(|t| config.allows(&t.spec) && t.spec.unavailable.is_none());
        let trouble = render::PluginTrouble {
            failures: &self.registry.failures,
            clashes: &self.registry.clashes,
            dir_problems: &self.registry.dir_problems,
            none_loaded: self.registry.plugins.is_empty(),
        };
        render::render_list(visible, &trouble, &problems, cwd)
    }

    /// A finished run as a report in `format` (SARIF, JUnit XML, GitHub or GitLab annotations).
    pub fn report(&self, finished: &Finished, format: ReportFormat) -> String {
        render::render_report(finished, format, env!("CARGO_PKG_VERSION"))
    }

    /// A stored run's answer at `detail`, with its output's last lines when the answer shows them.
    fn answer(&self, finished: &Finished, detail: Detail, max_lines: u32, surface: Surface) -> Rendered {
        let mut tail = (Vec::new(), 0);
        let mut flagged = Flagged::default();
        if render::needs_tail(finished, detail)
            && let Ok(mut reader) = self.store.reader(&finished.meta.id)
        {
            let total = reader.count(StreamFilter::Both).unwrap_or(0);
            let start = total.saturating_sub(u64::from(max_lines));
            tail = (reader.page(StreamFilter::Both, start, u64::from(max_lines)).unwrap_or_default(), total);
            flagged = flag_stored(&mut reader, start).unwrap_or_default();
        }
        let tail = Tail {
            lines: &tail.0,
            total: tail.1,
            flagged: &flagged.lines,
            flagged_count: flagged.count,
            flagged_grep: TROUBLE_WORDS,
        };
        render::render_exec(finished, Some(tail), detail, max_lines, Hints { surface, stored: true })
    }

    /// The tool called `name`, unless it is unknown or `config` hides it (a hidden tool reads as
    /// unknown).
    fn tool(&self, name: &str, config: &Config) -> Result<Tool, AppError> {
        match tools::find(&self.registry, config, name)? {
            Some(tool) if config.allows(&tool.spec) => Ok(tool),
            _ => {
                let (all, _) = tools::all(&self.registry, config);
                let names: Vec<&str> = all
                    .iter()
                    .filter(|t| config.allows(&t.spec) && t.spec.unavailable.is_none())
                    .map(|t| t.spec.name.as_str())
                    .collect();
                // Why a tool may be missing that the caller expected: the operator's mistakes first.
                let why = if self.registry.plugins.is_empty() {
                    format!("; {}", render::NO_PLUGIN)
                } else {
                    let config_problems = config.problems.iter().map(ToString::to_string);
                    let first = self.registry.dir_problems.iter().cloned().chain(config_problems).next();
                    first.map(|p| format!("; {p}")).unwrap_or_default()
                };
                Err(AppError::UnknownTool {
                    name: name.to_string(),
                    suggest: did_you_mean(&closest(name, &names)),
                    why,
                })
            }
        }
    }

    /// Waits, at most `patience`, for a retention pass this process started: a short-lived
    /// process calls this after it answered, so that its pass is not cut short at exit.
    pub fn settle_background(&self, patience: Duration) {
        self.pruning.wait(patience);
    }

    /// Cancels every run in flight and waits, at most `patience`, until each has been stored.
    pub fn shutdown(&self, patience: Duration) {
        self.in_flight.cancel_all();
        let until = Instant::now() + patience;
        while self.in_flight.count() > 0 && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Up to three of `names` closest to `name`, for "did you mean": a plugin's name (`pytest`,
/// `cargo`) means its tools, which edit distance alone ranked below another plugin's
/// (`npm.test` is nearer to `pytest` than `pytest.run` is).
fn closest(name: &str, names: &[&str]) -> Vec<String> {
    let of_plugin: Vec<String> = names
        .iter()
        .filter(|t| t.split_once('.').is_some_and(|(p, _)| p == name))
        .take(3)
        .map(|t| t.to_string())
        .collect();
    if !of_plugin.is_empty() {
        return of_plugin;
    }
    let mut scored: Vec<(usize, &str)> = names.iter().map(|t| (strsim::levenshtein(name, t), *t)).collect();
    scored.sort();
    scored.into_iter().filter(|(d, _)| *d <= 3).take(3).map(|(_, t)| t.to_string()).collect()
}

/// ` (did you mean a or b?)` or nothing.
fn did_you_mean(names: &[String]) -> String {
    if names.is_empty() { String::new() } else { format!(" (did you mean {}?)", names.join(" or ")) }
}

/// Whether a retention pass of this process is under way; a process about to exit waits for it
/// to end (woken when it does, not polling).
#[derive(Default)]
struct Pruning {
    busy: Mutex<bool>,
    ended: std::sync::Condvar,
}

impl Pruning {
    /// True when no pass was under way: the caller runs one and calls `end`.
    fn begin(&self) -> bool {
        !std::mem::replace(&mut *self.lock(), true)
    }

    fn end(&self) {
        *self.lock() = false;
        self.ended.notify_all();
    }

    fn wait(&self, patience: Duration) {
        let busy = self.lock();
        let _ = self.ended.wait_timeout_while(busy, patience, |busy| *busy);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, bool> {
        self.busy.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The cancel tokens of the runs in flight, so that a server shutting down can end them all.
#[derive(Default)]
struct InFlight {
    next: AtomicU64,
    runs: Mutex<HashMap<u64, CancelToken>>,
}

/// A run's place in [`InFlight`], given up when dropped.
struct Registration<'a> {
    in_flight: &'a InFlight,
    key: u64,
}

impl InFlight {
    fn register(&self, cancel: &CancelToken) -> Registration<'_> {
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        self.lock().insert(key, cancel.clone());
        Registration { in_flight: self, key }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, CancelToken>> {
        self.runs.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn cancel_all(&self) {
        for token in self.lock().values() {
            token.cancel();
        }
    }

    fn count(&self) -> usize {
        self.lock().len()
    }
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        self.in_flight.lock().remove(&self.key);
    }
}

#[cfg(test)]
mod tests {
    use super::closest;

    #[test]
    fn a_plugins_name_suggests_its_tools_and_a_typo_the_nearest_tool() {
        let names = ["cargo.build", "cargo.check", "cargo.clippy", "cargo.test", "npm.test", "pytest.run"];
        assert_eq!(closest("pytest", &names), ["pytest.run"]);
        assert_eq!(closest("cargo", &names), ["cargo.build", "cargo.check", "cargo.clippy"]);
        assert_eq!(closest("cargo.tset", &names), ["cargo.test"]);
        assert!(closest("gradle", &names).is_empty());
    }
}
