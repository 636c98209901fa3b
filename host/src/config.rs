//! Settings: built-in defaults, overridden by the user's `~/.config/buildvise/config.toml`, then
//! by a project's `buildvise.toml` (found from the run's cwd upwards), then by call arguments.

use crate::store::Retention;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub const DEFAULT_MAX_LINES: u32 = 20;
pub const MAX_LINES_LIMIT: u32 = 10_000;
const DEFAULT_TIMEOUT_SECS: u64 = 600;
const DEFAULT_MAX_TIMEOUT_SECS: u64 = 3600;
const PROJECT_FILE: &str = "buildvise.toml";

/// One config file as written. Every key is optional so files can be layered.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub struct ConfigFile {
    pub max_lines: Option<u32>,
    pub timeout_secs: Option<u64>,
    pub max_timeout_secs: Option<u64>,
    #[serde(default)]
    pub plugin_dirs: Vec<PathBuf>,
    #[serde(default)]
    pub disable: Vec<String>,
    pub read_only: Option<bool>,
    /// Run workspace-changing tools without `confirm`.
    pub allow_mutating: Option<bool>,
    pub retention: Option<RetentionFile>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub struct RetentionFile {
    pub max_runs: Option<usize>,
    pub max_age_days: Option<u64>,
    pub max_mb: Option<u64>,
}

/// The merged settings in force.
#[derive(Debug, Clone)]
pub struct Config {
    pub max_lines: u32,
    pub timeout: Duration,
    pub max_timeout: Duration,
    pub plugin_dirs: Vec<PathBuf>,
    pub disable: Vec<String>,
    pub read_only: bool,
    pub allow_mutating: bool,
    pub retention: Retention,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_lines: DEFAULT_MAX_LINES,
            timeout: Duration::from_secs(DEFAULT_TIMEOUT_SECS),
            max_timeout: Duration::from_secs(DEFAULT_MAX_TIMEOUT_SECS),
            plugin_dirs: Vec::new(),
            disable: Vec::new(),
            read_only: false,
            allow_mutating: false,
            retention: Retention::default(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct ConfigError {
    pub path: PathBuf,
    pub message: String,
}

impl Config {
    /// Defaults, then the user file, then the project file nearest `cwd`.
    pub fn load(cwd: &Path) -> Result<Self, ConfigError> {
        let mut config = Config::default();
        if let Some(user) = user_file() {
            config.apply_file(&user)?;
        }
        if let Some(project) = cwd.ancestors().map(|d| d.join(PROJECT_FILE)).find(|p| p.is_file()) {
            config.apply_file(&project)?;
        }
        Ok(config)
    }

    fn apply_file(&mut self, path: &Path) -> Result<(), ConfigError> {
        let Ok(text) = std::fs::read_to_string(path) else { return Ok(()) };
        let file: ConfigFile =
            toml::from_str(&text).map_err(|e| ConfigError { path: path.to_path_buf(), message: e.to_string() })?;
        let base = path.parent().unwrap_or(Path::new("."));
        self.apply(file, base).map_err(|message| ConfigError { path: path.to_path_buf(), message })
    }

    /// Layers one file over the current settings; relative plugin dirs are taken from `base`.
    pub fn apply(&mut self, file: ConfigFile, base: &Path) -> Result<(), String> {
        if let Some(n) = file.max_lines {
            self.max_lines = check_max_lines(i64::from(n)).map_err(|e| format!("max_lines: {e}"))?;
        }
        if let Some(s) = file.timeout_secs {
            self.timeout = Duration::from_secs(s.max(1));
        }
        if let Some(s) = file.max_timeout_secs {
            self.max_timeout = Duration::from_secs(s.max(1));
        }
        self.plugin_dirs.extend(file.plugin_dirs.into_iter().map(|d| base.join(d)));
        self.disable.extend(file.disable);
        self.read_only |= file.read_only.unwrap_or(false);
        if let Some(allow) = file.allow_mutating {
            self.allow_mutating = allow;
        }
        if let Some(r) = file.retention {
            if let Some(n) = r.max_runs {
                self.retention.max_runs = n;
            }
            if let Some(days) = r.max_age_days {
                self.retention.max_age = Duration::from_secs(days * 24 * 3600);
            }
            if let Some(mb) = r.max_mb {
                self.retention.max_bytes = mb << 20;
            }
        }
        Ok(())
    }

    /// The timeout for one call: the call's, else the tool's default, else the config's; capped.
    pub fn timeout_for(&self, call: Option<u64>, tool_default: Option<u64>) -> Duration {
        let chosen = call.or(tool_default).map(Duration::from_secs).unwrap_or(self.timeout);
        chosen.min(self.max_timeout)
    }
}

/// Validates a `maxLines` value: 1..=10000.
pub fn check_max_lines(n: i64) -> Result<u32, String> {
    if (1..=i64::from(MAX_LINES_LIMIT)).contains(&n) {
        Ok(n as u32)
    } else {
        Err(format!("maxLines must be between 1 and {MAX_LINES_LIMIT}, got {n}"))
    }
}

fn user_file() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("buildvise/config.toml"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_and_validates() {
        let mut c = Config::default();
        let file: ConfigFile =
            toml::from_str("max_lines = 50\ndisable = [\"npm.install\"]\n[retention]\nmax_runs = 5").unwrap();
        c.apply(file, Path::new("/p")).unwrap();
        assert_eq!(c.max_lines, 50);
        assert_eq!(c.retention.max_runs, 5);
        assert_eq!(c.disable, vec!["npm.install"]);
        let bad: ConfigFile = toml::from_str("max_lines = 0").unwrap();
        assert!(c.apply(bad, Path::new("/p")).unwrap_err().contains("between 1 and 10000"));
        assert!(toml::from_str::<ConfigFile>("max_line = 3").is_err());
    }

    #[test]
    fn timeout_precedence_and_cap() {
        let c = Config { max_timeout: Duration::from_secs(100), ..Config::default() };
        assert_eq!(c.timeout_for(Some(5), Some(50)), Duration::from_secs(5));
        assert_eq!(c.timeout_for(None, Some(50)), Duration::from_secs(50));
        assert_eq!(c.timeout_for(None, None), Duration::from_secs(100));
        assert_eq!(c.timeout_for(Some(1000), None), Duration::from_secs(100));
    }
}
