//! The command for a call in a project that pnpm, yarn or bun runs (see [`crate::manager`]).
//!
//! Each runs a script as `MANAGER run SCRIPT ARGS`, where all four pass every argument after the
//! script's name to the script (checked on pnpm 9, yarn 1.22 and 4, bun 1.x), with one exception
//! yarn 1 has: before a `--`, it reads options as its own (`--cwd`). No manager option is passed
//! (no `--filter`, `--cwd`, `--dir`): those name other folders and programs, and npm's checks
//! for them do not apply. A call runs the script of the package in its `cwd`.

use crate::manager::{Choice, Manager, NAMED};
use crate::plan::{Manifest, check_program, report, unknown_tool};
use buildvise_plugin_api::{CommandPlan, PlanRequest};

pub fn plan(
    request: &PlanRequest,
    choice: Choice,
    args: &[String],
    manifest: &Manifest,
) -> Result<CommandPlan, String> {
    let manager = choice.manager;
    let program = manager.program();
    let script = match request.tool.as_str() {
        "npm.ci" => {
            if let Some(arg) = args.first() {
                return Err(format!(
                    "`{arg}`: with {program}, npm.ci runs `{program} {}` and takes no arguments",
                    manager.frozen_install().join(" ")
                ));
            }
            return Ok(finish(manager, manager.frozen_install().iter().map(|a| a.to_string()).collect(), None));
        }
        "npm.install" => {
            let allowed = manager.install_options();
            if let Some(arg) = args.iter().find(|a| !allowed.contains(&a.as_str())) {
                return Err(format!(
                    "`{arg}`: with {program}, npm.install runs `{program} install` with none but {}; \
                     add dependencies to package.json first",
                    allowed.join(", ")
                ));
            }
            let command = std::iter::once("install".to_string()).chain(args.iter().cloned()).collect();
            return Ok(finish(manager, command, None));
        }
        "npm.exec" => return plan_exec(request, manager, args, manifest),
        "npm.build" => "build",
        "npm.test" => "test",
        "npm.run" => match args.first() {
            Some(name) if !name.starts_with('-') => name.as_str(),
            _ => {
                return Err(format!(
                    "npm.run needs the script name as its first argument; scripts in package.json: {}",
                    manifest.script_list()
                ));
            }
        },
        other => return Err(unknown_tool(other)),
    };
    let rest = if request.tool == "npm.run" { &args[1..] } else { args };
    let script_args = script_args(choice, rest, request.tool == "npm.test")?;
    let command = manifest.script(script)?;

    let mut words = vec!["run".to_string(), script.to_string()];
    words.extend(script_args.iter().cloned());
    // A `--` that reaches the script (all but yarn 1 pass it on) would make the report's flags
    // the test runner's positional arguments.
    let report = report(command, request).filter(|_| manager == Manager::YarnClassic || !words.contains(&"--".into()));
    let artifact = report.map(|(flags, file)| {
        words.extend(flags);
        file
    });
    Ok(finish(manager, words, artifact))
}

/// The script's arguments. A named manager is a command line as typed (a hook's rewrite), so its
/// arguments pass as they are; otherwise the call follows the tools' contract, where arguments
/// after a first `--` are the script's and none before it are allowed.
fn script_args(choice: Choice, rest: &[String], test: bool) -> Result<&[String], String> {
    let program = choice.manager.program();
    let rest = match (choice.named, rest.iter().position(|a| a == "--")) {
        (false, Some(0)) => &rest[1..],
        (false, Some(i)) => {
            return Err(format!(
                "`{}`: buildvise passes no {program} options; send the script's arguments alone, or after `--`",
                rest[..i].join(" ")
            ));
        }
        _ => rest,
    };
    if choice.named && test && choice.manager == Manager::Pnpm {
        // `pnpm test` reads the options after it as its own unless they follow a `--`, which it
        // drops (`pnpm run test` passes both on).
        if rest.first().is_some_and(|a| a == "--") {
            return Ok(&rest[1..]);
        }
        if let Some(option) = rest.iter().find(|a| a.starts_with('-')) {
            return Err(format!(
                "`{option}`: `pnpm test` reads options as its own; leave out {NAMED}pnpm to pass them to the script"
            ));
        }
    }
    if choice.manager == Manager::YarnClassic
        && let Some(end) = rest.iter().position(|a| a == "--")
        && let Some(option) = rest[..end].iter().find(|a| a.starts_with('-'))
    {
        return Err(format!(
            "`{option}`: yarn 1 reads the options before a `--` as its own; send the script's arguments without `--`"
        ));
    }
    Ok(rest)
}

/// A bin the project has installed, run so that nothing is downloaded: `pnpm exec` looks in
/// node_modules/.bin first, `yarn run` runs a bin when no script has its name, and `bun x
/// --no-install` never installs.
fn plan_exec(
    request: &PlanRequest,
    manager: Manager,
    args: &[String],
    manifest: &Manifest,
) -> Result<CommandPlan, String> {
    let program = manager.program();
    if let Some(option) = args.first().filter(|a| a.starts_with('-')) {
        return Err(format!("`{option}`: buildvise passes no {program} options; send the program first"));
    }
    check_program(args.first(), request)?;
    let bin = &args[0];
    let mut words: Vec<String> = match manager {
        Manager::Pnpm => vec!["exec".into()],
        Manager::YarnClassic | Manager::YarnBerry => {
            if manifest.has_script(bin) {
                return Err(format!(
                    "`{bin}` is also a script in package.json, which `yarn run {bin}` would run instead; \
                     send npm.run {bin} to run the script"
                ));
            }
            script_args(Choice { manager, named: true }, &args[1..], false)?;
            vec!["run".into()]
        }
        Manager::Bun => vec!["x".into(), "--no-install".into()],
        Manager::Npm => unreachable!("npm's plan is crate::plan"),
    };
    words.extend(args.iter().cloned());
    Ok(finish(manager, words, None))
}

fn finish(manager: Manager, args: Vec<String>, artifact: Option<String>) -> CommandPlan {
    let mut plan = CommandPlan::new(manager.program())
        .with_args(args)
        .with_env("NO_COLOR", "1")
        .with_caches(crate::plan::caches());
    plan = match manager {
        // pnpm reads npm's settings from the environment.
        Manager::Pnpm => plan.with_env("npm_config_update_notifier", "false"),
        // Berry colours and links its output even into a pipe, and announces its telemetry.
        Manager::YarnBerry => plan
            .with_env("YARN_ENABLE_COLORS", "0")
            .with_env("YARN_ENABLE_HYPERLINKS", "0")
            .with_env("YARN_ENABLE_TELEMETRY", "0"),
        Manager::YarnClassic | Manager::Bun | Manager::Npm => plan,
    };
    plan.artifacts = artifact.into_iter().collect();
    plan
}

#[cfg(test)]
mod tests {
    use crate::plan::plan;
    use buildvise_plugin_api::PlanRequest;
    use buildvise_plugin_api::testing::ScratchDir;
    use std::path::Path;

    /// A project with these scripts and this lockfile.
    fn project(lockfile: &str, contents: &str) -> ScratchDir {
        let dir = ScratchDir::new("buildvise-npm-managers");
        let scripts = r#"{"scripts":{"build":"tsc","test":"jest","lint":"eslint .","tsc":"tsc"}}"#;
        std::fs::write(dir.join("package.json"), scripts).expect("package.json");
        std::fs::write(dir.join(lockfile), contents).expect("lockfile");
        std::fs::create_dir_all(dir.join("node_modules/.bin")).expect("bins");
        for bin in ["tsc", "eslint"] {
            std::fs::write(dir.join("node_modules/.bin").join(bin), "").expect("bin");
        }
        dir
    }

    fn call(tool: &str, args: &[&str], cwd: &Path) -> Result<(String, Vec<String>), String> {
        let args = args.iter().map(|a| a.to_string()).collect();
        let request = PlanRequest::new(tool, args, cwd.display().to_string(), "/tmp/art")
            .with_roots(vec![cwd.display().to_string()]);
        plan(&request).map(|p| (p.program, p.args))
    }

    fn words(list: &[&str]) -> Vec<String> {
        list.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn each_manager_runs_scripts_its_own_way() {
        for (lockfile, contents, program) in [
            ("pnpm-lock.yaml", "", "pnpm"),
            ("yarn.lock", "# yarn lockfile v1\n", "yarn"),
            ("yarn.lock", "__metadata:\n", "yarn"),
            ("bun.lock", "{}", "bun"),
        ] {
            let dir = project(lockfile, contents);
            let (p, args) = call("npm.test", &["--", "--ci"], &dir).expect("test");
            assert_eq!(
                (p.as_str(), args),
                (program, words(&["run", "test", "--ci", "--json", "--outputFile=/tmp/art/jest.json"]))
            );
            let (_, args) = call("npm.build", &["--watch"], &dir).expect("build");
            assert_eq!(args, ["run", "build", "--watch"]);
            let (_, args) = call("npm.run", &["lint", "--fix"], &dir).expect("run");
            assert_eq!(args, ["run", "lint", "--fix"]);
            let err = call("npm.run", &["nope"], &dir).expect_err("missing script");
            assert!(err.contains("no script \"nope\""), "{err}");
        }
    }

    #[test]
    fn install_and_ci_keep_the_lockfile_as_each_manager_does() {
        for (lockfile, contents, ci) in [
            ("pnpm-lock.yaml", "", &["install", "--frozen-lockfile"][..]),
            ("yarn.lock", "# yarn lockfile v1\n", &["install", "--frozen-lockfile"]),
            ("yarn.lock", "__metadata:\n", &["install", "--immutable"]),
            ("bun.lockb", "", &["install", "--frozen-lockfile"]),
        ] {
            let dir = project(lockfile, contents);
            assert_eq!(call("npm.ci", &[], &dir).expect("ci").1, ci);
            assert!(call("npm.ci", &["--offline"], &dir).is_err(), "ci takes no arguments");
            assert_eq!(call("npm.install", &[], &dir).expect("install").1, ["install"]);
            for arg in ["left-pad", "--global", "-g", "--dir=/tmp", "--cwd", "--filter=x", "--config.x=y"] {
                let err = call("npm.install", &[arg], &dir).expect_err(arg);
                assert!(err.contains("runs `") && err.contains("install` with none but"), "{err}");
            }
        }
    }

    #[test]
    fn no_manager_option_gets_through() {
        let pnpm = project("pnpm-lock.yaml", "");
        for args in [&["-w", "web", "--", "x"][..], &["--dir=/tmp", "--"], &["--filter", "x", "--"]] {
            let err = call("npm.test", args, &pnpm).expect_err("options before --");
            assert!(err.contains("buildvise passes no pnpm options"), "{err}");
        }
        // After the script's name every manager passes all on, so these reach the script.
        assert_eq!(
            call("npm.run", &["lint", "--dir", "/tmp"], &pnpm).expect("script's").1,
            ["run", "lint", "--dir", "/tmp"]
        );
        // `pnpm test` typed with an option: pnpm would read it, buildvise would pass it on.
        let err = call("npm.test", &["--pm=pnpm", "--dir", "/tmp"], &pnpm).expect_err("pnpm test's own");
        assert!(err.contains("`pnpm test` reads options as its own"), "{err}");
        assert_eq!(
            call("npm.test", &["--pm=pnpm", "src"], &pnpm).expect("typed").1,
            ["run", "test", "src", "--json", "--outputFile=/tmp/art/jest.json"]
        );
        let yarn = project("yarn.lock", "# yarn lockfile v1\n");
        let err = call("npm.run", &["--pm=yarn", "lint", "--cwd", "/tmp", "--", "x"], &yarn).expect_err("yarn 1");
        assert!(err.contains("yarn 1 reads the options before a `--`"), "{err}");
        assert!(call("npm.run", &["--pm=yarn", "lint", "--cwd", "/tmp"], &yarn).is_ok(), "all passed on");
        let err = call("npm.exec", &["--pm=yarn", "eslint", "--cwd", "/tmp", "--", "x"], &yarn).expect_err("yarn 1");
        assert!(err.contains("yarn 1 reads"), "{err}");
    }

    #[test]
    fn a_typed_line_passes_as_typed() {
        let dir = project("pnpm-lock.yaml", "");
        let (_, args) = call("npm.run", &["--pm=pnpm", "lint", "--", "--fix"], &dir).expect("typed");
        assert_eq!(args, ["run", "lint", "--", "--fix"], "pnpm passes the `--` on, so buildvise does");
        let (_, args) = call("npm.run", &["--pm=pnpm", "test", "--", "x"], &dir).expect("typed");
        assert_eq!(args, ["run", "test", "--", "x"], "no report flags after a `--` the runner sees");
        let (_, args) = call("npm.test", &["--pm=pnpm", "--", "--ci"], &dir).expect("typed");
        assert_eq!(args[..3], ["run", "test", "--ci"], "`pnpm test` drops the `--`");
    }

    #[test]
    fn exec_runs_installed_bins_without_downloading() {
        for (lockfile, contents, exec) in [
            ("pnpm-lock.yaml", "", &["exec", "eslint", "."][..]),
            ("yarn.lock", "__metadata:\n", &["run", "eslint", "."]),
            ("bun.lock", "{}", &["x", "--no-install", "eslint", "."]),
        ] {
            let dir = project(lockfile, contents);
            assert_eq!(call("npm.exec", &["eslint", "."], &dir).expect("exec").1, exec);
            let err = call("npm.exec", &["cowsay"], &dir).expect_err("not installed");
            assert!(err.contains("`cowsay` is not installed"), "{err}");
            for program in ["./node_modules/.bin/eslint", "eslint@9", "/bin/sh"] {
                assert!(call("npm.exec", &[program], &dir).expect_err(program).contains("is not a bin name"));
            }
            assert!(call("npm.exec", &["--package=x", "eslint"], &dir).expect_err("options").contains("no "));
        }
        let yarn = project("yarn.lock", "# yarn lockfile v1\n");
        let err = call("npm.exec", &["tsc"], &yarn).expect_err("a script of that name");
        assert!(err.contains("also a script"), "{err}");
    }

    #[test]
    fn a_named_manager_the_project_does_not_use_is_refused() {
        let dir = project("yarn.lock", "");
        for tool in ["npm.test", "npm.install", "npm.ci"] {
            let err = call(tool, &["--pm=pnpm"], &dir).expect_err(tool);
            assert!(err.contains("this project uses yarn"), "{err}");
            let err = call(tool, &["--pm=npm"], &dir).expect_err(tool);
            assert!(err.contains("this project uses yarn"), "{err}");
        }
        let npm = ScratchDir::new("buildvise-npm-managers");
        std::fs::write(npm.join("package.json"), r#"{"scripts":{"test":"jest"}}"#).expect("package.json");
        let (program, _) = call("npm.test", &["--pm=bun"], &npm).expect("nothing says otherwise");
        assert_eq!(program, "bun");
        assert_eq!(
            call("npm.test", &["--pm=npm"], &npm).expect("npm").1,
            ["test", "--", "--json", "--outputFile=/tmp/art/jest.json"]
        );
    }
}
