//! scry-daemon: one warm set of language servers per workspace, shared by
//! every CLI call and agent session on the machine (per user).
//!
//! A front end over scry-ops, beside scry-mcp and the CLI: the daemon
//! ([`server`]) holds one `scry_ops::Engine` per canonical workspace root
//! and answers questions (`scry_model::Query`, with the client's cwd and
//! root) sent over a Unix socket in a 0700 per-user directory, or a named
//! pipe that admits the user alone on Windows ([`paths`], [`platform`])
//! as newline-delimited JSON frames ([`proto`]). It returns the engine's
//! `Answer` or `OpError` with the workspace's root and limits; rendering
//! stays in the front end. [`answer`] is the seam every front end answers
//! through: `Local` (an engine and what wraps each call; the daemon is
//! `Local` behind the socket) or `Daemon` (the client, [`client`]), so the
//! text is the same on every route. scry syncs every request from disk, so
//! no client owns the servers' document state and one server serves many
//! clients safely.
//!
//! What differs between Unix and Windows (transport, lock, directory,
//! detached start, stop signals) is all in [`platform`]; the other modules
//! hold no platform `cfg`.

pub mod answer;
pub mod changes;
pub mod client;
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
pub mod out;
pub mod paths;
pub mod platform;
pub mod proto;
pub mod server;

use scry_model::Reason;
use scry_workspace::Workspace;

/// What the servers of `ws` are doing that a question waits for, as one
/// line ("pyright is starting; rust-analyzer is still indexing (Indexing
/// 45%)…", each part worded by scry-render as the same note is), or `None`:
/// the progress line (the CLI draws it, MCP sends it as progress
/// notifications, the daemon relays it).
pub fn waiting_line(ws: &Workspace) -> Option<String> {
    let mut parts: Vec<Reason> = Vec::new();
    for (id, _root) in ws.starting() {
        let p = Reason::ServerStarting { server: id };
        if !parts.contains(&p) {
            parts.push(p);
        }
    }
    for s in ws.running() {
        if let Some(ix) = s.state().indexing() {
            parts.push(Reason::Indexing {
                server: s.name().to_string(),
                progress: ix,
            });
        }
    }
    (!parts.is_empty()).then(|| {
        format!(
            "{}…",
            scry_render::reason_text(&Reason::All(parts), ws.root())
        )
    })
}
