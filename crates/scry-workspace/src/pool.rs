//! The servers of one workspace: routing a file to its server and root, and
//! one process per (server, root), started lazily on first use, reused
//! after, restarted when it died, stopped on `reload` and `shutdown`.
//!
//! Commands are looked up in the project-local bin dirs only when the
//! workspace is trusted ([`crate::trust`]); what an untrusted workspace
//! passed over is told once per session ([`Workspace::take_trust_notice`]).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use scry_lsp::{ApplyEditHook, EditHookSlot, Session, SessionConfig, SessionError};

use crate::catalog::{ProviderKind, ServerSpec};
use crate::command::{resolve_command, resolve_command_untrusted};
use crate::config::{Config, ConfigError};
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

type Key = (String, PathBuf);
type Slot = Arc<tokio::sync::Mutex<Option<Session>>>;

/// A workspace root, its configuration and its running servers.
pub struct Workspace {
    root: PathBuf,
    config: RwLock<Arc<Config>>,
    slots: Mutex<HashMap<Key, Slot>>,
    commands: Mutex<HashMap<String, Option<PathBuf>>>,
    warned: Mutex<HashSet<String>>,
    log_dir: Option<PathBuf>,
    edit_hook: EditHookSlot,
    /// Watches the root for changes made outside scry (started with the
    /// first session; `None` inside when watching is impossible).
    watcher: Mutex<Option<Option<Arc<FileWatcher>>>>,
    /// How `reload` decides trust.
    policy: TrustPolicy,
    /// Project-local executables passed over (untrusted workspace).
    skipped_bins: Mutex<BTreeSet<PathBuf>>,
    /// The trust notice items already told this session.
    trust_told: Mutex<HashSet<String>>,
}

/// The directory where server logs go: `$SCRY_LOG_DIR`, else
/// `$XDG_STATE_HOME/scry/logs`, else `~/.local/state/scry/logs`.
pub fn default_log_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("SCRY_LOG_DIR") {
        return Some(PathBuf::from(d));
    }
    let state = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))?;
    Some(state.join("scry").join("logs"))
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
        let config = Config::load_with_policy(&root, policy)?;
        let mut ws = Workspace::with_config(root, config);
        ws.policy = policy;
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
            log_dir: default_log_dir(),
            edit_hook: EditHookSlot::default(),
            watcher: Mutex::new(None),
            policy: TrustPolicy::FromEnvironment,
            skipped_bins: Mutex::new(BTreeSet::new()),
            trust_told: Mutex::new(HashSet::new()),
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

    /// Where `command` is installed (cached until `reload`). Untrusted
    /// workspaces: `PATH` only, never the project-local bin dirs.
    pub fn installed(&self, command: &str) -> Option<PathBuf> {
        let trusted = self.config().trust.trust.is_trusted();
        let mut cache = self.commands.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .entry(command.to_string())
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
    /// callers for the same (server, root) wait for one start: never two
    /// processes. A session that died is replaced.
    pub async fn session(&self, route: &Route) -> Result<Session, WorkspaceError> {
        let key = (route.spec.id.clone(), route.root.clone());
        let slot = {
            let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
            slots.entry(key).or_default().clone()
        };
        let mut guard = slot.lock().await;
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
        let session = Session::start(SessionConfig {
            name: route.spec.id.clone(),
            program: route.program.clone(),
            args: route.spec.args.clone(),
            env: route
                .spec
                .env
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            root: route.root.clone(),
            settings: route.spec.settings.clone(),
            initialization_options: route.spec.initialization_options.clone(),
            log_dir: self.log_dir.clone(),
            max_open_documents: config.limits.max_open_documents,
            edit_hook: self.edit_hook.clone(),
        })
        .await?;
        *guard = Some(session.clone());
        Ok(session)
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
        let slots: Vec<Slot> = self
            .slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect();
        slots
            .iter()
            .filter_map(|s| s.try_lock().ok().and_then(|g| g.clone()))
            .collect()
    }

    /// Keys of sessions being started right now (status shows "starting").
    pub fn starting(&self) -> Vec<(String, PathBuf)> {
        self.slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|(_, s)| s.try_lock().is_err())
            .map(|(k, _)| k.clone())
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
            if let Some(s) = slot.lock().await.take() {
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
        let config = Config::load_with_policy(&self.root, self.policy)?;
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
