//! A process that died of an exception nobody caught: the test host under VSTest, or any program
//! the .NET runtime ran.
//!
//! The runtime prints `Unhandled exception. System.InvalidOperationException: msg` and the stack,
//! innermost frame first, one `   at Ns.Class.Method() in /src/File.cs:line 42` per frame (only
//! frames of assemblies with symbols carry ` in path:line N`). VSTest forwards the test host's
//! last words inside its abort line:
//!
//! ```text
//! The active test run was aborted. Reason: Test host process crashed : Unhandled exception. System.InvalidOperationException: msg
//!    at Shop.Tests.Worker.Run() in /src/Shop.Tests/Worker.cs:line 42
//!    at System.Threading.Thread.StartCallback()
//! ```

use super::Found;
use super::text::{MAX_TEXT, frame_location};
use buildvise_plugin_api::{Diagnostic, Head, Recogniser, Text, Wants, clip, relative_to};
use memchr::memmem::Finder;
use std::sync::LazyLock;

/// Located frames remembered per crash: the project's frame is near the top of the stack.
const MAX_FRAMES: usize = 64;

/// Lines of a multi-line message taken before the first frame (`File name: '…'` under a
/// FileNotFoundException, the lines of an exception message that holds newlines).
const MAX_MESSAGE_LINES: u8 = 8;

const UNHANDLED: &str = "Unhandled exception. ";

/// Looks for [`UNHANDLED`] in every line; built once, where `str::find` builds a searcher per
/// call, which costs more than the search.
static UNHANDLED_FINDER: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(UNHANDLED));

/// `System.InvalidOperationException: msg` from a line holding `Unhandled exception. ` followed
/// by an exception type (a dotted name whose last part ends in `Exception`), or None.
pub fn unhandled_exception(text: &str) -> Option<&str> {
    let at = UNHANDLED_FINDER.find(text.as_bytes())?;
    let rest = text[at + UNHANDLED.len()..].trim();
    let name = rest.split_once(':').map_or(rest, |(name, _)| name);
    let is_type = name.split('.').all(|part| {
        part.starts_with(|c: char| c.is_alphabetic() || c == '_')
            && part.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '`')
    }) && name.ends_with("Exception");
    is_type.then_some(rest)
}

/// The text before ` : Unhandled exception.` on VSTest's abort line: what VSTest itself said.
pub fn abort_reason(text: &str) -> Option<&str> {
    let at = text.find(UNHANDLED)?;
    let before = text[..at].trim_end();
    let before = before.strip_suffix(':').unwrap_or(before).trim_end();
    (!before.is_empty()).then_some(before)
}

/// Notes kept on a crash (VSTest's own words, the abort's reason).
const MAX_NOTES: usize = 5;

/// A test host or program killed by an unhandled exception: the exception, its stack, VSTest's
/// words on the abort, and the test that was running. Reported when the next test run starts, or
/// when the output ends.
#[derive(Default)]
pub struct Crashes {
    crash: Option<Diagnostic>,
    /// The stack printed under the crash's `Unhandled exception.` line, while it is being read.
    stack: Option<Stack>,
    /// The top frame of the crash's stack, once its stack ended.
    frame: Option<(String, u32)>,
    /// After `The test running when the crash occurred:`, the next line names the test.
    awaiting_test: bool,
}

impl Recogniser<Found> for Crashes {
    fn wants(&self) -> Wants {
        Wants::starts_unindented(&[
            "The active ",
            "Test Run Aborted",
            "The test running when the crash occurred:",
            "Test run for ",
        ])
        .or_test(holds_unhandled)
    }

    fn is_open(&self) -> bool {
        self.stack.is_some() || self.awaiting_test
    }

    fn feed(&mut self, line: &Text<'_>, found: &mut Found) -> bool {
        let (trimmed, number) = (line.trimmed, line.number);
        if let Some(stack) = &mut self.stack {
            match stack.feed(trimmed) {
                Take::Frame => {
                    if let Some(range) = self.crash.as_mut().and_then(|c| c.log_range.as_mut()) {
                        range.end = range.end.max(number);
                    }
                    return true;
                }
                Take::Maybe => {}
                Take::End => self.end_stack(&found.cwd),
            }
        }
        if super::is_skipped(trimmed.as_bytes()) {
            return false;
        }
        if self.awaiting_test {
            self.awaiting_test = false;
            if let Some(crash) = &mut self.crash {
                crash.test = Some(clip(trimmed, MAX_TEXT).into_owned());
                return true;
            }
        }
        if trimmed.starts_with("Test run for ") {
            // A new run: the crash before it is complete. The run itself is [`super::runs`]'.
            self.flush(found);
            return false;
        }
        if let Some(exception) = unhandled_exception(trimmed) {
            // The exception is what the reader needs first; VSTest's own words become a note.
            found.host_crashed |= trimmed.starts_with("The active ");
            let crash = self.crash.get_or_insert_with(|| Diagnostic::error("").with_log_range(number, number));
            let said = std::mem::replace(&mut crash.message, clip(exception, MAX_TEXT).into_owned());
            for note in [Some(said.as_str()).filter(|s| !s.is_empty()), abort_reason(trimmed)].into_iter().flatten() {
                if crash.notes.len() < MAX_NOTES {
                    crash.notes.push(clip(note, MAX_TEXT).into_owned());
                }
            }
            self.stack = Some(Stack::default());
            self.frame = None;
            return true;
        }
        if trimmed.starts_with("The active test run was aborted")
            || trimmed.starts_with("The active Test Run was aborted")
            || trimmed.starts_with("Test Run Aborted")
        {
            found.host_crashed = true;
            match &mut self.crash {
                Some(crash) => {
                    if crash.notes.len() < MAX_NOTES && !trimmed.starts_with("Test Run Aborted.") {
                        crash.notes.push(clip(trimmed, MAX_TEXT).into_owned());
                    }
                    if let Some(range) = &mut crash.log_range {
                        range.end = range.end.max(number);
                    }
                }
                None => self.crash = Some(Diagnostic::error(clip(trimmed, MAX_TEXT)).with_log_range(number, number)),
            }
            return true;
        }
        if trimmed.starts_with("The test running when the crash occurred:") {
            self.awaiting_test = self.crash.is_some();
            return true;
        }
        false
    }

    /// Reports the crash read so far, located by the top frame of its stack.
    fn flush(&mut self, found: &mut Found) {
        self.end_stack(&found.cwd);
        if let Some(mut crash) = self.crash.take() {
            if let Some((file, line)) = self.frame.take() {
                crash = crash.with_location(relative_to(&file, &found.cwd), Some(line), None);
            }
            found.diagnostics.push(crash);
            found.crash_reported = true;
        }
        self.awaiting_test = false;
    }
}

impl Crashes {
    /// The crash's stack ended: its top frame inside the project locates the crash.
    fn end_stack(&mut self, cwd: &str) {
        if let Some(stack) = self.stack.take() {
            self.frame = stack.top_frame(cwd).cloned();
        }
    }
}

fn holds_unhandled(head: &Head<'_>) -> bool {
    head.contains(UNHANDLED.as_bytes())
}

/// What a line was to the stack being read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Take {
    /// A frame or a separator: the stack's own line.
    Frame,
    /// Before the first frame, a line that may continue the message: the stack stays open, but
    /// the line is read as any other too (it may as well be the runner's next line).
    Maybe,
    /// The stack ended before this line.
    End,
}

/// The located frames of one crash's stack, innermost first.
#[derive(Debug, Default)]
pub struct Stack {
    frames: Vec<(String, u32)>,
    seen_frame: bool,
    message_lines: u8,
}

impl Stack {
    /// Reads one line after the exception's.
    pub fn feed(&mut self, trimmed: &str) -> Take {
        if trimmed.starts_with("at ") {
            self.seen_frame = true;
            if let Some((path, line)) = frame_location(trimmed)
                && self.frames.len() < MAX_FRAMES
            {
                self.frames.push((path.to_string(), line));
            }
            return Take::Frame;
        }
        // Inner exceptions (` ---> System.IO.IOException: …`) and the runtime's separators.
        if trimmed.starts_with("---> ") || trimmed.starts_with("--- End of") {
            return Take::Frame;
        }
        if !self.seen_frame && self.message_lines < MAX_MESSAGE_LINES && !trimmed.is_empty() {
            self.message_lines += 1;
            return Take::Maybe;
        }
        Take::End
    }

    /// The innermost frame inside the project (under `cwd`), else the innermost located one.
    pub fn top_frame(&self, cwd: &str) -> Option<&(String, u32)> {
        let inside = |path: &str| !cwd.is_empty() && relative_to(path, cwd) != path;
        self.frames.iter().find(|(path, _)| inside(path)).or(self.frames.first())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unhandled_exception_lines() {
        let line = "The active test run was aborted. Reason: Test host process crashed : Unhandled exception. \
                    System.InvalidOperationException: The environment was not disposed";
        assert_eq!(
            unhandled_exception(line),
            Some("System.InvalidOperationException: The environment was not disposed")
        );
        assert_eq!(abort_reason(line), Some("The active test run was aborted. Reason: Test host process crashed"));
        assert_eq!(unhandled_exception("Unhandled exception. System.Exception: boom"), Some("System.Exception: boom"));
        assert_eq!(
            unhandled_exception("Unhandled exception. Shop.Errors.StockException"),
            Some("Shop.Errors.StockException")
        );
        assert_eq!(unhandled_exception("Unhandled exception. Please retry: later"), None);
        assert_eq!(unhandled_exception("Test host process crashed : Stack overflow."), None);
        assert_eq!(abort_reason("Unhandled exception. System.Exception: x"), None);
    }

    #[test]
    fn the_projects_frame_is_preferred() {
        let mut stack = Stack::default();
        for line in [
            "at System.ThrowHelper.ThrowInvalidOperationException()",
            "at Vendor.Lib.Pool.Take() in /build/vendor/Pool.cs:line 9",
            "--- End of inner exception stack trace ---",
            "at Shop.Tests.Worker.Run() in /home/dev/src/shop/Worker.cs:line 42",
            "at System.Threading.Thread.StartCallback()",
        ] {
            assert_eq!(stack.feed(line), Take::Frame);
        }
        assert_eq!(stack.feed("Test Run Aborted."), Take::End);
        let mut message = Stack::default();
        assert_eq!(message.feed("File name: '/srv/app/appsettings.json'"), Take::Maybe);
        assert_eq!(message.feed("at Shop.Program.Main() in /src/Program.cs:line 7"), Take::Frame);
        assert_eq!(message.feed("Build FAILED."), Take::End);
        assert_eq!(Stack::default().feed(""), Take::End);
        assert_eq!(stack.top_frame("/home/dev/src/shop"), Some(&("/home/dev/src/shop/Worker.cs".to_string(), 42)));
        assert_eq!(stack.top_frame(""), Some(&("/build/vendor/Pool.cs".to_string(), 9)));
        assert_eq!(Stack::default().top_frame("/p"), None);
    }
}
