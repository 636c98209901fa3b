//! The plugin contract across versions, with the real binary: a plugin built against ABI 1.0
//! (before optional slots and the header static existed), one built against 1.1 (before formats)
//! and one from a later minor version of ABI 1 (slots and words this host does not know) all load
//! and work; and a plugin cannot be
//! built in a way that would let its panics take the host down.

mod common;

use common::{Sandbox, root, test_plugins};
use std::process::{Command, Stdio};

fn sandbox() -> Sandbox {
    Sandbox::new(&[test_plugins()])
}

const SCRIPT: &str = "echo 'error: first'; echo plain; echo 'error: second' >&2; exit 1";

#[test]
fn a_plugin_built_against_abi_1_0_loads_and_works() {
    let sb = sandbox();
    let list = sb.run(["list"]);
    list.expect_code(0);
    assert!(list.text().lines().any(|l| l.starts_with("old.sh ")), "{list}");
    assert!(
        !list.text().lines().any(|l| l.starts_with("not loaded: ") && l.contains("abi10")),
        "the 1.0 plugin was refused:{list}"
    );

    let exec = sb.run(["exec", "old.sh", "--json", "--", SCRIPT]);
    exec.expect_code(1);
    let answer = exec.json();
    let messages: Vec<&str> =
        answer["diagnostics"].as_array().expect("diagnostics").iter().filter_map(|d| d["message"].as_str()).collect();
    assert_eq!(messages, ["first", "second"], "{exec}");
    assert_eq!(answer["diagnostics"][1]["logRange"]["start"], 3, "{exec}");
}

#[test]
fn a_plugin_built_against_abi_1_1_before_formats_loads_and_works() {
    let sb = sandbox();
    let exec = sb.run(["exec", "eleven.sh", "--json", "--", SCRIPT]);
    exec.expect_code(1);
    let answer = exec.json();
    let messages: Vec<&str> =
        answer["diagnostics"].as_array().expect("diagnostics").iter().filter_map(|d| d["message"].as_str()).collect();
    assert_eq!(messages, ["first", "second"], "{exec}");
    let list = sb.run(["list"]).text();
    let refused = list.lines().any(|l| l.starts_with("not loaded: ") && l.contains("abi11"));
    assert!(!refused && !list.contains("not usable"), "the 1.1 plugin was refused:{list}");
}

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
