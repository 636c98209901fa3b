//! The host on Windows, here: the engine cross-compiled for `x86_64-pc-windows-gnu` with Debian's
//! mingw-w64 and its tests run under Debian's Wine, both unpacked under `target/test-env/debian/`
//! (nothing installed). Its unit tests, and `engine/tests/process_and_store.rs`, which runs a
//! small program through a run's Job Object: both streams, an exit code, a timeout that ends a
//! process tree, leftovers ended and named, the log stored and read back.
//!
//! Then the binary itself there: a plugin loaded as a DLL, a tool defined in a project's
//! `buildvise.toml` run by `exec` and its log read back, and `serve` over stdio running it.
//!
//! Skipped, loudly, without `apt-get` and `dpkg`, off x86_64 Linux, or without the Rust target.

mod common;

use common::{debian_packages, root, setup_step, skip};
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

const TARGET: &str = "x86_64-pc-windows-gnu";

/// The linker and what it needs, and Wine: 64-bit only, with the zlib its user32 loads.
const PACKAGES: &[&str] = &[
    "binutils-mingw-w64-x86-64",
    "gcc-mingw-w64-base",
    "gcc-mingw-w64-x86-64-win32",
    "mingw-w64-common",
    "mingw-w64-x86-64-dev",
    "libwine",
    "wine64",
    "libz-mingw-w64",
];

/// Rust's standard library draws randomness from `ProcessPrng` in `bcryptprimitives.dll`, which
/// Wine 8 (Debian 12's) lacks: this stands in for it, through the older `RtlGenRandom`.
const PROCESS_PRNG: &str = r#"#include <windows.h>
BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);
BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    while (length > 0) {
        ULONG part = length > 0x10000 ? 0x10000 : (ULONG)length;
        if (!SystemFunction036(data, part)) return FALSE;
        data += part;
        length -= part;
    }
    return TRUE;
}
"#;

/// The unpacked tools, and a Wine prefix made for the tests.
struct Windows {
    /// The unpacked packages' root.
    debian: PathBuf,
    gcc: PathBuf,
    wine: PathBuf,
    prefix: PathBuf,
}

impl Windows {
    /// The environment Wine runs in: its own prefix, no display, no dialogs, quiet.
    fn env(&self, cmd: &mut Command) {
        let path = std::env::join_paths(
            std::iter::once(self.debian.join("usr/bin"))
                .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
        )
        .expect("PATH");
        cmd.env("PATH", path)
            .env("WINEPREFIX", &self.prefix)
            .env("WINEDEBUG", "-all")
            .env("WINEDLLOVERRIDES", "mscoree=d;mshtml=d;winemenubuilder.exe=d")
            .env("WINEDLLPATH", self.debian.join("usr/x86_64-w64-mingw32/lib"))
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY");
    }
}

/// The tools and the prefix, made once for this test process: its tests run at once, and two
/// `wineboot`s making one prefix remove each other's server. None, after a skip, when this
/// machine cannot.
fn provision() -> Option<&'static Windows> {
    static WINDOWS: OnceLock<Result<Windows, String>> = OnceLock::new();
    match WINDOWS.get_or_init(prepare) {
        Ok(windows) => Some(windows),
        Err(why) => {
            skip(why);
            None
        }
    }
}

/// Unpacks the packages (once), points what Debian's installation would set up at the unpacked
/// files, and makes the prefix; or why this machine cannot.
fn prepare() -> Result<Windows, String> {
    if !cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        return Err("Debian's Wine and mingw-w64 are unpacked for x86_64 Linux only".to_string());
    }
    let sysroot = Command::new("rustc")
        .args(["--print", "target-libdir", "--target", TARGET])
        .output()
        .map_err(|e| format!("rustc cannot be run: {e}"))?;
    let libdir = PathBuf::from(String::from_utf8_lossy(&sysroot.stdout).trim());
    if !sysroot.status.success() || !libdir.is_dir() {
        return Err(format!("the Rust target {TARGET} is not installed: rustup target add {TARGET}"));
    }
    let Some(debian) = debian_packages("windows", PACKAGES) else {
        return Err("no apt-get and dpkg to fetch Debian's Wine and mingw-w64".to_string());
    };
    let gcc = debian.join("usr/bin/x86_64-w64-mingw32-gcc-win32");
    let wine = debian.join("usr/lib/wine/wine64");
    assert!(gcc.is_file() && wine.is_file(), "the packages unpacked into {} lack gcc or wine64", debian.display());
    // Debian's `wineserver` is a script that runs `/usr/lib/wine/wineserver64`, absent here; Wine
    // starts the one beside its loader.
    let server = debian.join("usr/lib/wine/wineserver");
    if !server.is_symlink() {
        std::fs::remove_file(&server).expect("remove Debian's wineserver script");
        #[cfg(unix)]
        std::os::unix::fs::symlink("wineserver64", &server).expect("link the wineserver");
    }
    let windows = Windows { prefix: root().join("target/test-env/wine-prefix"), debian, gcc, wine };
    let system32 = windows.prefix.join("drive_c/windows/system32");
    let prng = system32.join("bcryptprimitives.dll");
    // Wine's user32 needs zlib1.dll, which Debian's Wine finds at the path it was built with; the
    // unpacked one finds it in system32. Without it `cmd.exe`, which runs a batch file, cannot
    // start.
    let zlib = system32.join("zlib1.dll");
    if !prng.is_file() {
        let _ = std::fs::remove_dir_all(&windows.prefix);
        let mut boot = Command::new(&windows.wine);
        windows.env(boot.args(["wineboot", "--init"]).stdin(Stdio::null()));
        // Its status is not success without the 32-bit half of Wine (not unpacked: the tests are
        // 64-bit), so the prefix it made is what counts.
        let booted = boot.output().expect("wineboot starts");
        assert!(
            system32.is_dir(),
            "wineboot made no prefix in {}:\n{}",
            windows.prefix.display(),
            String::from_utf8_lossy(&booted.stderr)
        );
        let source = root().join("target/test-env/process_prng.c");
        std::fs::write(&source, PROCESS_PRNG).expect("write the ProcessPrng source");
        let mut gcc = Command::new(&windows.gcc);
        windows.env(gcc.args(["-shared", "-O2", "-o"]).arg(&prng).arg(&source).arg("-ladvapi32"));
        setup_step(&mut gcc);
    }
    if !zlib.is_file() {
        let unpacked = windows.debian.join("usr/x86_64-w64-mingw32/lib/zlib1.dll");
        std::fs::copy(&unpacked, &zlib).unwrap_or_else(|e| panic!("copy {}: {e}", unpacked.display()));
    }
    Ok(windows)
}

/// `cargo test -p buildvise-engine` for Windows, its test programs run by Wine.
fn cargo_test_under_wine(windows: &Windows, target_dir: &Path) -> std::process::Output {
    cargo_for_windows(windows, target_dir, &["test", "-p", "buildvise-engine"])
}

/// `cargo ARGS --target x86_64-pc-windows-gnu`, linked by mingw-w64, what it runs run by Wine.
fn cargo_for_windows(windows: &Windows, target_dir: &Path, args: &[&str]) -> std::process::Output {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(args)
        .args(["--target", TARGET])
        .current_dir(root())
        .env("CARGO_TARGET_DIR", target_dir)
        .env("CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER", &windows.gcc)
        .env("CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER", &windows.wine)
        // insta asks `cargo metadata` where the workspace is, which a test under Wine cannot run;
        // and a snapshot that differs fails without writing a `.snap.new` into the sources.
        .env("INSTA_WORKSPACE_ROOT", root())
        .env("INSTA_UPDATE", "no")
        .stdin(Stdio::null());
    windows.env(&mut cmd);
    cmd.output().expect("cargo runs")
}

#[test]
fn the_engine_s_tests_pass_on_windows_under_wine() {
    let Some(windows) = provision() else { return };
    let out = cargo_test_under_wine(windows, &root().join("target/windows"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the engine's tests under Wine failed ({}):\n{stdout}\n{stderr}", out.status);
    // The unit tests and the process-and-store test both ran, and something in each passed.
    let passed: Vec<&str> = stdout.lines().filter(|l| l.starts_with("test result: ok.")).collect();
    assert!(passed.len() >= 2, "the unit tests and process_and_store ran:\n{stdout}\n{stderr}");
    for name in [
        "both_streams_are_read_and_stored_and_the_exit_code_kept",
        "a_timeout_ends_the_whole_tree",
        "what_the_command_left_running_is_ended_and_named",
        "a_bare_name_is_found_on_the_commands_path_as_the_shell_finds_it",
    ] {
        assert!(stdout.contains(&format!("test {name} ... ok")), "{name} did not pass under Wine:\n{stdout}\n{stderr}");
    }
}

/// The binary built for Windows and run by Wine, with the shipped plugin DLL as its plugins, a
/// store of its own, and `cwd`.
fn buildvise(windows: &Windows, debug: &Path, state: &Path, cwd: &Path) -> Command {
    let mut cmd = Command::new(&windows.wine);
    cmd.arg(debug.join("buildvise.exe"))
        .current_dir(cwd)
        .env("BUILDVISE_HOME", state)
        .env("BUILDVISE_PLUGIN_PATH", debug.join("plugins"))
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_STATE_HOME")
        .stdin(Stdio::null());
    windows.env(&mut cmd);
    cmd
}

#[test]
fn the_binary_loads_a_plugin_dll_runs_a_tool_and_serves_over_stdio_under_wine() {
    let Some(windows) = provision() else { return };
    let target_dir = root().join("target/windows");
    for args in [
        &["build", "-p", "buildvise", "-p", "buildvise-plugin-toolchains"][..],
        &["build", "-p", "buildvise-engine", "--example", "run_child"][..],
    ] {
        let out = cargo_for_windows(windows, &target_dir, args);
        assert!(out.status.success(), "cargo {args:?} for Windows failed:\n{}", String::from_utf8_lossy(&out.stderr));
    }
    let debug = target_dir.join(TARGET).join("debug");
    // The plugin alone in a directory, as an install puts it.
    let plugins = debug.join("plugins");
    std::fs::create_dir_all(&plugins).expect("create the plugin dir");
    std::fs::copy(debug.join("buildvise_plugin_toolchains.dll"), plugins.join("buildvise_plugin_toolchains.dll"))
        .expect("copy the plugin");
    let sandbox = tempfile::tempdir().expect("a temporary dir");
    let (state, project) = (sandbox.path().join("state"), sandbox.path().join("project"));
    std::fs::create_dir_all(&project).expect("create the project");
    std::fs::copy(debug.join("examples/run_child.exe"), project.join("run_child.exe")).expect("copy run_child");
    std::fs::write(
        project.join("buildvise.toml"),
        "[tools.\"child.lines\"]\nrun = [\"./run_child.exe\", \"lines\"]\nformats = [\"gcc\"]\n",
    )
    .expect("write buildvise.toml");

    let formats = buildvise(windows, &debug, &state, &project).args(["list", "--formats"]).output().expect("list");
    let listed = String::from_utf8_lossy(&formats.stdout);
    assert!(
        formats.status.success() && listed.lines().any(|l| l.starts_with("gcc ")),
        "the plugin DLL loaded and its formats listed:\n{listed}\n{}",
        String::from_utf8_lossy(&formats.stderr)
    );

    let exec =
        buildvise(windows, &debug, &state, &project).args(["exec", "child.lines", "--json"]).output().expect("exec");
    let answer: Value = serde_json::from_slice(&exec.stdout).unwrap_or_else(|e| {
        panic!(
            "exec answered no JSON ({e}):\n{}\n{}",
            String::from_utf8_lossy(&exec.stdout),
            String::from_utf8_lossy(&exec.stderr)
        )
    });
    assert_eq!(exec.status.code(), Some(3), "the tool's exit code: {answer}");
    assert_eq!(answer["exitCode"], 3, "{answer}");
    let id = common::run_id(&answer);
    let log = buildvise(windows, &debug, &state, &project).args(["log", &id, "--raw"]).output().expect("log");
    let lines: Vec<String> = String::from_utf8_lossy(&log.stdout).lines().map(|l| l.trim_end().to_string()).collect();
    for line in ["out 1", "out 2", "err 1", "err 2"] {
        assert!(lines.iter().any(|l| l.ends_with(line)), "{line} in the stored log: {lines:?}");
    }

    // `serve` over stdio: a session, the tool listed, the same run over MCP, and the end of stdin
    // ends the server.
    let mut server = buildvise(windows, &debug, &state, &project)
        .arg("serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("serve starts");
    let mut stdin = server.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(server.stdout.take().expect("stdout"));
    let mut ask = |line: &str| -> Value {
        send(&mut stdin, line);
        let mut reply = String::new();
        stdout.read_line(&mut reply).expect("read from the server");
        serde_json::from_str(&reply).unwrap_or_else(|e| panic!("not JSON ({e}): {reply:?} after {line}"))
    };
    let init = ask(
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"wine","version":"0"}}}"#,
    );
    assert!(init["result"]["serverInfo"].is_object(), "{init}");
    // A notification has no answer: ask with the request after it.
    let tools = ask(concat!(
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#
    ));
    assert_eq!(tools["result"]["tools"][0]["name"], "build", "{tools}");
    let call = ask(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"build","arguments":{"action":"exec","tool":"child.lines"}}}"#,
    );
    let text = call["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(
        text.starts_with("FAIL exit 3") && text.contains("out 1") && text.contains("err 2"),
        "the run's answer: {call}"
    );
    drop(stdin);
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while server.try_wait().expect("try_wait").is_none() {
        assert!(std::time::Instant::now() < deadline, "serve did not end with its stdin");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn send(stdin: &mut std::process::ChildStdin, line: &str) {
    writeln!(stdin, "{line}").expect("write to the server");
    stdin.flush().expect("flush");
}
