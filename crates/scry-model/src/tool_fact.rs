//! What a refused MCP tool call says, as data: each [`ToolFact`] is one
//! sentence's facts about the tool call itself (its JSON arguments, the
//! tool, the session), before any question is asked; carried as
//! [`Fact::Tool`](crate::Fact) and worded only by scry-render
//! (`scry_render::fact`).
//!
//! Invariants: as [`Fact`](crate::Fact): no sentence of scry's here; what
//! the client sent is quoted as given (`got`: its JSON, cut by the
//! renderer), never as scry's text.

use serde::{Deserialize, Serialize};

use crate::Action;

/// One tool-call sentence's facts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "tool_fact")]
pub enum ToolFact {
    /// Argument `key` is not a string (`got`: its JSON).
    NotAString { key: String, got: String },
    /// Argument `key` is over its `max` (`got`: its JSON).
    OverMax { key: String, got: String, max: u64 },
    /// A 1-based argument (`line`, `column`) given as 0.
    ZeroForOneBased { key: String },
    /// A number argument below 1 (`got`: the number).
    NotPositive { key: String, got: String },
    /// A number argument that is not an integer (`got`: its JSON).
    NotAnInteger { key: String, got: String },
    /// Argument `key` is not a boolean (`got`: its JSON).
    NotABoolean { key: String, got: String },
    /// Arguments the tool does not take, and those it does.
    UnknownArguments {
        tool: String,
        unknown: Vec<String>,
        takes: Vec<String>,
    },
    /// No action given; `allowed`: the tool's actions.
    NoAction { tool: String, allowed: Vec<Action> },
    /// An action of the other tool (`writes`: an action of `lsp_edit`
    /// asked of `lsp`).
    OtherToolsAction { action: Action, writes: bool },
    /// An action no tool has, as given.
    UnknownAction {
        tool: String,
        name: String,
        allowed: Vec<Action>,
    },
    /// `severity` none of the filters.
    BadSeverity { got: String },
    /// `params` as a string that is not JSON (`why`: the parser's error).
    ParamsNotJson { why: String },
    /// `params` neither an object nor an array (`got`: its JSON).
    ParamsNotAnObject { got: String },
    /// `code_actions` in `lsp_edit` without the action to apply.
    CodeActionToApply,
    /// A call that writes, refused in a read-only session (`tool`, the
    /// action asked).
    ReadOnly { tool: String, action: Action },
    /// `lsp` asked to apply an edit (it previews only).
    PreviewOnly { action: Action },
    /// `max` calls are running already.
    TooManyCalls { max: usize },
    /// A request id used before for another call in this session.
    IdReused { id: String },
    /// The call was cancelled.
    Cancelled,
}
