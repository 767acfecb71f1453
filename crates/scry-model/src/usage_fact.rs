//! What a refused command line says, as data: each [`UsageFact`] is one
//! usage error's facts (a flag's value, arguments that do not fit the
//! command), found by the CLI before any question is asked; carried as
//! [`Fact::Usage`](crate::Fact) and worded only by scry-render
//! (`scry_render::fact`).
//!
//! Invariant: as [`Fact`](crate::Fact): no sentence of scry's here.

use serde::{Deserialize, Serialize};

/// One usage error's facts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "usage")]
pub enum UsageFact {
    /// `--flag n` over `max`.
    OverMax { flag: String, n: i64, max: u64 },
    /// `--flag n` below 1.
    NotPositive { flag: String, n: i64 },
    /// `--symbol` given more than once to a command that takes one.
    SymbolTwice,
    /// `--dry-run` of `code-actions` without the action to apply.
    DryRunWithoutApply,
    /// `--changes` with a command other than `diag`.
    ChangesNotDiagnostics,
    /// `rename` without its three arguments.
    RenameArguments,
    /// A positional argument left over.
    Unexpected { arg: String },
}
