//! The captured cases (`tests/fixtures/cases/<toolchain>/<case>/`, and the shared corpus beside
//! the project, in the same layout): reading a case and the `buildvise parse` call that answers it.

use super::{Sandbox, toolchains};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Files of a case folder that are not artifacts of the run.
pub const NOT_ARTIFACTS: &[&str] = &["case.json", "combined.log", "stdout.log", "stderr.log", "gen.py", "project"];

pub struct Case {
    pub dir: PathBuf,
    pub toolchain: String,
    pub id: String,
    pub spec: Value,
}

impl Case {
    pub fn read(dir: &Path) -> Case {
        let text = std::fs::read_to_string(dir.join("case.json")).expect("case.json");
        let spec: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let toolchain = spec["toolchain"].as_str().expect("toolchain").to_string();
        let id = spec["id"].as_str().expect("id").to_string();
        Case { dir: dir.to_path_buf(), toolchain, id, spec }
    }

    pub fn name(&self) -> String {
        format!("{}/{}", self.toolchain, self.id)
    }

    pub fn tool(&self) -> String {
        match self.spec["tool"].as_str() {
            Some(tool) => tool.to_string(),
            None => tool_for(&self.spec["command"]),
        }
    }

    pub fn exit_code(&self) -> i64 {
        self.spec["exit_code"].as_i64().expect("exit_code")
    }

    /// `buildvise parse` arguments for the combined log, or for the two streams.
    pub fn parse_args(&self, streams: bool, detail: &str) -> Vec<String> {
        let mut args = vec!["parse".to_string(), self.tool()];
        if streams {
            args.extend(["--stdout".into(), path(&self.dir.join("stdout.log"))]);
            args.extend(["--stderr".into(), path(&self.dir.join("stderr.log"))]);
        } else {
            args.extend(["--log".into(), path(&self.dir.join("combined.log"))]);
        }
        let cwd = match self.spec["cwd"].as_str() {
            // Shared corpus cases name the folder holding the sources; ours name where they ran.
            Some("project") | None => path(&self.dir.join("project")),
            Some(cwd) => cwd.to_string(),
        };
        args.extend(["--exit-code".into(), self.exit_code().to_string(), "--cwd".into(), cwd]);
        args.extend(["--detail".into(), detail.to_string()]);
        for artifact in self.artifacts() {
            args.extend(["--artifact".into(), path(&artifact)]);
        }
        args
    }

    pub fn artifacts(&self) -> Vec<PathBuf> {
        let mut found: Vec<PathBuf> = std::fs::read_dir(&self.dir)
            .expect("case dir")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| !NOT_ARTIFACTS.contains(&n)))
            .collect();
        found.sort();
        found
    }

    pub fn has_streams(&self) -> bool {
        self.dir.join("stdout.log").is_file() && self.dir.join("stderr.log").is_file()
    }
}

pub fn path(p: &Path) -> String {
    p.display().to_string()
}

/// The buildvise tool that runs a case's command line, as `../shared/eval/score.py` maps it.
pub fn tool_for(command: &Value) -> String {
    let words: Vec<&str> = command.as_array().expect("command").iter().filter_map(Value::as_str).collect();
    let program = words[0].rsplit('/').next().unwrap_or(words[0]);
    let rest = &words[1..];
    match program {
        "cargo" => format!("cargo.{}", rest[0]),
        "mcs" | "xbuild" | "msbuild" => "dotnet.build".into(),
        "nunit-console" => "dotnet.test".into(),
        "dotnet" => format!("dotnet.{}", rest[0]),
        "pytest" | "py.test" => "pytest.run".into(),
        _ if rest.starts_with(&["-m", "pytest"]) => "pytest.run".into(),
        "npm" => match rest {
            ["install" | "i" | "ci" | "add", ..] => "npm.install".into(),
            ["test" | "t", ..] => "npm.test".into(),
            ["run" | "run-script", "build", ..] => "npm.build".into(),
            ["run" | "run-script", "test", ..] => "npm.test".into(),
            _ => "npm.run".into(),
        },
        _ => panic!("no tool for command {command}"),
    }
}

pub fn case_dirs(under: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    let Ok(toolchains) = std::fs::read_dir(under) else { return dirs };
    for toolchain in toolchains.flatten().filter(|e| e.path().is_dir()) {
        for case in std::fs::read_dir(toolchain.path()).expect("toolchain dir").flatten() {
            if case.path().join("case.json").is_file() {
                dirs.push(case.path());
            }
        }
    }
    dirs.sort();
    dirs
}

pub fn sandbox() -> Sandbox {
    Sandbox::new(&[toolchains()])
}
