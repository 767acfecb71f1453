//! scry-edit: applying `WorkspaceEdit`s to the user's files — the one place
//! where scry writes them, so the safest code in the project. A leaf: it
//! stands on the vocabulary (scry-model), paths, per-user places and the
//! environment (scry-base) and the line index (scry-text) alone; no
//! language server, workspace or engine. The engine (scry-ops' `edit`)
//! asks the servers for an edit and what they saw of its files, then calls
//! this crate, never the reverse.
//!
//! The pipeline: [`plan`] turns a server's edit (`changes` or
//! `documentChanges`, with CreateFile / RenameFile / DeleteFile) into the
//! final state of every path it touches, validating everything before a byte
//! is written; [`apply`] commits that plan transactionally (stage temp files,
//! commit all, restore every before-image on any failure); [`journal`] keeps
//! before-images for `undo`, idempotent retries and the recovery of an edit
//! whose writer died (rolled back, said once on the next answer); [`lock`]
//! lets one process write in a workspace at a time; [`crash`] is a test
//! hook that kills the writer at a chosen step (debug builds only); [`diff`]
//! previews a plan as unified diffs; [`report`] says what an edit did (the
//! answer's `EditReport`); [`writer`] is the one sequence every write takes
//! (in-process lock, writer lock, recovery, the plan: `Writer::prepare`;
//! then journal and commit: `Ready::commit`; undo);
//! [`platform`] is everything that differs between Unix and Windows (the
//! permission word kept, the atomic replace, the lock, the hook's death).
//!
//! Test seams (the injected journal and write failures, the portable test
//! helpers of [`platform`]) are compiled with the `test-hooks` feature
//! only, which the dev-dependencies of the crates whose tests use them
//! enable: a release or dist build has none.
//!
//! Invariants:
//! - **Confined**: every path, after resolving `..` and symlinks (parents of
//!   files to create included), is inside the workspace root and not the
//!   root itself, not in `.git` nor a protected configuration file; anything
//!   else rejects the whole edit, nothing written.
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
//! - **Faithful**: CRLF, a BOM, the trailing-newline state and the
//!   permission word (Unix mode, Windows read-only and hidden attributes)
//!   are kept; files are fsynced (`FlushFileBuffers` on Windows) and
//!   directories too (Unix; Windows has no directory sync, its renames are
//!   write-through).

pub mod apply;
pub mod crash;
pub mod diff;
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
pub mod journal;
pub mod lock;
pub mod plan;
pub mod platform;
pub mod report;
pub mod writer;

#[cfg(test)]
mod safety_tests;
#[cfg(test)]
mod tests;
