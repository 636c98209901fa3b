//! Settings, and who may set what.
//!
//! The operator's settings come from built-in defaults, the user's
//! `~/.config/buildvise/config.toml`, the environment and the command line, and are fixed when
//! buildvise starts ([`Config::load`]). A project's `buildvise.toml` comes with a repository that
//! nobody vetted, so it may only narrow them ([`Config::for_project`]): it can hide tools, make
//! the project read-only, lower the timeout cap, choose its answers' size and prune its own runs,
//! but never load code (`plugin_dirs`), consent for the operator (`allow_mutating`), or reach
//! other projects' runs.

mod tools;

pub use tools::{Pattern, ToolDef, severity_of};

use crate::sandbox::{Mode, Sandbox};
use crate::store::Retention;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub const DEFAULT_MAX_LINES: u32 = 20;
pub const MAX_LINES_LIMIT: u32 = 10_000;
const DEFAULT_TIMEOUT_SECS: u64 = 600;
const DEFAULT_MAX_TIMEOUT_SECS: u64 = 3600;
/// Runs one server runs at once: enough for a few agents' builds side by side, few enough
/// that they do not all fight for the same cores.
const DEFAULT_CONCURRENT_RUNS: usize = 4;
pub const PROJECT_FILE: &str = "buildvise.toml";
/// Keys only the operator may set, refused in a project file with the reason.
/// The most a project's `buildvise.toml` may hold: far more than a real one (a few KiB), and
/// little enough that a file planted to be huge costs no memory or time worth the name.
pub const PROJECT_FILE_MAX_BYTES: u64 = 256 * 1024;
/// The most tools a project's file may define; `list` shows each, so more would flood an answer.
pub const PROJECT_MAX_TOOLS: usize = 100;
const OPERATOR_ONLY: &[&str] = &["plugin_dirs", "allow_mutating", "concurrent_runs"];

/// The user's config file as written. Every key is optional so that it layers over defaults.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
struct UserFile {
    max_lines: Option<u32>,
    timeout_secs: Option<u64>,
    max_timeout_secs: Option<u64>,
    concurrent_runs: Option<usize>,
    #[serde(default)]
    plugin_dirs: Vec<PathBuf>,
    #[serde(default)]
    disable: Vec<String>,
    read_only: Option<bool>,
    /// Run workspace-changing tools without `confirm`.
    allow_mutating: Option<bool>,
    /// What runs may write (`off`, `workspace-write`, `read-only`).
    sandbox: Option<String>,
    /// Refuse runs' TCP connections.
    no_network: Option<bool>,
    retention: Option<RetentionFile>,
    /// Each read on its own, so that one bad definition leaves the others usable.
    #[serde(default)]
    tools: BTreeMap<String, toml::Value>,
}

/// A project's `buildvise.toml`: preferences and restrictions, never permissions. Its tools run
/// what the file says, as a package.json script does, and obey every restriction in force.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
struct ProjectFile {
    max_lines: Option<u32>,
    timeout_secs: Option<u64>,
    max_timeout_secs: Option<u64>,
    #[serde(default)]
    disable: Vec<String>,
    read_only: Option<bool>,
    /// A tighter sandbox than the operator's; a looser one is ignored.
    sandbox: Option<String>,
    no_network: Option<bool>,
    retention: Option<RetentionFile>,
    #[serde(default)]
    tools: BTreeMap<String, toml::Value>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
struct RetentionFile {
    max_runs: Option<usize>,
    max_age_days: Option<u64>,
    max_mb: Option<u64>,
}

impl RetentionFile {
    /// `base` with this file's limits; huge values saturate rather than wrap to nothing.
    fn over(&self, base: &Retention) -> Retention {
        Retention {
            max_runs: self.max_runs.unwrap_or(base.max_runs),
            max_age: self.max_age_days.map_or(base.max_age, |d| Duration::from_secs(d.saturating_mul(24 * 3600))),
            max_bytes: self.max_mb.map_or(base.max_bytes, |mb| mb.saturating_mul(1 << 20)),
        }
    }
}

/// The settings in force.
#[derive(Debug, Clone)]
pub struct Config {
    pub max_lines: u32,
    pub timeout: Duration,
    pub max_timeout: Duration,
    /// Runs a process runs at once; calls beyond wait their turn.
    pub concurrent_runs: usize,
    pub plugin_dirs: Vec<PathBuf>,
    pub disable: Vec<String>,
    pub read_only: bool,
    pub allow_mutating: bool,
    /// What runs may write and connect to.
    pub sandbox: Sandbox,
    pub retention: Retention,
    /// Tools the user's config and the project's file define.
    pub tools: Vec<ToolDef>,
    /// What in those files cannot be used, each left out with only what it concerns.
    pub problems: Vec<Problem>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_lines: DEFAULT_MAX_LINES,
            timeout: Duration::from_secs(DEFAULT_TIMEOUT_SECS),
            max_timeout: Duration::from_secs(DEFAULT_MAX_TIMEOUT_SECS),
            concurrent_runs: DEFAULT_CONCURRENT_RUNS,
            plugin_dirs: Vec::new(),
            disable: Vec::new(),
            read_only: false,
            allow_mutating: false,
            sandbox: Sandbox::platform_default(),
            retention: Retention::default(),
            tools: Vec::new(),
            problems: Vec::new(),
        }
    }
}

/// A project's own retention policy: it applies to the runs made under `root` and no others.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectRetention {
    pub root: PathBuf,
    pub policy: Retention,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} is not a valid buildvise config", path.display())]
    Syntax {
        path: PathBuf,
        #[source]
        source: Box<toml::de::Error>,
    },
    #[error("{}: {problem}", path.display())]
    Value { path: PathBuf, problem: MaxLinesError },
    #[error(
        "{} is larger than {PROJECT_FILE_MAX_BYTES} bytes, the most a project's {PROJECT_FILE} may be; \
         shorten it (a tool's script belongs in a file of its own)",
        path.display()
    )]
    TooLarge { path: PathBuf },
    #[error("{}: `sandbox`: {reason}", path.display())]
    Sandbox { path: PathBuf, reason: String },
    #[error("{name}: {reason}")]
    Env { name: &'static str, reason: String },
}

/// A part of a config file that cannot be used. It is left out, and with it only what it concerns:
/// the tool it defines, or the one setting; the rest of the file holds. `list` shows each.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: `{key}`: {reason}", path.display())]
pub struct Problem {
    pub path: PathBuf,
    pub key: String,
    pub reason: String,
    /// The tool it leaves unusable, when it concerns one.
    pub tool: Option<String>,
}

/// A `maxLines` value out of range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("maxLines must be between 1 and {MAX_LINES_LIMIT}, got {0}")]
pub struct MaxLinesError(pub i64);

impl Config {
    /// The operator's settings: defaults, then the user's file, then `BUILDVISE_DISABLE`.
    pub fn load() -> Result<Self, ConfigError> {
        let mut config = Config::default();
        if let Some(path) = user_file()
            && let Some(text) = read_optional(&path)?
        {
            let file: UserFile = parse(&path, &text)?;
            config.apply_user(file, &path)?;
        }
        if let Ok(disabled) = std::env::var("BUILDVISE_DISABLE") {
            config.disable.extend(disabled.split(',').map(str::trim).filter(|d| !d.is_empty()).map(String::from));
        }
        if let Some(mode) = std::env::var("BUILDVISE_SANDBOX").ok().filter(|v| !v.is_empty()) {
            let mode = mode.parse().map_err(|reason| ConfigError::Env { name: "BUILDVISE_SANDBOX", reason })?;
            config.set_sandbox(mode);
        }
        if std::env::var("BUILDVISE_NO_NETWORK").is_ok_and(|v| !v.is_empty() && v != "0") {
            config.set_no_network();
        }
        Ok(config)
    }

    /// The operator's sandbox mode (a flag, the environment, the user's file): asked for, so a
    /// kernel that cannot give it refuses the run rather than run it unconfined.
    pub fn set_sandbox(&mut self, mode: Mode) {
        self.sandbox.mode = mode;
        self.sandbox.required = mode != Mode::Off || self.sandbox.no_network;
    }

    /// The operator's `--no-network`.
    pub fn set_no_network(&mut self) {
        self.sandbox.no_network = true;
        self.sandbox.required = true;
    }

    fn apply_user(&mut self, file: UserFile, path: &Path) -> Result<(), ConfigError> {
        let base = path.parent().unwrap_or(Path::new("."));
        if let Some(n) = file.max_lines {
            self.max_lines = check_max_lines(i64::from(n)).map_err(|problem| value_error(path, problem))?;
        }
        if let Some(s) = file.timeout_secs {
            self.timeout = Duration::from_secs(s.max(1));
        }
        if let Some(s) = file.max_timeout_secs {
            self.max_timeout = Duration::from_secs(s.max(1));
        }
        if let Some(n) = file.concurrent_runs {
            self.concurrent_runs = n.max(1);
        }
        self.plugin_dirs.extend(file.plugin_dirs.into_iter().map(|d| base.join(d)));
        self.disable.extend(file.disable);
        self.read_only |= file.read_only.unwrap_or(false);
        if let Some(allow) = file.allow_mutating {
            self.allow_mutating = allow;
        }
        if let Some(mode) = &file.sandbox {
            let mode = mode.parse().map_err(|reason| ConfigError::Sandbox { path: path.to_path_buf(), reason })?;
            self.set_sandbox(mode);
        }
        if file.no_network == Some(true) {
            self.set_no_network();
        }
        if let Some(r) = &file.retention {
            self.retention = r.over(&self.retention);
        }
        self.add_tools(tools::read(file.tools, path, tools::Owner::Operator));
        Ok(())
    }

    /// Adds a file's tools and its problems. A name defined twice (the user's file and the
    /// project's) is neither: which one the caller meant is not known.
    fn add_tools(&mut self, (defs, problems): (Vec<ToolDef>, Vec<Problem>)) {
        self.problems.extend(problems);
        for def in defs {
            if let Some(at) = self.tools.iter().position(|t| t.name == def.name) {
                let first = self.tools.remove(at);
                self.problems.push(Problem {
                    key: format!("tools.\"{}\"", def.name),
                    reason: format!("also defined in {}; rename one of them", first.origin.display()),
                    tool: Some(def.name),
                    path: def.origin,
                });
                continue;
            }
            self.tools.push(def);
        }
    }

    /// The problem that leaves `tool` unusable, if one does.
    pub fn problem_of(&self, tool: &str) -> Option<&Problem> {
        self.problems.iter().find(|p| p.tool.as_deref() == Some(tool))
    }

    /// These settings narrowed by the project file nearest `cwd` (searched upwards, but not
    /// above `ceiling`, the allowed root that holds `cwd`), and the project's own retention.
    pub fn for_project(
        &self,
        cwd: &Path,
        ceiling: Option<&Path>,
    ) -> Result<(Config, Option<ProjectRetention>), ConfigError> {
        let found = cwd
            .ancestors()
            .take_while(|dir| ceiling.is_none_or(|top| dir.starts_with(top)))
            .map(|dir| dir.join(PROJECT_FILE))
            .find(|p| p.is_file());
        let Some(path) = found else { return Ok((self.clone(), None)) };
        let Some(text) = read_project_file(&path)? else { return Ok((self.clone(), None)) };
        let mut narrowed = self.clone();
        let mut file = project_file(&path, &text, &mut narrowed.problems)?;
        if file.tools.len() > PROJECT_MAX_TOOLS {
            narrowed.problems.push(Problem {
                path: path.clone(),
                key: "tools".into(),
                reason: format!(
                    "{} tools; a project may define at most {PROJECT_MAX_TOOLS}, so only the first {PROJECT_MAX_TOOLS} \
                     by name are kept",
                    file.tools.len()
                ),
                tool: None,
            });
            file.tools = std::mem::take(&mut file.tools).into_iter().take(PROJECT_MAX_TOOLS).collect();
        }
        if let Some(n) = file.max_lines {
            match check_max_lines(i64::from(n)) {
                Ok(n) => narrowed.max_lines = n,
                Err(problem) => narrowed.problems.push(Problem {
                    path: path.clone(),
                    key: "max_lines".into(),
                    reason: problem.to_string(),
                    tool: None,
                }),
            }
        }
        if let Some(s) = file.max_timeout_secs {
            narrowed.max_timeout = narrowed.max_timeout.min(Duration::from_secs(s.max(1)));
        }
        if let Some(s) = file.timeout_secs {
            narrowed.timeout = Duration::from_secs(s.max(1));
        }
        narrowed.disable.extend(file.disable);
        narrowed.read_only |= file.read_only.unwrap_or(false);
        let mode = match file.sandbox.as_deref().map(str::parse::<Mode>) {
            Some(Ok(mode)) => Some(mode),
            Some(Err(reason)) => {
                narrowed.problems.push(Problem { path: path.clone(), key: "sandbox".into(), reason, tool: None });
                None
            }
            None => None,
        };
        narrowed.sandbox = narrowed.sandbox.tightened(mode, file.no_network);
        narrowed.add_tools(tools::read(file.tools, &path, tools::Owner::Project));
        let retention = file.retention.map(|r| ProjectRetention {
            root: path.parent().unwrap_or(Path::new("/")).to_path_buf(),
            policy: r.over(&self.retention),
        });
        Ok((narrowed, retention))
    }

    /// The timeout for one call: the call's, else the tool's default, else the config's; capped.
    pub fn timeout_for(&self, call: Option<u64>, tool_default: Option<u64>) -> Duration {
        let chosen = call.or(tool_default).map(Duration::from_secs).unwrap_or(self.timeout);
        chosen.min(self.max_timeout)
    }

    /// Whether a tool is shown and callable: not disabled by name (`npm.*` for a whole plugin),
    /// and not a mutating tool under read-only, unless it has a flag that makes it only look
    /// (then each call is checked by [`Config::refuses`]).
    pub fn allows(&self, spec: &buildvise_plugin_api::ToolSpec) -> bool {
        let hidden_by_name = self.disable.iter().map(|d| d.trim()).any(|d| {
            d == spec.name
                || d.strip_suffix(".*").is_some_and(|p| spec.name.strip_prefix(p).is_some_and(|r| r.starts_with('.')))
        });
        let refused_as_mutating = self.read_only && spec.mutates_workspace && spec.read_only_with.is_none();
        !(hidden_by_name || refused_as_mutating)
    }

    /// Whether read-only refuses this call of an allowed tool: one that changes the workspace.
    pub fn refuses(&self, spec: &buildvise_plugin_api::ToolSpec, args: &[String]) -> bool {
        self.read_only && spec.mutates(args)
    }
}

/// A project's file with each key that cannot be used left out, and a problem for each: a key
/// only the operator may set, one this version does not know, a value of the wrong kind. Text
/// that is not TOML at all concerns the whole file, and is an error.
fn project_file(path: &Path, text: &str, problems: &mut Vec<Problem>) -> Result<ProjectFile, ConfigError> {
    let mut table: toml::Table = parse(path, text)?;
    let keys: Vec<String> = table.keys().cloned().collect();
    for key in keys {
        let reason = if OPERATOR_ONLY.contains(&key.as_str()) {
            Some(
                "only the operator may set this (the user config, a flag or the environment), never a project; \
                 remove it from this file"
                    .to_string(),
            )
        } else {
            let alone: toml::Table =
                table.get_key_value(&key).map(|(k, v)| (k.clone(), v.clone())).into_iter().collect();
            ProjectFile::deserialize(alone).err().map(|e| e.message().to_string())
        };
        if let Some(reason) = reason {
            table.remove(&key);
            problems.push(Problem { path: path.to_path_buf(), key, reason, tool: None });
        }
    }
    ProjectFile::deserialize(table).map_err(|e| ConfigError::Syntax { path: path.to_path_buf(), source: Box::new(e) })
}

fn value_error(path: &Path, problem: MaxLinesError) -> ConfigError {
    ConfigError::Value { path: path.to_path_buf(), problem }
}

fn parse<T: serde::de::DeserializeOwned>(path: &Path, text: &str) -> Result<T, ConfigError> {
    toml::from_str(text).map_err(|e| ConfigError::Syntax { path: path.to_path_buf(), source: Box::new(e) })
}

/// The file's text, or None when there is no such file.
fn read_optional(path: &Path) -> Result<Option<String>, ConfigError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ConfigError::Read { path: path.to_path_buf(), source }),
    }
}

/// A project's file, read no further than its cap; None when there is none, or when what is
/// there is no regular file (checked again once open: a FIFO or a device swapped in after the
/// search found the file would block the read or never end it).
fn read_project_file(path: &Path) -> Result<Option<String>, ConfigError> {
    use std::io::Read;
    let read_error = |source| ConfigError::Read { path: path.to_path_buf(), source };
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(read_error(source)),
    };
    if !file.metadata().map_err(read_error)?.is_file() {
        return Ok(None);
    }
    let mut text = String::new();
    file.take(PROJECT_FILE_MAX_BYTES + 1).read_to_string(&mut text).map_err(read_error)?;
    if text.len() as u64 > PROJECT_FILE_MAX_BYTES {
        return Err(ConfigError::TooLarge { path: path.to_path_buf() });
    }
    Ok(Some(text))
}

/// Validates a `maxLines` value: 1..=10000.
pub fn check_max_lines(n: i64) -> Result<u32, MaxLinesError> {
    if (1..=i64::from(MAX_LINES_LIMIT)).contains(&n) { Ok(n as u32) } else { Err(MaxLinesError(n)) }
}

fn user_file() -> Option<PathBuf> {
    // Windows keeps a user's settings in `%APPDATA%`; HOME, when set there, is a Unix shell's.
    let windows = if cfg!(windows) { std::env::var_os("APPDATA").filter(|v| !v.is_empty()) } else { None };
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .or(windows)
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("buildvise/config.toml"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use buildvise_plugin_api::ToolSpec;

    fn project(text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(PROJECT_FILE), text).unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        (dir, sub)
    }

    #[test]
    fn user_file_layers_and_validates() {
        let mut c = Config::default();
        let file: UserFile =
            toml::from_str("max_lines = 50\ndisable = [\"npm.install\"]\n[retention]\nmax_runs = 5").unwrap();
        c.apply_user(file, Path::new("/u/config.toml")).unwrap();
        assert_eq!(c.max_lines, 50);
        assert_eq!(c.retention.max_runs, 5);
        assert_eq!(c.disable, vec!["npm.install"]);
        let bad: UserFile = toml::from_str("max_lines = 0").unwrap();
        let err = c.apply_user(bad, Path::new("/u/config.toml")).unwrap_err().to_string();
        assert!(err.contains("between 1 and 10000"), "{err}");
        assert!(toml::from_str::<UserFile>("max_line = 3").is_err());
    }

    #[test]
    fn a_project_narrows_and_never_widens() {
        let operator = Config {
            read_only: true,
            disable: vec!["cargo.test".into()],
            max_timeout: Duration::from_secs(100),
            ..Config::default()
        };
        let (_dir, cwd) =
            project("read_only = false\ndisable = [\"npm.*\"]\nmax_timeout_secs = 99999\ntimeout_secs = 5");
        let (narrowed, _) = operator.for_project(&cwd, None).unwrap();
        assert!(narrowed.read_only, "a project turned read-only off");
        assert_eq!(narrowed.disable, vec!["cargo.test".to_string(), "npm.*".to_string()]);
        assert_eq!(narrowed.max_timeout, Duration::from_secs(100));
        assert_eq!(narrowed.timeout_for(None, None), Duration::from_secs(5));
        let (_dir, cwd) = project("max_timeout_secs = 10");
        assert_eq!(operator.for_project(&cwd, None).unwrap().0.max_timeout, Duration::from_secs(10));
    }

    #[test]
    fn a_project_cannot_load_plugins_or_consent_or_take_more_run_slots() {
        for text in
            ["plugin_dirs = [\"evil\"]", "allow_mutating = true", "allow_mutating = false", "concurrent_runs = 64"]
        {
            let (_dir, cwd) = project(&format!("{text}\nmax_lines = 7"));
            let (narrowed, _) = Config::default().for_project(&cwd, None).unwrap();
            let key = text.split(' ').next().unwrap();
            assert_eq!(narrowed.problems.len(), 1, "{text}");
            assert_eq!(narrowed.problems[0].key, key);
            assert!(narrowed.problems[0].reason.contains("only the operator may set this"), "{text}");
            assert_eq!((narrowed.plugin_dirs.len(), narrowed.allow_mutating), (0, false), "{text}");
            assert_eq!(narrowed.concurrent_runs, Config::default().concurrent_runs, "{text}");
            assert_eq!(narrowed.max_lines, 7, "the rest of the file was dropped: {text}");
        }
    }

    #[test]
    fn each_problem_leaves_out_only_what_it_concerns() {
        let (_dir, cwd) = project(
            "max_lines = 0\nread_only = \"yes\"\nshout = true\ndisable = [\"npm.*\"]\n\
             [tools.good]\nrun = [\"a\"]\n[tools.bad]\nrun = [\"b\"]\n[[tools.bad.patterns]]\nregex = '^(.*)$'\n",
        );
        let (narrowed, _) = Config::default().for_project(&cwd, None).unwrap();
        let keys: Vec<&str> = narrowed.problems.iter().map(|p| p.key.as_str()).collect();
        assert_eq!(keys, ["read_only", "shout", "max_lines", "tools.\"bad\".patterns[0]"]);
        assert_eq!(narrowed.disable, ["npm.*"]);
        assert_eq!(narrowed.tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["good"]);
        assert_eq!(narrowed.problem_of("bad").map(|p| p.path.file_name()), Some(Some("buildvise.toml".as_ref())));
        assert!(narrowed.problem_of("good").is_none());
        let (_dir, cwd) = project("max_lines = [");
        assert!(Config::default().for_project(&cwd, None).is_err(), "text that is not TOML concerns the whole file");
    }

    #[test]
    fn a_projects_file_and_its_tools_are_capped() {
        // D9: a file padded to any size was read whole, and every tool it defined was listed.
        let padding = "#".repeat(PROJECT_FILE_MAX_BYTES as usize);
        let (_dir, cwd) = project(&format!("read_only = true\n{padding}"));
        let err = Config::default().for_project(&cwd, None).unwrap_err().to_string();
        assert!(err.contains(&format!("larger than {PROJECT_FILE_MAX_BYTES} bytes")), "{err}");

        let tools: String =
            (0..PROJECT_MAX_TOOLS + 50).map(|i| format!("[tools.\"t{i:04}\"]\nrun = [\"true\"]\n")).collect();
        let (_dir, cwd) = project(&format!("read_only = true\n{tools}"));
        let (narrowed, _) = Config::default().for_project(&cwd, None).unwrap();
        assert_eq!(narrowed.tools.len(), PROJECT_MAX_TOOLS);
        assert_eq!(narrowed.tools.last().map(|t| t.name.as_str()), Some("t0099"));
        let problem = narrowed.problems.iter().find(|p| p.key == "tools").expect("a problem names the cap");
        assert!(problem.reason.contains("150 tools; a project may define at most 100"), "{}", problem.reason);
        assert!(narrowed.read_only, "the rest of the file holds");
    }

    #[test]
    fn a_projects_retention_is_its_own() {
        let (dir, cwd) = project("[retention]\nmax_runs = 1\nmax_mb = 9223372036854775807");
        let (narrowed, own) = Config::default().for_project(&cwd, None).unwrap();
        assert_eq!(narrowed.retention, Retention::default(), "the project changed the global policy");
        let own = own.unwrap();
        assert_eq!(own.root, dir.path());
        assert_eq!((own.policy.max_runs, own.policy.max_bytes), (1, u64::MAX));
    }

    #[test]
    fn the_search_stops_at_the_ceiling() {
        let (dir, cwd) = project("read_only = true");
        assert!(!Config::default().for_project(&cwd, Some(&cwd)).unwrap().0.read_only);
        assert!(Config::default().for_project(&cwd, Some(dir.path())).unwrap().0.read_only);
    }

    #[test]
    fn timeout_precedence_and_cap() {
        let c = Config { max_timeout: Duration::from_secs(100), ..Config::default() };
        assert_eq!(c.timeout_for(Some(5), Some(50)), Duration::from_secs(5));
        assert_eq!(c.timeout_for(None, Some(50)), Duration::from_secs(50));
        assert_eq!(c.timeout_for(None, None), Duration::from_secs(100));
        assert_eq!(c.timeout_for(Some(1000), None), Duration::from_secs(100));
    }

    #[test]
    fn hiding_rules() {
        let spec = |name: &str, mutates: bool| {
            let s = ToolSpec::new(name, "");
            if mutates { s.mutating() } else { s }
        };
        let c = Config { disable: vec!["cargo.test".into(), "npm.*".into()], ..Config::default() };
        assert!(!c.allows(&spec("cargo.test", false)));
        assert!(c.allows(&spec("cargo.build", false)));
        assert!(!c.allows(&spec("npm.build", false)));
        let read_only = Config { read_only: true, ..Config::default() };
        assert!(!read_only.allows(&spec("npm.install", true)));
        assert!(read_only.allows(&spec("npm.test", false)));
        let fmt = spec("cargo.fmt", true).read_only_with("--check");
        assert!(read_only.allows(&fmt));
        assert!(read_only.refuses(&fmt, &[]));
        assert!(!read_only.refuses(&fmt, &["--check".to_string()]));
        assert!(!Config::default().refuses(&fmt, &[]));
    }
}
