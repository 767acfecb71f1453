//! The latency bench's routes through the built `scry`: `scry mcp` over
//! stdio (a child process, newline-delimited JSON-RPC), which answers
//! through the daemon it starts (or finds) in private directories, which
//! runs the engine and the server. The binary is `SCRY_BENCH_SCRY` when
//! set (an older build, for before/after figures), else this build's.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{LineClient, McpClient, callgrind};

/// The `scry` binary the routes through the daemon run.
pub fn scry_bin() -> PathBuf {
    std::env::var_os("SCRY_BENCH_SCRY")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_scry")))
}

/// The variables that keep a `scry` run in the private directories under
/// `base` (its own daemon, state, logs, cache and no user configuration),
/// the daemon allowed.
pub fn private_env(base: &Path) -> Vec<(&'static str, PathBuf)> {
    vec![
        ("SCRY_DAEMON_DIR", base.join("d")),
        ("SCRY_STATE_DIR", base.join("state")),
        ("SCRY_LOG_DIR", base.join("logs")),
        ("SCRY_CACHE_DIR", base.join("cache")),
        ("SCRY_CONFIG", base.join("config.json")),
        ("SCRY_DAEMON_START_MS", PathBuf::from("60000")),
    ]
}

/// `scry mcp` in `ws`, through a daemon of its own.
pub struct Route {
    pub client: McpClient,
    mcp: tokio::process::Child,
    /// The daemon run under Callgrind (instruction counts), if it is.
    valgrind: Option<std::process::Child>,
    bin: PathBuf,
    base: PathBuf,
    ws: PathBuf,
    _tmp: tempfile::TempDir,
    /// The name of the daemon's Callgrind output (`daemon-TAG.PID.N`).
    pub tag: String,
}

fn command(bin: &Path, base: &Path, ws: &Path) -> std::process::Command {
    let mut c = std::process::Command::new(bin);
    c.current_dir(ws)
        .envs(private_env(base))
        .env_remove("SCRY_NO_DAEMON")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    c
}

impl Route {
    /// Start `scry mcp` in `ws` (its daemon is started on the first call;
    /// under Callgrind, started here first).
    pub async fn start(ws: &Path, tag: &str) -> Route {
        let tmp = tempfile::tempdir().expect("private dirs");
        let base = scry_base::paths::canonical(tmp.path()).unwrap();
        std::fs::write(base.join("config.json"), "{}").unwrap();
        let bin = scry_bin();
        let valgrind = callgrind::dir().map(|dir| {
            let mut c = std::process::Command::new("valgrind");
            c.args(callgrind::daemon_prefix(&dir, tag))
                .arg(&bin)
                .args(["daemon", "--foreground"])
                .current_dir(ws)
                .envs(private_env(&base))
                .env_remove("SCRY_NO_DAEMON")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            let child = c.spawn().expect("valgrind scry daemon");
            let t = Instant::now();
            while t.elapsed() < Duration::from_secs(120) {
                let ok = command(&bin, &base, ws)
                    .args(["daemon", "status"])
                    .status()
                    .is_ok_and(|s| s.success());
                if ok {
                    break;
                }
                std::thread::sleep(Duration::from_millis(500));
            }
            child
        });
        let mut mcp = tokio::process::Command::new(&bin)
            .arg("mcp")
            .current_dir(ws)
            .envs(private_env(&base))
            .env_remove("SCRY_NO_DAEMON")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("scry mcp");
        let pipe = LineClient::new(
            Box::new(mcp.stdout.take().unwrap()),
            Box::new(mcp.stdin.take().unwrap()),
        );
        let client = McpClient::over(pipe).await;
        Route {
            client,
            mcp,
            valgrind,
            bin,
            base,
            ws: ws.to_path_buf(),
            _tmp: tmp,
            tag: tag.to_string(),
        }
    }

    /// One `lsp` tools/call; the reply's `result`.
    pub async fn ask(&mut self, args: &Value) -> Value {
        let r = self
            .client
            .call("tools/call", json!({"name": "lsp", "arguments": args}))
            .await;
        r["result"].clone()
    }

    /// `scry daemon status` (under Callgrind: a dump of the daemon's
    /// counters, the delimiter of a measured block).
    pub fn daemon_status(&self) {
        let _ = command(&self.bin, &self.base, &self.ws)
            .args(["daemon", "status"])
            .status();
    }

    /// Stop `scry mcp` and the daemon (a Callgrind daemon is waited for,
    /// so that its last dump is written).
    pub async fn stop(mut self) {
        let _ = self.mcp.kill().await;
        let _ = command(&self.bin, &self.base, &self.ws)
            .args(["daemon", "stop"])
            .status();
        if let Some(mut v) = self.valgrind.take() {
            let t = Instant::now();
            while v.try_wait().ok().flatten().is_none() && t.elapsed() < Duration::from_secs(60) {
                std::thread::sleep(Duration::from_millis(200));
            }
            let _ = v.kill();
        }
    }
}
