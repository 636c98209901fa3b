//! A plain Python traceback, outside pytest (`python script.py` that raised): the exception that
//! ended the program, at the innermost frame of the project's own code.
//!
//! A traceback opens with `Traceback (most recent call last):` (or an exception group's
//! `+ Exception Group Traceback`), lists `File "path", line N, in f` frames and ends with the
//! unindented `Type: message` line (a group's lines carry a `|` margin instead). The frames and
//! the exception are read by [`Traceback`], as in a pytest section in the native style. A chained
//! exception (`During handling of the above exception…`, `The above exception was the direct
//! cause…`) prints the earlier tracebacks first: the last one is the exception that propagated,
//! so it replaces those before it.

use super::in_project;
use super::traceback::{Location, Traceback};
use buildvise_plugin_api::{Diagnostic, Line, ParseContext, ParseResult, Parser, RunEnd, Stream, relative_to};

const CHAIN_MARKERS: [&str; 2] = [
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
];

/// The traceback being read.
struct Open {
    traceback: Traceback,
    /// An exception group's: its lines keep a `|` or `+` margin to the end.
    group: bool,
    /// The exception line was read: the next line ends the traceback.
    raised: bool,
    start: u64,
    last: u64,
}

/// A traceback that ended, waiting to learn whether a chained one replaces it.
struct Ended {
    diagnostic: Diagnostic,
    chained: bool,
}

pub struct PythonTracebackParser {
    cwd: String,
    open: Option<Open>,
    ended: Option<Ended>,
    stream: Stream,
    diagnostics: Vec<Diagnostic>,
}

impl PythonTracebackParser {
    pub fn new(context: &ParseContext) -> Self {
        PythonTracebackParser {
            cwd: context.cwd.clone(),
            open: None,
            ended: None,
            stream: Stream::Stdout,
            diagnostics: Vec::new(),
        }
    }

    fn close(&mut self) {
        if let Some(open) = self.open.take() {
            let diagnostic = self.diagnostic(open);
            self.ended = Some(Ended { diagnostic, chained: false });
        }
    }

    fn emit_ended(&mut self) {
        if let Some(ended) = self.ended.take() {
            self.diagnostics.push(ended.diagnostic);
        }
    }

    fn diagnostic(&self, open: Open) -> Diagnostic {
        let reading = open.traceback.finish();
        let relative = |location: &Location| (relative_to(&location.file, &self.cwd), location.line);
        let own = reading.frames.iter().rev().map(relative).find(|(file, _)| in_project(file));
        let at = own.or_else(|| reading.location.as_ref().map(relative));
        let message = reading.message.unwrap_or_else(|| "Python exception".to_string());
        let mut d = Diagnostic::error(message).with_log_range(open.start, open.last);
        d.code = reading.code;
        if let Some((file, line)) = at {
            d = d.with_location(file, Some(line), None);
        }
        d
    }

    /// Reads a line of the open traceback; false when the traceback ended before it.
    fn feed_open(&mut self, text: &str, number: u64) -> bool {
        let Some(open) = self.open.as_mut() else { return false };
        let trimmed = text.trim_start();
        let in_margin = trimmed.starts_with('|') || trimmed.starts_with('+');
        let ends = if open.group { !in_margin || text.len() == trimmed.len() } else { open.raised };
        if ends {
            self.close();
            return false;
        }
        if !open.group && !text.is_empty() && text.len() == trimmed.len() {
            // The only unindented line of a traceback names the exception.
            open.raised = true;
        }
        open.traceback.feed(text);
        open.last = number;
        true
    }
}

fn opens_traceback(text: &str) -> Option<bool> {
    if text == "Traceback (most recent call last):" {
        return Some(false);
    }
    (text.trim_start().starts_with("+ Exception Group Traceback (most recent call last):")).then_some(true)
}

impl Parser for PythonTracebackParser {
    fn feed(&mut self, line: Line<'_>) {
        if line.stream != self.stream {
            self.close();
            self.stream = line.stream;
        }
        let text = line.text();
        let text = text.trim_end();
        // Cheap test first: most lines are the program's own output.
        let first = text.as_bytes().first().copied();
        if self.open.is_none() && self.ended.is_none() && !matches!(first, Some(b'T' | b' ')) {
            return;
        }
        if self.feed_open(text, line.number) {
            return;
        }
        if let Some(group) = opens_traceback(text) {
            // The chain's lines are all this exception's.
            let mut start = line.number;
            match self.ended.take() {
                Some(ended) if ended.chained => start = ended.diagnostic.log_range.map_or(start, |r| r.start),
                Some(ended) => self.diagnostics.push(ended.diagnostic),
                None => {}
            }
            let mut traceback = Traceback::default();
            if group {
                // Tells the reader to take the lines without their `|` margin.
                traceback.feed(text);
            }
            self.open = Some(Open { traceback, group, raised: false, start, last: line.number });
            return;
        }
        if text.is_empty() {
            return;
        }
        match self.ended.as_mut() {
            Some(ended) if CHAIN_MARKERS.contains(&text) => ended.chained = true,
            Some(_) => self.emit_ended(),
            None => {}
        }
    }

    fn finish(&mut self, _end: &RunEnd) -> ParseResult {
        self.close();
        self.emit_ended();
        ParseResult::new(std::mem::take(&mut self.diagnostics))
    }
}

#[cfg(test)]
mod tests {
    use crate::ThePlugin;
    use buildvise_plugin_api::testing::parse_log;
    use buildvise_plugin_api::{ParseContext, ParseResult, Plugin};

    // Python 3.11.7, `python -c "from app.x import *; f(-2)"` and the like; paths rewritten.
    const RAISED: &str = "Traceback (most recent call last):
  File \"<string>\", line 1, in <module>
  File \"/home/dev/src/app/app/x.py\", line 8, in f
    raise ValueError(f\"negative: {n}\")
ValueError: negative: -2
";

    const IN_THE_STDLIB: &str = "Traceback (most recent call last):
  File \"<string>\", line 1, in <module>
  File \"/home/dev/src/app/app/x.py\", line 4, in load
    return json.loads(text)
           ^^^^^^^^^^^^^^^^
  File \"/usr/lib/python3.11/json/__init__.py\", line 346, in loads
    return _default_decoder.decode(s)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^
  File \"/usr/lib/python3.11/json/decoder.py\", line 353, in raw_decode
    obj, end = self.scan_once(s, idx)
               ^^^^^^^^^^^^^^^^^^^^^^
json.decoder.JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)
";

    const CAUSE: &str = "Traceback (most recent call last):
  File \"/home/dev/src/app/app/x.py\", line 13, in chained
    {}[\"k\"]
    ~~^^^^^
KeyError: 'k'

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File \"<string>\", line 1, in <module>
  File \"/home/dev/src/app/app/x.py\", line 15, in chained
    raise RuntimeError(\"lookup failed\") from e
RuntimeError: lookup failed
";

    const DURING_HANDLING: &str = "Traceback (most recent call last):
  File \"/home/dev/src/app/app/x.py\", line 19, in during
    1 / 0
    ~~^~~
ZeroDivisionError: division by zero

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File \"<string>\", line 1, in <module>
  File \"/home/dev/src/app/app/x.py\", line 21, in during
    f(-1)
  File \"/home/dev/src/app/app/x.py\", line 8, in f
    raise ValueError(f\"negative: {n}\")
ValueError: negative: -1
";

    const GROUP: &str = "  + Exception Group Traceback (most recent call last):
  |   File \"<string>\", line 1, in <module>
  |   File \"/home/dev/src/app/app/x.py\", line 24, in group
  |     raise ExceptionGroup(\"two failed\", [ValueError(\"a\"), TypeError(\"b\")])
  | ExceptionGroup: two failed (2 sub-exceptions)
  +-+---------------- 1 ----------------
    | ValueError: a
    +---------------- 2 ----------------
    | TypeError: b
    +------------------------------------
";

    fn parse(format: &str, log: &str) -> ParseResult {
        let context = ParseContext::new("py.script", "/home/dev/src/app");
        parse_log(ThePlugin.format_parser(format, &context).expect("an exported format"), log.as_bytes(), 1)
    }

    /// `message file:line [start-end]` of each diagnostic.
    fn briefs(log: &str) -> Vec<String> {
        let result = parse("python-traceback", log);
        result
            .diagnostics
            .iter()
            .map(|d| {
                let at = format!("{}:{}", d.file.as_deref().unwrap_or("-"), d.line.unwrap_or(0));
                let range = d.log_range.map(|r| format!("{}-{}", r.start, r.end)).unwrap_or_default();
                format!("{} {at} [{range}]", d.message)
            })
            .collect()
    }

    #[test]
    fn the_exception_at_the_innermost_project_frame() {
        assert_eq!(briefs(RAISED), ["ValueError: negative: -2 app/x.py:8 [1-5]"]);
        let in_stdlib = briefs(IN_THE_STDLIB);
        assert_eq!(in_stdlib.len(), 1);
        assert!(in_stdlib[0].starts_with("json.decoder.JSONDecodeError: Expecting property name"), "{in_stdlib:?}");
        assert!(in_stdlib[0].ends_with(" app/x.py:4 [1-12]"), "{in_stdlib:?}");
        assert_eq!(parse("python-traceback", RAISED).diagnostics[0].code.as_deref(), Some("ValueError"));
    }

    #[test]
    fn a_chain_is_the_exception_that_propagated() {
        assert_eq!(briefs(CAUSE), ["RuntimeError: lookup failed app/x.py:15 [1-13]"]);
        assert_eq!(briefs(DURING_HANDLING), ["ValueError: negative: -1 app/x.py:8 [1-15]"]);
    }

    #[test]
    fn an_exception_group() {
        assert_eq!(briefs(GROUP), ["ExceptionGroup: two failed (2 sub-exceptions) app/x.py:24 [1-10]"]);
    }

    #[test]
    fn output_around_and_two_separate_tracebacks() {
        let log = format!("start\nloading 3 items\n{RAISED}done?\n{RAISED}");
        let found = briefs(&log);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[1].ends_with("[9-13]"), "{found:?}");
    }

    #[test]
    fn pytest_reports_are_not_plain_tracebacks() {
        let pytest = "____________________________ test_total ____________________________

    def test_total():
>       assert total([1, 2]) == 4
E       assert 3 == 4

tests/test_cart.py:5: AssertionError
=========================== short test summary info ===========================
FAILED tests/test_cart.py::test_total - assert 3 == 4
============================== 1 failed in 0.02s ===============================
";
        assert!(parse("python-traceback", pytest).diagnostics.is_empty());
        assert_eq!(parse("pytest", pytest).failed_tests, ["tests/test_cart.py::test_total"]);
        // And pytest's parser reads no script's traceback as a test.
        assert!(parse("pytest", RAISED).failed_tests.is_empty());
    }
}
