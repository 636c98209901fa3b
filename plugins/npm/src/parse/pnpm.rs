//! pnpm's own lines (pnpm 9, on stdout): `ERR_PNPM_CODE message` with notes below it, the
//! generic `ERROR message`, `WARN message`, and `ELIFECYCLE Command failed…`, which only wraps a
//! failing script (its own output carries the errors; the exit code says it failed). The word is
//! set between thin spaces (U+2009), which is how pnpm's lines are told from a script's.

use crate::parse::sink::Sink;
use buildvise_plugin_api::{Diagnostic, LogRange, Recogniser, Text, Wants};

const MAX_NOTES: usize = 3;

const THIN: char = '\u{2009}';

#[derive(Default)]
pub struct Pnpm {
    /// An error whose notes may follow, and the blank lines seen since its last one.
    open: Option<(Diagnostic, usize)>,
}

impl Recogniser<Sink> for Pnpm {
    fn wants(&self) -> Wants {
        Wants::starts_unindented(&["ERR_PNPM_", "ERROR\u{2009}", "WARN\u{2009}", "ELIFECYCLE\u{2009}"])
    }

    fn is_open(&self) -> bool {
        self.open.is_some()
    }

    fn feed(&mut self, ln: &Text<'_>, sink: &mut Sink) -> bool {
        let text = ln.text;
        if let Some(rest) = text.strip_prefix(THIN)
            && let Some((word, message)) = rest.split_once(THIN)
            && (word.starts_with("ERR_PNPM_") || ["ERROR", "WARN", "ELIFECYCLE"].contains(&word))
        {
            self.flush(sink);
            let message = message.trim();
            match word {
                "ELIFECYCLE" => {}
                "WARN" => sink.push(Diagnostic::warning(message).with_log_range(ln.number, ln.number)),
                "ERROR" => self.open = Some((Diagnostic::error(message).with_log_range(ln.number, ln.number), 0)),
                code => {
                    let error = Diagnostic::error(message).with_code(code).with_log_range(ln.number, ln.number);
                    self.open = Some((error, 0));
                }
            }
            return true;
        }
        let Some((error, blanks)) = &mut self.open else { return false };
        // Notes come in paragraphs; two empty lines, or a banner, end them.
        if ln.trimmed.is_empty() {
            *blanks += 1;
            if *blanks < 2 {
                return true;
            }
        } else if !text.starts_with("> ") && error.notes.len() < MAX_NOTES {
            *blanks = 0;
            error.notes.push(ln.trimmed.to_string());
            let start = error.log_range.map_or(ln.number, |r| r.start);
            error.log_range = Some(LogRange::new(start, ln.number));
            return true;
        }
        self.flush(sink);
        false
    }

    fn flush(&mut self, sink: &mut Sink) {
        if let Some((error, _)) = self.open.take() {
            sink.push(error);
        }
    }
}
