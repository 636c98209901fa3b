//! `RUST_BACKTRACE=1` backtraces under a panic: which project line called the function that
//! panicked. A panic inside a test helper points at the helper's `assert!`, the same line for
//! every caller; the caller's line is what tells the failing case apart.
//!
//! ```text
//! stack backtrace:
//!    4: api::check_balance
//!              at ./tests/api.rs:5:5
//!    5: api::long_ledgers_balance
//!              at ./tests/api.rs:17:9
//! note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.
//! ```

use buildvise_plugin_api::{is_absolute, relative_to, split_location};
use regex::Regex;
use std::sync::LazyLock;

/// `   4: api::check_balance`, or with `RUST_BACKTRACE=full` `   4:     0x55d1c0 - api::check_balance`.
static FRAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*\d+:\s+(?:0x[0-9a-f]+ - )?(\S.*)$").expect("valid regex"));

/// The header std prints before the frames.
pub(crate) const HEADER: &str = "stack backtrace:";

/// What a line meant to the backtrace.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// A frame or its location: the backtrace goes on.
    Frame,
    /// std's closing note: the backtrace ended with this line.
    End,
    /// Not a backtrace line: the backtrace ended before it.
    Other,
}

/// A backtrace being read for the caller of the panicking function.
pub(crate) struct Backtrace {
    /// The panic's location as printed (`tests/api.rs:5:5`, from the workspace root).
    panic_at: String,
    /// The failed test's name (`tests::adds_one`), to know when the panic is in the test itself.
    test: Option<String>,
    function: String,
    /// The frame at the panic's location was seen, and it was not the test's own.
    in_helper: bool,
    /// What the frames' paths lack before them: the member's directory in a workspace, where a
    /// test runs in its package's folder but rustc names files from the workspace root.
    prefix: String,
    done: bool,
    pub(crate) via: Option<String>,
}

impl Backtrace {
    pub(crate) fn new(panic_at: &str, test: Option<&str>) -> Self {
        Backtrace {
            panic_at: panic_at.trim_start_matches("./").to_string(),
            test: test.map(str::to_string),
            function: String::new(),
            in_helper: false,
            prefix: String::new(),
            done: false,
            via: None,
        }
    }

    pub(crate) fn line(&mut self, text: &str, cwd: &str) -> Step {
        let trimmed = text.trim();
        if trimmed.starts_with("note: Some details are omitted") {
            return Step::End;
        }
        if let Some(location) = trimmed.strip_prefix("at ")
            && text.starts_with(' ')
        {
            self.location(location.trim(), cwd);
            return Step::Frame;
        }
        match FRAME.captures(text) {
            Some(c) => {
                self.function = c[1].trim().to_string();
                Step::Frame
            }
            None => Step::Other,
        }
    }

    fn location(&mut self, location: &str, cwd: &str) {
        if self.done {
            return;
        }
        let Some(path) = project_path(location, cwd) else { return };
        if !self.in_helper {
            let Some(prefix) = prefix_to(&self.panic_at, &path) else { return };
            if self.is_test_function() {
                // The test itself panicked: its line is the location already.
                self.done = true;
                return;
            }
            self.prefix = prefix.to_string();
            self.in_helper = true;
            return;
        }
        if prefix_to(&self.panic_at, &path).is_some() {
            // The same line again (a closure inside the helper).
            return;
        }
        self.via = Some(format!("{}{path}", self.prefix));
        self.done = true;
    }

    /// `ledger::tests::adds_one` or `api::adds_one::{{closure}}` for test `tests::adds_one`/`adds_one`.
    fn is_test_function(&self) -> bool {
        // rustdoc wraps a doctest's code in `rust_out::main::_doctest_main_src_lib_rs_3_0`.
        if self.function.contains("::_doctest_main_") {
            return true;
        }
        let Some(test) = &self.test else { return false };
        let mut function = self.function.as_str();
        while let Some(outer) = function.strip_suffix("::{{closure}}") {
            function = outer;
        }
        function == test || function.ends_with(&format!("::{test}"))
    }
}

/// A frame's location relative to the run's folder, or None when it lies outside the project
/// (std under `/rustc/…`, a dependency's source).
fn project_path(location: &str, cwd: &str) -> Option<String> {
    let (file, _, _) = split_location(location)?;
    let relative = relative_to(file, cwd);
    if is_absolute(&relative) {
        return None;
    }
    let rest = &location[file.len()..];
    Some(format!("{}{rest}", relative.trim_start_matches("./")))
}

/// When `frame` names the panic's location (`tests/api.rs:5:5`), what the panic's path has
/// before it (`crates/a/` for a workspace member; empty otherwise).
fn prefix_to<'a>(panic_at: &'a str, frame: &str) -> Option<&'a str> {
    let prefix = panic_at.strip_suffix(frame)?;
    (prefix.is_empty() || prefix.ends_with('/')).then_some(prefix)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Captured from `RUST_BACKTRACE=1 cargo test` with Rust 1.95.
    const HELPER: &str = "   0: __rustc::rust_begin_unwind
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/panicking.rs:689:5
   1: core::panicking::panic_fmt
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:80:14
   2: core::panicking::assert_failed_inner
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:434:23
   3: core::panicking::assert_failed
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:394:5
   4: api::check_balance
             at ./tests/api.rs:5:5
   5: api::long_ledgers_balance
             at ./tests/api.rs:17:9
   6: api::long_ledgers_balance::{{closure}}
             at ./tests/api.rs:14:26
   7: core::ops::function::FnOnce::call_once
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/ops/function.rs:250:5
note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.";

    fn read(trace: &mut Backtrace, text: &str) -> Vec<Step> {
        text.lines().map(|l| trace.line(l, "/home/dev/src/ledger")).collect()
    }

    #[test]
    fn a_helper_panic_names_its_caller() {
        let mut trace = Backtrace::new("tests/api.rs:5:5", Some("long_ledgers_balance"));
        let steps = read(&mut trace, HELPER);
        assert_eq!(steps.last(), Some(&Step::End));
        assert!(steps[..steps.len() - 1].iter().all(|s| *s == Step::Frame));
        assert_eq!(trace.via.as_deref(), Some("tests/api.rs:17:9"));
        assert_eq!(trace.line("", "/w"), Step::Other);
    }

    #[test]
    fn a_panic_in_the_test_itself_has_no_caller() {
        let text = "   4: stops::tests::adds_one
             at ./src/lib.rs:21:9
   5: stops::tests::adds_one::{{closure}}
             at ./src/lib.rs:20:18";
        let mut trace = Backtrace::new("src/lib.rs:21:9", Some("tests::adds_one"));
        read(&mut trace, text);
        assert_eq!(trace.via, None);
    }

    #[test]
    fn a_doctest_is_its_own_test() {
        // Rust 1.95 prints no location for these frames; were there one, it would be the doctest's.
        let text = "   4: rust_out::main::_doctest_main_src_lib_rs_3_0
             at ./src/lib.rs:6:1
   5: rust_out::main
             at ./src/lib.rs:9:3";
        let mut trace = Backtrace::new("src/lib.rs:6:1", Some("src/lib.rs - half_up (line 3)"));
        read(&mut trace, text);
        assert_eq!(trace.via, None);
    }

    #[test]
    fn workspace_members_keep_their_folder() {
        // A member's test runs in its package folder: rustc names the panic from the workspace
        // root, the backtrace from the package (Rust 1.95, member `crates/core`).
        let text = "   4: api::check
             at ./tests/api.rs:5:5
   5: api::it_works
             at ./tests/api.rs:9:5";
        let mut trace = Backtrace::new("crates/core/tests/api.rs:5:5", Some("it_works"));
        read(&mut trace, text);
        assert_eq!(trace.via.as_deref(), Some("crates/core/tests/api.rs:9:5"));
        let mut elsewhere = Backtrace::new("src/lib.rs:5:5", Some("it_works"));
        read(&mut elsewhere, text);
        assert_eq!(elsewhere.via, None);
    }

    #[test]
    fn full_backtraces_show_addresses() {
        let mut trace = Backtrace::new("src/lib.rs:2:5", Some("t"));
        assert_eq!(trace.line("  12:     0x55d1c0a1b2c3 - ledger::balance", "/w"), Step::Frame);
        assert_eq!(trace.function, "ledger::balance");
        assert_eq!(trace.line("                               at ./src/lib.rs:2:5", "/w"), Step::Frame);
        assert!(trace.in_helper);
    }
}
