//! scry's caps and budgets, each defined once: the front ends' help and
//! schemas, validation, the renderer's default options, the engine and the
//! configuration's defaults (`scry_workspace::config::Limits::default`, for
//! the configurable ones: locations, characters, the time budget) read them
//! here.
//!
//! Invariant: no other file writes one of these numbers.

use std::time::Duration;

/// Most locations listed in one answer (default of `limits.maxLocations`).
pub const MAX_LOCATIONS: usize = 100;
/// Most characters in one answer (default of `limits.maxChars`).
pub const MAX_CHARS: usize = 16_000;
/// An action's time budget, in milliseconds (default of `limits.timeoutMs`).
pub const TIMEOUT_MS: u64 = 30_000;
/// The largest time budget a caller may ask for, in milliseconds.
pub const MAX_TIMEOUT_MS: u64 = 120_000;

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

/// The largest remote SCIP index fetched (`index.remote`): a download
/// over it is stopped and refused.
pub const MAX_REMOTE_INDEX_BYTES: u64 = 2 * 1024 * 1024 * 1024;
/// How many commits back from HEAD a remote index is looked for (HEAD's
/// own first, then its ancestors, nearest first).
pub const MAX_REMOTE_INDEX_ANCESTORS: u32 = 50;
/// How long looking for and fetching a remote index may take in all.
pub const REMOTE_INDEX_SEARCH_MS: u64 = 120_000;
/// How long a remote server may send nothing (connecting, or mid-body)
/// before the fetch is given up as stalled (default of
/// `index.remote.stallMs`).
pub const REMOTE_INDEX_STALL_MS: u64 = 15_000;
