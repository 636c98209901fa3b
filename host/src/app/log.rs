//! `log`: a page of a stored run, the lines matching a pattern, or the run's answer re-rendered
//! at another detail level. Reading never blocks anything but its own call, a grep can be
//! cancelled and reports how far it got, and a run whose writer died is settled and parsed from
//! its log on first read.

use super::{App, AppError};
use crate::access::Access;
use crate::outcome::{Finished, RunResult};
use crate::parse::SavedError;
use crate::parse::parse_stored;
use crate::render::{self, Detail, LINE_BYTES, LogPage, Rendered, Surface};
use crate::run::CancelToken;
use crate::store::{LogLine, RunStatus, StoreError, StreamFilter};
use buildvise_plugin_api::{ParseContext, RunEnd, strip_ansi};
use std::path::Path;
use std::time::{Duration, Instant};

/// Most text one page carries, whatever the line count.
const PAGE_BYTES: usize = 64 * 1024;
/// Lines a grep scans between two looks at its cancel token.
const CHECK_EVERY: u64 = 4096;
const PROGRESS_EVERY: Duration = Duration::from_millis(500);

/// One `log` call.
#[derive(Debug, Clone)]
pub struct LogCall {
    pub run_id: String,
    /// 1-based; negative counts from the end (-1 is the last line).
    pub start: i64,
    /// Lines wanted; capped by `max_lines`.
    pub count: Option<u64>,
    pub stream: StreamFilter,
    pub grep: Option<String>,
    /// Re-render the run's answer at this level instead of paging.
    pub detail: Option<Detail>,
    pub max_lines: Option<u32>,
}

impl App {
    /// Answers a `log` call about a run made within `access`'s roots (any other reads as
    /// unknown, so a session cannot read another project's runs). `report` hears how far a long
    /// grep has got.
    pub fn log(
        &self,
        access: &Access,
        call: &LogCall,
        cancel: &CancelToken,
        surface: Surface,
        report: &mut dyn FnMut(&str),
    ) -> Result<Rendered, AppError> {
        if !access.is_anywhere() && !access.contains(Path::new(&self.store.read_meta(&call.run_id)?.cwd)) {
            return Err(StoreError::UnknownRun(call.run_id.clone()).into());
        }
        let max_lines = call.max_lines.unwrap_or(self.config.max_lines);
        if let Some(detail) = call.detail {
            return self.rerender(&call.run_id, detail, max_lines, surface);
        }
        let grep = call.grep.as_deref().map(regex::bytes::Regex::new).transpose().map_err(AppError::Grep)?;
        let mut reader = self.store.reader(&call.run_id)?;
        let total = reader.count(call.stream)?;
        let want = call.count.unwrap_or(u64::from(max_lines)).min(u64::from(max_lines)).max(1);
        let first = first_index(call.start, total);
        let mut picked = Vec::new();
        let mut next = None;
        let mut bytes = 0usize;
        match &grep {
            None => {
                for line in reader.page(call.stream, first, want)? {
                    bytes += line.bytes.len().min(LINE_BYTES);
                    picked.push(line);
                    if bytes > PAGE_BYTES {
                        break;
                    }
                }
                let shown_end = first + picked.len() as u64;
                if shown_end < total {
                    next = Some(shown_end + 1);
                }
            }
            Some(re) => {
                let (mut position, mut cancelled) = (0u64, false);
                let mut last_report = Instant::now();
                reader.scan(call.stream, |number, stream, line| {
                    position += 1;
                    if position % CHECK_EVERY == 0 {
                        if cancel.is_cancelled() {
                            cancelled = true;
                            return false;
                        }
                        if last_report.elapsed() >= PROGRESS_EVERY {
                            report(&format!("grep: {position} of {total} lines scanned, {} matched", picked.len()));
                            last_report = Instant::now();
                        }
                    }
                    if position <= first {
                        return true;
                    }
                    if picked.len() as u64 >= want || bytes > PAGE_BYTES {
                        next = Some(position);
                        return false;
                    }
                    if re.is_match(&strip_ansi(line)) {
                        bytes += line.len().min(LINE_BYTES);
                        picked.push(LogLine { number, stream, bytes: line.to_vec() });
                    }
                    true
                })?;
                if cancelled {
                    return Err(AppError::Cancelled);
                }
            }
        }
        let page = LogPage {
            run_id: &call.run_id,
            stream: call.stream,
            total,
            lines: picked,
            first: first + 1,
            grep: call.grep.as_deref(),
            next,
            count: call.count,
        };
        Ok(render::render_log(page, surface))
    }

    /// Lines exactly as stored, for `buildvise log --raw`.
    pub fn raw_lines(
        &self,
        run_id: &str,
        stream: StreamFilter,
        start: i64,
        count: u64,
    ) -> Result<Vec<LogLine>, AppError> {
        let mut reader = self.store.reader(run_id)?;
        let first = first_index(start, reader.count(stream)?);
        Ok(reader.page(stream, first, count)?)
    }

    fn rerender(&self, run_id: &str, detail: Detail, max_lines: u32, surface: Surface) -> Result<Rendered, AppError> {
        Ok(self.answer(&self.stored(run_id)?, detail, max_lines, surface))
    }

    /// A stored run as exec answered it. A run whose writer died before it ended is settled by
    /// the store and parsed here, from its log, once.
    pub fn stored(&self, run_id: &str) -> Result<Finished, AppError> {
        let meta = self.store.read_meta(run_id)?;
        if meta.status == RunStatus::Running {
            return Err(StoreError::StillRunning(run_id.to_string()).into());
        }
        if let Some(result) = self.store.read_result::<RunResult>(run_id)? {
            return Ok(Finished { meta, result });
        }
        let cwd = Path::new(&meta.cwd);
        // The tool as the run's project defines it now: a config tool lives in its files.
        let config = self.config.for_project(cwd, None).map(|(c, _)| c).unwrap_or_else(|_| self.config.clone());
        let result = match crate::tools::find(&self.registry, &config, &meta.tool).ok().flatten() {
            Some(tool) => {
                let mut reader = self.store.reader(run_id)?;
                let parser = tool
                    .parser(&ParseContext::new(tool.spec.name.clone(), cwd.display().to_string()))
                    .map_err(SavedError::from)?;
                parse_stored(parser, &mut reader, RunEnd::default())?
            }
            None => RunResult {
                parser_error: Some(format!("no plugin loaded here provides {} to parse its log", meta.tool)),
                ..RunResult::default()
            },
        };
        if let Some(run) = self.store.relock(run_id)?
            && let Err(e) = self.store.write_result(&run.dir, &result)
        {
            tracing::warn!("cannot store the result of run {run_id}: {}", super::describe(&e));
        }
        Ok(Finished { meta, result })
    }
}

/// The 0-based index of line `start` (1-based; negative counts from the end) of `total`.
fn first_index(start: i64, total: u64) -> u64 {
    if start < 0 { total.saturating_sub(start.unsigned_abs()) } else { (start.max(1) as u64) - 1 }
}
