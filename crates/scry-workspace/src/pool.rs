//! The servers of one workspace: routing a file to its server and root, and
//! one process per (server, root, resolved absolute program — found on the
//! calling client's `PATH`, canonicalized —, hash of the variables the
//! server reads ([`crate::env::CallEnv::reads_hash`] of its catalogue
//! entry's `readsEnv`; all the servers' variables when it names none:
//! [`crate::env::CallEnv::server_hash`]), hash of the
//! effective server config: args, env, settings, initializationOptions),
//! started lazily on first use, reused after, restarted when it died,
//! stopped on `reload` and `shutdown`. Two clients whose `PATH`s resolve
//! the same binary share the server; ones resolving another get their own.
//! A server is started with the environment of the call that started it
//! (its captured variables, then the server's configured `env`, the `PATH`
//! cleaned: [`Workspace::child_env`], [`crate::env::for_child`]); each
//! server remembers which clients used it (for `daemon status`).
//!
//! Lifecycle for long-lived hosts (the daemon): each server remembers when
//! a question last used it; [`Workspace::stop_idle`] stops those idle
//! longer than `limits.serverIdleMs`, and starting a server beyond
//! `limits.maxServers` first stops the least recently used one.
//! [`Workspace::refresh_config`] rereads the configuration when a file it
//! was read from changed (trust store included: a grant or revoke counts
//! on the next call) and stops only the servers whose effective
//! configuration changed (all of them when trust changed).
//!
//! Memory ([`crate::memory`], [`crate::procmem`]): each server's process
//! tree is sampled — by the host's periodic check ([`Workspace::
//! memory_samples`] + [`crate::memory::decide`] + [`Workspace::
//! apply_memory`]; [`Workspace::check_memory`] does all three for this
//! workspace alone) and before a call uses it, at most every
//! `limits.memoryCheckMs`. A server over its cap is restarted only while no
//! caller holds its session (the pool's handle is the only one, so no
//! request of a call is in flight); one in use is left for the next check
//! or restarted by the next call before anything is sent. Over
//! `limits.memoryBudgetMiB`, idle servers are stopped least recently used
//! first. What was done is told, with the figures, in the next answer
//! ([`Workspace::take_memory_notes`]) and by `status`
//! ([`Workspace::memory_events`]).
//!
//! Commands are looked up in the project-local bin dirs only when the
//! workspace is trusted ([`crate::trust`]); what an untrusted workspace
//! passed over is told once per session ([`Workspace::take_trust_notice`]).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use scry_lsp::{ApplyEditHook, EditHookSlot, Session, SessionConfig, SessionError};

use crate::catalog::{ProviderKind, ServerSpec};
use crate::command::{resolve_command, resolve_command_untrusted};
use crate::config::{Config, ConfigError};
use crate::memory::{self, Decision, MemoryEvent, Sample};
use crate::procmem::{ProcTable, TreeMemory};
use crate::roots::find_root;
use crate::trust::{self, TrustPolicy};
use crate::watch::{self, FileWatcher};

/// Where a file goes: which server, which executable, which root.
#[derive(Debug, Clone)]
pub struct Route {
    pub spec: ServerSpec,
    pub program: PathBuf,
    pub root: PathBuf,
    pub language_id: String,
}

#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    /// No server can serve this file: none configured, or none installed.
    #[error("{0}")]
    NoServer(String),
    #[error(transparent)]
    Session(#[from] SessionError),
}

/// (server id, root, canonical program, hash of the environment it is
/// started with, hash of the effective server configuration).
type Key = (String, PathBuf, PathBuf, u64, u64);

/// A command and the `PATH` it is looked up on.
type CommandKey = (String, Option<std::ffi::OsString>);

/// How many command lookups a workspace caches (then the cache starts
/// afresh).
const COMMANDS_KEPT: usize = 1024;

/// How many recent clients a server remembers for `daemon status`.
const CLIENTS_KEPT: usize = 16;

/// One server's place in the pool: its session (while running) and when a
/// question last used it.
#[derive(Default)]
struct SlotState {
    session: tokio::sync::Mutex<Option<Session>>,
    last_used: Mutex<Option<Instant>>,
    /// The last memory sample of its process tree: when, which pid, what.
    memory: Mutex<Option<(Instant, u32, TreeMemory)>>,
    /// The clients that used it (label → when last), at most
    /// [`CLIENTS_KEPT`], the least recent dropped first.
    clients: Mutex<HashMap<String, Instant>>,
}

impl SlotState {
    fn touch(&self) {
        *self.last_used.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
    }

    fn idle(&self) -> Duration {
        self.last_used
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .map(|t| t.elapsed())
            .unwrap_or_default()
    }

    /// Note that the call in scope (if any) uses this server.
    fn used_by_current_call(&self) {
        let Some(ctx) = crate::env::current() else {
            return;
        };
        let mut c = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        c.insert(ctx.label(), Instant::now());
        while c.len() > CLIENTS_KEPT {
            let Some(oldest) = c.iter().min_by_key(|(_, t)| **t).map(|(k, _)| k.clone()) else {
                break;
            };
            c.remove(&oldest);
        }
    }

    /// The clients that used it, most recent first.
    fn clients(&self) -> Vec<String> {
        let c = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        let mut v: Vec<(&String, &Instant)> = c.iter().collect();
        v.sort_by_key(|(_, t)| std::cmp::Reverse(**t));
        v.into_iter().map(|(k, _)| k.clone()).collect()
    }

    fn remember(&self, pid: u32, m: TreeMemory) {
        *self.memory.lock().unwrap_or_else(|e| e.into_inner()) = Some((Instant::now(), pid, m));
    }

    /// The last sample for `pid`, if taken within `fresh`.
    fn remembered(&self, pid: u32, fresh: Option<Duration>) -> Option<TreeMemory> {
        let g = self.memory.lock().unwrap_or_else(|e| e.into_inner());
        let (at, p, m) = (*g)?;
        (p == pid && fresh.is_none_or(|f| at.elapsed() < f)).then_some(m)
    }
}

type Slot = Arc<SlotState>;

/// A running server as a long-lived host reports it.
#[derive(Debug, Clone)]
pub struct ServerUse {
    pub id: String,
    pub root: PathBuf,
    pub pid: Option<u32>,
    pub uptime: Duration,
    /// Since a question last used it.
    pub idle: Duration,
    /// Its process tree's resident memory (the last sample; `None` before
    /// the first or where it cannot be read).
    pub memory: Option<TreeMemory>,
    /// Its memory cap, KiB.
    pub cap_kib: Option<u64>,
    /// The executable it runs (canonical).
    pub program: PathBuf,
    /// The clients that used it ("<session> (PATH <hash>)"), most recent
    /// first (only calls through the daemon name a client).
    pub clients: Vec<String>,
}

/// One server's memory sample and the server it is of (to act on it with
/// [`Workspace::apply_memory`]).
#[derive(Clone)]
pub struct ServerMemory {
    pub sample: Sample,
    slot: Slot,
}

impl std::fmt::Debug for ServerMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.sample.fmt(f)
    }
}

/// How many memory events `status` keeps per workspace.
const MEMORY_EVENTS_KEPT: usize = 10;

/// The hash of the effective server configuration: arguments, configured
/// environment, settings and initialization options (the program and the
/// call's environment are keyed apart: see [`Key`]).
fn config_hash(route: &Route) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    route.spec.args.hash(&mut h);
    route.spec.env.hash(&mut h);
    route.spec.settings.to_string().hash(&mut h);
    route
        .spec
        .initialization_options
        .as_ref()
        .map(|v| v.to_string())
        .hash(&mut h);
    h.finish()
}

/// A workspace root, its configuration and its running servers.
pub struct Workspace {
    root: PathBuf,
    config: RwLock<Arc<Config>>,
    slots: Mutex<HashMap<Key, Slot>>,
    /// (command, the `PATH` it was looked up on) → where it was found.
    commands: Mutex<HashMap<CommandKey, Option<PathBuf>>>,
    warned: Mutex<HashSet<String>>,
    log_dir: Option<PathBuf>,
    edit_hook: EditHookSlot,
    /// Watches the root for changes made outside scry (started with the
    /// first session; `None` inside when watching is impossible).
    watcher: Mutex<Option<Option<Arc<FileWatcher>>>>,
    /// How `reload` decides trust.
    policy: TrustPolicy,
    /// What the configuration was read from ([`crate::config::Stamp`]);
    /// `None` for a configuration given by the caller (never reread).
    stamp: Mutex<Option<crate::config::Stamp>>,
    /// Project-local executables passed over (untrusted workspace).
    skipped_bins: Mutex<BTreeSet<PathBuf>>,
    /// The trust notice items already told this session.
    trust_told: Mutex<HashSet<String>>,
    /// What the memory policy did, last first out (for `status`).
    memory_events: Mutex<std::collections::VecDeque<MemoryEvent>>,
    /// Memory events not yet told in an answer.
    memory_untold: Mutex<Vec<String>>,
}

impl Workspace {
    /// Open a workspace: canonical root, configuration loaded from disk.
    /// Project configuration is trusted or not as the environment says
    /// (`SCRY_TRUST`, `trustedRoots`, `scry trust`; see [`crate::trust`]).
    pub fn open(root: &Path) -> Result<Workspace, ConfigError> {
        Workspace::open_with_policy(root, TrustPolicy::FromEnvironment)
    }

    /// [`Workspace::open`] with the project configuration trusted (for
    /// callers that decided themselves, e.g. tests of project configs).
    pub fn open_trusted(root: &Path) -> Result<Workspace, ConfigError> {
        Workspace::open_with_policy(root, TrustPolicy::Trusted)
    }

    pub fn open_with_policy(root: &Path, policy: TrustPolicy) -> Result<Workspace, ConfigError> {
        let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
        // Taken before reading: a change made meanwhile is read next time.
        let stamp = crate::config::Stamp::now(&root);
        let config = Config::load_with_policy(&root, policy)?;
        let mut ws = Workspace::with_config(root, config);
        ws.policy = policy;
        ws.stamp = Mutex::new(Some(stamp));
        Ok(ws)
    }

    pub fn with_config(root: PathBuf, config: Config) -> Workspace {
        for w in &config.warnings {
            tracing::warn!("{w}");
        }
        Workspace {
            root,
            config: RwLock::new(Arc::new(config)),
            slots: Mutex::new(HashMap::new()),
            commands: Mutex::new(HashMap::new()),
            warned: Mutex::new(HashSet::new()),
            log_dir: scry_base::dirs::logs(),
            edit_hook: EditHookSlot::default(),
            watcher: Mutex::new(None),
            policy: TrustPolicy::FromEnvironment,
            stamp: Mutex::new(None),
            skipped_bins: Mutex::new(BTreeSet::new()),
            trust_told: Mutex::new(HashSet::new()),
            memory_events: Mutex::new(std::collections::VecDeque::new()),
            memory_untold: Mutex::new(Vec::new()),
        }
    }

    /// Send server logs elsewhere (`None`: no log files, only the ring
    /// buffer).
    pub fn with_log_dir(mut self, dir: Option<PathBuf>) -> Workspace {
        self.log_dir = dir;
        self
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn config(&self) -> Arc<Config> {
        self.config
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub fn log_dir(&self) -> Option<&Path> {
        self.log_dir.as_deref()
    }

    /// Install who answers servers' `workspace/applyEdit` requests (for
    /// sessions already running and those started later).
    pub fn set_apply_edit_hook(&self, hook: Option<Arc<dyn ApplyEditHook>>) {
        self.edit_hook.set(hook);
    }

    /// Where `command` is installed, on the current call's `PATH` (cached
    /// per `PATH` until `reload`). Untrusted workspaces: `PATH` only, never
    /// the project-local bin dirs.
    pub fn installed(&self, command: &str) -> Option<PathBuf> {
        let trusted = self.config().trust.trust.is_trusted();
        let mut cache = self.commands.lock().unwrap_or_else(|e| e.into_inner());
        // One entry per (command, PATH): bounded however many clients'
        // PATHs the daemon sees.
        if cache.len() >= COMMANDS_KEPT {
            cache.clear();
        }
        cache
            .entry((command.to_string(), crate::env::var_os("PATH")))
            .or_insert_with(|| {
                if trusted {
                    return resolve_command(command, &self.root);
                }
                let (found, skipped) = resolve_command_untrusted(command, &self.root);
                if let Some(s) = skipped {
                    tracing::debug!(path = %s.display(), "untrusted workspace: project-local command not used");
                    self.skipped_bins
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(s);
                }
                found
            })
            .clone()
    }

    /// The whole environment of a child started for this workspace (a
    /// server, a linter, an indexer) with its configured `env`: the one
    /// rule of [`crate::env::for_child`] with this workspace's trust.
    pub fn child_env(
        &self,
        configured: &std::collections::BTreeMap<String, String>,
    ) -> crate::env::ChildEnv {
        let trusted = self.config().trust.trust.is_trusted();
        crate::env::for_child(&self.root, trusted, configured)
    }

    /// What the untrusted workspace's configuration and bin dirs asked for
    /// and was ignored, with how to trust; `None` when trusted or nothing
    /// was ignored.
    pub fn trust_notice(&self) -> Option<String> {
        let bins: Vec<PathBuf> = self
            .skipped_bins
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .cloned()
            .collect();
        trust::notice(&self.config().trust, &self.root, &bins)
    }

    /// [`Workspace::trust_notice`], but only when it says something not
    /// told before in this session (so each answer does not repeat it).
    pub fn take_trust_notice(&self) -> Option<String> {
        let notice = self.trust_notice()?;
        self.trust_told
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(notice.clone())
            .then_some(notice)
    }

    /// Log a warning once per workspace (missing servers and the like).
    pub fn warn_once(&self, msg: &str) -> bool {
        let fresh = self
            .warned
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(msg.to_string());
        if fresh {
            tracing::warn!("{msg}");
        }
        fresh
    }

    /// The navigation server for `path` (not linters), or why there is none.
    pub fn route(&self, path: &Path) -> Result<Route, WorkspaceError> {
        let config = self.config();
        let installed = |s: &ServerSpec| self.installed(&s.command).is_some();
        let candidates: Vec<&ServerSpec> = config
            .servers_for(path, &installed)
            .into_iter()
            .filter(|s| s.kind == ProviderKind::Lsp && !s.is_linter)
            .collect();
        let describe = describe_file(path);
        let hint = || {
            self.trust_notice()
                .map(|n| format!(" ({n})"))
                .unwrap_or_default()
        };
        if candidates.is_empty() {
            return Err(WorkspaceError::NoServer(format!(
                "no language server is configured for {describe}; add one to .scry.json (see `scry status`){}",
                hint()
            )));
        }
        let mut missing = Vec::new();
        for spec in candidates {
            if let Some(program) = self.installed(&spec.command) {
                return Ok(Route {
                    root: find_root(spec, path, &self.root),
                    language_id: spec.language_id_for(path),
                    spec: spec.clone(),
                    program,
                });
            }
            missing.push(format!("{} (command `{}`)", spec.id, spec.command));
        }
        let msg = format!(
            "no installed language server for {describe}: {} not found on PATH; install it or configure another server{}",
            missing.join(", "),
            hint()
        );
        self.warn_once(&msg);
        Err(WorkspaceError::NoServer(msg))
    }

    /// The running session for a route, started if needed. Concurrent
    /// callers for the same key (see [`Key`]) wait for one start: never two
    /// processes. A session that died is replaced.
    pub async fn session(&self, route: &Route) -> Result<Session, WorkspaceError> {
        let call = crate::env::current();
        let key = (
            route.spec.id.clone(),
            route.root.clone(),
            route
                .program
                .canonicalize()
                .unwrap_or_else(|_| route.program.clone()),
            call.as_ref().map_or(0, |c| match &route.spec.reads_env {
                // Only what this server reads (its catalogue entry says).
                Some(names) => c.env.reads_hash(names),
                None => c.env.server_hash(),
            }),
            config_hash(route),
        );
        let slot = {
            let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
            slots.entry(key).or_default().clone()
        };
        slot.touch();
        slot.used_by_current_call();
        let mut guard = slot.session.lock().await;
        if let Some(s) = guard.as_ref()
            && s.is_alive()
            && let Some(sample) = self.over_cap_before_call(&slot, s)
        {
            // Over its cap and nobody else holds it: restart it before
            // this call sends anything.
            let old = guard.take();
            self.record(&sample, memory::restart_text(&sample, true));
            if let Some(old) = old {
                old.shutdown().await;
            }
        }
        if let Some(s) = guard.as_ref() {
            if s.is_alive() {
                return Ok(s.clone());
            }
            let reason = s.exit_reason().await.unwrap_or_default();
            tracing::warn!(server = %route.spec.id, "restarting: previous process ended ({reason})");
            s.kill();
            *guard = None;
        }
        self.ensure_watcher();
        let config = self.config();
        self.make_room(&slot, config.limits.max_servers);
        let session = Session::start(SessionConfig {
            name: route.spec.id.clone(),
            program: route.program.clone(),
            args: route.spec.args.clone(),
            // The call's environment, then the server's configured one,
            // its PATH cleaned (crate::env::for_child).
            env: self.child_env(&route.spec.env).vars().to_vec(),
            root: route.root.clone(),
            settings: route.spec.settings.clone(),
            initialization_options: route.spec.initialization_options.clone(),
            log_dir: self.log_dir.clone(),
            max_open_documents: config.limits.max_open_documents,
            max_file_bytes: config.limits.max_file_bytes,
            edit_hook: self.edit_hook.clone(),
        })
        .await?;
        *guard = Some(session.clone());
        Ok(session)
    }

    /// The check before a call uses `s` (its slot locked by the caller):
    /// its memory — the last sample when taken within
    /// `limits.memoryCheckMs`, else sampled now, and then the other servers
    /// of the workspace checked too (caps and the budget; those in use are
    /// left alone) — over its cap while only the pool holds it.
    fn over_cap_before_call(&self, slot: &Slot, s: &Session) -> Option<Sample> {
        let pid = s.pid()?;
        let config = self.config();
        let every = Duration::from_millis(config.limits.memory_check_ms);
        let cap_kib = config
            .server(s.name())
            .map(|x| x.memory_cap_kib(&config.limits));
        let tree = match slot.remembered(pid, Some(every)) {
            Some(t) => t,
            None => {
                let table = ProcTable::read()?;
                let tree = table.tree_memory(pid)?;
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
        table: &ProcTable,
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
    pub fn memory_samples(&self, table: &ProcTable) -> Vec<ServerMemory> {
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
            let Some(tree) = table.tree_memory(pid) else {
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
        let text = match decision {
            Decision::Restart { .. } => memory::restart_text(&m.sample, false),
            Decision::Stop {
                total_kib,
                budget_kib,
                ..
            } => memory::stop_text(&m.sample, *total_kib, *budget_kib),
        };
        let event = self.record(&m.sample, text);
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
        let Some(table) = ProcTable::read() else {
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

    fn record(&self, s: &Sample, text: String) -> MemoryEvent {
        tracing::warn!(server = %s.id, pid = s.pid, rss_kib = s.rss_kib, "{text}");
        let event = MemoryEvent {
            at: std::time::SystemTime::now(),
            server: s.id.clone(),
            root: s.root.clone(),
            text: text.clone(),
        };
        let mut events = self.memory_events.lock().unwrap_or_else(|e| e.into_inner());
        events.push_back(event.clone());
        while events.len() > MEMORY_EVENTS_KEPT {
            events.pop_front();
        }
        self.memory_untold
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(text);
        event
    }

    /// What the memory policy did since the last answer took these notes
    /// (each told once).
    pub fn take_memory_notes(&self) -> Vec<String> {
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
    fn make_room(&self, starting: &Slot, max: usize) {
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
            .filter(|(k, _)| k.0 == id && k.1 == root)
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

    fn forget_if_empty(&self, key: &Key, slot: &Slot) {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        if slots.get(key).is_some_and(|s| Arc::ptr_eq(s, slot))
            && slot.session.try_lock().is_ok_and(|g| g.is_none())
        {
            slots.remove(key);
        }
    }

    /// A snapshot of the slots with their keys.
    fn slots_keyed(&self) -> Vec<(Key, Slot)> {
        self.slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|(k, s)| (k.clone(), s.clone()))
            .collect()
    }

    /// A snapshot of the slots (the lock is not held across awaits).
    fn slots_now(&self) -> Vec<Slot> {
        self.slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect()
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
                Some(ServerUse {
                    id: s.name().to_string(),
                    root: s.root().to_path_buf(),
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
        if let Some(table) = ProcTable::read() {
            for slot in self.slots_now() {
                let pid = slot
                    .session
                    .try_lock()
                    .ok()
                    .and_then(|g| g.as_ref().and_then(|s| s.pid()));
                if let Some(pid) = pid
                    && let Some(tree) = table.tree_memory(pid)
                {
                    slot.remember(pid, tree);
                }
            }
        }
        self.usage()
    }

    /// Reread the configuration when a file it was read from (the user
    /// file, the project files, the `scry trust` store) changed since
    /// ([`crate::config::Stamp`]: a few `stat`s, so it is checked before
    /// every call): trust and everything it gates (project commands and
    /// settings, the configured index, project-local binaries) follow at
    /// once. The servers whose effective configuration is no longer the
    /// configured one stop (the next question starts them anew), and every
    /// server when the workspace's trust changed (what they run and find on
    /// their `PATH` was decided under the other); the others keep running.
    /// A configuration given by the caller ([`Workspace::with_config`]) is
    /// never reread. Returns whether anything was reread.
    pub async fn refresh_config(&self) -> Result<bool, ConfigError> {
        let Some(old) = self.stamp.lock().unwrap_or_else(|e| e.into_inner()).clone() else {
            return Ok(false);
        };
        let now = crate::config::Stamp::now(&self.root);
        if now == old {
            return Ok(false);
        }
        let fresh = Config::load_with_policy(&self.root, self.policy)?;
        *self.stamp.lock().unwrap_or_else(|e| e.into_inner()) = Some(now);
        let current = self.config();
        let trust_changed = fresh.trust.trust.is_trusted() != current.trust.trust.is_trusted();
        *self.config.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(fresh);
        self.commands
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        self.skipped_bins
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        let live: HashSet<(String, u64)> = self
            .configured_routes()
            .iter()
            .map(|r| (r.spec.id.clone(), config_hash(r)))
            .collect();
        let stale: Vec<(Key, Slot)> = self
            .slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|(k, _)| trust_changed || !live.contains(&(k.0.clone(), k.4)))
            .map(|(k, s)| (k.clone(), s.clone()))
            .collect();
        for (key, slot) in stale {
            let taken = slot.session.lock().await.take();
            if let Some(s) = taken {
                tracing::info!(server = %s.name(), trust_changed, "configuration changed: stopping the old server");
                s.shutdown().await;
            }
            self.forget_if_empty(&key, &slot);
        }
        Ok(true)
    }

    /// A route for every configured, installed server (root: the
    /// workspace's), for comparing configurations.
    fn configured_routes(&self) -> Vec<Route> {
        let config = self.config();
        config
            .servers
            .iter()
            .filter(|s| !s.disabled)
            .filter_map(|spec| {
                Some(Route {
                    program: self.installed(&spec.command)?,
                    spec: spec.clone(),
                    root: self.root.clone(),
                    language_id: String::new(),
                })
            })
            .collect()
    }

    /// Start the workspace's file watcher if it is not running (never
    /// fails: a watcher that cannot start is logged and left out).
    fn ensure_watcher(&self) {
        let mut w = self.watcher.lock().unwrap_or_else(|e| e.into_inner());
        if w.is_none() {
            *w = Some(FileWatcher::start(&self.root).map(Arc::new));
        }
    }

    fn file_watcher(&self) -> Option<Arc<FileWatcher>> {
        self.watcher
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .flatten()
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
            Some(w) => w.drain(running.iter().any(watch::listens)).await,
            None => Vec::new(),
        };
        if seen.is_empty() && own.is_empty() {
            return;
        }
        watch::forward(&running, &seen, own);
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

    /// Keys of sessions being started right now (status shows "starting").
    pub fn starting(&self) -> Vec<(String, PathBuf)> {
        self.slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|(_, s)| s.session.try_lock().is_err())
            .map(|(k, _)| (k.0.clone(), k.1.clone()))
            .collect()
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

    /// Stop everything and reread the configuration.
    pub async fn reload(&self) -> Result<usize, ConfigError> {
        let stamp = crate::config::Stamp::now(&self.root);
        let config = Config::load_with_policy(&self.root, self.policy)?;
        {
            let mut s = self.stamp.lock().unwrap_or_else(|e| e.into_inner());
            if s.is_some() {
                *s = Some(stamp);
            }
        }
        let stopped = self.shutdown().await;
        *self.config.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(config);
        self.commands
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        self.warned
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        self.skipped_bins
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        Ok(stopped)
    }

    /// Servers that could answer workspace-wide questions (no file given):
    /// running ones first, then installed servers whose root markers are in
    /// the workspace root.
    pub fn workspace_routes(&self) -> Vec<Route> {
        let config = self.config();
        let mut out: Vec<Route> = Vec::new();
        let mut seen = HashSet::new();
        for s in self.running() {
            if let Some(spec) = config.server(s.name())
                && let Some(program) = self.installed(&spec.command)
                && seen.insert(spec.id.clone())
            {
                out.push(Route {
                    spec: spec.clone(),
                    program,
                    root: s.root().to_path_buf(),
                    language_id: spec.language_id.clone().unwrap_or_default(),
                });
            }
        }
        for spec in &config.servers {
            if spec.disabled || spec.kind != ProviderKind::Lsp || spec.is_linter {
                continue;
            }
            if seen.contains(&spec.id) {
                continue;
            }
            let marked = spec
                .root_markers
                .iter()
                .filter(|m| m.as_str() != ".git")
                .any(|m| self.root.join(m).exists());
            if !marked {
                continue;
            }
            if spec
                .alternative_to
                .as_ref()
                .is_some_and(|p| seen.contains(p))
            {
                continue;
            }
            if let Some(program) = self.installed(&spec.command) {
                seen.insert(spec.id.clone());
                out.push(Route {
                    spec: spec.clone(),
                    program,
                    root: self.root.clone(),
                    language_id: spec.language_id.clone().unwrap_or_default(),
                });
            }
        }
        out
    }
}

fn describe_file(path: &Path) -> String {
    match path.extension() {
        Some(e) => format!("*.{} files", e.to_string_lossy()),
        None => format!(
            "`{}`",
            path.file_name().unwrap_or_default().to_string_lossy()
        ),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::{CallContext, CallEnv};

    /// Trust read per call (issue 26, item 3): a `scry trust` record or
    /// its revocation is seen by the next refresh, which costs nothing
    /// when no file moved.
    #[tokio::test]
    async fn a_trust_grant_or_revoke_is_seen_by_the_next_refresh() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let root = base.join("ws");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join(".scry.json"), r#"{"index": {"path": "x.scip"}}"#).unwrap();
        std::fs::write(base.join("config.json"), "{}").unwrap();
        let env = CallEnv::from_vars([
            (
                "SCRY_STATE_DIR".to_string(),
                base.join("state").display().to_string(),
            ),
            (
                "SCRY_CONFIG".to_string(),
                base.join("config.json").display().to_string(),
            ),
        ]);
        let ctx = CallContext {
            env: Arc::new(env),
            client: "t".into(),
        };
        crate::env::scope(ctx, async {
            let ws = Workspace::open(&root).unwrap();
            let trusted = |ws: &Workspace| ws.config().trust.trust.is_trusted();
            assert!(!trusted(&ws));
            assert!(ws.config().index.path.is_none(), "untrusted: not read");
            assert!(!ws.refresh_config().await.unwrap(), "nothing moved");
            let store = crate::trust::store_path().unwrap();
            let layers = crate::config::project_layers(&root).unwrap();
            crate::trust::record(&store, &root, &layers).unwrap();
            assert!(ws.refresh_config().await.unwrap());
            assert!(trusted(&ws));
            assert!(ws.config().index.path.is_some(), "trusted: read");
            assert!(!ws.refresh_config().await.unwrap(), "nothing moved");
            crate::trust::revoke(&store, &root).unwrap();
            assert!(ws.refresh_config().await.unwrap());
            assert!(!trusted(&ws));
            assert!(ws.config().index.path.is_none());
            // A configuration given by the caller is never reread.
            let given = Workspace::with_config(root.clone(), Config::default());
            assert!(!given.refresh_config().await.unwrap());
        })
        .await;
    }
}
