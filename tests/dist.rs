//! The packages `cargo xtask dist` makes install the way each ecosystem installs a tool, offline,
//! from the files alone, and the installed command finds every plugin: the npm packages into an
//! empty directory (`npx buildvise list`), the wheel into a fresh venv (`buildvise list`). Each
//! lists the same tools as the binary that was packaged.
//!
//! The packages are made from `--profile release` in the workspace's `target/`, the build
//! tests/install.rs makes too: the shipped profile's LTO would add minutes and test nothing more.
//! Without node or python3 the test of that ecosystem skips (`common::skip`).

mod common;

use common::{npm_cache, root, which};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

/// The plugins that ship: each must be found wherever a package puts the binary.
const SHIPPED: [&str; 5] = ["cargo", "dotnet", "generic", "npm", "pytest"];

fn show(out: &Output) -> String {
    format!(
        "exit: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// `target/dist/`, made once for this test binary by the documented command.
fn dist() -> &'static Path {
    static DIST: OnceLock<PathBuf> = OnceLock::new();
    DIST.get_or_init(|| {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let started = std::time::Instant::now();
        let out = Command::new(cargo)
            .current_dir(root())
            .args(["xtask", "dist", "--profile", "release"])
            .env("CARGO_TARGET_DIR", root().join("target"))
            .env_remove("CARGO_BUILD_TARGET_DIR")
            .stdin(Stdio::null())
            .output()
            .expect("cargo runs");
        assert!(out.status.success(), "cargo xtask dist failed:\n{}", show(&out));
        eprintln!("cargo xtask dist took {:.0?}", started.elapsed());
        root().join("target/dist")
    })
}

/// The files in target/dist whose name ends with `suffix`.
fn packages(suffix: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dist())
        .expect("read target/dist")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    found.sort();
    found
}

/// A command with an empty home under `scratch` and PATH holding only the directories of node,
/// npm, python3 and the shell
/// (for scripts), so that no plugin is found but the package's own and no buildvise installed on
/// this machine is taken for a global npm install.
fn isolated(program: impl AsRef<std::ffi::OsStr>, scratch: &Path) -> Command {
    let home = scratch.join("home");
    std::fs::create_dir_all(&home).expect("create a home");
    let dirs = ["node", "npm", "python3", "env", "sh"]
        .into_iter()
        .filter_map(which)
        .filter_map(|p| p.parent().map(Path::to_path_buf));
    let path = std::env::join_paths(dirs).expect("PATH of the tools' directories");
    let mut cmd = Command::new(program);
    cmd.env("HOME", &home)
        .env("PATH", path)
        .env_remove("XDG_DATA_HOME")
        .env_remove("BUILDVISE_PLUGIN_PATH")
        .env_remove("BUILDVISE_LAUNCHER")
        .stdin(Stdio::null());
    cmd
}

/// `list --json` as (tool names, plugin name → library path).
fn listed(cmd: &mut Command) -> (BTreeSet<String>, Vec<(String, PathBuf)>) {
    let out = cmd.args(["list", "--json"]).output().expect("buildvise runs");
    assert!(out.status.success(), "{cmd:?}\n{}", show(&out));
    let view: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}:\n{}", show(&out)));
    let tools = view["tools"].as_array().unwrap_or_else(|| panic!("no tools:\n{}", show(&out)));
    let plugins = view["plugins"].as_array().unwrap_or_else(|| panic!("no plugins:\n{}", show(&out)));
    (
        tools.iter().map(|t| t["name"].as_str().expect("a tool's name").to_string()).collect(),
        plugins
            .iter()
            .map(|p| (p["name"].as_str().expect("name").to_string(), PathBuf::from(p["path"].as_str().expect("path"))))
            .collect(),
    )
}

/// The binary that was packaged, with its plugins beside it in target/release.
fn packaged_binary() -> PathBuf {
    root().join("target/release").join(format!("buildvise{}", std::env::consts::EXE_SUFFIX))
}

/// The tools the packaged binary lists.
fn packaged_tools(scratch: &Path) -> BTreeSet<String> {
    let (tools, plugins) = listed(&mut isolated(packaged_binary(), scratch));
    assert_eq!(plugins.len(), SHIPPED.len(), "{plugins:?}");
    tools
}

/// Each shipped plugin loaded from under `within`, and the same tools as the packaged binary.
fn assert_complete(
    tools: &BTreeSet<String>,
    plugins: &[(String, PathBuf)],
    within: &Path,
    expected: &BTreeSet<String>,
) {
    let names: BTreeSet<&str> = plugins.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, SHIPPED.into_iter().collect(), "every shipped plugin, once: {plugins:?}");
    for (name, path) in plugins {
        assert!(
            path.starts_with(within),
            "{name} was loaded from {}, not from the package in {}",
            path.display(),
            within.display()
        );
    }
    assert_eq!(tools, expected, "the installed command lists what the packaged binary lists");
    for tool in ["cargo.build", "npm.test", "pytest.run", "dotnet.test"] {
        assert!(tools.contains(tool), "{tool} is not listed: {tools:?}");
    }
}

#[test]
fn the_npm_packages_install_offline_and_npx_buildvise_finds_every_plugin() {
    let (Some(_), Some(_)) = (which("node"), which("npm")) else {
        return common::skip("node or npm is not on PATH; the npm packages need them to install");
    };
    let main = dist().join(format!("buildvise-{}.tgz", env!("CARGO_PKG_VERSION")));
    let platform: Vec<PathBuf> = packages(".tgz").into_iter().filter(|p| p != &main).collect();
    assert!(main.is_file(), "no {}", main.display());
    assert_eq!(platform.len(), 1, "one platform package beside the main one: {platform:?}");
    let scratch = tempfile::Builder::new().prefix("buildvise-npm-").tempdir().expect("temp dir");
    let scratch = std::fs::canonicalize(scratch.path()).expect("canonical temp dir");
    let project = scratch.join("project");
    std::fs::create_dir_all(&project).expect("create the project dir");
    std::fs::write(project.join("package.json"), "{\"name\": \"empty\", \"private\": true}\n").expect("package.json");
    // Both files at once, offline: the platform package is the main one's optional dependency,
    // and those of other platforms are skipped without asking a registry.
    let started = std::time::Instant::now();
    let out = isolated("npm", &scratch)
        .current_dir(&project)
        .args(["install", "--offline", "--no-audit", "--no-fund", "--update-notifier=false", "--cache"])
        .arg(npm_cache())
        .arg(&main)
        .arg(&platform[0])
        .output()
        .expect("npm runs");
    assert!(out.status.success(), "npm install of the packages failed:\n{}", show(&out));
    eprintln!("npm install took {:.0?}", started.elapsed());

    let mut npx = isolated("npx", &scratch);
    npx.current_dir(&project).args(["--offline", "--cache"]).arg(npm_cache()).arg("buildvise");
    let (tools, plugins) = listed(&mut npx);
    assert_complete(&tools, &plugins, &project.join("node_modules/@buildvise"), &packaged_tools(&scratch));

    // The launcher passes the exit code on: an unknown tool is the same error through npx as from
    // the packaged binary itself.
    let out = isolated("npx", &scratch)
        .current_dir(&project)
        .args(["--offline", "--cache"])
        .arg(npm_cache())
        .args(["buildvise", "exec", "no.such.tool"])
        .output()
        .expect("npx runs");
    assert_ne!(out.status.code(), Some(0), "{}", show(&out));
    let direct = isolated(packaged_binary(), &scratch).args(["exec", "no.such.tool"]).output().expect("buildvise runs");
    assert_eq!(out.status.code(), direct.status.code(), "npx: {}\ndirect: {}", show(&out), show(&direct));

    // Installed in a project and run by npx, buildvise registers itself as npx runs it: the
    // project's file then works wherever npx does, with no binary on PATH.
    let out = isolated("npx", &scratch)
        .current_dir(&project)
        .args(["--offline", "--cache"])
        .arg(npm_cache())
        .args(["buildvise", "mcp", "install", "--show"])
        .output()
        .expect("npx runs");
    assert!(out.status.success(), "{}", show(&out));
    let file: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", show(&out)));
    assert_eq!(
        file["mcpServers"]["buildvise"],
        serde_json::json!({"command": "npx", "args": ["-y", "buildvise", "serve"]}),
        "{file}"
    );
    let out = isolated("npx", &scratch)
        .current_dir(&project)
        .args(["--offline", "--cache"])
        .arg(npm_cache())
        .args(["buildvise", "hook", "install", "--show"])
        .output()
        .expect("npx runs");
    assert!(out.status.success(), "{}", show(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("\"npx -y buildvise hook claude\""), "{}", show(&out));
}

#[test]
fn the_wheel_installs_offline_into_a_fresh_venv_and_finds_every_plugin() {
    if which("python3").is_none() {
        return common::skip("python3 is not on PATH; the wheel needs it to install");
    }
    let wheels = packages(".whl");
    assert_eq!(wheels.len(), 1, "one wheel in target/dist: {wheels:?}");
    let wheel = &wheels[0];
    let scratch = tempfile::Builder::new().prefix("buildvise-wheel-").tempdir().expect("temp dir");
    let scratch = std::fs::canonicalize(scratch.path()).expect("canonical temp dir");
    let venv = scratch.join("venv");
    common::setup_step(Command::new("python3").args(["-m", "venv"]).arg(&venv));
    let started = std::time::Instant::now();
    let out = isolated(venv.join("bin/python"), &scratch)
        .args(["-m", "pip", "install", "--no-index", "--disable-pip-version-check", "--quiet"])
        .arg(wheel)
        .output()
        .expect("pip runs");
    assert!(out.status.success(), "pip install of the wheel failed:\n{}", show(&out));
    eprintln!("pip install took {:.0?}", started.elapsed());

    let (tools, plugins) = listed(&mut isolated(venv.join("bin/buildvise"), &scratch));
    assert_complete(&tools, &plugins, &venv.join("lib/buildvise/plugins"), &packaged_tools(&scratch));
}

/// `uvx` runs the wheel from uv's cache, offline, and buildvise run so registers itself as
/// `uvx buildvise serve`: the command a client needs, since nothing is on PATH. uv comes from the
/// Python registry, as for the uv hook test (the same venv).
#[test]
fn uvx_runs_the_wheel_offline_and_buildvise_registers_itself_as_uvx_runs_it() {
    let Some(uv_venv) = common::python_venv("uv-venv", "uv==0.13.9") else {
        return common::skip("python3 not found; uvx is installed with it");
    };
    let wheels = packages(".whl");
    assert_eq!(wheels.len(), 1, "one wheel in target/dist: {wheels:?}");
    let scratch = tempfile::Builder::new().prefix("buildvise-uvx-").tempdir().expect("temp dir");
    let scratch = std::fs::canonicalize(scratch.path()).expect("canonical temp dir");
    // A cache of its own: the wheel is unpacked into it, and nothing else is found there.
    let cache = scratch.join("uv-cache");
    let uvx = |args: &[&str]| {
        let mut cmd = isolated(uv_venv.join("bin/uvx"), &scratch);
        cmd.current_dir(scratch.join("home")).env("UV_CACHE_DIR", &cache).args(["--offline", "--from"]);
        cmd.arg(&wheels[0]).arg("buildvise").args(args);
        cmd
    };
    let (tools, plugins) = listed(&mut uvx(&[]));
    assert_complete(&tools, &plugins, &cache, &packaged_tools(&scratch));

    let out = uvx(&["mcp", "install", "--show"]).output().expect("uvx runs");
    assert!(out.status.success(), "{}", show(&out));
    let file: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", show(&out)));
    assert_eq!(
        file["mcpServers"]["buildvise"],
        serde_json::json!({"command": "uvx", "args": ["buildvise", "serve"]}),
        "{file}"
    );
}
