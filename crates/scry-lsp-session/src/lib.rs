//! One language-server session: the child process (in its own process
//! group), the `initialize` handshake, negotiated capabilities and position
//! encoding, progress and readiness, answers to server→client requests, and
//! document sync from disk.
//!
//! Invariants:
//! - Every server→client request is answered (see [`handler`]).
//! - The server's stderr never reaches an answer: it goes to a log file and
//!   a bounded ring buffer.
//! - Dropping the last handle of a [`Session`] kills its whole process group
//!   (its Job Object on Windows: [`process`], the one place a server's
//!   process is contained).
//! - A document is sent to the server only as the disk holds it.
//! - Workspace files are read only through [`scry_base::disk`] (here on
//!   the blocking pool: [`disk_async`]; regular files only,
//!   never blocking on open, bounded in size).

pub mod diagnostics;
pub mod disk_async;
pub mod docs;
pub mod handler;
pub mod process;
pub mod session;
pub mod state;
pub mod types;

pub use diagnostics::{DocDiagnostics, WaitOptions};
pub use handler::{ApplyEditHook, EditHookSlot};
// What callers need of the layers below, so that they depend on this crate
// alone: positions and line indexes (scry-text), the wire's error types and
// deferred replies (scry-rpc).
pub use scry_rpc::{DeferredReply, ResponseError, RpcError};
pub use scry_text::{CharPos, Encoding, LineIndex, LspPos};
pub use session::{Session, SessionConfig, SessionError, client_capabilities};
pub use state::ServerState;
