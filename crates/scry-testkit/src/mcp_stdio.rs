//! A client of an MCP server on a child process's stdio, for end-to-end
//! tests: JSON-RPC messages written to its stdin one a line, its stdout read
//! on a thread. The client never interprets a message beyond its `id`.
//!
//! Invariants: every stdout line that parses as JSON reaches
//! [`StdioClient::response`]; a line that is not a JSON-RPC 2.0 message is
//! kept for [`StdioClient::finish`], so a test can require that stdout
//! carries nothing else.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long [`StdioClient::response`] waits.
const RESPONSE_WAIT: Duration = Duration::from_secs(120);

/// What the stdout reader saw: how many lines, and those that were not
/// JSON-RPC 2.0 messages.
#[derive(Debug, Default)]
pub struct Read {
    pub lines: usize,
    pub not_protocol: Vec<String>,
}

/// An MCP client over a child's piped stdin and stdout.
pub struct StdioClient {
    stdin: Option<ChildStdin>,
    rx: Receiver<Value>,
    reader: Option<JoinHandle<Read>>,
}

impl StdioClient {
    /// Start `cmd` with its stdin and stdout piped to a client (its stderr
    /// the test's own) and take them over.
    pub fn spawn(cmd: &mut Command) -> (Child, StdioClient) {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the MCP server starts");
        let client = StdioClient::attach(&mut child);
        (child, client)
    }

    /// Take over `child`'s stdin and stdout (both must be piped).
    pub fn attach(child: &mut Child) -> StdioClient {
        let stdout = child.stdout.take().expect("the child's stdout is piped");
        let (tx, rx) = mpsc::channel();
        let reader = std::thread::spawn(move || {
            let mut read = Read::default();
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                read.lines += 1;
                match serde_json::from_str::<Value>(&line) {
                    Ok(v) => {
                        if v["jsonrpc"] != "2.0" {
                            read.not_protocol.push(line);
                        }
                        let _ = tx.send(v);
                    }
                    Err(_) => read.not_protocol.push(line),
                }
            }
            read
        });
        StdioClient {
            stdin: child.stdin.take(),
            rx,
            reader: Some(reader),
        }
    }

    /// The handshake: `initialize` (id 1) as `client`, its reply, then
    /// `notifications/initialized`. Returns the reply.
    pub fn initialize(&mut self, client: &str) -> Value {
        self.send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": client, "version": "0"}}}),
        );
        let reply = self.response(1);
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        reply
    }

    /// Write one message.
    pub fn send(&mut self, v: Value) {
        let stdin = self.stdin.as_mut().expect("stdin is still open");
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    }

    /// The message with this `id` (others are skipped); panics after two
    /// minutes without it.
    pub fn response(&self, id: i64) -> Value {
        let deadline = Instant::now() + RESPONSE_WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let m = self
                .rx
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no response for id {id}"));
            if m["id"] == json!(id) {
                return m;
            }
        }
    }

    /// Close stdin: the client goes away.
    pub fn close(&mut self) {
        drop(self.stdin.take());
    }

    /// What the reader saw, once the child has closed its stdout.
    pub fn finish(mut self) -> Read {
        self.close();
        let reader = self.reader.take().expect("finished once");
        reader.join().expect("the stdout reader")
    }
}
