//! Which command runs a tool: `dotnet <verb> ARGS`, the environment that keeps its output stable,
//! and the TRX report `dotnet test` writes into the artifact directory.

use buildvise_plugin_api::{CommandPlan, PlanRequest, ToolSpec};
use std::collections::BTreeMap;
use std::path::Path;

/// File name of the TRX report inside the run's artifact directory.
pub const TRX_FILE: &str = "results.trx";

/// The tools, their `dotnet` verb and a one-line description.
const TOOLS: [(&str, &str, &str, u64); 3] = [
    ("dotnet.build", "build", "dotnet build: MSBuild, Roslyn, NuGet and SDK diagnostics, each once", 1800),
    ("dotnet.restore", "restore", "dotnet restore: NuGet and SDK diagnostics", 900),
    ("dotnet.test", "test", "dotnet test: failed tests with stack locations, build errors, summary", 3600),
];

pub fn tool_specs() -> Vec<ToolSpec> {
    TOOLS
        .iter()
        .map(|(name, verb, description, timeout)| ToolSpec {
            name: (*name).into(),
            description: (*description).into(),
            mutates_workspace: false,
            timeout_secs: Some(*timeout),
            args_hint: Some(format!("extra `dotnet {verb}` arguments (project or solution, -c Release, …)")),
        })
        .collect()
}

pub fn plan(request: &PlanRequest) -> Result<CommandPlan, String> {
    let Some((_, verb, _, _)) = TOOLS.iter().find(|(name, ..)| *name == request.tool) else {
        return Err(format!(
            "unknown tool `{}`; the dotnet plugin runs dotnet.build, dotnet.restore and dotnet.test",
            request.tool
        ));
    };
    refuse_unreadable_output(&request.args)?;

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

    Ok(CommandPlan { program: "dotnet".into(), args, env: environment(), artifacts })
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
        PlanRequest {
            tool: tool.into(),
            args: args.iter().map(|s| s.to_string()).collect(),
            cwd: cwd.into(),
            artifact_dir: "/runs/r1".into(),
        }
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

    #[test]
    fn refuses_unknown_tools() {
        let err = plan(&request("dotnet.publish", &[], "/src")).unwrap_err();
        assert!(err.contains("dotnet.build, dotnet.restore and dotnet.test"), "{err}");
    }

    #[test]
    fn manifest_lists_three_tools() {
        let names: Vec<_> = tool_specs().into_iter().map(|t| t.name).collect();
        assert_eq!(names, ["dotnet.build", "dotnet.restore", "dotnet.test"]);
    }
}
