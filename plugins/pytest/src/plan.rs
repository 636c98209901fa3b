//! The command for `pytest.run`: the project's own interpreter running `-m pytest`, plus a JUnit
//! XML artifact and a wide terminal. Planning only reads the project's virtual environment
//! layout; it never starts Python to ask.

use buildvise_plugin_api::{CommandPlan, PlanRequest, cache_dir};
use std::path::{Path, PathBuf};

/// The one tool this plugin offers.
pub const TOOL: &str = "pytest.run";

/// Name of the JUnit report inside the run's artifact directory.
const JUNIT_FILE: &str = "junit.xml";

/// pytest reads `COLUMNS`; at 80 it cuts short-summary lines and drops their messages.
const COLUMNS: &str = "200";

/// Virtual environment folders looked for in the project, in order.
const PROJECT_VENVS: [&str; 2] = [".venv", "venv"];

/// Lock files that mark the root of a uv workspace or a Poetry project, whose `.venv` serves
/// every folder below it.
const ROOT_MARKERS: [&str; 2] = ["uv.lock", "poetry.lock"];

/// The host's environment variables that say where a virtual environment is, passed in so tests
/// need not touch the process environment.
#[derive(Debug, Default, Clone, Copy)]
pub struct HostEnv<'a> {
    /// `VIRTUAL_ENV`: the environment the operator activated.
    pub virtual_env: Option<&'a str>,
    /// `UV_PROJECT_ENVIRONMENT`: uv's project environment, relative to the workspace root.
    pub uv_project_environment: Option<&'a str>,
}

/// The runners `--via` names: each runs pytest in the environment it first brings in line with
/// the project's lockfile, as `uv run pytest` and `poetry run pytest` do.
const RUNNERS: [&str; 2] = ["uv", "poetry"];

/// Plans one run.
pub fn plan(request: &PlanRequest, env: &HostEnv) -> Result<CommandPlan, String> {
    if request.tool != TOOL {
        return Err(format!("unknown tool {:?}; send {TOOL}", request.tool));
    }
    let via = match request.args.first().and_then(|a| a.strip_prefix("--via=")) {
        Some(runner) if RUNNERS.contains(&runner) => Some(runner.to_string()),
        Some(other) => return Err(format!("`--via={other}`: send --via=uv or --via=poetry, or leave it out")),
        None => None,
    };
    let mut request = request.clone();
    if via.is_some() {
        request.args.remove(0);
    }
    let request = &request;
    check_args(request)?;
    let cwd = Path::new(&request.cwd);
    let (program, mut args) = match (via, find_venv(cwd, env)) {
        (Some(runner), _) => (runner, vec!["run".to_string(), "pytest".to_string()]),
        (None, Some(venv)) => {
            if venv.lacks_pytest() {
                let shown = shown_path(&venv.python, cwd);
                return Err(format!(
                    "pytest is not installed for {shown}; install it with `{shown} -m pip install pytest` and run again"
                ));
            }
            (venv.python.to_string_lossy().into_owned(), vec!["-m".to_string(), "pytest".to_string()])
        }
        (None, None) => ("python3".to_string(), vec!["-m".to_string(), "pytest".to_string()]),
    };

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

    // pip's, uv's and other tools' caches live under the XDG cache directory.
    let caches = [cache_dir("XDG_CACHE_HOME", ".cache"), cache_dir("UV_CACHE_DIR", ".cache/uv")];
    let mut plan = CommandPlan::new(program)
        .with_args(args)
        .with_env("COLUMNS", COLUMNS)
        .with_caches(caches.into_iter().flatten());
    plan.artifacts = artifacts;
    Ok(plan)
}

/// What a pytest option's value is, for the options whose value matters here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Value {
    /// A file or directory pytest reads or writes.
    Path,
    /// A path in which pytest first expands `$VAR`s.
    Expanded,
    /// `--basetemp`, which pytest empties before the run.
    Emptied,
    /// `-o name=value`, overriding an ini setting.
    IniOverride,
    /// pytest-cov's `TYPE[:DEST]`.
    CovReport,
    /// Anything else: taken, not checked.
    Other,
}

/// Long options (without `--`) whose value matters, core pytest's and the common report plugins'.
/// `ignore`, `ignore-glob` and `deselect` only leave things out, so their values are not test paths.
const LONG_OPTIONS: &[(&str, Value)] = &[
    ("rootdir", Value::Expanded),
    ("basetemp", Value::Emptied),
    ("confcutdir", Value::Path),
    ("config-file", Value::Path),
    ("junitxml", Value::Expanded),
    ("junit-xml", Value::Expanded),
    ("log-file", Value::Path),
    ("debug", Value::Path),
    ("override-ini", Value::IniOverride),
    ("cov-config", Value::Path),
    ("cov-report", Value::CovReport),
    ("html", Value::Path),
    ("report-log", Value::Path),
    ("json-report-file", Value::Path),
    ("ignore", Value::Other),
    ("ignore-glob", Value::Other),
    ("deselect", Value::Other),
];

/// Options that are a prefix of one above but mean themselves (`--co` is `--collect-only`).
const EXACT_LONG_OPTIONS: &[&str] = &["co", "cov", "json-report"];

/// Short options taking a value; every other letter is taken for a flag (`-x`, `-s`, `-v`, `-q`…).
const SHORT_OPTIONS: &[(char, Value)] = &[
    ('c', Value::Path),
    ('o', Value::IniOverride),
    ('k', Value::Other),
    ('m', Value::Other),
    ('p', Value::Other),
    ('r', Value::Other),
    ('W', Value::Other),
    ('n', Value::Other),
];

/// Checks that every path the arguments give pytest lies inside the roots: test paths, path
/// options (inline, after `=`, or in the next argument), short options clustered as argparse reads
/// them (`-xc/other/pytest.ini`), `-o` ini overrides and `@file` argument files, which argparse
/// reads wherever they stand.
fn check_args(request: &PlanRequest) -> Result<(), String> {
    let args = &request.args;
    refuse_uploads(args)?;
    for arg in args {
        if let Some(file) = arg.strip_prefix('@') {
            request.check_path("@", file).map_err(|_| {
                format!(
                    "`{arg}` reads pytest arguments from a file outside the directories this call may use ({}); \
                     send the arguments themselves",
                    request.roots.join(", ")
                )
            })?;
        }
    }
    let mut positional_only = false;
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        i += 1;
        if arg.starts_with('@') {
            continue;
        }
        if positional_only || !arg.starts_with('-') || arg == "-" {
            let path = arg.split("::").next().unwrap_or(arg);
            request.check_path("pytest", path)?;
            continue;
        }
        if arg == "--" {
            positional_only = true;
            continue;
        }
        let (flag, kind, inline) = if let Some(long) = arg.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (long, None),
            };
            match long_option(name) {
                Some(kind) => (format!("--{name}"), kind, inline),
                None => continue,
            }
        } else {
            match short_option(&arg[1..]) {
                Some((letter, kind, inline)) => (format!("-{letter}"), kind, inline),
                None => continue,
            }
        };
        let value = match inline {
            Some(value) => value,
            // argparse takes the next argument unless it looks like an option.
            None => match args.get(i) {
                Some(next) if !next.starts_with('-') && !next.starts_with('@') => {
                    i += 1;
                    next.as_str()
                }
                _ => continue,
            },
        };
        check_value(request, &flag, kind, value)?;
        // In a cluster (`-xc=FILE`) argparse keeps the `=`; alone (`-c=FILE`) it drops it.
        if !flag.starts_with("--")
            && let Some(stripped) = value.strip_prefix('=')
        {
            check_value(request, &flag, kind, stripped)?;
        }
    }
    Ok(())
}

/// The option a long name stands for. pytest before 6.0 let argparse expand a prefix of a long
/// option (`--basete` for `--basetemp`), so any prefix of one above counts.
fn long_option(name: &str) -> Option<Value> {
    if name.is_empty() || EXACT_LONG_OPTIONS.contains(&name) {
        return None;
    }
    LONG_OPTIONS.iter().find(|(long, _)| long.starts_with(name)).map(|(_, kind)| *kind)
}

/// In a cluster of short options, the first one taking a value, what it takes, and the rest of
/// the cluster, which is that value.
fn short_option(cluster: &str) -> Option<(char, Value, Option<&str>)> {
    cluster.char_indices().find_map(|(i, letter)| {
        let (_, kind) = SHORT_OPTIONS.iter().find(|(short, _)| *short == letter)?;
        let rest = &cluster[i + letter.len_utf8()..];
        Some((letter, *kind, (!rest.is_empty()).then_some(rest)))
    })
}

fn check_value(request: &PlanRequest, flag: &str, kind: Value, value: &str) -> Result<(), String> {
    match kind {
        Value::Path => request.check_path(flag, value),
        Value::Expanded => {
            refuse_variables(request, flag, value)?;
            request.check_path(flag, value)
        }
        Value::Emptied => {
            let suggestion = format!("{}/basetemp", request.artifact_dir.trim_end_matches('/'));
            request
                .check_path(flag, value)
                .map_err(|err| format!("{err}, such as {suggestion} (pytest deletes what `--basetemp` holds)"))?;
            // Inside the roots it may still name a folder of the project, which pytest would empty.
            let target = Path::new(&request.cwd).join(value);
            let in_artifacts = target.starts_with(&request.artifact_dir);
            if !request.roots.is_empty() && target.is_dir() && !in_artifacts {
                return Err(format!(
                    "`{flag} {value}` names an existing directory, which pytest would empty; send a new one, such as {suggestion}"
                ));
            }
            Ok(())
        }
        Value::IniOverride => check_ini_override(request, flag, value),
        Value::CovReport => match value.split_once(':') {
            Some((_, dest)) => request.check_path(flag, dest),
            None => Ok(()),
        },
        Value::Other => Ok(()),
    }
}

/// Checks the ini settings that name paths. `cache_dir`, `pythonpath` and `testpaths` are taken
/// from the rootdir (or the ini file's folder), which may lie above the cwd: relative paths pass
/// only when they do not climb out of it with `..`.
fn check_ini_override(request: &PlanRequest, flag: &str, value: &str) -> Result<(), String> {
    let Some((name, setting)) = value.split_once('=') else { return Ok(()) };
    if request.roots.is_empty() {
        return Ok(());
    }
    let shown = format!("{flag} {name}");
    match name {
        "addopts" if !setting.trim().is_empty() => Err(format!(
            "`{flag} {value}` hands pytest arguments that buildvise does not check; send them as arguments of the \
             call instead"
        )),
        "log_file" => request.check_path(&shown, setting),
        "cache_dir" | "pythonpath" | "testpaths" => {
            for entry in setting.split_whitespace() {
                refuse_variables(request, &shown, entry)?;
                let climbs = Path::new(entry).components().any(|c| c == std::path::Component::ParentDir);
                if climbs && !Path::new(entry).is_absolute() {
                    return Err(format!(
                        "`{flag} {name}={entry}` is taken from pytest's rootdir, which buildvise cannot see, so a \
                         relative path may not climb with `..`; send an absolute path inside {}",
                        request.roots.join(", ")
                    ));
                }
                request.check_path(&shown, entry)?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// `--pastebin` uploads the test output to a public pastebin service. Refused in every spelling:
/// a prefix argparse expands, and inside `-o addopts=…` or an argument file's neighbour, since
/// nothing a call sends may leave the machine.
fn refuse_uploads(args: &[String]) -> Result<(), String> {
    let uploads = |word: &str| {
        let name = word.strip_prefix("--").map(|w| w.split_once('=').map_or(w, |(name, _)| name));
        name.is_some_and(|name| name.len() >= 3 && "pastebin".starts_with(name))
    };
    let words = args.iter().flat_map(|arg| {
        let ini = arg.strip_prefix("-o").map(|v| v.trim_start_matches('=')).and_then(|v| v.split_once('='));
        let setting = ini.map(|(_, setting)| setting).unwrap_or_default();
        std::iter::once(arg.as_str())
            .chain(setting.split_whitespace())
            .chain(arg.split_once("addopts=").map(|(_, s)| s))
    });
    for word in words {
        if uploads(word) || word.split_whitespace().any(uploads) {
            return Err(format!(
                "`{word}` uploads the test output to a pastebin service, and nothing a call sends leaves this machine; \
                 send the arguments without it"
            ));
        }
    }
    Ok(())
}

/// pytest runs some paths through `os.path.expandvars`, so `$HOME/x` could lead anywhere.
fn refuse_variables(request: &PlanRequest, flag: &str, value: &str) -> Result<(), String> {
    if request.roots.is_empty() || !value.contains('$') {
        return Ok(());
    }
    Err(format!(
        "`{flag} {value}`: pytest expands `$` variables in this path, so buildvise cannot tell where it leads; \
         spell the path out inside {}",
        request.roots.join(", ")
    ))
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

/// The first environment that has an interpreter, in this order: `UV_PROJECT_ENVIRONMENT` in a
/// uv project; `.venv`, then `venv`, in the cwd, then in the root of the uv workspace or Poetry
/// project holding it (the nearest folder above with `uv.lock` or `poetry.lock`; uv, and Poetry
/// with `virtualenvs.in-project`, keep `.venv` there); then the active `VIRTUAL_ENV`. Nothing of
/// the project runs to find it: Poetry's environments outside the project are left to an
/// activated `VIRTUAL_ENV`.
fn find_venv(cwd: &Path, env: &HostEnv) -> Option<Venv> {
    let root = cwd.ancestors().find(|dir| ROOT_MARKERS.iter().any(|m| dir.join(m).is_file()));
    let uv = env
        .uv_project_environment
        .filter(|v| !v.trim().is_empty())
        .and_then(|v| root.filter(|r| r.join("uv.lock").is_file()).map(|r| r.join(v)));
    let folders = std::iter::once(cwd).chain(root.filter(|r| *r != cwd));
    let project = folders.flat_map(|dir| PROJECT_VENVS.iter().map(move |name| dir.join(name)));
    let active = env.virtual_env.filter(|a| !a.trim().is_empty()).map(PathBuf::from);
    uv.into_iter().chain(project).chain(active).find_map(|root| venv_python(&root).map(|python| Venv { root, python }))
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
    use buildvise_plugin_api::testing::ScratchDir;

    fn request(cwd: &Path, args: &[&str]) -> PlanRequest {
        PlanRequest::new(
            TOOL,
            args.iter().map(|s| s.to_string()).collect(),
            cwd.to_string_lossy().into_owned(),
            "/runs/abc/artifacts",
        )
    }

    fn temp_project(name: &str) -> ScratchDir {
        ScratchDir::new(&format!("bv-pytest-plan-{name}"))
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
        let plan = plan(&request(&dir, &["-q", "-k", "fast"]), &HostEnv::default()).expect("plan");
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
        let p =
            plan(&request(&dir, &[]), &HostEnv { virtual_env: Some(&active_str), ..HostEnv::default() }).expect("plan");
        assert_eq!(p.program, active.join("bin/python").to_string_lossy());
        make_venv(&dir.join(".venv"), true);
        let p =
            plan(&request(&dir, &[]), &HostEnv { virtual_env: Some(&active_str), ..HostEnv::default() }).expect("plan");
        assert_eq!(p.program, dir.join(".venv/bin/python").to_string_lossy());
    }

    #[test]
    fn uv_and_poetry_projects_use_the_venv_at_their_root() {
        let dir = temp_project("uv");
        let member = dir.join("packages/api");
        std::fs::create_dir_all(&member).expect("member");
        std::fs::write(dir.join("uv.lock"), "version = 1\n").expect("lock");
        make_venv(&dir.join(".venv"), true);
        let p = plan(&request(&member, &[]), &HostEnv::default()).expect("plan");
        assert_eq!(p.program, dir.join(".venv/bin/python").to_string_lossy(), "the workspace root's .venv");
        make_venv(&member.join(".venv"), true);
        let p = plan(&request(&member, &[]), &HostEnv::default()).expect("plan");
        assert_eq!(p.program, member.join(".venv/bin/python").to_string_lossy(), "the cwd's own first");
        make_venv(&dir.join("envs/ci"), true);
        let uv = HostEnv { uv_project_environment: Some("envs/ci"), ..HostEnv::default() };
        let p = plan(&request(&member, &[]), &uv).expect("plan");
        assert_eq!(p.program, dir.join("envs/ci/bin/python").to_string_lossy(), "relative to the workspace root");

        let poetry = temp_project("poetry");
        let sub = poetry.join("tests");
        std::fs::create_dir_all(&sub).expect("sub");
        std::fs::write(poetry.join("poetry.lock"), "").expect("lock");
        make_venv(&poetry.join(".venv"), true);
        let p = plan(&request(&sub, &[]), &uv).expect("plan");
        assert_eq!(p.program, poetry.join(".venv/bin/python").to_string_lossy(), "UV_PROJECT_ENVIRONMENT is uv's");
        let plain = temp_project("plain-sub");
        let p = plan(&request(&plain, &[]), &HostEnv::default()).expect("plan");
        assert_eq!(p.program, "python3", "no lock file: no folder above is looked at");
    }

    #[test]
    fn refuses_a_venv_without_pytest() {
        let dir = temp_project("nopytest");
        make_venv(&dir.join("venv"), false);
        let err = plan(&request(&dir, &[]), &HostEnv::default()).expect_err("refused");
        assert!(err.contains("venv/bin/python -m pip install pytest"), "{err}");
    }

    #[test]
    fn a_pth_file_may_bring_pytest() {
        let dir = temp_project("pth");
        let venv = dir.join(".venv");
        make_venv(&venv, false);
        let site = venv.join("lib/python3.11/site-packages");
        std::fs::write(site.join("distutils-precedence.pth"), "import os\n").expect("pth");
        assert!(plan(&request(&dir, &[]), &HostEnv::default()).is_err(), "an inert .pth brings nothing");
        std::fs::write(site.join("__editable__.pytest-9.2.0.pth"), "/src/pytest/src\n").expect("pth");
        let p = plan(&request(&dir, &[]), &HostEnv::default()).expect("plan");
        assert_eq!(p.program, venv.join("bin/python").to_string_lossy());
    }

    #[test]
    fn keeps_the_users_junit_report() {
        let dir = temp_project("userjunit");
        let p = plan(&request(&dir, &["--junitxml=out/r.xml"]), &HostEnv::default()).expect("plan");
        assert_eq!(p.args, ["-m", "pytest", "--junitxml=out/r.xml"]);
        assert_eq!(p.artifacts, [dir.join("out/r.xml").to_string_lossy().into_owned()]);
        assert_eq!(user_junit(&["--junit-xml".into(), "/x.xml".into()]), JunitChoice::Path("/x.xml".into()));
        assert_eq!(user_junit(&["-p".into(), "no:junitxml".into()]), JunitChoice::Disabled);
        assert_eq!(user_junit(&["--".into(), "--junitxml=x".into()]), JunitChoice::None);
    }

    /// A call limited to /bv-plan/proj; none of these paths need exist.
    fn confined(args: &[&str]) -> PlanRequest {
        PlanRequest::new(TOOL, args.iter().map(|s| s.to_string()).collect(), "/bv-plan/proj", "/bv-runs/r1")
            .with_roots(vec!["/bv-plan/proj".into()])
    }

    fn refusal(args: &[&str]) -> String {
        plan(&confined(args), &HostEnv::default()).expect_err(&format!("{args:?} refused"))
    }

    #[test]
    fn ordinary_calls_are_planned_as_before() {
        let p = plan(&confined(&["-k", "name", "-x", "tests/unit"]), &HostEnv::default()).expect("plan");
        assert_eq!(p.args, ["-m", "pytest", "--junitxml=/bv-runs/r1/junit.xml", "-k", "name", "-x", "tests/unit"]);
        let p = plan(&confined(&["--junitxml=out.xml"]), &HostEnv::default()).expect("plan");
        assert_eq!(p.args, ["-m", "pytest", "--junitxml=out.xml"]);
        assert_eq!(p.artifacts, ["/bv-plan/proj/out.xml"]);
        for args in [
            &["-p", "no:cacheprovider", "-ra", "-W", "error::DeprecationWarning"][..],
            &["-o", "cache_dir=.cache", "-o", "addopts=", "--co", "-q"],
            &["tests/test_a.py::test_x[../../etc]", "--cov", "--cov-report=term-missing"],
            &["--basetemp=/bv-runs/r1/basetemp", "--ignore", "/elsewhere/tests", "--rootdir=."],
            &["-xvs", "--log-file=logs/run.log", "--debug", "-m", "not slow"],
        ] {
            let p = plan(&confined(args), &HostEnv::default()).expect("plan");
            assert_eq!(p.args[3..], *args);
        }
    }

    #[test]
    fn basetemp_never_empties_a_folder_of_the_project() {
        let project = temp_project("basetemp");
        std::fs::create_dir_all(project.join("src")).expect("project dir");
        let root = project.display().to_string();
        let request = |args: &[&str]| {
            PlanRequest::new(TOOL, args.iter().map(|a| a.to_string()).collect(), root.clone(), "/bv-runs/r1")
                .with_roots(vec![root.clone()])
        };
        let refused = plan(&request(&["--basetemp=src"]), &HostEnv::default()).expect_err("an existing folder");
        assert!(refused.contains("names an existing directory, which pytest would empty"), "{refused}");
        assert!(plan(&request(&["--basetemp=new-tmp"]), &HostEnv::default()).is_ok());
        assert!(plan(&request(&["--basetemp=/bv-runs/r1/basetemp"]), &HostEnv::default()).is_ok());
    }

    #[test]
    fn basetemp_must_stay_inside_the_roots() {
        for args in [&["--basetemp=/tmp/x"][..], &["--basetemp", "/tmp/x"], &["--basete=../x"]] {
            let err = refusal(args);
            assert!(err.contains("points outside") && err.contains("such as /bv-runs/r1/basetemp"), "{err}");
        }
    }

    #[test]
    fn path_options_must_stay_inside_the_roots() {
        for args in [
            &["--rootdir=/tmp"][..],
            &["--confcutdir=/"],
            &["-c", "/tmp/pytest.ini"],
            &["-c/tmp/pytest.ini"],
            &["-xc=/tmp/pytest.ini"],
            &["--config-file=../pytest.ini"],
            &["--junitxml=/tmp/r.xml"],
            &["--junit-xml", "../r.xml"],
            &["--log-file", "/tmp/log"],
            &["--debug=/tmp/debug.log"],
            &["--debug", "/tmp/debug.log"],
            &["--cov-report=html:/tmp/cov"],
            &["--html=/tmp/report.html"],
        ] {
            let err = refusal(args);
            assert!(err.contains("points outside the directories this call may use"), "{err}");
        }
        for args in [&["--rootdir", "$HOME"][..], &["--junitxml=${HOME}/r.xml"]] {
            assert!(refusal(args).contains("expands `$` variables"));
        }
        assert!(refusal(&["@/tmp/args"]).contains("reads pytest arguments from a file outside"));
        assert!(plan(&confined(&["@args.txt"]), &HostEnv::default()).is_ok());
    }

    #[test]
    fn test_paths_must_stay_inside_the_roots() {
        for args in [&["../other/tests"][..], &["/tmp/tests/test_x.py::test_a"], &["-x", "--", "/tmp/tests"]] {
            let err = refusal(args);
            assert!(err.contains("`pytest ") && err.contains("points outside"), "{err}");
        }
    }

    #[test]
    fn ini_overrides_naming_paths_must_stay_inside_the_roots() {
        for args in [
            &["-o", "cache_dir=/tmp/c"][..],
            &["-ocache_dir=/tmp/c"],
            &["--override-ini=log_file=/tmp/l"],
            &["-o", "pythonpath=src /tmp/lib"],
        ] {
            let err = refusal(args);
            assert!(err.contains("points outside"), "{err}");
        }
        for args in [&["-o", "cache_dir=../c"][..], &["-o", "testpaths=tests ../x"]] {
            assert!(refusal(args).contains("may not climb with `..`"));
        }
        assert!(refusal(&["-o", "addopts=--basetemp=/tmp/x"]).contains("send them as arguments of the call"));
        let open = PlanRequest::new(TOOL, vec!["-o".into(), "cache_dir=/tmp/c".into()], "/bv-plan/proj", "/a");
        assert!(plan(&open, &HostEnv::default()).is_ok(), "no roots, no limit");
    }

    #[test]
    fn via_runs_pytest_as_uv_or_poetry_runs_it() {
        let dir = temp_project("via");
        for runner in ["uv", "poetry"] {
            let plan = plan(&request(&dir, &[&format!("--via={runner}"), "-q", "tests"]), &HostEnv::default())
                .expect("a plan");
            assert_eq!(plan.program, runner);
            assert_eq!(plan.args, ["run", "pytest", "--junitxml=/runs/abc/artifacts/junit.xml", "-q", "tests"]);
        }
        let err = plan(&request(&dir, &["--via=pipenv"]), &HostEnv::default()).expect_err("an unknown runner");
        assert!(err.contains("--via=uv or --via=poetry"), "{err}");
        // The arguments are checked as ever: the runner changes nothing about what may pass.
        assert!(plan(&request(&dir, &["--via=uv", "--pastebin=all"]), &HostEnv::default()).is_err());
    }

    #[test]
    fn never_uploads_the_output() {
        let dir = temp_project("pastebin");
        for args in [
            &["--pastebin=all"][..],
            &["-q", "--pastebin", "failed"],
            &["--pasteb=all"],
            &["-o", "addopts=-q --pastebin=all"],
            &["-oaddopts=--pastebin=failed"],
        ] {
            let err = plan(&request(&dir, args), &HostEnv::default()).expect_err("an upload");
            assert!(err.contains("pastebin service"), "{args:?}: {err}");
        }
        assert!(plan(&request(&dir, &["-p", "no:cacheprovider", "--tb=short"]), &HostEnv::default()).is_ok());
    }

    #[test]
    fn refuses_other_tools() {
        let dir = temp_project("tool");
        let mut r = request(&dir, &[]);
        r.tool = "pytest.lint".into();
        assert!(plan(&r, &HostEnv::default()).expect_err("refused").contains("send pytest.run"));
    }
}
