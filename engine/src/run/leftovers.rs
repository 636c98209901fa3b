//! The processes a run started that are still running when it ends: found, ended and named.
//!
//! A process group alone does not hold a run's processes: `setsid`, a double-forking daemon or a
//! program that makes its own group leaves it, and then no signal to the group reaches it. So
//! every command gets a mark in its environment, `BUILDVISE_RUN=<session>.<n>`, which whatever it
//! starts inherits. A run's processes are those whose environment (`/proc/PID/environ`, readable
//! for processes of the same user) holds its mark exactly, those still in its group, and the
//! descendants of either (a program that cleared its environment, while its parent lives).
//!
//! The mark is why a server's concurrent runs are told apart: each run's mark is its own, so one
//! run's end never touches another's processes. Found processes are signalled through a pidfd
//! opened and checked against the process's start time, so that a pid reused between the scan and
//! the signal is never hit.
//!
//! Scanning `/proc` costs a read of every process's `stat`, so it is kept for runs that left
//! something. buildvise makes itself a child subreaper: once a run's command has exited,
//! whatever it left running is below an orphan this process adopted, and a look at its own
//! children (`may_remain`) tells the common case, nothing left, in a few reads. The adopted that
//! were the run's and have ended are reaped there too, and no other child: a leader is reaped by
//! its runner, and a child some other code started is in buildvise's own group, not a run's.
//!
//! Linux only: elsewhere (macOS) nothing is found, and the group's signals are all there is.

use super::marks::MARK;
use nix::sys::signal::Signal;
use std::os::fd::OwnedFd;
use std::sync::OnceLock;

/// One process of a run, as a scan of `/proc` found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Found {
    pub pid: i32,
    /// When it started, in clock ticks since boot: with the pid, it names one process for good.
    pub start: u64,
    /// Its command name as the kernel keeps it (at most 15 bytes).
    pub name: String,
}

/// What `/proc/PID/stat` says of a process.
#[derive(Debug, Clone)]
struct Stat {
    name: String,
    state: char,
    ppid: i32,
    pgrp: i32,
    session: i32,
    start: u64,
}

fn stat(pid: i32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The name is in parentheses and may hold anything, spaces and parentheses included: the
    // fields after it start after the last `)`.
    let (head, rest) = text.rsplit_once(") ")?;
    let name = head.split_once(" (")?.1.to_string();
    let fields: Vec<&str> = rest.split_ascii_whitespace().collect();
    // `rest` starts at field 3 (state): ppid is field 4, pgrp 5, session 6, starttime 22.
    Some(Stat {
        name,
        state: fields.first()?.chars().next()?,
        ppid: fields.get(1)?.parse().ok()?,
        pgrp: fields.get(2)?.parse().ok()?,
        session: fields.get(3)?.parse().ok()?,
        start: fields.get(19)?.parse().ok()?,
    })
}

/// Whether `pid`'s environment holds `entry` (`NAME=value`) exactly.
fn carries(pid: i32, entry: &[u8]) -> bool {
    environ_holds(pid, entry) == Some(true)
}

/// Whether `pid`'s environment holds `entry` exactly, if it can be read: a process on its way
/// out has none left to read, but may not have handed its children on yet.
fn environ_holds(pid: i32, entry: &[u8]) -> Option<bool> {
    let env = std::fs::read(format!("/proc/{pid}/environ")).ok().filter(|env| !env.is_empty())?;
    Some(env.split(|&b| b == 0).any(|e| e == entry))
}

/// When the process `pid` started, in clock ticks since boot.
pub(super) fn started(pid: i32) -> Option<u64> {
    stat(pid).map(|s| s.start)
}

/// Makes this process the reaper of its descendants' orphans (once; a run calls it before its
/// command starts), and says whether it is.
pub(super) fn adopting() -> bool {
    static ADOPTING: OnceLock<bool> = OnceLock::new();
    *ADOPTING.get_or_init(|| {
        #[cfg(target_os = "linux")]
        {
            rustix::process::set_child_subreaper(Some(rustix::process::getpid())).is_ok()
                && std::fs::metadata("/proc/thread-self/children").is_ok()
        }
        #[cfg(not(target_os = "linux"))]
        false
    })
}

/// This process's children: each of its threads keeps a list of those it started, and the
/// adopted are on the list of the thread the kernel chose.
fn own_children() -> Vec<i32> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return Vec::new() };
    let mut pids = Vec::new();
    for task in tasks.flatten() {
        if let Ok(list) = std::fs::read_to_string(task.path().join("children")) {
            pids.extend(list.split_ascii_whitespace().filter_map(|pid| pid.parse::<i32>().ok()));
        }
    }
    pids
}

/// Whether anything of the run marked `mark`, led by `group`, may still be running, asked once
/// its command (the leader) has exited: `false` is certain, `true` is for [`find`] to settle.
/// The adopted that are the run's are added to `seen`, and those that have ended are reaped:
/// the ones seen running before, those in its group, and those that led a session of their own
/// (a daemon's middle process), which nothing in buildvise starts.
pub(super) fn may_remain(mark: &str, group: i32, since: u64, seen: &mut Vec<(i32, u64)>) -> bool {
    if !adopting() {
        return true;
    }
    let entry = format!("{MARK}={mark}");
    let mut remains = false;
    for pid in own_children() {
        // The leader is its runner's to reap, after the group's last signal.
        if pid == group {
            continue;
        }
        let Some(stat) = stat(pid) else { continue };
        let key = (pid, stat.start);
        match stat.state {
            'Z' if stat.pgrp == group || stat.session == pid || seen.contains(&key) => reap(pid),
            'Z' | 'X' => {}
            _ if stat.start < since => {}
            _ if stat.pgrp == group || environ_holds(pid, entry.as_bytes()) != Some(false) => {
                remains = true;
                if !seen.contains(&key) {
                    seen.push(key);
                }
            }
            _ => {}
        }
    }
    remains
}

/// Reaps the ended child `pid`, which no one else waits for.
fn reap(pid: i32) {
    if let Some(pid) = rustix::process::Pid::from_raw(pid) {
        let _ = rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::NOHANG);
    }
}

/// The processes of the run marked `mark` whose group is `group`, still running: never this
/// process, and never a zombie (it has ended; its parent has yet to reap it). None started
/// before `since` (the command's start) can be the run's, so only the environments of those
/// started since are read: reading another process's environment is most of a scan's cost.
pub(super) fn find(mark: &str, group: i32, since: u64) -> Vec<Found> {
    if !cfg!(target_os = "linux") {
        return Vec::new();
    }
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    let me = std::process::id() as i32;
    let entry = format!("{MARK}={mark}");
    let mut all: Vec<(i32, Stat, bool)> = Vec::new();
    for pid in dir.flatten().filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok()) {
        if pid == me {
            continue;
        }
        let Some(stat) = stat(pid) else { continue };
        if matches!(stat.state, 'Z' | 'X') || stat.start < since {
            continue;
        }
        let ours = stat.pgrp == group || carries(pid, entry.as_bytes());
        all.push((pid, stat, ours));
    }
    // Descendants of the run's processes are the run's, whatever their environment says.
    loop {
        let ours: std::collections::HashSet<i32> = all.iter().filter(|p| p.2).map(|p| p.0).collect();
        let mut more = false;
        for p in all.iter_mut().filter(|p| !p.2 && ours.contains(&p.1.ppid)) {
            p.2 = true;
            more = true;
        }
        if !more {
            break;
        }
    }
    all.into_iter().filter(|p| p.2).map(|(pid, stat, _)| Found { pid, start: stat.start, name: stat.name }).collect()
}

/// Whether the process `pid` that started at `start` is still running.
fn running(pid: i32, start: u64) -> bool {
    stat(pid).is_some_and(|s| s.start == start && !matches!(s.state, 'Z' | 'X'))
}

/// A process being ended: a pidfd on it, or only its pid where the kernel has no pidfds.
#[derive(Debug)]
struct Target {
    found: Found,
    pidfd: Option<OwnedFd>,
}

/// A pidfd on `pid`; Linux alone has them.
fn pidfd(pid: i32) -> Option<OwnedFd> {
    #[cfg(target_os = "linux")]
    {
        rustix::process::Pid::from_raw(pid)
            .and_then(|pid| rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok())
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        None
    }
}

/// Sends `signal` through a pidfd, which reaches the process it was opened on or none.
fn pidfd_signal(fd: &OwnedFd, signal: Signal) {
    #[cfg(target_os = "linux")]
    {
        let signal = match signal {
            Signal::SIGKILL => rustix::process::Signal::KILL,
            _ => rustix::process::Signal::TERM,
        };
        let _ = rustix::process::pidfd_send_signal(fd, signal);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (fd, signal);
}

impl Target {
    /// A handle on `found`, or nothing if it has ended (or its pid is another process's by now).
    fn open(found: Found) -> Option<Target> {
        let pidfd = pidfd(found.pid);
        // Checked after the pidfd is open: if the process that started then still holds the pid,
        // the pidfd is on it, and it stays on it whatever happens to the pid later.
        running(found.pid, found.start).then_some(Target { found, pidfd })
    }

    /// Sends `signal`; a process that has ended takes none, which is all the same.
    fn signal(&self, signal: Signal) {
        match &self.pidfd {
            Some(fd) => pidfd_signal(fd, signal),
            // Without a pidfd, the start time checked just before is what stands between the
            // signal and a reused pid.
            None => {
                if running(self.found.pid, self.found.start) {
                    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(self.found.pid), signal);
                }
            }
        }
    }
}

/// The processes a run's end is ending, and the names of those it counts as left running.
#[derive(Debug, Default)]
pub(super) struct Sweep {
    targets: Vec<Target>,
    /// Every process of the run a scan found, by pid and start: those this process adopted are
    /// its to reap when they end.
    pub seen: Vec<(i32, u64)>,
    /// One name per process that was still running when counted and took a signal.
    pub counted: Vec<String>,
}

impl Sweep {
    /// Notes the processes `find` found, to be reaped once they end.
    pub fn saw(&mut self, found: &[Found]) {
        for f in found {
            if !self.seen.contains(&(f.pid, f.start)) {
                self.seen.push((f.pid, f.start));
            }
        }
    }

    /// Takes on the processes `find` found that it had not; with `count`, each that is still
    /// running is counted as left running.
    pub fn take(&mut self, found: Vec<Found>, count: bool) {
        self.saw(&found);
        for found in found {
            if self.targets.iter().any(|t| t.found == found) {
                continue;
            }
            if let Some(target) = Target::open(found) {
                if count {
                    self.counted.push(target.found.name.clone());
                }
                self.targets.push(target);
            }
        }
    }

    /// Sends `signal` to every process taken on.
    pub fn signal(&self, signal: Signal) {
        for target in &self.targets {
            target.signal(signal);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::marks::new_session;
    use super::super::tests::sleeper;
    use super::*;

    #[test]
    fn a_mark_is_matched_whole_and_a_group_by_its_id() {
        let session = new_session();
        let (one, twelve) = (format!("{session}.1"), format!("{session}.12"));
        let mut marked = sleeper(Some(&one));
        let mut longer = sleeper(Some(&twelve));
        let mut grouped = sleeper(None);
        let found = find(&one, grouped.id() as i32, 0);
        let pids: Vec<u32> = found.iter().map(|f| f.pid as u32).collect();
        for child in [&mut marked, &mut longer, &mut grouped] {
            child.kill().expect("kill");
            child.wait().expect("reap");
        }
        assert!(pids.contains(&marked.id()), "the marked process: {found:?}");
        assert!(pids.contains(&grouped.id()), "the group's process: {found:?}");
        assert!(!pids.contains(&longer.id()), "another run's mark that starts with this one's: {found:?}");
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found.iter().all(|f| f.name == "sleep"), "{found:?}");
    }
}
