//! The installed size: the binary and every plugin as `cargo xtask install` and the packages ship
//! them, built with the `lean` profile, read from `target/lean/` beside the measured binary's
//! directory. Nothing runs: the files' sizes on disk are the figure.

use crate::Setup;
use crate::report::{Figure, Report};
use anyhow::Context;

const SECTION: &str = "size";
/// What buildvise may take on disk, binary and plugins together (issue 36).
const MAX_MIB: f64 = 15.0;
const MIB: f64 = (1 << 20) as f64;

pub fn run(setup: &Setup, report: &mut Report) -> anyhow::Result<()> {
    let target = setup.bin.parent().and_then(|d| d.parent()).context("the binary is not in a cargo target dir")?;
    let lean = target.join("lean");
    let binary = lean.join(format!("buildvise{}", std::env::consts::EXE_SUFFIX));
    let Ok(binary_size) = std::fs::metadata(&binary).map(|m| m.len()) else {
        report.figures.push(Figure::at_most(
            SECTION,
            "binary + plugins as shipped (lean profile)",
            f64::INFINITY,
            MAX_MIB,
            "MiB",
            &format!("{} is not built: run `cargo build --profile lean` before the bench", binary.display()),
        ));
        return Ok(());
    };
    let mut plugins: Vec<(String, u64)> = Vec::new();
    for entry in std::fs::read_dir(&lean).with_context(|| format!("reading {}", lean.display()))? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let stem = name.strip_prefix(std::env::consts::DLL_PREFIX).unwrap_or(&name);
        if let Some(plugin) =
            stem.strip_prefix("buildvise_plugin_").and_then(|n| n.strip_suffix(std::env::consts::DLL_SUFFIX))
        {
            plugins.push((plugin.to_string(), entry.metadata()?.len()));
        }
    }
    plugins.sort();
    let total = binary_size + plugins.iter().map(|(_, size)| size).sum::<u64>();
    report.figures.push(Figure::at_most(
        SECTION,
        format!("binary + {} plugins as shipped (lean profile)", plugins.len()),
        total as f64 / MIB,
        MAX_MIB,
        "MiB",
        "The binary holds o200k's 3.4 MiB rank file as tiktoken-rs ships it (ranks as text, base64 \
         tokens): compressed, or the ranks left implied by their order, it would take about 1 MiB. \
         Each plugin carries its own std, regex and serde (about 1.5 MiB of its 2.2): one library \
         holding the four large plugins would save some 5 MiB.",
    ));
    let each: Vec<String> = plugins.iter().map(|(name, size)| format!("{name} {:.1}", *size as f64 / MIB)).collect();
    report.figures.push(Figure::info(
        SECTION,
        "binary / each plugin",
        format!("{:.1} MiB / {} MiB", binary_size as f64 / MIB, each.join(", ")),
    ));
    Ok(())
}
