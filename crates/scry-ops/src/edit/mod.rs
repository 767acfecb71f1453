//! Applying `WorkspaceEdit`s to the user's files — the one place where scry
//! writes them, so the safest code in the project.
//!
//! The pipeline: `plan` turns a server's edit (`changes` or
//! `documentChanges`, with CreateFile / RenameFile / DeleteFile) into the
//! final state of every path it touches, validating everything before a byte
//! is written; `apply` commits that plan transactionally (stage temp files,
//! commit all, restore every before-image on any failure); [`journal`] keeps
//! before-images for `undo` and idempotent retries; `diff` previews a plan
//! as unified diffs.
//!
//! Invariants:
//! - **Confined**: every path, after resolving `..` and symlinks (parents of
//!   files to create included), is inside the workspace root and not the
//!   root itself; anything else rejects the whole edit, nothing written.
//! - **Validated before any write**: ranges inside the document, exact in the
//!   server's position encoding, no overlaps; `TextDocumentEdit` versions
//!   equal what scry synced; the text the server saw equals the disk.
//! - **Transactional**: a failure at file k of n leaves all n files byte for
//!   byte as they were (created files and directories removed again).
//! - **Faithful**: CRLF, a BOM, the trailing-newline state and permissions are
//!   kept; files and directories are fsynced.

pub(crate) mod apply;
pub(crate) mod diff;
pub mod journal;
pub(crate) mod ops;
pub(crate) mod plan;
pub(crate) mod service;

pub use apply::{WriteOptions, commit};
pub use journal::Journal;
pub use plan::{EditPlan, FileChange, FileImage, ServerView, build_plan, confine};
pub use service::EditOptions;

#[cfg(test)]
mod tests;
