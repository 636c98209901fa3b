//! The guard: a small helper process that ends the process groups of runs in flight when
//! buildvise itself dies without the chance to do it (SIGKILL, a crash, an abort).
//!
//! buildvise starts `buildvise guard` once, with a pipe on its stdin, and tells it each group it
//! starts (`+PGID`) and each group it has finished with (`-PGID`), always before reaping the
//! group's leader. The kernel closes the pipe when buildvise exits, however it exits; on that end
//! of input the guard sends TERM to every group still listed, waits a grace period, sends KILL,
//! and exits. The guard leads a process group of its own, so a Ctrl-C or a signal meant for
//! buildvise's group does not reach it.

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use std::collections::BTreeSet;
use std::io::{BufRead, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{ChildStdin, Stdio};
use std::sync::Mutex;
use std::thread::JoinHandle;
use std::time::Duration;

/// The one argument that makes `buildvise` run [`serve`], looked for before the command line is
/// parsed (it is not a subcommand anyone types).
pub const SUBCOMMAND: &str = "guard";

/// The guard as buildvise holds it. Dropping it ends the guard (it finds nothing to do).
pub struct Guard {
    pipe: Mutex<Pipe>,
}

enum Pipe {
    /// Being started on a thread of its own.
    Starting(JoinHandle<std::io::Result<ChildStdin>>),
    Open(ChildStdin),
    Gone,
}

impl Guard {
    /// Starts `exe guard` on a thread, so that the process start (a millisecond or more, with
    /// buildvise's own start-up in the new process) overlaps what the caller does before its
    /// first run. A guard that cannot be started is reported when the first run is watched.
    pub fn start(exe: &Path) -> Guard {
        let exe = exe.to_path_buf();
        let starting = std::thread::Builder::new().name("buildvise-guard".into()).spawn(move || {
            let mut child = std::process::Command::new(exe)
                .arg(SUBCOMMAND)
                .stdin(Stdio::piped())
                // Not buildvise's stdout or stderr: whoever waits for those to close must not
                // wait for the guard, which outlives a killed buildvise by the grace period.
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .process_group(0)
                .spawn()?;
            // Reaped by whoever outlives it: buildvise never waits for the guard, and the guard
            // exits by itself when buildvise does.
            child.stdin.take().ok_or_else(|| std::io::Error::other("no pipe to the guard"))
        });
        let pipe = match starting {
            Ok(handle) => Pipe::Starting(handle),
            Err(e) => {
                warn_not_started(&e);
                Pipe::Gone
            }
        };
        Guard { pipe: Mutex::new(pipe) }
    }

    pub(super) fn watch(&self, group: i32) {
        self.send(&format!("+{group}\n"));
    }

    pub(super) fn forget(&self, group: i32) {
        self.send(&format!("-{group}\n"));
    }

    fn send(&self, message: &str) {
        let mut pipe = self.pipe.lock().unwrap_or_else(|e| e.into_inner());
        *pipe = match std::mem::replace(&mut *pipe, Pipe::Gone) {
            Pipe::Starting(handle) => match handle.join() {
                Ok(Ok(stdin)) => Pipe::Open(stdin),
                Ok(Err(e)) => {
                    warn_not_started(&e);
                    Pipe::Gone
                }
                Err(_) => {
                    warn_not_started(&std::io::Error::other("its starting thread panicked"));
                    Pipe::Gone
                }
            },
            settled => settled,
        };
        if let Pipe::Open(stdin) = &mut *pipe
            && stdin.write_all(message.as_bytes()).is_err()
        {
            tracing::warn!("the guard process is gone: runs in flight will outlive buildvise if it is killed");
            *pipe = Pipe::Gone;
        }
    }
}

fn warn_not_started(error: &std::io::Error) {
    tracing::warn!("cannot start the guard process; runs will outlive buildvise if it is killed: {error}");
}

/// Time between TERM and KILL, as for a timeout.
const GRACE: Duration = super::GRACE;

/// The guard's whole life: read `+PGID` / `-PGID` lines until stdin ends, then end every group
/// still listed.
pub fn serve(input: impl BufRead) {
    let mut groups = BTreeSet::new();
    for line in input.lines() {
        let Ok(line) = line else { break };
        let (sign, number) = line.split_at(line.len().min(1));
        let Ok(group) = number.trim().parse::<i32>() else { continue };
        // Only positive ids name one group; 0 or less would signal our own or every group.
        if group <= 1 {
            continue;
        }
        match sign {
            "+" => groups.insert(group),
            "-" => groups.remove(&group),
            _ => false,
        };
    }
    if groups.is_empty() {
        return;
    }
    for &group in &groups {
        let _ = killpg(Pid::from_raw(group), Signal::SIGTERM);
    }
    std::thread::sleep(GRACE);
    for &group in &groups {
        let _ = killpg(Pid::from_raw(group), Signal::SIGKILL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    #[test]
    fn ends_listed_groups_at_end_of_input_and_only_those() {
        let spawn = || std::process::Command::new("sleep").arg("300").process_group(0).spawn().expect("sleep starts");
        let (mut listed, mut forgotten) = (spawn(), spawn());
        let input = format!("+{a}\n+{b}\n-{b}\ngarbage\n+0\n+-1\n", a = listed.id(), b = forgotten.id());
        serve(input.as_bytes());
        let status = listed.wait().expect("reaped");
        assert!(!status.success(), "the listed group was ended: {status:?}");
        assert!(forgotten.try_wait().expect("try_wait").is_none(), "a forgotten group was signalled");
        forgotten.kill().expect("kill");
        forgotten.wait().expect("reap");
    }
}
