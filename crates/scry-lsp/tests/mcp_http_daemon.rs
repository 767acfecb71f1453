//! `scry mcp --http` through the daemon, end to end with the built binary
//! and the fake server (`scry-fake-lsp`): an HTTP session and a CLI call on
//! one workspace share one server process (the daemon's); `--no-daemon`
//! keeps HTTP in-process (the server is the HTTP process's child); a call
//! cancelled over HTTP, or hung up on, reaches the server as
//! `$/cancelRequest` through the daemon; a daemon that cannot start leaves
//! HTTP in-process and `status` says why.
//!
//! Every test runs its own daemon in its own directory (`SCRY_DAEMON_DIR`
//! in a temporary directory) and stops it, and the HTTP server, at the end.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::process::{alive, fake_server, kill, parent, scry_in, wait_until};
use scry_testkit::mcp_http::{self, served_at};
use serde_json::{Value, json};

struct Env {
    _tmp: tempfile::TempDir,
    base: PathBuf,
    ws: PathBuf,
}

impl Env {
    /// A workspace served by the fake server with `env`; `None` when the
    /// fake server is not built.
    fn fake(env: Value) -> Option<Env> {
        let fake = fake_server()?;
        let tmp = tempfile::tempdir().unwrap();
        let base = scry_base::paths::canonical(tmp.path()).unwrap();
        let ws = base.join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(ws.join("a.fake"), "alpha beta alpha\ngamma alpha\n").unwrap();
        let mut vars = json!({
            "FAKE_LSP_LOG": base.join("fake.log"),
            "FAKE_LSP_PID_FILE": base.join("fake.pid"),
        });
        for (k, v) in env.as_object().unwrap() {
            vars[k] = v.clone();
        }
        let config = json!({
            "autoDetect": false,
            "servers": {"fake": {"command": fake, "fileTypes": ["fake"], "env": vars}},
        });
        std::fs::write(base.join("config.json"), config.to_string()).unwrap();
        Some(Env {
            _tmp: tmp,
            base,
            ws,
        })
    }

    fn cmd(&self, args: &[&str]) -> Command {
        scry_in(&self.base, &self.ws, args)
    }

    fn scry(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    fn daemon_status(&self) -> Value {
        let out = self.scry(&["daemon", "status", "--json"]);
        assert!(out.status.success(), "{out:?}");
        serde_json::from_slice(&out.stdout).unwrap()
    }

    fn daemon_pid(&self) -> Option<u32> {
        self.daemon_status()["pid"].as_u64().map(|p| p as u32)
    }

    /// The pids of the daemon's servers.
    fn daemon_servers(&self) -> Vec<u32> {
        let s = self.daemon_status();
        let mut out = Vec::new();
        for w in s["workspaces"].as_array().into_iter().flatten() {
            for v in w["servers"].as_array().into_iter().flatten() {
                out.push(v["pid"].as_u64().unwrap() as u32);
            }
        }
        out
    }

    fn fake_log(&self) -> String {
        std::fs::read_to_string(self.base.join("fake.log")).unwrap_or_default()
    }

    fn fake_pid(&self) -> Option<u32> {
        std::fs::read_to_string(self.base.join("fake.pid"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
    }

    /// Start `scry mcp --http 127.0.0.1:0` (plus `extra`) on the workspace.
    fn http(&self, extra: &[&str]) -> Http {
        let mut args = vec!["mcp", "--http", "127.0.0.1:0"];
        args.extend_from_slice(extra);
        let mut child = self
            .cmd(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut err = BufReader::new(child.stderr.take().unwrap());
        // The start line (a warning may come first).
        let mut line = String::new();
        while !line.contains("over Streamable HTTP") {
            line.clear();
            let n = err.read_line(&mut line).expect("the start line");
            assert!(n > 0, "scry mcp --http ended before it served");
        }
        // Keep draining stderr so the server never blocks on it.
        std::thread::spawn(move || {
            let mut sink = String::new();
            let _ = err.read_to_string(&mut sink);
        });
        let addr = served_at(&line);
        let token_file = line.trim().rsplit(' ').next().unwrap();
        let token = std::fs::read_to_string(token_file)
            .unwrap_or_else(|e| panic!("{token_file}: {e} ({line})"))
            .trim()
            .to_string();
        let mut h = Http {
            child,
            addr,
            token,
            session: None,
        };
        h.initialize();
        h
    }
}

impl Http {
    /// Open a new MCP session and use it from now on; its id.
    fn initialize(&mut self) -> String {
        let h = self;
        h.session = None;
        let (head, _) = h.post(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "e2e", "version": "0"}}}));
        let session = head
            .lines()
            .find_map(|l| l.strip_prefix("mcp-session-id:"))
            .unwrap_or_else(|| panic!("no session in {head}"))
            .trim()
            .to_string();
        h.session = Some(session.clone());
        let (head, _) = h.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        assert!(head.starts_with("http/1.1 202"), "{head}");
        session
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        let out = self.scry(&["daemon", "status", "--json"]);
        let pid = serde_json::from_slice::<Value>(&out.stdout)
            .ok()
            .and_then(|v| v["pid"].as_u64())
            .map(|p| p as u32);
        let _ = self.scry(&["daemon", "stop"]);
        if let Some(p) = pid {
            kill(p, "KILL");
        }
    }
}

/// A running `scry mcp --http` and one MCP session on it.
struct Http {
    child: Child,
    addr: String,
    token: String,
    session: Option<String>,
}

impl Http {
    fn request(&self, body: &Value) -> TcpStream {
        let body = body.to_string();
        let mut s = TcpStream::connect(&self.addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let session = self
            .session
            .as_ref()
            .map(|id| format!("Mcp-Session-Id: {id}\r\nMcp-Protocol-Version: 2025-06-18\r\n"))
            .unwrap_or_default();
        write!(
            s,
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nAuthorization: Bearer {}\r\n{session}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.addr,
            self.token,
            body.len()
        )
        .unwrap();
        s
    }

    /// End the MCP session (`DELETE /mcp`); the status code.
    fn delete(&self) -> String {
        let mut s = TcpStream::connect(&self.addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        write!(
            s,
            "DELETE /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nMcp-Session-Id: {}\r\nConnection: close\r\n\r\n",
            self.addr,
            self.token,
            self.session.as_deref().unwrap_or_default()
        )
        .unwrap();
        let mut text = String::new();
        let _ = s.read_to_string(&mut text);
        text.lines().next().unwrap_or_default().to_string()
    }

    /// POST `body`, read to the end: the head (lower-cased) and the
    /// JSON-RPC messages.
    fn post(&self, body: &Value) -> (String, Vec<Value>) {
        let mut s = self.request(body);
        let mut text = String::new();
        s.read_to_string(&mut text).expect("the whole answer");
        mcp_http::answer(&text)
    }

    /// Call `lsp` with `args`; the answer's `result`.
    fn lsp(&self, id: i64, args: Value) -> Value {
        let (head, messages) = self.post(&call(id, args));
        assert!(head.starts_with("http/1.1 200"), "{head}");
        messages
            .into_iter()
            .find(|m| m["id"] == json!(id) && m.get("result").is_some())
            .unwrap_or_else(|| panic!("no result for {id}"))["result"]
            .clone()
    }
}

impl Drop for Http {
    fn drop(&mut self) {
        kill(self.child.id(), "TERM");
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(10) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn call(id: i64, args: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "lsp", "arguments": args}})
}

fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn an_http_session_and_a_cli_call_share_one_server_process() {
    let Some(env) = Env::fake(json!({})) else {
        return;
    };
    let http = env.http(&[]);
    let over_http = http.lsp(2, json!({"action": "symbols", "path": "a.fake"}));
    assert_eq!(over_http["isError"], json!(false), "{over_http}");
    let server = env.fake_pid().expect("the fake server started");
    let daemon = env.daemon_pid().expect("the daemon runs");
    assert_eq!(
        parent(server),
        Some(daemon),
        "the server is the daemon's, not the HTTP process's"
    );

    let cli = env.scry(&["symbols", "a.fake"]);
    assert!(cli.status.success(), "{cli:?}");
    assert_eq!(env.fake_pid(), Some(server), "the CLI used the same server");
    assert_eq!(env.daemon_servers(), [server], "one server for both");
    let s = env.daemon_status();
    assert!(s["clients"].as_u64().unwrap() >= 1, "{s}");
    // The HTTP session again: still that server.
    let again = http.lsp(3, json!({"action": "symbols", "path": "a.fake"}));
    assert_eq!(text(&again), text(&over_http));
    assert_eq!(env.fake_pid(), Some(server));

    // The MCP session ends: its daemon connection closes (the HTTP
    // server's own stays).
    let clients = || env.daemon_status()["clients"].as_u64().unwrap();
    // A `daemon status` connection just closed is counted until the daemon
    // reads its end: the fewest of a few reads is the sessions' count.
    let before = (0..3)
        .map(|_| {
            std::thread::sleep(Duration::from_millis(50));
            clients()
        })
        .min()
        .unwrap();
    let deleted = http.delete();
    assert!(deleted.contains(" 20"), "{deleted}");
    wait_until(
        "the session's daemon connection to close",
        Duration::from_secs(10),
        || clients() == before - 1,
    );
    assert!(alive(server), "the server outlives the session");
}

#[test]
fn no_daemon_keeps_http_in_process() {
    let Some(env) = Env::fake(json!({})) else {
        return;
    };
    let http = env.http(&["--no-daemon"]);
    let r = http.lsp(2, json!({"action": "symbols", "path": "a.fake"}));
    assert_eq!(r["isError"], json!(false), "{r}");
    let server = env.fake_pid().expect("the fake server started");
    assert_eq!(
        parent(server),
        Some(http.child.id()),
        "the server is the HTTP process's own"
    );
    assert_eq!(env.daemon_pid(), None, "no daemon was started");
    let status = http.lsp(3, json!({"action": "status"}));
    assert!(
        !text(&status).contains("scry daemon: not used"),
        "opting out is not a failure: {}",
        text(&status)
    );
}

#[test]
fn a_daemon_that_cannot_start_leaves_http_in_process_and_status_says_so() {
    let Some(env) = Env::fake(json!({})) else {
        return;
    };
    // The daemon directory is a file: no daemon can live there.
    std::fs::write(env.base.join("d"), "").unwrap();
    let http = env.http(&[]);
    let status = http.lsp(2, json!({"action": "status"}));
    assert_eq!(status["isError"], json!(false), "{status}");
    assert!(
        text(&status).contains("scry daemon: not used"),
        "{}",
        text(&status)
    );
    let r = http.lsp(3, json!({"action": "symbols", "path": "a.fake"}));
    assert_eq!(r["isError"], json!(false), "{r}");
    let server = env.fake_pid().expect("the fake server started");
    assert_eq!(parent(server), Some(http.child.id()));
}

#[test]
fn an_http_cancel_or_hang_up_reaches_the_server_through_the_daemon() {
    let Some(env) = Env::fake(json!({"FAKE_LSP_MODE": "slow", "FAKE_LSP_DELAY_MS": "60000"}))
    else {
        return;
    };
    let http = env.http(&[]);
    let definition = |id| {
        call(
            id,
            json!({"action": "definition", "path": "a.fake", "symbol": "alpha",
                "line": 2, "timeout_ms": 90000}),
        )
    };
    let count = |needle: &str| env.fake_log().matches(needle).count();

    // notifications/cancelled.
    let first = http.request(&definition(2));
    wait_until("the definition request", Duration::from_secs(30), || {
        count("\"textDocument/definition\"") == 1
    });
    let server = env.fake_pid().unwrap();
    assert_eq!(parent(server), env.daemon_pid(), "through the daemon");
    let (head, _) = http.post(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 2, "reason": "test"}}),
    );
    assert!(head.starts_with("http/1.1 202"), "{head}");
    wait_until("$/cancelRequest upstream", Duration::from_secs(10), || {
        count("$/cancelRequest") == 1
    });
    drop(first);

    // The client hangs up on a running call.
    let second = http.request(&definition(3));
    wait_until("the second request", Duration::from_secs(30), || {
        count("\"textDocument/definition\"") == 2
    });
    drop(second);
    wait_until(
        "$/cancelRequest upstream after the hang-up",
        Duration::from_secs(10),
        || count("$/cancelRequest") == 2,
    );

    // The session and its server carry on.
    let r = http.lsp(4, json!({"action": "symbols", "path": "a.fake"}));
    assert_eq!(r["isError"], json!(false), "{r}");
    assert_eq!(env.fake_pid(), Some(server));
}

#[test]
fn each_http_session_is_its_own_daemon_session_for_the_trust_notice() {
    let Some(env) = Env::fake(json!({})) else {
        return;
    };
    // An untrusted project setting: ignored, and said once per session.
    std::fs::write(
        env.ws.join(".scry.json"),
        r#"{"servers": {"fake": {"settings": {"fake": {"x": 1}}}}}"#,
    )
    .unwrap();
    let mut http = env.http(&[]);
    let symbols = json!({"action": "symbols", "path": "a.fake"});
    let a1 = http.lsp(2, symbols.clone());
    assert_eq!(a1["isError"], json!(false), "{a1}");
    assert!(text(&a1).contains("not trusted"), "{}", text(&a1));
    let a2 = http.lsp(3, symbols.clone());
    assert!(!text(&a2).contains("not trusted"), "once: {}", text(&a2));
    let a = http.session.clone().unwrap();
    let b = http.initialize();
    assert_ne!(a, b);
    let b1 = http.lsp(2, symbols.clone());
    assert!(
        text(&b1).contains("not trusted"),
        "another MCP session is told too: {}",
        text(&b1)
    );
    let server = env.fake_pid().unwrap();
    assert_eq!(
        env.daemon_servers(),
        [server],
        "one server for both sessions"
    );
}
