//! `scry daemon [status [--json] [--root DIR]] | stop [--timeout-ms N] |
//! --foreground`: the daemon's own commands (the status worded by
//! scry-render, `daemon_status_text`/`daemon_status_json`). Questions reach
//! the daemon through `scry_daemon::answer::Daemon` (see `main::answer`),
//! not here.
//! Exit status: 0 done, 1 error, 2 bad usage.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Args, Parser, Subcommand};
use scry_daemon::client::{self, ConnectError, Connection};
use scry_daemon::paths::Files;

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
        Some(r) => {
            let Some(r) =
                crate::argv::workspace_dir(&std::env::current_dir().unwrap_or_default().join(r))
            else {
                return crate::argv::not_a_directory("daemon", r);
            };
            Some(r)
        }
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
            let v = scry_render::daemon_status_json(&s);
            println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
            ExitCode::SUCCESS
        }
        Ok(s) => {
            print!("{}", scry_render::daemon_status_text(&s, only.as_deref()));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("scry daemon: {e}");
            ExitCode::from(1)
        }
    }
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
    let deadline = Instant::now() + wait;
    loop {
        if !scry_base::platform::process::running(pid) {
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
