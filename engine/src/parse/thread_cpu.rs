//! The CPU time a thread of this process has spent, read from another thread: a parser is judged
//! by the work it did, not by a clock that also counts the time a loaded machine kept it waiting.
//!
//! Linux says it in `/proc/self/task/TID/schedstat` (nanoseconds on a CPU, the first field); the
//! thread itself reads the same count from `CLOCK_THREAD_CPUTIME_ID`, for a few nanoseconds. Where
//! neither is offered, [`ThreadCpu::current`] is None and the parser is judged by the wall clock.

use std::path::PathBuf;
use std::time::Duration;

/// One thread's CPU clock, as another thread reads it.
#[derive(Debug, Clone)]
pub struct ThreadCpu {
    schedstat: PathBuf,
}

impl ThreadCpu {
    /// The calling thread's clock, when this system lets another thread read it.
    pub fn current() -> Option<Self> {
        #[cfg(target_os = "linux")]
        {
            let tid = nix::unistd::gettid();
            let clock = ThreadCpu { schedstat: PathBuf::from(format!("/proc/self/task/{tid}/schedstat")) };
            clock.spent().map(|_| clock)
        }
        #[cfg(not(target_os = "linux"))]
        None
    }

    /// The CPU time the thread has spent so far.
    pub fn spent(&self) -> Option<Duration> {
        let text = std::fs::read_to_string(&self.schedstat).ok()?;
        let nanos = text.split_whitespace().next()?.parse().ok()?;
        Some(Duration::from_nanos(nanos))
    }

    /// The calling thread's own CPU time, cheaply: what [`spent`](Self::spent) says of it.
    pub fn own() -> Option<Duration> {
        #[cfg(target_os = "linux")]
        {
            let now = nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID).ok()?;
            Some(Duration::from(now))
        }
        #[cfg(not(target_os = "linux"))]
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_thread_reads_the_cpu_a_thread_spent() {
        let (tx, rx) = std::sync::mpsc::channel();
        let (done, wait) = std::sync::mpsc::channel::<()>();
        let worker = std::thread::spawn(move || {
            let (Some(clock), Some(start)) = (ThreadCpu::current(), ThreadCpu::own()) else {
                tx.send(None).unwrap();
                return;
            };
            let mut n = 0u64;
            while ThreadCpu::own().is_some_and(|now| now < start + Duration::from_millis(100)) {
                n = std::hint::black_box(n.wrapping_add(1));
            }
            tx.send(Some((clock, start))).unwrap();
            wait.recv().unwrap();
        });
        let read = rx.recv().unwrap();
        if !cfg!(target_os = "linux") && read.is_none() {
            return;
        }
        let (clock, start) = read.expect("Linux offers a thread's CPU time");
        let spent = clock.spent().expect("the worker's CPU time");
        done.send(()).unwrap();
        worker.join().unwrap();
        assert!(spent >= start + Duration::from_millis(90), "{spent:?} read, {start:?} at the start");
    }
}
