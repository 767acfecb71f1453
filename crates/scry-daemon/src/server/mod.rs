//! The daemon process: one per user and scry version ([`crate::paths`]).
//! It holds one [`Engine`] per canonical workspace root and configuration
//! environment (the call's [`scry_workspace::env::CallEnv::config_hash`]:
//! `HOME`, the XDG directories, `SCRY_*`) — so one pool of language servers
//! per workspace, shared by every client, each server keyed by the binary
//! the client's `PATH` resolves and the environment it runs with (see
//! `scry_workspace::pool`) — and answers [`crate::proto`] frames on its
//! socket (a Unix socket, or a named pipe on Windows:
//! [`crate::platform::transport`]).
//!
//! By job:
//! - [`socket`]: the one-daemon rule (the lock), binding the listener,
//!   and who may connect.
//! - [`protocol`]: one connection: the hello, the frames read and
//!   dispatched, each call answered on its own task in its client's
//!   environment, and the status frame.
//! - [`lifecycle`]: start ([`lifecycle::run`]), the accept loop, the
//!   reaping tick (idle and excess servers, memory, background index
//!   refresh, idle workspaces forgotten) and the idle shutdown.
//!
//! This file: the daemon's state the three share — the workspaces, one
//! entry per root and configuration environment, and the connected
//! clients.
//!
//! Invariant kept here: a workspace entry a call is using is counted from
//! the moment it is taken out of the map, under the map's lock, until the
//! call ends (`InUse`), so the reaper never forgets an entry a call holds.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use scry_ops::Engine;
use scry_workspace::Workspace;

use crate::answer::{Baseline, Caller, Local};
use crate::paths::Files;

pub mod lifecycle;
pub mod protocol;
pub mod socket;

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
    session: Arc<Caller>,
    roots: Mutex<HashSet<WsKey>>,
}

struct State {
    files: Files,
    started: Instant,
    workspaces: Mutex<HashMap<WsKey, Arc<WsEntry>>>,
    clients: AtomicUsize,
    /// When the last client left: a client that came and went between two
    /// ticks of the reaper still counts as activity for the idle exit.
    last_client: Mutex<Instant>,
    stop: tokio::sync::watch::Sender<bool>,
    /// When the servers' memory was last checked.
    memory_checked: Mutex<Instant>,
    /// A background index refresh is looking or running (one at a time).
    refreshing: Arc<std::sync::atomic::AtomicBool>,
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

    fn entries(&self) -> Vec<(PathBuf, Arc<WsEntry>)> {
        self.workspaces
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|(k, v)| (k.0.clone(), v.clone()))
            .collect()
    }
}
