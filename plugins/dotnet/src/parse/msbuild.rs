//! MSBuild's canonical diagnostic line, which Roslyn, NuGet, the SDK, Mono's `mcs`/`xbuild` and
//! the Terminal Logger all print:
//!
//! ```text
//! origin[(line,col)] : [subcategory] error|warning [CODE] : message [ [project] ]
//! ```
//!
//! `origin` is a file (`/src/A.cs(3,5)`, `C:\x\App.csproj`, `X.sln`) or a tool (`CSC`, `MSBUILD`).

use super::text::{MAX_TEXT, file_stem, is_project_file};
use super::{Found, LastDiagnostic};
use buildvise_plugin_api::{Diagnostic, Head, Recogniser, Severity, Text, Wants, clip, relative_to};
use regex::Regex;
use std::sync::LazyLock;

/// Lines longer than this are tool output (base64, minified JSON), never diagnostics.
const MAX_DIAGNOSTIC_LEN: usize = 256 * 1024;

static WITH_ORIGIN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?P<origin>\S.*?)\s*:\s+(?:[A-Za-z][A-Za-z ]*?\s+)?(?P<sev>error|warning)(?:\s+(?P<code>[A-Za-z][A-Za-z0-9_.-]*))?\s*:(?P<msg>.*)$",
    )
    .expect("valid regex")
});

static WITHOUT_ORIGIN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<sev>error|warning)\s+(?P<code>[A-Za-z]+[0-9][A-Za-z0-9_.-]*)\s*:(?P<msg>.*)$")
        .expect("valid regex")
});

/// One canonical diagnostic line, taken apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Canonical {
    pub severity: Severity,
    /// The file or tool, as printed.
    pub origin: String,
    pub line: Option<u32>,
    pub column: Option<u32>,
    pub end_line: Option<u32>,
    pub end_column: Option<u32>,
    pub code: Option<String>,
    /// The message without the project suffix and help link.
    pub message: String,
    /// The project from the ` [..]` suffix, without `::TargetFramework=`.
    pub project: Option<String>,
    /// The `(https://…)` help link analyzers append.
    pub help: Option<String>,
    /// True when the message starts with blanks: NuGet's continuation lines
    /// (`error NU1605:  App -> Pkg (>= 2.0)`).
    pub indented: bool,
}

/// Cheap test before any regex: could `bytes` hold a canonical diagnostic?
pub fn might_be_diagnostic(bytes: &[u8]) -> bool {
    let Some(first) = memchr::memchr(b':', bytes) else {
        return false;
    };
    memchr::memchr_iter(b':', &bytes[first..]).any(|colon| severity_before_colon(bytes, first + colon, first))
}

/// True when the colon at `colon` follows a severity word that stands alone, with an optional
/// code between (`error CS0103:`, `warning :`), as in every canonical line: after the origin's
/// colon (the line's first is at `first_colon`) and a blank (`A.cs(3,5): error`), or first on the
/// line with a code (`error NETSDK1013:`).
///
/// The colon is what every such line has and most lines lack, so the tests start from it: the
/// words before it are only looked at where there is one.
pub fn severity_before_colon(bytes: &[u8], colon: usize, first_colon: usize) -> bool {
    // Before the line's first colon, the word can only start the line.
    let may_follow = colon > first_colon || bytes.starts_with(b"error") || bytes.starts_with(b"warning");
    if !may_follow || bytes.len() > MAX_DIAGNOSTIC_LEN {
        return false;
    }
    let before = bytes[..colon].trim_ascii_end();
    if ends_with_severity(before, first_colon, false) {
        return true;
    }
    // A code glued to the word (`errors:`, `warnings:`) means the word went on: a code follows
    // a blank. Only the code's own bytes are walked back over, never the whole line: a line of
    // colons asks this at every one of them.
    let code = before.iter().rev().take_while(|&&b| is_code(b)).count();
    let Some(blank) = before.len().checked_sub(code + 1).filter(|&at| before[at].is_ascii_whitespace()) else {
        return false;
    };
    ends_with_severity(before[..blank].trim_ascii_end(), first_colon, true)
}

fn is_code(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')
}

/// True when `before` ends with `error` or `warning` as a word of its own, after the origin's
/// colon and a blank or, when `may_start` (there is a code), first on the line.
fn ends_with_severity(before: &[u8], first_colon: usize, may_start: bool) -> bool {
    [&b"error"[..], b"warning"].into_iter().any(|word| {
        let Some(at) = before.len().checked_sub(word.len()).filter(|&at| before[at..] == *word) else {
            return false;
        };
        match at.checked_sub(1) {
            None => may_start,
            Some(blank) => before[blank].is_ascii_whitespace() && first_colon < at,
        }
    })
}

/// What MSBuild and the compilers print: canonical diagnostic lines (each distinct one once, an
/// indented repeat of the last one a note of it), the notes that follow one (`Switch:`, Roslyn's
/// related locations), and the Terminal Logger's `  Project failed with N error(s)` lines, which
/// name the projects that did not build.
pub struct BuildLines;

impl Recogniser<Found> for BuildLines {
    fn wants(&self) -> Wants {
        Wants::starts_unindented(&["Switch: "]).or_test(may_be_build_line)
    }

    fn feed(&mut self, line: &Text<'_>, found: &mut Found) -> bool {
        let (text, trimmed, number) = (line.text, line.trimmed, line.number);
        if super::is_skipped(trimmed.as_bytes()) {
            return false;
        }
        // Which projects failed to build counts towards `vstest`'s summary too.
        if text.starts_with("  ")
            && let Some(project) = terminal_logger_failed_project(text)
        {
            found.failed_projects.insert(project.to_ascii_lowercase());
            found.last = None;
            return true;
        }
        if found.reads_build {
            if let Some(switch) = trimmed.strip_prefix("Switch: ") {
                found.note_on_last(format!("switch: {switch}"), number);
                return true;
            }
            if ends_like_related_location(trimmed.as_bytes())
                && let Some((location, _)) = trimmed.split_once(" (Location of the symbol related to previous")
            {
                let location = relative_to(location.trim_end_matches(':'), &found.cwd);
                found.note_on_last(format!("related: {location}"), number);
                return true;
            }
        }
        match parse(trimmed).filter(|c| c.code.as_deref() != Some("TESTERROR")) {
            Some(canonical) => {
                add(canonical, found, number);
                true
            }
            None => false,
        }
    }
}

/// Whether a line may be one [`BuildLines`] reads, on its bytes: a severity before a colon, a
/// related location, a project's failure.
fn may_be_build_line(head: &Head<'_>) -> bool {
    let trimmed = head.unindented.trim_ascii_end();
    might_be_diagnostic(trimmed) || ends_like_related_location(trimmed) || says_failed_with(head.bytes)
}

/// Roslyn's `(Location of the symbol related to previous error)` lines.
fn ends_like_related_location(trimmed: &[u8]) -> bool {
    trimmed.ends_with(b"previous error)") || trimmed.ends_with(b"previous warning)")
}

/// Adds a canonical line's diagnostic, unless it is an indented repeat of the last one (a note
/// of it) or was seen before.
fn add(c: Canonical, found: &mut Found, number: u64) {
    if c.indented
        && let Some(last) = &found.last
        && last.origin == c.origin
        && last.code == c.code
        && last.severity == c.severity
    {
        found.note_on_last(c.message, number);
        return;
    }
    if c.severity == Severity::Error {
        let project =
            [Some(c.origin.as_str()), c.project.as_deref()].into_iter().flatten().find(|p| is_project_file(p));
        if let Some(project) = project {
            found.failed_projects.insert(file_stem(project).to_ascii_lowercase());
        }
    }
    if !found.reads_build {
        return;
    }
    let mut d = Diagnostic::new(c.severity, c.message);
    if !c.origin.is_empty() {
        d = d.with_location(relative_to(&c.origin, &found.cwd), c.line, c.column);
    }
    d.end_line = c.end_line;
    d.end_column = c.end_column;
    let code = c.code.clone();
    d.code = c.code;
    d = d.with_log_range(number, number);
    if let Some(help) = c.help {
        d.notes.push(clip(&help, MAX_TEXT).into_owned());
    }
    // When the file is a tool or an SDK .targets file, the project is the only pointer to the
    // culprit.
    let file_is_not_source = !is_project_file(&c.origin)
        && (c.line.is_none() || c.origin.ends_with(".targets") || c.origin.ends_with(".props"));
    if let Some(project) = c.project.filter(|p| file_is_not_source && is_project_file(p)) {
        let project = relative_to(&project, &found.cwd);
        d.notes.push(format!("project: {}", clip(&project, MAX_TEXT)));
    }
    let added = found.add_build(d);
    found.last = Some(LastDiagnostic { origin: c.origin, code, severity: c.severity, added });
}

/// Parses one line (leading blanks and CI prefixes already removed).
pub fn parse(text: &str) -> Option<Canonical> {
    if (text.starts_with("error") || text.starts_with("warning"))
        && let Some(c) = WITHOUT_ORIGIN.captures(text)
    {
        return Some(build(String::new(), None, &c["sev"], c.name("code").map(|m| m.as_str()), &c["msg"]));
    }
    let c = WITH_ORIGIN.captures(text)?;
    let (origin, location) = split_origin(&c["origin"]);
    if !plausible_origin(origin, location.is_some()) {
        return None;
    }
    Some(build(origin.to_string(), location, &c["sev"], c.name("code").map(|m| m.as_str()), &c["msg"]))
}

fn build(origin: String, location: Option<[Option<u32>; 4]>, sev: &str, code: Option<&str>, raw: &str) -> Canonical {
    let raw = raw.strip_prefix(' ').unwrap_or(raw);
    let indented = raw.starts_with([' ', '\t']);
    let (message, project) = split_project_suffix(raw.trim());
    let (message, help) = split_help_link(message);
    let [line, column, end_line, end_column] = location.unwrap_or_default();
    // A line cut short after the colon still says what kind of problem it was.
    let message = match message {
        "" => code.map_or_else(|| sev.to_string(), |code| format!("{sev} {code}")),
        message => clip(message, MAX_TEXT).into_owned(),
    };
    Canonical {
        severity: if sev == "error" { Severity::Error } else { Severity::Warning },
        origin,
        line,
        column,
        end_line,
        end_column,
        code: code.map(str::to_string),
        message,
        project: project.map(str::to_string),
        help: help.map(str::to_string),
        indented,
    }
}

/// `File.cs(12,5)` → (`File.cs`, [12, 5, -, -]); also `(12)`, `(12,5,12,9)` and `(12-14)`.
fn split_origin(origin: &str) -> (&str, Option<[Option<u32>; 4]>) {
    let origin = origin.trim();
    let Some(inner) = origin.strip_suffix(')') else {
        return (origin, None);
    };
    let Some(open) = inner.rfind('(') else {
        return (origin, None);
    };
    let numbers = &inner[open + 1..];
    let file = inner[..open].trim_end();
    if file.is_empty() {
        return (origin, None);
    }
    let mut out = [None; 4];
    if let Some((a, b)) = numbers.split_once('-') {
        match (a.parse(), b.parse()) {
            (Ok(a), Ok(b)) => {
                out[0] = Some(a);
                out[2] = Some(b);
            }
            _ => return (origin, None),
        }
        return (file, Some(out));
    }
    for (i, part) in numbers.split(',').enumerate() {
        match (i, part.trim().parse::<u32>()) {
            (0..=3, Ok(n)) => out[i] = Some(n),
            _ => return (origin, None),
        }
    }
    (file, Some(out))
}

/// Origins are files or tool names; anything else (`Expected: error X1: y` inside test output)
/// is prose that merely looks like a diagnostic.
fn plausible_origin(origin: &str, has_location: bool) -> bool {
    if origin.is_empty() || origin.contains(": ") {
        return false;
    }
    has_location
        || origin.contains(['/', '\\', '.'])
        || origin.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

/// Splits MSBuild's ` [/abs/App.csproj]` / ` [App.csproj::TargetFramework=net8.0]` / ` [X.sln]`
/// suffix off a message. Brackets that are part of the message (`[ Nearest version: 8.5.2 ]`)
/// stay.
pub fn split_project_suffix(message: &str) -> (&str, Option<&str>) {
    let Some(body) = message.strip_suffix(']') else {
        return (message, None);
    };
    let Some(open) = body.rfind(" [").or_else(|| body.starts_with('[').then_some(0)) else {
        return (message, None);
    };
    let inner = body[open..].trim_start().trim_start_matches('[');
    let project = inner.split("::").next().unwrap_or(inner).trim();
    let lower = project.to_ascii_lowercase();
    let is_project =
        is_project_file(project) || lower.ends_with(".sln") || lower.ends_with(".slnx") || lower.ends_with(".slnf");
    if is_project { (body[..open].trim_end(), Some(project)) } else { (message, None) }
}

/// Splits the `(https://learn.microsoft.com/…)` help link analyzers put at the end of a message.
fn split_help_link(message: &str) -> (&str, Option<&str>) {
    if let Some(body) = message.strip_suffix(')')
        && let Some(open) = body.rfind(" (http")
    {
        let url = &body[open + 2..];
        if !url.contains(' ') {
            return (body[..open].trim_end(), Some(url));
        }
    }
    (message, None)
}

/// The Terminal Logger's per-project line, `  Inventory.Api failed with 2 error(s) (0.9s)` or
/// `  Lib net8.0 failed with 1 error(s)`, gives the project that failed to build. Test projects
/// whose tests failed (`  Lib.Tests test failed with …`) and MTP's assembly lines (paths) are not
/// build failures.
pub fn terminal_logger_failed_project(line: &str) -> Option<&str> {
    // Every indented line comes here: a look at its first words rules out most before it is split.
    let bytes = line.as_bytes();
    if !says_failed_with(bytes) {
        return None;
    }
    let mut words = line[2..].splitn(5, ' ');
    let mut next = || words.next().unwrap_or("");
    let (project, second, third, fourth) = (next(), next(), next(), next());
    let header = (second == "failed" && third == "with") || (third == "failed" && fourth == "with" && second != "test");
    (header && !project.contains(['/', '\\'])).then_some(project)
}

/// True when `line` is indented as the Terminal Logger's per-project lines: two blanks exactly.
pub fn indented_as_project(line: &[u8]) -> bool {
    line.starts_with(b"  ") && line.get(2) != Some(&b' ')
}

/// True when `line` has `failed with` where the Terminal Logger's per-project line has it:
/// indented by two blanks, after one or two words. Only the first two blanks after the
/// indentation are looked at, not every `f` of the line.
pub fn says_failed_with(line: &[u8]) -> bool {
    indented_as_project(line)
        && memchr::memchr_iter(b' ', &line[2..]).take(2).any(|blank| line[2 + blank + 1..].starts_with(b"failed with"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roslyn_error_with_project_suffix() {
        let d = parse("/src/Inv/Program.cs(12,36): error CS0103: The name 'x' does not exist in the current context [/src/Inv/Inv.csproj]").unwrap();
        assert_eq!(d.severity, Severity::Error);
        assert_eq!(d.origin, "/src/Inv/Program.cs");
        assert_eq!((d.line, d.column), (Some(12), Some(36)));
        assert_eq!(d.code.as_deref(), Some("CS0103"));
        assert_eq!(d.message, "The name 'x' does not exist in the current context");
        assert_eq!(d.project.as_deref(), Some("/src/Inv/Inv.csproj"));
    }

    #[test]
    fn windows_paths_with_spaces_and_target_framework_suffix() {
        let d = parse(r"C:\Program Files\dotnet\sdk\8.0.404\Microsoft.Common.CurrentVersion.targets(4895,5): warning MSB3026: Could not copy. [D:\w\Api\Api.csproj::TargetFramework=net8.0]").unwrap();
        assert_eq!(d.origin, r"C:\Program Files\dotnet\sdk\8.0.404\Microsoft.Common.CurrentVersion.targets");
        assert_eq!(d.line, Some(4895));
        assert_eq!(d.code.as_deref(), Some("MSB3026"));
        assert_eq!(d.message, "Could not copy.");
        assert_eq!(d.project.as_deref(), Some(r"D:\w\Api\Api.csproj"));
    }

    #[test]
    fn project_level_nuget_and_subcategory_and_tools() {
        let d = parse(r"C:\w\Vuln.csproj : warning NU1903: Package 'X' 9.0.1 has a known high severity vulnerability, https://github.com/advisories/GHSA-1").unwrap();
        assert_eq!((d.origin.as_str(), d.line), (r"C:\w\Vuln.csproj", None));
        assert!(d.message.ends_with("GHSA-1"));
        let d = parse(r"C:\w\W.sln : Solution file error MSB4249: Unable to build website project").unwrap();
        assert_eq!((d.origin.as_str(), d.code.as_deref()), (r"C:\w\W.sln", Some("MSB4249")));
        let d = parse("CSC : error SA0001: XML comment analysis is disabled [/p/Lib.csproj]").unwrap();
        assert_eq!((d.origin.as_str(), d.project.as_deref()), ("CSC", Some("/p/Lib.csproj")));
        let d = parse("MSBUILD: error MSBUILD0000: Project file 'a.csproj' not found.").unwrap();
        assert_eq!((d.origin.as_str(), d.code.as_deref()), ("MSBUILD", Some("MSBUILD0000")));
        let d = parse("error NETSDK1013: The TargetFramework value 'net9' was not recognized.").unwrap();
        assert_eq!((d.origin.as_str(), d.code.as_deref()), ("", Some("NETSDK1013")));
    }

    #[test]
    fn nuget_continuations_are_flagged() {
        let d = parse("/p/App.csproj : error NU1605:  App -> Pkg 2.0 -> Dep (>= 2.0)  [/p/App.sln]").unwrap();
        assert!(d.indented);
        assert_eq!(d.project.as_deref(), Some("/p/App.sln"));
        let d = parse(
            "/p/App.csproj : error NU1102: Unable to find package X with version (>= 9.0.0) [ Nearest version: 8.5.2 ]",
        )
        .unwrap();
        assert!(!d.indented);
        assert!(d.message.ends_with("[ Nearest version: 8.5.2 ]"));
        assert_eq!(d.project, None);
    }

    #[test]
    fn help_links_and_mono_quotes() {
        let d = parse(
            "A.cs(5,17): warning CA1822: Member 'M' can be static (https://learn.microsoft.com/ca1822) [/p/A.csproj]",
        )
        .unwrap();
        assert_eq!(d.message, "Member 'M' can be static");
        assert_eq!(d.help.as_deref(), Some("https://learn.microsoft.com/ca1822"));
        let d = parse("src/Item.cs(19,29): error CS1061: Type `string' does not contain a definition for `Lenght'")
            .unwrap();
        assert_eq!((d.origin.as_str(), d.line, d.column), ("src/Item.cs", Some(19), Some(29)));
    }

    #[test]
    fn locations_in_every_shape() {
        assert_eq!(parse("A.cs(7): error TESTERROR: ").unwrap().line, Some(7));
        let d = parse("A.cs(3,4,3,9): warning X1: m").unwrap();
        assert_eq!((d.line, d.column, d.end_line, d.end_column), (Some(3), Some(4), Some(3), Some(9)));
        let d = parse("A.cs(3-5): warning X1: m").unwrap();
        assert_eq!((d.line, d.end_line), (Some(3), Some(5)));
    }

    #[test]
    fn prose_is_not_a_diagnostic() {
        assert_eq!(parse("src/Item.cs(8,23): (Location of the symbol related to previous error)"), None);
        assert_eq!(parse("Expected: error X1: y"), None);
        assert_eq!(parse("  Error Message:"), None);
        assert_eq!(parse("Build succeeded with 1 warning(s) in 2.0s"), None);
        assert_eq!(parse("    0 Warning(s)"), None);
    }

    #[test]
    fn cheap_check_matches_what_the_regex_needs() {
        assert!(might_be_diagnostic(b"A.cs(1,2): error CS1: x"));
        assert!(might_be_diagnostic(b"EXEC : error : x"));
        assert!(might_be_diagnostic(b"X.sln : Solution file warning MSB1: x"));
        assert!(!might_be_diagnostic(b"  Restored /p/App.csproj (no errors or warnings)"));
        assert!(!might_be_diagnostic(b"info: some error text mentioned: warning count 3"));
        assert!(!might_be_diagnostic(b"Total errors: 3"));
        assert!(!might_be_diagnostic(b"trailing error"));
        assert!(might_be_diagnostic(b"error NETSDK1013: x"));
        assert!(!might_be_diagnostic(b"error: no origin and no code"));
        assert!(!might_be_diagnostic(b"Build error: no colon before the word"));
        // The check may let through what the regexes refuse, never one they read.
        for line in [
            "error NETSDK1013: The TargetFramework value 'net9' was not recognized.",
            "errorlog.txt(3,4): error CS1: x",
            "MSBUILD: error MSBUILD0000: Project file 'a.csproj' not found.",
            "CSC : error SA0001: XML comment analysis is disabled [/p/Lib.csproj]",
            r"C:\w\W.sln : Solution file error MSB4249: Unable to build website project",
            "/src/A.cs(3,5):\terror\tCS1002: ; expected",
            "warning CS1: x",
            "Program.cs(1,1): warning : empty code",
        ] {
            assert!(parse(line).is_some() && might_be_diagnostic(line.as_bytes()), "{line}");
        }
    }

    #[test]
    fn terminal_logger_project_lines() {
        assert_eq!(
            terminal_logger_failed_project("  Inventory.Api failed with 2 error(s) and 1 warning(s) (0.9s)"),
            Some("Inventory.Api")
        );
        assert_eq!(terminal_logger_failed_project("  Lib net8.0 failed with 1 error(s) (0.2s)"), Some("Lib"));
        assert_eq!(terminal_logger_failed_project("  Lib.Tests test failed with 1 error(s) (0.5s)"), None);
        assert_eq!(terminal_logger_failed_project("/r/bin/T.dll (net10.0|x64) failed with 1 error(s)"), None);
        assert_eq!(terminal_logger_failed_project("  Lib  failed with 1 error(s)"), Some("Lib"));
        let says = |line: &str| says_failed_with(line.as_bytes());
        assert!(says("  Lib net8.0 failed with 1 error(s)"));
        assert!(says("  Lib  failed with 1 error(s)"));
        assert!(!says("  Lib net8.0 x failed with 1 error(s)"));
        assert!(!says("   Lib failed with 1 error(s)"));
        assert!(!says("  failed with 1 error(s)"));
    }
}
