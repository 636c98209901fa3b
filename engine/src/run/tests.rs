use super::*;
use std::time::Instant;

#[derive(Default)]
struct Collect(Vec<(Stream, Vec<u8>)>);

impl LineSink for Collect {
    fn lines(&mut self, stream: Stream, block: &[u8]) {
        self.0.extend(each_line(block).map(|line| (stream, line.to_vec())));
    }
}

fn sh(script: &str) -> Command {
    Command { program: "sh".into(), args: vec!["-c".into(), script.into()], env: vec![], cwd: ".".into() }
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
    let cmd = Command { program: "buildvise-no-such-program".into(), args: vec![], env: vec![], cwd: ".".into() };
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

#[test]
fn output_held_by_an_escaped_process_is_abandoned_not_waited_for() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    // `setsid` puts the sleeper outside the command's group, out of reach of the group's signals,
    // and it keeps the command's stdout open.
    let script = format!("setsid sh -c 'echo $$ > {p}; exec sleep 300' & echo started; exit 0", p = pid_file.display());
    let mut sink = Collect::default();
    let outcome = run(&sh(&script), Duration::from_secs(60), &CancelToken::default(), None, &mut sink).unwrap();
    assert_eq!(outcome, Outcome { ending: Ending::Exited(0), abandoned_output: true });
    assert_eq!(sink.0, vec![(Stream::Stdout, b"started".to_vec())]);
    let pid: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
}
