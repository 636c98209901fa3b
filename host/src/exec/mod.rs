//! The engine behind `exec` and `parse`: request → plan (plugin) → run (host) → parse (plugin) →
//! stored [`RunResult`]. Shared by the CLI and the MCP server, which differ only in how they
//! build requests and render answers.

mod access;
mod sink;

pub use access::{Access, AccessError};
pub use sink::Progress;

use crate::config::Config;
use crate::outcome::RunResult;
use crate::plugins::{Registry, Tool};
use crate::run::{self, CancelToken, Ending, RunError};
use crate::store::{ActiveRun, LogLine, LogWriter, RunMeta, RunStatus, Store, StoreError, now_ms};
use buildvise_plugin_api::{ParseContext, PlanRequest, RunEnd, Stream, strip_ansi};
use sink::RunSink;
use std::path::{Path, PathBuf};

/// One `exec` call, as a surface received it.
#[derive(Debug, Clone, Default)]
pub struct ExecRequest {
    pub tool: String,
    pub args: Vec<String>,
    /// Absolute or relative to the process's cwd.
    pub cwd: PathBuf,
    pub timeout_secs: Option<u64>,
    pub confirm: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error(transparent)]
    Access(#[from] AccessError),
    /// A tool that changes the workspace, called without consent; says exactly what would run.
    #[error(
        "{tool} changes the workspace, so nothing ran; to run `{command}`, call again with confirm: true (CLI: --confirm)"
    )]
    NeedsConfirm { tool: String, command: String },
    #[error("{tool}: {message}")]
    Plan { tool: String, message: String },
    #[error(transparent)]
    Run(#[from] RunError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}")]
    Config(String),
}

/// A finished run.
#[derive(Debug, Clone)]
pub struct Finished {
    pub meta: RunMeta,
    pub result: RunResult,
}

/// Plugins and the store. What may run where is the caller's [`Access`], per call.
pub struct Engine {
    pub registry: Registry,
    pub store: Store,
}

impl Engine {
    /// Runs one request to its end. `report` gets progress about twice a second.
    pub fn exec(
        &self,
        access: &Access,
        req: &ExecRequest,
        cancel: &CancelToken,
        report: &mut dyn FnMut(&Progress),
    ) -> Result<Finished, ExecError> {
        let cwd = access.check_cwd(&req.cwd)?;
        let config = Config::load(&cwd).map_err(|e| ExecError::Config(e.to_string()))?;
        let tool = access.tool(&self.registry, &req.tool, &config)?;
        if tool.spec.mutates_workspace && !req.confirm && !config.allow_mutating {
            let plan = self.plan(tool, req, &cwd, Path::new("<run artifacts>"))?;
            let command = shell_words(std::iter::once(&plan.program).chain(&plan.args));
            return Err(ExecError::NeedsConfirm { tool: req.tool.clone(), command });
        }

        let run = self.store.create_run()?;
        // Until the process has started, a failure leaves nothing behind: there is nothing to read.
        let (plan, parser, log) = match self.prepare(&run, tool, req, &cwd) {
            Ok(prepared) => prepared,
            Err(e) => {
                discard(&run);
                return Err(e);
            }
        };
        let mut meta = RunMeta::starting(&run.id, &req.tool, &plan.program, &plan.args, &cwd.display().to_string());
        if let Err(e) = self.store.write_meta(&run.dir, &meta) {
            discard(&run);
            return Err(e.into());
        }

        let mut sink = RunSink::new(log, parser, report);
        let command = run::Command {
            program: plan.program.clone(),
            args: plan.args.clone(),
            env: plan.env.clone().into_iter().collect(),
            cwd: cwd.clone(),
        };
        let timeout = config.timeout_for(req.timeout_secs, tool.spec.timeout_secs);
        meta.timeout_secs = Some(timeout.as_secs());
        // Retention walks every stored run: it goes on beside the command, not before it.
        let ran = std::thread::scope(|scope| {
            scope.spawn(|| self.store.prune(&config.retention));
            run::run(&command, timeout, cancel, &mut sink)
        });
        let ending = match ran {
            Ok(ending) => ending,
            Err(e) => {
                discard(&run);
                return Err(e.into());
            }
        };

        let RunSink { mut log, parser, write_error, .. } = sink;
        let flushed = log.flush();
        meta.lines = log.lines();
        meta.bytes = log.bytes();
        meta.ended_ms = Some(now_ms());
        let (status, exit_code) = match ending {
            Ending::Exited(code) => (RunStatus::Exited, Some(code)),
            Ending::Signalled(_) => (RunStatus::Killed, None),
            Ending::TimedOut => (RunStatus::TimedOut, None),
            Ending::Cancelled => (RunStatus::Cancelled, None),
        };
        meta.status = status;
        meta.exit_code = exit_code;
        if let Some(e) = write_error.or(flushed.err()) {
            meta.error = Some(format!("the log could not be stored completely: {e}"));
        }
        let end = RunEnd {
            exit_code,
            timed_out: ending == Ending::TimedOut,
            cancelled: ending == Ending::Cancelled,
            artifacts: plan.artifacts.iter().filter(|a| Path::new(a).is_file()).cloned().collect(),
        };
        let result = RunResult::from_parse(parser.finish(&end), exit_code);
        self.store.write_result(&run.dir, &result)?;
        self.store.write_meta(&run.dir, &meta)?;
        Ok(Finished { meta, result })
    }

    /// The plan, the parser and the log writer for a run about to start.
    fn prepare(
        &self,
        run: &ActiveRun,
        tool: &Tool,
        req: &ExecRequest,
        cwd: &Path,
    ) -> Result<(buildvise_plugin_api::CommandPlan, crate::plugins::ParserHandle, LogWriter), ExecError> {
        let plan = self.plan(tool, req, cwd, &run.artifact_dir())?;
        let context = ParseContext { tool: req.tool.clone(), args: req.args.clone(), cwd: cwd.display().to_string() };
        let parser =
            tool.plugin.parser(&context).map_err(|message| ExecError::Plan { tool: req.tool.clone(), message })?;
        Ok((plan, parser, LogWriter::create(&run.dir)?))
    }

    fn plan(
        &self,
        tool: &Tool,
        req: &ExecRequest,
        cwd: &Path,
        artifact_dir: &Path,
    ) -> Result<buildvise_plugin_api::CommandPlan, ExecError> {
        let request = PlanRequest {
            tool: req.tool.clone(),
            args: req.args.clone(),
            cwd: cwd.display().to_string(),
            artifact_dir: artifact_dir.display().to_string(),
        };
        tool.plugin.plan(&request).map_err(|message| ExecError::Plan { tool: req.tool.clone(), message })
    }
}

/// Removes a run that never started.
fn discard(run: &ActiveRun) {
    let _ = std::fs::remove_dir_all(&run.dir);
}

/// A stored run that has ended, as exec returned it.
pub fn stored(store: &Store, run_id: &str) -> Result<Finished, StoreError> {
    let meta = store.read_meta(run_id)?;
    let result = store.read_result::<RunResult>(run_id)?.ok_or_else(|| StoreError::StillRunning(run_id.to_string()))?;
    Ok(Finished { meta, result })
}

/// A saved log to parse without running anything (`buildvise parse`).
pub enum SavedLog {
    /// Both streams interleaved; every line is tagged stdout.
    Combined(PathBuf),
    /// The streams apart: all of stdout is fed, then all of stderr.
    Streams { stdout: PathBuf, stderr: PathBuf },
}

/// Parses a saved log through a tool's parser, as `exec` would have.
/// What `parse_saved` made of a saved log: the result, the last lines (as many as asked for), and
/// how many lines the log had.
pub struct Parsed {
    pub result: RunResult,
    pub tail: Vec<LogLine>,
    pub lines: u64,
}

/// Longest tail line kept: the answer clips lines far shorter, and a flood of huge lines must not
/// grow memory.
const KEPT_LINE_BYTES: usize = 4096;

pub fn parse_saved(
    registry: &Registry,
    tool: &str,
    log: &SavedLog,
    exit_code: i32,
    cwd: &Path,
    artifacts: &[PathBuf],
    keep_tail: usize,
) -> anyhow::Result<Parsed> {
    let tool = registry.get(tool).ok_or_else(|| {
        let names = registry.closest(tool, |_| true);
        anyhow::anyhow!("unknown tool {tool:?}{}", did_you_mean(&names))
    })?;
    let context = ParseContext { tool: tool.spec.name.clone(), args: Vec::new(), cwd: cwd.display().to_string() };
    let mut parser = tool.plugin.parser(&context).map_err(anyhow::Error::msg)?;
    let mut number = 0;
    let mut tail: std::collections::VecDeque<LogLine> = std::collections::VecDeque::with_capacity(keep_tail.min(1024));
    // Read line by line: a saved log can be far larger than memory should grow.
    let mut feed = |path: &Path, stream: Stream| -> anyhow::Result<()> {
        use std::io::BufRead;
        let file = std::fs::File::open(path).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
        let mut reader = std::io::BufReader::with_capacity(256 * 1024, file);
        let mut line = Vec::new();
        loop {
            line.clear();
            let n = reader
                .read_until(b'\n', &mut line)
                .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
            if n == 0 {
                return Ok(());
            }
            number += 1;
            let body = line.strip_suffix(b"\n").unwrap_or(&line);
            parser.feed(stream, number, &strip_ansi(&body[..body.len().min(sink::PARSE_LIMIT)]));
            if keep_tail > 0 {
                if tail.len() == keep_tail {
                    tail.pop_front();
                }
                tail.push_back(LogLine { number, stream, bytes: body[..body.len().min(KEPT_LINE_BYTES)].to_vec() });
            }
        }
    };
    match log {
        SavedLog::Combined(path) => feed(path, Stream::Stdout)?,
        SavedLog::Streams { stdout, stderr } => {
            feed(stdout, Stream::Stdout)?;
            feed(stderr, Stream::Stderr)?;
        }
    }
    let end = RunEnd {
        exit_code: Some(exit_code),
        artifacts: artifacts
            .iter()
            .map(|a| std::path::absolute(a).unwrap_or_else(|_| a.clone()).display().to_string())
            .collect(),
        ..RunEnd::default()
    };
    let result = RunResult::from_parse(parser.finish(&end), Some(exit_code));
    Ok(Parsed { result, tail: tail.into(), lines: number })
}

/// ` (did you mean a or b?)` or nothing.
pub fn did_you_mean(names: &[String]) -> String {
    if names.is_empty() { String::new() } else { format!(" (did you mean {}?)", names.join(" or ")) }
}

/// Quotes words for display the way a POSIX shell would need them.
pub fn shell_words<'a>(words: impl IntoIterator<Item = &'a String>) -> String {
    words
        .into_iter()
        .map(|w| {
            if !w.is_empty() && w.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./=:@,+%".contains(&b)) {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
