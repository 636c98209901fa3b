//! The guard: a small helper process that ends the process groups of runs in flight when
//! buildvise itself dies without the chance to do it (SIGKILL, a crash, an abort).
//!
//! buildvise forks the guard once, with a pipe on its stdin, and tells it each group it starts
//! (`+PGID`) and each group it has finished with (`-PGID`), always before reaping the group's
//! leader. The kernel closes the pipe when buildvise exits, however it exits; on that end of
//! input the guard sends TERM to every group still listed, waits a grace period, sends KILL, and
//! exits. The guard leads a process group of its own, so a Ctrl-C or a signal meant for
//! buildvise's group does not reach it.
//!
//! The guard is forked, not executed: starting buildvise's own binary again cost every `exec`
//! about a millisecond of loading and relocation on a core the command needs. A child forked
//! from a process that may have other threads must not call anything that takes a lock another
//! thread may have held at the fork (the allocator's, stdio's), so the guard's whole life is raw
//! calls into libc on memory it owns: no allocation, no locks, no formatting, no panics, no
//! destructors. Those calls are why this is one of the two places in the host allowed `unsafe`
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
}

impl Guard {
    /// Forks the guard. One that cannot be started is reported here, and runs go on unguarded.
    pub fn start() -> Guard {
        let pipe = fork_guard()
            .inspect_err(|e| {
                tracing::warn!("cannot start the guard process; runs will outlive buildvise if it is killed: {e}");
            })
            .ok();
        Guard { pipe: Mutex::new(pipe) }
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

/// Forks the guard and returns the end of its pipe that buildvise writes to.
fn fork_guard() -> std::io::Result<File> {
    // Close-on-exec (as std makes every descriptor), so that no command buildvise runs holds the
    // pipe open after buildvise died.
    let (read, write) = std::io::pipe()?;
    // SAFETY: the child has one thread; it runs `guard_child` alone, which calls only functions
    // that take no lock in libc (listed there) and never returns.
    match unsafe { libc::fork() } {
        -1 => Err(std::io::Error::last_os_error()),
        0 => guard_child(read.as_raw_fd()),
        _ => {
            // Reaped by whoever outlives it: buildvise never waits for the guard, and the guard
            // exits by itself when buildvise does.
            drop(read);
            Ok(File::from(OwnedFd::from(write)))
        }
    }
}

/// The forked guard's whole life. Only system calls from here on (see the module's doc).
fn guard_child(input: RawFd) -> ! {
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
    serve(0);
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

/// Reads `+PGID` / `-PGID` lines from `input` until it ends, then ends every group still
/// listed. A line that is neither is skipped.
fn serve(input: RawFd) {
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
        sleep(GRACE);
        // SAFETY: as above.
        listed.each(|group| unsafe {
            libc::kill(-group, libc::SIGKILL);
        });
    }
    // SAFETY: the mapping made above, no longer used.
    unsafe { libc::munmap(table, std::mem::size_of::<Listed>()) };
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
    use super::*;
    use std::os::unix::process::CommandExt;

    fn sleeper() -> std::process::Child {
        std::process::Command::new("sleep").arg("300").process_group(0).spawn().expect("sleep starts")
    }

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

    #[test]
    fn ends_listed_groups_at_end_of_input_and_only_those() {
        let (mut listed, mut forgotten) = (sleeper(), sleeper());
        let input =
            format!("+{a}\n+{b}\n-{b}\ngarbage\n+0\n+-1\n+1\n++{b}\n+{b}x\n", a = listed.id(), b = forgotten.id());
        let (read, mut write) = std::io::pipe().expect("pipe");
        write.write_all(input.as_bytes()).expect("written");
        drop(write);
        serve(read.as_raw_fd());
        let status = listed.wait().expect("reaped");
        assert!(!status.success(), "the listed group was ended: {status:?}");
        assert!(forgotten.try_wait().expect("try_wait").is_none(), "a forgotten group was signalled");
        forgotten.kill().expect("kill");
        forgotten.wait().expect("reap");
    }

    #[test]
    fn a_forked_guard_ends_what_it_was_told_to_watch_when_its_pipe_closes() {
        let (mut watched, mut forgotten) = (sleeper(), sleeper());
        let guard = Guard::start();
        guard.watch(watched.id() as i32);
        guard.watch(forgotten.id() as i32);
        guard.forget(forgotten.id() as i32);
        assert!(watched.try_wait().expect("try_wait").is_none(), "nothing is ended while buildvise lives");
        drop(guard);
        assert!(ended_soon(&mut watched), "the guard ended the watched group once its pipe closed");
        assert!(forgotten.try_wait().expect("try_wait").is_none(), "a forgotten group was signalled");
        forgotten.kill().expect("kill");
        forgotten.wait().expect("reap");
    }
}
