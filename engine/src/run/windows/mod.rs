//! The run on Windows: the command in a Job Object of its own ([`job`]), its pipes read by a
//! thread each (Windows cannot `poll` a pipe) that hand chunks to the run's thread, which splits
//! them into lines as on Unix and keeps the same deadlines.
//!
//! Windows has no TERM: a timeout, a cancel, and what the command left running after
//! [`LINGER`] all end the job at once. What the command left is what is still in its job, named
//! by each program's file name. Nothing leaves a job: a process started by one is in it, and
//! this job allows no breakaway, so no mark scan is needed (the mark is still set, so that every
//! platform's commands see the same environment).

mod job;

use super::lines::LineSplitter;
use super::{CHUNK, CancelToken, Command, Ending, GRACE, LINGER, LineSink, Outcome, RunError, TICK};
use buildvise_plugin_api::Stream;
use job::Job;
use std::io::Read;
use std::os::windows::process::CommandExt;
use std::process::{Child, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TryRecvError, sync_channel};
use std::time::{Duration, Instant};

/// The guard on Windows has nothing to start: each run's job ends its processes when its handle
/// closes, and the system closes it when buildvise dies, however it dies.
#[derive(Debug)]
pub struct Guard {
    /// What the marks of the runs this guard watches start with.
    session: String,
}

impl Guard {
    pub fn start() -> Guard {
        Guard { session: super::marks::new_session() }
    }

    pub(super) fn session(&self) -> &str {
        &self.session
    }
}

/// Chunks read and not yet taken: while the sink is not ready, the readers stop after this many,
/// and the command then waits on its full pipe rather than buildvise growing.
const IN_FLIGHT: usize = 4;
/// Chunks taken per turn of the loop: enough to keep up with a flood, few enough to keep ticks.
const TAKES_PER_TURN: usize = 16;

/// What a reader thread hands over.
enum Piece {
    Bytes(Stream, Vec<u8>),
    End(Stream),
}

/// Runs `command` with `mark` in its environment, to its end.
pub(super) fn run(
    command: &Command,
    mark: &str,
    timeout: Duration,
    cancel: &CancelToken,
    _guard: Option<&Guard>,
    sink: &mut dyn LineSink,
) -> Result<Outcome, RunError> {
    let failed = |source| RunError::Spawn { program: command.program.clone(), source };
    let job = Job::new().map_err(failed)?;
    let mut child = spawn(command, mark)?;
    if let Err(source) = job.adopt(&child) {
        let _ = child.kill();
        let _ = child.wait();
        return Err(failed(source));
    }
    let (sender, pieces) = sync_channel(IN_FLIGHT);
    let mut open = [false; 2];
    let pipes: [(Stream, Option<Box<dyn Read + Send>>); 2] = [
        (Stream::Stdout, child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>)),
        (Stream::Stderr, child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>)),
    ];
    for (stream, pipe) in pipes {
        let Some(pipe) = pipe else { continue };
        if let Err(source) = read_in_thread(stream, pipe, sender.clone()) {
            job.terminate();
            let _ = child.wait();
            return Err(failed(source));
        }
        open[index(stream)] = true;
    }
    drop(sender);
    let outcome = supervise(&mut child, &job, &pieces, open, timeout, cancel, sink);
    // Dropping the job ends whatever is still in it (a process that kept the output open past
    // the grace period).
    drop(job);
    let _ = child.wait();
    Ok(outcome)
}

/// Spawns `command` suspended, for [`Job::adopt`] to put in its job before it runs.
/// The program to start: a bare name found on the PATH the command will have, as Windows' shell
/// finds it (`npm` is `npm.cmd`; std alone would look for `npm.exe`, and start a `.cmd` through
/// `cmd.exe` only when named by its path); anything else as it is.
fn resolve(command: &Command) -> String {
    let path = match command.env.iter().rev().find(|(k, _)| k.eq_ignore_ascii_case("PATH")) {
        Some((_, path)) => Some(std::ffi::OsString::from(path)),
        None => std::env::var_os("PATH"),
    };
    let extensions = buildvise_plugin_api::program_extensions();
    path.and_then(|path| buildvise_plugin_api::find_program(&command.program, &path, &extensions))
        .map_or_else(|| command.program.clone(), |found| found.to_string_lossy().into_owned())
}

fn spawn(command: &Command, mark: &str) -> Result<Child, RunError> {
    // Windows confines nothing (docs/config.md): the sandbox gives the command as it is.
    let program = resolve(command);
    let mut cmd = crate::sandbox::command(command.confinement.as_deref(), &program, &command.args);
    cmd.current_dir(&command.cwd)
        .envs(command.env.iter().map(|(k, v)| (k, v)))
        .env(super::marks::MARK, mark)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .creation_flags(job::CREATE_SUSPENDED);
    cmd.spawn().map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => RunError::NotFound { program: command.program.clone() },
        std::io::ErrorKind::PermissionDenied => RunError::NotExecutable { program: command.program.clone(), source },
        _ => RunError::Spawn { program: command.program.clone(), source },
    })
}

fn index(stream: Stream) -> usize {
    usize::from(stream != Stream::Stdout)
}

/// Reads `pipe` on a thread of its own until it ends, handing each chunk to `sender`. The thread
/// ends with the pipe, or at its next chunk once the run stopped taking them; a pipe held open
/// by a process that outlived its job's end keeps it waiting until that process closes it.
fn read_in_thread(stream: Stream, mut pipe: Box<dyn Read + Send>, sender: SyncSender<Piece>) -> std::io::Result<()> {
    let name = format!("buildvise-{}", if stream == Stream::Stdout { "stdout" } else { "stderr" });
    std::thread::Builder::new().name(name).spawn(move || {
        let mut buf = vec![0u8; CHUNK];
        loop {
            match pipe.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    if sender.send(Piece::Bytes(stream, buf[..n].to_vec())).is_err() {
                        return;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                // A broken pipe is how Windows says the writer closed it.
                Err(_) => break,
            }
        }
        let _ = sender.send(Piece::End(stream));
    })?;
    Ok(())
}

/// Why the runner ended the job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KillReason {
    Timeout,
    Cancel,
    /// The command exited, and what it started was still running after the grace period.
    Leftovers,
}

fn supervise(
    child: &mut Child,
    job: &Job,
    pieces: &Receiver<Piece>,
    mut open: [bool; 2],
    timeout: Duration,
    cancel: &CancelToken,
    sink: &mut dyn LineSink,
) -> Outcome {
    let started = Instant::now();
    let mut splitters = [LineSplitter::default(), LineSplitter::default()];
    let mut exited: Option<(Ending, Instant)> = None;
    let mut kill: Option<(KillReason, Instant)> = None;
    let mut left_running = Vec::new();
    let mut abandoned_output = false;
    let close = |stream: Stream, splitter: &mut LineSplitter, sink: &mut dyn LineSink| {
        if splitter.finish(|block| sink.lines(stream, block)) {
            sink.unterminated(stream);
        }
    };
    loop {
        let now = Instant::now();
        if exited.is_none() {
            // Windows has no signals: whatever ended the command, its exit code says it.
            exited = child.try_wait().ok().flatten().map(|status| (Ending::Exited(status.code().unwrap_or(-1)), now));
        }
        let any_open = open.iter().any(|&o| o);
        if exited.is_some() && !any_open && (kill.is_some() || job.processes().is_empty()) {
            break;
        }
        if kill.is_none() {
            let reason = if cancel.is_cancelled() {
                Some(KillReason::Cancel)
            } else if now.duration_since(started) >= timeout {
                Some(KillReason::Timeout)
            } else if exited.is_some_and(|(_, at)| now.duration_since(at) >= LINGER) {
                Some(KillReason::Leftovers)
            } else {
                None
            };
            if let Some(reason) = reason {
                if reason == KillReason::Leftovers {
                    left_running = job.processes().into_iter().filter_map(job::name).collect();
                }
                job.terminate();
                kill = Some((reason, now));
            }
        }
        if let Some((_, at)) = kill
            && exited.is_some()
            && now.duration_since(at) >= GRACE
        {
            // Nothing of the job is left, yet something holds the pipes: stop waiting for it.
            for stream in [Stream::Stdout, Stream::Stderr] {
                if std::mem::take(&mut open[index(stream)]) {
                    close(stream, &mut splitters[index(stream)], sink);
                    abandoned_output = true;
                }
            }
            break;
        }
        sink.tick();
        if !any_open {
            std::thread::sleep(TICK.min(Duration::from_millis(5)));
            continue;
        }
        if !sink.ready(TICK) {
            continue;
        }
        let mut next = pieces.recv_timeout(TICK).map_err(|e| match e {
            RecvTimeoutError::Timeout => TryRecvError::Empty,
            RecvTimeoutError::Disconnected => TryRecvError::Disconnected,
        });
        for _ in 0..TAKES_PER_TURN {
            match next {
                Ok(Piece::Bytes(stream, bytes)) => {
                    splitters[index(stream)].push(&bytes, |block| sink.lines(stream, block));
                }
                Ok(Piece::End(stream)) => {
                    open[index(stream)] = false;
                    close(stream, &mut splitters[index(stream)], sink);
                }
                Err(TryRecvError::Empty) => break,
                // Every reader has ended, each after handing over its end.
                Err(TryRecvError::Disconnected) => {
                    for stream in [Stream::Stdout, Stream::Stderr] {
                        if std::mem::take(&mut open[index(stream)]) {
                            close(stream, &mut splitters[index(stream)], sink);
                        }
                    }
                    break;
                }
            }
            next = pieces.try_recv();
        }
    }
    let ending = match (kill, exited) {
        // The command's own end counts unless buildvise ended it first.
        (Some((reason, at)), Some((_, exit))) if reason != KillReason::Leftovers && at <= exit => match reason {
            KillReason::Cancel => Ending::Cancelled,
            _ => Ending::TimedOut,
        },
        (_, Some((ending, _))) => ending,
        (_, None) => Ending::Signalled(0),
    };
    Outcome { ending, left_running, abandoned_output }
}
