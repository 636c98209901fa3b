//! `exec`: access → config → plan (plugin) → run (host) → parse (plugin, on its own thread) →
//! compare (with the command's previous run) → store → render.
//!
//! What the caller learns never depends on the store being healthy: when the disk is full, the
//! answer is still made from what was parsed, and says which directory to clear.

use super::sink::{Progress, RunSink};
use super::{App, AppError};
use buildvise_engine::access::{Access, Place};
use buildvise_engine::config::{Config, ProjectRetention};
use buildvise_engine::history;
use buildvise_engine::outcome::{Finished, RunResult};
use buildvise_engine::parse::ParseWorker;
use buildvise_engine::render::{self, Detail, Surface};
use buildvise_engine::run::{self, CancelToken, Ending};
use buildvise_engine::sandbox::{Confined, Confinement};
use buildvise_engine::store::{
    ActiveRun, CommandKey, LogWriter, Retention, RunMeta, RunStatus, Store, StoreError, StreamFilter, now_ms,
};
use buildvise_engine::tools::Tool;
use buildvise_plugin_api::{CommandPlan, ParseContext, PlanRequest, RunEnd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One `exec` call, its arguments already read by a surface.
#[derive(Debug, Clone)]
pub struct ExecCall {
    pub tool: String,
    pub args: Vec<String>,
    /// Absolute.
    pub cwd: PathBuf,
    pub timeout_secs: Option<u64>,
    pub confirm: bool,
    pub detail: Detail,
    pub max_lines: Option<u32>,
}

/// A finished exec: the answer, the run it is about, and how the run ended (for the CLI's exit
/// code).
#[derive(Debug)]
pub struct ExecAnswer {
    pub run_id: String,
    pub rendered: render::Rendered,
    pub status: RunStatus,
    pub exit_code: Option<i32>,
    /// The signal that ended the command, when one did.
    pub signal: Option<i32>,
}

impl App {
    /// Runs one call to its end. `report` gets progress about twice a second.
    pub fn exec(
        &self,
        access: &Access,
        call: &ExecCall,
        cancel: &CancelToken,
        surface: Surface,
        report: &mut dyn FnMut(&Progress),
    ) -> Result<ExecAnswer, AppError> {
        let Allowed { place, config, project_retention, tool, roots } = self.allowed(access, call)?;
        let tool = &tool;
        let max_lines = call.max_lines.unwrap_or(config.max_lines);

        let _registered = self.in_flight.register(cancel);
        let queued = &mut |ahead, running| report(&Progress { queued: Some((ahead, running)), ..Progress::default() });
        let Some(_slot) = self.slots.take(cancel, queued) else { return Err(AppError::Cancelled) };
        let Started { run, plan, worker, log, mut meta } = self.start_run(tool, call, &place.dir, &roots, &config)?;
        self.prune_beside(&config, project_retention, run.hold());
        let confinement = match config.sandbox.prepare(&place.dir, &plan.caches) {
            Ok(Confined::Off) => None,
            Ok(Confined::Unconfined(reason)) => {
                meta.notes.push(format!("not sandboxed: {reason}"));
                None
            }
            Ok(Confined::Confined(c)) => Some(Arc::new(c)),
            Err(e) => {
                discard(run);
                return Err(e.into());
            }
        };
        let command = run::Command {
            program: plan.program.clone(),
            args: plan.args.clone(),
            env: plan.env.clone().into_iter().collect(),
            cwd: place.dir.clone(),
            confinement: confinement.clone(),
        };
        let timeout = config.timeout_for(call.timeout_secs, tool.spec.timeout_secs);
        meta.timeout_secs = Some(timeout.as_secs());
        let mut sink = RunSink::new(log, worker, report);
        let outcome = match run::run(&command, timeout, cancel, self.guard.as_ref(), &mut sink) {
            Ok(outcome) => outcome,
            Err(e) => {
                // Nothing ran, so there is nothing to read: the run leaves no trace.
                discard(run);
                return Err(e.into());
            }
        };

        let RunSink { log, parser, unterminated, .. } = sink;
        meta.unterminated = unterminated;
        let ending = outcome.ending;
        self.record_ending(&run, &mut meta, log, outcome);
        if let Some(confinement) = &confinement {
            meta.notes.extend(self.refusals(&run.id, confinement));
        }
        let mut result = parser.finish(parser_end(ending, &plan));
        result.fingerprints = history::fingerprints(&call.tool, &result.diagnostics);
        // The answer survives a store that cannot take it: it says so, and where to make room.
        if let Err(e) = self.store_finished(&config, &run, &mut meta, &mut result, &call.args) {
            meta.notes.push(format!("this answer could not be stored: {}", super::describe(&e)));
        }
        drop(run);

        let finished = Finished { meta, result };
        let rendered = self.answer(&finished, call.detail, max_lines, surface);
        let Finished { meta, .. } = finished;
        Ok(ExecAnswer {
            run_id: meta.id,
            rendered,
            status: meta.status,
            exit_code: meta.exit_code,
            signal: meta.signal,
        })
    }

    /// Whether `exec` would run `call`, without running it: the place, the tool, the operator's
    /// settings and the plugin's plan all allow it.
    pub fn would_run(&self, access: &Access, call: &ExecCall) -> Result<(), AppError> {
        let Allowed { place, tool, roots, .. } = self.allowed(access, call)?;
        plan(&tool, call, &place.dir, Path::new("<run artifacts>"), &roots).map(drop)
    }

    /// The checks before a run: where, which tool, and whether the operator allows this call.
    fn allowed(&self, access: &Access, call: &ExecCall) -> Result<Allowed, AppError> {
        let place = access.check_cwd(&call.cwd)?;
        let (config, project_retention) = self.config.for_project(&place.dir, place.root.as_deref())?;
        let tool = self.tool(&call.tool, &config)?;
        if let Some(reason) = &tool.spec.unavailable {
            return Err(AppError::Unavailable { tool: call.tool.clone(), reason: reason.clone() });
        }
        let roots: Vec<String> = access.roots().iter().map(|r| r.display().to_string()).collect();
        if config.refuses(&tool.spec, &call.args) {
            let flag = tool.spec.read_only_with.clone().unwrap_or_default();
            return Err(AppError::ReadOnly { tool: call.tool.clone(), flag });
        }
        // The plan, as it would run, also says whether these arguments make the call mutate.
        let plan = plan(&tool, call, &place.dir, Path::new("<run artifacts>"), &roots)?;
        if let Some(why) = &plan.mutates
            && config.read_only
        {
            return Err(AppError::ReadOnlyArgs { tool: call.tool.clone(), why: why.clone() });
        }
        let mutates = tool.spec.mutates(&call.args) || plan.mutates.is_some();
        if mutates && !call.confirm && !config.allow_mutating {
            let command = render::shell_words(std::iter::once(&plan.program).chain(&plan.args));
            let what = plan.mutates.unwrap_or_else(|| "changes the workspace".to_string());
            return Err(AppError::NeedsConfirm { tool: call.tool.clone(), what, command });
        }
        Ok(Allowed { place, config, project_retention, tool, roots })
    }

    /// Stores the result, compares it with the previous run of its command, and stores the meta.
    /// A run is indexed only once its result is stored, so that a run finishing at the same time
    /// in another process that finds it there can read it; the comparison is then added to the
    /// stored result.
    fn store_finished(
        &self,
        config: &Config,
        run: &ActiveRun,
        meta: &mut RunMeta,
        result: &mut RunResult,
        args: &[String],
    ) -> Result<(), StoreError> {
        self.with_room(config, || self.store.write_result(&run.dir, result))?;
        // Only a run that went its whole way is anyone's previous run, or compared with one.
        if meta.status == RunStatus::Exited && result.parser_error.is_none() {
            let key = CommandKey { tool: meta.tool.clone(), cwd: meta.cwd.clone(), args: args.to_vec() };
            result.vs = history::compare_with_previous(&self.store, &key, &run.id, result);
            meta.command = Some(key.id());
            if result.vs.is_some() {
                self.with_room(config, || self.store.write_result(&run.dir, result))?;
            }
        }
        meta.tally = Some(result.tally());
        self.with_room(config, || self.store.write_meta(&run.dir, meta))
    }

    /// Fills in how the run ended, and what went wrong on buildvise's side while it ran.
    /// What the sandbox refused the run, as the run's output reports it.
    fn refusals(&self, run_id: &str, confinement: &Confinement) -> Vec<String> {
        let mut refusals = confinement.refusals();
        if let Ok(mut reader) = self.store.reader(run_id) {
            let _ = reader.scan(StreamFilter::Both, |number, _, bytes| {
                refusals.line(number, bytes);
                true
            });
        }
        refusals.notes()
    }

    fn record_ending(&self, run: &ActiveRun, meta: &mut RunMeta, log: LogWriter, outcome: run::Outcome) {
        let (lines, mut stored, mut bytes) = (log.lines(), log.lines(), log.bytes());
        if let Some(failure) = log.finish() {
            // Lines the writer took may not have reached the disk: count what a reader finds.
            (stored, bytes) = self
                .store
                .reader(&run.id)
                .and_then(|mut r| Ok((r.count(StreamFilter::Both)?, r.bytes())))
                .unwrap_or((0, 0));
            meta.notes.push(format!(
                "only the first {stored} of {lines} lines could be stored; the diagnostics cover them all: {}",
                super::describe(&failure)
            ));
        }
        if !outcome.left_running.is_empty() {
            meta.notes.push(left_running_note(&outcome.left_running));
        }
        if outcome.abandoned_output {
            meta.notes.push(
                "processes that left the command's process group, and cleared the environment that marks them as \
                 the run's, kept its output open; buildvise stopped reading it and left them running"
                    .to_string(),
            );
        }
        meta.left_running = outcome.left_running;
        let ending = outcome.ending;
        meta.lines = stored;
        meta.bytes = bytes;
        meta.ended_ms = Some(now_ms());
        (meta.status, meta.exit_code) = match ending {
            Ending::Exited(code) => (RunStatus::Exited, Some(code)),
            Ending::Signalled(signal) => {
                meta.signal = (signal > 0).then_some(signal);
                (RunStatus::Killed, None)
            }
            Ending::TimedOut => (RunStatus::TimedOut, None),
            Ending::Cancelled => (RunStatus::Cancelled, None),
        };
    }

    /// A run directory, its plan, parser and log, and its first `meta.json`. When the store's
    /// disk is full, retention makes room first (see [`App::with_room`]).
    fn start_run(
        &self,
        tool: &Tool,
        call: &ExecCall,
        cwd: &Path,
        roots: &[String],
        config: &Config,
    ) -> Result<Started, AppError> {
        match self.try_start_run(tool, call, cwd, roots) {
            Err(AppError::Store(e)) if e.is_full() => {
                self.make_room(config);
                self.try_start_run(tool, call, cwd, roots)
            }
            other => other,
        }
    }

    /// Runs `write`, and once more after retention made room if the store's disk was full.
    fn with_room(&self, config: &Config, write: impl Fn() -> Result<(), StoreError>) -> Result<(), StoreError> {
        match write() {
            Err(e) if e.is_full() => {
                self.make_room(config);
                write()
            }
            other => other,
        }
    }

    /// Prunes as if the run that needs the room were already counted, so that the limits leave
    /// space for it.
    fn make_room(&self, config: &Config) {
        let room = Retention { max_runs: config.retention.max_runs.saturating_sub(1), ..config.retention.clone() };
        match self.store.prune(&room, None) {
            Ok(freed) => tracing::warn!("the run store's disk is full; pruned {} runs to make room", freed.len()),
            Err(e) => tracing::warn!("the run store's disk is full, and pruning failed: {}", super::describe(&e)),
        }
    }

    fn try_start_run(&self, tool: &Tool, call: &ExecCall, cwd: &Path, roots: &[String]) -> Result<Started, AppError> {
        let run = self.store.create_run()?;
        // Until the process has started, a failure leaves nothing behind: there is nothing to read.
        let prepared = (|| -> Result<_, AppError> {
            let plan = plan(tool, call, cwd, &run.artifact_dir(), roots)?;
            let context = ParseContext::new(call.tool.clone(), cwd.display().to_string()).with_args(call.args.clone());
            let parser = tool.parser(&context).map_err(|e| AppError::from_plugin(&call.tool, e))?;
            let log = LogWriter::create(&run.dir)?;
            let meta = RunMeta::starting(&run.id, &call.tool, &plan.program, &plan.args, &cwd.display().to_string());
            self.store.write_meta(&run.dir, &meta)?;
            Ok((plan, parser, log, meta))
        })();
        match prepared {
            Ok((plan, parser, log, meta)) => Ok(Started { run, plan, worker: ParseWorker::start(parser), log, meta }),
            Err(e) => {
                discard(run);
                Err(e)
            }
        }
    }

    /// Retention beside the command, never before it: it walks every stored run. Errors are
    /// logged; a pass already running in this process is enough. The pass holds `run`'s lock, so
    /// that the run it runs beside is never its victim, however soon the command ends.
    fn prune_beside(&self, config: &Config, project: Option<ProjectRetention>, run: Option<std::fs::File>) {
        let max_runs =
            project.as_ref().map_or(config.retention.max_runs, |p| p.policy.max_runs).min(config.retention.max_runs);
        if !self.store.prune_due(max_runs) || !self.pruning.begin() {
            return;
        }
        self.store.mark_pruning();
        let (store, policy, pruning) = (self.store.clone(), config.retention.clone(), Arc::clone(&self.pruning));
        let spawned = std::thread::Builder::new().name("buildvise-retention".into()).spawn(move || {
            prune_logged(&store, &policy, None);
            if let Some(own) = project {
                prune_logged(&store, &own.policy, Some(&own.root));
            }
            drop(run);
            pruning.end();
        });
        if let Err(e) = spawned {
            tracing::warn!("cannot start retention: {e}");
            self.pruning.end();
        }
    }
}

fn prune_logged(store: &Store, policy: &Retention, within: Option<&Path>) {
    if let Err(e) = store.prune(policy, within) {
        tracing::warn!("retention failed: {}", super::describe(&e));
    }
}

struct Started {
    run: ActiveRun,
    plan: CommandPlan,
    worker: ParseWorker,
    log: LogWriter,
    meta: RunMeta,
}

/// How the run ended, as its parser is told: with the artifacts the plan named that exist now.
/// `2 processes the command left running were ended: sleep, sh`: short, since every answer about
/// a leaky command carries it; the names say which of its programs to look at.
fn left_running_note(names: &[String]) -> String {
    let n = names.len();
    let (what, was) = if n == 1 { ("process", "was") } else { ("processes", "were") };
    format!("{n} {what} the command left running {was} ended: {}", run::leftover_names(names, 3))
}

fn parser_end(ending: Ending, plan: &CommandPlan) -> RunEnd {
    let end = match ending {
        Ending::Exited(code) => RunEnd::exited(code),
        Ending::Signalled(_) => RunEnd::default(),
        Ending::TimedOut => RunEnd::timed_out(),
        Ending::Cancelled => RunEnd::cancelled(),
    };
    end.with_artifacts(plan.artifacts.iter().filter(|a| Path::new(a).is_file()).cloned().collect())
}

fn plan(
    tool: &Tool,
    call: &ExecCall,
    cwd: &Path,
    artifact_dir: &Path,
    roots: &[String],
) -> Result<CommandPlan, AppError> {
    let request = PlanRequest::new(
        call.tool.clone(),
        call.args.clone(),
        cwd.display().to_string(),
        artifact_dir.display().to_string(),
    )
    .with_roots(roots.to_vec());
    tool.plan(&request).map_err(|e| AppError::from_plugin(&call.tool, e))
}

/// A call the checks let through, with what they found.
struct Allowed {
    place: Place,
    config: Config,
    project_retention: Option<ProjectRetention>,
    tool: Tool,
    roots: Vec<String>,
}

/// Removes a run that never started.
fn discard(run: ActiveRun) {
    let _ = std::fs::remove_dir_all(&run.dir);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The note rides on every answer about a leaky command, so it names at most three programs
    /// (its tokens are counted in `tests/lifecycle.rs`).
    #[test]
    fn the_left_running_note_says_how_many_and_which() {
        let names: Vec<String> = ["sleep", "sh", "sleep", "node", "python3"].iter().map(|s| s.to_string()).collect();
        assert_eq!(left_running_note(&names), "5 processes the command left running were ended: sleep ×2, sh, node, …");
        assert_eq!(left_running_note(&names[..1]), "1 process the command left running was ended: sleep");
    }
}
