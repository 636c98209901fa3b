//! The sandbox, through the real binary and a real kernel: a project's own tool (what a hostile
//! test or build script would be) tries to plant a file in the user's home, to replace a file
//! of a sibling project, and to connect to a server on 127.0.0.1. Confined, each is refused and
//! the answer says so; with the sandbox off, the same script does all three.
//!
//! The temp directory a run may write is the test's own (`TMPDIR`), so that the home and the
//! sibling lie outside it even where the test's folders are under `/tmp`.

mod common;

use common::{Sandbox, skip};
use std::net::TcpListener;
use std::path::PathBuf;

/// The attacker: a project with a `.git` (a checkout of its own) whose `buildvise.toml` defines
/// a tool that runs `attack.sh`.
const ATTACK: &str = r#"echo pwned > "$HOME/planted" && echo "home: written"
echo replaced > ../sibling/lib.txt && echo "sibling: written"
echo built > out.txt && echo "project: written"
python3 -c "import socket, sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=5); print('network: connected')" "$PORT"
exit 0
"#;

struct World {
    sb: Sandbox,
    project: PathBuf,
    home: PathBuf,
    sibling_file: PathBuf,
    port: u16,
    _listener: TcpListener,
}

fn world() -> World {
    let sb = Sandbox::new(&[]);
    let project = sb.project_with_config("proj", "[tools.\"attack\"]\nrun = [\"sh\", \"attack.sh\"]\n");
    std::fs::create_dir_all(project.join(".git")).expect("mkdir .git");
    std::fs::write(project.join("attack.sh"), ATTACK).expect("write attack.sh");
    let home = sb.work().join("home");
    std::fs::create_dir_all(&home).expect("mkdir home");
    let sibling_file = sb.work().join("sibling/lib.txt");
    std::fs::create_dir_all(sibling_file.parent().unwrap()).expect("mkdir sibling");
    std::fs::write(&sibling_file, "original\n").expect("write sibling");
    std::fs::create_dir_all(sb.work().join("tmp")).expect("mkdir tmp");
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let port = listener.local_addr().expect("its address").port();
    World { sb, project, home, sibling_file, port, _listener: listener }
}

impl World {
    fn attack(&self, sandbox: &[&str]) -> String {
        let mut cmd = self.sb.command(["exec", "attack", "--detail", "full"]);
        cmd.args(sandbox)
            .current_dir(&self.project)
            .env("HOME", &self.home)
            .env("TMPDIR", self.sb.work().join("tmp"))
            .env("PORT", self.port.to_string())
            .env_remove("BUILDVISE_SANDBOX")
            .env_remove("BUILDVISE_NO_NETWORK");
        let run = common::run_command(&mut cmd);
        run.expect_code(0);
        run.text()
    }

    fn planted(&self) -> bool {
        self.home.join("planted").exists()
    }

    fn sibling(&self) -> String {
        std::fs::read_to_string(&self.sibling_file).expect("read sibling")
    }
}

/// Landlock with TCP rules (Linux 6.7): without it a confined run is refused, which another test
/// shows.
fn landlock_with_network() -> bool {
    let probe = world();
    let mut cmd = probe.sb.command(["exec", "attack", "--no-network"]);
    cmd.current_dir(&probe.project).env("HOME", &probe.home).env("TMPDIR", probe.sb.work().join("tmp"));
    let out = common::run_command(&mut cmd);
    let text = out.text();
    if text.contains("cannot confine this run here") {
        skip(&format!("this kernel cannot confine runs: {text}"));
        return false;
    }
    true
}

#[test]
fn a_confined_run_cannot_write_outside_its_project_nor_connect_and_the_answer_says_so() {
    if !cfg!(target_os = "linux") || !landlock_with_network() || common::which("python3").is_none() {
        return skip("needs Linux with Landlock and python3");
    }
    let w = world();
    let answer = w.attack(&["--sandbox", "workspace-write", "--no-network"]);
    assert!(!w.planted(), "the home was written:\n{answer}");
    assert_eq!(w.sibling(), "original\n", "the sibling was replaced:\n{answer}");
    assert!(answer.contains("project: written"), "the project itself stays writable:\n{answer}");
    assert!(!answer.contains("network: connected"), "{answer}");
    let home = w.home.join("planted");
    for note in [
        // Line numbers vary: the two streams interleave as the kernel delivers them.
        format!("note: sandbox (workspace-write) refused {} (log line ", home.display()),
        format!("note: sandbox (workspace-write) refused {} (log line ", w.sibling_file.display()),
        "note: sandbox refused a connection".to_string(),
    ] {
        assert!(answer.contains(&note), "no `{note}` in:\n{answer}");
    }

    let w = world();
    let answer = w.attack(&["--sandbox", "off"]);
    assert!(w.planted(), "{answer}");
    assert_eq!(w.sibling(), "replaced\n", "{answer}");
    assert!(answer.contains("network: connected"), "{answer}");
    assert!(!answer.contains("sandbox"), "{answer}");
}

#[test]
fn read_only_leaves_only_the_temp_directory_writable() {
    if !cfg!(target_os = "linux") || !landlock_with_network() {
        return skip("needs Linux with Landlock");
    }
    let w = world();
    let answer = w.attack(&["--sandbox", "read-only"]);
    assert!(!w.project.join("out.txt").exists(), "{answer}");
    assert!(answer.contains(&format!("refused {}", w.project.join("out.txt").display())), "{answer}");
}

#[test]
fn a_project_file_tightens_the_sandbox_and_cannot_loosen_it() {
    if !cfg!(target_os = "linux") || !landlock_with_network() {
        return skip("needs Linux with Landlock");
    }
    let w = world();
    let config = std::fs::read_to_string(w.project.join("buildvise.toml")).expect("read");
    // Loosening is ignored: the operator's workspace-write holds.
    std::fs::write(w.project.join("buildvise.toml"), format!("sandbox = \"off\"\n{config}")).expect("write");
    let answer = w.attack(&["--sandbox", "workspace-write"]);
    assert!(!w.planted(), "{answer}");
    // Tightening holds: the operator set nothing (workspace-write), the project asks for read-only.
    let w = world();
    std::fs::write(w.project.join("buildvise.toml"), format!("sandbox = \"read-only\"\n{config}")).expect("write");
    let answer = w.attack(&[]);
    assert!(!w.project.join("out.txt").exists(), "{answer}");
}

#[test]
fn a_mode_nobody_knows_is_refused_naming_the_three() {
    let sb = Sandbox::new(&[]);
    let run = sb.run(["exec", "attack", "--sandbox", "strict"]);
    run.expect_code(125);
    assert!(run.stderr.contains("expected off, workspace-write or read-only"), "{run}");
}
