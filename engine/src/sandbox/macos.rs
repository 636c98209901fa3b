//! The sandbox on macOS: the command runs under `sandbox-exec` with a Seatbelt profile that
//! denies every file write but those beneath the writable directories. Seatbelt rules are
//! matched last to first, so the allowance after the denial wins for those directories. The
//! directories travel as `-D` parameters, never spliced into the profile's text, so that no path
//! can change the profile's meaning.
//!
//! `--no-network` is not given here: a run that asks for it is refused, naming why, rather than
//! run with a rule this project cannot test (there is no macOS machine among its CI's).

use super::{Mode, Sandbox};
use std::path::PathBuf;

const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// The profile and its parameters.
#[derive(Debug)]
pub struct Prepared {
    profile: String,
    params: Vec<String>,
}

pub fn prepare(sandbox: Sandbox, writable: &[PathBuf]) -> Result<Prepared, String> {
    if sandbox.no_network {
        return Err("--no-network is confined on Linux only".to_string());
    }
    if !std::path::Path::new(SANDBOX_EXEC).is_file() {
        return Err(format!("{SANDBOX_EXEC} is missing"));
    }
    Ok(profile(sandbox, writable))
}

/// The profile for `writable`: macOS reaches `/tmp` and `/var` through symlinks, and Seatbelt
/// matches the real path, so each directory is given as it resolves.
fn profile(sandbox: Sandbox, writable: &[PathBuf]) -> Prepared {
    let mut profile = String::from("(version 1)\n(allow default)\n");
    let mut params = Vec::new();
    if sandbox.mode != Mode::Off {
        profile.push_str("(deny file-write*)\n(allow file-write*");
        for (i, dir) in writable.iter().enumerate() {
            let real = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone());
            profile.push_str(&format!(" (subpath (param \"W{i}\"))"));
            params.push(format!("-DW{i}={}", real.display()));
        }
        profile.push_str(")\n");
    }
    Prepared { profile, params }
}

/// The command `program args`, run by `sandbox-exec` under the profile.
pub fn command(prepared: &Prepared, program: &str, args: &[String]) -> std::process::Command {
    let mut cmd = std::process::Command::new(SANDBOX_EXEC);
    cmd.arg("-p").arg(&prepared.profile).args(&prepared.params).arg("--").arg(program).args(args);
    cmd
}

// Unix paths, as macOS has them.
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn writes_are_denied_but_beneath_the_writable_directories_given_as_parameters() {
        let sandbox = Sandbox { mode: Mode::WorkspaceWrite, no_network: false, required: true };
        let p = profile(sandbox, &[PathBuf::from("/no/such/project"), PathBuf::from("/dev")]);
        assert_eq!(
            p.profile,
            "(version 1)\n(allow default)\n(deny file-write*)\n(allow file-write* (subpath (param \"W0\")) (subpath \
             (param \"W1\")))\n"
        );
        assert_eq!(p.params, ["-DW0=/no/such/project", "-DW1=/dev"]);
        let cmd = command(&p, "cargo", &["test".into()]);
        let args: Vec<_> = cmd.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
        assert_eq!(args[args.len() - 3..], ["--", "cargo", "test"]);
    }
}
