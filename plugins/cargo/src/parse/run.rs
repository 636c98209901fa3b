//! `cargo run`: what the program itself prints after cargo's `Running `target/debug/app``. Its
//! output is its own, whatever it looks like (`error: …` from the program is not cargo's); only
//! two things in it are the run's result: a panic, and the `Error: …` that std prints when `main`
//! returns `Err` (with anyhow's `Caused by:` chain under it).

use super::findings::Findings;
use super::text::{MAX_MESSAGE, MAX_NOTE, MAX_NOTES, clip};
use buildvise_plugin_api::{Diagnostic, Recogniser, Stream, Text, Wants};
use std::collections::HashSet;

/// The recogniser of `cargo run`'s output: cargo's lines until it starts the program, then the
/// program's, which it takes whatever they look like. It reads every line: which stream a line
/// came on, and before which stderr line, decides whose it was.
pub(crate) struct ProgramOutput;

/// Whose lines are whose in a `cargo run`, and how the program ended.
#[derive(Default)]
pub(crate) struct Program {
    /// cargo's `Running `target/…`` was read: every later line is the program's.
    pub(crate) running: bool,
    /// A line came tagged stderr: the streams are apart, and stdout is the program's alone.
    pub(crate) seen_stderr: bool,
    /// The stdout lines read before any stderr line, which were parsed as cargo's in case the
    /// log is one combined stream.
    pub(crate) stdout_before_stderr: Option<(u64, u64)>,
    /// The JSON messages among them, which are cargo's whatever the streams.
    pub(crate) json_lines: HashSet<u64>,
    pub(crate) main_error: Option<MainError>,
}

impl Program {
    /// Whether a line of `stream` is only what the program printed: stdout, once the streams
    /// showed they are apart (a panic goes to stderr).
    pub(crate) fn printed(&self, stream: Stream) -> bool {
        self.seen_stderr && stream != Stream::Stderr
    }
}

impl Recogniser<Findings> for ProgramOutput {
    fn wants(&self) -> Wants {
        Wants::every()
    }

    fn feed(&mut self, line: &Text<'_>, found: &mut Findings) -> bool {
        let program = &mut found.program;
        if line.stream == Stream::Stderr {
            program.seen_stderr = true;
        } else if !line.text.starts_with('{') {
            if program.seen_stderr {
                return true;
            }
            let (start, _) = program.stdout_before_stderr.unwrap_or((line.number, line.number));
            program.stdout_before_stderr = Some((start, line.number));
        } else if !program.seen_stderr {
            program.json_lines.insert(line.number);
        }
        if !program.running {
            if is_running(line.text) {
                program.running = true;
                found.cargo_output_ended = true;
                return true;
            }
            return false;
        }
        if let Some(error) = &mut program.main_error
            && error.stream == line.stream
            && error.line(line.text, line.number)
        {
            return true;
        }
        if let Some(error) = MainError::start(line.text, line.stream, line.number) {
            program.main_error = Some(error);
        }
        true
    }
}

/// True for cargo's status line that starts the program, right-aligned as they all are.
fn is_running(text: &str) -> bool {
    text.starts_with(' ') && text.trim_start().starts_with("Running `")
}

/// The last `Error: …` the program printed, with the causes under it.
pub(crate) struct MainError {
    pub(crate) stream: Stream,
    diag: Diagnostic,
    start: u64,
    end: u64,
    in_causes: bool,
}

impl MainError {
    /// Reads `Error: …`, the first line of a `main` that returned `Err`.
    pub(crate) fn start(text: &str, stream: Stream, number: u64) -> Option<MainError> {
        let message = text.strip_prefix("Error: ")?;
        Some(MainError {
            stream,
            diag: Diagnostic::error(clip(message, MAX_MESSAGE)),
            start: number,
            end: number,
            in_causes: false,
        })
    }

    /// anyhow's chain: a blank line, `Caused by:`, then `    0: …` lines. True when the line
    /// belonged to it.
    pub(crate) fn line(&mut self, text: &str, number: u64) -> bool {
        if text == "Caused by:" {
            self.in_causes = true;
        } else if self.in_causes && text.starts_with("    ") {
            if self.diag.notes.len() < MAX_NOTES {
                self.diag.notes.push(clip(text, MAX_NOTE));
            }
        } else if !text.is_empty() || self.in_causes {
            return false;
        }
        self.end = number;
        true
    }

    pub(crate) fn into_diagnostic(self) -> Diagnostic {
        self.diag.with_log_range(self.start, self.end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CargoPlugin;
    use buildvise_plugin_api::testing::{parse_log, parse_streams};
    use buildvise_plugin_api::{ParseContext, ParseResult, Plugin, RunEnd};

    fn context() -> ParseContext {
        ParseContext::new("cargo.run", "/home/dev/p")
    }

    fn located(result: &ParseResult) -> Vec<(Option<String>, Option<u32>, String)> {
        result.diagnostics.iter().map(|d| (d.file.clone(), d.line, d.message.clone())).collect()
    }

    /// cargo 1.95 `cargo run` of a program that prints cargo-like lines, then panics.
    const STDERR: &str = "    Finished `dev` profile [unoptimized + debuginfo] target(s) in 0.01s
     Running `target/debug/run-panic`
warning: this is the program's eprintln

thread 'main' (1378) panicked at src/main.rs:2:18:
PORT must be a number: ParseIntError { kind: InvalidDigit }
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace
";
    const STDOUT: &str = "error: this line is the program's own output\nstarting up\n";

    #[test]
    fn the_programs_panic_is_the_error_and_its_output_is_not() {
        let expected = [(
            Some("src/main.rs".into()),
            Some(2),
            "PORT must be a number: ParseIntError { kind: InvalidDigit }".into(),
        )];
        let end = RunEnd::exited(101);
        let streams = parse_streams(CargoPlugin.parser(&context()), STDOUT.as_bytes(), STDERR.as_bytes(), &end);
        assert_eq!(located(&streams), expected);
        let (head, tail) = STDERR.split_at(STDERR.find("warning").expect("a warning line"));
        let combined = format!("{head}{STDOUT}{tail}");
        assert_eq!(located(&parse_log(CargoPlugin.parser(&context()), combined.as_bytes(), 101)), expected);
    }

    #[test]
    fn compile_errors_before_the_program_are_cargos() {
        let log = "error[E0425]: cannot find value `x` in this scope\n --> src/main.rs:3:5\n  |\n3 |     x\n  |     ^ not found in this scope\n\nerror: could not compile `app` (bin \"app\") due to 1 previous error\n";
        let result = parse_log(CargoPlugin.parser(&context()), log.as_bytes(), 101);
        assert_eq!(
            located(&result),
            [(Some("src/main.rs".into()), Some(3), "cannot find value `x` in this scope".into())]
        );
    }

    #[test]
    fn main_returning_err_is_an_error_only_when_the_run_exits_with_1() {
        let log = "     Running `target/debug/app`\nError: ConfigError { key: \"database.url\" }\n";
        let failed = parse_log(CargoPlugin.parser(&context()), log.as_bytes(), 1);
        assert_eq!(located(&failed), [(None, None, "ConfigError { key: \"database.url\" }".into())]);
        assert!(parse_log(CargoPlugin.parser(&context()), log.as_bytes(), 0).diagnostics.is_empty());
    }

    #[test]
    fn reads_an_error_and_its_causes() {
        assert!(is_running("     Running `target/debug/run-err`"));
        assert!(!is_running("     Running unittests src/lib.rs (target/debug/deps/x)"));
        let mut e = MainError::start("Error: failed to load config", Stream::Stderr, 4).expect("an error");
        for (i, line) in ["", "Caused by:", "    0: reading app.toml", "    1: No such file or directory (os error 2)"]
            .iter()
            .enumerate()
        {
            assert!(e.line(line, 5 + i as u64), "{line}");
        }
        assert!(!e.line("done", 9));
        let d = e.into_diagnostic();
        assert_eq!(d.message, "failed to load config");
        assert_eq!(d.notes, ["0: reading app.toml", "1: No such file or directory (os error 2)"]);
        assert_eq!(d.log_range.map(|r| (r.start, r.end)), Some((4, 8)));
        assert!(MainError::start("error: lower case is the program's", Stream::Stderr, 1).is_none());
    }
}
