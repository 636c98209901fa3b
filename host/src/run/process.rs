//! Spawning a command in its own process group, and signalling that group. Unix only: buildvise
//! relies on process groups to end whole process trees.

use super::{Command, Ending, RunError};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, ExitStatus, Stdio};

pub fn spawn(command: &Command) -> Result<Child, RunError> {
    let mut cmd = std::process::Command::new(&command.program);
    cmd.args(&command.args)
        .current_dir(&command.cwd)
        .envs(command.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // A new group led by the child: one signal reaches it and everything it starts.
        .process_group(0);
    cmd.spawn().map_err(|source| {
        if source.kind() == std::io::ErrorKind::NotFound {
            RunError::NotFound { program: command.program.clone() }
        } else {
            RunError::Spawn { program: command.program.clone(), source }
        }
    })
}

/// The process group of a spawned child (its pgid is the child's pid).
#[derive(Debug, Clone, Copy)]
pub struct Group(Pid);

impl Group {
    pub fn of(child: &Child) -> Self {
        Group(Pid::from_raw(child.id() as i32))
    }

    pub fn signal_term(&self) {
        let _ = killpg(self.0, Signal::SIGTERM);
    }

    pub fn signal_kill(&self) {
        let _ = killpg(self.0, Signal::SIGKILL);
    }
}

pub fn ending(status: ExitStatus) -> Ending {
    match (status.code(), status.signal()) {
        (Some(code), _) => Ending::Exited(code),
        (None, Some(signal)) => Ending::Signalled(signal),
        (None, None) => Ending::Signalled(0),
    }
}
