//! pytest's JUnit XML report (`--junitxml`): the failed and errored test cases with their
//! traceback text, the suite counts, and every test with its outcome and time. It completes the
//! terminal output where that lacks something (`--tb=no`, `-qq`, a cut-off log); the terminal
//! output stays the primary source.

use super::traceback::{Reading, Traceback};
use buildvise_plugin_api::{TestCases, TestOutcome, TestSummary, seconds_to_us};
use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaseOutcome {
    Failure,
    Error,
}

#[derive(Debug)]
pub struct Case {
    pub classname: String,
    pub name: String,
    pub outcome: CaseOutcome,
    pub reading: Reading,
}

impl Case {
    /// The key shared with node ids (see [`node_key`]).
    pub fn key(&self) -> String {
        Case::key_of(&self.classname, &self.name)
    }

    fn key_of(classname: &str, name: &str) -> String {
        if classname.is_empty() { name.to_string() } else { format!("{classname}.{name}") }
    }

    /// A node id rebuilt from the dotted class name, for a case the terminal output never named.
    pub fn guessed_id(&self) -> String {
        guessed_id(&self.classname, &self.name)
    }
}

/// A node id rebuilt from a case's dotted class name and name: leading lower-case parts are the
/// module path, capitalised ones the test classes.
pub fn guessed_id(classname: &str, name: &str) -> String {
    if classname.is_empty() {
        return format!("{}.py", name.replace('.', "/"));
    }
    let parts = classname.split('.').collect::<Vec<_>>();
    let module_len =
        parts.iter().skip(1).position(|p| p.starts_with(char::is_uppercase)).map_or(parts.len(), |i| i + 1);
    let mut id = format!("{}.py", parts[..module_len].join("/"));
    for class in &parts[module_len..] {
        id.push_str("::");
        id.push_str(class);
    }
    id.push_str("::");
    id.push_str(name);
    id
}

/// A test the report names, whatever its outcome.
#[derive(Debug, PartialEq, Eq)]
pub struct Named {
    /// As [`Case::key`].
    pub key: String,
    pub classname: String,
    pub name: String,
    pub outcome: TestOutcome,
    pub duration_us: Option<u64>,
}

/// The key of a node id comparable with a JUnit case's: `tests/t.py::TestA::test_x[1.5]` →
/// `tests.t.TestA.test_x[1.5]` (the parametrize id is left alone).
pub fn node_key(id: &str) -> String {
    let (path, rest) = id.split_once("::").unwrap_or((id, ""));
    let path = path.strip_suffix(".py").unwrap_or(path).replace(['/', '\\'], ".");
    if rest.is_empty() {
        return path;
    }
    let (names, params) = rest.find('[').map_or((rest, ""), |at| rest.split_at(at));
    format!("{path}.{}{params}", names.replace("::", "."))
}

#[derive(Debug, Default)]
pub struct Report {
    pub cases: Vec<Case>,
    pub summary: Option<TestSummary>,
    /// Every test case, in the report's order; the passed ones capped as [`TestCases`] caps them.
    pub tests: Vec<Named>,
}

struct Open {
    classname: String,
    name: String,
    duration_us: Option<u64>,
    skipped: bool,
    outcome: Option<CaseOutcome>,
    message: Option<String>,
    body: String,
    in_body: bool,
}

/// Reads a report. Malformed XML ends the reading; what was read until then is kept.
pub fn read(xml: &str) -> Report {
    let mut reader = Reader::from_str(xml);
    let mut report = Report::default();
    let mut totals: Option<[u64; 4]> = None;
    let mut open: Option<Open> = None;
    loop {
        let event = match reader.read_event() {
            Ok(Event::Eof) | Err(_) => break,
            Ok(event) => event,
        };
        match event {
            Event::Start(e) | Event::Empty(e) if e.local_name().as_ref() == "testsuite" => {
                let sums = totals.get_or_insert([0; 4]);
                for (i, key) in ["tests", "failures", "errors", "skipped"].iter().enumerate() {
                    let n = attr(&e, key).and_then(|v| v.trim().parse::<u64>().ok()).unwrap_or(0);
                    sums[i] = sums[i].saturating_add(n);
                }
            }
            Event::Start(e) if e.local_name().as_ref() == "testcase" => open = Some(open_case(&e)),
            Event::Empty(e) if e.local_name().as_ref() == "testcase" => {
                name_case(&mut report, &open_case(&e));
            }
            Event::Start(e) => mark_outcome(open.as_mut(), &e, true),
            Event::Empty(e) => mark_outcome(open.as_mut(), &e, false),
            Event::Text(t) => {
                if let Some(case) = open.as_mut().filter(|c| c.in_body) {
                    case.body.push_str(&t.xml10_content());
                }
            }
            Event::CData(t) => {
                if let Some(case) = open.as_mut().filter(|c| c.in_body) {
                    case.body.push_str(&t.xml10_content());
                }
            }
            Event::GeneralRef(r) => {
                if let Some(case) = open.as_mut().filter(|c| c.in_body) {
                    let resolved = match r.resolve_char_ref() {
                        Ok(Some(c)) => Some(c.to_string()),
                        _ => quick_xml::escape::resolve_predefined_entity(&r).map(str::to_string),
                    };
                    case.body.push_str(resolved.as_deref().unwrap_or(""));
                }
            }
            Event::End(e) => match e.local_name().as_ref() {
                "failure" | "error" => {
                    if let Some(case) = open.as_mut() {
                        case.in_body = false;
                    }
                }
                "testcase" => {
                    if let Some(case) = open.take() {
                        name_case(&mut report, &case);
                        push_case(&mut report, case);
                    }
                }
                _ => {}
            },
            _ => {}
        }
    }
    report.summary = totals.map(|[tests, failures, errors, skipped]| {
        let passed = tests.saturating_sub(failures.saturating_add(errors).saturating_add(skipped));
        let mut summary = TestSummary::new(passed, failures, skipped, tests);
        summary.errors = Some(errors);
        summary
    });
    report
}

/// Records a `<failure>`/`<error>` inside the open case; its text follows unless it is empty.
/// A `<skipped>` (a skip, or an xfail) marks it skipped.
fn mark_outcome(mut case: Option<&mut Open>, e: &BytesStart<'_>, has_body: bool) {
    if let Some(case) = case.as_deref_mut()
        && e.local_name().as_ref() == "skipped"
    {
        case.skipped = true;
    }
    if let Some(case) = case
        && case.outcome.is_none()
        && let Some(outcome) = outcome_of(e.local_name().as_ref())
    {
        case.outcome = Some(outcome);
        case.message = attr(e, "message");
        case.in_body = has_body;
    }
}

fn open_case(e: &BytesStart<'_>) -> Open {
    Open {
        classname: attr(e, "classname").unwrap_or_default(),
        name: attr(e, "name").unwrap_or_default(),
        duration_us: attr(e, "time").as_deref().and_then(|t| seconds_to_us(t.trim())),
        skipped: false,
        outcome: None,
        message: None,
        body: String::new(),
        in_body: false,
    }
}

fn outcome_of(element: &str) -> Option<CaseOutcome> {
    match element {
        "failure" => Some(CaseOutcome::Failure),
        "error" => Some(CaseOutcome::Error),
        _ => None,
    }
}

/// Adds a case to the report's tests. pytest writes its own failures and errors (setup and
/// teardown errors included) as failed; an xfail is a `<skipped>`.
fn name_case(report: &mut Report, case: &Open) {
    let outcome = match case.outcome {
        Some(_) => TestOutcome::Failed,
        None if case.skipped => TestOutcome::Skipped,
        None => TestOutcome::Passed,
    };
    // The cap the plugin-api's collector keeps, kept here on cases that carry more than a name.
    if report.tests.len() >= TestCases::MAX && outcome != TestOutcome::Failed {
        return;
    }
    report.tests.push(Named {
        key: Case::key_of(&case.classname, &case.name),
        classname: case.classname.clone(),
        name: case.name.clone(),
        outcome,
        duration_us: case.duration_us,
    });
}

fn push_case(report: &mut Report, case: Open) {
    let Some(outcome) = case.outcome else { return };
    let mut tb = Traceback::default();
    case.body.lines().for_each(|l| tb.feed(l.trim_end_matches('\r')));
    let mut reading = tb.finish();
    if reading.message.is_none() {
        reading.message = case.message.and_then(|m| m.lines().next().map(str::to_string));
    }
    report.cases.push(Case { classname: case.classname, name: case.name, outcome, reading });
}

fn attr(e: &BytesStart<'_>, key: &str) -> Option<String> {
    e.attributes()
        .flatten()
        .find(|a| a.key.local_name().as_ref() == key)
        .and_then(|a| a.normalized_value(quick_xml::XmlVersion::Implicit1_0).ok().map(|v| v.into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = r#"<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest" errors="1" failures="1" skipped="1" tests="5" time="0.1"><testcase classname="tests.test_units" name="test_ok" time="0.001" /><testcase classname="tests.test_units.TestMeters" name="test_cm[1.5]" time="0.001"><failure message="assert 150 == 151">def test_cm():
&gt;       assert to_cm(1.5) == 151
E       assert 150 == 151

tests/test_units.py:9: AssertionError</failure></testcase><testcase classname="tests.test_units" name="test_db" time="0"><error message="failed on setup with &quot;OSError: no db&quot;">@pytest.fixture
    def db():
&gt;       raise OSError("no db")
E       OSError: no db

tests/conftest.py:4: OSError</error><system-out>tests/fake.py:1: ValueError</system-out></testcase><testcase classname="tests.test_units" name="test_skip" time="0"><skipped type="pytest.skip" message="later">/p/tests/test_units.py:20: later</skipped></testcase><testcase classname="" name="tests.test_broken" time="0"><error message="collection failure" /></testcase></testsuite></testsuites>"#;

    #[test]
    fn reads_failures_errors_and_counts() {
        let report = read(REPORT);
        assert_eq!(report.cases.len(), 3);
        let fail = &report.cases[0];
        assert_eq!(
            (fail.outcome, fail.key()),
            (CaseOutcome::Failure, "tests.test_units.TestMeters.test_cm[1.5]".to_string())
        );
        assert_eq!(fail.guessed_id(), "tests/test_units.py::TestMeters::test_cm[1.5]");
        assert_eq!(fail.reading.code.as_deref(), Some("AssertionError"));
        assert_eq!(fail.reading.location.as_ref().map(|l| (l.file.as_str(), l.line)), Some(("tests/test_units.py", 9)));
        let error = &report.cases[1];
        assert_eq!(error.reading.location.as_ref().map(|l| l.file.as_str()), Some("tests/conftest.py"));
        let broken = &report.cases[2];
        assert_eq!(
            (broken.guessed_id(), broken.reading.message.as_deref()),
            ("tests/test_broken.py".into(), Some("collection failure"))
        );
        let s = report.summary.expect("counts");
        assert_eq!((s.passed, s.failed, s.skipped, s.errors, s.total), (2, 1, 1, Some(1), 5));
    }

    #[test]
    fn names_every_case_with_its_outcome_and_time() {
        let named: Vec<(String, TestOutcome, Option<u64>)> =
            read(REPORT).tests.into_iter().map(|t| (t.key, t.outcome, t.duration_us)).collect();
        assert_eq!(
            named,
            [
                ("tests.test_units.test_ok".to_string(), TestOutcome::Passed, Some(1_000)),
                ("tests.test_units.TestMeters.test_cm[1.5]".into(), TestOutcome::Failed, Some(1_000)),
                ("tests.test_units.test_db".into(), TestOutcome::Failed, Some(0)),
                ("tests.test_units.test_skip".into(), TestOutcome::Skipped, Some(0)),
                ("tests.test_broken".into(), TestOutcome::Failed, Some(0)),
            ]
        );
    }

    #[test]
    fn node_keys_match_case_keys() {
        assert_eq!(
            node_key("tests/test_units.py::TestMeters::test_cm[1.5]"),
            "tests.test_units.TestMeters.test_cm[1.5]"
        );
        assert_eq!(node_key("tests/test_broken.py"), "tests.test_broken");
    }

    #[test]
    fn suite_counts_past_u64_saturate() {
        let suite =
            r#"<testsuite tests="18446744073709551615" failures="18446744073709551615" errors="1" skipped="0"/>"#;
        let s = read(&format!("<testsuites>{suite}{suite}</testsuites>")).summary.expect("counts");
        assert_eq!((s.passed, s.failed, s.total), (0, u64::MAX, u64::MAX));
    }

    #[test]
    fn broken_xml_keeps_what_was_read() {
        let cut = &REPORT[..REPORT.find("<testcase classname=\"tests.test_units\" name=\"test_skip\"").unwrap_or(0)];
        assert_eq!(read(cut).cases.len(), 2);
        assert!(read("<<<not xml").cases.is_empty());
    }
}
