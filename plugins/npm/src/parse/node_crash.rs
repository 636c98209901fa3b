//! A Node process that died of an uncaught exception or an unhandled rejection (Node 18-22,
//! CommonJS and ESM), whatever script ran it.
//!
//! Node writes the whole report to stderr at once:
//!
//! ```text
//! /abs/src/totals.js:9                      (file:///abs/... for ESM, node:internal/... too)
//!   for (const line of order.lines) {       the source line
//!                            ^              a caret under the throw
//!
//! TypeError: order.lines is not iterable    the error (more lines for `Require stack:`)
//!     at orderTotal (/abs/src/totals.js:9:28)
//!     at Module._compile (node:internal/...) {   ` {` opens the error's own properties
//!   code: 'MODULE_NOT_FOUND'
//! }
//!
//! Node.js v20.20.2
//! ```
//!
//! A thrown non-Error prints its value right under the caret and no frames; an unhandled
//! rejection of a non-Error is an `UnhandledPromiseRejection` thrown from node:internal. The
//! error is located at the first frame in the project, else at the header when that is the
//! project's (a SyntaxError has only Node's frames), else nowhere.
//!
//! The header and the source line could be anything, so they are watched without being taken;
//! the block is only claimed from the caret line on.

use super::frames;
use crate::parse::sink::Sink;
use buildvise_plugin_api::Diagnostic;
use buildvise_plugin_api::{Recogniser, Text, Wants};

const MAX_NOTES: usize = 3;
/// Lines read after the caret without a frame or Node's version line before the block is given
/// up: a thrown value prints in a few lines, and an old Node prints no version line.
const MAX_BARE_LINES: u32 = 20;

#[derive(Default)]
pub struct NodeCrash {
    state: State,
}

#[derive(Default)]
enum State {
    #[default]
    Idle,
    /// A `file:line` header was seen; the source line comes next.
    Header(Header),
    /// The source line was seen; the caret line confirms the block.
    Source(Header),
    Body(Box<Block>),
}

struct Header {
    file: String,
    line: u32,
    start: u64,
}

struct Block {
    header: Header,
    /// Where the caret points, 1-based.
    column: Option<u32>,
    end: u64,
    headline: Option<String>,
    notes: Vec<String>,
    frame: Option<frames::Frame>,
    code: Option<String>,
    in_frames: bool,
    in_props: bool,
    /// Node's `Node.js vN` closing line was read.
    closed: bool,
    bare_lines: u32,
}

impl Recogniser<Sink> for NodeCrash {
    fn is_open(&self) -> bool {
        !matches!(self.state, State::Idle)
    }

    fn wants(&self) -> Wants {
        // A header ends with its line number.
        Wants::test(|head| head.bytes.last().is_some_and(u8::is_ascii_digit))
    }

    fn feed(&mut self, ln: &Text<'_>, sink: &mut Sink) -> bool {
        let text = ln.text;
        match std::mem::take(&mut self.state) {
            State::Idle => {}
            // A second header right away means the first was not Node's.
            State::Header(header) if header_of(text).is_none() => {
                self.state = State::Source(header);
                return false;
            }
            State::Header(_) => {}
            State::Source(header) => {
                if let Some(caret) = caret_column(text) {
                    self.state = State::Body(Box::new(Block::new(header, Some(caret), ln.number)));
                    return true;
                }
            }
            State::Body(mut block) => {
                if block.feed(ln) {
                    if block.closed {
                        block.emit(sink);
                    } else {
                        self.state = State::Body(block);
                    }
                    return true;
                }
                block.emit(sink);
            }
        }
        if let Some((file, line)) = header_of(text) {
            self.state = State::Header(Header { file: file.to_string(), line, start: ln.number });
        }
        false
    }

    fn flush(&mut self, sink: &mut Sink) {
        if let State::Body(block) = std::mem::take(&mut self.state) {
            block.emit(sink);
        }
    }
}

/// `/abs/file.js:12`, `file:///abs/file.mjs:3`, `C:\app\x.js:4`, `node:internal/x:389`.
fn header_of(text: &str) -> Option<(&str, u32)> {
    // Every line comes here: most do not end with the line number a header ends with.
    if !text.ends_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let (file, line) = text.rsplit_once(':')?;
    let line = line.parse::<u32>().ok()?;
    let path = file.strip_prefix("file://").unwrap_or(file);
    let absolute = buildvise_plugin_api::is_absolute(path) || path.starts_with("node:");
    (absolute && !path.contains(": ")).then_some((path, line))
}

/// The column of a line that is only spaces and carets: one under a throw, one per character
/// under a token Node underlines (`^^^^^^` under `import`).
fn caret_column(text: &str) -> Option<u32> {
    let trimmed = text.trim_end();
    let spaces = trimmed.trim_end_matches('^');
    if spaces.len() == trimmed.len() || !spaces.bytes().all(|b| b == b' ') {
        return None;
    }
    u32::try_from(spaces.len()).ok()?.checked_add(1)
}

impl Block {
    fn new(header: Header, column: Option<u32>, number: u64) -> Self {
        Block {
            header,
            column,
            end: number,
            headline: None,
            notes: Vec::new(),
            frame: None,
            code: None,
            in_frames: false,
            in_props: false,
            closed: false,
            bare_lines: 0,
        }
    }

    /// Takes the line if it belongs to the report; false means the report ended before it.
    fn feed(&mut self, ln: &Text<'_>) -> bool {
        let text = ln.text;
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return true;
        }
        if trimmed.starts_with("Node.js v") && trimmed.as_bytes().get(9).is_some_and(u8::is_ascii_digit) {
            self.closed = true;
            self.end = ln.number;
            return true;
        }
        if self.in_props {
            // The error's own properties, `{` to `}`: only its code matters.
            if text.starts_with('}') {
                self.in_props = false;
            } else if let Some(code) = trimmed.strip_prefix("code: ") {
                self.code = Some(code.trim_end_matches(',').trim_matches(['\'', '"']).to_string());
            }
            self.end = ln.number;
            return true;
        }
        let indented = text.starts_with(' ');
        if indented && let Some(frame) = trimmed.strip_prefix("at ") {
            self.in_frames = true;
            let frame = match frame.strip_suffix(" {") {
                Some(frame) => {
                    self.in_props = true;
                    frame
                }
                None => frame,
            };
            if self.frame.is_none() {
                self.frame = frames::parse(frame).filter(frames::in_project);
            }
            self.end = ln.number;
            return true;
        }
        if self.in_frames {
            // An unhandled 'error' event names the emitter, then more frames.
            if trimmed.starts_with("Emitted '") {
                self.end = ln.number;
                return true;
            }
            return false;
        }
        self.bare_lines += 1;
        if self.bare_lines > MAX_BARE_LINES {
            return false;
        }
        self.end = ln.number;
        if trimmed.starts_with("(Use `node --trace-") {
            return true;
        }
        match &self.headline {
            None => self.headline = Some(trimmed.to_string()),
            Some(_) if self.notes.len() < MAX_NOTES => self.notes.push(trimmed.to_string()),
            Some(_) => {}
        }
        true
    }

    fn emit(self, sink: &mut Sink) {
        let Some(headline) = self.headline else { return };
        // Without frames or Node's closing line, the caret was someone else's.
        if !(self.in_frames || self.closed) {
            return;
        }
        let mut diagnostic = Diagnostic::error(shorten(&headline)).with_log_range(self.header.start, self.end);
        diagnostic.notes = self.notes;
        let header = frames::Frame { file: self.header.file, line: self.header.line, column: self.column };
        if let Some(frame) = self.frame.or_else(|| frames::in_project(&header).then_some(header)) {
            diagnostic = diagnostic.with_location(frame.file, Some(frame.line), frame.column);
        }
        if let Some(code) = self.code.filter(|c| !c.is_empty()) {
            diagnostic = diagnostic.with_code(code);
        }
        sink.push(diagnostic);
    }
}

/// Node's sentence for a rejected non-Error names the reason only at its end; the rest is the
/// same for every such rejection.
fn shorten(headline: &str) -> String {
    const REASON: &str = "The promise rejected with the reason ";
    match (headline.strip_prefix("UnhandledPromiseRejection: "), headline.find(REASON)) {
        (Some(_), Some(i)) => format!("UnhandledPromiseRejection: rejected with {}", &headline[i + REASON.len()..]),
        _ => headline.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use crate::parse::tests::{errors, parse_in};

    const CWD: &str = "/home/dev/src/crash";

    fn one(log: &str) -> (String, Option<String>, Option<u32>, Option<u32>, Option<String>) {
        let result = parse_in(log, 1, CWD);
        let errs = errors(&result);
        assert_eq!(errs.len(), 1, "{errs:?}");
        let e = errs[0];
        (e.message.clone(), e.file.clone(), e.line, e.column, e.code.clone())
    }

    #[test]
    fn commonjs_exception_at_the_first_project_frame() {
        let log = "\n> orders-cli@1.0.0 start\n> node src/app.js\n\norder 1: 6\n\
/home/dev/src/crash/src/totals.js:9\n\
\x20 for (const line of order.lines) {\n\
\x20                          ^\n\
\n\
TypeError: order.lines is not iterable\n\
\x20   at orderTotal (/home/dev/src/crash/src/totals.js:9:28)\n\
\x20   at report (/home/dev/src/crash/src/app.js:11:39)\n\
\x20   at Module._compile (node:internal/modules/cjs/loader:1521:14)\n\
\x20   at node:internal/main/run_main_module:28:49\n\
\n\
Node.js v20.20.2\n";
        let (message, file, line, column, _) = one(log);
        assert_eq!(message, "TypeError: order.lines is not iterable");
        assert_eq!((file.as_deref(), line, column), (Some("src/totals.js"), Some(9), Some(28)));
        let result = parse_in(log, 1, CWD);
        assert_eq!(result.diagnostics[0].log_range.map(|r| (r.start, r.end)), Some((6, 16)));
    }

    #[test]
    fn esm_rejection_skips_internal_frames() {
        let log = "file:///home/dev/src/crash/src/config.js:10\n\
\x20 const port = settings.listener.port ?? 8080;\n\
\x20                                ^\n\
\n\
TypeError: Cannot read properties of undefined (reading 'port')\n\
\x20   at resolvePort (file:///home/dev/src/crash/src/config.js:10:34)\n\
\x20   at async start (file:///home/dev/src/crash/src/index.js:4:16)\n\
\n\
Node.js v20.20.2\n";
        let (message, file, line, column, _) = one(log);
        assert_eq!(message, "TypeError: Cannot read properties of undefined (reading 'port')");
        assert_eq!((file.as_deref(), line, column), (Some("src/config.js"), Some(10), Some(34)));
    }

    #[test]
    fn thrown_values_and_syntax_errors_use_the_header() {
        let log = "\n/home/dev/src/crash/c.js:1\nthrow 'plain string';\n^\nplain string\n\
(Use `node --trace-uncaught ...` to show where the exception was thrown)\n\nNode.js v20.20.2\n";
        let (message, file, line, column, _) = one(log);
        assert_eq!((message.as_str(), file.as_deref(), line, column), ("plain string", Some("c.js"), Some(1), Some(1)));
        let log = "/home/dev/src/crash/l.js:2\n  return 1 +;\n            ^\n\nSyntaxError: Unexpected token ';'\n\
\x20   at wrapSafe (node:internal/modules/cjs/loader:1464:18)\n\
\x20   at node:internal/main/run_main_module:28:49\n\nNode.js v20.20.2\n";
        let (message, file, line, column, _) = one(log);
        assert_eq!(message, "SyntaxError: Unexpected token ';'");
        assert_eq!((file.as_deref(), line, column), (Some("l.js"), Some(2), Some(13)));
    }

    #[test]
    fn underlined_tokens_and_no_blank_line() {
        let log = "(node:24149) Warning: To load an ES module, set \"type\": \"module\" in the package.json or use the .mjs extension.\n\
(Use `node --trace-warnings ...` to show where the warning was created)\n\
/home/dev/src/crash/t/q.js:2\nimport y from 'fs';\n^^^^^^\n\n\
SyntaxError: Cannot use import statement outside a module\n\
\x20   at wrapSafe (node:internal/modules/cjs/loader:1464:18)\n\nNode.js v20.20.2\n";
        let (message, file, line, column, _) = one(log);
        assert_eq!(message, "SyntaxError: Cannot use import statement outside a module");
        assert_eq!((file.as_deref(), line, column), (Some("t/q.js"), Some(2), Some(1)));
        let log = "file:///home/dev/src/crash/u.mjs:1\nimport { nope } from 'node:fs';\n         ^^^^\n\
SyntaxError: The requested module 'node:fs' does not provide an export named 'nope'\n\
\x20   at ModuleJob._instantiate (node:internal/modules/esm/module_job:213:21)\n\nNode.js v20.20.2\n";
        let (message, file, line, column, _) = one(log);
        assert!(message.starts_with("SyntaxError: The requested module 'node:fs'"));
        assert_eq!((file.as_deref(), line, column), (Some("u.mjs"), Some(1), Some(10)));
    }

    #[test]
    fn rejected_non_errors_and_module_errors() {
        let log = "node:internal/process/promises:389\n      new UnhandledPromiseRejection(reason);\n      ^\n\n\
UnhandledPromiseRejection: This error originated either by throwing inside of an async function without a catch block, or by rejecting a promise which was not handled with .catch(). The promise rejected with the reason \"nope\".\n\
\x20   at throwUnhandledRejectionsMode (node:internal/process/promises:389:7)\n\
\x20   at process.processTicksAndRejections (node:internal/process/task_queues:96:32) {\n\
\x20 code: 'ERR_UNHANDLED_REJECTION'\n}\n\nNode.js v20.20.2\n";
        let (message, file, _, _, code) = one(log);
        assert_eq!(message, "UnhandledPromiseRejection: rejected with \"nope\".");
        assert_eq!((file, code.as_deref()), (None, Some("ERR_UNHANDLED_REJECTION")));
        let log = "node:internal/modules/cjs/loader:1210\n  throw err;\n  ^\n\n\
Error: Cannot find module './missing-dep'\nRequire stack:\n- /home/dev/src/crash/j.js\n\
\x20   at Module._resolveFilename (node:internal/modules/cjs/loader:1207:15)\n\
\x20   at Object.<anonymous> (/home/dev/src/crash/j.js:1:1)\n\
\x20   at Function.executeUserEntryPoint [as runMain] (node:internal/modules/run_main:164:12) {\n\
\x20 code: 'MODULE_NOT_FOUND',\n  requireStack: [ '/home/dev/src/crash/j.js' ]\n}\n\nNode.js v20.20.2\n";
        let (message, file, line, _, code) = one(log);
        assert_eq!(message, "Error: Cannot find module './missing-dep'");
        assert_eq!((file.as_deref(), line, code.as_deref()), (Some("j.js"), Some(1), Some("MODULE_NOT_FOUND")));
    }

    #[test]
    fn a_caret_without_an_error_report_is_not_a_crash() {
        let log = "/srv/app/notes.txt:3\nsome text\n   ^\nplain output\nmore output\n";
        assert!(errors(&parse_in(log, 0, CWD)).is_empty());
        let log = "/srv/app/a.js:3\n/srv/app/b.js:4\nx\n^\n\nError: e\n    at f (/srv/app/b.js:4:1)\n";
        assert_eq!(one(log).1.as_deref(), Some("/srv/app/b.js"));
    }
}
