//! What `checker` prints, line by line: a problem (`FILE:LINE[:COL]: error|warning: MESSAGE`), the
//! indented notes under it, and a closing count (`checker: 2 errors, 1 warning`).
//!
//! Each kind of line has a recogniser in a file of its own, registered in [`CheckerParser::new`]:
//! the plugin-api offers a line only to the recognisers that may want it, so a line of anything
//! else costs next to nothing. To read one more kind of line, add a file and a line there.

mod count;
mod problem;

use buildvise_plugin_api::{
    Diagnostic, DiagnosticSet, Line, LogRange, ParseResult, Parser, Progress, Recognisers, RunEnd, Severity, clip,
};

/// The longest message or note kept: a 10 MB line must not become a 10 MB answer.
const MAX_TEXT: usize = 400;
/// The first notes say what matters; later ones mostly repeat.
const MAX_NOTES: usize = 4;

/// What the recognisers found, and what they share.
struct Found {
    cwd: String,
    diagnostics: DiagnosticSet,
    errors: u64,
    warnings: u64,
    /// The errors the closing count reported, once it was printed.
    reported_errors: Option<u64>,
}

impl Found {
    /// Adds `d`; true when it was new (not a repeat of one already found).
    fn add(&mut self, d: Diagnostic) -> bool {
        let severity = d.severity;
        let new = self.diagnostics.push(d);
        if new {
            match severity {
                Severity::Error => self.errors += 1,
                _ => self.warnings += 1,
            }
        }
        new
    }

    /// A note under the last problem.
    fn note(&mut self, note: &str, number: u64) {
        let Some(d) = self.diagnostics.last_mut() else { return };
        if d.notes.len() < MAX_NOTES {
            d.notes.push(clip(note.trim(), MAX_TEXT).into_owned());
        }
        let start = d.log_range.map_or(number, |r| r.start);
        d.log_range = Some(LogRange::new(start, number));
    }
}

pub(crate) struct CheckerParser {
    recognisers: Recognisers<Found>,
    found: Found,
}

impl CheckerParser {
    pub(crate) fn new(cwd: &str) -> Self {
        let recognisers = Recognisers::new().add(problem::Problems::default()).add(count::Count);
        let found = Found {
            cwd: cwd.to_string(),
            diagnostics: DiagnosticSet::new(),
            errors: 0,
            warnings: 0,
            reported_errors: None,
        };
        CheckerParser { recognisers, found }
    }
}

impl Parser for CheckerParser {
    fn feed(&mut self, line: Line<'_>) {
        self.recognisers.feed(&line, &mut self.found);
    }

    fn finish(&mut self, _end: &RunEnd) -> ParseResult {
        self.recognisers.finish(&mut self.found);
        // checker exits 0 whatever it found (only bad usage fails it): its count says whether the
        // run failed. Without a count, the exit code decides.
        let failed = self.found.reported_errors.is_some_and(|n| n > 0);
        ParseResult::new(std::mem::take(&mut self.found.diagnostics).into_vec()).with_success(failed.then_some(false))
    }

    fn progress(&self) -> Progress {
        Progress::new(self.found.errors, self.found.warnings, 0)
    }
}

#[cfg(test)]
mod tests {
    use crate::CheckerPlugin;
    use buildvise_plugin_api::testing::parse_log;
    use buildvise_plugin_api::{ParseContext, ParseResult, Plugin, Severity};

    /// `log` as buildvise would parse it after a run in `/p` that exited with `exit_code`.
    fn parse(log: &str, exit_code: i32) -> ParseResult {
        let parser = CheckerPlugin.parser(&ParseContext::new("checker.check", "/p"));
        parse_log(parser, log.as_bytes(), exit_code)
    }

    #[test]
    fn an_error_line_is_an_error_at_its_file_and_line() {
        let result = parse("/p/src/a.txt:3: error: line too long\n", 1);
        let [d] = &result.diagnostics[..] else { panic!("{result:?}") };
        assert_eq!((d.severity, d.message.as_str()), (Severity::Error, "line too long"));
        assert_eq!((d.file.as_deref(), d.line, d.column), (Some("src/a.txt"), Some(3), None));
        assert_eq!(d.log_range.map(|r| (r.start, r.end)), Some((1, 1)));
    }

    #[test]
    fn a_warning_line_is_a_warning_with_its_column() {
        let result = parse("starting\nsrc/b.txt:1:5: warning: trailing space\n", 0);
        let [d] = &result.diagnostics[..] else { panic!("{result:?}") };
        assert_eq!((d.severity, d.message.as_str()), (Severity::Warning, "trailing space"));
        assert_eq!((d.file.as_deref(), d.line, d.column), (Some("src/b.txt"), Some(1), Some(5)));
        assert_eq!(d.log_range.map(|r| r.start), Some(2));
    }

    #[test]
    fn indented_lines_are_notes_of_the_problem_above_and_of_no_repeat() {
        let log = "src/a.txt:3: error: line too long\n  help: wrap it at 80 columns\n\
                   src/b.txt:1: warning: trailing space\n\
                   src/a.txt:3: error: line too long\n  help: wrap it at 80 columns\n";
        let result = parse(log, 1);
        let notes: Vec<_> = result.diagnostics.iter().map(|d| (d.message.as_str(), d.notes.clone())).collect();
        assert_eq!(
            notes,
            [("line too long", vec!["help: wrap it at 80 columns".to_string()]), ("trailing space", vec![])]
        );
        assert_eq!(result.diagnostics[0].log_range.map(|r| (r.start, r.end)), Some((1, 2)));
    }

    #[test]
    fn the_closing_count_fails_a_run_that_exited_0_with_errors() {
        let failed = parse("src/a.txt:3: error: line too long\nchecker: 1 error, 0 warnings\n", 0);
        assert_eq!(failed.success, Some(false));
        assert_eq!(parse("checker: no problems\n", 0).success, None, "the exit code decides");
        assert_eq!(parse("checker: 0 errors, 2 warnings\n", 0).success, None);
    }

    #[test]
    fn other_lines_are_not_problems() {
        let log = "checking 3 files\nnote: a.txt: error: no line number\nsrc/a.txt:x: error: bad line\n";
        assert!(parse(log, 0).diagnostics.is_empty());
    }
}
