//! The guard: a small helper process that ends the process groups of runs in flight when
//! buildvise itself dies without the chance to do it (SIGKILL, a crash, an abort).
//!
//! buildvise forks the guard once, with a pipe on its stdin, and tells it each group it starts
//! (`+PGID`) and each group it has finished with (`-PGID`), always before reaping the group's
//! leader. The kernel closes the pipe when buildvise exits, however it exits; on that end of
//! input, if any group is still listed, the guard sends TERM to every group listed and to every
//! process that carries one of this guard's marks (see `leftovers`: each run's mark starts with
//! the guard's session, so processes that left their group are found too, and another
//! buildvise's never are), waits a grace period, sends KILL to the same, and exits. The guard
//! leads a process group of its own, so a Ctrl-C or a signal meant for buildvise's group does
//! not reach it.
//!
//! The guard is forked, not executed: starting buildvise's own binary again cost every `exec`
//! about a millisecond of loading and relocation on a core the command needs. A child forked
//! from a process that may have other threads must not call anything that takes a lock another
//! thread may have held at the fork (the allocator's, stdio's), so the guard's whole life is raw
//! calls into libc on memory it owns: no allocation, no locks, no formatting, no panics, no
//! destructors. That is also why it reads `/proc` with `getdents64` into a buffer on its stack
//! rather than with `read_dir`. It signals a marked process by pid, checked just before: a pid
//! reused in that instant by another of this user's processes is the one risk it takes, where the
//! runner, which may allocate, uses pidfds. Those calls are why this is one of the two places in the host allowed `unsafe`
//! (with `plugins::library`).
#![allow(unsafe_code)]

use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::Mutex;

/// The guard as buildvise holds it. Dropping it ends the guard, which then ends whatever groups
/// are still listed.
pub struct Guard {
    pipe: Mutex<Option<File>>,
    /// What the marks of the runs this guard watches start with.
    session: String,
}

impl Guard {
    /// Forks the guard. One that cannot be started is reported here, and runs go on unguarded.
    pub fn start() -> Guard {
        Guard::with_session(super::marks::new_session())
    }

    fn with_session(session: String) -> Guard {
        let pipe = fork_guard(&Mark::of(&session))
            .inspect_err(|e| {
                tracing::warn!("cannot start the guard process; runs will outlive buildvise if it is killed: {e}");
            })
            .ok();
        Guard { pipe: Mutex::new(pipe), session }
    }

    pub(super) fn session(&self) -> &str {
        &self.session
    }

    pub(super) fn watch(&self, group: i32) {
        self.send(&format!("+{group}\n"));
    }

    pub(super) fn forget(&self, group: i32) {
        self.send(&format!("-{group}\n"));
    }

    fn send(&self, message: &str) {
        let mut pipe = self.pipe.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(file) = pipe.as_mut()
            && file.write_all(message.as_bytes()).is_err()
        {
            tracing::warn!("the guard process is gone: runs in flight will outlive buildvise if it is killed");
            *pipe = None;
        }
    }
}

/// What a marked process's environment holds, as the guard looks for it: `\0BUILDVISE_RUN=`, the
/// session and `.`, in a fixed array made before the fork (the guard cannot allocate). The
/// leading NUL is the end of the entry before, or stands for the start of the environment.
#[derive(Clone, Copy)]
#[cfg_attr(not(target_os = "linux"), expect(dead_code, reason = "only Linux has a /proc to find marks in"))]
struct Mark {
    bytes: [u8; 64],
    len: usize,
}

impl Mark {
    fn of(session: &str) -> Mark {
        let mut bytes = [0u8; 64];
        let text = format!("\0{}={session}.", super::marks::MARK);
        let len = text.len().min(bytes.len());
        bytes[..len].copy_from_slice(&text.as_bytes()[..len]);
        Mark { bytes, len }
    }

    #[cfg(target_os = "linux")]
    fn pattern(&self) -> &[u8] {
        self.bytes.get(..self.len).unwrap_or_default()
    }
}

/// Forks the guard and returns the end of its pipe that buildvise writes to.
fn fork_guard(mark: &Mark) -> std::io::Result<File> {
    // Close-on-exec (as std makes every descriptor), so that no command buildvise runs holds the
    // pipe open after buildvise died.
    let (read, write) = std::io::pipe()?;
    // SAFETY: the child has one thread; it runs `guard_child` alone, which calls only functions
    // that take no lock in libc (listed there) and never returns.
    match unsafe { libc::fork() } {
        -1 => Err(std::io::Error::last_os_error()),
        0 => guard_child(read.as_raw_fd(), mark),
        _ => {
            // Reaped by whoever outlives it: buildvise never waits for the guard, and the guard
            // exits by itself when buildvise does.
            drop(read);
            Ok(File::from(OwnedFd::from(write)))
        }
    }
}

/// The forked guard's whole life. Only system calls from here on (see the module's doc).
fn guard_child(input: RawFd, mark: &Mark) -> ! {
    // SAFETY: each call takes plain integers or pointers to memory on this stack or to static
    // strings. setpgid, signal, sigemptyset, pthread_sigmask, dup2, open, close and _exit are
    // async-signal-safe by POSIX; prctl, close_range (through syscall), sysconf(_SC_OPEN_MAX),
    // mmap and munmap (in `serve`) are not on POSIX's list, but each is one system call (sysconf
    // reads a resource limit) and takes no lock in glibc or musl.
    unsafe {
        libc::setpgid(0, 0);
        // Signals go back to their defaults: buildvise's handlers are for buildvise, and the
        // mask of the thread that forked is not the guard's.
        for signal in 1..32 {
            if signal != libc::SIGKILL && signal != libc::SIGSTOP {
                libc::signal(signal, libc::SIG_DFL);
            }
        }
        let mut empty = std::mem::zeroed::<libc::sigset_t>();
        libc::sigemptyset(&mut empty);
        libc::pthread_sigmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
        #[cfg(target_os = "linux")]
        libc::prctl(libc::PR_SET_NAME, c"buildvise-guard".as_ptr());
        // The pipe becomes stdin; stdout and stderr go nowhere, and every other descriptor
        // buildvise had is closed: whoever waits for buildvise's output, a lock it held or the
        // other end of this pipe to close must not wait for the guard too.
        libc::dup2(input, 0);
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if null >= 0 {
            libc::dup2(null, 1);
            libc::dup2(null, 2);
        }
        close_from(3);
    }
    serve(0, mark);
    // SAFETY: ends the child at once, running none of the parent's exit handlers.
    unsafe { libc::_exit(0) }
}

/// Closes every descriptor from `first` up.
fn close_from(first: RawFd) {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: closes descriptors only.
        if unsafe { libc::syscall(libc::SYS_close_range, first as libc::c_uint, libc::c_uint::MAX, 0) } == 0 {
            return;
        }
    }
    // SAFETY: reads a limit of this process.
    let mut limit = unsafe { libc::sysconf(libc::_SC_OPEN_MAX) };
    if !(0..=65_536).contains(&limit) {
        limit = 65_536;
    }
    for fd in first..limit as RawFd {
        // SAFETY: closes a descriptor, or fails on one that is not open.
        unsafe { libc::close(fd) };
    }
}

/// Time between TERM and KILL, as for a timeout.
const GRACE: std::time::Duration = super::GRACE;

/// The process groups listed, one bit per possible id: a fixed table, since the guard cannot
/// allocate. Linux never hands out an id of 2^22 or more (`pid_max`'s highest setting).
struct Listed {
    bits: [u64; Listed::WORDS],
}

impl Listed {
    const LIMIT: usize = 1 << 22;
    const WORDS: usize = Listed::LIMIT / 64;

    /// Changes a group's bit; ids past the table are ignored (the kernel hands out none).
    fn set(&mut self, group: usize, listed: bool) {
        let (Some(word), bit) = (self.bits.get_mut(group / 64), 1u64 << (group % 64)) else { return };
        if listed {
            *word |= bit;
        } else {
            *word &= !bit;
        }
    }

    fn is_empty(&self) -> bool {
        self.bits.iter().all(|&word| word == 0)
    }

    fn each(&self, mut act: impl FnMut(i32)) {
        for (i, &word) in self.bits.iter().enumerate() {
            let mut rest = word;
            while rest != 0 {
                act((i * 64 + rest.trailing_zeros() as usize) as i32);
                rest &= rest - 1;
            }
        }
    }
}

/// Reads `+PGID` / `-PGID` lines from `input` until it ends, then, if a run was in flight, ends
/// every group still listed and every process carrying `mark`. A line that is neither is
/// skipped.
fn serve(input: RawFd, mark: &Mark) {
    // Half a megabyte: too much for a thread's stack, so in a mapping of its own, left to the
    // kernel to fill with zeros as bits are set.
    // SAFETY: a fresh private anonymous mapping, used below only if it was made.
    let table = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            std::mem::size_of::<Listed>(),
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if table == libc::MAP_FAILED {
        return;
    }
    // SAFETY: the mapping is large enough, aligned to a page, and all zeros, which is a valid
    // `Listed` with nothing in it.
    let listed = unsafe { &mut *table.cast::<Listed>() };
    read_lines(input, listed);
    if !listed.is_empty() {
        // SAFETY: signals groups by id; `kill` with a negative id is `killpg`.
        listed.each(|group| unsafe {
            libc::kill(-group, libc::SIGTERM);
        });
        each_marked(mark, libc::SIGTERM);
        sleep(GRACE);
        // SAFETY: as above.
        listed.each(|group| unsafe {
            libc::kill(-group, libc::SIGKILL);
        });
        // A process may have forked between a scan and its KILL: scan again while any is found,
        // a few times (a fork bomb is not outrun, only stopped from growing much).
        for _ in 0..8 {
            if each_marked(mark, libc::SIGKILL) == 0 {
                break;
            }
        }
    }
    // SAFETY: the mapping made above, no longer used.
    unsafe { libc::munmap(table, std::mem::size_of::<Listed>()) };
}

/// Sends `signal` to every process but this one whose environment holds `mark`, and says how
/// many there were. Linux only (`/proc`); elsewhere there are none.
fn each_marked(mark: &Mark, signal: libc::c_int) -> usize {
    #[cfg(target_os = "linux")]
    {
        /// A buffer for `getdents64`, aligned as the records it holds are.
        #[repr(C, align(8))]
        struct Entries([u8; 8192]);

        // SAFETY: opens a directory by a static path.
        let dir = unsafe { libc::open(c"/proc".as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC) };
        if dir < 0 {
            return 0;
        }
        // SAFETY: returns this process's id.
        let me = unsafe { libc::getpid() };
        let mut entries = Entries([0; 8192]);
        let mut signalled = 0;
        loop {
            // SAFETY: the kernel writes at most the length given into `entries`.
            let read = unsafe { libc::syscall(libc::SYS_getdents64, dir, entries.0.as_mut_ptr(), entries.0.len()) };
            let Some(records) = usize::try_from(read).ok().filter(|&n| n > 0).and_then(|n| entries.0.get(..n)) else {
                break;
            };
            // Each record: inode (8 bytes), offset (8), its length (2), type (1), then the name
            // ended by a NUL.
            let mut at = 0;
            while let Some(record) = records.get(at..) {
                let Some(&[low, high]) = record.get(16..18) else { break };
                let length = usize::from(u16::from_ne_bytes([low, high]));
                if length == 0 {
                    break;
                }
                let name = record.get(19..length.min(record.len())).unwrap_or_default();
                let name = name.split(|&b| b == 0).next().unwrap_or_default();
                if let Some(pid) = pid_of(name)
                    && pid != me
                    && carries(pid, mark.pattern())
                {
                    // SAFETY: signals one process by id.
                    unsafe { libc::kill(pid, signal) };
                    signalled += 1;
                }
                at += length;
            }
        }
        // SAFETY: closes the descriptor opened above.
        unsafe { libc::close(dir) };
        signalled
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (mark, signal);
        0
    }
}

/// A directory name of `/proc` that is a process's id.
#[cfg(target_os = "linux")]
fn pid_of(name: &[u8]) -> Option<i32> {
    if name.is_empty() || name.len() > 9 || !name.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let pid = name.iter().fold(0i32, |n, &d| n * 10 + i32::from(d - b'0'));
    (pid > 1).then_some(pid)
}

/// Whether `/proc/PID/environ` holds `pattern` (which starts with the NUL before an entry, and
/// holds no other NUL), read a block at a time.
#[cfg(target_os = "linux")]
fn carries(pid: i32, pattern: &[u8]) -> bool {
    // `/proc/` + at most 10 digits + `/environ` + NUL.
    let mut path = [0u8; 32];
    let mut len = 0;
    let mut put = |bytes: &[u8]| {
        for &b in bytes {
            if let Some(slot) = path.get_mut(len) {
                *slot = b;
                len += 1;
            }
        }
    };
    put(b"/proc/");
    let mut digits = [0u8; 10];
    let (mut n, mut count) = (pid, 0);
    while n > 0 && count < digits.len() {
        digits[digits.len() - 1 - count] = b'0' + (n % 10) as u8;
        n /= 10;
        count += 1;
    }
    put(digits.get(digits.len() - count..).unwrap_or_default());
    put(b"/environ\0");
    // SAFETY: `path` is NUL-terminated (`put` wrote the NUL last, and 32 bytes hold it all).
    let fd = unsafe { libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return false;
    }
    // How much of `pattern` the bytes so far end with; the environment's start counts as the
    // NUL that begins it.
    let mut matched = 1;
    let mut buffer = [0u8; 4096];
    let mut found = false;
    'read: loop {
        // SAFETY: reads into `buffer`, which has the room given.
        let read = unsafe { libc::read(fd, buffer.as_mut_ptr().cast(), buffer.len()) };
        let Some(bytes) = usize::try_from(read).ok().filter(|&n| n > 0).and_then(|n| buffer.get(..n)) else {
            break;
        };
        for &byte in bytes {
            if pattern.get(matched) == Some(&byte) {
                matched += 1;
                if matched == pattern.len() {
                    found = true;
                    break 'read;
                }
            } else {
                // The pattern's only NUL is its first byte, so a mismatch restarts it, or
                // starts it again on a NUL.
                matched = usize::from(byte == 0);
            }
        }
    }
    // SAFETY: closes the descriptor opened above.
    unsafe { libc::close(fd) };
    found
}

/// `std::thread::sleep` without its checks, which may panic.
fn sleep(time: std::time::Duration) {
    let mut left = libc::timespec { tv_sec: time.as_secs() as libc::time_t, tv_nsec: time.subsec_nanos() as _ };
    loop {
        let asked = left;
        // SAFETY: both pointers are to timespecs on this stack.
        if unsafe { libc::nanosleep(&asked, &mut left) } == 0
            || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR)
        {
            return;
        }
    }
}

/// The lines of `input`, a byte at a time through a small buffer, into `listed`.
fn read_lines(input: RawFd, listed: &mut Listed) {
    let mut buffer = [0u8; 512];
    // The line so far: its sign, its number, and whether it still looks like `+PGID`/`-PGID`.
    let (mut sign, mut number, mut valid) = (0u8, 0usize, true);
    loop {
        // SAFETY: reads into `buffer`, which has the room given.
        let read = unsafe { libc::read(input, buffer.as_mut_ptr().cast(), buffer.len()) };
        let read = match read {
            n if n > 0 => n as usize,
            -1 if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) => continue,
            _ => return,
        };
        for &byte in buffer.get(..read).unwrap_or_default() {
            match byte {
                b'\n' => {
                    // Only ids above 1 name one group; 0 or less would signal our own or every
                    // group, and 1 is init's.
                    if valid && number > 1 {
                        match sign {
                            b'+' => listed.set(number, true),
                            b'-' => listed.set(number, false),
                            _ => {}
                        }
                    }
                    (sign, number, valid) = (0, 0, true);
                }
                b'+' | b'-' if sign == 0 => sign = byte,
                b'0'..=b'9' if sign != 0 && number < Listed::LIMIT => {
                    number = number * 10 + usize::from(byte - b'0');
                }
                _ => valid = false,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::marks::new_session;
    use super::super::tests::sleeper;
    use super::*;

    fn ended_soon(child: &mut std::process::Child) -> bool {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::time::Instant::now() < deadline {
            if child.try_wait().expect("try_wait").is_some() {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        false
    }

    fn still_running(mut child: std::process::Child, what: &str) {
        assert!(child.try_wait().expect("try_wait").is_none(), "{what} was signalled");
        child.kill().expect("kill");
        child.wait().expect("reap");
    }

    #[test]
    fn ends_listed_groups_at_end_of_input_and_only_those() {
        let (mut listed, forgotten) = (sleeper(None), sleeper(None));
        let input =
            format!("+{a}\n+{b}\n-{b}\ngarbage\n+0\n+-1\n+1\n++{b}\n+{b}x\n", a = listed.id(), b = forgotten.id());
        let (read, mut write) = std::io::pipe().expect("pipe");
        write.write_all(input.as_bytes()).expect("written");
        drop(write);
        serve(read.as_raw_fd(), &Mark::of(&new_session()));
        let status = listed.wait().expect("reaped");
        assert!(!status.success(), "the listed group was ended: {status:?}");
        still_running(forgotten, "a forgotten group");
    }

    #[test]
    fn a_forked_guard_ends_what_it_was_told_to_watch_when_its_pipe_closes() {
        let (mut watched, forgotten) = (sleeper(None), sleeper(None));
        let guard = Guard::with_session(new_session());
        guard.watch(watched.id() as i32);
        guard.watch(forgotten.id() as i32);
        guard.forget(forgotten.id() as i32);
        assert!(watched.try_wait().expect("try_wait").is_none(), "nothing is ended while buildvise lives");
        drop(guard);
        assert!(ended_soon(&mut watched), "the guard ended the watched group once its pipe closed");
        still_running(forgotten, "a forgotten group");
    }

    /// Processes that left their run's group (in a group of their own here) are found by their
    /// mark; a mark of another session, or one that only looks like it, is left alone.
    #[test]
    #[cfg(target_os = "linux")] // marks are found in /proc
    fn a_forked_guard_ends_the_processes_carrying_its_marks_and_no_others() {
        let session = new_session();
        let other = new_session();
        let mut in_flight = sleeper(None);
        let mut escaped = sleeper(Some(&format!("{session}.7")));
        let mut escaped_long_ago = sleeper(Some(&format!("{session}.1")));
        let strangers =
            [sleeper(Some(&format!("{other}.7"))), sleeper(Some(&session)), sleeper(Some(&format!("x{session}.7")))];
        let guard = Guard::with_session(session.clone());
        guard.watch(in_flight.id() as i32);
        drop(guard);
        for child in [&mut in_flight, &mut escaped, &mut escaped_long_ago] {
            assert!(ended_soon(child), "the guard ended {}", child.id());
        }
        for child in strangers {
            still_running(child, "a process without this guard's mark");
        }
    }

    #[test]
    #[cfg(target_os = "linux")] // marks are found in /proc
    fn a_mark_is_looked_for_after_any_entry_and_as_the_first() {
        let mark = Mark::of("abc");
        let me = std::process::id() as i32;
        // This process carries no such mark; a child given it as its first entry, and one given
        // it after others, do.
        assert!(!carries(me, mark.pattern()));
        use super::super::marks::MARK;
        for env in [vec![(MARK, "abc.3")], vec![("A", "1"), (MARK, "abc.3"), ("B", "2")]] {
            let mut child = std::process::Command::new("sleep")
                .arg("300")
                .env_clear()
                .envs(env.iter().copied())
                .spawn()
                .expect("sleep starts");
            let carried = carries(child.id() as i32, mark.pattern());
            child.kill().expect("kill");
            child.wait().expect("reap");
            assert!(carried, "{env:?}");
        }
    }
}
