//! Names the commit the binary was built from, and its date, for `buildvise --version`: a bug
//! report then says which code it is about. Git is asked when the source is a checkout; a build
//! from a source archive has no history, and the version says so rather than inventing one.
//! `BUILDVISE_COMMIT` and `BUILDVISE_COMMIT_DATE` set from outside win (a packager's build of an
//! archive knows which commit it came from).

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=BUILDVISE_COMMIT");
    println!("cargo:rerun-if-env-changed=BUILDVISE_COMMIT_DATE");
    let given = (std::env::var("BUILDVISE_COMMIT").ok(), std::env::var("BUILDVISE_COMMIT_DATE").ok());
    let commit = match given {
        (Some(hash), Some(date)) if !hash.is_empty() => Some((hash, date)),
        _ => from_git(),
    };
    let text = match commit {
        Some((hash, date)) => format!("commit {hash} {date}"),
        None => "commit unknown: not built from a git checkout".to_string(),
    };
    println!("cargo:rustc-env=BUILDVISE_BUILD_COMMIT={text}");
}

/// The short hash and the committer's date of HEAD, or None without git or outside a checkout.
/// Cargo is told to run this again when HEAD moves: HEAD itself (a checkout of another branch)
/// and the files that hold where a branch points (a commit).
fn from_git() -> Option<(String, String)> {
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git").args(args).output().ok()?;
        let text = String::from_utf8(out.stdout).ok()?;
        (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_string())
    };
    // Paths as git names them, which in a worktree are not under `.git/`.
    for path in ["HEAD", "packed-refs"] {
        if let Some(file) = git(&["rev-parse", "--path-format=absolute", "--git-path", path]) {
            println!("cargo:rerun-if-changed={file}");
        }
    }
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"])
        && let Some(file) = git(&["rev-parse", "--path-format=absolute", "--git-path", &branch])
    {
        println!("cargo:rerun-if-changed={file}");
    }
    let line = git(&["log", "-1", "--format=%h %cs", "--abbrev=12"])?;
    let (hash, date) = line.split_once(' ')?;
    Some((hash.to_string(), date.to_string()))
}
