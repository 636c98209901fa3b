//! `next build` (Next.js 15-16) when it fails to compile. With webpack, after `Failed to compile.`;
//! with Turbopack, after `Turbopack build failed with N errors:`; each error is a module line,
//! `./path` or `./path:line:col`, then its message, a code frame and an import trace:
//!
//! ```text
//! Failed to compile.
//!
//! ./app/page.tsx:8:9
//! Type error: Type 'number' is not assignable to type 'string'.     (the type check, Next 15)
//!
//! ./lib/money.ts
//! Error:   x Expected ',', got ';'                                  (SWC, with its own frame:)
//!    ,-[/abs/lib/money.ts:2:1]                                      the frame's first line
//! ```
//!
//! Next 16 prints its type check as plain tsc output, which the tsc recogniser reads.

use crate::parse::sink::Sink;
use buildvise_plugin_api::{Diagnostic, LogRange};
use buildvise_plugin_api::{Recogniser, Text, Wants};

#[derive(Default)]
pub struct Next {
    active: bool,
    /// An import trace is listing modules, which are not errors.
    in_trace: bool,
    open: Option<Diagnostic>,
}

const WEBPACK_FAILED: &str = "Failed to compile.";
const TURBOPACK_FAILED: &str = "Error: Turbopack build failed with ";

impl Recogniser<Sink> for Next {
    fn is_open(&self) -> bool {
        self.active
    }

    /// How the lines that start a block begin.
    fn wants(&self) -> Wants {
        Wants::starts(&[WEBPACK_FAILED, TURBOPACK_FAILED])
    }

    fn feed(&mut self, ln: &Text<'_>, sink: &mut Sink) -> bool {
        let text = ln.text;
        if text == WEBPACK_FAILED || text.starts_with(TURBOPACK_FAILED) {
            self.flush(sink);
            self.active = true;
            return true;
        }
        if !self.active {
            return false;
        }
        let trimmed = text.trim();
        if text.starts_with("> Build failed")
            || text.starts_with("Next.js build worker exited")
            || text.starts_with("    at ")
        {
            self.flush(sink);
            return false;
        }
        if trimmed.is_empty() {
            self.in_trace = false;
            return true;
        }
        if trimmed.starts_with("Import trace") {
            self.in_trace = true;
            return true;
        }
        if self.in_trace {
            return true;
        }
        if let Some((file, line, column)) = module_line(text) {
            if let Some(done) = self.open.take() {
                sink.push(done);
            }
            let diagnostic = Diagnostic::error("").with_location(file, line, column);
            self.open = Some(diagnostic.with_log_range(ln.number, ln.number));
            return true;
        }
        let Some(open) = &mut self.open else { return true };
        let start = open.log_range.map_or(ln.number, |r| r.start);
        open.log_range = Some(LogRange::new(start, ln.number));
        if open.message.is_empty() {
            let message =
                trimmed.strip_prefix("Type error: ").or_else(|| trimmed.strip_prefix("Error: ")).unwrap_or(trimmed);
            // SWC marks its message with `x`.
            let message = message.trim_start();
            open.message = message.strip_prefix("x ").unwrap_or(message).trim().to_string();
        } else if open.line.is_none()
            && let Some(frame) = trimmed.strip_prefix(",-[").and_then(|f| f.strip_suffix(']'))
            && let Some((rest, _column)) = frame.rsplit_once(':')
            && let Some((_, line)) = rest.rsplit_once(':')
        {
            // The frame's first line is the error's; its column is the frame's, not the error's.
            open.line = line.parse().ok();
        }
        true
    }

    fn flush(&mut self, sink: &mut Sink) {
        self.active = false;
        self.in_trace = false;
        if let Some(diagnostic) = self.open.take() {
            sink.push(diagnostic);
        }
    }
}

/// `./app/page.tsx` or `./lib/money.ts:2:39`, unindented.
fn module_line(text: &str) -> Option<(&str, Option<u32>, Option<u32>)> {
    let path = text.strip_prefix("./")?;
    if path.contains(' ') {
        return None;
    }
    let number = |s: &str| s.parse::<u32>().ok();
    let mut parts = path.rsplitn(3, ':');
    let (last, middle, first) = (parts.next()?, parts.next(), parts.next());
    match (middle, first) {
        (Some(line), Some(file)) if number(line).is_some() && number(last).is_some() => {
            Some((file, number(line), number(last)))
        }
        _ => Some((path, None, None)),
    }
}

#[cfg(test)]
mod tests {
    use crate::parse::tests::{errors, parse_in};

    const CWD: &str = "/home/dev/src/next-app";

    fn located(log: &str) -> Vec<(String, String, Option<u32>, Option<u32>)> {
        let result = parse_in(log, 1, CWD);
        errors(&result)
            .iter()
            .map(|e| (e.message.clone(), e.file.clone().unwrap_or_default(), e.line, e.column))
            .collect()
    }

    #[test]
    fn next15_type_error() {
        let log = "   Linting and checking validity of types ...\nFailed to compile.\n\n./app/page.tsx:8:9\n\
Type error: Type 'number' is not assignable to type 'string'.\n\n\
\x20 6 |\n  7 | export default function Home() {\n>  8 |   const title: string = 42;\n    |         ^\n\
Next.js build worker exited with code: 1 and signal: null\n";
        assert_eq!(
            located(log),
            [("Type 'number' is not assignable to type 'string'.".into(), "app/page.tsx".into(), Some(8), Some(9))]
        );
    }

    #[test]
    fn webpack_failed_to_compile() {
        // Next.js 16.4.6, `next build --webpack`
        let log = "  Creating an optimized production build ...\nFailed to compile.\n\n./app/page.tsx\n\
Module not found: Can't resolve 'chart-lib'\n\nhttps://nextjs.org/docs/messages/module-not-found\n\n\
./lib/money.ts\nError:   x Expected ',', got ';'\n   ,-[/home/dev/src/next-app/lib/money.ts:2:1]\n\
\x201 | export function formatPrice(cents: number): string {\n 2 |   const whole = Math.floor(cents / 100;\n\
\x20  :                                       ^\n   `----\n\nCaused by:\n    Syntax Error\n\n\
Import trace for requested module:\n./lib/money.ts\n./app/page.tsx\n\n\n> Build failed because of webpack errors\n";
        assert_eq!(
            located(log),
            [
                ("Module not found: Can't resolve 'chart-lib'".into(), "app/page.tsx".into(), None, None),
                ("Expected ',', got ';'".into(), "lib/money.ts".into(), Some(2), None),
            ]
        );
    }

    #[test]
    fn turbopack_build_error() {
        // Next.js 16.4.6 (Turbopack)
        let log = "> Build error occurred\nError: Turbopack build failed with 2 errors:\n./lib/money.ts:2:39\n\
Error: Expected ',', got ';'\n  1 | export function formatPrice(cents: number): string {\n\
> 2 |   const whole = Math.floor(cents / 100;\n    |                                       ^\n\n\
Parsing ecmascript source code failed\n\nImport trace:\n  Server Component:\n    ./lib/money.ts\n    ./app/page.tsx\n\n\n\
./app/page.tsx:2:1\nError: Module not found: Can't resolve 'chart-lib'\n> 2 | import Chart from \"chart-lib\";\n\n\n\n\
https://nextjs.org/docs/messages/module-not-found\n\n\n\
\x20   at <unknown> (https://nextjs.org/docs/messages/module-not-found)\n";
        assert_eq!(
            located(log),
            [
                ("Expected ',', got ';'".into(), "lib/money.ts".into(), Some(2), Some(39)),
                ("Module not found: Can't resolve 'chart-lib'".into(), "app/page.tsx".into(), Some(2), Some(1)),
            ]
        );
    }
}
