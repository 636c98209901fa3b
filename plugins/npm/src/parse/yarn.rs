//! Yarn's own lines. Classic (1.x, on stderr): `error MESSAGE` and `warning MESSAGE`, where
//! `error Command failed with exit code N.` only wraps a failing script; its `info Visit…`,
//! `yarn run v1.22.22` and `Done in 0.10s.` lines are bookkeeping. Berry (2 and later): `➤
//! YN0028: │ message` lines, one code over several lines for one report; `YN0000` is progress,
//! and a step that fails ends with `➤ YN0000: · Failed with errors`, after the report that
//! failed it. Without colours (which the plan turns off) nothing else tells its errors from its
//! warnings, so that last report is the error and the others are warnings. `Usage Error:` and
//! `Internal Error:` are berry's errors outside a step.

use crate::parse::sink::Sink;
use buildvise_plugin_api::{Diagnostic, LogRange, Recogniser, Text, Wants};

const BERRY: &str = "➤ YN";

#[derive(Default)]
pub struct Yarn {
    /// Berry's last report, held until the next one or the end says whether it failed the step.
    report: Option<(String, Diagnostic)>,
}

impl Recogniser<Sink> for Yarn {
    fn wants(&self) -> Wants {
        Wants::starts(&[
            "error ",
            "warning ",
            "info Visit ",
            "yarn run v",
            "yarn install v",
            "Done in ",
            BERRY,
            "Usage Error: ",
            "Internal Error: ",
        ])
    }

    fn feed(&mut self, ln: &Text<'_>, sink: &mut Sink) -> bool {
        let text = ln.text.trim_end();
        let one = |d: Diagnostic| d.with_log_range(ln.number, ln.number);
        if let Some(rest) = text.strip_prefix(BERRY) {
            return self.berry(rest, ln.number, sink);
        }
        if let Some(message) = text.strip_prefix("error ") {
            if !message.starts_with("Command failed with exit code ") {
                sink.push(one(Diagnostic::error(message)));
            }
            return true;
        }
        if let Some(message) = text.strip_prefix("warning ") {
            sink.push(one(Diagnostic::warning(message)));
            return true;
        }
        if let Some(message) = text.strip_prefix("Usage Error: ").or_else(|| text.strip_prefix("Internal Error: ")) {
            sink.push(one(Diagnostic::error(message)));
            return true;
        }
        // `yarn run v1.22.22`, `Done in 0.10s.`: a version or a time, not a sentence of output.
        let version_or_time = |rest: &str| rest.starts_with(|c: char| c.is_ascii_digit());
        text.starts_with("info Visit ")
            || text
                .strip_prefix("yarn run v")
                .or_else(|| text.strip_prefix("yarn install v"))
                .is_some_and(version_or_time)
            || text.strip_prefix("Done in ").is_some_and(version_or_time)
    }

    fn finish(&mut self, sink: &mut Sink) {
        self.end_report(sink, false);
    }
}

impl Yarn {
    /// `0028: │ text` (after `➤ YN`).
    fn berry(&mut self, rest: &str, number: u64, sink: &mut Sink) -> bool {
        let Some((code, message)) = rest.split_once(": ") else { return false };
        if code.len() != 4 || !code.bytes().all(|b| b.is_ascii_digit()) {
            return false;
        }
        // The step's tree: `┌ Resolution step`, `│ text`, `└ Completed`, `· Done`.
        let message = message.trim_start_matches(['┌', '│', '└', '·', ' ']).trim_end();
        if code == "0000" {
            if message.starts_with("Failed with errors") {
                self.end_report(sink, true);
            }
            return true;
        }
        let code = format!("YN{code}");
        match &mut self.report {
            Some((open, report)) if *open == code => {
                // A diff's lines (`+  version: 1.0.0`) show what changed; the sentence says why.
                if !message.is_empty() && !message.starts_with(['+', '-', '@']) {
                    report.message = message.to_string();
                }
                let start = report.log_range.map_or(number, |r| r.start);
                report.log_range = Some(LogRange::new(start, number));
            }
            _ => {
                self.end_report(sink, false);
                let report = Diagnostic::warning(message).with_code(code.clone()).with_log_range(number, number);
                self.report = Some((code, report));
            }
        }
        true
    }

    fn end_report(&mut self, sink: &mut Sink, failed: bool) {
        if let Some((_, mut report)) = self.report.take() {
            if failed {
                report.severity = buildvise_plugin_api::Severity::Error;
            }
            sink.push(report);
        }
    }
}
