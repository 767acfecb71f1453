//! A JSON-RPC 2.0 connection to one language server: request/response
//! matching, server-to-client requests and notifications, cancellation on drop,
//! and failing every pending request when the server goes away.

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot, watch};

use crate::framing::{FramingError, read_message, write_message};

/// Id of an outgoing request. Ours are integers from 1; incoming request ids
/// (numbers or strings) are kept as [`serde_json::Value`].
pub type RequestId = i64;

/// Receives what the server sends on its own initiative.
pub trait Handler: Send + Sync + 'static {
    /// A request from the server. Return `Ok(result)` or `Err(ResponseError)`.
    /// Called on the reader task; must not block for long.
    fn on_request(&self, method: &str, params: Value) -> Result<Value, ResponseError>;
    /// A notification from the server. Called on the reader task.
    fn on_notification(&self, method: &str, params: Value);
    /// A request whose answer needs asynchronous work (applying a workspace
    /// edit): return a future and the reply is sent when it completes, while
    /// the reader goes on reading (so the work may itself talk to the
    /// server). `None` (the default) answers through [`Handler::on_request`].
    /// Called on the reader task.
    fn on_request_deferred(&self, _method: &str, _params: &Value) -> Option<DeferredReply> {
        None
    }
}

/// The later answer to a server request (see [`Handler::on_request_deferred`]).
pub type DeferredReply = std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<Value, ResponseError>> + Send + 'static>,
>;

/// The `error` member of a JSON-RPC response.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, thiserror::Error)]
#[error("{message} (code {code})")]
pub struct ResponseError {
    pub code: i64,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ResponseError {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL_ERROR: i64 = -32603;
    pub const SERVER_NOT_INITIALIZED: i64 = -32002;
    pub const UNKNOWN_ERROR_CODE: i64 = -32001;
    pub const REQUEST_FAILED: i64 = -32803;
    pub const SERVER_CANCELLED: i64 = -32802;
    pub const CONTENT_MODIFIED: i64 = -32801;
    pub const REQUEST_CANCELLED: i64 = -32800;

    pub fn new(code: i64, message: impl Into<String>) -> Self {
        ResponseError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// `-32601 method not found: <method>`.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            Self::METHOD_NOT_FOUND,
            format!("method not found: {method}"),
        )
    }
}

/// Errors of [`Connection`] calls. Every message names the server.
#[derive(Debug, Clone, thiserror::Error)]
pub enum RpcError {
    /// The connection closed (server exited or crashed, or its output could not
    /// be parsed) before the answer came.
    #[error("{server} exited before answering {method} ({detail})")]
    Closed {
        server: String,
        method: String,
        detail: String,
    },
    /// The server answered with an error.
    #[error("{server} failed {method}: {error}")]
    Server {
        server: String,
        method: String,
        /// Boxed to keep `RpcError` small; fields are reachable through deref.
        error: Box<ResponseError>,
    },
    /// The server sent something we could not use.
    #[error("protocol error talking to {server}: {detail}")]
    Protocol { server: String, detail: String },
    /// Parameters could not be serialised.
    #[error("could not encode message: {0}")]
    Encode(String),
}

/// Tuning for [`Connection::start`].
#[derive(Debug, Clone)]
pub struct ConnectionOptions {
    /// Largest accepted incoming message body; a bigger one closes the connection.
    pub max_message_len: usize,
}

impl Default for ConnectionOptions {
    fn default() -> Self {
        ConnectionOptions {
            max_message_len: 64 * 1024 * 1024,
        }
    }
}

struct Pending {
    method: String,
    tx: oneshot::Sender<Result<Value, RpcError>>,
}

#[derive(Default)]
struct State {
    pending: HashMap<RequestId, Pending>,
    /// Set once; the reason the connection closed.
    closed: Option<String>,
}

struct Inner {
    name: String,
    next_id: AtomicI64,
    state: Mutex<State>,
    closed_tx: watch::Sender<Option<String>>,
    out_tx: mpsc::UnboundedSender<Value>,
    /// Dropped with `Inner`, which tells the reader task to stop.
    _shutdown: oneshot::Sender<()>,
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A poisoned lock only means some thread panicked while holding it;
        // the map itself is still consistent.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn closed_error(&self, method: &str, detail: String) -> RpcError {
        RpcError::Closed {
            server: self.name.clone(),
            method: method.to_owned(),
            detail,
        }
    }

    /// Marks the connection closed (first reason wins) and fails every pending request.
    fn close(&self, reason: String) {
        let drained = {
            let mut state = self.lock();
            if state.closed.is_some() {
                return;
            }
            state.closed = Some(reason.clone());
            std::mem::take(&mut state.pending)
        };
        tracing::debug!(server = %self.name, %reason, failed = drained.len(), "connection closed");
        for (_, p) in drained {
            let _ = p.tx.send(Err(self.closed_error(&p.method, reason.clone())));
        }
        self.closed_tx.send_replace(Some(reason));
    }

    fn send(&self, msg: Value) -> bool {
        self.out_tx.send(msg).is_ok()
    }

    fn handle_message(&self, handler: &dyn Handler, msg: Value) {
        let Value::Object(mut obj) = msg else {
            if let Value::Array(batch) = msg {
                for m in batch {
                    self.handle_message(handler, m);
                }
            } else {
                tracing::warn!(server = %self.name, "ignoring non-object message");
            }
            return;
        };
        let params = obj.remove("params").unwrap_or(Value::Null);
        match (obj.remove("method"), obj.remove("id")) {
            (Some(Value::String(method)), Some(id)) => {
                tracing::debug!(server = %self.name, %method, %id, "server request");
                if let Ok(Some(fut)) = catch_unwind(AssertUnwindSafe(|| {
                    handler.on_request_deferred(&method, &params)
                })) {
                    let out = self.out_tx.clone();
                    let name = self.name.clone();
                    tokio::spawn(async move {
                        // The answer runs in its own task so that a panic in
                        // it still gets the server an (error) answer.
                        let outcome = tokio::spawn(fut).await.unwrap_or_else(|_| {
                            tracing::error!(server = %name, %method, "deferred request handler panicked");
                            Err(handler_panicked(&method))
                        });
                        let _ = out.send(reply_to(id, outcome));
                    });
                    return;
                }
                let outcome = catch_unwind(AssertUnwindSafe(|| {
                    handler.on_request(&method, params)
                }))
                .unwrap_or_else(|_| {
                    tracing::error!(server = %self.name, %method, "request handler panicked");
                    Err(handler_panicked(&method))
                });
                self.send(reply_to(id, outcome));
            }
            (Some(Value::String(method)), None) => {
                tracing::trace!(server = %self.name, %method, "server notification");
                if catch_unwind(AssertUnwindSafe(|| {
                    handler.on_notification(&method, params)
                }))
                .is_err()
                {
                    tracing::error!(server = %self.name, %method, "notification handler panicked");
                }
            }
            (None, Some(id)) => self.handle_response(id, obj),
            _ => {
                tracing::warn!(server = %self.name, "ignoring message that is neither request, response nor notification")
            }
        }
    }

    fn handle_response(&self, id: Value, mut obj: Map<String, Value>) {
        let num = match &id {
            Value::Number(n) => n.as_i64(),
            Value::String(s) => s.parse().ok(),
            _ => None,
        };
        let pending = num.and_then(|n| self.lock().pending.remove(&n));
        let Some(Pending { method, tx }) = pending else {
            tracing::warn!(server = %self.name, %id, error = ?obj.get("error"), "response with unknown id ignored");
            return;
        };
        let outcome = match obj.remove("error") {
            Some(err) if !err.is_null() => {
                let error =
                    serde_json::from_value::<ResponseError>(err.clone()).unwrap_or_else(|_| {
                        ResponseError::new(
                            ResponseError::INTERNAL_ERROR,
                            format!("malformed error: {err}"),
                        )
                    });
                Err(RpcError::Server {
                    server: self.name.clone(),
                    method,
                    error: Box::new(error),
                })
            }
            _ => Ok(obj.remove("result").unwrap_or(Value::Null)),
        };
        // The receiver is gone if the request future was dropped in a race; fine.
        let _ = tx.send(outcome);
    }
}

/// Removes the pending entry and sends `$/cancelRequest` if the request future
/// is dropped before its response arrives.
struct CancelGuard<'a> {
    inner: &'a Inner,
    id: RequestId,
    armed: bool,
}

impl Drop for CancelGuard<'_> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let removed = self.inner.lock().pending.remove(&self.id);
        if let Some(p) = removed {
            tracing::debug!(server = %self.inner.name, id = self.id, method = %p.method, "request dropped; cancelling");
            self.inner.send(json!({
                "jsonrpc": "2.0",
                "method": "$/cancelRequest",
                "params": {"id": self.id},
            }));
        }
    }
}

/// A cheap, clonable handle to a JSON-RPC connection.
#[derive(Clone)]
pub struct Connection {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("name", &self.inner.name)
            .field("closed", &self.is_closed())
            .field("pending", &self.pending_count())
            .finish()
    }
}

fn message(method: &str, id: Option<RequestId>, params: Option<Value>) -> Value {
    let mut m = Map::new();
    m.insert("jsonrpc".into(), "2.0".into());
    if let Some(id) = id {
        m.insert("id".into(), id.into());
    }
    m.insert("method".into(), method.into());
    if let Some(p) = params {
        m.insert("params".into(), p);
    }
    Value::Object(m)
}

impl Connection {
    /// Spawns a reader task and a writer task on the current tokio runtime
    /// (panics outside one). `name` is the server's display name used in every
    /// error message.
    ///
    /// The tasks stop when the server's output ends, or once every handle is
    /// dropped (the writer is then shut down, which closes the server's stdin).
    pub fn start<R, W>(
        name: impl Into<String>,
        reader: R,
        writer: W,
        handler: Arc<dyn Handler>,
        opts: ConnectionOptions,
    ) -> Connection
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (out_tx, out_rx) = mpsc::unbounded_channel();
        let (shutdown_tx, shutdown_rx) = oneshot::channel();
        let inner = Arc::new(Inner {
            name: name.into(),
            next_id: AtomicI64::new(1),
            state: Mutex::new(State::default()),
            closed_tx: watch::channel(None).0,
            out_tx,
            _shutdown: shutdown_tx,
        });
        tokio::spawn(write_loop(Arc::downgrade(&inner), writer, out_rx));
        tokio::spawn(read_loop(
            Arc::downgrade(&inner),
            reader,
            handler,
            opts.max_message_len,
            shutdown_rx,
        ));
        Connection { inner }
    }

    /// Sends a request and awaits its response. `params: None` omits the
    /// `params` member. A response `result` that is missing or null gives
    /// `Ok(Value::Null)`.
    ///
    /// Dropping the future before the response arrives (timeout, `select!`)
    /// removes the pending entry and sends `$/cancelRequest` for its id.
    pub async fn request(&self, method: &str, params: Option<Value>) -> Result<Value, RpcError> {
        let inner = &*self.inner;
        let id = inner.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        {
            let mut state = inner.lock();
            if let Some(reason) = &state.closed {
                return Err(inner.closed_error(method, reason.clone()));
            }
            let pending = Pending {
                method: method.to_owned(),
                tx,
            };
            state.pending.insert(id, pending);
        }
        let mut guard = CancelGuard {
            inner,
            id,
            armed: true,
        };
        tracing::debug!(server = %inner.name, id, method, "request");
        if !inner.send(message(method, Some(id), params)) {
            guard.armed = false;
            inner.lock().pending.remove(&id);
            return Err(inner.closed_error(method, self.close_reason()));
        }
        let outcome = rx.await;
        guard.armed = false;
        match outcome {
            Ok(result) => result,
            // Only possible if the entry was removed without an answer.
            Err(_) => Err(inner.closed_error(method, self.close_reason())),
        }
    }

    /// Like [`Connection::request`], with typed parameters and result. Parameters
    /// that serialise to `null` (e.g. `()`) are omitted.
    pub async fn request_typed<P: Serialize, T: DeserializeOwned>(
        &self,
        method: &str,
        params: &P,
    ) -> Result<T, RpcError> {
        let params = serde_json::to_value(params).map_err(|e| RpcError::Encode(e.to_string()))?;
        let params = (!params.is_null()).then_some(params);
        let result = self.request(method, params).await?;
        serde_json::from_value(result).map_err(|e| RpcError::Protocol {
            server: self.inner.name.clone(),
            detail: format!("unexpected result for {method}: {e}"),
        })
    }

    /// Sends a notification. `params: None` omits the `params` member. Fails
    /// with [`RpcError::Closed`] once the connection is closed.
    pub fn notify(&self, method: &str, params: Option<Value>) -> Result<(), RpcError> {
        if let Some(reason) = self.inner.lock().closed.clone() {
            return Err(self.inner.closed_error(method, reason));
        }
        tracing::trace!(server = %self.inner.name, method, "notify");
        if self.inner.send(message(method, None, params)) {
            Ok(())
        } else {
            Err(self.inner.closed_error(method, self.close_reason()))
        }
    }

    /// True once the reader saw end of stream or a fatal error, or writing failed.
    pub fn is_closed(&self) -> bool {
        self.inner.lock().closed.is_some()
    }

    /// Resolves when the connection is closed; returns the reason.
    pub async fn closed(&self) -> String {
        let mut rx = self.inner.closed_tx.subscribe();
        match rx.wait_for(Option::is_some).await {
            Ok(reason) => reason.clone().unwrap_or_default(),
            // Unreachable: `inner` (which owns the sender) is alive.
            Err(_) => "connection dropped".to_owned(),
        }
    }

    /// The server's display name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// Number of requests awaiting a response.
    pub fn pending_count(&self) -> usize {
        self.inner.lock().pending.len()
    }

    fn close_reason(&self) -> String {
        self.inner
            .lock()
            .closed
            .clone()
            .unwrap_or_else(|| "connection closed".to_owned())
    }
}

async fn write_loop<W: AsyncWrite + Unpin>(
    inner: Weak<Inner>,
    mut writer: W,
    mut rx: mpsc::UnboundedReceiver<Value>,
) {
    while let Some(msg) = rx.recv().await {
        if let Err(e) = write_message(&mut writer, &msg).await {
            if let Some(inner) = inner.upgrade() {
                tracing::warn!(server = %inner.name, error = %e, "writing to server failed");
                inner.close(format!("writing to the server failed: {e}"));
            }
            return;
        }
    }
    // Every handle is gone: close the server's input.
    let _ = writer.shutdown().await;
}

async fn read_loop<R: AsyncRead + Unpin>(
    inner: Weak<Inner>,
    reader: R,
    handler: Arc<dyn Handler>,
    max_len: usize,
    mut shutdown: oneshot::Receiver<()>,
) {
    let mut reader = BufReader::with_capacity(64 * 1024, reader);
    loop {
        let read = tokio::select! {
            biased;
            _ = &mut shutdown => return,
            read = read_message(&mut reader, max_len) => read,
        };
        let Some(inner) = inner.upgrade() else { return };
        match read {
            Ok(Some(msg)) => inner.handle_message(&*handler, msg),
            Ok(None) => {
                inner.close("the server closed its output".to_owned());
                return;
            }
            Err(FramingError::InvalidJson(e)) => {
                tracing::warn!(server = %inner.name, error = %e, "skipping message with invalid JSON");
            }
            Err(e) => {
                tracing::error!(server = %inner.name, error = %e, "fatal error reading from server");
                inner.close(format!("reading from the server failed: {e}"));
                return;
            }
        }
    }
}

/// The answer to a server-to-client request `id`: its result or error.
fn reply_to(id: Value, outcome: Result<Value, ResponseError>) -> Value {
    match outcome {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
    }
}

/// What the server is answered when scry's handler for `method` panicked.
fn handler_panicked(method: &str) -> ResponseError {
    ResponseError::new(
        ResponseError::INTERNAL_ERROR,
        format!("client handler panicked on {method}"),
    )
}

#[cfg(test)]
mod tests;
