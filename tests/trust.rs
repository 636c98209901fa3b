//! What a repository nobody vetted can and cannot do to buildvise. A project's `buildvise.toml`
//! may narrow what the operator allowed, never widen it, load code, or reach other projects' runs;
//! path arguments are bound by the allowed roots like the cwd is; and the store is private.

mod common;

use common::mcp::connect;
use common::{Sandbox, runs, test_plugins, toolchains};
use serde_json::json;
use std::path::Path;

fn dylib(stem: &str) -> String {
    format!("{}{stem}{}", std::env::consts::DLL_PREFIX, std::env::consts::DLL_SUFFIX)
}

/// A project directory under the sandbox's work dir with `buildvise.toml` holding `config`.
#[test]
fn a_project_config_cannot_load_plugins() {
    let sb = Sandbox::new(&[toolchains()]);
    let dir = sb.project_with_config("evil", "plugin_dirs = [\"plugins\"]\n");
    std::fs::create_dir_all(dir.join("plugins")).expect("plugins dir");
    std::fs::copy(
        test_plugins().join(dylib("buildvise_plugin_abinext")),
        dir.join("plugins").join(dylib("buildvise_plugin_abinext")),
    )
    .expect("copy a plugin into the project");

    for cwd in [&dir, &dir.join("plugins")] {
        let list = sb.command(["list"]).current_dir(cwd).output().expect("list runs");
        let text = String::from_utf8_lossy(&list.stdout);
        assert!(!text.contains("next.sh"), "the project's plugin was loaded:\n{text}");
    }
    let exec = sb.run(["exec", "next.sh", "--cwd", dir.to_str().unwrap()]);
    exec.expect_code(125);
    assert!(exec.stderr.contains("`plugin_dirs`: only the operator may set this"), "{exec}");
    assert!(runs(&sb).is_empty(), "{exec}");
}

#[test]
fn a_project_config_cannot_consent_or_widen_what_the_operator_allowed() {
    let sb = Sandbox::new(&[test_plugins()]);
    sb.user_config("max_timeout_secs = 1\ndisable = [\"panicky.feed\"]\nread_only = true\n");

    let consent = sb.project_with_config("consent", "allow_mutating = true\n");
    let exec = sb.run(["exec", "panicky.mutate", "--cwd", consent.to_str().unwrap(), "--", "touch mutated"]);
    exec.expect_code(125);
    assert!(exec.stderr.contains("`allow_mutating`: only the operator may set this"), "{exec}");
    assert!(!consent.join("mutated").exists());

    let widen = sb.project_with_config("widen", "read_only = false\ndisable = []\nmax_timeout_secs = 100\n");
    let cwd = widen.to_str().unwrap();
    let hidden = sb.run(["exec", "panicky.mutate", "--confirm", "--cwd", cwd, "--", "touch mutated"]);
    hidden.expect_code(125);
    assert!(hidden.stderr.contains("unknown tool \"panicky.mutate\""), "read-only was lifted:{hidden}");
    assert!(!widen.join("mutated").exists());
    let disabled = sb.run(["exec", "panicky.feed", "--cwd", cwd]);
    assert!(disabled.stderr.contains("unknown tool \"panicky.feed\""), "a disabled tool came back:{disabled}");
    let capped = sb.run(["exec", "panicky.sh", "--timeout", "50", "--cwd", cwd, "--", "sleep 30"]);
    capped.expect_code(124);
    assert!(capped.text().starts_with("TIMEOUT after 1s · "), "the timeout cap was raised:{capped}");
}

#[test]
fn a_tool_with_a_read_only_flag_needs_no_consent_with_it_and_survives_read_only() {
    let sb = Sandbox::new(&[test_plugins()]);
    let dir = sb.project_with_config("tidy", "");
    let cwd = dir.to_str().unwrap();
    let unconsented = sb.run(["exec", "panicky.tidy", "--cwd", cwd, "--", "touch tidied"]);
    unconsented.expect_code(125);
    assert!(unconsented.stderr.contains("call again with confirm: true"), "{unconsented}");
    assert!(!dir.join("tidied").exists());
    sb.run(["exec", "panicky.tidy", "--cwd", cwd, "--", "--check", "touch checked"]).expect_code(0);
    assert!(dir.join("checked").exists(), "--check needed consent");

    sb.user_config("read_only = true\n");
    let list = sb.run(["list"]).text();
    assert!(list.contains("[changes workspace unless --check: needs confirm]"), "{list}");
    assert!(!list.contains("panicky.mutate"), "{list}");
    let refused = sb.run(["exec", "panicky.tidy", "--confirm", "--cwd", cwd, "--", "touch tidied"]);
    refused.expect_code(125);
    assert!(
        refused.stderr.contains("this server is read-only, so nothing ran; add --check to only check"),
        "{refused}"
    );
    assert!(!dir.join("tidied").exists());
    sb.run(["exec", "panicky.tidy", "--cwd", cwd, "--", "--check", "touch rechecked"]).expect_code(0);
    assert!(dir.join("rechecked").exists(), "read-only refused a call that only looks");
}

/// Arguments cannot make a call that looks, or only builds, write or run a command of the
/// caller's: cargo fmt's `--check` where rustfmt does not read it, dotnet properties holding a
/// command line, targets of the caller's choosing.
#[test]
fn arguments_cannot_turn_a_looking_call_into_a_writing_one() {
    let sb = Sandbox::new(&[toolchains()]);
    let krate = sb.cargo_fixture("misformatted");
    let cwd = krate.to_str().unwrap();
    let source = |krate: &Path| std::fs::read(krate.join("src/lib.rs")).expect("the crate's source");
    let before = source(&krate);
    sb.user_config("read_only = true\n");
    for args in [&["--", "--", "--check"][..], &["--check", "--", "--"], &["--", "--config-path", "--check"]] {
        let fmt = sb.run(["exec", "cargo.fmt", "--cwd", cwd, "--"].into_iter().chain(args.iter().copied()));
        fmt.expect_code(125);
        assert!(fmt.stderr.contains("right after the verb"), "{args:?}: {fmt}");
    }
    assert_eq!(source(&krate), before, "the sources were formatted on a read-only server");
    let writes = [
        &["-p:PreBuildEvent=touch pwned"][..],
        &["/p:Configuration=Release;PostBuildEvent=touch pwned"],
        &["-p", "RunCommand=sh"],
        &["-t:Exec"],
    ];
    for args in writes {
        let build =
            sb.run(["exec", "dotnet.build", "--confirm", "--cwd", cwd, "--"].into_iter().chain(args.iter().copied()));
        build.expect_code(125);
        assert!(build.stderr.contains("this server is read-only, so nothing ran"), "{args:?}: {build}");
    }
    sb.user_config("");
    for args in writes {
        let build = sb.run(["exec", "dotnet.build", "--cwd", cwd, "--"].into_iter().chain(args.iter().copied()));
        build.expect_code(125);
        assert!(build.stderr.contains("call again with confirm: true"), "{args:?}: {build}");
    }
    assert!(!krate.join("pwned").exists());
    assert!(runs(&sb).is_empty(), "a refused call stored a run");
}

#[test]
fn a_projects_retention_prunes_its_own_runs_only() {
    let sb = Sandbox::new(&[test_plugins()]);
    let other = sb.work().join("other");
    std::fs::create_dir_all(&other).expect("dir");
    for n in 0..3 {
        sb.run(["exec", "panicky.sh", "--cwd", other.to_str().unwrap(), "--", &format!("echo other {n}")])
            .expect_code(0);
    }
    let greedy = sb.project_with_config("greedy", "[retention]\nmax_runs = 1\nmax_age_days = 0\nmax_mb = 0\n");
    for n in 0..3 {
        sb.run(["exec", "panicky.sh", "--cwd", greedy.to_str().unwrap(), "--", &format!("echo greedy {n}")])
            .expect_code(0);
    }
    let listed = runs(&sb);
    let in_dir = |dir: &Path| listed.iter().filter(|r| r["cwd"] == dir.to_str().unwrap()).count();
    assert_eq!(in_dir(&other), 3, "another project's runs were pruned: {listed:#?}");
    assert_eq!(in_dir(&greedy), 1, "the project's own policy was not applied: {listed:#?}");
}

#[tokio::test]
async fn path_arguments_outside_the_roots_are_refused() {
    let sb = Sandbox::new(&[toolchains()]);
    let inside = sb.cargo_fixture("broken");
    std::fs::write(inside.join("package.json"), r#"{"scripts": {"build": "tsc"}}"#).expect("package.json");
    let outside = tempfile::tempdir().expect("a directory outside the root");
    let elsewhere = outside.path().display().to_string();
    let session = connect(&sb, &["--root", inside.to_str().unwrap()]).await;
    let cases = [
        ("cargo.build", vec!["--manifest-path".to_string(), format!("{elsewhere}/Cargo.toml")]),
        ("cargo.build", vec![format!("--target-dir={elsewhere}")]),
        ("cargo.build", vec![format!("+{elsewhere}")]),
        ("pytest.run", vec![format!("--rootdir={elsewhere}")]),
        ("pytest.run", vec![format!("--basetemp={elsewhere}")]),
        ("npm.build", vec![format!("--prefix={elsewhere}"), "--".into()]),
        ("dotnet.build", vec![format!("{elsewhere}/App.sln")]),
    ];
    for (tool, args) in cases {
        let message = session.refused(json!({"action": "exec", "tool": tool, "args": args})).await;
        assert!(message.starts_with(&format!("{tool}: ")), "{tool} {args:?}: {message}");
        assert!(message.contains(&elsewhere) || message.contains("not allowed"), "{tool} {args:?}: {message}");
    }
    assert!(runs(&sb).is_empty(), "a refused call stored a run");
    assert_eq!(std::fs::read_dir(outside.path()).expect("outside dir").count(), 0, "something was written outside");
    session.close().await;
}

#[test]
#[cfg(unix)] // modes: Windows keeps the store private by its profile's access list
fn the_store_and_its_runs_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new(&[test_plugins()]);
    let exec = sb.run(["exec", "panicky.sh", "--json", "--", "echo secret"]);
    exec.expect_code(0);
    let id = common::run_id(&exec.json());
    let mode = |p: &Path| std::fs::metadata(p).expect("metadata").permissions().mode() & 0o777;
    let runs_dir = sb.state().join("runs");
    assert_eq!(mode(&runs_dir), 0o700);
    let run_dir = runs_dir.join(&id);
    assert_eq!(mode(&run_dir), 0o700);
    for entry in std::fs::read_dir(&run_dir).expect("run dir") {
        let path = entry.expect("entry").path();
        let expected = if path.is_dir() { 0o700 } else { 0o600 };
        assert_eq!(mode(&path), expected, "{}", path.display());
    }
}
