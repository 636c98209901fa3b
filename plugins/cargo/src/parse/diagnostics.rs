//! The recogniser of rustc's, clippy's, rustdoc's and cargo's diagnostics as printed for a
//! person: a headline (`error[E0308]: …`, `warning: …`) opens a [`Block`] that reads the lines
//! after it until the diagnostic ends.
//!
//! What a headline means depends on where it stands: cargo's wrap-up lines are no diagnostics,
//! `test failed, to rerun pass …` ends a test binary, and what a test printed counts only when it
//! names a place. One block is read at a time, on the stream of its headline.

use super::block::{self, Block, Flow, Headline, HeadlineKind};
use super::findings::{Findings, Kind};
use super::libtest::Context;
use buildvise_plugin_api::{Diagnostic, Recogniser, Text, Wants};

/// What cargo prints when the `nextest` subcommand is missing.
const NO_NEXTEST: &str = "no such command: `nextest`";

/// A headline's first word.
pub(crate) const STARTS: &[&str] = &["error", "warning"];

#[derive(Default)]
pub(crate) struct Diagnostics {
    block: Option<Block>,
}

impl Recogniser<Findings> for Diagnostics {
    fn wants(&self) -> Wants {
        Wants::starts(STARTS)
    }

    fn is_open(&self) -> bool {
        self.block.is_some()
    }

    /// A headline is left to the recognisers after this one too: in a test's output it is a
    /// line of that output.
    fn feed(&mut self, line: &Text<'_>, found: &mut Findings) -> bool {
        if let Some(block) = self.block.as_mut()
            && block.stream == line.stream
        {
            match block.feed(line.text, line.number, &found.cwd) {
                Flow::Consumed => return true,
                Flow::Closed => {
                    self.flush(found);
                    return true;
                }
                Flow::Ended => self.flush(found),
            }
        }
        if let Some(head) = block::headline(line.text) {
            self.headline(&head, line, found);
        }
        false
    }

    /// The block ends: cargo's output moved on to another format.
    fn flush(&mut self, found: &mut Findings) {
        let Some(block) = self.block.take() else { return };
        let orphan = block.orphan;
        match block.finish(&mut found.lints, &found.cwd) {
            Some(d) if orphan => found.orphans.push(d),
            Some(d) => {
                found.diagnostics.push(d);
            }
            None => {}
        }
    }
}

impl Diagnostics {
    fn headline(&mut self, head: &Headline<'_>, line: &Text<'_>, found: &mut Findings) {
        if found.kind == Kind::Nextest {
            if head.message.starts_with(NO_NEXTEST) {
                let d = Diagnostic::error("cargo-nextest is not installed; run `cargo install cargo-nextest --locked`")
                    .with_log_range(line.number, line.number);
                found.diagnostics.push(d);
                return;
            }
            // nextest's word that the build it ran (`cargo test --no-run …`) failed: rustc's
            // errors above say why.
            if head.message.starts_with("command `") && head.message.contains(" --no-run") {
                return;
            }
        }
        let kind = block::classify(head);
        match kind {
            HeadlineKind::Summary => {
                // `error: 2 targets failed:` ends a --no-fail-fast run, which ran every target.
                if head.message.contains(" failed") {
                    found.last_failed_target = None;
                }
                return;
            }
            HeadlineKind::TestBinary => {
                found.tests.binary_ended();
                found.last_failed_target = Some(block::rerun_args(head.message).to_string());
            }
            HeadlineKind::Report => {}
        }
        // A test binary's end is libtest's news; any other diagnostic is rustc's or cargo's,
        // unless a test printed it.
        let in_test = found.tests.in_binary || matches!(found.tests.context(), Context::Failure(_));
        let wanted = match kind {
            HeadlineKind::TestBinary => found.reads.libtest,
            _ => found.reads.rustc || in_test,
        };
        if !wanted {
            return;
        }
        let orphan = found.collecting_orphans();
        let (test, require_location) = match found.tests.context() {
            Context::Success => return,
            Context::Failure(name) => (Some(name.to_string()), true),
            Context::Free => (None, found.tests.in_binary),
        };
        let mut block = Block::open(head, kind, line.stream, line.number, test, require_location);
        block.orphan = orphan && kind == HeadlineKind::Report;
        self.block = Some(block);
    }
}
