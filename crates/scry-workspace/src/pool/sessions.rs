//! Starting and keeping sessions: one process per [`super::Key`], started
//! on first use (concurrent callers wait for one start), reused while
//! alive, restarted when it died or is over its memory cap before a call
//! sends anything; the sessions running and starting; the workspace's file
//! watcher and the changes it and scry itself announce to the servers;
//! stopping everything ([`Workspace::shutdown`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use scry_lsp_session::{Session, SessionConfig};

use super::{Route, Slot, Workspace, WorkspaceError, config_hash};
use crate::memory;
use crate::watch::{self, FileWatcher};

impl Workspace {
    /// The running session for a route, started if needed. Concurrent
    /// callers for the same key (see `Key`) wait for one start: never two
    /// processes. A session that died is replaced (with every folder it
    /// had). One process serves every root of the workspace when its
    /// server takes folders (the root added to it as one); a server that
    /// does not gets a process per root.
    pub async fn session(&self, route: &Route) -> Result<Session, WorkspaceError> {
        let call = crate::env::current();
        let program =
            scry_base::paths::canonical(&route.program).unwrap_or_else(|_| route.program.clone());
        let reads = call.as_ref().map_or(0, |c| match &route.spec.reads_env {
            // Only what this server reads (its catalogue entry says).
            Some(names) => c.env.reads_hash(names),
            None => c.env.server_hash(),
        });
        // And where it would find the programs it runs from its PATH.
        let programs = self.path_programs(&route.spec);
        let env = {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            (reads, &programs).hash(&mut h);
            h.finish()
        };
        let cfg = config_hash(route);
        let id = route.spec.id.clone();
        let shared = self.slot((id.clone(), None, program.clone(), env, cfg));
        shared.set_programs(&programs);
        if let Some(s) = self.serve_from(&shared, route, true).await? {
            return Ok(s);
        }
        let own = self.slot((id, Some(route.root.clone()), program, env, cfg));
        own.set_programs(&programs);
        match self.serve_from(&own, route, false).await? {
            Some(s) => Ok(s),
            None => unreachable!("a slot of the route's own root always serves it"),
        }
    }

    fn slot(&self, key: super::Key) -> Slot {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        slots.entry(key).or_default().clone()
    }

    /// The session of `slot` for `route`: its server, the route's root
    /// added as a folder when it is not one yet (`shared`: the slot serves
    /// every root its server takes), or started with every folder the slot
    /// had. `None` when the shared slot's server serves another root and
    /// takes no folders.
    async fn serve_from(
        &self,
        slot: &Slot,
        route: &Route,
        shared: bool,
    ) -> Result<Option<Session>, WorkspaceError> {
        slot.touch();
        slot.used_by_current_call();
        let mut guard = slot.session.lock().await;
        if let Some(s) = guard.as_ref()
            && s.is_alive()
            && let Some(sample) = self.over_cap_before_call(slot, s)
        {
            // Over its cap and nobody else holds it: restart it before
            // this call sends anything.
            let old = guard.take();
            self.record(&sample, memory::restarted(&sample, true));
            if let Some(old) = old {
                old.shutdown().await;
            }
        }
        if let Some(s) = guard.as_ref() {
            if s.is_alive() {
                if !shared || s.has_folder(&route.root) {
                    return Ok(Some(s.clone()));
                }
                if !s.takes_folders() {
                    return Ok(None);
                }
                slot.add_folder(route);
                let settings = self.settings_for(&route.spec, &slot.folders());
                s.add_folder(&route.root, Some(settings))?;
                return Ok(Some(s.clone()));
            }
            let reason = s.exit_reason().await.unwrap_or_default();
            tracing::warn!(server = %route.spec.id, "restarting: previous process ended ({reason})");
            s.kill();
            *guard = None;
        }
        let known = slot.folders();
        if shared
            && slot.took_folders() == Some(false)
            && !known.is_empty()
            && !known.iter().any(|f| f.path == route.root)
        {
            return Ok(None);
        }
        slot.add_folder(route);
        let folders = slot.folders();
        self.ensure_watcher();
        let config = self.config();
        self.make_room(slot, config.limits.max_servers);
        let session = Session::start(SessionConfig {
            name: route.spec.id.clone(),
            program: route.program.clone(),
            args: route.spec.args.clone(),
            // The call's environment, then the server's configured one,
            // its PATH cleaned (crate::env::for_child).
            env: self.child_env(&route.spec.env).vars().to_vec(),
            root: folders[0].path.clone(),
            folders: folders[1..].iter().map(|f| f.path.clone()).collect(),
            settings: self.settings_for(&route.spec, &folders),
            initialization_options: route.spec.initialization_options.clone(),
            log_dir: self.log_dir.clone(),
            max_open_documents: config.limits.max_open_documents,
            max_file_bytes: config.limits.max_file_bytes,
            edit_hook: self.edit_hook.clone(),
            startup: route.spec.startup_signal(),
        })
        .await?;
        slot.set_took_folders(session.takes_folders());
        *guard = Some(session.clone());
        Ok(Some(session))
    }

    /// Route and start in one step.
    pub async fn session_for_file(&self, path: &Path) -> Result<(Session, Route), WorkspaceError> {
        let route = self.route(path)?;
        let s = self.session(&route).await?;
        Ok((s, route))
    }

    /// Sessions running now (for status, workspace-wide questions).
    pub fn running(&self) -> Vec<Session> {
        let slots = self.slots_now();
        slots
            .iter()
            .filter_map(|s| s.session.try_lock().ok().and_then(|g| g.clone()))
            .collect()
    }

    /// Servers being started right now, by id and first folder (status
    /// shows "starting").
    pub fn starting(&self) -> Vec<(String, PathBuf)> {
        self.slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|(_, s)| s.session.try_lock().is_err())
            .filter_map(|(k, s)| {
                let root =
                    k.1.clone()
                        .or_else(|| s.folders().first().map(|f| f.path.clone()))?;
                Some((k.0.clone(), root))
            })
            .collect()
    }

    /// The folders a running session serves, each with what chose it (for
    /// `status`).
    pub fn folders_of(&self, session: &Session) -> Vec<scry_model::Folder> {
        let recorded = self
            .slots_now()
            .into_iter()
            .find(|slot| {
                slot.session
                    .try_lock()
                    .is_ok_and(|g| g.as_ref().is_some_and(|s| s.same_process(session)))
            })
            .map(|slot| slot.folders())
            .unwrap_or_default();
        super::described_folders(session, &recorded)
    }

    /// Stop every server (gracefully, bounded), then forget them.
    pub async fn shutdown(&self) -> usize {
        let slots: Vec<Slot> = self
            .slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain()
            .map(|(_, s)| s)
            .collect();
        let mut stopped = 0;
        let mut tasks = Vec::new();
        for slot in slots {
            if let Some(s) = slot.session.lock().await.take() {
                stopped += 1;
                tasks.push(tokio::spawn(async move { s.shutdown().await }));
            }
        }
        for t in tasks {
            let _ = t.await;
        }
        *self.watcher.lock().unwrap_or_else(|e| e.into_inner()) = None;
        stopped
    }

    /// Start the workspace's file watcher if it is not running (never
    /// fails: where no watcher can be made, it polls).
    fn ensure_watcher(&self) {
        let mut w = self.watcher.lock().unwrap_or_else(|e| e.into_inner());
        if w.is_none() {
            let max = self.config().limits.max_watched_dirs;
            *w = Some(Arc::new(FileWatcher::start(&self.root, max)));
        }
    }

    /// What the watcher could not see before the last request, once (the
    /// next answer's note).
    pub fn take_watch_note(&self) -> Option<scry_model::Reason> {
        self.watch_untold
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    /// Watch the directory of `path` — a file a question is about — first,
    /// when it is only polled ([`FileWatcher::watch_first`]).
    pub fn watch_first(&self, path: &Path) {
        if let (Some(w), Some(dir)) = (self.file_watcher(), path.parent()) {
            w.watch_first(dir);
        }
    }

    /// The watcher's status when it cannot watch every directory.
    pub fn watcher_status(&self) -> Option<scry_model::WatcherStatus> {
        let w = self.file_watcher()?;
        let (polled, dropped) = w.polled_counts();
        (polled > 0 || dropped > 0).then(|| scry_model::WatcherStatus {
            watched: w.watched_dirs(),
            polled,
            dropped,
            why: w.polled_why(),
        })
    }

    fn file_watcher(&self) -> Option<Arc<FileWatcher>> {
        self.watcher
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Tell every running server what changed on disk: the changes the
    /// watcher saw since the last call (each server gets those its
    /// registered file watchers match), plus `own` — changes scry made
    /// itself (`workspace/didChangeWatchedFiles` types: 1 created, 2
    /// changed, 3 deleted), sent to every server whose root holds them.
    /// Called before every request, so a file written just before is seen.
    /// The drain waits for the watcher to catch up only when a running
    /// server registered file watchers (else nothing it saw is sent).
    pub async fn announce_changes(&self, own: &[(PathBuf, u8)]) {
        let running = self.running();
        let seen = match self.file_watcher() {
            Some(w) => {
                let listening = running.iter().any(watch::listens);
                let seen = w.drain(listening).await;
                // What could not be seen before this request is said in
                // its answer (only where a server listens: nothing else
                // depends on the watcher).
                let u = w.unseen();
                if listening && (u.unreached > 0 || u.dropped > 0 || u.overflowed) {
                    self.watch_untold
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .replace(scry_model::Reason::NotAllSeen {
                            polled: u.polled,
                            unreached: u.unreached,
                            dropped: u.dropped,
                            overflowed: u.overflowed,
                        });
                }
                seen
            }
            None => Vec::new(),
        };
        if seen.is_empty() && own.is_empty() {
            return;
        }
        // A marker, a directory or a file of a new type came, went or
        // changed: the layout (and the roots it holds) is walked again when
        // next needed; a source file written keeps it.
        let changes: Vec<&(PathBuf, u8)> = seen.iter().chain(own).collect();
        self.forget_layout_if(&changes);
        watch::forward(&running, &seen, own);
    }
}
