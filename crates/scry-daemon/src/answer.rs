//! The one seam between a front end and the engine: an [`Answerer`] takes
//! a [`Call`] and returns a [`Reply`] carrying the workspace root, the
//! render limits and the warnings with the answer, so every front end
//! renders from the reply alone ([`render_options`]) and every route gives
//! the same bytes.
//!
//! Two answerers:
//! - [`Local`]: an `Engine`, and the layers that wrap `Engine::answer` for
//!   a client session, in the order they wrap it, one function each in
//!   `Local::run`: the configuration refresh (every call, every route: a
//!   stamp of the files, so trust changes take effect at once) and the
//!   reply's limits; the idempotency-key prefix of the client session; the
//!   per-workspace write lock; the `changes` baseline (loaded before and
//!   kept after, one `changes` call at a time: [`Baseline`], the
//!   workspace's file for the CLI, each MCP session's own on every route);
//!   then the engine (its deadline, and the notices said once, each
//!   session told the trust notice once: `scry_ops::Told`); then the
//!   "daemon not used" note on `status` and the `edit_diagnostics` side
//!   channel. The daemon is a `Local` per workspace behind a socket
//!   (`crate::server`).
//! - [`Daemon`]: the client of the daemon ([`crate::client::Shared`]), with
//!   the one retry policy (a read-only call lost with the daemon is asked
//!   once more of a new one; else `DAEMON_RESTARTED`, worded once in
//!   `client`), and the pid note on `status`.
//!
//! Invariants: nothing but a `Local` calls the engine for a front end;
//! the reply's root and limits are the answering workspace's (a front end
//! never renders with its own); dropping an answer's future cancels it.

use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use scry_model::{Action, Body, Valid};
use scry_ops::Engine;
use scry_render::RenderOptions;

use crate::client::Shared;
use crate::paths::Files;
use crate::proto::{Call, CallResult, Reply};

/// How long stopping the servers may take.
pub const SHUTDOWN_BUDGET: Duration = Duration::from_secs(10);

/// A future an answerer returns.
pub type Boxed<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Who answers a front end's calls.
pub trait Answerer: Send + Sync {
    /// Answer one call; dropping the future cancels it.
    fn answer<'a>(&'a self, call: &'a Call) -> Boxed<'a, Reply>;
    /// What a running call waits for (servers starting, indexing), one
    /// line, or `None`.
    fn waiting_on(&self) -> Option<String>;
    /// Another client session answered the same way (an MCP HTTP session):
    /// its own idempotency keys and once-per-session notices.
    fn new_session(&self) -> Arc<dyn Answerer>;
    /// Stop what this answerer runs (a `Local`'s servers, bounded by
    /// [`SHUTDOWN_BUDGET`]; a `Daemon`'s connection).
    fn shutdown(&self) -> Boxed<'_, ()>;
}

/// The render options of a reply: its workspace's limits, in the front
/// end's dialect (how a selector is written: CLI flags or MCP arguments).
/// Built here only.
pub fn render_options(reply: &Reply, dialect: scry_render::Dialect) -> RenderOptions {
    RenderOptions {
        max_locations: reply.max_locations,
        max_chars: reply.max_chars,
        dialect,
    }
}

/// Answer `call`, panic-isolated: a panic inside it (a bug) is this call's
/// `INTERNAL` error and the caller serves on.
pub async fn isolated(answerer: Arc<dyn Answerer>, call: Call) -> Reply {
    let (id, root, action) = (call.id, call.root.clone(), call.question.action());
    scry_ops::isolate::isolated(async move { answerer.answer(&call).await })
        .await
        .unwrap_or_else(|panic| {
            tracing::error!(id, "call panicked: {panic}");
            Reply::new(
                id,
                root,
                CallResult::Error(scry_ops::isolate::internal_error(action.name(), &panic)),
            )
        })
}

/// Where a `Local` keeps the `diag --changes` baseline between calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Baseline {
    /// Kept by each client session for its life: an MCP session, in-process
    /// or through the daemon, whose sessions say so by their id
    /// ([`crate::client::keeps_own_baseline`]) whatever the `Local` says.
    Session,
    /// In the workspace's baseline file (`crate::changes`), loaded before
    /// and saved after each `changes` call (the CLI: one per workspace,
    /// in-process and through the daemon alike).
    File,
}

/// What a `Local` shares between its client sessions: one per workspace.
struct Core {
    engine: Engine,
    /// Held by writes: two clients' edits never interleave.
    writes: tokio::sync::Mutex<()>,
    /// Held by `changes` calls: the engine holds one baseline at a time,
    /// the calling session's (or the file's) from load to save.
    changes: tokio::sync::Mutex<()>,
    baseline: Baseline,
    /// Reread the configuration before each call (a long-lived daemon).
    refresh: bool,
    /// Why the daemon was not used although it was wanted (said by
    /// `status`).
    unavailable: Option<String>,
}

/// One client session, the caller: its id (the idempotency-key prefix)
/// and the once-per-session notices already told (`Session` is a language
/// server's, `scry_lsp_session::Session`).
#[derive(Debug)]
pub struct Caller {
    id: String,
    told: scry_ops::Told,
    /// Its `changes` baseline (`Baseline::Session`), as the engine exports
    /// it; `None` before its first `changes` call.
    changes: Mutex<Option<serde_json::Value>>,
}

impl Caller {
    pub fn new(id: String) -> Arc<Caller> {
        Arc::new(Caller {
            id,
            told: scry_ops::Told::default(),
            changes: Mutex::new(None),
        })
    }

    pub fn id(&self) -> &str {
        &self.id
    }
}

/// The engine as an answerer, for one client session. Cheap to clone.
#[derive(Clone)]
pub struct Local {
    core: Arc<Core>,
    session: Arc<Caller>,
}

impl Local {
    /// `engine` answering for client session `session`, keeping the
    /// `changes` baseline as `baseline` says.
    pub fn new(engine: Engine, session: &str, baseline: Baseline) -> Local {
        Local {
            core: Arc::new(Core {
                engine,
                writes: tokio::sync::Mutex::new(()),
                changes: tokio::sync::Mutex::new(()),
                baseline,
                // Every route: a few stats per call, and a grant or a
                // revoke of trust takes effect on the next call.
                refresh: true,
                unavailable: None,
            }),
            session: Caller::new(session.to_string()),
        }
    }

    /// The daemon's: the configuration reread before each call when a file
    /// it was read from changed (a changed one starts new servers for what
    /// changed; see `Workspace::refresh_config`). Every `Local` does so
    /// now; kept so the daemon says it.
    pub fn refreshing(mut self) -> Local {
        self.core_mut().refresh = true;
        self
    }

    /// In place of the daemon, which could not be used (`why`, said by
    /// `status`).
    pub fn instead_of_daemon(mut self, why: Option<String>) -> Local {
        self.core_mut().unavailable = why;
        self
    }

    fn core_mut(&mut self) -> &mut Core {
        Arc::get_mut(&mut self.core).expect("a Local is configured before it is shared")
    }

    /// The same workspace for another client session.
    pub fn for_session(&self, session: Arc<Caller>) -> Local {
        Local {
            core: self.core.clone(),
            session,
        }
    }

    pub fn engine(&self) -> &Engine {
        &self.core.engine
    }

    /// Answer `call` through the layers around the engine, in the order
    /// they wrap it: the configuration, the session's idempotency keys,
    /// the write lock, the `changes` baseline, then `Engine::answer` (its
    /// deadline and once-said notices, for this session), then what only a
    /// front end's answer carries. Each layer is one function below.
    async fn run(&self, call: &Call) -> Reply {
        let core = &*self.core;
        let mut reply = Reply::new(
            call.id,
            core.engine.workspace().root().to_path_buf(),
            CallResult::Config(String::new()),
        );
        if let Err(e) = self.configured(&mut reply).await {
            reply.result = CallResult::Config(e);
            return reply;
        }
        let q = self.keyed(&call.question);
        let _write = self.writing(&q).await;
        let changes = self.changes_baseline(&q).await;
        let ran = core
            .engine
            .answer(&q, call.timeout, &self.session.told)
            .await;
        let mut result = ran.result;
        reply.notes = ran.notes;
        if let Some(baseline) = changes
            && result.is_ok()
        {
            self.keep_changes_baseline(baseline, &mut reply.warnings);
        }
        if let Ok(a) = &mut result {
            self.daemon_note(a);
        }
        reply.result = match result {
            Ok(a) => {
                if let Body::Edit(r) = &a.body {
                    reply.edit_diagnostics = r.diagnostics.clone();
                }
                CallResult::Answer(Box::new(a))
            }
            Err(e) => CallResult::Error(e),
        };
        reply
    }

    /// The configuration, reread when a file it came from changed (so a
    /// grant or a revoke of trust takes effect on this call), and the
    /// reply's render limits from it; `Err`: the configuration error.
    async fn configured(&self, reply: &mut Reply) -> Result<(), String> {
        let ws = self.core.engine.workspace();
        if self.core.refresh {
            ws.refresh_config().await.map_err(|e| e.to_string())?;
        }
        let limits = ws.config().limits;
        reply.max_locations = limits.max_locations;
        reply.max_chars = limits.max_chars;
        Ok(())
    }

    /// The question with its idempotency key (an edit's) prefixed by the
    /// client session's id: two sessions' keys never meet.
    fn keyed(&self, question: &Valid) -> Valid {
        let mut q = question.clone();
        if let Some(Some(k)) = q.idempotency_key_mut() {
            *k = format!("{}:{k}", self.session.id);
        }
        q
    }

    /// Held by a write for its whole call: two clients' edits never
    /// interleave.
    async fn writing(&self, q: &Valid) -> Option<tokio::sync::MutexGuard<'_, ()>> {
        match q.writes() {
            true => Some(self.core.writes.lock().await),
            false => None,
        }
    }

    /// For a `changes` call: one at a time, with the calling session's
    /// baseline (or the workspace file's) loaded into the engine until
    /// [`Local::keep_changes_baseline`].
    async fn changes_baseline(&self, q: &Valid) -> Option<HeldBaseline<'_>> {
        if !matches!(q, Valid::Diagnostics { changes: true, .. }) {
            return None;
        }
        let core = &*self.core;
        let kept = if core.baseline == Baseline::Session
            || crate::client::keeps_own_baseline(&self.session.id)
        {
            Baseline::Session
        } else {
            Baseline::File
        };
        let held = core.changes.lock().await;
        match kept {
            Baseline::File => crate::changes::load(&core.engine),
            Baseline::Session => {
                let mine = self
                    .session
                    .changes
                    .lock()
                    .unwrap_or_else(|e| e.into_inner());
                core.engine
                    .import_changes_baseline(mine.as_ref().unwrap_or(&serde_json::Value::Null));
            }
        }
        Some(HeldBaseline { kept, _held: held })
    }

    /// After a `changes` call answered: its new baseline kept where it
    /// came from (a file that cannot be written is a warning).
    fn keep_changes_baseline(&self, baseline: HeldBaseline<'_>, warnings: &mut Vec<String>) {
        let engine = &self.core.engine;
        match baseline.kept {
            Baseline::File => {
                if let Err(w) = crate::changes::save(engine) {
                    warnings.push(w);
                }
            }
            Baseline::Session => {
                *self
                    .session
                    .changes
                    .lock()
                    .unwrap_or_else(|e| e.into_inner()) = Some(engine.export_changes_baseline());
            }
        }
    }

    /// `status` answered in place of the daemon says why the daemon was
    /// not used.
    fn daemon_note(&self, a: &mut scry_model::Answer) {
        if a.action == Action::Status
            && let Some(why) = &self.core.unavailable
        {
            a.notes
                .push(scry_model::Reason::DaemonNotUsed { why: why.clone() });
        }
    }
}

/// A `changes` call's baseline: where it is kept, and the lock that makes
/// such calls one at a time until it is kept again.
struct HeldBaseline<'a> {
    kept: Baseline,
    _held: tokio::sync::MutexGuard<'a, ()>,
}

impl Answerer for Local {
    fn answer<'a>(&'a self, call: &'a Call) -> Boxed<'a, Reply> {
        Box::pin(self.run(call))
    }

    fn waiting_on(&self) -> Option<String> {
        crate::waiting_line(self.core.engine.workspace())
    }

    fn new_session(&self) -> Arc<dyn Answerer> {
        Arc::new(self.for_session(Caller::new(crate::client::session_id("mcp-http"))))
    }

    fn shutdown(&self) -> Boxed<'_, ()> {
        Box::pin(async move {
            if tokio::time::timeout(SHUTDOWN_BUDGET, self.core.engine.shutdown())
                .await
                .is_err()
            {
                tracing::warn!("language servers did not stop in time; they are killed on exit");
            }
        })
    }
}

/// The scry daemon as an answerer: one client session over one shared
/// connection (calls concurrent, reconnecting after the daemon died).
pub struct Daemon {
    shared: Shared,
    files: Files,
    exe: PathBuf,
}

impl Daemon {
    /// Connect (starting the daemon if needed) as a new client session of
    /// `kind` (`cli`, `mcp`); `Err`: why the daemon cannot be used (the
    /// caller answers with a [`Local`] instead, saying why).
    pub async fn connect(kind: &str) -> Result<Daemon, String> {
        let files = Files::locate()?;
        let exe =
            std::env::current_exe().map_err(|e| format!("cannot find the scry executable: {e}"))?;
        let shared =
            Shared::connect(files.clone(), exe.clone(), crate::client::session_id(kind)).await?;
        Ok(Daemon { shared, files, exe })
    }

    /// The client session id.
    pub fn session(&self) -> &str {
        self.shared.session()
    }

    /// The daemon's pid (of the current connection).
    pub async fn pid(&self) -> Option<u32> {
        self.shared.pid().await
    }

    async fn run(&self, call: &Call) -> Reply {
        match self.shared.run(call).await {
            Ok((mut reply, pid)) => {
                if let CallResult::Answer(a) = &mut reply.result
                    && a.action == Action::Status
                {
                    a.notes.push(scry_model::Reason::ServedByDaemon { pid });
                }
                reply
            }
            Err(e) => Reply::new(call.id, call.root.clone(), CallResult::Error(e)),
        }
    }
}

impl Answerer for Daemon {
    fn answer<'a>(&'a self, call: &'a Call) -> Boxed<'a, Reply> {
        Box::pin(self.run(call))
    }

    fn waiting_on(&self) -> Option<String> {
        self.shared.waiting_on()
    }

    fn new_session(&self) -> Arc<dyn Answerer> {
        Arc::new(Daemon {
            shared: Shared::lazy(
                self.files.clone(),
                self.exe.clone(),
                crate::client::session_id("mcp-http"),
            ),
            files: self.files.clone(),
            exe: self.exe.clone(),
        })
    }

    fn shutdown(&self) -> Boxed<'_, ()> {
        Box::pin(self.shared.close())
    }
}

/// Which answerer a front end holds: the daemon, or this process.
pub enum Choice {
    Daemon(Box<Daemon>),
    /// This process: `Some(why)` when the daemon could not be used, `None`
    /// when opted out (`--no-daemon`, `SCRY_NO_DAEMON=1`).
    InProcess(Option<String>),
}

impl Choice {
    /// The daemon (a new client session of `kind`) unless `opted_out`;
    /// this process, saying why, when the daemon cannot be used.
    pub async fn make(kind: &str, opted_out: bool) -> Choice {
        if opted_out {
            return Choice::InProcess(None);
        }
        match Daemon::connect(kind).await {
            Ok(d) => Choice::Daemon(Box::new(d)),
            Err(why) => {
                tracing::info!("scry daemon not used ({why}); answering in-process");
                Choice::InProcess(Some(why))
            }
        }
    }

    /// The answerer: the daemon, or a [`Local`] over `engine()` (opened
    /// only then) keeping the `changes` baseline as `baseline` says; `Err`:
    /// the workspace's configuration could not be loaded.
    pub fn answerer(
        self,
        engine: impl FnOnce() -> Result<Engine, String>,
        baseline: Baseline,
    ) -> Result<Arc<dyn Answerer>, String> {
        Ok(match self {
            Choice::Daemon(d) => Arc::new(*d),
            Choice::InProcess(why) => {
                let session = crate::client::session_id("local");
                Arc::new(Local::new(engine()?, &session, baseline).instead_of_daemon(why))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scry_model::Query;
    use scry_workspace::Workspace;

    fn local(limits: (usize, usize)) -> (tempfile::TempDir, PathBuf, Local) {
        let t = tempfile::tempdir().unwrap();
        let root = scry_base::paths::canonical(t.path()).unwrap();
        let mut config = scry_workspace::config::Config::default();
        config.limits.max_locations = limits.0;
        config.limits.max_chars = limits.1;
        let engine = Engine::new(Arc::new(Workspace::with_config(root.clone(), config)));
        engine.set_journal_dir(None);
        (t, root, Local::new(engine, "s1", Baseline::Session))
    }

    #[tokio::test]
    async fn a_reply_carries_the_workspaces_root_and_limits_and_status_says_why_not_the_daemon() {
        let (_t, root, local) = local((7, 1234));
        let local = local.instead_of_daemon(Some("no socket".into()));
        // The call's root is the front end's; the reply's is the workspace's.
        let call = Call::new("/".into(), root.join("."), Valid::Status, None);
        let reply = local.answer(&call).await;
        assert_eq!(reply.root, root);
        let opts = render_options(&reply, scry_render::Dialect::Cli);
        assert_eq!((opts.max_locations, opts.max_chars), (7, 1234));
        let answer = reply.into_result().unwrap().unwrap();
        assert!(
            answer.notes.iter().any(
                |n| matches!(n, scry_model::Reason::DaemonNotUsed { why } if why == "no socket")
            ),
            "{:?}",
            answer.notes
        );
    }

    #[tokio::test]
    async fn an_error_comes_back_in_the_reply_with_the_workspaces_limits() {
        let (_t, root, local) = local((3, 999));
        let mut q = Query::new(Action::Hover);
        q.path = Some("/elsewhere/x.rs".into());
        q.symbol = Some("x".into());
        let reply = local
            .answer(&Call::new(
                root.clone(),
                root.clone(),
                q.validate().unwrap(),
                None,
            ))
            .await;
        assert_eq!((reply.max_locations, reply.max_chars), (3, 999));
        let e = reply.into_result().unwrap().unwrap_err();
        assert_eq!(e.code(), "OUTSIDE_WORKSPACE", "{e:?}");
    }
}
