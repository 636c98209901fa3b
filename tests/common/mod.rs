//! Shared helpers for the end-to-end tests: the real `buildvise` binary run as a separate process
//! in a sandbox of its own (state dir, config dir, data dir, scratch dir), and the plugin
//! libraries it needs, built once per test process.
//!
//! The workspace's plugins are built into its `target/`, beside what the running `cargo test`
//! built (cargo lets go of it before it runs the tests), so that dependencies built once serve
//! both. The test-only plugins of `tests/plugins/` go to `target/test-plugins`: beside the binary
//! in `target/debug`, every test's buildvise would load them.

// Each test binary uses a different subset of these helpers.
#![allow(dead_code)]

pub mod cases;
pub mod http;
pub mod managers;
pub mod mcp;

use serde_json::Value;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `cargo build` for plugin libraries into `target` (under the repository root); panics with
/// cargo's output when the build fails.
fn cargo_build(target: &str, args: &[&str]) -> PathBuf {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let target = root().join(target);
    let out = Command::new(cargo)
        .current_dir(root())
        .args(["build", "--quiet"])
        .args(args)
        .arg("--target-dir")
        .arg(&target)
        // The outer `cargo test` may have set these for itself; this build has its own.
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET_DIR")
        .stdin(Stdio::null())
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "building plugins ({}) failed:\n{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    target.join("debug")
}

/// The directory holding the test-only plugins of `tests/plugins/`: `panicky`, the broken
/// libraries `badabi` (a later major), `noentry`, `shorttable`, and the hand-made `abinext` (a
/// plugin from a later minor version).
pub fn test_plugins() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let manifest = root().join("tests/plugins/Cargo.toml");
        let manifest = manifest.to_str().expect("UTF-8 path");
        let dir = cargo_build("target/test-plugins", &["--manifest-path", manifest]);
        // Only the libraries of this workspace: the cargo plugin may sit in the same directory.
        let only = dir.join("only");
        std::fs::create_dir_all(&only).expect("create plugin dir");
        for name in ["panicky", "badabi", "noentry", "shorttable", "abinext"] {
            install(&dir, &only, &dylib(&format!("buildvise_plugin_{name}")));
        }
        only
    })
}

/// Copies library `file` from `from` to `to`, replacing any older copy by rename: a process of
/// an earlier test run may still have the old one mapped.
fn install(from: &Path, to: &Path, file: &str) {
    let tmp = to.join(format!(".{file}.{}", std::process::id()));
    std::fs::copy(from.join(file), &tmp).unwrap_or_else(|e| panic!("copy {file}: {e}"));
    std::fs::rename(&tmp, to.join(file)).unwrap_or_else(|e| panic!("install {file}: {e}"));
}

fn dylib(stem: &str) -> String {
    format!("{}{stem}{}", std::env::consts::DLL_PREFIX, std::env::consts::DLL_SUFFIX)
}

/// A private world for the binary: its own store, config, data dir and scratch dir, removed when
/// dropped.
pub struct Sandbox {
    dir: tempfile::TempDir,
    plugin_dirs: Vec<PathBuf>,
}

impl Sandbox {
    pub fn new(plugin_dirs: &[&Path]) -> Self {
        let dir = tempfile::Builder::new().prefix("buildvise-e2e-").tempdir().expect("temp dir");
        for sub in ["state", "config", "data", "projects"] {
            std::fs::create_dir(dir.path().join(sub)).expect("create sandbox dir");
        }
        Sandbox { dir, plugin_dirs: plugin_dirs.iter().map(|d| d.to_path_buf()).collect() }
    }

    /// `$BUILDVISE_HOME`.
    pub fn state(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    /// `$XDG_CONFIG_HOME`: `buildvise/config.toml` in here is the user config.
    pub fn config(&self) -> PathBuf {
        self.dir.path().join("config")
    }

    /// A scratch directory, the binary's cwd unless a test says otherwise (canonical, as the
    /// host records cwds).
    pub fn work(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path().join("projects")).expect("canonical work dir")
    }

    /// A project directory `NAME` under the work dir whose `buildvise.toml` holds `config`.
    pub fn project_with_config(&self, name: &str, config: &str) -> PathBuf {
        let dir = self.work().join(name);
        std::fs::create_dir_all(&dir).expect("project dir");
        std::fs::write(dir.join("buildvise.toml"), config).expect("write buildvise.toml");
        dir
    }

    /// Writes the user config (`$XDG_CONFIG_HOME/buildvise/config.toml`).
    pub fn user_config(&self, config: &str) {
        std::fs::create_dir_all(self.config().join("buildvise")).expect("config dir");
        std::fs::write(self.config().join("buildvise/config.toml"), config).expect("write config.toml");
    }

    /// A fresh copy of `tests/fixtures/cargo/NAME` (without any `target/`) under the work dir.
    pub fn cargo_fixture(&self, name: &str) -> PathBuf {
        let dest = self.work().join(name);
        copy_tree(&root().join("tests/fixtures/cargo").join(name), &dest);
        dest
    }

    /// The binary with `args`, cwd the work dir, plugins from this sandbox's dirs only.
    pub fn command<I, S>(&self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_buildvise"));
        for dir in &self.plugin_dirs {
            cmd.arg("--plugin-dir").arg(dir);
        }
        cmd.args(args)
            .current_dir(self.work())
            .env("BUILDVISE_HOME", self.state())
            .env("XDG_CONFIG_HOME", self.config())
            .env("XDG_DATA_HOME", self.dir.path().join("data"))
            .env_remove("BUILDVISE_PLUGIN_PATH")
            .env_remove("BUILDVISE_DISABLE")
            // Panics read the same whatever the machine sets: a backtrace adds `via` to messages.
            .env_remove("RUST_BACKTRACE")
            // Cargo runs under the binary build into the sandbox, never into the repository.
            .env("CARGO_TARGET_DIR", self.dir.path().join("cargo-target"))
            .env_remove("CARGO_BUILD_TARGET_DIR")
            // npm, whatever runs it, keeps its cache and logs under target/, not in the home directory.
            .env("npm_config_cache", npm_cache())
            .stdin(Stdio::null());
        cmd
    }

    /// Runs the binary to its end.
    pub fn run<I, S>(&self, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = self.command(args);
        let shown = format!("{cmd:?}");
        let out = cmd.output().expect("buildvise runs");
        Run::new(shown, out)
    }
}

/// What one run of the binary did.
pub struct Run {
    pub command: String,
    pub code: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

impl Run {
    fn new(command: String, out: Output) -> Self {
        Run {
            command,
            code: out.status.code(),
            stdout: out.stdout,
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    pub fn text(&self) -> String {
        String::from_utf8(self.stdout.clone()).unwrap_or_else(|_| panic!("stdout not UTF-8: {self}"))
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {self}"))
    }

    /// Panics, showing everything, unless the exit code is `code`.
    pub fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(self.code, Some(code), "unexpected exit code: {self}");
        self
    }
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let stdout = String::from_utf8_lossy(&self.stdout);
        let stdout: String = stdout.chars().take(8000).collect();
        write!(
            f,
            "\n$ {}\nexit: {:?}\n--- stdout ---\n{stdout}\n--- stderr ---\n{}",
            self.command, self.code, self.stderr
        )
    }
}

/// The run id an `exec --json` answer carries.
pub fn run_id(answer: &Value) -> String {
    answer["runId"].as_str().unwrap_or_else(|| panic!("no runId in {answer:#}")).to_string()
}

/// Copies a directory tree, leaving out `target/` (a fixture may have been built in place).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create dir");
    for entry in std::fs::read_dir(from).unwrap_or_else(|e| panic!("{}: {e}", from.display())) {
        let entry = entry.expect("dir entry");
        let path = entry.path();
        if entry.file_name() == "target" {
            continue;
        }
        if entry.file_type().expect("file type").is_dir() {
            copy_tree(&path, &to.join(entry.file_name()));
        } else {
            std::fs::copy(&path, to.join(entry.file_name())).expect("copy file");
        }
    }
}

/// The directory holding the plugin library buildvise ships (`plugins/toolchains`: the cargo,
/// npm, pytest, dotnet and generic plugins) alone, built once per test process.
pub fn toolchains() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = cargo_build("target", &["-p", "buildvise-plugin-toolchains"]);
        let only = dir.join("toolchains-only");
        std::fs::create_dir_all(&only).expect("create plugin dir");
        install(&dir, &only, &dylib("buildvise_plugin_toolchains"));
        only
    })
}

/// `binary` in an empty environment: a home and a PATH of empty directories of `scratch`,
/// nothing else (no `BUILDVISE_PLUGIN_PATH`, no XDG directories), for a binary that must find
/// its plugins by itself.
pub fn bare(binary: &Path, scratch: &Path) -> Command {
    let (home, path) = (scratch.join("home"), scratch.join("empty-path"));
    for dir in [&home, &path] {
        std::fs::create_dir_all(dir).expect("create scratch dir");
    }
    let mut cmd = Command::new(binary);
    cmd.env_clear().env("HOME", &home).env("PATH", &path).current_dir(&home).stdin(Stdio::null());
    cmd
}

/// Runs `cmd`, whose program this test process copied, to its end. While another test's thread
/// forks a child, the child holds for an instant every descriptor open here, the copy's write end
/// among them, and the kernel will not run a file open for writing (ETXTBSY): that is waited out.
pub fn output_of_copy(cmd: &mut Command) -> Output {
    for _ in 0..250 {
        match cmd.output() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => return other.expect("the copied binary runs"),
        }
    }
    panic!("{cmd:?} stayed busy for 5 s: some process keeps the copy open for writing");
}

/// Runs a command made by [`Sandbox::command`] and then adjusted (its environment, say) to its
/// end.
pub fn run_command(cmd: &mut Command) -> Run {
    let shown = format!("{cmd:?}");
    let out = cmd.output().expect("buildvise runs");
    Run::new(shown, out)
}

/// Where [`skip`] records each skip, one `BINARY::TEST: WHY` line: `.ci/run` empties it before
/// the tests and prints it after them.
const SKIPS_FILE: &str = "target/test-skips.txt";

/// Skips the running test because `why` (what is missing, and what needs it); the caller returns
/// after it. cargo shows nothing a passing test prints, so the skip is also appended to
/// [`SKIPS_FILE`] for CI to list. With `BUILDVISE_REQUIRE_ALL=1`, for a machine meant to run every
/// test, it fails the test instead.
pub fn skip(why: &str) {
    // libtest runs each test on a thread named after it, so the name cannot drift from the test's.
    let test = format!("{}::{}", env!("CARGO_CRATE_NAME"), std::thread::current().name().unwrap_or("?"));
    if std::env::var("BUILDVISE_REQUIRE_ALL").is_ok_and(|v| !v.is_empty() && v != "0") {
        panic!(
            "{test} cannot run: {why}. BUILDVISE_REQUIRE_ALL is set, so a skip fails: install what the \
             test needs, or unset BUILDVISE_REQUIRE_ALL to let it skip"
        );
    }
    eprintln!("SKIPPED {test}: {why}");
    let path = root().join(SKIPS_FILE);
    std::fs::create_dir_all(root().join("target")).expect("create target/");
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("recording a skip in {}: {e}", path.display()));
    // Tests of several processes and threads skip at once: whole lines, one writer at a time.
    file.lock().unwrap_or_else(|e| panic!("locking {}: {e}", path.display()));
    std::io::Write::write_all(&mut file, format!("{test}: {why}\n").as_bytes())
        .unwrap_or_else(|e| panic!("recording a skip in {}: {e}", path.display()));
}

/// The npm cache of every npm the tests run, directly or through the binary.
pub fn npm_cache() -> PathBuf {
    root().join("target/test-env/npm-cache")
}

/// The pytest the tests install (`target/test-env/pytest-venv`): the version the corpus was
/// captured with, so that what pytest prints does not drift under the tests.
pub const PYTEST_REQUIREMENT: &str = "pytest==9.2.0";

/// A virtual environment `target/test-env/NAME` with `requirement` pip-installed, made on first
/// use and reused by later runs; None when there is no python3 (callers then [`skip`]). Several
/// test processes may ask at once: one builds the venv under a file lock while the others wait.
/// A failed download panics: only a missing base toolchain is a reason to skip.
pub fn python_venv(name: &str, requirement: &str) -> Option<PathBuf> {
    let found = Command::new("python3").arg("--version").stdin(Stdio::null()).output();
    if !found.is_ok_and(|out| out.status.success()) {
        return None;
    }
    let env_dir = root().join("target/test-env");
    std::fs::create_dir_all(&env_dir).expect("create target/test-env");
    let lock = std::fs::File::create(env_dir.join(format!("{name}.lock"))).expect("create venv lock file");
    lock.lock().expect("lock the venv");
    let venv = env_dir.join(name);
    let stamp = venv.join(".buildvise-ready");
    if std::fs::read_to_string(&stamp).ok().as_deref() != Some(requirement) {
        match std::fs::remove_dir_all(&venv) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => panic!("removing a stale {}: {e}", venv.display()),
        }
        setup_step(Command::new("python3").arg("-m").arg("venv").arg(&venv));
        setup_step(
            Command::new(venv.join("bin/python"))
                .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"])
                .arg(requirement)
                // pip's download cache stays under target/, not in the home directory.
                .env("PIP_CACHE_DIR", env_dir.join("pip-cache")),
        );
        std::fs::write(&stamp, requirement).expect("mark the venv ready");
    }
    Some(venv)
}

/// `program` from Debian's `package`, unpacked (not installed) under
/// `target/test-env/debian/PACKAGE` on first use and reused after; None when this machine has no
/// `apt-get` and `dpkg` (callers then [`skip`]). The package's libraries must already be on the
/// machine: only its own files are unpacked. A failed download panics, as in [`python_venv`].
pub fn debian_program(package: &str, program: &str) -> Option<PathBuf> {
    let root = debian_packages(package, &[package])?;
    let found = root.join("usr/bin").join(program);
    assert!(found.is_file(), "{package} has no usr/bin/{program}");
    Some(found)
}

/// Debian's `packages`, unpacked (not installed) together into `target/test-env/debian/NAME/root`
/// on first use and reused after (a `.ready` file lists what was unpacked); the root, or None when
/// this machine has no `apt-get` and `dpkg`. Only the packages' own files: what they depend on and
/// is not listed must already be on the machine. A failed download panics.
pub fn debian_packages(name: &str, packages: &[&str]) -> Option<PathBuf> {
    let has = |tool: &str| {
        Command::new(tool).arg("--version").stdin(Stdio::null()).output().is_ok_and(|out| out.status.success())
    };
    if !has("apt-get") || !has("dpkg") {
        return None;
    }
    let dir = root().join("target/test-env/debian").join(name);
    std::fs::create_dir_all(&dir).expect("create target/test-env/debian");
    let lock = std::fs::File::create(dir.with_extension("lock")).expect("create the packages' lock file");
    lock.lock().expect("lock the packages");
    let (ready, wanted) = (dir.join(".ready"), packages.join("\n"));
    let unpacked = dir.join("root");
    if std::fs::read_to_string(&ready).ok().as_deref() != Some(wanted.as_str()) {
        let _ = std::fs::remove_dir_all(&unpacked);
        setup_step(Command::new("apt-get").arg("download").args(packages).current_dir(&dir));
        for package in packages {
            let deb = std::fs::read_dir(&dir)
                .expect("read the download folder")
                .flatten()
                .map(|e| e.path())
                .find(|p| {
                    p.extension().is_some_and(|x| x == "deb")
                        && p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(&format!("{package}_")))
                })
                .unwrap_or_else(|| panic!("apt-get download {package} left no .deb in {}", dir.display()));
            setup_step(Command::new("dpkg").arg("-x").arg(&deb).arg(&unpacked));
            std::fs::remove_file(&deb).expect("remove the unpacked .deb");
        }
        std::fs::write(&ready, &wanted).expect("mark the packages unpacked");
    }
    Some(unpacked)
}

/// The `<testcase>` elements of a JUnit report: name, time, and the element inside, if any.
pub fn junit_cases(xml: &str) -> Vec<(String, String, String)> {
    let attr = |tag: &str, key: &str| -> String {
        let at = tag.find(&format!(" {key}=\"")).unwrap_or_else(|| panic!("no {key} in {tag}")) + key.len() + 3;
        let raw = tag[at..].split('"').next().unwrap_or_default();
        raw.replace("&gt;", ">").replace("&lt;", "<").replace("&quot;", "\"").replace("&amp;", "&")
    };
    xml.split("<testcase ")
        .skip(1)
        .map(|case| {
            let tag = format!(" {}", &case[..case.find('>').expect("a closed tag")]);
            let inner = if tag.ends_with('/') {
                String::new()
            } else {
                let body = case[tag.len()..].trim_start();
                body.trim_start_matches('<').split([' ', '/', '>']).next().unwrap_or_default().to_string()
            };
            (attr(&tag, "name"), attr(&tag, "time"), inner)
        })
        .collect()
}

/// `TOOL ARGS` as a hook's rewrite writes it where the operator set no sandbox: the agent's
/// command runs as its harness confines it, so the rewrite turns buildvise's default off.
pub fn unconfined(tool_and_args: &str) -> String {
    match tool_and_args.split_once(' ') {
        Some((tool, rest)) => format!("{tool} --sandbox off {rest}"),
        None => format!("{tool_and_args} --sandbox off"),
    }
}

/// `program` as PATH finds it.
pub fn which(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?).map(|dir| dir.join(program)).find(|p| p.is_file())
}

/// Runs one provisioning command; panics with its output when it fails.
pub fn setup_step(cmd: &mut Command) {
    let shown = format!("{cmd:?}");
    let out = cmd.stdin(Stdio::null()).output().unwrap_or_else(|e| panic!("{shown}: {e}"));
    assert!(
        out.status.success(),
        "{shown} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// (severity, file, line, message) of each diagnostic of an exec answer's JSON, sorted.
pub fn findings(answer: &Value) -> Vec<(String, String, u64, String)> {
    let mut found: Vec<_> = answer["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| {
            let s = |k: &str| d[k].as_str().unwrap_or("").to_string();
            (s("severity"), s("file"), d["line"].as_u64().unwrap_or(0), s("message"))
        })
        .collect();
    found.sort();
    found
}

/// (code, line) of each diagnostic of an exec answer's JSON, in the answer's order.
pub fn codes(answer: &Value) -> Vec<(String, u64)> {
    answer["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| (d["code"].as_str().unwrap_or("").to_string(), d["line"].as_u64().unwrap_or(0)))
        .collect()
}

/// The runs in the sandbox's store, newest first, as `buildvise runs --json` lists them.
pub fn runs(sb: &Sandbox) -> Vec<Value> {
    let run = sb.run(["runs", "--json", "--limit", "200"]);
    run.expect_code(0);
    run.json().as_array().cloned().unwrap_or_else(|| panic!("runs --json is not a list:{run}"))
}

/// True while `pid` is a live process (a zombie is dead: it only waits to be reaped).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name, which is in parentheses and may itself hold spaces.
        Ok(stat) => stat.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z') && !rest.starts_with('X')),
        Err(_) => false,
    }
}

/// The pids a script wrote to `file`, one a line.
pub fn pids(file: &Path) -> Vec<u32> {
    std::fs::read_to_string(file).unwrap_or_default().lines().filter_map(|l| l.trim().parse().ok()).collect()
}

/// Waits, up to a generous bound, until none of `pids` is alive; the bound only keeps a broken
/// host from hanging the suite (a KILL is delivered asynchronously).
pub fn wait_gone(pids: &[u32]) -> Vec<u32> {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while pids.iter().any(|&p| alive(p)) && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    pids.iter().copied().filter(|&p| alive(p)).collect()
}

/// Waits, up to a generous bound, for `ready`; the bound only keeps a broken host from hanging
/// the suite, it is not what the test asserts.
pub fn wait_for(what: &str, mut ready: impl FnMut() -> bool) {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !ready() {
        assert!(std::time::Instant::now() < until, "gave up waiting for {what}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// The run id at the end of a text answer's first line (`… · run bafotemu`).
pub fn header_id(run: &Run) -> String {
    let text = run.text();
    let header = text.lines().next().unwrap_or_default();
    match header.rsplit_once(" run ") {
        Some((_, id)) => id.trim().to_string(),
        None => panic!("no run id in the header:{run}"),
    }
}

/// `node` or `npm`, whichever does not run here (checked once); None when both run.
pub fn missing_node() -> Option<&'static str> {
    static MISSING: std::sync::OnceLock<Option<&'static str>> = std::sync::OnceLock::new();
    *MISSING.get_or_init(|| {
        ["node", "npm"].into_iter().find(|program| {
            let ran = Command::new(program).arg("--version").stdin(std::process::Stdio::null()).output();
            !ran.is_ok_and(|out| out.status.success())
        })
    })
}

/// True when `node` and `npm` both run; otherwise skips the test (saying what `needs` them), for
/// it to return.
pub fn have_node(needs: &str) -> bool {
    match missing_node() {
        Some(program) => {
            skip(&format!("{program} not found; {needs} needs node and npm"));
            false
        }
        None => true,
    }
}
