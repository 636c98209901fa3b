//! Panic reports: `thread 'name' (tid) panicked at file:line:col:` followed by the message, as
//! libtest and build scripts print them (and the pre-1.73 `panicked at 'msg', file:line:col`).

use regex::Regex;
use std::sync::LazyLock;

/// How every panic report starts.
pub(crate) const FIRST_WORDS: &str = "thread '";

/// Since Rust 1.73; the thread id appeared in 1.89.
static CURRENT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^thread '(.+?)' (?:\(\d+\) )?panicked at (.+):$").expect("valid regex"));

/// Before Rust 1.73 the message came first, quoted, and could span lines.
static LEGACY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^thread '(.+?)' (?:\(\d+\) )?panicked at '(.*)$").expect("valid regex"));

/// The closing `', file:line:col` of a legacy message.
static LEGACY_END: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^(.*)', (\S+:\d+:\d+)$").expect("valid regex"));

/// `thread 'x' has overflowed its stack`: the test process aborts without a panic location.
static OVERFLOW: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^thread '(.+?)' (?:\(\d+\) )?has overflowed its stack$").expect("valid regex"));

/// What the first line of a panic report says.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum PanicStart<'a> {
    /// The message follows on the next line.
    AwaitMessage { thread: &'a str, location: &'a str },
    /// Legacy single-line form: everything is here.
    Complete { thread: &'a str, message: &'a str, location: &'a str },
    /// Legacy multi-line form: the location closes a later line.
    AwaitLocation { thread: &'a str, message: &'a str },
    /// A stack overflow: no location, no message.
    StackOverflow { thread: &'a str },
}

/// Reads a line that may open a panic report.
pub(crate) fn start(line: &str) -> Option<PanicStart<'_>> {
    // Programs under test name their threads too: only a line with the words of a report is
    // worth the regexes.
    if !line.starts_with(FIRST_WORDS)
        || !(line.contains(" panicked at ") || line.ends_with(" has overflowed its stack"))
    {
        return None;
    }
    if let Some(c) = LEGACY.captures(line) {
        let thread = c.get(1)?.as_str();
        let rest = c.get(2)?.as_str();
        return Some(match LEGACY_END.captures(rest) {
            Some(end) => PanicStart::Complete { thread, message: end.get(1)?.as_str(), location: end.get(2)?.as_str() },
            None => PanicStart::AwaitLocation { thread, message: rest },
        });
    }
    if let Some(c) = CURRENT.captures(line) {
        return Some(PanicStart::AwaitMessage { thread: c.get(1)?.as_str(), location: c.get(2)?.as_str() });
    }
    OVERFLOW.captures(line).and_then(|c| Some(PanicStart::StackOverflow { thread: c.get(1)?.as_str() }))
}

/// The location closing a legacy multi-line message, if `line` is that line.
pub(crate) fn legacy_location(line: &str) -> Option<&str> {
    if !line.ends_with(|c: char| c.is_ascii_digit()) || !line.contains("', ") {
        return None;
    }
    LEGACY_END.captures(line).and_then(|c| c.get(2)).map(|m| m.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_current_and_legacy_forms() {
        assert_eq!(
            start("thread 'tests::a' (4242) panicked at src/lib.rs:45:9:"),
            Some(PanicStart::AwaitMessage { thread: "tests::a", location: "src/lib.rs:45:9" })
        );
        assert_eq!(
            start("thread 'main' panicked at build.rs:7:10:"),
            Some(PanicStart::AwaitMessage { thread: "main", location: "build.rs:7:10" })
        );
        assert_eq!(
            start("thread 'tests::b' panicked at 'boom', src/lib.rs:3:5"),
            Some(PanicStart::Complete { thread: "tests::b", message: "boom", location: "src/lib.rs:3:5" })
        );
        assert_eq!(
            start("thread 'tests::c' panicked at 'assertion failed: `(left == right)`"),
            Some(PanicStart::AwaitLocation { thread: "tests::c", message: "assertion failed: `(left == right)`" })
        );
        assert_eq!(legacy_location(" right: `2`', src/lib.rs:9:9"), Some("src/lib.rs:9:9"));
        assert_eq!(legacy_location("  left: `1`,"), None);
        assert_eq!(
            start("thread 'tests::deep' has overflowed its stack"),
            Some(PanicStart::StackOverflow { thread: "tests::deep" })
        );
        assert_eq!(start("thread 'x' is sleeping"), None);
        assert_eq!(start("threads: 4"), None);
    }
}
