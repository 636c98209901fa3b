//! Fingerprints: when a diagnostic in one run is the same problem as one in another.
//!
//! An edit moves lines, a rerun gets a new temp directory, a test takes longer: none of that makes
//! a new problem. So a fingerprint leaves out the line and column, and reduces what changes from
//! run to run in a message (numbers, addresses, temp paths, durations) to placeholders, while the
//! words and names that say which problem it is (`cannot find value \`x\``) stay whole. A failed
//! test is its name, whatever its assertion says this time; a warning is its words, whichever
//! test it names.

use buildvise_plugin_api::{Diagnostic, Severity};
use std::hash::Hasher;

/// The fingerprint of `d` as `tool` reported it: 16 hex digits.
pub fn of(tool: &str, d: &Diagnostic) -> String {
    match &d.test {
        // Anything else a test printed (a warning naming it) is a problem of its own: taken for
        // the test's failure, it kept a fixed test "still" for as long as the warning stayed.
        Some(test) if d.severity == Severity::Error => of_test(tool, test),
        _ => hash(&[
            tool,
            "problem",
            &normalise(d.file.as_deref().unwrap_or("")),
            d.code.as_deref().unwrap_or(""),
            &normalise(&d.message),
        ]),
    }
}

/// The fingerprint of the failed test `name`.
pub fn of_test(tool: &str, name: &str) -> String {
    hash(&[tool, "test", name])
}

/// FNV-1a over the parts, each followed by a separator no part contains, so that `("ab", "c")`
/// and `("a", "bc")` differ. FNV is a fixed, specified function: fingerprints stored by one
/// build match those of the next.
fn hash(parts: &[&str]) -> String {
    let mut h = fnv::FnvHasher::default();
    for part in parts {
        h.write(part.as_bytes());
        h.write_u8(0);
    }
    format!("{:016x}", h.finish())
}

/// `text` with what varies between runs of the same problem replaced:
/// - a temp path (`/tmp/pytest-of-dev/pytest-12/test_a0/x.txt`) by `<tmp>/` and its file's name
///   (`<tmp>/x.txt`): the directories are made afresh by each run;
/// - a hex address (`0x7f3a9c2e10`) by `0x#`;
/// - by `#`, a number that is a duration or a size (`1.25s`, `200 ms`, `12 MiB`), a place (`:41`,
///   `line 12`: edits move it), or long enough to be an id, a port or a time (5 digits or more);
/// - a run of spaces by one space.
///
/// Other numbers stay: `List item 0` and `List item 1` on one line are two problems, and so are
/// `u32` and `u64`.
pub fn normalise(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if let Some((len, name)) = temp_path(rest) {
            out.push_str("<tmp>/");
            out.push_str(&name);
            rest = &rest[len..];
            continue;
        }
        let in_name = out.chars().next_back().is_some_and(|p| p.is_alphanumeric() || p == '_');
        if c.is_ascii_digit() && !in_name {
            if let Some(hex) = hex_len(rest) {
                out.push_str("0x#");
                rest = &rest[hex..];
                continue;
            }
            let len = number_len(rest);
            let (number, after) = rest.split_at(len);
            let digits = number.bytes().filter(u8::is_ascii_digit).count();
            if digits >= 5 || is_place(&out) || starts_with_unit(after) {
                out.push('#');
            } else {
                out.push_str(number);
            }
            rest = after;
            continue;
        }
        if c.is_whitespace() {
            if !out.ends_with(' ') {
                out.push(' ');
            }
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    out.trim().to_string()
}

/// The length of the hex number (`0x1f`) `s` starts with, if it starts with one.
fn hex_len(s: &str) -> Option<usize> {
    let digits = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X"))?;
    let len = digits.find(|c: char| !c.is_ascii_hexdigit()).unwrap_or(digits.len());
    (len > 0).then_some(2 + len)
}

/// Whether a number after `before` is a place in a file: `file.rs:41`, `line 12`.
fn is_place(before: &str) -> bool {
    let tail = before.get(before.len().saturating_sub(6)..).unwrap_or("").to_ascii_lowercase();
    tail.ends_with(':') || tail.ends_with("line ") || tail.ends_with("lines ")
}

/// Units after a number that make it a duration or a size, which change from run to run.
const UNITS: [&str; 16] =
    ["ns", "us", "µs", "ms", "s", "sec", "secs", "seconds", "min", "b", "kb", "mb", "gb", "kib", "mib", "gib"];

/// Whether `s` (what follows a number) starts with one of [`UNITS`], as a word of its own.
fn starts_with_unit(s: &str) -> bool {
    let word = s.strip_prefix(' ').unwrap_or(s);
    let end = word.find(|c: char| !c.is_alphabetic()).unwrap_or(word.len());
    end > 0 && UNITS.contains(&word[..end].to_lowercase().as_str())
}

/// The length of the number `s` starts with: digits, with `.` or `,` between digit groups.
fn number_len(s: &str) -> usize {
    let bytes = s.as_bytes();
    let mut end = 0;
    while end < bytes.len() {
        if bytes[end].is_ascii_digit() {
            end += 1;
        } else if matches!(bytes[end], b'.' | b',') && bytes.get(end + 1).is_some_and(u8::is_ascii_digit) {
            end += 2;
        } else {
            break;
        }
    }
    end
}

/// Where temp files live: every run makes new ones.
const TEMP_DIRS: [&str; 5] = ["/tmp/", "/var/tmp/", "/var/folders/", "/private/var/folders/", "/dev/shm/"];

/// The temp path `s` starts with, if it starts with one: its length, and its file's name with
/// digits reduced to `#` (gcc's `cc0a1b2c.o`). The path ends at a space, a quote or a bracket, and
/// a `:line` after it is a place, not part of it.
fn temp_path(s: &str) -> Option<(usize, String)> {
    let starts = TEMP_DIRS.iter().any(|dir| s.starts_with(dir)) || windows_temp(s);
    if !starts {
        return None;
    }
    let end = s.find(|c: char| c.is_whitespace() || "'\"`()[]<>{},;".contains(c)).unwrap_or(s.len());
    let path = s[..end].trim_end_matches(|c: char| c.is_ascii_digit() || c == ':');
    let name = path.rsplit(['/', '\\']).next().unwrap_or("");
    let mut reduced = String::with_capacity(name.len());
    for c in name.chars() {
        match c.is_ascii_digit() {
            true if reduced.ends_with('#') => {}
            true => reduced.push('#'),
            false => reduced.push(c),
        }
    }
    Some((path.len().max(1), reduced))
}

/// `C:\Users\dev\AppData\Local\Temp\…`, and `C:\Windows\Temp\…`.
fn windows_temp(s: &str) -> bool {
    let b = s.as_bytes();
    if !(b.len() > 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && b[2] == b'\\') {
        return false;
    }
    let head = s.get(..120).unwrap_or(s).to_ascii_lowercase();
    let word_end = head.find(|c: char| c.is_whitespace() || "'\"".contains(c)).unwrap_or(head.len());
    head[..word_end].contains("\\temp\\")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_varies_between_runs_is_replaced() {
        let cases = [
            // pytest's tmp_path, with the place in it
            (
                "FileNotFoundError: /tmp/pytest-of-dev/pytest-12/test_load0/data.json",
                "FileNotFoundError: <tmp>/data.json",
            ),
            ("at /tmp/tmpa8x2kq/test_a.py:12:3", "at <tmp>/test_a.py:#:#"),
            ("undefined reference in /tmp/cc0a1b2c.o", "undefined reference in <tmp>/cc#a#b#c.o"),
            (r"cannot open C:\Users\dev\AppData\Local\Temp\tmp12.txt here", "cannot open <tmp>/tmp#.txt here"),
            ("<Foo object at 0x7f3a9c2e10>", "<Foo object at 0x#>"),
            ("Exceeded timeout of 200 ms for a test.", "Exceeded timeout of # ms for a test."),
            ("took 1.25s (limit 1,000ms), 12 MiB", "took #s (limit #ms), # MiB"),
            ("first defined at src/a.rs:12, see line 40", "first defined at src/a.rs:#, see line #"),
            ("pid 48213 on port 54321", "pid # on port #"),
            ("List item 1 has incompatible type", "List item 1 has incompatible type"),
            ("expected `u32`, found `i64` for arg1", "expected `u32`, found `i64` for arg1"),
            ("expected   3 arguments,\tfound 2", "expected 3 arguments, found 2"),
        ];
        for (text, want) in cases {
            assert_eq!(normalise(text), want, "{text}");
        }
    }

    #[test]
    fn a_warning_from_another_run_keeps_its_fingerprint() {
        // MSBuild from the shared corpus (win-msb3021-file-lock-retries); the rerun's lock holder
        // has another pid, and the retry delay was configured otherwise.
        let at = |pid: &str, delay: &str| {
            let message = format!(
                "Could not copy \"obj\\Debug\\net8.0\\Billing.Api.dll\" to \"bin\\Debug\\net8.0\\Billing.Api.dll\". \
                 Beginning retry 1 in {delay}. The process cannot access the file because it is being used by \
                 another process. The file is locked by: \"Billing.Api ({pid})\""
            );
            let d = Diagnostic::warning(message).with_code("MSB3026").with_location(
                "Microsoft.Common.CurrentVersion.targets",
                Some(4895),
                Some(5),
            );
            of("dotnet.build", &d)
        };
        assert_eq!(at("22804", "1000ms"), at("31377", "250ms"));
        // The next retry is another warning.
        let retry = |n: u32| of("dotnet.build", &Diagnostic::warning(format!("Beginning retry {n} in 1000ms.")));
        assert_ne!(retry(1), retry(2));
    }

    #[test]
    fn a_test_is_its_name() {
        let a = Diagnostic::error("assert 3 == 4").with_test("tests/test_a.py::test_one");
        let b = Diagnostic::error("KeyError: 'x'")
            .with_location("tests/test_a.py", Some(40), None)
            .with_test("tests/test_a.py::test_one");
        assert_eq!(of("pytest.run", &a), of("pytest.run", &b));
        assert_eq!(of("pytest.run", &a), of_test("pytest.run", "tests/test_a.py::test_one"));
        assert_ne!(of("pytest.run", &a), of_test("pytest.run", "tests/test_a.py::test_two"));
    }

    #[test]
    fn fingerprints_are_stable_across_builds() {
        // Stored fingerprints are compared with those of later builds: this value must not change.
        let d = Diagnostic::error("cannot find value `x` in this scope").with_code("E0425").with_location(
            "src/lib.rs",
            Some(3),
            Some(5),
        );
        assert_eq!(of("cargo.check", &d), "6ce8e14c858edf0b");
    }
}
