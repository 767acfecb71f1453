//! One running language server: its process (in its own process group), the
//! `initialize` handshake, negotiated capabilities and encoding, progress,
//! its folders (its root first; more added while it runs, to a server that
//! takes them: [`Session::add_folder`]), and document sync from disk.
//!
//! Derived replies cached per document (`documentSymbol`) are stamped with
//! the change epoch: every notification scry sends but `didOpen` (a text
//! change, a close, watched-file changes, configuration) moves it, so a
//! cached reply is never used after anything the server was told changed.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use process_wrap::tokio::ChildWrapper;
use scry_rpc::{Connection, ConnectionOptions, ResponseError, RpcError};
use scry_text::{Encoding, LineIndex};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::docs::{DiskFile, DocStore, Readiness, SyncAction};
use crate::handler::{ClientHandler, EditHookSlot, View, workspace_folder};
use crate::state::ServerState;
use scry_base::uri::path_to_uri;

/// Everything needed to start one server for one root.
#[derive(Debug, Clone)]
pub struct SessionConfig {
    /// Display name and id ("rust-analyzer").
    pub name: String,
    /// Resolved executable; run as argv, never through a shell.
    pub program: PathBuf,
    pub args: Vec<String>,
    /// The server's whole environment: nothing else is inherited (the
    /// caller decides what a server may see and find on its `PATH`).
    pub env: Vec<(std::ffi::OsString, std::ffi::OsString)>,
    /// Its first folder (`rootUri`, and the directory it runs in).
    pub root: PathBuf,
    /// More folders it serves from the start (`workspaceFolders` after
    /// `root`; a server restarted keeps the folders it had).
    pub folders: Vec<PathBuf>,
    /// Answers to `workspace/configuration`, also sent with
    /// `workspace/didChangeConfiguration`.
    pub settings: Value,
    pub initialization_options: Option<Value>,
    /// Where the server's stderr is appended (`<dir>/<name>.log`).
    pub log_dir: Option<PathBuf>,
    pub max_open_documents: usize,
    /// Largest file sent to the server (`limits.maxFileBytes`); larger ones
    /// are refused with [`scry_base::disk::ReadError::TooLarge`].
    pub max_file_bytes: u64,
    /// Who answers the server's `workspace/applyEdit` (empty: refused).
    pub edit_hook: EditHookSlot,
    /// The log line that ends the server's start-up work, for servers that
    /// announce it no other way ([`crate::state::StartupSignal`]).
    pub startup: Option<crate::state::StartupSignal>,
}

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("could not start {name} ({}): {source}", program.display())]
    Spawn {
        name: String,
        program: PathBuf,
        source: std::io::Error,
    },
    #[error("{name} failed during start-up: {detail}")]
    InitFailed { name: String, detail: String },
    #[error("{0}")]
    Rpc(#[from] RpcError),
    #[error("{name} sent a malformed {method} response: {detail}")]
    Malformed {
        name: String,
        method: String,
        detail: String,
    },
    /// The file could not be read (missing, not a regular file, over the
    /// size limit, a read that did not finish): see [`scry_base::disk`].
    #[error("{0}")]
    Read(#[from] scry_base::disk::ReadError),
    #[error("{} is not a text file (binary or not UTF-8)", .0.display())]
    NotText(PathBuf),
}

impl SessionError {
    /// True when the server process is gone (crashed or exited).
    pub fn is_crash(&self) -> bool {
        matches!(
            self,
            SessionError::Rpc(RpcError::Closed { .. }) | SessionError::InitFailed { .. }
        )
    }

    /// True when asking again may succeed: the server cancelled the request
    /// or the document changed under it (`ContentModified`,
    /// `ServerCancelled`, `RequestCancelled`).
    pub fn is_transient(&self) -> bool {
        matches!(self, SessionError::Rpc(RpcError::Server { error, .. })
            if error.code == ResponseError::CONTENT_MODIFIED
                || error.code == ResponseError::SERVER_CANCELLED
                || error.code == ResponseError::REQUEST_CANCELLED)
    }

    /// True when the server does not know the method (`MethodNotFound`).
    pub fn is_method_not_found(&self) -> bool {
        matches!(self, SessionError::Rpc(RpcError::Server { error, .. })
            if error.code == ResponseError::METHOD_NOT_FOUND)
    }

    /// The server's own message, when it answered with an error.
    pub fn server_message(&self) -> Option<&str> {
        match self {
            SessionError::Rpc(RpcError::Server { error, .. }) => Some(&error.message),
            _ => None,
        }
    }
}

/// Kills the whole process group (the Job Object on Windows:
/// [`crate::process`]) when dropped, so no server (nor the cargo/rustc
/// children rust-analyzer spawns) outlives its session.
struct ChildGuard(Mutex<Option<Box<dyn ChildWrapper>>>);

impl ChildGuard {
    fn kill(&self) {
        if let Some(mut c) = self.0.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = c.start_kill();
            // Reap in the background so no zombie stays behind.
            if let Ok(handle) = tokio::runtime::Handle::try_current() {
                handle.spawn(async move {
                    let _ = c.wait().await;
                });
            }
        }
    }

    /// Whether the leader process has exited.
    fn exited(&self) -> bool {
        match self.0.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
            Some(c) => matches!(c.try_wait(), Ok(Some(_))),
            None => true,
        }
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

struct Inner {
    config: SessionConfig,
    conn: Connection,
    child: ChildGuard,
    pid: Option<u32>,
    /// Its whole process tree, for its memory ([`crate::process::memory`]).
    tree: Option<crate::process::Tree>,
    state: Arc<ServerState>,
    capabilities: Value,
    server_info: Option<Value>,
    encoding: Encoding,
    docs: tokio::sync::Mutex<DocStore>,
    /// Texts of files the server does not have open (source lines of
    /// answers), kept while unchanged.
    texts: crate::disk_async::Texts,
    token_seq: AtomicU64,
    started: Instant,
    /// Moved by every notification but `didOpen` (see the module header).
    epoch: AtomicU64,
    /// Its folders and settings, as its requests are answered.
    view: Arc<View>,
}

/// A handle to a running server; cheap to clone.
#[derive(Clone)]
pub struct Session {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("name", &self.inner.config.name)
            .field("root", &self.inner.config.root)
            .field("pid", &self.inner.pid)
            .finish()
    }
}

/// The client capabilities scry advertises.
pub fn client_capabilities() -> Value {
    let kinds: Vec<u32> = (1..=26).collect();
    json!({
        "general": {
            "positionEncodings": ["utf-8", "utf-16", "utf-32"],
        },
        "workspace": {
            "applyEdit": true,
            "workspaceEdit": {
                "documentChanges": true,
                "resourceOperations": ["create", "rename", "delete"],
                "failureHandling": "abort",
            },
            "didChangeConfiguration": { "dynamicRegistration": true },
            "didChangeWatchedFiles": { "dynamicRegistration": true, "relativePatternSupport": true },
            "symbol": { "symbolKind": { "valueSet": kinds } },
            "executeCommand": {},
            "workspaceFolders": true,
            "configuration": true,
            "diagnostics": { "refreshSupport": true },
        },
        "textDocument": {
            "synchronization": { "didSave": true },
            "hover": { "contentFormat": ["markdown", "plaintext"] },
            "definition": { "linkSupport": true },
            "declaration": { "linkSupport": true },
            "typeDefinition": { "linkSupport": true },
            "implementation": { "linkSupport": true },
            "references": {},
            "documentSymbol": {
                "hierarchicalDocumentSymbolSupport": true,
                "symbolKind": { "valueSet": kinds },
            },
            "callHierarchy": {},
            "rename": { "prepareSupport": true },
            "codeAction": {
                "codeActionLiteralSupport": {
                    "codeActionKind": {
                        "valueSet": [
                            "", "quickfix", "refactor", "refactor.extract", "refactor.inline",
                            "refactor.rewrite", "source", "source.organizeImports", "source.fixAll",
                        ],
                    },
                },
                "isPreferredSupport": true,
                "disabledSupport": true,
                "dataSupport": true,
                "resolveSupport": { "properties": ["edit", "command"] },
            },
            "publishDiagnostics": { "relatedInformation": true, "versionSupport": true },
            "diagnostic": { "dynamicRegistration": true },
        },
        "window": {
            "workDoneProgress": true,
            "showDocument": { "support": false },
        },
        "experimental": { "serverStatusNotification": true },
    })
}

/// What the disk holds for `path`, through the one safe reader
/// ([`crate::disk_async`]: regular files only, bounded, off the runtime's workers).
async fn read_disk(path: &Path, limit: u64) -> Result<DiskFile, SessionError> {
    let read_at = std::time::SystemTime::now();
    let (bytes, meta) = crate::disk_async::read_within(path, limit, None).await?;
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return Err(SessionError::NotText(path.to_path_buf()));
    }
    let text = String::from_utf8(bytes).map_err(|_| SessionError::NotText(path.to_path_buf()))?;
    Ok(DiskFile {
        text,
        stamp: scry_base::disk::Stamp::of(path, &meta),
        read_at,
    })
}

impl Session {
    /// Spawn the server in its own process group (Job Object on Windows:
    /// [`crate::process`]) and run `initialize`.
    /// Dropping the returned future kills the process.
    pub async fn start(config: SessionConfig) -> Result<Session, SessionError> {
        let mut cmd = crate::process::contained(&config.program, |c| {
            c.args(&config.args)
                .env_clear()
                .envs(config.env.iter().map(|(k, v)| (k, v)))
                .current_dir(&config.root)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            // The server dies with the thread that started it (Linux): a
            // killed host leaves no server behind.
            crate::process::die_with_starter(c);
        });
        let mut child = cmd.spawn().map_err(|source| SessionError::Spawn {
            name: config.name.clone(),
            program: config.program.clone(),
            source,
        })?;
        let pid = child.id();
        let tree = crate::process::tree_of(child.as_ref());
        let stdin = child.stdin().take();
        let stdout = child.stdout().take();
        let stderr = child.stderr().take();
        let guard = ChildGuard(Mutex::new(Some(child)));
        let (Some(stdin), Some(stdout), Some(stderr)) = (stdin, stdout, stderr) else {
            return Err(SessionError::InitFailed {
                name: config.name.clone(),
                detail: "no stdio pipes".into(),
            });
        };

        let state = Arc::new(ServerState::new(config.startup.clone()));
        spawn_stderr_pump(&config, pid, stderr, state.clone());

        let mut folders = vec![config.root.clone()];
        for f in &config.folders {
            if !folders.contains(f) {
                folders.push(f.clone());
            }
        }
        let view = Arc::new(View::new(folders.clone(), config.settings.clone()));
        let handler = Arc::new(ClientHandler {
            name: config.name.clone(),
            view: view.clone(),
            state: state.clone(),
            edit_hook: config.edit_hook.clone(),
        });
        let conn = Connection::start(
            config.name.clone(),
            stdout,
            stdin,
            handler,
            ConnectionOptions::default(),
        );

        let root_uri = path_to_uri(&config.root);
        let mut params = json!({
            "processId": std::process::id(),
            "clientInfo": { "name": "scry", "version": env!("CARGO_PKG_VERSION") },
            "locale": "en",
            "rootPath": config.root.to_string_lossy(),
            "rootUri": root_uri,
            "workspaceFolders": folders.iter().map(|f| workspace_folder(f)).collect::<Vec<_>>(),
            "capabilities": client_capabilities(),
        });
        if let Some(opts) = &config.initialization_options {
            params["initializationOptions"] = opts.clone();
        }
        let result = match conn.request("initialize", Some(params)).await {
            Ok(r) => r,
            Err(e) => {
                let tail = state.stderr_tail(3).join(" | ");
                let detail = if tail.is_empty() {
                    e.to_string()
                } else {
                    format!("{e} (stderr: {tail})")
                };
                tracing::warn!(server = %config.name, "initialize failed: {detail}");
                return Err(SessionError::InitFailed {
                    name: config.name.clone(),
                    detail: e.to_string(),
                });
            }
        };
        let capabilities = result
            .get("capabilities")
            .cloned()
            .unwrap_or_else(|| json!({}));
        let encoding = capabilities["positionEncoding"]
            .as_str()
            .and_then(Encoding::from_lsp)
            .unwrap_or(Encoding::Utf16);
        conn.notify("initialized", Some(json!({})))?;
        if !config.settings.is_null() {
            conn.notify(
                "workspace/didChangeConfiguration",
                Some(json!({ "settings": config.settings })),
            )?;
        }
        tracing::info!(server = %config.name, pid, encoding = encoding.as_lsp(), root = %config.root.display(), "server initialized");
        Ok(Session {
            inner: Arc::new(Inner {
                docs: tokio::sync::Mutex::new(DocStore::new(config.max_open_documents)),
                texts: Default::default(),
                config,
                conn,
                child: guard,
                pid,
                tree,
                state,
                capabilities,
                server_info: result.get("serverInfo").cloned(),
                encoding,
                token_seq: AtomicU64::new(1),
                started: Instant::now(),
                epoch: AtomicU64::new(0),
                view,
            }),
        })
    }

    /// Whether `other` is a handle to this same server.
    pub fn same_process(&self, other: &Session) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Every folder it serves, its root first.
    pub fn folders(&self) -> Vec<PathBuf> {
        self.inner.view.folders()
    }

    /// Whether `folder` is one of its folders.
    pub fn has_folder(&self, folder: &Path) -> bool {
        self.inner
            .view
            .folders()
            .iter()
            .any(|f| scry_base::paths::same(f, folder))
    }

    /// Whether `path` lies in one of its folders.
    pub fn covers(&self, path: &Path) -> bool {
        self.inner
            .view
            .folders()
            .iter()
            .any(|f| scry_base::paths::is_under(path, f))
    }

    /// Whether the server takes folders added while it runs: it said so in
    /// its capabilities (`workspace.workspaceFolders`: `supported` and
    /// `changeNotifications`, `true` or a registration id) or registered
    /// `workspace/didChangeWorkspaceFolders` since.
    pub fn takes_folders(&self) -> bool {
        let wf = &self.inner.capabilities["workspace"]["workspaceFolders"];
        let stated = wf["supported"].as_bool() == Some(true)
            && match &wf["changeNotifications"] {
                Value::Bool(b) => *b,
                Value::String(s) => !s.is_empty(),
                _ => false,
            };
        stated
            || self
                .inner
                .state
                .has_registration("workspace/didChangeWorkspaceFolders")
    }

    /// Add `folder` to a server that takes folders
    /// ([`Session::takes_folders`]), with `settings` (the session's
    /// settings for all its folders, when they change: sent as
    /// `workspace/didChangeConfiguration`). Until the server has loaded it,
    /// it counts as indexing ([`crate::state::ServerState::reloading`]).
    /// False when it was a folder already.
    pub fn add_folder(&self, folder: &Path, settings: Option<Value>) -> Result<bool, SessionError> {
        if !self.inner.view.add(folder) {
            return Ok(false);
        }
        if let Some(v) = settings
            && v != self.inner.view.settings()
        {
            self.inner.view.set_settings(v.clone());
            self.notify(
                "workspace/didChangeConfiguration",
                Some(json!({ "settings": v })),
            )?;
        }
        self.inner.state.reloading(
            format!("loading the folder {}", folder.display()),
            crate::state::RELOAD_WITHIN,
        );
        self.notify(
            "workspace/didChangeWorkspaceFolders",
            Some(json!({ "event": { "added": [workspace_folder(folder)], "removed": [] } })),
        )?;
        tracing::info!(server = %self.name(), folder = %folder.display(), "folder added");
        Ok(true)
    }

    pub fn name(&self) -> &str {
        &self.inner.config.name
    }

    pub fn root(&self) -> &Path {
        &self.inner.config.root
    }

    pub fn pid(&self) -> Option<u32> {
        self.inner.pid
    }

    /// Its whole process tree, for measuring its memory
    /// ([`crate::process::memory::ProcessTable::tree_memory`]); `None` when it
    /// cannot be measured on this OS.
    pub fn tree(&self) -> Option<&crate::process::Tree> {
        self.inner.tree.as_ref()
    }

    pub fn encoding(&self) -> Encoding {
        self.inner.encoding
    }

    pub fn capabilities(&self) -> &Value {
        &self.inner.capabilities
    }

    pub fn server_info(&self) -> Option<&Value> {
        self.inner.server_info.as_ref()
    }

    pub fn state(&self) -> &Arc<ServerState> {
        &self.inner.state
    }

    pub fn uptime(&self) -> Duration {
        self.inner.started.elapsed()
    }

    /// How many handles to this session exist, this one included. A pool
    /// holding the only one knows no caller is using the server (no
    /// request of a call can be in flight): the moment to restart it.
    pub fn handles(&self) -> usize {
        Arc::strong_count(&self.inner)
    }

    /// Requests sent and not yet answered.
    pub fn in_flight(&self) -> usize {
        self.inner.conn.pending_count()
    }

    /// False once the server's output ended or its process exited.
    pub fn is_alive(&self) -> bool {
        !self.inner.conn.is_closed() && !self.inner.child.exited()
    }

    /// Why the session is dead, if it is.
    pub async fn exit_reason(&self) -> Option<String> {
        if self.inner.conn.is_closed() {
            Some(self.inner.conn.closed().await)
        } else if self.inner.child.exited() {
            Some(format!("{} exited", self.name()))
        } else {
            None
        }
    }

    /// Whether the server supports `method`: by a dynamic registration, or
    /// statically through `capability`, the `ServerCapabilities` key the
    /// method needs (the caller knows which: scry-ops' action table).
    pub fn supports(&self, method: &str, capability: &str) -> bool {
        if self.inner.state.has_registration(method) {
            return true;
        }
        !matches!(
            &self.inner.capabilities[capability],
            Value::Null | Value::Bool(false)
        )
    }

    /// Send a request. Dropping the future (deadline, cancelled call) sends
    /// `$/cancelRequest`. An object `params` gets a `workDoneToken` of ours,
    /// so progress the server reports for it is not mistaken for indexing.
    pub async fn request(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> Result<Value, SessionError> {
        let params = params.map(|mut p| {
            if let Value::Object(map) = &mut p
                && method.starts_with("textDocument/")
                && !map.contains_key("workDoneToken")
            {
                let token = format!(
                    "scry-{}",
                    self.inner.token_seq.fetch_add(1, Ordering::Relaxed)
                );
                self.inner.state.our_token(token.clone());
                map.insert("workDoneToken".into(), Value::String(token));
            }
            p
        });
        Ok(self.inner.conn.request(method, params).await?)
    }

    /// A typed request through the `gen-lsp-types` definitions.
    pub async fn request_typed<R: crate::types::Request>(
        &self,
        params: R::Params,
    ) -> Result<R::Result, SessionError> {
        let method: String = R::METHOD.into();
        let params = serde_json::to_value(params).map_err(|e| SessionError::Malformed {
            name: self.name().to_string(),
            method: method.clone(),
            detail: e.to_string(),
        })?;
        let value = self.request(&method, Some(params)).await?;
        serde_json::from_value(value).map_err(|e| SessionError::Malformed {
            name: self.name().to_string(),
            method,
            detail: e.to_string(),
        })
    }

    pub fn notify(&self, method: &str, params: Option<Value>) -> Result<(), SessionError> {
        if method != "textDocument/didOpen" {
            self.inner.epoch.fetch_add(1, Ordering::SeqCst);
        }
        Ok(self.inner.conn.notify(method, params)?)
    }

    /// `textDocument/documentSymbol` of `path`, answered from the document's
    /// cache when the server was asked it already for the version it has
    /// and nothing was sent to the server since (the epoch). Call after
    /// syncing `path` from disk. A reply is kept only when the server was
    /// not indexing before or after it, and the document is still at the
    /// version asked for; a file that is not open is asked every time. A
    /// reply asked while the server was indexing is kept provisionally when
    /// it holds symbols: used while the server is still indexing and has
    /// not been ready since (`docs::Readiness`), so a fresh server's first
    /// questions by name do not each ask it again.
    pub async fn document_symbols(&self, path: &Path) -> Result<Value, SessionError> {
        Ok(self.symbols_reply(path).await?.0)
    }

    /// [`Session::document_symbols`] as `derive` turns it into a `T`, kept
    /// beside the cached reply: asked again while the document holds the
    /// text `index` (the `Arc` that syncing `path` returned) and nothing
    /// was sent to the server since, the kept `T` is returned without
    /// copying or converting the reply again. One derived value per
    /// document (a `T` of another type replaces it); a reply that is not
    /// kept (see [`Session::document_symbols`]) is derived every time.
    pub async fn document_symbols_as<T: std::any::Any + Send + Sync>(
        &self,
        path: &Path,
        index: &Arc<LineIndex>,
        derive: impl FnOnce(Value) -> T,
    ) -> Result<Arc<T>, SessionError> {
        {
            let docs = self.inner.docs.lock().await;
            let epoch = self.inner.epoch.load(Ordering::SeqCst);
            if let Some(t) = docs.derived::<T>(path, index, epoch, self.readiness()) {
                return Ok(t);
            }
        }
        let (reply, kept) = self.symbols_reply(path).await?;
        let t = Arc::new(derive(reply));
        if let Some((version, epoch)) = kept {
            let mut docs = self.inner.docs.lock().await;
            if self.inner.epoch.load(Ordering::SeqCst) == epoch {
                docs.set_derived(path, version, epoch, index, t.clone());
            }
        }
        Ok(t)
    }

    /// The `documentSymbol` reply of `path` and, when it is the one the
    /// document keeps, the (version, epoch) it is kept under.
    async fn symbols_reply(
        &self,
        path: &Path,
    ) -> Result<(Value, Option<(i32, u64)>), SessionError> {
        let asked = {
            let docs = self.inner.docs.lock().await;
            let epoch = self.inner.epoch.load(Ordering::SeqCst);
            match docs.version(path) {
                Some(version) => {
                    if let Some(v) = docs.symbols(path, version, epoch, self.readiness()) {
                        return Ok((v, Some((version, epoch))));
                    }
                    Some((version, epoch))
                }
                None => None,
            }
        };
        let ready_before = self.inner.state.is_ready();
        let asked_at = Instant::now();
        let params = json!({ "textDocument": { "uri": path_to_uri(path) } });
        let reply = self
            .request("textDocument/documentSymbol", Some(params))
            .await?;
        let mut kept = None;
        // Asked while indexing: kept provisionally, when it holds symbols
        // (an empty reply may only mean "not loaded yet").
        let provisional = (!(ready_before && self.inner.state.is_ready())).then_some(asked_at);
        let holds_symbols = reply.as_array().is_some_and(|a| !a.is_empty());
        if let Some((version, epoch)) = asked
            && (provisional.is_none() || holds_symbols)
        {
            let mut docs = self.inner.docs.lock().await;
            if self.inner.epoch.load(Ordering::SeqCst) == epoch
                && docs.set_symbols(path, version, epoch, reply.clone(), provisional)
            {
                kept = Some((version, epoch));
            }
        }
        Ok((reply, kept))
    }

    /// Where the server stands now, for the replies documents keep.
    fn readiness(&self) -> Readiness {
        Readiness {
            ready: self.inner.state.is_ready(),
            last_indexing_end: self.inner.state.indexing_history().1,
        }
    }

    fn send_actions(&self, actions: Vec<SyncAction>) -> Result<(), SessionError> {
        for a in actions {
            match a {
                SyncAction::Open {
                    uri,
                    language_id,
                    version,
                    text,
                } => self.notify(
                    "textDocument/didOpen",
                    Some(json!({"textDocument": {
                        "uri": uri, "languageId": language_id, "version": version, "text": text,
                    }})),
                )?,
                SyncAction::Change { uri, version, text } => self.notify(
                    "textDocument/didChange",
                    Some(json!({
                        "textDocument": { "uri": uri, "version": version },
                        "contentChanges": [{ "text": text }],
                    })),
                )?,
                SyncAction::Close { uri } => self.notify(
                    "textDocument/didClose",
                    Some(json!({ "textDocument": { "uri": uri } })),
                )?,
            }
        }
        Ok(())
    }

    /// Make the server's copy of `path` equal the disk (open it on first
    /// use). Returns the text the server now has. A document whose file
    /// still has the stamp of the last read that found them equal, that
    /// read settled, is not read again (a `stat`: no read, no task hop).
    pub async fn sync_file(
        &self,
        path: &Path,
        language_id: &str,
    ) -> Result<Arc<LineIndex>, SessionError> {
        if let Ok(meta) = std::fs::metadata(path)
            && meta.is_file()
        {
            let now = scry_base::disk::Stamp::of(path, &meta);
            if let Some(index) = self.inner.docs.lock().await.unchanged(path, &now) {
                return Ok(index);
            }
        }
        let disk = read_disk(path, self.inner.config.max_file_bytes).await;
        let mut docs = self.inner.docs.lock().await;
        let disk = match disk {
            Ok(d) => d,
            Err(e) => {
                if let Some(a) = docs.remove(path) {
                    self.send_actions(vec![a])?;
                }
                return Err(e);
            }
        };
        let (actions, index) = docs.sync(path, disk, language_id);
        self.send_actions(actions)?;
        Ok(index)
    }

    /// Re-check every open document against the disk: changed ones get a
    /// `didChange`, deleted ones a `didClose`. Cheap when nothing changed
    /// (a `stat` per document).
    pub async fn sync_open_documents(&self) -> Result<(), SessionError> {
        let mut docs = self.inner.docs.lock().await;
        let mut actions = Vec::new();
        for (path, stamp) in docs.open_files() {
            let meta = match std::fs::metadata(&path) {
                Ok(m) => m,
                Err(_) => {
                    actions.extend(docs.remove(&path));
                    continue;
                }
            };
            if scry_base::disk::Stamp::of(&path, &meta) == stamp {
                continue;
            }
            match read_disk(&path, self.inner.config.max_file_bytes).await {
                Ok(disk) => {
                    // Keeps the language id chosen at open time.
                    let (a, _) = docs.sync(&path, disk, "");
                    actions.extend(a);
                }
                Err(_) => actions.extend(docs.remove(&path)),
            }
        }
        self.send_actions(actions)
    }

    /// The text the server has for an open document.
    pub async fn document(&self, path: &Path) -> Option<Arc<LineIndex>> {
        self.inner.docs.lock().await.index(path)
    }

    /// The text of `path` as the server has it when open, else as the disk
    /// holds it (kept while unchanged: [`crate::disk_async::Texts`]);
    /// `None`: not a readable text file.
    pub async fn text(&self, path: &Path) -> Option<Arc<LineIndex>> {
        if let Some(index) = self.document(path).await {
            return Some(index);
        }
        self.inner
            .texts
            .get(path, self.inner.config.max_file_bytes)
            .await
    }

    /// The version the server has of `path` (open documents only) and when
    /// that version was sent.
    pub async fn synced(&self, path: &Path) -> Option<(i32, Instant)> {
        self.inner.docs.lock().await.synced(path)
    }

    /// The version scry last sent for an open document.
    pub async fn document_version(&self, path: &Path) -> Option<i32> {
        self.inner.docs.lock().await.version(path)
    }

    /// The text and version the server has for `path`, if open.
    pub async fn document_state(&self, path: &Path) -> Option<(Arc<LineIndex>, i32)> {
        let docs = self.inner.docs.lock().await;
        Some((docs.index(path)?, docs.version(path)?))
    }

    /// Largest file this session reads and sends (`limits.maxFileBytes`).
    pub fn max_file_bytes(&self) -> u64 {
        self.inner.config.max_file_bytes
    }

    pub async fn open_documents(&self) -> usize {
        self.inner.docs.lock().await.len()
    }

    /// The paths of the documents open in the server now.
    pub async fn open_paths(&self) -> Vec<PathBuf> {
        let docs = self.inner.docs.lock().await;
        docs.open_files().into_iter().map(|(p, _)| p).collect()
    }

    /// `shutdown` then `exit`, each bounded; then the whole process group is
    /// killed whatever the server did.
    pub async fn shutdown(&self) {
        if !self.inner.conn.is_closed() {
            let graceful = async {
                let _ = self.inner.conn.request("shutdown", None).await;
                let _ = self.inner.conn.notify("exit", None);
            };
            let _ = tokio::time::timeout(Duration::from_secs(2), graceful).await;
            let deadline = Instant::now() + Duration::from_millis(500);
            while Instant::now() < deadline && !self.inner.child.exited() {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        self.inner.child.kill();
    }

    /// Kill the process group now.
    pub fn kill(&self) {
        self.inner.child.kill();
    }
}

fn spawn_stderr_pump(
    config: &SessionConfig,
    pid: Option<u32>,
    stderr: impl tokio::io::AsyncRead + Unpin + Send + 'static,
    state: Arc<ServerState>,
) {
    let log_path = config
        .log_dir
        .as_ref()
        .map(|d| d.join(format!("{}.log", sanitize(&config.name))));
    let name = config.name.clone();
    tokio::spawn(async move {
        // Bounded (rotated at `logfile::MAX_LOG_BYTES`). Small synchronous
        // appends: the kernel buffers them.
        let mut log = log_path
            .as_deref()
            .and_then(|p| scry_base::logfile::Log::open_with(p, scry_base::logfile::MAX_LOG_BYTES));
        if let Some(l) = log.as_mut() {
            l.line(&format!("--- {name} pid {pid:?} started"));
        }
        let mut lines = BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(l) = log.as_mut() {
                l.line(&line);
            }
            tracing::trace!(server = %name, "stderr: {line}");
            state.on_stderr(line);
        }
    });
}

fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod error_tests {
    use super::*;

    fn server_error(code: i64) -> SessionError {
        SessionError::Rpc(RpcError::Server {
            server: "s".into(),
            method: "m".into(),
            error: Box::new(ResponseError {
                code,
                message: format!("code {code}"),
                data: None,
            }),
        })
    }

    #[test]
    fn errors_are_classified() {
        for code in [
            ResponseError::CONTENT_MODIFIED,
            ResponseError::SERVER_CANCELLED,
            ResponseError::REQUEST_CANCELLED,
        ] {
            let e = server_error(code);
            assert!(e.is_transient() && !e.is_method_not_found() && !e.is_crash());
        }
        let e = server_error(ResponseError::METHOD_NOT_FOUND);
        assert!(e.is_method_not_found() && !e.is_transient());
        assert_eq!(e.server_message(), Some("code -32601"));
        let e = server_error(ResponseError::INTERNAL_ERROR);
        assert!(!e.is_transient() && !e.is_method_not_found() && !e.is_crash());
        let closed = SessionError::Rpc(RpcError::Closed {
            server: "s".into(),
            method: "m".into(),
            detail: "gone".into(),
        });
        assert!(closed.is_crash() && !closed.is_transient());
        assert_eq!(closed.server_message(), None);
    }
}
