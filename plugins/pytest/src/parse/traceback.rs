//! Reading the body of one failure or error section (or a conftest import error, or a JUnit
//! `<failure>` text): where it happened, the exception class and the headline.
//!
//! pytest's tracebacks come in several styles and all are read by the same rules:
//! - long (default): frames end with `path:line: ` and the innermost closes the section with
//!   `path:line: ExcType`; the `E   ` lines above it hold the message;
//! - short, and collection errors: `path:line: in func` frames, then `E   ` lines;
//! - native: Python's `  File "path", line N, in func` frames, then `ExcType: message` unindented;
//! - fixture not found: `file path, line N` and a bare `path:line`.
//!
//! The last location wins: that is the innermost frame. A SyntaxError is located where Python
//! says the bad source is (`E     File "x.py", line 8`), not in the importer's frames.

use super::doctest::{CLOSING_CLASSES, Doctest};
use super::hypothesis::Example;
use super::text::{
    clip, is_dotted_identifier, leading_exception, python_frame, split_location_line, without_warning_module,
};

/// How many `E` lines after the headline are kept as notes.
const MAX_NOTES: usize = 3;

/// Further failing examples of one docstring named in its note.
const MAX_MORE_EXAMPLES: usize = 10;

/// Frames remembered per traceback, innermost last: enough to find the project's own frame
/// below a deep stack of library frames, bounded for a runaway recursion.
pub const MAX_FRAMES: usize = 64;

/// Exceptions that Python locates in the offending source rather than in a frame.
const SOURCE_LOCATED: [&str; 3] = ["SyntaxError", "IndentationError", "TabError"];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub file: String,
    pub line: u32,
}

/// What a section says, once read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reading {
    pub location: Option<Location>,
    pub code: Option<String>,
    pub message: Option<String>,
    pub notes: Vec<String>,
    /// The frames, outermost first, when `location` is the innermost one (not a SyntaxError's
    /// source): a caller that knows the project can send the reader to its own frame instead.
    pub frames: Vec<Location>,
}

/// One run of consecutive `E` lines: the exception pytest shows for one traceback entry.
#[derive(Debug, Default)]
struct EBlock {
    first: Option<String>,
    /// The line naming the exception class, and the class.
    typed: Option<(String, String)>,
    /// Where Python itself placed the error (`File "x", line N` inside the message).
    source: Option<Location>,
    notes: Vec<String>,
    /// Hypothesis's minimal failing example.
    example: Option<Example>,
}

impl EBlock {
    fn push(&mut self, content: &str) {
        if let Some(example) = self.example.as_mut().filter(|e| !e.is_done()) {
            example.push(content);
            return;
        }
        if self.first.is_some()
            && self.example.is_none()
            && let Some(example) = Example::start(content)
        {
            self.example = Some(example);
            return;
        }
        if let Some((file, line)) = python_frame(content) {
            if self.typed.is_none() {
                self.source = Some(Location { file: file.to_string(), line });
            }
            return;
        }
        // Only the first line, or the first after Python's own frame lines, may name the class:
        // later lines are free text (`Expected: 37.5`) that merely looks like `Name: value`.
        let may_name_class = self.first.is_none() || (self.source.is_some() && self.typed.is_none());
        if may_name_class && let Some(name) = leading_exception(content) {
            self.typed = Some((clip(without_warning_module(content)), name.to_string()));
        } else if self.first.is_some() && !is_blank_or_caret(content) && self.notes.len() < MAX_NOTES {
            self.notes.push(clip(content));
        }
        if self.first.is_none() {
            self.first = Some(clip(content));
        }
    }
}

#[derive(Debug, Default)]
pub struct Traceback {
    location: Option<Location>,
    /// The class from the location line that closed the traceback (long style).
    closing_code: Option<String>,
    block: EBlock,
    in_block: bool,
    /// A native `File "..."` frame was the last location: an unindented `Type: msg` may follow.
    after_native_frame: bool,
    native: Option<(String, String)>,
    /// First other text of the body: `[XPASS(strict)] reason`, `ImportError while importing ...`.
    first_text: Option<String>,
    doctest: Doctest,
    /// The first failing doctest example closed the report: later ones are only counted.
    doctest_closed: bool,
    /// Lines of the further failing examples (`--doctest-continue-on-failure`).
    more_examples: Vec<u32>,
    /// Inside Python's `+ Exception Group Traceback`, whose lines are prefixed with `|`.
    in_group: bool,
    frames: Vec<Location>,
}

impl Traceback {
    pub fn feed(&mut self, line: &str) {
        if self.doctest_closed {
            if let Some((_, number, rest)) = split_location_line(line)
                && CLOSING_CLASSES.contains(&rest.trim())
                && self.more_examples.len() < MAX_MORE_EXAMPLES
            {
                self.more_examples.push(number);
            }
            return;
        }
        let unindented = line.trim_start();
        if unindented.starts_with("+ Exception Group Traceback") {
            self.in_group = true;
            return;
        }
        let line = match group_content(line, unindented) {
            Some(content) if self.in_group => content,
            _ if self.in_group && unindented.starts_with("+-") => return,
            _ => line,
        };
        if let Some(content) = e_line(line) {
            if !self.in_block {
                self.block = EBlock::default();
                self.in_block = true;
            }
            self.block.push(content);
            return;
        }
        self.in_block = false;
        if line.is_empty() || line.starts_with('>') || self.doctest.feed(line) {
            return;
        }
        if line.starts_with("  File \"") {
            if let Some((file, number)) = python_frame(line) {
                self.set_location(file, number, None);
                self.after_native_frame = true;
            }
            return;
        }
        if line.starts_with(char::is_whitespace) {
            return;
        }
        if self.after_native_frame
            && let Some(name) = leading_exception(line)
        {
            self.native = Some((name.to_string(), clip(without_warning_module(line))));
            self.after_native_frame = false;
            return;
        }
        if let Some(rest) = line.strip_prefix("file ")
            && let Some((file, number)) = rest.rsplit_once(", line ")
            && let Ok(number) = number.parse()
        {
            self.set_location(file, number, None);
            return;
        }
        if let Some((file, number, rest)) = split_location_line(line) {
            let rest = rest.trim();
            if rest.is_empty() || rest.starts_with("in ") {
                self.set_location(file, number, None);
                return;
            }
            if is_dotted_identifier(rest) {
                self.set_location(file, number, Some(rest));
                self.doctest_closed = CLOSING_CLASSES.contains(&rest);
                return;
            }
        }
        if self.first_text.is_none() && !line.starts_with("[gw") {
            self.first_text = Some(clip(line));
        }
    }

    fn set_location(&mut self, file: &str, line: u32, code: Option<&str>) {
        // `<frozen importlib._bootstrap>` and `<string>` are no place to send anyone.
        if file.starts_with('<') {
            return;
        }
        let location = Location { file: file.to_string(), line };
        if self.frames.last() != Some(&location) {
            if self.frames.len() == MAX_FRAMES {
                self.frames.remove(0);
            }
            self.frames.push(location.clone());
        }
        self.location = Some(location);
        self.closing_code = code.map(str::to_string);
        self.after_native_frame = false;
    }

    pub fn finish(self) -> Reading {
        let Traceback { location, closing_code, block, native, first_text, doctest, more_examples, mut frames, .. } =
            self;
        let typed_code = block.typed.as_ref().map(|(_, code)| code.clone());
        let code =
            closing_code.or_else(|| native.as_ref().map(|(code, _)| code.clone())).or(typed_code).or_else(|| {
                // The short and native styles print no class for a failed `assert`.
                block.first.as_deref().filter(|f| f.starts_with("assert ")).map(|_| "AssertionError".to_string())
            });
        let location = match (&code, block.source) {
            (Some(code), Some(source)) if SOURCE_LOCATED.contains(&code.as_str()) && !source.file.starts_with('<') => {
                frames.clear();
                Some(source)
            }
            _ => location,
        };
        let message = native
            .map(|(_, text)| text)
            .or_else(|| block.typed.map(|(text, _)| text))
            .or(block.first)
            .or_else(|| doctest.message())
            .or(first_text)
            .filter(|m| !m.is_empty());
        let mut notes = block.notes;
        if let Some(example) = block.example {
            // First: it is what the standard answer shows beside the headline.
            notes.insert(0, example.note());
        }
        if !more_examples.is_empty() {
            let lines: Vec<String> = more_examples.iter().map(u32::to_string).collect();
            notes.push(format!("also failing: lines {}", lines.join(", ")));
        }
        Reading { location, code, message, notes, frames }
    }
}

/// The text of a line of an exception group's traceback, without its `|` margin (`trimmed` is
/// `line` without its indentation).
fn group_content<'a>(line: &str, trimmed: &'a str) -> Option<&'a str> {
    // The margin is always indented; a source line of pytest's own listing never starts with `|`.
    let rest = trimmed.strip_prefix('|').filter(|_| trimmed.len() < line.len())?;
    Some(rest.strip_prefix(' ').unwrap_or(rest))
}

/// True for lines that add nothing as a note: empty, or only the `^^^` markers under source.
fn is_blank_or_caret(text: &str) -> bool {
    text.chars().all(|c| matches!(c, ' ' | '^' | '~'))
}

/// The content of an `E   ...` line, or None.
fn e_line(line: &str) -> Option<&str> {
    let rest = line.strip_prefix('E')?;
    (rest.is_empty() || rest.starts_with(' ')).then(|| rest.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(body: &str) -> Reading {
        let mut tb = Traceback::default();
        body.lines().for_each(|l| tb.feed(l));
        tb.finish()
    }

    fn at(file: &str, line: u32) -> Option<Location> {
        Some(Location { file: file.into(), line })
    }

    #[test]
    fn long_style_takes_the_closing_line_of_the_innermost_frame() {
        let r = read(
            "\n    def test_total(basket):\n>       assert basket.total(\"X\") == 3\n\n\
             tests/test_basket.py:12: \n_ _ _ _ _ _ _ _ _ _\n\nself = <Basket>\n\n    def total(self, c):\n\
             >       return self.rates[c]\nE       KeyError: 'X'\n\nshop/basket.py:40: KeyError",
        );
        assert_eq!(r.location, at("shop/basket.py", 40));
        assert_eq!(r.code.as_deref(), Some("KeyError"));
        assert_eq!(r.message.as_deref(), Some("KeyError: 'X'"));
    }

    #[test]
    fn assertion_headline_and_notes() {
        let r = read(
            ">       assert f(2) == {\"a\": 1}\nE       AssertionError: assert {'a': 2} == {'a': 1}\nE         \n\
             E         Differing items:\nE         {'a': 2} != {'a': 1}\nE         Use -v to get more diff\n\
             E         one too many\n\ntests/test_f.py:7: AssertionError",
        );
        assert_eq!(r.message.as_deref(), Some("AssertionError: assert {'a': 2} == {'a': 1}"));
        assert_eq!(r.notes, ["Differing items:", "{'a': 2} != {'a': 1}", "Use -v to get more diff"]);
        assert_eq!(r.code.as_deref(), Some("AssertionError"));
    }

    #[test]
    fn free_text_in_e_lines_is_not_a_class() {
        let r = read(
            "E       assert 1.0 == 2.0 ± 0.1\nE         Obtained: 1.0\nE         Expected: 2.0 ± 0.1\n\n\
             tests/test_a.py:3: AssertionError",
        );
        assert_eq!(r.message.as_deref(), Some("assert 1.0 == 2.0 ± 0.1"));
        assert_eq!(r.code.as_deref(), Some("AssertionError"));
    }

    #[test]
    fn chained_exceptions_report_the_last() {
        let r = read(
            ">           {}[\"x\"]\nE           KeyError: 'x'\n\ntests/t.py:4: KeyError\n\n\
             The above exception was the direct cause of the following exception:\n\n\
             >           raise RuntimeError(\"wrapped\") from e\nE           RuntimeError: wrapped\n\ntests/t.py:6: RuntimeError",
        );
        assert_eq!((r.location, r.code.as_deref()), (at("tests/t.py", 6), Some("RuntimeError")));
        assert_eq!(r.message.as_deref(), Some("RuntimeError: wrapped"));
    }

    #[test]
    fn short_style_and_collection_import_error() {
        let r = read(
            "ImportError while importing test module '/p/tests/test_api.py'.\nTraceback:\n\
             /usr/lib/python3.12/importlib/__init__.py:90: in import_module\n    return _bootstrap._gcd_import(name)\n\
             tests/test_api.py:2: in <module>\n    from kit.api import run\nE   ModuleNotFoundError: No module named 'kit.api'",
        );
        assert_eq!(r.location, at("tests/test_api.py", 2));
        assert_eq!(r.code.as_deref(), Some("ModuleNotFoundError"));
        let r = read("tests/t.py:11: in test_sum\n    assert add(1, 1) == 3\nE   assert 2 == 3");
        assert_eq!((r.location, r.code.as_deref()), (at("tests/t.py", 11), Some("AssertionError")));
    }

    #[test]
    fn syntax_error_is_located_in_the_source() {
        let r = read(
            "/venv/lib/python3.12/site-packages/_pytest/python.py:498: in importtestmodule\n    mod = import_path(\n\
             <frozen importlib._bootstrap>:1204: in _gcd_import\n    ???\n\
             /usr/lib/python3.12/ast.py:52: in parse\n    return compile(source, filename, mode, flags,\n\
             E     File \"/p/tests/test_calc.py\", line 5\nE       def test_x(:\nE              ^\nE   SyntaxError: invalid syntax",
        );
        assert_eq!(r.location, at("/p/tests/test_calc.py", 5));
        assert_eq!(r.code.as_deref(), Some("SyntaxError"));
        assert_eq!(r.message.as_deref(), Some("SyntaxError: invalid syntax"));
    }

    #[test]
    fn fixture_not_found_and_strict_xpass() {
        let r = read(
            "file /p/tests/test_n.py, line 9\n  def test_s(db):\nE       fixture 'db' not found\n\
             >       available fixtures: cache, capsys\n>       use 'pytest --fixtures [testpath]' for help on them.\n\n/p/tests/test_n.py:9",
        );
        assert_eq!((r.location, r.code), (at("/p/tests/test_n.py", 9), None));
        assert_eq!(r.message.as_deref(), Some("fixture 'db' not found"));
        let r = read("[gw1] linux -- Python 3.12.1 /v/bin/python\n[XPASS(strict)] must fail");
        assert_eq!((r.location, r.message.as_deref()), (None, Some("[XPASS(strict)] must fail")));
    }

    #[test]
    fn native_style() {
        let r = read(
            "Traceback (most recent call last):\n  File \"/v/site-packages/_pytest/runner.py\", line 341, in from_call\n\
             \x20   result = func()\n  File \"/p/tests/t.py\", line 8, in test_a\n    assert 1 == 2\nAssertionError: assert 1 == 2",
        );
        assert_eq!((r.location, r.code.as_deref()), (at("/p/tests/t.py", 8), Some("AssertionError")));
        assert_eq!(r.message.as_deref(), Some("AssertionError: assert 1 == 2"));
    }

    #[test]
    fn doctest_failures() {
        let r = read(
            "015 \n016     >>> shout(\"a\")\nExpected:\n    'A!'\nGot:\n    'A'\n\n/p/pkg/util.py:16: DocTestFailure",
        );
        assert_eq!((r.location, r.code.as_deref()), (at("/p/pkg/util.py", 16), Some("DocTestFailure")));
        assert_eq!(r.message.as_deref(), Some("expected 'A!', got 'A'"));
        let r = read(
            "003     >>> parse(\"\")\nUNEXPECTED EXCEPTION: ValueError('empty')\nTraceback (most recent call last):\n\
                      \x20 File \"<doctest pkg.parse[0]>\", line 1, in <module>\nValueError: empty\n/p/pkg/p.py:3: UnexpectedException",
        );
        assert_eq!(r.message.as_deref(), Some("ValueError: empty"));
        assert_eq!((r.location, r.code.as_deref()), (at("/p/pkg/p.py", 3), Some("UnexpectedException")));
    }

    #[test]
    fn doctest_continue_on_failure_keeps_the_first_example() {
        // pytest 9.2.0, `--doctest-modules --doctest-report udiff --doctest-continue-on-failure`.
        let r = read(
            "002 Rows.\n003 \n004     >>> print(table())\nDifferences (unified diff with -expected +actual):\n\
             \x20   @@ -1,4 +1,4 @@\n     a 1\n     b 2\n    -c 3\n    +c 9\n     d 4\n\n/p/m.py:4: DocTestFailure\n\
             002 Rows.\n009     >>> 1 + 1\nExpected:\n    3\nGot:\n    2\n\n/p/m.py:9: DocTestFailure\n\
             011     >>> 2 + 2\nExpected:\n    5\nGot:\n    4\n\n/p/m.py:11: DocTestFailure",
        );
        assert_eq!((r.location, r.code.as_deref()), (at("/p/m.py", 4), Some("DocTestFailure")));
        assert_eq!(r.message.as_deref(), Some("expected c 3, got c 9"));
        assert_eq!(r.notes, ["also failing: lines 9, 11"]);
    }

    #[test]
    fn exception_group_reports_its_innermost_exception() {
        // anyio 4.16.0 task group under pytest 9.2.0, Python 3.11.7.
        let r = read(
            "  + Exception Group Traceback (most recent call last):\n\
             \x20 |   File \"/p/tests/test_worker.py\", line 14, in test_load_all_mixed\n\
             \x20 |     assert await load_all([\"a\", \"bad\"]) == [\"A\"]\n\
             \x20 |   File \"/v/site-packages/anyio/_backends/_asyncio.py\", line 871, in __aexit__\n\
             \x20 |     raise BaseExceptionGroup(\n\
             \x20 | ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)\n\
             \x20 +-+---------------- 1 ----------------\n\
             \x20   | Traceback (most recent call last):\n\
             \x20   |   File \"/p/worker.py\", line 7, in load\n\
             \x20   |     raise ValueError(f\"cannot load {name}\")\n\
             \x20   | ValueError: cannot load bad\n\
             \x20   +------------------------------------",
        );
        assert_eq!((r.location, r.code.as_deref()), (at("/p/worker.py", 7), Some("ValueError")));
        assert_eq!(r.message.as_deref(), Some("ValueError: cannot load bad"));
        let r = read("    x = (a\n    | b)\nE   TypeError: no\n\ntests/t.py:3: TypeError");
        assert_eq!((r.location, r.code.as_deref()), (at("tests/t.py", 3), Some("TypeError")), "no group, no margin");
    }

    #[test]
    fn hypothesis_example_is_the_first_note() {
        // Hypothesis 6.170.15 under pytest 9.2.0.
        let r = read(
            ">       assert clamp(n, lo, 10) >= lo\nE       assert 0 >= 1\nE        +  where 0 = clamp(0, 1, 10)\n\
             E       Failing test case: test_clamp_low(\nE           n=0,\nE           lo=1,\nE       )\n\n\
             tests/test_props.py:14: AssertionError",
        );
        assert_eq!(r.message.as_deref(), Some("assert 0 >= 1"));
        assert_eq!(r.notes, ["Failing test case: n=0, lo=1", "+  where 0 = clamp(0, 1, 10)"]);
    }

    #[test]
    fn frames_are_kept_innermost_last_except_for_a_syntax_error() {
        let r = read(
            "tests/conftest.py:6: in <module>\n    x = json.loads(s)\n/usr/lib/python3.11/json/__init__.py:346: in loads\n\
             \x20   return d(s)\n<frozen importlib._bootstrap>:1: in f\n    ???\nE   json.decoder.JSONDecodeError: bad",
        );
        let files: Vec<&str> = r.frames.iter().map(|f| f.file.as_str()).collect();
        assert_eq!(files, ["tests/conftest.py", "/usr/lib/python3.11/json/__init__.py"]);
        assert_eq!(r.location, at("/usr/lib/python3.11/json/__init__.py", 346));
        let r = read("tests/t.py:3: in <module>\n    import bad\nE     File \"/p/bad.py\", line 5\nE   SyntaxError: x");
        assert!(r.frames.is_empty());
        let mut tb = Traceback::default();
        for i in 0..1000 {
            tb.feed(&format!("tests/t.py:{i}: in f"));
        }
        let r = tb.finish();
        assert_eq!((r.frames.len(), r.frames.last().map(|f| f.line)), (MAX_FRAMES, Some(999)));
    }

    #[test]
    fn odd_input_does_not_panic() {
        let r = read("E\nE \n:\n:1\n1:\nfile , line \nfile x, line 99999999999\n  File \"\n>");
        assert_eq!(r.location, None);
    }
}
