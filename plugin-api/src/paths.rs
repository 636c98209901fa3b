//! Paths as agents want them: relative to the run's cwd when they lie under it, `/` separators
//! kept as printed otherwise.

use std::path::{Component, Path, PathBuf};

/// Makes `path` relative to `cwd` when it is absolute and lies under `cwd`; strips a leading
/// `./`. Windows paths (`C:\src\x.cs`) are compared case-insensitively with `\` as `/`.
pub fn relative_to(path: &str, cwd: &str) -> String {
    let path = path.trim();
    let mut rel = path;
    while let Some(rest) = rel.strip_prefix("./") {
        rel = rest;
    }
    if !is_absolute(rel) || cwd.is_empty() {
        return rel.to_string();
    }
    let norm = |s: &str| s.replace('\\', "/");
    let (p, c) = (norm(rel), norm(cwd.trim_end_matches(['/', '\\'])));
    let prefix_end =
        if is_windows_absolute(&p) { prefix_ignoring_case(&p, &c) } else { p.strip_prefix(&c).map(|_| c.len()) };
    match prefix_end.and_then(|end| p[end..].strip_prefix('/')) {
        Some(inside) if !inside.is_empty() => inside.to_string(),
        _ => rel.to_string(),
    }
}

/// Where `prefix` ends in `text` when `text` starts with it, letters compared without case as
/// Windows does. Compared a character at a time, so the end is always a character boundary in
/// `text`, whatever byte lengths the two spellings have.
fn prefix_ignoring_case(text: &str, prefix: &str) -> Option<usize> {
    let mut rest = text.char_indices();
    for wanted in prefix.chars() {
        let (_, got) = rest.next()?;
        if got != wanted && !got.to_uppercase().eq(wanted.to_uppercase()) {
            return None;
        }
    }
    Some(rest.offset())
}

/// True for `/x`, `\\server\x` and `C:\x` / `C:/x`.
pub fn is_absolute(path: &str) -> bool {
    path.starts_with('/') || path.starts_with("\\\\") || is_windows_absolute(path)
}

fn is_windows_absolute(path: &str) -> bool {
    let b = path.as_bytes();
    b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && (b[2] == b'\\' || b[2] == b'/')
}

/// Splits `file:line[:col]` at its end, the way compilers print locations. Returns `None` when the
/// text does not end in a line number. Windows drive letters stay part of the file.
pub fn split_location(text: &str) -> Option<(&str, u32, Option<u32>)> {
    let (head, last) = text.rsplit_once(':')?;
    let last_num: u32 = last.parse().ok()?;
    if let Some((file, mid)) = head.rsplit_once(':')
        && let Ok(line) = mid.parse::<u32>()
        && !file.is_empty()
    {
        return Some((file, line, Some(last_num)));
    }
    if head.is_empty() || (head.len() == 1 && head.as_bytes()[0].is_ascii_alphabetic()) {
        return None;
    }
    Some((head, last_num, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_under_cwd_only() {
        assert_eq!(relative_to("/home/u/p/src/a.rs", "/home/u/p"), "src/a.rs");
        assert_eq!(relative_to("/home/u/p/src/a.rs", "/home/u/p/"), "src/a.rs");
        assert_eq!(relative_to("/home/u/px/a.rs", "/home/u/p"), "/home/u/px/a.rs");
        assert_eq!(relative_to("./src/a.rs", "/home/u/p"), "src/a.rs");
        assert_eq!(relative_to("src/a.rs", ""), "src/a.rs");
    }

    #[test]
    fn relative_windows() {
        assert_eq!(relative_to(r"C:\Src\App\Program.cs", r"c:\src\app"), "Program.cs");
        assert_eq!(relative_to(r"D:\x\y.cs", r"C:\x"), r"D:\x\y.cs");
        assert_eq!(relative_to(r"C:\x\", r"C:\x"), r"C:\x\");
    }

    #[test]
    fn multibyte_names_never_cut_a_character() {
        // The cwd's length in bytes falls inside `ü`, `日` or `ä` of the path.
        assert_eq!(relative_to(r"C:\Users\Jxrgen\a.cs", r"C:\Users\Jürgen"), r"C:\Users\Jxrgen\a.cs");
        assert_eq!(relative_to(r"C:\Users\Jürgen\a.cs", r"C:\Users\Jxrgenx"), r"C:\Users\Jürgen\a.cs");
        assert_eq!(relative_to(r"C:\日本\a.cs", r"C:\xy"), r"C:\日本\a.cs");
        assert_eq!(relative_to("C:/ä/b.cs", r"C:\x"), "C:/ä/b.cs");
        assert_eq!(relative_to("/home/jxrgen/a.rs", "/home/jürgen"), "/home/jxrgen/a.rs");
        assert_eq!(relative_to("/home/jürgen/a.rs", "/home/jxrgenx"), "/home/jürgen/a.rs");
        assert_eq!(relative_to("/home/jürgen/src/a.rs", "/home/jürgen"), "src/a.rs");
    }

    #[test]
    fn windows_case_folding_covers_every_letter() {
        assert_eq!(relative_to(r"C:\Users\JÜRGEN\Proj\a.cs", r"c:\users\jürgen\proj"), "a.cs");
        assert_eq!(relative_to(r"C:\ΣΟΦΙΑ\a.cs", r"C:\σοφια"), "a.cs");
        // A letter and a different one of another byte length never match.
        assert_eq!(relative_to(r"C:\İx\a.cs", r"C:\ix"), r"C:\İx\a.cs");
        assert_eq!(relative_to(r"C:\straße\a.cs", r"C:\STRASSE"), r"C:\straße\a.cs");
    }

    #[test]
    fn splits_locations() {
        assert_eq!(split_location("src/a.rs:10:5"), Some(("src/a.rs", 10, Some(5))));
        assert_eq!(split_location("src/a.py:7"), Some(("src/a.py", 7, None)));
        assert_eq!(split_location(r"C:\a\b.ts:3:4"), Some((r"C:\a\b.ts", 3, Some(4))));
        assert_eq!(split_location("no location"), None);
        assert_eq!(split_location("C:5"), None);
    }
}

/// A toolchain cache as this machine has it, for [`crate::CommandPlan::caches`]: the directory
/// the variable `var` names when it is set to an absolute path, else `default` under the home
/// directory (`.cargo`, `.cache`); None without either.
pub fn cache_dir(var: &str, default: &str) -> Option<String> {
    let set = std::env::var(var).ok().filter(|v| is_absolute(v));
    set.or_else(|| {
        let home = std::env::var("HOME").ok().filter(|h| is_absolute(h))?;
        Some(Path::new(&home).join(default).display().to_string())
    })
}

#[cfg(test)]
mod cache_tests {
    use super::cache_dir;

    #[test]
    fn a_cache_is_where_its_variable_says_else_under_home() {
        // Read, not set: the process's environment is shared by every test.
        match std::env::var("HOME") {
            Ok(home) if home.starts_with('/') => {
                assert_eq!(cache_dir("BUILDVISE_NO_SUCH_VARIABLE", ".cargo"), Some(format!("{home}/.cargo")));
            }
            _ => assert_eq!(cache_dir("BUILDVISE_NO_SUCH_VARIABLE", ".cargo"), None),
        }
        assert_eq!(cache_dir("PATH", ".x").map(|p| p.is_empty()), Some(false));
    }
}

/// `path` with `.` and `..` applied to its text, as `path.resolve` or `os.path.abspath` do: the
/// file need not exist, and a symlink is not followed.
pub fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}
