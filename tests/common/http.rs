//! `buildvise serve --http` in a sandbox, and raw HTTP/1.1 exchanges with it: what a
//! well-behaved client never sends is exactly what these tests need to send.

use super::Sandbox;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// What the server prints on stderr once it listens.
const READY_PREFIX: &str = "buildvise: serving MCP at http://";

/// An `initialize` request, as a raw client sends it.
pub const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;

/// A running `buildvise serve --http`, stopped when dropped.
pub struct HttpServer {
    child: Child,
    pub addr: SocketAddr,
    /// What the server says on stderr after the line naming its address, its own notices
    /// (`BUILDVISE_LOG=warn,buildvise=info`) among them.
    said: mpsc::Receiver<String>,
}

impl HttpServer {
    /// `buildvise serve --http 127.0.0.1:0`, the port the system picks read back from the line the
    /// server prints once bound.
    pub fn start(sb: &Sandbox) -> Self {
        Self::start_with(sb, &["--http", "127.0.0.1:0"])
    }

    /// `buildvise serve OPTIONS…`, which must include `--http`.
    pub fn start_with(sb: &Sandbox, options: &[&str]) -> Self {
        let mut args = vec!["serve"];
        args.extend_from_slice(options);
        let mut child = sb
            .command(args)
            .env("BUILDVISE_LOG", "warn,buildvise=info")
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn buildvise serve --http");
        let stderr = child.stderr.take().expect("piped stderr");
        // A thread reads stderr to its end, so the server never blocks on a full pipe; the
        // first line naming the address is passed on, then every later line.
        let (tx, rx) = mpsc::channel();
        let (said_tx, said) = mpsc::channel();
        std::thread::spawn(move || {
            let mut before = Vec::new();
            let mut listening = false;
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if listening {
                    let _ = said_tx.send(line);
                } else if let Some(rest) = line.strip_prefix(READY_PREFIX) {
                    listening = true;
                    let _ = tx.send(Ok(rest.trim_end_matches("/mcp").to_string()));
                } else {
                    before.push(line);
                }
            }
            let _ = tx.send(Err(before.join("\n")));
        });
        let addr = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(Ok(addr)) => addr.parse().unwrap_or_else(|e| panic!("bad address {addr:?}: {e}")),
            Ok(Err(said)) => panic!("buildvise serve {options:?} ended before listening:\n{said}"),
            Err(e) => panic!("buildvise serve {options:?} did not say where it listens: {e}"),
        };
        HttpServer { child, addr, said }
    }

    /// Waits, at most `deadline`, for the server to say on stderr a line holding `text`.
    pub fn wait_to_say(&self, text: &str, deadline: Duration) -> bool {
        let until = std::time::Instant::now() + deadline;
        while let Some(left) = until.checked_duration_since(std::time::Instant::now()) {
            match self.said.recv_timeout(left) {
                Ok(line) if line.contains(text) => return true,
                Ok(_) => {}
                Err(_) => return false,
            }
        }
        false
    }

    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Sends one request to `/mcp` with the headers a streamable HTTP client sends (Host, Accept,
    /// Content-Type with a body), unless `headers` names them, and these, and reads the reply to
    /// its end.
    pub fn send(&self, method: &str, headers: &[(&str, &str)], body: Option<&str>) -> Reply {
        let mut stream = self.open(method, headers, body);
        let mut bytes = Vec::new();
        stream.read_to_end(&mut bytes).unwrap_or_else(|e| panic!("reading the reply to {method}: {e}"));
        Reply::parse(&bytes)
    }

    /// Sends one request and reads only the reply's status line and headers, leaving its body (an
    /// SSE stream, say) open for as long as the returned stream is kept.
    pub fn send_and_hold(&self, method: &str, headers: &[(&str, &str)], body: Option<&str>) -> (Reply, TcpStream) {
        let mut stream = self.open(method, headers, body);
        let mut bytes = Vec::new();
        let mut buf = [0u8; 4096];
        while !bytes.windows(4).any(|w| w == b"\r\n\r\n") {
            match stream.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => bytes.extend_from_slice(&buf[..n]),
                Err(e) => panic!("reading the reply to {method}: {e}; so far: {}", String::from_utf8_lossy(&bytes)),
            }
        }
        (Reply::parse(&bytes), stream)
    }

    fn open(&self, method: &str, headers: &[(&str, &str)], body: Option<&str>) -> TcpStream {
        let mut request = format!("{method} /mcp HTTP/1.1\r\n");
        let named = |name: &str| headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
        if !named("Host") {
            request.push_str(&format!("Host: {}\r\n", self.addr));
        }
        if !named("Accept") {
            request.push_str("Accept: application/json, text/event-stream\r\n");
        }
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        if let Some(body) = body {
            if !named("Content-Type") {
                request.push_str("Content-Type: application/json\r\n");
            }
            request.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        request.push_str("Connection: close\r\n\r\n");
        request.push_str(body.unwrap_or_default());
        let mut stream = TcpStream::connect(self.addr).expect("connect");
        stream.set_read_timeout(Some(Duration::from_secs(30))).expect("read timeout");
        stream.write_all(request.as_bytes()).expect("send request");
        stream
    }

    /// Initializes a session and says it is initialized; its id.
    pub fn initialize(&self) -> String {
        let reply = self.send("POST", &[], Some(INITIALIZE));
        assert_eq!(reply.status, 200, "initialize: {reply}");
        let id = reply.header("mcp-session-id").unwrap_or_else(|| panic!("no Mcp-Session-Id: {reply}")).to_string();
        let initialized = self.notify(&id);
        assert_eq!(initialized.status, 202, "notifications/initialized: {initialized}");
        id
    }

    /// `notifications/initialized` again in session `id`: the cheapest message that names a
    /// session, answered 202 while it is open.
    pub fn notify(&self, id: &str) -> Reply {
        self.send("POST", &[("Mcp-Session-Id", id)], Some(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#))
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP reply: its status, its head (status line and headers) and as much body as came.
pub struct Reply {
    pub status: u16,
    pub head: String,
    pub body: String,
}

impl Reply {
    fn parse(bytes: &[u8]) -> Reply {
        let text = String::from_utf8_lossy(bytes).into_owned();
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        let status = head
            .split_whitespace()
            .nth(1)
            .and_then(|code| code.parse().ok())
            .unwrap_or_else(|| panic!("no status line in: {text}"));
        Reply { status, head: head.to_string(), body: body.to_string() }
    }

    /// The value of header `name`, if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|line| {
            let (n, value) = line.split_once(':')?;
            n.trim().eq_ignore_ascii_case(name).then(|| value.trim())
        })
    }

    /// The body as JSON (a reply with a Content-Length, not a stream).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("the body is not JSON ({e}): {self}"))
    }
}

impl std::fmt::Display for Reply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "\n{}\n\n{}", self.head, self.body)
    }
}
