//! Errors of operations, each with a stable code a model (or a script) can
//! route on.

use std::path::PathBuf;

/// An operation that could not answer. `Display` is one actionable line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum OpError {
    #[error("no workspace root: pass --root DIR or run scry inside the project")]
    WorkspaceRequired,
    #[error("{0}")]
    InvalidArgument(String),
    #[error("file not found: {}", .0.display())]
    FileNotFound(PathBuf),
    #[error("{} is outside the workspace {}; only files inside it can be asked about", .path.display(), .root.display())]
    OutsideWorkspace { path: PathBuf, root: PathBuf },
    #[error("{} is not a text file", .0.display())]
    BinaryFile(PathBuf),
    #[error("{0}")]
    NoServer(String),
    #[error("{0}")]
    SymbolNotFound(String),
    #[error("{0}")]
    ServerCrashed(String),
    #[error("{0}")]
    Timeout(String),
    #[error("{0}")]
    MalformedResponse(String),
    #[error("{0}")]
    ServerError(String),
    /// An edit refused before anything was written (invalid, overlapping,
    /// cannot be renamed, …).
    #[error("{0}")]
    EditRejected(String),
    /// A file changed since the server (or scry's last edit) saw it; nothing
    /// was written.
    #[error("{0}")]
    FileChanged(String),
    /// Writing failed midway; every file was restored to its before-image.
    #[error("{0}")]
    WriteFailed(String),
    /// The scry daemon stopped while it held the call (killed, crashed):
    /// its outcome is unknown; the next call starts a new daemon.
    #[error("{0}")]
    DaemonRestarted(String),
}

impl OpError {
    /// A stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            OpError::WorkspaceRequired => "WORKSPACE_REQUIRED",
            OpError::InvalidArgument(_) => "INVALID_ARGUMENT",
            OpError::FileNotFound(_) => "FILE_NOT_FOUND",
            OpError::OutsideWorkspace { .. } => "OUTSIDE_WORKSPACE",
            OpError::BinaryFile(_) => "BINARY_FILE",
            OpError::NoServer(_) => "NO_SERVER",
            OpError::SymbolNotFound(_) => "SYMBOL_NOT_FOUND",
            OpError::ServerCrashed(_) => "SERVER_CRASHED",
            OpError::Timeout(_) => "TIMEOUT",
            OpError::MalformedResponse(_) => "MALFORMED_RESPONSE",
            OpError::ServerError(_) => "SERVER_ERROR",
            OpError::EditRejected(_) => "EDIT_REJECTED",
            OpError::FileChanged(_) => "FILE_CHANGED",
            OpError::WriteFailed(_) => "WRITE_FAILED",
            OpError::DaemonRestarted(_) => "DAEMON_RESTARTED",
        }
    }
}
