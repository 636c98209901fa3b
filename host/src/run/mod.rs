//! Running one command: spawn it (argv, no shell, stdin closed, own process group), read stdout
//! and stderr concurrently, hand complete lines to a [`LineSink`] in arrival order, and end it on
//! timeout or cancellation by killing the whole process group (TERM, a grace period, KILL).
//!
//! Memory is bounded whatever the output: readers send chunks through a bounded channel (so a
//! flood waits on the sink rather than piling up) and lines are capped at [`lines::MAX_LINE`].

mod lines;
mod process;

use buildvise_plugin_api::Stream;
use lines::LineSplitter;
use std::io::Read;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::time::{Duration, Instant};

/// What to run.
#[derive(Debug, Clone)]
pub struct Command {
    pub program: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub cwd: PathBuf,
}

/// Receives the run's lines, and a tick now and then to flush or report progress.
pub trait LineSink {
    fn line(&mut self, stream: Stream, bytes: &[u8]);
    fn tick(&mut self) {}
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

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    Exited(i32),
    /// Killed by a signal buildvise did not send.
    Signalled(i32),
    TimedOut,
    Cancelled,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("`{program}` was not found on PATH: install it, or add its directory to PATH for buildvise")]
    NotFound { program: String },
    #[error("cannot start `{program}`: {source}")]
    Spawn { program: String, source: std::io::Error },
}

/// Time between TERM and KILL.
const GRACE: Duration = Duration::from_secs(2);
/// How long to wait, after the process exited, for pipes that some leftover process holds open.
const LINGER: Duration = Duration::from_secs(1);
const TICK: Duration = Duration::from_millis(50);
const CHUNK: usize = 64 * 1024;

enum Event {
    Data(Stream, Vec<u8>),
    Eof(Stream),
    Exited(std::process::ExitStatus),
}

/// Why the runner is killing the group.
#[derive(Clone, Copy, PartialEq, Eq)]
enum KillReason {
    Timeout,
    Cancel,
    Leftovers,
}

/// Runs `command` to its end, feeding `sink`. Returns how it ended.
pub fn run(
    command: &Command,
    timeout: Duration,
    cancel: &CancelToken,
    sink: &mut dyn LineSink,
) -> Result<Ending, RunError> {
    let mut child = process::spawn(command)?;
    let group = process::Group::of(&child);
    let (tx, rx) = sync_channel::<Event>(64);
    if let Some(out) = child.stdout.take() {
        spawn_reader(Stream::Stdout, out, tx.clone());
    }
    if let Some(err) = child.stderr.take() {
        spawn_reader(Stream::Stderr, err, tx.clone());
    }
    std::thread::spawn(move || {
        if let Ok(status) = child.wait() {
            let _ = tx.send(Event::Exited(status));
        }
    });
    Ok(pump(rx, group, timeout, cancel, sink))
}

fn spawn_reader(stream: Stream, mut pipe: impl Read + Send + 'static, tx: SyncSender<Event>) {
    std::thread::spawn(move || {
        let mut buf = vec![0u8; CHUNK];
        loop {
            match pipe.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    if tx.send(Event::Data(stream, buf[..n].to_vec())).is_err() {
                        return;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
        }
        let _ = tx.send(Event::Eof(stream));
    });
}

/// The runner's loop: lines to the sink, and the kill state machine.
fn pump(
    rx: Receiver<Event>,
    group: process::Group,
    timeout: Duration,
    cancel: &CancelToken,
    sink: &mut dyn LineSink,
) -> Ending {
    let started = Instant::now();
    let mut splitters = [LineSplitter::default(), LineSplitter::default()];
    let mut open_streams = 2;
    let mut exit: Option<(std::process::ExitStatus, Instant)> = None;
    let mut kill: Option<(KillReason, Instant, bool)> = None; // reason, TERM sent at, KILL sent
    loop {
        match rx.recv_timeout(TICK) {
            Ok(Event::Data(stream, bytes)) => splitters[slot(stream)].push(&bytes, |line| sink.line(stream, line)),
            Ok(Event::Eof(stream)) => {
                splitters[slot(stream)].finish(|line| sink.line(stream, line));
                open_streams -= 1;
            }
            Ok(Event::Exited(status)) => exit = Some((status, Instant::now())),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        if open_streams == 0 && exit.is_some() {
            break;
        }
        let now = Instant::now();
        if kill.is_none() {
            let reason = if cancel.is_cancelled() {
                Some(KillReason::Cancel)
            } else if now.duration_since(started) >= timeout {
                Some(KillReason::Timeout)
            } else if exit.is_some_and(|(_, at)| now.duration_since(at) >= LINGER) {
                Some(KillReason::Leftovers)
            } else {
                None
            };
            if let Some(reason) = reason {
                group.signal_term();
                kill = Some((reason, now, false));
            }
        }
        if let Some((_, term_at, killed)) = kill.as_mut() {
            let since = now.duration_since(*term_at);
            if !*killed && since >= GRACE {
                group.signal_kill();
                *killed = true;
            }
            // Pipes held by a process that left the group: stop waiting for them.
            if since >= GRACE + LINGER && exit.is_some() {
                break;
            }
        }
        sink.tick();
    }
    for (i, splitter) in splitters.iter_mut().enumerate() {
        let stream = if i == 0 { Stream::Stdout } else { Stream::Stderr };
        splitter.finish(|line| sink.line(stream, line));
    }
    match kill.map(|k| k.0) {
        Some(KillReason::Cancel) => Ending::Cancelled,
        Some(KillReason::Timeout) => Ending::TimedOut,
        _ => match exit {
            Some((status, _)) => process::ending(status),
            None => Ending::Signalled(9),
        },
    }
}

fn slot(stream: Stream) -> usize {
    if stream == Stream::Stderr { 1 } else { 0 }
}

#[cfg(test)]
mod tests;
