//! The corpus of real captures (`../shared/corpus`), the `buildvise parse` call for each case, and
//! the two things `../shared/eval/score.py` gives: ideal answers and recall/precision.

use crate::report::{Figure, Report, Table};
use crate::{Setup, run_ok};
use anyhow::{Context, bail};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Files of a case folder that are not artifacts of the run (as score.py counts them).
const NOT_ARTIFACTS: &[&str] = &["case.json", "combined.log", "stdout.log", "stderr.log", "gen.py", "project"];

/// Information goals (issue 2's acceptance): recall and precision per toolchain.
const MIN_RECALL: f64 = 0.97;
const MIN_PRECISION: f64 = 0.95;

/// One captured run with its ground truth.
#[derive(Debug, Clone)]
pub struct Case {
    pub toolchain: String,
    pub id: String,
    dir: PathBuf,
    pub tool: String,
    exit_code: i64,
    /// The expected outcome: false for a failing run.
    pub success: bool,
}

impl Case {
    /// `parse TOOL …` for this case's combined log, exactly as score.py calls it.
    pub fn parse_args(&self) -> anyhow::Result<Vec<OsString>> {
        let mut args: Vec<OsString> = vec!["parse".into(), self.tool.clone().into()];
        args.extend(["--exit-code".into(), self.exit_code.to_string().into()]);
        args.extend(["--log".into(), self.dir.join("combined.log").into()]);
        let case: Value = read_json(&self.dir.join("case.json"))?;
        match case["cwd"].as_str().unwrap_or("project") {
            // A captured case of the project names where it ran; parse rebases its paths.
            cwd if Path::new(cwd).is_absolute() => args.extend(["--cwd".into(), cwd.into()]),
            cwd if self.dir.join(cwd).is_dir() => args.extend(["--cwd".into(), self.dir.join(cwd).into()]),
            _ => {}
        }
        let mut names: Vec<OsString> = std::fs::read_dir(&self.dir)?.flatten().map(|e| e.file_name()).collect();
        names.sort();
        for name in names {
            let path = self.dir.join(&name);
            if path.is_file() && !NOT_ARTIFACTS.iter().any(|n| name == *n) {
                args.extend(["--artifact".into(), path.into()]);
            }
        }
        Ok(args)
    }

    pub fn raw_log(&self) -> anyhow::Result<Vec<u8>> {
        let path = self.dir.join("combined.log");
        std::fs::read(&path).with_context(|| format!("reading {}", path.display()))
    }
}

/// Every case under `corpus`, sorted by toolchain then id.
pub fn load(corpus: &Path) -> anyhow::Result<Vec<Case>> {
    let mut cases = Vec::new();
    for toolchain in sorted_dirs(corpus)? {
        let name = file_name(&toolchain);
        if name.starts_with(['_', '.']) {
            continue;
        }
        for dir in sorted_dirs(&toolchain)? {
            let json = dir.join("case.json");
            if !json.is_file() {
                continue;
            }
            let case: Value = read_json(&json)?;
            let command: Vec<String> = case["command"]
                .as_array()
                .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
                .unwrap_or_default();
            cases.push(Case {
                toolchain: name.clone(),
                id: file_name(&dir),
                // The project's captured cases name their tool (`npm.exec` is no command's
                // first words); the shared corpus names only the command.
                tool: match case["tool"].as_str() {
                    Some(tool) => tool.to_string(),
                    None => tool_for(&command).with_context(|| format!("{}", json.display()))?,
                },
                exit_code: case["exit_code"].as_i64().unwrap_or(0),
                success: case["success"].as_bool().unwrap_or(false),
                dir,
            });
        }
    }
    if cases.is_empty() {
        bail!("no cases under {}", corpus.display());
    }
    Ok(cases)
}

/// The buildvise tool that would have run a case's command (score.py's `tool_for`).
fn tool_for(command: &[String]) -> anyhow::Result<String> {
    let Some((program, rest)) = command.split_first() else { bail!("case.json has no command") };
    let program = Path::new(program).file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let first = rest.first().map(String::as_str).unwrap_or_default();
    Ok(match program {
        "cargo" => format!("cargo.{first}"),
        "mcs" | "xbuild" | "msbuild" => "dotnet.build".into(),
        "nunit-console" => "dotnet.test".into(),
        "dotnet" => format!("dotnet.{first}"),
        "pytest" | "py.test" => "pytest.run".into(),
        _ if rest.len() >= 2 && rest[0] == "-m" && rest[1] == "pytest" => "pytest.run".into(),
        "npm" => match (first, rest.get(1).map(String::as_str)) {
            ("install" | "i" | "ci" | "add", _) => "npm.install".into(),
            ("test" | "t", _) | ("run" | "run-script", Some("test")) => "npm.test".into(),
            ("run" | "run-script", Some("build")) => "npm.build".into(),
            _ => "npm.run".into(),
        },
        _ => bail!("no buildvise tool runs {command:?}"),
    })
}

/// Each case's ideal answer, keyed by (toolchain, id), from `score.py --ideal`.
pub fn ideal_answers(setup: &Setup, corpus: &Path) -> anyhow::Result<HashMap<(String, String), String>> {
    let dir = setup.fresh_dir("ideal")?;
    run_ok(
        Command::new("python3").arg(&setup.scorer).arg("--corpus").arg(corpus).arg("--ideal").arg(&dir),
        "python3 score.py --ideal (is python3 installed?)",
    )?;
    let mut answers = HashMap::new();
    for entry in std::fs::read_dir(&dir)?.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some((toolchain, id)) = name.strip_suffix(".txt").and_then(|n| n.split_once("__")) else { continue };
        answers.insert((toolchain.to_string(), id.to_string()), std::fs::read_to_string(entry.path())?);
    }
    Ok(answers)
}

/// score.py's totals for one toolchain.
#[derive(Debug, Clone)]
pub struct Score {
    pub toolchain: String,
    cases: u64,
    tp: u64,
    fn_: u64,
    fp: u64,
    summaries: u64,
    summaries_ok: u64,
    success_ok: u64,
    failed_runs: u64,
}

impl Score {
    fn recall(&self) -> f64 {
        ratio_or_one(self.tp, self.tp + self.fn_)
    }
    fn precision(&self) -> f64 {
        ratio_or_one(self.tp, self.tp + self.fp)
    }
}

fn ratio_or_one(part: u64, whole: u64) -> f64 {
    if whole == 0 { 1.0 } else { part as f64 / whole as f64 }
}

/// Runs score.py over the whole corpus (`streams`: stdout.log then stderr.log instead of combined.log).
pub fn score(setup: &Setup, streams: bool) -> anyhow::Result<Vec<Score>> {
    let out = setup.fresh_dir(if streams { "score-streams" } else { "score" })?.join("score.json");
    let mut command = Command::new("python3");
    command.arg(&setup.scorer).arg("--bin").arg(&setup.bin).arg("--corpus").arg(&setup.corpus).arg("--json").arg(&out);
    if streams {
        command.arg("--streams");
    }
    // The parse processes score.py starts inherit this: no user config, no user plugins.
    setup.isolate(&mut command, &setup.scratch.path().join("score-store"));
    run_ok(&mut command, "python3 score.py")?;
    let json: Value = read_json(&out)?;
    let Some(totals) = json["totals"].as_object() else { bail!("{} has no totals", out.display()) };
    let field = |t: &Value, key: &str| t[key].as_u64().unwrap_or(0);
    Ok(totals
        .iter()
        .map(|(toolchain, t)| Score {
            toolchain: toolchain.clone(),
            cases: field(t, "cases"),
            tp: field(t, "tp"),
            fn_: field(t, "fn"),
            fp: field(t, "fp"),
            summaries: field(t, "summaries"),
            summaries_ok: field(t, "summaries_ok"),
            success_ok: field(t, "success_ok"),
            failed_runs: field(t, "failed_runs"),
        })
        .collect())
}

/// Adds the information-kept figures and their detail table.
pub fn report(report: &mut Report, scores: &[Score], streams: bool) {
    const SECTION: &str = "information";
    let feed = if streams { "stdout+stderr" } else { "combined log" };
    let mut table = Table::new(
        &format!("Information kept per toolchain ({feed})"),
        "score.py: diagnostics matched (tp), missed (fn) and extra (fp); summaries and success flags exact.",
        &["toolchain", "cases", "recall", "precision", "tp", "fn", "fp", "summaries", "success", "parse failed"],
    );
    let by_name: BTreeMap<&str, &Score> = scores.iter().map(|s| (s.toolchain.as_str(), s)).collect();
    for s in by_name.values() {
        table.rows.push(vec![
            s.toolchain.clone(),
            s.cases.to_string(),
            format!("{:.3}", s.recall()),
            format!("{:.3}", s.precision()),
            s.tp.to_string(),
            s.fn_.to_string(),
            s.fp.to_string(),
            format!("{}/{}", s.summaries_ok, s.summaries),
            format!("{}/{}", s.success_ok, s.cases),
            s.failed_runs.to_string(),
        ]);
        let remedy = format!(
            "Run `python3 ../shared/eval/score.py --bin target/release/buildvise --toolchain {}{} --verbose` \
             for the missed and extra diagnostics; the fix is in plugins/{}.",
            s.toolchain,
            if streams { " --streams" } else { "" },
            s.toolchain
        );
        let name = |what: &str| format!("{what}, {} ({feed})", s.toolchain);
        report.figures.push(Figure::at_least(SECTION, name("recall"), s.recall(), MIN_RECALL, "", &remedy));
        report.figures.push(Figure::at_least(SECTION, name("precision"), s.precision(), MIN_PRECISION, "", &remedy));
        let exact = s.summaries_ok == s.summaries && s.success_ok == s.cases;
        report.figures.push(Figure::check(
            SECTION,
            name("summaries and success flags"),
            format!("{}/{} and {}/{}", s.summaries_ok, s.summaries, s.success_ok, s.cases),
            "all exact",
            exact,
            || {
                format!(
                    "{} summaries and {} success flags differ. {remedy}",
                    s.summaries - s.summaries_ok,
                    s.cases - s.success_ok
                )
            },
        ));
    }
    report.tables.push(table);
}

fn read_json(path: &Path) -> anyhow::Result<Value> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))
}

fn sorted_dirs(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    Ok(dirs)
}

fn file_name(path: &Path) -> String {
    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::tool_for;

    fn tool(command: &[&str]) -> String {
        tool_for(&command.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap_or_default()
    }

    #[test]
    fn commands_map_to_tools_as_score_py_maps_them() {
        assert_eq!(tool(&["cargo", "test", "--no-fail-fast"]), "cargo.test");
        assert_eq!(tool(&["xbuild", "Ledger.csproj"]), "dotnet.build");
        assert_eq!(tool(&["nunit-console", "x.dll"]), "dotnet.test");
        assert_eq!(tool(&["dotnet", "restore"]), "dotnet.restore");
        assert_eq!(tool(&["python3", "-m", "pytest"]), "pytest.run");
        assert_eq!(tool(&["npm", "ci"]), "npm.install");
        assert_eq!(tool(&["npm", "run", "test"]), "npm.test");
        assert_eq!(tool(&["npm", "run", "build"]), "npm.build");
        assert_eq!(tool(&["npm", "run", "lint"]), "npm.run");
        assert_eq!(tool(&["npm"]), "npm.run");
        assert!(tool_for(&["make".to_string()]).is_err());
    }
}
