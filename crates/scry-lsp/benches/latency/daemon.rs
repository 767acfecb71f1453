//! The latency bench's routes through the built `scry`: `scry mcp` over
//! stdio (a child process, newline-delimited JSON-RPC), which answers
//! through the daemon it starts (or finds) in private directories, which
//! runs the engine and the server. The binary is `SCRY_BENCH_SCRY` when
//! set (an older build, for before/after figures), else this build's.
//! Under Callgrind both processes run under it (see `callgrind.rs`); else
//! [`Route::processes`] reads what the two processes spent on a block of
//! calls from `/proc` (CPU, time waiting for a core, context switches).

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
    /// The process ids of `scry mcp` and of its daemon.
    pub mcp_pid: u32,
    pub daemon_pid: u32,
    bin: PathBuf,
    base: PathBuf,
    ws: PathBuf,
    _tmp: tempfile::TempDir,
    /// The name of the daemon's Callgrind output (`daemon-TAG.PID.N`).
    pub tag: String,
}

/// The pid of the daemon running in `base`'s directories (0: none).
fn daemon_pid(bin: &Path, base: &Path, ws: &Path) -> u32 {
    command(bin, base, ws)
        .args(["daemon", "status", "--json"])
        .stdout(Stdio::piped())
        .output()
        .ok()
        .and_then(|o| serde_json::from_slice::<Value>(&o.stdout).ok())
        .and_then(|v| v["pid"].as_u64())
        .unwrap_or(0) as u32
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
            c.args(callgrind::prefix(&dir, "daemon", tag))
                .arg(&bin)
                .args(["daemon", "--foreground"])
                .current_dir(ws)
                .envs(private_env(&base))
                .env_remove("SCRY_NO_DAEMON")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            let child = c.spawn().expect("valgrind scry daemon");
            // Until it answers (`daemon status` succeeds with no daemon
            // too: its pid says one runs), so that `scry mcp` finds it and
            // starts no other.
            let t = Instant::now();
            while t.elapsed() < Duration::from_secs(120) && daemon_pid(&bin, &base, ws) == 0 {
                std::thread::sleep(Duration::from_millis(500));
            }
            child
        });
        // Under Callgrind, `scry mcp` too (Valgrind runs it in its own
        // process: the child's pid is the counted process).
        let mut mcp = match callgrind::dir() {
            Some(dir) => {
                let mut c = tokio::process::Command::new("valgrind");
                c.args(callgrind::prefix(&dir, "mcp", tag)).arg(&bin);
                c
            }
            None => tokio::process::Command::new(&bin),
        };
        let mut mcp = mcp
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
        let mcp_pid = mcp.id().expect("scry mcp runs");
        let pipe = LineClient::new(
            Box::new(mcp.stdout.take().unwrap()),
            Box::new(mcp.stdin.take().unwrap()),
        );
        let client = McpClient::over(pipe).await;
        let daemon_pid = match &valgrind {
            Some(v) => v.id(),
            None => 0,
        };
        let mut route = Route {
            client,
            mcp,
            valgrind,
            mcp_pid,
            daemon_pid,
            bin,
            base,
            ws: ws.to_path_buf(),
            _tmp: tmp,
            tag: tag.to_string(),
        };
        if route.valgrind.is_some() {
            // The daemon that answers is the one counted: say so when it
            // is another (Valgrind's came up too late and lost the lock).
            route.daemon_pid = 0;
            if route.find_daemon() != daemon_pid {
                eprintln!(
                    "{tag}: the daemon answering is not the one under Callgrind; its counts are missing"
                );
            }
        }
        route
    }

    /// One `lsp` tools/call; the reply's `result`.
    pub async fn ask(&mut self, args: &Value) -> Value {
        let r = self
            .client
            .call("tools/call", json!({"name": "lsp", "arguments": args}))
            .await;
        r["result"].clone()
    }

    /// The daemon's pid, from `scry daemon status --json` once a call
    /// started it (0 when none answers).
    pub fn find_daemon(&mut self) -> u32 {
        if self.daemon_pid == 0 {
            self.daemon_pid = daemon_pid(&self.bin, &self.base, &self.ws);
        }
        self.daemon_pid
    }

    /// What `scry mcp` and the daemon spent so far (see [`Spent`]).
    pub fn processes(&self) -> (Spent, Spent) {
        (Spent::of(self.mcp_pid), Spent::of(self.daemon_pid))
    }

    /// Under Callgrind: dump both processes' counters, described
    /// `TAG|OP|PHASE`.
    pub fn dump(&self, op: &str, phase: &str) {
        let Some(_) = callgrind::dir() else { return };
        let what = format!("{}|{op}|{phase}", self.tag);
        callgrind::dump_process(self.mcp_pid, &what);
        callgrind::dump_process(self.daemon_pid, &what);
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

/// What a process spent so far, summed over its threads (those alive now:
/// scry's runtimes keep theirs), from `/proc/PID/task/*/schedstat` and
/// `status`. Zero where `/proc` cannot be read (not Linux).
#[derive(Clone, Copy, Default, Debug)]
pub struct Spent {
    /// On a CPU.
    pub cpu: Duration,
    /// Runnable but waiting for a core (what a loaded machine adds at
    /// every wake-up).
    pub waiting: Duration,
    /// Context switches, voluntary (a thread went to sleep: each task or
    /// thread hop wakes one) and not.
    pub switches: u64,
}

impl Spent {
    pub fn of(pid: u32) -> Spent {
        let mut s = Spent::default();
        if pid == 0 {
            return s;
        }
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            return s;
        };
        for t in tasks.flatten() {
            if let Ok(text) = std::fs::read_to_string(t.path().join("schedstat")) {
                let mut f = text
                    .split_whitespace()
                    .map(|n| n.parse::<u64>().unwrap_or(0));
                s.cpu += Duration::from_nanos(f.next().unwrap_or(0));
                s.waiting += Duration::from_nanos(f.next().unwrap_or(0));
            }
            if let Ok(text) = std::fs::read_to_string(t.path().join("status")) {
                s.switches += text
                    .lines()
                    .filter(|l| l.contains("ctxt_switches:"))
                    .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
                    .sum::<u64>();
            }
        }
        s
    }

    /// What was spent since `before`.
    pub fn since(self, before: Spent) -> Spent {
        Spent {
            cpu: self.cpu.saturating_sub(before.cpu),
            waiting: self.waiting.saturating_sub(before.waiting),
            switches: self.switches.saturating_sub(before.switches),
        }
    }

    pub fn add(&mut self, other: Spent) {
        self.cpu += other.cpu;
        self.waiting += other.waiting;
        self.switches += other.switches;
    }
}

/// Wait (at most `within`) until the processes below `roots` (the bench's
/// servers and `scry mcp`, the daemon's servers) use less than 5% of a
/// core over a second, the roots themselves not counted; whether they did.
pub async fn quiet(roots: &[u32], within: Duration) -> bool {
    let deadline = Instant::now() + within;
    let mut before = cpu_below(roots);
    while Instant::now() < deadline {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let now = cpu_below(roots);
        if now.saturating_sub(before) < Duration::from_millis(50) {
            return true;
        }
        before = now;
    }
    false
}

/// The CPU time used so far by the processes below `roots` (living ones),
/// from `/proc/*/stat`.
fn cpu_below(roots: &[u32]) -> Duration {
    let tick = 100u64; // USER_HZ on Linux
    let mut parent = std::collections::HashMap::new();
    let mut cpu = std::collections::HashMap::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // After the command's closing parenthesis: state, ppid, … utime
        // (14th field), stime (15th).
        let Some(rest) = stat.rsplit_once(')').map(|r| r.1) else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        let (Some(ppid), Some(u), Some(s)) = (
            f.get(1).and_then(|v| v.parse::<u32>().ok()),
            f.get(11).and_then(|v| v.parse::<u64>().ok()),
            f.get(12).and_then(|v| v.parse::<u64>().ok()),
        ) else {
            continue;
        };
        parent.insert(pid, ppid);
        cpu.insert(pid, u + s);
    }
    let below = |mut p: u32| {
        let mut hops = 0;
        while let Some(&pp) = parent.get(&p) {
            if roots.contains(&pp) {
                return true;
            }
            p = pp;
            hops += 1;
            if pp <= 1 || hops > 64 {
                break;
            }
        }
        false
    };
    let ticks: u64 = cpu
        .iter()
        .filter(|(pid, _)| !roots.contains(pid) && below(**pid))
        .map(|(_, t)| t)
        .sum();
    Duration::from_millis(ticks * 1000 / tick)
}
