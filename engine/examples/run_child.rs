//! The command `engine/tests/process_and_store.rs` runs, written in Rust so that the same test
//! holds on every platform (Windows has no `sh` or `sleep`):
//!
//! - `lines`: two lines on each stream, interleaved, then exit code 3;
//! - `tree`: starts `sleep` as a child of its own, says its pid, and sleeps;
//! - `leave`: starts `sleep` and exits 0 at once, leaving it running;
//! - `sleep`: sleeps a minute.

use std::io::Write;
use std::time::Duration;

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    match mode.as_str() {
        "lines" => {
            for i in 1..=2 {
                println!("out {i}");
                std::io::stdout().flush().expect("stdout");
                eprintln!("err {i}");
            }
            std::process::exit(3);
        }
        "tree" => {
            let mut child = sleeper();
            std::thread::sleep(Duration::from_secs(60));
            let _ = child.wait();
        }
        // Exits without waiting: the sleeper is what the command left running.
        "leave" => drop(sleeper()),
        "sleep" => std::thread::sleep(Duration::from_secs(60)),
        _ => {
            eprintln!("run_child: say lines, tree, leave or sleep");
            std::process::exit(2);
        }
    }
}

/// Starts this program again to sleep, and says its pid.
fn sleeper() -> std::process::Child {
    let me = std::env::current_exe().expect("own path");
    let child = std::process::Command::new(me).arg("sleep").spawn().expect("a child starts");
    println!("child {}", child.id());
    child
}
