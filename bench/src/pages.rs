//! A page of a 10-million-line log through a warm MCP server (issue 16), against the same page
//! rendered in-process in the same run: the difference is what the server adds (JSON-RPC, the
//! async runtime, the hop to a blocking thread), since the page itself costs the same.
//!
//! The run is `seq 1 10000000` through the test plugin's `panicky.sh` tool. At each position
//! (start, middle, end) the in-process page and the MCP round trip alternate.

use crate::mcp::Session;
use crate::overhead::paired;
use crate::report::{Figure, Report, num};
use crate::scale::{PAGE_LINES, only_run, page_call, page_positions};
use crate::{Setup, median, run_ok};
use anyhow::bail;
use buildvise_app::App;
use buildvise_engine::access::Access;
use buildvise_engine::config::Config;
use buildvise_engine::plugins::Registry;
use buildvise_engine::render::Surface;
use buildvise_engine::run::CancelToken;
use buildvise_engine::store::Store;
use serde_json::json;
use std::process::Stdio;
use std::time::Instant;

const SECTION: &str = "scale";
/// Goal (issue 16).
const MAX_MCP_PAGE_MS: f64 = 2.0;

const LINES: u64 = 10_000_000;
/// Samples per position and side.
const SAMPLES: usize = 50;
const QUICK_SAMPLES: usize = 15;

pub fn run(setup: &Setup, report: &mut Report) -> anyhow::Result<()> {
    let store_dir = setup.fresh_dir("pages-store")?;
    run_ok(
        setup
            .buildvise(&store_dir)
            .arg("--plugin-dir")
            .arg(&setup.test_plugins)
            .args(["exec", "panicky.sh", "--detail", "summary", "--", &format!("seq 1 {LINES}")])
            .stdout(Stdio::null()),
        "buildvise exec of 10 million lines",
    )?;
    let meta = only_run(&store_dir)?;
    if meta.lines != LINES {
        bail!("the run stored {} lines of {LINES}", meta.lines);
    }
    let app = App::new(Registry::default(), Store::open(&store_dir)?, Config::default(), None);
    let (mut session, _) = Session::open(setup, &store_dir)?;
    let samples = if setup.quick { QUICK_SAMPLES } else { SAMPLES };
    for (name, start) in page_positions(LINES) {
        let shown = format!("{start}|");
        let call = page_call(&meta.id, start);
        let in_process = || {
            let started = Instant::now();
            let page = app.log(&Access::anywhere(), &call, &CancelToken::default(), Surface::Mcp, &mut |_| {})?;
            let took = started.elapsed().as_secs_f64() * 1000.0;
            if !page.text.contains(&shown) {
                bail!("the page at line {start} does not show that line: {}", page.text);
            }
            Ok(took)
        };
        let arguments = json!({"action": "log", "runId": meta.id, "startLine": start, "lineCount": PAGE_LINES});
        let through_mcp = || {
            let started = Instant::now();
            let text = session.build(arguments.clone())?;
            let took = started.elapsed().as_secs_f64() * 1000.0;
            if !text.contains(&shown) {
                bail!("the MCP page at line {start} does not show that line: {text}");
            }
            Ok(took)
        };
        let pairs = paired(samples, in_process, through_mcp)?;
        let inside = median(&pairs.iter().map(|(i, _)| *i).collect::<Vec<_>>());
        let mcp = median(&pairs.iter().map(|(_, m)| *m).collect::<Vec<_>>());
        report.figures.push(
            Figure::at_most(
                SECTION,
                format!("MCP `log` page, {name} of {LINES} lines, round trip (median of {samples})"),
                mcp,
                MAX_MCP_PAGE_MS,
                "ms",
                "The page itself is the in-process figure beside it; the rest is the server's: look for \
                 a whole-file read or a re-open beyond the index seek per request, and for work done on \
                 the async runtime instead of a blocking thread (src/mcp/server.rs, app/src/log.rs).",
            )
            .beside(format!("in-process {}: {}", num(inside, "ms"), num(mcp / inside, "×"))),
        );
    }
    session.stop()?;
    std::fs::remove_dir_all(&store_dir)?;
    Ok(())
}
