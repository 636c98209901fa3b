//! The tools and the command each one runs.

use buildvise_plugin_api::{CommandPlan, PlanRequest, ToolSpec};
use std::collections::BTreeMap;

/// `(tool, cargo verb, description, args hint)`.
const TOOLS: &[(&str, &str, &str, &str)] = &[
    ("cargo.build", "build", "Compile the package (cargo build)", "extra cargo build args"),
    ("cargo.check", "check", "Type-check without building (cargo check)", "extra cargo check args"),
    ("cargo.clippy", "clippy", "Lint with clippy (cargo clippy)", "extra cargo clippy args"),
    ("cargo.test", "test", "Build and run tests (cargo test)", "cargo test args, `--` then libtest args"),
];

pub(crate) fn tools() -> Vec<ToolSpec> {
    TOOLS
        .iter()
        .map(|(name, _, description, hint)| ToolSpec {
            name: (*name).into(),
            description: (*description).into(),
            mutates_workspace: false,
            timeout_secs: None,
            args_hint: Some((*hint).into()),
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
    check_args(verb, &request.args)?;
    let mut args = Vec::with_capacity(request.args.len() + 2);
    let mut rest = request.args.as_slice();
    if let Some((toolchain, after)) = rest.split_first()
        && toolchain.starts_with('+')
    {
        args.push(toolchain.clone());
        rest = after;
    }
    args.push((*verb).to_string());
    args.extend(rest.iter().cloned());
    let env = BTreeMap::from([("CARGO_TERM_COLOR".to_string(), "never".to_string())]);
    Ok(CommandPlan { program: "cargo".into(), args, env, artifacts: Vec::new() })
}

/// Refuses what would let a call run arbitrary programs through cargo's configuration
/// (`--config` can set `build.rustc-wrapper`, `target.<triple>.runner`, …), unstable `-Z`
/// flags, and `--fix`, which edits sources although these tools promise not to. Arguments
/// after `--` belong to the test binary or the linter and are left alone.
fn check_args(verb: &str, args: &[String]) -> Result<(), String> {
    for arg in args.iter().take_while(|a| a.as_str() != "--") {
        if arg == "--config" || arg.starts_with("--config=") {
            return Err("`--config` is not allowed: it can make cargo run any program; put the setting in the \
                        project's .cargo/config.toml instead"
                .into());
        }
        if arg.starts_with("-Z") {
            return Err(format!(
                "unstable `-Z` flags are not allowed (`{arg}`); send stable cargo {verb} flags, or set them in the \
                 project's .cargo/config.toml"
            ));
        }
        if arg == "--fix" || arg.starts_with("--fix=") {
            return Err(format!(
                "`--fix` edits source files, which cargo.{verb} does not do; run `cargo {verb} --fix` yourself"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(tool: &str, args: &[&str]) -> PlanRequest {
        PlanRequest {
            tool: tool.into(),
            args: args.iter().map(|a| a.to_string()).collect(),
            cwd: "/p".into(),
            artifact_dir: "/p/.artifacts".into(),
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
        assert!(plan(&request("cargo.run", &[])).expect_err("unknown").contains("cargo.build"));
    }

    #[test]
    fn describes_every_tool_briefly() {
        let tools = tools();
        assert_eq!(tools.len(), 4);
        assert!(tools.iter().all(|t| t.description.split_whitespace().count() <= 8 && !t.mutates_workspace));
    }
}
