//! `rewrite`: a command line an agent typed into its shell, with each command a tool stands for
//! replaced by the `buildvise exec` call that runs it, for a client's hook.
//!
//! A hook must never stand in the agent's way: a line is rewritten only when it reads exactly
//! ([`shell_line`]), and each command in it only when `exec` would run it as it is (the place, the
//! operator's settings and the plugin's plan all allow it, [`App::would_run`]). Everything else
//! stays as typed, and a line with nothing to rewrite comes back as None.

use super::App;
use super::exec::ExecCall;
use buildvise_engine::access::Access;
use buildvise_engine::render::{Detail, shell_words};
use buildvise_engine::shell_line::{self, Cd, ShellCommand};
use buildvise_engine::tools;
use std::path::Path;

/// The variable that, set to `0` before a command (`BUILDVISE_HOOK=0 cargo test`), keeps the line
/// as typed.
pub const HOOK_OFF: &str = "BUILDVISE_HOOK=0";

/// A rewritten line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewrite {
    /// The line to run instead.
    pub line: String,
    /// The tools it runs, in order.
    pub tools: Vec<String>,
    /// The commands of the line as typed, in order: what a client's permission rules are
    /// checked against.
    pub typed: Vec<String>,
}

impl App {
    /// `line`, typed in `cwd`, with each command a tool stands for run through `program exec`
    /// (`program` being how the shell finds this binary); None when nothing in it is rewritten.
    pub fn rewrite(&self, access: &Access, line: &str, cwd: &Path, program: &str) -> Option<Rewrite> {
        let read = shell_line::read(line)?;
        if read.commands.iter().any(|c| c.assignments.contains(&HOOK_OFF)) {
            return None;
        }
        let last = read.commands.len() - 1;
        let mut dir = cwd.to_path_buf();
        let mut out = String::new();
        let mut tools = Vec::new();
        for (at, command) in read.commands.iter().enumerate() {
            let call = self.exec_call(access, command, &dir);
            if at == last && call.is_none() && read.lines_wanted.is_some() {
                // The trim belongs to the last command (a shell pipes only it): kept as typed,
                // so is the line.
                return None;
            }
            match call {
                Some(call) => {
                    // The lines the agent cut its output to become the answer's line budget.
                    let max_lines = read.lines_wanted.filter(|_| at == last).map(|trim| trim.lines());
                    out.push_str(&exec_line(program, command, &call, max_lines, self.hook_unconfined()));
                    tools.push(call.tool);
                }
                None => out.push_str(command.text),
            }
            match command.cd() {
                Cd::Stays => {}
                // Only a `cd` the next command depends on is followed; after `cd x;` the next
                // command runs wherever the `cd` left it, which is not known here.
                Cd::To(to) => {
                    dir = match command.then {
                        Some("&&") => dir.join(to),
                        _ => return None,
                    }
                }
                // `cd` alone, `cd -P x`, `pushd x`: the commands after it would be checked where
                // they do not run.
                Cd::Unknown => return None,
            }
            if let Some(then) = command.then {
                out.push_str(if then == ";" { "; " } else { " && " });
            }
        }
        let typed = read.commands.iter().map(|c| c.text.to_string()).collect();
        (!tools.is_empty()).then_some(Rewrite { line: out, tools, typed })
    }

    /// The `exec` call a command stands for, when some tool declares it and `exec` would run it.
    fn exec_call(&self, access: &Access, command: &ShellCommand<'_>, dir: &Path) -> Option<ExecCall> {
        let place = access.check_cwd(dir).ok()?;
        let (config, _) = self.config.for_project(&place.dir, place.root.as_deref()).ok()?;
        let (all, _) = tools::all(&self.registry, &config);
        // The longest declared command the words start with: `npm run build` before `npm run`;
        // some come with arguments of the tool's own (`pnpm test` is `npm.test --pm=pnpm`).
        let (tool, prefix, own) = all
            .iter()
            .flat_map(|tool| {
                let plain = tool.spec.commands.iter().map(move |prefix| (tool, prefix, &[][..]));
                let with = tool.spec.commands_with_args.iter().map(move |c| (tool, &c.words, &c.args[..]));
                plain.chain(with)
            })
            .filter(|(_, prefix, _)| command.words.starts_with(prefix))
            .max_by_key(|(_, prefix, _)| prefix.len())?;
        let call = ExecCall {
            tool: tool.spec.name.clone(),
            args: own.iter().chain(&command.words[prefix.len()..]).cloned().collect(),
            cwd: place.dir,
            timeout_secs: None,
            confirm: false,
            detail: Detail::Standard,
            max_lines: None,
        };
        self.would_run(access, &call).ok().map(|()| call)
    }
}

impl App {
    /// Whether a rewritten command runs with the sandbox off. The command the agent typed ran
    /// as its own harness confines its shell, and a hook must never turn a working command into
    /// a failure: so the default sandbox is left out, and only one the operator asked for (a
    /// flag, the environment, the user's file, read when the command runs) applies.
    fn hook_unconfined(&self) -> bool {
        !self.config.sandbox.required
    }
}

/// `ASSIGNMENTS program exec TOOL [--sandbox off] [--max-lines N] -- ARGS`.
fn exec_line(
    program: &str,
    command: &ShellCommand<'_>,
    call: &ExecCall,
    max_lines: Option<u32>,
    unconfined: bool,
) -> String {
    let mut words: Vec<String> = command.assignments.iter().map(|a| a.to_string()).collect();
    let head = shell_words([&program.to_string(), &"exec".to_string(), &call.tool]);
    words.push(head);
    if unconfined {
        words.push("--sandbox off".to_string());
    }
    if let Some(n) = max_lines {
        words.push(format!("--max-lines {n}"));
    }
    if !call.args.is_empty() {
        words.push(format!("-- {}", shell_words(&call.args)));
    }
    words.join(" ")
}
