//! The engine: one entry point, [`Engine::run`], for every action. It
//! validates the question, finds the server, syncs files from disk, resolves
//! the symbol to a position, asks, and builds an [`Answer`].

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use scry_lsp::{CharPos, LineIndex, Session, SessionError, path_to_uri};
use scry_rpc::{ResponseError, RpcError};
use scry_workspace::catalog::ProviderKind;
use scry_workspace::{Route, Workspace, WorkspaceError};
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::convert::{self, Files};
use crate::error::OpError;
use crate::model::*;
use crate::resolve::{self, Declared, OccurrenceKind, SymbolName};

mod navigate;
mod queries;
pub mod syntactic;

/// Upper bound of an action's time budget.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(120);
/// How many candidate positions are tried before giving up.
const MAX_CANDIDATES: usize = 6;
/// How many occurrences of a name are kept as candidates (the scan counts
/// them all, but keeps only the best this many).
const MAX_OCCURRENCES: usize = 32;
/// How many occurrences on the asked line are asked each and compared.
const MAX_SAME_LINE: usize = 4;

/// A question, as any front end puts it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Query {
    pub action: Action,
    /// Absolute, or relative to the workspace root.
    pub path: Option<PathBuf>,
    pub symbol: Option<String>,
    /// 1-based.
    pub line: Option<u32>,
    /// 1-based, in characters.
    pub column: Option<u32>,
    pub query: Option<String>,
    /// For `request`: the LSP method and its JSON params.
    pub method: Option<String>,
    pub params: Option<Value>,
    /// The action's budget (default from the configuration, at most 120 s).
    pub timeout: Option<Duration>,
    /// For `diagnostics`: files, directories, globs (`src/**/*.py`) or `*`
    /// for the whole workspace; absolute or relative to the workspace root.
    /// Empty: `path`, else the whole workspace.
    pub targets: Vec<PathBuf>,
    /// For `diagnostics`: which severities to show (default: errors and
    /// warnings).
    pub severity: Option<SeverityFilter>,
    /// For `rename`: the new name.
    pub new_name: Option<String>,
    /// For `rename`, `code_actions` (with an action chosen) and `undo`:
    /// apply the edit (default) or only preview it (`false`: a unified diff
    /// of every file, nothing written).
    pub apply: bool,
    /// For `code_actions`: apply the action with this 1-based number …
    pub action_index: Option<usize>,
    /// … or with this title (exact, else a unique case-insensitive part).
    pub action_title: Option<String>,
    /// For edits: the caller's idempotency key (the MCP request id). An
    /// edit already applied under it is not applied again: its answer is
    /// replayed.
    pub idempotency_key: Option<String>,
    /// For `map`: symbols to bias the map towards (paths go in `targets`).
    pub focus_symbols: Vec<String>,
    /// For `map`: the character budget (default [`syntactic::DEFAULT_MAP_BUDGET`]).
    pub budget: Option<usize>,
    /// `diagnostics`: only what is new since the session's previous
    /// `changes` check of the files, plus how many were resolved.
    pub changes: bool,
}

impl Query {
    pub fn new(action: Action) -> Query {
        Query {
            action,
            path: None,
            symbol: None,
            line: None,
            column: None,
            query: None,
            method: None,
            params: None,
            timeout: None,
            targets: Vec::new(),
            severity: None,
            new_name: None,
            apply: true,
            action_index: None,
            action_title: None,
            idempotency_key: None,
            focus_symbols: Vec::new(),
            budget: None,
            changes: false,
        }
    }

    pub(crate) fn question(&self, root: &Path) -> Question {
        Question {
            path: self.path.as_ref().map(|p| {
                if p.is_absolute() {
                    p.clone()
                } else {
                    root.join(p)
                }
            }),
            symbol: self.symbol.clone(),
            line: self.line,
            column: self.column,
            query: self.query.clone(),
        }
    }
}

/// Runs questions against a workspace. Cheap to clone; share one per
/// workspace so servers are reused across calls.
#[derive(Clone)]
pub struct Engine {
    ws: Arc<Workspace>,
    edits: Arc<crate::edit::service::EditState>,
    /// The syntactic index (built on first use).
    syntax: Arc<scry_syntax::SyntaxIndex>,
}

/// A position to ask at, and how it was found.
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    pub(crate) pos: CharPos,
    pub(crate) via: String,
    /// How the name is written there (`hir::Literal`), for occurrences.
    pub(crate) form: Option<String>,
    /// One of the occurrences that are asked each, and compared, because
    /// the name occurs several times on the asked line (or, without a line,
    /// is only used in the file): see `navigate::split_targets`.
    pub(crate) compare: bool,
}

/// The file a positional question is about, synced.
pub(crate) struct Target {
    pub(crate) path: PathBuf,
    pub(crate) session: Session,
    pub(crate) index: Arc<LineIndex>,
    pub(crate) candidates: Vec<Candidate>,
    pub(crate) others: Vec<Alternative>,
}

fn method_for(action: Action) -> &'static str {
    match action {
        Action::Definition => "textDocument/definition",
        Action::Declaration => "textDocument/declaration",
        Action::TypeDefinition => "textDocument/typeDefinition",
        Action::Implementation => "textDocument/implementation",
        Action::References => "textDocument/references",
        Action::Hover => "textDocument/hover",
        Action::IncomingCalls | Action::OutgoingCalls => "textDocument/prepareCallHierarchy",
        Action::Symbols => "textDocument/documentSymbol",
        Action::WorkspaceSymbols => "workspace/symbol",
        _ => "",
    }
}

pub(crate) fn session_error(e: SessionError, method: &str) -> OpError {
    match e {
        SessionError::Rpc(RpcError::Closed { server, detail, .. }) => {
            OpError::ServerCrashed(format!(
                "{server} stopped answering {method}: {detail}; it is restarted on the next call"
            ))
        }
        SessionError::Rpc(RpcError::Server { server, error, .. }) => {
            OpError::ServerError(format!("{server} failed {method}: {}", error.message))
        }
        SessionError::Rpc(RpcError::Protocol { server, detail }) => {
            OpError::MalformedResponse(format!("{server}: {detail}"))
        }
        SessionError::Rpc(RpcError::Encode(d)) => OpError::InvalidArgument(d),
        SessionError::InitFailed { name, detail } => OpError::ServerCrashed(format!(
            "{name} failed to start: {detail}; see the server log (scry status) — the next call retries"
        )),
        SessionError::Spawn {
            name,
            program,
            source,
        } => OpError::NoServer(format!(
            "could not start {name} ({}): {source}",
            program.display()
        )),
        SessionError::Malformed {
            name,
            method,
            detail,
        } => OpError::MalformedResponse(format!(
            "{name} sent a malformed {method} response: {detail}"
        )),
        SessionError::File { path, .. } => OpError::FileNotFound(path),
        SessionError::NotText(p) => OpError::BinaryFile(p),
    }
}

fn workspace_error(e: WorkspaceError, method: &str) -> OpError {
    match e {
        WorkspaceError::NoServer(m) => OpError::NoServer(m),
        WorkspaceError::Session(s) => session_error(s, method),
    }
}

pub(crate) fn is_method_not_found(e: &SessionError) -> bool {
    matches!(e, SessionError::Rpc(RpcError::Server { error, .. })
        if error.code == ResponseError::METHOD_NOT_FOUND)
}

pub(crate) fn is_transient(e: &SessionError) -> bool {
    matches!(e, SessionError::Rpc(RpcError::Server { error, .. })
        if error.code == ResponseError::CONTENT_MODIFIED
            || error.code == ResponseError::SERVER_CANCELLED
            || error.code == ResponseError::REQUEST_CANCELLED)
}

impl Engine {
    pub fn new(ws: Arc<Workspace>) -> Engine {
        let engine = Engine::from_parts(ws, Arc::new(crate::edit::service::EditState::new()));
        engine.install_edit_hook();
        engine
    }

    pub(crate) fn from_parts(
        ws: Arc<Workspace>,
        edits: Arc<crate::edit::service::EditState>,
    ) -> Engine {
        let syntax = Arc::new(scry_syntax::SyntaxIndex::new(
            ws.root(),
            scry_syntax::default_cache_dir().as_deref(),
        ));
        Engine { ws, edits, syntax }
    }

    pub(crate) fn edits(&self) -> &Arc<crate::edit::service::EditState> {
        &self.edits
    }

    pub fn workspace(&self) -> &Arc<Workspace> {
        &self.ws
    }

    /// Stop every server (at exit).
    pub async fn shutdown(&self) {
        self.ws.shutdown().await;
    }

    pub(crate) fn budget(&self, q: &Query) -> Duration {
        q.timeout
            .unwrap_or_else(|| Duration::from_millis(self.ws.config().limits.timeout_ms))
            .min(MAX_TIMEOUT)
            .max(Duration::from_millis(1))
    }

    /// Answer one question.
    pub async fn run(&self, q: &Query) -> Result<Answer, OpError> {
        let deadline = Instant::now() + self.budget(q);
        if q.line == Some(0) {
            return Err(OpError::InvalidArgument(
                "line is 1-based: the first line is 1".into(),
            ));
        }
        if q.column == Some(0) {
            return Err(OpError::InvalidArgument(
                "column is 1-based (characters): the first column is 1".into(),
            ));
        }
        if q.column.is_some() && q.line.is_none() {
            return Err(OpError::InvalidArgument(
                "column needs line as well (or name the symbol instead)".into(),
            ));
        }
        let server_deadline = self.server_deadline(q, deadline);
        let result = self.dispatch(q, server_deadline).await;
        let mut result = self.with_fallback(q, result).await;
        // What an untrusted workspace's configuration asked to run and was
        // ignored: said once per session, in the first answer after it.
        if let Ok(answer) = &mut result
            && answer.action != Action::Status
            && let Some(n) = self.ws.take_trust_notice()
        {
            answer.notes.push(n);
        }
        result
    }

    async fn dispatch(&self, q: &Query, deadline: Instant) -> Result<Answer, OpError> {
        match q.action {
            Action::Status => {
                let mut a = self.status(q).await;
                if let Body::Status(r) = &mut a.body {
                    r.syntactic = Some(self.syntactic_status());
                }
                Ok(a)
            }
            Action::Map => self.map(q).await,
            Action::Reload => {
                let stopped = self
                    .ws
                    .reload()
                    .await
                    .map_err(|e| OpError::InvalidArgument(format!("configuration: {e}")))?;
                Ok(Answer::new(
                    q.action,
                    q.question(self.ws.root()),
                    Body::Reloaded { stopped },
                ))
            }
            Action::Symbols => self.document_symbols(q, deadline).await,
            Action::WorkspaceSymbols => self.workspace_symbols(q, deadline).await,
            Action::Capabilities => self.capabilities(q, deadline).await,
            Action::Request => self.raw_request(q, deadline).await,
            Action::Diagnostics => self.diagnostics(q, deadline).await,
            Action::Rename => self.rename(q, deadline).await,
            Action::CodeActions => self.code_actions(q, deadline).await,
            Action::Undo => self.undo(q).await,
            _ => self.positional(q, deadline).await,
        }
    }

    /// Validate a path: inside the workspace (after resolving `..` and
    /// symlinks), existing, a file.
    pub fn resolve_path(&self, p: &Path) -> Result<PathBuf, OpError> {
        let root = self.ws.root();
        let abs = if p.is_absolute() {
            p.to_path_buf()
        } else {
            root.join(p)
        };
        let canon = match abs.canonicalize() {
            Ok(c) => c,
            Err(_) => {
                let lexical = normalize_lexically(&abs);
                if !lexical.starts_with(root) {
                    return Err(OpError::OutsideWorkspace {
                        path: p.to_path_buf(),
                        root: root.to_path_buf(),
                    });
                }
                return Err(OpError::FileNotFound(p.to_path_buf()));
            }
        };
        if !canon.starts_with(root) {
            return Err(OpError::OutsideWorkspace {
                path: p.to_path_buf(),
                root: root.to_path_buf(),
            });
        }
        if canon.is_dir() {
            return Err(OpError::InvalidArgument(format!(
                "{} is a directory; name a file",
                p.display()
            )));
        }
        Ok(canon)
    }

    async fn start(
        &self,
        route: &Route,
        deadline: Instant,
        method: &str,
    ) -> Result<Session, OpError> {
        match tokio::time::timeout_at(deadline, self.ws.session(route)).await {
            Ok(r) => {
                let session = r.map_err(|e| workspace_error(e, method))?;
                // Changes made on disk outside scry (files no server has
                // open) reach the servers before this request.
                self.ws.announce_changes(&[]).await;
                Ok(session)
            }
            Err(_) => Err(OpError::Timeout(format!(
                "{} did not finish starting within the time budget; try again or raise timeout_ms",
                route.spec.id
            ))),
        }
    }

    pub(crate) async fn open_file(
        &self,
        path: &Path,
        deadline: Instant,
        method: &str,
    ) -> Result<(Session, Route, Arc<LineIndex>), OpError> {
        let route = self
            .ws
            .route(path)
            .map_err(|e| workspace_error(e, method))?;
        let session = self.start(&route, deadline, method).await?;
        session
            .sync_open_documents()
            .await
            .map_err(|e| session_error(e, method))?;
        let index = session
            .sync_file(path, &route.language_id)
            .await
            .map_err(|e| session_error(e, method))?;
        Ok((session, route, index))
    }

    /// A request bounded by the deadline; dropping it on timeout cancels it
    /// at the server.
    pub(crate) async fn ask(
        &self,
        session: &Session,
        method: &str,
        params: Value,
        deadline: Instant,
    ) -> Result<Value, AskError> {
        match tokio::time::timeout_at(deadline, session.request(method, Some(params))).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(AskError::Session(e)),
            Err(_) => Err(AskError::Timeout),
        }
    }

    pub(crate) fn timeout_error(
        &self,
        session: &Session,
        method: &str,
        budget: Duration,
    ) -> OpError {
        let mut msg = format!(
            "{} did not answer {method} within {} ms",
            session.name(),
            budget.as_millis()
        );
        if let Some(ix) = session.state().indexing() {
            msg.push_str(&format!(
                "; it is still indexing ({ix}) — ask again shortly"
            ));
        }
        OpError::Timeout(msg)
    }

    /// Wait while the server indexes, keeping part of the budget for the
    /// request itself. Servers such as rust-analyzer answer "nothing" until
    /// their index is ready.
    pub(crate) async fn settle(&self, session: &Session, deadline: Instant) {
        let now = Instant::now();
        if deadline <= now {
            return;
        }
        let reserve = (deadline - now) / 4;
        let wait_until = deadline - reserve;
        session.state().wait_ready(wait_until).await;
    }

    /// After an empty answer: was the server (possibly) still indexing?
    /// Waits for the index (bounded by `deadline`) and returns true when a
    /// retry may give more. A young server that has not announced indexing
    /// yet gets a moment to do so; servers that never report indexing cost
    /// at most that moment, and only on an empty answer.
    pub(crate) async fn index_pending(&self, session: &Session, deadline: Instant) -> bool {
        let state = session.state();
        let (saw, _) = state.indexing_history();
        if state.is_ready() && !saw && session.uptime() < Duration::from_secs(5) {
            let mut rx = state.subscribe();
            let grace = (Instant::now() + Duration::from_millis(1500)).min(deadline);
            while state.is_ready() && !state.indexing_history().0 {
                if tokio::time::timeout_at(grace, rx.changed()).await.is_err() {
                    break;
                }
            }
        }
        if state.is_ready() && !state.indexing_history().0 {
            return false;
        }
        let was_busy = !state.is_ready();
        state.wait_ready(deadline).await;
        was_busy || state.indexing_history().0 && !saw
    }

    pub(crate) fn display(&self, p: &Path) -> String {
        p.strip_prefix(self.ws.root())
            .map(|r| r.display().to_string())
            .unwrap_or_else(|_| p.display().to_string())
    }
}

pub(crate) enum AskError {
    Timeout,
    Session(SessionError),
    Op(OpError),
}

impl From<SessionError> for AskError {
    fn from(e: SessionError) -> Self {
        AskError::Session(e)
    }
}

fn empty_body(action: Action) -> Body {
    match action {
        Action::Hover => Body::Hover {
            text: String::new(),
        },
        Action::IncomingCalls => Body::Calls {
            direction: CallDirection::Incoming,
            item: None,
            calls: Vec::new(),
        },
        Action::OutgoingCalls => Body::Calls {
            direction: CallDirection::Outgoing,
            item: None,
            calls: Vec::new(),
        },
        _ => Body::Locations {
            locations: Vec::new(),
        },
    }
}

/// Replace `"$uri"` strings in raw params with the file's URI.
fn substitute_uri(v: &mut Value, uri: &str) {
    match v {
        Value::String(s) if s == "$uri" => *s = uri.to_string(),
        Value::Array(a) => a.iter_mut().for_each(|x| substitute_uri(x, uri)),
        Value::Object(o) => o.values_mut().for_each(|x| substitute_uri(x, uri)),
        _ => {}
    }
}

fn normalize_lexically(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}
