//! `buildvise exec`: runs a tool and prints what an agent would get. On a terminal a live
//! progress line goes to stderr; Ctrl-C, SIGTERM and SIGHUP end the whole process tree and keep
//! the run.

use super::{Cli, DetailArgs, app, for_terminal, json_text, print_text};
use buildvise_app::{Access, AnsweredCall, CancelToken, Config, ExecCall, Progress, RunStatus, Sent, Surface};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The tool, e.g. cargo.test (see `buildvise list`).
    tool: String,
    /// Directory to run in (default: the current one).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Seconds before the run is killed (default: the tool's, else config, else 600).
    #[arg(long, value_name = "S")]
    timeout: Option<u64>,
    /// Run a tool that changes the workspace (npm.install).
    #[arg(long)]
    confirm: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    #[arg(long, value_name = "NAME[=FILE]", value_parser = super::report_arg, help = super::FORMAT_HELP, conflicts_with = "json")]
    format: Vec<super::ReportArg>,
    #[command(flatten)]
    detail: DetailArgs,
    #[command(flatten)]
    sandbox: super::SandboxArgs,
    /// Arguments for the tool.
    #[arg(last = true, value_name = "ARGS")]
    args: Vec<String>,
}

/// Columns of the status line: a terminal's usual width, so that it never wraps (a wrapped line
/// would leave its first rows behind at each redraw).
const STATUS_WIDTH: usize = 100;
/// How long, after the answer is out, the process waits for its retention pass to end.
const RETENTION_PATIENCE: Duration = Duration::from_secs(2);

/// Exit code when the run timed out, as `timeout(1)` uses.
const EXIT_TIMEOUT: i32 = 124;
/// Exit code when the run was cancelled (128 + SIGINT).
const EXIT_CANCELLED: i32 = 130;

pub fn run(cli: &Cli, args: &Args) -> anyhow::Result<i32> {
    let mut config = Config::load()?;
    args.sandbox.apply(&mut config);
    let app = app(cli, config, true)?;
    let current = std::env::current_dir()?;
    let call = ExecCall {
        tool: args.tool.clone(),
        args: args.args.clone(),
        cwd: args.cwd.as_ref().map_or_else(|| current.clone(), |dir| current.join(dir)),
        timeout_secs: args.timeout,
        confirm: args.confirm,
        detail: args.detail.detail.into(),
        max_lines: args.detail.max_lines()?,
    };

    let cancel = CancelToken::default();
    let on_signal = cancel.clone();
    // If a handler is already installed (tests calling in-process), the signals keep their default.
    let _ = ctrlc::set_handler(move || on_signal.cancel());

    let live = std::io::stderr().is_terminal() && !args.json;
    let started = Instant::now();
    let mut shown = String::new();
    // One status line, redrawn in place, and only when it reads differently: a redraw per report
    // would flicker twice a second for nothing.
    let mut report = |p: &Progress| {
        if !live {
            return;
        }
        let frame = status_line(p, started.elapsed(), STATUS_WIDTH);
        if frame != shown {
            let _ = write!(std::io::stderr(), "\r\x1b[2K{frame}");
            shown = frame;
        }
    };
    let answer = app.exec(&Access::anywhere(), &call, &cancel, Surface::Cli, &mut report);
    if live {
        let _ = write!(std::io::stderr(), "\r\x1b[2K");
    }
    let answer = answer?;
    // A report printed instead of the answer is no answer to an agent: `gain` does not count it.
    let reported = !args.format.is_empty() && super::write_reports(&app, &app.stored(&answer.run_id)?, &args.format)?;
    if !reported {
        if args.json {
            let json = json_text(&answer.rendered.structured)?;
            print_text(&json)?;
            app.sent(&answer.run_id, AnsweredCall::Exec, Sent::CliJson(&json));
        } else {
            print_text(&for_terminal(&answer.rendered.text))?;
            app.sent(&answer.run_id, AnsweredCall::Exec, Sent::Cli(&answer.rendered.text));
        }
    }
    app.settle_background(RETENTION_PATIENCE);
    Ok(match answer.status {
        RunStatus::TimedOut => EXIT_TIMEOUT,
        RunStatus::Cancelled => EXIT_CANCELLED,
        // As a shell says a command was killed by signal N.
        RunStatus::Killed => answer.signal.map_or(1, |signal| 128 + signal),
        _ => answer.exit_code.unwrap_or(1),
    })
}

/// The status line at `elapsed`: `1m05s · 1532 lines, 2 errors, 40/120 tests: Compiling serde`,
/// at most `width` characters. Whole seconds, so that time alone changes it once a second.
fn status_line(progress: &Progress, elapsed: Duration, width: usize) -> String {
    let s = elapsed.as_secs();
    let time = match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m{:02}s", s / 3600, s / 60 % 60, s % 60),
    };
    // A tab or a carriage return in the tool's last line would move the cursor and break the redraw.
    let line: Vec<char> =
        format!("{time} · {}", progress.describe()).chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    if line.len() <= width {
        return line.into_iter().collect();
    }
    // The activity comes last, so a cut takes it and leaves time and counts.
    let mut cut: String = line[..width.saturating_sub(1)].iter().collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_line_frames() {
        let compiling = Progress { lines: 12, activity: "Compiling serde v1.0.219".into(), ..Progress::default() };
        let testing = Progress {
            lines: 1532,
            errors: 2,
            warnings: 5,
            tests: 40,
            tests_total: Some(120),
            activity: "test tests::parses_a_long_name ... \tok".into(),
            queued: None,
        };
        let frames = [
            (Progress { queued: Some((1, 4)), ..Progress::default() }, 0, STATUS_WIDTH),
            (Progress::default(), 0, STATUS_WIDTH),
            (compiling.clone(), 999, STATUS_WIDTH),
            (compiling.clone(), 1_000, STATUS_WIDTH),
            (Progress { lines: 1, errors: 1, tests: 1, ..compiling }, 59_999, STATUS_WIDTH),
            (testing.clone(), 65_000, STATUS_WIDTH),
            (testing.clone(), 65_000, 40),
            (testing, 3_725_000, STATUS_WIDTH),
        ];
        let shown: Vec<String> = frames
            .iter()
            .map(|(p, ms, width)| {
                format!("{:>9}ms w{width:<3} |{}|", ms, status_line(p, Duration::from_millis(*ms), *width))
            })
            .collect();
        insta::assert_snapshot!(shown.join("\n"));
    }
}
