//! The `buildvise` command line: argument parsing and one module per subcommand. Each command
//! maps its flags onto an [`App`] call and prints the answer; nothing else.
//!
//! This is the binary's edge: errors become one message with its causes, and exit codes follow
//! timeout(1) and env(1), so that a wrapped tool's own codes keep their meaning:
//!
//! | code | meaning |
//! |---|---|
//! | the tool's | the tool ran and exited with it |
//! | 124 | the run timed out |
//! | 125 | buildvise itself failed (bad arguments, unknown tool, refused call, store trouble) |
//! | 126 | the tool's program exists but cannot be executed |
//! | 127 | the tool's program was not found |
//! | 130 | the run was cancelled (Ctrl-C, SIGTERM, SIGHUP) |

mod diff;
mod discover;
mod exec;
mod gain;
mod hook;
mod list;
mod log;
mod mcp;
mod parse;
mod runs;
mod serve;
mod settings_file;

use buildvise_app::{App, AppError, Config, Detail, Finished, Loading, ReportFormat, RunError, describe};
use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// buildvise's own failures: timeout(1)'s code for "the wrapper itself failed".
pub const EXIT_FAILURE: i32 = 125;
const EXIT_NOT_EXECUTABLE: i32 = 126;
const EXIT_NOT_FOUND: i32 = 127;

/// `--version`: the commit it was built from and its date (build.rs), and the plugin ABI, which
/// decides the plugin libraries this binary can load.
fn version() -> &'static str {
    use buildvise_plugin_api::abi::{ABI_MINOR, ABI_VERSION};
    static VERSION: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        format!(
            "{} ({}, plugin ABI {ABI_VERSION}.{ABI_MINOR})",
            env!("CARGO_PKG_VERSION"),
            env!("BUILDVISE_BUILD_COMMIT")
        )
    });
    &VERSION
}

/// What separates directories in `BUILDVISE_PLUGIN_PATH`, as in `PATH`: `;` on Windows, where a
/// directory starts with a drive's `C:`.
const PATH_LIST_SEPARATOR: char = if cfg!(windows) { ';' } else { ':' };

#[derive(Debug, Parser)]
#[command(
    name = "buildvise",
    version = version(),
    about = "Run builds and tests; keep the whole log; answer with only what matters."
)]
pub struct Cli {
    /// Also load plugins from this directory (before the default places). Repeatable.
    #[arg(long, global = true, value_name = "DIR", env = "BUILDVISE_PLUGIN_PATH", value_delimiter = PATH_LIST_SEPARATOR)]
    pub plugin_dir: Vec<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the tools the plugins provide, and plugins that failed to load.
    List(list::Args),
    /// Run a tool, store its log, print the diagnostics. Exits with the tool's exit code.
    Exec(exec::Args),
    /// Page, grep or re-render a stored run.
    Log(log::Args),
    /// Recent runs, newest first, each compared with the run of its command before it.
    Runs(runs::Args),
    /// What was fixed, is new and is still there from one stored run to another.
    Diff(diff::Args),
    /// The tokens buildvise saved: raw logs against the answers agents got, by tool, project and day.
    Gain(gain::Args),
    /// Parse a saved log through a tool's parser, without running anything.
    Parse(parse::Args),
    /// Serve the `build` tool to MCP clients (stdio, or --http).
    Serve(serve::Args),
    /// Set up MCP clients.
    Mcp(mcp::Args),
    /// What an agent client's shell hook runs: a command line in, the line to run out.
    Hook(hook::Args),
    /// The commands agents ran without buildvise that it would have run, from their transcripts.
    Discover(discover::Args),
}

/// Runs the command line; returns the process exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version are answers, not failures.
            let code = if e.use_stderr() { EXIT_FAILURE } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    init_logging();
    let outcome = match &cli.command {
        Command::List(args) => list::run(&cli, args),
        Command::Exec(args) => exec::run(&cli, args),
        Command::Log(args) => log::run(&cli, args),
        Command::Runs(args) => runs::run(&cli, args),
        Command::Diff(args) => diff::run(&cli, args),
        Command::Gain(args) => gain::run(&cli, args),
        Command::Parse(args) => parse::run(&cli, args),
        Command::Serve(args) => serve::run(&cli, args),
        Command::Mcp(args) => mcp::run(args),
        Command::Hook(args) => hook::run(&cli, args),
        Command::Discover(args) => discover::run(&cli, args),
    };
    outcome.unwrap_or_else(|e| {
        eprintln!("buildvise: {}", describe(e.as_ref()));
        exit_code(&e)
    })
}

/// The exit code for a failure: the reserved one, unless the tool's program could not be run.
fn exit_code(error: &anyhow::Error) -> i32 {
    match error.downcast_ref::<AppError>() {
        Some(AppError::Run(RunError::NotFound { .. })) => EXIT_NOT_FOUND,
        Some(AppError::Run(RunError::NotExecutable { .. })) => EXIT_NOT_EXECUTABLE,
        _ => EXIT_FAILURE,
    }
}

/// Warnings (a failed retention pass, a lost guard) go to stderr; `BUILDVISE_LOG=debug` says more.
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("BUILDVISE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .without_time()
        .try_init();
}

/// The operator's settings and the app they make. Plugins come only from flags, the environment
/// and the user config, never from a project. With `guard`, runs die with this process.
fn app(cli: &Cli, config: Config, guard: bool) -> anyhow::Result<App> {
    app_loading(cli, config, guard, Loading::OnUse)
}

/// [`app`], with the plugins' libraries loaded as `loading` says: a server loads them all at once.
fn app_loading(cli: &Cli, config: Config, guard: bool, loading: Loading) -> anyhow::Result<App> {
    Ok(App::open(config, &cli.plugin_dir, linked_plugins().as_ref(), guard, loading)?)
}

/// The shipped plugins, when this binary was built with them linked in (`--features
/// linked-plugins`: the static Linux build, which cannot load libraries; docs/install.md).
fn linked_plugins() -> Option<buildvise_plugin_api::abi::Linked> {
    #[cfg(feature = "linked-plugins")]
    return Some(buildvise_plugin_toolchains::linked_plugins());
    #[cfg(not(feature = "linked-plugins"))]
    None
}

fn print_json(value: &serde_json::Value) -> anyhow::Result<()> {
    print_text(&json_text(value)?)
}

/// What `--json` prints.
fn json_text(value: &serde_json::Value) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(value)? + "\n")
}

/// An answer for a person at a terminal: the status word coloured (red for a failure, green for
/// success), unless `NO_COLOR` is set. Pipes and files get the text exactly as agents read it.
fn for_terminal(text: &str) -> std::borrow::Cow<'_, str> {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() || std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) {
        return std::borrow::Cow::Borrowed(text);
    }
    let (word, rest) = text.split_at(text.find([' ', '\n']).unwrap_or(text.len()));
    let colour = match word {
        "ok" => "32",
        "FAIL" | "TIMEOUT" | "CANCELLED" | "KILLED" | "ERROR" | "DAMAGED" => "31",
        _ => return std::borrow::Cow::Borrowed(text),
    };
    std::borrow::Cow::Owned(format!("\x1b[1;{colour}m{word}\x1b[0m{rest}"))
}

/// Writes to stdout; a closed pipe (`buildvise … | head`) is not an error worth a message.
fn print_text(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

/// Detail level flag shared by exec, log and parse.
/// The sandbox, as the operator sets it on `exec` and `serve`: over the config and the
/// environment, and narrowed by no project.
#[derive(Debug, clap::Args)]
pub struct SandboxArgs {
    /// What runs may write: workspace-write (their project, the temp directory and their
    /// toolchain's caches), read-only (the temp directory) or off [default: BUILDVISE_SANDBOX,
    /// else the config's `sandbox`, else workspace-write where the kernel can confine]
    #[arg(long, value_name = "MODE", value_parser = sandbox_mode)]
    sandbox: Option<buildvise_app::SandboxMode>,
    /// Refuse runs' TCP connections.
    #[arg(long)]
    no_network: bool,
}

impl SandboxArgs {
    pub fn apply(&self, config: &mut Config) {
        if let Some(mode) = self.sandbox {
            config.set_sandbox(mode);
        }
        if self.no_network {
            config.set_no_network();
        }
    }
}

fn sandbox_mode(text: &str) -> Result<buildvise_app::SandboxMode, String> {
    text.parse()
}

#[derive(Debug, Clone, clap::Args)]
struct DetailArgs {
    /// How much to say: summary, standard or full.
    #[arg(long, value_enum, default_value_t = DetailArg::Standard)]
    detail: DetailArg,
    /// Most raw output lines in the answer (1..10000; default: config, else 20).
    #[arg(long, value_name = "N")]
    max_lines: Option<i64>,
}

impl DetailArgs {
    fn max_lines(&self) -> anyhow::Result<Option<u32>> {
        Ok(self.max_lines.map(buildvise_app::check_max_lines).transpose()?)
    }
}

/// `--detail`: the application's [`Detail`], as the command line spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum DetailArg {
    /// Status, counts, counts per file; no messages.
    Summary,
    /// Every error as one line, warnings capped, test summary, a hint.
    Standard,
    /// Every diagnostic with notes and log ranges, plus the last lines of output.
    Full,
}

/// `--format NAME[=FILE]`: a report CI systems read (see docs/reports.md), written to FILE, or
/// printed instead of the answer when no FILE is given.
#[derive(Debug, Clone)]
struct ReportArg {
    format: ReportFormat,
    file: Option<PathBuf>,
}

/// The help line every `--format` shares.
const FORMAT_HELP: &str = "A report for CI: sarif, junit, github or gitlab; NAME=FILE writes it to FILE \
    (repeatable), a bare NAME prints it instead of the answer";

fn report_arg(value: &str) -> Result<ReportArg, String> {
    let (name, file) = match value.split_once('=') {
        Some((name, file)) if !file.is_empty() => (name, Some(PathBuf::from(file))),
        Some((name, _)) => return Err(format!("`{name}=` names no file; send {name}=FILE, or {name} alone")),
        None => (value, None),
    };
    Ok(ReportArg { format: name.parse::<ReportFormat>().map_err(|e| e.to_string())?, file })
}

/// Writes each report that names a file and prints the one that does not; true when one was
/// printed, so the caller prints no answer after it.
fn write_reports(app: &App, finished: &Finished, reports: &[ReportArg]) -> anyhow::Result<bool> {
    if reports.iter().filter(|r| r.file.is_none()).count() > 1 {
        anyhow::bail!("stdout holds one report: give every --format but one a file (--format sarif=results.sarif)");
    }
    let mut printed = false;
    for report in reports {
        let text = app.report(finished, report.format);
        match &report.file {
            Some(file) => std::fs::write(file, text).map_err(|e| {
                anyhow::anyhow!("cannot write the {} report to {}: {e}", report.format.name(), file.display())
            })?,
            None => {
                print_text(&text)?;
                printed = true;
            }
        }
    }
    Ok(printed)
}

impl From<DetailArg> for Detail {
    fn from(detail: DetailArg) -> Detail {
        match detail {
            DetailArg::Summary => Detail::Summary,
            DetailArg::Standard => Detail::Standard,
            DetailArg::Full => Detail::Full,
        }
    }
}
