//! A buildvise plugin for `checker`, a made-up linter that prints one problem a line:
//!
//! ```text
//! src/a.txt:3: error: line too long
//!   help: wrap it at 80 columns
//! src/b.txt:1:5: warning: trailing space
//! checker: 1 error, 1 warning
//! ```
//!
//! Copy this folder to start a plugin of your own: README.md says how. The plan (which command a
//! call runs) is here; what the output means is in `parse/`.

mod parse;

use buildvise_plugin_api::{CommandPlan, Manifest, ParseContext, Parser, PlanRequest, Plugin, ToolSpec};

#[derive(Default)]
pub struct CheckerPlugin;

impl Plugin for CheckerPlugin {
    fn manifest(&self) -> Manifest {
        let check = ToolSpec::new("checker.check", "Lint files with checker (checker ARGS)")
            .with_args_hint("files or directories, --rules FILE");
        Manifest::new("checker", env!("CARGO_PKG_VERSION"), vec![check])
    }

    fn plan(&self, request: &PlanRequest) -> Result<CommandPlan, String> {
        let mut args = request.args.iter();
        while let Some(arg) = args.next() {
            // Every argument that names a path must stay inside the directories this call may use:
            // the rules file in both spellings, and each file or directory to check.
            if arg == "--rules" {
                let Some(file) = args.next() else {
                    return Err("`--rules` needs a file; send `--rules FILE`".into());
                };
                request.check_path("--rules", file)?;
            } else if let Some(file) = arg.strip_prefix("--rules=") {
                request.check_path("--rules", file)?;
            } else if !arg.starts_with('-') {
                request.check_path("checker", arg)?;
            }
        }
        // Colour would only be stripped again; the log keeps what a person would have seen.
        Ok(CommandPlan::new("checker").with_args(request.args.iter().cloned()).with_env("NO_COLOR", "1"))
    }

    fn parser(&self, context: &ParseContext) -> Box<dyn Parser> {
        Box::new(parse::CheckerParser::new(&context.cwd))
    }
}

buildvise_plugin_api::export_plugin!(CheckerPlugin);

#[cfg(test)]
mod tests {
    use super::*;

    fn request(args: &[&str]) -> PlanRequest {
        let args = args.iter().map(|a| a.to_string()).collect();
        PlanRequest::new("checker.check", args, "/p", "/runs/x").with_roots(vec!["/p".into()])
    }

    #[test]
    fn plans_checker_with_the_calls_arguments() {
        let plan = CheckerPlugin.plan(&request(&["src", "--rules", "rules.toml"])).unwrap();
        assert_eq!(plan.program, "checker");
        assert_eq!(plan.args, ["src", "--rules", "rules.toml"]);
        assert_eq!(plan.env.get("NO_COLOR").map(String::as_str), Some("1"));
    }

    #[test]
    fn refuses_paths_outside_the_allowed_directories() {
        for args in [&["/etc"][..], &["--rules", "../other/rules.toml"], &["--rules=/etc/rules.toml"]] {
            let refused = CheckerPlugin.plan(&request(args)).unwrap_err();
            assert!(refused.contains("points outside the directories this call may use"), "{args:?}: {refused}");
        }
        assert!(CheckerPlugin.plan(&request(&["--rules"])).unwrap_err().contains("send `--rules FILE`"));
    }
}
