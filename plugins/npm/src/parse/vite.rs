//! A failed `vite build` (Vite 7 with Rollup, Vite 8 with Rolldown): after `error during build:`,
//! the error, where it is, maybe a code frame, and the JavaScript stack of the bundler.
//!
//! ```text
//! error during build:
//! [vite]: Rollup failed to resolve import "chart-lib" from "/abs/src/main.ts".    unresolved import
//! [vite:esbuild] Transform failed with 1 error:                                   esbuild transform:
//! /abs/src/money.ts:2:38: ERROR: Expected ")" but found ";"                        the real message
//! src/a.js (3:2): Expected ',', got 'ident'                                       Rollup parse error
//! file: /abs/src/a.js:3:2                                                         Vite 7's location
//! [builtin:vite-transform] Expected `,` or `)` but found `;`                       Rolldown, whose
//!    ╭─[ src/money.ts:2:39 ]                                                       location is here
//!     at viteLog (file:///abs/node_modules/vite/...)                               the stack ends it
//! ```
//!
//! Columns are counted from 0 except in Rolldown's frame. Rolldown may list several errors
//! (`Build failed with 2 errors:`), each starting at an unindented line after a blank one, and
//! names its kind in capitals where a plugin's name would be (`[UNRESOLVED_IMPORT] Error: …`,
//! `[MISSING_EXPORT] "x" is not exported by …`): that is the error's code.

use crate::parse::sink::Sink;
use buildvise_plugin_api::Diagnostic;
use buildvise_plugin_api::{Recogniser, Text, Wants};

/// Lines read without reaching the stack before the block is given up.
const MAX_LINES: u32 = 80;

#[derive(Default)]
pub struct Vite {
    block: Option<Block>,
}

#[derive(Default)]
struct Block {
    start: u64,
    end: u64,
    lines: u32,
    current: Option<Error>,
    done: Vec<Error>,
    prev_blank: bool,
    in_stack: bool,
}

struct Error {
    message: String,
    code: Option<String>,
    location: Option<(String, Option<u32>, Option<u32>)>,
    /// esbuild's `Transform failed` headline: the next line says what failed.
    transform: bool,
}

const HEADER: &str = "error during build:";

impl Recogniser<Sink> for Vite {
    fn is_open(&self) -> bool {
        self.block.is_some()
    }

    /// How the lines that start a block begin.
    fn wants(&self) -> Wants {
        Wants::starts(&[HEADER])
    }

    fn feed(&mut self, ln: &Text<'_>, sink: &mut Sink) -> bool {
        let text = ln.text;
        if text.strip_prefix(HEADER).is_some_and(|rest| rest.trim_end().is_empty()) {
            self.flush(sink);
            self.block = Some(Block { start: ln.number, end: ln.number, prev_blank: true, ..Block::default() });
            return true;
        }
        let Some(block) = &mut self.block else { return false };
        if block.feed(text, ln.number) {
            return true;
        }
        self.flush(sink);
        false
    }

    fn flush(&mut self, sink: &mut Sink) {
        let Some(mut block) = self.block.take() else { return };
        block.done.extend(block.current.take());
        for error in block.done {
            let mut diagnostic = Diagnostic::error(error.message).with_log_range(block.start, block.end);
            if let Some(code) = error.code {
                diagnostic = diagnostic.with_code(code);
            }
            if let Some((file, line, column)) = error.location {
                diagnostic = diagnostic.with_location(file, line, column);
            }
            sink.push(diagnostic);
        }
    }
}

impl Block {
    /// Takes the line if it is part of the report.
    fn feed(&mut self, text: &str, number: u64) -> bool {
        let trimmed = text.trim();
        let prev_blank = std::mem::replace(&mut self.prev_blank, trimmed.is_empty());
        self.lines += 1;
        let frame = text.starts_with("    at ");
        if self.in_stack && !(frame || trimmed.is_empty() || trimmed.starts_with('}') || text.starts_with("  ")) {
            return false;
        }
        if !self.in_stack && self.lines > MAX_LINES {
            return false;
        }
        self.end = number;
        if frame {
            self.in_stack = true;
            return true;
        }
        if self.in_stack || trimmed.is_empty() || trimmed.starts_with("Build failed with ") {
            return true;
        }
        if let Some(error) = &mut self.current {
            if error.transform {
                error.transform = false;
                if let Some((location, message)) = trimmed.split_once(": ERROR: ") {
                    error.message = message.to_string();
                    error.location = located(location, true);
                }
                return true;
            }
            if let Some(location) = trimmed.strip_prefix("file: ") {
                if error.location.is_none() {
                    error.location = located(location, true);
                }
                return true;
            }
            if let Some(location) = trimmed.trim_start_matches(['╭', '─', ',', '-']).strip_prefix('[')
                && let Some(location) = location.strip_suffix(']')
            {
                error.location = error.location.take().or_else(|| located(location.trim(), false));
                return true;
            }
            if !(prev_blank && !text.starts_with(' ') && (trimmed.starts_with('[') || trimmed.starts_with("Error: "))) {
                return true;
            }
        }
        self.done.extend(self.current.take());
        self.current = Some(headline(trimmed));
        true
    }
}

/// The error's first line, without `Error: ` and the plugin's `[name]`; a `[CODE]` in capitals is
/// kept as the code.
fn headline(text: &str) -> Error {
    let text = text.strip_prefix("Error: ").unwrap_or(text);
    let transform = text.contains("] Transform failed with ");
    let (code, without_plugin) = match text.strip_prefix('[').and_then(|t| t.split_once(']')) {
        Some((name, rest)) if is_code(name) => {
            let rest = rest.trim();
            (Some(name.to_string()), rest.strip_prefix("Error:").map_or(rest, str::trim_start))
        }
        Some((_, rest)) => (None, rest.trim_start_matches(':').trim()),
        None => (None, text),
    };
    // `… failed to resolve import "x" from "/abs/src/main.ts".`
    if let Some((what, from)) = without_plugin.split_once(" from \"")
        && what.contains("failed to resolve import")
    {
        let file = from.trim_end_matches('.').trim_end_matches('"');
        let location = Some((file.to_string(), None, None));
        return Error { message: what.to_string(), code, location, transform };
    }
    // Rollup's `src/a.js (3:2): message`.
    if let Some((location, message)) = without_plugin.split_once("): ")
        && let Some((file, position)) = location.rsplit_once(" (")
        && !file.contains(' ')
        && let Some((line, column)) = position.split_once(':')
        && let (Ok(line), Ok(column)) = (line.parse::<u32>(), column.parse::<u32>())
    {
        let location = Some((file.to_string(), Some(line), column.checked_add(1)));
        return Error { message: message.to_string(), code, location, transform };
    }
    Error { message: without_plugin.to_string(), code, location: None, transform }
}

/// Rolldown's error kinds (`UNRESOLVED_IMPORT`, `PARSE_ERROR`), as against plugin names
/// (`vite`, `vite:esbuild`, `builtin:vite-transform`), which are never in capitals.
pub(super) fn is_code(name: &str) -> bool {
    name.bytes().any(|b| b.is_ascii_uppercase())
        && name.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// `path:line:col`, `path:line` or `path`; `from_zero` when the column is counted from 0.
pub(super) fn located(text: &str, from_zero: bool) -> Option<(String, Option<u32>, Option<u32>)> {
    let number = |s: &str| s.parse::<u32>().ok();
    let (file, line, column) = match text.rsplit_once(':') {
        Some((rest, last)) if number(last).is_some() => match rest.rsplit_once(':') {
            Some((file, line)) if number(line).is_some() => (file, number(line), number(last)),
            _ => (rest, number(last), None),
        },
        _ => (text, None, None),
    };
    let column = if from_zero { column.and_then(|c| c.checked_add(1)) } else { column };
    (!file.is_empty() && !file.contains(' ')).then(|| (file.to_string(), line, column))
}

#[cfg(test)]
mod tests {
    use crate::parse::tests::{errors, parse_in};

    const CWD: &str = "/home/dev/src/vite-app";

    fn one(log: &str) -> (String, Option<String>, Option<u32>, Option<u32>) {
        let result = parse_in(log, 1, CWD);
        let errs = errors(&result);
        assert_eq!(errs.len(), 1, "{errs:?}");
        (errs[0].message.clone(), errs[0].file.clone(), errs[0].line, errs[0].column)
    }

    #[test]
    fn rollup_unresolved_import() {
        // vite 7.3.8
        let log = "vite v7.3.8 building client environment for production...\ntransforming...\n\
✓ 2 modules transformed.\n✗ Build failed in 103ms\nerror during build:\n\
[vite]: Rollup failed to resolve import \"chart-lib\" from \"/home/dev/src/vite-app/src/main.ts\".\n\
This is most likely unintended because it can break your application at runtime.\n\
If you do want to externalize this module explicitly add it to\n\
`build.rollupOptions.external`\n\
\x20   at viteLog (file:///home/dev/src/vite-app/node_modules/vite/dist/node/chunks/config.js:33885:57)\n\
\x20   at async Promise.all (index 1)\n";
        let (message, file, line, _) = one(log);
        assert_eq!(message, "Rollup failed to resolve import \"chart-lib\"");
        assert_eq!((file.as_deref(), line), (Some("src/main.ts"), None));
        let result = parse_in(log, 1, CWD);
        assert_eq!(result.diagnostics[0].log_range.map(|r| (r.start, r.end)), Some((5, 11)));
    }

    #[test]
    fn rolldown_unresolved_import_with_error_properties() {
        // vite 8.3.8
        let log = "✗ Build failed in 97ms\nerror during build:\nBuild failed with 1 error:\n\n\
Error: [vite]: Rolldown failed to resolve import \"chart-lib\" from \"/home/dev/src/vite-app/src/main.ts\".\n\
This is most likely unintended because it can break your application at runtime.\n\
\x20   at viteLog (file:///home/dev/src/vite-app/node_modules/vite/dist/node/chunks/node.js:34880:57)\n\
\x20   at async CAC.<anonymous> (file:///home/dev/src/vite-app/node_modules/vite/dist/node/cli.js:789:3) {\n\
\x20 errors: [Getter/Setter]\n}\n";
        let (message, file, _, _) = one(log);
        assert_eq!(
            (message.as_str(), file.as_deref()),
            ("Rolldown failed to resolve import \"chart-lib\"", Some("src/main.ts"))
        );
    }

    #[test]
    fn transform_and_parse_errors() {
        let log = "error during build:\n[vite:esbuild] Transform failed with 1 error:\n\
/home/dev/src/vite-app/src/money.ts:2:38: ERROR: Expected \")\" but found \";\"\n\
file: /home/dev/src/vite-app/src/money.ts:2:38\n\nExpected \")\" but found \";\"\n\
1  |  export function formatPrice(cents: number): string {\n\
2  |    const whole = Math.floor(cents / 100;\n   |                                        ^\n\n\
\x20   at failureErrorWithLog (/home/dev/src/vite-app/node_modules/esbuild/lib/main.js:1752:15)\n\
\x20   at Pipe.onStreamRead (node:internal/stream_base_commons:191:23)\n";
        let (message, file, line, column) = one(log);
        assert_eq!(message, "Expected \")\" but found \";\"");
        assert_eq!((file.as_deref(), line, column), (Some("src/money.ts"), Some(2), Some(39)));

        let log = "error during build:\nsrc/a.js (3:2): Expected ',', got 'ident'\nfile: /home/dev/src/vite-app/src/a.js:3:2\n\n\
1: export const a = {\n2:   x: 1\n3:   y: 2,\n     ^\n4: };\n\n\
\x20   at getRollupError (file:///home/dev/src/vite-app/node_modules/rollup/dist/es/shared/parseAst.js:355:41)\n";
        assert_eq!(one(log), ("Expected ',', got 'ident'".into(), Some("src/a.js".into()), Some(3), Some(3)));

        let log = "error during build:\nBuild failed with 1 error:\n\n\
[builtin:vite-transform] Expected `,` or `)` but found `;`\n\
\x20  ╭─[ src/money.ts:2:39 ]\n   │\n 2 │   const whole = Math.floor(cents / 100;\n   │ ┬ \n───╯\n\n\
\x20   at aggregateBindingErrorsIntoJsError (file:///home/dev/src/vite-app/node_modules/rolldown/dist/shared/error-CLo6EJKG.mjs:50:18)\n\
\x20   at async CAC.<anonymous> (file:///home/dev/src/vite-app/node_modules/vite/dist/node/cli.js:789:3) {\n\
\x20 errors: [Getter/Setter]\n}\nafter\n";
        assert_eq!(
            one(log),
            ("Expected `,` or `)` but found `;`".into(), Some("src/money.ts".into()), Some(2), Some(39))
        );
    }

    #[test]
    fn rolldowns_error_kind_is_the_code() {
        // vite 8.4.0: a missing export.
        let log = "✗ Build failed in 292ms\nerror during build:\nBuild failed with 1 error:\n\n\
[MISSING_EXPORT] \"resetCounter\" is not exported by \"src/counter.ts\".\n\
\x20  ╭─[ src/main.ts:5:24 ]\n   │\n 5 │ import { setupCounter, resetCounter } from \"./counter.ts\";\n───╯\n\n\
\x20   at aggregateBindingErrorsIntoJsError (file:///home/dev/src/vite-app/node_modules/rolldown/dist/shared/error-z4CTM_u3.mjs:110:18)\n";
        let result = parse_in(log, 1, CWD);
        let errs = errors(&result);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(
            (errs[0].code.as_deref(), errs[0].message.as_str(), errs[0].line, errs[0].column),
            (Some("MISSING_EXPORT"), "\"resetCounter\" is not exported by \"src/counter.ts\".", Some(5), Some(24))
        );
        // rolldown-vite 7.3.1 follows the kind with `Error:`, which says nothing more.
        let log = "error during build:\nBuild failed with 1 error:\n\n\
[UNRESOLVED_IMPORT] Error: Could not resolve './format.js' in src/main.js\n\
\x20  ╭─[ src/main.js:6:29 ]\n───╯\n\n\
\x20   at aggregateBindingErrorsIntoJsError (file:///home/dev/src/vite-app/node_modules/rolldown/dist/shared/bindingify-input-options-Bk0BBr2s.mjs:56:18)\n";
        let result = parse_in(log, 1, CWD);
        let errs = errors(&result);
        assert_eq!(
            (errs[0].code.as_deref(), errs[0].message.as_str(), errs[0].file.as_deref()),
            (Some("UNRESOLVED_IMPORT"), "Could not resolve './format.js' in src/main.js", Some("src/main.js"))
        );
    }
}
