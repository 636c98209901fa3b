//! ESLint: the default stylish formatter, `-f json` (one JSON line, after npm's banner on the same
//! stdout) and the "Oops! Something went wrong!" crash.
//!
//! Stylish prints an absolute file header, then `  line:col  severity  message  rule` rows padded
//! into columns, and drops the message's trailing period. A fatal parse error has no rule.

use crate::parse::sink::Sink;
use buildvise_plugin_api::{Diagnostic, Severity, is_absolute};
use buildvise_plugin_api::{Recogniser, Text, Wants};
use memchr::memmem::Finder;
use regex::Regex;
use serde::Deserialize;
use std::sync::LazyLock;

static ROW: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s+(?P<line>\d+):(?P<col>\d+)\s+(?P<sev>error|warning)\s+(?P<msg>.+?)(?:\s{2,}(?P<rule>[@\w][\w@/.-]*))?\s*$")
        .expect("valid regex")
});

#[derive(Default)]
pub struct Eslint {
    /// The file header stylish rows may follow; empty when none may. One buffer for the run:
    /// any absolute path alone on its line reads as a header.
    file: String,
    /// After "Oops! Something went wrong!": the first line of the crash report to come.
    crashed: Option<u64>,
}

const CRASH: &str = "Oops! Something went wrong!";

impl Recogniser<Sink> for Eslint {
    fn is_open(&self) -> bool {
        self.crashed.is_some() || !self.file.is_empty()
    }

    // Inlined: asked of every line, a call cost as much as the test.
    #[inline]
    fn wants(&self) -> Wants {
        // A header is absolute: `/`, `\\` or a drive's `C:` first.
        Wants::starts(&["/", "\\", CRASH]).or_test(|head| head.bytes.get(1) == Some(&b':'))
    }

    fn feed(&mut self, ln: &Text<'_>, sink: &mut Sink) -> bool {
        let text = ln.text;
        if let Some(start) = self.crashed {
            let message = text.trim();
            if message.is_empty() || message.starts_with("ESLint: ") {
                return true;
            }
            self.crashed = None;
            sink.push(Diagnostic::error(message).with_log_range(start, ln.number));
            return true;
        }
        if text.starts_with(CRASH) {
            self.crashed = Some(ln.number);
            return true;
        }
        if !self.file.is_empty() {
            if text.starts_with(' ')
                && let Some(caps) = ROW.captures(text)
            {
                let severity = if &caps["sev"] == "error" { Severity::Error } else { Severity::Warning };
                let number = |name: &str| caps[name].parse::<u32>().ok();
                let mut diagnostic = Diagnostic::new(severity, &caps["msg"])
                    .with_location(self.file.as_str(), number("line"), number("col"))
                    .with_log_range(ln.number, ln.number);
                if let Some(rule) = caps.name("rule") {
                    diagnostic = diagnostic.with_code(rule.as_str());
                }
                sink.push(diagnostic);
                return true;
            }
            self.file.clear();
        }
        if is_header(text) {
            self.file.push_str(text);
            return true;
        }
        false
    }

    fn flush(&mut self, _sink: &mut Sink) {
        self.file.clear();
        self.crashed = None;
    }
}

/// A stylish file header: an absolute path alone on its line.
fn is_header(text: &str) -> bool {
    // Built once: `str::contains` builds a searcher per call, and many lines are paths.
    static DOUBLE_SPACE: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new("  "));
    is_absolute(text) && text.trim_end() == text && !text.ends_with(':') && DOUBLE_SPACE.find(text.as_bytes()).is_none()
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FileResult {
    file_path: String,
    #[serde(default)]
    messages: Vec<Message>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Message {
    rule_id: Option<String>,
    #[serde(default)]
    severity: u8,
    #[serde(default)]
    message: String,
    line: Option<u32>,
    column: Option<u32>,
    end_line: Option<u32>,
    end_column: Option<u32>,
}

#[derive(Deserialize)]
struct WithMetadata {
    results: Vec<FileResult>,
}

/// How `-f json` and `-f json-with-metadata` reports start.
const JSON_START: &str = "[{\"filePath\"";
const METADATA_START: &str = "{\"results\":[";

/// ESLint's report in JSON, on one line: read whole, where it is printed.
pub struct EslintJson;

impl Recogniser<Sink> for EslintJson {
    fn wants(&self) -> Wants {
        Wants::starts(&[JSON_START, METADATA_START])
    }

    fn feed(&mut self, ln: &Text<'_>, sink: &mut Sink) -> bool {
        feed_json(ln, sink)
    }
}

/// `-f json` (`[{"filePath":...}]`) or `-f json-with-metadata` (`{"results":[...]}`) on one line.
/// Returns false when the line is not such a report.
fn feed_json(ln: &Text<'_>, sink: &mut Sink) -> bool {
    let text = ln.text.trim_end();
    let results = if text.starts_with(JSON_START) {
        serde_json::from_str::<Vec<FileResult>>(text).ok()
    } else if text.starts_with(METADATA_START) {
        serde_json::from_str::<WithMetadata>(text).ok().map(|m| m.results)
    } else {
        None
    };
    let Some(results) = results else { return false };
    for file in results {
        for m in file.messages {
            let severity = if m.severity >= 2 { Severity::Error } else { Severity::Warning };
            let mut diagnostic = Diagnostic::new(severity, m.message.lines().next().unwrap_or_default())
                .with_location(file.file_path.as_str(), m.line, m.column)
                .with_log_range(ln.number, ln.number);
            diagnostic.end_line = m.end_line;
            diagnostic.end_column = m.end_column;
            if let Some(rule) = m.rule_id {
                diagnostic = diagnostic.with_code(rule);
            }
            sink.push(diagnostic);
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use crate::parse::tests::{errors, parse, warnings};

    #[test]
    fn stylish_rows_with_and_without_rule() {
        let result = parse(
            "\n> api@1.0.0 lint\n> eslint .\n\n\n\
             /home/dev/api/src/router.js\n\
             \x20  4:3   error    Unexpected var, use let or const instead  no-var\n\
             \x20 10:24  warning  Expected { after 'if' condition           curly\n\
             \x20 12:9   error    Parsing error: Unexpected token ;\n\
             \n\
             /home/dev/api/src/ts.ts\n\
             \x20 1:10  error  'x' is defined but never used  @typescript-eslint/no-unused-vars\n\
             \n\
             \u{2716} 4 problems (3 errors, 1 warning)\n",
            1,
        );
        let errs = errors(&result);
        assert_eq!(errs.len(), 3);
        assert_eq!(errs[0].file.as_deref(), Some("/home/dev/api/src/router.js"));
        assert_eq!((errs[0].line, errs[0].column, errs[0].code.as_deref()), (Some(4), Some(3), Some("no-var")));
        assert_eq!((errs[1].code.as_deref(), errs[1].message.as_str()), (None, "Parsing error: Unexpected token ;"));
        assert_eq!(errs[2].code.as_deref(), Some("@typescript-eslint/no-unused-vars"));
        let warns = warnings(&result);
        assert_eq!(
            (warns[0].message.as_str(), warns[0].code.as_deref()),
            ("Expected { after 'if' condition", Some("curly"))
        );
    }

    #[test]
    fn json_after_the_banner() {
        let result = parse(
            "\n> cli@0.2.0 lint\n> eslint -f json src\n\n\
             [{\"filePath\":\"/w/src/a.js\",\"messages\":[{\"ruleId\":\"no-shadow\",\"severity\":2,\"message\":\"'x' is already declared.\",\"line\":6,\"column\":9},\
             {\"ruleId\":null,\"fatal\":true,\"severity\":2,\"message\":\"Parsing error: Unexpected token ;\",\"line\":4,\"column\":69},\
             {\"ruleId\":\"no-unused-vars\",\"severity\":1,\"message\":\"'p' is unused.\",\"line\":5,\"column\":7}],\"errorCount\":2}]\n",
            1,
        );
        assert_eq!(errors(&result).len(), 2);
        assert_eq!(errors(&result)[1].code, None);
        assert_eq!(warnings(&result)[0].code.as_deref(), Some("no-unused-vars"));
    }

    #[test]
    fn crash_report() {
        let result =
            parse("\nOops! Something went wrong! :(\n\nESLint: 9.39.5\n\nError: Could not find config file.\n", 2);
        assert_eq!(errors(&result)[0].message, "Error: Could not find config file.");
    }
}
