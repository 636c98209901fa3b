//! `buildvise hook`: what a client's shell hook runs before a command.
//!
//! `hook shell` reads the command line from stdin and prints the line to run instead: the same
//! line with each command a tool stands for run through `buildvise exec`, or the line as it came.
//! `hook claude`, `codex`, `gemini`, `cursor` and `copilot` read that client's pre-tool payload
//! and answer in its form, one module each; OpenCode runs a plugin that asks `hook shell`.
//! A hook never stands in the agent's way, so nothing here fails: a line it cannot read, a
//! config it cannot load, a plugin that is missing all leave the line unchanged, and the exit
//! code is always 0. docs/hooks.md has the rules.

mod claude;
mod codex;
mod copilot;
mod cursor;
mod gemini;
mod install;
mod opencode;
mod pre_tool_use;

use super::{Cli, app, print_text};
use buildvise_app::{Access, Config, Rewrite};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The most read from stdin: a command an agent types is a line, not a file.
const MAX_INPUT: u64 = 1 << 20;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    client: Client,
}

#[derive(Debug, clap::Subcommand)]
enum Client {
    /// Read a shell command line on stdin; print the line to run instead (or the same line).
    Shell {
        /// The directory the line runs in (default: the current one).
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
    },
    /// Claude Code's PreToolUse hook on Bash: its payload on stdin, its answer on stdout.
    Claude,
    /// Codex CLI's PreToolUse hook on Bash.
    Codex,
    /// Gemini CLI's BeforeTool hook on run_shell_command.
    Gemini,
    /// Cursor's preToolUse hook on Shell.
    Cursor,
    /// GitHub Copilot CLI's preToolUse hook on bash.
    Copilot,
    /// Add the hook to a client's settings (other settings kept, a .bak of the file written).
    Install {
        /// Which client's settings.
        #[arg(long, value_enum, default_value_t = install::Client::Claude)]
        client: install::Client,
        /// The project's settings (in the current directory), or the user's.
        #[arg(long, value_enum, default_value_t = install::Scope::Project)]
        scope: install::Scope,
        /// Print the file as it would be, and write nothing.
        #[arg(long)]
        show: bool,
        /// Take the hook out instead.
        #[arg(long)]
        uninstall: bool,
    },
}

pub fn run(cli: &Cli, args: &Args) -> anyhow::Result<i32> {
    let answer = match &args.client {
        Client::Install { client, scope, show, uninstall } => return install_here(*client, *scope, *show, *uninstall),
        Client::Shell { cwd } => {
            let input = stdin();
            let line = input.strip_suffix('\n').unwrap_or(&input);
            Some(rewrite(cli, line, cwd.as_deref()).map_or(line.to_string(), |r| r.line))
        }
        Client::Claude => claude_answer(cli, &stdin()),
        Client::Codex => codex_answer(cli, &stdin()),
        Client::Gemini => gemini::Call::read(&stdin())
            .and_then(|call| rewrite(cli, &call.command, call.dir.as_deref()).map(|r| call.answer(&r.line))),
        // Cursor reads an answer on every path; `{}` changes nothing.
        Client::Cursor => Some(cursor_answer(cli, &stdin()).unwrap_or_else(|| "{}".to_string())),
        Client::Copilot => copilot::Call::read(&stdin()).and_then(|call| {
            rewrite(cli, &call.command, call.cwd.as_deref().map(Path::new)).map(|r| call.answer(&r.line))
        }),
    };
    if let Some(answer) = answer {
        let _ = writeln!(std::io::stdout().lock(), "{answer}");
    }
    Ok(0)
}

/// What the client sent: input that is not text, or too long, is taken as far as it was read.
fn stdin() -> String {
    let mut input = String::new();
    let _ = std::io::stdin().take(MAX_INPUT).read_to_string(&mut input);
    input
}

/// `hook install`, in the current directory's project or the user's settings.
fn install_here(client: install::Client, scope: install::Scope, show: bool, uninstall: bool) -> anyhow::Result<i32> {
    let dirs = install::UserDirs::from_env();
    let done = install::install(client, scope, &std::env::current_dir()?, &dirs, uninstall, show)?;
    let said = match (show, done.changed, uninstall) {
        (true, _, _) => done.text.unwrap_or_else(|| format!("(removes {})\n", done.path.display())),
        (false, true, false) => format!("wrote {}\n", done.path.display()),
        (false, true, true) => format!("took the hook out of {}\n", done.path.display()),
        (false, false, false) => format!("already set up: {}\n", done.path.display()),
        (false, false, true) => format!("no hook of buildvise in {}\n", done.path.display()),
    };
    print_text(&said)?;
    if done.needs_path {
        eprintln!("{}", crate::cli::settings_file::path_warning(&done.path));
    }
    Ok(0)
}

/// The user's home directory, where the clients keep their user settings.
fn home() -> Option<PathBuf> {
    install::UserDirs::from_env().home
}

/// Claude Code's answer, when the command is rewritten; None runs it as typed.
fn claude_answer(cli: &Cli, payload: &str) -> Option<String> {
    let call = pre_tool_use::Call::read(payload)?;
    let rewrite = rewrite(cli, &call.command, call.cwd.as_deref().map(Path::new))?;
    let dir = here(call.cwd.as_deref().map(Path::new))?;
    // Claude Code names the project's root to its hooks; without it, the command's directory.
    let project = std::env::var_os("CLAUDE_PROJECT_DIR").map_or(dir, PathBuf::from);
    let rules = claude::Rules::load(&project, home().as_deref())?;
    claude::answer(&call, &rewrite.line, &rewrite.typed, &rules)
}

/// Codex's answer, when the command is rewritten; None runs it as typed.
fn codex_answer(cli: &Cli, payload: &str) -> Option<String> {
    let call = pre_tool_use::Call::read(payload)?;
    let dir = call.cwd.as_deref().map(Path::new);
    let rewrite = rewrite(cli, &call.command, dir)?;
    let dirs = install::UserDirs::from_env();
    let codex_home = dirs.codex_home.or_else(|| dirs.home.map(|h| h.join(".codex")));
    let rules = codex::Rules::load(codex_home.as_deref(), &here(dir)?)?;
    codex::answer(&call, &rewrite.line, &rewrite.typed, &rules)
}

/// Cursor's answer, when the command is rewritten; None runs it as typed.
fn cursor_answer(cli: &Cli, payload: &str) -> Option<String> {
    let call = cursor::Call::read(payload)?;
    let rewrite = rewrite(cli, &call.command, call.cwd.as_deref())?;
    let rules = cursor::Rules::load(&call.roots, home().as_deref())?;
    call.answer(&rewrite.line, &rewrite.typed, &rules)
}

/// The line rewritten, when there is something to rewrite.
fn rewrite(cli: &Cli, line: &str, cwd: Option<&Path>) -> Option<Rewrite> {
    let dir = here(cwd)?;
    let app = app(cli, Config::load().ok()?, false).ok()?;
    let program = std::env::current_exe().ok()?;
    let rewrite = app.rewrite(&Access::anywhere(), line, &dir, &program.to_string_lossy())?;
    tracing::debug!("hook: {line:?} runs as {:?} ({})", rewrite.line, rewrite.tools.join(", "));
    Some(rewrite)
}

/// `dir` made absolute against the current directory (the current directory when None).
fn here(dir: Option<&Path>) -> Option<PathBuf> {
    let current = std::env::current_dir().ok()?;
    Some(dir.map_or(current.clone(), |dir| current.join(dir)))
}
