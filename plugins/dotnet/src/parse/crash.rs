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

use super::text::frame_location;
use buildvise_plugin_api::relative_to;
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

/// True when `bytes` has the words [`unhandled_exception`] looks for at `at`: a test on the raw
/// line, before it is decoded.
pub fn unhandled_at(bytes: &[u8], at: usize) -> bool {
    bytes[at..].starts_with(UNHANDLED.as_bytes())
}

/// The text before ` : Unhandled exception.` on VSTest's abort line: what VSTest itself said.
pub fn abort_reason(text: &str) -> Option<&str> {
    let at = text.find(UNHANDLED)?;
    let before = text[..at].trim_end();
    let before = before.strip_suffix(':').unwrap_or(before).trim_end();
    (!before.is_empty()).then_some(before)
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
