//! scry-base: the bottom layer every crate that touches the workspace's
//! files stands on, with no LSP, async runtime or watcher behind it:
//!
//! - [`paths`]: normalising, confining to the root, showing relative;
//! - [`walk`]: the one directory walker (ignore rules, skipped dirs);
//! - [`dirs`]: scry's per-user places (config, state, cache, daemon);
//! - [`disk`]: the one reader of workspace files (regular files only,
//!   bounded, never blocking on a FIFO);
//! - [`units`]: amounts of memory in words.
//!
//! Invariants: std, `ignore`, `thiserror` and `libc` only; scry-lsp and scry-workspace
//! re-export these modules under their old names (`scry_lsp::disk`,
//! `scry_workspace::{paths, walk, dirs, disk}`), so callers above keep
//! their imports.

pub mod dirs;
pub mod disk;
pub mod paths;
pub mod units;
pub mod walk;
