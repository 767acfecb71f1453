//! `scry daemon status|stop|--foreground`: the daemon's own commands.
//! Questions reach the daemon through `scry_daemon::answer::Daemon` (see
//! `main::answer`), not here.

use std::process::ExitCode;
use std::time::Duration;

use scry_daemon::client::{self, ConnectError, Connection};
use scry_daemon::paths::Files;
use scry_daemon::proto::DaemonStatus;
use scry_workspace::procmem::describe_usage;

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
