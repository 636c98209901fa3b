//! The plugin contract across versions, with the real binary: a plugin from a later minor version
//! of ABI 1 (slots and words this host does not know) loads and works, one of a later major is
//! refused naming both versions (`robustness::broken_libraries_are_skipped_and_listed_with_the_reason`),
//! and a plugin cannot be built in a way that would let its panics take the host down.

mod common;

use common::{Sandbox, root, test_plugins};
use std::process::{Command, Stdio};

fn sandbox() -> Sandbox {
    Sandbox::new(&[test_plugins()])
}

const SCRIPT: &str = "echo 'error: first'; echo plain; echo 'error: second' >&2; exit 1";

#[test]
fn a_plugin_from_a_later_minor_version_loads_and_its_new_words_are_kept() {
    let sb = sandbox();
    let exec = sb.run(["exec", "next.sh", "--json", "--detail", "full", "--", SCRIPT]);
    exec.expect_code(1);
    let answer = exec.json();
    let diagnostics = answer["diagnostics"].as_array().expect("diagnostics");
    // The two errors and the `hint`, read as info: nothing dropped because of one unknown word.
    assert_eq!(diagnostics.len(), 3, "{exec}");
    assert_eq!(diagnostics[0]["message"], "first");
    assert_eq!(diagnostics[2]["severity"], "info", "{exec}");
    assert_eq!(diagnostics[2]["message"], "a word from the future", "{exec}");
    assert_eq!((answer["errors"].as_u64(), answer["warnings"].as_u64()), (Some(2), Some(0)), "{exec}");

    let text = sb.run(["exec", "next.sh", "--detail", "full", "--", SCRIPT]);
    assert!(text.text().contains("\ninfo src/a.rs a word from the future"), "{text}");
    let list = sb.run(["list"]).text();
    assert!(!list.lines().any(|l| l.starts_with("not loaded: ") && l.contains("abinext")), "{list}");
}

#[test]
fn export_plugin_refuses_to_build_with_panic_abort() {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = root().join("tests/plugins/Cargo.toml");
    let out = Command::new(cargo)
        .current_dir(root())
        .args(["build", "--quiet", "-p", "buildvise-plugin-abortive", "--manifest-path"])
        .arg(&manifest)
        .args(["--config", "profile.dev.panic=\"abort\"", "--target-dir"])
        .arg(root().join("target/test-plugins-abort"))
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET_DIR")
        .stdin(Stdio::null())
        .output()
        .expect("cargo runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a plugin built with panic = \"abort\":\n{stderr}");
    assert!(stderr.contains("buildvise plugins must be built with panic = \"unwind\""), "{stderr}");
}
