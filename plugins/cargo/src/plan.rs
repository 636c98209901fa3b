//! The tools and the command each one runs.

use buildvise_plugin_api::{CommandPlan, PlanRequest, ToolSpec, cache_dir};

/// `(tool, cargo verb, description, args hint)`. The description is the command: an agent knows
/// cargo's verbs, and `list` is paid for on every session. A hint only where args are not
/// simply the verb's. Args are what follows the verb, so libtest's (or the program's) come after
/// a `--` of their own: `["--", "--nocapture"]`, or `exec cargo.test -- -- --nocapture` on the
/// command line, whose first `--` only ends buildvise's options.
const TOOLS: &[(&str, &str, &str, Option<&str>)] = &[
    ("cargo.build", "build", "cargo build", None),
    ("cargo.check", "check", "cargo check", None),
    ("cargo.clippy", "clippy", "cargo clippy", Some("after --, only lint levels")),
    ("cargo.test", "test", "cargo test", Some("cargo's, then -- and libtest's")),
    ("cargo.nextest", "nextest", "cargo nextest run", None),
    ("cargo.run", "run", "cargo run", Some("cargo's, then -- and program's")),
    ("cargo.fmt", "fmt", "cargo fmt", None),
    ("cargo.doc", "doc", "cargo doc", None),
];

pub(crate) fn tools() -> Vec<ToolSpec> {
    TOOLS
        .iter()
        .map(|(name, verb, description, hint)| {
            // The description is the command: what a hook hands to this tool.
            let spec = ToolSpec::new(*name, *description).runs(&description.split(' ').collect::<Vec<_>>());
            let spec = match hint {
                Some(hint) => spec.with_args_hint(*hint),
                None => spec,
            };
            // `cargo fmt` rewrites sources, unless `--check` only asks whether it would.
            if *verb == "fmt" { spec.mutating().read_only_with("--check") } else { spec }
        })
        .collect()
}

/// `cargo <verb> ARGS` with colour off. A leading `+toolchain` goes before the verb, where
/// rustup expects it.
pub(crate) fn plan(request: &PlanRequest) -> Result<CommandPlan, String> {
    let Some((_, verb, _, _)) = TOOLS.iter().find(|(name, ..)| *name == request.tool) else {
        let names: Vec<&str> = TOOLS.iter().map(|t| t.0).collect();
        return Err(format!("unknown tool `{}`; the cargo plugin offers {}", request.tool, names.join(", ")));
    };
    let mut args = Vec::with_capacity(request.args.len() + 2);
    let mut rest = request.args.as_slice();
    if let Some((toolchain, after)) = rest.split_first()
        && toolchain.starts_with('+')
    {
        check_toolchain(toolchain)?;
        args.push(toolchain.clone());
        rest = after;
    }
    let split = rest.iter().position(|a| a == "--").unwrap_or(rest.len());
    check_cargo_args(verb, &rest[..split], request)?;
    let after_dashes = rest.get(split + 1..).unwrap_or_default();
    match *verb {
        "test" => check_libtest_args(after_dashes, request)?,
        "clippy" => check_clippy_args(after_dashes)?,
        "nextest" => check_nextest_args(&rest[..split], request)?,
        "fmt" => {
            check_fmt_check_is_read(rest)?;
            check_rustfmt_args(after_dashes, request)?;
        }
        "doc" if rest[..split].iter().any(|a| a == "--open") => {
            return Err("`--open` starts a browser; cargo.doc builds the docs only, so leave it out".into());
        }
        _ => {}
    }
    args.push((*verb).to_string());
    if *verb == "nextest" {
        args.push("run".to_string());
    }
    args.extend(rest.iter().cloned());
    // What cargo writes outside the project: its registry and git checkouts, rustup's state,
    // and a target directory set elsewhere.
    let caches = [cache_dir("CARGO_HOME", ".cargo"), cache_dir("RUSTUP_HOME", ".rustup"), env_dir("CARGO_TARGET_DIR")];
    let plan = CommandPlan::new("cargo")
        .with_args(args)
        .with_env("CARGO_TERM_COLOR", "never")
        .with_caches(caches.into_iter().flatten());
    // rustfmt colours its diff whenever TERM names a colour terminal, even into a pipe.
    Ok(if *verb == "fmt" { plan.with_env("TERM", "dumb") } else { plan })
}

/// rustup reads a `+toolchain` with a path separator as a directory holding the toolchain, so
/// `cargo +/any/dir build` runs `/any/dir/bin/cargo`; only the names of installed toolchains pass.
fn check_toolchain(arg: &str) -> Result<(), String> {
    let name = &arg[1..];
    let plain = !name.is_empty()
        && !name.starts_with(['.', '-'])
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if plain {
        Ok(())
    } else {
        Err(format!(
            "`{arg}` is not a toolchain name (rustup would run whatever cargo that path holds); send an installed \
             toolchain's name such as `+stable`, `+nightly` or `+1.80.0`"
        ))
    }
}

/// cargo's options whose value is a path it reads or writes. cargo (clap) takes no abbreviations,
/// and refuses `-C` after the verb, which is where the plan puts every argument.
const PATH_OPTIONS: &[&str] = &["--manifest-path", "--target-dir", "--artifact-dir"];

/// Refuses what would let a call run arbitrary programs through cargo's configuration
/// (`--config` can set `build.rustc-wrapper`, `target.<triple>.runner`, …), unstable `-Z`
/// flags, and `--fix`, which edits sources although these tools promise not to; and checks
/// that every path cargo is given lies inside the allowed roots.
fn check_cargo_args(verb: &str, args: &[String], request: &PlanRequest) -> Result<(), String> {
    for (i, arg) in args.iter().enumerate() {
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value)),
            _ => (arg.as_str(), None),
        };
        // clap takes a long option's value from the next argument when no `=` gives it.
        let value = inline.or_else(|| args.get(i + 1).map(String::as_str));
        if name == "--config" {
            return Err("`--config` is not allowed: it can make cargo run any program; put the setting in the \
                        project's .cargo/config.toml instead"
                .into());
        }
        if name == "--fix" {
            return Err(format!(
                "`--fix` edits source files, which cargo.{verb} does not do; run `cargo {verb} --fix` yourself"
            ));
        }
        if PATH_OPTIONS.contains(&name)
            && let Some(value) = value
        {
            request.check_path(name, value)?;
        }
        // A target given as a path is a JSON spec, which names the linker cargo runs.
        if name == "--target"
            && let Some(value) = value.filter(|v| v.contains(['/', '\\']) || v.ends_with(".json"))
        {
            request.check_path(name, value)?;
        }
        if short_cluster_has_unstable_flag(arg) {
            return Err(format!(
                "unstable `-Z` flags are not allowed (`{arg}`); send stable cargo {verb} flags, or set them in the \
                 project's .cargo/config.toml"
            ));
        }
    }
    Ok(())
}

/// True when `arg` is a cluster of short options that reaches `-Z`: clap reads `-vZbuild-std` as
/// `-v -Z build-std`. A value-taking letter (`-p`, `-j`, `-F`) takes the rest of the cluster.
fn short_cluster_has_unstable_flag(arg: &str) -> bool {
    let Some(cluster) = arg.strip_prefix('-').filter(|c| !c.starts_with('-')) else { return false };
    for letter in cluster.chars() {
        match letter {
            'Z' => return true,
            // `-E`/`-P`: cargo-nextest's filter expression and profile.
            'p' | 'j' | 'F' | 'E' | 'P' => return false,
            _ => {}
        }
    }
    false
}

/// libtest writes `--logfile PATH` wherever it points; every other libtest flag stays in the run.
fn check_libtest_args(args: &[String], request: &PlanRequest) -> Result<(), String> {
    for (i, arg) in args.iter().enumerate() {
        let value = match arg.strip_prefix("--logfile") {
            Some("") => args.get(i + 1).map(String::as_str),
            Some(rest) => rest.strip_prefix('='),
            None => None,
        };
        if let Some(value) = value {
            request.check_path("--logfile", value)?;
        }
    }
    Ok(())
}

/// cargo-nextest's options whose value is a file or directory it reads or writes (a tool config
/// is `TOOL:PATH`); cargo's own (`--manifest-path`, `--target-dir`) are checked with cargo's.
const NEXTEST_PATH_OPTIONS: &[&str] = &[
    "--config-file",
    "--tool-config-file",
    "--archive-file",
    "--workspace-remap",
    "--target-dir-remap",
    "--cargo-metadata",
    "--binaries-metadata",
    "--extract-to",
];

fn check_nextest_args(args: &[String], request: &PlanRequest) -> Result<(), String> {
    for (i, arg) in args.iter().enumerate() {
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value)),
            _ => (arg.as_str(), None),
        };
        if !NEXTEST_PATH_OPTIONS.contains(&name) {
            continue;
        }
        let Some(value) = inline.or_else(|| args.get(i + 1).map(String::as_str)) else { continue };
        let path = match name {
            "--tool-config-file" => value.split_once(':').map_or(value, |(_, path)| path),
            _ => value,
        };
        request.check_path(name, path)?;
    }
    Ok(())
}

/// `--check` makes `cargo fmt` only look (the spec's `read_only_with`), so wherever it stands it
/// must be read as that flag, or the call is refused. cargo fmt hands rustfmt what follows its
/// `--` and appends its own `--check` after that; rustfmt takes everything after a `--` of its
/// own for files, and an option's value for the value. So `-- -- --check`, `--check -- --` and
/// `-- --config-path --check` would format the sources with `--check` in the arguments.
fn check_fmt_check_is_read(args: &[String]) -> Result<(), String> {
    const CHECK: &str = "--check";
    if !args.iter().any(|a| a == CHECK) {
        return Ok(());
    }
    let split = args.iter().position(|a| a == "--").unwrap_or(args.len());
    let (cargo, rustfmt) = (&args[..split], args.get(split + 1..).unwrap_or_default());
    let files_from = rustfmt.iter().position(|a| a == "--");
    let options = &rustfmt[..files_from.unwrap_or(rustfmt.len())];
    let read_by_cargo = files_from.is_none() && flags(cargo, CARGO_FMT_VALUES).any(|a| a == CHECK);
    if read_by_cargo || flags(options, RUSTFMT_VALUES).any(|a| a == CHECK) {
        return Ok(());
    }
    Err("`--check` is not read as the check flag where it stands (rustfmt takes what follows a second `--` as \
         files, and an option's next argument as its value), so cargo fmt would format the sources; put \
         `--check` right after the verb, with no second `--`"
        .into())
}

/// cargo fmt's options that take the next argument as their value.
const CARGO_FMT_VALUES: &[&str] = &["-p", "--package", "--manifest-path", "--message-format"];

/// rustfmt's options that take the next argument as their value.
const RUSTFMT_VALUES: &[&str] =
    &["--config-path", "--edition", "--style-edition", "--color", "--config", "--emit", "--print-config"];

/// The arguments read as flags: each option of `with_value` takes the next argument as its value.
fn flags<'a>(args: &'a [String], with_value: &'a [&str]) -> impl Iterator<Item = &'a str> {
    let mut skip = false;
    args.iter().filter_map(move |arg| {
        if std::mem::take(&mut skip) {
            return None;
        }
        skip = with_value.contains(&arg.as_str());
        Some(arg.as_str())
    })
}

/// After `--`, cargo fmt hands its arguments to rustfmt: files to format, `--config-path` to
/// read, `--print-config … PATH` to write. Each path stays inside the roots.
fn check_rustfmt_args(args: &[String], request: &PlanRequest) -> Result<(), String> {
    let mut args = args.iter().peekable();
    while let Some(arg) = args.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value)),
            _ => (arg.as_str(), None),
        };
        match name {
            "--config-path" => {
                let value = inline.map(str::to_string).or_else(|| args.next().cloned()).unwrap_or_default();
                request.check_path(name, &value)?;
            }
            "--print-config" => {
                // `--print-config default|minimal|current [PATH]`
                if inline.is_none() {
                    args.next();
                }
                if let Some(path) = args.next_if(|a| !a.starts_with('-')) {
                    request.check_path(name, path)?;
                }
            }
            _ if !arg.starts_with('-') => request.check_path("a file to format", arg)?,
            _ => {}
        }
    }
    Ok(())
}

/// rustc's lint-level options; each takes a lint (a level, for `--cap-lints`) as its value.
const LINT_OPTIONS: &[&str] =
    &["-W", "-A", "-D", "-F", "--warn", "--allow", "--deny", "--forbid", "--force-warn", "--cap-lints"];

/// After `--`, cargo clippy hands its arguments to clippy-driver, which is rustc: it would take
/// `--emit=metadata=/any/file`, `-o`, `@argfile` or `-C` flags as readily as lint levels, so only
/// lint levels pass. rustc takes the argument after a lint option as its value whatever it looks
/// like, so that argument needs no check.
fn check_clippy_args(args: &[String]) -> Result<(), String> {
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if LINT_OPTIONS.contains(&arg.as_str()) {
            args.next();
            continue;
        }
        let attached = LINT_OPTIONS.iter().any(|option| match arg.strip_prefix(option) {
            Some(rest) if option.starts_with("--") => rest.starts_with('='),
            Some(_) => true,
            None => false,
        });
        if !attached {
            return Err(format!(
                "after `--`, cargo.clippy passes only lint levels to clippy, and `{arg}` is a compiler flag that \
                 could read or write files anywhere; send lint levels such as `-D warnings` or `-W clippy::pedantic`"
            ));
        }
    }
    Ok(())
}

/// The directory an environment variable names, when it names an absolute one.
fn env_dir(var: &str) -> Option<String> {
    std::env::var(var).ok().filter(|v| buildvise_plugin_api::is_absolute(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(tool: &str, args: &[&str]) -> PlanRequest {
        PlanRequest::new(tool, args.iter().map(|a| a.to_string()).collect(), "/p", "/p/.artifacts")
    }

    #[test]
    fn each_tool_runs_the_command_it_declares_with_the_args_after_it() {
        for spec in tools() {
            for words in &spec.commands {
                let plan = plan(&request(&spec.name, &["-q"])).unwrap();
                let mut expected: Vec<&str> = words[1..].iter().map(String::as_str).collect();
                expected.push("-q");
                assert_eq!(
                    (plan.program.as_str(), plan.args),
                    (words[0].as_str(), expected.iter().map(|w| w.to_string()).collect()),
                    "{}",
                    spec.name
                );
            }
            assert!(!spec.commands.is_empty(), "{}", spec.name);
        }
    }

    #[test]
    fn runs_the_verb_with_colour_off() {
        let plan = plan(&request("cargo.test", &["--no-fail-fast", "--", "--nocapture"])).expect("a plan");
        assert_eq!(plan.program, "cargo");
        assert_eq!(plan.args, ["test", "--no-fail-fast", "--", "--nocapture"]);
        assert_eq!(plan.env.get("CARGO_TERM_COLOR").map(String::as_str), Some("never"));
        assert!(plan.artifacts.is_empty());
    }

    #[test]
    fn puts_a_toolchain_before_the_verb() {
        let plan = plan(&request("cargo.clippy", &["+nightly", "--all-targets"])).expect("a plan");
        assert_eq!(plan.args, ["+nightly", "clippy", "--all-targets"]);
    }

    #[test]
    fn refuses_config_unstable_flags_and_fix() {
        for args in [&["--config", "build.rustc-wrapper='sh'"][..], &["--config=x"], &["-Zbuild-std"], &["-Z", "x"]] {
            let err = plan(&request("cargo.build", args)).expect_err("refused");
            assert!(err.contains("not allowed"), "{err}");
        }
        assert!(plan(&request("cargo.clippy", &["--fix"])).expect_err("refused").contains("edits source"));
        assert!(plan(&request("cargo.test", &["--", "-Z", "unstable-options"])).is_ok());
        assert!(plan(&request("cargo.bench", &[])).expect_err("unknown").contains("cargo.build"));
    }

    /// A call the operator limited to /bv-plan/proj; none of these paths need exist.
    fn confined(tool: &str, args: &[&str]) -> PlanRequest {
        PlanRequest::new(tool, args.iter().map(|a| a.to_string()).collect(), "/bv-plan/proj", "/bv-runs/r1")
            .with_roots(vec!["/bv-plan/proj".into()])
    }

    #[test]
    fn keeps_ordinary_calls_as_they_were() {
        let plan = plan(&confined("cargo.test", &["-p", "foo", "--release", "--", "--nocapture"])).expect("a plan");
        assert_eq!(plan.args, ["test", "-p", "foo", "--release", "--", "--nocapture"]);
        for toolchain in ["+nightly", "+1.80.0", "+stable-x86_64-unknown-linux-gnu", "+nightly-2024-01-01", "+my_tc"] {
            let plan = super::plan(&confined("cargo.build", &[toolchain, "-vv"])).expect("a plan");
            assert_eq!(plan.args, [toolchain, "build", "-vv"]);
        }
        let plan = super::plan(&confined("cargo.build", &["-pZed", "--target", "x86_64-unknown-linux-gnu"]));
        assert_eq!(plan.expect("a plan").args, ["build", "-pZed", "--target", "x86_64-unknown-linux-gnu"]);
    }

    #[test]
    fn refuses_a_toolchain_given_as_a_path() {
        for toolchain in ["+/tmp/x", "+./x", "+../x", "+x/y", "+x\\y", "+~/x", "+.x", "+", "+-x"] {
            let err = plan(&request("cargo.build", &[toolchain])).expect_err(toolchain);
            assert!(err.contains("is not a toolchain name") && err.contains("`+stable`"), "{err}");
        }
    }

    #[test]
    fn refuses_unstable_flags_inside_short_option_clusters() {
        for cluster in ["-vZunstable-options", "-rZ", "-qvZbuild-std"] {
            let err = plan(&request("cargo.build", &[cluster])).expect_err(cluster);
            assert!(err.contains("unstable `-Z` flags are not allowed"), "{err}");
        }
    }

    #[test]
    fn path_options_must_stay_inside_the_roots() {
        for args in [
            &["--manifest-path", "../other/Cargo.toml"][..],
            &["--manifest-path=/etc/x/Cargo.toml"],
            &["--target-dir", "/tmp/t"],
            &["--target-dir=../t"],
            &["--artifact-dir", "/tmp/out"],
            &["--target", "/tmp/spec.json"],
            &["--target=../spec.json"],
        ] {
            let err = plan(&confined("cargo.build", args)).expect_err("outside");
            assert!(err.contains("points outside the directories this call may use (/bv-plan/proj)"), "{err}");
        }
        for args in [
            &["--manifest-path", "crates/a/Cargo.toml"][..],
            &["--target-dir=target/alt"],
            &["--target-dir", "/bv-runs/r1/target"],
            &["--target", "specs/board.json"],
        ] {
            let plan = plan(&confined("cargo.check", args)).expect("inside");
            assert_eq!(plan.args[1..], *args);
        }
        assert!(plan(&request("cargo.build", &["--target-dir", "/tmp/t"])).is_ok(), "no roots, no limit");
    }

    #[test]
    fn libtest_log_file_must_stay_inside_the_roots() {
        for args in [&["--", "--logfile", "/tmp/log"][..], &["--", "--logfile=../log"]] {
            let err = plan(&confined("cargo.test", args)).expect_err("outside");
            assert!(err.contains("`--logfile"), "{err}");
        }
        assert!(plan(&confined("cargo.test", &["--", "--logfile=target/log", "--nocapture"])).is_ok());
    }

    #[test]
    fn clippy_takes_only_lint_levels_after_the_double_dash() {
        for flag in [&["--emit=metadata=/tmp/x"][..], &["-o", "/tmp/x"], &["@/tmp/args"], &["-C", "linker=/tmp/x"]] {
            let args: Vec<&str> = ["--"].into_iter().chain(flag.iter().copied()).collect();
            let err = plan(&request("cargo.clippy", &args)).expect_err("compiler flag");
            assert!(err.contains("only lint levels") && err.contains("`-D warnings`"), "{err}");
        }
        let lints = [
            "--",
            "-D",
            "warnings",
            "-W",
            "clippy::pedantic",
            "-Aclippy::all",
            "--cap-lints=warn",
            "--force-warn",
            "unused",
        ];
        let plan = plan(&request("cargo.clippy", &lints)).expect("lint levels");
        assert_eq!(plan.args[1..], lints);
        // rustc takes what follows `-D` as the lint, whatever it looks like.
        assert!(super::plan(&request("cargo.clippy", &["--", "-D", "--emit=x"])).is_ok());
    }

    #[test]
    fn describes_every_tool_briefly() {
        let tools = tools();
        assert_eq!(tools.len(), 8);
        for t in &tools {
            assert_eq!(
                t.description,
                format!("cargo {}", t.name.trim_start_matches("cargo.")).replace("nextest", "nextest run")
            );
            assert!(t.args_hint.as_deref().is_none_or(|h| h.split_whitespace().count() <= 5), "{}", t.name);
            assert_eq!(t.mutates_workspace, t.name == "cargo.fmt", "{}", t.name);
        }
        let fmt = tools.iter().find(|t| t.name == "cargo.fmt").expect("cargo.fmt");
        assert!(fmt.mutates(&[]) && !fmt.mutates(&["--check".to_string()]));
    }

    #[test]
    fn args_after_their_own_dashes_reach_libtest() {
        let test = plan(&request("cargo.test", &["--lib", "--", "--nocapture"])).expect("a plan");
        assert_eq!(test.args, ["test", "--lib", "--", "--nocapture"]);
        // Without a `--` of their own they are cargo's, which refuses libtest's flags.
        let test = plan(&request("cargo.test", &["--nocapture"])).expect("a plan");
        assert_eq!(test.args, ["test", "--nocapture"]);
    }

    #[test]
    fn runs_the_new_verbs() {
        let nextest = plan(&request("cargo.nextest", &["+stable", "--no-fail-fast", "-E", "test(a)"])).expect("a plan");
        assert_eq!(nextest.args, ["+stable", "nextest", "run", "--no-fail-fast", "-E", "test(a)"]);
        let run = plan(&request("cargo.run", &["--bin", "app", "--", "--port", "/etc/x"])).expect("a plan");
        assert_eq!(run.args, ["run", "--bin", "app", "--", "--port", "/etc/x"]);
        let fmt = plan(&request("cargo.fmt", &["--check"])).expect("a plan");
        assert_eq!(fmt.args, ["fmt", "--check"]);
        assert_eq!(fmt.env.get("TERM").map(String::as_str), Some("dumb"));
        assert!(plan(&request("cargo.doc", &["--no-deps", "--open"])).expect_err("a browser").contains("--open"));
        assert!(plan(&request("cargo.run", &["--config", "x"])).expect_err("config").contains("not allowed"));
    }

    #[test]
    fn nextest_and_rustfmt_paths_stay_inside_the_roots() {
        for args in [
            &["--config-file", "/elsewhere/n.toml"][..],
            &["--tool-config-file=tool:/elsewhere/n.toml"],
            &["--archive-file", "../a.tar.zst"],
            &["--workspace-remap=/elsewhere/w"],
            &["--target-dir", "/elsewhere/t"],
        ] {
            let err = plan(&confined("cargo.nextest", args)).expect_err("outside");
            assert!(err.contains("points outside"), "{err}");
        }
        assert!(plan(&confined("cargo.nextest", &["--config-file", ".config/ci.toml", "-P", "ci"])).is_ok());
        for args in [
            &["--", "--config-path", "/elsewhere/rustfmt.toml"][..],
            &["--", "--print-config", "default", "/elsewhere/out.toml"],
            &["--check", "--", "../other/src/lib.rs"],
        ] {
            let err = plan(&confined("cargo.fmt", args)).expect_err("outside");
            assert!(err.contains("points outside"), "{err}");
        }
        assert!(plan(&confined("cargo.fmt", &["--check", "--", "--config-path=rustfmt.toml", "src/lib.rs"])).is_ok());
    }

    /// Each spelling was run against cargo fmt 1.8: those refused here formatted the sources.
    #[test]
    fn fmt_check_must_be_read_as_the_flag() {
        for args in [
            &["--check"][..],
            &["--", "--check"],
            &["--", "--check", "--", "src/main.rs"],
            &["-p", "app", "--check"],
            &["--", "--config-path", "rustfmt.toml", "--check"],
            &["--", "--check", "--emit", "files"],
        ] {
            assert!(plan(&request("cargo.fmt", args)).is_ok(), "{args:?}");
        }
        for args in [
            &["--", "--", "--check"][..],
            &["--check", "--", "--"],
            &["--check", "--", "--", "src/main.rs"],
            &["--", "--config-path", "--check"],
            &["--", "--edition", "--check"],
            &["--manifest-path", "--check"],
        ] {
            let err = plan(&request("cargo.fmt", args)).expect_err("not read as the flag");
            assert!(err.contains("right after the verb"), "{args:?}: {err}");
        }
        // Without `--check` the call is a mutating one, which the host asks consent for.
        assert!(plan(&request("cargo.fmt", &["--", "--", "src/main.rs"])).is_ok());
    }
}
