//! Test reports written next to the run: VSTest/MTP TRX files and NUnit `TestResult.xml` (NUnit 2
//! `<test-results>` and NUnit 3 `<test-run>`). They are recognised by content, not by name.
//!
//! Counts come from the results themselves: real TRX files say `notExecuted="0"` in `<Counters>`
//! even when tests were skipped, so skipped = results with outcome `NotExecuted`.

use super::failure::Failure;
use super::summary::Counts;
use buildvise_plugin_api::{TestCase, TestCases, TestOutcome, seconds_to_us};
use quick_xml::Reader;
use quick_xml::events::{BytesRef, Event};

/// Reports larger than this are not read (memory stays bounded).
const MAX_REPORT_BYTES: u64 = 256 * 1024 * 1024;

#[derive(Debug, Default, PartialEq, Eq)]
pub struct Report {
    pub counts: Counts,
    pub failures: Vec<Failure>,
    /// Run-level errors that say the test host crashed or the run was aborted.
    pub run_errors: Vec<String>,
    /// Every result, with its duration; passed and skipped ones capped as [`TestCases`] caps
    /// them.
    pub tests: Vec<TestCase>,
}

/// Reads the report at `path`; None when it is missing, too big or not a known format.
pub fn read(path: &str) -> Option<Report> {
    let size = std::fs::metadata(path).ok()?.len();
    if size > MAX_REPORT_BYTES {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    parse(&String::from_utf8_lossy(&bytes))
}

/// Parses a report's text (a BOM is allowed).
pub fn parse(xml: &str) -> Option<Report> {
    let xml = xml.trim_start_matches('\u{feff}');
    let mut end = xml.len().min(4096);
    while !xml.is_char_boundary(end) {
        end -= 1;
    }
    let head = &xml[..end];
    if head.contains("<TestRun") {
        Some(parse_trx(xml))
    } else if head.contains("<test-results") || head.contains("<test-run") {
        Some(parse_nunit(xml))
    } else {
        None
    }
}

/// Which element's text is being collected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Message,
    Stack,
    RunInfo,
}

/// A result being read: its name, outcome and error text.
#[derive(Debug, Default)]
struct Pending {
    name: String,
    outcome: String,
    duration_us: Option<u64>,
    message: String,
    stack: String,
}

fn parse_trx(xml: &str) -> Report {
    let mut reader = Reader::from_str(xml);
    reader.config_mut().check_end_names = false;
    let mut report = Report::default();
    let mut depth = 0usize;
    let mut pending = Pending::default();
    let mut field: Option<Field> = None;
    let mut run_info_error = false;
    let mut run_text = String::new();
    loop {
        let event = match reader.read_event() {
            Ok(Event::Eof) | Err(_) => break,
            Ok(event) => event,
        };
        match event {
            Event::Start(e) => match e.local_name().as_ref() {
                "UnitTestResult" => {
                    depth += 1;
                    if depth == 1 {
                        pending = trx_result(&e);
                    }
                }
                "Message" if depth > 0 && pending.message.is_empty() => field = Some(Field::Message),
                "StackTrace" if depth > 0 && pending.stack.is_empty() => field = Some(Field::Stack),
                "RunInfo" => run_info_error = attr(&e, "outcome") == "Error",
                "Text" if run_info_error && depth == 0 => field = Some(Field::RunInfo),
                _ => {}
            },
            Event::Empty(e) if depth == 0 && e.local_name().as_ref() == "UnitTestResult" => {
                record(&mut report, trx_result(&e), trx_outcome);
            }
            Event::End(e) => match e.local_name().as_ref() {
                "UnitTestResult" => {
                    if depth == 1 {
                        record(&mut report, std::mem::take(&mut pending), trx_outcome);
                    }
                    depth = depth.saturating_sub(1);
                }
                "Message" | "StackTrace" => field = None,
                "Text" if field == Some(Field::RunInfo) => {
                    field = None;
                    if let Some(first) = run_text.lines().map(str::trim).find(|l| !l.is_empty())
                        && reports_a_crash(first)
                    {
                        report.run_errors.push(first.to_string());
                    }
                    run_text.clear();
                }
                "RunInfo" => run_info_error = false,
                _ => {}
            },
            Event::Text(t) => append(field, &mut pending, &mut run_text, &t.xml10_content()),
            Event::CData(t) => append(field, &mut pending, &mut run_text, &t.xml10_content()),
            Event::GeneralRef(r) => {
                if let Some(text) = resolve(&r) {
                    append(field, &mut pending, &mut run_text, &text);
                }
            }
            _ => {}
        }
    }
    report
}

/// Adapters also log their chatter (`[xUnit.net …] X [FAIL]`, MTP's exit code) as `RunInfo`
/// errors; only a crashed host or an aborted run is news beyond the results.
fn reports_a_crash(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.contains("crash") || lower.contains("aborted") || lower.contains("exited unexpectedly")
}

fn parse_nunit(xml: &str) -> Report {
    let mut reader = Reader::from_str(xml);
    reader.config_mut().check_end_names = false;
    let mut report = Report::default();
    let mut pending: Option<Pending> = None;
    let mut in_failure = false;
    let mut field: Option<Field> = None;
    let mut unused = String::new();
    loop {
        let event = match reader.read_event() {
            Ok(Event::Eof) | Err(_) => break,
            Ok(event) => event,
        };
        match event {
            Event::Start(e) => match e.local_name().as_ref() {
                "test-case" => pending = Some(nunit_case(&e)),
                "failure" => in_failure = true,
                "message" if in_failure => field = Some(Field::Message),
                "stack-trace" if in_failure => field = Some(Field::Stack),
                _ => {}
            },
            Event::Empty(e) if e.local_name().as_ref() == "test-case" => {
                record(&mut report, nunit_case(&e), nunit_outcome);
            }
            Event::End(e) => match e.local_name().as_ref() {
                "test-case" => {
                    if let Some(case) = pending.take() {
                        record(&mut report, case, nunit_outcome);
                    }
                    in_failure = false;
                }
                "failure" => in_failure = false,
                "message" | "stack-trace" => field = None,
                _ => {}
            },
            Event::Text(t) => {
                if let Some(case) = &mut pending {
                    append(field, case, &mut unused, &t.xml10_content());
                }
            }
            Event::CData(t) => {
                if let Some(case) = &mut pending {
                    append(field, case, &mut unused, &t.xml10_content());
                }
            }
            Event::GeneralRef(r) => {
                if let (Some(case), Some(text)) = (&mut pending, resolve(&r)) {
                    append(field, case, &mut unused, &text);
                }
            }
            _ => {}
        }
    }
    report
}

/// NUnit 3 names the test in `fullname`, NUnit 2 in `name`.
fn nunit_case(e: &quick_xml::events::BytesStart<'_>) -> Pending {
    let mut name = attr(e, "fullname");
    if name.is_empty() {
        name = attr(e, "name");
    }
    // NUnit 3 times a case in `duration`, NUnit 2 in `time`, both in seconds.
    let seconds = Some(attr(e, "duration")).filter(|d| !d.is_empty()).unwrap_or_else(|| attr(e, "time"));
    Pending { name, outcome: attr(e, "result"), duration_us: seconds_to_us(seconds.trim()), ..Pending::default() }
}

/// A TRX `UnitTestResult`: its name, outcome and `duration` (`00:00:00.0210000`).
fn trx_result(e: &quick_xml::events::BytesStart<'_>) -> Pending {
    let duration_us = trx_duration(&attr(e, "duration"));
    Pending { name: attr(e, "testName"), outcome: attr(e, "outcome"), duration_us, ..Pending::default() }
}

/// `hh:mm:ss.fffffff` as microseconds; None for anything else.
fn trx_duration(text: &str) -> Option<u64> {
    let mut parts = text.trim().splitn(3, ':');
    let (hours, minutes, seconds) = (parts.next()?, parts.next()?, parts.next()?);
    let whole = |s: &str| s.parse::<u64>().ok().filter(|_| s.bytes().all(|b| b.is_ascii_digit()));
    let minutes = whole(hours)?.checked_mul(60)?.checked_add(whole(minutes)?)?;
    minutes.checked_mul(60_000_000)?.checked_add(seconds_to_us(seconds)?)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Passed,
    Failed,
    Skipped,
    /// Counted in the total only (NUnit's inconclusive).
    Other,
}

fn trx_outcome(outcome: &str) -> Outcome {
    match outcome {
        "Passed" | "PassedButRunAborted" => Outcome::Passed,
        "Failed" | "Error" | "Timeout" | "Aborted" => Outcome::Failed,
        _ => Outcome::Skipped,
    }
}

fn nunit_outcome(result: &str) -> Outcome {
    match result {
        "Success" | "Passed" | "Warning" => Outcome::Passed,
        "Failure" | "Failed" | "Error" | "NotRunnable" | "Cancelled" => Outcome::Failed,
        "Inconclusive" => Outcome::Other,
        _ => Outcome::Skipped,
    }
}

fn record(report: &mut Report, result: Pending, classify: fn(&str) -> Outcome) {
    report.counts.total += 1;
    let outcome = classify(&result.outcome);
    let named = match outcome {
        Outcome::Passed => Some(TestOutcome::Passed),
        Outcome::Failed => Some(TestOutcome::Failed),
        Outcome::Skipped => Some(TestOutcome::Skipped),
        Outcome::Other => None,
    };
    if let Some(named) = named
        && (named == TestOutcome::Failed || report.tests.len() < TestCases::MAX)
    {
        report.tests.push(TestCase::new(result.name.as_str(), named, result.duration_us));
    }
    match outcome {
        Outcome::Passed => report.counts.passed += 1,
        Outcome::Skipped => report.counts.skipped += 1,
        Outcome::Other => {}
        Outcome::Failed => {
            report.counts.failed += 1;
            let mut failure = Failure::new(&result.name, None);
            for line in result.message.lines() {
                failure.add_text(line);
            }
            for line in result.stack.lines() {
                if failure.add_frame(line) {
                    break;
                }
            }
            report.failures.push(failure);
        }
    }
}

fn append(field: Option<Field>, pending: &mut Pending, run_text: &mut String, text: &str) {
    match field {
        Some(Field::Message) => pending.message.push_str(text),
        Some(Field::Stack) => pending.stack.push_str(text),
        Some(Field::RunInfo) => run_text.push_str(text),
        None => {}
    }
}

/// `&#xD;`, `&lt;` and friends, which quick-xml reports apart from the text around them.
fn resolve(r: &BytesRef<'_>) -> Option<String> {
    if let Ok(Some(c)) = r.resolve_char_ref() {
        return Some(c.to_string());
    }
    quick_xml::escape::resolve_predefined_entity(r).map(str::to_string)
}

fn attr(e: &quick_xml::events::BytesStart<'_>, name: &str) -> String {
    match e.try_get_attribute(name) {
        Ok(Some(a)) => match a.normalized_value(quick_xml::XmlVersion::Implicit1_0) {
            Ok(v) => v.into_owned(),
            Err(_) => a.value.into_owned(),
        },
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRX: &str = "\u{feff}<?xml version=\"1.0\" encoding=\"utf-8\"?>\r\n\
<TestRun id=\"1\" xmlns=\"http://microsoft.com/schemas/VisualStudio/TeamTest/2010\">\r\n\
  <Results>\r\n\
    <UnitTestResult testName=\"Calc.Tests.Divide_ByZero\" outcome=\"Failed\">\r\n\
      <Output><ErrorInfo>\r\n\
        <Message>Assert.Equal() Failure&#xD;\nExpected: &lt;0&gt;&#xD;\nActual:   1</Message>\r\n\
        <StackTrace>   at Calc.Divide(Int32 a) in C:\\src\\Calc.cs:line 9&#xD;\n   at Calc.Tests.Divide_ByZero() in C:\\src\\Tests.cs:line 33</StackTrace>\r\n\
      </ErrorInfo></Output>\r\n\
    </UnitTestResult>\r\n\
    <UnitTestResult testName=\"Calc.Tests.Adds\" outcome=\"Passed\" />\r\n\
    <UnitTestResult testName=\"Calc.Tests.Later\" outcome=\"NotExecuted\">\r\n\
      <Output><ErrorInfo><Message>not yet</Message></ErrorInfo></Output>\r\n\
    </UnitTestResult>\r\n\
    <UnitTestResult testName=\"[Test Class Cleanup Failure (Calc.Tests)]\" outcome=\"Failed\" />\r\n\
  </Results>\r\n\
  <ResultSummary outcome=\"Failed\">\r\n\
    <Counters total=\"4\" executed=\"3\" passed=\"1\" failed=\"2\" notExecuted=\"0\" />\r\n\
    <RunInfos><RunInfo computerName=\"ci\" outcome=\"Error\"><Text>[xUnit.net 00:00:00.39]     Calc.Tests.Divide_ByZero [FAIL]</Text></RunInfo>\r\n\
    <RunInfo computerName=\"ci\" outcome=\"Error\"><Text>The active test run was aborted. Reason: Test host process crashed</Text></RunInfo></RunInfos>\r\n\
  </ResultSummary>\r\n\
</TestRun>\r\n";

    #[test]
    fn trx_with_bom_crlf_and_escaped_carriage_returns() {
        let report = parse(TRX).unwrap();
        assert_eq!(report.counts, Counts { passed: 1, failed: 2, skipped: 1, total: 4 });
        let first = &report.failures[0];
        assert_eq!(first.name, "Calc.Tests.Divide_ByZero");
        assert_eq!(first.message.as_deref(), Some("Assert.Equal() Failure"));
        assert_eq!(first.notes, ["Expected: <0>", "Actual:   1"]);
        assert_eq!(first.frame, Some((r"C:\src\Calc.cs".to_string(), 9)));
        let second = &report.failures[1];
        assert_eq!(
            (second.name.as_str(), second.message.as_deref()),
            ("[Test Class Cleanup Failure (Calc.Tests)]", None)
        );
        assert_eq!(report.run_errors, ["The active test run was aborted. Reason: Test host process crashed"]);
    }

    #[test]
    fn every_result_is_named_with_its_duration() {
        let timed = TRX.replace(
            "testName=\"Calc.Tests.Adds\" outcome=\"Passed\"",
            "testName=\"Calc.Tests.Adds\" duration=\"00:01:02.0210000\" outcome=\"Passed\"",
        );
        let named: Vec<_> =
            parse(&timed).unwrap().tests.into_iter().map(|t| (t.name, t.outcome, t.duration_us)).collect();
        assert_eq!(
            named,
            [
                ("Calc.Tests.Divide_ByZero".to_string(), TestOutcome::Failed, None),
                ("Calc.Tests.Adds".into(), TestOutcome::Passed, Some(62_021_000)),
                ("Calc.Tests.Later".into(), TestOutcome::Skipped, None),
                ("[Test Class Cleanup Failure (Calc.Tests)]".into(), TestOutcome::Failed, None),
            ]
        );
        assert_eq!(trx_duration("00:00:00.0030000"), Some(3_000));
        assert_eq!(trx_duration("3s"), None);
    }

    #[test]
    fn nunit2_test_results() {
        let xml = r#"<?xml version="1.0" encoding="utf-8" standalone="no"?>
<test-results name="B.Tests.dll" total="4" errors="1" failures="1" not-run="1">
  <test-suite type="TestFixture" name="T"><results>
    <test-case name="B.Tests.T.Adds(2,2,5)" executed="True" result="Failure" success="False">
      <failure>
        <message><![CDATA[  Expected: 5
  But was:  4
]]></message>
        <stack-trace><![CDATA[at B.Tests.T.Adds (System.Int32 a) [0x0000f] in /src/T.cs:41
]]></stack-trace>
      </failure>
    </test-case>
    <test-case name="B.Tests.T.Ok" executed="True" result="Success" success="True" />
    <test-case name="B.Tests.T.Later" executed="False" result="Ignored">
      <reason><message><![CDATA[not implemented]]></message></reason>
    </test-case>
    <test-case name="B.Tests.T.Divides" executed="True" result="Error" success="False">
      <failure><message><![CDATA[System.DivideByZeroException : Attempted to divide by zero.]]></message></failure>
    </test-case>
  </results></test-suite>
</test-results>"#;
        let report = parse(xml).unwrap();
        assert_eq!(report.counts, Counts { passed: 1, failed: 2, skipped: 1, total: 4 });
        assert_eq!(report.failures[0].message.as_deref(), Some("Expected: 5"));
        assert_eq!(report.failures[0].frame, Some(("/src/T.cs".to_string(), 41)));
        assert_eq!(report.failures[1].name, "B.Tests.T.Divides");
    }

    #[test]
    fn nunit3_test_run() {
        let xml = r#"<test-run id="2" total="2" passed="1" failed="1">
  <test-case id="1" name="M(1)" fullname="N.T.M(1)" result="Failed" label="Error">
    <failure><message><![CDATA[System.Exception : boom]]></message>
      <stack-trace><![CDATA[   at N.T.M(Int32 x) in /src/T.cs:line 7]]></stack-trace></failure>
  </test-case>
  <test-case id="2" name="Ok" fullname="N.T.Ok" result="Passed" />
</test-run>"#;
        let report = parse(xml).unwrap();
        assert_eq!(report.counts, Counts { passed: 1, failed: 1, skipped: 0, total: 2 });
        assert_eq!(report.failures[0].name, "N.T.M(1)");
        assert_eq!(report.failures[0].frame, Some(("/src/T.cs".to_string(), 7)));
    }

    #[test]
    fn truncated_or_foreign_files() {
        assert_eq!(parse("{\"not\": \"xml\"}"), None);
        let cut = &TRX[..TRX.find("<UnitTestResult testName=\"Calc.Tests.Adds\"").unwrap() + 20];
        let report = parse(cut).unwrap();
        assert_eq!(report.counts.failed, 1);
    }
}
