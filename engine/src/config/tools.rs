//! Tools defined in a config file: `[tools."web.lint"]` with the command to run and how to read
//! its output (formats that plugins export, or regex patterns of the file's own).
//!
//! A definition is checked when its file is read: a bad regex or a missing `run` makes that tool,
//! and only that tool, unusable, with a [`Problem`] naming the file and the key. Whether its
//! formats exist is known only once the plugins are loaded (see `crate::tools`).

use super::Problem;
use buildvise_plugin_api::Severity;
use regex::{Regex, RegexBuilder};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Compiled size a pattern may reach: generous for any line format, and a bound on what a
/// project's file can make buildvise allocate.
const PATTERN_SIZE_LIMIT: usize = 1 << 20;

/// `[tools."NAME"]` as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
struct ToolFile {
    run: Vec<String>,
    #[serde(default)]
    formats: Vec<String>,
    #[serde(default)]
    patterns: Vec<PatternFile>,
    description: Option<String>,
    #[serde(default)]
    mutates: bool,
    timeout_secs: Option<u64>,
    /// Directories outside the project it writes, which the sandbox then lets it write.
    #[serde(default)]
    caches: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
struct PatternFile {
    regex: String,
    /// The severity of every match, when the regex has no `severity` group.
    severity: Option<String>,
}

/// A tool a config file defines.
#[derive(Debug, Clone)]
pub struct ToolDef {
    pub name: String,
    /// The argv; the call's args are appended.
    pub run: Vec<String>,
    /// Formats exported by plugins, in the order they read each line.
    pub formats: Vec<String>,
    pub patterns: Vec<Pattern>,
    pub description: Option<String>,
    pub mutates: bool,
    pub timeout_secs: Option<u64>,
    /// Directories outside the project it writes (absolute; the user's file only).
    pub caches: Vec<String>,
    /// The file that defines it.
    pub origin: PathBuf,
}

/// Whose file a definition comes from: only the operator's may widen what a run may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Owner {
    Operator,
    Project,
}

/// A line pattern: named groups `message` (required), `file`, `line`, `column`, `severity`,
/// `code`.
#[derive(Debug, Clone)]
pub struct Pattern {
    pub regex: Regex,
    pub severity: Severity,
}

/// The definitions of one file, checked: those that can be used, and a problem for each of the
/// others.
pub(super) fn read(files: BTreeMap<String, toml::Value>, origin: &Path, owner: Owner) -> (Vec<ToolDef>, Vec<Problem>) {
    let (mut defs, mut problems) = (Vec::new(), Vec::new());
    for (name, value) in files {
        match read_one(name, value, origin, owner) {
            Ok(def) => defs.push(def),
            Err(problem) => problems.push(problem),
        }
    }
    (defs, problems)
}

fn read_one(name: String, value: toml::Value, origin: &Path, owner: Owner) -> Result<ToolDef, Problem> {
    let problem = |key: &str, reason: String| Problem {
        path: origin.to_path_buf(),
        key: format!("tools.\"{name}\"{key}"),
        reason,
        tool: Some(name.clone()),
    };
    let file = ToolFile::deserialize(value).map_err(|e| problem("", e.message().to_string()))?;
    let valid_name = !name.is_empty()
        && !name.starts_with('.')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
    if !valid_name {
        return Err(problem("", "a tool name is letters, digits, `.`, `-` and `_`, like `web.lint`".into()));
    }
    if file.run.first().is_none_or(String::is_empty) {
        return Err(problem(".run", "send the command as an argv, e.g. run = [\"make\", \"check\"]".into()));
    }
    if let Some(i) = file.formats.iter().position(|f| f.trim().is_empty()) {
        return Err(problem(&format!(".formats[{i}]"), "an empty format name; send one that `list` shows".into()));
    }
    if !file.caches.is_empty() && owner == Owner::Project {
        return Err(problem(
            ".caches",
            "a project's file may not widen what runs may write; the operator names a tool's caches in the \
             user's config"
                .into(),
        ));
    }
    if let Some(i) = file.caches.iter().position(|c| !Path::new(c).is_absolute()) {
        return Err(problem(
            &format!(".caches[{i}]"),
            "send an absolute directory, e.g. \"/home/me/.cache/tool\"".into(),
        ));
    }
    let patterns = file
        .patterns
        .iter()
        .enumerate()
        .map(|(i, p)| pattern(p).map_err(|e| problem(&format!(".patterns[{i}]"), e)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ToolDef {
        run: file.run,
        formats: file.formats.into_iter().map(|f| f.trim().to_string()).collect(),
        patterns,
        description: file.description,
        mutates: file.mutates,
        timeout_secs: file.timeout_secs,
        caches: file.caches,
        origin: origin.to_path_buf(),
        name,
    })
}

fn pattern(file: &PatternFile) -> Result<Pattern, String> {
    let regex = RegexBuilder::new(&file.regex)
        .size_limit(PATTERN_SIZE_LIMIT)
        .build()
        .map_err(|e| format!("`regex` is not a valid regular expression: {e}"))?;
    if !regex.capture_names().any(|n| n == Some("message")) {
        return Err("`regex` needs a named group `message`, e.g. `(?P<message>.*)`; `file`, `line`, `column`, \
                    `severity` and `code` are optional"
            .into());
    }
    let severity = match file.severity.as_deref() {
        None => Severity::Error,
        Some(word) => severity_of(word).ok_or_else(|| format!("`severity` is error, warning or info, not `{word}`"))?,
    };
    Ok(Pattern { regex, severity })
}

/// `error`, `warning`, `note`…: the words tools print, case-insensitively.
pub fn severity_of(word: &str) -> Option<Severity> {
    match word.to_ascii_lowercase().as_str() {
        "error" | "err" | "fatal" | "fatal error" | "e" => Some(Severity::Error),
        "warning" | "warn" | "w" => Some(Severity::Warning),
        "info" | "note" | "hint" | "help" | "i" => Some(Severity::Info),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools(text: &str) -> Result<Vec<ToolDef>, String> {
        #[derive(Deserialize)]
        struct File {
            tools: BTreeMap<String, toml::Value>,
        }
        let file: File = toml::from_str(text).map_err(|e| e.to_string())?;
        match read(file.tools, Path::new("/p/buildvise.toml"), Owner::Project) {
            (defs, problems) if problems.is_empty() => Ok(defs),
            (_, problems) => Err(problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n")),
        }
    }

    #[test]
    fn a_bad_tool_leaves_the_others_usable() {
        let (defs, problems) = {
            let text = "[tools.good]\nrun = [\"a\"]\n[tools.bad]\nrun = [\"b\"]\n[[tools.bad.patterns]]\nregex = '('\n\
                        [tools.odd]\nrun = [\"c\"]\nshell = true\n";
            let table: toml::Table = toml::from_str(text).unwrap();
            let tools = table["tools"].as_table().unwrap().clone().into_iter().collect();
            read(tools, Path::new("/p/buildvise.toml"), Owner::Project)
        };
        assert_eq!(defs.iter().map(|d| d.name.as_str()).collect::<Vec<_>>(), ["good"]);
        let named: Vec<_> = problems.iter().map(|p| (p.tool.as_deref(), p.key.as_str())).collect();
        assert_eq!(named, [(Some("bad"), "tools.\"bad\".patterns[0]"), (Some("odd"), "tools.\"odd\"")]);
    }

    // Unix paths: on Windows `/home/me` is not absolute.
    #[cfg(unix)]
    #[test]
    fn only_the_operator_names_a_tools_caches() {
        let text = "[tools.gen]\nrun = [\"gen\"]\ncaches = [\"/home/me/.cache/gen\"]\n";
        let table: toml::Table = toml::from_str(text).unwrap();
        let files: BTreeMap<String, toml::Value> = table["tools"].as_table().unwrap().clone().into_iter().collect();
        let (defs, problems) =
            read(files.clone(), Path::new("/home/me/.config/buildvise/config.toml"), Owner::Operator);
        assert_eq!((defs[0].caches.as_slice(), problems.len()), (&["/home/me/.cache/gen".to_string()][..], 0));
        let (defs, problems) = read(files, Path::new("/p/buildvise.toml"), Owner::Project);
        assert!(defs.is_empty());
        assert!(problems[0].to_string().contains("may not widen what runs may write"), "{problems:?}");
        let relative = tools("[tools.gen]\nrun = [\"gen\"]\ncaches = [\"cache\"]\n");
        assert!(relative.is_err(), "a project's caches are refused before their form is read");
    }

    #[test]
    fn a_tool_with_formats_and_one_with_patterns() {
        let defs = tools(
            "[tools.\"web.lint\"]\nrun = [\"npx\", \"eslint\", \".\"]\nformats = [\"eslint\"]\nmutates = false\n\
             timeout_secs = 300\n[[tools.\"ci.check\".patterns]]\n\
             regex = '^(?P<file>[^:]+):(?P<line>\\d+): (?P<severity>error|warning): (?P<message>.*)$'\n\
             [tools.\"ci.check\"]\nrun = [\"./check.sh\"]\n",
        )
        .unwrap();
        assert_eq!(defs.len(), 2);
        let (check, lint) = (&defs[0], &defs[1]);
        assert_eq!(
            (lint.name.as_str(), lint.formats.as_slice(), lint.timeout_secs),
            ("web.lint", &["eslint".to_string()][..], Some(300))
        );
        assert_eq!(check.patterns.len(), 1);
        assert_eq!(check.patterns[0].severity, Severity::Error);
        assert_eq!(check.origin, Path::new("/p/buildvise.toml"));
    }

    #[test]
    fn mistakes_name_the_file_and_the_key() {
        let cases = [
            ("[tools.x]\nrun = []\n", "`tools.\"x\".run`"),
            ("[tools.x]\nrun = [\"a\"]\n[[tools.x.patterns]]\nregex = '(?P<message>'\n", "`tools.\"x\".patterns[0]`"),
            ("[tools.x]\nrun = [\"a\"]\n[[tools.x.patterns]]\nregex = '^(.*)$'\n", "named group `message`"),
            (
                "[tools.x]\nrun = [\"a\"]\n[[tools.x.patterns]]\nregex = '(?P<message>.*)'\nseverity = \"loud\"\n",
                "not `loud`",
            ),
            ("[tools.\"a b\"]\nrun = [\"a\"]\n", "`tools.\"a b\"`"),
            ("[tools.x]\nrun = [\"a\"]\nformats = [\" \"]\n", "`tools.\"x\".formats[0]`"),
        ];
        for (text, said) in cases {
            let err = tools(text).expect_err(text);
            assert!(err.contains("/p/buildvise.toml") && err.contains(said), "{text}: {err}");
        }
        assert!(tools("[tools.x]\nrun = [\"a\"]\nshell = true\n").unwrap_err().contains("unknown field"));
    }

    #[test]
    fn a_pattern_cannot_grow_without_bound() {
        let huge = "[tools.x]\nrun = [\"a\"]\n[[tools.x.patterns]]\nregex = '(?P<message>(\\w{1000}){1000})'\n";
        assert!(tools(huge).unwrap_err().contains("patterns[0]"));
    }
}
