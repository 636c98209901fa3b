//! `runs` and `diff`, for a person at a terminal.
//!
//! ```text
//! run       tool         status    took  age  result                     compared
//! kipomeru  cargo.check  exit 101  1.2s  2m   2 errors                   bafotemu: 1 fixed, 1 new, 1 still
//! bafotemu  cargo.check  exit 101  1.1s  3m   2 errors, 1 warning
//! tesibopa  pytest.run   exit 1    0.8s  5m   3 passed, 2 failed
//!   flaky: tests/test_a.py::test_x (failed 3 of the last 5 runs)
//! ```

use super::exec::{Cut, diagnostic_line};
use super::{Rendered, plural};
use crate::history::{Delta, ListedRun, Problem};
use crate::store::{RunMeta, RunStatus, Tally};
use serde_json::json;
use std::fmt::Write;

/// The runs `runs` lists, newest first; `now` in ms since the epoch, for their age.
pub fn render_runs(runs: &[ListedRun], now: u64) -> Rendered {
    let structured = serde_json::to_value(runs).unwrap_or_default();
    if runs.is_empty() {
        return Rendered { text: "no runs\n".to_string(), structured };
    }
    let header = ["run", "tool", "status", "took", "age", "result", "compared", "cwd"].map(String::from).to_vec();
    let mut rows = vec![header];
    let mut after_row: Vec<Vec<String>> = vec![Vec::new()];
    for run in runs {
        let m = &run.meta;
        let status = match (m.status, m.exit_code) {
            (RunStatus::Exited, Some(code)) => format!("exit {code}"),
            (status, _) => status_words(status).to_string(),
        };
        let took = m.duration_ms().map_or_else(|| "-".to_string(), |ms| format!("{:.1}s", ms as f64 / 1000.0));
        let vs = m.tally.as_ref().and_then(|t| t.vs.as_ref());
        let compared = vs.map_or(String::new(), |vs| format!("{}: {}", vs.which(), vs.counts()));
        let result = m.tally.as_ref().map_or_else(|| "-".to_string(), tally_words);
        rows.push(vec![
            m.id.clone(),
            m.tool.clone(),
            status,
            took,
            age(now.saturating_sub(m.started_ms)),
            result,
            compared,
            m.cwd.clone(),
        ]);
        after_row.push(
            run.flaky
                .iter()
                .map(|f| format!("  flaky: {} (failed {} of the last {} runs)", f.test, f.failed, f.runs))
                .collect(),
        );
    }
    let mut text = String::new();
    for (row, extra) in table(&rows).into_iter().zip(after_row) {
        let _ = writeln!(text, "{row}");
        for line in extra {
            let _ = writeln!(text, "{line}");
        }
    }
    Rendered { text, structured }
}

/// How a run ended when there is no exit code to show. buildvise's own failure reads `error`, as
/// `failed` is what the result column says of a tool that failed.
fn status_words(status: RunStatus) -> &'static str {
    match status {
        RunStatus::Running => "running",
        RunStatus::Exited => "exited",
        RunStatus::Killed => "killed",
        RunStatus::TimedOut => "timed out",
        RunStatus::Cancelled => "cancelled",
        RunStatus::Failed => "error",
        RunStatus::Damaged => "damaged",
    }
}

/// `2 errors, 1 warning`, `3 passed, 2 failed`, or `ok`.
fn tally_words(t: &Tally) -> String {
    let mut parts = Vec::new();
    if t.errors > 0 {
        parts.push(plural(t.errors, "error", "errors"));
    }
    if t.warnings > 0 {
        parts.push(plural(t.warnings, "warning", "warnings"));
    }
    if let Some([passed, failed]) = t.tests {
        parts.push(format!("{passed} passed"));
        if failed > 0 {
            parts.push(format!("{failed} failed"));
        }
    }
    if t.test_errors > 0 {
        // As the run's answer counts its tests: pytest's errors are not failures.
        parts.push(plural(t.test_errors as usize, "error", "errors"));
    }
    if parts.is_empty() {
        parts.push(if t.success { "ok" } else { "failed" }.to_string());
    }
    parts.join(", ")
}

/// Rows as aligned columns, two spaces apart; the last column is not padded.
fn table(rows: &[Vec<String>]) -> Vec<String> {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| rows.iter().map(|r| r.get(c).map_or(0, |s| s.chars().count())).max().unwrap_or(0))
        .collect();
    rows.iter()
        .map(|row| {
            let mut line = String::new();
            for (c, cell) in row.iter().enumerate() {
                if c + 1 < row.len() {
                    let _ = write!(line, "{cell:<width$}  ", width = widths[c]);
                } else {
                    line.push_str(cell);
                }
            }
            line.trim_end().to_string()
        })
        .collect()
}

fn age(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m", s / 60),
        3600..86400 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86400),
    }
}

/// `buildvise diff A B`: the counts, then each problem fixed, new, still there and not run.
pub fn render_diff(before: &RunMeta, after: &RunMeta, delta: &Delta<'_>) -> Rendered {
    let mut text = String::new();
    let counts = [(delta.fixed.len(), "fixed"), (delta.new.len(), "new"), (delta.still.len(), "still")];
    let mut said: Vec<String> = counts.iter().map(|(n, w)| format!("{n} {w}")).collect();
    if !delta.not_run.is_empty() {
        said.push(format!("{} not run (the later run stopped early)", delta.not_run.len()));
    }
    let _ = writeln!(text, "from {} to {}: {}", before.id, after.id, said.join(", "));
    if before.tool != after.tool {
        let _ =
            writeln!(text, "note: {} and {} are different tools, whose problems never match", before.tool, after.tool);
    }
    let sections = [("fixed", &delta.fixed), ("new", &delta.new), ("still", &delta.still), ("not run", &delta.not_run)];
    for (title, problems) in sections {
        if problems.is_empty() {
            continue;
        }
        let _ = writeln!(text, "{title}:");
        for problem in problems {
            let line = match problem {
                Problem::Diagnostic(_, d) => diagnostic_line(d, Cut::WHOLE),
                Problem::Test(test) => test.to_string(),
            };
            let _ = writeln!(text, "  {line}");
        }
    }
    let owned = |problems: &[Problem<'_>]| problems.iter().map(|p| p.owned()).collect::<Vec<_>>();
    let structured = json!({
        "from": before.id,
        "to": after.id,
        "fixed": owned(&delta.fixed),
        "new": owned(&delta.new),
        "still": owned(&delta.still),
        "notRun": owned(&delta.not_run),
    });
    Rendered { text, structured }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::Flaky;
    use crate::store::Versus;

    const NOW: u64 = 1_750_000_000_000;

    fn run(
        id: &str,
        tool: &str,
        status: RunStatus,
        exit_code: Option<i32>,
        ago_s: u64,
        tally: Option<Tally>,
    ) -> ListedRun {
        let mut meta = RunMeta::starting(id, tool, "", &[], "/p/app");
        meta.started_ms = NOW - ago_s * 1000;
        meta.ended_ms = (status != RunStatus::Running).then_some(meta.started_ms + 1234);
        meta.status = status;
        meta.exit_code = exit_code;
        meta.tally = tally;
        ListedRun { meta, flaky: Vec::new() }
    }

    fn tally(success: bool, errors: usize, warnings: usize, tests: Option<[u64; 2]>) -> Option<Tally> {
        Some(Tally { success, errors, warnings, tests, test_errors: 0, vs: None })
    }

    #[test]
    fn runs_have_a_header_row_and_singular_counts() {
        let mut compared = run("kipomeru", "cargo.check", RunStatus::Exited, Some(101), 125, tally(false, 1, 1, None));
        if let Some(t) = compared.meta.tally.as_mut() {
            t.vs = Some(Versus { run: "bafotemu".into(), fixed: 1, new: 1, ..Versus::default() });
        }
        let mut flaky =
            run("tesibopa", "pytest.run", RunStatus::Exited, Some(1), 300, tally(false, 0, 0, Some([1, 1])));
        flaky.flaky = vec![Flaky { test: "tests/test_a.py::test_x".into(), failed: 2, runs: 3 }];
        // pytest's errors in setup are said as its answer says them, not as failures.
        if let Some(t) = flaky.meta.tally.as_mut() {
            t.test_errors = 6;
        }
        let runs = [
            run("lurafeno", "cargo.test", RunStatus::Running, None, 3, None),
            compared,
            run("bafotemu", "cargo.check", RunStatus::Exited, Some(101), 180, tally(false, 2, 3, None)),
            flaky,
            run("modeguka", "npm.test", RunStatus::TimedOut, None, 7200, tally(false, 0, 0, Some([12, 0]))),
            run("sipanute", "npm.build", RunStatus::Failed, None, 90_000, None),
            run("wonelapi", "cargo.build", RunStatus::Exited, Some(0), 200_000, tally(true, 0, 0, None)),
        ];
        insta::assert_snapshot!(render_runs(&runs, NOW).text);
    }
}
