//! Where calls may run: the allowed roots (`--root`, else the MCP client's roots, else the
//! server's directory; anywhere for the CLI), never a system directory. Which tools a call may
//! see is the config's business ([`crate::config::Config::allows`]).

use std::path::{Path, PathBuf};

/// Directories no call may run in, whatever the roots say.
const SYSTEM_DIRS: &[&str] =
    &["/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/proc", "/run", "/sbin", "/sys", "/usr"];

#[derive(Debug, thiserror::Error)]
pub enum AccessError {
    #[error("cwd {0}: no such directory; send an existing project directory")]
    NoSuchDir(String),
    #[error("cwd {0} is a system directory; send a project directory")]
    SystemDir(String),
    #[error("cwd {cwd} is outside the allowed roots ({roots}); send a directory inside one")]
    OutsideRoots { cwd: String, roots: String },
}

/// The directories calls may run in (and below), symlinks resolved; None: anywhere but system
/// directories.
#[derive(Debug, Clone, Default)]
pub struct Access {
    roots: Option<Vec<PathBuf>>,
}

/// A directory a call may run in, and the root it lies in.
#[derive(Debug, Clone)]
pub struct Place {
    pub dir: PathBuf,
    pub root: Option<PathBuf>,
}

impl Access {
    /// Calls may run anywhere but in system directories (the CLI: its user is the operator).
    pub fn anywhere() -> Self {
        Access::default()
    }

    /// Calls may run in `roots` and below; roots that do not exist allow nothing (so that roots
    /// none of which exist never mean "anywhere").
    pub fn within(roots: &[PathBuf]) -> Self {
        Access { roots: Some(roots.iter().filter_map(|r| std::fs::canonicalize(r).ok()).collect()) }
    }

    /// The allowed roots; empty when calls may run anywhere.
    pub fn roots(&self) -> &[PathBuf] {
        self.roots.as_deref().unwrap_or_default()
    }

    /// Whether calls may run anywhere (but in system directories).
    pub fn is_anywhere(&self) -> bool {
        self.roots.is_none()
    }

    /// Whether `dir` (resolved) is in a root, or anywhere is allowed.
    pub fn contains(&self, dir: &Path) -> bool {
        self.roots.as_ref().is_none_or(|roots| roots.iter().any(|root| dir.starts_with(root)))
    }

    /// Resolves `cwd` and checks it is an allowed directory.
    pub fn check_cwd(&self, cwd: &Path) -> Result<Place, AccessError> {
        let shown = cwd.display().to_string();
        let dir = std::fs::canonicalize(cwd).map_err(|_| AccessError::NoSuchDir(shown.clone()))?;
        if !dir.is_dir() {
            return Err(AccessError::NoSuchDir(shown));
        }
        if dir == Path::new("/") || SYSTEM_DIRS.iter().any(|s| dir.starts_with(s)) {
            return Err(AccessError::SystemDir(dir.display().to_string()));
        }
        let Some(roots) = &self.roots else { return Ok(Place { dir, root: None }) };
        match roots.iter().find(|r| dir.starts_with(r)) {
            Some(root) => Ok(Place { root: Some(root.clone()), dir }),
            None => {
                let roots = roots.iter().map(|r| r.display().to_string()).collect::<Vec<_>>().join(", ");
                Err(AccessError::OutsideRoots { cwd: dir.display().to_string(), roots })
            }
        }
    }
}

// The system directories refused are Unix's (docs/platforms.md).
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn cwd_rules() {
        let dir = tempfile::tempdir().unwrap();
        let open = Access::anywhere();
        assert!(open.check_cwd(dir.path()).is_ok());
        assert!(matches!(open.check_cwd(Path::new("/etc")), Err(AccessError::SystemDir(_))));
        assert!(matches!(open.check_cwd(Path::new("/")), Err(AccessError::SystemDir(_))));
        assert!(matches!(open.check_cwd(&dir.path().join("missing")), Err(AccessError::NoSuchDir(_))));
        let inner = dir.path().join("inner");
        std::fs::create_dir(&inner).unwrap();
        let rooted = Access::within(std::slice::from_ref(&inner));
        let place = rooted.check_cwd(&inner).unwrap();
        assert_eq!(place.root, Some(std::fs::canonicalize(&inner).unwrap()));
        let err = rooted.check_cwd(dir.path()).unwrap_err().to_string();
        assert!(err.contains("outside the allowed roots"), "{err}");
        // Roots none of which exist allow nothing, never everything.
        let gone = Access::within(&[dir.path().join("gone")]);
        assert!(matches!(gone.check_cwd(&inner), Err(AccessError::OutsideRoots { .. })));
    }
}
