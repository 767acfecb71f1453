//! Helpers for the MCP tests: workspaces (fixture copies, the fake server),
//! an in-process server over a duplex pipe, and a raw JSON-RPC client for
//! what rmcp's client will not do (duplicate ids, explicit cancels).

#![allow(dead_code)]

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use scry_mcp::{Options, ScryMcp};
use scry_ops::Engine;
use scry_workspace::Workspace;
use scry_workspace::config::Config;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

pub const WAIT: Duration = Duration::from_secs(20);

#[allow(unused_imports)] // each test file uses some
pub use scry_testkit::{fake_lsp, servers_required, untimed};

/// Whether a command is installed (else skip, or fail when required).
pub fn have(command: &str, test: &str) -> bool {
    if scry_workspace::command::resolve_command(command, Path::new("/")).is_some() {
        return true;
    }
    scry_testkit::skip_or_fail(format_args!("{test}: {command} is not installed"));
    false
}

/// A temporary workspace with files and an optional `.scry.json`, and an
/// engine over it whose configuration is exactly the built-ins plus that
/// file (no user configuration from the environment).
pub struct Ws {
    pub dir: tempfile::TempDir,
    pub root: PathBuf,
    pub engine: Engine,
}

/// A temp dir holding the workspace root (`<tmp>/ws`) and, beside it, the
/// edit journal (`<tmp>/journal`), so that no test writes to the user's
/// state directory.
fn temp_root() -> (tempfile::TempDir, PathBuf) {
    let (dir, base) = scry_testkit::canonical_tempdir();
    let root = base.join("ws");
    std::fs::create_dir_all(&root).unwrap();
    (dir, root)
}

pub fn workspace(config: Option<Value>, files: &[(&str, &str)]) -> Ws {
    let (dir, root) = temp_root();
    for (name, text) in files {
        let p = root.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    engine_for(dir, root, config)
}

fn engine_for(dir: tempfile::TempDir, root: PathBuf, config: Option<Value>) -> Ws {
    let mut layers = Vec::new();
    if let Some(c) = config {
        let path = root.join(".scry.json");
        let text = serde_json::to_string_pretty(&c).unwrap();
        std::fs::write(&path, &text).unwrap();
        layers.push((path, text));
    }
    let cfg = Config::from_layers(&layers).expect("valid config");
    let ws = Workspace::with_config(root.clone(), cfg);
    let engine = Engine::new(Arc::new(ws));
    engine.set_journal_dir(Some(root.parent().unwrap().join("journal")));
    Ws { dir, root, engine }
}

/// A copy of `fixtures/<name>` with the built-in catalogue.
pub fn fixture(name: &str) -> Ws {
    let (dir, root) = temp_root();
    scry_testkit::copy_fixture_to(name, &root);
    engine_for(dir, root, None)
}

/// A workspace served by the fake server in `mode` for `*.fake` files,
/// with its log at `<root>/fake.log`. `None` when the binary is missing.
pub fn fake_workspace(test: &str, mode: &str, extra_env: &[(&str, &str)]) -> Option<Ws> {
    let bin = fake_lsp(test)?;
    let (dir, root) = temp_root();
    let mut env = serde_json::Map::new();
    env.insert("FAKE_LSP_MODE".into(), json!(mode));
    env.insert(
        "FAKE_LSP_LOG".into(),
        json!(root.join("fake.log").to_string_lossy()),
    );
    for (k, v) in extra_env {
        env.insert((*k).into(), json!(v));
    }
    std::fs::write(
        root.join("a.fake"),
        "alpha beta\nalpha gamma\nlet delta = alpha\n",
    )
    .unwrap();
    let config = json!({
        "autoDetect": false,
        "servers": {
            "fake": {
                "command": bin.to_string_lossy(),
                "fileTypes": ["fake"],
                "languages": ["Fake"],
                "env": env,
            }
        }
    });
    Some(engine_for(dir, root, Some(config)))
}

/// The messages the fake server received, one JSON value per line.
pub fn fake_log(root: &Path) -> Vec<Value> {
    std::fs::read_to_string(root.join("fake.log"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

pub fn fake_count(root: &Path, method: &str) -> usize {
    fake_log(root)
        .iter()
        .filter(|m| m["method"] == method)
        .count()
}

/// Poll `cond` until it holds (panics after [`WAIT`]).
pub async fn until(what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        if start.elapsed() > WAIT {
            panic!("timed out waiting for {what}");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Serve `server` in-process; returns rmcp's client.
pub async fn rmcp_client(
    server: ScryMcp,
) -> (
    RunningService<RoleClient, ()>,
    tokio::task::JoinHandle<Result<(), scry_mcp::ServeError>>,
) {
    let (ours, theirs) = tokio::io::duplex(1 << 20);
    let (r, w) = tokio::io::split(theirs);
    let task = tokio::spawn(scry_mcp::serve(server, r, w));
    let client = ().serve(ours).await.expect("MCP handshake");
    (client, task)
}

pub fn server(ws: &Ws, read_only: bool) -> ScryMcp {
    ScryMcp::new(
        ws.engine.clone(),
        Options {
            read_only,
            ..Options::default()
        },
    )
}

/// A JSON-RPC client writing raw lines, for what rmcp's client hides.
pub struct Raw {
    pub write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    rx: mpsc::UnboundedReceiver<Value>,
    /// Messages read but not yet asked for.
    pub seen: VecDeque<Value>,
    pub task: tokio::task::JoinHandle<Result<(), scry_mcp::ServeError>>,
}

impl Raw {
    /// Serve `server` and run the handshake.
    pub async fn start(server: ScryMcp) -> Raw {
        let (ours, theirs) = tokio::io::duplex(1 << 20);
        let (sr, sw) = tokio::io::split(theirs);
        let task = tokio::spawn(scry_mcp::serve(server, sr, sw));
        let (read, write) = tokio::io::split(ours);
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut lines = BufReader::new(read).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let v: Value = serde_json::from_str(&line).expect("server wrote JSON");
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        let mut raw = Raw {
            write,
            rx,
            seen: VecDeque::new(),
            task,
        };
        raw.send(json!({
            "jsonrpc": "2.0", "id": "init", "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw-test", "version": "0"}
            }
        }))
        .await;
        let init = raw.response(json!("init")).await;
        assert!(init.get("result").is_some(), "initialize failed: {init}");
        raw.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        raw
    }

    pub async fn send(&mut self, v: Value) {
        let mut line = serde_json::to_string(&v).unwrap();
        line.push('\n');
        self.write.write_all(line.as_bytes()).await.unwrap();
        self.write.flush().await.unwrap();
    }

    /// Send `tools/call`.
    pub async fn call(&mut self, id: Value, tool: &str, args: Value) {
        self.call_with_meta(id, tool, args, None).await
    }

    pub async fn call_with_meta(
        &mut self,
        id: Value,
        tool: &str,
        args: Value,
        meta: Option<Value>,
    ) {
        let mut params = json!({"name": tool, "arguments": args});
        if let Some(m) = meta {
            params["_meta"] = m;
        }
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}))
            .await
    }

    pub async fn cancel(&mut self, id: Value) {
        self.send(json!({
            "jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": id, "reason": "test"}
        }))
        .await
    }

    async fn next(&mut self, deadline: Duration) -> Option<Value> {
        tokio::time::timeout(deadline, self.rx.recv())
            .await
            .ok()
            .flatten()
    }

    /// The next response (result or error) with this id.
    pub async fn response(&mut self, id: Value) -> Value {
        self.try_response(id.clone(), WAIT)
            .await
            .unwrap_or_else(|| panic!("no response for id {id}"))
    }

    pub async fn try_response(&mut self, id: Value, within: Duration) -> Option<Value> {
        if let Some(i) = self
            .seen
            .iter()
            .position(|m| m.get("id") == Some(&id) && m.get("method").is_none())
        {
            return self.seen.remove(i);
        }
        let start = Instant::now();
        loop {
            let left = within.checked_sub(start.elapsed())?;
            let m = self.next(left).await?;
            if m.get("id") == Some(&id) && m.get("method").is_none() {
                return Some(m);
            }
            self.seen.push_back(m);
        }
    }

    /// Everything that arrived within `within`.
    pub async fn drain(&mut self, within: Duration) -> Vec<Value> {
        let start = Instant::now();
        while let Some(left) = within.checked_sub(start.elapsed()) {
            match self.next(left).await {
                Some(m) => self.seen.push_back(m),
                None => break,
            }
        }
        self.seen.drain(..).collect()
    }
}

/// `result` of a tools/call response.
pub fn result(resp: &Value) -> &Value {
    resp.get("result")
        .unwrap_or_else(|| panic!("not a result: {resp}"))
}

pub fn is_error(resp: &Value) -> bool {
    result(resp)["isError"] == json!(true)
}

pub fn error_code(resp: &Value) -> String {
    assert!(is_error(resp), "expected isError: {resp}");
    result(resp)["structuredContent"]["error"]["code"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

pub fn text(resp: &Value) -> String {
    result(resp)["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}
