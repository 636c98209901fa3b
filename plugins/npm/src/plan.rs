//! Turning a tool call into an `npm` command line.
//!
//! Scripts are checked against package.json before anything runs, so an agent that asks for a
//! script the project does not have gets the list of scripts that exist instead of npm's error.
//! When the script is a single jest or vitest command, the plan asks it for a JSON report in the
//! artifact directory; the printed output stays the tool's human report.

use crate::manager::{self, Manager};
use buildvise_plugin_api::{CommandPlan, PlanRequest, cache_dir};
use std::collections::BTreeMap;
use std::path::Path;

/// npm options that name a program npm or a script would run (`--script-shell`, `--node-options`,
/// `--git`, `--node-gyp`…), an npmrc that could set one, or a place outside the project to install
/// to or act on (`--prefix`, `--global`, `--location`).
const FORBIDDEN_OPTIONS: &[&str] = &[
    "script-shell",
    "shell",
    "node-options",
    "node-gyp",
    "git",
    "editor",
    "viewer",
    "browser",
    "call",
    "init-module",
    "init.module",
    "userconfig",
    "globalconfig",
    "prefix",
    "global",
    "location",
];

/// npm options whose value is a path npm reads or writes.
const PATH_OPTIONS: &[&str] = &["cache", "cafile", "logs-dir", "workspace", "pack-destination", "provenance-file"];

/// The names of npm 11's options. npm reads any other name as an abbreviation of one of them
/// (`--script-sh`, `--prefi`), or keeps it as an unknown setting and hands it to scripts as
/// `npm_config_<name>`, lower-cased with `_` for `-`, where an `npm` run by the script reads it
/// back (`--Script_Shell`) and node-gyp finds `--python`: so only these names pass, as spelled.
const NPM_OPTIONS: &str = "_auth access all allow-directory allow-file allow-git allow-remote allow-same-version \
    allow-scripts allow-scripts-pending allow-scripts-pin also audit audit-level auth-type before bin-links browser \
    bypass-2fa ca cache cache-max cache-min cafile call cert cidr color commit-hooks cpu dangerously-allow-all-scripts \
    depth description dev diff diff-dst-prefix diff-ignore-all-space diff-name-only diff-no-prefix diff-src-prefix \
    diff-text diff-unified dry-run editor engine-strict expect-result-count expect-results expires fetch-retries \
    fetch-retry-factor fetch-retry-maxtimeout fetch-retry-mintimeout fetch-timeout force foreground-scripts \
    format-package-lock fund git git-tag-version global global-style globalconfig heading https-proxy if-present \
    ignore-scripts include include-attestations include-staged include-workspace-root init-author-email \
    init-author-name init-author-url init-license init-module init-private init-type init-version init.author.email \
    init.author.name init.author.url init.license init.module init.version install-links install-strategy json key \
    legacy-bundling legacy-peer-deps libc link local-address location lockfile-version loglevel logs-dir logs-max long \
    maxsockets message min-release-age min-release-age-exclude name node-gyp node-options noproxy offline omit \
    omit-lockfile-registry-resolved only optional orgs orgs-permission os otp pack-destination package package-lock \
    package-lock-only packages packages-all packages-and-scopes-permission parseable password prefer-dedupe \
    prefer-offline prefer-online prefix preid production progress provenance provenance-file proxy read-only \
    rebuild-bundle registry replace-registry-host save save-bundle save-dev save-exact save-optional save-peer \
    save-prefix save-prod sbom-format sbom-type scope scopes script-shell searchexclude searchlimit searchopts \
    searchstaleness shell shrinkwrap sign-git-commit sign-git-tag strict-allow-scripts strict-peer-deps strict-ssl tag \
    tag-version-prefix timing token-description umask unicode update-notifier usage user-agent userconfig version \
    versions viewer which workspace workspaces workspaces-update yes";

/// npm 11's shorthands and the options they stand for (the values some of them add are left out).
/// A run of single-letter shorthands is a cluster: `-SE` is `--save --save-exact`.
const SHORTHANDS: &[(&str, &str)] = &[
    ("enjoy-by", "before"),
    ("d", "loglevel"),
    ("dd", "loglevel"),
    ("ddd", "loglevel"),
    ("quiet", "loglevel"),
    ("q", "loglevel"),
    ("s", "loglevel"),
    ("silent", "loglevel"),
    ("verbose", "loglevel"),
    ("desc", "description"),
    ("help", "usage"),
    ("local", "no-global"),
    ("n", "no-yes"),
    ("no", "no-yes"),
    ("porcelain", "parseable"),
    ("readonly", "read-only"),
    ("reg", "registry"),
    ("iwr", "include-workspace-root"),
    ("ws", "workspaces"),
    ("a", "all"),
    ("c", "call"),
    ("f", "force"),
    ("g", "global"),
    ("L", "location"),
    ("l", "long"),
    ("m", "message"),
    ("p", "parseable"),
    ("C", "prefix"),
    ("S", "save"),
    ("B", "save-bundle"),
    ("D", "save-dev"),
    ("E", "save-exact"),
    ("O", "save-optional"),
    ("P", "save-prod"),
    ("?", "usage"),
    ("H", "usage"),
    ("h", "usage"),
    ("v", "version"),
    ("w", "workspace"),
    ("y", "yes"),
];

/// The command for one call of `npm.build`, `npm.test`, `npm.run`, `npm.exec`, `npm.install` or
/// `npm.ci`: npm's here, another manager's in [`crate::manager_plan`] when the project uses one.
pub fn plan(request: &PlanRequest) -> Result<CommandPlan, String> {
    let manifest = read_manifest(Path::new(&request.cwd))?;
    let (choice, call_args) = manager::choose(Path::new(&request.cwd), &request.args)?;
    if choice.manager != Manager::Npm {
        return crate::manager_plan::plan(request, choice, call_args, &manifest);
    }
    let mut args: Vec<String> = Vec::new();
    let script = match request.tool.as_str() {
        "npm.install" | "npm.ci" => {
            check_options(call_args, request)?;
            let command = request.tool.trim_start_matches("npm.");
            if command == "install" {
                for spec in call_args.iter().filter(|a| !a.starts_with('-')) {
                    check_install_spec(spec, request)?;
                }
            } else if let Some(spec) = call_args.iter().find(|a| !a.starts_with('-')) {
                return Err(format!(
                    "`{spec}`: npm ci installs the lockfile and takes no package names; send options only"
                ));
            }
            args.push(command.into());
            args.extend(call_args.iter().cloned());
            return Ok(finish_plan(args, Vec::new()));
        }
        "npm.exec" => return plan_exec(request, call_args),
        "npm.build" => "build".to_string(),
        "npm.test" => "test".to_string(),
        "npm.run" => match call_args.first() {
            Some(name) if !name.starts_with('-') => name.clone(),
            _ => {
                return Err(format!(
                    "npm.run needs the script name as its first argument; scripts in package.json: {}",
                    manifest.script_list()
                ));
            }
        },
        other => return Err(unknown_tool(other)),
    };
    let rest = if request.tool == "npm.run" { &call_args[1..] } else { call_args };
    let (npm_options, script_args) = split_args(rest);
    check_options(npm_options, request)?;

    let command = manifest.script(&script)?;
    if script == "test" {
        args.push("test".into());
    } else {
        args.extend(["run".to_string(), script.clone()]);
    }
    args.extend(npm_options.iter().cloned());

    let mut extra: Vec<String> = script_args.to_vec();
    let mut artifacts = Vec::new();
    if let Some((flags, file)) = report(command, request) {
        extra.extend(flags);
        artifacts.push(file);
    }
    if !extra.is_empty() {
        args.push("--".into());
        args.extend(extra);
    }
    Ok(finish_plan(args, artifacts))
}

pub(crate) fn unknown_tool(tool: &str) -> String {
    format!("unknown tool {tool}; send npm.build, npm.test, npm.run, npm.exec, npm.install or npm.ci")
}

/// The flags that make a lone jest or vitest script write its JSON report, and the report's file.
pub(crate) fn report(command: Option<&str>, request: &PlanRequest) -> Option<(Vec<String>, String)> {
    let runner = command.and_then(report_runner)?;
    let (flags, file) = runner.report_flags(Path::new(&request.cwd), &request.artifact_dir);
    (!flags.is_empty()).then_some((flags, file))
}

/// `npm exec --no -- PROGRAM ARGS`: PROGRAM must be a bin the project has installed. npm would
/// otherwise look it up in the registry and offer to download it (or run a program of the same
/// name from PATH), so a name not in `node_modules/.bin` is refused here, and `--no` makes npm
/// refuse to install anyway.
fn plan_exec(request: &PlanRequest, call_args: &[String]) -> Result<CommandPlan, String> {
    let (npm_options, command) = match call_args.first() {
        Some(first) if first.starts_with('-') => split_args(call_args),
        _ => (&[][..], call_args),
    };
    check_options(npm_options, request)?;
    // `--package` names a package to install, `--yes` downloads without asking.
    for option in npm_options.iter().filter(|o| o.starts_with('-')) {
        let name = option.trim_start_matches('-').split('=').next().unwrap_or_default();
        let keys = option_names(name).unwrap_or_default();
        let installs = |key: &&str| {
            let (negated, key) = strip_negations(key);
            key == "package" || (key == "yes" && !negated)
        };
        if keys.iter().any(installs) {
            return Err(format!(
                "`{option}` is not allowed with npm.exec: it never installs a package; run an installed bin"
            ));
        }
    }
    check_program(command.first(), request)?;
    let mut args = vec!["exec".to_string(), "--no".to_string()];
    args.extend(npm_options.iter().cloned());
    args.push("--".into());
    args.extend(command.iter().cloned());
    Ok(finish_plan(args, Vec::new()))
}

/// Checks that `program` is the name of a bin the project has installed, the only kind of program
/// `npm.exec` runs, whichever manager runs it.
pub(crate) fn check_program(program: Option<&String>, request: &PlanRequest) -> Result<(), String> {
    let Some(program) = program else {
        return Err("npm.exec needs the program to run: a bin of the project's dependencies (`tsc`, `eslint`)".into());
    };
    if program.is_empty() || program.starts_with('-') || program.contains(['/', '\\', '@', ':']) {
        return Err(format!(
            "`{program}` is not a bin name; send the name of an installed package's bin (`tsc`, `eslint`), \
             not a path or a package spec"
        ));
    }
    if !has_local_bin(Path::new(&request.cwd), program) {
        return Err(format!(
            "`{program}` is not installed in this project (no node_modules/.bin/{program} here or above); \
             npm.exec never downloads: install its package with npm.install (or npm.ci if node_modules is missing)"
        ));
    }
    Ok(())
}

/// Whether `node_modules/.bin/NAME` is in `cwd` or a folder above it, where npm exec looks (a
/// workspace's bins are hoisted to the root).
fn has_local_bin(cwd: &Path, name: &str) -> bool {
    cwd.ancestors().any(|dir| dir.join("node_modules/.bin").join(name).exists())
}

fn finish_plan(args: Vec<String>, artifacts: Vec<String>) -> CommandPlan {
    // No colour: NO_COLOR alone, because node warns on every start when FORCE_COLOR is set too.
    let mut plan = CommandPlan::new("npm")
        .with_args(args)
        .with_env("NO_COLOR", "1")
        .with_env("npm_config_update_notifier", "false")
        .with_env("npm_config_fund", "false")
        .with_caches(caches());
    plan.artifacts = artifacts;
    plan
}

/// What the package managers write outside the project: npm's cache, and pnpm's store, yarn's
/// and bun's caches and corepack's downloads, which live under the XDG cache and data
/// directories or a directory of their own.
pub(crate) fn caches() -> Vec<String> {
    [
        cache_dir("npm_config_cache", ".npm"),
        cache_dir("XDG_CACHE_HOME", ".cache"),
        cache_dir("XDG_DATA_HOME", ".local/share"),
        cache_dir("YARN_CACHE_FOLDER", ".yarn"),
        cache_dir("BUN_INSTALL", ".bun"),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Arguments before a literal `--` are npm's own (`-w web`); after it, the script's. Without a
/// `--`, every argument is the script's.
fn split_args(args: &[String]) -> (&[String], &[String]) {
    match args.iter().position(|a| a == "--") {
        Some(i) => (&args[..i], &args[i + 1..]),
        None => (&[], args),
    }
}

/// Checks npm's options as npm reads them (nopt): any number of leading dashes, a value after `=`
/// or in the next argument, shorthands and clusters of them, and `--no-` negations. Only npm's own
/// option names pass (see [`NPM_OPTIONS`]); of those, the forbidden ones are refused and path
/// options checked against the roots.
fn check_options(options: &[String], request: &PlanRequest) -> Result<(), String> {
    for (i, option) in options.iter().enumerate() {
        let Some(name) = option.strip_prefix('-') else { continue };
        let (name, inline) = match name.split_once('=') {
            Some((name, value)) => (name.trim_start_matches('-'), Some(value)),
            None => (name.trim_start_matches('-'), None),
        };
        if name.is_empty() {
            continue;
        }
        let Some(keys) = option_names(name) else {
            return Err(format!(
                "`{option}` is not an npm option's full name (npm would expand it as an abbreviation or pass it to \
                 scripts as a setting); send npm's full option name, or put the script's own arguments after `--`"
            ));
        };
        let value = inline.or_else(|| options.get(i + 1).map(String::as_str));
        let typed = &option[..option.len() - inline.map_or(0, |v| v.len() + 1)];
        for key in keys {
            let (negated, key) = strip_negations(key);
            if FORBIDDEN_OPTIONS.contains(&key) {
                return Err(format!(
                    "`{option}` sets npm's `{key}` option, which is not allowed here (it could run another program \
                     or act outside the project); send the call without it"
                ));
            }
            if !negated
                && PATH_OPTIONS.contains(&key)
                && let Some(value) = value
            {
                request.check_path(typed, value)?;
            }
        }
    }
    Ok(())
}

/// The options an option name stands for, as nopt resolves it: an option's own name first, then
/// a shorthand, then a cluster of single-letter shorthands, then a `no-` negation of an option;
/// None for any other name.
fn option_names(name: &str) -> Option<Vec<&str>> {
    let known = |name: &str| NPM_OPTIONS.split_whitespace().any(|option| option == name);
    let shorthand = |s: &str| SHORTHANDS.iter().find(|(short, _)| *short == s).map(|(_, long)| *long);
    if known(name) {
        return Some(vec![name]);
    }
    if let Some(long) = shorthand(name) {
        return Some(vec![long]);
    }
    let cluster: Option<Vec<&str>> = name.char_indices().map(|(i, c)| shorthand(&name[i..i + c.len_utf8()])).collect();
    match cluster {
        Some(letters) => Some(letters),
        None => known(strip_negations(name).1).then(|| vec![name]),
    }
}

/// Whether `name` is negated, and the name without its `no-` prefixes, which npm matches in any
/// case and any number of times (`--no-no-global` is `--global`).
fn strip_negations(mut name: &str) -> (bool, &str) {
    let mut negated = false;
    while name.len() >= 3 && name[..3].eq_ignore_ascii_case("no-") {
        negated = !negated;
        name = &name[3..];
    }
    (negated, name)
}

/// Checks that `npm install SPEC` reads no package from the filesystem outside the roots. Which
/// specs are local follows npm-package-arg: paths (`./x`, `../x`, `/x`, `~/x`), `file:` URLs,
/// anything else with a slash that is not a URL (GitHub's `user/repo` resolves inside the project,
/// so it passes), tarball names, each also as `name@SPEC`; a local package's install scripts run.
fn check_install_spec(arg: &str, request: &PlanRequest) -> Result<(), String> {
    if request.roots.is_empty() {
        return Ok(());
    }
    let name_end = arg.get(1..).and_then(|rest| rest.find('@')).map(|i| i + 1);
    let name_part = name_end.map_or(arg, |i| &arg[..i]);
    let whole = is_url(arg) || (!name_part.starts_with('@') && (name_part.contains('/') || is_tarball(name_part)));
    let spec = match name_end {
        Some(i) if !whole => &arg[i + 1..],
        _ => arg,
    };
    let lower = spec.to_ascii_lowercase();
    let path = if let Some(url) = lower.strip_prefix("git+file:") {
        let url = url.split('#').next().unwrap_or_default();
        let slashes = url.len() - url.trim_start_matches('/').len();
        if url.contains('%') || slashes != 3 {
            return Err(format!(
                "`{arg}`: npm clones git+file: repositories from wherever they are; send git+file:///PATH with an \
                 absolute PATH inside {}",
                request.roots.join(", ")
            ));
        }
        format!("/{}", url.trim_start_matches('/'))
    } else if let Some(rest) = spec.strip_prefix("file:") {
        file_url_path(rest)
    } else if lower.starts_with("file:") {
        // npm-package-arg spots `FILE:` in any case but reads it as a folder named `FILE:`.
        spec.to_string()
    } else if lower.starts_with("npm:") {
        return Ok(());
    } else if spec.starts_with(['.', '/']) || spec.starts_with("~/") || starts_with_drive(spec) {
        file_url_path(spec)
    } else if is_url(spec) || !(spec.contains('/') || is_tarball(spec)) {
        return Ok(());
    } else {
        spec.to_string()
    };
    if starts_with_drive(path.trim_start_matches('/')) {
        return Err(format!(
            "`{arg}`: npm reads `X:` paths from the filesystem root; send a path inside {}",
            request.roots.join(", ")
        ));
    }
    request.check_path("npm install", &path)
}

/// The path npm-package-arg reads for a `file:` URL's rest (or a plain path, which it first turns
/// into one): `//host/x` is `/host/x`, one to three slashes before `.` or `..` make the path
/// relative, any other leading slashes make it absolute, and `~` is the home directory.
fn file_url_path(rest: &str) -> String {
    let trimmed = rest.trim_start_matches('/');
    let slashes = rest.len() - trimmed.len();
    let dotted = trimmed == "." || trimmed == ".." || trimmed.starts_with("./") || trimmed.starts_with("../");
    if slashes == 0 || (slashes <= 3 && dotted) || trimmed.starts_with('~') {
        trimmed.to_string()
    } else {
        format!("/{trimmed}")
    }
}

/// npm-package-arg's test for a URL: a scheme, optionally after `git+`.
fn is_url(spec: &str) -> bool {
    let lower = spec.to_ascii_lowercase();
    let rest = lower.strip_prefix("git+").unwrap_or(&lower);
    rest.split_once(':')
        .is_some_and(|(scheme, _)| !scheme.is_empty() && scheme.bytes().all(|b| b.is_ascii_alphabetic()))
}

fn is_tarball(spec: &str) -> bool {
    let lower = spec.to_ascii_lowercase();
    [".tgz", ".tar.gz", ".tar"].iter().any(|ext| lower.ends_with(ext))
}

fn starts_with_drive(path: &str) -> bool {
    let bytes = path.as_bytes();
    bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':'
}

/// What planning needs from package.json.
pub(crate) struct Manifest {
    /// None when package.json is not valid JSON: npm then reports EJSONPARSE itself, which the
    /// parser turns into a diagnostic, so the plan does not second-guess it.
    scripts: Option<BTreeMap<String, String>>,
}

fn read_manifest(cwd: &Path) -> Result<Manifest, String> {
    let path = cwd.join("package.json");
    let text = std::fs::read_to_string(&path).map_err(|_| {
        format!(
            "no package.json in {}; send the cwd of an npm project (the folder that holds package.json)",
            cwd.display()
        )
    })?;
    let scripts = serde_json::from_str::<serde_json::Value>(&text).ok().map(|value| {
        value
            .get("scripts")
            .and_then(|s| s.as_object())
            .map(|s| s.iter().filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string()))).collect())
            .unwrap_or_default()
    });
    Ok(Manifest { scripts })
}

impl Manifest {
    /// The command of `name`, Ok(None) when package.json could not be read as JSON.
    pub(crate) fn script(&self, name: &str) -> Result<Option<&str>, String> {
        let Some(scripts) = &self.scripts else { return Ok(None) };
        match scripts.get(name) {
            Some(command) => Ok(Some(command)),
            None => Err(format!("no script \"{name}\" in package.json; scripts: {}", self.script_list())),
        }
    }

    /// Whether package.json has a script `name` (false when it could not be read).
    pub(crate) fn has_script(&self, name: &str) -> bool {
        self.scripts.as_ref().is_some_and(|s| s.contains_key(name))
    }

    pub(crate) fn script_list(&self) -> String {
        match &self.scripts {
            Some(s) if !s.is_empty() => s.keys().map(String::as_str).collect::<Vec<_>>().join(", "),
            Some(_) => "none".into(),
            None => "unknown (package.json is not valid JSON)".into(),
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Runner {
    Jest,
    Vitest,
}

/// The test runner a script invokes, when the script is that one command alone: arguments after
/// `--` land at the end of the script, so `jest && eslint .` would hand them to eslint.
fn report_runner(command: &str) -> Option<Runner> {
    if command.contains(['&', '|', ';', '<', '>', '`', '$', '\n']) {
        return None;
    }
    if ["--json", "--outputFile", "--reporter", "--watch"].iter().any(|flag| command.contains(flag)) {
        return None;
    }
    let mut words = command.split_whitespace().skip_while(|w| w.contains('=') && !w.starts_with('-'));
    let mut program = words.next()?;
    if program == "npx" || program == "cross-env" {
        program = words.find(|w| !w.starts_with('-') && !w.contains('='))?;
    }
    match program.rsplit('/').next()? {
        "jest" => Some(Runner::Jest),
        "vitest" => {
            let next = words.next();
            // `vitest watch`/`dev` never end, `vitest bench` reports no tests.
            (next.is_none() || next == Some("run") || next.is_some_and(|w| w.starts_with('-')))
                .then_some(Runner::Vitest)
        }
        _ => None,
    }
}

impl Runner {
    /// Extra script arguments and the report file they write; no flags when they would change
    /// what is printed.
    fn report_flags(&self, cwd: &Path, artifact_dir: &str) -> (Vec<String>, String) {
        let dir = artifact_dir.trim_end_matches(['/', '\\']);
        match self {
            Runner::Jest => {
                let file = format!("{dir}/jest.json");
                (vec!["--json".into(), format!("--outputFile={file}")], file)
            }
            Runner::Vitest => {
                let file = format!("{dir}/vitest.json");
                // `--reporter` on the command line replaces the configured reporters, which would
                // change the printed format of a project that chose its own.
                if configures_reporters(cwd) {
                    return (Vec::new(), file);
                }
                let flags =
                    vec!["--reporter=default".into(), "--reporter=json".into(), format!("--outputFile.json={file}")];
                (flags, file)
            }
        }
    }
}

fn configures_reporters(cwd: &Path) -> bool {
    let names = ["vitest.config", "vite.config", "vitest.workspace"];
    let exts = ["ts", "mts", "cts", "js", "mjs", "cjs"];
    names.iter().flat_map(|n| exts.iter().map(move |e| cwd.join(format!("{n}.{e}")))).any(|path| {
        std::fs::read_to_string(path).is_ok_and(|text| text.contains("reporters") || text.contains("reporter:"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use buildvise_plugin_api::testing::ScratchDir;

    fn project(package_json: &str) -> ScratchDir {
        let dir = ScratchDir::new("buildvise-npm-plan");
        std::fs::write(dir.join("package.json"), package_json).expect("write package.json");
        dir
    }

    fn request(tool: &str, args: &[&str], cwd: &Path) -> PlanRequest {
        PlanRequest::new(tool, args.iter().map(|a| a.to_string()).collect(), cwd.display().to_string(), "/tmp/art")
    }

    #[test]
    fn build_passes_extra_args_after_double_dash() {
        let dir = project(r#"{"scripts":{"build":"tsc -p .","lint":"eslint ."}}"#);
        let plan = plan(&request("npm.build", &["--noEmit"], &dir)).expect("plan");
        assert_eq!(plan.program, "npm");
        assert_eq!(plan.args, ["run", "build", "--", "--noEmit"]);
        assert_eq!(plan.env.get("NO_COLOR").map(String::as_str), Some("1"));
        assert!(plan.artifacts.is_empty());
    }

    #[test]
    fn run_refuses_unknown_script_listing_the_others() {
        let dir = project(r#"{"scripts":{"build":"tsc","lint":"eslint ."}}"#);
        let err = plan(&request("npm.run", &["nope"], &dir)).expect_err("refused");
        assert!(err.contains("\"nope\"") && err.contains("build, lint"), "{err}");
        let err = plan(&request("npm.run", &[], &dir)).expect_err("refused");
        assert!(err.contains("build, lint"), "{err}");
    }

    #[test]
    fn run_separates_npm_options_from_script_args() {
        let dir = project(r#"{"scripts":{"lint":"eslint ."}}"#);
        let plan = plan(&request("npm.run", &["lint", "-w", "web", "--", "--fix"], &dir)).expect("plan");
        assert_eq!(plan.args, ["run", "lint", "-w", "web", "--", "--fix"]);
        let err = super::plan(&request("npm.run", &["lint", "--script-shell=/bin/evil", "--"], &dir));
        assert!(err.is_err());
    }

    #[test]
    fn missing_package_json_is_a_clear_error() {
        let dir = project("{}");
        std::fs::remove_file(dir.join("package.json")).expect("remove");
        let err = plan(&request("npm.test", &[], &dir)).expect_err("refused");
        assert!(err.contains("no package.json"), "{err}");
    }

    #[test]
    fn jest_script_gets_a_json_report() {
        let dir = project(r#"{"scripts":{"test":"jest --verbose"}}"#);
        let plan = plan(&request("npm.test", &["-t", "adds"], &dir)).expect("plan");
        assert_eq!(plan.args, ["test", "--", "-t", "adds", "--json", "--outputFile=/tmp/art/jest.json"]);
        assert_eq!(plan.artifacts, ["/tmp/art/jest.json"]);
    }

    #[test]
    fn chained_scripts_get_no_report() {
        let dir = project(r#"{"scripts":{"test":"jest && eslint ."}}"#);
        let plan = plan(&request("npm.test", &[], &dir)).expect("plan");
        assert_eq!(plan.args, ["test"]);
    }

    #[test]
    fn vitest_report_unless_reporters_are_configured() {
        let dir = project(r#"{"scripts":{"test":"vitest run"}}"#);
        let plan = plan(&request("npm.test", &[], &dir)).expect("plan");
        assert!(plan.args.contains(&"--reporter=json".to_string()), "{:?}", plan.args);
        std::fs::write(dir.join("vitest.config.ts"), "export default { test: { reporters: ['verbose'] } }")
            .expect("write config");
        let plan = super::plan(&request("npm.test", &[], &dir)).expect("plan");
        assert_eq!(plan.args, ["test"]);
    }

    #[test]
    fn install_refuses_global_and_keeps_args() {
        let dir = project("{}");
        let plan = plan(&request("npm.install", &["left-pad", "--save-dev"], &dir)).expect("plan");
        assert_eq!(plan.args, ["install", "left-pad", "--save-dev"]);
        assert!(super::plan(&request("npm.install", &["-g", "x"], &dir)).is_err());
    }

    fn confined(tool: &str, args: &[&str], project: &Path) -> PlanRequest {
        request(tool, args, project).with_roots(vec![project.display().to_string()])
    }

    #[test]
    fn ordinary_options_are_planned_as_before() {
        let dir = project(r#"{"scripts":{"lint":"eslint .","test":"node --test"}}"#);
        let plan = plan(&confined("npm.run", &["lint", "-w", "web", "--", "--fix"], &dir)).expect("plan");
        assert_eq!(plan.args, ["run", "lint", "-w", "web", "--", "--fix"]);
        let plan = super::plan(&confined("npm.test", &["--", "--watch=false"], &dir)).expect("plan");
        assert_eq!(plan.args, ["test", "--", "--watch=false"]);
        let options = ["--ca=CERT", "--provenance", "--ws", "--if-present", "-SE", "--no-audit", "--cache", ".cache"];
        let args: Vec<&str> = ["lint"].into_iter().chain(options).chain(["--"]).collect();
        let plan = super::plan(&confined("npm.run", &args, &dir)).expect("plan");
        assert_eq!(plan.args[2..], options);
    }

    #[test]
    fn refuses_forbidden_options_however_npm_would_spell_them() {
        let dir = project(r#"{"scripts":{"lint":"eslint ."}}"#);
        for option in [
            "-script-shell=/tmp/sh",
            "---script-shell=/tmp/sh",
            "-C=/tmp/p",
            "-gS",
            "--no-global",
            "--no-no-global",
            "--local",
            "-L",
            "--git=/tmp/git",
            "--node-gyp=/tmp/gyp",
            "-c=sh",
            // Every letter is a shorthand, so npm reads a cluster: `-c -a -c -h`.
            "--cach=/tmp/c",
            "--init-module=/tmp/x.js",
        ] {
            let err = plan(&request("npm.run", &["lint", option, "--"], &dir)).expect_err(option);
            assert!(err.contains("is not allowed here") && err.contains("send the call without it"), "{err}");
        }
        for option in [
            "--script-sh=/tmp/sh",
            "--script_shell=/tmp/sh",
            "--SCRIPT-SHELL=/tmp/sh",
            "--pref=/tmp/p",
            "--prefi=/tmp/p",
            "--node-opt=--require=/tmp/x.js",
            "--userc=/tmp/npmrc",
            "--globalc=/tmp/npmrc",
            "--glo",
            "--loc=global",
            "--Cache=/tmp/c",
            "--python=/tmp/python",
            "--no-C",
        ] {
            let err = plan(&request("npm.run", &["lint", option, "--"], &dir)).expect_err(option);
            assert!(err.contains("is not an npm option's full name") && err.contains("after `--`"), "{err}");
        }
    }

    #[test]
    fn path_options_must_stay_inside_the_roots() {
        let dir = project(r#"{"scripts":{"lint":"eslint ."}}"#);
        for options in [
            &["--cache=/tmp/c"][..],
            &["--cache", "/tmp/c"],
            &["---cache=../c"],
            &["-w", "../other"],
            &["-Dw", "../other"],
            &["--workspace=/tmp/w"],
            &["--logs-dir", "/tmp/logs"],
            &["--cafile=/tmp/ca.pem"],
        ] {
            let args: Vec<&str> = ["lint"].into_iter().chain(options.iter().copied()).chain(["--"]).collect();
            let err = plan(&confined("npm.run", &args, &dir)).expect_err("outside");
            assert!(err.contains("points outside the directories this call may use"), "{err}");
        }
        assert!(plan(&request("npm.run", &["lint", "--cache=/tmp/c", "--"], &dir)).is_ok(), "no roots, no limit");
    }

    #[test]
    fn install_reads_no_local_package_from_outside_the_roots() {
        let dir = project("{}");
        for spec in [
            "../elsewhere",
            "/tmp/pkg",
            "file:../x",
            "file:///tmp/x",
            "file://tmp/x",
            "file:////../tmp",
            "foo@file:../x",
            "@scope/pkg@../x",
            "a/../../x",
            "../x.tgz",
            "FILE:/../../x",
        ] {
            let err = plan(&confined("npm.install", &[spec], &dir)).expect_err(spec);
            assert!(err.contains("points outside the directories this call may use"), "{spec}: {err}");
        }
        for spec in ["~/x", "file:/~/x"] {
            assert!(plan(&confined("npm.install", &[spec], &dir)).expect_err(spec).contains("`~`"));
        }
        let err = plan(&confined("npm.install", &["git+file:../repo"], &dir)).expect_err("relative git");
        assert!(err.contains("send git+file:///PATH"), "{err}");
        assert!(plan(&confined("npm.install", &["git+file:///tmp/repo#main"], &dir)).is_err());
        assert!(plan(&confined("npm.install", &["C:/x"], &dir)).expect_err("drive").contains("`X:` paths"));
        for spec in [
            "left-pad",
            "left-pad@~1.2.0",
            "@scope/pkg@^2",
            "user/repo",
            "./packages/local",
            "file:packages/x",
            "vendor/x.tgz",
            "https://example.com/x.tgz",
            "git+https://github.com/u/r.git",
            "alias@npm:left-pad@1",
        ] {
            let plan = plan(&confined("npm.install", &[spec, "--save-dev"], &dir)).expect(spec);
            assert_eq!(plan.args, ["install", spec, "--save-dev"]);
        }
    }

    fn with_bin(dir: &Path, name: &str) {
        std::fs::create_dir_all(dir.join("node_modules/.bin")).expect("bin dir");
        std::fs::write(dir.join("node_modules/.bin").join(name), "").expect("bin");
    }

    #[test]
    fn exec_runs_installed_bins_and_never_installs() {
        let dir = project(r#"{"name":"app"}"#);
        with_bin(&dir, "tsc");
        let plan = plan(&confined("npm.exec", &["tsc", "--noEmit", "--", "x"], &dir)).expect("plan");
        assert_eq!(plan.args, ["exec", "--no", "--", "tsc", "--noEmit", "--", "x"]);
        let plan = super::plan(&confined("npm.exec", &["-w", "web", "--", "tsc", "-p", "."], &dir)).expect("plan");
        assert_eq!(plan.args, ["exec", "--no", "-w", "web", "--", "tsc", "-p", "."]);
        let sub = dir.join("packages/web");
        std::fs::create_dir_all(&sub).expect("workspace dir");
        std::fs::write(sub.join("package.json"), "{}").expect("package.json");
        assert!(super::plan(&request("npm.exec", &["tsc"], &sub)).is_ok(), "bins hoisted to the root count");

        let err = super::plan(&request("npm.exec", &["cowsay", "hi"], &dir)).expect_err("not installed");
        assert!(err.contains("`cowsay` is not installed") && err.contains("npm.install"), "{err}");
        for program in ["./node_modules/.bin/tsc", "typescript@5", "/bin/sh", "-y"] {
            let err = super::plan(&request("npm.exec", &[program], &dir)).expect_err(program);
            assert!(err.contains("is not a bin name"), "{err}");
        }
        for options in [&["--yes", "--"][..], &["-y", "--"], &["--package=cowsay", "--"], &["-c", "sh", "--"]] {
            let args: Vec<&str> = options.iter().copied().chain(["tsc"]).collect();
            assert!(super::plan(&request("npm.exec", &args, &dir)).is_err(), "{options:?}");
        }
        assert!(super::plan(&request("npm.exec", &["--no", "--", "tsc"], &dir)).is_ok());
        assert!(super::plan(&request("npm.exec", &[], &dir)).expect_err("empty").contains("needs the program"));
    }

    #[test]
    fn ci_takes_options_only() {
        let dir = project("{}");
        let plan = plan(&confined("npm.ci", &["--no-audit"], &dir)).expect("plan");
        assert_eq!(plan.args, ["ci", "--no-audit"]);
        assert!(super::plan(&confined("npm.ci", &["left-pad"], &dir)).is_err());
        assert!(super::plan(&confined("npm.ci", &["--prefix=/tmp/x"], &dir)).is_err());
    }

    #[test]
    fn broken_package_json_still_runs_so_npm_reports_it() {
        let dir = project(r#"{"scripts": {"build": "x" "test": "y"}}"#);
        let plan = plan(&request("npm.build", &[], &dir)).expect("plan");
        assert_eq!(plan.args, ["run", "build"]);
    }
}
