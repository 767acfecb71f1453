//! `scry daemon [status [--json] [--root DIR]] | stop [--timeout-ms N] |
//! --foreground`: the daemon's own commands. Questions reach the daemon
//! through `scry_daemon::answer::Daemon` (see `main::answer`), not here.
//! Exit status: 0 done, 1 error, 2 bad usage.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Args, Parser, Subcommand};
use scry_daemon::client::{self, ConnectError, Connection};
use scry_daemon::paths::Files;
use scry_daemon::proto::DaemonStatus;
use scry_render::describe_usage;

#[derive(Parser, Debug)]
#[command(
    name = "scry daemon",
    version,
    about = "The per-user scry daemon that keeps language servers warm for every client: \
             its status (the default), stop it, or run it in this process.",
    args_conflicts_with_subcommands = true,
    after_help = "Questions start the daemon when none runs (--no-daemon or SCRY_NO_DAEMON=1: \
                  answer in-process instead); it stops by itself when idle."
)]
struct DaemonCli {
    #[command(subcommand)]
    sub: Option<Sub>,
    /// Run the daemon in this process (what a client starts, detached).
    #[arg(long, conflicts_with_all = ["json", "root"])]
    foreground: bool,
    #[command(flatten)]
    status: StatusArgs,
}

#[derive(Subcommand, Debug)]
enum Sub {
    /// The daemon's workspaces, servers, memory and clients (the default).
    Status(StatusArgs),
    /// Stop the daemon and its servers, and wait until they are gone.
    Stop(StopArgs),
}

#[derive(Args, Debug)]
struct StatusArgs {
    /// Print structured JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Only this workspace's servers (default: every workspace).
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct StopArgs {
    /// How long to wait for the daemon and its servers to exit, in
    /// milliseconds.
    #[arg(long = "timeout-ms", value_name = "N", default_value_t = 15_000,
          value_parser = crate::argv::positive_number)]
    timeout_ms: u64,
}

/// `scry daemon …`.
pub fn main() -> ExitCode {
    let args =
        std::iter::once(std::ffi::OsString::from("scry daemon")).chain(std::env::args_os().skip(2));
    let cli: DaemonCli = match crate::argv::parse(args) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let (stop_wait, status_args) = match cli.sub {
        Some(Sub::Stop(a)) => (Some(Duration::from_millis(a.timeout_ms)), None),
        Some(Sub::Status(a)) => (None, Some(a)),
        None if cli.foreground => (None, None),
        None => (None, Some(cli.status)),
    };
    // `--root` names a workspace as the daemon keys it: canonical.
    let only = match status_args.as_ref().and_then(|a| a.root.as_ref()) {
        None => None,
        Some(r) => match std::env::current_dir()
            .unwrap_or_default()
            .join(r)
            .canonicalize()
        {
            Ok(r) if r.is_dir() => Some(r),
            _ => {
                eprintln!(
                    "scry daemon: workspace root {} is not a directory (see scry daemon --help)",
                    r.display()
                );
                return ExitCode::from(2);
            }
        },
    };
    crate::init_tracing();
    // The daemon: a worker per core, at most 4 (more workers than cores
    // only wake each other to steal a call's next step).
    let workers = std::thread::available_parallelism().map_or(4, |n| n.get().min(4));
    let runtime = match crate::runtime(if cli.foreground { workers } else { 1 }) {
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
    let code = match (stop_wait, status_args) {
        (Some(wait), _) => runtime.block_on(stop(files, wait)),
        (None, Some(a)) => runtime.block_on(status(files, a.json, only)),
        (None, None) => runtime.block_on(foreground(files)),
    };
    runtime.shutdown_timeout(Duration::from_secs(1));
    code
}

async fn foreground(files: Files) -> ExitCode {
    match scry_daemon::server::lifecycle::run(
        files,
        scry_daemon::server::lifecycle::idle_from_env(),
    )
    .await
    {
        Ok(()) => ExitCode::SUCCESS,
        Err(scry_daemon::server::socket::StartError::AlreadyRunning(lock)) => {
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

async fn status(files: Files, json: bool, only: Option<PathBuf>) -> ExitCode {
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
    let status = conn.status().await.map(|mut s| {
        if let Some(root) = &only {
            s.workspaces.retain(|w| &w.root == root);
        }
        s
    });
    match status {
        Ok(s) if json => {
            println!("{}", serde_json::to_string_pretty(&s).unwrap_or_default());
            ExitCode::SUCCESS
        }
        Ok(s) => {
            let mut text = render_status(&s);
            if let Some(root) = only.as_ref().filter(|_| s.workspaces.is_empty()) {
                let none = format!("no server for {} in this daemon\n", root.display());
                text = text.replacen("no workspace yet\n", &none, 1);
            }
            print!("{text}");
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

async fn stop(files: Files, wait: Duration) -> ExitCode {
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
    let deadline = Instant::now() + wait;
    loop {
        if !proc.exists() || is_zombie(pid) {
            println!("scry daemon (pid {pid}) stopped");
            return ExitCode::SUCCESS;
        }
        if Instant::now() >= deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    eprintln!(
        "scry daemon: pid {pid} is still running after {} ms (--timeout-ms)",
        wait.as_millis()
    );
    ExitCode::from(1)
}

fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(") ").map(|(_, r)| r.starts_with('Z')))
        .unwrap_or(false)
}
