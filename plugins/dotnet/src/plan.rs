//! Which command runs a tool: `dotnet <verb> ARGS`, the environment that keeps its output stable,
//! and the TRX report `dotnet test` writes into the artifact directory.

use buildvise_plugin_api::{CommandPlan, PlanRequest, ToolSpec, cache_dir};
use std::collections::BTreeMap;
use std::path::{Component, Path};

/// File name of the TRX report inside the run's artifact directory.
pub const TRX_FILE: &str = "results.trx";

/// The tools, their `dotnet` verb and their timeout in seconds. Each one's description is its
/// command: an agent knows dotnet's verbs, and `list` is paid for on every session.
const TOOLS: [(&str, &str, u64); 5] = [
    ("dotnet.build", "build", 1800),
    ("dotnet.restore", "restore", 900),
    ("dotnet.test", "test", 3600),
    ("dotnet.run", "run", 3600),
    ("dotnet.format", "format", 1800),
];

/// The flag that makes `dotnet format` only report: without it, it rewrites the sources.
const FORMAT_CHECK: &str = "--verify-no-changes";

pub fn tool_specs() -> Vec<ToolSpec> {
    TOOLS
        .iter()
        .map(|(name, verb, timeout)| {
            let spec =
                ToolSpec::new(*name, format!("dotnet {verb}")).with_timeout_secs(*timeout).runs(&["dotnet", verb]);
            match *verb {
                "run" => spec.with_args_hint("dotnet's, then -- and program's"),
                "format" => spec.mutating().read_only_with(FORMAT_CHECK),
                _ => spec,
            }
        })
        .collect()
}

pub fn plan(request: &PlanRequest) -> Result<CommandPlan, String> {
    let Some((_, verb, _)) = TOOLS.iter().find(|(name, ..)| *name == request.tool) else {
        return Err(format!(
            "unknown tool `{}`; the dotnet plugin runs dotnet.build, dotnet.restore, dotnet.test, dotnet.run and dotnet.format",
            request.tool
        ));
    };
    refuse_unreadable_output(&request.args)?;
    check_paths(request)?;

    let mut args = vec![(*verb).to_string()];
    let mut artifacts = Vec::new();
    // Everything after `--` goes to the test platform (RunSettings, MTP options), so our own
    // options must come before it.
    let split = request.args.iter().position(|a| a == "--").unwrap_or(request.args.len());
    args.extend(request.args[..split].iter().cloned());
    if *verb == "test" && !user_chose_reports(&request.args) && !uses_testing_platform(Path::new(&request.cwd)) {
        let trx = Path::new(&request.artifact_dir).join(TRX_FILE);
        args.push("--logger".into());
        args.push(format!("trx;LogFileName={TRX_FILE}"));
        args.push("--results-directory".into());
        args.push(request.artifact_dir.clone());
        artifacts.push(trx.to_string_lossy().into_owned());
    }
    args.extend(request.args[split..].iter().cloned());

    // NuGet's packages and caches, and the SDK's first-run state.
    let caches = [
        cache_dir("NUGET_PACKAGES", ".nuget"),
        cache_dir("DOTNET_CLI_HOME", ".dotnet"),
        cache_dir("NUGET_HTTP_CACHE_PATH", ".local/share/NuGet"),
    ];
    let mut plan = CommandPlan::new("dotnet").with_args(args).with_caches(caches.into_iter().flatten());
    plan.env = environment();
    plan.artifacts = artifacts;
    plan.mutates = runs_a_given_command(&request.args, Path::new(&request.cwd));
    Ok(plan)
}

/// MSBuild properties whose value is a command line, or names the program MSBuild runs: the
/// build events, `dotnet run`'s command, a compiler's or a task's executable (lower case; a name
/// ending in one of [`COMMAND_SUFFIXES`] counts too).
const COMMAND_PROPERTIES: &[&str] = &["runcommand", "dotnethostpath"];

/// Endings of property names that hold a command or name a program: `PreBuildEvent`,
/// `PostBuildEvent`, `CscToolExe`, `CscToolPath`.
const COMMAND_SUFFIXES: &[&str] = &["event", "toolexe", "toolpath"];

/// Switches that run targets the caller chooses rather than the verb's own (`-t:Exec`).
const TARGET_SWITCHES: &[&str] = &["t", "target", "gettargetresult"];

/// Why these arguments run a command the caller gave, when they do: a property of
/// [`COMMAND_PROPERTIES`] in any spelling (`-p:`, `/p:`, `--property:`, `-p NAME=V`, `-rp:`, in
/// any case, one of several `;`- or `,`-separated, `%`-escaped), or a target switch. The caller
/// could not otherwise run a command of their own through a tool that only builds.
fn runs_a_given_command(args: &[String], cwd: &Path) -> Option<String> {
    let split = args.iter().position(|a| a == "--").unwrap_or(args.len());
    let args: Vec<String> = args[..split].iter().map(|a| unescape(&a.replace('"', ""))).collect();
    for (i, arg) in args.iter().enumerate() {
        let Some((flag, name, inline)) = switch(arg, cwd) else { continue };
        if TARGET_SWITCHES.contains(&name.as_str()) {
            return Some(format!("`{arg}` runs targets of the caller's choosing"));
        }
        let next = args.get(i + 1).map(String::as_str);
        let (value, shown) = match lookup(&name) {
            Some((Value::Properties, true)) if inline.is_none() => (next, format!("{flag} {}", next.unwrap_or(""))),
            Some((Value::Properties, _)) => (inline, arg.clone()),
            Some(_) => (None, String::new()),
            // The CLI reads `-pNAME=VALUE` as `-p NAME=VALUE`.
            None => match unbundled(arg) {
                Some((_, Value::Properties, value)) => (Some(value), arg.clone()),
                _ => (None, String::new()),
            },
        };
        for piece in value.unwrap_or_default().split([';', ',']) {
            let property = piece.split_once('=').map_or(piece, |(name, _)| name).trim().to_ascii_lowercase();
            let command = COMMAND_PROPERTIES.contains(&property.as_str())
                || COMMAND_SUFFIXES.iter().any(|suffix| property.ends_with(suffix));
            if command {
                return Some(format!("`{shown}` runs a command the caller wrote"));
            }
        }
    }
    None
}

/// Environment that removes noise without changing what is printed: English messages, the
/// classic console logger (the Terminal Logger redraws progress frames), no banner or
/// telemetry notice.
fn environment() -> BTreeMap<String, String> {
    [
        ("DOTNET_CLI_UI_LANGUAGE", "en"),
        // MSBuild and the compilers on Windows take their UI language from VSLANG.
        ("VSLANG", "1033"),
        ("MSBUILDTERMINALLOGGER", "off"),
        ("DOTNET_NOLOGO", "1"),
        ("DOTNET_CLI_TELEMETRY_OPTOUT", "1"),
        // Reused MSBuild worker nodes outlive the build and can hold its output pipes open.
        ("MSBUILDDISABLENODEREUSE", "1"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// Refuses switches that would leave the stored log without the diagnostics a person reads.
fn refuse_unreadable_output(args: &[String]) -> Result<(), String> {
    for arg in args.iter().take_while(|a| *a != "--") {
        let lower = arg.to_ascii_lowercase();
        let switch = lower.trim_start_matches(['-', '/']);
        if !(arg.starts_with('-') || arg.starts_with('/')) {
            continue;
        }
        if matches!(switch, "tl" | "tl:on" | "tl:true" | "terminallogger" | "terminallogger:on" | "terminallogger:true")
        {
            return Err(format!(
                "`{arg}` makes MSBuild redraw the terminal instead of printing diagnostics; send the arguments without it"
            ));
        }
        if matches!(switch, "noconsolelogger" | "noconlog") {
            return Err(format!("`{arg}` silences the console output buildvise reads; send the arguments without it"));
        }
    }
    Ok(())
}

/// What a switch's value is, for the switches whose value can lead outside the project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Value {
    /// Paths separated by `;`, taken from the cwd.
    Paths,
    /// A NuGet source: a URL, or a local feed or `file:` URL.
    Source,
    /// `-bl:[LogFile=]PATH[;…]`.
    BinaryLog,
    /// `-flp:…;LogFile=PATH;…`.
    FileLogger,
    /// `-logger:[CLASS,]ASSEMBLY[;PARAMETERS]` (MSBuild) or `--logger NAME;KEY=VALUE` (VSTest).
    Logger,
    /// `-p:NAME=VALUE;…`, MSBuild properties.
    Properties,
    /// `-e NAME=VALUE`, the test host's environment.
    Environment,
}

/// Switches (lower case, without `-`, `--` or `/`) whose value can name a path: the dotnet CLI's
/// options of build, restore and test, which also take their value from the next argument, and
/// MSBuild's, which take it only after `:`.
const SWITCHES: &[(&str, Value, bool)] = &[
    ("o", Value::Paths, true),
    ("output", Value::Paths, true),
    ("project", Value::Paths, true),
    ("solution", Value::Paths, true),
    ("test-modules", Value::Paths, true),
    ("root-directory", Value::Paths, true),
    ("results-directory", Value::Paths, true),
    ("artifacts-path", Value::Paths, true),
    ("d", Value::Paths, true),
    ("diag", Value::Paths, true),
    ("settings", Value::Paths, true),
    ("packages", Value::Paths, true),
    ("configfile", Value::Paths, true),
    ("lock-file-path", Value::Paths, true),
    ("test-adapter-path", Value::Paths, true),
    ("a", Value::Paths, true),
    ("s", Value::Source, true),
    ("source", Value::Source, true),
    ("l", Value::Logger, true),
    ("logger", Value::Logger, true),
    ("p", Value::Properties, true),
    ("property", Value::Properties, true),
    ("e", Value::Environment, true),
    ("environment", Value::Environment, true),
    ("dl", Value::Logger, false),
    ("distributedlogger", Value::Logger, false),
    ("rp", Value::Properties, false),
    ("restoreproperty", Value::Properties, false),
    ("bl", Value::BinaryLog, false),
    ("binarylogger", Value::BinaryLog, false),
    ("pp", Value::Paths, false),
    ("preprocess", Value::Paths, false),
    ("ts", Value::Paths, false),
    ("targets", Value::Paths, false),
    ("orc", Value::Paths, false),
    ("outputresultscache", Value::Paths, false),
    ("irc", Value::Paths, false),
    ("inputresultscaches", Value::Paths, false),
    ("getresultoutputfile", Value::Paths, false),
    ("prof", Value::Paths, false),
    ("profileevaluation", Value::Paths, false),
    ("val", Value::Paths, false),
    ("validate", Value::Paths, false),
];

/// Checks that every path the arguments give dotnet, MSBuild or the test platform lies inside the
/// roots: project and solution arguments, path switches in every spelling (`-o DIR`, `--output:DIR`,
/// `/bl:FILE`, `-o/DIR` as the CLI unbundles it; names in any case; quotes removed, as MSBuild
/// does), `@file` response files, and after `--` the test platform's paths.
fn check_paths(request: &PlanRequest) -> Result<(), String> {
    let split = request.args.iter().position(|a| a == "--").unwrap_or(request.args.len());
    let args: Vec<String> = request.args[..split].iter().map(|a| a.replace('"', "")).collect();
    for (i, arg) in args.iter().enumerate() {
        if let Some(file) = arg.strip_prefix('@') {
            request.check_path("@", &file.replace('\\', "/")).map_err(|_| {
                format!(
                    "`{arg}` reads arguments from a file outside the directories this call may use ({}); send the \
                     arguments themselves",
                    request.roots.join(", ")
                )
            })?;
            continue;
        }
        let Some((flag, name, inline)) = switch(arg, Path::new(&request.cwd)) else {
            request.check_path(&format!("dotnet {}", verb(request)), &arg.replace('\\', "/"))?;
            continue;
        };
        if let Some((kind, takes_next)) = lookup(&name) {
            // The next argument is checked as this switch's value, and again for what it is
            // itself: a switch the CLI does not have for this verb leaves it to MSBuild.
            let next = args.get(i + 1).filter(|_| takes_next).map(String::as_str);
            if let Some(value) = inline.or(next) {
                check_value(request, flag, kind, value)?;
            }
        } else if let Some((letter, kind, value)) = unbundled(arg) {
            check_value(request, &format!("-{letter}"), kind, value)?;
        }
    }
    check_test_platform_args(request, request.args.get(split + 1..).unwrap_or_default())
}

fn verb(request: &PlanRequest) -> &str {
    request.tool.strip_prefix("dotnet.").unwrap_or(&request.tool)
}

/// Splits a switch into what was typed for its name, the name in lower case and the value after
/// `:` or `=`; None for a project or solution argument. MSBuild takes an argument starting with
/// `/` for a path when its first directory exists, as it does on Unix.
fn switch<'a>(arg: &'a str, cwd: &Path) -> Option<(&'a str, String, Option<&'a str>)> {
    let indicator = if arg.starts_with("--") {
        2
    } else if arg.starts_with('-') || (arg.starts_with('/') && !looks_like_unix_path(arg, cwd)) {
        1
    } else {
        return None;
    };
    let end = arg[indicator..].find([':', '=']).map_or(arg.len(), |i| i + indicator);
    Some((&arg[..end], arg[indicator..end].to_ascii_lowercase(), arg.get(end + 1..)))
}

fn looks_like_unix_path(arg: &str, cwd: &Path) -> bool {
    match arg[1..].find('/') {
        Some(i) => cwd.join(&arg[..i + 1]).is_dir(),
        None => Path::new(arg).exists(),
    }
}

fn lookup(name: &str) -> Option<(Value, bool)> {
    let file_logger = ["flp", "fileloggerparameters"].iter().any(|prefix| {
        name.strip_prefix(prefix).is_some_and(|n| n.is_empty() || (n.len() == 1 && n.as_bytes()[0].is_ascii_digit()))
    });
    if file_logger {
        return Some((Value::FileLogger, false));
    }
    SWITCHES.iter().find(|(switch, ..)| *switch == name).map(|(_, kind, next)| (*kind, *next))
}

/// The CLI unbundles `-o/DIR` into `-o /DIR` (and `-vo/DIR` into `-v -o /DIR`): the first letter
/// before any `:` or `=` that stands for a path switch takes the rest, whatever letters come
/// before it.
fn unbundled(arg: &str) -> Option<(char, Value, &str)> {
    let letters = arg.strip_prefix('-').filter(|l| l.starts_with(|c: char| c.is_ascii_alphabetic()))?;
    let name_end = letters.find([':', '=']).unwrap_or(letters.len());
    letters[..name_end].char_indices().find_map(|(i, letter)| {
        let (kind, _) = lookup(&letter.to_ascii_lowercase().to_string())?;
        let rest = &letters[i + 1..];
        Some((letter, kind, rest.strip_prefix([':', '=']).unwrap_or(rest)))
    })
}

fn check_value(request: &PlanRequest, flag: &str, kind: Value, value: &str) -> Result<(), String> {
    check_value_as_given(request, flag, kind, value)?;
    // MSBuild reads `%2F` as `/` in property values, and may elsewhere.
    let unescaped = unescape(value);
    if unescaped != value { check_value_as_given(request, flag, kind, &unescaped) } else { Ok(()) }
}

fn check_value_as_given(request: &PlanRequest, flag: &str, kind: Value, value: &str) -> Result<(), String> {
    let value = value.replace('\\', "/");
    let mut pieces = value.split(';').filter(|p| !p.is_empty());
    match kind {
        Value::Paths => pieces.try_for_each(|path| request.check_path(flag, path)),
        Value::Source => {
            if value.to_ascii_lowercase().starts_with("file:") {
                request.check_path(flag, &format!("/{}", value[5..].trim_start_matches('/')))
            } else if value.contains("://") {
                Ok(())
            } else {
                request.check_path(flag, &value)
            }
        }
        Value::BinaryLog => pieces.try_for_each(|p| match p.split_once('=') {
            Some((key, path)) if key.eq_ignore_ascii_case("logfile") => request.check_path(flag, path),
            Some(_) => Ok(()),
            None => request.check_path(flag, p),
        }),
        Value::FileLogger => pieces.try_for_each(|p| match p.split_once('=') {
            Some((key, path)) if key.eq_ignore_ascii_case("logfile") => request.check_path(flag, path),
            _ => Ok(()),
        }),
        Value::Logger => {
            for assembly in pieces.next().into_iter().flat_map(|spec| spec.split([',', '*'])) {
                if path_like(assembly) {
                    request.check_path(flag, assembly)?;
                }
            }
            pieces.try_for_each(|p| check_unbased(request, flag, after_equals(p)))
        }
        Value::Properties => value.split([';', ',']).try_for_each(|p| check_unbased(request, flag, after_equals(p))),
        Value::Environment => match value.split_once('=') {
            Some((_, v)) if !v.contains("://") => v.split([':', ';']).try_for_each(|p| check_unbased(request, flag, p)),
            _ => Ok(()),
        },
    }
}

/// The value of a `NAME=VALUE` piece, or the whole piece.
fn after_equals(piece: &str) -> &str {
    piece.split_once('=').map_or(piece, |(_, value)| value)
}

/// Checks a path taken from a folder buildvise cannot see (the project's, the results
/// directory): it must be absolute, or relative without climbing out with `..`.
fn check_unbased(request: &PlanRequest, flag: &str, value: &str) -> Result<(), String> {
    if !path_like(value) {
        return Ok(());
    }
    let path = Path::new(value);
    if !request.roots.is_empty() && !path.is_absolute() && path.components().any(|c| c == Component::ParentDir) {
        return Err(format!(
            "`{flag}` gives `{value}`, which is taken from a project's or the test run's folder, so it may not \
             climb with `..`; send an absolute path inside {}",
            request.roots.join(", ")
        ));
    }
    request.check_path(flag, value)
}

fn path_like(value: &str) -> bool {
    value.contains('/') || value.starts_with(['.', '~'])
}

/// `%XX` escapes decoded, as MSBuild does.
fn unescape(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok());
        match hex {
            Some(byte) if bytes[i] == b'%' => {
                out.push(byte);
                i += 3;
            }
            _ => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// After `--`, `dotnet test` hands VSTest `Section.Key=VALUE` run settings, or
/// Microsoft.Testing.Platform its own options and their values, whose names vary with the
/// extensions a project uses: every value there that looks like a path is checked.
fn check_test_platform_args(request: &PlanRequest, args: &[String]) -> Result<(), String> {
    let loose = format!("dotnet {} --", verb(request));
    for arg in args {
        let arg = arg.replace('"', "").replace('\\', "/");
        let (flag, value) = match arg.split_once(if arg.starts_with('-') { &[':', '='][..] } else { &['='] }) {
            Some((name, value)) => (name, value),
            None if arg.starts_with('-') => continue,
            None => (loose.as_str(), arg.as_str()),
        };
        for path in value.split(';') {
            check_unbased(request, flag, path)?;
        }
    }
    Ok(())
}

/// True when the user already asked for a TRX report or a results directory of their own.
fn user_chose_reports(args: &[String]) -> bool {
    let mut previous = "";
    for arg in args {
        let lower = arg.to_ascii_lowercase();
        if lower == "--report-trx"
            || lower.starts_with("--results-directory")
            || lower.starts_with("--logger:trx")
            || lower.starts_with("--logger=trx")
            || lower.starts_with("-l:trx")
            || ((previous == "--logger" || previous == "-l") && lower.starts_with("trx"))
        {
            return true;
        }
        previous = arg.as_str();
    }
    false
}

/// True when the nearest `global.json` makes `dotnet test` use Microsoft.Testing.Platform, which
/// rejects VSTest's `--logger` (its TRX report needs an extension the project may not reference).
fn uses_testing_platform(cwd: &Path) -> bool {
    for dir in cwd.ancestors() {
        let Ok(text) = std::fs::read_to_string(dir.join("global.json")) else {
            continue;
        };
        let Ok(json) = serde_json::from_str::<serde_json::Value>(text.trim_start_matches('\u{feff}')) else {
            return false;
        };
        return json
            .get("test")
            .and_then(|t| t.get("runner"))
            .and_then(|r| r.as_str())
            .is_some_and(|r| r.eq_ignore_ascii_case("Microsoft.Testing.Platform"));
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(tool: &str, args: &[&str], cwd: &str) -> PlanRequest {
        PlanRequest::new(tool, args.iter().map(|s| s.to_string()).collect(), cwd, "/runs/r1")
    }

    fn no_global_json() -> String {
        // A directory that cannot hold a global.json: plans must not depend on the machine.
        std::env::temp_dir().join("buildvise-dotnet-plan-none").to_string_lossy().into_owned()
    }

    #[test]
    fn build_runs_dotnet_build_with_quiet_english_environment() {
        let plan = plan(&request("dotnet.build", &["App.sln", "-c", "Release"], "/src")).unwrap();
        assert_eq!(plan.program, "dotnet");
        assert_eq!(plan.args, ["build", "App.sln", "-c", "Release"]);
        assert_eq!(plan.env["DOTNET_CLI_UI_LANGUAGE"], "en");
        assert_eq!(plan.env["MSBUILDTERMINALLOGGER"], "off");
        assert_eq!(plan.env["DOTNET_NOLOGO"], "1");
        assert_eq!(plan.env["DOTNET_CLI_TELEMETRY_OPTOUT"], "1");
        assert!(plan.artifacts.is_empty());
    }

    #[test]
    fn run_passes_a_dash_dash_among_the_args_on_to_dotnet_as_its_hint_says() {
        // `exec dotnet.run -- -c Release -- --port 5000`: the first `--` ends buildvise's options,
        // and the one among the args is dotnet's, before the program's own.
        let plan = plan(&request("dotnet.run", &["-c", "Release", "--", "--port", "5000"], "/src")).unwrap();
        assert_eq!(plan.args, ["run", "-c", "Release", "--", "--port", "5000"]);
        let spec = tool_specs().into_iter().find(|t| t.name == "dotnet.run").expect("dotnet.run");
        assert_eq!(spec.args_hint.as_deref(), Some("dotnet's, then -- and program's"));
    }

    #[test]
    fn restore_has_no_artifacts() {
        let plan = plan(&request("dotnet.restore", &[], "/src")).unwrap();
        assert_eq!(plan.args, ["restore"]);
        assert!(plan.artifacts.is_empty());
    }

    #[test]
    fn test_writes_trx_into_the_artifact_dir_before_the_double_dash() {
        let cwd = no_global_json();
        let plan = plan(&request("dotnet.test", &["--no-build", "--", "MSTest.Parallelize.Workers=1"], &cwd)).unwrap();
        assert_eq!(
            plan.args,
            [
                "test",
                "--no-build",
                "--logger",
                "trx;LogFileName=results.trx",
                "--results-directory",
                "/runs/r1",
                "--",
                "MSTest.Parallelize.Workers=1"
            ]
        );
        assert_eq!(plan.artifacts, [Path::new("/runs/r1").join("results.trx").to_string_lossy().into_owned()]);
    }

    #[test]
    fn test_keeps_the_users_own_trx_logger_or_results_dir() {
        let cwd = no_global_json();
        for args in [
            &["--logger", "trx"][..],
            &["-l", "trx;LogFileName=mine.trx"],
            &["--logger:trx"],
            &["--results-directory", "out"],
            &["--", "--report-trx"],
        ] {
            let plan = plan(&request("dotnet.test", args, &cwd)).unwrap();
            assert!(plan.artifacts.is_empty(), "{args:?}");
            assert_eq!(plan.args.len(), args.len() + 1, "{args:?}");
        }
    }

    #[test]
    fn testing_platform_projects_get_no_vstest_logger() {
        let root = std::env::temp_dir().join(format!("buildvise-dotnet-mtp-{}", std::process::id()));
        let nested = root.join("tests").join("Shop.Tests");
        std::fs::create_dir_all(&nested).unwrap();
        std::fs::write(
            root.join("global.json"),
            "\u{feff}{ \"test\": { \"runner\": \"Microsoft.Testing.Platform\" } }",
        )
        .unwrap();
        let plan = plan(&request("dotnet.test", &[], &nested.to_string_lossy()));
        std::fs::remove_dir_all(&root).unwrap();
        let plan = plan.unwrap();
        assert_eq!(plan.args, ["test"]);
        assert!(plan.artifacts.is_empty());
    }

    #[test]
    fn refuses_terminal_logger_and_silent_console() {
        let err = plan(&request("dotnet.build", &["-tl:on"], "/src")).unwrap_err();
        assert!(err.contains("send the arguments without it"), "{err}");
        assert!(plan(&request("dotnet.build", &["-noConLog"], "/src")).is_err());
        assert!(plan(&request("dotnet.build", &["--tl:off"], "/src")).is_ok());
    }

    /// A call limited to /bv-plan/proj; none of these paths need exist.
    fn confined(tool: &str, args: &[&str]) -> PlanRequest {
        request(tool, args, "/bv-plan/proj").with_roots(vec!["/bv-plan/proj".into()])
    }

    #[test]
    fn ordinary_calls_are_planned_as_before() {
        let plan = plan(&confined("dotnet.test", &["App.sln", "-c", "Release"])).unwrap();
        assert_eq!(
            plan.args,
            [
                "test",
                "App.sln",
                "-c",
                "Release",
                "--logger",
                "trx;LogFileName=results.trx",
                "--results-directory",
                "/runs/r1"
            ]
        );
        for args in [
            &["src/App/App.csproj"][..],
            &["-p:Configuration=Release", "/p:TreatWarningsAsErrors=true", "-bl", "-bl:logs/build.binlog"],
            &["-o", "out", "--output=artifacts/bin", "-v:m", "-nologo", "-restore", "-tl:off", "-m:4"],
            &["--source", "https://api.nuget.org/v3/index.json", "-s", "vendor/feed", "@build.rsp"],
            &["-e", "ASPNETCORE_ENVIRONMENT=Test", "-e", "API=http://localhost:5000", "-l", "console;verbosity=normal"],
            &["--no-restore", "--", "MSTest.Parallelize.Workers=1", "RunConfiguration.ResultsDirectory=out"],
        ] {
            let plan = super::plan(&confined("dotnet.build", args)).unwrap();
            assert_eq!(plan.args[1..], *args);
        }
    }

    #[test]
    fn projects_and_solutions_must_stay_inside_the_roots() {
        for project in ["../Other/Other.sln", "/tmp/App.csproj", "..\\Other\\App.csproj"] {
            let err = plan(&confined("dotnet.build", &[project])).unwrap_err();
            assert!(err.contains("`dotnet build ") && err.contains("points outside"), "{err}");
        }
        assert!(plan(&request("dotnet.build", &["/tmp/App.csproj"], "/bv-plan/proj")).is_ok(), "no roots, no limit");
    }

    #[test]
    fn path_switches_must_stay_inside_the_roots_however_spelled() {
        for args in [
            &["-o", "/tmp/out"][..],
            &["--output=../out"],
            &["-o/tmp/out"],
            &["-co/tmp/out"],
            &["--results-directory", "/tmp/r"],
            &["--artifacts-path:/tmp/a"],
            &["--diag", "/tmp/d.log"],
            &["-s", "/tmp/x.runsettings"],
            &["--source", "file:///tmp/feed"],
            &["--packages", "/tmp/packages"],
            &["--configfile", "../NuGet.config"],
            &["--test-adapter-path", "/tmp/adapters"],
            &["-bl:/tmp/x.binlog"],
            &["/bl:LogFile=/tmp/x.binlog"],
            &["-BinaryLogger:../x.binlog"],
            &["-\"bl\":/tmp/x.binlog"],
            &["-flp:Verbosity=diag;LogFile=/tmp/x.log"],
            &["-flp3:logfile=/tmp/x.log"],
            &["-pp:/tmp/x.xml"],
            &["-logger:My.Logger,/tmp/Logger.dll"],
            &["-dl:/tmp/a.dll*/tmp/b.dll"],
            &["--logger", "trx;LogFileName=/tmp/r.trx"],
            &["-p:CustomBeforeMicrosoftCommonTargets=/tmp/x.targets"],
            &["/p:OutDir=%2Ftmp%2Fout"],
            &["-p", "CscToolPath=/tmp/bin"],
            &["--property:A=1;B=/tmp/x"],
            &["-p:A=1,B=/tmp/x"],
            &["-e", "LD_PRELOAD=/tmp/x.so"],
        ] {
            let err = plan(&confined("dotnet.test", args)).unwrap_err();
            assert!(err.contains("points outside the directories this call may use"), "{args:?}: {err}");
        }
        let err = plan(&confined("dotnet.build", &["@/tmp/args.rsp"])).unwrap_err();
        assert!(err.contains("reads arguments from a file outside"), "{err}");
    }

    #[test]
    fn relative_paths_from_unseen_folders_may_not_climb() {
        for args in [
            &["-p:OutDir=../out"][..],
            &["-l", "html;LogFileName=../../r.html"],
            &["--", "--report-trx-filename=../x.trx"],
            &["--", "RunConfiguration.TestAdaptersPaths=adapters;..\\..\\x"],
        ] {
            let err = plan(&confined("dotnet.test", args)).unwrap_err();
            assert!(err.contains("may not climb with `..`"), "{args:?}: {err}");
        }
    }

    #[test]
    fn test_platform_paths_after_the_double_dash_must_stay_inside_the_roots() {
        for args in [
            &["--", "RunConfiguration.ResultsDirectory=/tmp/r"][..],
            &["--", "RunConfiguration.DotnetHostPath=/tmp/dotnet"],
            &["--", "--results-directory", "/tmp/r"],
            &["--", "--diagnostic-output-directory:/tmp/d"],
        ] {
            let err = plan(&confined("dotnet.test", args)).unwrap_err();
            assert!(err.contains("points outside"), "{args:?}: {err}");
        }
    }

    #[test]
    fn properties_and_targets_that_run_a_command_make_the_call_mutate() {
        for args in [
            &["-p:PreBuildEvent=touch x"][..],
            &["/p:PostBuildEvent=touch x"],
            &["--property:Configuration=Release;postbuildevent=touch x"],
            &["-p", "RunCommand=sh"],
            &["-property:A=1,CscToolExe=sh"],
            &["-p:CscToolPath=tools"],
            &["-p:Pre%42uildEvent=touch x"],
            &["\"-p:PreBuildEvent=touch x\""],
            &["-pPreBuildEvent=touch x"],
            &["-rp:PreBuildEvent=touch x"],
            &["-t:Exec"],
            &["/target:Clean"],
            &["-getTargetResult:Build"],
        ] {
            let plan = plan(&request("dotnet.build", args, "/src")).expect("planned");
            assert!(plan.mutates.is_some(), "{args:?}");
        }
        for args in [
            &["-p:Configuration=Release", "-p:TreatWarningsAsErrors=true"][..],
            &["--", "-p:PreBuildEvent=x"],
            &["-v:m", "-bl"],
            &["-p:EventName=x"],
        ] {
            let plan = plan(&request("dotnet.test", args, "/src")).expect("planned");
            assert_eq!(plan.mutates, None, "{args:?}");
        }
    }

    #[test]
    fn refuses_unknown_tools() {
        let err = plan(&request("dotnet.publish", &[], "/src")).unwrap_err();
        assert!(err.contains("dotnet.build, dotnet.restore, dotnet.test, dotnet.run and dotnet.format"), "{err}");
    }

    #[test]
    fn manifest_lists_five_tools_and_format_changes_files_unless_verifying() {
        let specs = tool_specs();
        let names: Vec<_> = specs.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["dotnet.build", "dotnet.restore", "dotnet.test", "dotnet.run", "dotnet.format"]);
        let format = &specs[4];
        assert!(format.mutates(&[]));
        assert!(!format.mutates(&["whitespace".to_string(), "--verify-no-changes".to_string()]));
        assert!(specs[..4].iter().all(|t| !t.mutates(&[])));
    }

    #[test]
    fn run_passes_program_arguments_after_the_double_dash() {
        let plan = plan(&request("dotnet.run", &["--project", "App", "--", "--port", "80"], "/src")).unwrap();
        assert_eq!(plan.args, ["run", "--project", "App", "--", "--port", "80"]);
        assert!(plan.artifacts.is_empty());
    }
}
