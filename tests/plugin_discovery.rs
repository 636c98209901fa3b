//! Finding plugins, as the operator sees it: the mistakes of a set-up are named with their fix
//! (a plugin dir that is not there, a library not named as a plugin, no plugin at all), and the
//! manifests kept in the store never outlive the library they came from.
//!
//! The binary is copied alone into a scratch dir, so that the workspace's own plugins beside
//! `target/debug/buildvise` are not found: what it sees is only what each test gives it.

mod common;

use common::{output_of_copy, test_plugins};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A copy of the binary with an empty home, an empty data dir and its own store.
struct Alone {
    dir: tempfile::TempDir,
    binary: PathBuf,
}

impl Alone {
    fn new() -> Self {
        let dir = tempfile::Builder::new().prefix("buildvise-discovery-").tempdir().expect("temp dir");
        for sub in ["bin", "home", "state", "work"] {
            std::fs::create_dir_all(dir.path().join(sub)).expect("scratch dir");
        }
        let binary = dir.path().join("bin/buildvise");
        std::fs::copy(env!("CARGO_BIN_EXE_buildvise"), &binary).expect("copy the binary alone");
        Alone { dir, binary }
    }

    fn path(&self, sub: &str) -> PathBuf {
        self.dir.path().join(sub)
    }

    fn run(&self, args: &[&str]) -> Output {
        output_of_copy(
            Command::new(&self.binary)
                .args(args)
                .env_clear()
                .env("HOME", self.path("home"))
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .env("BUILDVISE_HOME", self.path("state"))
                .current_dir(self.path("work"))
                .stdin(Stdio::null()),
        )
    }
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// A plugin dir holding a copy of the test plugin `panicky` under `name`.
fn plugin_dir(at: &Path, name: &str) -> PathBuf {
    std::fs::create_dir_all(at).expect("plugin dir");
    let library = format!("{}buildvise_plugin_panicky{}", std::env::consts::DLL_PREFIX, std::env::consts::DLL_SUFFIX);
    std::fs::copy(test_plugins().join(library), at.join(name)).expect("copy the test plugin");
    at.to_path_buf()
}

fn dylib(stem: &str) -> String {
    format!("{}{stem}{}", std::env::consts::DLL_PREFIX, std::env::consts::DLL_SUFFIX)
}

#[test]
fn no_plugin_at_all_is_said_by_list_with_a_failing_exit_and_by_an_unknown_tool() {
    let alone = Alone::new();
    let list = alone.run(&["list"]);
    assert_eq!(list.status.code(), Some(1), "{}", text(&list));
    assert!(text(&list).starts_with("no plugin loaded: "), "{}", text(&list));

    let exec = alone.run(&["exec", "cargo.build"]);
    assert!(!exec.status.success());
    let error = text(&exec);
    assert!(error.contains("unknown tool \"cargo.build\"") && error.contains("no plugin loaded"), "{error}");
}

#[test]
fn a_plugin_dir_that_is_not_there_is_named_with_the_flag_to_fix() {
    let alone = Alone::new();
    let good = plugin_dir(&alone.path("plugins"), &dylib("buildvise_plugin_panicky"));
    let missing = alone.path("no-such-dir");
    let (good, missing) = (good.to_str().unwrap(), missing.to_str().unwrap());

    let list = alone.run(&["--plugin-dir", missing, "--plugin-dir", good, "list"]);
    assert_eq!(list.status.code(), Some(0), "a plugin loaded:\n{}", text(&list));
    let shown = text(&list);
    assert!(shown.contains("panicky.sh"), "{shown}");
    let problem = shown.lines().find(|l| l.contains("no-such-dir")).unwrap_or_else(|| panic!("{shown}"));
    assert!(problem.contains("cannot be read") && problem.contains("--plugin-dir"), "{problem}");

    // The tool the caller wanted may have been in the dir that is not there.
    let exec = alone.run(&["--plugin-dir", missing, "--plugin-dir", good, "exec", "cargo.build"]);
    let error = text(&exec);
    assert!(
        error.contains("unknown tool") && error.contains("no-such-dir") && error.contains("--plugin-dir"),
        "{error}"
    );

    let json = alone.run(&["--plugin-dir", missing, "--plugin-dir", good, "list", "--json"]);
    let view: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON");
    assert_eq!(view["pluginDirProblems"].as_array().map(Vec::len), Some(1), "{view}");
}

#[test]
fn a_library_not_named_as_a_plugin_is_named_with_the_rename_that_loads_it() {
    let alone = Alone::new();
    let dir = plugin_dir(&alone.path("plugins"), &dylib("panicky"));
    let empty = alone.path("empty");
    std::fs::create_dir_all(&empty).unwrap();

    let list = alone.run(&["--plugin-dir", dir.to_str().unwrap(), "--plugin-dir", empty.to_str().unwrap(), "list"]);
    let shown = text(&list);
    assert_eq!(list.status.code(), Some(1), "nothing loaded:\n{shown}");
    let misnamed = shown.lines().find(|l| l.contains(&dylib("panicky"))).unwrap_or_else(|| panic!("{shown}"));
    assert!(misnamed.contains("is not loaded") && misnamed.contains("buildvise_plugin_"), "{misnamed}");
    let empty_line = shown.lines().find(|l| l.contains("empty")).unwrap_or_else(|| panic!("{shown}"));
    assert!(empty_line.contains("holds no"), "{empty_line}");
}

#[test]
fn a_plugin_replaced_in_place_is_read_anew_and_a_kept_manifest_still_runs_its_tool() {
    let alone = Alone::new();
    let dir = plugin_dir(&alone.path("plugins"), &dylib("buildvise_plugin_x"));
    let dir = dir.to_str().unwrap();

    let first = alone.run(&["--plugin-dir", dir, "list"]);
    assert!(text(&first).contains("panicky.sh"), "{}", text(&first));
    assert!(alone.path("state/plugin-manifests.json").is_file(), "the manifests are kept in the store");

    // Known by its kept manifest, the library is loaded only when a call uses it, and runs.
    let exec = alone.run(&["--plugin-dir", dir, "exec", "panicky.sh", "--", "echo from a kept manifest"]);
    assert!(exec.status.success(), "{}", text(&exec));

    // Another library under the same name: what it offers is read again, not taken from the store.
    let other = common::toolchains().join(dylib("buildvise_plugin_toolchains"));
    let target = Path::new(dir).join(dylib("buildvise_plugin_x"));
    let staged = Path::new(dir).join(".staged");
    std::fs::copy(other, &staged).unwrap();
    std::fs::rename(&staged, &target).unwrap();
    let listed = text(&alone.run(&["--plugin-dir", dir, "list"]));
    assert!(listed.contains("cargo.build") && !listed.contains("panicky.sh"), "{listed}");
}
