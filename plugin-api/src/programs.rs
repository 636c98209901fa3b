//! Finding a program on PATH as the platform's shell does. On Unix a name is a file name. On
//! Windows a name without its extension is tried with each of PATHEXT's (`.COM;.EXE;.BAT;.CMD`
//! when unset): `npm`, `npx`, `pnpm` and `yarn` are `npm.cmd` and the like there, which a process
//! started by name alone (as std starts one: the name, then `.exe`) never finds.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// PATHEXT when the environment has none, as Windows' own shell assumes.
const DEFAULT_PATHEXT: &str = ".COM;.EXE;.BAT;.CMD";

/// The extensions a bare name is tried with here: PATHEXT's on Windows, none elsewhere.
pub fn program_extensions() -> Vec<String> {
    if !cfg!(windows) {
        return Vec::new();
    }
    let pathext = std::env::var("PATHEXT").ok().filter(|p| !p.trim().is_empty());
    let pathext = pathext.as_deref().unwrap_or(DEFAULT_PATHEXT);
    pathext.split(';').map(str::trim).filter(|e| e.starts_with('.')).map(str::to_string).collect()
}

/// Where `program` is in the directories of `path` (a PATH value), each directory in turn: the
/// name as it is when it has an extension or `extensions` is empty, then the name with each of
/// `extensions` appended.
pub fn find_program(program: &str, path: &OsStr, extensions: &[String]) -> Option<PathBuf> {
    if program.is_empty() || program.contains(['/', '\\']) {
        return None;
    }
    let as_is = extensions.is_empty() || Path::new(program).extension().is_some();
    std::env::split_paths(path).filter(|dir| !dir.as_os_str().is_empty()).find_map(|dir| {
        let named = as_is.then(|| dir.join(program));
        let extended = extensions.iter().map(|ext| dir.join(format!("{program}{ext}")));
        named.into_iter().chain(extended).find(|candidate| candidate.is_file())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// PATHEXT's default, in lower case: Windows matches names without case, this machine's
    /// file system may not.
    fn windows_exts() -> Vec<String> {
        DEFAULT_PATHEXT.split(';').map(str::to_lowercase).collect()
    }

    #[test]
    fn a_bare_name_is_found_with_the_first_extension_of_the_first_directory_that_has_one() {
        let (first, second) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        std::fs::write(second.path().join("npm.cmd"), b"@echo npm").unwrap();
        std::fs::write(second.path().join("npm.exe"), b"").unwrap();
        std::fs::write(first.path().join("go"), b"").unwrap();
        let path = std::env::join_paths([first.path(), second.path()]).unwrap();

        assert_eq!(find_program("npm", &path, &windows_exts()), Some(second.path().join("npm.exe")));
        assert_eq!(find_program("npm.cmd", &path, &windows_exts()), Some(second.path().join("npm.cmd")));
        // Without extensions (Unix), a name is a file name.
        assert_eq!(find_program("npm", &path, &[]), None);
        assert_eq!(find_program("go", &path, &[]), Some(first.path().join("go")));
        // With them, an extensionless file is not a program: Windows would not start it.
        assert_eq!(find_program("go", &path, &windows_exts()), None);
    }

    #[test]
    fn a_name_with_a_directory_or_none_at_all_is_not_looked_up() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("x"), b"").unwrap();
        let path = dir.path().as_os_str();
        assert_eq!(find_program("./x", path, &[]), None);
        assert_eq!(find_program("sub\\x", path, &windows_exts()), None);
        assert_eq!(find_program("", path, &[]), None);
        assert_eq!(find_program("x", OsStr::new(""), &[]), None);
    }
}
