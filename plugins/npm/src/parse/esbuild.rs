//! esbuild's messages (0.x), as its CLI prints them and as tools built on it pass them on:
//!
//! ```text
//! ✘ [ERROR] Could not resolve "./format-utils"       (▲ [WARNING] … [equals-nan] for a warning)
//!
//!     src/index.ts:2:20:                             where, column counted from 0
//!       2 │ import { fmt } from "./format-utils";
//!         ╵                     ~~~~~~~~~~~~~~~~
//!
//!   You can mark the path … as external …            notes, each maybe with its own location
//! ```
//!
//! A message ends at the next line that is neither blank nor indented (`1 warning and 2 errors`).

use crate::parse::sink::Sink;
use buildvise_plugin_api::{Diagnostic, LogRange, Severity};
use buildvise_plugin_api::{Recogniser, Text, Wants};

const MAX_NOTES: usize = 2;

#[derive(Default)]
pub struct Esbuild {
    open: Option<Message>,
}

struct Message {
    diagnostic: Diagnostic,
    /// A note began: locations below it are the note's.
    in_notes: bool,
}

const ERROR: &str = "✘ [ERROR] ";
const WARNING: &str = "▲ [WARNING] ";

impl Recogniser<Sink> for Esbuild {
    fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// How the lines that start a block begin.
    fn wants(&self) -> Wants {
        Wants::starts(&[ERROR, WARNING])
    }

    fn feed(&mut self, ln: &Text<'_>, sink: &mut Sink) -> bool {
        let text = ln.text;
        if let Some(header) = header(text) {
            self.flush(sink);
            self.open = Some(Message { diagnostic: header.with_log_range(ln.number, ln.number), in_notes: false });
            return true;
        }
        let Some(open) = &mut self.open else { return false };
        if !(text.is_empty() || text.starts_with("  ")) {
            self.flush(sink);
            return false;
        }
        let start = open.diagnostic.log_range.map_or(ln.number, |r| r.start);
        open.diagnostic.log_range = Some(LogRange::new(start, ln.number));
        let trimmed = text.trim();
        if text.starts_with("    ") {
            if !open.in_notes
                && open.diagnostic.file.is_none()
                && let Some((file, line, column)) = location(trimmed)
            {
                let d = &mut open.diagnostic;
                (d.file, d.line, d.column) = (Some(file.to_string()), Some(line), column.checked_add(1));
            }
        } else if !trimmed.is_empty() {
            open.in_notes = true;
            if open.diagnostic.notes.len() < MAX_NOTES {
                open.diagnostic.notes.push(trimmed.to_string());
            }
        }
        true
    }

    fn flush(&mut self, sink: &mut Sink) {
        if let Some(open) = self.open.take() {
            sink.push(open.diagnostic);
        }
    }
}

/// `✘ [ERROR] message` or `▲ [WARNING] message [code]`.
fn header(text: &str) -> Option<Diagnostic> {
    let (severity, message) = if let Some(rest) = text.strip_prefix(ERROR) {
        (Severity::Error, rest)
    } else {
        (Severity::Warning, text.strip_prefix(WARNING)?)
    };
    let message = message.trim();
    let code = message
        .strip_suffix(']')
        .and_then(|m| m.rsplit_once(" ["))
        .filter(|(_, code)| !code.is_empty() && code.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'));
    Some(match code {
        Some((message, code)) => Diagnostic::new(severity, message).with_code(code),
        None => Diagnostic::new(severity, message),
    })
}

/// `src/index.ts:2:20:` → (file, line, column from 0).
fn location(text: &str) -> Option<(&str, u32, u32)> {
    let rest = text.strip_suffix(':')?;
    let (rest, column) = rest.rsplit_once(':')?;
    let (file, line) = rest.rsplit_once(':')?;
    Some((file, line.parse().ok()?, column.parse().ok()?)).filter(|_| !file.is_empty() && !file.contains(' '))
}

#[cfg(test)]
mod tests {
    use crate::parse::tests::{errors, parse, warnings};

    // `npm run build` of `esbuild src/index.ts --bundle` (esbuild 0.28.2).
    const BUILD: &str = "\n> esbuild-error@1.0.0 build\n> esbuild src/index.ts --bundle --platform=node --outfile=dist/out.js\n\n\
▲ [WARNING] Comparison with NaN using the \"==\" operator here is always false [equals-nan]\n\
\n\
\x20   src/index.ts:5:11:\n\
\x20     5 │ if (prices == NaN) {\n\
\x20       ╵            ~~\n\
\n\
\x20 Floating-point equality is defined such that NaN is never equal to anything, so \"x === NaN\" always returns false. You need to use \"Number.isNaN(x)\" instead to test for NaN.\n\
\n\
✘ [ERROR] Could not resolve \"./format-utils\"\n\
\n\
\x20   src/index.ts:2:20:\n\
\x20     2 │ import { fmt } from \"./format-utils\";\n\
\x20       ╵                     ~~~~~~~~~~~~~~~~\n\
\n\
✘ [ERROR] Unexpected \";\"\n\
\n\
\x20   src/total.ts:6:14:\n\
\x20     6 │   return sum +;\n\
\x20       ╵               ^\n\
\n\
1 warning and 2 errors\n";

    #[test]
    fn errors_and_warnings_at_their_locations() {
        let result = parse(BUILD, 1);
        let errs = errors(&result);
        assert_eq!(errs.len(), 2, "{errs:?}");
        assert_eq!(errs[0].message, "Could not resolve \"./format-utils\"");
        assert_eq!((errs[0].file.as_deref(), errs[0].line, errs[0].column), (Some("src/index.ts"), Some(2), Some(21)));
        assert_eq!(errs[0].log_range.map(|r| (r.start, r.end)), Some((13, 18)));
        assert_eq!((errs[1].file.as_deref(), errs[1].line, errs[1].column), (Some("src/total.ts"), Some(6), Some(15)));
        let warns = warnings(&result);
        assert_eq!(warns.len(), 1);
        assert_eq!(warns[0].code.as_deref(), Some("equals-nan"));
        assert_eq!((warns[0].line, warns[0].column), (Some(5), Some(12)));
        assert!(warns[0].notes[0].starts_with("Floating-point equality"));
    }

    #[test]
    fn a_note_s_location_is_not_the_error_s() {
        let log = "✘ [ERROR] The symbol \"a\" has already been declared\n\n    dup.js:2:6:\n      2 │ const a = 2;\n        ╵       ^\n\n\
\x20 The symbol \"a\" was originally declared here:\n\n    dup.js:1:6:\n      1 │ const a = 1;\n        ╵       ^\n\n1 error\n";
        let result = parse(log, 1);
        let errs = errors(&result);
        assert_eq!((errs.len(), errs[0].line, errs[0].column), (1, Some(2), Some(7)));
        assert_eq!(errs[0].notes, ["The symbol \"a\" was originally declared here:"]);
        let result = parse("✘ [ERROR] Could not resolve \"nope.js\"\n\n1 error\n", 1);
        assert_eq!((errors(&result).len(), errors(&result)[0].file.as_deref()), (1, None));
    }
}
