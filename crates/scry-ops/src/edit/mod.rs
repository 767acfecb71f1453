//! Applying `WorkspaceEdit`s to the user's files — the one place where scry
//! writes them, so the safest code in the project.
//!
//! The pipeline: `plan` turns a server's edit (`changes` or
//! `documentChanges`, with CreateFile / RenameFile / DeleteFile) into the
//! final state of every path it touches, validating everything before a byte
//! is written; `apply` commits that plan transactionally (stage temp files,
//! commit all, restore every before-image on any failure); [`journal`] keeps
//! before-images for `undo`, idempotent retries and the recovery of an edit
//! whose writer died (rolled back, said once on the next answer); [`lock`]
//! lets one process write in a workspace at a time; [`crash`] is a test
//! hook that kills the writer at a chosen step; `diff` previews a plan as
//! unified diffs.
//!
//! Invariants:
//! - **Confined**: every path, after resolving `..` and symlinks (parents of
//!   files to create included), is inside the workspace root and not the
//!   root itself; anything else rejects the whole edit, nothing written.
//! - **Validated before any write**: ranges inside the document, exact in the
//!   server's position encoding, no overlaps; `TextDocumentEdit` versions
//!   equal what scry synced; the text the server saw equals the disk.
//! - **Transactional**: a failure at file k of n leaves all n files byte for
//!   byte as they were (created files and directories removed again); a
//!   crash (the process killed) at any step is undone the same way by the
//!   next writer or start, before it writes anything.
//! - **One writer**: every edit and undo holds the workspace's writer lock,
//!   whichever process runs it; a second writer waits until its deadline,
//!   then gets `BUSY` and changes nothing.
//! - **Faithful**: CRLF, a BOM, the trailing-newline state and permissions are
//!   kept; files and directories are fsynced.

pub(crate) mod apply;
pub mod crash;
pub(crate) mod diff;
pub mod journal;
pub mod lock;
pub(crate) mod ops;
pub(crate) mod plan;
pub(crate) mod service;

pub use apply::{WriteOptions, commit, commit_staged};
pub use journal::Journal;
pub use plan::{EditPlan, FileChange, FileImage, ServerView, build_plan, confine};
pub use service::EditOptions;

#[cfg(test)]
mod tests;
