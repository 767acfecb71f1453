//! The sentences of a refused MCP tool call, from their facts
//! ([`scry_model::ToolFact`]): the arguments' JSON types and ranges, the
//! tool's actions, the session's read-only mode and call limit. The one
//! place each is written; `fact` hands these over.
//!
//! Invariant: what the client sent is shown cut to [`MAX_GOT_CHARS`]
//! characters, whatever its length.

use crate::msgf;
use scry_model::{Action, Message, ToolFact};

/// Most characters of a client's JSON value a sentence quotes.
pub(crate) const MAX_GOT_CHARS: usize = 40;

/// `got`, cut to [`MAX_GOT_CHARS`] characters with `…`.
fn short(got: &str) -> String {
    if got.chars().count() > MAX_GOT_CHARS {
        let cut: String = got.chars().take(MAX_GOT_CHARS).collect();
        format!("{cut}…")
    } else {
        got.to_string()
    }
}

fn names(actions: &[Action]) -> String {
    actions
        .iter()
        .map(|a| a.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The sentence of a tool call's `fact`, in parts.
pub(crate) fn sentence(fact: &ToolFact) -> Message {
    match fact {
        ToolFact::NotAString { key, got } => {
            msgf!("{key} must be a string, got {}", short(got))
        }
        ToolFact::OverMax { key, got, max } => {
            msgf!("{key} {} is out of range: at most {max}", short(got))
        }
        ToolFact::ZeroForOneBased { key } => {
            msgf!("{key} is 1-based: the first {key} is 1, got 0")
        }
        ToolFact::NotPositive { key, got } => {
            msgf!("{key} must be a positive number, got {got}")
        }
        ToolFact::NotAnInteger { key, got } => {
            msgf!("{key} must be a positive integer, got {}", short(got))
        }
        ToolFact::NotABoolean { key, got } => {
            msgf!("{key} must be true or false, got {}", short(got))
        }
        ToolFact::UnknownArguments {
            tool,
            unknown,
            takes,
        } => msgf!(
            "unknown argument{} {} for {tool}; it takes {}",
            if unknown.len() > 1 { "s" } else { "" },
            unknown
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", "),
            takes.join(", ")
        ),
        ToolFact::NoAction { tool, allowed } => {
            msgf!("{tool} needs an action: one of {}", names(allowed))
        }
        ToolFact::OtherToolsAction {
            action,
            writes: true,
        } => msgf!("{} is an action of lsp_edit, not lsp", action.name()),
        ToolFact::OtherToolsAction {
            action,
            writes: false,
        } => msgf!(
            "{} is an action of lsp (read-only), not lsp_edit",
            action.name()
        ),
        ToolFact::UnknownAction {
            tool,
            name,
            allowed,
        } => msgf!(
            "unknown action `{name}` for {tool}: use one of {}",
            names(allowed)
        ),
        ToolFact::BadSeverity { got } => {
            msgf!("severity must be error, warning or all, got `{got}`")
        }
        ToolFact::ParamsNotJson { why } => msgf!("params is a string but not JSON: {why}"),
        ToolFact::ParamsNotAnObject { got } => {
            msgf!("params must be a JSON object, got {}", short(got))
        }
        ToolFact::CodeActionToApply => msgf!(
            "code_actions in lsp_edit applies one action: pass action_index (from the list lsp code_actions gives) or action_title"
        ),
        ToolFact::ReadOnly { tool, action } => {
            let what = if tool == "lsp" {
                format!(
                    "applying {} is refused (lsp only previews edits)",
                    action.name()
                )
            } else {
                format!("{tool} ({}) changes state and is refused", action.name())
            };
            msgf!(
                "scry mcp runs with --read-only: {what}; restart it without --read-only to allow lsp_edit"
            )
        }
        ToolFact::PreviewOnly { action } => msgf!(
            "lsp only previews {} (nothing is written); apply it with lsp_edit",
            action.name()
        ),
        ToolFact::TooManyCalls { max } => {
            msgf!("{max} calls are already running; wait for one to finish, then retry")
        }
        ToolFact::IdReused { id } => msgf!(
            "request id {id} was already used for a different call in this session; send a new id"
        ),
        ToolFact::Cancelled => msgf!("the call was cancelled"),
    }
}
