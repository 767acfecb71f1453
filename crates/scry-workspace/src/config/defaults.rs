//! The default output caps and time budget, and the largest budget: each
//! defined here once. The configuration's defaults ([`super::Limits::default`]),
//! the renderer's default options, the CLI's help and the MCP tools'
//! schemas read them.

/// Most locations listed in one answer.
pub const MAX_LOCATIONS: usize = 100;
/// Most characters in one answer.
pub const MAX_CHARS: usize = 16_000;
/// An action's time budget, in milliseconds.
pub const TIMEOUT_MS: u64 = 30_000;
/// The largest time budget a caller may ask for, in milliseconds.
pub const MAX_TIMEOUT_MS: u64 = 120_000;
