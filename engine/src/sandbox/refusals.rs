//! What the sandbox refused a run, read back from what the run printed: the kernel answers a
//! refused write or connection with `EACCES`, which a program reports as "Permission denied"
//! with the path it tried, or not at all. An agent that sees a build fail on a permission error
//! must learn that the sandbox, not the project, refused it, and what would allow it.

use super::{Mode, Sandbox};
use buildvise_plugin_api::lexical;
use regex::bytes::Regex;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

/// The words programs report a refused access with.
static REFUSED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)permission denied|\beacces\b|read-only file system|operation not permitted").expect("a pattern")
});

/// Notes kept for one run: the first refusals say what the setting is; more say nothing new.
const KEPT: usize = 3;

/// Reads a run's lines for refusals, one line at a time.
#[derive(Debug)]
pub struct Refusals<'a> {
    sandbox: Sandbox,
    /// Where relative paths in messages start from: the run's directory.
    cwd: &'a Path,
    writable: &'a [PathBuf],
    notes: Vec<String>,
    paths: Vec<String>,
    network_said: bool,
}

/// Starts reading a run in `cwd` under `sandbox`, which may write beneath `writable`.
pub fn refusals<'a>(sandbox: Sandbox, cwd: &'a Path, writable: &'a [PathBuf]) -> Refusals<'a> {
    Refusals { sandbox, cwd, writable, notes: Vec::new(), paths: Vec::new(), network_said: false }
}

impl Refusals<'_> {
    /// Reads one line of the run's output, `number` its line in the log.
    pub fn line(&mut self, number: u64, bytes: &[u8]) {
        if self.notes.len() >= KEPT || !REFUSED.is_match(bytes) {
            return;
        }
        let text = String::from_utf8_lossy(bytes);
        let sandbox = self.sandbox;
        let may_write = |path: &Path| self.writable.iter().any(|dir| path.starts_with(dir));
        // The last path a line names is the one refused: a message starts with its program's.
        let refused_path = paths(&text).map(|p| lexical(&self.cwd.join(p))).filter(|p| !may_write(p)).last();
        match refused_path {
            Some(path) if sandbox.mode != Mode::Off => {
                let path = path.display().to_string();
                if self.paths.contains(&path) {
                    return;
                }
                self.paths.push(path.clone());
                let may = match sandbox.mode {
                    Mode::ReadOnly => "the temp dir",
                    _ => "the project, temp dir and toolchain caches",
                };
                self.notes.push(format!(
                    "sandbox ({}) refused {path} (log line {number}): runs may write {may}; the operator lifts this \
                     with --sandbox off",
                    sandbox.mode.name()
                ));
            }
            _ if sandbox.no_network && !self.network_said && speaks_of_network(&text) => {
                self.network_said = true;
                self.notes
                    .push(format!("sandbox refused a connection (log line {number}): the operator set --no-network"));
            }
            _ => {}
        }
    }

    /// The notes for the answer, at most three.
    pub fn notes(self) -> Vec<String> {
        self.notes
    }
}

/// The paths a message names: words with a `/` in them (`/home/u/f`, `../sibling/lib.txt`) or
/// a file's extension (`out.txt`), quotes and trailing punctuation taken off (`'/home/u/f':`,
/// `"/x",`), URLs left out.
fn paths(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| c.is_whitespace() || c == '\'' || c == '"' || c == '`')
        .map(|word| word.trim_end_matches([':', ',', ';', ')', ']', '.']))
        .filter(|word| word.len() > 1 && (word.contains('/') || has_extension(word)) && !word.contains("://"))
}

/// `out.txt`, `lib.rs`: a name, a dot, and letters or digits after it.
fn has_extension(word: &str) -> bool {
    word.rsplit_once('.').is_some_and(|(name, ext)| {
        !name.is_empty() && !ext.is_empty() && ext.len() <= 8 && ext.bytes().all(|b| b.is_ascii_alphanumeric())
    })
}

/// A refused connection names no path; its message names what was tried.
fn speaks_of_network(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    ["connect", "socket", "network", "errno 13", "tcp", "http"].iter().any(|w| lower.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sandbox(mode: Mode, no_network: bool) -> Sandbox {
        Sandbox { mode, no_network, required: true }
    }

    // Unix paths: on Windows `/home/u` is not absolute, and the sandbox confines nothing there.
    #[cfg(unix)]
    #[test]
    fn a_refused_write_outside_the_project_is_named_once_with_its_line() {
        let project = PathBuf::from("/home/u/src/proj");
        let writable = [project.clone(), PathBuf::from("/tmp")];
        let mut r = refusals(sandbox(Mode::WorkspaceWrite, false), &project, &writable);
        r.line(3, b"bash: line 1: /home/u/.bashrc: Permission denied");
        r.line(4, b"PermissionError: [Errno 13] Permission denied: '/home/u/.bashrc'");
        let inside = format!("cp: cannot create regular file '{}/x': Permission denied", project.display());
        r.line(5, inside.as_bytes());
        r.line(6, b"all good");
        r.line(7, b"attack.sh: 2: cannot create ../sibling/lib.txt: Permission denied");
        let notes = r.notes();
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes[1].contains("refused /home/u/src/sibling/lib.txt (log line 7)"), "{notes:?}");
        assert!(notes[0].starts_with("sandbox (workspace-write) refused /home/u/.bashrc (log line 3)"), "{notes:?}");
    }

    #[test]
    fn a_refused_connection_is_named_under_no_network() {
        let writable = [PathBuf::from("/")];
        let mut r = refusals(sandbox(Mode::Off, true), Path::new("/home/u/src/proj"), &writable);
        r.line(7, b"PermissionError: [Errno 13] Permission denied");
        r.line(8, b"connect: Permission denied");
        assert_eq!(r.notes().len(), 1);
    }
}
