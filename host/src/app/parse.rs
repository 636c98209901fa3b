//! `parse`: a saved log through a tool's parser and the renderer, as exec would have answered,
//! without running anything.

use super::{App, AppError};
use crate::outcome::{Finished, RunResult};
use crate::parse::{SavedLog, parse_saved};
use crate::render::{self, Detail, Rendered, Surface, Tail};
use crate::store::{RunMeta, RunStatus};
use buildvise_plugin_api::RunEnd;
use std::path::PathBuf;

/// One `parse` call.
pub struct ParseCall {
    pub tool: String,
    pub log: SavedLog,
    pub exit_code: i32,
    pub artifacts: Vec<PathBuf>,
    /// Absolute; paths in the log are made relative to it.
    pub cwd: PathBuf,
    pub detail: Detail,
    pub max_lines: Option<u32>,
}

impl App {
    /// The parse result, and the answer exec would have given.
    pub fn parse(&self, call: &ParseCall, surface: Surface) -> Result<(RunResult, Rendered), AppError> {
        let tool = self.tool(&call.tool, &self.config)?;
        let max_lines = call.max_lines.unwrap_or(self.config.max_lines);
        let artifacts = call
            .artifacts
            .iter()
            .map(|a| std::path::absolute(a).unwrap_or_else(|_| a.clone()).display().to_string())
            .collect();
        let end = RunEnd::exited(call.exit_code).with_artifacts(artifacts);
        let parsed = parse_saved(tool, &call.log, end, &call.cwd, max_lines as usize)?;
        // Not a stored run: no id to page, no duration worth showing.
        let meta = RunMeta {
            started_ms: 0,
            ended_ms: Some(0),
            status: RunStatus::Exited,
            exit_code: Some(call.exit_code),
            ..RunMeta::starting("parsed", &call.tool, "", &[], &call.cwd.display().to_string())
        };
        let finished = Finished { meta, result: parsed.result };
        let tail = Tail { lines: &parsed.tail, total: parsed.lines, pageable: false };
        let rendered = render::render_exec(&finished, Some(tail), call.detail, max_lines, surface);
        Ok((finished.result, rendered))
    }
}
