//! The documented install, `cargo xtask install --prefix DIR`, puts the binary and every plugin
//! where the binary finds them on its own: `list` in an empty environment finds them all and names
//! where each came from, and installing again over a running binary works. A binary without
//! plugins says where it looked and how to get them.
//!
//! The release build goes to the workspace's `target/release`, where the README's try-it command
//! (`cargo build --release`) builds the same packages: one release build serves both. cargo lets
//! go of `target/` before it runs the tests.

mod common;

use buildvise_plugin_api::abi::{ABI_MINOR, ABI_VERSION};
use common::{bare, output_of_copy, root};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// An MCP `initialize`, one line as a stdio client sends it.
const INITIALIZE: &str = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"install-test\",\"version\":\"0\"}}}\n";

/// The plugins that ship with buildvise: the install must bring each, whatever `plugins/` holds.
const SHIPPED: [&str; 5] = ["cargo", "dotnet", "generic", "npm", "pytest"];

/// The crate in `plugins/` that is the library holding the others.
const LIBRARY: &str = "toolchains";

fn dylib(name: &str) -> String {
    format!("{}buildvise_plugin_{name}{}", std::env::consts::DLL_PREFIX, std::env::consts::DLL_SUFFIX)
}

/// The documented command, into `prefix`, from the release build `cargo build --release` makes
/// too (the shipped profile's LTO would add minutes and test nothing more).
fn xtask_install(prefix: &Path) -> Output {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    Command::new(cargo)
        .current_dir(root())
        .args(["xtask", "install", "--profile", "release", "--prefix"])
        .arg(prefix)
        .env("CARGO_TARGET_DIR", root().join("target"))
        .env_remove("CARGO_BUILD_TARGET_DIR")
        .stdin(Stdio::null())
        .output()
        .expect("cargo runs")
}

fn show(out: &Output) -> String {
    format!(
        "exit: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn run(cmd: &mut Command) -> (String, String) {
    let out = cmd.output().expect("buildvise runs");
    assert!(out.status.success(), "{cmd:?}\n{}", show(&out));
    (String::from_utf8(out.stdout).expect("UTF-8 stdout"), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn the_documented_install_puts_every_plugin_where_the_binary_finds_it() {
    let mut expected: Vec<String> = std::fs::read_dir(root().join("plugins"))
        .expect("read plugins/")
        .flatten()
        .filter(|e| e.path().join("Cargo.toml").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name != LIBRARY)
        .collect();
    expected.sort();
    for name in SHIPPED {
        assert!(expected.iter().any(|e| e == name), "plugins/{name} is gone: {expected:?}");
    }
    let scratch = tempfile::Builder::new().prefix("buildvise-install-").tempdir().expect("temp dir");
    let prefix = std::fs::canonicalize(scratch.path()).expect("canonical temp dir").join("prefix");

    // A library of an install from before the plugins shipped as one: it would claim cargo's tools.
    let libraries = prefix.join("lib/buildvise/plugins");
    std::fs::create_dir_all(&libraries).expect("create the plugin dir");
    let separate = libraries.join(dylib("cargo"));
    std::fs::write(&separate, b"an old plugin library").expect("plant an old library");

    let started = std::time::Instant::now();
    let out = xtask_install(&prefix);
    assert!(out.status.success(), "cargo xtask install failed:\n{}", show(&out));
    eprintln!("cargo xtask install took {:.0?}", started.elapsed());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let binary = prefix.join("bin/buildvise");
    assert!(!separate.exists() && stdout.contains(&format!("removed {}", separate.display())), "{stdout}");
    assert!(stdout.contains(&format!("  {}\n", binary.display())), "does not say where the binary went:\n{stdout}");
    let library = libraries.join(dylib(LIBRARY));
    assert!(stdout.contains(&format!("  {}\n", library.display())), "does not name the plugin library:\n{stdout}");
    assert!(
        stdout.contains(&format!("{} is not on PATH", prefix.join("bin").display())),
        "no hint that the prefix is not on PATH:\n{stdout}"
    );

    // The version names the commit built and its date, from the checkout the test runs in.
    let (version, _) = run(bare(&binary, scratch.path()).arg("--version"));
    let head = Command::new("git").current_dir(root()).args(["log", "-1", "--format=%h %cs", "--abbrev=12"]).output();
    let commit = match head {
        Ok(out) if out.status.success() => format!("commit {}", String::from_utf8_lossy(&out.stdout).trim()),
        _ => "commit unknown: not built from a git checkout".to_string(),
    };
    assert_eq!(
        version.trim_end(),
        format!("buildvise {} ({commit}, plugin ABI {ABI_VERSION}.{ABI_MINOR})", env!("CARGO_PKG_VERSION"))
    );

    let (text, stderr) = run(bare(&binary, scratch.path()).arg("list"));
    assert!(!text.contains("not loaded:") && stderr.is_empty(), "{text}\n{stderr}");
    let section = text.split_once("\nplugins:\n").unwrap_or_else(|| panic!("no plugins: section:\n{text}")).1;
    let (names, path) = section.trim().split_once("  ").unwrap_or_else(|| panic!("not `names  path`: {section:?}"));
    let mut names: Vec<String> = names.split(", ").map(str::to_string).collect();
    names.sort();
    assert_eq!((names, Path::new(path.trim_start())), (expected.clone(), library.as_path()), "{text}");
    let wanted: BTreeMap<&str, PathBuf> = expected.iter().map(|n| (n.as_str(), library.clone())).collect();
    for tool in ["cargo.build", "npm.test", "pytest.run", "dotnet.test"] {
        assert!(text.lines().any(|l| l.starts_with(&format!("{tool} "))), "{tool} is not listed:\n{text}");
    }

    let (json, _) = run(bare(&binary, scratch.path()).args(["list", "--json"]));
    let view: Value = serde_json::from_str(&json).expect("list --json is JSON");
    let plugins: BTreeMap<&str, PathBuf> = view["plugins"]
        .as_array()
        .unwrap_or_else(|| panic!("no plugins in list --json:\n{json}"))
        .iter()
        .map(|p| (p["name"].as_str().expect("name"), PathBuf::from(p["path"].as_str().expect("path"))))
        .collect();
    assert_eq!(plugins, wanted, "{json}");

    // Installing again while the installed binary runs replaces it rather than failing on it.
    let mut running = bare(&binary, scratch.path())
        .arg("serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("serve runs");
    // Up once it answers an initialize.
    let (mut input, output) = (running.stdin.take().expect("stdin"), running.stdout.take().expect("stdout"));
    input.write_all(INITIALIZE.as_bytes()).expect("initialize sent");
    let mut answer = String::new();
    std::io::BufReader::new(output).read_line(&mut answer).expect("serve answers");
    assert!(answer.contains("\"serverInfo\""), "serve did not answer its initialize: {answer}");
    assert!(running.try_wait().expect("serve's status").is_none(), "serve did not stay up to be replaced");
    let again = xtask_install(&prefix);
    let _ = running.kill();
    let _ = running.wait();
    assert!(again.status.success(), "installing over a running binary failed:\n{}", show(&again));
    run(bare(&binary, scratch.path()).arg("--version"));
}

#[test]
fn a_binary_without_plugins_says_where_it_looked_and_how_to_get_them() {
    let scratch = tempfile::Builder::new().prefix("buildvise-alone-").tempdir().expect("temp dir");
    let bin = std::fs::canonicalize(scratch.path()).expect("canonical temp dir").join("bin");
    std::fs::create_dir_all(&bin).expect("create bin dir");
    let binary = bin.join("buildvise");
    std::fs::copy(env!("CARGO_BIN_EXE_buildvise"), &binary).expect("copy the binary alone");

    // Nothing can run: `list` says why, and exits with 1 so that a set-up script notices.
    let out = output_of_copy(bare(&binary, scratch.path()).arg("list"));
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let text = String::from_utf8(out.stdout).expect("UTF-8 stdout");
    assert!(text.starts_with("no plugin loaded: "), "{text}");
    let searched = text.lines().find_map(|l| l.strip_prefix("searched: ")).unwrap_or_else(|| panic!("{text}"));
    assert!(searched.split(", ").any(|d| Path::new(d) == bin), "the binary's own dir is not named:\n{text}");
    assert!(searched.contains("lib/buildvise/plugins"), "{text}");
    assert!(
        text.contains("`cargo xtask install`")
            && text.contains("BUILDVISE_PLUGIN_PATH")
            && text.contains("--plugin-dir"),
        "does not say how to get plugins:\n{text}"
    );

    let out = output_of_copy(bare(&binary, scratch.path()).args(["list", "--json"]));
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let json = String::from_utf8(out.stdout).expect("UTF-8 stdout");
    let view: Value = serde_json::from_str(&json).expect("list --json is JSON");
    assert_eq!(view["plugins"], serde_json::json!([]), "{json}");
    assert!(view["searched"].as_array().is_some_and(|s| s.iter().any(|d| d == bin.to_str().unwrap())), "{json}");
}
