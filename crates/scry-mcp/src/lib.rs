//! scry-mcp: scry as a Model Context Protocol server, the way agents reach
//! it (`scry mcp`).
//!
//! Two tools, so that a client's permission prompt can tell reading from
//! writing: `lsp` (read-only: definitions, references, hover, outlines,
//! diagnostics, and previews of rename and code actions — it never writes)
//! and `lsp_edit` (applies renames and code actions, undo, raw requests,
//! reload; absent under `--read-only`). The
//! answers are the CLI's text (`scry_render::render_text`) plus the same
//! content as `structuredContent` (`render_json`); failures are tool results
//! with `isError: true` and a stable code, never protocol errors.
//!
//! Every call: validate the arguments (nothing runs on bad ones) →
//! permission (read-only refuses writes) → execute (at most
//! [`Options::max_in_flight`] at once, cancellable by
//! `notifications/cancelled`, which drops the request and so sends
//! `$/cancelRequest` to the language server; progress notifications while a
//! server starts or indexes, when the client sent a progress token) →
//! journal writes → respond. A request id seen before is never run twice: a
//! duplicate of a running id is answered with the first one's result
//! ([`dedupe`]); a repeat of a finished id replays the stored result. Writes
//! also pass the id (with a session nonce and a hash of the arguments) to
//! the engine as the edit's idempotency key, so the edit journal replays a
//! retry the session no longer remembers instead of applying it again.
//!
//! Each session holds one answerer (`scry_daemon::answer::Answerer`) and
//! renders from its replies. `scry mcp`, on stdio and over HTTP, sends its
//! questions to the scry daemon by default (`answer::Daemon`): every
//! session on the machine then shares one set of servers per workspace;
//! the session's own engine only validates. In-process (`answer::Local`,
//! `--no-daemon` or no daemon), servers start lazily, are shared by all
//! calls, and stop when the client goes away ([`serve`]); over HTTP
//! ([`http`], `scry mcp --http`) one engine serves every session and its
//! servers stop with the HTTP server. What differs between Unix and
//! Windows (private files, stop signals) is in `platform`.

use std::path::Path;
use std::sync::Arc;

use rmcp::ServiceExt;
use scry_daemon::answer::{Baseline, Choice};
use scry_ops::Engine;
use scry_workspace::Workspace;
use tokio::io::{AsyncRead, AsyncWrite};

mod args;
pub mod dedupe;
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
pub mod http;
mod platform;
pub mod scrub;
mod server;
pub mod tools;
mod wire;

pub use http::{HttpOptions, HttpServer, serve_http};
pub use scrub::ToolError;
pub use server::{JournalEntry, Options, ScryMcp, is_write};

/// Why a session ended badly.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("MCP handshake failed: {0}")]
    Handshake(String),
    #[error("MCP session failed: {0}")]
    Session(String),
    #[error("configuration: {0}")]
    Config(String),
}

/// Serve one MCP session over `reader`/`writer` (newline-delimited
/// JSON-RPC) until the client closes its side or disconnects; then stop
/// what its answerer runs (an in-process engine's servers).
pub async fn serve<R, W>(server: ScryMcp, reader: R, writer: W) -> Result<(), ServeError>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let answerer = server.answerer().clone();
    let transport = dedupe::Dedupe::new(reader, writer);
    let result = match server.serve(transport).await {
        Ok(running) => running
            .waiting()
            .await
            .map(|reason| tracing::debug!(?reason, "MCP session ended"))
            .map_err(|e| ServeError::Session(e.to_string())),
        Err(e) => Err(ServeError::Handshake(e.to_string())),
    };
    answerer.shutdown().await;
    result
}

/// `scry mcp`: serve on stdin/stdout for the workspace at `root`.
pub async fn serve_stdio(root: &Path, opts: Options) -> Result<(), ServeError> {
    serve_stdio_with(root, opts, Choice::InProcess(None)).await
}

/// [`serve_stdio`] with questions answered as `choice` says (the daemon,
/// or this process saying in `status` why the daemon was not used).
pub async fn serve_stdio_with(
    root: &Path,
    opts: Options,
    choice: Choice,
) -> Result<(), ServeError> {
    let server = session(root, opts, choice)?;
    let (stdin, stdout) = platform::stdio::stdio();
    serve(server, stdin, stdout).await
}

/// The first session's handler for `root`: its engine (validation,
/// configuration) and its answerer as `choice` says.
pub(crate) fn session(root: &Path, opts: Options, choice: Choice) -> Result<ScryMcp, ServeError> {
    let ws = Workspace::open(root).map_err(|e| ServeError::Config(e.to_string()))?;
    let engine = Engine::new(Arc::new(ws));
    let answerer = choice
        .answerer(|| Ok(engine.clone()), Baseline::Session)
        .map_err(ServeError::Config)?;
    Ok(ScryMcp::with_answerer(engine, opts, answerer))
}
