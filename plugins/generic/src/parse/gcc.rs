//! gcc and clang diagnostics (`file:line:col: error: message [-Wflag]`), the `In file included
//! from` chain before one, the notes after it, its code frame, and the linker's errors as the
//! compiler driver shows them (`file.c:(.text+0xa): undefined reference to `f'`).
//! UndefinedBehaviorSanitizer's `s.c:3:22: runtime error: …` has the same shape and is an error.

use super::{Found, add_note, at, extend, int};
use buildvise_plugin_api::{Diagnostic, Recogniser, Severity, Text, Wants};
use regex::Regex;
use std::sync::LazyLock;

static DIAGNOSTIC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?:(?P<col>\d+):)? (?P<sev>fatal error|error|runtime error|warning|note): (?P<msg>\s*\S.*)$",
    )
    .expect("valid regex")
});

/// The option that enabled a warning, at the end of its message: `[-Wunused-variable]`,
/// `[-Werror=format=]`.
static FLAG: LazyLock<Regex> = LazyLock::new(|| Regex::new(r" \[(?P<flag>-[Wf][^\]\s]+)\]$").expect("valid regex"));

/// What glibc's `assert` prints when it fails: `prog: test.c:12: main: Assertion `x == 2'
/// failed.` The program is any word; the file and line are the assertion's.
static ASSERTION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\S+: (?P<file>[^\s:][^:]*):(?P<line>\d+): (?P<function>[^:]+): (?P<msg>Assertion `.*' failed)\.$")
        .expect("valid regex")
});

/// A line of the instantiation chain gcc prints before an error in a template: `x.cc:45:15:
/// required from here`, `base.h:2927:15:   required from ‘void print(…)’`, `… in ‘constexpr’
/// expansion of …`, `[ skipping 5 instantiation contexts … ]`. Three spaces where a severity
/// would be.
static CHAIN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?:\d+:)?   (?P<what>\S.*)$").expect("valid regex")
});

/// Where lld places a symbol error: `>>> referenced by m.c:2 (/x/m.c:2)`, `>>> defined at a.c`.
static PLACE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^>>> (?:referenced by|defined at) (?P<file>[^\s:()]+)(?::(?P<line>\d+))?").expect("valid regex")
});

/// A linker error about a symbol, at the source file (and line, with debug info) that refers to
/// it, or at an object file: `linkmain.c:(.text+0xa): undefined reference to `compute'`.
static SYMBOL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?:\S*\bld(?:\.\w+)?: )?(?P<file>[^\s:][^:]*):(?:(?P<line>\d+)|\([^)]*\)): (?P<msg>(?:undefined reference to|multiple definition of) .*)$",
    )
    .expect("valid regex")
});

#[derive(Default)]
pub(crate) struct Gcc {
    /// `included from main.c:2` and `required from here at x.cc:45` notes for the diagnostic that
    /// follows the chain.
    included: Vec<String>,
    /// Whether the last diagnostic added is this recogniser's, so notes and frames belong to it.
    open: bool,
    /// An lld symbol error, until its `>>>` lines have said where it is.
    unplaced: Option<Diagnostic>,
}

impl Recogniser<Found> for Gcc {
    /// Every line: its diagnostics are `file:line:` lines, and the driver's and the linker's
    /// start with a program's path.
    fn wants(&self) -> Wants {
        Wants::every()
    }

    fn flush(&mut self, found: &mut Found) {
        self.push_unplaced(found);
    }

    fn feed(&mut self, line: &Text<'_>, found: &mut Found) -> bool {
        let (text, number) = (line.text, line.number);
        if text.starts_with(">>> ") && self.unplaced.is_some() {
            self.place(text, number, found);
            return true;
        }
        self.push_unplaced(found);
        if let Some(from) = text.strip_prefix("In file included from ").or_else(|| from_line(text)) {
            let from = from.trim_end_matches([',', ':']);
            self.included.push(format!("included from {from}"));
            return true;
        }
        if let Some(caps) = CHAIN.captures(text) {
            if caps["what"].starts_with("required from here") {
                let at = format!("required from here at {}:{}", found.path(&caps["file"]), &caps["line"]);
                self.included.push(at);
            }
            return true;
        }
        if self.open && is_frame(text) {
            if let Some(d) = found.last_mut() {
                extend(d, number);
            }
            return true;
        }
        if is_context(text) {
            return true;
        }
        if let Some(caps) = ASSERTION.captures(text) {
            let message = format!("{} in {}", &caps["msg"], &caps["function"]);
            let d = at(Severity::Error, &message, found.path(&caps["file"]), int(caps.name("line")), None, number);
            self.open = found.push(d);
            return true;
        }
        if let Some(taken) = self.driver(text, number, found) {
            return taken;
        }
        if !(text.contains(": error: ")
            || text.contains(": warning: ")
            || text.contains(": note: ")
            || text.contains(": fatal error: ")
            || text.contains(": runtime error: "))
        {
            return self.linker(text, number, found);
        }
        let Some(caps) = DIAGNOSTIC.captures(text) else { return false };
        let file = found.path(&caps["file"]);
        let (line, col) = (int(caps.name("line")), int(caps.name("col")));
        let mut message = &caps["msg"];
        if &caps["sev"] == "note" {
            // A chain before a note (clang's `In file included from` a candidate's header) is
            // the note's, not the next diagnostic's.
            self.included.clear();
            if self.open
                && let Some(d) = found.last_mut()
            {
                let same_place = d.file.as_deref() == Some(file.as_str()) && d.line == line;
                let message = message.trim();
                let note =
                    if same_place { message.to_string() } else { format!("{file}:{}: {message}", line.unwrap_or(0)) };
                add_note(d, &note, number);
            }
            return true;
        }
        let severity = if &caps["sev"] == "warning" { Severity::Warning } else { Severity::Error };
        let mut code = None;
        if let Some(flag) = FLAG.captures(message) {
            code = Some(warning_flag(&flag["flag"]).to_string());
            message = &message[..flag.get(0).map_or(message.len(), |m| m.start())];
        }
        let mut d = at(severity, message, file, line, col, number);
        if let Some(code) = code {
            d = d.with_code(code);
        }
        d.notes = std::mem::take(&mut self.included);
        self.open = found.push(d);
        true
    }
}

impl Gcc {
    /// Lines of the compiler driver and linker that name no source line: `cc1: all warnings being
    /// treated as errors`, `collect2: error: ld returned 1 exit status`, `cc: error: x.c: No such
    /// file or directory`. None when `text` is none of them.
    fn driver(&mut self, text: &str, number: u64, found: &mut Found) -> Option<bool> {
        let (program, rest) = text.split_once(": ")?;
        if program.contains(' ') {
            return None;
        }
        let name = tool_name(program);
        let is_ld = name == "ld" || name.starts_with("ld.");
        let is_driver = ["cc", "gcc", "g++", "c++", "clang", "clang++", "cc1", "cc1plus", "collect2"].contains(&name);
        if !is_ld && !is_driver {
            return None;
        }
        self.open = false;
        if is_ld {
            return Some(self.ld(text, rest, number, found));
        }
        let rest = rest.trim();
        if rest.starts_with("error: ld returned") || rest.starts_with("error: linker command failed") {
            found
                .consequences
                .push(Diagnostic::error(rest.trim_start_matches("error: ")).with_log_range(number, number));
        } else if let Some(message) = rest.strip_prefix("error: ").or_else(|| rest.strip_prefix("fatal error: ")) {
            self.open = found.push(Diagnostic::error(message).with_log_range(number, number));
        } else if let Some(message) = rest.strip_prefix("warning: ") {
            // `clang: warning: -lm: 'linker' input unused [-Wunused-command-line-argument]`
            let d = match FLAG.captures(message) {
                Some(flag) => Diagnostic::warning(message[..flag.get(0).map_or(0, |m| m.start())].trim())
                    .with_code(warning_flag(&flag["flag"])),
                None => Diagnostic::warning(message),
            };
            self.open = found.push(d.with_log_range(number, number));
        }
        Some(true)
    }

    /// A line of ld's own: GNU ld's `in function` (which only says where the next line's symbol
    /// was used), a symbol error at a source file, any other error or warning; lld's symbol
    /// errors wait for the `>>>` lines that place them.
    fn ld(&mut self, text: &str, rest: &str, number: u64, found: &mut Found) -> bool {
        if rest.contains(": in function `") || rest.starts_with("warning: ") && rest.contains("in function") {
            return true;
        }
        if SYMBOL.is_match(text) {
            return self.linker(text, number, found);
        }
        let d = match rest.strip_prefix("warning: ") {
            Some(warning) => Diagnostic::warning(warning.trim()),
            None => Diagnostic::error(rest.strip_prefix("error: ").unwrap_or(rest).trim()),
        };
        let d = d.with_log_range(number, number);
        if d.message.starts_with("undefined symbol: ") || d.message.starts_with("duplicate symbol: ") {
            self.unplaced = Some(d);
        } else {
            self.open = found.push(d);
        }
        true
    }

    /// lld's `>>> referenced by m.c:2 (/x/m.c:2)` or `>>> defined at a.c` under a symbol error:
    /// an undefined symbol is placed at its first reference in a source file, a duplicate at its
    /// last definition, as GNU ld places it at the definition that came second; the other lines
    /// (objects, more references) are its body.
    fn place(&mut self, text: &str, number: u64, found: &Found) {
        let Some(mut d) = self.unplaced.take() else { return };
        let duplicate = d.message.starts_with("duplicate symbol: ");
        if (d.file.is_none() || duplicate)
            && let Some(caps) = PLACE.captures(text)
            && !is_object(&caps["file"])
        {
            d = d.with_location(found.path(&caps["file"]), int(caps.name("line")), None);
        }
        extend(&mut d, number);
        self.unplaced = Some(d);
    }

    /// Adds the lld error the `>>>` lines were placing.
    fn push_unplaced(&mut self, found: &mut Found) {
        if let Some(d) = self.unplaced.take() {
            self.open = found.push(d);
        }
    }

    fn linker(&mut self, text: &str, number: u64, found: &mut Found) -> bool {
        if !(text.contains("undefined reference to") || text.contains("multiple definition of")) {
            return false;
        }
        let Some(caps) = SYMBOL.captures(text) else { return false };
        let file = &caps["file"];
        // `multiple definition of `f'; other.o:other.c:(.text+0x0): first defined here`: the
        // other definition is a note.
        let (message, first) = match caps["msg"].split_once("; ") {
            Some((message, first)) if first.ends_with("first defined here") => (message, Some(first)),
            _ => (&caps["msg"], None),
        };
        let mut d = if is_object(file) {
            Diagnostic::error(message).with_log_range(number, number)
        } else {
            at(Severity::Error, message, found.path(file), int(caps.name("line")), None, number)
        };
        if let Some(first) = first {
            add_note(&mut d, first, number);
        }
        self.open = found.push(d);
        true
    }
}

/// An object file or archive member, which names no source: `main.o`, `libx.a(y.o)`.
fn is_object(file: &str) -> bool {
    file.ends_with(".o") || file.ends_with(".a") || file.ends_with(')')
}

/// The tool a program's name says, without its folder, its version and the target a cross
/// toolchain names it for: `/usr/bin/ld`, `clang-14`, `x86_64-linux-gnu-gcc-12` and
/// `arm-none-eabi-ld.bfd` are ld, clang, gcc and ld.bfd.
fn tool_name(program: &str) -> &str {
    let name = program.rsplit('/').next().unwrap_or(program);
    let name = match name.rsplit_once('-') {
        Some((rest, version)) if !version.is_empty() && version.bytes().all(|b| b.is_ascii_digit() || b == b'.') => {
            rest
        }
        _ => name,
    };
    name.rsplit('-').next().unwrap_or(name)
}

/// The flag that enabled a warning: clang names `-Werror` first when it made the warning an error
/// (`-Werror,-Wunused-variable`); gcc's `-Werror=unused-variable` is one flag and stays.
fn warning_flag(flags: &str) -> &str {
    flags.rsplit(',').find(|f| f.starts_with("-W")).unwrap_or(flags)
}

/// `                 from util.h:3,`: the rest of an include chain.
fn from_line(text: &str) -> Option<&str> {
    let rest = text.trim_start();
    (rest.len() + 10 < text.len()).then(|| rest.strip_prefix("from "))?
}

/// A line of a code frame: `    3 | int x = y;` or `      |         ^~`.
fn is_frame(text: &str) -> bool {
    let rest = text.trim_start_matches(' ');
    if rest.len() == text.len() {
        return false;
    }
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
    rest.starts_with(" |") || rest.starts_with('|')
}

/// `main.c: In function ‘main’:`, `a.cpp: At global scope:`, `compilation terminated.`,
/// `1 warning and 2 errors generated.`: what frames a diagnostic, not one.
fn is_context(text: &str) -> bool {
    if text == "compilation terminated." || (text.ends_with(" generated.") && text.contains(" error")) {
        return true;
    }
    if text.ends_with(" generated.") && text.contains(" warning") {
        return true;
    }
    let Some((file, rest)) = text.split_once(": ") else { return false };
    !file.contains(' ') && text.ends_with(':') && (rest.starts_with("In ") || rest.starts_with("At "))
}

#[cfg(test)]
mod tests {
    use crate::parse::testing::{brief, parse};

    /// `make` with gcc 12.2.0 on a file that includes a broken header.
    const COMPILE: &str = "\
cc -Wall -Wextra -c main.c -o main.o
In file included from main.c:2:
util.h: In function ‘twice’:
util.h:3:46: error: expected ‘;’ before ‘}’ token
    3 | static inline int twice(int x) { return x * 2 }
      |                                              ^~
      |                                              ;
main.c: In function ‘main’:
main.c:7:15: warning: initialization of ‘char *’ from ‘int’ makes pointer from integer without a cast [-Wint-conversion]
    7 |     char *s = total;
      |               ^~~~~
main.c:9:12: error: ‘undefined_name’ undeclared (first use in this function)
    9 |     return undefined_name;
      |            ^~~~~~~~~~~~~~
main.c:9:12: note: each undeclared identifier is reported only once for each function it appears in
main.c:5:9: warning: unused variable ‘unused’ [-Wunused-variable]
    5 |     int unused;
      |         ^~~~~~
";

    #[test]
    fn reads_errors_warnings_flags_notes_and_the_include_chain() {
        let result = parse(&["gcc"], COMPILE, 2);
        assert_eq!(
            brief(&result),
            [
                "error util.h:3:46 expected ‘;’ before ‘}’ token",
                "warning main.c:7:15 initialization of ‘char *’ from ‘int’ makes pointer from integer without a cast [-Wint-conversion]",
                "error main.c:9:12 ‘undefined_name’ undeclared (first use in this function)",
                "warning main.c:5:9 unused variable ‘unused’ [-Wunused-variable]",
            ]
        );
        let d = &result.diagnostics;
        assert_eq!(d[0].notes, ["included from main.c:2"]);
        assert_eq!(d[0].log_range.map(|r| (r.start, r.end)), Some((4, 7)), "the frame belongs to it");
        assert_eq!(d[2].notes, ["each undeclared identifier is reported only once for each function it appears in"]);
        assert!(d[1].notes.is_empty());
    }

    #[test]
    fn keeps_notes_at_other_places_with_their_location() {
        let log = "\
a.cpp: In function ‘int main()’:
a.cpp:6:9: error: no matching function for call to ‘take(std::string&)’
    6 |     take(s);
      |     ~~~~^~~
a.cpp:2:6: note: candidate: ‘void take(int)’
    2 | void take(int x);
      |      ^~~~
a.cpp:3:6: note: candidate: ‘void take(double, int)’
a.cpp:3:6: note:   candidate expects 2 arguments, 1 provided
";
        let result = parse(&["gcc"], log, 1);
        assert_eq!(brief(&result), ["error a.cpp:6:9 no matching function for call to ‘take(std::string&)’"]);
        assert_eq!(
            result.diagnostics[0].notes,
            [
                "a.cpp:2: candidate: ‘void take(int)’",
                "a.cpp:3: candidate: ‘void take(double, int)’",
                "a.cpp:3: candidate expects 2 arguments, 1 provided"
            ]
        );
    }

    #[test]
    fn a_missing_header_is_a_fatal_error() {
        let log = "\
needs_header.c:1:10: fatal error: missing.h: No such file or directory
    1 | #include \"missing.h\"
      |          ^~~~~~~~~~~
compilation terminated.
";
        let result = parse(&["gcc"], log, 1);
        assert_eq!(brief(&result), ["error needs_header.c:1:10 missing.h: No such file or directory"]);
    }

    #[test]
    fn an_undefined_reference_is_an_error_at_the_referencing_file_and_ld_s_exit_only_a_consequence() {
        let log = "\
/usr/bin/ld: /tmp/ccr7Ly63.o: in function `main':
linkmain.c:(.text+0xa): undefined reference to `compute'
collect2: error: ld returned 1 exit status
";
        let result = parse(&["gcc"], log, 1);
        assert_eq!(brief(&result), ["error linkmain.c undefined reference to `compute'"]);
        let alone = parse(&["gcc"], "collect2: error: ld returned 1 exit status\n", 1);
        assert_eq!(brief(&alone), ["error - ld returned 1 exit status"], "kept when nothing explains it");
        let library = parse(&["gcc"], "/usr/bin/ld: cannot find -lnosuch: No such file or directory\n", 1);
        assert_eq!(brief(&library), ["error - cannot find -lnosuch: No such file or directory"]);
    }

    #[test]
    fn with_debug_info_the_reference_has_a_line() {
        let log = "\
/usr/bin/ld: /tmp/cc8.o: in function `main':
/home/dev/src/demo/linkmain.c:4: undefined reference to `compute'
";
        assert_eq!(brief(&parse(&["gcc"], log, 1)), ["error linkmain.c:4 undefined reference to `compute'"]);
    }

    #[test]
    fn a_template_s_instantiation_chain_is_the_error_s_context_not_errors_of_its_own() {
        // g++ 12.2.0 on a fmt::print of a pointer fmt refuses, under ninja (absolute paths).
        let log = "\
/home/dev/src/demo/include/fmt/base.h: In instantiation of ‘constexpr fmt::v12::detail::value<Context>::value(const T&) [with T = const fmt_arg*]’:
/home/dev/src/demo/include/fmt/base.h:2927:15:   required from ‘void fmt::v12::print(FILE*, format_string<T ...>, T&& ...) [with T = {long unsigned int&, const fmt_arg*&}]’
/home/dev/src/demo/src/fmt-c.cc:45:15:   required from here
/home/dev/src/demo/include/fmt/base.h:2232:29: error: static assertion failed: formatting of non-void pointers is disallowed
 2232 |     static_assert(sizeof(T) == 0,
      |                   ~~~~~~~~~~^~~~
/home/dev/src/demo/include/fmt/base.h:2232:29: note: the comparison reduces to ‘(8 == 0)’
";
        let result = parse(&["gcc", "fallback"], log, 1);
        assert_eq!(
            brief(&result),
            ["error include/fmt/base.h:2232:29 static assertion failed: formatting of non-void pointers is disallowed"]
        );
        assert_eq!(
            result.diagnostics[0].notes,
            ["required from here at src/fmt-c.cc:45", "the comparison reduces to ‘(8 == 0)’"]
        );
    }

    #[test]
    fn clang_s_werror_flag_pair_gives_the_warning_s_own_flag() {
        // clang 14.0.6 with -Werror; gcc 12.2.0 names one flag.
        let log = "\
cJSON_Utils.c:1072:9: error: unused variable 'applied' [-Werror,-Wunused-variable]
cJSON.c:600:12: error: unused variable ‘digits’ [-Werror=unused-variable]
";
        assert_eq!(
            brief(&parse(&["gcc"], log, 1)),
            [
                "error cJSON_Utils.c:1072:9 unused variable 'applied' [-Wunused-variable]",
                "error cJSON.c:600:12 unused variable ‘digits’ [-Werror=unused-variable]",
            ]
        );
    }

    #[test]
    fn an_include_chain_before_a_note_is_the_note_s() {
        // clang 14.0.6: the candidate's header is reached through an include chain.
        let log = "\
src/fmt-c.cc:46:36: error: no matching function for call to 'vformat_to_n'
In file included from src/fmt-c.cc:10:
include/fmt/base.h:2840:6: note: candidate function template not viable: requires 4 arguments, but 3 were provided
src/fmt-c.cc:38:49: warning: unused parameter 'size' [-Wunused-parameter]
";
        let result = parse(&["gcc"], log, 1);
        assert_eq!(result.diagnostics.len(), 2);
        assert!(result.diagnostics[1].notes.is_empty(), "{:?}", result.diagnostics[1].notes);
    }

    #[test]
    fn the_other_definition_of_a_symbol_is_a_note_and_ld_s_warnings_are_warnings() {
        // GNU ld 2.40 through gcc 12.2.0, two translation units in one call.
        let log = "\
/usr/bin/ld: /home/dev/src/demo/objtmp/ccrmXadR.o: in function `cJSON_Version':
test.c:(.text+0xaaf): multiple definition of `cJSON_Version'; /home/dev/src/demo/objtmp/ccSPCOHl.o:cJSON.c:(.text+0x7f): first defined here
/usr/bin/ld: warning: libfoo.so.1, needed by libbar.so, not found (try using -rpath or -rpath-link)
collect2: error: ld returned 1 exit status
";
        let result = parse(&["gcc"], log, 1);
        assert_eq!(
            brief(&result),
            [
                "error test.c multiple definition of `cJSON_Version'",
                "warning - libfoo.so.1, needed by libbar.so, not found (try using -rpath or -rpath-link)",
            ]
        );
        assert_eq!(
            result.diagnostics[0].notes,
            ["/home/dev/src/demo/objtmp/ccSPCOHl.o:cJSON.c:(.text+0x7f): first defined here"]
        );
    }

    #[test]
    fn a_failed_assert_is_an_error_at_its_line() {
        // glibc 2.36's assert in a program `make test` ran.
        let log = "./t\nt: t.c:2: main: Assertion `x == 2' failed.\nmake: *** [Makefile:2: test] Aborted\n";
        assert_eq!(
            brief(&parse(&["make", "gcc", "fallback"], log, 2)),
            ["error t.c:2 Assertion `x == 2' failed in main"]
        );
    }

    #[test]
    fn the_driver_s_warnings_keep_their_flag_as_the_code() {
        // clang 14.0.6 given a library while only compiling.
        let log = "clang: warning: -lm: 'linker' input unused [-Wunused-command-line-argument]\n";
        assert_eq!(
            brief(&parse(&["gcc"], log, 0)),
            ["warning - -lm: 'linker' input unused [-Wunused-command-line-argument]"]
        );
    }

    #[test]
    fn a_versioned_or_cross_compiler_s_driver_and_linker_are_known() {
        let log = "\
x86_64-linux-gnu-gcc-12: error: unrecognized command-line option ‘-Wnosuch’
clang-14: warning: -lm: 'linker' input unused [-Wunused-command-line-argument]
arm-none-eabi-ld: cannot find -lnosys
";
        assert_eq!(
            brief(&parse(&["gcc"], log, 1)),
            [
                "error - unrecognized command-line option ‘-Wnosuch’",
                "warning - -lm: 'linker' input unused [-Wunused-command-line-argument]",
                "error - cannot find -lnosys",
            ]
        );
    }

    #[test]
    fn lld_s_symbol_errors_are_placed_by_their_first_source_reference() {
        // ld.lld 14.0.6 through clang 14.0.6, with -g and without.
        let log = "\
ld.lld-14: error: undefined symbol: compute
>>> referenced by m.c:2 (/home/dev/src/demo/m.c:2)
>>>               /home/dev/src/demo/objtmp/m-4a7cf7.o:(main)
>>> referenced by m.c:2 (/home/dev/src/demo/m.c:2)
>>>               /home/dev/src/demo/objtmp/m-4a7cf7.o:(main)
clang: error: linker command failed with exit code 1 (use -v to see invocation)
ld.lld-14: error: duplicate symbol: helper
>>> defined at a.c
>>>            a.o:(helper)
>>> defined at b.c
>>>            b.o:(.text+0x0)
ld.lld-14: error: undefined symbol: lost
>>> referenced by x.o:(main)
";
        let result = parse(&["gcc"], log, 1);
        assert_eq!(
            brief(&result),
            [
                "error m.c:2 undefined symbol: compute",
                "error b.c duplicate symbol: helper",
                "error - undefined symbol: lost"
            ]
        );
        assert_eq!(result.diagnostics[0].log_range.map(|r| (r.start, r.end)), Some((1, 5)));
    }
}
