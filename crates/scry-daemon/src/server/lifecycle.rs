//! The daemon's life: start ([`run`]: the socket bound, then the accept
//! loop), the reaping tick every half second, and the shutdown.
//!
//! Invariants:
//! - Every half second each workspace's configuration is reread when one of
//!   its files (the trust store included) moved: a revoke stops the
//!   workspace's servers, and a background index refresh it started, with
//!   no call to wait for.
//! - Every half second, servers idle longer than `limits.serverIdleMs`
//!   are stopped and the least recently used beyond `limits.maxServers`
//!   (all workspaces together) too; every `limits.memoryCheckMs` (2 s;
//!   while a call is in flight, at the first tick without one, within
//!   twice that) every server's process tree is sampled and the memory policy
//!   (`scry_workspace::memory`) applied across all workspaces: a server
//!   over its cap is restarted while no call holds it, and over
//!   `limits.memoryBudgetMiB` (all servers together) the least recently
//!   used idle one is stopped, each told in its workspace's next answer
//!   and in `status`.
//! - A workspace nothing has held (no client that asked about it, no
//!   call, no server) for its `serverIdleMs` is forgotten (engine, watcher
//!   and index dropped).
//! - A workspace with no call for its `limits.indexRefreshIdleMs` whose
//!   SCIP index is older than its files has it rebuilt in the background,
//!   one workspace at a time, in the environment of its last call, at the
//!   lowest priority (`Engine::refresh_index_if_due`; never waited for by
//!   a call; the workspace is not forgotten and an idle daemon does not
//!   exit meanwhile; stopping the daemon stops it).
//! - With no client and no server for `SCRY_DAEMON_IDLE_MS` (default
//!   60 s, counted from the last client's leaving, however briefly it
//!   stayed), or when its socket was removed or replaced, on a stop
//!   signal ([`crate::platform::signals`]: SIGTERM, Ctrl-C, …) or a `Stop`
//!   frame, the daemon stops taking clients, stops its servers (within
//!   10 s) and exits. Servers die with it even when it is
//!   SIGKILLed (parent-death signal, set by scry-lsp).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use scry_ops::Engine;
use scry_workspace::ProcessTable;
use scry_workspace::{ServerMemory, memory};

use super::socket::{self, Bound, StartError};
use super::{State, WsEntry, WsKey};
use crate::paths::Files;
use crate::platform::signals::Shutdown;
use crate::platform::transport;

/// How long the daemon lingers with no client and no server.
pub const DEFAULT_IDLE: Duration = Duration::from_secs(60);
/// How often servers are checked for idleness.
const REAP_EVERY: Duration = Duration::from_millis(500);
/// How long stopping the servers may take at exit.
const SHUTDOWN_BUDGET: Duration = Duration::from_secs(10);

/// The daemon's idle time from `SCRY_DAEMON_IDLE_MS`, else [`DEFAULT_IDLE`].
pub fn idle_from_env() -> Duration {
    std::env::var("SCRY_DAEMON_IDLE_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_millis)
        .unwrap_or(DEFAULT_IDLE)
}

/// Run the daemon until it idles out, is stopped, or its socket is gone.
pub async fn run(files: Files, idle: Duration) -> Result<(), StartError> {
    let Bound {
        lock: lock_file,
        mut listener,
    } = socket::bind(&files)?;
    tracing::info!(socket = %files.socket.display(), pid = std::process::id(), "scry daemon listening");
    let (stop, mut stopped) = tokio::sync::watch::channel(false);
    let state = Arc::new(State {
        files: files.clone(),
        started: Instant::now(),
        workspaces: Mutex::new(HashMap::new()),
        clients: AtomicUsize::new(0),
        last_client: Mutex::new(Instant::now()),
        stop,
        memory_checked: Mutex::new(Instant::now()),
        refreshing: Arc::default(),
    });
    let mut reap = tokio::time::interval(REAP_EVERY);
    reap.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut idle_since: Option<Instant> = None;
    let mut signals = Shutdown::listen().map_err(|e| StartError::Io(e.to_string()))?;
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(stream) => {
                    if let Err(e) = transport::check_peer(&stream) {
                        tracing::warn!("{e}");
                        continue;
                    }
                    let st = state.clone();
                    tokio::spawn(async move { st.serve(stream).await });
                }
                Err(e) => tracing::warn!("accept failed: {e}"),
            },
            _ = reap.tick() => {
                if state.reap(&mut idle_since, idle, listener.still_bound()).await {
                    break;
                }
            }
            _ = stopped.changed() => break,
            why = signals.recv() => {
                tracing::info!("{why}: stopping");
                break;
            }
        }
    }
    // Stop taking clients, then stop the servers (bounded).
    listener.close();
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

impl State {
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

    /// The lifecycle tick (`bound`: the listener's address still leads
    /// here); true when the daemon should exit.
    async fn reap(&self, idle_since: &mut Option<Instant>, idle: Duration, bound: bool) -> bool {
        if !bound {
            tracing::info!("the socket was removed or replaced: stopping");
            return true;
        }
        let entries = self.entries();
        let mut max = usize::MAX;
        for (root, e) in &entries {
            // Trust follows its files between calls too: a revoke stops
            // what runs for the workspace now, not at its next call.
            if let Err(err) = e.local.engine().workspace().refresh_config().await {
                tracing::warn!(root = %root.display(), "the configuration cannot be read: {err}");
            }
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
        // Idle since the later of the first quiet tick and the last client's
        // leaving (calls shorter than a tick are seen only there).
        let since = *idle_since.get_or_insert_with(Instant::now);
        let left = *self.last_client.lock().unwrap_or_else(|e| e.into_inner());
        if since.max(left).elapsed() >= idle {
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
    /// (each only while no call holds it) and tells its next answer. While
    /// a call is in flight the check waits for a tick with none (the
    /// snapshot reads every process's `/proc` entry, on the cores the call
    /// needs), but never longer than one more interval.
    fn check_memory(&self, entries: &[(PathBuf, Arc<WsEntry>)]) {
        let (mut every, mut budget) = (u64::MAX, u64::MAX);
        for (_, e) in entries {
            let limits = e.local.engine().workspace().config().limits;
            every = every.min(limits.memory_check_ms);
            budget = budget.min(limits.memory_budget_mib);
        }
        let every = Duration::from_millis(every);
        let calls = entries
            .iter()
            .any(|(_, e)| e.calls.load(Ordering::SeqCst) > 0);
        {
            let mut last = self
                .memory_checked
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            let since = last.elapsed();
            if entries.is_empty() || since < every || (calls && since < every.saturating_mul(2)) {
                return;
            }
            *last = Instant::now();
        }
        let Some(table) = ProcessTable::take() else {
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
}

#[cfg(test)]
mod wire_tests {
    use super::*;
    use crate::client::{ConnectError, Connection};
    use crate::paths::{PROTOCOL, VERSION};
    use crate::proto::{self, ClientFrame, DaemonFrame};
    use tokio::io::AsyncWriteExt;
    use tokio::io::{AsyncBufReadExt, BufReader};

    /// A daemon in a temporary directory, and its files.
    async fn daemon() -> (tempfile::TempDir, Files, tokio::task::JoinHandle<()>) {
        let t = tempfile::tempdir().unwrap();
        let files = Files::named(&t.path().join("d"), VERSION, "test");
        let f = files.clone();
        let task = tokio::spawn(async move {
            run(f, Duration::from_secs(30)).await.unwrap();
        });
        for _ in 0..500 {
            if transport::connect(&files.socket).await.is_ok() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        (t, files, task)
    }

    /// How many other clients the daemon counts, as `c` asks, once it is
    /// `want` (within 5 s; the last count seen otherwise).
    async fn others(c: &mut Connection, want: usize) -> usize {
        let mut n = usize::MAX;
        for _ in 0..250 {
            n = c.status().await.unwrap().clients;
            if n == want {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        n
    }

    #[tokio::test]
    async fn two_clients_are_served_at_once_over_the_real_transport() {
        let (_t, files, task) = daemon().await;
        let (a, b) = tokio::join!(
            Connection::connect(&files, "a"),
            Connection::connect(&files, "b")
        );
        let (mut a, mut b) = (a.unwrap(), b.unwrap());
        // Both open at once, both answered, each seeing the other.
        let (sa, sb) = tokio::join!(a.status(), b.status());
        assert_eq!(sa.unwrap().clients, 1);
        assert_eq!(sb.unwrap().clients, 1);
        // A shared session (what a CLI call and an MCP session use) joins
        // them, and its connection closes when it is dropped.
        let shared = crate::client::Shared::connect(
            files.clone(),
            "/nonexistent/scry".into(),
            "mcp-test".into(),
        )
        .await
        .unwrap();
        assert_eq!(shared.pid().await, Some(std::process::id()));
        assert_eq!(others(&mut a, 2).await, 2);
        drop(shared);
        assert_eq!(others(&mut a, 1).await, 1, "a dropped session is gone");
        drop(b);
        assert_eq!(others(&mut a, 0).await, 0, "a closed connection is gone");
        a.stop().await.unwrap();
        tokio::time::timeout(Duration::from_secs(15), task)
            .await
            .expect("the daemon stops")
            .unwrap();
    }

    #[tokio::test]
    async fn a_version_mismatch_is_refused_in_clear_words_never_a_hang() {
        let (_t, files, task) = daemon().await;
        let mut s = transport::connect(&files.socket).await.unwrap();
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
        // Its last client leaves (a stopped daemon's process exits, closing
        // every connection; here its tasks outlive it): nothing answers.
        drop(c);
        let after = Connection::connect(&files, "t3").await;
        assert!(
            matches!(after, Err(ConnectError::Absent(_))),
            "{:?}",
            after.err()
        );
    }

    #[tokio::test]
    async fn a_frame_that_is_not_a_hello_is_refused() {
        let (_t, files, task) = daemon().await;
        let mut s = transport::connect(&files.socket).await.unwrap();
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
