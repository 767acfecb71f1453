//! scry-base: the bottom layer every crate that touches the workspace's
//! files stands on, with no LSP, async runtime or watcher behind it:
//!
//! - [`paths`]: normalising, confining to the root, showing relative;
//! - [`walk`]: the one directory walker (ignore rules, skipped dirs);
//! - [`dirs`]: scry's per-user places (config, state, cache, daemon);
//! - [`disk`]: the one reader of workspace files (regular files only,
//!   bounded, never blocking on a FIFO);
//! - [`logfile`]: bounded, rotated log files (servers' stderr, the
//!   daemon's log);
//! - [`units`]: amounts of memory in words;
//! - [`uri`]: `file://` URIs ↔ paths (the wire's spelling of a path);
//! - [`platform`]: what differs between Unix and Windows, one module per
//!   concern, both sides side by side (file kinds and the non-blocking
//!   open, OS string bytes, the path syntax).
//!
//! Invariants: std, `ignore`, `thiserror`, `tracing` and `libc` (Unix) or
//! `windows-sys` (Windows) only; no
//! crate above re-exports these modules: every caller names them here
//! (`scry_base::paths`, …; scry-lsp adds only the async read,
//! `scry_lsp_session::disk_async::read_within`).

pub mod dirs;
pub mod disk;
pub mod logfile;
pub mod paths;
pub mod platform;
pub mod units;
pub mod uri;
pub mod walk;
