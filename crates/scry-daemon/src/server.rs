//! The daemon process: one per user, scry version and environment tag
//! ([`crate::paths`]). It holds one [`Engine`] per canonical workspace root
//! — so one pool of language servers per workspace, shared by every client
//! — and answers [`crate::proto`] frames on its Unix socket.
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
//!   forgotten (engine, watcher and index dropped); with no client and no
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

use scry_ops::{Action, Body, Engine};
use scry_workspace::procmem::ProcTable;
use scry_workspace::{ServerMemory, Workspace, memory};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::mpsc;

use crate::paths::{self, Files, PROTOCOL, VERSION};
use crate::proto::{
    self, Call, ClientFrame, DaemonFrame, DaemonStatus, Outcome, Reply, ServerStatus,
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

struct WsEntry {
    engine: Engine,
    /// Held by writes: two clients' edits never interleave.
    writes: tokio::sync::Mutex<()>,
    /// Connected clients that asked about this workspace.
    clients: AtomicUsize,
    /// Calls in flight (counted under the workspaces lock: see [`InUse`]).
    calls: AtomicUsize,
    /// When the last call ended.
    last_call: Mutex<Instant>,
}

impl WsEntry {
    /// Nothing holds this workspace: no client asked about it, no call, no
    /// server running or starting, and no call for `idle`.
    fn forgettable(&self, idle: Duration) -> bool {
        let ws = self.engine.workspace();
        self.clients.load(Ordering::SeqCst) == 0
            && self.calls.load(Ordering::SeqCst) == 0
            && ws.usage().is_empty()
            && ws.starting().is_empty()
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
    id: String,
    /// Once-per-session notices already told (the trust notice).
    told: Mutex<HashSet<String>>,
    roots: Mutex<HashSet<PathBuf>>,
}

struct State {
    files: Files,
    started: Instant,
    workspaces: Mutex<HashMap<PathBuf, Arc<WsEntry>>>,
    clients: AtomicUsize,
    stop: tokio::sync::watch::Sender<bool>,
    /// When the servers' memory was last checked.
    memory_checked: Mutex<Instant>,
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
        .map(|w| w.engine.clone())
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
    /// The workspace of `root` (opened on first use), counted as in use
    /// by the caller until the returned guard drops.
    fn workspace(&self, root: &Path) -> Result<InUse, String> {
        let mut map = self.workspaces.lock().unwrap_or_else(|e| e.into_inner());
        let entry = match map.get(root) {
            Some(w) => w.clone(),
            None => {
                let ws = Workspace::open(root).map_err(|e| e.to_string())?;
                let entry = Arc::new(WsEntry {
                    engine: Engine::new(Arc::new(ws)),
                    writes: tokio::sync::Mutex::new(()),
                    clients: AtomicUsize::new(0),
                    calls: AtomicUsize::new(0),
                    last_call: Mutex::new(Instant::now()),
                });
                map.insert(root.to_path_buf(), entry.clone());
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
        let gone: Vec<PathBuf> = map
            .iter()
            .filter(|(_, e)| {
                let idle = e.engine.workspace().config().limits.server_idle_ms;
                e.forgettable(Duration::from_millis(idle))
            })
            .map(|(root, _)| root.clone())
            .collect();
        gone.into_iter()
            .filter_map(|root| map.remove(&root).map(|e| (root, e)))
            .collect()
    }

    fn entries(&self) -> Vec<(PathBuf, Arc<WsEntry>)> {
        self.workspaces
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
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
            let limits = e.engine.workspace().config().limits;
            max = max.min(limits.max_servers.max(1));
            e.engine
                .workspace()
                .stop_idle(Duration::from_millis(limits.server_idle_ms))
                .await;
        }
        self.check_memory(&entries);
        // Least recently used first out, across workspaces.
        let mut running: Vec<(Duration, String, PathBuf, Arc<WsEntry>)> = entries
            .iter()
            .flat_map(|(_, e)| {
                e.engine
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
                e.engine.workspace().stop_server(&id, &root).await;
            }
        }
        for (root, e) in self.forget_idle() {
            tracing::info!(root = %root.display(), "forgetting the idle workspace");
            e.engine.shutdown().await;
        }
        let busy = self.clients.load(Ordering::SeqCst) > 0
            || entries.iter().any(|(_, e)| {
                let ws = e.engine.workspace();
                !ws.usage().is_empty() || !ws.starting().is_empty()
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

    /// The memory check, every `limits.memoryCheckMs` (the smallest of
    /// the workspaces'): every server of every workspace sampled from one
    /// `/proc` snapshot, then [`memory::decide`] over all of them with the
    /// smallest `limits.memoryBudgetMiB` (the budget is the daemon's, all
    /// workspaces together), and each workspace acts on its own servers
    /// (each only while no call holds it) and tells its next answer.
    fn check_memory(&self, entries: &[(PathBuf, Arc<WsEntry>)]) {
        let (mut every, mut budget) = (u64::MAX, u64::MAX);
        for (_, e) in entries {
            let limits = e.engine.workspace().config().limits;
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
                e.engine
                    .workspace()
                    .memory_samples(&table)
                    .into_iter()
                    .map(|m| (e.clone(), m))
            })
            .collect();
        let samples: Vec<memory::Sample> = all.iter().map(|(_, m)| m.sample.clone()).collect();
        for d in memory::decide(&samples, Some(budget.saturating_mul(1024))) {
            let (e, m) = &all[d.index()];
            e.engine.workspace().apply_memory(m, &d);
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
                    .engine
                    .workspace()
                    .memory_events()
                    .into_iter()
                    .map(|m| m.text)
                    .collect(),
                servers: e
                    .engine
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
        let mut lines = BufReader::new(rd).lines();
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
            id: session_id,
            told: Mutex::new(HashSet::new()),
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
                        let (root, action) = (call.root.clone(), call.query.action);
                        // A panic inside the call (a bug) answers this call
                        // INTERNAL; the daemon and its other calls go on.
                        let tx3 = tx2.clone();
                        let reply = scry_ops::isolate::isolated(async move {
                            st.call(&sess, *call, &tx3).await
                        })
                        .await
                        .unwrap_or_else(|panic| {
                            tracing::error!(id, "call panicked: {panic}");
                            let defaults = scry_workspace::config::Limits::default();
                            Reply {
                                id,
                                root,
                                max_locations: defaults.max_locations,
                                max_chars: defaults.max_chars,
                                result: Outcome::Error(scry_ops::isolate::internal_error(
                                    action.name(),
                                    &panic,
                                )),
                                edit_diagnostics: None,
                                warnings: Vec::new(),
                            }
                        });
                        let _ = tx2.send(proto::encode(&DaemonFrame::Answer(Box::new(reply))));
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

    /// Answer one call.
    async fn call(
        &self,
        session: &ClientSession,
        call: Call,
        tx: &mpsc::UnboundedSender<Vec<u8>>,
    ) -> Reply {
        let root = call.root.canonicalize().unwrap_or(call.root);
        let defaults = scry_workspace::config::Limits::default();
        let mut reply = Reply {
            id: call.id,
            root: root.clone(),
            max_locations: defaults.max_locations,
            max_chars: defaults.max_chars,
            result: Outcome::Config(String::new()),
            edit_diagnostics: None,
            warnings: Vec::new(),
        };
        let entry = match self.workspace(&root) {
            Ok(e) => e,
            Err(m) => {
                reply.result = Outcome::Config(m);
                return reply;
            }
        };
        if session
            .roots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(root.clone())
        {
            entry.clients.fetch_add(1, Ordering::SeqCst);
        }
        let ws = entry.engine.workspace().clone();
        // A changed configuration starts new servers for what changed.
        if let Err(e) = ws.refresh_config().await {
            reply.result = Outcome::Config(e.to_string());
            return reply;
        }
        reply.root = ws.root().to_path_buf();
        let limits = ws.config().limits;
        reply.max_locations = limits.max_locations;
        reply.max_chars = limits.max_chars;
        let mut q = call.query;
        if let Some(k) = &q.idempotency_key {
            q.idempotency_key = Some(format!("{}:{k}", session.id));
        }
        let _write = if q.writes() {
            Some(entry.writes.lock().await)
        } else {
            None
        };
        if q.changes {
            crate::changes::load(&entry.engine);
        }
        let progress = Progress::start(call.id, ws.clone(), tx.clone());
        let mut result = entry.engine.run(&q).await;
        drop(progress);
        if q.changes
            && result.is_ok()
            && let Err(w) = crate::changes::save(&entry.engine)
        {
            reply.warnings.push(w);
        }
        if let Ok(a) = &mut result
            && a.action != Action::Status
            && let Some(n) = ws.trust_notice()
        {
            let said = scry_ops::Reason::from(n.clone());
            a.notes.retain(|x| *x != said);
            if session
                .told
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(n.clone())
            {
                a.notes.push(said);
            }
        }
        reply.result = match result {
            Ok(a) => {
                if let Body::Edit(r) = &a.body {
                    reply.edit_diagnostics = r.diagnostics.clone();
                }
                Outcome::Answer(Box::new(a))
            }
            Err(e) => Outcome::Error(e),
        };
        reply
    }
}

/// Sends a call's progress line while it waits; stopped when dropped.
struct Progress(tokio::task::JoinHandle<()>);

impl Progress {
    fn start(id: u64, ws: Arc<Workspace>, tx: mpsc::UnboundedSender<Vec<u8>>) -> Progress {
        Progress(tokio::spawn(async move {
            let mut last: Option<String> = None;
            loop {
                tokio::time::sleep(Duration::from_millis(100)).await;
                let line = crate::waiting_line(&ws);
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
