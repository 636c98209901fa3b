//! `log`: a page of a stored run, the lines matching a pattern, or the run's answer re-rendered
//! at another detail level. Reading never blocks anything but its own call, a grep can be
//! cancelled and reports how far it got, and a run whose writer died is settled and parsed from
//! its log on first read.

use super::{App, AppError};
use buildvise_engine::access::Access;
use buildvise_engine::outcome::{Finished, RunResult};
use buildvise_engine::parse::SavedError;
use buildvise_engine::parse::parse_stored;
use buildvise_engine::render::{self, Detail, LINE_BYTES, LogPage, Rendered, Surface};
use buildvise_engine::run::CancelToken;
use buildvise_engine::store::{LogLine, RunMeta, RunStatus, StoreError, StreamFilter};
use buildvise_plugin_api::{ParseContext, RunEnd, strip_ansi};
use std::path::Path;
use std::time::{Duration, Instant};

/// Most text one page carries, whatever the line count.
const PAGE_BYTES: usize = 64 * 1024;
/// Lines a grep scans between two looks at its cancel token.
const CHECK_EVERY: u64 = 4096;
const PROGRESS_EVERY: Duration = Duration::from_millis(500);

/// A page of a run's log: its lines, the 1-based position of the first in the stream, the
/// stream's lines in all, and where the next page starts when there is more.
#[derive(Debug, Clone)]
pub struct Page {
    pub lines: Vec<LogLine>,
    pub first: u64,
    pub total: u64,
    pub next: Option<u64>,
}

/// A page of `log --raw`: the lines as stored, and those the output did not end with `\n`.
#[derive(Debug)]
pub struct RawPage {
    lines: Vec<LogLine>,
    unterminated: Vec<u64>,
    /// Where the page starts among the lines selected (0-based), and how many there are.
    first: u64,
    total: u64,
}

impl RawPage {
    /// What a page short of the whole log leaves out, for a person or an agent to hear beside
    /// the bytes (`printed lines 1-20 of 100; …`); None when it holds every line.
    pub fn partial(&self) -> Option<String> {
        let printed = self.lines.len() as u64;
        if printed == self.total {
            return None;
        }
        let which = match printed {
            0 => "no lines".to_string(),
            _ => format!("lines {}-{}", self.first + 1, self.first + printed),
        };
        Some(format!("printed {which} of {}; --start and --count select others", self.total))
    }

    /// The page's bytes as the command printed them.
    pub fn write_to(&self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        for line in &self.lines {
            out.write_all(&line.bytes)?;
            if !self.unterminated.contains(&line.number) {
                out.write_all(b"\n")?;
            }
        }
        Ok(())
    }
}

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
        self.check_access(access, &call.run_id)?;
        let max_lines = call.max_lines.unwrap_or(self.config.max_lines);
        if let Some(detail) = call.detail {
            return self.rerender(&call.run_id, detail, max_lines, surface);
        }
        let grep = call.grep.as_deref().map(regex::bytes::Regex::new).transpose().map_err(AppError::Grep)?;
        let want = call.count.unwrap_or(u64::from(max_lines)).min(u64::from(max_lines)).max(1);
        let page = match &grep {
            None => self.log_page(&Access::anywhere(), &call.run_id, call.stream, call.start, want)?,
            Some(re) => self.grep(&call.run_id, call.stream, call.start, want, re, cancel, report)?,
        };
        let page = LogPage {
            run_id: &call.run_id,
            stream: call.stream,
            total: page.total,
            lines: page.lines,
            first: page.first,
            grep: call.grep.as_deref(),
            next: page.next,
            count: call.count,
        };
        Ok(render::render_log(page, surface))
    }

    /// Up to `count` lines of `stream` from `start` (1-based; negative counts from the end), and at
    /// most [`PAGE_BYTES`] of them: the page the `log` action shows, and MCP resources too. A run
    /// made outside `access`'s roots reads as unknown.
    pub fn log_page(
        &self,
        access: &Access,
        run_id: &str,
        stream: StreamFilter,
        start: i64,
        count: u64,
    ) -> Result<Page, AppError> {
        self.check_access(access, run_id)?;
        let mut reader = self.store.reader(run_id)?;
        let total = reader.count(stream)?;
        let first = first_index(start, total);
        let mut lines = Vec::new();
        let mut bytes = 0usize;
        for line in reader.page(stream, first, count)? {
            bytes += line.bytes.len().min(LINE_BYTES);
            lines.push(line);
            if bytes > PAGE_BYTES {
                break;
            }
        }
        let shown_end = first + lines.len() as u64;
        let next = (shown_end < total).then_some(shown_end + 1);
        Ok(Page { lines, first: first + 1, total, next })
    }

    /// The lines of `stream` after `start` that `re` matches, a page of them.
    #[allow(clippy::too_many_arguments)]
    fn grep(
        &self,
        run_id: &str,
        stream: StreamFilter,
        start: i64,
        want: u64,
        re: &regex::bytes::Regex,
        cancel: &CancelToken,
        report: &mut dyn FnMut(&str),
    ) -> Result<Page, AppError> {
        let mut reader = self.store.reader(run_id)?;
        let total = reader.count(stream)?;
        let first = first_index(start, total);
        let (mut lines, mut next, mut bytes) = (Vec::new(), None, 0usize);
        let (mut position, mut cancelled) = (0u64, false);
        let mut last_report = Instant::now();
        reader.scan(stream, |number, stream, line| {
            position += 1;
            if position % CHECK_EVERY == 0 {
                if cancel.is_cancelled() {
                    cancelled = true;
                    return false;
                }
                if last_report.elapsed() >= PROGRESS_EVERY {
                    report(&format!("grep: {position} of {total} lines scanned, {} matched", lines.len()));
                    last_report = Instant::now();
                }
            }
            if position <= first {
                return true;
            }
            if lines.len() as u64 >= want || bytes > PAGE_BYTES {
                next = Some(position);
                return false;
            }
            if re.is_match(&strip_ansi(line)) {
                bytes += line.len().min(LINE_BYTES);
                lines.push(LogLine { number, stream, bytes: line.to_vec() });
            }
            true
        })?;
        if cancelled {
            return Err(AppError::Cancelled);
        }
        Ok(Page { lines, first: first + 1, total, next })
    }

    /// Refuses a run made outside `access`'s roots as unknown, so that a session cannot read
    /// another project's runs.
    fn check_access(&self, access: &Access, run_id: &str) -> Result<(), AppError> {
        if !access.is_anywhere() && !access.contains(Path::new(&self.store.read_meta(run_id)?.cwd)) {
            return Err(StoreError::UnknownRun(run_id.to_string()).into());
        }
        Ok(())
    }

    /// A stored run's meta, for a run made within `access`'s roots.
    pub fn run_meta(&self, access: &Access, run_id: &str) -> Result<RunMeta, AppError> {
        let meta = self.store.read_meta(run_id)?;
        if !access.contains(Path::new(&meta.cwd)) {
            return Err(StoreError::UnknownRun(run_id.to_string()).into());
        }
        Ok(meta)
    }

    /// The stored runs made within `access`'s roots, newest first.
    pub fn runs_within(&self, access: &Access) -> Result<Vec<RunMeta>, AppError> {
        Ok(self.store.list()?.into_iter().filter(|m| access.contains(Path::new(&m.cwd))).collect())
    }

    /// Lines exactly as the command printed them, for `buildvise log --raw`.
    pub fn raw_lines(&self, run_id: &str, stream: StreamFilter, start: i64, count: u64) -> Result<RawPage, AppError> {
        let mut reader = self.store.reader(run_id)?;
        let total = reader.count(stream)?;
        let first = first_index(start, total);
        let lines = reader.page(stream, first, count)?;
        let unterminated = self.store.read_meta(run_id)?.unterminated;
        Ok(RawPage { lines, unterminated, first, total })
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
        let result = match buildvise_engine::tools::find(&self.registry, &config, &meta.tool).ok().flatten() {
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
