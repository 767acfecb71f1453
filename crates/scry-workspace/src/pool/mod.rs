//! The servers of one workspace: routing a file to its server and root
//! ([`crate::roots::choose`]: the project's workspace, as its own files say),
//! and one process per (server, resolved absolute program — found on the
//! calling client's `PATH`, canonicalized —, hash of the variables the
//! server reads ([`crate::env::CallEnv::reads_hash`] of its catalogue
//! entry's `readsEnv`; all the servers' variables when it names none:
//! [`crate::env::CallEnv::server_hash`]) and of where the `PATH` it
//! would get finds the programs it runs (`pathPrograms`:
//! [`Workspace::path_programs`]), hash of the
//! effective server config: args, env, settings, initializationOptions),
//! serving every root of the workspace as a folder of its own when the
//! server takes folders (`workspaceFolders` at start,
//! `workspace/didChangeWorkspaceFolders` after); a server that does not
//! gets a process per root. Started lazily on first use, reused after,
//! restarted (with every folder it had) when it died,
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
//! Memory ([`crate::memory`], `scry_lsp_session::process::memory`): each server's process
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
//! passed over is said by [`Workspace::trust_notice`] (told once per client
//! session by the engine).
//!
//! Here: the pool's data (routes, slots, keys, [`Workspace`]) and opening a
//! workspace; by job: `route` (choosing a server, commands, the trust
//! notice), `sessions` (starting and keeping sessions, the file watcher,
//! shutdown), `limits` (memory caps and budget, `maxServers`,
//! `serverIdleMs`, usage for `status`), `refresh` (rereading the
//! configuration).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use scry_lsp_session::{ApplyEditHook, EditHookSlot, Session, SessionError};
use scry_model::{MemoryAction, TrustNotice};

use crate::catalog::ServerSpec;
use crate::config::{Config, ConfigError};
use crate::memory::{MemoryEvent, Sample};
use crate::trust::TrustPolicy;
use crate::watch::FileWatcher;
use scry_lsp_session::process::memory::TreeMemory;

mod limits;
mod refresh;
mod route;
mod sessions;
mod view;

pub use view::OutsideView;

/// Where a file goes: which server, which executable, which root (the
/// folder the server sees the file in), and what chose that root.
#[derive(Debug, Clone)]
pub struct Route {
    pub spec: ServerSpec,
    pub program: PathBuf,
    pub root: PathBuf,
    pub language_id: String,
    pub why: scry_model::RootChoice,
    /// The members of the workspace that chose the root (for the server's
    /// `projectRoot.memberPaths` setting).
    pub members: crate::roots::Members,
}

#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    /// No server can serve this file: none configured, or none installed;
    /// with what an untrusted workspace's configuration asked for and was
    /// ignored, when it was (worded by the reader). The message's parts
    /// are spelled by the reader's front end (a command it names is
    /// foreign text, the action that shows the configuration an example).
    #[error("{message}{}", trust.as_ref().map(|t| format!(" ({t:?})")).unwrap_or_default())]
    NoServer {
        message: scry_model::Message,
        trust: Option<TrustNotice>,
    },
    #[error(transparent)]
    Session(#[from] SessionError),
}

/// (server id, root — `None` for the process that serves every root as a
/// folder, or the first root of a server that takes no folders —,
/// canonical program, hash of the environment it is started with, hash of
/// the effective server configuration).
type Key = (String, Option<PathBuf>, PathBuf, u64, u64);

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
    /// The folders its server serves (its root first), what chose each and
    /// their members: kept for a restart and for `status`.
    folders: Mutex<Vec<FolderOf>>,
    /// Whether its last server took folders (`None`: none started yet).
    took_folders: Mutex<Option<bool>>,
    /// Where its server finds the programs it runs from its `PATH` (part
    /// of the slot's key: [`crate::catalog::ServerSpec::path_programs`]).
    programs: Mutex<Vec<scry_model::PathProgram>>,
}

/// One folder of a slot's server.
#[derive(Debug, Clone)]
pub(crate) struct FolderOf {
    pub(crate) path: PathBuf,
    pub(crate) why: scry_model::RootChoice,
    pub(crate) members: crate::roots::Members,
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

    fn folders(&self) -> Vec<FolderOf> {
        self.folders
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Note `route`'s root among the folders (once).
    fn add_folder(&self, route: &Route) {
        let mut f = self.folders.lock().unwrap_or_else(|e| e.into_inner());
        if !f.iter().any(|x| x.path == route.root) {
            f.push(FolderOf {
                path: route.root.clone(),
                why: route.why.clone(),
                members: route.members.clone(),
            });
        }
    }

    fn set_programs(&self, found: &[(String, PathBuf)]) {
        // Part of the slot's key: the same for every call that finds it.
        let mut p = self.programs.lock().unwrap_or_else(|e| e.into_inner());
        if p.is_empty() {
            *p = found
                .iter()
                .map(|(name, path)| scry_model::PathProgram {
                    name: name.clone(),
                    path: path.clone(),
                })
                .collect();
        }
    }

    fn programs(&self) -> Vec<scry_model::PathProgram> {
        self.programs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn took_folders(&self) -> Option<bool> {
        *self.took_folders.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn set_took_folders(&self, took: bool) {
        *self.took_folders.lock().unwrap_or_else(|e| e.into_inner()) = Some(took);
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
    /// Its folders (its root first), what chose each.
    pub folders: Vec<scry_model::Folder>,
    /// Where it finds the programs it runs from its `PATH`.
    pub programs: Vec<scry_model::PathProgram>,
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

/// A session's folders, each with what chose it as the slot recorded
/// (`NoMarker` for one it did not).
fn described_folders(session: &Session, recorded: &[FolderOf]) -> Vec<scry_model::Folder> {
    session
        .folders()
        .into_iter()
        .map(|path| scry_model::Folder {
            chosen_by: recorded
                .iter()
                .find(|f| f.path == path)
                .map_or(scry_model::RootChoice::NoMarker, |f| f.why.clone()),
            path,
        })
        .collect()
}

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
    /// (a server's `pathPrograms` name, the `PATH` the server would get)
    /// → where it would find it.
    programs: Mutex<HashMap<CommandKey, Option<PathBuf>>>,
    warned: Mutex<HashSet<String>>,
    log_dir: Option<PathBuf>,
    edit_hook: EditHookSlot,
    /// Watches the root for changes made outside scry (started with the
    /// first session).
    watcher: Mutex<Option<Arc<FileWatcher>>>,
    /// How `reload` decides trust.
    policy: TrustPolicy,
    /// What the configuration was read from ([`crate::config::ConfigStamp`]);
    /// `None` for a configuration given by the caller (never reread).
    stamp: Mutex<Option<crate::config::ConfigStamp>>,
    /// Project-local executables passed over (untrusted workspace).
    skipped_bins: Mutex<BTreeSet<PathBuf>>,
    /// What the memory policy did, last first out (for `status`).
    memory_events: Mutex<std::collections::VecDeque<MemoryEvent>>,
    /// Memory events not yet told in an answer.
    memory_untold: Mutex<Vec<MemoryAction>>,
    /// The workspace files root recipes read, parsed once per version.
    root_files: crate::roots::RootFiles,
    /// The workspace's layout (walked when first needed; dropped when the
    /// watcher sees a change that may make it wrong).
    layout: Mutex<Option<Arc<crate::layout::Layout>>>,
    /// What the watcher could not see before the last request, not yet told.
    watch_untold: Mutex<Option<scry_model::Reason>>,
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
        let root = scry_base::paths::canonical(root).unwrap_or_else(|_| root.to_path_buf());
        // Taken before reading: a change made meanwhile is read next time.
        let stamp = crate::config::ConfigStamp::now(&root);
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
            programs: Mutex::new(HashMap::new()),
            warned: Mutex::new(HashSet::new()),
            log_dir: scry_base::dirs::logs(),
            edit_hook: EditHookSlot::default(),
            watcher: Mutex::new(None),
            policy: TrustPolicy::FromEnvironment,
            stamp: Mutex::new(None),
            skipped_bins: Mutex::new(BTreeSet::new()),
            memory_events: Mutex::new(std::collections::VecDeque::new()),
            memory_untold: Mutex::new(Vec::new()),
            root_files: crate::roots::RootFiles::default(),
            layout: Mutex::new(None),
            watch_untold: Mutex::new(None),
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

    fn forget_if_empty(&self, key: &Key, slot: &Slot) {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        if slots.get(key).is_some_and(|s| Arc::ptr_eq(s, slot))
            && slot.session.try_lock().is_ok_and(|g| g.is_none())
        {
            slots.remove(key);
        }
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
        let base = scry_base::paths::canonical(tmp.path()).unwrap();
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
