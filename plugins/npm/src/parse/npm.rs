//! npm's own output: the script banner, `npm error` / `npm warn` blocks (npm 7-11; `npm ERR!` and
//! `npm WARN` before npm 9), and the shell's "command not found" (exit 127).
//!
//! An error block is one diagnostic: `code X` gives the code, the first message line the
//! headline (without npm's category word: `404`, `ERESOLVE`, `JSON.parse`), a few lines after
//! it the notes. The `Lifecycle script ... failed` block only wraps a failing script, whose own
//! output carries the real errors; it still tells which folder a workspace is in. Warnings
//! continue over several lines when npm indents them or leaves them open (`... allowScripts:`).
//!
//! Two blocks say which packages are at fault, one line or a few lines per package, and each
//! package is kept: `npm ci`'s lockfile check (`Missing: X from lock file`, `Invalid: lock file's
//! X does not satisfy Y`, often hundreds of lines after a major upgrade) and `EBADENGINE` (a
//! warning with a Node object per package, or under `engine-strict` an error with JSON lines).

use crate::parse::sink::Sink;
use buildvise_plugin_api::Diagnostic;
use buildvise_plugin_api::{Head, Text};

const MAX_NOTES: usize = 4;

/// Bytes of an answer given to the packages a lockfile check names; past it, they are counted.
/// A major upgrade lists hundreds of transitive packages, and the first ones are the direct
/// dependencies npm found first.
const LOCK_LIST_BYTES: usize = 1200;

/// Bytes of one `EBADENGINE` warning's object kept for reading: a real one is about 150.
const ENGINE_BYTES: usize = 1000;

/// Lines of an error block that are npm's bookkeeping, not part of the message.
const DETAIL_KEYS: &[&str] = &["syscall", "errno", "path", "signal", "command", "dest", "cwd"];

#[derive(Default)]
pub struct Npm {
    error: Option<Block>,
    warning: Option<Block>,
    /// The id of the last banner, waiting for its `> command` line.
    banner_pending: bool,
    /// A failed workspace's id from `workspace ID`, waiting for its `location PATH`.
    workspace: Option<String>,
}

#[derive(Default)]
struct Block {
    code: Option<String>,
    headline: Option<String>,
    /// The warning's kind (`deprecated`, `install-scripts`) or the error's wrapper marker.
    kind: String,
    notes: Vec<String>,
    /// The file the error is about (`file /abs/package.json`).
    file: Option<String>,
    /// The last line was empty or ended with `:`: the next one continues it.
    open: bool,
    wrapper: bool,
    /// The previous line was an empty `npm error`.
    prev_blank: bool,
    /// The last note began a paragraph.
    last_after_blank: bool,
    /// The command's help, printed after a usage error, has begun.
    in_usage: bool,
    /// Packages the lockfile check names, as npm words them (without `Invalid: `).
    lock: Vec<String>,
    lock_bytes: usize,
    /// Packages named past [`LOCK_LIST_BYTES`].
    lock_more: usize,
    /// An `EBADENGINE` warning's object, its lines joined.
    engine: String,
    /// An `EBADENGINE` error's package and its `Required:` and `Actual:` JSON.
    engine_error: [Option<String>; 3],
    start: u64,
    end: u64,
}

/// Lines npm (or the shell it runs scripts in) prints start so: the rest never reach
/// [`Npm::feed`].
pub fn may_be_npm(head: &Head<'_>) -> bool {
    ["npm ", "> ", "sh: "].iter().any(|start| head.bytes.starts_with(start.as_bytes()))
}

impl Npm {
    /// Handles the line if it is npm's; `prev_blank` tells whether the previous line was empty,
    /// which a banner always follows.
    pub fn feed(&mut self, ln: &Text<'_>, prev_blank: bool, sink: &mut Sink) -> bool {
        let text = ln.text;
        if self.banner_pending {
            self.banner_pending = false;
            if text.starts_with("> ") {
                return true;
            }
        }
        if prev_blank && let Some(id) = banner_id(text) {
            sink.enter_package(id);
            self.banner_pending = true;
            return true;
        }
        let rest = text.strip_prefix("npm ");
        let word_then = |prefixes: [&str; 2]| {
            let rest = rest?;
            let message = prefixes.iter().find_map(|p| rest.strip_prefix(p))?;
            (message.is_empty() || message.starts_with(' ')).then(|| message.strip_prefix(' ').unwrap_or(message))
        };
        if let Some(message) = word_then(["error", "ERR!"]) {
            self.end_warning(sink);
            self.error_line(message, ln.number, sink);
            return true;
        }
        if let Some(message) = word_then(["warn", "WARN"]) {
            self.end_error(sink);
            self.warning_line(message, ln.number, sink);
            return true;
        }
        self.flush(sink);
        if text.starts_with("sh: ") && (text.ends_with(": not found") || text.ends_with(": command not found")) {
            sink.push(Diagnostic::error(text.trim()).with_log_range(ln.number, ln.number));
            return true;
        }
        false
    }

    pub fn flush(&mut self, sink: &mut Sink) {
        // Every line that is not npm's comes here, and almost always finds nothing open: the
        // test is cheaper than taking each block out to find it empty.
        if self.error.is_some() {
            self.end_error(sink);
        }
        if self.warning.is_some() {
            self.end_warning(sink);
        }
    }

    fn error_line(&mut self, message: &str, number: u64, sink: &mut Sink) {
        let trimmed = message.trim();
        if trimmed.starts_with("A complete log of this run can be found in") {
            self.end_error(sink);
            return;
        }
        if let Some(code) = trimmed.strip_prefix("code ") {
            let wrapper_code = code.parse::<i64>().is_ok() || code == "ELIFECYCLE";
            match &mut self.error {
                Some(block) if block.wrapper && wrapper_code => {
                    block.end = number;
                    return;
                }
                Some(block) if block.code.is_none() && block.headline.is_none() => {}
                _ => {
                    self.end_error(sink);
                }
            }
            let block = self.error.get_or_insert_with(|| Block { start: number, ..Block::default() });
            block.code = Some(code.trim().to_string());
            block.wrapper = wrapper_code;
            block.end = number;
            return;
        }
        if trimmed.starts_with("Lifecycle script")
            || trimmed.starts_with("Missing script:")
            || trimmed.starts_with("missing script:")
        {
            self.end_error(sink);
        }
        let block = self.error.get_or_insert_with(|| Block { start: number, ..Block::default() });
        if !(block.in_usage || trimmed.is_empty() || trimmed == "Usage:") {
            block.end = number;
        }
        if trimmed.starts_with("Lifecycle script") {
            block.wrapper = true;
        }
        if let Some(id) = trimmed.strip_prefix("workspace ").or_else(|| trimmed.strip_prefix("in workspace: ")) {
            self.workspace = Some(id.trim().to_string());
            return;
        }
        if let Some(location) = trimmed.strip_prefix("location ").or_else(|| trimmed.strip_prefix("at location: ")) {
            if let Some(id) = self.workspace.take() {
                sink.set_location(&id, location.trim());
            }
            return;
        }
        if trimmed == "Usage:" {
            // EUSAGE ends with the command's help: its one-line description, then usage.
            if block.last_after_blank {
                block.notes.pop();
            }
            block.in_usage = true;
        }
        let after_blank = std::mem::replace(&mut block.prev_blank, trimmed.is_empty());
        if block.wrapper || block.in_usage || trimmed.is_empty() {
            return;
        }
        let first_word = trimmed.split(' ').next().unwrap_or_default();
        if let Some(file) = trimmed.strip_prefix("file ") {
            block.file = Some(file.trim().to_string());
            return;
        }
        if DETAIL_KEYS.contains(&first_word) {
            return;
        }
        if block.headline.is_some() && block.lock_entry(trimmed) {
            return;
        }
        if block.code.as_deref() == Some("EBADENGINE") && block.engine_line(trimmed) {
            return;
        }
        match &block.headline {
            // A line with only the category word (`npm error 404`) says nothing yet.
            None => {
                let headline = strip_category(trimmed, block.code.as_deref());
                block.headline = (!headline.is_empty()).then(|| headline.to_string());
            }
            Some(_) if block.notes.len() < MAX_NOTES && !trimmed.starts_with("For a full report see") => {
                let note = strip_category(trimmed, block.code.as_deref());
                block.last_after_blank = false;
                if !note.is_empty() && !note.starts_with('/') {
                    block.notes.push(note.to_string());
                    block.last_after_blank = after_blank;
                }
            }
            Some(_) => {}
        }
    }

    fn end_error(&mut self, sink: &mut Sink) {
        let Some(mut block) = self.error.take() else { return };
        if block.wrapper || (block.code.is_none() && block.headline.is_none()) {
            return;
        }
        // E404's first line is the HTTP request; the line saying what was not found is the news.
        if block.code.as_deref() == Some("E404")
            && let Some(i) = block.notes.iter().position(|n| n.contains("could not be found"))
        {
            let found = block.notes.remove(i);
            if let Some(old) = block.headline.replace(found) {
                block.notes.insert(0, old);
            }
        }
        if let Some(headline) = &mut block.headline
            && let Some(missing) = headline.strip_prefix("npx canceled due to missing packages and no YES option: ")
        {
            *headline = not_installed(missing);
        }
        if !block.lock.is_empty() {
            block.headline = Some(block.lock_message());
        }
        if let Some(engine) = block.engine_error_message() {
            block.headline = Some(engine);
            block.notes.clear();
        }
        let code = block.code.clone();
        let message = block.headline.take().or_else(|| code.as_ref().map(|c| format!("npm error {c}")));
        let mut diagnostic = Diagnostic::error(message.unwrap_or_default()).with_log_range(block.start, block.end);
        diagnostic.notes = block.notes;
        // npm names no file for a broken package.json unless it is another package's.
        let file = block.file.or_else(|| (code.as_deref() == Some("EJSONPARSE")).then(|| "package.json".to_string()));
        if let Some(file) = file {
            diagnostic = diagnostic.with_location(file, None, None);
        }
        if let Some(code) = code {
            diagnostic = diagnostic.with_code(code);
        }
        sink.push(diagnostic);
    }

    fn warning_line(&mut self, message: &str, number: u64, sink: &mut Sink) {
        let (kind, rest) = message.split_once(' ').unwrap_or((message, ""));
        if let Some(block) = &mut self.warning {
            let same_kind = block.kind == kind;
            let body = if same_kind { rest } else { message };
            let continues = (same_kind && (body.is_empty() || body.starts_with(' ') || body.starts_with(['}', ']'])))
                || block.open
                || (!same_kind && is_error_code(&block.kind));
            if continues {
                block.end = number;
                block.open = body.trim().is_empty() || body.trim_end().ends_with(':');
                if block.kind == "EBADENGINE" {
                    if block.engine.len() < ENGINE_BYTES {
                        block.engine.push(' ');
                        block.engine.push_str(body.trim());
                    }
                    return;
                }
                if block.notes.len() < MAX_NOTES && !body.trim().is_empty() {
                    block.notes.push(body.trim().to_string());
                }
                return;
            }
            self.end_warning(sink);
        }
        if message.trim().is_empty() {
            return;
        }
        self.warning = Some(Block {
            headline: Some(message.trim().to_string()),
            kind: kind.to_string(),
            open: message.trim_end().ends_with(':'),
            start: number,
            end: number,
            ..Block::default()
        });
    }

    fn end_warning(&mut self, sink: &mut Sink) {
        let Some(block) = self.warning.take() else { return };
        let engine = (block.kind == "EBADENGINE").then(|| engine_warning(&block.engine)).flatten();
        let headline = engine.clone().or(block.headline).unwrap_or_default();
        let mut diagnostic = Diagnostic::warning(headline.as_str()).with_log_range(block.start, block.end);
        diagnostic.notes = block.notes;
        if engine.is_some() {
            diagnostic = diagnostic.with_code("EBADENGINE");
        }
        if about_npm_itself(&block.kind, &headline) {
            diagnostic = diagnostic.from_toolchain();
        }
        sink.push(diagnostic);
    }
}

impl Block {
    /// A line of `npm ci`'s lockfile check (`Missing: X from lock file`, `Invalid: lock file's X
    /// does not satisfy Y`), kept while the list fits in [`LOCK_LIST_BYTES`] and counted after.
    fn lock_entry(&mut self, line: &str) -> bool {
        let entry = if line.starts_with("Missing: ") && line.ends_with(" from lock file") {
            line
        } else if let Some(rest) = line.strip_prefix("Invalid: ").filter(|r| r.starts_with("lock file's ")) {
            rest
        } else {
            return false;
        };
        if self.lock_bytes + entry.len() <= LOCK_LIST_BYTES {
            self.lock_bytes += entry.len() + 2;
            self.lock.push(entry.to_string());
        } else {
            self.lock_more += 1;
        }
        true
    }

    /// The packages first, so that a line cut short still names them, then npm's sentence,
    /// which says what to do.
    fn lock_message(&self) -> String {
        let mut message = self.lock.join("; ");
        if self.lock_more > 0 {
            message.push_str(&format!("; and {} more", self.lock_more));
        }
        if let Some(headline) = &self.headline {
            message.push_str(". ");
            message.push_str(headline);
        }
        message
    }

    /// A line of an `EBADENGINE` error (`engine-strict`): `notsup Not compatible with your
    /// version of node/npm: PKG`, `notsup Required: {JSON}`, `notsup Actual: {JSON}`; the
    /// `engine` lines only repeat them.
    fn engine_line(&mut self, line: &str) -> bool {
        let Some(rest) = line.strip_prefix("notsup ").or_else(|| line.strip_prefix("engine ")) else {
            return false;
        };
        let rest = rest.trim();
        let field = if let Some(package) = rest.strip_prefix("Not compatible with your version of node/npm:") {
            Some((0, package))
        } else if let Some(required) = rest.strip_prefix("Required:") {
            Some((1, required))
        } else {
            rest.strip_prefix("Actual:").map(|current| (2, current))
        };
        if let Some((i, value)) = field {
            self.engine_error[i].get_or_insert_with(|| value.trim().to_string());
        }
        true
    }

    fn engine_error_message(&self) -> Option<String> {
        let [Some(package), required, current] = &self.engine_error else { return None };
        let pairs = |v: &Option<String>| v.as_deref().map(engine_pairs).unwrap_or_default();
        Some(engine_message(package, &pairs(required), &pairs(current)))
    }
}

/// An `EBADENGINE` warning's object, as npm prints it with Node's inspect over several lines:
/// `{ package: 'commander@15.0.0', required: { node: '>=22.12.0' }, current: { node: 'v20.20.2',
/// npm: '11.19.1' } }`. None when it names no package.
fn engine_warning(object: &str) -> Option<String> {
    let package = object.split_once("package: '")?.1.split_once('\'')?.0;
    let braces = |key: &str| {
        let rest = object.split_once(key)?.1.trim_start().strip_prefix('{')?;
        Some(engine_pairs(rest.split_once('}')?.0))
    };
    let required = braces("required:").unwrap_or_default();
    let current = braces("current:").unwrap_or_default();
    Some(engine_message(package, &required, &current))
}

/// `node: '>=22', npm: '>=10'` (inspect) or `{"node":">=22","npm":">=10"}` (JSON) → the pairs.
fn engine_pairs(text: &str) -> Vec<(String, String)> {
    let unquote = |s: &str| s.trim().trim_matches(['\'', '"']).to_string();
    text.trim()
        .trim_start_matches('{')
        .trim_end_matches('}')
        .split(',')
        .filter_map(|pair| pair.split_once(':'))
        .map(|(key, value)| (unquote(key), unquote(value)))
        .filter(|(key, value)| !key.is_empty() && !value.is_empty())
        .collect()
}

/// `commander@15.0.0 wants node >=22.12.0 (current v20.20.2)`: each engine the package
/// requires, with the version this machine has of it. npm's "Unsupported engine" is left to the
/// code, EBADENGINE: an answer gives a warning about 100 bytes, and the versions come last.
fn engine_message(package: &str, required: &[(String, String)], current: &[(String, String)]) -> String {
    let wants: Vec<String> = required
        .iter()
        .map(|(engine, range)| match current.iter().find(|(name, _)| name == engine) {
            Some((_, has)) => format!("{engine} {range} (current {has})"),
            None => format!("{engine} {range}"),
        })
        .collect();
    if wants.is_empty() {
        return format!("{}: unsupported engine", package.trim());
    }
    format!("{} wants {}", package.trim(), wants.join(", "))
}

/// Warnings npm gives about its own setup rather than the project: its configuration (from any
/// `.npmrc`, the environment or the command line), `--force`, its log files, and npm or npx
/// themselves. They repeat on every run until the machine changes, so answers count them once.
/// `deprecated`, `ERESOLVE`, `EBADENGINE`, `install-scripts` and the like are about the
/// project's dependencies and stay ordinary warnings.
fn about_npm_itself(kind: &str, headline: &str) -> bool {
    const KINDS: &[&str] = &["config", "cli", "npm", "logfile", "exec", "using"];
    if KINDS.contains(&kind) {
        return true;
    }
    // `Unknown user config "nodedir"`, `Unknown project config`, `Unknown env config` ...
    kind == "Unknown" && headline.split(' ').nth(2).is_some_and(|w| w == "config")
}

/// What `npm exec --no` of a program the project does not have means, from the packages npm
/// would have installed (`["tsx@4.23.15"]`).
fn not_installed(missing: &str) -> String {
    let names: Vec<&str> = missing
        .trim_matches(['[', ']'])
        .split(',')
        .map(|spec| spec.trim().trim_matches('"'))
        .map(|spec| spec.get(1..).and_then(|rest| rest.rfind('@')).map_or(spec, |i| &spec[..i + 1]))
        .filter(|name| !name.is_empty())
        .collect();
    format!(
        "{} not installed in this project, and npm exec may not download it; add it with npm install (npm.install)",
        names.join(", ")
    )
}

/// `> name@1.2.0 build` (or `> build` for a package without name and version) → the id.
fn banner_id(text: &str) -> Option<&str> {
    let rest = text.strip_prefix("> ")?;
    if rest.is_empty() || rest.starts_with(' ') {
        return None;
    }
    match rest.rsplit_once(' ') {
        // A scoped name starts with `@`; the version follows the last one.
        Some((id, _event)) if id.trim_start_matches('@').contains('@') => Some(id),
        Some(_) => None,
        None => Some(""),
    }
}

fn is_error_code(word: &str) -> bool {
    word.len() > 2 && word.starts_with('E') && word[1..].bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
}

/// Drops the category word npm puts before a message: the code itself (`ERESOLVE`), the code
/// without its `E` (`404`), or a subsystem (`JSON.parse`, `notarget`).
fn strip_category<'a>(line: &'a str, code: Option<&str>) -> &'a str {
    let Some((word, rest)) = line.split_once(' ') else {
        return if code
            .is_some_and(|c| c.eq_ignore_ascii_case(line) || c.get(1..).is_some_and(|c| c.eq_ignore_ascii_case(line)))
        {
            ""
        } else {
            line
        };
    };
    let category = code.is_some_and(|c| {
        c.eq_ignore_ascii_case(word) || c.get(1..).is_some_and(|tail| tail.eq_ignore_ascii_case(word))
    }) || word == "JSON.parse"
        || word == "notarget";
    if category { rest.trim_start() } else { line }
}

#[cfg(test)]
mod tests {
    use crate::parse::tests::{errors, parse, warnings};

    #[test]
    fn error_code_blocks() {
        let log = "npm error code E404\n\
npm error 404 Not Found - GET https://example.invalid/nope-pkg\n\
npm error 404\n\
npm error 404  The requested resource 'nope-pkg@^1.0.0' could not be found or you do not have permission to access it.\n\
npm error 404\n\
npm error A complete log of this run can be found in: /home/u/.npm/_logs/x-debug-0.log\n";
        let result = parse(log, 1);
        let errs = errors(&result);
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].code.as_deref(), Some("E404"));
        assert!(
            errs[0].message.starts_with("The requested resource 'nope-pkg@^1.0.0' could not be found"),
            "{}",
            errs[0].message
        );
        assert_eq!(errs[0].log_range.map(|r| (r.start, r.end)), Some((1, 5)));
    }

    #[test]
    fn a_category_word_alone_is_no_headline() {
        let log = "npm error code E404\nnpm error 404\nnpm error 404  'lefpad@*' is not in this registry.\n";
        let result = parse(log, 1);
        assert_eq!(errors(&result)[0].message, "'lefpad@*' is not in this registry.");
        let result = parse("npm error code E404\nnpm error 404\n", 1);
        assert_eq!(errors(&result)[0].message, "npm error E404");
    }

    #[test]
    fn eresolve_ejsonparse_and_missing_script() {
        let result = parse(
            "npm error code ERESOLVE\nnpm error ERESOLVE unable to resolve dependency tree\nnpm error\nnpm error While resolving: app@1.0.0\n",
            1,
        );
        assert_eq!(errors(&result)[0].message, "unable to resolve dependency tree");
        assert_eq!(errors(&result)[0].notes, ["While resolving: app@1.0.0"]);
        let result = parse(
            "npm error code EJSONPARSE\nnpm error JSON.parse Invalid package.json: JSONParseError: Expected ',' at position 124\n",
            1,
        );
        let errs = errors(&result);
        assert_eq!((errs[0].file.as_deref(), errs[0].code.as_deref()), (Some("package.json"), Some("EJSONPARSE")));
        assert!(errs[0].message.starts_with("Invalid package.json"));
        let result = parse(
            "npm error Missing script: \"nope\"\nnpm error\nnpm error To see a list of scripts, run:\nnpm error   npm run\n",
            1,
        );
        let errs = errors(&result);
        assert_eq!(
            (errs.len(), errs[0].code.as_deref(), errs[0].message.as_str()),
            (1, None, "Missing script: \"nope\"")
        );
    }

    #[test]
    fn warnings_and_their_continuations() {
        let log = "npm warn deprecated pad@0.3.2: Use padStart instead\n\
npm warn deprecated old-log@1.0.0: no longer maintained\n\
\n\
added 5 packages in 2s\n\
npm warn install-scripts 1 package has install scripts not yet covered by allowScripts:\n\
npm warn install-scripts   esbuild@0.25.9 (postinstall: node install.js)\n\
npm warn install-scripts\n\
npm warn install-scripts Run `npm install-scripts ls` to review.\n\
npm warn ERESOLVE overriding peer dependency\n\
npm warn While resolving: app@1.0.0\n\
npm warn Found: react@17.0.2\n";
        let result = parse(log, 0);
        let warns = warnings(&result);
        assert_eq!(warns.len(), 4, "{warns:?}");
        assert_eq!(warns[0].message, "deprecated pad@0.3.2: Use padStart instead");
        assert!(warns[2].message.contains("not yet covered by allowScripts"));
        assert_eq!(warns[2].notes.len(), 2);
        assert_eq!(warns[3].notes.len(), 2);
    }

    #[test]
    fn npm_setup_warnings_are_the_toolchain_s() {
        let log = "npm warn config production Use `--omit=dev` instead.\n\
npm warn config legacy-bundling This option has been deprecated in favor of `--install-strategy=nested`\n\
npm warn Unknown project config \"shamefully-hoist\". This will stop working in the next major version of npm. See `npm help npmrc` for supported config options.\n\
npm warn Unknown user config \"nodedir\". This will stop working in the next major version of npm. See `npm help npmrc` for supported config options.\n\
npm warn using --force Recommended protections disabled.\n\
npm warn deprecated pad@0.3.2: Use padStart instead\n\
npm warn Unknown flag in lockfile\n";
        let result = parse(log, 0);
        let warns = warnings(&result);
        assert_eq!(warns.len(), 7, "{warns:?}");
        let toolchain: Vec<bool> = warns.iter().map(|w| w.toolchain).collect();
        assert_eq!(toolchain, [true, true, true, true, true, false, false]);
        assert!(warns[2].message.starts_with("Unknown project config \"shamefully-hoist\""));
    }

    #[test]
    fn workspace_failure_resolves_paths_and_is_not_an_error() {
        let log = "\n> @shop/web@1.0.0 build\n> tsc\n\n\
src/app.ts(3,7): error TS2322: Type 'number' is not assignable to type 'string'.\n\
npm error Lifecycle script `build` failed with error:\n\
npm error code 2\n\
npm error path /repo/packages/web\n\
npm error workspace @shop/web@1.0.0\n\
npm error location /repo/packages/web\n\
npm error command failed\n\
npm error command sh -c tsc\n";
        let result = super::super::tests::parse_in(log, 2, "/repo");
        let errs = errors(&result);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(errs[0].file.as_deref(), Some("packages/web/src/app.ts"));
    }

    #[test]
    fn usage_errors_leave_out_the_command_s_help() {
        // npm 11.19.1, `npm ci` with a package.json the lockfile does not match.
        let log = "npm error code EUSAGE\nnpm error\n\
npm error `npm ci` can only install packages when your package.json and package-lock.json or npm-shrinkwrap.json are in sync. Please update your lock file with `npm install` before continuing.\n\
npm error\nnpm error Missing: left-pad@1.3.0 from lock file\nnpm error\nnpm error Clean install a project\n\
npm error\nnpm error Usage:\nnpm error npm ci\nnpm error\nnpm error Options:\nnpm error [--no-bin-links] [--no-fund] [--dry-run]\n\
npm error\nnpm error aliases: clean-install, ic, install-clean, isntall-clean\nnpm error\nnpm error Run \"npm help ci\" for more info\n\
npm error A complete log of this run can be found in: /home/u/.npm/_logs/x-debug-0.log\n";
        let result = parse(log, 1);
        let errs = errors(&result);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(
            errs[0]
                .message
                .starts_with("Missing: left-pad@1.3.0 from lock file. `npm ci` can only install packages when"),
            "{}",
            errs[0].message
        );
        assert!(errs[0].notes.is_empty(), "{:?}", errs[0].notes);
        assert_eq!(errs[0].code.as_deref(), Some("EUSAGE"));
        assert_eq!(errs[0].log_range.map(|r| (r.start, r.end)), Some((1, 7)));
    }

    /// npm 10.9.9 and 11.19.1 word the lockfile check alike; a major upgrade (jest 29 to 30 in
    /// luxon) lists 449 packages, and those past the budget are counted, not dropped silently.
    #[test]
    fn every_package_the_lockfile_check_names_is_kept_or_counted() {
        let head = "npm error code EUSAGE\nnpm error\n\
npm error `npm ci` can only install packages when your package.json and package-lock.json or npm-shrinkwrap.json are in sync. Please update your lock file with `npm install` before continuing.\n\
npm error\n\
npm error Missing: dayjs@1.11.23 from lock file\n\
npm error Invalid: lock file's validator@13.9.0 does not satisfy validator@13.15.35\n";
        let tail = "npm error\nnpm error Clean install a project\nnpm error\nnpm error Usage:\nnpm error npm ci\n";
        let result = parse(&format!("{head}{tail}"), 1);
        let message = &errors(&result)[0].message;
        assert!(
            message.starts_with(
                "Missing: dayjs@1.11.23 from lock file; lock file's validator@13.9.0 does not satisfy validator@13.15.35. `npm ci`"
            ),
            "{message}"
        );
        let many: String = (0..449)
            .map(|i| format!("npm error Invalid: lock file's jest-util@29.4.{i} does not satisfy jest-util@30.5.1\n"))
            .collect();
        let result = parse(&format!("{head}{many}{tail}"), 1);
        let errs = errors(&result);
        assert_eq!(errs.len(), 1);
        let kept = errs[0].message.matches("does not satisfy").count();
        assert!(kept > 10, "{}", errs[0].message);
        assert!(errs[0].message.contains(&format!("; and {} more. `npm ci`", 450 - kept)), "{}", errs[0].message);
        assert!(errs[0].message.len() < 2000);
    }

    /// npm 11.19.1 `npm ci` in semantic-release on Node 20: one object per package, then the
    /// lockfile error; each warning names its package, what it requires and what is here.
    #[test]
    fn each_unsupported_engine_is_its_own_warning_even_when_the_command_fails() {
        let log = "npm warn EBADENGINE Unsupported engine {\n\
npm warn EBADENGINE   package: 'semantic-release@0.0.0-development',\n\
npm warn EBADENGINE   required: { node: '^22.14.0 || >= 24.10.0' },\n\
npm warn EBADENGINE   current: { node: 'v20.20.2', npm: '11.19.1' }\n\
npm warn EBADENGINE }\n\
npm warn EBADENGINE Unsupported engine {\n\
npm warn EBADENGINE   package: '@sindresorhus/is@8.1.0',\n\
npm warn EBADENGINE   required: { node: '>=22' },\n\
npm warn EBADENGINE   current: { node: 'v20.20.2', npm: '11.19.1' }\n\
npm warn EBADENGINE }\n\
npm error code EUSAGE\nnpm error\n\
npm error `npm ci` can only install packages when your package.json and package-lock.json or npm-shrinkwrap.json are in sync. Please update your lock file with `npm install` before continuing.\n\
npm error\nnpm error Missing: commander@15.1.0 from lock file\n";
        let result = parse(log, 1);
        let warns = warnings(&result);
        let said: Vec<(&str, Option<&str>)> = warns.iter().map(|w| (w.message.as_str(), w.code.as_deref())).collect();
        assert_eq!(
            said,
            [
                (
                    "semantic-release@0.0.0-development wants node ^22.14.0 || >= 24.10.0 (current v20.20.2)",
                    Some("EBADENGINE")
                ),
                ("@sindresorhus/is@8.1.0 wants node >=22 (current v20.20.2)", Some("EBADENGINE")),
            ]
        );
        assert_eq!(warns[1].log_range.map(|r| (r.start, r.end)), Some((6, 10)));
        assert!(warns.iter().all(|w| !w.toolchain && w.notes.is_empty()));
        assert!(errors(&result)[0].message.starts_with("Missing: commander@15.1.0 from lock file."));
    }

    /// npm 11.19.1 `npm ci` in javascript-algorithms, whose .npmrc sets `engine-strict=true`.
    #[test]
    fn an_engine_strict_error_names_the_package_and_both_versions() {
        let log = "npm error code EBADENGINE\n\
npm error engine Unsupported engine\n\
npm error engine Not compatible with your version of node/npm: javascript-algorithms-and-data-structures@0.0.4\n\
npm error notsup Not compatible with your version of node/npm: javascript-algorithms-and-data-structures@0.0.4\n\
npm error notsup Required: {\"node\":\">=22.0.0\",\"npm\":\">=10.0.0\"}\n\
npm error notsup Actual:   {\"node\":\"v20.20.2\",\"npm\":\"11.19.1\"}\n\
npm error A complete log of this run can be found in: /home/u/.npm/_logs/x-debug-0.log\n";
        let result = parse(log, 1);
        let errs = errors(&result);
        assert_eq!(errs.len(), 1);
        assert_eq!(
            errs[0].message,
            "javascript-algorithms-and-data-structures@0.0.4 wants node >=22.0.0 (current v20.20.2), npm >=10.0.0 (current 11.19.1)"
        );
        assert_eq!((errs[0].code.as_deref(), errs[0].notes.len()), (Some("EBADENGINE"), 0));
    }

    #[test]
    fn exec_of_a_program_the_project_lacks() {
        let log = "npm error npx canceled due to missing packages and no YES option: [\"tsx@4.23.15\", \"@scope/x@1.0.0\"]\n\
npm error A complete log of this run can be found in: /home/u/.npm/_logs/x-debug-0.log\n";
        let result = parse(log, 1);
        let errs = errors(&result);
        assert_eq!(errs.len(), 1);
        assert!(errs[0].message.starts_with("tsx, @scope/x not installed in this project"), "{}", errs[0].message);
        assert!(errs[0].message.contains("npm.install"), "{}", errs[0].message);
    }

    #[test]
    fn command_not_found() {
        let result = parse("\n> app@1.0.0 build\n> tsc\n\nsh: 1: tsc: not found\n", 127);
        assert_eq!(errors(&result)[0].message, "sh: 1: tsc: not found");
    }
}
