//! What may run and where: hidden tools (`--disable`, `--read-only`, config, env), and the
//! directories a call may run in.

use crate::config::Config;
use crate::plugins::{Registry, Tool};
use buildvise_plugin_api::ToolSpec;
use std::path::{Path, PathBuf};

/// Directories no call may run in, whatever the roots say.
const SYSTEM_DIRS: &[&str] =
    &["/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/proc", "/run", "/sbin", "/sys", "/usr"];

#[derive(Debug, thiserror::Error)]
pub enum AccessError {
    #[error("unknown tool {name:?}{suggest}; send a tool name that list shows")]
    UnknownTool { name: String, suggest: String },
    #[error("cwd {0}: no such directory; send an existing project directory")]
    NoSuchDir(String),
    #[error("cwd {0} is a system directory; send a project directory")]
    SystemDir(String),
    #[error("cwd {cwd} is outside the allowed roots ({roots}); send a directory inside one")]
    OutsideRoots { cwd: String, roots: String },
}

/// The rules a server or CLI was started with.
#[derive(Debug, Clone, Default)]
pub struct Access {
    pub read_only: bool,
    pub disabled: Vec<String>,
    /// Directories calls may run in (and below). Empty: anywhere but system directories.
    pub roots: Vec<PathBuf>,
}

impl Access {
    /// Whether a tool is shown and callable under these rules and `config`.
    pub fn visible(&self, spec: &ToolSpec, config: &Config) -> bool {
        let env_disabled = std::env::var("BUILDVISE_DISABLE").unwrap_or_default();
        let disabled = self.disabled.iter().chain(&config.disable).map(String::as_str).chain(env_disabled.split(','));
        let hidden_by_name = disabled.map(str::trim).any(|d| {
            d == spec.name
                || d.strip_suffix(".*").is_some_and(|p| spec.name.strip_prefix(p).is_some_and(|r| r.starts_with('.')))
        });
        !hidden_by_name && !((self.read_only || config.read_only) && spec.mutates_workspace)
    }

    /// The tool called `name`, unless it is unknown or hidden (a hidden tool reads as unknown).
    pub fn tool<'r>(&self, registry: &'r Registry, name: &str, config: &Config) -> Result<&'r Tool, AccessError> {
        match registry.get(name) {
            Some(tool) if self.visible(&tool.spec, config) => Ok(tool),
            _ => {
                let names = registry.closest(name, |t| registry.get(t).is_some_and(|t| self.visible(&t.spec, config)));
                Err(AccessError::UnknownTool { name: name.to_string(), suggest: super::did_you_mean(&names) })
            }
        }
    }

    /// Resolves `cwd` and checks it is an allowed directory.
    pub fn check_cwd(&self, cwd: &Path) -> Result<PathBuf, AccessError> {
        let shown = cwd.display().to_string();
        let dir = std::fs::canonicalize(cwd).map_err(|_| AccessError::NoSuchDir(shown.clone()))?;
        if !dir.is_dir() {
            return Err(AccessError::NoSuchDir(shown));
        }
        if dir == Path::new("/") || SYSTEM_DIRS.iter().any(|s| dir.starts_with(s)) {
            return Err(AccessError::SystemDir(dir.display().to_string()));
        }
        if !self.roots.is_empty() {
            let inside = self.roots.iter().filter_map(|r| std::fs::canonicalize(r).ok()).any(|r| dir.starts_with(&r));
            if !inside {
                let roots = self.roots.iter().map(|r| r.display().to_string()).collect::<Vec<_>>().join(", ");
                return Err(AccessError::OutsideRoots { cwd: dir.display().to_string(), roots });
            }
        }
        Ok(dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, mutates: bool) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: String::new(),
            mutates_workspace: mutates,
            timeout_secs: None,
            args_hint: None,
        }
    }

    #[test]
    fn hiding_rules() {
        let config = Config::default();
        let access = Access { disabled: vec!["cargo.test".into(), "npm.*".into()], ..Access::default() };
        assert!(!access.visible(&spec("cargo.test", false), &config));
        assert!(access.visible(&spec("cargo.build", false), &config));
        assert!(!access.visible(&spec("npm.build", false), &config));
        let read_only = Access { read_only: true, ..Access::default() };
        assert!(!read_only.visible(&spec("npm.install", true), &config));
        assert!(read_only.visible(&spec("npm.test", false), &config));
    }

    #[test]
    fn cwd_rules() {
        let dir = tempfile::tempdir().unwrap();
        let open = Access::default();
        assert!(open.check_cwd(dir.path()).is_ok());
        assert!(matches!(open.check_cwd(Path::new("/etc")), Err(AccessError::SystemDir(_))));
        assert!(matches!(open.check_cwd(Path::new("/")), Err(AccessError::SystemDir(_))));
        assert!(matches!(open.check_cwd(&dir.path().join("missing")), Err(AccessError::NoSuchDir(_))));
        let inner = dir.path().join("inner");
        std::fs::create_dir(&inner).unwrap();
        let rooted = Access { roots: vec![inner.clone()], ..Access::default() };
        assert!(rooted.check_cwd(&inner).is_ok());
        let err = rooted.check_cwd(dir.path()).unwrap_err().to_string();
        assert!(err.contains("outside the allowed roots"), "{err}");
    }
}
