//! `cargo xtask`: the repository's own tasks, run through the alias in `.cargo/config.toml`.
//!
//! `cargo xtask install [--prefix DIR]` builds buildvise and every plugin in `plugins/` in release
//! mode, and installs them where the binary looks for its plugins:
//!
//! - `<prefix>/bin/buildvise`
//! - `<prefix>/lib/buildvise/plugins/libbuildvise_plugin_*.so` (`.dylib` on macOS)
//!
//! The prefix defaults to `~/.local`. This task exists because `cargo install` installs binaries
//! only, and a buildvise without its plugin libraries has no tools.

use anyhow::{Context, bail};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

const USAGE: &str = "usage: cargo xtask install [--prefix DIR]  (default prefix: ~/.local)";

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
        Some("install") => install(&prefix(args)?),
        Some("help" | "-h" | "--help") => {
            println!("{USAGE}");
            Ok(())
        }
        Some(task) => bail!("unknown task `{task}`; {USAGE}"),
        None => bail!("no task given; {USAGE}"),
    }
}

/// The install prefix from `--prefix DIR` (or `--prefix=DIR`), else `~/.local`; absolute, since
/// the build runs in another directory.
fn prefix(mut args: impl Iterator<Item = OsString>) -> anyhow::Result<PathBuf> {
    let mut prefix = None;
    while let Some(arg) = args.next() {
        let text = arg.to_string_lossy();
        if text == "--prefix" {
            prefix = Some(args.next().with_context(|| format!("--prefix needs a directory; {USAGE}"))?);
        } else if let Some(dir) = text.strip_prefix("--prefix=") {
            prefix = Some(dir.into());
        } else {
            bail!("unknown argument `{text}`; {USAGE}");
        }
    }
    let prefix = match prefix {
        Some(dir) => PathBuf::from(dir),
        None => std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(|h| Path::new(&h).join(".local"))
            .context("HOME is not set, so there is no default prefix; pass --prefix DIR")?,
    };
    std::path::absolute(&prefix).with_context(|| format!("cannot make {} absolute", prefix.display()))
}

fn install(prefix: &Path) -> anyhow::Result<()> {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().context("xtask/ has no parent directory")?;
    let plugins = plugin_names(&workspace.join("plugins"))?;
    let target = target_dir()?;
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build.current_dir(workspace).args(["build", "--release", "-p", "buildvise"]).arg("--target-dir").arg(&target);
    for name in &plugins {
        build.arg("-p").arg(format!("buildvise-plugin-{name}"));
    }
    let status = build.status().context("cannot run cargo")?;
    if !status.success() {
        bail!("`cargo build --release` failed ({status}); fix what it reported above, then run again");
    }

    let release = target.join("release");
    let bin = prefix.join("bin");
    let mut installed = vec![copy_into(&release.join(format!("buildvise{}", std::env::consts::EXE_SUFFIX)), &bin)?];
    for name in &plugins {
        let file = format!("{}buildvise_plugin_{name}{}", std::env::consts::DLL_PREFIX, std::env::consts::DLL_SUFFIX);
        installed.push(copy_into(&release.join(file), &prefix.join("lib/buildvise/plugins"))?);
    }
    println!("installed:");
    for path in &installed {
        println!("  {}", path.display());
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

/// The plugin crates: `plugins/NAME` is package `buildvise-plugin-NAME`, whose library is
/// `buildvise_plugin_NAME`.
fn plugin_names(dir: &Path) -> anyhow::Result<Vec<String>> {
    let entries = std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))?;
    let mut names = Vec::new();
    for entry in entries {
        let path = entry.with_context(|| format!("cannot read {}", dir.display()))?.path();
        if path.join("Cargo.toml").is_file()
            && let Some(name) = path.file_name().and_then(|n| n.to_str())
        {
            names.push(name.to_string());
        }
    }
    if names.is_empty() {
        bail!("no plugin crates in {}; is this a whole clone of buildvise?", dir.display());
    }
    names.sort();
    Ok(names)
}

/// The target dir cargo built this binary in (`<target>/debug/xtask`). The release build goes
/// there too, so that it reuses the same dependencies wherever the directory is configured
/// (`CARGO_TARGET_DIR`, `build.target-dir`) and the files are found where they were built.
fn target_dir() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe().context("cannot find this program's path")?;
    exe.parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .with_context(|| format!("{} is not in a cargo target dir; run it as `cargo xtask install`", exe.display()))
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
