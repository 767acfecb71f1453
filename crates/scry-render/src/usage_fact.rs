//! The sentences of a refused command line, from their facts
//! ([`scry_model::UsageFact`]): the command line's own usage errors, in its
//! own syntax (flags, commands). The one place each is written; `fact`
//! hands these over.
//!
//! Invariant: only the command line asks for these, so they are spelled
//! its way whatever the dialect.

use crate::msgf;
use scry_model::{Message, UsageFact};

/// The sentence of a usage error's `fact`, in parts.
pub(crate) fn sentence(fact: &UsageFact) -> Message {
    match fact {
        UsageFact::OverMax { flag, n, max } => {
            msgf!("--{flag} {n} is out of range: at most {max}")
        }
        UsageFact::NotPositive { flag, n } => {
            msgf!("--{flag} must be a positive 1-based number, got {n}")
        }
        UsageFact::SymbolTwice => msgf!("--symbol is given once (several only for map)"),
        UsageFact::DryRunWithoutApply => {
            msgf!("--dry-run with code-actions needs --apply N|TITLE")
        }
        UsageFact::ChangesNotDiagnostics => {
            msgf!("--changes is for diagnostics (scry diag --changes FILE...)")
        }
        UsageFact::RenameArguments => msgf!("rename needs PATH SYMBOL NEW_NAME"),
        UsageFact::Unexpected { arg } => msgf!("unexpected argument `{arg}`"),
    }
}
