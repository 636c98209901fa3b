//! `cargo xtask`: the repository's own tasks, run through the alias in `.cargo/config.toml`.
//!
//! `cargo xtask install [--prefix DIR] [--profile P]` builds buildvise and the library holding
//! every plugin in `plugins/`, and installs them where the binary looks for its plugins:
//!
//! - `<prefix>/bin/buildvise`
//! - `<prefix>/lib/buildvise/plugins/libbuildvise_plugin_toolchains.so` (`.dylib` on macOS)
//!
//! The prefix defaults to `~/.local`. This task exists because `cargo install` installs binaries
//! only, and a buildvise without its plugin libraries has no tools.
//!
//! `cargo xtask dist [--profile P] [--target TRIPLE]` builds the same files into every package
//! buildvise ships as, in `target/dist/` (dist.rs).
//!
//! Both build with the `lean` profile unless told otherwise: what a person installs is stripped
//! and link-time optimised (docs/install.md). `--profile release` reuses a `cargo build --release`.

mod dist;

use anyhow::{Context, bail};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

const USAGE: &str = "usage: cargo xtask install [--prefix DIR] [--profile P]  (default prefix: ~/.local)\n       \
                     cargo xtask dist [--profile P] [--target TRIPLE]  (packages into target/dist/)\n       \
                     (default profile: lean)";

/// The profile that ships: Cargo.toml's `[profile.lean]`.
const SHIP_PROFILE: &str = "lean";

fn main() {
    // One line with its causes, never a backtrace: these errors are for a person to act on.
    if let Err(e) = run() {
        eprintln!("xtask: {e:#}");
        std::process::exit(1);
    }
}

fn run() -> anyhow::Result<()> {
    let mut args = std::env::args_os().skip(1);
    match args.next().as_ref().and_then(|a| a.to_str()) {
        Some("install") => {
            let opts = Options::parse(args, &["--prefix", "--profile"])?;
            install(&prefix(opts.get("--prefix"))?, opts.get("--profile").unwrap_or(SHIP_PROFILE))
        }
        Some("dist") => {
            let opts = Options::parse(args, &["--profile", "--target"])?;
            dist::dist(opts.get("--profile").unwrap_or(SHIP_PROFILE), opts.get("--target"))
        }
        Some("help" | "-h" | "--help") => {
            println!("{USAGE}");
            Ok(())
        }
        Some(task) => bail!("unknown task `{task}`\n{USAGE}"),
        None => bail!("no task given\n{USAGE}"),
    }
}

/// `--name VALUE` or `--name=VALUE` options, each from `known`.
struct Options(Vec<(String, String)>);

impl Options {
    fn parse(mut args: impl Iterator<Item = OsString>, known: &[&str]) -> anyhow::Result<Options> {
        let mut found = Vec::new();
        while let Some(arg) = args.next() {
            let text = arg.to_string_lossy().into_owned();
            let (name, value) = match text.split_once('=') {
                Some((name, value)) => (name.to_string(), value.to_string()),
                None => {
                    let value = args.next().map(|v| v.to_string_lossy().into_owned());
                    (text.clone(), value.with_context(|| format!("{text} needs a value\n{USAGE}"))?)
                }
            };
            if !known.contains(&name.as_str()) {
                bail!("unknown argument `{name}`\n{USAGE}");
            }
            found.push((name, value));
        }
        Ok(Options(found))
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().rev().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// The install prefix from `--prefix DIR`, else `~/.local`; absolute, since the build runs in
/// another directory.
fn prefix(given: Option<&str>) -> anyhow::Result<PathBuf> {
    let prefix = match given {
        Some(dir) => PathBuf::from(dir),
        None => std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(|h| Path::new(&h).join(".local"))
            .context("HOME is not set, so there is no default prefix; pass --prefix DIR")?,
    };
    std::path::absolute(&prefix).with_context(|| format!("cannot make {} absolute", prefix.display()))
}

/// The plugin library that ships (`plugins/toolchains`): every plugin of the workspace in one
/// file, which shares one copy of std and of the crates they all use.
const SHIPPED_PLUGINS: &str = "toolchains";

/// The files a build made: the binary and each plugin library, for one target.
pub struct Built {
    pub binary: PathBuf,
    pub plugins: Vec<PathBuf>,
}

/// Builds the binary and the shipped plugin library with `profile`, for `target` (None: this
/// machine).
pub fn build(profile: &str, target: Option<&str>) -> anyhow::Result<Built> {
    let workspace = workspace()?;
    let target_dir = target_dir()?;
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build
        .current_dir(&workspace)
        .args(["build", "--profile", profile, "-p", "buildvise"])
        .arg("--target-dir")
        .arg(&target_dir);
    if let Some(triple) = target {
        build.args(["--target", triple]);
    }
    // A static (musl) binary cannot load libraries: the plugins are linked into it instead.
    let linked = target.is_some_and(|triple| triple.ends_with("-musl"));
    if linked {
        build.args(["--features", "linked-plugins"]);
    } else {
        build.arg("-p").arg(format!("buildvise-plugin-{SHIPPED_PLUGINS}"));
    }
    let status = build.status().context("cannot run cargo")?;
    if !status.success() {
        bail!("`cargo build --profile {profile}` failed ({status}); fix what it reported above, then run again");
    }
    // Cargo's directory for a profile: `dev` builds into `debug`, every other into its name.
    let dir_name = if profile == "dev" { "debug" } else { profile };
    let out = match target {
        Some(triple) => target_dir.join(triple).join(dir_name),
        None => target_dir.join(dir_name),
    };
    let os = Os::of(target.unwrap_or(&host_triple()?));
    Ok(Built {
        binary: out.join(format!("buildvise{}", os.exe_suffix())),
        plugins: if linked { Vec::new() } else { vec![out.join(os.library(SHIPPED_PLUGINS))] },
    })
}

/// The operating system a target triple names, for its file names.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Os {
    Linux,
    Macos,
    Windows,
}

impl Os {
    pub fn of(triple: &str) -> Os {
        if triple.contains("windows") {
            Os::Windows
        } else if triple.contains("apple") {
            Os::Macos
        } else {
            Os::Linux
        }
    }

    pub fn exe_suffix(self) -> &'static str {
        if self == Os::Windows { ".exe" } else { "" }
    }

    /// The file name of plugin `name`'s library.
    pub fn library(self, name: &str) -> String {
        match self {
            Os::Linux => format!("libbuildvise_plugin_{name}.so"),
            Os::Macos => format!("libbuildvise_plugin_{name}.dylib"),
            Os::Windows => format!("buildvise_plugin_{name}.dll"),
        }
    }
}

/// The triple rustc builds for when given no `--target`.
pub fn host_triple() -> anyhow::Result<String> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out = Command::new(rustc).arg("-vV").output().context("cannot run rustc -vV")?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(str::to_string)
        .context("rustc -vV names no host; pass --target TRIPLE")
}

/// The libraries an install before the plugins shipped as one held: left beside the new one,
/// each would claim its tools first (plugins load in file-name order) and run old code.
const SEPARATE_LIBRARIES: [&str; 5] = ["cargo", "dotnet", "generic", "npm", "pytest"];

fn install(prefix: &Path, profile: &str) -> anyhow::Result<()> {
    let built = build(profile, None)?;
    let bin = prefix.join("bin");
    let plugins = prefix.join("lib/buildvise/plugins");
    let mut installed = vec![copy_into(&built.binary, &bin)?];
    for library in &built.plugins {
        installed.push(copy_into(library, &plugins)?);
    }
    println!("installed:");
    for path in &installed {
        println!("  {}", path.display());
    }
    let os = Os::of(&host_triple()?);
    for name in SEPARATE_LIBRARIES {
        let old = plugins.join(os.library(name));
        if old.is_file() {
            std::fs::remove_file(&old).with_context(|| format!("cannot remove the old {}", old.display()))?;
            println!("removed {}: its plugin is in {} now", old.display(), os.library(SHIPPED_PLUGINS));
        }
    }
    if !on_path(&bin) {
        println!(
            "{0} is not on PATH: add it (export PATH=\"{0}:$PATH\" in your shell's profile), or run {1} by its full path",
            bin.display(),
            installed[0].display()
        );
    }
    Ok(())
}

fn workspace() -> anyhow::Result<PathBuf> {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).context("xtask/ has no parent directory")
}

/// The target dir cargo built this binary in (`<target>/debug/xtask`). The release build goes
/// there too, so that it reuses the same dependencies wherever the directory is configured
/// (`CARGO_TARGET_DIR`, `build.target-dir`) and the files are found where they were built.
fn target_dir() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe().context("cannot find this program's path")?;
    exe.parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .with_context(|| format!("{} is not in a cargo target dir; run it as `cargo xtask`", exe.display()))
}

/// Copies `file` into `dir` under a temporary name, then renames it over the old copy: a running
/// buildvise keeps the file it has open (writing into it would fail, or corrupt it), and nothing
/// ever sees half a file.
fn copy_into(file: &Path, dir: &Path) -> anyhow::Result<PathBuf> {
    let name = file.file_name().with_context(|| format!("{} has no file name", file.display()))?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let dest = dir.join(name);
    let tmp = dir.join(format!(".{}.{}.tmp", name.to_string_lossy(), std::process::id()));
    std::fs::copy(file, &tmp).with_context(|| format!("cannot copy {} to {}", file.display(), dir.display()))?;
    if let Err(e) = std::fs::rename(&tmp, &dest) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("cannot replace {}", dest.display()));
    }
    Ok(dest)
}

/// Whether a directory of PATH is `dir`.
fn on_path(dir: &Path) -> bool {
    let dir = std::fs::canonicalize(dir).ok();
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| std::fs::canonicalize(d).ok() == dir))
}
