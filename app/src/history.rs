//! `runs` and `diff`: the store's history, for people at a terminal. Agents get the same
//! comparison in every `exec` answer (see [`buildvise_engine::history`]) and need neither.

use super::{App, AppError};
use buildvise_engine::history::{self, ListedRun};
use buildvise_engine::render::{self, Rendered};
use buildvise_engine::store::{RunMeta, RunStatus};
use std::path::PathBuf;

/// Which runs `runs` lists.
#[derive(Debug, Clone, Default)]
pub struct RunsFilter {
    /// A tool (`cargo.test`), or a plugin's tools (`cargo`).
    pub tool: Option<String>,
    /// Runs in this directory or below it (absolute).
    pub cwd: Option<PathBuf>,
    /// Only runs that did not succeed.
    pub failed: bool,
    pub limit: usize,
}

impl RunsFilter {
    fn matches(&self, m: &RunMeta) -> bool {
        let tool = self
            .tool
            .as_deref()
            .is_none_or(|t| m.tool == t || m.tool.strip_prefix(t).is_some_and(|rest| rest.starts_with('.')));
        let cwd = self.cwd.as_deref().is_none_or(|dir| std::path::Path::new(&m.cwd).starts_with(dir));
        tool && cwd && (!self.failed || !succeeded(m))
    }
}

fn succeeded(m: &RunMeta) -> bool {
    m.status == RunStatus::Exited && m.tally.as_ref().map_or(m.exit_code == Some(0), |t| t.success)
}

impl App {
    /// Recent runs, newest first.
    pub fn runs(&self, filter: &RunsFilter) -> Result<Vec<ListedRun>, AppError> {
        let mut listed: Vec<ListedRun> = self
            .store
            .list()?
            .into_iter()
            .filter(|m| filter.matches(m))
            .take(filter.limit)
            .map(|meta| ListedRun { meta, flaky: Vec::new() })
            .collect();
        for (_, ids) in self.store.commands() {
            let Some(newest) = listed.iter_mut().find(|r| ids.contains(&r.meta.id)) else { continue };
            if newest.meta.tally.as_ref().is_some_and(|t| t.tests.is_some()) {
                newest.flaky = history::flaky::flaky_tests(&self.store, &ids);
            }
        }
        Ok(listed)
    }

    /// What was fixed, is new and is still there from the run `before` to the run `after`.
    pub fn diff(&self, before: &str, after: &str) -> Result<Rendered, AppError> {
        let (a, b) = (self.stored(before)?, self.stored(after)?);
        let delta = history::delta(&a.meta.tool, &a.result, &b.meta.tool, &b.result);
        Ok(render::render_diff(&a.meta, &b.meta, &delta))
    }
}
