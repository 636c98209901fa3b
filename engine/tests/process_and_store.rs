//! A run of a real program, its lines stored and read back, on whatever platform the tests run:
//! on Windows (under Wine, by `tests/windows.rs`) this is what holds the job, the reader threads
//! and the store's files there. The program is the `run_child` example, built beside this test.

use buildvise_engine::run::{self, CancelToken, Ending, LineSink};
use buildvise_engine::store::{LogWriter, StreamFilter};
use buildvise_plugin_api::Stream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The example's executable: tests are built into `deps/`, examples into `examples/` beside it.
fn child_program() -> PathBuf {
    let me = std::env::current_exe().expect("own path");
    let profile = me.parent().and_then(|deps| deps.parent()).expect("a target dir");
    profile.join("examples").join(format!("run_child{}", std::env::consts::EXE_SUFFIX))
}

fn command(mode: &str) -> run::Command {
    run::Command {
        program: child_program().to_string_lossy().into_owned(),
        args: vec![mode.to_string()],
        env: vec![],
        cwd: std::env::temp_dir(),
        confinement: None,
    }
}

/// Writes each block to a stored log, as the application's sink does, and keeps the lines.
struct Store {
    log: LogWriter,
    lines: Vec<(Stream, String)>,
}

impl LineSink for Store {
    fn lines(&mut self, stream: Stream, block: &[u8]) {
        let mut ends = Vec::new();
        run::line_ends(block, &mut ends);
        self.log.write_lines(stream, block, &ends);
        let text = String::from_utf8_lossy(block);
        self.lines.extend(text.lines().map(|l| (stream, l.trim_end_matches('\r').to_string())));
    }
}

fn run_to_end(mode: &str, timeout: Duration, dir: &std::path::Path) -> (run::Outcome, Vec<(Stream, String)>, Duration) {
    let mut sink = Store { log: LogWriter::create(dir).expect("a log"), lines: Vec::new() };
    let started = Instant::now();
    let outcome = run::run(&command(mode), timeout, &CancelToken::default(), None, &mut sink).expect("the child runs");
    let took = started.elapsed();
    assert!(sink.log.finish().is_none(), "the log is written");
    (outcome, sink.lines, took)
}

#[test]
fn both_streams_are_read_and_stored_and_the_exit_code_kept() {
    let dir = tempfile::tempdir().expect("a temporary dir");
    let (outcome, lines, _) = run_to_end("lines", Duration::from_secs(60), dir.path());
    assert_eq!(outcome.ending, Ending::Exited(3));
    assert!(outcome.left_running.is_empty(), "{outcome:?}");
    let of = |stream| lines.iter().filter(|l| l.0 == stream).map(|l| l.1.as_str()).collect::<Vec<_>>();
    assert_eq!(of(Stream::Stdout), ["out 1", "out 2"]);
    assert_eq!(of(Stream::Stderr), ["err 1", "err 2"]);

    let mut reader = buildvise_engine::store::LogReader::open(dir.path()).expect("the log opens");
    let page = reader.page(StreamFilter::Both, 0, 10).expect("a page");
    let mut stored: Vec<(Stream, String)> = page
        .iter()
        .map(|l| (l.stream, String::from_utf8_lossy(&l.bytes).trim_end_matches(['\r', '\n']).to_string()))
        .collect();
    assert_eq!(stored.len(), 4, "{stored:?}");
    stored.sort_by_key(|l| l.1.clone());
    assert_eq!(
        stored,
        [
            (Stream::Stderr, "err 1".to_string()),
            (Stream::Stderr, "err 2".to_string()),
            (Stream::Stdout, "out 1".to_string()),
            (Stream::Stdout, "out 2".to_string())
        ]
    );
    let only_err = reader.page(StreamFilter::Only(Stream::Stderr), 0, 10).expect("a page");
    assert_eq!(only_err.len(), 2, "{only_err:?}");
}

/// A timeout ends the command and what it started: the grandchild holds the output pipes, so a
/// survivor would keep them open and the output would be abandoned.
#[test]
fn a_timeout_ends_the_whole_tree() {
    let dir = tempfile::tempdir().expect("a temporary dir");
    let (outcome, lines, took) = run_to_end("tree", Duration::from_secs(2), dir.path());
    assert_eq!(outcome.ending, Ending::TimedOut);
    assert!(!outcome.abandoned_output, "the grandchild was ended with the tree: {outcome:?}");
    assert!(lines.iter().any(|l| l.1.starts_with("child ")), "{lines:?}");
    assert!(took < Duration::from_secs(20), "ended within the grace periods: {took:?}");
}

/// What the command left running is ended after the grace period, and named.
#[test]
fn what_the_command_left_running_is_ended_and_named() {
    let dir = tempfile::tempdir().expect("a temporary dir");
    let (outcome, _, took) = run_to_end("leave", Duration::from_secs(60), dir.path());
    assert_eq!(outcome.ending, Ending::Exited(0));
    assert_eq!(outcome.left_running, ["run_child"], "{outcome:?}");
    assert!(!outcome.abandoned_output, "{outcome:?}");
    assert!(took < Duration::from_secs(20), "{took:?}");
}

/// A program named without its directory is found on the PATH the command is given, as the
/// platform's shell finds it: on Windows a batch file, `hello.cmd`, by the name `hello` (as
/// `npm` is `npm.cmd` there).
#[test]
fn a_bare_name_is_found_on_the_commands_path_as_the_shell_finds_it() {
    let bin = tempfile::tempdir().expect("a temporary dir");
    if cfg!(windows) {
        std::fs::write(bin.path().join("hello.cmd"), "@echo hello from %1\r\n").expect("write hello.cmd");
    } else {
        let script = bin.path().join("hello");
        std::fs::write(&script, "#!/bin/sh\necho hello from $1\n").expect("write hello");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("make hello executable");
        }
    }
    let command = run::Command {
        program: "hello".to_string(),
        args: vec!["path".to_string()],
        // In front of the PATH it has: the system's programs and libraries stay reachable, as
        // `cmd.exe`, which runs a batch file, needs them.
        env: vec![("PATH".to_string(), path_with(bin.path()))],
        cwd: std::env::temp_dir(),
        confinement: None,
    };
    let dir = tempfile::tempdir().expect("a temporary dir");
    let mut sink = Store { log: LogWriter::create(dir.path()).expect("a log"), lines: Vec::new() };
    let outcome =
        run::run(&command, Duration::from_secs(60), &CancelToken::default(), None, &mut sink).expect("hello runs");
    assert_eq!(outcome.ending, Ending::Exited(0), "{:?}", sink.lines);
    assert!(sink.lines.iter().any(|l| l.1 == "hello from path"), "{:?}", sink.lines);
}

/// This process's PATH with `dir` in front.
fn path_with(dir: &std::path::Path) -> String {
    let rest = std::env::var_os("PATH").unwrap_or_default();
    let dirs = std::iter::once(dir.to_path_buf()).chain(std::env::split_paths(&rest));
    std::env::join_paths(dirs).expect("a PATH").to_string_lossy().into_owned()
}
