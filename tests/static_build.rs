//! The static Linux build: `buildvise` for `x86_64-unknown-linux-musl` with the five plugins
//! linked in (`--features linked-plugins`), which `cargo xtask dist --target
//! x86_64-unknown-linux-musl` packages. It needs no C library and no plugin library at run time,
//! so it runs on a Linux of any glibc, or none.
//!
//! Provisions the Rust target with rustup; skipped, loudly, without rustup or off x86_64 Linux.

mod common;

use common::{bare, root, skip};
use std::path::PathBuf;
use std::process::{Command, Stdio};

const TARGET: &str = "x86_64-unknown-linux-musl";

/// The musl target's standard library, added with rustup when it is missing; None after a skip.
fn provision() -> Option<()> {
    if !cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        skip("the static build is made for x86_64 Linux only");
        return None;
    }
    let installed = Command::new("rustup").args(["target", "list", "--installed"]).output();
    match installed {
        Ok(out) if String::from_utf8_lossy(&out.stdout).lines().any(|l| l.trim() == TARGET) => Some(()),
        Ok(_) => {
            common::setup_step(Command::new("rustup").args(["target", "add", TARGET]));
            Some(())
        }
        Err(_) => {
            skip(&format!("no rustup to add the Rust target {TARGET}"));
            None
        }
    }
}

/// Builds the static binary into `target/`, as the packages' build does but unoptimised.
fn static_binary() -> PathBuf {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let target_dir = root().join("target");
    let out = Command::new(cargo)
        .current_dir(root())
        .args(["build", "-p", "buildvise", "--features", "linked-plugins", "--target", TARGET, "--target-dir"])
        .arg(&target_dir)
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET_DIR")
        .stdin(Stdio::null())
        .output()
        .expect("cargo runs");
    assert!(out.status.success(), "the static build failed:\n{}", String::from_utf8_lossy(&out.stderr));
    target_dir.join(TARGET).join("debug/buildvise")
}

/// Whether the ELF file names a program interpreter (`PT_INTERP`): a dynamically linked
/// executable does, the dynamic loader; a static one does not.
fn has_interpreter(elf: &[u8]) -> bool {
    assert!(elf.starts_with(b"\x7fELF\x02\x01"), "not a 64-bit little-endian ELF file");
    let u16_at = |at: usize| u16::from_le_bytes([elf[at], elf[at + 1]]) as usize;
    let phoff = u64::from_le_bytes(elf[0x20..0x28].try_into().expect("8 bytes")) as usize;
    let (size, count) = (u16_at(0x36), u16_at(0x38));
    (0..count).any(|i| {
        let at = phoff + i * size;
        u32::from_le_bytes(elf[at..at + 4].try_into().expect("4 bytes")) == 3
    })
}

#[test]
fn the_static_binary_needs_no_library_and_runs_every_plugin_linked_in() {
    if provision().is_none() {
        return;
    }
    let binary = static_binary();
    let elf = std::fs::read(&binary).expect("read the static binary");
    assert!(!has_interpreter(&elf), "{} is linked dynamically", binary.display());
    let own = std::fs::read(std::env::current_exe().expect("own path")).expect("read this test");
    assert!(has_interpreter(&own), "the check tells a dynamic executable from a static one");

    let scratch = tempfile::tempdir().expect("a temporary dir");
    let list = bare(&binary, scratch.path()).arg("list").output().expect("list runs");
    let text = String::from_utf8_lossy(&list.stdout);
    assert!(list.status.success(), "{text}\n{}", String::from_utf8_lossy(&list.stderr));
    // The generic plugin's tools need their programs on PATH, which is empty: it is named below.
    for tool in ["cargo.build", "npm.test", "pytest.run", "dotnet.test"] {
        assert!(text.lines().any(|l| l.starts_with(&format!("{tool} "))), "{tool} is not listed:\n{text}");
    }
    let plugins = text.split_once("\nplugins:\n").map(|(_, p)| p.trim()).unwrap_or_default();
    assert!(
        plugins.starts_with("cargo, npm, pytest, dotnet, generic  ") && plugins.ends_with(&*binary.to_string_lossy()),
        "the plugins are the binary's own:\n{text}"
    );

    // A linked plugin parses as a loaded one does: a saved cargo log's error, at its place.
    let log = root().join("tests/fixtures/corpus/cargo/test-mixed-failures/combined.log");
    let parse = bare(&binary, scratch.path())
        .args(["parse", "cargo.test", "--log"])
        .arg(&log)
        .args(["--cwd", "/home/dev/src/project", "--json"])
        .output()
        .expect("parse runs");
    let answer: serde_json::Value = serde_json::from_slice(&parse.stdout)
        .unwrap_or_else(|e| panic!("parse answered no JSON ({e}): {}", String::from_utf8_lossy(&parse.stderr)));
    assert!(answer["summary"]["failed"].as_u64().is_some_and(|n| n > 0), "{answer}");
}
