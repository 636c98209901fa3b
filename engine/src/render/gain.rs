//! `gain`, for a person at a terminal: the sums, then the tokens saved by tool, by project and by
//! day, each row with a bar as long as its saving against the section's largest.
//!
//! ```text
//! saved 1.19M of 1.23M tokens (96.9%) in 42 runs since 2026-11-01 00:00
//!
//! tool         runs    raw  answers  saved
//! cargo.test     20   900k    20.1k  97.8%  ████████████████
//! cargo.build    12   250k    12.0k  95.2%  ████▍
//! ```

use super::Rendered;
use crate::gain::{Gain, Group};
use std::fmt::Write;

/// Rows a tool or project section shows; the rest are counted in one line.
const MOST_ROWS: usize = 10;
/// Days the day section shows, the latest.
const MOST_DAYS: usize = 14;
/// Cells of the longest bar.
const BAR_CELLS: usize = 16;
/// A cell's eighths, from one to seven.
const EIGHTHS: [char; 7] = ['▏', '▎', '▍', '▌', '▋', '▊', '▉'];

/// How the text is shown: bars coloured (on a terminal), and the home directory written `~`.
#[derive(Debug, Clone, Copy, Default)]
pub struct GainStyle<'a> {
    pub colour: bool,
    pub home: Option<&'a str>,
}

/// `gain`'s answer: the text above, and the [`Gain`] itself as JSON.
pub fn render_gain(gain: &Gain, style: GainStyle<'_>) -> Rendered {
    let structured = serde_json::to_value(gain).unwrap_or_default();
    let t = &gain.total;
    let since = gain.since.as_ref().map(|s| format!(" since {s}")).unwrap_or_default();
    let mut text = if t.runs == 0 {
        format!("no runs counted{since}\n")
    } else {
        format!(
            "saved {} of {} tokens ({:.1}%) in {} run{}{since}\n",
            signed(t.saved_tokens),
            short(t.raw_tokens),
            t.saved_percent,
            t.runs,
            if t.runs == 1 { "" } else { "s" },
        )
    };
    if gain.unrecorded > 0 {
        let _ = writeln!(
            text,
            "{} finished run{} left out: no answer on record",
            gain.unrecorded,
            if gain.unrecorded == 1 { "" } else { "s" }
        );
    }
    if t.runs == 0 {
        return Rendered { text, structured };
    }
    let home = |name: &str| match style.home.and_then(|h| name.strip_prefix(h)) {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => format!("~{rest}"),
        _ => name.to_string(),
    };
    let first = |groups: &[Group]| groups.iter().take(MOST_ROWS).cloned().collect::<Vec<_>>();
    let more = |groups: &[Group], what: &str| {
        (groups.len() > MOST_ROWS).then(|| format!("… {} more {what}", groups.len() - MOST_ROWS))
    };
    let projects: Vec<Group> =
        first(&gain.by_project).into_iter().map(|g| Group { name: home(&g.name), ..g }).collect();
    let days = &gain.by_day[gain.by_day.len().saturating_sub(MOST_DAYS)..];
    let earlier = gain.by_day.len() - days.len();
    let sections = [
        ("tool", first(&gain.by_tool), more(&gain.by_tool, "tools")),
        ("project", projects, more(&gain.by_project, "projects")),
        ("day", days.to_vec(), (earlier > 0).then(|| format!("… {earlier} earlier days"))),
    ];
    for (title, groups, more) in sections {
        text.push('\n');
        section(&mut text, title, &groups, style.colour);
        if let Some(more) = more {
            let _ = writeln!(text, "{more}");
        }
    }
    Rendered { text, structured }
}

/// One breakdown as aligned columns, each row with its bar.
fn section(text: &mut String, title: &str, groups: &[Group], colour: bool) {
    let most = groups.iter().map(|g| g.tokens.saved_tokens).max().unwrap_or(0).max(1);
    let mut rows = vec![[title, "runs", "raw", "answers", "saved"].map(String::from)];
    for g in groups {
        let t = &g.tokens;
        rows.push([
            g.name.clone(),
            t.runs.to_string(),
            short(t.raw_tokens),
            short(t.answer_tokens),
            format!("{:.1}%", t.saved_percent),
        ]);
    }
    let width = |c: usize| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0);
    let widths: Vec<usize> = (0..5).map(width).collect();
    for (i, row) in rows.iter().enumerate() {
        let mut line = format!("{:<w$}", row[0], w = widths[0]);
        for (cell, w) in row.iter().zip(&widths).skip(1) {
            let _ = write!(line, "  {cell:>w$}");
        }
        if i > 0 {
            let bar = bar(groups[i - 1].tokens.saved_tokens, most);
            if !bar.is_empty() {
                line.push_str("  ");
                line.push_str(&if colour { format!("\x1b[32m{bar}\x1b[0m") } else { bar });
            }
        }
        let _ = writeln!(text, "{}", line.trim_end());
    }
}

/// A bar of `saved` against `most`, in eighths of a cell; none for a loss.
fn bar(saved: i64, most: i64) -> String {
    if saved <= 0 {
        return String::new();
    }
    let eighths = (saved as f64 / most as f64 * (BAR_CELLS * 8) as f64).round().max(1.0) as usize;
    let mut bar = "█".repeat(eighths / 8);
    if let Some(part) = (eighths % 8).checked_sub(1) {
        bar.push(EIGHTHS[part]);
    }
    bar
}

/// `987`, `1.23k`, `12.3k`, `123k`, `1.23M`: three figures at most.
fn short(n: u64) -> String {
    const UNITS: [(f64, &str); 3] = [(1e9, "G"), (1e6, "M"), (1e3, "k")];
    let Some((scale, unit)) = UNITS.iter().find(|(scale, _)| n as f64 >= *scale) else { return n.to_string() };
    let v = n as f64 / scale;
    let decimals = if v < 10.0 {
        2
    } else if v < 100.0 {
        1
    } else {
        0
    };
    format!("{v:.decimals$}{unit}")
}

/// [`short`], with a minus for a loss.
fn signed(n: i64) -> String {
    if n < 0 { format!("-{}", short(n.unsigned_abs())) } else { short(n.unsigned_abs()) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gain::{CountedRun, aggregate};

    fn run(tool: &str, project: &str, day: &str, raw: u64, answers: u64) -> CountedRun {
        CountedRun { tool: tool.into(), project: project.into(), day: day.into(), raw, answers }
    }

    fn report() -> Gain {
        let mut runs = vec![
            run("cargo.test", "/home/me/src/shop", "2026-11-01", 412_345, 9_120),
            run("cargo.test", "/home/me/src/shop", "2026-11-02", 380_100, 8_800),
            run("cargo.clippy", "/home/me/src/shop", "2026-11-02", 95_020, 2_310),
            run("pytest.run", "/home/me/src/etl", "2026-11-02", 12_900, 640),
            run("npm.test", "/srv/web", "2026-11-03", 60, 410),
        ];
        runs.extend((0..11).map(|i| run(&format!("ci.t{i:02}"), "/srv/web", "2026-11-03", 100 + i, 10)));
        aggregate(&runs, Some((0, "2026-11-01 00:00".into())), 3)
    }

    #[test]
    fn the_text_report() {
        let rendered = render_gain(&report(), GainStyle { colour: false, home: Some("/home/me") });
        insta::assert_snapshot!(rendered.text);
        assert!(!rendered.text.contains('\x1b'), "no colour unless asked");
        assert_eq!(rendered.structured["runs"], 16);
    }

    #[test]
    fn colour_only_wraps_the_bars() {
        let plain = render_gain(&report(), GainStyle::default()).text;
        let coloured = render_gain(&report(), GainStyle { colour: true, home: None }).text;
        assert_eq!(coloured.replace("\x1b[32m", "").replace("\x1b[0m", ""), plain);
        assert!(coloured.contains("\x1b[32m█"));
    }

    #[test]
    fn nothing_counted_says_so() {
        let empty = aggregate(&[], None, 2);
        assert_eq!(
            render_gain(&empty, GainStyle::default()).text,
            "no runs counted\n2 finished runs left out: no answer on record\n"
        );
    }

    #[test]
    fn numbers_keep_three_figures() {
        let shown: Vec<String> = [0, 999, 1_000, 1_234, 12_345, 123_456, 1_234_567, 98_765_432, 4_321_000_000]
            .into_iter()
            .map(short)
            .collect();
        assert_eq!(shown, ["0", "999", "1.00k", "1.23k", "12.3k", "123k", "1.23M", "98.8M", "4.32G"]);
        assert_eq!(signed(-1_500), "-1.50k");
    }

    #[test]
    fn bars_grow_in_eighths_and_a_loss_has_none() {
        assert_eq!(bar(100, 100).chars().count(), BAR_CELLS);
        assert_eq!(bar(50, 100), "█".repeat(BAR_CELLS / 2));
        assert_eq!(bar(1, 1_000_000), "▏", "any saving shows");
        assert_eq!(bar(-5, 100), "");
    }
}
