//! `prettier --check` (Prettier 3): a `[warn] path` line per file that is not formatted, closed
//! by `[warn] Code style issues found in N files…` (or `…in the above file…`), and for a file it
//! cannot parse, `[error] path: SyntaxError: message (line:col)` with its code frame on
//! `[error]` lines below.

use crate::parse::sink::Sink;
use buildvise_plugin_api::{Diagnostic, LogRange};
use buildvise_plugin_api::{Recogniser, Text, Wants};

#[derive(Default)]
pub struct Prettier {
    /// The syntax error whose `[error]   2 | code` frame lines may follow.
    open: Option<Diagnostic>,
}

const ERROR: &str = "[error] ";
const WARN: &str = "[warn] ";

impl Recogniser<Sink> for Prettier {
    fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// How the lines that start a block begin.
    fn wants(&self) -> Wants {
        Wants::starts(&[ERROR, WARN])
    }

    fn feed(&mut self, ln: &Text<'_>, sink: &mut Sink) -> bool {
        let text = ln.text;
        if let Some(rest) = text.strip_prefix(ERROR) {
            if let Some(open) = &mut self.open
                && is_frame_line(rest)
            {
                let start = open.log_range.map_or(ln.number, |r| r.start);
                open.log_range = Some(LogRange::new(start, ln.number));
                return true;
            }
            self.flush(sink);
            let rest = rest.trim();
            if rest.is_empty() {
                return false;
            }
            self.open = Some(error(rest).with_log_range(ln.number, ln.number));
            return true;
        }
        self.flush(sink);
        let Some(path) = text.strip_prefix(WARN).map(str::trim) else { return false };
        // Prettier's own notices are sentences; a file is a path.
        if path.is_empty() || path.starts_with("Code style issues") || path.contains(": ") || path.ends_with('.') {
            return false;
        }
        let warning = Diagnostic::warning("not formatted (prettier --check)").with_location(path, None, None);
        sink.push(warning.with_log_range(ln.number, ln.number));
        true
    }

    fn flush(&mut self, sink: &mut Sink) {
        if let Some(diagnostic) = self.open.take() {
            sink.push(diagnostic);
        }
    }
}

/// `path: SyntaxError: message (line:col)` located; any other `[error]` line as it is.
fn error(rest: &str) -> Diagnostic {
    let located = rest.split_once(": ").and_then(|(file, message)| {
        let (message, position) = message.strip_suffix(')')?.rsplit_once(" (")?;
        let (line, column) = position.split_once(':')?;
        let (line, column) = (line.parse::<u32>().ok()?, column.parse::<u32>().ok()?);
        (!file.contains(' ')).then(|| Diagnostic::error(message).with_location(file, Some(line), Some(column)))
    });
    located.unwrap_or_else(|| Diagnostic::error(rest))
}

/// `  1 | code`, `> 2 |   return (1 + ;`, `    |       ^`: a line of the code frame.
fn is_frame_line(rest: &str) -> bool {
    let trimmed = rest.trim_start().trim_start_matches('>').trim_start();
    let digits = trimmed.len() - trimmed.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    trimmed[digits..].trim_start().starts_with('|')
}

#[cfg(test)]
mod tests {
    use crate::parse::tests::{errors, parse, warnings};

    #[test]
    fn one_warning_per_unformatted_file() {
        // npm exec --no -- prettier --check . (Prettier 3.10.1)
        let log = "Checking formatting...\n[warn] package.json\n[warn] src/a.ts\n[warn] src/b.js\n\
[warn] Code style issues found in 3 files. Run Prettier with --write to fix.\n";
        let result = parse(log, 1);
        let files: Vec<_> = warnings(&result).iter().map(|w| w.file.clone().unwrap_or_default()).collect();
        assert_eq!(files, ["package.json", "src/a.ts", "src/b.js"]);
        assert!(errors(&result).is_empty());
        let result = parse(
            "[warn] src/a.ts\n[warn] Code style issues found in the above file. Run Prettier with --write to fix.\n",
            1,
        );
        assert_eq!(warnings(&result).len(), 1);
    }

    #[test]
    fn syntax_errors_with_their_code_frame() {
        let log = "Checking formatting...\n[warn] src/b.js\n\
[error] src/broken.ts: SyntaxError: Expression expected. (2:15)\n\
[error]   1 | export function g() {\n\
[error] > 2 |   return (1 + ;\n\
[error]     |               ^\n\
[error]   3 | }\n\
[error]   4 |\n\
[error] src/view.jsx: SyntaxError: Unterminated regular expression. (3:19)\n\
[error]   1 | export const View = () => (\n\
[error] > 3 |     <span>{label</span>\n\
[error]     |                   ^\n\
Error occurred when checking code style in 2 files.\n";
        let result = parse(log, 2);
        let errs = errors(&result);
        assert_eq!(errs.len(), 2, "{errs:?}");
        assert_eq!(errs[0].message, "SyntaxError: Expression expected.");
        assert_eq!((errs[0].file.as_deref(), errs[0].line, errs[0].column), (Some("src/broken.ts"), Some(2), Some(15)));
        assert_eq!(errs[0].log_range.map(|r| (r.start, r.end)), Some((3, 8)));
        assert_eq!((errs[1].file.as_deref(), errs[1].line), (Some("src/view.jsx"), Some(3)));
        assert_eq!(warnings(&result).len(), 1);
    }
}
