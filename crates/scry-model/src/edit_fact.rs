//! What an edit's refusal or failure says, as data: each [`EditFact`] is
//! one sentence's facts about planning, writing or undoing a workspace
//! edit (scry-edit builds them), carried as [`Fact::Edit`](crate::Fact)
//! and worded only by scry-render (`scry_render::fact`).
//!
//! Invariants: as [`Fact`](crate::Fact): no sentence of scry's here, text
//! scry did not write (the OS's error, a server's name for an operation)
//! in a field named for it, paths absolute as resolved.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// One edit sentence's facts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "edit")]
pub enum EditFact {
    /// `path` is a symbolic link to nothing; scry does not write through it.
    DanglingLink {
        #[serde(with = "crate::os_path")]
        path: PathBuf,
    },
    /// The edit names the workspace root itself.
    WorkspaceRoot {
        #[serde(with = "crate::os_path")]
        root: PathBuf,
    },
    /// The edit touches a file no edit may write, and why.
    Protected {
        #[serde(with = "crate::os_path")]
        path: PathBuf,
        why: Protection,
    },
    /// A field of the edit that must be a URI is not one (`field`: the
    /// LSP field, `RenameFile.oldUri`).
    NotAUri { field: String },
    /// The edit names a URI that is no file in the workspace.
    NotAFile { uri: String },
    /// A file the edit touches cannot be read (`why`: the OS's error).
    CannotRead {
        #[serde(with = "crate::os_path")]
        path: PathBuf,
        why: String,
    },
    /// `path` is a symbolic link; scry does not edit, move or delete links.
    Symlink {
        #[serde(with = "crate::os_path")]
        path: PathBuf,
    },
    /// `path` is neither a file nor a directory.
    NotRegular {
        #[serde(with = "crate::os_path")]
        path: PathBuf,
    },
    /// The edit touches more than `mib` MiB of files.
    TooManyBytes { mib: usize },
    /// The edit touches more than `max` paths.
    TooManyPaths { max: usize },
    /// `path` cannot be created: `file`, one of its ancestors, is a file.
    InsideAFile {
        #[serde(with = "crate::os_path")]
        file: PathBuf,
        #[serde(with = "crate::os_path")]
        path: PathBuf,
    },
    /// The directory `path` holds more than `max` files.
    DirTooLarge {
        #[serde(with = "crate::os_path")]
        path: PathBuf,
        max: usize,
    },
    /// A text edit for a file that does not exist.
    ChangesMissing {
        #[serde(with = "crate::os_path")]
        path: PathBuf,
    },
    /// A text edit for a directory.
    ChangesDirectory {
        #[serde(with = "crate::os_path")]
        path: PathBuf,
    },
    /// A text edit for a file that is not UTF-8.
    NotUtf8 {
        #[serde(with = "crate::os_path")]
        path: PathBuf,
    },
    /// `path` changed on disk since `server` read it.
    ChangedSinceRead {
        #[serde(with = "crate::os_path")]
        path: PathBuf,
        server: String,
    },
    /// `server` computed the edit for `version`; scry synced `synced`.
    VersionMismatch {
        server: String,
        #[serde(with = "crate::os_path")]
        path: PathBuf,
        version: i64,
        synced: i32,
    },
    /// A text edit without its `field` (`range`, `newText`).
    TextEditWithout {
        #[serde(with = "crate::os_path")]
        path: PathBuf,
        field: String,
    },
    /// `server` sent an edit at a position that is not in the file
    /// (1-based `line`, `col` in `encoding`'s units).
    NotAPosition {
        server: String,
        #[serde(with = "crate::os_path")]
        path: PathBuf,
        line: u32,
        col: u32,
        encoding: String,
    },
    /// `server` sent an edit whose range ends before it starts.
    RangeReversed {
        server: String,
        #[serde(with = "crate::os_path")]
        path: PathBuf,
    },
    /// `server` sent overlapping edits (at 1-based `line`:`col`).
    Overlapping {
        server: String,
        #[serde(with = "crate::os_path")]
        path: PathBuf,
        line: u32,
        col: u32,
    },
    /// A `CreateFile` where a directory is.
    CreateOverDirectory {
        #[serde(with = "crate::os_path")]
        path: PathBuf,
    },
    /// A `CreateFile` of a file that exists (not to be overwritten).
    CreateExists {
        #[serde(with = "crate::os_path")]
        path: PathBuf,
    },
    /// A `RenameFile` refused, and why.
    MoveRefused {
        #[serde(with = "crate::os_path")]
        from: PathBuf,
        #[serde(with = "crate::os_path")]
        to: PathBuf,
        why: MoveProblem,
    },
    /// A `DeleteFile` of a path that does not exist.
    DeleteMissing {
        #[serde(with = "crate::os_path")]
        path: PathBuf,
    },
    /// A `DeleteFile` of a non-empty directory, not recursive.
    DeleteNonEmpty {
        #[serde(with = "crate::os_path")]
        path: PathBuf,
    },
    /// `server` sent no workspace edit.
    NoWorkspaceEdit { server: String },
    /// `server` sent a resource operation of an unknown `kind`.
    UnknownOperation { server: String, kind: String },
    /// `server` sent a document change without edits.
    NoEdits { server: String },
    /// `server`'s edits of `uri` are not a list.
    EditsNotAList { server: String, uri: String },
    /// `server` sent two edit lists for one file.
    TwoEditLists {
        server: String,
        #[serde(with = "crate::os_path")]
        path: PathBuf,
    },
    /// `path` changed on disk while the edit was prepared.
    ChangedWhilePrepared {
        #[serde(with = "crate::os_path")]
        path: PathBuf,
    },
    /// Writing failed at `step`; every file was restored unless listed in
    /// `unrestored`.
    WriteFailed {
        step: WriteStep,
        unrestored: Vec<Unrestored>,
    },
    /// The workspace's writer lock could not be taken (`why`: the OS's
    /// error).
    LockFailed {
        #[serde(with = "crate::os_path")]
        lock: PathBuf,
        why: String,
    },
    /// Another process holds the writer `lock` of `root`.
    Busy {
        #[serde(with = "crate::os_path")]
        root: PathBuf,
        #[serde(with = "crate::os_path")]
        lock: PathBuf,
    },
    /// The answer stored under an idempotency key cannot be read back.
    ReplayUnreadable { why: String },
    /// Recovering interrupted edits could not restore these files; the
    /// before-images are in `journal`.
    RecoveryFailed {
        failed: Vec<Unrecovered>,
        #[serde(with = "crate::os_path")]
        journal: PathBuf,
    },
    /// The journal could not record the edit (`undo`: of an undo), so
    /// nothing was changed (`why`: the error).
    JournalUnwritable { why: String, undo: bool },
    /// Nothing to undo: no edit applied in `root` (`journal`: where the
    /// journal is; `None`: the journal is disabled).
    NothingToUndo {
        #[serde(with = "crate::os_path")]
        root: PathBuf,
        #[serde(with = "crate::os_path::opt")]
        journal: Option<PathBuf>,
    },
    /// `path` changed since scry's edit `title`, so it is not undone.
    ChangedSinceEdit {
        #[serde(with = "crate::os_path")]
        path: PathBuf,
        title: String,
    },
    /// The journal lost the previous content of `path`.
    JournalLost {
        #[serde(with = "crate::os_path")]
        path: PathBuf,
    },
}

/// Why no edit may write a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Protection {
    /// Inside a `.git` directory.
    InsideGit,
    /// One of scry's project configuration files.
    ScryConfig,
    /// Another agent's file scry reads at the root.
    ReadConfig,
    /// scry's user configuration file.
    UserConfig,
}

/// Why a `RenameFile` is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MoveProblem {
    /// A directory into itself.
    IntoItself,
    /// The source does not exist.
    Missing,
    /// The target exists.
    Exists,
}

/// The step of a commit that failed (`why`: the OS's error).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "step")]
pub enum WriteStep {
    CreateDir {
        #[serde(with = "crate::os_path")]
        path: PathBuf,
        why: String,
    },
    Stage {
        #[serde(with = "crate::os_path")]
        path: PathBuf,
        why: String,
    },
    /// Replacing file `k` (1-based) of `n`.
    Replace {
        #[serde(with = "crate::os_path")]
        path: PathBuf,
        k: usize,
        n: usize,
        why: String,
    },
    RemoveDir {
        #[serde(with = "crate::os_path")]
        path: PathBuf,
        why: String,
    },
}

/// A file a failed commit could not restore (`why`: the OS's error).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unrestored {
    #[serde(with = "crate::os_path")]
    pub path: PathBuf,
    pub why: String,
}

/// A file recovery could not restore, of the interrupted edit `title`
/// (journal entry `id`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unrecovered {
    pub title: String,
    pub id: String,
    #[serde(with = "crate::os_path")]
    pub path: PathBuf,
    pub why: String,
}
