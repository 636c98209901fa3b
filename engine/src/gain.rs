//! What buildvise saved an agent, in tokens: each counted run's raw log against the answers the
//! agent got about it, added up in all, by tool, by project and by day; and `--since`, the start
//! of the period a person asks about. Counting is the application's (it holds the tokenizer);
//! this module only adds up, so that the sums can be tested on made-up runs.

use chrono::{DateTime, NaiveDate, TimeZone};
use serde::Serialize;
use std::collections::BTreeMap;

/// One run, counted: where it belongs, and its tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CountedRun {
    pub tool: String,
    /// The project root of the directory it ran in.
    pub project: String,
    /// The day it started, `YYYY-MM-DD`, in the local time zone.
    pub day: String,
    /// o200k tokens of its raw log: what the agent would have read running the command itself.
    pub raw: u64,
    /// o200k tokens of every answer the agent got about it: the exec's, and each `log` read.
    pub answers: u64,
}

/// Runs and their tokens, in all or for one tool, project or day.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Tokens {
    pub runs: u64,
    pub raw_tokens: u64,
    pub answer_tokens: u64,
    /// Raw less answers: negative when reading a run cost more than its log (pages of a short log).
    pub saved_tokens: i64,
    /// Saved as a percentage of raw, to one decimal; 0 when nothing was raw.
    pub saved_percent: f64,
}

impl Tokens {
    fn add(&mut self, run: &CountedRun) {
        self.runs += 1;
        self.raw_tokens += run.raw;
        self.answer_tokens += run.answers;
        self.saved_tokens =
            i64::try_from(self.raw_tokens).unwrap_or(i64::MAX) - i64::try_from(self.answer_tokens).unwrap_or(i64::MAX);
        self.saved_percent = if self.raw_tokens == 0 {
            0.0
        } else {
            (self.saved_tokens as f64 * 1000.0 / self.raw_tokens as f64).round() / 10.0
        };
    }
}

/// One row of a breakdown: a tool, a project or a day, and its tokens.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Group {
    pub name: String,
    #[serde(flatten)]
    pub tokens: Tokens,
}

/// What `gain` reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Gain {
    /// The start of the period, in ms since the epoch; absent: every stored run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since_ms: Option<u64>,
    /// The same start as a person reads it (`2026-11-01 00:00`, local time), for the text.
    #[serde(skip)]
    pub since: Option<String>,
    #[serde(flatten)]
    pub total: Tokens,
    /// Finished runs of the period with no answer on record (made by a buildvise from before
    /// answers were recorded, or whose process ended before it answered): left out of the sums.
    pub unrecorded: u64,
    /// Most saved first.
    pub by_tool: Vec<Group>,
    /// Most saved first.
    pub by_project: Vec<Group>,
    /// Oldest first.
    pub by_day: Vec<Group>,
}

/// Adds up `runs`, counted over the period from `since` (in ms since the epoch, and as a person
/// reads it).
pub fn aggregate(runs: &[CountedRun], since: Option<(u64, String)>, unrecorded: u64) -> Gain {
    let mut total = Tokens::default();
    let (mut tools, mut projects, mut days) = (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
    for run in runs {
        total.add(run);
        for (groups, name) in [(&mut tools, &run.tool), (&mut projects, &run.project), (&mut days, &run.day)] {
            groups.entry(name.clone()).or_insert_with(Tokens::default).add(run);
        }
    }
    let rows = |groups: BTreeMap<String, Tokens>| -> Vec<Group> {
        groups.into_iter().map(|(name, tokens)| Group { name, tokens }).collect()
    };
    let most_saved = |mut groups: Vec<Group>| {
        // Stable: equal savings stay in name order.
        groups.sort_by_key(|g| std::cmp::Reverse(g.tokens.saved_tokens));
        groups
    };
    let (since_ms, since) = since.unzip();
    Gain {
        since_ms,
        since,
        total,
        unrecorded,
        by_tool: most_saved(rows(tools)),
        by_project: most_saved(rows(projects)),
        by_day: rows(days),
    }
}

/// A `--since` that is neither a date nor a duration.
#[derive(Debug, thiserror::Error)]
#[error("{0:?} is neither a date nor a duration; send a date such as 2026-11-01 or a duration such as 7d, 24h or 30m")]
pub struct BadSince(pub String);

/// The start of the period `text` names, in ms since the epoch: a date (`2026-11-01`, from its
/// midnight in `now`'s time zone) or a duration back from `now` (`30m`, `24h`, `7d`, `2w`).
pub fn since_ms<Tz: TimeZone>(text: &str, now: &DateTime<Tz>) -> Result<u64, BadSince> {
    let bad = || BadSince(text.to_string());
    let text = text.trim();
    let start = if let Ok(date) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        let midnight = date.and_hms_opt(0, 0, 0).ok_or_else(bad)?;
        // A zone whose clocks skip midnight that day starts the day at the first instant it has.
        match now.timezone().from_local_datetime(&midnight).earliest() {
            Some(start) => start.timestamp_millis(),
            None => now.timezone().from_utc_datetime(&midnight).timestamp_millis(),
        }
    } else {
        let split = text.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
        let (digits, unit) = text.split_at(split);
        let n: i64 = digits.parse().map_err(|_| bad())?;
        let unit_ms: i64 = match unit {
            "m" => 60_000,
            "h" => 3_600_000,
            "d" => 86_400_000,
            "w" => 7 * 86_400_000,
            _ => return Err(bad()),
        };
        now.timestamp_millis().saturating_sub(n.saturating_mul(unit_ms))
    };
    Ok(u64::try_from(start).unwrap_or(0))
}

/// The day `ms` (since the epoch) falls on in `zone`, as `YYYY-MM-DD`.
pub fn day<Tz: TimeZone>(ms: u64, zone: &Tz) -> String
where
    Tz::Offset: std::fmt::Display,
{
    local(ms, zone, "%Y-%m-%d")
}

/// The minute `ms` (since the epoch) falls in, in `zone`, as `YYYY-MM-DD HH:MM`.
pub fn minute<Tz: TimeZone>(ms: u64, zone: &Tz) -> String
where
    Tz::Offset: std::fmt::Display,
{
    local(ms, zone, "%Y-%m-%d %H:%M")
}

fn local<Tz: TimeZone>(ms: u64, zone: &Tz, format: &str) -> String
where
    Tz::Offset: std::fmt::Display,
{
    let ms = i64::try_from(ms).unwrap_or(i64::MAX);
    match zone.timestamp_millis_opt(ms).earliest() {
        Some(at) => at.format(format).to_string(),
        None => "unknown".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{FixedOffset, Utc};

    fn run(tool: &str, project: &str, day: &str, raw: u64, answers: u64) -> CountedRun {
        CountedRun { tool: tool.into(), project: project.into(), day: day.into(), raw, answers }
    }

    #[test]
    fn sums_in_all_and_by_tool_project_and_day() {
        let runs = [
            run("cargo.test", "/p/a", "2026-11-02", 1000, 100),
            run("cargo.test", "/p/b", "2026-11-01", 3000, 200),
            run("pytest.run", "/p/a", "2026-11-02", 500, 50),
            run("npm.test", "/p/b", "2026-11-03", 40, 90),
        ];
        let gain = aggregate(&runs, Some((7, "1970-01-01 00:00".into())), 2);
        let tokens = |runs, raw, answers, saved, percent| Tokens {
            runs,
            raw_tokens: raw,
            answer_tokens: answers,
            saved_tokens: saved,
            saved_percent: percent,
        };
        assert_eq!(gain.total, tokens(4, 4540, 440, 4100, 90.3));
        assert_eq!((gain.since_ms, gain.unrecorded), (Some(7), 2));
        let names = |groups: &[Group]| groups.iter().map(|g| g.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&gain.by_tool), ["cargo.test", "pytest.run", "npm.test"], "most saved first");
        assert_eq!(gain.by_tool[0].tokens, tokens(2, 4000, 300, 3700, 92.5));
        assert_eq!(gain.by_tool[2].tokens, tokens(1, 40, 90, -50, -125.0), "a loss is shown as one");
        assert_eq!(names(&gain.by_project), ["/p/b", "/p/a"]);
        assert_eq!(gain.by_project[1].tokens, tokens(2, 1500, 150, 1350, 90.0));
        assert_eq!(names(&gain.by_day), ["2026-11-01", "2026-11-02", "2026-11-03"], "oldest first");
        assert_eq!(gain.by_day[1].tokens, tokens(2, 1500, 150, 1350, 90.0));
    }

    #[test]
    fn nothing_counted_is_zero_not_a_division_by_zero() {
        let gain = aggregate(&[], None, 0);
        assert_eq!(gain.total, Tokens::default());
        assert!(gain.by_tool.is_empty() && gain.by_project.is_empty() && gain.by_day.is_empty());
        let json = serde_json::to_value(&gain).unwrap();
        assert_eq!(json["savedPercent"], 0.0);
        assert!(json.get("sinceMs").is_none());
    }

    #[test]
    fn the_json_field_names_are_the_documented_ones() {
        let gain = aggregate(&[run("t", "/p", "2026-11-01", 10, 4)], Some((1, "1970-01-01 00:00".into())), 0);
        let json = serde_json::to_value(&gain).unwrap();
        let keys: Vec<&str> = json.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "sinceMs",
                "runs",
                "rawTokens",
                "answerTokens",
                "savedTokens",
                "savedPercent",
                "unrecorded",
                "byTool",
                "byProject",
                "byDay"
            ]
        );
        let row: Vec<&str> = json["byTool"][0].as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(row, ["name", "runs", "rawTokens", "answerTokens", "savedTokens", "savedPercent"]);
    }

    #[test]
    fn since_reads_durations_back_from_now() {
        let now = Utc.with_ymd_and_hms(2026, 11, 8, 12, 0, 0).unwrap();
        let at = |text: &str| since_ms(text, &now).unwrap();
        let now_ms = now.timestamp_millis() as u64;
        assert_eq!(at("30m"), now_ms - 30 * 60_000);
        assert_eq!(at("24h"), now_ms - 86_400_000);
        assert_eq!(at("7d"), now_ms - 7 * 86_400_000);
        assert_eq!(at("2w"), now_ms - 14 * 86_400_000);
        assert_eq!(at("0d"), now_ms);
        assert_eq!(at(" 7d "), at("7d"));
        assert_eq!(at("99999999999w"), 0, "a duration before the epoch is the epoch");
    }

    #[test]
    fn since_reads_a_date_as_its_local_midnight() {
        let now = Utc.with_ymd_and_hms(2026, 11, 8, 12, 0, 0).unwrap();
        let utc_midnight = Utc.with_ymd_and_hms(2026, 11, 1, 0, 0, 0).unwrap().timestamp_millis() as u64;
        assert_eq!(since_ms("2026-11-01", &now).unwrap(), utc_midnight);
        let paris = now.with_timezone(&FixedOffset::east_opt(3600).unwrap());
        assert_eq!(since_ms("2026-11-01", &paris).unwrap(), utc_midnight - 3_600_000);
    }

    #[test]
    fn since_refuses_what_is_neither() {
        let now = Utc.with_ymd_and_hms(2026, 11, 8, 12, 0, 0).unwrap();
        for text in ["", "7", "d", "7x", "-7d", "7 d", "1.5h", "2026-13-01", "2026-11", "yesterday"] {
            let err = since_ms(text, &now).unwrap_err().to_string();
            assert!(err.contains("neither a date nor a duration") && err.contains("7d"), "{text:?}: {err}");
        }
    }

    #[test]
    fn a_day_is_the_date_in_the_zone() {
        let ms = Utc.with_ymd_and_hms(2026, 11, 1, 23, 30, 0).unwrap().timestamp_millis() as u64;
        assert_eq!(day(ms, &Utc), "2026-11-01");
        assert_eq!(day(ms, &FixedOffset::east_opt(3600).unwrap()), "2026-11-02");
        assert_eq!(minute(ms, &FixedOffset::east_opt(3600).unwrap()), "2026-11-02 00:30");
    }
}
