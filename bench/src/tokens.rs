//! Tokens an agent pays: per corpus case, the raw log against the ideal answer and the three detail
//! levels of buildvise's answer; and the `build` tool's schema, paid on every turn.

use crate::corpus::Case;
use crate::mcp::Server;
use crate::report::{Figure, Report, Table, num};
use crate::{Setup, median, run_ok};
use anyhow::Context;
use std::collections::{BTreeMap, HashMap};
use tiktoken_rs::CoreBPE;

const SECTION: &str = "tokens";
/// Goals (issue 4; the median over every failing run, issue 35).
const MAX_STANDARD_OVER_IDEAL: f64 = 1.25;
const MAX_MEDIAN_OVER_IDEAL: f64 = 1.20;
const MAX_STANDARD: f64 = 2000.0;
const MAX_SUMMARY_OVER_STANDARD: f64 = 0.5;
const MAX_SCHEMA: f64 = 250.0;
/// Goal (issue 16): what a session puts in the model's context before its first call.
const MAX_TOOLS_AND_INSTRUCTIONS: f64 = 200.0;

const DETAILS: [&str; 3] = ["summary", "standard", "full"];

/// Token counts of one case.
#[derive(Debug, Clone)]
pub struct CaseTokens {
    pub toolchain: String,
    pub id: String,
    pub tool: String,
    pub failing: bool,
    /// Errors and warnings the parser reported.
    pub diagnostics: usize,
    pub raw: usize,
    pub ideal: usize,
    pub summary: usize,
    pub standard: usize,
    /// Characters of the standard answer (the render budgets characters, not tokens).
    pub standard_chars: usize,
    pub full: usize,
    /// Tokens of the standard answer's status line and hint: what it costs beyond the findings.
    pub frame: usize,
}

impl CaseTokens {
    fn standard_over_ideal(&self) -> f64 {
        self.standard as f64 / self.ideal.max(1) as f64
    }
    fn summary_over_standard(&self) -> f64 {
        self.summary as f64 / self.standard.max(1) as f64
    }
    fn raw_over_standard(&self) -> f64 {
        self.raw as f64 / self.standard.max(1) as f64
    }
}

/// Counts o200k tokens as the agent's model would see the text.
pub struct Counter(CoreBPE);

impl Counter {
    pub fn new() -> anyhow::Result<Self> {
        Ok(Counter(tiktoken_rs::o200k_base().context("loading the o200k_base encoding")?))
    }
    pub fn count(&self, text: &str) -> usize {
        self.0.encode_ordinary(text).len()
    }
}

/// Runs `buildvise parse` at each detail level (and `--json`) for every case.
pub fn measure(
    setup: &Setup,
    cases: &[Case],
    ideal: &HashMap<(String, String), String>,
) -> anyhow::Result<Vec<CaseTokens>> {
    let counter = Counter::new()?;
    let store = setup.scratch.path().join("parse-store");
    let mut out = Vec::with_capacity(cases.len());
    for case in cases {
        let what = format!("buildvise parse for {}/{}", case.toolchain, case.id);
        let args = case.parse_args()?;
        let mut texts = Vec::with_capacity(DETAILS.len());
        for detail in DETAILS {
            // `--mcp`: hints worded as the MCP tool words them, so this is what an agent reads.
            let output = run_ok(setup.buildvise(&store).args(&args).args(["--mcp", "--detail", detail]), &what)?;
            texts.push(String::from_utf8_lossy(&output.stdout).into_owned());
        }
        let output = run_ok(setup.buildvise(&store).args(&args).arg("--json"), &what)?;
        let json: serde_json::Value =
            serde_json::from_slice(&output.stdout).with_context(|| format!("{what}: --json printed no JSON"))?;
        let count = |key: &str| json[key].as_array().map_or(0, Vec::len);
        let key = (case.toolchain.clone(), case.id.clone());
        let ideal_text = ideal.get(&key).with_context(|| format!("score.py wrote no ideal answer for {key:?}"))?;
        out.push(CaseTokens {
            toolchain: case.toolchain.clone(),
            id: case.id.clone(),
            tool: case.tool.clone(),
            failing: !case.success,
            diagnostics: count("errors") + count("warnings"),
            raw: counter.count(&String::from_utf8_lossy(&case.raw_log()?)),
            ideal: counter.count(ideal_text),
            summary: counter.count(&texts[0]),
            standard: counter.count(&texts[1]),
            standard_chars: texts[1].chars().count(),
            full: counter.count(&texts[2]),
            frame: counter.count(&frame(&texts[1])),
        });
    }
    Ok(out)
}

fn chars_per_token(c: &CaseTokens) -> f64 {
    c.standard_chars as f64 / c.standard.max(1) as f64
}

/// The status line (the first) and the hint lines, as MCP words them: the `log startLine N
/// lineCount M` call, or `all: {…}` naming the call that lists everything.
fn frame(standard: &str) -> String {
    let mut lines = standard.lines();
    let mut out: String = lines.next().unwrap_or_default().to_string();
    for line in lines.filter(|l| l.starts_with("log startLine ") || l.starts_with("all: {")) {
        out.push('\n');
        out.push_str(line);
    }
    out
}

/// Adds the token figures and the per-toolchain and per-case tables.
pub fn report(report: &mut Report, cases: &[CaseTokens], server: &Server) -> anyhow::Result<()> {
    let counter = Counter::new()?;
    let medians = |pick: &dyn Fn(&CaseTokens) -> f64, only: &dyn Fn(&CaseTokens) -> bool| {
        median(&cases.iter().filter(|c| only(c)).map(pick).collect::<Vec<_>>())
    };
    let all = |_: &CaseTokens| true;
    report.figures.push(Figure::info(
        SECTION,
        format!("median raw / ideal / summary / standard / full, {} cases", cases.len()),
        format!(
            "{} / {} / {} / {} / {}",
            num(medians(&|c| c.raw as f64, &all), ""),
            num(medians(&|c| c.ideal as f64, &all), ""),
            num(medians(&|c| c.summary as f64, &all), ""),
            num(medians(&|c| c.standard as f64, &all), ""),
            num(medians(&|c| c.full as f64, &all), ""),
        ),
    ));

    let failing = |c: &CaseTokens| c.failing;
    let failing_count = cases.iter().filter(|c| c.failing).count();
    report.figures.push(Figure::at_most(
        SECTION,
        format!("median standard/ideal, failing runs (all {failing_count})"),
        medians(&|c| c.standard_over_ideal(), &failing),
        MAX_MEDIAN_OVER_IDEAL,
        "×",
        STANDARD_REMEDY,
    ));
    report.figures.push(Figure::info(
        SECTION,
        "median standard − ideal, failing runs",
        num(medians(&|c| c.standard as f64 - c.ideal as f64, &failing), "tokens"),
    ));
    report.figures.push(Figure::info(
        SECTION,
        "median status line + hint of standard, failing runs",
        num(medians(&|c| c.frame as f64, &failing), "tokens"),
    ));
    let mut by_toolchain: BTreeMap<&str, Vec<&CaseTokens>> = BTreeMap::new();
    for c in cases {
        by_toolchain.entry(&c.toolchain).or_default().push(c);
    }
    for (toolchain, group) in &by_toolchain {
        let ratios: Vec<f64> = group.iter().filter(|c| c.failing).map(|c| c.standard_over_ideal()).collect();
        report.figures.push(Figure::at_most(
            SECTION,
            format!("median standard/ideal, failing {toolchain} runs ({})", ratios.len()),
            median(&ratios),
            MAX_STANDARD_OVER_IDEAL,
            "×",
            "Same cause as for all failing runs.",
        ));
    }

    let Some(largest) = cases.iter().max_by_key(|c| c.standard) else { return Ok(()) };
    // Only answers big enough for the budget to matter say how dense text gets.
    let lowest_ratio =
        cases.iter().filter(|c| c.standard > 500).map(chars_per_token).fold(chars_per_token(largest), f64::min);
    report.figures.push(Figure::at_most(
        SECTION,
        format!("largest standard answer ({}/{})", largest.toolchain, largest.id),
        largest.standard as f64,
        MAX_STANDARD,
        "tokens",
        &format!(
            "The render budgets the standard answer in characters (engine/src/render/exec.rs); this \
             answer is {} characters for {} tokens ({:.2} characters per token: paths and code are \
             dense). A budget of about {} characters for the whole answer, the lines counting the \
             rest included (the lowest density seen in answers over 500 tokens is {:.2}), or \
             counting tokens, would close it.",
            largest.standard_chars,
            largest.standard,
            chars_per_token(largest),
            (MAX_STANDARD * lowest_ratio * 0.95) as usize,
            lowest_ratio,
        ),
    ));

    let with_diagnostics: Vec<&CaseTokens> = cases.iter().filter(|c| c.diagnostics > 0).collect();
    let over: Vec<&&CaseTokens> =
        with_diagnostics.iter().filter(|c| c.summary_over_standard() > MAX_SUMMARY_OVER_STANDARD).collect();
    let worst = with_diagnostics.iter().max_by(|a, b| a.summary_over_standard().total_cmp(&b.summary_over_standard()));
    report.figures.push(Figure::check(
        SECTION,
        format!("summary/standard on cases with diagnostics ({})", with_diagnostics.len()),
        match worst {
            Some(w) => {
                format!("{} over; worst {} ({}/{})", over.len(), num(w.summary_over_standard(), "×"), w.toolchain, w.id)
            }
            None => "no case".into(),
        },
        format!("≤ {} on every case", num(MAX_SUMMARY_OVER_STANDARD, "×")),
        over.is_empty(),
        || {
            let names: Vec<String> = over
                .iter()
                .map(|c| format!("{}/{} ({})", c.toolchain, c.id, num(c.summary_over_standard(), "×")))
                .collect();
            format!("{} cases over: {}. {SUMMARY_REMEDY}", over.len(), names.join(", "))
        },
    ));

    let schema = counter.count(&server.tool_json) as f64;
    let whole = counter.count(&server.tool_whole_json);
    report.figures.push(
        Figure::at_most(
            SECTION,
            "`build` entry of tools/list as the model reads it (name, description, input schema)",
            schema,
            MAX_SCHEMA,
            "tokens",
            "Trim src/mcp/schema.rs: the tool description and the per-property descriptions are the \
             only free text; every other token is JSON Schema structure.",
        )
        .beside(format!("{whole} with the title, annotations and output schema clients read")),
    );
    let instructions = counter.count(&server.instructions);
    report.figures.push(Figure::info(
        SECTION,
        "server instructions (once per session)",
        format!("{instructions} tokens"),
    ));
    let tools = counter.count(&server.tools_json);
    report.figures.push(
        Figure::at_most(
            SECTION,
            "tools/list `tools` array as the model reads it + server instructions",
            (tools + instructions) as f64,
            MAX_TOOLS_AND_INSTRUCTIONS,
            "tokens",
            "Every property of the schema and every word of the descriptions and instructions sits in \
             the model's context on every turn: measure each one's cost and merge or drop what a model \
             can do without (src/mcp/schema.rs).",
        )
        .beside(format!("tools {tools}, instructions {instructions}")),
    );

    let mut table = Table::new(
        "Tokens per toolchain",
        "Medians over the toolchain's cases; ratios are medians of per-case ratios. std/ideal counts \
         failing runs only; raw/std all runs.",
        &[
            "toolchain",
            "cases",
            "raw",
            "ideal",
            "summary",
            "standard",
            "full",
            "std/ideal (failing)",
            "raw/std",
            "max std",
        ],
    );
    for (toolchain, group) in &by_toolchain {
        let pick = |f: &dyn Fn(&CaseTokens) -> f64| median(&group.iter().map(|c| f(c)).collect::<Vec<_>>());
        let failing_ratios: Vec<f64> = group.iter().filter(|c| c.failing).map(|c| c.standard_over_ideal()).collect();
        let raw_over: Vec<f64> = group.iter().map(|c| c.raw_over_standard()).collect();
        report.figures.push(Figure::info(
            SECTION,
            format!("median raw/standard, {toolchain}"),
            num(median(&raw_over), "×"),
        ));
        table.rows.push(vec![
            toolchain.to_string(),
            group.len().to_string(),
            num(pick(&|c| c.raw as f64), ""),
            num(pick(&|c| c.ideal as f64), ""),
            num(pick(&|c| c.summary as f64), ""),
            num(pick(&|c| c.standard as f64), ""),
            num(pick(&|c| c.full as f64), ""),
            num(median(&failing_ratios), "×"),
            num(median(&raw_over), "×"),
            group.iter().map(|c| c.standard).max().unwrap_or(0).to_string(),
        ]);
    }
    report.tables.push(table);

    let mut table = Table::new(
        "Tokens per case",
        "outcome: the run's expected outcome; diags: errors and warnings buildvise reported.",
        &["case", "outcome", "diags", "raw", "ideal", "summary", "standard", "full", "std/ideal", "sum/std"],
    );
    for c in cases {
        table.rows.push(vec![
            format!("{}/{}", c.toolchain, c.id),
            if c.failing { "fail" } else { "ok" }.into(),
            c.diagnostics.to_string(),
            c.raw.to_string(),
            c.ideal.to_string(),
            c.summary.to_string(),
            c.standard.to_string(),
            c.full.to_string(),
            num(c.standard_over_ideal(), "×"),
            num(c.summary_over_standard(), "×"),
        ]);
    }
    report.tables.push(table);
    Ok(())
}

/// The table of the project's own captured cases (`tests/fixtures/cases`), tool by tool: the tools
/// the shared corpus does not cover get their figures here.
pub fn report_captured(report: &mut Report, cases: &[CaseTokens]) {
    let mut by_tool: BTreeMap<&str, Vec<&CaseTokens>> = BTreeMap::new();
    for c in cases {
        by_tool.entry(&c.tool).or_default().push(c);
    }
    let mut table = Table::new(
        "Tokens per tool, captured cases",
        "The project's own captures (`tests/fixtures/cases`), parsed like the corpus; ideal answers from \
         `score.py --corpus tests/fixtures/cases --ideal DIR`. Medians over the tool's cases, failing or not.",
        &["tool", "cases", "failing", "raw", "ideal", "standard", "std/ideal", "max std/ideal"],
    );
    for (tool, group) in &by_tool {
        let pick = |f: &dyn Fn(&CaseTokens) -> f64| median(&group.iter().map(|c| f(c)).collect::<Vec<_>>());
        let worst = group.iter().map(|c| c.standard_over_ideal()).fold(0.0, f64::max);
        table.rows.push(vec![
            tool.to_string(),
            group.len().to_string(),
            group.iter().filter(|c| c.failing).count().to_string(),
            num(pick(&|c| c.raw as f64), ""),
            num(pick(&|c| c.ideal as f64), ""),
            num(pick(&|c| c.standard as f64), ""),
            num(pick(&|c| c.standard_over_ideal()), "×"),
            num(worst, "×"),
        ]);
    }
    report.tables.push(table);
}

const STANDARD_REMEDY: &str = "The excess is a fixed cost per answer, not per diagnostic: compare the \
     median excess with the median status line + hint (figures above). The ideal answer spends about 4 \
     tokens on status (`FAIL exit 1`); a standard answer adds the run id (about 3 tokens, needed for any \
     `log` call) and, when the first error spans several log lines, the `log startLine N lineCount M` call \
     to them (about 9). What remains is the detail that decides a fix, which the ideal answers leave out: \
     rustc's primary label (`mismatched types (expected `u32`, found `u64`)`) and the values a failed \
     test compared (`(left 6; right 7)`). Dropping that detail would cost the agent a `log` call.";
const SUMMARY_REMEDY: &str = "The one case over is a run with a single short diagnostic (13 tokens): the \
     summary's status line alone (status, exit code, the count and the run id, all part of a summary) is 11 \
     tokens against a standard answer of 21. Closing it would mean dropping a field a summary exists to \
     give, so it is left as is; every case with two or more diagnostics is within the goal.";

#[cfg(test)]
mod tests {
    use super::Counter;

    #[test]
    fn the_frame_is_the_status_line_and_hints() {
        let text = "FAIL exit 1 · run parsed\nsrc/a.rs:1:2 E0308 mismatched types\n\
                    src/log.rs:1 E0425 cannot find value `log` in this scope\nlog startLine 1 lineCount 4\n";
        assert_eq!(super::frame(text), "FAIL exit 1 · run parsed\nlog startLine 1 lineCount 4");
        let listed = "FAIL exit 1 · run parsed\na.rs:1 x\nall: {\"action\":\"log\",\"detail\":\"full\"}\n";
        assert_eq!(super::frame(listed), "FAIL exit 1 · run parsed\nall: {\"action\":\"log\",\"detail\":\"full\"}");
    }

    #[test]
    fn counts_o200k_tokens() {
        let counter = Counter::new().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(counter.count(""), 0);
        assert_eq!(counter.count("hello world"), 2);
    }
}
