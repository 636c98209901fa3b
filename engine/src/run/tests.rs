use super::*;
use std::time::Instant;

#[derive(Default)]
struct Collect(Vec<(Stream, Vec<u8>)>);

impl LineSink for Collect {
    fn lines(&mut self, stream: Stream, block: &[u8]) {
        self.0.extend(each_line(block).map(|line| (stream, line.to_vec())));
    }
}

/// A sleeper in a group of its own, with `mark` in its environment when given: the leftovers'
/// and the guard's tests find and end it.
pub(super) fn sleeper(mark: Option<&str>) -> std::process::Child {
    use std::os::unix::process::CommandExt;
    let mut cmd = std::process::Command::new("sleep");
    cmd.arg("300").process_group(0);
    if let Some(mark) = mark {
        cmd.env(marks::MARK, mark);
    }
    cmd.spawn().expect("sleep starts")
}

fn sh(script: &str) -> Command {
    Command {
        program: "sh".into(),
        args: vec!["-c".into(), script.into()],
        env: vec![],
        cwd: ".".into(),
        confinement: None,
    }
}

fn alive(pid: i32) -> bool {
    // Signal 0 checks existence; a zombie still counts, so look at /proc state too.
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    !stat.is_empty() && !stat.contains(") Z ")
}

#[test]
fn both_streams_tagged_and_exit_code() {
    let mut sink = Collect::default();
    let end = run(
        &sh("echo out; echo err >&2; printf 'no newline'; exit 3"),
        Duration::from_secs(20),
        &CancelToken::default(),
        None,
        &mut sink,
    )
    .unwrap()
    .ending;
    assert_eq!(end, Ending::Exited(3));
    assert!(sink.0.contains(&(Stream::Stdout, b"out".to_vec())));
    assert!(sink.0.contains(&(Stream::Stderr, b"err".to_vec())));
    assert!(sink.0.contains(&(Stream::Stdout, b"no newline".to_vec())));
}

#[test]
fn missing_program_is_named() {
    let cmd = Command {
        program: "buildvise-no-such-program".into(),
        args: vec![],
        env: vec![],
        cwd: ".".into(),
        confinement: None,
    };
    let err = run(&cmd, Duration::from_secs(5), &CancelToken::default(), None, &mut Collect::default()).unwrap_err();
    assert!(err.to_string().contains("`buildvise-no-such-program` was not found on PATH"), "{err}");
}

#[test]
fn stdin_is_closed() {
    let mut sink = Collect::default();
    let end =
        run(&sh("cat; echo done"), Duration::from_secs(20), &CancelToken::default(), None, &mut sink).unwrap().ending;
    assert_eq!(end, Ending::Exited(0));
    assert_eq!(sink.0, vec![(Stream::Stdout, b"done".to_vec())]);
}

#[test]
fn timeout_kills_child_and_grandchild() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    // The grandchild ignores TERM, so only the KILL after the grace period ends it.
    let script =
        format!("(trap '' TERM; sleep 300) & echo $! > {p}; echo $$ >> {p}; echo started; wait", p = pids.display());
    let mut sink = Collect::default();
    let end = run(&sh(&script), Duration::from_millis(500), &CancelToken::default(), None, &mut sink).unwrap().ending;
    assert_eq!(end, Ending::TimedOut);
    assert_eq!(sink.0[0].1, b"started");
    let text = std::fs::read_to_string(&pids).unwrap();
    let pids: Vec<i32> = text.lines().map(|l| l.trim().parse().unwrap()).collect();
    assert_eq!(pids.len(), 2);
    // The KILL was sent before `run` returned; the kernel ends the processes soon after.
    let deadline = Instant::now() + Duration::from_secs(10);
    while pids.iter().any(|&pid| alive(pid)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    for pid in pids {
        assert!(!alive(pid), "process {pid} survived the timeout");
    }
}

/// Cancels its run once the command has printed a line: the command is running by then.
struct CancelOnFirstLine(CancelToken);

impl LineSink for CancelOnFirstLine {
    fn lines(&mut self, _stream: Stream, _block: &[u8]) {
        self.0.cancel();
    }
}

#[test]
fn cancel_ends_the_run() {
    let token = CancelToken::default();
    let mut sink = CancelOnFirstLine(token.clone());
    let end = run(&sh("echo started; sleep 300"), Duration::from_secs(600), &token, None, &mut sink).unwrap().ending;
    assert_eq!(end, Ending::Cancelled);
}

#[test]
fn big_line_and_binary_bytes_pass_through() {
    let mut sink = Collect::default();
    let script = "head -c 10485760 /dev/zero | tr '\\0' 'a'; printf '\\n\\377\\000\\376\\n'";
    let end = run(&sh(script), Duration::from_secs(60), &CancelToken::default(), None, &mut sink).unwrap().ending;
    assert_eq!(end, Ending::Exited(0));
    assert_eq!(sink.0.len(), 2);
    assert_eq!(sink.0[0].1.len(), 10 * 1024 * 1024);
    assert_eq!(sink.0[1].1, b"\xff\x00\xfe");
}

/// A sink whose consumer is stuck: it never has room again after the first line.
#[derive(Default)]
struct Stuck(usize);

impl LineSink for Stuck {
    fn lines(&mut self, _stream: Stream, block: &[u8]) {
        self.0 += each_line(block).count();
    }

    fn ready(&mut self, wait: Duration) -> bool {
        if self.0 == 0 {
            return true;
        }
        std::thread::sleep(wait);
        false
    }
}

#[test]
fn a_stuck_sink_cannot_hold_off_the_deadline() {
    let started = Instant::now();
    let mut sink = Stuck::default();
    // `yes` would fill any buffer; the runner stops reading, `yes` blocks on its pipe, and the
    // deadline still ends it.
    let outcome = run(&sh("yes"), Duration::from_millis(300), &CancelToken::default(), None, &mut sink).unwrap();
    assert_eq!(outcome.ending, Ending::TimedOut);
    // The bound only keeps a broken runner from hanging the suite: TERM ends `yes` at once.
    assert!(started.elapsed() < Duration::from_secs(20), "took {:?}", started.elapsed());
    assert!(sink.0 > 0);
}

/// Pids a script wrote to `file`, one a line.
fn pids_in(file: &std::path::Path) -> Vec<i32> {
    std::fs::read_to_string(file).unwrap_or_default().lines().filter_map(|l| l.trim().parse().ok()).collect()
}

/// Waits, up to a bound that only keeps a broken runner from hanging the suite, until none of
/// `pids` runs; returns those that still do.
fn gone(pids: &[i32]) -> Vec<i32> {
    let deadline = Instant::now() + Duration::from_secs(10);
    while pids.iter().any(|&pid| alive(pid)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    pids.iter().copied().filter(|&pid| alive(pid)).collect()
}

#[test]
fn what_the_command_left_running_is_ended_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("pids");
    // A background child in the group, one that left it with `setsid` and holds stdout, and a
    // double-forked daemon in a session of its own with its output closed; the command waits
    // until all three have said who they are, so that none is ended before it has.
    // The file exists before the loop reads it: on a busy machine the loop ran before any child
    // had written, and the shell's complaint about the missing file became output.
    let script = format!(
        ": > {p}; sh -c 'echo $$ >> {p}; exec sleep 300' & \
         setsid sh -c 'echo $$ >> {p}; exec sleep 300' & \
         sh -c 'setsid sh -c \"echo \\$\\$ >> {p}; exec sleep 300\" </dev/null >/dev/null 2>&1 &'; \
         until [ \"$(wc -l < {p})\" -ge 3 ]; do :; done; echo started",
        p = p.display()
    );
    let mut sink = Collect::default();
    let outcome = run(&sh(&script), Duration::from_secs(60), &CancelToken::default(), None, &mut sink).unwrap();
    let pids = pids_in(&p);
    let left = gone(&pids);
    assert_eq!(pids.len(), 3, "{pids:?}");
    assert!(left.is_empty(), "outlived the run: {left:?}");
    assert_eq!(outcome.ending, Ending::Exited(0));
    assert_eq!(outcome.left_running, ["sleep", "sleep", "sleep"], "{outcome:?}");
    assert!(!outcome.abandoned_output, "{outcome:?}");
    assert_eq!(sink.0, vec![(Stream::Stdout, b"started".to_vec())]);
}

#[test]
fn a_child_that_ends_within_the_grace_period_is_neither_ended_nor_counted() {
    let dir = tempfile::tempdir().unwrap();
    let done = dir.path().join("done");
    let script = format!("(sleep 0.2; echo finished > {d}) >/dev/null & echo started", d = done.display());
    let outcome =
        run(&sh(&script), Duration::from_secs(60), &CancelToken::default(), None, &mut Collect::default()).unwrap();
    assert_eq!(outcome, Outcome { ending: Ending::Exited(0), left_running: vec![], abandoned_output: false });
    assert_eq!(std::fs::read_to_string(&done).unwrap_or_default(), "finished\n", "the child ran to its end");
}

#[test]
fn output_held_by_an_escaped_process_is_abandoned_not_waited_for() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    // `setsid` puts the sleeper outside the command's group, out of reach of the group's signals,
    // `env -i` takes the run's mark from its environment, and once the command has exited its
    // parent is no process of the run's: nothing tells it apart as the run's. It keeps the
    // command's stdout open.
    let script =
        format!("env -i setsid sh -c 'echo $$ > {p}; exec sleep 300' & echo started; exit 0", p = pid_file.display());
    let mut sink = Collect::default();
    let outcome = run(&sh(&script), Duration::from_secs(60), &CancelToken::default(), None, &mut sink).unwrap();
    let pid: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
    assert_eq!(outcome, Outcome { ending: Ending::Exited(0), left_running: vec![], abandoned_output: true });
    assert_eq!(sink.0, vec![(Stream::Stdout, b"started".to_vec())]);
}

/// Whether `pid` has ended and waits for this process to reap it.
fn zombie_of_mine(pid: i32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat.rsplit_once(") ").map(|(_, rest)| rest.split(' ').collect()).unwrap_or_default();
    fields.first() == Some(&"Z") && fields.get(1) == Some(&std::process::id().to_string().as_str())
}

#[test]
fn what_the_command_left_is_reaped_once_it_ends_not_kept_as_a_zombie() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("pids");
    // Orphans buildvise adopts: one in the group and one in a session of its own, both ended
    // before the command does, and one in a group of its own, ended by the runner.
    let script = format!(
        "sh -c 'sleep 0.1 & echo $! >> {p}'; \
         sh -c 'setsid sleep 0.1 & echo $! >> {p}'; \
         sh -c 'python3 -c \"import os, time; os.setpgid(0, 0); time.sleep(300)\" & echo $! >> {p}'; \
         sleep 0.5; echo started",
        p = p.display()
    );
    let outcome =
        run(&sh(&script), Duration::from_secs(60), &CancelToken::default(), None, &mut Collect::default()).unwrap();
    let pids = pids_in(&p);
    assert_eq!(pids.len(), 3, "{pids:?}");
    assert_eq!(outcome.left_running, ["python3"], "{outcome:?}");
    let zombies: Vec<i32> = pids.into_iter().filter(|&pid| zombie_of_mine(pid)).collect();
    assert!(zombies.is_empty(), "ended but never reaped: {zombies:?}");
}
