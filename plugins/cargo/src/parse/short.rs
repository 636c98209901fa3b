//! The recogniser of `--message-format=short`: one line per diagnostic,
//! `src/a.rs:4:5: warning: unused import: `x``, with the primary label's help or note appended.

use super::block;
use super::findings::Findings;
use super::text::{MAX_MESSAGE, MAX_NOTE, clip};
use buildvise_plugin_api::{Diagnostic, Head, Recogniser, Text, Wants, relative_to, split_location};

pub(crate) struct ShortForm;

impl Recogniser<Findings> for ShortForm {
    fn wants(&self) -> Wants {
        Wants::test(starts_with_a_rust_file)
    }

    fn feed(&mut self, line: &Text<'_>, found: &mut Findings) -> bool {
        let Some(diag) = read(line.text, line.number, found) else { return false };
        found.diagnostics.push(diag);
        true
    }
}

/// A line whose text before its first `:` is a path to a Rust file, at column 0.
fn starts_with_a_rust_file(head: &Head<'_>) -> bool {
    let bytes = head.bytes;
    bytes.first().is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'/' | b'_'))
        && memchr::memchr(b':', bytes).is_some_and(|colon| bytes[..colon].ends_with(b".rs"))
}

fn read(text: &str, number: u64, found: &Findings) -> Option<Diagnostic> {
    let at = text.match_indices(':').map(|(at, _)| at).find(|&at| {
        let rest = &text[at..];
        rest.starts_with(": error") || rest.starts_with(": warning")
    })?;
    let (file, line, column) = split_location(&text[..at])?;
    let head = block::headline(&text[at + 2..])?;
    // The short form appends the primary label's help or note: `…: help: prefix it …`.
    let tail = [head.message.find(": help: "), head.message.find(": note: ")].into_iter().flatten().min();
    let (message, note) = match tail {
        // A message that is nothing but a help (`error: : help: x`) keeps it as its text.
        Some(at) if at > 0 => (&head.message[..at], Some(&head.message[at + 2..])),
        _ => (head.message, None),
    };
    let mut diag = Diagnostic::new(head.severity, clip(message, MAX_MESSAGE))
        .with_location(relative_to(file, &found.cwd), Some(line), column)
        .with_log_range(number, number);
    diag.code = head.code.map(str::to_string).or_else(|| found.lints.recall(message));
    diag.notes.extend(note.map(|n| clip(n, MAX_NOTE)));
    Some(diag)
}
