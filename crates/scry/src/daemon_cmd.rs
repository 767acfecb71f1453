//! The CLI's side of the scry daemon: `scry daemon status|stop|--foreground`,
//! and [`ask`], which sends one question to the daemon (starting it when
//! none runs) and says when it cannot be used, so the caller answers
//! in-process instead. A daemon that dies during a call gives one
//! `DAEMON_RESTARTED` error; a read-only call is first retried once on a
//! new daemon.

use std::path::Path;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use scry_daemon::client::{self, ConnectError, Connection};
use scry_daemon::paths::Files;
use scry_daemon::proto::{DaemonStatus, Reply};
use scry_ops::{OpError, Query};
use scry_workspace::procmem::describe_usage;

use crate::progress::Progress;

/// What asking the daemon gave.
pub enum Asked {
    /// The answer, and the pid of the daemon that gave it.
    Reply(Reply, u32),
    /// The call was lost with the daemon.
    Error(OpError),
    /// The daemon cannot be used (why): answer in-process.
    Unavailable(String),
}

/// Ask `query` through the daemon.
pub async fn ask(cwd: &Path, root: &Path, query: &Query, quiet: bool) -> Asked {
    let files = match Files::locate() {
        Ok(f) => f,
        Err(e) => return Asked::Unavailable(e),
    };
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => return Asked::Unavailable(format!("cannot find the scry executable: {e}")),
    };
    let session = client::session_id("cli");
    let bound = client::start_bound();
    let mut conn = match client::connect_or_start(&files, &session, &exe, bound).await {
        Ok(c) => c,
        Err(e) => return Asked::Unavailable(e),
    };
    let line: Arc<Mutex<Option<String>>> = Arc::default();
    let shown = line.clone();
    let progress = Progress::start(
        move || shown.lock().unwrap_or_else(|e| e.into_inner()).clone(),
        quiet,
    );
    let set = |l: Option<String>| *line.lock().unwrap_or_else(|e| e.into_inner()) = l;
    let first = conn.call(cwd, root, query, set).await;
    let result = match first {
        Ok(r) => Ok((r, conn.pid)),
        Err(lost) if !query.writes() => {
            tracing::info!("{lost}; asking a new daemon once");
            match client::connect_or_start(&files, &session, &exe, bound).await {
                Ok(mut again) => {
                    let pid = again.pid;
                    again
                        .call(cwd, root, query, set)
                        .await
                        .map(|r| (r, pid))
                        .map_err(|e| (pid, e))
                }
                Err(e) => Err((conn.pid, client::Lost(e))),
            }
        }
        Err(lost) => Err((conn.pid, lost)),
    };
    if let Some(p) = progress {
        p.finish();
    }
    match result {
        Ok((r, pid)) => Asked::Reply(r, pid),
        Err((pid, lost)) => {
            let mut msg = scry_ops::msg!(
                format!("the scry daemon (pid {pid}) stopped during the call ("),
                foreign(lost.0),
                "); the next call starts a new one"
            );
            if query.writes() {
                msg = msg.text(
                    "; an edit it left half-written is rolled back by the next call (which says so); \
                     `scry undo --dry-run` shows the last applied one",
                );
            }
            Asked::Error(OpError::DaemonRestarted(msg))
        }
    }
}

const USAGE: &str = "usage: scry daemon [status [--json] | stop | --foreground]";

/// `scry daemon …`.
pub fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(2).collect();
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    let json = words.contains(&"--json");
    let sub: Vec<&str> = words.iter().copied().filter(|w| *w != "--json").collect();
    crate::init_tracing();
    let runtime = match crate::runtime(if sub == ["--foreground"] { 4 } else { 1 }) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let files = match Files::locate() {
        Ok(f) => f,
        Err(e) => {
            eprintln!("scry daemon: {e}");
            return ExitCode::from(1);
        }
    };
    let code = match sub.as_slice() {
        ["--foreground"] => runtime.block_on(foreground(files)),
        [] | ["status"] => runtime.block_on(status(files, json)),
        ["stop"] => runtime.block_on(stop(files)),
        ["--help"] | ["-h"] => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("scry: {USAGE}");
            ExitCode::from(2)
        }
    };
    runtime.shutdown_timeout(Duration::from_secs(1));
    code
}

async fn foreground(files: Files) -> ExitCode {
    match scry_daemon::server::run(files, scry_daemon::server::idle_from_env()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(scry_daemon::server::StartError::AlreadyRunning(lock)) => {
            eprintln!(
                "scry daemon: another daemon holds {}; not starting a second one",
                lock.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("scry daemon: {e}");
            ExitCode::from(1)
        }
    }
}

async fn connect(files: &Files) -> Result<Option<Connection>, String> {
    match Connection::connect(files, &client::session_id("cli")).await {
        Ok(c) => Ok(Some(c)),
        Err(ConnectError::Absent(_)) => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

async fn status(files: Files, json: bool) -> ExitCode {
    let mut conn = match connect(&files).await {
        Ok(Some(c)) => c,
        Ok(None) => {
            if json {
                println!(
                    "{}",
                    serde_json::json!({"running": false, "socket": files.socket})
                );
            } else {
                println!(
                    "no scry daemon is running (socket {}); the next call starts one",
                    files.socket.display()
                );
            }
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("scry daemon: {e}");
            return ExitCode::from(1);
        }
    };
    match conn.status().await {
        Ok(s) if json => {
            println!("{}", serde_json::to_string_pretty(&s).unwrap_or_default());
            ExitCode::SUCCESS
        }
        Ok(s) => {
            print!("{}", render_status(&s));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("scry daemon: {e}");
            ExitCode::from(1)
        }
    }
}

fn duration(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// `scry daemon status` as text.
pub fn render_status(s: &DaemonStatus) -> String {
    let mut out = format!(
        "scry daemon {} (protocol {}): pid {}, up {}, {} client{} connected\nsocket: {}\n",
        s.version,
        s.protocol,
        s.pid,
        duration(s.uptime_ms),
        s.clients,
        if s.clients == 1 { "" } else { "s" },
        s.socket.display()
    );
    if s.workspaces.is_empty() {
        out.push_str("no workspace yet\n");
    }
    for w in &s.workspaces {
        out.push_str(&format!(
            "{} ({} client{})\n",
            w.root.display(),
            w.clients,
            if w.clients == 1 { "" } else { "s" }
        ));
        if w.servers.is_empty() {
            out.push_str("  no server running\n");
        }
        for v in &w.servers {
            let root = if v.root == w.root {
                String::new()
            } else {
                format!(" root {}", v.root.display())
            };
            out.push_str(&format!(
                "  {} pid {} rss {} idle {} up {}{root}\n",
                v.id,
                v.pid.map_or("?".into(), |p| p.to_string()),
                v.rss_kib
                    .map_or("?".into(), |k| describe_usage(k, v.processes, v.cap_kib)),
                duration(v.idle_ms),
                duration(v.uptime_ms),
            ));
            if !v.program.as_os_str().is_empty() {
                out.push_str(&format!("    runs {}\n", v.program.display()));
            }
            if !v.clients.is_empty() {
                out.push_str(&format!("    clients: {}\n", v.clients.join(", ")));
            }
        }
        for m in &w.memory_events {
            out.push_str(&format!("  memory: {m}\n"));
        }
    }
    out
}

async fn stop(files: Files) -> ExitCode {
    let mut conn = match connect(&files).await {
        Ok(Some(c)) => c,
        Ok(None) => {
            println!("no scry daemon is running");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("scry daemon: {e}");
            return ExitCode::from(1);
        }
    };
    let pid = match conn.stop().await {
        Ok(p) => p,
        Err(e) => {
            eprintln!("scry daemon: {e}");
            return ExitCode::from(1);
        }
    };
    drop(conn);
    // Wait for it (and so its servers) to be gone.
    let proc = std::path::PathBuf::from(format!("/proc/{pid}"));
    for _ in 0..300 {
        if !proc.exists() || is_zombie(pid) {
            println!("scry daemon (pid {pid}) stopped");
            return ExitCode::SUCCESS;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    eprintln!("scry daemon: pid {pid} is still running after 15 s");
    ExitCode::from(1)
}

fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(") ").map(|(_, r)| r.starts_with('Z')))
        .unwrap_or(false)
}
