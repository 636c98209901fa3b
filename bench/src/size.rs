//! The installed size: the binary and the plugin library as `cargo xtask install` and the
//! packages ship them, built with the `lean` profile, read from `target/lean/` beside the measured
//! binary's directory. Nothing runs: the files' sizes on disk are the figure.

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
    let library = lean.join(format!(
        "{}buildvise_plugin_toolchains{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    let library_size = std::fs::metadata(&library).map(|m| m.len()).with_context(|| {
        format!("{} is not built: run `cargo build --profile lean` before the bench", library.display())
    })?;
    report.figures.push(Figure::at_most(
        SECTION,
        "binary + plugin library as shipped (lean profile)",
        (binary_size + library_size) as f64 / MIB,
        MAX_MIB,
        "MiB",
        "The binary holds o200k's 3.4 MiB rank file as tiktoken-rs ships it (ranks as text, base64 \
         tokens): compressed, or the ranks left implied by their order, it would take about 1 MiB.",
    ));
    report.figures.push(Figure::info(
        SECTION,
        "binary / plugin library (five plugins)",
        format!("{:.1} MiB / {:.1} MiB", binary_size as f64 / MIB, library_size as f64 / MIB),
    ));
    Ok(())
}
