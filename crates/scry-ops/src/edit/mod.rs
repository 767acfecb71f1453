//! The engine's edits: the parts of applying a `WorkspaceEdit` that need a
//! language server, over the leaf that writes (scry-edit: plan, atomic
//! commit, journal and recovery, the writer lock, previews, the crash test
//! hook). The engine calls these; they call the leaf; the leaf calls
//! nothing above it.
//!
//! - [`service`]: the [`service::Editor`], through which every edit goes
//!   (what the server saw of the files, the servers' own
//!   `workspace/applyEdit`, re-syncing the servers, the diagnostics delta);
//! - [`ops`]: `rename` (prepareRename first), `code_actions` (list; apply by
//!   number or title, resolving lazily and running commands) and `undo`,
//!   functions over the call context and the `Editor`.
//!
//! Invariants: every write goes through `Editor::apply_workspace_edit` or
//! `Editor::undo_last_edit`, hence scry-edit's `Writer` (confined,
//! validated before any write, transactional, journaled, one writer per
//! workspace: see scry-edit's header).

pub(crate) mod ops;
pub(crate) mod service;

#[cfg(test)]
mod tests;
