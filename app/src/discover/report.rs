//! What `discover` found, added up, and said: for a terminal in a few lines, or as JSON.

use super::{Client, Verdict};
use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The answer.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Discovery {
    /// Transcripts read, by client.
    pub transcripts: Transcripts,
    /// Shell commands found (and calls of buildvise's MCP tool).
    pub commands: u64,
    /// Commands that ran without buildvise although it would have run them.
    pub handled: Total,
    /// Of those, the ones judged by their words only, their directory being gone.
    pub judged_by_words: u64,
    /// The handled commands by their tool's command, the most output first.
    pub handled_top: Vec<Row>,
    /// Commands that went through buildvise already (`buildvise exec`, the MCP tool).
    pub through_buildvise: Total,
    /// Commands buildvise would leave as typed.
    pub unhandled: Total,
    /// The unhandled commands by their leading words, the most frequent first.
    pub unhandled_top: Vec<Row>,
    /// The folders read.
    pub looked_in: Vec<PathBuf>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Transcripts {
    pub claude: u64,
    pub codex: u64,
}

/// Commands and the o200k tokens of their output.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Total {
    pub count: u64,
    pub output_tokens: u64,
}

/// One group of commands: `cargo test`, run `count` times, whose output took `output_tokens`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Row {
    pub command: String,
    pub count: u64,
    pub output_tokens: u64,
}

/// The sums as commands come in.
#[derive(Default)]
pub(super) struct Tally {
    transcripts: Transcripts,
    judged_by_words: u64,
    through: Total,
    handled: HashMap<String, Total>,
    unhandled: HashMap<String, Total>,
    looked_in: Vec<PathBuf>,
}

impl Tally {
    pub fn looked_in(&mut self, root: &Path) {
        self.looked_in.push(root.to_path_buf());
    }

    pub fn transcript(&mut self, client: Client) {
        match client {
            Client::Claude => self.transcripts.claude += 1,
            Client::Codex => self.transcripts.codex += 1,
        }
    }

    pub fn add(&mut self, verdict: Verdict, tokens: usize) {
        let total = match verdict {
            Verdict::Through => &mut self.through,
            Verdict::Handled { key, by_words } => {
                self.judged_by_words += u64::from(by_words);
                self.handled.entry(key).or_default()
            }
            Verdict::Unhandled { key } => self.unhandled.entry(key).or_default(),
        };
        total.count += 1;
        total.output_tokens += tokens as u64;
    }

    /// The answer, each list cut to `limit` rows.
    pub fn finish(self, limit: usize) -> Discovery {
        let sum = |groups: &HashMap<String, Total>| {
            groups.values().fold(Total::default(), |a, g| Total {
                count: a.count + g.count,
                output_tokens: a.output_tokens + g.output_tokens,
            })
        };
        let (handled, unhandled) = (sum(&self.handled), sum(&self.unhandled));
        Discovery {
            transcripts: self.transcripts,
            commands: handled.count + unhandled.count + self.through.count,
            handled,
            judged_by_words: self.judged_by_words,
            // What could be saved is output: the handled commands by tokens; what to support
            // next is what agents run most: the rest by count.
            handled_top: top(self.handled, limit, |r| (r.output_tokens, r.count)),
            through_buildvise: self.through,
            unhandled,
            unhandled_top: top(self.unhandled, limit, |r| (r.count, r.output_tokens)),
            looked_in: self.looked_in,
        }
    }
}

fn top(groups: HashMap<String, Total>, limit: usize, by: impl Fn(&Row) -> (u64, u64)) -> Vec<Row> {
    let mut rows: Vec<Row> = groups
        .into_iter()
        .map(|(command, t)| Row { command, count: t.count, output_tokens: t.output_tokens })
        .collect();
    rows.sort_by(|a, b| by(b).cmp(&by(a)).then_with(|| a.command.cmp(&b.command)));
    rows.truncate(limit);
    rows
}

impl Discovery {
    /// The answer for a person at a terminal.
    pub fn text(&self) -> String {
        let Transcripts { claude, codex } = self.transcripts;
        if claude + codex == 0 {
            let places: Vec<String> = self.looked_in.iter().map(|p| p.display().to_string()).collect();
            return format!("no transcripts of Claude Code or Codex in {}\n", places.join(", "));
        }
        let mut out = format!(
            "{} in {} (claude {claude}, codex {codex})\n",
            plural(self.commands, "shell command"),
            plural(claude + codex, "transcript"),
        );
        out += &format!(
            "could have gone through buildvise: {}, {} output tokens\n",
            plural(self.handled.count, "command"),
            tokens(self.handled.output_tokens)
        );
        rows(&mut out, &self.handled_top);
        if self.judged_by_words > 0 {
            out += &format!("  ({} judged by words alone: directory gone)\n", self.judged_by_words);
        }
        if self.through_buildvise.count > 0 {
            out += &format!(
                "went through buildvise: {}, {} output tokens\n",
                plural(self.through_buildvise.count, "command"),
                tokens(self.through_buildvise.output_tokens)
            );
        }
        if self.unhandled.count > 0 {
            out += &format!(
                "not handled: {}, {} output tokens; most frequent:\n",
                plural(self.unhandled.count, "command"),
                tokens(self.unhandled.output_tokens)
            );
            rows(&mut out, &self.unhandled_top);
        }
        out
    }
}

/// `  cargo test   3×  9.1k`, the names padded to one column.
fn rows(out: &mut String, rows: &[Row]) {
    let width = rows.iter().map(|r| r.command.chars().count()).max().unwrap_or(0);
    for row in rows {
        out.push_str(&format!("  {:<width$}  {}×  {}\n", row.command, row.count, tokens(row.output_tokens)));
    }
}

fn plural(n: u64, one: &str) -> String {
    format!("{n} {one}{}", if n == 1 { "" } else { "s" })
}

/// A token count as a person reads it: 950, 12.3k, 4.1M.
fn tokens(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_read_short() {
        assert_eq!([tokens(950), tokens(12_345), tokens(4_100_000)], ["950", "12.3k", "4.1M"]);
    }

    #[test]
    fn lists_are_ordered_and_cut() {
        let mut tally = Tally::default();
        tally.transcript(Client::Claude);
        for (key, tokens) in [("cargo test", 500), ("cargo test", 500), ("cargo build", 2000)] {
            tally.add(Verdict::Handled { key: key.into(), by_words: false }, tokens);
        }
        for key in ["ls", "git status", "git status", "cat"] {
            tally.add(Verdict::Unhandled { key: key.into() }, 10);
        }
        tally.add(Verdict::Through, 40);
        let found = tally.finish(2);
        assert_eq!(found.commands, 8);
        assert_eq!(found.handled, Total { count: 3, output_tokens: 3000 });
        let names = |rows: &[Row]| rows.iter().map(|r| r.command.clone()).collect::<Vec<_>>();
        assert_eq!(names(&found.handled_top), ["cargo build", "cargo test"]);
        assert_eq!(names(&found.unhandled_top), ["git status", "cat"]);
        assert_eq!(found.through_buildvise, Total { count: 1, output_tokens: 40 });
    }
}
