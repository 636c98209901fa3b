//! `FILE:LINE[:COL]: error|warning: MESSAGE`, and the indented notes under it.

use super::Found;
use buildvise_plugin_api::{Diagnostic, Head, Recogniser, Severity, Text, Wants, clip, relative_to, split_location};

/// A problem line, then its notes while the lines below it are indented.
#[derive(Default)]
pub(super) struct Problems {
    /// The last problem line was new, so the indented lines below it are its notes. A repeated
    /// problem's notes were kept the first time it was printed.
    notes_follow: bool,
}

impl Recogniser<Found> for Problems {
    fn wants(&self) -> Wants {
        Wants::test(names_a_severity)
    }

    fn is_open(&self) -> bool {
        self.notes_follow
    }

    fn feed(&mut self, line: &Text<'_>, found: &mut Found) -> bool {
        if self.notes_follow {
            if let Some(note) = line.text.strip_prefix("  ") {
                found.note(note, line.number);
                return true;
            }
            self.notes_follow = false;
        }
        let Some((location, rest)) = line.text.split_once(": ") else { return false };
        let (severity, message) = match rest.split_once(": ") {
            Some(("error", m)) => (Severity::Error, m),
            Some(("warning", m)) => (Severity::Warning, m),
            _ => return false,
        };
        let Some((file, number, column)) = split_location(location) else { return false };
        let d = Diagnostic::new(severity, clip(message.trim(), super::MAX_TEXT))
            .with_location(relative_to(file, &found.cwd), Some(number), column)
            .with_log_range(line.number, line.number);
        self.notes_follow = found.add(d);
        true
    }

    fn flush(&mut self, _found: &mut Found) {
        self.notes_follow = false;
    }
}

/// Whether the line says `: error: ` or `: warning: ` anywhere: what every problem line holds, found
/// without decoding the line.
fn names_a_severity(head: &Head<'_>) -> bool {
    head.contains(b": error: ") || head.contains(b": warning: ")
}
