//! The run on Unix: the command in its own process group, its pipes non-blocking and read by one
//! thread with `poll`, what it left found by its mark and ended (see the module above).

use super::lines::LineSplitter;
use super::process::{self, Group};
use super::{CHUNK, CancelToken, Command, Ending, GRACE, Guard, LINGER, LineSink, Outcome, RunError, TICK, leftovers};
use buildvise_plugin_api::Stream;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::Signal;
use std::fs::File;
use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::time::{Duration, Instant};

/// The pipe size asked for; 1 MiB is what Linux grants an unprivileged process by default.
#[cfg(target_os = "linux")]
const PIPE_BYTES: i32 = 1 << 20;
/// Reads per pipe per turn of the loop: enough to keep up with a flood, few enough to keep ticks.
const READS_PER_TURN: usize = 8;

/// Runs `command` with `mark` in its environment, to its end.
pub(super) fn run(
    command: &Command,
    mark: &str,
    timeout: Duration,
    cancel: &CancelToken,
    guard: Option<&Guard>,
    sink: &mut dyn LineSink,
) -> Result<Outcome, RunError> {
    leftovers::adopting();
    let mut child = process::spawn(command, mark)?;
    let group = Group::of(&child);
    if let Some(guard) = guard {
        guard.watch(group.id());
    }
    let mut pipes = [
        child.stdout.take().map(|p| Pipe::new(Stream::Stdout, p.into())),
        child.stderr.take().map(|p| Pipe::new(Stream::Stderr, p.into())),
    ];
    // The leader is not reaped before the run ends, so its start can be read at any time.
    let since = leftovers::started(group.id()).unwrap_or(0);
    let run = Run { group, mark, since };
    let outcome = supervise(&run, &mut pipes, timeout, cancel, sink);
    if let Some(guard) = guard {
        guard.forget(group.id());
    }
    // Reaping frees the group id, so it comes after the last signal to the group.
    let _ = child.wait();
    Ok(outcome)
}

/// Why the runner is ending the group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KillReason {
    Timeout,
    Cancel,
    /// The command exited, and what it started was still running after the grace period.
    Leftovers,
}

/// What the runner knows a run's processes by.
struct Run<'a> {
    group: Group,
    mark: &'a str,
    /// When the command started, in clock ticks since boot.
    since: u64,
}

impl Run<'_> {
    fn find(&self) -> Vec<leftovers::Found> {
        leftovers::find(self.mark, self.group.id(), self.since)
    }

    /// Once the command has exited: whether anything of the run may still be running.
    fn may_remain(&self, sweep: &mut leftovers::Sweep) -> bool {
        leftovers::may_remain(self.mark, self.group.id(), self.since, &mut sweep.seen)
    }

    /// Signals every process of the run a scan finds now, and the group. The processes found
    /// are taken on before the group's signal can end any of them, so that each is counted.
    fn signal(&self, sweep: &mut leftovers::Sweep, signal: Signal, count: bool) {
        sweep.take(self.find(), count);
        self.group.signal(signal);
        sweep.signal(signal);
    }
}

struct Kill {
    reason: KillReason,
    term_at: Instant,
    killed: bool,
}

fn supervise(
    run: &Run<'_>,
    pipes: &mut [Option<Pipe>; 2],
    timeout: Duration,
    cancel: &CancelToken,
    sink: &mut dyn LineSink,
) -> Outcome {
    let started = Instant::now();
    let mut buf = vec![0u8; CHUNK];
    let mut exited: Option<(Ending, Instant)> = None;
    let mut kill: Option<Kill> = None;
    let mut sweep = leftovers::Sweep::default();
    let mut abandoned_output = false;
    // After both pipes closed, the exit usually follows within microseconds: poll for it quickly.
    let mut exit_wait = Duration::from_micros(200);
    // When to look next for what the command left: at once, then once a tick.
    let mut next_scan = started;
    // Whether the last look found nothing left (and reaped what had ended).
    let mut settled = false;
    loop {
        let now = Instant::now();
        if exited.is_none() {
            exited = run.group.leader_ended().map(|ending| (ending, now));
        }
        let open = pipes.iter().any(Option::is_some);
        if !open && exited.is_some() && now >= next_scan {
            next_scan = now + TICK;
            if !run.may_remain(&mut sweep) {
                settled = true;
                break;
            }
            let found = run.find();
            if found.is_empty() {
                break;
            }
            sweep.saw(&found);
            // Whatever forked since the KILL is ended too.
            if kill.as_ref().is_some_and(|k| k.killed) {
                sweep.take(found, kill.as_ref().is_some_and(|k| k.reason == KillReason::Leftovers));
                sweep.signal(Signal::SIGKILL);
            }
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
                run.signal(&mut sweep, Signal::SIGTERM, reason == KillReason::Leftovers);
                kill = Some(Kill { reason, term_at: now, killed: false });
            }
        }
        if let Some(k) = kill.as_mut() {
            let since = now.duration_since(k.term_at);
            if !k.killed && since >= GRACE {
                run.signal(&mut sweep, Signal::SIGKILL, k.reason == KillReason::Leftovers);
                k.killed = true;
            }
            if exited.is_some() && since >= GRACE + LINGER {
                // Whoever still holds the pipes is none of the run's that a scan finds: stop
                // waiting for them.
                if open {
                    for pipe in pipes.iter_mut() {
                        if let Some(p) = pipe.take() {
                            p.close(sink);
                        }
                    }
                    abandoned_output = true;
                    continue;
                }
                // What a KILL does not end (another user's process in the group) is not waited
                // for.
                break;
            }
        }
        sink.tick();
        if !open {
            std::thread::sleep(exit_wait);
            exit_wait = (exit_wait * 2).min(TICK);
            continue;
        }
        if sink.ready(TICK) {
            read_ready(pipes, &mut buf, sink);
        }
    }
    if !settled {
        // Reaps what ended since the last look.
        run.may_remain(&mut sweep);
    }
    let ending = match (&kill, exited) {
        // The leader's own end counts unless buildvise ended it first.
        (Some(k), Some((_, at))) if k.reason != KillReason::Leftovers && k.term_at <= at => match k.reason {
            KillReason::Cancel => Ending::Cancelled,
            _ => Ending::TimedOut,
        },
        (_, Some((ending, _))) => ending,
        (_, None) => Ending::Signalled(0),
    };
    Outcome { ending, left_running: sweep.counted, abandoned_output }
}

/// Waits up to a tick for output and reads what is there.
fn read_ready(pipes: &mut [Option<Pipe>; 2], buf: &mut [u8], sink: &mut dyn LineSink) {
    let mut fds: Vec<PollFd<'_>> = Vec::with_capacity(2);
    let mut which = Vec::with_capacity(2);
    for (i, pipe) in pipes.iter().enumerate() {
        if let Some(p) = pipe {
            fds.push(PollFd::new(p.file.as_fd(), PollFlags::POLLIN));
            which.push(i);
        }
    }
    let timeout = PollTimeout::try_from(TICK).unwrap_or(PollTimeout::MAX);
    if poll(&mut fds, timeout).unwrap_or(0) <= 0 {
        return;
    }
    let ready: Vec<usize> =
        fds.iter().zip(&which).filter(|(fd, _)| fd.any().unwrap_or(true)).map(|(_, &i)| i).collect();
    drop(fds);
    for i in ready {
        let Some(pipe) = pipes[i].as_mut() else { continue };
        if pipe.read_some(buf, sink) == Flow::Ended
            && let Some(p) = pipes[i].take()
        {
            p.close(sink);
        }
    }
}

#[derive(PartialEq, Eq)]
enum Flow {
    More,
    Ended,
}

/// One of the command's output pipes, read without blocking.
struct Pipe {
    stream: Stream,
    file: File,
    splitter: LineSplitter,
}

impl Pipe {
    fn new(stream: Stream, fd: OwnedFd) -> Self {
        let file = File::from(fd);
        // Non-blocking on our end only: the child's end keeps its own flags.
        let _ = nix::fcntl::fcntl(&file, nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK));
        // One thread reads, stores and batches: with the default 64 KiB pipe the command waits
        // whenever that thread is busy. A larger pipe lets it run ahead (best effort: the system
        // may cap the size). Linux only: other systems size pipes themselves (macOS grows one up
        // to 64 KiB as it fills).
        #[cfg(target_os = "linux")]
        let _ = nix::fcntl::fcntl(&file, nix::fcntl::FcntlArg::F_SETPIPE_SZ(PIPE_BYTES));
        Pipe { stream, file, splitter: LineSplitter::default() }
    }

    fn read_some(&mut self, buf: &mut [u8], sink: &mut dyn LineSink) -> Flow {
        for _ in 0..READS_PER_TURN {
            match (&self.file).read(buf) {
                Ok(0) => return Flow::Ended,
                Ok(n) => {
                    let stream = self.stream;
                    self.splitter.push(&buf[..n], |block| sink.lines(stream, block));
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Flow::More,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => return Flow::Ended,
            }
        }
        Flow::More
    }

    /// Hands over a last line without its `\n`, and closes our end.
    fn close(mut self, sink: &mut dyn LineSink) {
        let stream = self.stream;
        if self.splitter.finish(|block| sink.lines(stream, block)) {
            sink.unterminated(stream);
        }
    }
}
