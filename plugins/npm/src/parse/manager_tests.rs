//! pnpm's, yarn's and bun's own output, captured from pnpm 9.15, yarn 1.22 and 4.18 and bun 1.4
//! on small projects broken on purpose (`plugins/npm/fixtures/managers/`, stdout then stderr;
//! the folder they ran in written `/home/dev/src`).

use super::tests::{errors, named, parse, warnings};
use buildvise_plugin_api::{ParseResult, TestOutcome};

fn captured(name: &str, exit_code: i32) -> ParseResult {
    let path = format!("{}/fixtures/managers/{name}.log", env!("CARGO_MANIFEST_DIR"));
    parse(&std::fs::read_to_string(&path).expect("captured log"), exit_code)
}

fn messages(result: &ParseResult) -> Vec<(String, Option<String>)> {
    errors(result).iter().map(|d| (d.message.clone(), d.code.clone())).collect()
}

#[test]
fn pnpm_errors_carry_their_code_and_notes_and_its_wrapper_is_not_one() {
    let result = captured("pnpm-outdated", 1);
    let [error] = &errors(&result)[..] else { panic!("{result:?}") };
    assert_eq!(error.code.as_deref(), Some("ERR_PNPM_OUTDATED_LOCKFILE"));
    assert!(error.message.starts_with("Cannot install with \"frozen-lockfile\""), "{error:?}");
    assert!(error.notes.iter().any(|n| n.starts_with("specifiers in the lockfile")), "{error:?}");

    let result = captured("pnpm-recursive", 2);
    assert_eq!(messages(&result)[0].1.as_deref(), Some("ERR_PNPM_RECURSIVE_RUN_FIRST_FAIL"));
    assert!(errors(&result)[0].notes.contains(&"Exit status 2".to_string()), "{result:?}");

    let result = captured("pnpm-missing", 1);
    assert_eq!(messages(&result), [("Missing script: nope".into(), Some("ERR_PNPM_NO_SCRIPT".into()))]);

    let result = captured("pnpm-fail", 3);
    assert!(errors(&result).is_empty(), "ELIFECYCLE only wraps the script: {result:?}");
    assert!(warnings(&result)[0].message.contains("node_modules missing"), "{result:?}");
}

#[test]
fn pnpm_test_failure_keeps_the_runners_report() {
    let result = captured("pnpm-test", 1);
    let summary = result.summary.clone().expect("node --test's counts");
    assert_eq!((summary.passed, summary.failed), (1, 1));
    assert_eq!(result.failed_tests, ["adds"]);
}

#[test]
fn yarn_classic_errors_but_not_its_wrapper_or_bookkeeping() {
    let result = captured("yarn1-outdated", 1);
    assert_eq!(
        messages(&result),
        [("Your lockfile needs to be updated, but yarn was run with `--frozen-lockfile`.".into(), None)]
    );
    let result = captured("yarn1-missing", 1);
    assert_eq!(messages(&result), [("Command \"nope\" not found.".into(), None)]);
    let result = captured("yarn1-fail", 3);
    assert!(errors(&result).is_empty(), "{result:?}");
}

#[test]
fn yarn_berry_reports_the_code_that_failed_its_step() {
    let result = captured("yarn4-outdated", 1);
    assert_eq!(
        messages(&result),
        [(
            "The lockfile would have been modified by this install, which is explicitly forbidden.".into(),
            Some("YN0028".into())
        )]
    );
    let [note] = &warnings(&result)[..] else { panic!("{result:?}") };
    assert_eq!(note.code.as_deref(), Some("YN0085"));
    let result = captured("yarn4-missing", 1);
    assert_eq!(messages(&result), [("Couldn't find a script named \"nope\".".into(), None)]);
}

#[test]
fn bun_errors_with_notes_and_its_test_report() {
    let result = captured("bun-outdated", 1);
    let [error] = &errors(&result)[..] else { panic!("{result:?}") };
    assert_eq!(error.message, "lockfile had changes, but lockfile is frozen");
    assert_eq!(error.notes.len(), 2, "{error:?}");
    let result = captured("bun-missing", 1);
    assert_eq!(messages(&result), [("Script not found \"nope\"".into(), None)]);
    assert!(errors(&captured("bun-fail", 3)).is_empty(), "the wrapper of a failing script");
    let result = captured("bun-badjson", 1);
    let error = errors(&result)[0];
    assert_eq!((error.message.as_str(), error.line), ("Unexpected end of file", Some(1)));
    assert_eq!(error.file.as_deref(), Some("/home/dev/src/bb/package.json"));

    let result = captured("bun-test", 1);
    let summary = result.summary.clone().expect("bun test's counts");
    assert_eq!((summary.passed, summary.failed, summary.total), (2, 2, 4));
    assert_eq!(result.failed_tests, ["adds up", "adds"]);
    assert_eq!(
        named(&result),
        [
            ("adds up", TestOutcome::Failed, Some(270)),
            ("fine", TestOutcome::Passed, Some(20)),
            ("adds", TestOutcome::Failed, Some(21_330)),
            ("ok", TestOutcome::Passed, Some(140)),
        ]
    );
    let error = errors(&result)[0];
    assert_eq!(error.message, "expect(received).toBe(expected)");
    assert_eq!((error.file.as_deref(), error.line), (Some("/home/dev/src/b1/test/b.test.js"), Some(2)));
    assert_eq!(error.notes, ["Expected: 3", "Received: 2"]);
}
