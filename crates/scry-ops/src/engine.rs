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

/// Upper bound of an action's time budget.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(120);
/// How many candidate positions are tried before giving up.
const MAX_CANDIDATES: usize = 6;

/// A question, as any front end puts it.
#[derive(Debug, Clone)]
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
}

/// A position to ask at, and how it was found.
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    pub(crate) pos: CharPos,
    pub(crate) via: String,
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
        Engine { ws, edits }
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
        match q.action {
            Action::Status => Ok(self.status(q).await),
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
            Ok(r) => r.map_err(|e| workspace_error(e, method)),
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

    // ---------------------------------------------------------------- positions

    async fn positional(&self, q: &Query, deadline: Instant) -> Result<Answer, OpError> {
        let method = method_for(q.action);
        let budget = self.budget(q);
        let mut notes = Vec::new();
        let target = match &q.path {
            Some(p) => {
                let path = self.resolve_path(p)?;
                self.target_in_file(q, path, deadline, method).await?
            }
            None => {
                let Some(sym) = q.symbol.as_deref().filter(|s| !s.trim().is_empty()) else {
                    return Err(OpError::InvalidArgument(format!(
                        "{} needs a symbol (and usually a path): e.g. path=src/lib.rs symbol=Config",
                        q.action.name()
                    )));
                };
                self.target_from_workspace(q, sym, deadline, method, &mut notes)
                    .await?
            }
        };
        let Target {
            path,
            session,
            index,
            candidates,
            others,
        } = target;
        let mut files = Files::new(Some(session.clone()));
        files.insert(path.clone(), index.clone());

        let mut answer = Answer::new(q.action, q.question(self.ws.root()), empty_body(q.action));
        answer.server = Some(session.name().to_string());
        answer.others = others;
        answer.notes = notes;

        if !session.supports(method) {
            answer.empty_reason = Some(format!("{} does not support {method}", session.name()));
            if let Some(c) = candidates.first() {
                answer.asked_at = Some(self.asked_at(&path, &index, c));
            }
            return Ok(answer);
        }

        self.settle(&session, deadline).await;

        let mut last_err: Option<OpError> = None;
        let mut tried = 0;
        for cand in candidates.iter().take(MAX_CANDIDATES) {
            tried += 1;
            answer.asked_at = Some(self.asked_at(&path, &index, cand));
            let mut attempt = 0;
            let body = loop {
                attempt += 1;
                match self
                    .ask_at(
                        q.action, &session, &path, &index, cand.pos, deadline, &mut files,
                    )
                    .await
                {
                    Ok(b) => break Some(b),
                    Err(AskError::Timeout) => {
                        return Err(self.timeout_error(&session, method, budget));
                    }
                    Err(AskError::Session(e)) if is_method_not_found(&e) => {
                        answer.empty_reason =
                            Some(format!("{} does not support {method}", session.name()));
                        return Ok(answer);
                    }
                    Err(AskError::Session(e)) if is_transient(&e) && attempt < 3 => {
                        tokio::time::sleep(Duration::from_millis(150)).await;
                        continue;
                    }
                    Err(AskError::Session(e)) => {
                        if e.is_crash() {
                            return Err(session_error(e, method));
                        }
                        last_err = Some(session_error(e, method));
                        break None;
                    }
                    Err(AskError::Op(e)) => return Err(e),
                }
            };
            let Some(body) = body else { continue };
            if !body.is_empty() {
                answer.body = body;
                break;
            }
            // Empty while indexing: wait for the index, ask once more here.
            if self.index_pending(&session, deadline).await
                && let Ok(b) = self
                    .ask_at(
                        q.action, &session, &path, &index, cand.pos, deadline, &mut files,
                    )
                    .await
                && !b.is_empty()
            {
                answer.body = b;
                break;
            }
        }
        if answer.body.is_empty() {
            if let Some(e) = last_err
                && tried == 1
            {
                return Err(e);
            }
            answer.empty_reason = Some(match session.state().indexing() {
                Some(ix) => format!(
                    "{} is still indexing ({ix}); ask again shortly",
                    session.name()
                ),
                None if candidates.len() > 1 => format!(
                    "{} returned nothing at the {} places tried",
                    session.name(),
                    tried
                ),
                None => format!("{} returned nothing there", session.name()),
            });
        } else if let Some(ix) = session.state().indexing() {
            answer.partial = Some(format!("{} is still indexing ({ix})", session.name()));
        }
        Ok(answer)
    }

    pub(crate) fn asked_at(&self, path: &Path, index: &LineIndex, c: &Candidate) -> AskedAt {
        let line = index.line(c.pos.line).unwrap_or_default();
        let name_len = line
            .chars()
            .skip(c.pos.col as usize)
            .take_while(|ch| resolve::is_ident_char(*ch))
            .count() as u32;
        AskedAt {
            loc: Loc {
                path: path.to_path_buf(),
                line: c.pos.line + 1,
                col: c.pos.col + 1,
                end_line: c.pos.line + 1,
                end_col: c.pos.col + 1 + name_len,
                text: Some(line.to_string()),
            },
            via: c.via.clone(),
        }
    }

    #[allow(clippy::too_many_arguments)]
    async fn ask_at(
        &self,
        action: Action,
        session: &Session,
        path: &Path,
        index: &LineIndex,
        pos: CharPos,
        deadline: Instant,
        files: &mut Files,
    ) -> Result<Body, AskError> {
        let lsp_pos = index.to_lsp(pos, session.encoding());
        let mut params = json!({
            "textDocument": { "uri": path_to_uri(path) },
            "position": { "line": lsp_pos.line, "character": lsp_pos.character },
        });
        let method = method_for(action);
        if action == Action::References {
            params["context"] = json!({ "includeDeclaration": true });
        }
        let v = self.ask(session, method, params, deadline).await?;
        match action {
            Action::Hover => Ok(Body::Hover {
                text: convert::hover_text(session, v).map_err(AskError::Op)?,
            }),
            Action::IncomingCalls | Action::OutgoingCalls => {
                let items: Vec<scry_lsp::types::CallHierarchyItem> = if v.is_null() {
                    Vec::new()
                } else {
                    convert::parse(session, method, v).map_err(AskError::Op)?
                };
                let direction = if action == Action::IncomingCalls {
                    CallDirection::Incoming
                } else {
                    CallDirection::Outgoing
                };
                let Some(item) = items.into_iter().next() else {
                    return Ok(Body::Calls {
                        direction,
                        item: None,
                        calls: Vec::new(),
                    });
                };
                let call_method = if direction == CallDirection::Incoming {
                    "callHierarchy/incomingCalls"
                } else {
                    "callHierarchy/outgoingCalls"
                };
                let item_json = serde_json::to_value(&item).unwrap_or(Value::Null);
                let v = self
                    .ask(session, call_method, json!({ "item": item_json }), deadline)
                    .await?;
                let site_path = scry_lsp::uri_to_path(item.uri.as_ref());
                let calls = convert::calls(session, call_method, v, site_path.as_deref(), files)
                    .await
                    .map_err(AskError::Op)?;
                let item = convert::call_item(session, &item, files).await;
                Ok(Body::Calls {
                    direction,
                    item,
                    calls,
                })
            }
            _ => Ok(Body::Locations {
                locations: convert::locations(session, method, v, files)
                    .await
                    .map_err(AskError::Op)?,
            }),
        }
    }

    /// Resolve the question to candidate positions in `path`.
    pub(crate) async fn target_in_file(
        &self,
        q: &Query,
        path: PathBuf,
        deadline: Instant,
        method: &str,
    ) -> Result<Target, OpError> {
        let (session, route, index) = self.open_file(&path, deadline, method).await?;
        let rel = self.display(&path);
        let line_hint = q.line.map(|l| l - 1);
        if let Some(l) = line_hint
            && l >= index.line_count()
        {
            return Err(OpError::InvalidArgument(format!(
                "line {} is past the end of {rel} ({} lines)",
                l + 1,
                index.line_count()
            )));
        }
        // An exact column wins.
        if let (Some(line), Some(col)) = (q.line, q.column) {
            return Ok(Target {
                candidates: vec![Candidate {
                    pos: CharPos {
                        line: line - 1,
                        col: col - 1,
                    },
                    via: "the given line and column".into(),
                }],
                path,
                session,
                index,
                others: Vec::new(),
            });
        }
        let Some(symbol) = q.symbol.as_deref().filter(|s| !s.trim().is_empty()) else {
            // A bare line: its first identifier.
            if let Some(l) = line_hint
                && let Some(pos) = resolve::first_identifier(&index, l)
            {
                return Ok(Target {
                    candidates: vec![Candidate {
                        pos,
                        via: "the first identifier on the given line".into(),
                    }],
                    path,
                    session,
                    index,
                    others: Vec::new(),
                });
            }
            return Err(OpError::InvalidArgument(format!(
                "{} needs a symbol (or line and column) in {rel}",
                q.action.name()
            )));
        };
        let want = SymbolName::parse(symbol);
        let quote_single = !route.language_id.contains("rust");

        // 1. Declarations in the file's document symbols.
        let mut decls: Vec<Declared> = Vec::new();
        if session.supports("textDocument/documentSymbol") {
            let params = json!({ "textDocument": { "uri": path_to_uri(&path) } });
            match self
                .ask(&session, "textDocument/documentSymbol", params, deadline)
                .await
            {
                Ok(v) => {
                    if let Ok((_, flat)) = convert::document_symbols(&session, v, &index) {
                        decls = flat;
                    }
                }
                Err(AskError::Timeout) => {
                    return Err(self.timeout_error(
                        &session,
                        "textDocument/documentSymbol",
                        self.budget(q),
                    ));
                }
                Err(AskError::Session(e)) if e.is_crash() => {
                    return Err(session_error(e, "textDocument/documentSymbol"));
                }
                Err(_) => {}
            }
        }
        let mut matches = resolve::match_declarations(&decls, &want);
        if let Some(h) = line_hint {
            matches.sort_by_key(|d| (d.pos.line.abs_diff(h), d.pos));
        }
        let mut candidates = Vec::new();
        let mut others = Vec::new();
        if let Some(first) = matches.first() {
            candidates.push(Candidate {
                pos: first.pos,
                via: format!("declaration of {} `{}`", first.kind, symbol),
            });
            for d in matches.iter().skip(1) {
                others.push(Alternative {
                    name: d.name.clone(),
                    kind: d.kind.clone(),
                    line: d.pos.line + 1,
                    col: d.pos.col + 1,
                    container: d.container(),
                });
            }
        }
        // 2. Occurrences of the (last segment of the) name.
        let occ = resolve::occurrences(&index, &want, line_hint, quote_single);
        let n = occ.len();
        for (i, o) in occ.iter().enumerate() {
            if candidates.iter().any(|c| c.pos == o.pos) {
                continue;
            }
            let what = if o.kind == OccurrenceKind::Prose {
                " (in a comment or string)"
            } else {
                ""
            };
            candidates.push(Candidate {
                pos: o.pos,
                via: format!("occurrence {} of {n} of `{}`{what}", i + 1, want.name),
            });
        }
        if candidates.is_empty() && want.is_qualified() {
            // 3. Qualified and not in this file: workspace symbols.
            if let Some(found) = self
                .lookup_workspace_symbol(&want, std::slice::from_ref(&session), deadline)
                .await?
            {
                let fpath = found.loc.path.clone();
                let (s2, _, idx2) = self.open_file(&fpath, deadline, method).await?;
                return Ok(Target {
                    candidates: vec![Candidate {
                        pos: CharPos {
                            line: found.loc.line - 1,
                            col: found.loc.col - 1,
                        },
                        via: format!("workspace symbol `{symbol}`"),
                    }],
                    path: fpath,
                    session: s2,
                    index: idx2,
                    others: Vec::new(),
                });
            }
        }
        if candidates.is_empty() {
            return Err(OpError::SymbolNotFound(format!(
                "`{symbol}` does not occur in {rel}; check the spelling, or omit path to search the workspace"
            )));
        }
        Ok(Target {
            path,
            session,
            index,
            candidates,
            others,
        })
    }

    /// No path: find the symbol with workspace symbols, then ask there.
    pub(crate) async fn target_from_workspace(
        &self,
        q: &Query,
        symbol: &str,
        deadline: Instant,
        method: &str,
        notes: &mut Vec<String>,
    ) -> Result<Target, OpError> {
        let want = SymbolName::parse(symbol);
        let routes = self.ws.workspace_routes();
        if routes.is_empty() {
            return Err(OpError::NoServer(
                "no language server applies to this workspace (no root markers found); pass a path"
                    .into(),
            ));
        }
        let mut sessions = Vec::new();
        for r in &routes {
            match self.start(r, deadline, method).await {
                Ok(s) => sessions.push(s),
                Err(e) => notes.push(format!("{}: {e}", r.spec.id)),
            }
        }
        let Some(found) = self
            .lookup_workspace_symbol(&want, &sessions, deadline)
            .await?
        else {
            return Err(OpError::SymbolNotFound(format!(
                "no workspace symbol named `{symbol}` ({}); pass a path to search one file",
                sessions
                    .iter()
                    .map(|s| s.name().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        };
        let path = found.loc.path.clone();
        if !path.starts_with(self.ws.root()) {
            notes.push(format!("`{symbol}` was found outside the workspace"));
        }
        let (session, _, index) = self.open_file(&path, deadline, method).await?;
        let _ = q;
        Ok(Target {
            candidates: vec![Candidate {
                pos: CharPos {
                    line: found.loc.line - 1,
                    col: found.loc.col - 1,
                },
                via: format!("workspace symbol {} `{}`", found.kind, found.name),
            }],
            path,
            session,
            index,
            others: Vec::new(),
        })
    }

    /// Best workspace-symbol match for a name: exact name and matching
    /// container first, inside the workspace before outside.
    async fn lookup_workspace_symbol(
        &self,
        want: &SymbolName,
        sessions: &[Session],
        deadline: Instant,
    ) -> Result<Option<SymbolItem>, OpError> {
        let mut best: Option<(u8, SymbolItem)> = None;
        for s in sessions {
            if !s.supports("workspace/symbol") {
                continue;
            }
            self.settle(s, deadline).await;
            let mut files = Files::new(Some(s.clone()));
            for attempt in 0..2 {
                let v = match self
                    .ask(
                        s,
                        "workspace/symbol",
                        json!({ "query": want.name }),
                        deadline,
                    )
                    .await
                {
                    Ok(v) => v,
                    Err(_) => break,
                };
                let items = convert::workspace_symbols(s, v, &mut files).await?;
                let before = best.is_some();
                for it in items {
                    if let Some(score) = self.symbol_score(&it, want)
                        && best.as_ref().is_none_or(|(b, _)| score > *b)
                    {
                        best = Some((score, it));
                    }
                }
                // Nothing matched on a server that may still be indexing:
                // wait for it and ask once more.
                if best.is_some()
                    || before
                    || attempt == 1
                    || !self.index_pending(s, deadline).await
                {
                    break;
                }
            }
        }
        Ok(best.map(|(_, it)| it))
    }

    /// How well a workspace symbol matches a wanted name: `None` when it
    /// does not; exact names beat decorated ones, the workspace beats
    /// outside.
    fn symbol_score(&self, it: &SymbolItem, want: &SymbolName) -> Option<u8> {
        if resolve::base_name(&it.name) != want.name && it.name != want.name {
            return None;
        }
        if let Some(qual) = want.qualifiers.last() {
            let in_container = it
                .container
                .as_deref()
                .is_some_and(|c| resolve::ident_tokens(c).contains(&qual.as_str()));
            if !in_container && !resolve::ident_tokens(&it.name).contains(&qual.as_str()) {
                return None;
            }
        }
        let inside = it.loc.path.starts_with(self.ws.root());
        Some((u8::from(it.name == want.name) << 1) | u8::from(inside))
    }

    // ---------------------------------------------------------------- files and workspace

    async fn document_symbols(&self, q: &Query, deadline: Instant) -> Result<Answer, OpError> {
        let method = "textDocument/documentSymbol";
        let Some(p) = &q.path else {
            return Err(OpError::InvalidArgument(
                "symbols needs a path (for a search across files use workspace_symbols with a query)".into(),
            ));
        };
        let path = self.resolve_path(p)?;
        let (session, _, index) = self.open_file(&path, deadline, method).await?;
        let mut answer = Answer::new(
            q.action,
            q.question(self.ws.root()),
            Body::Outline {
                path: path.clone(),
                symbols: Vec::new(),
            },
        );
        answer.server = Some(session.name().to_string());
        if !session.supports(method) {
            answer.empty_reason = Some(format!("{} does not support {method}", session.name()));
            return Ok(answer);
        }
        let params = json!({ "textDocument": { "uri": path_to_uri(&path) } });
        let v = match self.ask(&session, method, params, deadline).await {
            Ok(v) => v,
            Err(AskError::Timeout) => {
                return Err(self.timeout_error(&session, method, self.budget(q)));
            }
            Err(AskError::Session(e)) => return Err(session_error(e, method)),
            Err(AskError::Op(e)) => return Err(e),
        };
        let (symbols, _) = convert::document_symbols(&session, v, &index)?;
        answer.body = Body::Outline { path, symbols };
        if answer.body.is_empty() {
            answer.empty_reason = session
                .state()
                .indexing()
                .map(|ix| format!("{} is still indexing ({ix})", session.name()));
        }
        Ok(answer)
    }

    async fn workspace_symbols(&self, q: &Query, deadline: Instant) -> Result<Answer, OpError> {
        let method = "workspace/symbol";
        let Some(query) = q
            .query
            .clone()
            .or_else(|| q.symbol.clone())
            .filter(|s| !s.trim().is_empty())
        else {
            return Err(OpError::InvalidArgument(
                "workspace_symbols needs a query (part of a symbol name)".into(),
            ));
        };
        let mut notes = Vec::new();
        let sessions = match &q.path {
            Some(p) => {
                let path = self.resolve_path(p)?;
                let (s, _, _) = self.open_file(&path, deadline, method).await?;
                vec![s]
            }
            None => {
                let routes = self.ws.workspace_routes();
                if routes.is_empty() {
                    return Err(OpError::NoServer(
                        "no language server applies to this workspace (no root markers found); pass a path to pick one".into(),
                    ));
                }
                let mut v = Vec::new();
                for r in &routes {
                    match self.start(r, deadline, method).await {
                        Ok(s) => v.push(s),
                        Err(e) => notes.push(format!("{}: {e}", r.spec.id)),
                    }
                }
                v
            }
        };
        let mut all = Vec::new();
        let mut partial = Vec::new();
        let mut servers = Vec::new();
        for s in &sessions {
            if !s.supports(method) {
                notes.push(format!("{} does not support workspace symbols", s.name()));
                continue;
            }
            servers.push(s.name().to_string());
            self.settle(s, deadline).await;
            let mut files = Files::new(Some(s.clone()));
            for attempt in 0..2 {
                let v = match self
                    .ask(s, method, json!({ "query": query }), deadline)
                    .await
                {
                    Ok(v) => v,
                    Err(AskError::Timeout) => {
                        return Err(self.timeout_error(s, method, self.budget(q)));
                    }
                    Err(AskError::Session(e)) => return Err(session_error(e, method)),
                    Err(AskError::Op(e)) => return Err(e),
                };
                let items = convert::workspace_symbols(s, v, &mut files).await?;
                if !items.is_empty() || attempt == 1 || !self.index_pending(s, deadline).await {
                    all.extend(items);
                    break;
                }
            }
            if let Some(ix) = s.state().indexing() {
                partial.push(format!("{} is still indexing ({ix})", s.name()));
            }
        }
        // Exact matches first, then prefix matches, then the rest.
        let ql = query.to_lowercase();
        all.sort_by_key(|it| {
            let n = resolve::base_name(&it.name).to_lowercase();
            let rank = if n == ql {
                0
            } else if n.starts_with(&ql) {
                1
            } else {
                2
            };
            (
                rank,
                !it.loc.path.starts_with(self.ws.root()),
                it.loc.path.clone(),
                it.loc.line,
            )
        });
        let mut answer = Answer::new(
            q.action,
            q.question(self.ws.root()),
            Body::WorkspaceSymbols {
                query: query.clone(),
                symbols: all,
            },
        );
        answer.server = Some(servers.join(", ")).filter(|s| !s.is_empty());
        answer.notes = notes;
        if !partial.is_empty() {
            if answer.body.is_empty() {
                answer.empty_reason = Some(partial.join("; "));
            } else {
                answer.partial = Some(partial.join("; "));
            }
        }
        Ok(answer)
    }

    async fn capabilities(&self, q: &Query, deadline: Instant) -> Result<Answer, OpError> {
        let session = match &q.path {
            Some(p) => {
                let path = self.resolve_path(p)?;
                let route = self
                    .ws
                    .route(&path)
                    .map_err(|e| workspace_error(e, "initialize"))?;
                self.start(&route, deadline, "initialize").await?
            }
            None => {
                let running = self.ws.running();
                let Some(s) = running.into_iter().next() else {
                    return Err(OpError::InvalidArgument(
                        "no server is running in this process; pass a path to start the server for that file".into(),
                    ));
                };
                s
            }
        };
        let mut answer = Answer::new(
            q.action,
            q.question(self.ws.root()),
            Body::Capabilities {
                server: session.name().to_string(),
                root: session.root().to_path_buf(),
                encoding: session.encoding().as_lsp().to_string(),
                capabilities: session.capabilities().clone(),
            },
        );
        answer.server = Some(session.name().to_string());
        let regs = session.state().registrations();
        if !regs.is_empty() {
            answer.notes.push(format!(
                "registered dynamically: {}",
                regs.iter()
                    .map(|r| r.method.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        Ok(answer)
    }

    async fn raw_request(&self, q: &Query, deadline: Instant) -> Result<Answer, OpError> {
        let Some(method) = q.method.clone().filter(|m| !m.trim().is_empty()) else {
            return Err(OpError::InvalidArgument(
                "request needs a method (e.g. textDocument/foldingRange) and JSON params".into(),
            ));
        };
        let (session, uri) = match &q.path {
            Some(p) => {
                let path = self.resolve_path(p)?;
                let (s, _, _) = self.open_file(&path, deadline, &method).await?;
                (s, Some(path_to_uri(&path)))
            }
            None => {
                let routes = self.ws.workspace_routes();
                let Some(r) = routes.first() else {
                    return Err(OpError::NoServer(
                        "no language server applies to this workspace; pass a path to pick one"
                            .into(),
                    ));
                };
                (self.start(r, deadline, &method).await?, None)
            }
        };
        let mut params = q.params.clone().unwrap_or(Value::Null);
        if let Some(uri) = &uri {
            substitute_uri(&mut params, uri);
            if params.is_null() {
                params = json!({ "textDocument": { "uri": uri } });
            }
        }
        let params = if params.is_null() { None } else { Some(params) };
        let v = match tokio::time::timeout_at(deadline, session.request(&method, params)).await {
            Ok(Ok(v)) => v,
            Ok(Err(e)) => return Err(session_error(e, &method)),
            Err(_) => return Err(self.timeout_error(&session, &method, self.budget(q))),
        };
        let mut answer = Answer::new(
            q.action,
            q.question(self.ws.root()),
            Body::Raw { method, result: v },
        );
        answer.server = Some(session.name().to_string());
        Ok(answer)
    }

    /// Status: configured servers, installed or not, running or not. Starts
    /// nothing.
    async fn status(&self, q: &Query) -> Answer {
        let config = self.ws.config();
        let running = self.ws.running();
        let starting = self.ws.starting();
        let mut servers = Vec::new();
        for spec in &config.servers {
            let installed = self.ws.installed(&spec.command);
            let mut run = Vec::new();
            for s in running.iter().filter(|s| s.name() == spec.id) {
                let state = if !s.is_alive() {
                    format!(
                        "exited: {}",
                        s.exit_reason().await.unwrap_or_else(|| "unknown".into())
                    )
                } else if let Some(ix) = s.state().indexing() {
                    format!("indexing: {ix}")
                } else {
                    "ready".to_string()
                };
                run.push(RunningServer {
                    root: s.root().to_path_buf(),
                    pid: s.pid(),
                    state,
                    encoding: Some(s.encoding().as_lsp().to_string()),
                    open_documents: s.open_documents().await,
                });
            }
            for (id, root) in &starting {
                if id == &spec.id {
                    run.push(RunningServer {
                        root: root.clone(),
                        pid: None,
                        state: "starting".into(),
                        encoding: None,
                        open_documents: 0,
                    });
                }
            }
            let note = match (&spec.alternative_to, spec.kind) {
                (Some(primary), _) => Some(format!(
                    "alternative to {primary}: used only when {primary} is not installed"
                )),
                (None, ProviderKind::Cli) => Some("command-line linter (diagnostics only)".into()),
                _ if spec.is_linter => Some("linter (diagnostics only)".into()),
                _ => None,
            };
            servers.push(ServerStatus {
                id: spec.id.clone(),
                command: spec.command.clone(),
                installed,
                file_types: spec.file_types.clone(),
                disabled: spec.disabled,
                note,
                running: run,
            });
        }
        let mut warnings = config.warnings.clone();
        for s in &config.sources {
            warnings.retain(|w| !w.is_empty());
            let _ = s;
        }
        let mut answer = Answer::new(
            q.action,
            q.question(self.ws.root()),
            Body::Status(StatusReport {
                workspace_root: self.ws.root().to_path_buf(),
                servers,
                warnings: std::mem::take(&mut warnings),
            }),
        );
        if let Some(d) = self.ws.log_dir() {
            answer.notes.push(format!("server logs: {}", d.display()));
        }
        if !config.sources.is_empty() {
            answer.notes.push(format!(
                "configuration: {}",
                config
                    .sources
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        answer
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
