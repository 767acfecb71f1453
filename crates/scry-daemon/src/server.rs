//! The daemon process: one per user and scry version ([`crate::paths`]).
//! It holds one [`Engine`] per canonical workspace root and configuration
//! environment (the call's [`scry_workspace::env::CallEnv::config_hash`]:
//! `HOME`, the XDG directories, `SCRY_*`) — so one pool of language servers
//! per workspace, shared by every client, each server keyed by the binary
//! the client's `PATH` resolves and the environment it runs with (see
//! `scry_workspace::pool`) — and answers [`crate::proto`] frames on its
//! Unix socket. Each call is answered inside its client's environment
//! ([`scry_workspace::env::scope`]): configuration discovery, command
//! lookup and server start read the call's variables, not the daemon's.
//!
//! Invariants:
//! - One daemon per socket: the lock file is `flock`ed for the daemon's
//!   life (the kernel releases it when the process dies, so a lock left by
//!   a killed daemon is never stale); the holder of the lock removes a
//!   stale socket before binding.
//! - Only the daemon's own user is served: the peer's uid is checked on
//!   accept (`SO_PEERCRED`), besides the 0700 directory.
//! - A call lives in a task of its connection: a `Cancel` frame or a closed
//!   connection drops it, which drops the engine's future, which sends
//!   `$/cancelRequest` upstream; the daemon carries on. A panic inside a
//!   call (a bug) is caught on the call's own task
//!   ([`scry_ops::isolate::isolated`]) and answered `INTERNAL` for that
//!   call alone.
//! - Writes (see `Query::writes`) are serialized per workspace (here, by
//!   `WsEntry::writes`; across processes the edit service holds the
//!   workspace's writer lock, scry_ops::edit::lock);
//!   the edit journal is the workspace's (on disk), so `undo` works from any
//!   client; idempotency keys are prefixed with the client's session.
//! - Lifecycle: every half second, servers idle longer than
//!   `limits.serverIdleMs` are stopped and the least recently used beyond
//!   `limits.maxServers` (all workspaces together) too; every
//!   `limits.memoryCheckMs` (2 s) every server's process tree is sampled
//!   and the memory policy (`scry_workspace::memory`) applied across all
//!   workspaces: a server over its cap is restarted while no call holds
//!   it, and over `limits.memoryBudgetMiB` (all servers together) the least
//!   recently used idle one is stopped, each told in its workspace's next
//!   answer and in `status`; a workspace nothing has held (no client
//!   that asked about it, no call, no server) for its `serverIdleMs` is
//!   forgotten (engine, watcher and index dropped); a workspace with no
//!   call for its `limits.indexRefreshIdleMs` whose SCIP index is older
//!   than its files has it rebuilt in the background, one workspace at a
//!   time, in the environment of its last call, at the lowest priority
//!   (`Engine::refresh_index_if_due`; never waited for by a call; the
//!   workspace is not forgotten and an idle daemon does not exit
//!   meanwhile; stopping the daemon stops it); with no client and no
//!   server for
//!   `SCRY_DAEMON_IDLE_MS` (default 60 s), or when its socket was removed or
//!   replaced, the daemon stops its servers and exits. Servers die with it
//!   even when it is SIGKILLed (parent-death signal, set by scry-lsp).

use std::collections::{HashMap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use scry_ops::Engine;
use scry_workspace::procmem::ProcTable;
use scry_workspace::{ServerMemory, Workspace, memory};
use tokio::io::AsyncWriteExt;
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::mpsc;

use crate::answer::{self, Answerer, Baseline, Local, Session};
use crate::paths::{self, Files, PROTOCOL, VERSION};
use crate::proto::{
    self, Call, CallResult, ClientFrame, DaemonFrame, DaemonStatus, Reply, ServerStatus,
    WorkspaceStatus,
};

/// How long the daemon lingers with no client and no server.
pub const DEFAULT_IDLE: Duration = Duration::from_secs(60);
/// How often servers are checked for idleness.
const REAP_EVERY: Duration = Duration::from_millis(500);
/// How long a client has to say hello.
const HELLO_WITHIN: Duration = Duration::from_secs(10);
/// How long stopping the servers may take at exit.
const SHUTDOWN_BUDGET: Duration = Duration::from_secs(10);

/// Why the daemon did not run.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// Another daemon holds the lock (not an error for whoever started
    /// this one: clients connect to that one).
    #[error("a scry daemon is already running for {}", .0.display())]
    AlreadyRunning(PathBuf),
    #[error("{0}")]
    Io(String),
}

/// The daemon's idle time from `SCRY_DAEMON_IDLE_MS`, else [`DEFAULT_IDLE`].
pub fn idle_from_env() -> Duration {
    std::env::var("SCRY_DAEMON_IDLE_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_millis)
        .unwrap_or(DEFAULT_IDLE)
}

/// Whether a peer with `peer_uid` may talk to a daemon run by `own_uid`.
pub fn peer_allowed(peer_uid: u32, own_uid: u32) -> bool {
    peer_uid == own_uid
}

/// The uid check on one accepted connection.
pub fn check_peer(stream: &UnixStream) -> Result<(), String> {
    let cred = stream
        .peer_cred()
        .map_err(|e| format!("cannot read the peer's credentials: {e}"))?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if peer_allowed(cred.uid(), me) {
        Ok(())
    } else {
        Err(format!(
            "refused a connection from uid {} (the daemon serves uid {me} only)",
            cred.uid()
        ))
    }
}

/// Take the daemon lock: an exclusive `flock` on `path`, held while the
/// returned file is open.
pub fn lock(path: &Path) -> Result<std::fs::File, StartError> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| StartError::Io(format!("cannot open {}: {e}", path.display())))?;
    // SAFETY: flock on a descriptor we own.
    let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if r != 0 {
        let e = std::io::Error::last_os_error();
        return Err(if e.kind() == std::io::ErrorKind::WouldBlock {
            StartError::AlreadyRunning(path.to_path_buf())
        } else {
            StartError::Io(format!("cannot lock {}: {e}", path.display()))
        });
    }
    Ok(file)
}

/// (canonical root, hash of the call's configuration environment).
type WsKey = (PathBuf, u64);

struct WsEntry {
    /// The workspace's engine with what wraps each call (write lock,
    /// baseline, per-session notices): see [`Local`].
    local: Local,
    /// Connected clients that asked about this workspace.
    clients: AtomicUsize,
    /// Calls in flight (counted under the workspaces lock: see [`InUse`]).
    calls: AtomicUsize,
    /// When the last call ended.
    last_call: Mutex<Instant>,
    /// The environment of the last call (what a background index refresh
    /// runs in).
    last_env: Mutex<Option<scry_workspace::env::CallContext>>,
}

impl WsEntry {
    /// Nothing holds this workspace: no client asked about it, no call, no
    /// server running or starting, and no call for `idle`.
    fn forgettable(&self, idle: Duration) -> bool {
        let ws = self.local.engine().workspace();
        self.clients.load(Ordering::SeqCst) == 0
            && self.calls.load(Ordering::SeqCst) == 0
            && ws.usage().is_empty()
            && ws.starting().is_empty()
            && !self.local.engine().refreshing()
            && self
                .last_call
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .elapsed()
                >= idle
    }
}

/// A workspace entry a call is using: counted from the moment it is taken
/// out of the map (under its lock, so the reaper never forgets an entry a
/// call holds) until the call ends.
struct InUse(Arc<WsEntry>);

impl std::ops::Deref for InUse {
    type Target = WsEntry;
    fn deref(&self) -> &WsEntry {
        &self.0
    }
}

impl Drop for InUse {
    fn drop(&mut self) {
        *self.0.last_call.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
        self.0.calls.fetch_sub(1, Ordering::SeqCst);
    }
}

/// One connected client.
struct ClientSession {
    /// Its id and once-per-session notices (the trust notice).
    session: Arc<Session>,
    roots: Mutex<HashSet<WsKey>>,
}

struct State {
    files: Files,
    started: Instant,
    workspaces: Mutex<HashMap<WsKey, Arc<WsEntry>>>,
    clients: AtomicUsize,
    stop: tokio::sync::watch::Sender<bool>,
    /// When the servers' memory was last checked.
    memory_checked: Mutex<Instant>,
    /// A background index refresh is looking or running (one at a time).
    refreshing: Arc<std::sync::atomic::AtomicBool>,
}

/// Run the daemon until it idles out, is stopped, or its socket is gone.
pub async fn run(files: Files, idle: Duration) -> Result<(), StartError> {
    paths::ensure_dir(&files.dir).map_err(|e| StartError::Io(e.to_string()))?;
    let lock_file = lock(&files.lock)?;
    // We hold the lock: a socket file there is a dead daemon's.
    let _ = std::fs::remove_file(&files.socket);
    let listener = UnixListener::bind(&files.socket)
        .map_err(|e| StartError::Io(format!("cannot listen on {}: {e}", files.socket.display())))?;
    let ino = std::fs::metadata(&files.socket).map(|m| m.ino()).ok();
    {
        use std::io::Write;
        let mut f = &lock_file;
        let _ = f.write_all(format!("{}\n", std::process::id()).as_bytes());
    }
    tracing::info!(socket = %files.socket.display(), pid = std::process::id(), "scry daemon listening");
    let (stop, mut stopped) = tokio::sync::watch::channel(false);
    let state = Arc::new(State {
        files: files.clone(),
        started: Instant::now(),
        workspaces: Mutex::new(HashMap::new()),
        clients: AtomicUsize::new(0),
        stop,
        memory_checked: Mutex::new(Instant::now()),
        refreshing: Arc::default(),
    });
    let mut reap = tokio::time::interval(REAP_EVERY);
    reap.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut idle_since: Option<Instant> = None;
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|e| StartError::Io(e.to_string()))?;
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    if let Err(e) = check_peer(&stream) {
                        tracing::warn!("{e}");
                        continue;
                    }
                    let st = state.clone();
                    tokio::spawn(async move { st.serve(stream).await });
                }
                Err(e) => tracing::warn!("accept failed: {e}"),
            },
            _ = reap.tick() => {
                if state.reap(&mut idle_since, idle, ino).await {
                    break;
                }
            }
            _ = stopped.changed() => break,
            _ = term.recv() => {
                tracing::info!("SIGTERM: stopping");
                break;
            }
            _ = tokio::signal::ctrl_c() => break,
        }
    }
    // Stop taking clients, then stop the servers (bounded).
    if std::fs::metadata(&files.socket).map(|m| m.ino()).ok() == ino {
        let _ = std::fs::remove_file(&files.socket);
    }
    drop(listener);
    let engines: Vec<Engine> = state
        .workspaces
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .values()
        .map(|w| w.local.engine().clone())
        .collect();
    let all = async {
        for e in engines {
            e.shutdown().await;
        }
    };
    if tokio::time::timeout(SHUTDOWN_BUDGET, all).await.is_err() {
        tracing::warn!("servers did not stop in time; they are killed on exit");
    }
    tracing::info!("scry daemon stopped");
    drop(lock_file);
    Ok(())
}

impl State {
    /// The workspace of `key` (opened on first use, with the environment
    /// of the call in scope), counted as in use by the caller until the
    /// returned guard drops.
    fn workspace(&self, key: &WsKey) -> Result<InUse, String> {
        let mut map = self.workspaces.lock().unwrap_or_else(|e| e.into_inner());
        let entry = match map.get(key) {
            Some(w) => w.clone(),
            None => {
                let ws = Workspace::open(&key.0).map_err(|e| e.to_string())?;
                let engine = Engine::new(Arc::new(ws));
                engine.host_index_refresh();
                let entry = Arc::new(WsEntry {
                    local: Local::new(engine, "daemon", Baseline::File).refreshing(),
                    clients: AtomicUsize::new(0),
                    calls: AtomicUsize::new(0),
                    last_call: Mutex::new(Instant::now()),
                    last_env: Mutex::new(None),
                });
                map.insert(key.clone(), entry.clone());
                entry
            }
        };
        entry.calls.fetch_add(1, Ordering::SeqCst);
        Ok(InUse(entry))
    }

    /// Forget the workspaces nothing has held for their `serverIdleMs`
    /// (see [`WsEntry::forgettable`]): their engine, file watcher and
    /// syntactic index go; the next call opens the workspace afresh (its
    /// journal and `changes` baseline are on disk).
    fn forget_idle(&self) -> Vec<(PathBuf, Arc<WsEntry>)> {
        let mut map = self.workspaces.lock().unwrap_or_else(|e| e.into_inner());
        let gone: Vec<WsKey> = map
            .iter()
            .filter(|(_, e)| {
                let idle = e.local.engine().workspace().config().limits.server_idle_ms;
                e.forgettable(Duration::from_millis(idle))
            })
            .map(|(root, _)| root.clone())
            .collect();
        gone.into_iter()
            .filter_map(|key| map.remove(&key).map(|e| (key.0, e)))
            .collect()
    }

    fn entries(&self) -> Vec<(PathBuf, Arc<WsEntry>)> {
        self.workspaces
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|(k, v)| (k.0.clone(), v.clone()))
            .collect()
    }

    /// The lifecycle tick; true when the daemon should exit.
    async fn reap(
        &self,
        idle_since: &mut Option<Instant>,
        idle: Duration,
        ino: Option<u64>,
    ) -> bool {
        if std::fs::metadata(&self.files.socket).map(|m| m.ino()).ok() != ino {
            tracing::info!("the socket was removed or replaced: stopping");
            return true;
        }
        let entries = self.entries();
        let mut max = usize::MAX;
        for (_, e) in &entries {
            let limits = e.local.engine().workspace().config().limits;
            max = max.min(limits.max_servers.max(1));
            e.local
                .engine()
                .workspace()
                .stop_idle(Duration::from_millis(limits.server_idle_ms))
                .await;
        }
        self.check_memory(&entries);
        self.refresh_indexes(&entries);
        // Least recently used first out, across workspaces.
        let mut running: Vec<(Duration, String, PathBuf, Arc<WsEntry>)> = entries
            .iter()
            .flat_map(|(_, e)| {
                e.local
                    .engine()
                    .workspace()
                    .usage()
                    .into_iter()
                    .map(|u| (u.idle, u.id, u.root, e.clone()))
            })
            .collect();
        if running.len() > max {
            running.sort_by_key(|r| std::cmp::Reverse(r.0));
            let excess = running.len() - max;
            for (_, id, root, e) in running.drain(..).take(excess) {
                tracing::info!(server = %id, "stopping the least recently used server (limits.maxServers = {max})");
                e.local.engine().workspace().stop_server(&id, &root).await;
            }
        }
        for (root, e) in self.forget_idle() {
            tracing::info!(root = %root.display(), "forgetting the idle workspace");
            e.local.engine().shutdown().await;
        }
        // A running index refresh finishes (bounded) before an idle exit
        // (looking whether one is due does not count).
        let busy = self.clients.load(Ordering::SeqCst) > 0
            || entries.iter().any(|(_, e)| {
                let ws = e.local.engine().workspace();
                !ws.usage().is_empty() || !ws.starting().is_empty() || e.local.engine().refreshing()
            });
        if busy {
            *idle_since = None;
            return false;
        }
        let since = *idle_since.get_or_insert_with(Instant::now);
        if since.elapsed() >= idle {
            tracing::info!(
                "no client and no server for {} ms: stopping",
                idle.as_millis()
            );
            return true;
        }
        false
    }

    /// Start the background index refresh of the first idle workspace
    /// that is due (see `Engine::refresh_index_if_due`), unless one is
    /// looking or running; on a task of its own, in the environment of
    /// the workspace's last call.
    fn refresh_indexes(&self, entries: &[(PathBuf, Arc<WsEntry>)]) {
        let idle: Vec<(Arc<WsEntry>, Duration)> = entries
            .iter()
            .filter(|(_, e)| e.calls.load(Ordering::SeqCst) == 0)
            .map(|(_, e)| {
                let since = e
                    .last_call
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .elapsed();
                (e.clone(), since)
            })
            .filter(|(e, since)| {
                let c = e.local.engine().workspace().config();
                c.index.refresh && *since >= Duration::from_millis(c.limits.index_refresh_idle_ms)
            })
            .collect();
        if idle.is_empty() || self.refreshing.swap(true, Ordering::SeqCst) {
            return;
        }
        // Cleared when the task ends, however it ends.
        struct Clear(Arc<std::sync::atomic::AtomicBool>);
        impl Drop for Clear {
            fn drop(&mut self) {
                self.0.store(false, Ordering::SeqCst);
            }
        }
        let flag = Clear(self.refreshing.clone());
        tokio::spawn(async move {
            let _flag = flag;
            for (e, since) in idle {
                let engine = e.local.engine().clone();
                let ctx = e.last_env.lock().unwrap_or_else(|e| e.into_inner()).clone();
                let refreshed = match ctx {
                    Some(c) => {
                        scry_workspace::env::scope(c, engine.refresh_index_if_due(since)).await
                    }
                    None => engine.refresh_index_if_due(since).await,
                };
                if refreshed {
                    break;
                }
            }
        });
    }

    /// The memory check, every `limits.memoryCheckMs` (the smallest of
    /// the workspaces'): every server of every workspace sampled from one
    /// `/proc` snapshot, then [`memory::decide`] over all of them with the
    /// smallest `limits.memoryBudgetMiB` (the budget is the daemon's, all
    /// workspaces together), and each workspace acts on its own servers
    /// (each only while no call holds it) and tells its next answer.
    fn check_memory(&self, entries: &[(PathBuf, Arc<WsEntry>)]) {
        let (mut every, mut budget) = (u64::MAX, u64::MAX);
        for (_, e) in entries {
            let limits = e.local.engine().workspace().config().limits;
            every = every.min(limits.memory_check_ms);
            budget = budget.min(limits.memory_budget_mib);
        }
        {
            let mut last = self
                .memory_checked
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if entries.is_empty() || last.elapsed() < Duration::from_millis(every) {
                return;
            }
            *last = Instant::now();
        }
        let Some(table) = ProcTable::read() else {
            return;
        };
        let all: Vec<(Arc<WsEntry>, ServerMemory)> = entries
            .iter()
            .flat_map(|(_, e)| {
                e.local
                    .engine()
                    .workspace()
                    .memory_samples(&table)
                    .into_iter()
                    .map(|m| (e.clone(), m))
            })
            .collect();
        let samples: Vec<memory::Sample> = all.iter().map(|(_, m)| m.sample.clone()).collect();
        for d in memory::decide(&samples, Some(budget.saturating_mul(1024))) {
            let (e, m) = &all[d.index()];
            e.local.engine().workspace().apply_memory(m, &d);
        }
    }

    fn status(&self) -> DaemonStatus {
        let workspaces = self
            .entries()
            .into_iter()
            .map(|(root, e)| WorkspaceStatus {
                root,
                clients: e.clients.load(Ordering::SeqCst),
                memory_events: e
                    .local
                    .engine()
                    .workspace()
                    .memory_events()
                    .into_iter()
                    .map(|m| m.text)
                    .collect(),
                servers: e
                    .local
                    .engine()
                    .workspace()
                    .usage_measured()
                    .into_iter()
                    .map(|u| ServerStatus {
                        rss_kib: u.memory.map(|m| m.rss_kib),
                        processes: u.memory.map(|m| m.processes),
                        cap_kib: u.cap_kib,
                        id: u.id,
                        root: u.root,
                        pid: u.pid,
                        uptime_ms: u.uptime.as_millis() as u64,
                        idle_ms: u.idle.as_millis() as u64,
                        program: u.program,
                        clients: u.clients,
                    })
                    .collect(),
            })
            .collect();
        DaemonStatus {
            pid: std::process::id(),
            version: VERSION.to_string(),
            protocol: PROTOCOL,
            uptime_ms: self.started.elapsed().as_millis() as u64,
            // The asking connection is not counted.
            clients: self.clients.load(Ordering::SeqCst).saturating_sub(1),
            socket: self.files.socket.clone(),
            workspaces,
        }
    }

    /// One connection, from hello to close.
    async fn serve(self: Arc<Self>, stream: UnixStream) {
        let (rd, mut wr) = stream.into_split();
        let mut lines = proto::Frames::new(rd);
        let (tx, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
        let writer = tokio::spawn(async move {
            while let Some(buf) = rx.recv().await {
                if wr.write_all(&buf).await.is_err() {
                    break;
                }
            }
            let _ = wr.shutdown().await;
        });
        let send = |tx: &mpsc::UnboundedSender<Vec<u8>>, f: &DaemonFrame| {
            let _ = tx.send(proto::encode(f));
        };
        let refuse = |tx: &mpsc::UnboundedSender<Vec<u8>>, message: String| {
            send(tx, &DaemonFrame::Refused { message });
        };
        let hello = match tokio::time::timeout(HELLO_WITHIN, lines.next_line()).await {
            Ok(Ok(Some(line))) => serde_json::from_str::<ClientFrame>(&line).ok(),
            _ => None,
        };
        let session_id = match hello {
            Some(ClientFrame::Hello {
                protocol,
                version,
                session,
            }) => {
                if protocol != PROTOCOL || version != VERSION {
                    refuse(
                        &tx,
                        format!(
                            "this daemon is scry {VERSION} (protocol {PROTOCOL}); the client is scry {version} (protocol {protocol})"
                        ),
                    );
                    drop(tx);
                    let _ = writer.await;
                    return;
                }
                session
            }
            _ => {
                refuse(&tx, "expected a hello frame first".into());
                drop(tx);
                let _ = writer.await;
                return;
            }
        };
        send(
            &tx,
            &DaemonFrame::Hello {
                protocol: PROTOCOL,
                version: VERSION.to_string(),
                pid: std::process::id(),
            },
        );
        self.clients.fetch_add(1, Ordering::SeqCst);
        let session = Arc::new(ClientSession {
            session: Session::new(session_id),
            roots: Mutex::new(HashSet::new()),
        });
        let mut calls: HashMap<u64, tokio::task::AbortHandle> = HashMap::new();
        loop {
            let line = match lines.next_line().await {
                Ok(Some(l)) => l,
                _ => break,
            };
            let frame = match serde_json::from_str::<ClientFrame>(&line) {
                Ok(f) => f,
                Err(e) => {
                    refuse(&tx, format!("malformed frame: {e}"));
                    break;
                }
            };
            match frame {
                ClientFrame::Call(call) => {
                    calls.retain(|_, h| !h.is_finished());
                    let id = call.id;
                    let st = self.clone();
                    let (tx2, sess) = (tx.clone(), session.clone());
                    let task = tokio::spawn(async move {
                        let reply = st.call(&sess, *call, &tx2).await;
                        let _ = tx2.send(proto::encode_answer(reply));
                    });
                    calls.insert(id, task.abort_handle());
                }
                ClientFrame::Cancel { id } => {
                    if let Some(h) = calls.remove(&id) {
                        tracing::debug!(id, "call cancelled by the client");
                        h.abort();
                    }
                }
                ClientFrame::Status => send(&tx, &DaemonFrame::Status(Box::new(self.status()))),
                ClientFrame::Stop => {
                    send(
                        &tx,
                        &DaemonFrame::Stopping {
                            pid: std::process::id(),
                        },
                    );
                    let _ = self.stop.send(true);
                }
                ClientFrame::Hello { .. } => {
                    refuse(&tx, "hello was already said".into());
                    break;
                }
            }
        }
        // The client is gone: drop its calls (cancelled upstream).
        for (id, h) in calls {
            if !h.is_finished() {
                tracing::debug!(id, "client gone: cancelling its call");
            }
            h.abort();
        }
        for root in session
            .roots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
        {
            if let Some(e) = self
                .workspaces
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(root)
            {
                e.clients.fetch_sub(1, Ordering::SeqCst);
            }
        }
        self.clients.fetch_sub(1, Ordering::SeqCst);
        drop(tx);
        let _ = writer.await;
    }

    /// Answer one call, in its client's environment (the daemon's own
    /// when the call brings none): the workspace's [`Local`] for this
    /// client's session, on its own task ([`answer::isolated`]: a panic
    /// inside it answers this call `INTERNAL`; the daemon and its other
    /// calls go on).
    async fn call(
        &self,
        client: &ClientSession,
        mut call: Call,
        tx: &mpsc::UnboundedSender<Vec<u8>>,
    ) -> Reply {
        let env = call
            .env
            .take()
            .unwrap_or_else(scry_workspace::env::CallEnv::capture);
        let ctx = scry_workspace::env::CallContext {
            env: Arc::new(env),
            client: client.session.id().to_string(),
        };
        scry_workspace::env::scope(ctx, self.call_in_scope(client, call, tx)).await
    }

    async fn call_in_scope(
        &self,
        client: &ClientSession,
        call: Call,
        tx: &mpsc::UnboundedSender<Vec<u8>>,
    ) -> Reply {
        let root = call.root.canonicalize().unwrap_or(call.root.clone());
        let key: WsKey = (
            root.clone(),
            scry_workspace::env::current().map_or(0, |c| c.env.config_hash()),
        );
        let entry = match self.workspace(&key) {
            Ok(e) => e,
            Err(m) => return Reply::new(call.id, root, CallResult::Config(m)),
        };
        *entry.last_env.lock().unwrap_or_else(|e| e.into_inner()) = scry_workspace::env::current();
        if client
            .roots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key.clone())
        {
            entry.clients.fetch_add(1, Ordering::SeqCst);
        }
        let local = entry.local.for_session(client.session.clone());
        let _progress = Progress::start(call.id, local.clone(), tx.clone());
        answer::isolated(Arc::new(local), call).await
    }
}

/// Sends a call's progress line while it waits; stopped when dropped.
struct Progress(tokio::task::JoinHandle<()>);

impl Progress {
    fn start(id: u64, local: Local, tx: mpsc::UnboundedSender<Vec<u8>>) -> Progress {
        Progress(tokio::spawn(async move {
            let mut last: Option<String> = None;
            loop {
                tokio::time::sleep(Duration::from_millis(100)).await;
                let line = local.waiting_on();
                if line != last {
                    let f = DaemonFrame::Progress {
                        id,
                        line: line.clone(),
                    };
                    if tx.send(proto::encode(&f)).is_err() {
                        return;
                    }
                    last = line;
                }
            }
        }))
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_same_uid_is_served() {
        assert!(peer_allowed(1000, 1000));
        assert!(!peer_allowed(0, 1000));
        assert!(!peer_allowed(1001, 1000));
    }

    #[tokio::test]
    async fn the_peer_check_reads_the_connecting_uid() {
        let (a, _b) = UnixStream::pair().unwrap();
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        assert_eq!(a.peer_cred().unwrap().uid(), me);
        check_peer(&a).unwrap();
    }

    #[test]
    fn the_lock_is_exclusive_and_released_with_its_holder() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("d.lock");
        let held = lock(&p).unwrap();
        assert!(matches!(lock(&p), Err(StartError::AlreadyRunning(_))));
        drop(held);
        // A lock file left behind (a killed daemon) is taken again.
        lock(&p).unwrap();
    }
}

#[cfg(test)]
mod wire_tests {
    use super::*;
    use crate::client::{ConnectError, Connection};
    use tokio::io::{AsyncBufReadExt, BufReader};

    /// A daemon in a temporary directory, and its files.
    async fn daemon() -> (tempfile::TempDir, Files, tokio::task::JoinHandle<()>) {
        let t = tempfile::tempdir().unwrap();
        let files = Files::named(&t.path().join("d"), VERSION, "test");
        let f = files.clone();
        let task = tokio::spawn(async move {
            run(f, Duration::from_secs(30)).await.unwrap();
        });
        for _ in 0..200 {
            if files.socket.exists() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        (t, files, task)
    }

    #[tokio::test]
    async fn a_version_mismatch_is_refused_in_clear_words_never_a_hang() {
        let (_t, files, task) = daemon().await;
        let mut s = UnixStream::connect(&files.socket).await.unwrap();
        let hello = ClientFrame::Hello {
            protocol: PROTOCOL,
            version: "0.0.0-old".into(),
            session: "t".into(),
        };
        s.write_all(&proto::encode(&hello)).await.unwrap();
        let mut lines = BufReader::new(s).lines();
        let reply = tokio::time::timeout(Duration::from_secs(5), lines.next_line())
            .await
            .expect("an answer, not a hang")
            .unwrap()
            .unwrap();
        let DaemonFrame::Refused { message } = serde_json::from_str(&reply).unwrap() else {
            panic!("not refused: {reply}")
        };
        assert!(
            message.contains("0.0.0-old") && message.contains(VERSION),
            "{message}"
        );
        let end = tokio::time::timeout(Duration::from_secs(5), lines.next_line()).await;
        assert!(matches!(end, Ok(Ok(None))), "closed after refusing");

        // The right version is served; a second daemon on the same files
        // does not start.
        let mut c = Connection::connect(&files, "t2").await.unwrap();
        assert_eq!(c.pid, std::process::id());
        let st = c.status().await.unwrap();
        assert_eq!(st.version, VERSION);
        assert!(matches!(
            run(files.clone(), Duration::from_secs(1)).await,
            Err(StartError::AlreadyRunning(_))
        ));
        c.stop().await.unwrap();
        tokio::time::timeout(Duration::from_secs(15), task)
            .await
            .expect("the daemon stops")
            .unwrap();
        assert!(!files.socket.exists(), "its socket is removed");
        assert!(matches!(
            Connection::connect(&files, "t3").await,
            Err(ConnectError::Absent(_))
        ));
    }

    #[tokio::test]
    async fn a_frame_that_is_not_a_hello_is_refused() {
        let (_t, files, task) = daemon().await;
        let mut s = UnixStream::connect(&files.socket).await.unwrap();
        s.write_all(b"{\"status\":null}\n").await.unwrap();
        let mut lines = BufReader::new(s).lines();
        let reply = tokio::time::timeout(Duration::from_secs(5), lines.next_line())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert!(reply.contains("expected a hello"), "{reply}");
        task.abort();
    }
}
