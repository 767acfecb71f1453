//! Memory and limits: each server's process tree sampled — by the host's
//! periodic check ([`Workspace::memory_samples`], [`crate::memory::decide`],
//! [`Workspace::apply_memory`]) and before a call uses it —, restarted
//! over its cap while unused, idle servers stopped over the budget, least
//! recently used first; what was done recorded for the next answer and
//! `status`; `limits.maxServers` ([`Workspace::make_room`]) and
//! `limits.serverIdleMs` ([`Workspace::stop_idle`]); the running servers'
//! use for `status` ([`Workspace::usage`]).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use scry_lsp_session::Session;
use scry_model::MemoryAction;

use super::{Key, ServerMemory, ServerUse, Slot, Workspace};
use crate::memory::{self, Decision, MemoryEvent, Sample};
use scry_lsp_session::process::memory::{ProcessTable, TreeMemory};

/// How many memory events `status` keeps per workspace.
const MEMORY_EVENTS_KEPT: usize = 10;

impl Workspace {
    /// The check before a call uses `s` (its slot locked by the caller):
    /// its memory — the last sample when taken within
    /// `limits.memoryCheckMs`, else sampled now, and then the other servers
    /// of the workspace checked too (caps and the budget; those in use are
    /// left alone) — over its cap while only the pool holds it.
    pub(super) fn over_cap_before_call(&self, slot: &Slot, s: &Session) -> Option<Sample> {
        let pid = s.pid()?;
        let config = self.config();
        let every = Duration::from_millis(config.limits.memory_check_ms);
        let cap_kib = config
            .server(s.name())
            .map(|x| x.memory_cap_kib(&config.limits));
        let tree = match slot.remembered(pid, Some(every)) {
            Some(t) => t,
            None => {
                let table = ProcessTable::take()?;
                let tree = table.tree_memory(s.tree()?)?;
                slot.remember(pid, tree);
                self.check_others(&table, s, pid, tree, cap_kib);
                tree
            }
        };
        let me = sample_of(s, pid, tree, cap_kib, s.handles() > 1, slot.idle());
        (!me.busy && cap_kib.is_some_and(|c| me.rss_kib > c)).then_some(me)
    }

    /// The workspace's other servers, checked when a call samples its own
    /// (`s`, locked by the caller: it counts toward the budget but is never
    /// stopped for it).
    fn check_others(
        &self,
        table: &ProcessTable,
        s: &Session,
        pid: u32,
        tree: TreeMemory,
        cap_kib: Option<u64>,
    ) {
        let others = self.memory_samples(table);
        let budget = self.config().limits.memory_budget_mib.saturating_mul(1024);
        let mut samples: Vec<Sample> = others.iter().map(|m| m.sample.clone()).collect();
        samples.push(sample_of(s, pid, tree, cap_kib, true, Duration::ZERO));
        for d in memory::decide(&samples, Some(budget)) {
            if let Some(m) = others.get(d.index()) {
                self.apply_memory(m, &d);
            }
        }
    }

    /// One sample per running server of this workspace, from `table`
    /// (servers being started are left out). Each is remembered for
    /// [`Workspace::usage`].
    pub fn memory_samples(&self, table: &ProcessTable) -> Vec<ServerMemory> {
        let config = self.config();
        let mut out = Vec::new();
        for slot in self.slots_now() {
            let Ok(g) = slot.session.try_lock() else {
                continue;
            };
            let Some(s) = g.as_ref().filter(|s| s.is_alive()) else {
                continue;
            };
            let Some(pid) = s.pid() else { continue };
            let Some(tree) = s.tree().and_then(|t| table.tree_memory(t)) else {
                continue;
            };
            slot.remember(pid, tree);
            out.push(ServerMemory {
                sample: sample_of(
                    s,
                    pid,
                    tree,
                    config
                        .server(s.name())
                        .map(|x| x.memory_cap_kib(&config.limits)),
                    // The pool's handle is the only one: no call uses it.
                    s.handles() > 1 || s.in_flight() > 0,
                    slot.idle(),
                ),
                slot: slot.clone(),
            });
        }
        out
    }

    /// Carry out `decision` on the server `m` was sampled from — only if it
    /// is still that process and still unused (else nothing: the next
    /// check decides again). The server is taken out of the pool at once
    /// and shut down in the background; the next question starts it
    /// again. Returns what was done.
    pub fn apply_memory(&self, m: &ServerMemory, decision: &Decision) -> Option<MemoryEvent> {
        let taken = {
            let mut g = m.slot.session.try_lock().ok()?;
            let s = g.as_ref()?;
            if s.pid() != Some(m.sample.pid) || s.handles() > 1 {
                return None;
            }
            g.take()?
        };
        let what = match decision {
            Decision::Restart { .. } => memory::restarted(&m.sample, false),
            Decision::Stop {
                total_kib,
                budget_kib,
                ..
            } => memory::stopped(&m.sample, *total_kib, *budget_kib),
        };
        let event = self.record(&m.sample, what);
        match tokio::runtime::Handle::try_current() {
            Ok(h) => {
                h.spawn(async move { taken.shutdown().await });
            }
            Err(_) => taken.kill(),
        }
        Some(event)
    }

    /// Sample this workspace's servers, decide with its own budget, act:
    /// for a host with one workspace (the daemon decides across all of
    /// its workspaces itself).
    pub fn check_memory(&self) -> Vec<MemoryEvent> {
        let Some(table) = ProcessTable::take() else {
            return Vec::new();
        };
        let samples = self.memory_samples(&table);
        let budget = self.config().limits.memory_budget_mib.saturating_mul(1024);
        let plain: Vec<Sample> = samples.iter().map(|m| m.sample.clone()).collect();
        memory::decide(&plain, Some(budget))
            .iter()
            .filter_map(|d| self.apply_memory(&samples[d.index()], d))
            .collect()
    }

    pub(super) fn record(&self, s: &Sample, what: MemoryAction) -> MemoryEvent {
        tracing::warn!(server = %s.id, pid = s.pid, rss_kib = s.rss_kib, action = ?what, "memory policy");
        let event = MemoryEvent {
            at: std::time::SystemTime::now(),
            server: s.id.clone(),
            root: s.root.clone(),
            what: what.clone(),
        };
        let mut events = self.memory_events.lock().unwrap_or_else(|e| e.into_inner());
        events.push_back(event.clone());
        while events.len() > MEMORY_EVENTS_KEPT {
            events.pop_front();
        }
        self.memory_untold
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(what);
        event
    }

    /// What the memory policy did since the last answer took these notes
    /// (each told once).
    pub fn take_memory_notes(&self) -> Vec<MemoryAction> {
        std::mem::take(&mut *self.memory_untold.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// The last memory events of this workspace, oldest first (`status`).
    pub fn memory_events(&self) -> Vec<MemoryEvent> {
        self.memory_events
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .cloned()
            .collect()
    }

    /// Before starting a server in `starting`: while `max` or more run,
    /// stop the least recently used other one (not one being started or
    /// used right now).
    pub(super) fn make_room(&self, starting: &Slot, max: usize) {
        let slots = self.slots_now();
        let mut running: Vec<(Duration, Slot)> = slots
            .into_iter()
            .filter(|s| !Arc::ptr_eq(s, starting))
            .filter(|s| {
                s.session
                    .try_lock()
                    .is_ok_and(|g| g.as_ref().is_some_and(|x| x.is_alive()))
            })
            .map(|s| (s.idle(), s))
            .collect();
        running.sort_by_key(|(idle, _)| std::cmp::Reverse(*idle));
        let mut count = running.len();
        for (_, slot) in running {
            if count < max.max(1) {
                break;
            }
            if let Ok(mut g) = slot.session.try_lock()
                && let Some(s) = g.take()
            {
                tracing::info!(server = %s.name(), "stopping the least recently used server (limits.maxServers = {max})");
                tokio::spawn(async move { s.shutdown().await });
                count -= 1;
            }
        }
    }

    /// Stop the servers no question used for `idle` or longer; returns the
    /// names of those stopped.
    pub async fn stop_idle(&self, idle: Duration) -> Vec<String> {
        let slots: Vec<(Key, Slot)> = self
            .slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|(k, s)| (k.clone(), s.clone()))
            .collect();
        let mut stopped = Vec::new();
        for (key, slot) in slots {
            if slot.idle() < idle {
                continue;
            }
            // A server in use (being started or asked) is not idle.
            let taken = match slot.session.try_lock() {
                Ok(mut g) => g.take(),
                Err(_) => continue,
            };
            if let Some(s) = taken {
                tracing::info!(server = %s.name(), "stopping a server idle for {} s", slot.idle().as_secs());
                stopped.push(s.name().to_string());
                s.shutdown().await;
            }
            self.forget_if_empty(&key, &slot);
        }
        stopped
    }

    /// Stop one running server (the host picks which, e.g. the least
    /// recently used across workspaces); true when it was running.
    pub async fn stop_server(&self, id: &str, root: &Path) -> bool {
        let slots: Vec<Slot> = self
            .slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|(k, s)| {
                k.0 == id
                    && (k.1.as_deref() == Some(root)
                        || s.folders().first().is_some_and(|f| f.path == root))
            })
            .map(|(_, s)| s.clone())
            .collect();
        let mut any = false;
        for slot in slots {
            let taken = slot.session.try_lock().ok().and_then(|mut g| g.take());
            if let Some(s) = taken {
                s.shutdown().await;
                any = true;
            }
        }
        any
    }

    /// The running servers with their pid, uptime, idle time and memory
    /// as last sampled (see [`Workspace::usage_measured`]).
    pub fn usage(&self) -> Vec<ServerUse> {
        let config = self.config();
        let slots = self.slots_keyed();
        slots
            .iter()
            .filter_map(|(key, slot)| {
                let s = slot.session.try_lock().ok()?.clone()?;
                let folders = super::described_folders(&s, &slot.folders());
                let programs = slot.programs();
                Some(ServerUse {
                    id: s.name().to_string(),
                    root: s.root().to_path_buf(),
                    folders,
                    programs,
                    pid: s.pid(),
                    uptime: s.uptime(),
                    idle: slot.idle(),
                    memory: s.pid().and_then(|p| slot.remembered(p, None)),
                    cap_kib: config
                        .server(s.name())
                        .map(|x| x.memory_cap_kib(&config.limits)),
                    program: key.2.clone(),
                    clients: slot.clients(),
                })
            })
            .collect()
    }

    /// [`Workspace::usage`] with every server's memory sampled now.
    pub fn usage_measured(&self) -> Vec<ServerUse> {
        if let Some(table) = ProcessTable::take() {
            for slot in self.slots_now() {
                let measured = slot.session.try_lock().ok().and_then(|g| {
                    let s = g.as_ref()?;
                    Some((s.pid()?, table.tree_memory(s.tree()?)?))
                });
                if let Some((pid, tree)) = measured {
                    slot.remember(pid, tree);
                }
            }
        }
        self.usage()
    }
}

/// A running server's memory sample for the policy ([`memory::decide`]).
fn sample_of(
    s: &Session,
    pid: u32,
    tree: TreeMemory,
    cap_kib: Option<u64>,
    busy: bool,
    idle: Duration,
) -> Sample {
    Sample {
        id: s.name().to_string(),
        root: s.root().to_path_buf(),
        pid,
        rss_kib: tree.rss_kib,
        processes: tree.processes,
        cap_kib,
        busy,
        idle,
    }
}
