//! Keeping a plan's path arguments inside the directories the operator allowed.
//!
//! The host checks the run's cwd; a path argument (`--manifest-path`, `--rootdir`, a solution
//! file) can still point anywhere, so a plan checks each one with [`PlanRequest::check_path`]. A
//! path is taken as the tool takes it (relative to the cwd) and must stay inside however the tool
//! resolves it: as the operating system does (each existing symlink followed before a later `..`
//! applies to it), and as many tools do first (`..` applied to the text, then symlinks followed).

use crate::paths::lexical;
use crate::types::PlanRequest;
use std::path::{Component, Path, PathBuf};

pub(crate) fn check(request: &PlanRequest, flag: &str, path: &str) -> Result<(), String> {
    if request.roots.is_empty() {
        return Ok(());
    }
    let shown_roots = request.roots.join(", ");
    // Some tools expand `~` themselves; buildvise cannot know whose home that is.
    if path.starts_with('~') {
        return Err(format!(
            "`{flag} {path}`: paths starting with `~` are not accepted here; spell the path out inside {shown_roots}"
        ));
    }
    let given = Path::new(path);
    let absolute = if given.is_absolute() { given.to_path_buf() } else { Path::new(&request.cwd).join(given) };
    let inside = |target: PathBuf| {
        let mut allowed = request.roots.iter().map(String::as_str).chain([request.artifact_dir.as_str()]);
        allowed.any(|dir| !dir.is_empty() && target.starts_with(resolve(Path::new(dir))))
    };
    if inside(resolve(&absolute)) && inside(resolve(&lexical(&absolute))) {
        Ok(())
    } else {
        Err(format!(
            "`{flag} {path}` points outside the directories this call may use ({shown_roots}); send a path inside them"
        ))
    }
}

/// `path` with `.` and `..` applied and the symlinks of its existing part followed.
fn resolve(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => out.push(component.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => {
                out.push(name);
                if let Ok(real) = std::fs::canonicalize(&out) {
                    out = real;
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(root: &Path) -> PlanRequest {
        let cwd = root.join("proj");
        std::fs::create_dir_all(&cwd).unwrap();
        let root = std::fs::canonicalize(root).unwrap();
        PlanRequest::new("t.x", Vec::new(), root.join("proj").display().to_string(), "/runs/abc/artifacts")
            .with_roots(vec![root.display().to_string()])
    }

    #[test]
    fn paths_inside_pass_and_outside_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let req = request(dir.path());
        assert!(req.check_path("--manifest-path", "Cargo.toml").is_ok());
        assert!(req.check_path("--manifest-path", "../proj/sub/Cargo.toml").is_ok());
        assert!(req.check_path("--basetemp", "/runs/abc/artifacts/tmp").is_ok());
        let err = req.check_path("--manifest-path", "../../elsewhere/Cargo.toml").unwrap_err();
        assert!(err.contains("points outside the directories this call may use"), "{err}");
        assert!(req.check_path("--target-dir", "/tmp").is_err());
        assert!(req.check_path("--rootdir", "~/x").unwrap_err().contains("`~`"));
        let open = PlanRequest::new("t.x", Vec::new(), "/p", "/a");
        assert!(open.check_path("--target-dir", "/anywhere").is_ok());
    }

    #[test]
    #[cfg(unix)] // making a symbolic link on Windows takes a privilege most users lack
    fn symlinks_are_followed() {
        let dir = tempfile::tempdir().unwrap();
        let req = request(dir.path());
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(outside.path().join("sub")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("proj/out")).unwrap();
        assert!(req.check_path("--target-dir", "out/x").is_err());
        // `..` applies to where the link leads, as the kernel does it: lexically this is proj/y.
        std::os::unix::fs::symlink(outside.path().join("sub"), dir.path().join("proj/esc")).unwrap();
        assert!(req.check_path("--target-dir", "esc/../y").is_err());
        assert!(req.check_path("--target-dir", "sub/../y").is_ok());
        // And the other way: a tool that applies `..` to the text first reaches `out`, outside,
        // though the kernel's reading (`up` leads deep inside, one level up is still inside) does not.
        std::fs::create_dir_all(dir.path().join("proj/deep/er")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("proj/deep/er"), dir.path().join("proj/up")).unwrap();
        assert!(req.check_path("--target-dir", "up/../out/x").is_err());
    }
}
