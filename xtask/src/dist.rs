//! `cargo xtask dist`: one build of the binary and its plugins for one target, packaged the way
//! each ecosystem installs a tool, into `target/dist/`:
//!
//! - `buildvise-<version>-<target>.tar.gz` (`.zip` for Windows): `bin/` and `lib/buildvise/plugins/`
//!   under one top directory, as `cargo xtask install` lays them out;
//! - npm: `buildvise-<version>.tgz`, the `buildvise` package (a JS launcher and every platform
//!   package as an optional dependency), and `buildvise-<platform>-<version>.tgz`, the package
//!   `@buildvise/<platform>` with the binary and the plugins (the layout of esbuild and biome);
//! - PyPI: `buildvise-<version>-py3-none-<platform tag>.whl`, the binary as a script and the
//!   plugins as data under `lib/buildvise/plugins`, which lands beside the scripts' directory;
//! - `SHA256SUMS` of them all.
//!
//! Every file is written with a fixed time (`SOURCE_DATE_EPOCH`, else 0; 1980 in a zip), so the
//! same build gives the same packages.

use crate::{Built, Os, build, host_triple, target_dir};
use anyhow::{Context, bail};
use base64::Engine;
use serde_json::json;
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};

const VERSION: &str = env!("CARGO_PKG_VERSION");
const DESCRIPTION: &str = "Runs builds and tests for AI agents and answers with only what they need";
const LICENSE: &str = "MIT OR Apache-2.0";
const LAUNCHER: &str = include_str!("../npm/buildvise.js");
/// Every platform the release workflow builds, by npm package: the main package lists them all,
/// and npm installs the one whose `os`, `cpu` and `libc` fit.
const NPM_PLATFORMS: [&str; 7] =
    ["linux-x64", "linux-x64-musl", "linux-arm64", "linux-arm64-musl", "darwin-x64", "darwin-arm64", "win32-x64"];

/// One file of a package: where it goes inside, its bytes, and whether it is executable.
struct Entry {
    path: String,
    bytes: Vec<u8>,
    executable: bool,
}

impl Entry {
    fn text(path: &str, text: &str) -> Entry {
        Entry { path: path.to_string(), bytes: text.as_bytes().to_vec(), executable: false }
    }
}

pub fn dist(profile: &str, target: Option<&str>) -> anyhow::Result<()> {
    let triple = match target {
        Some(t) => t.to_string(),
        None => host_triple()?,
    };
    let platform = Platform::of(&triple)?;
    let built = build(profile, target)?;
    // Emptied first: the directory then holds this build's packages alone, and SHA256SUMS sums
    // exactly those, never a package of an earlier version or target left beside them.
    let out = target_dir()?.join("dist");
    match std::fs::remove_dir_all(&out) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(e).with_context(|| format!("cannot empty {}", out.display()));
        }
        _ => {}
    }
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    let readme = std::fs::read_to_string(crate::workspace()?.join("README.md")).context("cannot read README.md")?;
    let files = Files::read(&built)?;

    let mut made = Vec::new();
    let top = format!("buildvise-{VERSION}-{triple}");
    let mut archive = files.laid_out(&format!("{top}/"));
    archive.push(Entry::text(&format!("{top}/README.md"), &readme));
    made.push(if platform.os == Os::Windows {
        write(&out, &format!("{top}.zip"), &zip(&archive)?)?
    } else {
        write(&out, &format!("{top}.tar.gz"), &tar_gz(&archive)?)?
    });

    let mut package = files.laid_out("package/");
    package.push(Entry::text("package/package.json", &platform.npm_manifest()));
    package.push(Entry::text(
        "package/README.md",
        &format!("The {} binary of buildvise, run by the `buildvise` package.\n", platform.npm),
    ));
    made.push(write(&out, &format!("buildvise-{}-{VERSION}.tgz", platform.npm), &tar_gz(&package)?)?);
    let main = vec![
        Entry::text("package/package.json", &main_manifest()),
        Entry { path: "package/bin/buildvise.js".into(), bytes: LAUNCHER.as_bytes().to_vec(), executable: true },
        Entry::text("package/README.md", &readme),
    ];
    made.push(write(&out, &format!("buildvise-{VERSION}.tgz"), &tar_gz(&main)?)?);

    let tag = platform.wheel_tag(&files)?;
    made.push(write(&out, &format!("buildvise-{VERSION}-py3-none-{tag}.whl"), &wheel(&files, &tag, &readme)?)?);

    let sums = write(&out, "SHA256SUMS", sha256sums(&out)?.as_bytes())?;
    println!("packaged into {}:", out.display());
    for path in made.iter().chain([&sums]) {
        let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        println!(
            "  {:>6.1} MiB  {}",
            size as f64 / (1024.0 * 1024.0),
            path.file_name().unwrap_or_default().to_string_lossy()
        );
    }
    Ok(())
}

/// The built files, read once: the binary and each plugin library, by file name.
struct Files {
    binary: (String, Vec<u8>),
    plugins: Vec<(String, Vec<u8>)>,
}

impl Files {
    fn read(built: &Built) -> anyhow::Result<Files> {
        let read = |path: &PathBuf| -> anyhow::Result<(String, Vec<u8>)> {
            let name = path.file_name().context("a built file has no name")?.to_string_lossy().into_owned();
            let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
            Ok((name, bytes))
        };
        Ok(Files {
            binary: read(&built.binary)?,
            plugins: built.plugins.iter().map(read).collect::<anyhow::Result<_>>()?,
        })
    }

    /// `bin/buildvise` and `lib/buildvise/plugins/*` under `root`: the binary looks for its
    /// plugins in `../lib/buildvise/plugins`.
    fn laid_out(&self, root: &str) -> Vec<Entry> {
        let mut entries = vec![Entry {
            path: format!("{root}bin/{}", self.binary.0),
            bytes: self.binary.1.clone(),
            executable: true,
        }];
        for (name, bytes) in &self.plugins {
            entries.push(Entry {
                path: format!("{root}lib/buildvise/plugins/{name}"),
                bytes: bytes.clone(),
                executable: true,
            });
        }
        entries
    }
}

/// A target as each ecosystem names it.
struct Platform {
    os: Os,
    /// npm's `<os>-<cpu>[-musl]`, the platform package's name in `@buildvise/`.
    npm: String,
    npm_os: &'static str,
    npm_cpu: &'static str,
    musl: bool,
    /// The CPU as wheel platform tags spell it.
    wheel_cpu: &'static str,
}

impl Platform {
    fn of(triple: &str) -> anyhow::Result<Platform> {
        let os = Os::of(triple);
        let (npm_cpu, wheel_cpu) = match triple.split('-').next() {
            Some("x86_64") => ("x64", if os == Os::Windows { "amd64" } else { "x86_64" }),
            Some("aarch64") => ("arm64", if os == Os::Linux { "aarch64" } else { "arm64" }),
            _ => bail!("no package names for target {triple}; the release builds x86_64 and aarch64 only"),
        };
        let npm_os = match os {
            Os::Linux => "linux",
            Os::Macos => "darwin",
            Os::Windows => "win32",
        };
        let musl = triple.ends_with("-musl");
        let npm = format!("{npm_os}-{npm_cpu}{}", if musl { "-musl" } else { "" });
        Ok(Platform { os, npm, npm_os, npm_cpu, musl, wheel_cpu })
    }

    fn npm_manifest(&self) -> String {
        let mut manifest = json!({
            "name": format!("@buildvise/{}", self.npm),
            "version": VERSION,
            "description": format!("The {} binary of buildvise, with its plugins", self.npm),
            "license": LICENSE,
            "os": [self.npm_os],
            "cpu": [self.npm_cpu],
        });
        if self.os == Os::Linux {
            // npm and pnpm skip a package whose `libc` is not the machine's.
            manifest["libc"] = json!([if self.musl { "musl" } else { "glibc" }]);
        }
        pretty(&manifest)
    }

    /// The wheel's platform tag: for glibc, the newest `GLIBC_2.N` symbol version the files
    /// need, so that pip installs it only where they load.
    fn wheel_tag(&self, files: &Files) -> anyhow::Result<String> {
        Ok(match self.os {
            Os::Windows => format!("win_{}", self.wheel_cpu),
            // Rust's oldest macOS: 10.12 on x86_64, 11.0 on arm64.
            Os::Macos if self.wheel_cpu == "x86_64" => "macosx_10_12_x86_64".to_string(),
            Os::Macos => "macosx_11_0_arm64".to_string(),
            Os::Linux if self.musl => format!("musllinux_1_2_{}", self.wheel_cpu),
            Os::Linux => {
                let all = std::iter::once(&files.binary).chain(&files.plugins);
                let minor = all.filter_map(|(_, bytes)| newest_glibc(bytes)).max().context(
                    "the binary names no GLIBC_2.N symbol version; is it a glibc build? (musl targets end in -musl)",
                )?;
                format!("manylinux_2_{minor}_{}", self.wheel_cpu)
            }
        })
    }
}

/// The highest N of the `GLIBC_2.N` version names in an ELF file's bytes.
fn newest_glibc(bytes: &[u8]) -> Option<u32> {
    const NEEDLE: &[u8] = b"GLIBC_2.";
    let mut newest = None;
    let mut rest = bytes;
    while let Some(at) = rest.windows(NEEDLE.len()).position(|w| w == NEEDLE) {
        let digits: Vec<u8> = rest[at + NEEDLE.len()..].iter().copied().take_while(u8::is_ascii_digit).collect();
        if let Some(n) = std::str::from_utf8(&digits).ok().and_then(|d| d.parse::<u32>().ok()) {
            newest = newest.max(Some(n));
        }
        rest = &rest[at + NEEDLE.len()..];
    }
    newest
}

/// JSON as npm writes package.json: two-space indented, with a final newline.
fn pretty(value: &serde_json::Value) -> String {
    format!("{}\n", serde_json::to_string_pretty(value).unwrap_or_default())
}

fn main_manifest() -> String {
    let optional: serde_json::Map<String, serde_json::Value> =
        NPM_PLATFORMS.iter().map(|p| (format!("@buildvise/{p}"), json!(VERSION))).collect();
    pretty(&json!({
        "name": "buildvise",
        "version": VERSION,
        "description": DESCRIPTION,
        "license": LICENSE,
        "bin": { "buildvise": "bin/buildvise.js" },
        "engines": { "node": ">=18" },
        "optionalDependencies": optional,
    }))
}

/// The time every packaged file carries.
fn mtime() -> u64 {
    std::env::var("SOURCE_DATE_EPOCH").ok().and_then(|s| s.parse().ok()).unwrap_or(0)
}

fn tar_gz(entries: &[Entry]) -> anyhow::Result<Vec<u8>> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let mut tar = tar::Builder::new(gz);
    for entry in entries {
        let mut header = tar::Header::new_gnu();
        header.set_size(entry.bytes.len() as u64);
        header.set_mode(if entry.executable { 0o755 } else { 0o644 });
        header.set_mtime(mtime());
        header.set_entry_type(tar::EntryType::Regular);
        tar.append_data(&mut header, &entry.path, entry.bytes.as_slice())
            .with_context(|| format!("cannot add {} to a tar archive", entry.path))?;
    }
    let gz = tar.into_inner().context("cannot finish a tar archive")?;
    gz.finish().context("cannot compress a tar archive")
}

fn zip(entries: &[Entry]) -> anyhow::Result<Vec<u8>> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    // Zip's first representable time, 1980-01-01, for every file: the same build, the same bytes.
    let time = zip::DateTime::default();
    for entry in entries {
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .last_modified_time(time)
            .unix_permissions(if entry.executable { 0o755 } else { 0o644 });
        zip.start_file(entry.path.as_str(), options).with_context(|| format!("cannot add {} to a zip", entry.path))?;
        zip.write_all(&entry.bytes).with_context(|| format!("cannot add {} to a zip", entry.path))?;
    }
    Ok(zip.finish().context("cannot finish a zip")?.into_inner())
}

/// A wheel (PEP 427) with the binary in `.data/scripts/`, which installers put on the
/// environment's scripts directory (`bin/`, `Scripts\` on Windows), and the plugins in
/// `.data/data/lib/buildvise/plugins/`, which lands in the environment's root: beside `bin/`,
/// where the binary looks (`<exe>/../lib/buildvise/plugins`).
fn wheel(files: &Files, tag: &str, readme: &str) -> anyhow::Result<Vec<u8>> {
    let data = format!("buildvise-{VERSION}.data");
    let info = format!("buildvise-{VERSION}.dist-info");
    let mut entries = vec![Entry {
        path: format!("{data}/scripts/{}", files.binary.0),
        bytes: files.binary.1.clone(),
        executable: true,
    }];
    for (name, bytes) in &files.plugins {
        entries.push(Entry {
            path: format!("{data}/data/lib/buildvise/plugins/{name}"),
            bytes: bytes.clone(),
            executable: true,
        });
    }
    entries.push(Entry::text(
        &format!("{info}/METADATA"),
        &format!(
            "Metadata-Version: 2.1\nName: buildvise\nVersion: {VERSION}\nSummary: {DESCRIPTION}\n\
             License: {LICENSE}\nDescription-Content-Type: text/markdown\n\n{readme}"
        ),
    ));
    entries.push(Entry::text(
        &format!("{info}/WHEEL"),
        &format!("Wheel-Version: 1.0\nGenerator: buildvise xtask\nRoot-Is-Purelib: false\nTag: py3-none-{tag}\n"),
    ));
    // RECORD: each file's urlsafe-base64 SHA-256 without padding and its size; its own line bare.
    let mut record = String::new();
    for entry in &entries {
        let hash = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(&entry.bytes));
        record.push_str(&format!("{},sha256={hash},{}\n", entry.path, entry.bytes.len()));
    }
    record.push_str(&format!("{info}/RECORD,,\n"));
    entries.push(Entry::text(&format!("{info}/RECORD"), &record));
    zip(&entries)
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> anyhow::Result<PathBuf> {
    let path = dir.join(name);
    std::fs::write(&path, bytes).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

/// `sha256sum`'s format over every other file in `dir`, by name: what a download is checked with
/// (`sha256sum -c SHA256SUMS --ignore-missing`).
fn sha256sums(dir: &Path) -> anyhow::Result<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "SHA256SUMS")
        .collect();
    names.sort();
    let mut sums = String::new();
    for name in names {
        let bytes = std::fs::read(dir.join(&name)).with_context(|| format!("cannot read {name}"))?;
        let hash: String = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
        sums.push_str(&format!("{hash}  {name}\n"));
    }
    Ok(sums)
}
