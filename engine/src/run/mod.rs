//! Running one command: spawn it (argv, no shell, stdin closed, own process group), read stdout
//! and stderr as they come, hand complete lines to a [`LineSink`] in arrival order, and end it on
//! timeout or cancellation by killing the whole process group (TERM, a grace period, KILL).
//!
//! One thread does it all, with non-blocking pipes and `poll`, and never waits longer than a tick
//! for anything: not for output, not for the sink, not for the child. So a deadline or a cancel is
//! acted on within a tick, whatever the process or the sink's consumer (the plugin's parser) does.
//! There are no reader threads to leak.
//!
//! Nothing the command started outlives the run: once the command has exited, its processes get
//! a grace period ([`LINGER`]) to end by themselves; those still running then, in its group or
//! out of it ([`leftovers`]), are ended (TERM, [`GRACE`], KILL) and named
//! ([`Outcome::left_running`]). Processes that cannot be told apart as the run's and still hold
//! its pipes are left, and the runner closes its ends and says so ([`Outcome::abandoned_output`]).
//!
//! Memory is bounded whatever the output: lines are capped at [`lines::MAX_LINE`], and while the
//! sink is not [`ready`](LineSink::ready) the runner stops reading, which makes the process wait on
//! its full pipe rather than making buildvise grow.
//!
//! Lines reach the sink in blocks, as many whole lines of one stream as one read brought: a flood
//! of short lines costs a few system calls and copies per read, not per line.

mod lines;
mod marks;
// Unix: the poll loop (`unix`), the process group (`process`), what a run left (`leftovers`) and
// the forked guard. Windows: a Job Object per run and reader threads (`windows`).
#[cfg(unix)]
mod guard;
#[cfg(unix)]
mod leftovers;
#[cfg(unix)]
mod process;
#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

#[cfg(unix)]
pub use guard::Guard;
#[cfg(test)]
pub use lines::each_line;
pub use lines::line_ends;
pub use marks::{MARK, names as leftover_names};
#[cfg(windows)]
pub use windows::Guard;

#[cfg(unix)]
use unix as platform;
#[cfg(windows)]
use windows as platform;

use buildvise_plugin_api::Stream;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// What to run.
#[derive(Debug, Clone)]
pub struct Command {
    pub program: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub cwd: PathBuf,
    /// What the run may write and connect to, when the sandbox confines it.
    pub confinement: Option<std::sync::Arc<crate::sandbox::Confinement>>,
}

/// Receives the run's lines, and a tick now and then to flush or report progress.
pub trait LineSink {
    /// One or more whole lines of one stream, in the order printed, each ended by `\n` (a last
    /// line printed without one, or a line cut at [`lines::MAX_LINE`], gets one here).
    fn lines(&mut self, stream: Stream, block: &[u8]);

    /// Waits at most `wait` until the sink can take more lines, and says whether it can. While it
    /// cannot, the runner reads nothing more.
    fn ready(&mut self, _wait: Duration) -> bool {
        true
    }

    fn tick(&mut self) {}

    /// The line just handed over for `stream` was its last, and the output did not end it with
    /// `\n`: the one it has was added.
    fn unterminated(&mut self, _stream: Stream) {}
}

/// Ends a run from outside: set it and the runner kills the process tree.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// How the command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    Exited(i32),
    /// Killed by a signal buildvise did not send.
    Signalled(i32),
    TimedOut,
    Cancelled,
}

/// How a run ended, what it left running, and whether its output had to be abandoned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub ending: Ending,
    /// The command names of the processes the command left running when it exited, which were
    /// still running after the grace period and were ended: one per process.
    pub left_running: Vec<String>,
    /// Processes that could not be told apart as the run's (outside its group, their
    /// environment cleared, their parent gone) kept its output open after it ended; the runner
    /// stopped reading and left them running.
    pub abandoned_output: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("`{program}` was not found on PATH: install it, or add its directory to PATH for buildvise")]
    NotFound { program: String },
    #[error("`{program}` cannot be executed: check its permissions")]
    NotExecutable {
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot start `{program}`")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },
}

/// Time between TERM and KILL.
pub const GRACE: Duration = Duration::from_secs(2);
/// The grace period after the command exited: what it left running may end by itself (and is
/// not counted) until then. cargo-nextest waits 100 ms for a test's output to close before it
/// calls the test leaky; builds leave more behind on their way out, so longer here.
const LINGER: Duration = Duration::from_secs(1);
/// The longest the runner waits for anything before checking its deadlines again.
const TICK: Duration = Duration::from_millis(50);
/// The most read from a pipe at once.
const CHUNK: usize = 256 * 1024;

/// Runs `command` to its end, feeding `sink`. With a `guard`, the command's processes are ended
/// even if buildvise is killed while it runs.
pub fn run(
    command: &Command,
    timeout: Duration,
    cancel: &CancelToken,
    guard: Option<&Guard>,
    sink: &mut dyn LineSink,
) -> Result<Outcome, RunError> {
    let session: &str = match guard {
        Some(guard) => guard.session(),
        None => marks::unguarded_session(),
    };
    let mark = marks::new_mark(session);
    platform::run(command, &mark, timeout, cancel, guard, sink)
}

// These start `sh`, `sleep` and `setsid` and look in /proc; engine/tests/process_and_store.rs
// holds on every platform, Windows included.
#[cfg(all(test, unix))]
mod tests;
