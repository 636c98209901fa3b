//! The package managers other than npm (pnpm, yarn classic, yarn berry, bun), installed from the
//! npm registry with the machine's npm into `target/test-env/managers/`, once: a later test run
//! finds them there. Each gets a `bin/` holding only its program, so that a test puts exactly one
//! `yarn` on PATH (classic and berry both install one under that name).
//!
//! Versions are pinned to the ones whose output `plugins/npm/fixtures/managers/` captured, so
//! that what they print does not drift under the tests. Nothing goes through corepack: berry runs
//! from `@yarnpkg/cli-dist` with node, and bun is the platform's `@oven/bun-*` package itself
//! (the `bun` package fetches that binary in a postinstall step, which left it missing).

use super::{npm_cache, root, setup_step, skip};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pm {
    Pnpm,
    YarnClassic,
    YarnBerry,
    Bun,
}

impl Pm {
    pub const ALL: [Pm; 4] = [Pm::Pnpm, Pm::YarnClassic, Pm::YarnBerry, Pm::Bun];

    /// The program a project's scripts run with.
    pub fn program(self) -> &'static str {
        match self {
            Pm::Pnpm => "pnpm",
            Pm::YarnClassic | Pm::YarnBerry => "yarn",
            Pm::Bun => "bun",
        }
    }

    /// Its folder under `target/test-env/managers/`, which names the version: a changed pin
    /// installs anew beside the old one.
    fn dir_name(self) -> &'static str {
        match self {
            Pm::Pnpm => "pnpm-9.15.9",
            Pm::YarnClassic => "yarn-1.22.22",
            Pm::YarnBerry => "yarn-4.18.1",
            Pm::Bun => "bun-1.4.5",
        }
    }

    /// The package to install and, relative to the install's `node_modules`, the file that runs
    /// it; None where bun ships no build for this machine.
    fn package(self) -> Option<(String, String)> {
        let js = |spec: &str, file: &str| Some((spec.to_string(), file.to_string()));
        match self {
            Pm::Pnpm => js("pnpm@9.15.9", "pnpm/bin/pnpm.cjs"),
            Pm::YarnClassic => js("yarn@1.22.22", "yarn/bin/yarn.js"),
            Pm::YarnBerry => js("@yarnpkg/cli-dist@4.18.1", "@yarnpkg/cli-dist/bin/yarn.js"),
            Pm::Bun => {
                let name = bun_package()?;
                Some((format!("{name}@1.4.5"), format!("{name}/bin/bun")))
            }
        }
    }
}

/// bun's package for this machine: the same names the `bun` package's own installer picks.
fn bun_package() -> Option<String> {
    let os = match std::env::consts::OS {
        "linux" => "linux",
        "macos" => "darwin",
        _ => return None,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "aarch64",
        _ => return None,
    };
    let mut name = format!("@oven/bun-{os}-{arch}");
    // The plain x64 build needs AVX2 and dies on SIGILL without it; musl needs its own build.
    if os == "linux" && std::path::Path::new("/etc/alpine-release").exists() {
        name.push_str("-musl");
    }
    if os == "linux" && arch == "x64" && !std::fs::read_to_string("/proc/cpuinfo").is_ok_and(|c| c.contains(" avx2")) {
        name.push_str("-baseline");
    }
    Some(name)
}

/// The `bin/` directory holding `pm`'s program alone, installed on first use; None, after a
/// loud [`skip`] for the caller to return, when node or npm is missing or bun has no build for
/// this machine. A failed download fails the test: only a missing base toolchain is a reason to
/// skip.
pub fn manager(pm: Pm) -> Option<PathBuf> {
    static FOUND: OnceLock<Mutex<std::collections::HashMap<Pm, PathBuf>>> = OnceLock::new();
    if let Some(program) = super::missing_node() {
        skip(&format!("{program} not found; installing and running {} needs node and npm", pm.program()));
        return None;
    }
    let Some((spec, entry)) = pm.package() else {
        skip(&format!(
            "bun ships no build for {}-{}; the bun end-to-end tests need one",
            std::env::consts::OS,
            std::env::consts::ARCH
        ));
        return None;
    };
    // Held across the install: two tests asking for one manager wait for a single install.
    let mut found = FOUND.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(bin) = found.get(&pm) {
        return Some(bin.clone());
    }
    let bin = install(pm, &spec, &entry).join("bin");
    found.insert(pm, bin.clone());
    Some(bin)
}

/// Installs `spec` into `target/test-env/managers/NAME` unless a finished install is there.
/// Test processes asking at once take turns on a lock file; the install is made under another
/// name and renamed when complete, so one killed halfway is never taken for ready.
fn install(pm: Pm, spec: &str, entry: &str) -> PathBuf {
    let managers = root().join("target/test-env/managers");
    std::fs::create_dir_all(&managers).expect("create target/test-env/managers");
    let lock = std::fs::File::create(managers.join(format!("{}.lock", pm.dir_name()))).expect("create the lock file");
    lock.lock().expect("lock the manager's install");
    let done = managers.join(pm.dir_name());
    let stamp = done.join(".buildvise-ready");
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(spec) {
        return done;
    }
    remove(&done);
    // Under the lock no one else is installing this manager: a partial install left here is
    // one a killed test run left.
    let partial_prefix = format!(".{}-", pm.dir_name());
    for entry in std::fs::read_dir(&managers).expect("read target/test-env/managers").flatten() {
        if entry.file_name().to_str().is_some_and(|name| name.starts_with(&partial_prefix)) {
            remove(&entry.path());
        }
    }
    let partial = managers.join(format!("{partial_prefix}{}", std::process::id()));
    std::fs::create_dir_all(&partial).expect("create the install dir");
    // A package.json of its own, or npm would look for one in the folders above.
    std::fs::write(partial.join("package.json"), "{\"private\": true}\n").expect("write package.json");
    setup_step(
        Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--no-package-lock", "--ignore-scripts"])
            .arg(spec)
            .current_dir(&partial)
            .env("npm_config_cache", npm_cache())
            .env("npm_config_update_notifier", "false"),
    );
    let program = partial.join("node_modules").join(entry);
    assert!(program.is_file(), "installing {spec} left no {}", program.display());
    let bin = partial.join("bin");
    std::fs::create_dir(&bin).expect("create bin/");
    write_shim(pm, &bin.join(pm.program()), entry);
    std::fs::write(partial.join(".buildvise-ready"), spec).expect("mark the install ready");
    std::fs::rename(&partial, &done).unwrap_or_else(|e| panic!("install {spec} into {}: {e}", done.display()));
    done
}

/// The manager's command in `bin/`: bun's native program linked, the others a script run by node.
#[cfg(unix)]
fn write_shim(pm: Pm, shim: &Path, entry: &str) {
    if pm == Pm::Bun {
        // A native program: a link, relative so that the rename below keeps it whole.
        std::os::unix::fs::symlink(Path::new("../node_modules").join(entry), shim).expect("link bun");
    } else {
        // Run by the node on PATH, as a global install's shim does, without corepack in between.
        let script = format!("#!/bin/sh\nexec node \"$(dirname \"$0\")/../node_modules/{entry}\" \"$@\"\n");
        std::fs::write(shim, script).expect("write the shim");
        let mode = std::os::unix::fs::PermissionsExt::from_mode(0o755);
        std::fs::set_permissions(shim, mode).expect("make the shim executable");
    }
}

#[cfg(not(unix))]
fn write_shim(_: Pm, shim: &Path, _: &str) {
    panic!("the package managers' shims ({}) are links and shell scripts: these tests run on Unix", shim.display());
}

fn remove(dir: &Path) {
    match std::fs::remove_dir_all(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => panic!("removing {}: {e}", dir.display()),
    }
}

/// The environment a manager runs in under the tests, on top of [`super::Sandbox::command`]'s:
/// `bin` first on PATH, and a home directory of the test's own (`home`), where the managers keep
/// their caches, stores and state, so that nothing is written outside the sandbox. Nothing they
/// run may reach further than the npm registry, and the fixtures need not even that: no update
/// checks, no telemetry, no corepack.
pub fn environment(pm: Pm, bin: &Path, home: &Path) -> Vec<(String, std::ffi::OsString)> {
    std::fs::create_dir_all(home).expect("create the managers' home");
    let path = std::env::var_os("PATH").unwrap_or_default();
    let path =
        std::env::join_paths(std::iter::once(bin.to_path_buf()).chain(std::env::split_paths(&path))).expect("a PATH");
    let mut env: Vec<(String, std::ffi::OsString)> = vec![("PATH".into(), path), ("HOME".into(), home.into())];
    for (key, dir) in [("XDG_CACHE_HOME", "cache"), ("XDG_STATE_HOME", "state")] {
        env.push((key.into(), home.join(dir).into()));
    }
    for (key, value) in [
        ("COREPACK_ENABLE_STRICT", "0"),
        ("COREPACK_ENABLE_NETWORK", "0"),
        ("COREPACK_ENABLE_DOWNLOAD_PROMPT", "0"),
        ("YARN_ENABLE_TELEMETRY", "0"),
        // bun's switch for its crash reports.
        ("DO_NOT_TRACK", "1"),
        ("npm_config_update_notifier", "false"),
        // CI runs the tests with it set, and berry and pnpm change their defaults under it: a
        // run here behaves as one there.
        ("CI", "true"),
    ] {
        env.push((key.into(), value.into()));
    }
    // yarn 1 reads `yarn_*` variables as its settings; berry refuses a name it does not know.
    if pm == Pm::YarnClassic {
        env.push(("YARN_DISABLE_SELF_UPDATE_CHECK".into(), "true".into()));
    }
    env
}
