//! The command for `pytest.run`: the project's own interpreter running `-m pytest`, plus a JUnit
//! XML artifact and a wide terminal. Planning only reads the project's virtual environment
//! layout; it never starts Python to ask.

use buildvise_plugin_api::{CommandPlan, PlanRequest};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The one tool this plugin offers.
pub const TOOL: &str = "pytest.run";

/// Name of the JUnit report inside the run's artifact directory.
const JUNIT_FILE: &str = "junit.xml";

/// pytest reads `COLUMNS`; at 80 it cuts short-summary lines and drops their messages.
const COLUMNS: &str = "200";

/// Virtual environment folders looked for in the project, in order.
const PROJECT_VENVS: [&str; 2] = [".venv", "venv"];

/// Plans one run. `active_venv` is the host's `VIRTUAL_ENV`, passed in so tests need not touch
/// the process environment.
pub fn plan(request: &PlanRequest, active_venv: Option<&str>) -> Result<CommandPlan, String> {
    if request.tool != TOOL {
        return Err(format!("unknown tool {:?}; send {TOOL}", request.tool));
    }
    let cwd = Path::new(&request.cwd);
    let program = match find_venv(cwd, active_venv) {
        Some(venv) => {
            if venv.lacks_pytest() {
                let shown = shown_path(&venv.python, cwd);
                return Err(format!(
                    "pytest is not installed for {shown}; install it with `{shown} -m pip install pytest` and run again"
                ));
            }
            venv.python.to_string_lossy().into_owned()
        }
        None => "python3".to_string(),
    };

    let mut args = vec!["-m".to_string(), "pytest".to_string()];
    let mut artifacts = Vec::new();
    match user_junit(&request.args) {
        JunitChoice::Path(path) => artifacts.push(absolute(cwd, &path)),
        JunitChoice::Disabled => {}
        JunitChoice::None => {
            let path = Path::new(&request.artifact_dir).join(JUNIT_FILE).to_string_lossy().into_owned();
            // Before the user's arguments: after a bare `--` pytest would take it for a path.
            args.push(format!("--junitxml={path}"));
            artifacts.push(path);
        }
    }
    args.extend(request.args.iter().cloned());

    let env = BTreeMap::from([("COLUMNS".to_string(), COLUMNS.to_string())]);
    Ok(CommandPlan { program, args, env, artifacts })
}

struct Venv {
    root: PathBuf,
    python: PathBuf,
}

impl Venv {
    /// True only when the environment's site-packages were found and hold no pytest. A venv that
    /// sees the system's packages, one whose `.pth` files add directories (editable installs,
    /// shared package dirs), or an unusual layout gets the benefit of the doubt: the run's own
    /// `No module named pytest` then says it.
    fn lacks_pytest(&self) -> bool {
        let cfg = std::fs::read_to_string(self.root.join("pyvenv.cfg")).unwrap_or_default();
        let shares_system = cfg.lines().any(|l| {
            let l = l.replace(' ', "").to_ascii_lowercase();
            l == "include-system-site-packages=true"
        });
        if shares_system {
            return false;
        }
        let dirs = site_packages(&self.root);
        !dirs.is_empty()
            && !dirs.iter().any(|d| {
                d.join("pytest").is_dir()
                    || d.join("_pytest").is_dir()
                    || d.join("pytest.py").is_file()
                    || adds_paths(d)
            })
    }
}

/// `.pth` files that never put packages on the path: setuptools' distutils shim and virtualenv's
/// own patch, present in most environments.
const INERT_PTH: [&str; 2] = ["distutils-precedence.pth", "_virtualenv.pth"];

/// True when `site_packages` holds a `.pth` file that may add a directory to `sys.path`.
fn adds_paths(site_packages: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(site_packages) else { return false };
    entries.flatten().any(|entry| {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        name.ends_with(".pth") && !INERT_PTH.contains(&name.as_ref())
    })
}

fn find_venv(cwd: &Path, active: Option<&str>) -> Option<Venv> {
    let project = PROJECT_VENVS.iter().map(|name| cwd.join(name));
    let active = active.filter(|a| !a.trim().is_empty()).map(PathBuf::from);
    project.chain(active).find_map(|root| venv_python(&root).map(|python| Venv { root, python }))
}

fn venv_python(root: &Path) -> Option<PathBuf> {
    ["bin/python", "bin/python3", "Scripts/python.exe"].iter().map(|rel| root.join(rel)).find(|p| p.is_file())
}

fn site_packages(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for lib in ["lib", "lib64"] {
        let Ok(entries) = std::fs::read_dir(root.join(lib)) else { continue };
        for entry in entries.flatten() {
            let dir = entry.path().join("site-packages");
            if entry.file_name().to_string_lossy().starts_with("python") && dir.is_dir() {
                found.push(dir);
            }
        }
    }
    let windows = root.join("Lib").join("site-packages");
    if windows.is_dir() {
        found.push(windows);
    }
    found
}

/// How the user's arguments already deal with the JUnit report.
#[derive(Debug, PartialEq, Eq)]
enum JunitChoice {
    /// They ask for one at this path: keep it and read it afterwards.
    Path(String),
    /// They turned the junitxml plugin off: the flag would be an error.
    Disabled,
    None,
}

fn user_junit(args: &[String]) -> JunitChoice {
    let options = args.iter().take_while(|a| a.as_str() != "--").collect::<Vec<_>>();
    for (i, arg) in options.iter().enumerate() {
        for flag in ["--junitxml", "--junit-xml"] {
            if let Some(value) = arg.strip_prefix(flag).and_then(|rest| rest.strip_prefix('=')) {
                return JunitChoice::Path(value.to_string());
            }
            if arg.as_str() == flag {
                return options.get(i + 1).map_or(JunitChoice::Disabled, |v| JunitChoice::Path(v.to_string()));
            }
        }
        let disables = arg.as_str() == "no:junitxml" || arg.as_str() == "-pno:junitxml";
        if disables {
            return JunitChoice::Disabled;
        }
    }
    JunitChoice::None
}

fn absolute(cwd: &Path, path: &str) -> String {
    let p = Path::new(path);
    if p.is_absolute() { path.to_string() } else { cwd.join(p).to_string_lossy().into_owned() }
}

/// The interpreter as the user would type it from the project: relative when inside it.
fn shown_path(python: &Path, cwd: &Path) -> String {
    python.strip_prefix(cwd).unwrap_or(python).to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(cwd: &Path, args: &[&str]) -> PlanRequest {
        PlanRequest {
            tool: TOOL.into(),
            args: args.iter().map(|s| s.to_string()).collect(),
            cwd: cwd.to_string_lossy().into_owned(),
            artifact_dir: "/runs/abc/artifacts".into(),
        }
    }

    fn temp_project(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("bv-pytest-plan-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        dir
    }

    fn make_venv(root: &Path, with_pytest: bool) {
        std::fs::create_dir_all(root.join("bin")).expect("bin");
        std::fs::write(root.join("bin/python"), "").expect("python");
        let site = root.join("lib/python3.11/site-packages");
        std::fs::create_dir_all(&site).expect("site");
        if with_pytest {
            std::fs::create_dir_all(site.join("pytest")).expect("pytest");
        }
    }

    #[test]
    fn system_python_with_junit_and_wide_terminal() {
        let dir = temp_project("system");
        let plan = plan(&request(&dir, &["-q", "-k", "fast"]), None).expect("plan");
        assert_eq!(plan.program, "python3");
        assert_eq!(plan.args, ["-m", "pytest", "--junitxml=/runs/abc/artifacts/junit.xml", "-q", "-k", "fast"]);
        assert_eq!(plan.artifacts, ["/runs/abc/artifacts/junit.xml"]);
        assert_eq!(plan.env.get("COLUMNS").map(String::as_str), Some("200"));
        assert!(!plan.env.contains_key("PYTHONDONTWRITEBYTECODE"));
    }

    #[test]
    fn project_venv_first_then_active_one() {
        let dir = temp_project("venv");
        let active = dir.join("elsewhere");
        make_venv(&active, true);
        let active_str = active.to_string_lossy().into_owned();
        let p = plan(&request(&dir, &[]), Some(&active_str)).expect("plan");
        assert_eq!(p.program, active.join("bin/python").to_string_lossy());
        make_venv(&dir.join(".venv"), true);
        let p = plan(&request(&dir, &[]), Some(&active_str)).expect("plan");
        assert_eq!(p.program, dir.join(".venv/bin/python").to_string_lossy());
    }

    #[test]
    fn refuses_a_venv_without_pytest() {
        let dir = temp_project("nopytest");
        make_venv(&dir.join("venv"), false);
        let err = plan(&request(&dir, &[]), None).expect_err("refused");
        assert!(err.contains("venv/bin/python -m pip install pytest"), "{err}");
    }

    #[test]
    fn a_pth_file_may_bring_pytest() {
        let dir = temp_project("pth");
        let venv = dir.join(".venv");
        make_venv(&venv, false);
        let site = venv.join("lib/python3.11/site-packages");
        std::fs::write(site.join("distutils-precedence.pth"), "import os\n").expect("pth");
        assert!(plan(&request(&dir, &[]), None).is_err(), "an inert .pth brings nothing");
        std::fs::write(site.join("__editable__.pytest-9.2.0.pth"), "/src/pytest/src\n").expect("pth");
        let p = plan(&request(&dir, &[]), None).expect("plan");
        assert_eq!(p.program, venv.join("bin/python").to_string_lossy());
    }

    #[test]
    fn keeps_the_users_junit_report() {
        let dir = temp_project("userjunit");
        let p = plan(&request(&dir, &["--junitxml=out/r.xml"]), None).expect("plan");
        assert_eq!(p.args, ["-m", "pytest", "--junitxml=out/r.xml"]);
        assert_eq!(p.artifacts, [dir.join("out/r.xml").to_string_lossy().into_owned()]);
        assert_eq!(user_junit(&["--junit-xml".into(), "/x.xml".into()]), JunitChoice::Path("/x.xml".into()));
        assert_eq!(user_junit(&["-p".into(), "no:junitxml".into()]), JunitChoice::Disabled);
        assert_eq!(user_junit(&["--".into(), "--junitxml=x".into()]), JunitChoice::None);
    }

    #[test]
    fn refuses_other_tools() {
        let dir = temp_project("tool");
        let mut r = request(&dir, &[]);
        r.tool = "pytest.lint".into();
        assert!(plan(&r, None).expect_err("refused").contains("send pytest.run"));
    }
}
