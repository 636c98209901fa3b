//! Node's process warnings: `(node:11097) ExperimentalWarning: VM Modules is an experimental
//! feature ...` or `(node:6761) [DEP0005] DeprecationWarning: Buffer() is deprecated ...`, then
//! `(Use `node --trace-warnings ...` to show where the warning was created)` for the first one
//! (or the stack, under `--trace-warnings`).
//!
//! Experimental and deprecation warnings in an npm script come from the runtime and the tools it
//! runs (a test runner's experimental flag, a dependency calling a deprecated API), not from a
//! problem in the project: they are the toolchain's, counted once. Other kinds stay the
//! project's: `Warning: To load an ES module, set "type": "module"` is about its package.json,
//! `MaxListenersExceededWarning` about its code. Each process prints its own, so a runner's
//! workers repeat them with other pids; the pid is left out so the sink drops repeats.

use crate::parse::sink::Sink;
use buildvise_plugin_api::Diagnostic;
use buildvise_plugin_api::{Recogniser, Text, Wants};

#[derive(Default)]
pub struct NodeWarning {
    /// A warning was just read: its `(Use ...)` hint or trace may follow.
    after_warning: bool,
}

impl Recogniser<Sink> for NodeWarning {
    fn is_open(&self) -> bool {
        self.after_warning
    }

    /// How the lines that start a block begin.
    fn wants(&self) -> Wants {
        Wants::starts(&["(node:"])
    }

    fn feed(&mut self, ln: &Text<'_>, sink: &mut Sink) -> bool {
        let text = ln.text;
        if self.after_warning {
            let trimmed = text.trim_start();
            if trimmed.starts_with("(Use `node --trace-") || (text.starts_with(' ') && trimmed.starts_with("at ")) {
                return true;
            }
            self.after_warning = false;
        }
        let Some((code, kind, message)) = warning(text) else { return false };
        let mut diagnostic = Diagnostic::warning(format!("{kind}: {message}")).with_log_range(ln.number, ln.number);
        if kind == "ExperimentalWarning" || kind == "DeprecationWarning" {
            diagnostic = diagnostic.from_toolchain();
        }
        if let Some(code) = code {
            diagnostic = diagnostic.with_code(code);
        }
        sink.push(diagnostic);
        self.after_warning = true;
        true
    }

    fn flush(&mut self, _sink: &mut Sink) {
        self.after_warning = false;
    }
}

/// `(node:PID) [CODE] KindWarning: message` → (code, kind, message).
fn warning(text: &str) -> Option<(Option<&str>, &str, &str)> {
    let rest = text.strip_prefix("(node:")?;
    let (pid, rest) = rest.split_once(") ")?;
    if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (code, rest) = match rest.strip_prefix('[').and_then(|r| r.split_once("] ")) {
        Some((code, rest)) => (Some(code), rest),
        None => (None, rest),
    };
    let (kind, message) = rest.split_once(": ")?;
    (kind.ends_with("Warning") && !kind.contains(' ')).then_some((code, kind, message.trim()))
}

#[cfg(test)]
mod tests {
    use crate::parse::tests::{parse, warnings};

    #[test]
    fn node_warnings_are_the_toolchain_s_and_said_once() {
        let log = "(node:11097) ExperimentalWarning: VM Modules is an experimental feature and might change at any time\n\
(Use `node --trace-warnings ...` to show where the warning was created)\n\
(node:11098) ExperimentalWarning: VM Modules is an experimental feature and might change at any time\n\
PASS test/e.test.mjs\n\
(node:6761) [DEP0005] DeprecationWarning: Buffer() is deprecated due to security and usability issues. Please use the Buffer.alloc(), Buffer.allocUnsafe(), or Buffer.from() methods instead.\n\
\x20   at showFlaggedDeprecation (node:buffer:191:11)\n\
\x20   at new Buffer (node:buffer:269:3)\n\
(node:6761) looks like a pid but is plain output\n\
(node:24149) Warning: To load an ES module, set \"type\": \"module\" in the package.json or use the .mjs extension.\n";
        let result = parse(log, 0);
        let warns = warnings(&result);
        assert_eq!(warns.len(), 3, "{warns:?}");
        assert_eq!(warns.iter().map(|w| w.toolchain).collect::<Vec<_>>(), [true, true, false]);
        assert!(warns[2].message.starts_with("Warning: To load an ES module"));
        assert_eq!(
            warns[0].message,
            "ExperimentalWarning: VM Modules is an experimental feature and might change at any time"
        );
        assert_eq!(warns[1].code.as_deref(), Some("DEP0005"));
        assert!(warns[1].message.starts_with("DeprecationWarning: Buffer() is deprecated"));
        assert!(result.diagnostics.iter().all(|d| d.file.is_none()));
    }
}
