//! `scry mcp --http ADDR`: the MCP server over Streamable HTTP (rmcp's
//! `StreamableHttpService`, served by hyper), for clients that connect
//! instead of spawning scry.
//!
//! Invariants:
//! - **Loopback only** unless [`HttpOptions::allow_remote`]: a non-loopback
//!   bind address is refused before anything listens.
//! - Every request passes, in this order: the path is `/mcp` (else 404); a
//!   present `Origin` is one of [`HttpOptions::allowed_origins`] (else 403;
//!   none are allowed by default, so a browser page can never call);
//!   `Authorization: Bearer <token>` matches the token, compared in constant
//!   time (else 401). rmcp then checks `Host` against the allow-list (403,
//!   DNS rebinding) and the `Origin` again, and limits the body (413).
//! - The token is a 256-bit random hex string, in a file only the user can
//!   read: `--token-file FILE` (must exist, mode 0600 on Unix: see
//!   [`crate::platform::files`]), else generated once
//!   into `<state dir>/mcp-http-token` (`$SCRY_STATE_DIR`, else
//!   `$XDG_STATE_HOME/scry`, else `~/.local/state/scry`) and reused while it stays
//!   private. The token itself is never printed or logged.
//! - At most [`HttpOptions::max_sessions`] sessions (a new one beyond gets
//!   503); idle sessions end after [`HttpOptions::session_idle`].
//! - Nobody without the token can starve a client with it (`slots`): a
//!   request head must arrive within [`HttpOptions::header_read_timeout`]
//!   (hyper's timer; also the most a kept-alive connection idles), a body
//!   within [`HttpOptions::body_read_timeout`] (408); connections that have
//!   not authenticated share a small pool of their own
//!   ([`HttpOptions::max_unauthenticated`], the oldest closed to make room
//!   for a new one) and move to the authenticated pool
//!   ([`HttpOptions::max_connections`], 503 beyond) with their first request
//!   that passes the token check. A refusal on a connection that never
//!   authenticated closes it.
//! - Same tools and semantics as stdio: each session gets its own
//!   [`ScryMcp`] (its own replay map and journal, its own nonce), all
//!   sharing one engine (validation, configuration) and one limit of calls
//!   running at once ([`Options::max_in_flight`] for the whole server).
//! - Questions go to each session's answerer: the daemon (each MCP session
//!   its own daemon client session, so idempotency keys and the trust
//!   notice stay per session), or the shared engine (each session its own
//!   `Local` session), whose servers stop when the HTTP server stops.
//! - A `tools/call` id runs once per session: a POST repeating an id still
//!   running never reaches rmcp (which would run it again and misroute an
//!   answer); it gets the running call's answer. A call no POST waits for
//!   any more (the client hung up) is cancelled as `notifications/cancelled`
//!   would.

use std::convert::Infallible;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, RequestId, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    EventStore, RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use scry_ops::Engine;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use scry_daemon::answer::{Answerer, Choice};

use crate::platform;
use crate::{Options, ScryMcp, ServeError};

mod slots;
use slots::{Conn, Deadlined, Slots};

/// The only path served.
pub const MCP_PATH: &str = "/mcp";
/// The generated token's file name in the state directory.
pub const TOKEN_FILE_NAME: &str = "mcp-http-token";

/// Settings of the HTTP transport.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Where to listen (port 0: any free port).
    pub addr: SocketAddr,
    /// Allow a non-loopback `addr`.
    pub allow_remote: bool,
    /// Read the token from this file instead of the generated one.
    pub token_file: Option<PathBuf>,
    /// Where the generated token lives (default: the state directory).
    pub state_dir: Option<PathBuf>,
    /// `Origin`s allowed to call (`scheme://host:port`); empty: a request
    /// with any `Origin` header is refused.
    pub allowed_origins: Vec<String>,
    /// `Host` names accepted besides the loopback ones (`localhost`,
    /// `127.0.0.1`, `::1`) — for `--allow-remote`.
    pub allowed_hosts: Vec<String>,
    /// Most MCP sessions at once.
    pub max_sessions: usize,
    /// Most authenticated connections at once (a connection counts from
    /// its first request with the token; past this, 503).
    pub max_connections: usize,
    /// Most connections at once that have not sent a request with the
    /// token yet; past this, the oldest of them is closed.
    pub max_unauthenticated: usize,
    /// The most time a request head (request line and headers) may take,
    /// counted from when the server waits for it (so also the most a
    /// kept-alive connection idles between requests).
    pub header_read_timeout: Duration,
    /// The most time a request body may take, counted from its head.
    pub body_read_timeout: Duration,
    /// Largest request body.
    pub max_body_bytes: usize,
    /// A session without requests for this long ends.
    pub session_idle: Duration,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            addr: SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0),
            allow_remote: false,
            token_file: None,
            state_dir: None,
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            max_sessions: 16,
            max_connections: 64,
            max_unauthenticated: 16,
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            max_body_bytes: 1 << 20,
            session_idle: Duration::from_secs(600),
        }
    }
}

/// Parse `--http`'s value: `HOST:PORT`, `[V6]:PORT`, `localhost:PORT` or a
/// bare `PORT` (on 127.0.0.1).
pub fn parse_addr(s: &str) -> Result<SocketAddr, String> {
    let s = s.trim();
    if let Ok(port) = s.parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    if let Ok(a) = s.parse::<SocketAddr>() {
        return Ok(a);
    }
    if let Some(port) = s.strip_prefix("localhost:")
        && let Ok(port) = port.parse::<u16>()
    {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    Err(format!(
        "--http takes HOST:PORT (e.g. 127.0.0.1:8765) or a port, got `{s}`"
    ))
}

/// scry's state directory ([`scry_base::dirs::state`]).
pub fn default_state_dir() -> Option<PathBuf> {
    scry_base::dirs::state()
}

/// A token scry generates: 32 random bytes, hex.
fn new_token() -> Result<String, ServeError> {
    let mut buf = [0u8; 32];
    getrandom::fill(&mut buf)
        .map_err(|e| ServeError::Config(format!("no randomness for the token: {e}")))?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

/// The token in `--token-file FILE`: the file's first line, at least 16
/// characters, in a file only its owner can read.
fn read_token_file(path: &Path) -> Result<String, ServeError> {
    let bad = |why: String| ServeError::Config(format!("--token-file {}: {why}", path.display()));
    let meta = std::fs::metadata(path).map_err(|e| bad(e.to_string()))?;
    if !platform::files::is_private(&meta) {
        return Err(bad(format!(
            "others can read it; run `chmod 600 {}`",
            path.display()
        )));
    }
    let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
    let token = text.lines().next().unwrap_or("").trim().to_string();
    if token.chars().count() < 16 || token.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(bad(
            "the first line must be the token: at least 16 characters, no spaces".into(),
        ));
    }
    Ok(token)
}

/// The generated token in `dir`: reused while the file is private and
/// well-formed, else written anew (0600, atomically).
fn generated_token(dir: &Path) -> Result<(String, PathBuf), ServeError> {
    let path = dir.join(TOKEN_FILE_NAME);
    if let Ok(meta) = std::fs::symlink_metadata(&path)
        && meta.is_file()
        && platform::files::is_private(&meta)
        && let Ok(text) = std::fs::read_to_string(&path)
    {
        let t = text.trim();
        if t.len() == 64 && t.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok((t.to_string(), path));
        }
    }
    let fail = |e: std::io::Error| {
        ServeError::Config(format!("cannot write the token to {}: {e}", path.display()))
    };
    platform::files::private_dirs().create(dir).map_err(fail)?;
    let token = new_token()?;
    let tmp = dir.join(format!(".{TOKEN_FILE_NAME}.{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    platform::files::private_file(&mut opts);
    let written = (|| {
        use std::io::Write;
        let mut f = opts.open(&tmp)?;
        f.write_all(format!("{token}\n").as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, &path)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(fail(e));
    }
    Ok((token, path))
}

/// Equal, in time independent of where they differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `scheme://host[:port]`, lower-cased, without a trailing slash.
fn normal_origin(s: &str) -> String {
    s.trim().trim_end_matches('/').to_ascii_lowercase()
}

type Body = BoxBody<Bytes, Infallible>;

fn plain(status: StatusCode, text: &str) -> Response<Body> {
    let mut r = Response::new(Full::new(Bytes::from(text.to_string())).boxed());
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// rmcp's session manager with a cap on the number of sessions, and with
/// `tools/call` ids in flight kept apart (see [`Limited::call_stream`]).
struct Limited {
    inner: Arc<LocalSessionManager>,
    max: usize,
    creating: tokio::sync::Mutex<()>,
    flights: Arc<Flights>,
}

/// The `tools/call` requests running, by session and JSON-RPC id: where
/// their messages go (the POST that started the call, and any duplicate
/// of it that arrived while it ran).
type Flights = std::sync::Mutex<
    std::collections::HashMap<
        (SessionId, RequestId),
        Vec<tokio::sync::mpsc::UnboundedSender<ServerSseMessage>>,
    >,
>;

/// One POST's response stream, fed by a call's pump.
struct Listener(tokio::sync::mpsc::UnboundedReceiver<ServerSseMessage>);

impl futures_core::Stream for Listener {
    type Item = ServerSseMessage;
    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<ServerSseMessage>> {
        self.0.poll_recv(cx)
    }
}

type SseStream =
    std::pin::Pin<Box<dyn futures_core::Stream<Item = ServerSseMessage> + Send + Sync + 'static>>;

/// Whether `m` is the final answer (result or error) to request `id`.
fn answers(m: &ServerSseMessage, id: &RequestId) -> bool {
    match m.message.as_deref() {
        Some(ServerJsonRpcMessage::Response(r)) => &r.id == id,
        Some(ServerJsonRpcMessage::Error(e)) => e.id.as_ref() == Some(id),
        _ => false,
    }
}

/// How often a running call checks whether anyone still waits for it.
const LISTENER_CHECK: Duration = Duration::from_millis(200);

#[derive(Debug, thiserror::Error)]
enum LimitedError {
    #[error("{0}")]
    Inner(#[from] LocalSessionManagerError),
    #[error("too many MCP sessions (at most {0}); close one or wait until an idle one ends")]
    TooMany(usize),
}

impl Limited {
    async fn count(&self) -> usize {
        self.inner.sessions.read().await.len()
    }

    /// A `tools/call` POST. rmcp keys a session's requests by JSON-RPC id,
    /// so a second POST with an id still running (a client retrying after
    /// its own timeout) would run the tool again and send one answer to
    /// the wrong stream. Here the duplicate never reaches rmcp: it listens
    /// to the running call and gets its answer too. The call's messages
    /// are pumped to every POST waiting for it; when none is left (the
    /// client hung up), the call is cancelled as `notifications/cancelled`
    /// would (so the language server gets `$/cancelRequest`).
    async fn call_stream(
        &self,
        session: &SessionId,
        id: RequestId,
        message: ClientJsonRpcMessage,
    ) -> Result<SseStream, LimitedError> {
        let key = (session.clone(), id.clone());
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        {
            let mut flights = self.flights.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(listeners) = flights.get_mut(&key) {
                tracing::debug!(%id, "a duplicate of a running call: answered with its answer");
                listeners.push(tx);
                return Ok(Box::pin(Listener(rx)));
            }
            flights.insert(key.clone(), vec![tx]);
        }
        let stream = match self.inner.create_stream(session, message).await {
            Ok(s) => s,
            Err(e) => {
                self.flights
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&key);
                return Err(e.into());
            }
        };
        tokio::spawn(pump(
            Box::pin(stream),
            key,
            self.flights.clone(),
            self.inner.clone(),
        ));
        Ok(Box::pin(Listener(rx)))
    }
}

/// Feed one call's messages to its listeners until its answer went out,
/// the session ended, or no listener is left (then cancel the call).
async fn pump(
    mut stream: SseStream,
    key: (SessionId, RequestId),
    flights: Arc<Flights>,
    sessions: Arc<LocalSessionManager>,
) {
    use std::future::poll_fn;
    let mut check = tokio::time::interval(LISTENER_CHECK);
    check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let forget = || {
        flights
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&key);
    };
    loop {
        let next = tokio::select! {
            m = poll_fn(|cx| stream.as_mut().poll_next(cx)) => m,
            _ = check.tick() => {
                let gone = flights
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get_mut(&key)
                    .is_none_or(|l| {
                        l.retain(|t| !t.is_closed());
                        l.is_empty()
                    });
                if gone {
                    break;
                }
                continue;
            }
        };
        let Some(m) = next else {
            // The session ended.
            forget();
            return;
        };
        let last = answers(&m, &key.1);
        let mut flights = flights.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(listeners) = flights.get_mut(&key) {
            listeners.retain(|t| t.send(m.clone()).is_ok());
        }
        if last {
            flights.remove(&key);
            return;
        }
    }
    // Nobody waits for the answer any more: cancel the call.
    forget();
    tracing::debug!(id = %key.1, "every request for a call hung up: cancelling it");
    let cancel = serde_json::json!({
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": key.1, "reason": "the HTTP client hung up"},
    });
    if let Ok(cancel) = serde_json::from_value::<ClientJsonRpcMessage>(cancel)
        && let Err(e) = sessions.accept_message(&key.0, cancel).await
    {
        tracing::debug!("the cancel did not reach the session: {e}");
    }
}

impl SessionManager for Limited {
    type Error = LimitedError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        // Checked and created under one lock: the limit holds under races.
        let _one = self.creating.lock().await;
        if self.count().await >= self.max {
            return Err(LimitedError::TooMany(self.max));
        }
        Ok(self.inner.create_session().await?)
    }
    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.inner.initialize_session(id, message).await?)
    }
    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.inner.has_session(id).await?)
    }
    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        Ok(self.inner.close_session(id).await?)
    }
    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<
        impl futures_core::Stream<Item = ServerSseMessage> + Send + Sync + 'static,
        Self::Error,
    > {
        if let ClientJsonRpcMessage::Request(r) = &message
            && matches!(r.request, ClientRequest::CallToolRequest(_))
        {
            let call = r.id.clone();
            return self.call_stream(id, call, message).await;
        }
        let s: SseStream = Box::pin(self.inner.create_stream(id, message).await?);
        Ok(s)
    }
    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        Ok(self.inner.accept_message(id, message).await?)
    }
    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<
        impl futures_core::Stream<Item = ServerSseMessage> + Send + Sync + 'static,
        Self::Error,
    > {
        Ok(self.inner.create_standalone_stream(id).await?)
    }
    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<
        impl futures_core::Stream<Item = ServerSseMessage> + Send + Sync + 'static,
        Self::Error,
    > {
        Ok(self.inner.resume(id, last_event_id).await?)
    }
    async fn restore_session(
        &self,
        _id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        Ok(RestoreOutcome::NotSupported)
    }
    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        None
    }
}

/// What every request passes before rmcp sees it.
struct Gate {
    token: String,
    origins: Vec<String>,
    sessions: Arc<Limited>,
}

impl Gate {
    /// `Some(response)` when the request is refused before its token
    /// counts: path, `Origin`, token.
    fn refuse(&self, req: &Request<Incoming>) -> Option<Response<Body>> {
        if req.uri().path() != MCP_PATH {
            return Some(plain(
                StatusCode::NOT_FOUND,
                "Not Found: scry serves MCP at /mcp\n",
            ));
        }
        if let Some(origin) = req.headers().get(header::ORIGIN) {
            let ok = origin
                .to_str()
                .is_ok_and(|o| self.origins.contains(&normal_origin(o)));
            if !ok {
                tracing::warn!(?origin, "refused a request from a disallowed Origin");
                return Some(plain(
                    StatusCode::FORBIDDEN,
                    "Forbidden: Origin not allowed (scry mcp --allow-origin ORIGIN allows one)\n",
                ));
            }
        }
        let authorized = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                let (scheme, token) = v.trim().split_once(' ')?;
                scheme
                    .eq_ignore_ascii_case("bearer")
                    .then(|| token.trim().to_string())
            })
            .is_some_and(|t| same(t.as_bytes(), self.token.as_bytes()));
        if !authorized {
            let mut r = plain(
                StatusCode::UNAUTHORIZED,
                "Unauthorized: send `Authorization: Bearer <token>` with the token from the file `scry mcp --http` named at start\n",
            );
            r.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer realm=\"scry\""),
            );
            return Some(r);
        }
        None
    }

    /// `Some(response)` when an authenticated request is refused: a new
    /// session beyond the limit.
    async fn refuse_session(&self, req: &Request<Incoming>) -> Option<Response<Body>> {
        // A new session (a POST without a session id) beyond the limit.
        if req.method() == http::Method::POST
            && !req.headers().contains_key("mcp-session-id")
            && self.sessions.count().await >= self.sessions.max
        {
            let mut r = plain(
                StatusCode::SERVICE_UNAVAILABLE,
                &format!("{}\n", LimitedError::TooMany(self.sessions.max)),
            );
            r.headers_mut()
                .insert(header::RETRY_AFTER, header::HeaderValue::from_static("30"));
            return Some(r);
        }
        None
    }
}

/// A running HTTP server.
pub struct HttpServer {
    addr: SocketAddr,
    token_path: PathBuf,
    /// The first session's answerer (the others are its new sessions).
    answerer: Arc<dyn Answerer>,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl HttpServer {
    /// Bind and start serving `engine`'s workspace. Fails (nothing
    /// listening) on a non-loopback address without `allow_remote`, an
    /// unusable token file, or an address in use.
    pub async fn start(
        engine: Engine,
        opts: Options,
        http: HttpOptions,
    ) -> Result<HttpServer, ServeError> {
        let prototype = ScryMcp::new(engine, opts);
        HttpServer::start_with(prototype, http).await
    }

    /// [`HttpServer::start`], each session a [`ScryMcp::new_session`] of
    /// `prototype` (its own answerer session: with the daemon, its own
    /// client session).
    pub async fn start_with(
        prototype: ScryMcp,
        http: HttpOptions,
    ) -> Result<HttpServer, ServeError> {
        let ip = http.addr.ip();
        if !ip.is_loopback() && !http.allow_remote {
            return Err(ServeError::Config(format!(
                "{ip} is not a loopback address: scry mcp --http listens on 127.0.0.1 or ::1 unless --allow-remote is given"
            )));
        }
        let (token, token_path) = match &http.token_file {
            Some(f) => (read_token_file(f)?, f.clone()),
            None => {
                let dir = http.state_dir.clone().or_else(default_state_dir).ok_or_else(|| {
                    ServeError::Config(
                        "no state directory for the token (set XDG_STATE_HOME or HOME, or pass --token-file)".into(),
                    )
                })?;
                generated_token(&dir)?
            }
        };
        let listener = TcpListener::bind(http.addr)
            .await
            .map_err(|e| ServeError::Config(format!("cannot listen on {}: {e}", http.addr)))?;
        let addr = listener
            .local_addr()
            .map_err(|e| ServeError::Config(e.to_string()))?;

        let mut hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
        if !ip.is_unspecified() {
            hosts.push(ip.to_string());
        }
        hosts.extend(http.allowed_hosts.iter().cloned());
        let origins: Vec<String> = http
            .allowed_origins
            .iter()
            .map(|o| normal_origin(o))
            .collect();
        let stop = CancellationToken::new();
        let config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(hosts)
            .with_allowed_origins(origins.clone())
            .enforce_origin_validation()
            .with_max_request_body_bytes(http.max_body_bytes)
            .with_cancellation_token(stop.child_token());
        let mut local = LocalSessionManager::default();
        local.session_config.keep_alive = Some(http.session_idle);
        let sessions = Arc::new(Limited {
            inner: Arc::new(local),
            max: http.max_sessions.max(1),
            creating: tokio::sync::Mutex::new(()),
            flights: Arc::default(),
        });
        let answerer = prototype.answerer().clone();
        let service = StreamableHttpService::new(
            move || Ok(prototype.new_session()),
            sessions.clone(),
            config,
        );
        let gate = Arc::new(Gate {
            token,
            origins,
            sessions,
        });
        let limits = ConnLimits {
            slots: Slots::new(http.max_connections, http.max_unauthenticated),
            header_read_timeout: http.header_read_timeout,
            body_read_timeout: http.body_read_timeout,
        };
        let task = tokio::spawn(accept_loop(listener, service, gate, limits, stop.clone()));
        Ok(HttpServer {
            addr,
            token_path,
            answerer,
            stop,
            task,
        })
    }

    /// The address it listens on (the real port when 0 was asked).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://ADDR/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}{MCP_PATH}", self.addr)
    }

    /// The file holding the bearer token.
    pub fn token_file(&self) -> &Path {
        &self.token_path
    }

    /// Stop listening, end every session, stop the language servers.
    pub async fn shutdown(self) {
        self.stop.cancel();
        let _ = self.task.await;
        self.answerer.shutdown().await;
    }
}

/// What bounds a connection: the two pools and the read timeouts.
struct ConnLimits {
    slots: Arc<Slots>,
    header_read_timeout: Duration,
    body_read_timeout: Duration,
}

/// `response` closing its connection after it is sent.
fn closing(mut response: Response<Body>) -> Response<Body> {
    response.headers_mut().insert(
        header::CONNECTION,
        header::HeaderValue::from_static("close"),
    );
    response
}

/// One request on connection `conn`: the gate, the move to the
/// authenticated pool, the session cap, then rmcp with a body deadline.
async fn answer(
    req: Request<Incoming>,
    conn: &Conn,
    gate: &Gate,
    service: &StreamableHttpService<ScryMcp, Limited>,
    body_read_timeout: Duration,
) -> Response<Body> {
    if let Some(refused) = gate.refuse(&req) {
        // A connection that never authenticated gets no second try.
        return if conn.is_authenticated() {
            refused
        } else {
            closing(refused)
        };
    }
    if !conn.promote() {
        tracing::warn!("too many authenticated connections; refusing a request");
        let mut r = plain(
            StatusCode::SERVICE_UNAVAILABLE,
            "Service Unavailable: too many connections with the token are open; retry later\n",
        );
        r.headers_mut()
            .insert(header::RETRY_AFTER, header::HeaderValue::from_static("5"));
        return closing(r);
    }
    if let Some(refused) = gate.refuse_session(&req).await {
        return refused;
    }
    let (req, timed_out) = {
        let (parts, body) = req.into_parts();
        let (body, timed_out) = Deadlined::new(body, body_read_timeout);
        (Request::from_parts(parts, body), timed_out)
    };
    let response = service.handle(req).await;
    if timed_out.load(std::sync::atomic::Ordering::SeqCst) {
        return closing(plain(
            StatusCode::REQUEST_TIMEOUT,
            &format!(
                "Request Timeout: the body did not arrive within {} s\n",
                body_read_timeout.as_secs_f64()
            ),
        ));
    }
    response
}

async fn accept_loop(
    listener: TcpListener,
    service: StreamableHttpService<ScryMcp, Limited>,
    gate: Arc<Gate>,
    limits: ConnLimits,
    stop: CancellationToken,
) {
    let limits = Arc::new(limits);
    loop {
        // A full pool of connections still in their grace: accept nothing
        // (they wait in the kernel's queue, in order) until one's ends.
        while let Some(until) = limits.slots.room_at() {
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tokio::time::sleep_until(until.into()) => {}
            }
        }
        let (stream, peer) = tokio::select! {
            _ = stop.cancelled() => return,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        // Unauthenticated until its first request with the token; the
        // oldest unauthenticated connection is told to close if the pool
        // is full.
        let conn = Arc::new(limits.slots.admit());
        let service = service.clone();
        let gate = gate.clone();
        let stop = stop.clone();
        let limits = limits.clone();
        tokio::spawn(async move {
            let evicted = conn.evicted().clone();
            let body_read_timeout = limits.body_read_timeout;
            let handler = {
                let conn = conn.clone();
                hyper::service::service_fn(move |req: Request<Incoming>| {
                    let (service, gate, conn) = (service.clone(), gate.clone(), conn.clone());
                    async move {
                        Ok::<_, Infallible>(
                            answer(req, &conn, &gate, &service, body_read_timeout).await,
                        )
                    }
                })
            };
            let conn_io = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(limits.header_read_timeout)
                .serve_connection(TokioIo::new(stream), handler);
            tokio::pin!(conn_io);
            tokio::select! {
                r = conn_io.as_mut() => {
                    if let Err(e) = r {
                        tracing::debug!(%peer, "connection ended: {e}");
                    }
                }
                _ = evicted.cancelled() => {
                    tracing::debug!(%peer, "closed an unauthenticated connection to make room for a newer one");
                }
                _ = stop.cancelled() => conn_io.as_mut().graceful_shutdown(),
            }
            drop(conn);
        });
    }
}

/// `scry mcp --http`: serve the workspace at `root` until Ctrl-C or
/// SIGTERM; `ready` is told where (the front end prints it).
pub async fn serve_http(
    root: &Path,
    opts: Options,
    http: HttpOptions,
    ready: impl FnOnce(&HttpServer),
) -> Result<(), ServeError> {
    serve_http_with(root, opts, http, Choice::InProcess(None), ready).await
}

/// [`serve_http`] answered as `route` says (`scry mcp --http` passes the
/// daemon unless opted out, like stdio).
pub async fn serve_http_with(
    root: &Path,
    opts: Options,
    http: HttpOptions,
    choice: Choice,
    ready: impl FnOnce(&HttpServer),
) -> Result<(), ServeError> {
    let prototype = crate::session(root, opts, choice)?;
    let server = HttpServer::start_with(prototype, http).await?;
    ready(&server);
    platform::signals::stopped().await;
    server.shutdown().await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses() {
        assert_eq!(parse_addr("8765").unwrap().to_string(), "127.0.0.1:8765");
        assert_eq!(
            parse_addr("localhost:1").unwrap().to_string(),
            "127.0.0.1:1"
        );
        assert_eq!(parse_addr("[::1]:2").unwrap().to_string(), "[::1]:2");
        assert!(parse_addr("example.com:80").is_err());
    }

    #[test]
    fn token_is_generated_private_and_reused() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state/scry");
        let (t1, p1) = generated_token(&state).unwrap();
        assert_eq!(t1.len(), 64);
        if let Some(mode) = platform::files::mode(&p1) {
            assert_eq!(mode, 0o600);
        }
        let (t2, _) = generated_token(&state).unwrap();
        assert_eq!(t1, t2, "a private, well-formed token is reused");
        // Where files have mode bits: one others could read is replaced.
        if platform::files::set_mode(&p1, 0o644) {
            let (t3, _) = generated_token(&state).unwrap();
            assert_ne!(t1, t3, "a token others could read is replaced");
            assert_eq!(platform::files::mode(&p1), Some(0o600));
        }
    }

    #[test]
    fn token_file_must_be_private_and_long() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("tok");
        std::fs::write(&f, "short\n").unwrap();
        platform::files::set_mode(&f, 0o600);
        assert!(
            read_token_file(&f)
                .unwrap_err()
                .to_string()
                .contains("at least 16")
        );
        std::fs::write(&f, "0123456789abcdef-long-enough\nsecond line\n").unwrap();
        assert_eq!(read_token_file(&f).unwrap(), "0123456789abcdef-long-enough");
        if platform::files::set_mode(&f, 0o644) {
            assert!(
                read_token_file(&f)
                    .unwrap_err()
                    .to_string()
                    .contains("chmod 600")
            );
        }
        assert!(read_token_file(&dir.path().join("missing")).is_err());
    }

    #[test]
    fn constant_time_compare() {
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abd"));
        assert!(!same(b"abc", b"abcd"));
    }
}
