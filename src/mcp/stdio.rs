//! MCP over stdin and stdout: one JSON-RPC message per line.
//!
//! The transport is ours rather than rmcp's for two reasons. Each line is screened first
//! (`jsonrpc.rs`), so a malformed one gets a reply instead of silence. And the end of stdin, which
//! is how a client says it is leaving, is noticed at once: rmcp waits up to 5 s for handlers to
//! finish, and a run in flight would go on that long, or past the moment the client gives up
//! and kills the server, leaving a run nobody stored.

use super::jsonrpc::{INVALID_REQUEST, Rejection, screen, unoffered};
use super::{BuildServer, shut_down, stop_signal};
use buildvise_app::App;
use rmcp::ServiceExt;
use rmcp::service::{RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{Mutex, mpsc, oneshot};

/// The longest message accepted; longer lines are refused and skipped, so a client that never
/// sends a newline cannot fill memory.
const MAX_LINE: usize = 16 << 20;

/// Serves one client on stdin/stdout until it closes stdin or the server is told to stop
/// (SIGTERM, SIGINT, SIGHUP); either way, runs in flight are cancelled and stored before exit.
pub async fn serve_stdio(app: Arc<App>, roots: Vec<PathBuf>, home: PathBuf) -> anyhow::Result<()> {
    let (transport, stdin_closed) = Stdio::start();
    let server = BuildServer::new(Arc::clone(&app), roots, home);
    let ended = tokio::select! {
        served = server.serve(transport) => match served {
            Ok(service) => tokio::select! {
                ended = service.waiting() => ended.map(drop).map_err(anyhow::Error::from),
                _ = stdin_closed => Ok(()),
                () = stop_signal() => Ok(()),
            },
            // Stdin closed, or no initialize came first: nothing ran.
            Err(e) => Err(e.into()),
        },
        () = stop_signal() => Ok(()),
    };
    shut_down(app).await;
    ended
}

type Writer = Arc<Mutex<tokio::io::Stdout>>;

struct Stdio {
    messages: mpsc::Receiver<RxJsonRpcMessage<RoleServer>>,
    out: Writer,
}

impl Stdio {
    /// The transport, and a signal sent when stdin ends.
    fn start() -> (Self, oneshot::Receiver<()>) {
        let out: Writer = Arc::new(Mutex::new(tokio::io::stdout()));
        let (tx, messages) = mpsc::channel(16);
        let (closed_tx, closed) = oneshot::channel();
        tokio::spawn(read_stdin(tx, Arc::clone(&out), closed_tx));
        (Stdio { messages, out }, closed)
    }
}

/// Reads stdin line by line, replies to what the screen rejects, and passes the rest on.
async fn read_stdin(messages: mpsc::Sender<RxJsonRpcMessage<RoleServer>>, out: Writer, closed: oneshot::Sender<()>) {
    let mut stdin = BufReader::new(tokio::io::stdin());
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = (&mut stdin).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut line).await;
        match read {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let complete = line.last() == Some(&b'\n');
        if line.len() > MAX_LINE && !complete {
            skip_rest_of_line(&mut stdin).await;
            let message = format!("a message longer than {} MiB; send smaller messages", MAX_LINE >> 20);
            reply(&out, &Rejection { id: Value::Null, code: INVALID_REQUEST, message }).await;
            continue;
        }
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        if text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let parsed = screen(text).and_then(|value| unoffered(&value).map_or(Ok(value), Err)).and_then(|value| {
            serde_json::from_value(value).map_err(|e| Rejection {
                id: Value::Null,
                code: INVALID_REQUEST,
                message: format!("not an MCP message: {e}"),
            })
        });
        match parsed {
            Ok(message) => {
                if messages.send(message).await.is_err() {
                    break;
                }
            }
            Err(rejection) => reply(&out, &rejection).await,
        }
        if !complete {
            // The last line had no newline: stdin ended with it.
            break;
        }
    }
    let _ = closed.send(());
}

async fn skip_rest_of_line(stdin: &mut BufReader<tokio::io::Stdin>) {
    loop {
        let Ok(available) = stdin.fill_buf().await else { return };
        if available.is_empty() {
            return;
        }
        match memchr::memchr(b'\n', available) {
            Some(at) => {
                stdin.consume(at + 1);
                return;
            }
            None => {
                let all = available.len();
                stdin.consume(all);
            }
        }
    }
}

async fn reply(out: &Writer, rejection: &Rejection) {
    let mut line = rejection.to_json().into_bytes();
    line.push(b'\n');
    let _ = write_line(out, &line).await;
}

async fn write_line(out: &Writer, line: &[u8]) -> std::io::Result<()> {
    let mut out = out.lock().await;
    out.write_all(line).await?;
    out.flush().await
}

impl Transport<RoleServer> for Stdio {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let out = Arc::clone(&self.out);
        let line = serde_json::to_vec(&item).map(|mut line| {
            line.push(b'\n');
            line
        });
        async move { write_line(&out, &line.map_err(std::io::Error::other)?).await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        self.messages.recv().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.messages.close();
        Ok(())
    }
}
