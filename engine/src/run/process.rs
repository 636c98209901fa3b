//! The child process: spawned in its own process group, observed without being reaped, and
//! signalled as a group. Unix only: buildvise relies on process groups to end whole trees.
//!
//! The child is reaped only after the last signal to its group. Until then its pid stays a zombie,
//! so the process group id cannot be reused by an unrelated process that a late signal would hit.

use super::{Command, Ending, RunError};
use nix::sys::signal::{Signal, killpg};
use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};
use nix::unistd::Pid;
use std::os::unix::process::CommandExt;
use std::process::{Child, Stdio};

/// Spawns `command` with `mark` in its environment (last, so that no plan can set it otherwise).
pub(super) fn spawn(command: &Command, mark: &str) -> Result<Child, RunError> {
    let mut cmd = crate::sandbox::command(command.confinement.as_deref(), &command.program, &command.args);
    cmd.current_dir(&command.cwd)
        .envs(command.env.iter().map(|(k, v)| (k, v)))
        .env(super::leftovers::MARK, mark)
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
        match waitid(Id::Pid(self.0), WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT) {
            Ok(WaitStatus::Exited(_, code)) => Some(Ending::Exited(code)),
            Ok(WaitStatus::Signaled(_, signal, _)) => Some(Ending::Signalled(signal as i32)),
            // Not ended yet (StillAlive), or a status a leader we never trace cannot have.
            Ok(_) | Err(nix::errno::Errno::EINTR) => None,
            // ECHILD: someone reaped it already, so it has certainly ended.
            Err(_) => Some(Ending::Signalled(0)),
        }
    }
}
