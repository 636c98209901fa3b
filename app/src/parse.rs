//! `parse`: a saved log through a tool's parser and the renderer, as exec would have answered,
//! without running anything.

use super::{App, AppError};
use buildvise_engine::outcome::Finished;
use buildvise_engine::parse::SavedError;
use buildvise_engine::parse::{Flagged, SavedLog, TROUBLE_WORDS, flag_saved, parse_saved};
use buildvise_engine::render::{self, Detail, Hints, Rendered, Tail};
use buildvise_engine::store::{RunMeta, RunStatus};
use buildvise_plugin_api::{Diagnostic, ParseContext, RunEnd, is_absolute};
use std::path::{Path, PathBuf};

/// Files looked up on disk when rebasing a foreign log's paths: enough for any real answer, and a
/// bound on the system calls a log with a million distinct paths can cause.
const REBASE_LOOKUPS: usize = 256;

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
    /// The parsed run, and the answer exec would have given.
    pub fn parse(&self, call: &ParseCall, hints: Hints) -> Result<(Finished, Rendered), AppError> {
        // A tool a project defines parses that project's logs too.
        let (config, _) = self.config.for_project(&call.cwd, None)?;
        let tool = self.tool(&call.tool, &config)?;
        let max_lines = call.max_lines.unwrap_or(self.config.max_lines);
        let artifacts = call
            .artifacts
            .iter()
            .map(|a| std::path::absolute(a).unwrap_or_else(|_| a.clone()).display().to_string())
            .collect();
        let end = RunEnd::exited(call.exit_code).with_artifacts(artifacts);
        let parser = tool
            .parser(&ParseContext::new(tool.spec.name.clone(), call.cwd.display().to_string()))
            .map_err(SavedError::from)?;
        let mut parsed = parse_saved(parser, &call.log, end, max_lines as usize)?;
        rebase(&mut parsed.result.diagnostics, &call.cwd);
        // Not a stored run: no id to page, no duration worth showing.
        let meta = RunMeta {
            started_ms: 0,
            ended_ms: Some(0),
            status: RunStatus::Exited,
            exit_code: Some(call.exit_code),
            ..RunMeta::starting("parsed", &call.tool, "", &[], &call.cwd.display().to_string())
        };
        let finished = Finished { meta, result: parsed.result };
        let flagged = match render::needs_tail(&finished, call.detail) {
            true => flag_saved(&call.log, parsed.lines.saturating_sub(u64::from(max_lines)))?,
            false => Flagged::default(),
        };
        let tail = Tail {
            lines: &parsed.tail,
            total: parsed.lines,
            flagged: &flagged.lines,
            flagged_count: flagged.count,
            flagged_grep: TROUBLE_WORDS,
        };
        let rendered = render::render_exec(&finished, Some(tail), call.detail, max_lines, hints);
        Ok((finished, rendered))
    }
}

/// Makes the absolute paths of a log captured elsewhere (a CI machine's checkout) relative to
/// `cwd` when the same files exist under it: `/srv/ci/checkout/app/src/x.rs` becomes
/// `src/x.rs` in a checkout that has `src/x.rs`. The prefix found for one file is used for every
/// file that shares it, so one answer never mixes the two spellings of a checkout.
fn rebase(diagnostics: &mut [Diagnostic], cwd: &Path) {
    let mut prefixes: Vec<String> = Vec::new();
    let mut lookups = 0;
    for d in diagnostics.iter_mut() {
        let Some(file) = d.file.as_deref() else { continue };
        let normal = file.replace('\\', "/");
        if !is_absolute(file) || Path::new(file).starts_with(cwd) {
            continue;
        }
        let known = prefixes.iter().find(|p| normal.starts_with(p.as_str()));
        let prefix = match known {
            Some(p) => Some(p.clone()),
            None if lookups < REBASE_LOOKUPS => {
                lookups += 1;
                let found = foreign_prefix(&normal, cwd);
                prefixes.extend(found.clone());
                found
            }
            None => None,
        };
        if let Some(rest) = prefix.and_then(|p| normal.strip_prefix(&p).map(str::to_string)) {
            d.file = Some(rest);
        }
    }
}

/// The leading directories of `file` that, taken away, leave a path that exists under `cwd`
/// (with its trailing `/`); the longest remainder wins.
fn foreign_prefix(file: &str, cwd: &Path) -> Option<String> {
    let mut at = 0;
    while let Some(slash) = file[at..].find('/') {
        let cut = at + slash + 1;
        let rest = &file[cut..];
        if rest.contains('/') && cwd.join(rest).is_file() {
            return Some(file[..cut].to_string());
        }
        at = cut;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_of_a_foreign_checkout_are_rebased_when_the_files_are_here() {
        let here = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(here.path().join("src/util")).unwrap();
        std::fs::write(here.path().join("src/a.js"), "").unwrap();
        std::fs::write(here.path().join("src/util/b.js"), "").unwrap();
        let at = |file: &str| Diagnostic::error("x").with_location(file, Some(1), None);
        let mut found = vec![
            at("/ci/checkout/app/src/a.js"),
            at("/ci/checkout/app/src/util/b.js"),
            at("/ci/checkout/app/src/gone.js"),
            at("/elsewhere/lib.js"),
            at("src/a.js"),
        ];
        rebase(&mut found, here.path());
        let files: Vec<_> = found.iter().map(|d| d.file.as_deref().unwrap()).collect();
        assert_eq!(files, ["src/a.js", "src/util/b.js", "src/gone.js", "/elsewhere/lib.js", "src/a.js"]);
    }
}
