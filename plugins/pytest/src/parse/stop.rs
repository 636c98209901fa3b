//! Why a session ended before running everything, and how much it had to run.
//!
//! pytest says so in one `!`-separator line just before the final counts:
//! - `!!! Interrupted: 2 errors during collection !!!` (a collection error stops the session);
//! - `!!! stopping after 1 failures !!!` (`-x`, `--maxfail=N`; xdist prefixes its own class);
//! - `!!! Interrupted: <reason> !!!` for any other stop (`--stepwise`, `session.shouldstop`), and
//!   `!!! KeyboardInterrupt !!!` or `!!! _pytest.outcomes.Exit: <reason> !!!` (`pytest.exit()`).
//!
//! How many tests there were comes from the header's `collected 7 items / 2 deselected / 5
//! selected` line, which `-q` leaves out.

use super::text::clip;

/// A stop line's meaning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// Collection errors kept any test from running.
    Collection,
    /// `-x` or `--maxfail=N` ended the run after `failures` failures.
    MaxFail { failures: u64 },
    /// Any other stop, with pytest's own words.
    Other(String),
}

/// The stop a `!!! title !!!` line reports, from its title; None for a title that is none of
/// these (pytest draws no other `!` separators outside `--collect-only`).
pub fn stop_of(title: &str) -> Option<Stop> {
    let title = title.trim();
    if title.is_empty() || title == "collection failures" {
        return None;
    }
    let reason = title.strip_prefix("Interrupted: ").unwrap_or(title);
    if reason.ends_with(" during collection")
        && reason.split(' ').next().is_some_and(|n| n.parse::<u64>().is_ok())
        && reason.split(' ').nth(1).is_some_and(|w| w == "error" || w == "errors")
    {
        return Some(Stop::Collection);
    }
    if let Some(at) = reason.find("stopping after ") {
        let rest = &reason[at + "stopping after ".len()..];
        if let Some((n, word)) = rest.split_once(' ')
            && word.starts_with("failure")
            && let Ok(failures) = n.parse()
        {
            return Some(Stop::MaxFail { failures });
        }
    }
    // `pytest.exit(reason)` raises this class; its dotted private path says little to a reader.
    if let Some(reason) = title.strip_prefix("_pytest.outcomes.Exit: ") {
        return Some(Stop::Other(clip(&format!("pytest.exit(): {reason}"))));
    }
    Some(Stop::Other(clip(title)))
}

/// The tests a `collected N items[ / M errors][ / D deselected][ / S selected]` line says will
/// run: the selected count when printed, else collected minus deselected.
pub fn collected(text: &str) -> Option<u64> {
    let at = text.find("collected ")?;
    // `collecting ... collected 3 items` under -v; anything else before it is not this line.
    let before = text[..at].trim_end();
    if !(before.is_empty() || before.ends_with("collecting ...")) {
        return None;
    }
    let mut parts = text[at + "collected ".len()..].split(" / ");
    let (n, word) = parts.next()?.trim().split_once(' ')?;
    if word != "items" && word != "item" {
        return None;
    }
    let mut count: u64 = n.parse().ok()?;
    for part in parts {
        let Some((n, word)) = part.trim().split_once(' ') else { continue };
        let Ok(n) = n.parse::<u64>() else { continue };
        match word {
            "selected" => return Some(n),
            "deselected" => count = count.saturating_sub(n),
            _ => {}
        }
    }
    Some(count)
}

/// `1 failure`, `2 tests` — a count with its noun.
pub fn counted(n: u64, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_lines() {
        assert_eq!(stop_of("Interrupted: 2 errors during collection"), Some(Stop::Collection));
        assert_eq!(stop_of("Interrupted: 1 error during collection"), Some(Stop::Collection));
        assert_eq!(stop_of("stopping after 1 failures"), Some(Stop::MaxFail { failures: 1 }));
        assert_eq!(stop_of("Interrupted: stopping after 3 failures"), Some(Stop::MaxFail { failures: 3 }));
        assert_eq!(
            stop_of("xdist.dsession.Interrupted: stopping after 2 failures"),
            Some(Stop::MaxFail { failures: 2 })
        );
        assert_eq!(stop_of("KeyboardInterrupt"), Some(Stop::Other("KeyboardInterrupt".into())));
        assert_eq!(
            stop_of("Interrupted: Test failed, continuing from this test next run."),
            Some(Stop::Other("Interrupted: Test failed, continuing from this test next run.".into()))
        );
        assert_eq!(
            stop_of("_pytest.outcomes.Exit: SHOP_DB is not set"),
            Some(Stop::Other("pytest.exit(): SHOP_DB is not set".into()))
        );
        assert_eq!(stop_of("collection failures"), None);
        assert_eq!(stop_of("stopping after many failures"), Some(Stop::Other("stopping after many failures".into())));
    }

    #[test]
    fn collected_lines() {
        assert_eq!(collected("collected 5 items / 2 errors"), Some(5));
        assert_eq!(collected("collected 1 item"), Some(1));
        assert_eq!(collected("collecting ... collected 7 items / 2 deselected / 5 selected"), Some(5));
        assert_eq!(collected("collected 7 items / 2 deselected"), Some(5));
        assert_eq!(collected("collected 0 items / 1 error"), Some(0));
        assert_eq!(collected("we collected 3 items"), None);
        assert_eq!(collected("collected many items"), None);
        assert_eq!(collected("collected 3 bugs"), None);
    }

    #[test]
    fn counted_nouns() {
        assert_eq!(counted(1, "failure"), "1 failure");
        assert_eq!(counted(4, "test"), "4 tests");
    }
}
