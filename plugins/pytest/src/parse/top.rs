//! The lines before the first banner, and after the final one: the session header, pytest's own
//! errors, and the progress lines. Each kind is a recogniser, registered in [`recognisers`] in
//! the order a line is offered to them.

use super::text::{clip, leading_exception, python_frame};
use super::traceback::{self, Location};
use super::{Found, Kind, Section, stop};
use buildvise_plugin_api::{Diagnostic, Head, Recogniser, Recognisers, Text, Wants, occurrences, relative_to};
use memchr::memmem::Finder;
use std::sync::LazyLock;

/// Searchers for words looked for in every line of the progress region, built once.
static USAGE_ERROR: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(": error: "));
static COLLECTED: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new("collected "));

const STARTUP: [&str; 2] = ["ImportError while loading conftest ", "Error while loading plugin \""];
const ROOTDIR: &str = "rootdir: ";
const INTERNAL_ERROR: &str = "INTERNALERROR> ";
const ERROR: &str = "ERROR: ";
const NO_PYTEST: &str = ": No module named pytest";

/// The progress region's recognisers, for one stream.
pub(super) fn recognisers() -> Recognisers<Found> {
    Recognisers::new()
        .add(Startup::default())
        .add(Rootdir)
        .add(InternalError)
        .add(PytestError)
        .add(NoPytest)
        .add(UsageError)
        .add(Collected)
        .add(ProgressLines)
}

/// A conftest or a `-p` plugin that raises at import: pytest prints one of [`STARTUP`], then the
/// traceback in the short style (whatever the exception, the first says `ImportError`), and never
/// starts. The traceback is read to the next banner.
#[derive(Default)]
struct Startup {
    section: Option<Section>,
}

impl Recogniser<Found> for Startup {
    fn wants(&self) -> Wants {
        Wants::starts(&STARTUP)
    }

    fn is_open(&self) -> bool {
        self.section.is_some()
    }

    fn feed(&mut self, line: &Text<'_>, found: &mut Found) -> bool {
        let section = self.section.get_or_insert_with(|| {
            found.startup_failed = true;
            Section::new(Kind::Startup, None, line.number)
        });
        section.end = line.number;
        section.tb.feed(line.text);
        true
    }

    fn flush(&mut self, found: &mut Found) {
        if let Some(section) = self.section.take() {
            found.sections.push(section.finish());
        }
    }
}

/// `rootdir: /p` (older pytest: `rootdir: /p, configfile: x, testpaths: y`).
struct Rootdir;

impl Recogniser<Found> for Rootdir {
    fn wants(&self) -> Wants {
        Wants::starts(&[ROOTDIR])
    }

    fn feed(&mut self, line: &Text<'_>, found: &mut Found) -> bool {
        let Some(dir) = line.text.strip_prefix(ROOTDIR) else { return false };
        let dir = dir.split(", ").next().unwrap_or(dir).trim();
        // A log of several sessions repeats it: kept, not allocated again.
        if found.rootdir.as_deref() != Some(dir) {
            found.rootdir = Some(dir.to_string());
        }
        true
    }
}

/// pytest's own crash: `INTERNALERROR> ` lines, the last `Type: message` of which says what.
/// The frames are kept so that the error can point at the project's own code (a conftest hook)
/// once the project's place is known.
struct InternalError;

impl Recogniser<Found> for InternalError {
    fn wants(&self) -> Wants {
        Wants::starts(&[INTERNAL_ERROR])
    }

    fn feed(&mut self, line: &Text<'_>, found: &mut Found) -> bool {
        let Some(rest) = line.text.strip_prefix(INTERNAL_ERROR) else { return false };
        let n = line.number;
        if rest.starts_with("Traceback (most recent call last)") {
            // A chained exception starts a new traceback: the last one is the one that ended pytest.
            found.internal_frames.clear();
        } else if rest.starts_with("  File \"")
            && let Some((file, line)) = python_frame(rest)
        {
            if found.internal_frames.len() == traceback::MAX_FRAMES {
                found.internal_frames.remove(0);
            }
            found.internal_frames.push(Location { file: file.to_string(), line });
        }
        let last = found.errors.last_mut().filter(|d| d.code.as_deref() == Some("INTERNALERROR"));
        let headline = leading_exception(rest).map(|_| clip(rest));
        match (last, headline) {
            (Some(d), headline) => {
                if let Some(h) = headline {
                    d.message = h;
                }
                if let Some(range) = &mut d.log_range {
                    range.end = n;
                }
            }
            (None, headline) => {
                let d = Diagnostic::error(headline.unwrap_or_else(|| "pytest internal error".to_string()));
                found.errors.push(d.with_code("INTERNALERROR").with_log_range(n, n));
            }
        }
        true
    }
}

/// Turns an internal error that is a warning turned into an exception (`-W error` while a plugin
/// warns as pytest starts) into that warning: its class is the code, as the warnings summary would
/// have named it, and its text the message. True when it was one.
pub(super) fn warning_turned_error(d: &mut Diagnostic) -> bool {
    let Some(class) = leading_exception(&d.message).filter(|class| class.ends_with("Warning")) else { return false };
    let class = class.to_string();
    if let Some((_, text)) = d.message.split_once(": ")
        && !text.trim().is_empty()
    {
        d.message = text.trim().to_string();
    }
    d.code = Some(class);
    true
}

/// Where a warning turned into an internal error was issued: the innermost frame that is not
/// pytest's or pluggy's own, the plugin's call to `warnings.warn`.
pub(super) fn issuer(frames: &[Location]) -> Option<&Location> {
    frames.iter().rev().find(|frame| !["/_pytest/", "/pluggy/"].iter().any(|own| frame.file.contains(own)))
}

/// `ERROR: file or directory not found: x`, and pytest's other errors before a session.
struct PytestError;

impl Recogniser<Found> for PytestError {
    fn wants(&self) -> Wants {
        Wants::starts(&[ERROR])
    }

    fn feed(&mut self, line: &Text<'_>, found: &mut Found) -> bool {
        let Some(message) = line.text.strip_prefix(ERROR) else { return false };
        if !message.starts_with("usage:") {
            found.errors.push(Diagnostic::error(clip(message)).with_log_range(line.number, line.number));
        }
        true
    }
}

/// Python's `/p/.venv/bin/python: No module named pytest`.
struct NoPytest;

impl Recogniser<Found> for NoPytest {
    fn wants(&self) -> Wants {
        Wants::test(|head| head.bytes.ends_with(NO_PYTEST.as_bytes()))
    }

    fn feed(&mut self, line: &Text<'_>, found: &mut Found) -> bool {
        let Some(interpreter) = line.text.strip_suffix(NO_PYTEST) else { return false };
        // Python names the interpreter it ran, the one that needs pytest: shown as typed from the
        // project, so the fix can be pasted there.
        let shown = relative_to(interpreter, &found.cwd);
        let n = line.number;
        let mut d = Diagnostic::error("No module named pytest").with_code("ModuleNotFoundError").with_log_range(n, n);
        d.notes.push(clip(&format!(
            "pytest is not installed for {shown}; install it with `{shown} -m pip install pytest` and run again"
        )));
        found.errors.push(d);
        true
    }
}

/// `pytest: error: unrecognized arguments: --x`, as argparse prints it (never indented).
struct UsageError;

impl Recogniser<Found> for UsageError {
    fn wants(&self) -> Wants {
        Wants::test(|head| {
            !head.bytes.first().is_some_and(u8::is_ascii_whitespace)
                && occurrences(&USAGE_ERROR, head.bytes).next().is_some()
        })
    }

    fn feed(&mut self, line: &Text<'_>, found: &mut Found) -> bool {
        let t = line.text;
        let Some(at) = USAGE_ERROR.find(t.as_bytes()).filter(|&at| t[..at].contains("pytest")) else { return false };
        found
            .errors
            .push(Diagnostic::error(clip(&t[at + ": error: ".len()..])).with_log_range(line.number, line.number));
        true
    }
}

/// The header's `collected 7 items / 2 deselected`: how many tests will run.
struct Collected;

impl Recogniser<Found> for Collected {
    fn wants(&self) -> Wants {
        Wants::test(|head: &Head<'_>| occurrences(&COLLECTED, head.bytes).next().is_some())
    }

    fn feed(&mut self, line: &Text<'_>, found: &mut Found) -> bool {
        if found.collected.is_none() {
            found.collected = stop::collected(line.text);
        }
        false
    }
}

/// A progress line (`tests/t.py ..F.s [ 40%]`, `-v`'s one per test, xdist's `[gw1] …`): the
/// tests it finished, and the failure or error a `-v` one reports.
struct ProgressLines;

impl Recogniser<Found> for ProgressLines {
    fn wants(&self) -> Wants {
        // A line that ends with a character beyond ASCII is decoded: it may be whitespace, which
        // `summary::progress` trims.
        Wants::starts(&["[gw"]).or_test(|head| {
            let end = head.bytes.trim_ascii_end();
            end.ends_with(b"%]") || end.last().is_some_and(|b| !b.is_ascii())
        })
    }

    fn feed(&mut self, line: &Text<'_>, found: &mut Found) -> bool {
        super::progress_line(line.text, line.number, found);
        true
    }
}
