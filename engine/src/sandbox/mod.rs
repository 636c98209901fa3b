//! What a run may do once it runs. `--read-only`, `confirm` and the roots decide which commands
//! buildvise runs; the sandbox decides what their processes (the project's tests, build scripts,
//! lifecycle scripts) may change: with `workspace-write`, only the run's project, the temp
//! directory and the caches its toolchain names; with `read-only`, only the temp directory; and,
//! apart, `--no-network` refuses TCP connections.
//!
//! The operator sets it (user config, `--sandbox`, `--no-network`, `BUILDVISE_SANDBOX`); a
//! project's `buildvise.toml` may tighten it, never loosen it ([`Sandbox::tightened`]). On Linux
//! it is Landlock ([`linux`]), applied in the child between fork and exec so that the run's
//! process group, the guard and signals work as they do unconfined. Where the kernel cannot
//! confine, a run the operator asked to confine is refused, and one confined by default runs
//! unconfined with a note ([`Sandbox::prepare`]).

#[cfg(target_os = "linux")]
mod linux;
// Compiled for the tests everywhere: the profile it writes is checked on any machine.
#[cfg(any(target_os = "macos", test))]
#[cfg_attr(not(target_os = "macos"), allow(dead_code))]
mod macos;
mod refusals;

pub use refusals::Refusals;

use std::path::{Path, PathBuf};

/// What a run may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Mode {
    /// Anything the user may.
    #[default]
    Off,
    /// Its project, the temp directory, and its toolchain's caches.
    WorkspaceWrite,
    /// The temp directory alone.
    ReadOnly,
}

impl Mode {
    pub const NAMES: &str = "off, workspace-write or read-only";

    pub fn name(self) -> &'static str {
        match self {
            Mode::Off => "off",
            Mode::WorkspaceWrite => "workspace-write",
            Mode::ReadOnly => "read-only",
        }
    }
}

impl std::str::FromStr for Mode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "off" => Ok(Mode::Off),
            "workspace-write" => Ok(Mode::WorkspaceWrite),
            "read-only" => Ok(Mode::ReadOnly),
            other => Err(format!("unknown sandbox mode `{other}`: expected {}", Mode::NAMES)),
        }
    }
}

/// The sandbox in force for a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Sandbox {
    pub mode: Mode,
    /// TCP connections refused.
    pub no_network: bool,
    /// The operator asked for this confinement (rather than having it by default): where the
    /// kernel cannot give it, the run is refused instead of running unconfined.
    pub required: bool,
}

impl Sandbox {
    /// The sandbox nobody asked for. On Linux, `workspace-write`, where every toolchain suite
    /// runs under it; not required, so a kernel without Landlock runs unconfined with a note.
    /// Elsewhere off until it is asked for: macOS's Seatbelt profile has never met a real
    /// toolchain run here, and Windows has no confinement.
    pub fn platform_default() -> Sandbox {
        let mode = if cfg!(target_os = "linux") { Mode::WorkspaceWrite } else { Mode::Off };
        Sandbox { mode, no_network: false, required: false }
    }

    /// This sandbox with a project's wishes, which only ever tighten it.
    pub fn tightened(self, mode: Option<Mode>, no_network: Option<bool>) -> Sandbox {
        Sandbox {
            mode: self.mode.max(mode.unwrap_or(Mode::Off)),
            no_network: self.no_network || no_network.unwrap_or(false),
            required: self.required,
        }
    }

    fn confines(self) -> bool {
        self.mode != Mode::Off || self.no_network
    }

    /// What a run in `cwd` may write under this sandbox, ready to apply to its command; `None`
    /// when it is off. Where this platform or kernel cannot confine, a required sandbox is an
    /// error, and a default one gives `Confined::Unconfined` with the reason, for the answer.
    pub fn prepare(self, cwd: &Path, caches: &[String]) -> Result<Confined, SandboxError> {
        if !self.confines() {
            return Ok(Confined::Off);
        }
        let writable = self.writable(cwd, caches);
        match platform::prepare(self, &writable) {
            Ok(prepared) => {
                Ok(Confined::Confined(Confinement { sandbox: self, cwd: cwd.to_path_buf(), writable, prepared }))
            }
            Err(reason) if self.required => Err(SandboxError::Unsupported { reason }),
            Err(reason) => Ok(Confined::Unconfined(reason)),
        }
    }

    /// The directories a run may write: the temp directory and the devices (`/dev/null`, a
    /// terminal) always; with `workspace-write` its project and its toolchain's caches too.
    fn writable(self, cwd: &Path, caches: &[String]) -> Vec<PathBuf> {
        let mut dirs = vec![std::env::temp_dir(), PathBuf::from("/dev")];
        match self.mode {
            Mode::WorkspaceWrite => {
                dirs.push(project_of(cwd));
                dirs.extend(caches.iter().map(PathBuf::from).filter(|p| p.is_absolute()));
            }
            // `--no-network` alone confines no path: everything writable stays so.
            Mode::Off => dirs.push(PathBuf::from("/")),
            Mode::ReadOnly => {}
        }
        dirs
    }
}

/// The project a run in `cwd` belongs to: the checkout holding it (the nearest directory with
/// `.git`), else `cwd` itself. A sibling checkout is another project.
pub fn project_of(cwd: &Path) -> PathBuf {
    cwd.ancestors().find(|dir| dir.join(".git").exists()).unwrap_or(cwd).to_path_buf()
}

/// A sandbox made ready for one run.
#[derive(Debug)]
pub enum Confined {
    Off,
    /// The kernel could not confine this default sandbox; the run goes unconfined, and the
    /// answer says why.
    Unconfined(String),
    Confined(Confinement),
}

/// What a confined run may write, and the kernel's ruleset for it.
#[derive(Debug)]
pub struct Confinement {
    pub sandbox: Sandbox,
    /// The run's working directory, which relative paths in its messages start from.
    pub cwd: PathBuf,
    pub writable: Vec<PathBuf>,
    prepared: platform::Prepared,
}

/// The command `program args`, confined when `confinement` says so: on Linux the child
/// confines itself before it executes `program`; on macOS `sandbox-exec` runs it.
pub fn command(confinement: Option<&Confinement>, program: &str, args: &[String]) -> std::process::Command {
    match confinement {
        Some(c) => platform::command(&c.prepared, program, args),
        None => {
            let mut cmd = std::process::Command::new(program);
            cmd.args(args);
            cmd
        }
    }
}

impl Confinement {
    /// A reader of the run's output for what this sandbox refused it.
    pub fn refusals(&self) -> refusals::Refusals<'_> {
        refusals::refusals(self.sandbox, &self.cwd, &self.writable)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error(
        "the sandbox cannot confine this run here ({reason}); run with `--sandbox off` (or \
         BUILDVISE_SANDBOX=off) to run it unconfined"
    )]
    Unsupported { reason: String },
}

#[cfg(target_os = "linux")]
use self::linux as platform;
#[cfg(target_os = "macos")]
use self::macos as platform;

/// No confinement on this platform (Windows): every confined run is refused, or runs unconfined
/// with a note, and says why.
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
mod platform {
    use super::Sandbox;
    use std::path::PathBuf;

    #[derive(Debug)]
    pub struct Prepared;

    pub fn prepare(_: Sandbox, _: &[PathBuf]) -> Result<Prepared, String> {
        Err(format!("buildvise confines runs on Linux and macOS, not on {}", std::env::consts::OS))
    }

    pub fn command(_: &Prepared, program: &str, args: &[String]) -> std::process::Command {
        let mut cmd = std::process::Command::new(program);
        cmd.args(args);
        cmd
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_tightens_and_never_loosens() {
        let operator = Sandbox { mode: Mode::WorkspaceWrite, no_network: false, required: false };
        assert_eq!(operator.tightened(Some(Mode::Off), Some(false)), operator);
        let tight = operator.tightened(Some(Mode::ReadOnly), Some(true));
        assert_eq!((tight.mode, tight.no_network), (Mode::ReadOnly, true));
        let off = Sandbox::default().tightened(None, None);
        assert!(!off.confines());
    }

    #[test]
    fn modes_parse_by_name_and_refuse_others_naming_the_three() {
        for mode in [Mode::Off, Mode::WorkspaceWrite, Mode::ReadOnly] {
            assert_eq!(mode.name().parse::<Mode>(), Ok(mode));
        }
        assert_eq!(
            "strict".parse::<Mode>(),
            Err("unknown sandbox mode `strict`: expected off, workspace-write or read-only".into())
        );
    }

    #[test]
    fn the_project_is_the_checkout_holding_the_cwd() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("crates/a")).unwrap();
        assert_eq!(project_of(&repo.join("crates/a")), repo);
        let loose = dir.path().join("loose");
        std::fs::create_dir_all(&loose).unwrap();
        assert_eq!(project_of(&loose), loose);
    }

    // Unix paths: on Windows `/home/u` is not absolute, and the sandbox confines nothing there.
    #[cfg(unix)]
    #[test]
    fn workspace_write_allows_the_project_temp_and_caches_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let sandbox = Sandbox { mode: Mode::WorkspaceWrite, no_network: false, required: true };
        let writable = sandbox.writable(dir.path(), &["/home/u/.cargo".into(), "relative/cache".into()]);
        assert!(writable.contains(&dir.path().to_path_buf()));
        assert!(writable.contains(&PathBuf::from("/home/u/.cargo")));
        assert!(writable.contains(&std::env::temp_dir()));
        assert!(!writable.iter().any(|p| p.is_relative()), "{writable:?}");
        let read_only = Sandbox { mode: Mode::ReadOnly, ..sandbox }.writable(dir.path(), &["/home/u/.cargo".into()]);
        assert_eq!(read_only, [std::env::temp_dir(), PathBuf::from("/dev")]);
    }
}
