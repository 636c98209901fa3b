//! Parsers on long lines: one line made of a piece that a parser stops at again and again (a
//! colon, a parenthesis, `file:1:`, `at `), 24 KiB and 192 KiB long, through each plugin's
//! parsers in-process. Time per byte at both lengths shows whether a parser looks back over the
//! line at every such piece: dotnet's MSBuild reader did (issue 38, D4), and 100 KB of `:` hit the
//! host's 3 s limit. The worst piece per tool is reported.

use crate::Setup;
use crate::report::{Figure, Report};
use buildvise_plugin_api::testing::parse_streams;
use buildvise_plugin_api::{ParseContext, Plugin, RunEnd};

const SECTION: &str = "long lines";
/// 8× apart, and under the lengths past which parsers stop reading a line (dotnet's 256 KiB), so
/// that the longer line is parsed too.
const LENGTHS: [usize; 2] = [24 << 10, 192 << 10];
/// Quadratic work gives 8× between the two lengths; linear work about 1×. The regex crate gives up
/// to 3.5× once, not growth: on a line past its bounded backtracker's reach it changes to the
/// slower PikeVM for captures (ruff's headline pattern at `error: ` repeated, measured 3.47×;
/// 1.5 MiB parses in 0.06 s).
const MAX_GROWTH: f64 = 4.0;
/// CPU time each length is parsed for, at least, and the most parses that may take.
const MEASURE_SECONDS: f64 = 0.05;
const MAX_PARSES: u32 = 2000;
/// The pieces lines are made of: the separators the parsers split and search on.
const PIECES: [&str; 9] = [":", "(", "a:1:", "error: ", "::", " at ", "/", "[", "E   "];

/// A plugin and the tools whose parsers it is measured through.
struct Subject {
    plugin: fn() -> Box<dyn Plugin>,
    tools: &'static [&'static str],
}

const SUBJECTS: [Subject; 5] = [
    Subject { plugin: || Box::new(buildvise_plugin_cargo::CargoPlugin), tools: &["cargo.build", "cargo.test"] },
    Subject { plugin: || Box::new(buildvise_plugin_npm::ThePlugin), tools: &["npm.test", "npm.build"] },
    Subject { plugin: || Box::new(buildvise_plugin_pytest::ThePlugin), tools: &["pytest.run"] },
    Subject { plugin: || Box::new(buildvise_plugin_dotnet::DotnetPlugin), tools: &["dotnet.build", "dotnet.test"] },
    Subject {
        plugin: || Box::new(buildvise_plugin_generic::GenericPlugin),
        tools: &["make", "go.test", "python.mypy", "python.ruff"],
    },
];

pub fn run(setup: &Setup, report: &mut Report) -> anyhow::Result<()> {
    let cwd = setup.scratch.path().to_string_lossy().into_owned();
    let end = RunEnd::exited(1);
    for subject in &SUBJECTS {
        let plugin = (subject.plugin)();
        for &tool in subject.tools {
            // The piece whose long line grew the most, and that growth.
            let mut worst = ("", 0.0_f64);
            for piece in PIECES {
                let mut per_byte = [0.0; LENGTHS.len()];
                for (slot, length) in LENGTHS.into_iter().enumerate() {
                    let mut line = piece.repeat(length / piece.len());
                    line.push('\n');
                    // Parses repeated until they add up to a measurable CPU time: one parse of a
                    // 24 KiB line can take less than the clock's tick.
                    let (mut parses, started) = (0u32, crate::parse_scale::thread_cpu()?);
                    let mut spent = 0.0;
                    while spent < MEASURE_SECONDS && parses < MAX_PARSES {
                        let parser = plugin.parser(&ParseContext::new(tool, cwd.as_str()));
                        parse_streams(parser, line.as_bytes(), b"", &end);
                        parses += 1;
                        spent = crate::parse_scale::thread_cpu()? - started;
                    }
                    per_byte[slot] = spent / f64::from(parses) / line.len() as f64;
                }
                let growth = per_byte[1] / per_byte[0];
                if growth > worst.1 {
                    worst = (piece, growth);
                }
            }
            let (piece, growth) = worst;
            report.figures.push(Figure::at_most(
                SECTION,
                format!("{tool}, time per byte of a 192 KiB line / of 24 KiB (worst piece `{piece}`)"),
                growth,
                MAX_GROWTH,
                "×",
                "The parser looks back over the line at every such piece: walk back only over what \
                 the match needs, or search forward once.",
            ));
        }
    }
    Ok(())
}
