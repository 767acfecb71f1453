//! The edit service: the parts of applying a `WorkspaceEdit` that need a
//! language server, over the leaf that writes (scry-edit: plan, atomic
//! commit, journal and recovery, the writer lock, previews, the crash test
//! hook). The engine calls it (`engine/mod.rs` holds the [`service::Editor`];
//! `engine/edits.rs` — rename, code actions, undo — goes through it); it
//! calls the leaf, never the engine (no import of `engine`, `call`,
//! `convert` or `resolve` here); the leaf calls nothing above it.
//!
//! - [`service`]: the [`service::Editor`], through which every edit goes
//!   (what the server saw of the files, the servers' own
//!   `workspace/applyEdit`, re-syncing the servers, the diagnostics delta).
//!
//! Invariants: every write goes through `Editor::apply_workspace_edit` or
//! `Editor::undo_last_edit`, hence scry-edit's `Writer` (confined,
//! validated before any write, transactional, journaled, one writer per
//! workspace: see scry-edit's header).

pub(crate) mod service;

#[cfg(test)]
mod tests;
