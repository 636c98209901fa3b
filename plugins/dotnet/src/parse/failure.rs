//! Failed tests as the console runners print them. Each format opens a block on its header line
//! and gathers the message and the first stack frame with a source location until the block ends:
//!
//! - VSTest: `  Failed Name [5 ms]`, `  Error Message:`, `  Stack Trace:` (`at … in F.cs:line N`);
//! - the Terminal Logger's re-logged VSTest failure: `F.cs(37): error TESTERROR:` followed by
//!   `Name (5ms): Error Message: …` and an indented stack trace;
//! - Microsoft.Testing.Platform: `failed Name (14ms)`, indented message and frames (`in F.cs:12`);
//! - nunit-console: `1) Test Failure : Name` (NUnit 2) or `1) Failed : Name` (NUnit 3).

use super::Found;
use super::msbuild;
use super::text::{MAX_TEXT, frame_location, indent};
use buildvise_plugin_api::{Diagnostic, Head, Recogniser, Text, Wants, clip, relative_to};

/// Help lines kept from a failure message beyond its headline.
const MAX_NOTES: usize = 4;

/// One failed test, from the console or from a report file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Failure {
    pub name: String,
    pub message: Option<String>,
    pub notes: Vec<String>,
    /// The first stack frame with a source location.
    pub frame: Option<(String, u32)>,
    /// Where the runner said the failure is when there is no frame (the Terminal Logger's
    /// `F.cs(37): error TESTERROR:` line).
    pub location: Option<(String, Option<u32>)>,
    pub code: Option<String>,
    /// Lines of the stored log; None for failures read from a report.
    pub lines: Option<(u64, u64)>,
}

impl Failure {
    pub fn new(name: &str, number: Option<u64>) -> Self {
        Failure { name: name.trim().to_string(), lines: number.map(|n| (n, n)), ..Failure::default() }
    }

    /// Adds one line of the failure message: the first is the headline, a few more are notes.
    pub fn add_text(&mut self, text: &str) {
        let text = text.trim();
        if text.is_empty() {
            return;
        }
        if self.message.is_none() {
            self.message = Some(clip(text, MAX_TEXT).into_owned());
        } else if self.notes.len() < MAX_NOTES {
            self.notes.push(clip(text, MAX_TEXT).into_owned());
        }
    }

    /// Takes the location of a stack frame unless an earlier frame had one.
    pub fn add_frame(&mut self, text: &str) -> bool {
        if self.frame.is_some() {
            return true;
        }
        match frame_location(text) {
            Some((path, line)) => {
                self.frame = Some((path.to_string(), line));
                true
            }
            None => false,
        }
    }

    fn touch(&mut self, number: u64) {
        if let Some((_, end)) = &mut self.lines {
            *end = (*end).max(number);
        }
    }

    pub fn into_diagnostic(self, cwd: &str) -> Diagnostic {
        let message = self.message.unwrap_or_else(|| "test failed".to_string());
        let mut d = Diagnostic::error(message);
        if !self.name.is_empty() {
            d = d.with_test(self.name);
        }
        if let Some((file, line)) = self.frame {
            d = d.with_location(relative_to(&file, cwd), Some(line), None);
        } else if let Some((file, line)) = self.location {
            d = d.with_location(relative_to(&file, cwd), line, None);
        }
        d.code = self.code;
        d.notes = self.notes;
        if let Some((start, end)) = self.lines {
            d = d.with_log_range(start, end);
        }
        d
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Section {
    Header,
    Message,
    Stack,
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    VsTest,
    /// Lines indented deeper than the header belong to the block.
    TerminalLogger {
        indent: usize,
    },
    Mtp {
        indent: usize,
    },
    NUnit,
}

/// Failed tests as the runners print them on the console: a block each (VSTest's `  Failed`,
/// Microsoft.Testing.Platform's `failed`, nunit-console's numbered failures, the Terminal
/// Logger's `error TESTERROR:`), read to its end.
#[derive(Default)]
pub struct Failures {
    block: Option<Block>,
}

impl Recogniser<Found> for Failures {
    fn wants(&self) -> Wants {
        Wants::starts_unindented(&["Failed ", "failed "]).or_test(numbered_or_test_error)
    }

    fn is_open(&self) -> bool {
        self.block.is_some()
    }

    fn feed(&mut self, line: &Text<'_>, found: &mut Found) -> bool {
        if let Some(block) = &mut self.block {
            if block.feed(line.text, line.number) {
                return true;
            }
            self.flush(found);
        }
        let opened = match line.trimmed.as_bytes().first() {
            Some(b'F') => Block::vstest(line.text, line.number),
            Some(b'f') => Block::mtp(line.text, line.number),
            Some(b'0'..=b'9') if found.nunit_section => Block::nunit(line.trimmed, line.number),
            _ => None,
        };
        let Some(block) = opened.or_else(|| test_error(line)) else { return false };
        self.block = Some(block);
        found.last = None;
        true
    }

    fn flush(&mut self, found: &mut Found) {
        if let Some(block) = self.block.take() {
            found.add_failure(block.failure);
        }
    }
}

/// nunit-console's numbered failures (`1) Test Failure : N`), and the Terminal Logger's
/// `error TESTERROR:` lines.
fn numbered_or_test_error(head: &Head<'_>) -> bool {
    head.unindented.first().is_some_and(u8::is_ascii_digit) || head.contains(b"TESTERROR")
}

/// The Terminal Logger's `Tests.cs(12): error TESTERROR: …`: the block of the test it names next.
fn test_error(line: &Text<'_>) -> Option<Block> {
    let c = msbuild::parse(line.trimmed).filter(|c| c.code.as_deref() == Some("TESTERROR"))?;
    let mut failure = Failure::new("", Some(line.number));
    failure.code = c.code;
    failure.location = Some((c.origin, c.line));
    Some(Block::terminal_logger(indent(line.text), failure))
}

/// A failure being read from the console.
#[derive(Debug)]
pub struct Block {
    kind: Kind,
    section: Section,
    pub failure: Failure,
}

impl Block {
    /// `  Failed Name [5 ms]` (exactly two blanks; VSTest's own result lines).
    pub fn vstest(text: &str, number: u64) -> Option<Block> {
        let rest = text.strip_prefix("  Failed ")?;
        let name = strip_bracketed_duration(rest)?;
        Some(Block { kind: Kind::VsTest, section: Section::Header, failure: Failure::new(name, Some(number)) })
    }

    /// The line after a canonical `… error TESTERROR:` line names the test.
    pub fn terminal_logger(header_indent: usize, failure: Failure) -> Block {
        Block { kind: Kind::TerminalLogger { indent: header_indent }, section: Section::Header, failure }
    }

    /// `failed Name (14ms)`, Microsoft.Testing.Platform's result line.
    pub fn mtp(text: &str, number: u64) -> Option<Block> {
        let trimmed = text.trim();
        let rest = trimmed.strip_prefix("failed ")?;
        let name = strip_parenthesised_duration(rest)?;
        let kind = Kind::Mtp { indent: indent(text) };
        Some(Block { kind, section: Section::Header, failure: Failure::new(name, Some(number)) })
    }

    /// `1) Test Failure : Name` / `2) Error : Name`; ignored and explicit tests are not failures.
    pub fn nunit(text: &str, number: u64) -> Option<Block> {
        let (kind, name) = nunit_header(text)?;
        let failing = kind.contains("Fail") || kind.contains("Error") || kind.contains("Invalid");
        failing.then(|| Block {
            kind: Kind::NUnit,
            section: Section::Message,
            failure: Failure::new(name, Some(number)),
        })
    }

    /// Takes `text` into the block, or returns false when the block ended before it.
    pub fn feed(&mut self, text: &str, number: u64) -> bool {
        let trimmed = text.trim();
        match self.kind {
            Kind::VsTest => self.feed_vstest(text, trimmed, number),
            Kind::TerminalLogger { indent: base } | Kind::Mtp { indent: base } => {
                if trimmed.is_empty() {
                    return true;
                }
                if indent(text) <= base {
                    return false;
                }
                self.failure.touch(number);
                if matches!(self.kind, Kind::TerminalLogger { .. }) {
                    self.feed_terminal_logger(trimmed);
                } else {
                    self.feed_mtp(trimmed);
                }
                true
            }
            Kind::NUnit => {
                if trimmed.is_empty() {
                    return true;
                }
                if ends_nunit_block(trimmed) {
                    return false;
                }
                self.failure.touch(number);
                if !trimmed.starts_with("at ") {
                    self.failure.add_text(trimmed);
                } else {
                    self.failure.add_frame(trimmed);
                }
                true
            }
        }
    }

    fn feed_vstest(&mut self, text: &str, trimmed: &str, number: u64) -> bool {
        if trimmed.is_empty() {
            return true;
        }
        if ends_vstest_block(text, trimmed) || is_project_diagnostic(trimmed) {
            return false;
        }
        self.failure.touch(number);
        match trimmed {
            "Error Message:" => self.section = Section::Message,
            "Stack Trace:" => self.section = Section::Stack,
            _ if indent(text) == 2 && trimmed.ends_with("Messages:")
                || matches!(trimmed, "Additional Information:" | "Debug Trace:" | "Debug Traces:") =>
            {
                self.section = Section::Other
            }
            _ => match self.section {
                Section::Message => self.failure.add_text(trimmed),
                Section::Stack => {
                    self.failure.add_frame(trimmed);
                }
                Section::Header | Section::Other => {}
            },
        }
        true
    }

    fn feed_terminal_logger(&mut self, trimmed: &str) {
        if self.section == Section::Header {
            self.section = Section::Message;
            if let Some((name, message)) = terminal_logger_test_line(trimmed) {
                self.failure.name = name.to_string();
                self.failure.add_text(message);
                return;
            }
        }
        if trimmed == "Stack Trace:" {
            self.section = Section::Stack;
        } else if self.section == Section::Stack || trimmed.starts_with("at ") {
            self.failure.add_frame(trimmed);
        } else {
            self.failure.add_text(trimmed);
        }
    }

    fn feed_mtp(&mut self, trimmed: &str) {
        if self.section == Section::Header && trimmed.starts_with("from ") {
            return;
        }
        self.section = Section::Message;
        if trimmed.starts_with("at ") {
            self.failure.add_frame(trimmed);
        } else if !trimmed.starts_with("--- End of") && trimmed != "Stack Trace:" {
            self.failure.add_text(trimmed);
        }
    }
}

/// `Name [5 ms]` → `Name`; the bracket must hold a duration (`[< 1 ms]`, `[2 s]`).
fn strip_bracketed_duration(rest: &str) -> Option<&str> {
    let body = rest.trim_end().strip_suffix(']')?;
    let open = body.rfind(" [")?;
    let duration = &body[open + 2..];
    duration.bytes().any(|b| b.is_ascii_digit()).then(|| body[..open].trim_end()).filter(|n| !n.is_empty())
}

/// `Name (14ms)` → `Name`; MTP durations look like `(14ms)`, `(1s 234ms)`, `(< 1ms)`.
fn strip_parenthesised_duration(rest: &str) -> Option<&str> {
    let body = rest.trim_end().strip_suffix(')')?;
    let open = body.rfind(" (")?;
    let duration = &body[open + 2..];
    let is_duration = duration.bytes().any(|b| b.is_ascii_digit())
        && duration.ends_with('s')
        && duration.bytes().all(|b| b.is_ascii_digit() || b" .<hmsu".contains(&b));
    is_duration.then(|| body[..open].trim_end()).filter(|n| !n.is_empty())
}

/// `Name (5ms): Error Message: text` → (`Name`, `text`).
fn terminal_logger_test_line(text: &str) -> Option<(&str, &str)> {
    let (head, message) = match text.find("): Error Message:") {
        Some(i) => (&text[..=i], text[i + 17..].trim()),
        None => (text.strip_suffix(':').unwrap_or(text), ""),
    };
    Some((strip_parenthesised_duration(head)?, message))
}

/// `3) Test Error : Ns.C.M` → (`Test Error`, `Ns.C.M`).
fn nunit_header(text: &str) -> Option<(&str, &str)> {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let rest = text[digits..].strip_prefix(") ")?;
    let (kind, name) = rest.split_once(" : ")?;
    (!kind.is_empty() && kind.len() < 24 && !name.trim().is_empty()).then_some((kind.trim(), name.trim()))
}

fn ends_nunit_block(trimmed: &str) -> bool {
    nunit_header(trimmed).is_some()
        || [
            "Tests Not Run:",
            "Errors and Failures:",
            "Errors, Failures and Warnings",
            "Run Settings",
            "Test Run Summary",
            "Tests run:",
            "Test Count:",
        ]
        .iter()
        .any(|p| trimmed.starts_with(p))
}

/// MSBuild output of a project built in parallel: a canonical line with a ` [project]` suffix,
/// which no test message carries.
fn is_project_diagnostic(trimmed: &str) -> bool {
    msbuild::might_be_diagnostic(trimmed.as_bytes()) && msbuild::parse(trimmed).is_some_and(|c| c.project.is_some())
}

/// Lines that end a VSTest failure: the next result, the run's summary, the next assembly.
fn ends_vstest_block(text: &str, trimmed: &str) -> bool {
    if indent(text) == 2
        && (trimmed.starts_with("Skipped ")
            || (trimmed.starts_with("Failed ") || trimmed.starts_with("Passed ")) && trimmed.ends_with(']'))
    {
        return true;
    }
    [
        "Failed!",
        "Passed!",
        "Skipped!",
        "Aborted!",
        "Results File:",
        "Test Run ",
        "Total tests:",
        "Test run for ",
        "A total of ",
        "[xUnit.net ",
        "NUnit Adapter",
        "Attachments:",
        "Starting test execution",
        "The active test run",
        "The active Test Run",
        "Build FAILED",
        "Build succeeded",
        "Test summary:",
        "Test run summary:",
    ]
    .iter()
    .any(|p| trimmed.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(mut block: Block, lines: &[&str]) -> Failure {
        for (i, line) in lines.iter().enumerate() {
            if !block.feed(line, i as u64 + 2) {
                break;
            }
        }
        block.failure
    }

    #[test]
    fn vstest_failure_with_message_continuations_and_stack() {
        let block = Block::vstest("  Failed Shop.Tests.CartTests.Total_IsSum [4 ms]", 1).unwrap();
        let f = run(
            block,
            &[
                "  Error Message:",
                "   Assert.Equal() Failure: Values differ",
                "Expected: 3",
                "Actual:   4",
                "  Stack Trace:",
                "     at System.Linq.Enumerable.First()",
                "   at Shop.Cart.Total() in /src/Shop/Cart.cs:line 41",
                "   at Shop.Tests.CartTests.Total_IsSum() in /src/Tests/CartTests.cs:line 12",
                "",
                "  Skipped Shop.Tests.CartTests.Later [1 ms]",
            ],
        );
        assert_eq!(f.name, "Shop.Tests.CartTests.Total_IsSum");
        assert_eq!(f.message.as_deref(), Some("Assert.Equal() Failure: Values differ"));
        assert_eq!(f.notes, ["Expected: 3", "Actual:   4"]);
        assert_eq!(f.frame, Some(("/src/Shop/Cart.cs".to_string(), 41)));
        assert_eq!(f.lines, Some((1, 9)));
    }

    #[test]
    fn vstest_failure_ends_at_msbuild_output_of_another_project() {
        let block = Block::vstest("  Failed T.M [1 ms]", 1).unwrap();
        let f = run(
            block,
            &[
                "  Error Message:",
                "   Expected diagnostic: A.cs(1,1): error CS0103: x",
                "/src/B/B.cs(3,4): error CS1002: ; expected [/src/B/B.csproj]",
            ],
        );
        assert_eq!(f.message.as_deref(), Some("Expected diagnostic: A.cs(1,1): error CS0103: x"));
        assert_eq!(f.lines, Some((1, 3)));
        let mut long = Failure::new("T.M", None);
        long.add_text(&"é".repeat(5000));
        assert!(long.message.unwrap().len() <= MAX_TEXT + 3);
    }

    #[test]
    fn vstest_header_needs_a_duration() {
        assert!(Block::vstest("  Failed to restore /p/App.csproj (in 2.1 sec).", 1).is_none());
        assert!(Block::vstest("  Failed Parse(\"91,0\") [< 1 ms]", 1).is_some());
        assert!(Block::vstest("   Failed X [1 ms]", 1).is_none());
    }

    #[test]
    fn terminal_logger_testerror_block() {
        let mut failure = Failure::new("", Some(1));
        failure.location = Some(("UnitTest1.cs".into(), Some(28)));
        let block = Block::terminal_logger(4, failure);
        let f = run(
            block,
            &[
                "      Tests.UnitTest1.Theory(value: 6) (< 1ms): Error Message: Assert.True() Failure",
                "      Expected: True",
                "      Stack Trace:",
                "         at Tests.UnitTest1.Theory(Int32 value) in /src/UnitTest1.cs:line 28",
                "    UnitTest1.cs(14): error TESTERROR:",
            ],
        );
        assert_eq!(f.name, "Tests.UnitTest1.Theory(value: 6)");
        assert_eq!(f.message.as_deref(), Some("Assert.True() Failure"));
        assert_eq!(f.notes, ["Expected: True"]);
        assert_eq!(f.frame, Some(("/src/UnitTest1.cs".to_string(), 28)));
    }

    #[test]
    fn mtp_failure() {
        let block = Block::mtp("failed Shop.Tests.Api.Create(name: \"x\") (33ms)", 1).unwrap();
        let f = run(
            block,
            &[
                "  from /r/bin/Debug/net10.0/Shop.Tests.dll (net10.0|x64)",
                "  Expected status to be Created, but found Forbidden.",
                "    at Assertions.Throw(String message)",
                "    at Shop.Tests.Api.Create(String name) in /r/Shop.Tests/Api.cs:915",
                "    --- End of stack trace from previous location ---",
                "/r/bin/Debug/net10.0/Shop.Tests.dll (net10.0|x64) failed with 1 error(s) (8s 406ms)",
            ],
        );
        assert_eq!(f.name, "Shop.Tests.Api.Create(name: \"x\")");
        assert_eq!(f.message.as_deref(), Some("Expected status to be Created, but found Forbidden."));
        assert_eq!(f.frame, Some(("/r/Shop.Tests/Api.cs".to_string(), 915)));
        assert_eq!(f.lines, Some((1, 6)));
        assert!(Block::mtp("failed to start (see log)", 1).is_none());
    }

    #[test]
    fn nunit_console_failures_and_ignored_tests() {
        let block = Block::nunit("4) Test Failure : Billing.Tests.T.Name_IsTrimmed", 1).unwrap();
        let f = run(
            block,
            &[
                "     Expected: String starting with \"Bill\"",
                "  But was:  \"  Billing\"",
                "",
                "at NUnit.Framework.StringAssert.StartsWith () [0x00008] in <3cae647c>:0",
                "at Billing.Tests.T.Name_IsTrimmed () [0x0000b] in /src/T.cs:54",
                "",
                "Tests Not Run:",
            ],
        );
        assert_eq!(f.message.as_deref(), Some("Expected: String starting with \"Bill\""));
        assert_eq!(f.frame, Some(("/src/T.cs".to_string(), 54)));
        assert!(Block::nunit("1) Ignored : Billing.Tests.T.Later", 1).is_none());
        assert!(Block::nunit("2) Failed : N.T.M(1)", 1).is_some());
    }

    #[test]
    fn diagnostic_prefers_the_first_frame() {
        let mut f = Failure::new("T.M", Some(3));
        f.add_text("boom");
        f.location = Some(("/src/T.cs".into(), Some(9)));
        f.add_frame("at T.M() in /src/Lib.cs:line 4");
        let d = f.into_diagnostic("/src");
        assert_eq!((d.file.as_deref(), d.line), (Some("Lib.cs"), Some(4)));
        assert_eq!(d.test.as_deref(), Some("T.M"));
    }
}
