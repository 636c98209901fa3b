//! GNU make's own lines: its errors (`make: *** No rule to make target 'x'.  Stop.`,
//! `Makefile:2: *** missing separator.  Stop.`), its warnings, the directories a recursive make
//! enters, the failed recipe (`make: *** [Makefile:10: main.o] Error 1`), and what a recipe's
//! shell says of its commands (`/bin/sh: 1: gccc: not found`).
//!
//! A failed recipe is a consequence: the recipe's own command printed why it failed (the
//! compiler's errors), and repeating "main.o failed" under them costs tokens and says nothing.
//! It is kept only when nothing else in the run is an error, for a recipe that failed silently
//! (`false`, a script that exits 1) would otherwise leave a failed run with no diagnostic.

use super::{Found, at};
use buildvise_plugin_api::{Diagnostic, Head, Recogniser, Severity, Text, Wants};
use memchr::memmem::Finder;
use regex::Regex;
use std::sync::LazyLock;

/// `make: `, `make[2]: `, `gmake: ` at the start of a line; the rest.
static PREFIX: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^g?make(?:\[\d+\])?: ").expect("valid regex"));

/// `[Makefile:10: main.o] Error 1` (make 4) or `[main.o] Error 1` (older makes); a recipe killed
/// by a signal says the signal (`Aborted`, `Segmentation fault (core dumped)`).
static RECIPE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\[(?:(?P<file>[^:\]]+):(?P<line>\d+): )?(?P<target>[^\]]+)\] (?P<what>\S.*)").expect("valid regex")
});

/// `Makefile:2: *** missing separator.  Stop.` or `rules.mk:5: warning: overriding recipe…`.
static AT_FILE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<file>[^\s:]+):(?P<line>\d+): (?:\*\*\* (?P<error>.*)|warning: (?P<warning>.*))$")
        .expect("valid regex")
});

/// A recipe's shell about one of its commands: `/bin/sh: 1: gccc: not found`, `/bin/bash: line
/// 1: gccc: command not found`.
static SHELL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:/usr)?(?:/bin/)?(?:ba|da)?sh: (?:line )?\d+: (?P<msg>.+)$").expect("valid regex")
});

/// What make says before an error or a warning at a line of a makefile.
static ERROR_AT: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(": *** "));
static WARNING_AT: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(": warning: "));

pub(crate) struct Make;

impl Recogniser<Found> for Make {
    fn wants(&self) -> Wants {
        Wants::starts(&["make:", "make[", "gmake:", "gmake[", "/bin/sh: ", "/bin/bash: ", "sh: ", "bash: "])
            .or_test(is_at_a_file_line)
    }

    fn feed(&mut self, line: &Text<'_>, found: &mut Found) -> bool {
        let (text, number) = (line.text, line.number);
        if PREFIX.is_match(text) {
            let rest = &text[text.find(": ").map_or(0, |i| i + 2)..];
            self.own(rest, number, found);
            return true;
        }
        if let Some(caps) = SHELL.captures(text) {
            // A recipe's shell: `gccc: not found` is why the recipe failed, when it failed; a
            // recipe may also run `cmd || true` and go on.
            let d = Diagnostic::error(caps["msg"].trim()).with_log_range(number, number);
            found.unsure.push(d);
            return true;
        }
        let Some(caps) = AT_FILE.captures(text) else { return false };
        let file = &caps["file"];
        let is_makefile = file.contains("akefile") || file.ends_with(".mk") || file.ends_with(".make");
        if caps.name("warning").is_some() && !is_makefile {
            return false;
        }
        let line = caps["line"].parse().ok();
        let (severity, message) = match caps.name("error") {
            Some(m) => (Severity::Error, stopped(m.as_str())),
            None => (Severity::Warning, caps["warning"].to_string()),
        };
        found.push(at(severity, &message, found.path(file), line, None, number));
        true
    }
}

/// `Makefile:2: *** …` or `rules.mk:5: warning: …`: what make says about a line of a makefile.
fn is_at_a_file_line(head: &Head<'_>) -> bool {
    ERROR_AT.find(head.bytes).is_some() || WARNING_AT.find(head.bytes).is_some()
}

impl Make {
    /// A line make printed about itself, after its `make[N]: ` prefix.
    fn own(&self, rest: &str, number: u64, found: &mut Found) {
        if let Some(dir) = quoted(rest, "Entering directory ") {
            found.dirs.push(dir.to_string());
            return;
        }
        if rest.starts_with("Leaving directory ") {
            found.dirs.pop();
            return;
        }
        if let Some(error) = rest.strip_prefix("*** ") {
            // `-j`'s wait for the other recipes, and the target a failed recipe left half-made.
            if error.starts_with("Waiting for unfinished jobs") || error.starts_with("Deleting ") {
                return;
            }
            if let Some(caps) = RECIPE.captures(error) {
                let message = format!("recipe for `{}` failed: {}", &caps["target"], &caps["what"]);
                let d = match caps.name("file") {
                    Some(file) => at(
                        Severity::Error,
                        &message,
                        found.path(file.as_str()),
                        caps["line"].parse().ok(),
                        None,
                        number,
                    ),
                    None => Diagnostic::error(message).with_log_range(number, number),
                };
                found.consequences.push(d);
            } else {
                found.push(Diagnostic::error(stopped(error)).with_log_range(number, number));
            }
            return;
        }
        if let Some(warning) = rest.strip_prefix("warning: ") {
            found.push(Diagnostic::warning(warning.trim()).with_log_range(number, number).from_toolchain());
            return;
        }
        // `make: cc: No such file or directory`: a recipe's program is missing.
        if rest.ends_with(": No such file or directory")
            || rest.ends_with(": Permission denied")
            || rest.ends_with(": Command not found")
        {
            found.push(Diagnostic::error(rest.trim()).with_log_range(number, number));
        }
        // Anything else (`Nothing to be done for 'all'.`, `Target 'all' not remade because of
        // errors.`) is make talking about progress.
    }
}

/// `No rule to make target 'x'.  Stop.` without its `.  Stop.`.
fn stopped(message: &str) -> String {
    let message = message.trim_end();
    let message = message.strip_suffix("Stop.").unwrap_or(message).trim_end();
    message.strip_suffix('.').unwrap_or(message).to_string()
}

/// The directory in `Entering directory '/x'` (GNU make quotes with '…' or `…').
fn quoted<'a>(rest: &'a str, prefix: &str) -> Option<&'a str> {
    let quoted = rest.strip_prefix(prefix)?;
    Some(quoted.trim_start_matches(['\'', '`']).trim_end_matches('\''))
}

#[cfg(test)]
mod tests {
    use crate::parse::testing::{brief, parse};

    const FORMATS: &[&str] = &["make", "gcc", "fallback"];

    #[test]
    fn a_failed_recipe_explained_by_the_compiler_is_not_repeated() {
        // GNU Make 4.3 and gcc 12.2.0.
        let log = "\
cc -Wall -Wextra -c needs_header.c -o needs_header.o
needs_header.c:1:10: fatal error: missing.h: No such file or directory
    1 | #include \"missing.h\"
      |          ^~~~~~~~~~~
compilation terminated.
make: *** [Makefile:16: header] Error 1
";
        assert_eq!(brief(&parse(FORMATS, log, 2)), ["error needs_header.c:1:10 missing.h: No such file or directory"]);
    }

    #[test]
    fn a_recipe_that_failed_silently_is_the_error() {
        let log = "false\nmake: *** [Makefile:2: check] Error 1\n";
        assert_eq!(brief(&parse(FORMATS, log, 2)), ["error Makefile:2 recipe for `check` failed: Error 1"]);
        let old = parse(FORMATS, "make: *** [check] Error 1\n", 2);
        assert_eq!(brief(&old), ["error - recipe for `check` failed: Error 1"]);
    }

    #[test]
    fn what_make_says_around_a_failed_recipe_is_no_error_of_its_own() {
        // GNU Make 4.3: `make -j2` with a failing recipe, `.DELETE_ON_ERROR`, an aborted program.
        let log = "\
make: *** [Makefile:3: a.o] Error 1
make: *** Waiting for unfinished jobs....
make: *** Deleting file 'x.o'
make[1]: *** Deleting intermediate file 'y.c'
";
        assert_eq!(brief(&parse(FORMATS, log, 2)), ["error Makefile:3 recipe for `a.o` failed: Error 1"]);
        let aborted = "make: *** [Makefile:2: test] Aborted\n";
        assert_eq!(brief(&parse(FORMATS, aborted, 2)), ["error Makefile:2 recipe for `test` failed: Aborted"]);
    }

    #[test]
    fn a_recipe_s_shell_says_why_the_recipe_failed() {
        // GNU Make 4.3 with dash as /bin/sh, and with SHELL=/bin/bash.
        let dash =
            "gccc -c t.c -o t.o && echo ok\n/bin/sh: 1: gccc: not found\nmake: *** [Makefile:2: all] Error 127\n";
        assert_eq!(brief(&parse(FORMATS, dash, 2)), ["error - gccc: not found"]);
        let bash = "/bin/bash: line 1: gccc: command not found\nmake: *** [Makefile:2: all] Error 127\n";
        assert_eq!(brief(&parse(FORMATS, bash, 2)), ["error - gccc: command not found"]);
        let went_on = "/bin/sh: 1: lint: not found\n";
        assert_eq!(brief(&parse(FORMATS, went_on, 0)), ["warning - lint: not found"]);
    }

    #[test]
    fn reads_make_s_own_errors() {
        let separator = "Makefile:2: *** missing separator (did you mean TAB instead of 8 spaces?).  Stop.\n";
        assert_eq!(
            brief(&parse(FORMATS, separator, 2)),
            ["error Makefile:2 missing separator (did you mean TAB instead of 8 spaces?)"]
        );
        let target = "make: *** No rule to make target 'nosuchtarget'.  Stop.\n";
        assert_eq!(brief(&parse(FORMATS, target, 2)), ["error - No rule to make target 'nosuchtarget'"]);
    }

    #[test]
    fn resolves_paths_in_the_directory_a_recursive_make_entered() {
        // GNU Make 4.3 and gcc 12.2.0, `make` whose `all` runs `$(MAKE) -C lib`.
        let log = "\
make -C lib
make[1]: Entering directory '/home/dev/src/demo/lib'
cc -Wall -c x.c -o x.o
x.c: In function ‘f’:
x.c:1:22: error: ‘y’ undeclared (first use in this function)
    1 | int f(void) { return y; }
      |                      ^
x.c:1:22: note: each undeclared identifier is reported only once for each function it appears in
x.c:1:25: warning: control reaches end of non-void function [-Wreturn-type]
    1 | int f(void) { return y; }
      |                         ^
make[1]: *** [Makefile:4: x.o] Error 1
make[1]: Leaving directory '/home/dev/src/demo/lib'
make: *** [Makefile:2: all] Error 2
";
        assert_eq!(
            brief(&parse(FORMATS, log, 2)),
            [
                "error lib/x.c:1:22 ‘y’ undeclared (first use in this function)",
                "warning lib/x.c:1:25 control reaches end of non-void function [-Wreturn-type]"
            ]
        );
    }

    #[test]
    fn a_path_that_climbs_out_of_the_entered_directory_is_the_project_s() {
        let log = "\
make[1]: Entering directory '/home/dev/src/demo/programs'
../lib/lz4hc.c:1522:15: warning: unused variable ‘defaultLevel’ [-Wunused-variable]
make[1]: Leaving directory '/home/dev/src/demo/programs'
";
        assert_eq!(
            brief(&parse(FORMATS, log, 0)),
            ["warning lib/lz4hc.c:1522:15 unused variable ‘defaultLevel’ [-Wunused-variable]"]
        );
    }

    #[test]
    fn progress_lines_are_not_diagnostics() {
        let log = "make: Nothing to be done for 'all'.\nmake: Target 'all' not remade because of errors.\n";
        assert!(parse(FORMATS, log, 0).diagnostics.is_empty());
    }
}
