//! Turning a tool call into an `npm` command line.
//!
//! Scripts are checked against package.json before anything runs, so an agent that asks for a
//! script the project does not have gets the list of scripts that exist instead of npm's error.
//! When the script is a single jest or vitest command, the plan asks it for a JSON report in the
//! artifact directory; the printed output stays the tool's human report.

use buildvise_plugin_api::{CommandPlan, PlanRequest};
use std::collections::BTreeMap;
use std::path::Path;

/// npm options that would let a caller run a command of their choosing, or install outside the
/// workspace the consent was given for.
const FORBIDDEN_OPTIONS: &[&str] = &[
    "--script-shell",
    "--shell",
    "--node-options",
    "--userconfig",
    "--globalconfig",
    "--prefix",
    "-g",
    "--global",
    "--location",
    "-C",
];

/// The npm command for one call of `npm.build`, `npm.test`, `npm.run` or `npm.install`.
pub fn plan(request: &PlanRequest) -> Result<CommandPlan, String> {
    let manifest = read_manifest(Path::new(&request.cwd))?;
    let mut args: Vec<String> = Vec::new();
    let script = match request.tool.as_str() {
        "npm.install" => {
            check_options(&request.args)?;
            args.push("install".into());
            args.extend(request.args.iter().cloned());
            return Ok(finish_plan(args, Vec::new()));
        }
        "npm.build" => "build".to_string(),
        "npm.test" => "test".to_string(),
        "npm.run" => match request.args.first() {
            Some(name) if !name.starts_with('-') => name.clone(),
            _ => {
                return Err(format!(
                    "npm.run needs the script name as its first argument; scripts in package.json: {}",
                    manifest.script_list()
                ));
            }
        },
        other => return Err(format!("unknown tool {other}; send npm.build, npm.test, npm.run or npm.install")),
    };
    let rest = if request.tool == "npm.run" { &request.args[1..] } else { &request.args[..] };
    let (npm_options, script_args) = split_args(rest);
    check_options(npm_options)?;

    let command = manifest.script(&script)?;
    if script == "test" {
        args.push("test".into());
    } else {
        args.extend(["run".to_string(), script.clone()]);
    }
    args.extend(npm_options.iter().cloned());

    let mut extra: Vec<String> = script_args.to_vec();
    let mut artifacts = Vec::new();
    if let Some(runner) = command.and_then(report_runner) {
        let (flags, file) = runner.report_flags(Path::new(&request.cwd), &request.artifact_dir);
        if !flags.is_empty() {
            extra.extend(flags);
            artifacts.push(file);
        }
    }
    if !extra.is_empty() {
        args.push("--".into());
        args.extend(extra);
    }
    Ok(finish_plan(args, artifacts))
}

fn finish_plan(args: Vec<String>, artifacts: Vec<String>) -> CommandPlan {
    // No colour: NO_COLOR alone, because node warns on every start when FORCE_COLOR is set too.
    let env: BTreeMap<String, String> =
        [("NO_COLOR", "1"), ("npm_config_update_notifier", "false"), ("npm_config_fund", "false")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
    CommandPlan { program: "npm".into(), args, env, artifacts }
}

/// Arguments before a literal `--` are npm's own (`-w web`); after it, the script's. Without a
/// `--`, every argument is the script's.
fn split_args(args: &[String]) -> (&[String], &[String]) {
    match args.iter().position(|a| a == "--") {
        Some(i) => (&args[..i], &args[i + 1..]),
        None => (&[], args),
    }
}

fn check_options(options: &[String]) -> Result<(), String> {
    for option in options {
        let name = option.split('=').next().unwrap_or(option);
        if FORBIDDEN_OPTIONS.contains(&name) {
            return Err(format!(
                "the npm option {name} is not allowed here (it could run another command or install outside the project); send the call without it"
            ));
        }
    }
    Ok(())
}

/// What planning needs from package.json.
struct Manifest {
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
    fn script(&self, name: &str) -> Result<Option<&str>, String> {
        let Some(scripts) = &self.scripts else { return Ok(None) };
        match scripts.get(name) {
            Some(command) => Ok(Some(command)),
            None => Err(format!("no script \"{name}\" in package.json; scripts: {}", self.script_list())),
        }
    }

    fn script_list(&self) -> String {
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

    /// A throwaway project folder, removed when dropped.
    struct Project(std::path::PathBuf);

    impl std::ops::Deref for Project {
        type Target = Path;
        fn deref(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for Project {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn project(package_json: &str) -> Project {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "buildvise-npm-plan-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        std::fs::write(dir.join("package.json"), package_json).expect("write package.json");
        Project(dir)
    }

    fn request(tool: &str, args: &[&str], cwd: &Path) -> PlanRequest {
        PlanRequest {
            tool: tool.into(),
            args: args.iter().map(|a| a.to_string()).collect(),
            cwd: cwd.display().to_string(),
            artifact_dir: "/tmp/art".into(),
        }
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

    #[test]
    fn broken_package_json_still_runs_so_npm_reports_it() {
        let dir = project(r#"{"scripts": {"build": "x" "test": "y"}}"#);
        let plan = plan(&request("npm.build", &[], &dir)).expect("plan");
        assert_eq!(plan.args, ["run", "build"]);
    }
}
