//! Small text helpers shared by the format parsers: prefixes to drop, indentation, `Key: N`
//! counters and stack-frame locations.

/// Longest message or note kept, in bytes: a test may print a whole document as its message,
/// and a build tool a line of any length.
pub const MAX_TEXT: usize = 2000;

/// How far into a line a CI timestamp's end is looked for.
pub const CI_TIMESTAMP_REACH: usize = 42;

/// Drops a GitHub Actions timestamp (`2026-01-29T20:02:11.9846651Z `) that CI logs put before
/// every line.
pub fn strip_ci_timestamp(text: &str) -> &str {
    // The timestamp ends with an ASCII blank: the rest starts on a char boundary.
    &text[ci_timestamp_len(text.as_bytes())..]
}

/// How many bytes of `b` a GitHub Actions timestamp takes, blank included; 0 without one.
/// Only the first [`CI_TIMESTAMP_REACH`] bytes are looked at.
pub fn ci_timestamp_len(b: &[u8]) -> usize {
    let looks_like = b.len() > 21
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':';
    if !looks_like {
        return 0;
    }
    // On every line of a CI log: `Z ` is looked for where it may be, in one pass.
    let head = &b[..b.len().min(CI_TIMESTAMP_REACH)];
    match memchr::memchr_iter(b'Z', head).find(|&at| head.get(at + 1) == Some(&b' ')) {
        Some(end) => end + 2,
        None => 0,
    }
}

/// Number of leading spaces and tabs.
pub fn indent(text: &str) -> usize {
    text.len() - text.trim_start_matches([' ', '\t']).len()
}

/// The number after `key` (which includes its colon), skipping blanks: `count_after("Failed:  3,
/// Passed: 4", "Passed:") == Some(4)`.
pub fn count_after(text: &str, key: &str) -> Option<u64> {
    let start = text.find(key)? + key.len();
    let rest = text[start..].trim_start();
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    rest[..digits].parse().ok()
}

/// The source location of a .NET stack frame: `at N.C.M() in /src/File.cs:line 52` (VSTest,
/// TRX), `at N.C.M () [0x0000f] in /src/File.cs:41` (Mono) or `… in File.cs:915` (MTP).
/// Frames without a usable location (`in <guid>:0`) give None.
pub fn frame_location(text: &str) -> Option<(&str, u32)> {
    let frame = strip_list_number(text.trim());
    let frame = frame.strip_prefix("at ")?;
    // The path runs from a ` in ` to the frame's last `:line ` (else its last `:`), and the line
    // number follows. Both ends are found once: searching the rest of the line again after every
    // ` in ` made a long line quadratic.
    let number_at = |marker: usize, len: usize| (marker, frame[marker + len..].trim().parse::<u32>().ok());
    let line_marker = frame.rfind(":line ").map(|i| number_at(i, ":line ".len()));
    let colon = frame.rfind(':').map(|i| number_at(i, 1));
    let mut from = 0;
    while let Some(found) = frame[from..].find(" in ") {
        let start = from + found + 4;
        let end = line_marker.filter(|(i, _)| *i >= start).or(colon.filter(|(i, _)| *i >= start));
        if let Some((end, Some(line))) = end {
            let path = frame[start..end].trim();
            if line != 0 && !path.is_empty() && !path.starts_with('<') {
                return Some((path, line));
            }
        }
        from = start;
    }
    None
}

/// Drops the `1)` that NUnit's adapter puts before a repeated stack trace.
fn strip_list_number(text: &str) -> &str {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    match text[digits..].strip_prefix(')') {
        Some(rest) if digits > 0 => rest.trim_start(),
        _ => text,
    }
}

/// `text` with every run of digits replaced by `#`, so that MSBuild's retry messages
/// (`Beginning retry 3 in 1000ms`) compare equal.
pub fn without_digits(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_digits = false;
    for c in text.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('#');
            }
            in_digits = true;
        } else {
            out.push(c);
            in_digits = false;
        }
    }
    out
}

/// The file name without directories and extension: `/a/b/Lib.Tests.dll` → `Lib.Tests`.
pub fn file_stem(path: &str) -> &str {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    match name.rfind('.') {
        Some(dot) if dot > 0 => &name[..dot],
        _ => name,
    }
}

/// True when `path` names an MSBuild project file (`.csproj`, `.fsproj`, `.proj`, …).
pub fn is_project_file(path: &str) -> bool {
    let lower = path.trim().to_ascii_lowercase();
    lower.ends_with("proj") && lower.contains('.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_actions_timestamps_only() {
        assert_eq!(strip_ci_timestamp("2026-01-29T20:02:11.9846651Z   Restored x"), "  Restored x");
        assert_eq!(strip_ci_timestamp("2026 is not a timestamp"), "2026 is not a timestamp");
        assert_eq!(strip_ci_timestamp("2026-01-29T20:02"), "2026-01-29T20:02");
        let late = "2026-01-29T20:02:11.9846651999999999999999Z x";
        assert_eq!(strip_ci_timestamp(late), late);
    }

    #[test]
    fn counts_after_keys() {
        let line = "Failed!  - Failed:     1, Passed:    14, Skipped:     0, Total:    15";
        assert_eq!(count_after(line, "Passed:"), Some(14));
        assert_eq!(count_after(line, "Total:"), Some(15));
        assert_eq!(count_after(line, "Errors:"), None);
        assert_eq!(count_after("Total tests: Unknown", "Total tests:"), None);
    }

    #[test]
    fn finds_frame_locations() {
        assert_eq!(frame_location("     at A.B.C() in /src/T.cs:line 52"), Some(("/src/T.cs", 52)));
        assert_eq!(frame_location(r"   at A.B.C(Int32 i) in C:\src\T.cs:line 67"), Some((r"C:\src\T.cs", 67)));
        assert_eq!(frame_location("at A.B.C () [0x0000f] in /src/T.cs:41 "), Some(("/src/T.cs", 41)));
        assert_eq!(frame_location("1)    at A.B() in /src/T.cs:line 3"), Some(("/src/T.cs", 3)));
        assert_eq!(frame_location("at X.Y (System.Object o) [0x0007c] in <12b418a7>:0"), None);
        assert_eq!(frame_location("at System.Linq.Enumerable.First()"), None);
        assert_eq!(frame_location("    at A.B(String in) in T.cs:915"), Some(("T.cs", 915)));
        // The first ` in ` that leaves a path wins; each looks for the number at the frame's end.
        assert_eq!(frame_location("at A.B() in <x> in /src/a.cs:line 7"), Some(("/src/a.cs", 7)));
        assert_eq!(frame_location("at A.B() in <x>:line 7 in T.cs:9"), Some(("T.cs", 9)));
        assert_eq!(frame_location("at A.B() in T.cs:line x"), None);
    }

    #[test]
    fn blinds_digits() {
        assert_eq!(without_digits("retry 10 in 1000ms"), "retry # in #ms");
    }

    #[test]
    fn stems_and_projects() {
        assert_eq!(file_stem("/a/b/Lib.Tests.dll"), "Lib.Tests");
        assert_eq!(file_stem(r"C:\a\App.csproj"), "App");
        assert!(is_project_file("/a/App.csproj"));
        assert!(!is_project_file("/a/App.sln"));
    }
}
