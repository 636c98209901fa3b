//! The sandbox on Linux: a Landlock ruleset built here, in buildvise, and enforced by the child
//! on itself between fork and exec. Building it needs allocation and files opened, which a forked
//! child of a threaded process must not do; enforcing it is two system calls, which it may.
//!
//! Writes are what is confined (every write right of Landlock's ABI 3: files written, truncated,
//! made, removed, renamed or linked into); reads and execution are left alone. `--no-network`
//! adds ABI 4's TCP connect right with no port allowed.

// The child's half is a `pre_exec` hook, which std makes unsafe: see `apply`.
#![allow(unsafe_code)]

use super::{Mode, Sandbox};
use landlock::{
    ABI, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreatedAttr,
};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::sync::Arc;

/// The write rights confined: ABI 3's, which every kernel since 6.2 has in full.
const WRITES: ABI = ABI::V3;

/// A ruleset ready to enforce.
#[derive(Debug)]
pub struct Prepared {
    ruleset: Arc<OwnedFd>,
}

/// Builds the ruleset for `writable`. A kernel without Landlock, or without the TCP rights
/// `--no-network` needs, is an error saying which.
pub fn prepare(sandbox: Sandbox, writable: &[PathBuf]) -> Result<Prepared, String> {
    let unsupported = |e: landlock::RulesetError| format!("Landlock is not available: {e}");
    let mut ruleset = Ruleset::default().set_compatibility(CompatLevel::HardRequirement);
    if sandbox.mode != Mode::Off {
        ruleset = ruleset.handle_access(AccessFs::from_write(WRITES)).map_err(unsupported)?;
    }
    if sandbox.no_network {
        ruleset = ruleset
            .handle_access(AccessNet::ConnectTcp)
            .map_err(|e| format!("this kernel's Landlock cannot refuse TCP connections (it needs Linux 6.7): {e}"))?;
    }
    let mut created = ruleset.create().map_err(unsupported)?;
    if sandbox.mode != Mode::Off {
        for dir in writable {
            // A cache that does not exist yet is made now: the toolchain would make it, and a
            // missing directory can be given no rule.
            let _ = std::fs::create_dir_all(dir);
            let Ok(fd) = PathFd::new(dir) else { continue };
            created = created
                .add_rule(PathBeneath::new(fd, AccessFs::from_write(WRITES)))
                .map_err(|e| format!("Landlock refused a rule for {}: {e}", dir.display()))?;
        }
    }
    let fd: Option<OwnedFd> = created.into();
    let fd = fd.ok_or_else(|| "Landlock gave no ruleset".to_string())?;
    Ok(Prepared { ruleset: Arc::new(fd) })
}

/// The command, its child made to enforce the ruleset on itself just before it executes it.
pub fn command(prepared: &Prepared, program: &str, args: &[String]) -> std::process::Command {
    let mut cmd = std::process::Command::new(program);
    cmd.args(args);
    let fd = prepared.ruleset.as_raw_fd();
    // Held by the closure, so the descriptor stays open until the command has been spawned.
    let ruleset = Arc::clone(&prepared.ruleset);
    // SAFETY: the hook runs in the forked child before exec, where only async-signal-safe calls
    // are sound. It makes two system calls (`prctl` and `landlock_restrict_self`) on a descriptor
    // opened before the fork, allocates nothing, takes no lock and touches no shared state; the
    // Arc is only read for its lifetime, never dropped there (the child's copy ends with exec).
    unsafe {
        cmd.pre_exec(move || {
            let _ = &ruleset;
            // Landlock requires no_new_privs unless the caller has CAP_SYS_ADMIN; it also keeps a
            // setuid program from shedding the ruleset.
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::syscall(libc::SYS_landlock_restrict_self, fd, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd
}
