//! Most lines of a build mean nothing to any recogniser. While no block is open (a failed test,
//! a crash's stack, a summary's counts), a line's bytes say whether it may mean something, before
//! it is decoded as text and handed to every recogniser in turn.
//!
//! The test is looser than the recognisers, never stricter: a line is thrown away only when each
//! of them would have let it pass. It reads the raw bytes, which hold the same ASCII as the decoded
//! text at the same places relative to each other (invalid UTF-8 becomes U+FFFD, never ASCII), and
//! every recogniser keys on ASCII. Where decoding could still change the answer (a non-ASCII byte
//! at either end of the trimmed line, invalid UTF-8 near a CI timestamp), the line is read.
//!
//! The prefixes below repeat what the recognisers test. A test holds the two together: every line
//! of every string literal in the parsers (their prefixes, their tests' lines) and of every dotnet
//! log at hand that is thrown away here must be one the recognisers leave alone.

use super::text::{CI_TIMESTAMP_REACH, ci_timestamp_len};
use super::{crash, msbuild};

/// What a line may be to a parser with no block open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Triage {
    /// Blank, or a CI command (`##[group]`): ignored, and it ends no diagnostic's continuation.
    Skip,
    /// Nothing to any recogniser: it only ends the last diagnostic's continuation.
    Noise,
    /// May be something: decode it and dispatch it.
    Read,
}

/// Judges one raw line. `nunit_section` is whether nunit-console's failures section is open,
/// where a line starting with a digit opens a failure.
pub fn triage(bytes: &[u8], nunit_section: bool) -> Triage {
    // Invalid UTF-8 in a timestamp's reach could move where the decoded text's timestamp ends;
    // a timestamp starts with a digit.
    if bytes.first().is_some_and(u8::is_ascii_digit) && !bytes[..bytes.len().min(CI_TIMESTAMP_REACH)].is_ascii() {
        return Triage::Read;
    }
    let text = &bytes[ci_timestamp_len(bytes)..];
    let from_first = text.trim_ascii_start();
    let lead = text.len() - from_first.len();
    let trimmed = from_first.trim_ascii_end();
    let (Some(first), Some(last)) = (trimmed.first(), trimmed.last()) else {
        return Triage::Skip;
    };
    // `str::trim` also drops a vertical tab and Unicode blanks, which `trim_ascii` keeps.
    if !first.is_ascii_graphic() || !last.is_ascii_graphic() {
        return Triage::Read;
    }
    if trimmed.starts_with(b"##[") {
        return Triage::Skip;
    }
    // The last byte rules out most lines before the words of a related location are compared.
    let read = starts_like_marker(text, trimmed, nunit_section)
        || (*last == b')' && ends_like_related_location(trimmed))
        || holds_marker(text, lead, trimmed);
    if read { Triage::Read } else { Triage::Noise }
}

/// Whether the line holds, anywhere, what a recogniser searches it for: a canonical diagnostic's
/// severity before a colon, a crash's `Unhandled exception. `, the Terminal Logger's `failed
/// with` after a project's name. One pass finds where each could be, at a colon, a `U` or a `w`
/// (fewer lines of a build have one than an `f`: `for`, `from`, `file`), and only there are the
/// exact tests made. `trimmed` starts `lead` bytes into `text`.
fn holds_marker(text: &[u8], lead: usize, trimmed: &[u8]) -> bool {
    // Only a line indented as a project's needs its `w`s: elsewhere the colon is looked for
    // twice, and a `w` is no reason to stop.
    let third = if msbuild::indented_as_project(text) { b'w' } else { b':' };
    let mut first_colon = None;
    memchr::memchr3_iter(b':', b'U', third, text).any(|at| match text[at] {
        b':' => {
            let colon = at - lead;
            msbuild::severity_before_colon(trimmed, colon, *first_colon.get_or_insert(colon))
        }
        b'U' => crash::unhandled_at(text, at),
        _ => at.checked_sub("failed ".len()).is_some_and(|start| msbuild::failed_with_at(text, start)),
    })
}

/// Whether the line starts as one read for its first words: a runner's summary or failed test,
/// nunit-console's sections, VSTest's notes on a crash, MSBuild's `Switch:`. Some prefixes stand
/// for several (`Test run ` for `Test run for` and `Test run summary:`).
fn starts_like_marker(text: &[u8], trimmed: &[u8], nunit_section: bool) -> bool {
    let starts = |prefixes: &[&[u8]]| prefixes.iter().any(|p| trimmed.starts_with(p));
    match trimmed[0] {
        b'F' => trimmed.starts_with(b"Failed!") || text.starts_with(b"  Failed "),
        b'f' => starts(&[b"failed "]),
        b'P' => starts(&[b"Passed!"]),
        b'S' => starts(&[b"Skipped!", b"Switch: "]),
        b'A' => starts(&[b"Aborted!"]),
        b'N' => starts(&[b"Not run:"]),
        b'T' => starts(&[
            b"Test run ",
            b"Test Run ",
            b"Test summary:",
            b"Test Count:",
            b"Tests run:",
            b"Tests Not Run:",
            b"Total tests:",
            b"The active ",
            b"The test running ",
        ]),
        b'E' => starts(&[b"Errors"]),
        b'R' => starts(&[b"Run Settings"]),
        b'[' => starts(&[b"[xUnit.net "]),
        b'0'..=b'9' => nunit_section,
        _ => false,
    }
}

/// Roslyn's `(Location of the symbol related to previous error)` lines.
fn ends_like_related_location(trimmed: &[u8]) -> bool {
    trimmed.ends_with(b"previous error)") || trimmed.ends_with(b"previous warning)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noise_and_skipped_lines() {
        for line in [
            "  Restored /home/dev/src/App1/App1.csproj (in 102 ms).",
            "  App1.Core -> /home/dev/src/App1.Core/bin/Debug/net8.0/App1.Core.dll",
            "  Restored /home/dev/src/error CS12 tests/Tests.csproj (in 88 ms).",
            "  CoreCompile: csc.dll /nowarn:1701,CS12 /warnaserror- /out:obj/Debug/App1.dll",
            "Time Elapsed 00:00:04.12",
            "    0 Error(s)",
            "Switched to Release",
            "Failed to open the cache file, retrying",
            "Test runs for the nightly build are scheduled at 02:00",
            "Unhandled exception rate: 0.1%",
            "  Shop.Core succeeded with 2 warning(s)",
            "2026-01-29T20:02:11.9846651Z   Restored /p/App.csproj (in 1 ms).",
            "  Shop.Core succeeded (0.9s) \u{2192} bin/Shop.Core.dll",
        ] {
            assert_eq!(triage(line.as_bytes(), false), Triage::Noise, "{line}");
        }
        for line in ["", "   \t", "##[group]Build", "2026-01-29T20:02:11.9846651Z "] {
            assert_eq!(triage(line.as_bytes(), false), Triage::Skip, "{line}");
        }
    }

    #[test]
    fn lines_a_recogniser_may_take_are_read() {
        for line in [
            "/src/A.cs(3,5): error CS1002: ; expected [/src/A.csproj]",
            "error NETSDK1013: x",
            "  Failed Shop.Tests.T.M [4 ms]",
            "  failed Shop.Tests.T.M (4ms)",
            "Passed!  - Failed: 0, Passed: 4, Skipped: 0, Total: 4",
            "  Inventory.Api failed with 2 error(s) (0.9s)",
            "  Lib net8.0 failed with 1 error(s)",
            "Unhandled exception. System.Exception: boom",
            "src/Item.cs(8,23): (Location of the symbol related to previous error)",
            "Switch: 4",
            "[xUnit.net 00:00:01.23]     T.M [FAIL]",
            "Skipped! - Failed: 0, Passed: 0, Skipped: 1, Total: 1",
            "Aborted! - Failed: 0, Passed: 0, Skipped: 0, Total: 1",
            "Total tests: 3",
            "Test summary: total: 5, failed: 1, succeeded: 4, skipped: 0",
            "Test run summary: Failed!",
            "Tests run: 7, Errors: 1, Failures: 3",
            "Not run: 1, Invalid: 0",
            "Test Count: 8, Passed: 3",
            "Test run for /p/bin/T.dll (.NETCoreApp,Version=v8.0)",
            "Errors and Failures:",
            "Errors, Failures and Warnings",
            "Tests Not Run:",
            "Run Settings",
            "Test Run Summary",
            "Test Run Aborted.",
            "The active Test Run was aborted because the host process exited unexpectedly.",
            "The test running when the crash occurred: ",
            "The active test run was aborted. Reason: Test host process crashed",
            "2026-01-29T20:02:11.9846651Z   Failed T.M [1 ms]",
            "\u{a0}Failed!  - Failed: 1, Passed: 0, Skipped: 0, Total: 1",
            "\x0bTotal tests: 3",
        ] {
            assert_eq!(triage(line.as_bytes(), false), Triage::Read, "{line}");
        }
        // Decoded, the invalid byte takes three: the timestamp's `Z ` would be out of reach.
        let late_stamp = b"2026-01-29T20:02:11.98466519999999\xffZ Failed!  - Total: 1";
        assert_eq!(triage(late_stamp, false), Triage::Read);
        assert_eq!(triage(b"1) Failed : N.T.M", false), Triage::Noise);
        assert_eq!(triage(b"1) Failed : N.T.M", true), Triage::Read);
    }

    /// The lines the guard below is tried on: each line of every string literal in this plugin's
    /// parsers and their tests (the recognisers' own prefixes among them), and of every dotnet log
    /// in the repository's fixtures and, where it is beside the repository, the shared corpus.
    fn sample_lines() -> Vec<String> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut texts = Vec::new();
        for entry in std::fs::read_dir(root.join("src/parse")).expect("the parsers' sources") {
            let source = std::fs::read_to_string(entry.expect("an entry").path()).expect("a source file");
            texts.extend(string_literals(&source));
        }
        for corpus in ["../../tests/fixtures/corpus/dotnet", "../../../shared/corpus/dotnet"] {
            let mut dirs = vec![root.join(corpus)];
            while let Some(dir) = dirs.pop() {
                for path in std::fs::read_dir(&dir).into_iter().flatten().flatten().map(|e| e.path()) {
                    if path.is_dir() {
                        dirs.push(path);
                    } else if path.extension().is_some_and(|e| e == "log") {
                        texts.push(String::from_utf8_lossy(&std::fs::read(&path).expect("a log")).into_owned());
                    }
                }
            }
        }
        texts.iter().flat_map(|t| t.lines()).map(str::to_string).collect()
    }

    /// The string literals of Rust source, escapes resolved, line comments skipped.
    fn string_literals(source: &str) -> Vec<String> {
        let (mut found, mut chars) = (Vec::new(), source.chars().peekable());
        while let Some(c) = chars.next() {
            match c {
                '/' if chars.peek() == Some(&'/') => {
                    chars.by_ref().find(|&c| c == '\n');
                }
                '\'' if chars.peek() == Some(&'"') => {
                    chars.next();
                }
                '"' => {
                    let mut text = String::new();
                    while let Some(c) = chars.next() {
                        match c {
                            '"' => break,
                            '\\' => match chars.next() {
                                Some('n') => text.push('\n'),
                                Some('t') => text.push('\t'),
                                Some('r') => text.push('\r'),
                                Some('0') => text.push('\0'),
                                Some('u') => {
                                    let hex: String = chars.by_ref().skip(1).take_while(|&c| c != '}').collect();
                                    text.extend(u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32));
                                }
                                Some('x') => {
                                    let hex: String = chars.by_ref().take(2).collect();
                                    text.extend(u8::from_str_radix(&hex, 16).ok().map(char::from));
                                }
                                Some('\n') => while chars.next_if(|c| c.is_whitespace()).is_some() {},
                                Some(other) => text.push(other),
                                None => {}
                            },
                            other => text.push(other),
                        }
                    }
                    found.push(text);
                }
                _ => {}
            }
        }
        found
    }

    /// Triage may throw a line away only if no recogniser would take it: a recogniser that gains
    /// a prefix that `starts_like_marker` or `holds_marker` lacks fails here, on the prefix itself
    /// and on the lines of its tests.
    const DIAGNOSTIC: &str = "/src/A.cs(3,5): error CS1002: ; expected [/src/A.csproj]";

    #[test]
    fn a_line_thrown_away_as_noise_is_one_no_recogniser_would_take() {
        use super::super::{DotnetParser, strip_ci_timestamp};
        use buildvise_plugin_api::{ParseContext, Parser, RunEnd};
        let lines = sample_lines();
        assert!(lines.len() > 500, "only {} lines to try", lines.len());
        let mut noise = 0;
        for line in &lines {
            for variant in [line.clone(), format!("  {}", line.trim()), format!("2026-01-29T20:02:11.9846651Z {line}")]
            {
                for nunit_section in [false, true] {
                    if triage(variant.as_bytes(), nunit_section) != Triage::Noise {
                        continue;
                    }
                    noise += 1;
                    // Fresh, and after a diagnostic that a line may add a note to (`Switch: `).
                    for (tool, before) in
                        [DIAGNOSTIC, ""].iter().flat_map(|b| [("dotnet.build", b), ("dotnet.test", b)])
                    {
                        let fresh = || {
                            let mut parser = DotnetParser::new(&ParseContext::new(tool, "/src"));
                            parser.nunit_section = nunit_section;
                            if !before.is_empty() {
                                parser.dispatch(before, 1);
                            }
                            parser
                        };
                        let (mut read, mut thrown) = (fresh(), fresh());
                        read.dispatch(strip_ci_timestamp(&variant), 2);
                        thrown.last = None;
                        let unchanged = read.nothing_open() && read.nunit_section == nunit_section;
                        let end = RunEnd::exited(1);
                        assert!(
                            unchanged && read.finish(&end) == thrown.finish(&end),
                            "triage throws away {variant:?}, which {tool} reads{}",
                            if before.is_empty() { "" } else { " after a diagnostic" }
                        );
                    }
                }
            }
        }
        assert!(noise > 100, "only {noise} lines were noise");
    }
}
