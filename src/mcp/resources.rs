//! Stored runs as MCP resources, so that a person can attach a run to a conversation in a client
//! that shows resources: `buildvise://run/{id}` is the run's answer at the standard detail, as
//! `exec` gave it, and `buildvise://run/{id}/log` its output, a page at a time
//! (`?start=N&count=M`, the next page named at the end of each). A session sees the runs made in
//! its roots, and no others: a project cannot read another's runs through resources.
//!
//! Agents do not need these (`log` pages and greps better); they are for the people watching.

use buildvise_app::{
    Access, App, AppError, CancelToken, Detail, LogCall, RunMeta, RunStatus, StreamFilter, Surface, describe,
    shell_words,
};
use buildvise_plugin_api::strip_ansi;
use rmcp::ErrorData as McpError;
use rmcp::model::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
};

const PREFIX: &str = "buildvise://run/";
/// Runs per `resources/list` page.
const LIST_PAGE: usize = 50;
/// Lines of output per log page: enough to read a failure in one page. Its bytes are capped as
/// every page of the `log` action is.
const LOG_LINES: u64 = 2000;

pub fn templates() -> ListResourceTemplatesResult {
    ListResourceTemplatesResult::with_all_items(vec![
        ResourceTemplate::new(format!("{PREFIX}{{id}}"), "run")
            .with_description("A stored run's answer: status, diagnostics, tests")
            .with_mime_type("text/plain"),
        ResourceTemplate::new(format!("{PREFIX}{{id}}/log{{?start,count}}"), "run log")
            .with_description("A stored run's output, a page of lines from start (1-based)")
            .with_mime_type("text/plain"),
    ])
}

/// The runs made in `access`'s roots, newest first, a page at a time; the cursor is the
/// offset of the page.
pub fn list(app: &App, access: &Access, cursor: Option<&str>) -> Result<ListResourcesResult, McpError> {
    let skip = match cursor {
        None => 0,
        Some(cursor) => cursor.parse::<usize>().map_err(|_| {
            McpError::invalid_params(format!("bad cursor {cursor:?}: send the nextCursor of the last page"), None)
        })?,
    };
    let runs = app.runs_within(access).map_err(|e| internal(&e))?;
    let mut visible = runs.into_iter().skip(skip);
    let resources = visible.by_ref().take(LIST_PAGE).map(|m| resource(&m)).collect();
    let mut page = ListResourcesResult::with_all_items(resources);
    if visible.next().is_some() {
        page.next_cursor = Some((skip + LIST_PAGE).to_string());
    }
    Ok(page)
}

/// Characters of a run's command, and of its directory, that a resource's description shows: a
/// list of 50 runs is read whole by the client, and a call with thousands of arguments must not
/// make it hundreds of kilobytes. The run's answer and log have the rest.
const COMMAND_CHARS: usize = 160;
const CWD_CHARS: usize = 120;

fn resource(meta: &RunMeta) -> Resource {
    let command = shell_words(std::iter::once(&meta.program).chain(&meta.args));
    let command = match command.char_indices().nth(COMMAND_CHARS) {
        Some((at, _)) => format!("{}… ({} args)", &command[..at], meta.args.len()),
        None => command,
    };
    // The end of a directory names the project; its start is the same for every run.
    let chars = meta.cwd.chars().count();
    let cwd = match meta.cwd.char_indices().nth(chars.saturating_sub(CWD_CHARS)) {
        Some((at, _)) if at > 0 => format!("…{}", &meta.cwd[at..]),
        _ => meta.cwd.clone(),
    };
    Resource::new(format!("{PREFIX}{}", meta.id), format!("{} {}", meta.tool, meta.id))
        .with_description(format!("{command} in {cwd}: {}", outcome(meta)))
        .with_mime_type("text/plain")
}

fn outcome(meta: &RunMeta) -> String {
    match (meta.status, &meta.tally) {
        (RunStatus::Exited, Some(tally)) if tally.success => "passed".to_string(),
        (RunStatus::Exited, _) => format!("failed, exit {}", meta.exit_code.unwrap_or(-1)),
        (RunStatus::TimedOut, _) => "timed out".to_string(),
        (status, _) => format!("{status:?}").to_lowercase(),
    }
}

/// The text of `uri`: a run's answer, or a page of its log.
pub fn read(app: &App, access: &Access, uri: &str) -> Result<ReadResourceResult, McpError> {
    let not_found = || {
        McpError::resource_not_found(
            format!(
                "no resource {uri:?}: send buildvise://run/ID or buildvise://run/ID/log, with an ID from resources/list"
            ),
            None,
        )
    };
    let rest = uri.strip_prefix(PREFIX).ok_or_else(not_found)?;
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (id, log) = match path.strip_suffix("/log") {
        Some(id) => (id, true),
        None => (path, false),
    };
    if id.is_empty() || id.contains('/') || (!log && !query.is_empty()) {
        return Err(not_found());
    }
    app.run_meta(access, id).map_err(|e| if e.is_unknown_run() { not_found() } else { internal(&e) })?;
    let text = if log { log_page(app, access, uri, id, query)? } else { answer(app, id)? };
    Ok(ReadResourceResult::new(vec![ResourceContents::text(text, uri).with_mime_type("text/plain")]))
}

/// The run's answer; `read` has checked the run is in the roots.
fn answer(app: &App, id: &str) -> Result<String, McpError> {
    let call = LogCall {
        run_id: id.to_string(),
        start: 1,
        count: None,
        stream: StreamFilter::Both,
        grep: None,
        detail: Some(Detail::Standard),
        max_lines: None,
    };
    let rendered = app
        .log(&Access::anywhere(), &call, &CancelToken::default(), Surface::Mcp, &mut |_| {})
        .map_err(|e| internal(&e))?;
    Ok(rendered.text)
}

/// Lines `start..start+count` of the log, as text with escapes removed, and where the next page
/// is when there is more: the `log` action's page, without its line numbers (a person reads
/// this one as the output it was).
fn log_page(app: &App, access: &Access, uri: &str, id: &str, query: &str) -> Result<String, McpError> {
    let (mut start, mut count, mut asked) = (1u64, LOG_LINES, "");
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let number = value.parse::<u64>().ok().filter(|n| *n > 0);
        match (key, number) {
            ("start", Some(n)) => start = n,
            ("count", Some(n)) => {
                count = n.min(LOG_LINES);
                asked = pair;
            }
            _ => {
                return Err(McpError::invalid_params(
                    format!("bad query {pair:?} in {uri}: send start and count as positive numbers"),
                    None,
                ));
            }
        }
    }
    let start = i64::try_from(start).unwrap_or(i64::MAX);
    let page = app.log_page(access, id, StreamFilter::Both, start, count).map_err(|e| internal(&e))?;
    let mut text = String::new();
    for line in &page.lines {
        text.push_str(&String::from_utf8_lossy(&strip_ansi(&line.bytes)));
        text.push('\n');
    }
    if let Some(next) = page.next {
        let base = uri.split_once('?').map_or(uri, |(base, _)| base);
        let count = if asked.is_empty() { String::new() } else { format!("&{asked}") };
        text.push_str(&format!(
            "[buildvise: lines {}-{} of {}; next page: {base}?start={next}{count}]\n",
            page.first,
            next - 1,
            page.total
        ));
    }
    Ok(text)
}

fn internal(error: &AppError) -> McpError {
    McpError::internal_error(describe(error), None)
}
