//! Go's output: `go build` and `go vet` errors (`cmd/app/main.go:9:14: msg` under a `# pkg`
//! header, vet's own with a `vet: ` prefix), and `go test`'s results.
//!
//! A failed test is one error at its first `file_test.go:12: message` line. Go prints those
//! paths relative to the package's directory, so the package (from the `ok`/`FAIL pkg` line that
//! closes its output) and the module path (from `go.mod`, or learnt from a `# pkg` header and
//! the file under it) give the path from the cwd. A parent test that failed only because a
//! subtest did is not reported again. A panic in a test is an error at its top frame in the
//! module. With `-v`, the `--- PASS/FAIL/SKIP` lines of leaf tests (subtests, and tests without
//! subtests) are the test summary and the tests named, with their times; without it go prints no
//! passes, so there is no summary rather than a wrong one, and only the failed tests are named. The `ok`/`FAIL pkg` lines only close packages: a package that failed to
//! build (`[build failed]`) is explained by its compile errors.
//!
//! A panic with no test running that the output names (`-timeout`'s `panic: test timed out`,
//! whose goroutine dump has no `--- FAIL` before it) names its test by the stack: the function
//! `testing.tRunner` called in the goroutine of the frame chosen.
//!
//! Errors of loading packages, before anything compiles, name no file: `package a` with
//! tab-indented `imports b` lines, the last ending in `: import cycle not allowed`, and
//! `pattern ./...: directory prefix . does not contain main module …`.

use super::{Found, at, extend, int};
use buildvise_plugin_api::{
    Diagnostic, Head, Recogniser, Severity, TestOutcome, TestSummary, Text, Wants, relative_to, seconds_to_us,
};
use memchr::memmem::Finder;
use regex::Regex;
use std::collections::HashMap;
use std::sync::LazyLock;

/// What names a Go file and a line in it: `main.go:9`.
static GO_FILE: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(".go:"));

static COMPILE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:vet: )?(?P<file>[^\s:][^:]*\.go):(?P<line>\d+)(?::(?P<col>\d+))?: (?P<msg>\s*\S.*)$")
        .expect("valid regex")
});

/// A test's result: `--- PASS: TestX (0.00s)`, a subtest's indented by four per level.
static RESULT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*--- (?P<result>FAIL|PASS|SKIP): (?P<name>\S+) \((?P<took>\d[\d.]*)").expect("valid regex")
});

/// A test's message: `    calc_test.go:7: Add(2, 2) = 4, want 5`. A message that starts with a
/// newline (`t.Fatalf("\nwant:…")`) leaves the line with nothing after the colon.
static MESSAGE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s+(?P<file>[\w.\-]+\.go):(?P<line>\d+):(?: (?P<msg>.*))?$").expect("valid regex"));

/// A package's last line: `ok  pkg 0.01s`, `FAIL pkg 0.01s`, `FAIL pkg [build failed]` (tab-separated).
static PACKAGE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?:ok|FAIL|\?)\s+(?P<pkg>\S+)(?:\s+(?P<rest>.*))?$").expect("valid regex"));

#[derive(Default)]
pub(crate) struct Go {
    /// The module path, learnt from the output; the cwd's `go.mod`, read when the output ends,
    /// has the last word.
    module: Option<String>,
    /// The package of the last `# pkg` header, to learn the module path from its first file.
    header: Option<String>,
    /// The test whose output follows (`=== RUN`, or a `--- FAIL` that prints its messages after).
    owner: Option<String>,
    /// Results of the package being printed, not closed by its `ok`/`FAIL` line yet.
    open: Vec<Outcome>,
    /// Every result, with its package once known.
    done: Vec<(Option<String>, Outcome)>,
    /// Per test name: its first message, `(file, line, message, log line)`.
    messages: HashMap<String, (String, u32, String, u64)>,
    /// A panic being read: its message, log line, the test, and its chosen frame.
    panic: Option<Panic>,
    /// Tests whose failure is a panic already reported.
    explained: Vec<String>,
    /// Saw `=== RUN` or `--- PASS`: the run was verbose, so the results are complete.
    verbose: bool,
    /// A load error being read: `package a` and the `\timports b` lines after it.
    load: Option<LoadError>,
    /// The test whose first message was empty on its `file_test.go:12:` line: its next line
    /// says it (and the one after, when the first is a label such as `want:`).
    awaiting: Option<String>,
}

struct LoadError {
    text: String,
    start: u64,
    end: u64,
}

struct Outcome {
    name: String,
    verdict: Verdict,
    number: u64,
    /// `(0.01s)`, to the hundredth as go prints it.
    duration_us: Option<u64>,
}

#[derive(PartialEq, Eq, Clone, Copy)]
enum Verdict {
    Fail,
    Pass,
    Skip,
}

struct Panic {
    message: String,
    test: Option<String>,
    start: u64,
    end: u64,
    /// The function of the frame whose location comes next.
    function: Option<String>,
    frame: Option<(String, u32)>,
    /// Reading the goroutine of the chosen frame, to find the test it runs in.
    in_chosen: bool,
    /// The function that called the last frame read in that goroutine.
    caller: Option<String>,
    /// The test `testing.tRunner` runs in the chosen frame's goroutine.
    test_of_frame: Option<String>,
}

impl Recogniser<Found> for Go {
    fn wants(&self) -> Wants {
        Wants::starts(&[
            "# ",
            "=== ",
            "panic: ",
            "FAIL",
            "PASS",
            "exit status ",
            "ok ",
            "?",
            "go: ",
            "package ",
            "pattern ",
        ])
        .or_unindented(&["--- "])
        .or_test(names_a_go_file)
    }

    /// Reading a panic (its goroutines and frames are lines no prefix tells) or a load error.
    fn is_open(&self) -> bool {
        self.panic.is_some() || self.load.is_some() || self.awaiting.is_some()
    }

    fn feed(&mut self, line: &Text<'_>, found: &mut Found) -> bool {
        let (text, number) = (line.text, line.number);
        if self.panic.is_some() && self.panic_line(text, number, found) {
            return true;
        }
        if self.load.is_some() && self.load_line(text, number, found) {
            return true;
        }
        if let Some(test) = self.awaiting.take()
            && text.starts_with([' ', '\t'])
            && !text.trim().is_empty()
            && !text.trim_start().starts_with("--- ")
            && !text.contains(".go:")
        {
            if let Some(first) = self.messages.get_mut(&test) {
                let said = text.trim();
                // A label (`want:`) says little alone: the line under it goes with it.
                if first.2.is_empty() && said.ends_with(':') {
                    self.awaiting = Some(test);
                } else if !first.2.is_empty() {
                    first.2.push(' ');
                }
                first.2.push_str(said);
            }
            return true;
        }
        if text.starts_with("package ") {
            self.load = Some(LoadError { text: text.to_string(), start: number, end: number });
            return true;
        }
        if text.starts_with("pattern ") && text.contains(": ") {
            found.push(Diagnostic::error(text.trim()).with_log_range(number, number));
            return true;
        }
        if let Some(pkg) = text.strip_prefix("# ") {
            self.header = pkg.split_whitespace().next().map(str::to_string);
            return true;
        }
        if let Some(rest) = text.strip_prefix("=== ") {
            self.verbose = true;
            // `=== RUN   TestX`, `=== CONT  TestX`, `=== PAUSE TestX`, `=== NAME  TestX`.
            self.owner = rest.split_whitespace().nth(1).map(str::to_string);
            return true;
        }
        if text.trim_start().starts_with("--- ")
            && let Some(caps) = RESULT.captures(text)
        {
            let result = match &caps["result"] {
                "FAIL" => Verdict::Fail,
                "PASS" => Verdict::Pass,
                _ => Verdict::Skip,
            };
            self.verbose |= result == Verdict::Pass;
            let name = caps["name"].to_string();
            self.owner = Some(name.clone());
            let duration_us = seconds_to_us(&caps["took"]);
            self.open.push(Outcome { name, verdict: result, number, duration_us });
            return true;
        }
        if text.starts_with([' ', '\t']) && text.contains(".go:") {
            if let Some(caps) = MESSAGE.captures(text)
                && let Some(owner) = &self.owner
                && !self.messages.contains_key(owner)
            {
                let line = caps["line"].parse().unwrap_or(0);
                let message = caps.name("msg").map_or("", |m| m.as_str().trim());
                if message.is_empty() {
                    self.awaiting = Some(owner.clone());
                }
                self.messages.insert(owner.clone(), (caps["file"].to_string(), line, message.to_string(), number));
            }
            return true;
        }
        if let Some(message) = text.strip_prefix("panic: ") {
            let message = message.strip_suffix(" [recovered]").unwrap_or(message);
            self.panic = Some(Panic {
                message: format!("panic: {message}"),
                test: self.owner.clone(),
                start: number,
                end: number,
                function: None,
                frame: None,
                in_chosen: false,
                caller: None,
                test_of_frame: None,
            });
            return true;
        }
        if text == "FAIL" || text == "PASS" || text.starts_with("exit status ") {
            return true;
        }
        if (text.starts_with("ok ") || text.starts_with("FAIL\t") || text.starts_with("?"))
            && self.package(text, number, found)
        {
            return true;
        }
        if let Some(rest) = text.strip_prefix("go: ") {
            const PROGRESS: &[&str] = &["downloading ", "finding ", "extracting ", "added ", "upgraded ", "creating "];
            if !PROGRESS.iter().any(|p| rest.starts_with(p)) {
                found.push(Diagnostic::error(rest.trim()).with_log_range(number, number));
            }
            return true;
        }
        if text.contains(".go:")
            && let Some(caps) = COMPILE.captures(text)
        {
            if caps["msg"].trim() == "too many errors" {
                // The compiler stopped at the last error's place: that error, not another.
                if let Some(d) = found.last_mut() {
                    extend(d, number);
                }
                return true;
            }
            let file = &caps["file"];
            self.learn_module(file);
            let d = at(
                Severity::Error,
                &caps["msg"],
                found.path(file),
                int(caps.name("line")),
                int(caps.name("col")),
                number,
            );
            found.push(d);
            return true;
        }
        false
    }

    fn finish(&mut self, found: &mut Found) {
        self.module = module_in_go_mod(&found.cwd).or(self.module.take());
        if let Some(panic) = self.panic.take() {
            self.add_panic(panic, found);
        }
        if let Some(load) = self.load.take() {
            push_load_error(load, found);
        }
        let pending: Vec<Outcome> = self.open.drain(..).collect();
        self.done.extend(pending.into_iter().map(|o| (None, o)));
        let done = std::mem::take(&mut self.done);
        let is_parent = |name: &str| {
            done.iter().any(|(_, o)| {
                o.name.len() > name.len() && o.name.starts_with(name) && o.name[name.len()..].starts_with('/')
            })
        };
        let mut summary = TestSummary::default();
        for (package, outcome) in &done {
            if is_parent(&outcome.name) {
                continue;
            }
            summary.total += 1;
            let named = match outcome.verdict {
                Verdict::Pass => {
                    summary.passed += 1;
                    TestOutcome::Passed
                }
                Verdict::Skip => {
                    summary.skipped += 1;
                    TestOutcome::Skipped
                }
                Verdict::Fail => {
                    summary.failed += 1;
                    self.add_failure(package.as_deref(), outcome, found);
                    TestOutcome::Failed
                }
            };
            // Named as `-run` takes it and as the failed tests are, without the package: a
            // failed test carries one name in both, and the report's class is the tool. Leaves
            // alone, as the summary counts them: a parent's verdict is its subtests', and a
            // report listing it too would count one failure twice.
            found.tests.push(&outcome.name, named, outcome.duration_us);
        }
        if self.verbose && summary.total > 0 {
            found.summary = Some(summary);
        }
    }
}

impl Go {
    /// A line while a panic is read: its second message, goroutine headers and frames. False at
    /// the first line that is none of these.
    fn panic_line(&mut self, text: &str, number: u64, found: &mut Found) -> bool {
        let Some(panic) = self.panic.as_mut() else { return false };
        if text.is_empty()
            || text.starts_with("goroutine ")
            || text.starts_with("\tpanic: ")
            || text.starts_with("[signal ")
        {
            panic.end = number;
            panic.in_chosen &= !text.starts_with("goroutine ");
            return true;
        }
        if let Some(location) = text.strip_prefix('\t') {
            panic.end = number;
            let location = location.split(" +0x").next().unwrap_or(location);
            let function = panic.function.take().unwrap_or_default();
            panic.follow_chosen_goroutine(&function);
            if panic.frame.is_none()
                && let Some((file, line)) = location.rsplit_once(':')
                && let Ok(line) = line.parse()
            {
                let relative = relative_to(file, &found.cwd);
                let ours = !buildvise_plugin_api::is_absolute(&relative) || is_module_code(&function, file);
                if !is_internal_frame(&function, file) && ours {
                    self.learn_from_frame(&function, &relative);
                    let panic = self.panic.as_mut().expect("reading a panic");
                    panic.frame = Some((relative, line));
                    panic.in_chosen = true;
                    panic.caller = Some(function);
                }
            }
            return true;
        }
        if text.starts_with("created by ") || (!text.starts_with(' ') && text.ends_with(')')) {
            panic.end = number;
            panic.function = Some(text.to_string());
            return true;
        }
        let panic = self.panic.take().expect("reading a panic");
        self.add_panic(panic, found);
        false
    }

    /// A line while a load error is read: an `imports` line goes on with it. False at the first
    /// line that does not, once the error is added.
    fn load_line(&mut self, text: &str, number: u64, found: &mut Found) -> bool {
        let Some(load) = self.load.as_mut() else { return false };
        if let Some(imports) = text.strip_prefix('\t').filter(|rest| rest.starts_with("imports ")) {
            load.text.push(' ');
            load.text.push_str(imports.trim());
            load.end = number;
            return true;
        }
        let load = self.load.take().expect("reading a load error");
        push_load_error(load, found);
        false
    }

    fn add_panic(&mut self, mut panic: Panic, found: &mut Found) {
        if panic.test.is_none() {
            panic.test = panic.test_of_frame.take();
        }
        let mut d = match &panic.frame {
            Some((file, line)) => at(Severity::Error, &panic.message, file.clone(), Some(*line), None, panic.start),
            None => Diagnostic::error(panic.message.clone()).with_log_range(panic.start, panic.start),
        };
        extend(&mut d, panic.end);
        if let Some(test) = &panic.test {
            d = d.with_test(test.clone());
            // The test's failure is this panic: no second error for it.
            self.messages.remove(test);
            remember_failed(found, test);
            self.explained.push(test.clone());
        }
        found.push(d);
    }

    /// A package's closing line; true when `text` is one.
    fn package(&mut self, text: &str, number: u64, found: &mut Found) -> bool {
        let Some(caps) = PACKAGE.captures(text) else { return false };
        let pkg = caps["pkg"].to_string();
        let rest = caps.name("rest").map_or("", |m| m.as_str());
        if rest.starts_with("[build failed]") || rest.starts_with("[setup failed]") {
            let what = rest.trim_start_matches('[').trim_end_matches(']');
            found.consequences.push(Diagnostic::error(format!("{pkg}: {what}")).with_log_range(number, number));
        }
        let closed: Vec<Outcome> = self.open.drain(..).collect();
        self.done.extend(closed.into_iter().map(|o| (Some(pkg.clone()), o)));
        self.owner = None;
        true
    }

    fn add_failure(&self, package: Option<&str>, outcome: &Outcome, found: &mut Found) {
        remember_failed(found, &outcome.name);
        if self.explained.contains(&outcome.name) {
            return;
        }
        let d = match self.messages.get(&outcome.name) {
            Some((file, line, message, number)) => {
                let file = match self.package_dir(package) {
                    Some(dir) if !dir.is_empty() => format!("{dir}/{file}"),
                    _ => file.clone(),
                };
                let message = match message.is_empty() {
                    true => format!("{} failed", outcome.name),
                    false => message.clone(),
                };
                let mut d = at(Severity::Error, &message, file, Some(*line), None, *number);
                extend(&mut d, outcome.number.max(*number));
                d
            }
            None => {
                Diagnostic::error(format!("{} failed", outcome.name)).with_log_range(outcome.number, outcome.number)
            }
        };
        found.push(d.with_test(outcome.name.clone()));
    }

    /// The package's directory from the cwd, when the module path is known.
    fn package_dir(&self, package: Option<&str>) -> Option<String> {
        let (package, module) = (package?, self.module.as_deref()?);
        let rest = package.strip_prefix(module)?;
        Some(rest.trim_start_matches('/').to_string())
    }

    /// Learns the module path from the first file under a `# pkg` header: package
    /// `example.com/m/cmd/app` with file `cmd/app/main.go` is module `example.com/m`.
    fn learn_module(&mut self, file: &str) {
        let Some(header) = self.header.take() else { return };
        if self.module.is_some() {
            return;
        }
        let dir = file.rsplit_once('/').map_or("", |(dir, _)| dir).trim_start_matches("./");
        self.module = if dir.is_empty() {
            Some(header)
        } else {
            header.strip_suffix(dir).and_then(|m| m.strip_suffix('/')).map(str::to_string)
        };
    }

    /// Learns the module path from a frame: `example.com/m/panicky.At(...)` at `panicky/p.go`.
    fn learn_from_frame(&mut self, function: &str, file: &str) {
        if self.module.is_some() {
            return;
        }
        let Some((dir, _)) = file.rsplit_once('/') else { return };
        let path = function.split('(').next().unwrap_or(function);
        let Some(slash) = path.rfind('/') else { return };
        let package_end = path[slash..].find('.').map_or(path.len(), |i| slash + i);
        self.module = path[..package_end].strip_suffix(dir).and_then(|m| m.strip_suffix('/')).map(str::to_string);
    }
}

impl Panic {
    /// Reads a frame's function in the chosen frame's goroutine: the function that
    /// `testing.tRunner` calls is the test.
    fn follow_chosen_goroutine(&mut self, function: &str) {
        if !self.in_chosen || self.test_of_frame.is_some() {
            return;
        }
        if function.starts_with("testing.tRunner(") {
            self.test_of_frame = self.caller.as_deref().and_then(test_of_function);
        } else {
            self.caller = Some(function.to_string());
        }
    }
}

/// Whether a frame is Go's own code rather than the project's: the runtime, the testing package
/// and the `_testmain.go` that `go test` generates.
fn is_internal_frame(function: &str, file: &str) -> bool {
    ["runtime.", "testing.", "panic(", "main.main("].iter().any(|p| function.starts_with(p))
        || file.contains("/src/runtime/")
        || file.contains("/src/testing/")
        || file.ends_with("_testmain.go")
}

/// Whether a frame outside the cwd (a log read elsewhere than it ran) is still a module's code
/// rather than the standard library's or a dependency's: its package path starts with a domain
/// (`github.com/…`, where the standard library's have no dot) and the file is not in the module
/// cache.
fn is_module_code(function: &str, file: &str) -> bool {
    let first = function.split('/').next().unwrap_or_default();
    first.contains('.') && function.contains('/') && !file.contains("/pkg/mod/")
}

/// The test a frame's function is: `example.com/m/pkg.TestX(0xc000…)` is `TestX`, and a
/// subtest's closure `example.com/m/pkg.TestX.func1(…)` its parent `TestX`.
fn test_of_function(function: &str) -> Option<String> {
    let path = function.split('(').next().unwrap_or(function);
    let name = path.rsplit('/').next().unwrap_or(path);
    let is_test = |part: &&str| ["Test", "Example", "Benchmark", "Fuzz"].iter().any(|p| part.starts_with(p));
    name.split('.').skip(1).find(is_test).map(str::to_string)
}

/// A load error, once its `imports` lines are read; `package a` alone, with no reason, is no
/// error (a program's own output may start so).
fn push_load_error(load: LoadError, found: &mut Found) {
    if load.text.contains(": ") || load.text.contains(" is not in ") {
        found.push(Diagnostic::error(load.text).with_log_range(load.start, load.end));
    }
}

/// A compile error's `file.go:12:` or a test's message `    calc_test.go:7:`.
fn names_a_go_file(head: &Head<'_>) -> bool {
    GO_FILE.find(head.bytes).is_some()
}

/// The module path `go.mod` in `dir` declares.
fn module_in_go_mod(dir: &str) -> Option<String> {
    let text = std::fs::read_to_string(format!("{dir}/go.mod")).ok()?;
    text.lines().find_map(|l| l.strip_prefix("module ").map(|m| m.trim().trim_matches('"').to_string()))
}

fn remember_failed(found: &mut Found, name: &str) {
    if !found.failed_tests.iter().any(|t| t == name) {
        found.failed_tests.push(name.to_string());
    }
}

#[cfg(test)]
mod tests {
    use crate::parse::testing::{brief, parse};
    use buildvise_plugin_api::{TestCase, TestOutcome, TestSummary};

    /// go 1.19.8, `go test ./...` on a module (example.com/demo) with a package that does not
    /// compile, a failing test and subtest, a vet finding, and a panicking test.
    const TEST: &str = "\
# example.com/demo/cmd/app
cmd/app/main.go:5:2: imported and not used: \"os\"
cmd/app/main.go:10:14: undefined: y
--- FAIL: TestAdd (0.00s)
    calc_test.go:7: Add(2, 2) = 4, want 5
--- FAIL: TestTable (0.00s)
    --- FAIL: TestTable/case#01 (0.00s)
        calc_test.go:25: Add(2, 2) = 4, want 5
FAIL
FAIL	example.com/demo/calc	0.010s
# example.com/demo/vetpkg
vetpkg/v.go:6:2: fmt.Printf format %s has arg n of wrong type int
--- FAIL: TestAt (0.00s)
panic: runtime error: index out of range [5] with length 2 [recovered]
	panic: runtime error: index out of range [5] with length 2

goroutine 6 [running]:
testing.tRunner.func1.2({0x518a00, 0xc000018060})
	/usr/lib/go-1.19/src/testing/testing.go:1396 +0x24e
panic({0x518a00, 0xc000018060})
	/usr/lib/go-1.19/src/runtime/panic.go:884 +0x212
example.com/demo/panicky.At(...)
	/home/dev/src/demo/panicky/p.go:4
example.com/demo/panicky.TestAt(0x0?)
	/home/dev/src/demo/panicky/p_test.go:6 +0x1d
testing.tRunner(0xc000007860, 0x52f2e8)
	/usr/lib/go-1.19/src/testing/testing.go:1446 +0x10b
created by testing.(*T).Run
	/usr/lib/go-1.19/src/testing/testing.go:1493 +0x35f
FAIL	example.com/demo/panicky	0.008s
";

    #[test]
    fn reads_compile_errors_failed_tests_and_panics() {
        let result = parse(&["go"], TEST, 2);
        assert_eq!(
            brief(&result),
            [
                "error cmd/app/main.go:5:2 imported and not used: \"os\"",
                "error cmd/app/main.go:10:14 undefined: y",
                "error vetpkg/v.go:6:2 fmt.Printf format %s has arg n of wrong type int",
                "error panicky/p.go:4 panic: runtime error: index out of range [5] with length 2",
                "error calc/calc_test.go:7 Add(2, 2) = 4, want 5",
                "error calc/calc_test.go:25 Add(2, 2) = 4, want 5",
            ]
        );
        assert_eq!(result.failed_tests, ["TestAt", "TestAdd", "TestTable/case#01"]);
        assert_eq!(result.diagnostics[5].test.as_deref(), Some("TestTable/case#01"));
        assert_eq!(result.summary, None, "without -v go prints no passes");
    }

    #[test]
    fn counts_leaf_tests_with_v_and_reads_messages_printed_before_the_result() {
        // go 1.19.8, `go test -v ./...` on example.com/shapes, whose shapes package does not build.
        let log = "\
# example.com/shapes/shapes [example.com/shapes/shapes.test]
shapes/area.go:8:13: undefined: factor
=== RUN   TestPerimeter
    geom_test.go:7: Perimeter(2, 3) = 5, want 10
--- FAIL: TestPerimeter (0.00s)
=== RUN   TestPerimeterZero
--- PASS: TestPerimeterZero (0.00s)
FAIL
FAIL	example.com/shapes/geom	0.007s
FAIL	example.com/shapes/shapes [build failed]
FAIL
";
        let result = parse(&["go"], log, 2);
        assert_eq!(
            brief(&result),
            ["error shapes/area.go:8:13 undefined: factor", "error geom/geom_test.go:7 Perimeter(2, 3) = 5, want 10"]
        );
        assert_eq!(result.summary, Some(TestSummary::new(1, 1, 0, 2)));
    }

    #[test]
    fn vet_prefixes_type_errors() {
        // go 1.19.8, `go vet ./...`.
        let log = "\
# example.com/demo/cmd/app
vet: cmd/app/main.go:9:14: cannot use \"hello\" (untyped string constant) as int value in variable declaration
";
        assert_eq!(
            brief(&parse(&["go"], log, 2)),
            [
                "error cmd/app/main.go:9:14 cannot use \"hello\" (untyped string constant) as int value in variable declaration"
            ]
        );
    }

    #[test]
    fn too_many_errors_is_the_last_error_s_place_not_another() {
        // go 1.19.8, `go test ./...` on spf13/pflag after Parse became variadic.
        let log = "\
# github.com/spf13/pflag [github.com/spf13/pflag.test]
./bool_test.go:58:17: cannot use []string{…} (value of type []string) as type string in argument to f.Parse
./bool_test.go:69:17: cannot use []string{…} (value of type []string) as type string in argument to f.Parse
./bool_test.go:69:17: too many errors
FAIL	github.com/spf13/pflag [build failed]
FAIL
";
        let result = parse(&["go"], log, 2);
        assert_eq!(result.diagnostics.len(), 2, "{:?}", brief(&result));
        assert_eq!(result.diagnostics[1].log_range.map(|r| (r.start, r.end)), Some((3, 4)));
    }

    #[test]
    fn load_errors_name_no_file() {
        // go 1.19.8: an import cycle (`go build ./...`), and `./...` outside any module.
        let cycle = "\
package github.com/BurntSushi/toml
\timports github.com/BurntSushi/toml/internal
\timports github.com/BurntSushi/toml: import cycle not allowed
";
        let result = parse(&["go"], cycle, 1);
        assert_eq!(
            brief(&result),
            [
                "error - package github.com/BurntSushi/toml imports github.com/BurntSushi/toml/internal imports github.com/BurntSushi/toml: import cycle not allowed"
            ]
        );
        assert_eq!(result.diagnostics[0].log_range.map(|r| (r.start, r.end)), Some((1, 3)));
        let pattern = "pattern ./...: directory prefix . does not contain main module or its selected dependencies\n";
        assert_eq!(
            brief(&parse(&["go"], pattern, 1)),
            ["error - pattern ./...: directory prefix . does not contain main module or its selected dependencies"]
        );
        assert!(parse(&["go"], "package main\nok  \texample.com/demo\t0.01s\n", 0).diagnostics.is_empty());
    }

    #[test]
    fn a_timeout_names_the_test_its_stuck_goroutine_runs() {
        // go 1.19.8, `go test -timeout 2s ./...` on google/uuid with a test that deadlocks.
        let log = "\
panic: test timed out after 2s

goroutine 34 [running]:
testing.(*M).startAlarm.func1()
	/usr/lib/go-1.19/src/testing/testing.go:2036 +0x8e
created by time.goFunc
	/usr/lib/go-1.19/src/time/sleep.go:176 +0x32

goroutine 1 [chan receive]:
testing.(*M).Run(0xc0000b4280)
	/usr/lib/go-1.19/src/testing/testing.go:1726 +0x5d9
main.main()
	_testmain.go:169 +0x1aa

goroutine 33 [semacquire]:
sync.(*Mutex).lockSlow(0x74ff00)
	/usr/lib/go-1.19/src/sync/mutex.go:171 +0x165
github.com/google/uuid.SetNodeInterface({0x0?, 0x0?})
	/home/dev/src/demo/node.go:35 +0x91
github.com/google/uuid.NewUUID()
	/home/dev/src/demo/version1.go:38 +0xc5
github.com/google/uuid.TestClockSeq(0xc0000e5ba0)
	/home/dev/src/demo/uuid_test.go:238 +0x145
testing.tRunner(0xc0000e5ba0, 0x5e35a8)
	/usr/lib/go-1.19/src/testing/testing.go:1446 +0x10b
created by testing.(*T).Run
	/usr/lib/go-1.19/src/testing/testing.go:1493 +0x35f
FAIL	github.com/google/uuid	2.006s
FAIL
";
        let result = parse(&["go"], log, 1);
        assert_eq!(brief(&result), ["error node.go:35 panic: test timed out after 2s"]);
        assert_eq!(result.diagnostics[0].test.as_deref(), Some("TestClockSeq"));
        assert_eq!(result.failed_tests, ["TestClockSeq"]);
    }

    #[test]
    fn a_message_that_starts_with_a_newline_is_said_on_the_next_line() {
        // go 1.19.8, BurntSushi/toml: `t.Fatalf("\nwant:\n%s\nhave:\n%s", …)` in a subtest.
        let log = "\
--- FAIL: TestErrorPosition (0.00s)
    --- FAIL: TestErrorPosition/array/no-close-01.toml (0.00s)
        error_test.go:94: 
            want:
            toml: error: expected a comma (',') or array terminator (']'), but got end of file
    --- FAIL: TestErrorPosition/key/without-value-01.toml (0.00s)
        error_test.go:94: 
    --- FAIL: TestErrorPosition/key/without-value-02.toml (0.00s)
FAIL
FAIL	github.com/BurntSushi/toml	0.165s
";
        let result = parse(&["go"], log, 1);
        assert_eq!(
            brief(&result),
            [
                "error error_test.go:94 want: toml: error: expected a comma (',') or array terminator (']'), but got end of file",
                "error error_test.go:94 TestErrorPosition/key/without-value-01.toml failed",
                "error - TestErrorPosition/key/without-value-02.toml failed",
            ]
        );
    }

    #[test]
    fn with_v_every_leaf_test_is_named_with_its_time_and_parents_are_not() {
        // go 1.19.8, `go test -v ./...`: spf13/pflag's table subtests (one failing), then
        // golang/snappy with MaxEncodedLen made smaller and its C++ comparisons skipped.
        let log = "\
=== RUN   TestInvalidArgumentMessages
=== RUN   TestInvalidArgumentMessages/bool
=== RUN   TestInvalidArgumentMessages/int
    flag_test.go:800: expected \"invalid argument \\\"x\\\" for \\\"--int\\\" flag: must be an integer\", got \"invalid argument \\\"x\\\" for \\\"--int\\\" flag: must be a whole number\"
--- FAIL: TestInvalidArgumentMessages (0.00s)
    --- PASS: TestInvalidArgumentMessages/bool (0.00s)
    --- FAIL: TestInvalidArgumentMessages/int (0.00s)
FAIL
FAIL	github.com/spf13/pflag	0.016s
=== RUN   TestMaxEncodedLenOfMaxBlockSize
    snappy_test.go:59: got 76490, want 74930
--- FAIL: TestMaxEncodedLenOfMaxBlockSize (0.00s)
=== RUN   TestSmallRand
--- PASS: TestSmallRand (0.09s)
=== RUN   TestSameEncodingAsCppShortCopies
    snappy_test.go:614: could not find snappytool: stat cmd/snappytool/snappytool: no such file or directory
--- SKIP: TestSameEncodingAsCppShortCopies (0.00s)
FAIL
FAIL	github.com/golang/snappy	0.283s
?   	github.com/golang/snappy/cmd/snappytool	[no test files]
FAIL
";
        let result = parse(&["go"], log, 1);
        assert_eq!(
            result.tests,
            [
                TestCase::new("TestInvalidArgumentMessages/bool", TestOutcome::Passed, Some(0)),
                TestCase::new("TestInvalidArgumentMessages/int", TestOutcome::Failed, Some(0)),
                TestCase::new("TestMaxEncodedLenOfMaxBlockSize", TestOutcome::Failed, Some(0)),
                TestCase::new("TestSmallRand", TestOutcome::Passed, Some(90_000)),
                TestCase::new("TestSameEncodingAsCppShortCopies", TestOutcome::Skipped, Some(0)),
            ]
        );
        assert_eq!(result.summary, Some(TestSummary::new(2, 2, 1, 5)));
        let failed: Vec<&str> =
            result.tests.iter().filter(|t| t.outcome == TestOutcome::Failed).map(|t| t.name.as_str()).collect();
        assert_eq!(failed, result.failed_tests, "a failed test is named alike in both");
    }

    #[test]
    fn without_v_only_the_failed_tests_are_named() {
        let result = parse(&["go"], TEST, 2);
        let named: Vec<(&str, TestOutcome)> = result.tests.iter().map(|t| (t.name.as_str(), t.outcome)).collect();
        let failed = TestOutcome::Failed;
        assert_eq!(named, [("TestAdd", failed), ("TestTable/case#01", failed), ("TestAt", failed)]);
    }
}
