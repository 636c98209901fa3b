//! The TypeScript compiler (tsc 5 and 7), plain and `--pretty`; also what ts-jest prints inside a
//! Jest suite failure, which is tsc-pretty indented by four spaces.
//!
//! Plain: `src/a.ts(4,7): error TS2322: msg`, elaboration lines indented below it.
//! Pretty: `src/a.ts:4:7 - error TS2322: msg`, elaboration lines, a code frame, and
//! related-information blocks (`  file:line:col` then text, or tsc 7's `  file:line:col - text`),
//! which are not errors and are never matched here. Errors without a file
//! (`error TS5058: ...`) come from the command line or tsconfig.

use crate::parse::sink::Sink;
use buildvise_plugin_api::occurrences;
use buildvise_plugin_api::{Diagnostic, Severity};
use buildvise_plugin_api::{Head, Recogniser, Text, Wants};
use memchr::memmem::Finder;
use regex::Regex;
use std::sync::LazyLock;

/// What every tsc diagnostic holds before its code (`error TS2322`), looked for once per line.
/// A searcher built once: `str::contains` builds one per call, which costs more than the search.
static TS: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(" TS"));

/// True when `text` holds a code after its severity (`error TS2322`), as every diagnostic does: a
/// cheap test for every line before the regexes.
fn has_code(text: &str) -> bool {
    occurrences(&TS, text.as_bytes()).any(|at| {
        let before = &text[..at];
        // `is_numeric`: the regexes' `\d` takes any Unicode digit.
        (before.ends_with("error") || before.ends_with("warning")) && text[at + 3..].starts_with(char::is_numeric)
    })
}

/// [`has_code`] on the line's bytes, before it is decoded: a severity, then ` TS`. Every line
/// takes this test: it looks for the `T`, rarer in output than the space, with `memchr`, which on
/// a line costs a fraction of a `memmem` search (the ingest bench's npm flood).
fn may_have_code(head: &Head<'_>) -> bool {
    let bytes = head.bytes;
    memchr::memchr_iter(b'T', bytes).any(|at| {
        let before = &bytes[..at];
        before.ends_with(b"error ") || before.ends_with(b"warning ")
    })
}

static PLAIN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?P<file>\S[^()]*)\((?P<line>\d+),(?P<col>\d+)\): (?P<sev>error|warning) (?P<code>TS\d+): (?P<msg>.*)$",
    )
    .expect("valid regex")
});
static PRETTY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?P<file>\S.*?):(?P<line>\d+):(?P<col>\d+) - (?P<sev>error|warning) (?P<code>TS\d+): (?P<msg>.*)$")
        .expect("valid regex")
});
static GLOBAL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*(?P<sev>error|warning) (?P<code>TS\d+): (?P<msg>.*)$").expect("valid regex"));

/// Elaboration lines kept as notes.
const MAX_NOTES: usize = 3;

#[derive(Default)]
pub struct Tsc {
    /// The diagnostic whose elaboration lines may follow, with the indentation of its header.
    open: Option<(Diagnostic, usize)>,
}

impl Recogniser<Sink> for Tsc {
    fn is_open(&self) -> bool {
        self.open.is_some()
    }

    #[inline(always)]
    fn wants(&self) -> Wants {
        Wants::test(may_have_code)
    }

    fn feed(&mut self, ln: &Text<'_>, sink: &mut Sink) -> bool {
        let text = ln.text;
        if let Some((diagnostic, indent)) = &mut self.open {
            let line_indent = text.len() - text.trim_start().len();
            if line_indent > *indent && !text.trim().is_empty() {
                if diagnostic.notes.len() < MAX_NOTES {
                    diagnostic.notes.push(text.trim().to_string());
                }
                let start = diagnostic.log_range.map_or(ln.number, |r| r.start);
                diagnostic.log_range = Some(buildvise_plugin_api::LogRange::new(start, ln.number));
                return true;
            }
            self.flush(sink);
        }
        if !has_code(text) {
            return false;
        }
        let Some(caps) = PLAIN.captures(text).or_else(|| PRETTY.captures(text)).or_else(|| GLOBAL.captures(text))
        else {
            return false;
        };
        let severity = if &caps["sev"] == "warning" { Severity::Warning } else { Severity::Error };
        let mut diagnostic = Diagnostic::new(severity, &caps["msg"]).with_code(&caps["code"]);
        if let Some(file) = caps.name("file") {
            let number = |name: &str| caps.name(name).and_then(|m| m.as_str().parse::<u32>().ok());
            diagnostic = diagnostic.with_location(file.as_str().trim(), number("line"), number("col"));
        }
        let indent = text.len() - text.trim_start().len();
        self.open = Some((diagnostic.with_log_range(ln.number, ln.number), indent));
        true
    }

    fn flush(&mut self, sink: &mut Sink) {
        if let Some((diagnostic, _)) = self.open.take() {
            sink.push(diagnostic);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::parse::tests::{errors, parse};

    #[test]
    fn plain_with_elaboration() {
        let result = parse(
            "\n> shop@1.0.0 build\n> tsc\n\n\
             src/models/item.ts(24,14): error TS2322: Type '{ w: string; }' is not assignable to type 'Dims'.\n\
             \x20 Types of property 'w' are incompatible.\n\
             \x20   Type 'string' is not assignable to type 'number'.\n\
             src/util.ts(2,10): error TS2304: Cannot find name 'sym'.\n",
            2,
        );
        let errs = errors(&result);
        assert_eq!(errs.len(), 2);
        assert_eq!(errs[0].file.as_deref(), Some("src/models/item.ts"));
        assert_eq!((errs[0].line, errs[0].column, errs[0].code.as_deref()), (Some(24), Some(14), Some("TS2322")));
        assert_eq!(errs[0].notes.len(), 2);
        assert_eq!(errs[0].log_range.map(|r| (r.start, r.end)), Some((5, 7)));
        assert_eq!(errs[1].message, "Cannot find name 'sym'.");
    }

    #[test]
    fn pretty_skips_related_information_and_table() {
        let result = parse(
            "\x1b[96msrc/c.ts\x1b[0m:\x1b[93m14\x1b[0m:\x1b[93m31\x1b[0m - \x1b[91merror\x1b[0m\x1b[90m TS2551: \x1b[0mProperty 'raduis' does not exist on type 'C'. Did you mean 'radius'?\n\
             \n\
             14     return this.raduis;\n\
             \x20                  ~~~~~~\n\
             \n\
             \x20 src/c.ts:7:37\n\
             \x20   7   constructor(public radius: number) {}\n\
             \x20   'radius' is declared here.\n\
             \x20 node_modules/x/index.d.ts:3:5 - 'radius' is declared here.\n\
             \n\
             Found 1 error in src/c.ts\x1b[90m:14\x1b[0m\n",
            2,
        );
        let errs = errors(&result);
        assert_eq!(errs.len(), 1);
        assert_eq!((errs[0].file.as_deref(), errs[0].line, errs[0].column), (Some("src/c.ts"), Some(14), Some(31)));
        assert_eq!(errs[0].code.as_deref(), Some("TS2551"));
    }

    #[test]
    fn errors_without_a_file() {
        let result = parse("error TS5058: The specified path does not exist: 'tsconfig.app.json'.\n", 1);
        let errs = errors(&result);
        assert_eq!(errs.len(), 1);
        assert_eq!((errs[0].file.as_deref(), errs[0].code.as_deref()), (None, Some("TS5058")));
    }
}
