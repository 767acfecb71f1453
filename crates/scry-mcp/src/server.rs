//! The MCP handler: `tools/list` and `tools/call` with the call semantics
//! (validate → permission → execute → journal → respond).
//!
//! Validation, permissions and idempotency happen here against the local
//! workspace (its configuration; no server is started for them); the
//! question goes to the session's one answerer
//! (`scry_daemon::answer::Answerer`: the scry daemon that shares servers
//! across sessions, or a `Local` engine), and the reply is rendered with
//! the reply's root and limits. Each call runs on its own task (rmcp
//! spawns one per request), panic-isolated (`answer::isolated`): a panic
//! in it is that call's `INTERNAL` error result and the session serves on.

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ProgressToken,
    RequestId, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, Peer, ServerHandler};
use scry_daemon::answer::{self, Answerer, Baseline, Local};
use scry_daemon::proto::{Call, CallResult, Reply};
use scry_model::{Action, Reason, ToolFact, Valid};
use scry_ops::Engine;
use scry_render::{display_path, reason_text, render_json, render_text};
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::Semaphore;

use crate::args;
use crate::scrub::{self, ToolError};
use crate::tools::{self, LSP, LSP_EDIT, Languages};

/// Settings of one MCP session.
#[derive(Debug, Clone)]
pub struct Options {
    /// Refuse writes: `lsp_edit` is not listed and calls to it are refused.
    pub read_only: bool,
    /// Most tool calls running at once; one more gets a `BUSY` error.
    pub max_in_flight: usize,
    /// How many finished calls are kept for replay by request id.
    pub replay_capacity: usize,
    /// How many write calls the journal keeps.
    pub journal_capacity: usize,
    /// How often a running call looks for indexing servers to report
    /// progress (when the client asked for progress).
    pub progress_interval: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            read_only: false,
            max_in_flight: 32,
            replay_capacity: 256,
            journal_capacity: 256,
            progress_interval: Duration::from_millis(500),
        }
    }
}

/// What a write call did, as the journal keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JournalEntry {
    /// The JSON-RPC request id, as text.
    pub request_id: String,
    pub tool: String,
    pub action: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// `ok`, `error CODE`, or `cancelled (outcome at the server unknown)`.
    pub outcome: String,
    /// Milliseconds since the Unix epoch, when the call finished.
    pub unix_ms: u64,
}

/// Finished calls by request id, oldest dropped first.
struct Replay {
    cap: usize,
    map: HashMap<RequestId, (Value, CallToolResult)>,
    order: VecDeque<RequestId>,
}

impl Replay {
    fn insert(&mut self, id: RequestId, fingerprint: Value, result: CallToolResult) {
        if self.cap == 0 {
            return;
        }
        if self.map.insert(id.clone(), (fingerprint, result)).is_none() {
            self.order.push_back(id);
        }
        while self.order.len() > self.cap {
            if let Some(old) = self.order.pop_front() {
                self.map.remove(&old);
            }
        }
    }
}

struct Inner {
    /// Validation and configuration only: questions go to `answerer`.
    engine: Engine,
    /// Who answers (the daemon, or a `Local` engine).
    answerer: Arc<dyn Answerer>,
    opts: Options,
    languages: Languages,
    tools: Vec<Tool>,
    instructions: String,
    permits: Arc<Semaphore>,
    replay: Mutex<Replay>,
    journal: Mutex<VecDeque<JournalEntry>>,
    executions: AtomicU64,
    secrets: Vec<String>,
    /// Distinguishes this session's request ids in the (persistent) edit
    /// journal: clients number their requests from 1 in every session.
    nonce: String,
}

/// scry's MCP server for one session (one client). Cheap to clone; all
/// clones share the engine, hence the language servers.
#[derive(Clone)]
pub struct ScryMcp {
    inner: Arc<Inner>,
}

/// How a call ended.
enum Ran {
    /// A result to send; `keep` says whether a repeat of the id replays it.
    Done {
        result: Box<CallToolResult>,
        keep: bool,
    },
    /// The client cancelled: nothing is sent.
    Cancelled,
}

fn error_result(e: &ToolError) -> CallToolResult {
    let mut r = CallToolResult::error(vec![ContentBlock::text(e.text())]);
    r.structured_content = Some(e.json());
    r
}

/// A random, per-session token.
fn session_nonce() -> String {
    use std::hash::BuildHasher;
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let h =
        std::collections::hash_map::RandomState::new().hash_one((unix_ms(), std::process::id(), n));
    format!("{h:016x}")
}

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

impl ScryMcp {
    /// A server over `engine`. Looks once at which servers are installed:
    /// the tool description names those languages (the missing ones are
    /// logged); with none at all, no tool is offered.
    pub fn new(engine: Engine, opts: Options) -> ScryMcp {
        let session = scry_daemon::client::session_id("mcp");
        let local = Local::new(engine.clone(), &session, Baseline::Session);
        ScryMcp::with_answerer(engine, opts, Arc::new(local))
    }

    /// [`ScryMcp::new`], with questions answered by `answerer` (the
    /// daemon, or a `Local` engine); `engine` only serves validation and
    /// the configuration.
    pub fn with_answerer(engine: Engine, opts: Options, answerer: Arc<dyn Answerer>) -> ScryMcp {
        let ws = engine.workspace().clone();
        let languages = Languages::detect(&ws);
        if let Some(line) = languages.missing_line() {
            ws.warn_once(&line);
        }
        // With no server installed, `lsp` still answers (syntactically, and
        // `map`); there is nothing to edit with.
        let syntactic_only = languages.installed.is_empty();
        if syntactic_only {
            tracing::warn!("no language server installed: scry mcp answers syntactically");
        }
        let mut tools = vec![tools::lsp_tool(&languages.installed)];
        if !opts.read_only && !syntactic_only {
            tools.push(tools::edit_tool());
        }
        let instructions = tools::instructions(&languages, opts.read_only);
        let secrets = scrub::secrets(
            ws.config()
                .servers
                .iter()
                .flat_map(|s| s.env.values().cloned())
                .collect::<Vec<_>>(),
        );
        ScryMcp {
            inner: Arc::new(Inner {
                permits: Arc::new(Semaphore::new(opts.max_in_flight)),
                replay: Mutex::new(Replay {
                    cap: opts.replay_capacity,
                    map: HashMap::new(),
                    order: VecDeque::new(),
                }),
                journal: Mutex::new(VecDeque::new()),
                executions: AtomicU64::new(0),
                engine,
                answerer,
                opts,
                languages,
                tools,
                instructions,
                secrets,
                nonce: session_nonce(),
            }),
        }
    }

    /// A handler for another session of the same server (HTTP): the same
    /// engine, tools and limit of calls running at once, its own replay
    /// map, journal and nonce, and its own answerer session
    /// (`Answerer::new_session`: its own daemon connection).
    pub fn new_session(&self) -> ScryMcp {
        let i = &self.inner;
        ScryMcp {
            inner: Arc::new(Inner {
                engine: i.engine.clone(),
                answerer: i.answerer.new_session(),
                opts: i.opts.clone(),
                languages: i.languages.clone(),
                tools: i.tools.clone(),
                instructions: i.instructions.clone(),
                permits: i.permits.clone(),
                replay: Mutex::new(Replay {
                    cap: i.opts.replay_capacity,
                    map: HashMap::new(),
                    order: VecDeque::new(),
                }),
                journal: Mutex::new(VecDeque::new()),
                executions: AtomicU64::new(0),
                secrets: i.secrets.clone(),
                nonce: session_nonce(),
            }),
        }
    }

    pub fn engine(&self) -> &Engine {
        &self.inner.engine
    }

    /// Who answers this session's questions.
    pub fn answerer(&self) -> &Arc<dyn Answerer> {
        &self.inner.answerer
    }

    /// The tools as `tools/list` returns them.
    pub fn tools(&self) -> &[Tool] {
        &self.inner.tools
    }

    /// The server's `instructions`.
    pub fn instructions(&self) -> &str {
        &self.inner.instructions
    }

    pub fn languages(&self) -> &Languages {
        &self.inner.languages
    }

    /// How many calls reached the engine (validated, permitted, not busy,
    /// not replayed).
    pub fn executions(&self) -> u64 {
        self.inner.executions.load(Ordering::SeqCst)
    }

    /// The write calls of this session, oldest first.
    pub fn journal(&self) -> Vec<JournalEntry> {
        self.inner
            .journal
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .cloned()
            .collect()
    }

    fn tool_error(&self, e: &scry_model::OpError, root: &Path) -> ToolError {
        ToolError::from_op(e, root, &self.inner.secrets)
    }

    /// One call, after the replay check.
    async fn run(
        &self,
        tool: &str,
        arguments: Option<&JsonObject>,
        ctx: &RequestContext<RoleServer>,
    ) -> Ran {
        let fail = |e: ToolError, keep: bool| Ran::Done {
            result: Box::new(error_result(&e)),
            keep,
        };
        // 1. Validate: nothing runs on bad arguments.
        let args::ToolCall {
            question: mut q,
            timeout,
            writes,
        } = match args::parse(tool, arguments, &self.inner.engine) {
            Ok(c) => c,
            Err(e) => {
                return fail(
                    self.tool_error(&e, self.inner.engine.workspace().root()),
                    true,
                );
            }
        };
        // 2. Permission.
        if writes && self.inner.opts.read_only {
            let fact = ToolFact::ReadOnly {
                tool: tool.into(),
                action: q.action(),
            };
            return fail(ToolError::refused("READ_ONLY", fact), true);
        }
        if writes && tool == LSP {
            let fact = ToolFact::PreviewOnly { action: q.action() };
            return fail(ToolError::refused("INVALID_ARGUMENT", fact), true);
        }
        let writes = tool == LSP_EDIT;
        if writes {
            // A retried call (same request id and arguments, even after the
            // replay map forgot it, or after a cancel that came too late)
            // is answered from the edit journal instead of applying again.
            // The session nonce keeps another session's ids apart.
            let args_text = serde_json::to_string(&arguments).unwrap_or_default();
            if let Some(key) = q.idempotency_key_mut() {
                *key = Some(format!(
                    "mcp:{}:{}:{}",
                    self.inner.nonce,
                    ctx.id,
                    scry_edit::journal::content_hash(args_text.as_bytes())
                ));
            }
        }
        let Ok(_permit) = self.inner.permits.clone().try_acquire_owned() else {
            // Not kept: nothing ran, so a retry with the same id may run.
            let fact = ToolFact::TooManyCalls {
                max: self.inner.opts.max_in_flight,
            };
            return fail(ToolError::refused("BUSY", fact), false);
        };
        // 3. Execute (cancellable, with progress).
        self.inner.executions.fetch_add(1, Ordering::SeqCst);
        let root = self.inner.engine.workspace().root().to_path_buf();
        let reply = self
            .execute(Call::new(root.clone(), root, q.clone(), timeout), ctx)
            .await;
        // 4. Journal writes.
        if writes {
            let outcome = match reply.as_ref().map(|r| &r.result) {
                None => "cancelled (outcome at the server unknown)".to_string(),
                Some(CallResult::Answer(_)) => "ok".to_string(),
                Some(CallResult::Error(e)) => format!("error {}", e.code()),
                Some(CallResult::Config(_)) => "error CONFIG".to_string(),
            };
            self.record(ctx, tool, &q, outcome);
        }
        // 5. Respond, rendered with the reply's root and limits.
        match reply {
            None => Ran::Cancelled,
            Some(reply) => Ran::Done {
                result: Box::new(self.respond(reply)),
                keep: true,
            },
        }
    }

    /// A reply as a tool result: the answer rendered with the reply's root
    /// and limits (its warnings as notes), or the error as one line (the
    /// notes that came with it after it).
    fn respond(&self, reply: Reply) -> CallToolResult {
        let root = reply.root.clone();
        let opts = answer::render_options(&reply, scry_render::Dialect::Mcp);
        let (warnings, notes) = (reply.warnings.clone(), reply.notes.clone());
        match reply.into_result() {
            Ok(Ok(mut answer)) => {
                answer.notes.extend(
                    warnings
                        .into_iter()
                        .map(|warning| Reason::ConfigWarning { warning }),
                );
                let text = render_text(&answer, &root, &opts);
                let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
                r.structured_content = Some(render_json(&answer, &root, &opts));
                r
            }
            Ok(Err(e)) => {
                let mut r = error_result(&self.tool_error(&e, &root));
                r.content.extend(
                    notes
                        .iter()
                        .map(|n| ContentBlock::text(format!("note: {}", reason_text(n, &root)))),
                );
                r
            }
            Err(config) => error_result(&ToolError::new(
                "CONFIG",
                scrub::scrub(&format!("configuration: {config}"), &self.inner.secrets),
            )),
        }
    }

    /// Run the call until it answers or the client cancels (`None`);
    /// dropping the answerer's future cancels the request at the server.
    async fn execute(&self, call: Call, ctx: &RequestContext<RoleServer>) -> Option<Reply> {
        let token = ctx.meta.get_progress_token();
        // Panic-isolated: a panic inside the call (a bug) answers this
        // call INTERNAL and the session goes on serving the others.
        let run = answer::isolated(self.inner.answerer.clone(), call);
        tokio::pin!(run);
        // A timer only when the client asked for progress, and never an
        // awaited first tick: tokio rounds a timer's deadline up to its
        // next millisecond and fires it when the driver next turns, so an
        // interval's immediate first tick cost every call about 1 ms.
        let every = self.inner.opts.progress_interval;
        let mut tick = token.as_ref().map(|_| {
            let mut t = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
            t.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
            t
        });
        let mut sent = 0u32;
        loop {
            tokio::select! {
                biased;
                _ = ctx.ct.cancelled() => {
                    tracing::debug!(id = %ctx.id, "call cancelled by the client");
                    return None;
                }
                r = &mut run => return Some(r),
                _ = next_tick(&mut tick) => {
                    let waiting = self.inner.answerer.waiting_on();
                    if let (Some(token), Some(line)) = (&token, waiting) {
                        sent += 1;
                        let msg = format!("waiting: {}", line.trim_end_matches('…'));
                        progress(&ctx.peer, token.clone(), sent, msg).await;
                    }
                }
            }
        }
    }

    fn record(&self, ctx: &RequestContext<RoleServer>, tool: &str, q: &Valid, outcome: String) {
        let root = self.inner.engine.workspace().root();
        let entry = JournalEntry {
            request_id: ctx.id.to_string(),
            tool: tool.to_string(),
            action: q.action().name().to_string(),
            method: match q {
                Valid::Request { method, .. } => Some(method.clone()),
                _ => None,
            },
            path: q.path().map(|p| display_path(p, root)),
            outcome,
            unix_ms: unix_ms(),
        };
        tracing::info!(?entry, "write call");
        let mut j = self.inner.journal.lock().unwrap_or_else(|e| e.into_inner());
        j.push_back(entry);
        while j.len() > self.inner.opts.journal_capacity {
            j.pop_front();
        }
    }
}

/// The next tick of `tick`; never, without one.
async fn next_tick(tick: &mut Option<tokio::time::Interval>) {
    match tick {
        Some(t) => {
            t.tick().await;
        }
        None => std::future::pending().await,
    }
}

async fn progress(peer: &Peer<RoleServer>, token: ProgressToken, n: u32, message: String) {
    let param = ProgressNotificationParam::new(token, f64::from(n)).with_message(message);
    if let Err(e) = peer.notify_progress(param).await {
        tracing::debug!("progress notification not sent: {e}");
    }
}

impl ServerHandler for ScryMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("scry", env!("CARGO_PKG_VERSION")).with_title("scry"),
            )
            .with_instructions(self.inner.instructions.clone())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.inner.tools.clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.inner.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        if name != LSP && name != LSP_EDIT {
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{name}`: scry offers lsp and lsp_edit"),
                None,
            ));
        }
        // A finished id: replay, never run again.
        let fingerprint = json!({"name": name, "arguments": request.arguments});
        let replayed = {
            let replay = self.inner.replay.lock().unwrap_or_else(|e| e.into_inner());
            replay.map.get(&context.id).map(|(fp, r)| {
                if *fp == fingerprint {
                    r.clone()
                } else {
                    error_result(&ToolError::refused(
                        "INVALID_ARGUMENT",
                        ToolFact::IdReused {
                            id: context.id.to_string(),
                        },
                    ))
                }
            })
        };
        if let Some(r) = replayed {
            tracing::debug!(id = %context.id, "replaying a finished call");
            return Ok(r.into());
        }
        match self.run(&name, request.arguments.as_ref(), &context).await {
            Ran::Done { result, keep } => {
                if keep {
                    self.inner
                        .replay
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(context.id.clone(), fingerprint, (*result).clone());
                }
                Ok((*result).into())
            }
            // rmcp sends nothing for a cancelled request; this is not seen.
            Ran::Cancelled => {
                Ok(error_result(&ToolError::refused("CANCELLED", ToolFact::Cancelled)).into())
            }
        }
    }
}

/// Whether an action can change state (an action of `lsp_edit`; `rename`
/// and `code_actions` are also previews in `lsp`, which never writes).
pub fn is_write(action: Action) -> bool {
    action.facts().writes != scry_model::action::Writes::Never
}
