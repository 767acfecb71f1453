//! The one LSP-call path: [`Ctx`] (the workspace, the action's deadline and
//! the answer's header) starts a server, syncs a file from disk
//! ([`Ctx::open_file`]), waits for indexing ([`Ctx::settle`]) and asks
//! ([`Ctx::ask`], or [`Ctx::ask_typed`] where the request is fixed: its
//! method, params and result come from the `gen-lsp-types` request type;
//! [`Ctx::ask_lenient`] keeps the reply JSON where the typed result would be
//! stricter than scry reads replies); navigation, diagnostics and edits are
//! functions over it. [`AskedPath`] is the question's own path, resolved
//! once per call for every step of it.
//!
//! **The retry policy** ([`Retry`], the one place for its limits), for every
//! request whose answer matters (not the side questions that only compare or
//! decorate an answer):
//! - a *transient* error (`ContentModified`, `ServerCancelled`,
//!   `RequestCancelled`: [`SessionError::is_transient`]) is asked again after
//!   [`TRANSIENT_PAUSE`], at most [`TRANSIENT_RETRIES`] times;
//! - an *empty* answer (what counts as empty is the caller's: no locations,
//!   no matching symbol, a null edit) is asked once more
//!   ([`INDEX_RETRIES`]) when the server was, or may have been, still
//!   indexing ([`Ctx::index_pending`]), after waiting for its index — never
//!   past the deadline;
//! - every other error, and the deadline, end the question (a positional
//!   question then moves on to its next candidate position, and a failure
//!   of the question asked again after indexing counts as the empty answer
//!   it follows).
//!
//! Side questions that only compare or decorate an answer (the occurrences
//! on the asked line, the document symbols naming a declaration, the
//! diagnostics a code action is asked with) are asked once.
//!
//! Invariants: no request outlives the deadline (dropping it on timeout
//! cancels it at the server); a file is sent to the server as the disk
//! holds it before any question about it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use scry_base::paths::{self, Unconfined};
use scry_base::uri::path_to_uri;
use scry_lsp_session::types as lsp;
use scry_lsp_session::{CharPos, LineIndex, RpcError, Session, SessionError};
use scry_workspace::{Route, Workspace, WorkspaceError};
use serde_json::Value;
use tokio::time::Instant;

use crate::convert;
use scry_model::Fact;
use scry_model::Question;
use scry_model::error::OpError;

/// How many times a transient error is asked again.
pub(crate) const TRANSIENT_RETRIES: u32 = 2;
/// The pause before asking again after a transient error.
pub(crate) const TRANSIENT_PAUSE: Duration = Duration::from_millis(150);
/// How many times an empty answer is asked again after indexing.
pub(crate) const INDEX_RETRIES: u32 = 1;
/// How long a young server that has not announced indexing yet gets to do
/// so after an empty answer.
const INDEX_GRACE: Duration = Duration::from_millis(1500);
/// A server younger than this may not have announced its indexing yet.
const YOUNG_SERVER: Duration = Duration::from_secs(5);

/// One action's calls: the workspace and the deadline every request keeps.
#[derive(Clone)]
pub(crate) struct Ctx {
    pub(crate) ws: Arc<Workspace>,
    pub(crate) deadline: Instant,
    /// When the call began (for timeout messages: how long was waited).
    pub(crate) started: Instant,
    /// The action's whole budget (for timeout messages).
    pub(crate) budget: Duration,
    /// The question as the caller put it: every answer's header.
    pub(crate) question: Question,
    /// The question's own path, resolved once for the whole call.
    pub(crate) asked: AskedPath,
    /// The engine's kept occurrence scans.
    pub(crate) scans: Arc<crate::resolve::Scans>,
}

/// The question's own path, resolved (confined and checked, as
/// [`resolve_path`] does) at most once per call and shared by every step
/// of it — the answer order's checks, the lower sources, the navigation:
/// one call sees one file, and pays for one resolution. Made by
/// `Engine::run` for each call; never kept across calls (the file may be
/// gone, or a link retargeted, by the next one).
#[derive(Clone, Default)]
pub(crate) struct AskedPath(Arc<Asked>);

#[derive(Default)]
struct Asked {
    path: Option<PathBuf>,
    resolved: OnceLock<Result<PathBuf, OpError>>,
}

impl AskedPath {
    /// For a question about `path` (`None`: no path).
    pub(crate) fn new(path: Option<&Path>) -> AskedPath {
        AskedPath(Arc::new(Asked {
            path: path.map(Path::to_path_buf),
            resolved: OnceLock::new(),
        }))
    }

    /// `p` resolved inside `root` as [`resolve_path`] does, from the memo
    /// when `p` is the question's path.
    pub(crate) fn resolve(&self, root: &Path, p: &Path, limit: u64) -> Result<PathBuf, OpError> {
        match &self.0.path {
            Some(asked) if asked == p => self
                .0
                .resolved
                .get_or_init(|| resolve_path(root, p, limit))
                .clone(),
            _ => resolve_path(root, p, limit),
        }
    }

    /// The question's path resolved; `None` when it has none.
    pub(crate) fn resolved(&self, root: &Path, limit: u64) -> Option<Result<PathBuf, OpError>> {
        let p = self.0.path.as_deref()?;
        Some(self.resolve(root, p, limit))
    }
}

/// Why a request gave no answer.
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

/// The one retry policy (see the module header): how many more times a
/// question may be asked, and what to wait for before.
pub(crate) struct Retry {
    transient: u32,
    index: u32,
}

impl Retry {
    pub(crate) fn new() -> Retry {
        Retry {
            transient: TRANSIENT_RETRIES,
            index: INDEX_RETRIES,
        }
    }

    /// After a failed request: true (having paused) when it is worth asking
    /// again.
    pub(crate) async fn after_error(&mut self, e: &AskError) -> bool {
        match e {
            AskError::Session(e) if e.is_transient() && self.transient > 0 => {
                self.transient -= 1;
                tokio::time::sleep(TRANSIENT_PAUSE).await;
                true
            }
            _ => false,
        }
    }

    /// After an empty answer: true (having waited for the index) when
    /// asking again may give more.
    pub(crate) async fn after_empty(&mut self, cx: &Ctx, session: &Session) -> bool {
        if self.index == 0 {
            return false;
        }
        self.index -= 1;
        cx.index_pending(session).await
    }
}

impl Ctx {
    pub(crate) fn new(
        ws: Arc<Workspace>,
        started: Instant,
        deadline: Instant,
        budget: Duration,
        question: Question,
        asked: AskedPath,
        scans: Arc<crate::resolve::Scans>,
    ) -> Ctx {
        Ctx {
            ws,
            deadline,
            started,
            budget,
            question,
            asked,
            scans,
        }
    }

    /// A file the caller named: inside the workspace, existing, a file
    /// (the question's own path resolved once per call: [`AskedPath`]).
    pub(crate) fn resolve_path(&self, p: &Path) -> Result<PathBuf, OpError> {
        self.asked
            .resolve(self.ws.root(), p, self.ws.config().limits.max_file_bytes)
    }

    /// Every server for the whole workspace started, for `method`: one
    /// that fails is a note, not the call's error; none applying is
    /// `NO_SERVER`.
    pub(crate) async fn workspace_sessions(
        &self,
        method: &str,
        notes: &mut Vec<scry_model::Reason>,
    ) -> Result<Vec<Session>, OpError> {
        let routes = self.ws.workspace_routes();
        if routes.is_empty() {
            return Err(OpError::NoServer(
                scry_model::Message::new().note(scry_model::Reason::NoServerApplies),
            ));
        }
        let mut sessions = Vec::new();
        for r in &routes {
            match self.start(r, method).await {
                Ok(s) => sessions.push(s),
                Err(error) => notes.push(scry_model::Reason::Failed {
                    provider: r.spec.id.clone(),
                    error,
                }),
            }
        }
        Ok(sessions)
    }

    /// The session for `route`, started within the deadline.
    pub(crate) async fn start(&self, route: &Route, method: &str) -> Result<Session, OpError> {
        match tokio::time::timeout_at(self.deadline, self.ws.session(route)).await {
            Ok(r) => {
                let session = r.map_err(|e| workspace_error(e, method))?;
                // Changes made on disk outside scry (files no server has
                // open) reach the servers before this request.
                self.ws.announce_changes(&[]).await;
                Ok(session)
            }
            Err(_) => Err(OpError::Timeout(
                scry_model::Fact::StartTimedOut {
                    server: route.spec.id.clone(),
                    waited_ms: self
                        .deadline
                        .saturating_duration_since(self.started)
                        .as_millis(),
                    budget_ms: self.budget.as_millis(),
                }
                .message(),
            )),
        }
    }

    /// The server for `path`, with the file (and every document it has
    /// open) synced from disk.
    pub(crate) async fn open_file(
        &self,
        path: &Path,
        method: &str,
    ) -> Result<(Session, Route, Arc<LineIndex>), OpError> {
        let route = self
            .ws
            .route(path)
            .map_err(|e| workspace_error(e, method))?;
        // What a question is about is watched first (a directory only
        // polled before).
        self.ws.watch_first(path);
        let session = self.start(&route, method).await?;
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

    /// One request, bounded by the deadline.
    pub(crate) async fn ask(
        &self,
        session: &Session,
        method: &str,
        params: Value,
    ) -> Result<Value, AskError> {
        self.ask_until(session, method, params, self.deadline).await
    }

    /// A request whose method is fixed, typed by its `gen-lsp-types`
    /// request type `R`: the method is `R::METHOD`, the params `R::Params`,
    /// the reply parsed as `R::Result` (a reply that does not parse is
    /// `MALFORMED_RESPONSE`, worded as [`convert::malformed`] words it);
    /// bounded by the deadline.
    pub(crate) async fn ask_typed<R: lsp::Request>(
        &self,
        session: &Session,
        p: R::Params,
    ) -> Result<R::Result, AskError> {
        let method = method_of::<R>();
        let v = self.ask(session, method, params(&p)).await?;
        serde_json::from_value(v).map_err(|e| AskError::Op(convert::malformed(session, method, e)))
    }

    /// A request sent as `method` (the action table's) whose reply has
    /// the shape `T` (`lsp::DefinitionResponse` for the five
    /// location-shaped requests), parsed as `Option<T>` (`null`: `None`;
    /// one that does not parse is `MALFORMED_RESPONSE`); bounded by the
    /// deadline.
    pub(crate) async fn ask_shaped<T: serde::de::DeserializeOwned>(
        &self,
        session: &Session,
        method: &str,
        params: Value,
    ) -> Result<Option<T>, AskError> {
        let v = self.ask(session, method, params).await?;
        serde_json::from_value(v).map_err(|e| AskError::Op(convert::malformed(session, method, e)))
    }

    /// A request typed by `R` as [`Ctx::ask_typed`], whose reply stays JSON
    /// for a parser more lenient than `R::Result` (a `null` that means a
    /// refusal, a server's own fields passed back, variants read by hand).
    pub(crate) async fn ask_lenient<R: lsp::Request>(
        &self,
        session: &Session,
        p: R::Params,
    ) -> Result<Value, AskError> {
        self.ask(session, method_of::<R>(), params(&p)).await
    }

    /// [`Ctx::ask_lenient`] under the [`Retry`] policy (see
    /// [`Ctx::ask_retrying`]).
    pub(crate) async fn ask_lenient_retrying<R: lsp::Request>(
        &self,
        session: &Session,
        p: R::Params,
        empty: fn(&Value) -> bool,
    ) -> Result<Value, AskError> {
        self.ask_retrying(session, method_of::<R>(), params(&p), empty)
            .await
    }

    /// `textDocument/documentSymbol` of `path` (synced), from the session's
    /// cache when the document has not changed since it was last asked
    /// (`Session::document_symbols`), bounded by the deadline.
    pub(crate) async fn document_symbols(
        &self,
        session: &Session,
        path: &Path,
    ) -> Result<Value, AskError> {
        match tokio::time::timeout_at(self.deadline, session.document_symbols(path)).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(AskError::Session(e)),
            Err(_) => Err(AskError::Timeout),
        }
    }

    /// The declarations of `path`'s document symbols (flattened, with their
    /// containers), converted from the reply once per document text
    /// (`index`, as syncing `path` returned it) and change epoch
    /// (`Session::document_symbols_as`): a question by name on an
    /// unchanged file neither asks nor converts again. A reply that does
    /// not parse declares nothing. Bounded by the deadline.
    pub(crate) async fn declarations(
        &self,
        session: &Session,
        path: &Path,
        index: &Arc<LineIndex>,
    ) -> Result<Arc<crate::resolve::Declarations>, AskError> {
        let derive = |v: Value| {
            crate::resolve::Declarations::new(
                convert::document_symbols(session, v, index)
                    .map(|(_, flat)| flat)
                    .unwrap_or_default(),
            )
        };
        let asked = session.document_symbols_as(path, index, derive);
        match tokio::time::timeout_at(self.deadline, asked).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(AskError::Session(e)),
            Err(_) => Err(AskError::Timeout),
        }
    }

    /// One request bounded by `deadline` (at most the action's); dropping
    /// it on timeout cancels it at the server.
    pub(crate) async fn ask_until(
        &self,
        session: &Session,
        method: &str,
        params: Value,
        deadline: Instant,
    ) -> Result<Value, AskError> {
        let deadline = deadline.min(self.deadline);
        match tokio::time::timeout_at(deadline, session.request(method, Some(params))).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(AskError::Session(e)),
            Err(_) => Err(AskError::Timeout),
        }
    }

    /// A request under the [`Retry`] policy; `empty` says which answers are
    /// worth asking again after indexing.
    pub(crate) async fn ask_retrying(
        &self,
        session: &Session,
        method: &str,
        params: Value,
        empty: fn(&Value) -> bool,
    ) -> Result<Value, AskError> {
        let mut retry = Retry::new();
        loop {
            match self.ask(session, method, params.clone()).await {
                Ok(v) if empty(&v) && retry.after_empty(self, session).await => {}
                Ok(v) => return Ok(v),
                Err(e) if retry.after_error(&e).await => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Wait while the server indexes, keeping part of the budget for the
    /// request itself. Servers such as rust-analyzer answer "nothing" until
    /// their index is ready.
    pub(crate) async fn settle(&self, session: &Session) {
        let now = Instant::now();
        if self.deadline <= now {
            return;
        }
        let reserve = (self.deadline - now) / 4;
        let wait_until = self.deadline - reserve;
        session.state().wait_ready(wait_until).await;
    }

    /// After an empty answer: was the server (possibly) still indexing?
    /// Waits for the index (bounded by the deadline) and returns true when
    /// a retry may give more. A young server that has not announced
    /// indexing yet gets a moment to do so; servers that never report
    /// indexing cost at most that moment, and only on an empty answer.
    pub(crate) async fn index_pending(&self, session: &Session) -> bool {
        let state = session.state();
        let (saw, _) = state.indexing_history();
        if state.is_ready() && !saw && session.uptime() < YOUNG_SERVER {
            let mut rx = state.subscribe();
            let grace = (Instant::now() + INDEX_GRACE).min(self.deadline);
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
        state.wait_ready(self.deadline).await;
        was_busy || state.indexing_history().0 && !saw
    }

    /// The error for a request that ran past the budget.
    pub(crate) fn timeout_error(&self, session: &Session, method: &str) -> OpError {
        let waited = self.deadline.saturating_duration_since(self.started);
        not_answered_within(
            session.name(),
            method,
            waited,
            self.budget,
            session.state().indexing(),
        )
    }

    /// A failed request as the caller's error.
    pub(crate) fn fail(&self, session: &Session, method: &str, e: AskError) -> OpError {
        match e {
            AskError::Timeout => self.timeout_error(session, method),
            AskError::Session(e) => session_error(e, method),
            AskError::Op(e) => e,
        }
    }
}

/// `rust-analyzer did not answer textDocument/references within 4700 ms of
/// the call's 5000 ms budget`: how long was waited, truthfully (the rest of
/// the budget is kept for another source and for answering); `indexing`:
/// the server's progress while it still indexes.
pub(crate) fn not_answered_within(
    server: &str,
    method: &str,
    waited: Duration,
    budget: Duration,
    indexing: Option<String>,
) -> OpError {
    OpError::Timeout(
        scry_model::Fact::NotAnswered {
            server: server.to_string(),
            method: method.to_string(),
            waited_ms: waited.as_millis(),
            budget_ms: budget.as_millis(),
            indexing,
        }
        .message(),
    )
}

/// Whether the session's server supports `method`: registered dynamically,
/// or the capability the action table names for it. Methods no action
/// names are assumed supported.
pub(crate) fn supports(session: &Session, method: &str) -> bool {
    match scry_model::action::capability(method) {
        Some(key) => session.supports(method, key),
        None => true,
    }
}

/// Validate a path: inside the workspace (after resolving `..` and
/// symlinks), existing, a regular file of at most `limit` bytes
/// (`NOT_A_REGULAR_FILE`, `FILE_TOO_LARGE`).
pub(crate) fn resolve_path(root: &Path, p: &Path, limit: u64) -> Result<PathBuf, OpError> {
    let canon = match paths::confine(root, p) {
        Ok(c) if c.exists() => c,
        Ok(_) | Err(Unconfined::DanglingLink) => {
            return Err(OpError::FileNotFound(p.to_path_buf()));
        }
        Err(Unconfined::Outside) => {
            if let Some(e) = special_link(root, p) {
                return Err(e);
            }
            return Err(OpError::OutsideWorkspace {
                path: p.to_path_buf(),
                root: root.to_path_buf(),
            });
        }
    };
    if !canon.is_dir() {
        // A FIFO, socket or device is refused before anything opens it or
        // a server starts; so is a file over the size limit.
        scry_base::disk::check(&canon, limit)?;
    }
    if canon.is_dir() {
        // As asked: relative paths as written, absolute ones relative
        // to the root when inside it.
        return Err(OpError::InvalidArgument(
            scry_model::Fact::IsDirectory {
                asked: p.to_path_buf(),
            }
            .message(),
        ));
    }
    Ok(canon)
}

/// A link in the workspace to a device or a pipe outside it (`zero.py ->
/// /dev/zero`): said as what it is (`NOT_A_REGULAR_FILE`) rather than as
/// outside the workspace. Only `stat`s; it is never opened either way.
pub(crate) fn special_link(root: &Path, p: &Path) -> Option<OpError> {
    let asked = if p.is_absolute() {
        p.to_path_buf()
    } else {
        root.join(p)
    };
    match scry_base::disk::check(&asked, u64::MAX) {
        Err(e @ scry_base::disk::ReadError::NotRegular { .. }) => Some(e.into()),
        _ => None,
    }
}

/// `{ "uri": … }` of a file.
pub(crate) fn document(path: &Path) -> lsp::TextDocumentIdentifier {
    lsp::TextDocumentIdentifier {
        uri: lsp::Uri(path_to_uri(path)),
    }
}

/// A position in the server's encoding.
pub(crate) fn position(index: &LineIndex, session: &Session, pos: CharPos) -> lsp::Position {
    let p = index.to_lsp(pos, session.encoding());
    lsp::Position {
        line: p.line,
        character: p.character,
    }
}

/// `textDocument` + `position`.
pub(crate) fn at(
    path: &Path,
    index: &LineIndex,
    session: &Session,
    pos: CharPos,
) -> lsp::TextDocumentPositionParams {
    lsp::TextDocumentPositionParams {
        text_document: document(path),
        position: position(index, session, pos),
    }
}

/// The method of the `gen-lsp-types` request type `R`.
pub(crate) fn method_of<R: lsp::Request>() -> &'static str {
    R::METHOD.as_str()
}

/// Typed params as the JSON a request carries.
pub(crate) fn params<P: serde::Serialize>(p: &P) -> Value {
    serde_json::to_value(p).unwrap_or(Value::Null)
}

pub(crate) fn session_error(e: SessionError, method: &str) -> OpError {
    use scry_model::Fact;
    match e {
        SessionError::Rpc(RpcError::Closed { server, detail, .. }) => OpError::ServerCrashed(
            Fact::ServerStopped {
                server,
                method: method.to_string(),
                detail,
            }
            .message(),
        ),
        SessionError::Rpc(RpcError::Server { server, error, .. }) => OpError::ServerError(
            Fact::ServerFailed {
                server,
                method: method.to_string(),
                error: error.message,
            }
            .message(),
        ),
        SessionError::Rpc(RpcError::Protocol { server, detail }) => {
            OpError::MalformedResponse(Fact::ProtocolBroken { server, detail }.message())
        }
        SessionError::Rpc(RpcError::Encode(detail)) => {
            OpError::InvalidArgument(Fact::NotEncoded { detail }.message())
        }
        SessionError::InitFailed { name, detail } => OpError::ServerCrashed(
            Fact::StartFailed {
                server: name,
                detail,
            }
            .message(),
        ),
        SessionError::Spawn {
            name,
            program,
            source,
        } => OpError::NoServer(
            Fact::SpawnFailed {
                server: name,
                program,
                why: source.to_string(),
                hint: scry_lsp_session::process::refused_argument_hint(&source).to_string(),
            }
            .message(),
        ),
        SessionError::Malformed {
            name,
            method,
            detail,
        } => OpError::MalformedResponse(
            Fact::MalformedReply {
                server: name,
                method: method.to_string(),
                detail,
            }
            .message(),
        ),
        SessionError::Read(e) => e.into(),
        SessionError::NotText(p) => OpError::BinaryFile(p),
    }
}

pub(crate) fn workspace_error(e: WorkspaceError, method: &str) -> OpError {
    match e {
        // Written by scry-workspace in parts (a configured command, which
        // may name paths under the root, is foreign text); what an
        // untrusted workspace ignored is worded by the reader.
        WorkspaceError::NoServer { message, trust } => OpError::NoServer(match trust {
            Some(t) => message.fact(Fact::Untrusted(Box::new(t))),
            None => message,
        }),
        WorkspaceError::Session(s) => session_error(s, method),
    }
}

#[cfg(test)]
mod tests {
    use scry_lsp_session::ResponseError;

    use super::*;

    fn server_error(code: i64) -> AskError {
        AskError::Session(SessionError::Rpc(RpcError::Server {
            server: "s".into(),
            method: "m".into(),
            error: Box::new(ResponseError {
                code,
                message: String::new(),
                data: None,
            }),
        }))
    }

    #[tokio::test]
    async fn transient_errors_are_asked_again_within_the_limit() {
        let mut retry = Retry::new();
        let start = Instant::now();
        for _ in 0..TRANSIENT_RETRIES {
            assert!(
                retry
                    .after_error(&server_error(ResponseError::CONTENT_MODIFIED))
                    .await
            );
        }
        assert!(start.elapsed() >= TRANSIENT_PAUSE * TRANSIENT_RETRIES);
        assert!(
            !retry
                .after_error(&server_error(ResponseError::SERVER_CANCELLED))
                .await
        );
    }

    #[tokio::test]
    async fn other_failures_end_the_question() {
        let mut retry = Retry::new();
        let start = Instant::now();
        assert!(
            !retry
                .after_error(&server_error(ResponseError::METHOD_NOT_FOUND))
                .await
        );
        assert!(!retry.after_error(&AskError::Timeout).await);
        assert!(
            !retry
                .after_error(&AskError::Op(OpError::InvalidArgument("x".into())))
                .await
        );
        assert!(start.elapsed() < TRANSIENT_PAUSE);
        // The transient budget is untouched by them.
        assert!(
            retry
                .after_error(&server_error(ResponseError::REQUEST_CANCELLED))
                .await
        );
    }

    /// What `R::Result` (an `Option` for these requests) says of a reply it
    /// cannot read, against what the lenient path said (`null` checked
    /// first, then the bare type parsed): the same words, so a malformed
    /// reply reads byte for byte as before through [`Ctx::ask_typed`].
    fn same_refusal<R: lsp::Request, T: serde::de::DeserializeOwned + std::fmt::Debug>(
        bad: &[Value],
    ) where
        R::Result: std::fmt::Debug,
    {
        for v in bad {
            let typed = serde_json::from_value::<R::Result>(v.clone()).unwrap_err();
            let bare = serde_json::from_value::<T>(v.clone()).unwrap_err();
            assert_eq!(typed.to_string(), bare.to_string(), "{v}");
        }
        assert!(serde_json::from_value::<R::Result>(Value::Null).is_ok());
    }

    #[test]
    fn typed_results_refuse_as_the_lenient_parsers_did() {
        use serde_json::json;
        let bad = [
            json!("x"),
            json!(3),
            json!({"a": 1}),
            json!([{"name": 1}]),
            json!([{"from": {}, "fromRanges": []}]),
        ];
        same_refusal::<lsp::WorkspaceSymbolRequest, lsp::WorkspaceSymbolResponse>(&bad);
        same_refusal::<lsp::CallHierarchyIncomingCallsRequest, Vec<lsp::CallHierarchyIncomingCall>>(
            &bad,
        );
        same_refusal::<lsp::CallHierarchyOutgoingCallsRequest, Vec<lsp::CallHierarchyOutgoingCall>>(
            &bad,
        );
    }

    /// The table's method strings are the `gen-lsp-types` requests' own
    /// `METHOD`s, so the fact cannot drift from the protocol's names.
    #[test]
    fn methods_are_the_typed_requests_methods() {
        use scry_lsp_session::types as lsp;
        use scry_model::Action;
        use scry_model::action::facts;
        fn m<R: lsp::Request>() -> &'static str {
            R::METHOD.as_str()
        }
        let prepare_calls = m::<lsp::CallHierarchyPrepareRequest>();
        let expected: &[(Action, Option<&str>, &[&str])] = &[
            (Action::Definition, Some(m::<lsp::DefinitionRequest>()), &[]),
            (
                Action::Declaration,
                Some(m::<lsp::DeclarationRequest>()),
                &[],
            ),
            (
                Action::TypeDefinition,
                Some(m::<lsp::TypeDefinitionRequest>()),
                &[],
            ),
            (
                Action::Implementation,
                Some(m::<lsp::ImplementationRequest>()),
                &[],
            ),
            (Action::References, Some(m::<lsp::ReferencesRequest>()), &[]),
            (Action::Hover, Some(m::<lsp::HoverRequest>()), &[]),
            (
                Action::Symbols,
                Some(m::<lsp::DocumentSymbolRequest>()),
                &[],
            ),
            (
                Action::WorkspaceSymbols,
                Some(m::<lsp::WorkspaceSymbolRequest>()),
                &[],
            ),
            (
                Action::IncomingCalls,
                Some(prepare_calls),
                &[m::<lsp::CallHierarchyIncomingCallsRequest>()],
            ),
            (
                Action::OutgoingCalls,
                Some(prepare_calls),
                &[m::<lsp::CallHierarchyOutgoingCallsRequest>()],
            ),
            (
                Action::Diagnostics,
                Some(m::<lsp::DocumentDiagnosticRequest>()),
                &[m::<lsp::WorkspaceDiagnosticRequest>()],
            ),
            (
                Action::Rename,
                Some(m::<lsp::RenameRequest>()),
                &[m::<lsp::PrepareRenameRequest>()],
            ),
            (
                Action::CodeActions,
                Some(m::<lsp::CodeActionRequest>()),
                &[],
            ),
            (Action::Map, None, &[]),
            (Action::Status, None, &[]),
            (Action::Capabilities, None, &[]),
            (Action::Undo, None, &[]),
            (Action::Request, None, &[]),
            (Action::Reload, None, &[]),
        ];
        assert_eq!(expected.len(), Action::ALL.len(), "one row per action");
        for (i, &(action, method, follow_up)) in expected.iter().enumerate() {
            assert_eq!(action, Action::ALL[i], "one row per action, in order");
            let f = facts(action);
            assert_eq!(f.method, method, "{}", f.name);
            assert_eq!(f.follow_up, follow_up, "{}", f.name);
        }
    }
}
