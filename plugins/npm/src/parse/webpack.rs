//! webpack 5's errors and warnings, as webpack-cli prints them:
//!
//! ```text
//! ERROR in ./src/index.js 2:0-39                      module, line:column (column from 0)
//! Module not found: Error: Can't resolve './format' in '/abs/src'
//!
//! ERROR in /abs/src/total.ts                          ts-loader: the module by its path,
//! ./src/total.ts 2:8-13
//! [tsl] ERROR in /abs/src/total.ts(2,9)               then tsc's location (column from 1)
//!       TS2322: Type 'number' is not assignable to type 'string'.
//!  @ ./src/index.js 1:0-32 5:24-29                    who imports it
//!
//! WARNING in configuration
//! The 'mode' option has not been set, …
//! ```
//!
//! A block ends at a blank line; `Module build failed (from loader):` gives way to the loader's
//! own error on the next line.

use crate::parse::sink::Sink;
use buildvise_plugin_api::{Diagnostic, LogRange, Severity};
use buildvise_plugin_api::{Recogniser, Text, Wants};

#[derive(Default)]
pub struct Webpack {
    open: Option<Block>,
}

struct Block {
    diagnostic: Diagnostic,
    has_message: bool,
    /// The last line was `Module build failed (from …):`: the loader's error follows.
    build_failed: bool,
}

const ERROR: &str = "ERROR in ";
const WARNING: &str = "WARNING in ";

impl Recogniser<Sink> for Webpack {
    fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// How the lines that start a block begin.
    fn wants(&self) -> Wants {
        Wants::starts(&[ERROR, WARNING])
    }

    fn feed(&mut self, ln: &Text<'_>, sink: &mut Sink) -> bool {
        let text = ln.text;
        let header = text
            .strip_prefix(ERROR)
            .map(|rest| (Severity::Error, rest))
            .or_else(|| text.strip_prefix(WARNING).map(|rest| (Severity::Warning, rest)));
        if let Some((severity, rest)) = header {
            self.flush(sink);
            self.open = Some(Block::new(severity, rest.trim(), ln.number));
            return true;
        }
        let Some(block) = &mut self.open else { return false };
        if text.trim().is_empty() {
            self.flush(sink);
            return false;
        }
        let start = block.diagnostic.log_range.map_or(ln.number, |r| r.start);
        block.diagnostic.log_range = Some(LogRange::new(start, ln.number));
        block.feed(text.trim());
        true
    }

    fn flush(&mut self, sink: &mut Sink) {
        if let Some(block) = self.open.take() {
            sink.push(block.diagnostic);
        }
    }
}

impl Block {
    /// `./src/index.js 2:0-39`, `/abs/src/total.ts`, `configuration`, or `asset size limit: …`.
    fn new(severity: Severity, rest: &str, number: u64) -> Self {
        if let Some((what, message)) = rest.split_once(": ") {
            let diagnostic = Diagnostic::new(severity, message).with_code(what).with_log_range(number, number);
            return Block { diagnostic, has_message: true, build_failed: false };
        }
        let mut diagnostic = Diagnostic::new(severity, "").with_log_range(number, number);
        let (module, position) = match rest.split_once(' ') {
            Some((module, position)) => (module, Some(position)),
            None => (rest, None),
        };
        if module.starts_with(['.', '/']) || buildvise_plugin_api::is_absolute(module) {
            let (line, column) = position.map_or((None, None), line_column);
            diagnostic = diagnostic.with_location(module.trim_start_matches("./"), line, column);
        } else {
            diagnostic.code = Some(rest.to_string());
        }
        Block { diagnostic, has_message: false, build_failed: false }
    }

    fn feed(&mut self, line: &str) {
        if let Some(rest) = line.strip_prefix("[tsl] ERROR in ").or_else(|| line.strip_prefix("[tsl] WARNING in ")) {
            // `/abs/src/total.ts(2,9)`: tsc's own location is the precise one.
            if let Some((file, position)) = rest.strip_suffix(')').and_then(|r| r.rsplit_once('(')) {
                let (line, column) = position.split_once(',').unwrap_or((position, ""));
                let d = &mut self.diagnostic;
                (d.file, d.line, d.column) = (Some(file.to_string()), line.parse().ok(), column.parse().ok());
            }
            self.has_message = false;
            return;
        }
        if self.build_failed {
            self.build_failed = false;
            self.diagnostic.message = line.to_string();
            return;
        }
        if self.has_message || line.starts_with("@ ") || line.starts_with("at ") {
            return;
        }
        if line.starts_with("Module build failed") {
            self.build_failed = true;
            self.diagnostic.notes.push(line.trim_end_matches(':').to_string());
        } else if self.diagnostic.file.is_some() && line.starts_with("./") && !line.contains(": ") {
            // ts-loader names the module again before its own location.
            return;
        }
        self.diagnostic.message = message(line);
        self.has_message = true;
        if let Some((code, text)) = self.diagnostic.message.split_once(": ")
            && code.starts_with("TS")
            && code[2..].bytes().all(|b| b.is_ascii_digit())
        {
            let text = text.to_string();
            self.diagnostic.code = Some(code.to_string());
            self.diagnostic.message = text;
        }
    }
}

/// `Module not found: Error: Can't resolve './format' in '/abs/src'` → without the `Error: ` and
/// the folder searched.
fn message(line: &str) -> String {
    let line = line.replace(": Error: ", ": ");
    match line.rsplit_once(" in '") {
        Some((head, _)) if head.contains("Can't resolve") => head.to_string(),
        _ => line,
    }
}

/// `2:0-39`, `3:2`, `2:8-13`, `1:0-3:5` → line and 1-based column.
fn line_column(position: &str) -> (Option<u32>, Option<u32>) {
    let start = position.split('-').next().unwrap_or_default();
    let (line, column) = start.split_once(':').unwrap_or((start, ""));
    (line.parse().ok(), column.parse::<u32>().ok().and_then(|c| c.checked_add(1)))
}

#[cfg(test)]
mod tests {
    use crate::parse::tests::{errors, parse_in, warnings};

    const CWD: &str = "/home/dev/src/wp";

    #[test]
    fn module_not_found_and_ts_loader_errors() {
        // webpack 5.112.2, webpack-cli 7.3.1, ts-loader 9.6.2, TypeScript 5.9.3
        let log = "assets by status 391 bytes [cached] 1 asset\n\n\
ERROR in ./src/index.js 2:0-39\n\
Module not found: Error: Can't resolve './format' in '/home/dev/src/wp/src'\n\n\
ERROR in /home/dev/src/wp/src/total.ts\n./src/total.ts 2:8-13\n\
[tsl] ERROR in /home/dev/src/wp/src/total.ts(2,9)\n\
\x20     TS2322: Type 'number' is not assignable to type 'string'.\n\
\x20@ ./src/index.js 1:0-32 5:24-29\n\n\
3 errors have detailed information that is not shown.\n\n\
webpack 5.112.2 compiled with 3 errors in 2669 ms\n";
        let result = parse_in(log, 1, CWD);
        let errs = errors(&result);
        assert_eq!(errs.len(), 2, "{errs:?}");
        assert_eq!(errs[0].message, "Module not found: Can't resolve './format'");
        assert_eq!((errs[0].file.as_deref(), errs[0].line, errs[0].column), (Some("src/index.js"), Some(2), Some(1)));
        assert_eq!(errs[0].log_range.map(|r| (r.start, r.end)), Some((3, 4)));
        assert_eq!(errs[1].message, "Type 'number' is not assignable to type 'string'.");
        assert_eq!(errs[1].code.as_deref(), Some("TS2322"));
        assert_eq!((errs[1].file.as_deref(), errs[1].line, errs[1].column), (Some("src/total.ts"), Some(2), Some(9)));
    }

    #[test]
    fn parse_failures_loader_crashes_and_warnings() {
        let log = "ERROR in ./src/index.js 3:2\nModule parse failed: Unexpected token (3:2)\n\
File was parsed as module type 'javascript/auto'.\n  2 |   x: 1\n> 3 |   y: 2\n    |   ^\n\n\
ERROR in ./src/total.ts\nModule build failed (from ./node_modules/ts-loader/index.js):\n\
TypeError: Cannot read properties of undefined (reading 'fileExists')\n\
\x20   at findConfigFile (/home/dev/src/wp/node_modules/ts-loader/dist/config.js:105:30)\n\
\x20@ ./src/index.js 1:0-32 5:24-29\n\n\
WARNING in configuration\nThe 'mode' option has not been set, webpack will fallback to 'production' for this value.\n\
Set 'mode' option to 'development' or 'production' to enable defaults for each environment.\n\n\
webpack 5.112.2 compiled with 2 errors and 1 warning in 206 ms\n";
        let result = parse_in(log, 1, CWD);
        let errs = errors(&result);
        assert_eq!(errs.len(), 2, "{errs:?}");
        assert_eq!(errs[0].message, "Module parse failed: Unexpected token (3:2)");
        assert_eq!((errs[0].line, errs[0].column), (Some(3), Some(3)));
        assert_eq!(errs[1].message, "TypeError: Cannot read properties of undefined (reading 'fileExists')");
        assert_eq!(errs[1].notes, ["Module build failed (from ./node_modules/ts-loader/index.js)"]);
        let warns = warnings(&result);
        assert_eq!(warns.len(), 1);
        assert_eq!((warns[0].code.as_deref(), warns[0].file.as_deref()), (Some("configuration"), None));
        assert!(warns[0].message.starts_with("The 'mode' option has not been set"));
    }
}
