//! The engine: one entry point for every action, [`Engine::answer`] (a
//! front end's, for one client session; [`Engine::run`] is the same for
//! the engine's own session, a library user's). It bounds the call by its
//! one deadline (`Engine::bounded`), adds the notices said once after it
//! (`notices`, with what the session was told: [`Told`]), and in between
//! takes the question a front end validated ([`Valid`], with its time
//! budget), builds the action's call context (`crate::call::Ctx`:
//! workspace, deadline, and the answer's header) and dispatches on it to
//! the action's function — navigation (`navigate`, which asks at the
//! positions `locate` finds, and `queries`), diagnostics
//! (`crate::diagnostics`) and edits (`edits`, through the edit service
//! `crate::edit` and its leaf, scry-edit) — giving it its
//! variant's arguments; those functions, the SCIP index (`indexed`) and the
//! syntactic fallback (`syntactic`), in the order `order` keeps, find the server, sync files from disk,
//! resolve the symbol, ask and build an [`Answer`], and check none of the
//! arguments again. The engine holds what outlives one call: the
//! workspace, the edit service, the `changes` baseline and the syntactic
//! index.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use scry_workspace::Workspace;
use serde_json::Value;
use tokio::time::Instant;

use crate::call::{AskedPath, Ctx};
use crate::diagnostics::changes::ChangesBaseline;
use crate::diagnostics::delta::DiagnosticsBaseline;
use crate::edit::service::Editor;
use scry_edit::report::EditOptions;
use scry_model::error::OpError;
use scry_model::query::{Query, Valid};
use scry_model::*;

mod edits;
pub mod indexed;
mod locate;
mod lower;
pub(crate) mod navigate;
mod notices;
mod order;
mod queries;
mod reach;
mod refresh;
mod remote;
pub mod syntactic;

use scry_model::limits::MAX_TIMEOUT;

pub use notices::Told;

/// A front end's answer ([`Engine::answer`]): the result, and for an
/// error the notes to say beside it.
#[derive(Debug)]
pub struct Ran {
    pub result: Result<Answer, OpError>,
    pub notes: Vec<Reason>,
}

/// How long past its deadline a read-only call may take to answer before it
/// is dropped and answered `TIMEOUT`.
pub const DEADLINE_GRACE: Duration = Duration::from_millis(500);

/// Runs questions against a workspace. Cheap to clone; share one per
/// workspace so servers are reused across calls.
#[derive(Clone)]
pub struct Engine {
    ws: Arc<Workspace>,
    /// The edit service (journal, server edits of running commands).
    pub(crate) edits: Editor,
    /// The `diagnostics` `changes: true` baseline of this session.
    changes: Arc<Mutex<ChangesBaseline>>,
    /// The syntactic index (built on first use).
    syntax: Arc<scry_syntax::SyntaxIndex>,
    /// The SCIP index (loaded on first use).
    index: Arc<indexed::IndexSlot>,
    /// What the SCIP index's loading has to say, for the next answer.
    index_notes: Arc<Mutex<Vec<Reason>>>,
    /// The SCIP index's background refresh (driven by the daemon).
    refresh: Arc<refresh::Refresh>,
    /// Occurrence scans of names, kept by the text scanned
    /// ([`crate::resolve::Scans`]).
    scans: Arc<crate::resolve::Scans>,
    /// What the engine's own client session was told ([`Engine::run`]).
    told: Arc<Told>,
}

/// The request that asks `action`'s question ("" for none), from the
/// action table.
pub(crate) fn method_for(action: Action) -> &'static str {
    action.facts().method.unwrap_or("")
}

impl Engine {
    pub fn new(ws: Arc<Workspace>) -> Engine {
        let syntax = Arc::new(scry_syntax::SyntaxIndex::new(
            ws.root(),
            scry_base::dirs::cache().as_deref(),
        ));
        let edits = Editor::new(ws.clone());
        edits.install_hook();
        // A dead writer's half-applied edit is rolled back before anything
        // else is asked (the first answer says so).
        edits.recover_at_start();
        Engine {
            ws,
            edits,
            changes: Arc::default(),
            syntax,
            index: Arc::new(indexed::IndexSlot::new(scry_base::dirs::cache())),
            index_notes: Arc::default(),
            refresh: Arc::default(),
            scans: Arc::default(),
            told: Arc::default(),
        }
    }

    /// An engine whose syntactic index caches under `cache_dir` (none: in
    /// memory only) instead of the user cache directory (tests, tools).
    pub fn with_syntax_cache(ws: Arc<Workspace>, cache_dir: Option<&Path>) -> Engine {
        let mut engine = Engine::new(ws);
        engine.syntax = Arc::new(scry_syntax::SyntaxIndex::new(engine.ws.root(), cache_dir));
        engine.index = Arc::new(indexed::IndexSlot::new(cache_dir.map(Path::to_path_buf)));
        engine
    }

    pub fn workspace(&self) -> &Arc<Workspace> {
        &self.ws
    }

    /// Stop every server and a running index refresh (at exit).
    pub async fn shutdown(&self) {
        self.refresh.cancel();
        self.ws.shutdown().await;
    }

    /// The time budget of a call asking for `timeout` (default: the
    /// configuration's), within 1 ms and [`MAX_TIMEOUT`].
    pub(crate) fn budget(&self, timeout: Option<Duration>) -> Duration {
        timeout
            .unwrap_or_else(|| Duration::from_millis(self.ws.config().limits.timeout_ms))
            .min(MAX_TIMEOUT)
            .max(Duration::from_millis(1))
    }

    /// Validate and answer a parsed question (tests and tools; front ends
    /// validate once themselves and call [`Engine::run`]).
    pub async fn run_query(&self, q: &Query) -> Result<Answer, OpError> {
        self.run(&q.validate()?, q.timeout).await
    }

    /// Answer one validated question within `timeout` (default: the
    /// configuration's, at most [`MAX_TIMEOUT`]), for the engine's own
    /// client session (a library user's; front ends use [`Engine::answer`]).
    pub async fn run(&self, q: &Valid, timeout: Option<Duration>) -> Result<Answer, OpError> {
        let mut result = self.bounded(q, timeout).await;
        notices::add(self, &self.told, &mut result, false);
        result
    }

    /// Answer one validated question within `timeout` for a client
    /// session that has been `told` what it has: the answer with the
    /// notices waiting for it, or the error and the notes to say beside
    /// it ([`Ran`]).
    pub async fn answer(&self, q: &Valid, timeout: Option<Duration>, told: &Told) -> Ran {
        let mut result = self.bounded(q, timeout).await;
        let notes = notices::add(self, told, &mut result, true);
        Ran { result, notes }
    }

    /// The question answered by its deadline: the one deadline whatever
    /// the workspace holds. A read-only call that has not answered by its
    /// deadline (+ a grace to answer) is dropped (its requests cancelled)
    /// and answered `TIMEOUT`; a write is never cut midway (its own steps
    /// are bounded).
    async fn bounded(&self, q: &Valid, timeout: Option<Duration>) -> Result<Answer, OpError> {
        let budget = self.budget(timeout);
        let started = Instant::now();
        let deadline = started + budget;
        crate::isolate::test_panic_hook(q.symbol());
        // The question's path, resolved once for the whole call.
        let asked = AskedPath::new(q.path());
        if q.writes() {
            return self.dispatch(q, &asked, budget, started, deadline).await;
        }
        // The live server, the SCIP index, the syntactic index. With the
        // default budget, a lower answer may be given early while the
        // server loads; a budget asked for is waited out for the server's
        // own.
        let early = timeout
            .is_none()
            .then(|| Duration::from_millis(self.ws.config().limits.early_answer_ms));
        let answer = self.answer_in_order(q, &asked, budget, started, deadline, early);
        match tokio::time::timeout_at(deadline + DEADLINE_GRACE, answer).await {
            Ok(r) => r,
            Err(_) => Err(OpError::Timeout(
                scry_model::Fact::CallTimedOut {
                    action: q.action(),
                    ms: budget.as_millis(),
                }
                .message(),
            )),
        }
    }

    /// One function per validated action, each given its variant's
    /// arguments; the answer's header (the question as asked) and the
    /// deadline travel in the call context. `map` (and the lower sources in
    /// `order`) answer from the syntactic index, on the engine.
    async fn dispatch(
        &self,
        valid: &Valid,
        asked: &AskedPath,
        budget: Duration,
        started: Instant,
        deadline: Instant,
    ) -> Result<Answer, OpError> {
        let cx = Ctx::new(
            self.ws.clone(),
            started,
            deadline,
            budget,
            valid.question(self.ws.root()),
            asked.clone(),
            self.scans.clone(),
        );
        let action = valid.action();
        match valid {
            Valid::Status => {
                let mut a = queries::status(&self.ws, cx.question).await;
                let index = self.index_status().await;
                if let Body::Status(r) = &mut a.body {
                    r.syntactic = Some(self.syntactic_status());
                    (r.index, r.index_problem) = match index {
                        Ok(line) => (line, None),
                        Err(problem) => (None, problem),
                    };
                    r.index_refresh = self.refresh_status();
                    r.indexers = self.indexers_status();
                }
                Ok(a)
            }
            Valid::Map {
                paths,
                symbols,
                budget,
            } => self.map(valid, paths, symbols, *budget).await,
            Valid::Reload => {
                let stopped = self.ws.reload().await.map_err(|e| {
                    OpError::InvalidArgument(
                        scry_model::Fact::ConfigUnreadable { why: e.to_string() }.message(),
                    )
                })?;
                Ok(Answer::new(action, cx.question, Body::Reloaded { stopped }))
            }
            Valid::Symbols { path } => queries::document_symbols(&cx, path).await,
            Valid::WorkspaceSymbols { query, path } => {
                queries::workspace_symbols(&cx, query, path.as_deref()).await
            }
            Valid::Capabilities { path } => queries::capabilities(&cx, path.as_deref()).await,
            Valid::Request {
                method,
                params,
                path,
            } => queries::raw_request(&cx, method, params.clone(), path.as_deref()).await,
            Valid::Diagnostics {
                targets,
                path,
                severity,
                changes,
            } => {
                let mut given = targets.clone();
                if given.is_empty()
                    && let Some(p) = path
                {
                    given.push(p.clone());
                }
                let t = crate::diagnostics::expand_targets(&self.ws, &given)?;
                crate::diagnostics::answer(
                    &cx,
                    targets,
                    path.as_deref(),
                    *severity,
                    *changes,
                    t,
                    &self.changes,
                )
                .await
            }
            Valid::Rename {
                spot,
                new_name,
                apply,
                idempotency_key,
            } => {
                let key = idempotency_key.as_deref();
                edits::rename(&cx, &self.edits, spot, new_name, *apply, key).await
            }
            Valid::CodeActions {
                path,
                symbol,
                line,
                column,
                choice,
                apply,
                idempotency_key,
            } => {
                let at = locate::Place {
                    symbol: symbol.as_deref(),
                    line: *line,
                    column: *column,
                };
                let key = idempotency_key.as_deref();
                edits::code_actions(&cx, &self.edits, path, at, choice.as_ref(), *apply, key).await
            }
            Valid::Undo {
                apply,
                idempotency_key,
            } => edits::undo(&cx, &self.edits, *apply, idempotency_key.as_deref()).await,
            Valid::Positional { action, spot } => navigate::positional(&cx, *action, spot).await,
        }
    }

    /// Validate a path: inside the workspace (after resolving `..` and
    /// symlinks), existing, a file.
    pub fn resolve_path(&self, p: &Path) -> Result<PathBuf, OpError> {
        crate::call::resolve_path(self.ws.root(), p, self.ws.config().limits.max_file_bytes)
    }

    /// The question's own path resolved, once per call ([`AskedPath`]);
    /// `None` when it has none.
    pub(crate) fn resolve_asked(&self, asked: &AskedPath) -> Option<Result<PathBuf, OpError>> {
        asked.resolved(self.ws.root(), self.ws.config().limits.max_file_bytes)
    }

    // The edit service and the diagnostics delta, for front ends and tests.

    /// Where the edit journal lives (default: `$SCRY_JOURNAL_DIR`, else
    /// `$XDG_STATE_HOME/scry/journal`, else `~/.local/state/scry/journal`);
    /// `None` disables it (no undo, no idempotent replay).
    pub fn set_journal_dir(&self, dir: Option<PathBuf>) {
        self.edits.set_journal_dir(dir);
    }

    /// Test seam: make the journal fail after writing `n` before-images
    /// of every following edit; `None` turns it off (tests only).
    #[cfg(test)]
    pub fn set_journal_failure(&self, fail_after: Option<usize>) {
        self.edits.set_journal_failure(fail_after);
    }

    /// Test seam: make the writer fail at file `k` (0-based) of every
    /// following commit; `None` turns it off (tests only).
    #[cfg(test)]
    pub fn set_write_failure(&self, fail_at: Option<usize>) {
        self.edits.set_write_failure(fail_at);
    }

    /// Apply (or preview) a `WorkspaceEdit` that `origin` (the server that
    /// computed it) sent: see `Editor::apply_workspace_edit`.
    pub async fn apply_workspace_edit(
        &self,
        origin: Option<&scry_lsp_session::Session>,
        edit: &Value,
        opts: EditOptions,
    ) -> Result<EditReport, OpError> {
        self.edits.apply_workspace_edit(origin, edit, opts).await
    }

    /// Revert the last edit scry applied in this workspace, if every file
    /// is still exactly as scry left it.
    pub async fn undo_last_edit(
        &self,
        apply: bool,
        key: Option<&str>,
    ) -> Result<EditReport, OpError> {
        self.edits.undo_last_edit(apply, key, None).await
    }

    /// What recovery of a dead writer's edit did since the last answer
    /// ([`Engine::run`] adds it to the answer's notes), once.
    pub fn take_recovery_notes(&self) -> Vec<scry_model::Recovered> {
        self.edits.take_notices()
    }

    /// Diagnostics of `files` before an edit: see
    /// `crate::diagnostics::delta::baseline`.
    pub async fn diagnostics_baseline(
        &self,
        files: &[PathBuf],
        budget: Option<Duration>,
    ) -> DiagnosticsBaseline {
        crate::diagnostics::delta::baseline(&self.ws, files, budget).await
    }

    /// What an edit of `changed` introduced and resolved: see
    /// `crate::diagnostics::delta::after_edit`.
    pub async fn diagnostics_after_edit(
        &self,
        baseline: &DiagnosticsBaseline,
        changed: &[PathBuf],
        budget: Option<Duration>,
    ) -> DiagnosticsDelta {
        crate::diagnostics::delta::after_edit(&self.ws, baseline, changed, budget).await
    }

    /// Run every provider for `files` within `deadline`, concurrently.
    pub async fn collect_diagnostics(
        &self,
        files: &[PathBuf],
        whole: bool,
        deadline: Instant,
    ) -> crate::diagnostics::Collected {
        crate::diagnostics::collect(&self.ws, files, whole, deadline).await
    }

    /// The `changes` baseline as JSON, to keep it between processes.
    pub fn export_changes_baseline(&self) -> Value {
        self.changes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .to_json(self.ws.root())
    }

    /// Replace the `changes` baseline with one from
    /// [`Engine::export_changes_baseline`].
    pub fn import_changes_baseline(&self, v: &Value) {
        *self.changes.lock().unwrap_or_else(|e| e.into_inner()) =
            ChangesBaseline::from_json(v, self.ws.root());
    }
}
