//! The child process: spawned in its own process group, observed without being reaped, and
//! signalled as a group. Unix only: buildvise relies on process groups to end whole trees.
//!
//! The child is reaped only after the last signal to its group. Until then its pid stays a zombie,
//! so the process group id cannot be reused by an unrelated process that a late signal would hit.

use super::{Command, Ending, RunError};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
// rustix's `waitid`, not nix's: nix offers it on Linux and the BSDs but not on Apple, which has
// the call and `WNOWAIT`.
use rustix::process::{WaitId, WaitIdOptions, waitid};
use std::os::unix::process::CommandExt;
use std::process::{Child, Stdio};

/// Spawns `command` with `mark` in its environment (last, so that no plan can set it otherwise).
pub(super) fn spawn(command: &Command, mark: &str) -> Result<Child, RunError> {
    let mut cmd = crate::sandbox::command(command.confinement.as_deref(), &command.program, &command.args);
    cmd.current_dir(&command.cwd)
        .envs(command.env.iter().map(|(k, v)| (k, v)))
        .env(super::marks::MARK, mark)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // A new group led by the child: one signal reaches it and everything it starts.
        .process_group(0);
    cmd.spawn().map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => RunError::NotFound { program: command.program.clone() },
        std::io::ErrorKind::PermissionDenied => RunError::NotExecutable { program: command.program.clone(), source },
        _ => RunError::Spawn { program: command.program.clone(), source },
    })
}

/// The process group of a spawned child (its pgid is the child's pid).
#[derive(Debug, Clone, Copy)]
pub(super) struct Group(Pid);

impl Group {
    pub fn of(child: &Child) -> Self {
        Group(Pid::from_raw(child.id() as i32))
    }

    pub fn id(self) -> i32 {
        self.0.as_raw()
    }

    pub fn signal(self, signal: Signal) {
        // ESRCH (nobody left in the group) is the common, harmless answer.
        let _ = killpg(self.0, signal);
    }

    /// How the leader ended, if it has; leaves it unreaped (a zombie) so the group id stays ours.
    pub fn leader_ended(self) -> Option<Ending> {
        let Some(pid) = rustix::process::Pid::from_raw(self.0.as_raw()) else { return Some(Ending::Signalled(0)) };
        match waitid(WaitId::Pid(pid), WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT) {
            Ok(Some(status)) => match (status.exit_status(), status.terminating_signal()) {
                (Some(code), _) => Some(Ending::Exited(code)),
                (None, Some(signal)) => Some(Ending::Signalled(signal)),
                // A stop or a continue, which `EXITED` alone does not ask for.
                (None, None) => None,
            },
            // Not ended yet.
            Ok(None) | Err(rustix::io::Errno::INTR) => None,
            // ECHILD: someone reaped it already, so it has certainly ended.
            Err(_) => Some(Ending::Signalled(0)),
        }
    }
}
