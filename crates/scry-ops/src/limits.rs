//! The engine's fixed caps and budgets, each defined once: the front ends'
//! help and schemas, validation and the engine read them here. The
//! configurable ones (locations, characters, the time budget) have their
//! defaults in `scry_workspace::config::defaults`, re-exported here.
//!
//! Invariant: no other file writes one of these numbers.

use std::time::Duration;

pub use scry_workspace::config::defaults::{MAX_CHARS, MAX_LOCATIONS, MAX_TIMEOUT_MS, TIMEOUT_MS};

/// Upper bound of an action's time budget.
pub const MAX_TIMEOUT: Duration = Duration::from_millis(MAX_TIMEOUT_MS);
/// Default character budget of `map`.
pub const DEFAULT_MAP_BUDGET: usize = 4_000;
/// Largest `map` budget (below the rendered answer's default cap, so the
/// map is never cut by it).
pub const MAX_MAP_BUDGET: usize = 15_000;
/// Most workspace symbols listed (server-less answers: the syntactic and
/// the SCIP index).
pub const MAX_WORKSPACE_SYMBOLS: usize = 200;
/// Most introduced (and most resolved) diagnostics an edit's answer lists.
pub const MAX_DELTA_ITEMS: usize = 8;

const _: () = assert!(MAX_MAP_BUDGET < MAX_CHARS);
