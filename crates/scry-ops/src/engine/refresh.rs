//! Background refresh of a workspace's SCIP index (the daemon's): when
//! the workspace has had no call for `limits.indexRefreshIdleMs` and a
//! file its index verified against the disk changed since (or was
//! removed), the catalogue's
//! indexers run again (`scry_workspace::indexing`, the function `scry index`
//! uses) at the lowest CPU and I/O priority, and the result replaces the
//! cache's index, so the next cold start answers precisely.
//!
//! Invariants:
//! - a file the index verified that changed or was removed, or a new file
//!   of one of its languages written since it ([`scry_index::cache::new_files`]),
//!   makes a refresh due; the result is recorded as the daemon's
//!   (`built-by`), and its answers and `status` say so;
//! - without a host (the in-process route) nothing refreshes: an answer
//!   from a stale index says so and how to rebuild it;
//! - never on a call's path: the host (the daemon) starts it from its
//!   lifecycle tick, on a task of its own, and calls never wait for it;
//! - only where the user chose an index (one built by `scry index`, or a
//!   configured CI-built one), `index.refresh` is on (the default), and an
//!   indexer for the workspace's languages is installed; the indexers run
//!   under the same rules as servers, in the environment of the
//!   workspace's last call, and under the trust its files say when they
//!   start (the configuration is reread first; a revoke stops one running);
//! - bounded ([`scry_workspace::indexing::DEFAULT_TIMEOUT`]) and stopped with the
//!   engine ([`Engine::shutdown`]); a failure is logged and shown in
//!   `status` ([`Engine::refresh_status`], data that scry-render words),
//!   never an error of a call, and not retried until a call comes after
//!   it.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use scry_model::{IndexerStatus, RefreshStatus};
use scry_workspace::indexing::{self, BuildOptions};

use super::Engine;

/// What a refresh gave: the index rebuilt (its files), or the failure's
/// text (the indexer's or the build's, paths as they wrote them).
enum Outcome {
    Rebuilt { millis: u64, files: u64 },
    Failed { millis: u64, error: String },
}

/// The refresh's state, one per engine.
#[derive(Default)]
pub(crate) struct Refresh {
    /// Set to stop a running indexer (the engine shutting down).
    cancel: AtomicBool,
    running: AtomicBool,
    /// A host (the daemon) asks for refreshes: without one (in-process)
    /// nothing rebuilds a stale index by itself.
    hosted: AtomicBool,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// When staleness was last checked or a refresh last ran.
    looked: Option<Instant>,
    /// The last refresh: when it ended, and what it gave.
    last: Option<(Instant, Outcome)>,
}

impl Refresh {
    /// Stop a running indexer.
    pub(crate) fn cancel(&self) {
        self.cancel.store(true, Ordering::SeqCst);
    }
}

impl Engine {
    /// Called by a host that asks for refreshes (the daemon, when it opens
    /// the workspace): answers from a stale index then say it is rebuilt
    /// when idle, not that nothing rebuilds it.
    pub fn host_index_refresh(&self) {
        self.refresh.hosted.store(true, Ordering::SeqCst);
    }

    /// Whether something rebuilds this workspace's stale index by itself:
    /// a host (the daemon) asks for refreshes and `index.refresh` is on.
    pub(crate) fn refreshes_by_itself(&self) -> bool {
        self.refresh.hosted.load(Ordering::SeqCst) && self.ws.config().index.refresh
    }

    /// Whether a refresh of this workspace's index is running.
    pub fn refreshing(&self) -> bool {
        self.refresh.running.load(Ordering::SeqCst)
    }

    /// Refresh the index when it is due, given that the workspace has had
    /// no call for `since_call`; `false`: nothing was due. Run it off
    /// any call (the daemon's tick spawns it); it takes as long as the
    /// indexers do.
    pub async fn refresh_index_if_due(&self, since_call: Duration) -> bool {
        self.refresh.hosted.store(true, Ordering::SeqCst);
        // No call read the workspace's trust for this: read it now (a
        // revoke since the last call is seen before anything runs).
        if let Err(e) = self.ws.refresh_config().await {
            tracing::warn!("index refresh: the configuration cannot be read: {e}");
            return false;
        }
        let config = self.ws.config();
        let every = Duration::from_millis(config.limits.index_refresh_idle_ms);
        if !config.index.refresh || since_call < every || self.refreshing() {
            return false;
        }
        {
            let st = self.refresh.state.lock().unwrap_or_else(|e| e.into_inner());
            if st.looked.is_some_and(|t| t.elapsed() < every) {
                return false;
            }
            // After a failure, not again until a call came after it.
            if let Some((ended, Outcome::Failed { .. })) = &st.last
                && ended.elapsed() <= since_call
            {
                return false;
            }
        }
        self.refresh
            .state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .looked = Some(Instant::now());
        let root = self.ws.root().to_path_buf();
        if indexing::plan(&self.ws, &root)
            .iter()
            .all(|p| p.program.is_none())
        {
            return false;
        }
        let Ok(Some(loaded)) = self.index().await else {
            return false;
        };
        // Files the index verified against the disk that changed since: a
        // document it could not verify stays unverified after a rebuild,
        // so it never makes one due (that would rebuild on every idle).
        let slot = self.index.clone();
        let r = root.clone();
        // And new files of the index's languages written since it.
        let changed = tokio::task::spawn_blocking(move || {
            let ix = &loaded.ix;
            let changed = (0..ix.documents())
                .filter_map(|i| ix.doc_at(i).ok())
                .filter(|d| d.verified && !slot.fresh.is_fresh(&r, d))
                .count();
            if changed > 0 {
                return changed;
            }
            scry_index::cache::new_files(&r, ix, 1) as usize
        })
        .await
        .unwrap_or(0);
        if changed == 0 {
            return false;
        }
        tracing::info!(root = %root.display(), changed, "refreshing the SCIP index in the background");
        self.refresh_index().await;
        true
    }

    /// Rebuild the index now, in the background's priority, and record
    /// the outcome (see the module header).
    pub async fn refresh_index(&self) {
        let Some(cache) = self.index.cache.clone() else {
            return;
        };
        if self.refresh.running.swap(true, Ordering::SeqCst) {
            return;
        }
        let ws = self.ws.clone();
        let me = self.refresh.clone();
        let call = scry_workspace::env::current();
        let started = Instant::now();
        let result = tokio::task::spawn_blocking(move || {
            let run = || {
                let root = ws.root().to_path_buf();
                indexing::build(
                    &cache,
                    &ws,
                    &root,
                    BuildOptions {
                        timeout: indexing::DEFAULT_TIMEOUT,
                        background: true,
                        cancel: Some(&me.cancel),
                        progress: &mut |p: indexing::Progress| {
                            tracing::debug!("index refresh: {p:?}")
                        },
                    },
                )
                .map(|ix| ix.meta().documents)
            };
            match call {
                Some(c) => scry_workspace::env::sync_scope(c, run),
                None => run(),
            }
        })
        .await
        .unwrap_or_else(|e| Err(format!("the refresh task failed: {e}")));
        let millis = started.elapsed().as_millis() as u64;
        let secs = millis as f64 / 1000.0;
        let outcome = match result {
            Ok(files) => {
                tracing::info!("SCIP index refreshed in {secs:.1} s ({files} files)");
                Outcome::Rebuilt { millis, files }
            }
            Err(error) => {
                tracing::warn!("SCIP index refresh failed after {secs:.1} s: {error}");
                Outcome::Failed { millis, error }
            }
        };
        let mut st = self.refresh.state.lock().unwrap_or_else(|e| e.into_inner());
        st.last = Some((Instant::now(), outcome));
        st.looked = Some(Instant::now());
        self.refresh.running.store(false, Ordering::SeqCst);
    }

    /// The indexers of the workspace's languages, installed (where) or
    /// missing (how to install), for `status`.
    pub(crate) fn indexers_status(&self) -> Vec<IndexerStatus> {
        indexing::plan(&self.ws, self.ws.root())
            .iter()
            .map(indexing::Planned::status)
            .collect()
    }

    /// What `status` says of the background refresh: running, or its last
    /// outcome; `None` before the first.
    pub(crate) fn refresh_status(&self) -> Option<RefreshStatus> {
        if self.refreshing() {
            return Some(RefreshStatus::Running);
        }
        let st = self.refresh.state.lock().unwrap_or_else(|e| e.into_inner());
        let (ended, outcome) = st.last.as_ref()?;
        let ago_secs = ended.elapsed().as_secs();
        Some(match outcome {
            Outcome::Rebuilt { millis, files } => RefreshStatus::Rebuilt {
                ago_secs,
                millis: *millis,
                files: *files,
            },
            Outcome::Failed { millis, error } => RefreshStatus::Failed {
                ago_secs,
                millis: *millis,
                error: error.clone(),
            },
        })
    }
}
