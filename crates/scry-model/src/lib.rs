//! scry-model: the vocabulary every layer above the engine shares, as plain
//! data: the actions and their table ([`action`]), the question as a front
//! end parsed it and as validated ([`Query`], [`Valid`]), the answers and
//! their reasons (the crate root), what `status`, `doctor` and `daemon
//! status` report (the crate root too), errors ([`OpError`], their facts
//! [`Fact`] and [`EditFact`], worded by scry-render), the limits ([`limits`]), symbol names ([`name`]),
//! the map's line formats ([`map_line`]) and the serde form of paths
//! ([`os_path`]).
//!
//! Invariants: no async runtime, LSP, workspace or engine behind it
//! (`scry-base`, `serde` and `serde_json` only), so the
//! renderer, the daemon's protocol and the MCP schema depend on it alone;
//! nothing here formats an answer for a reader (that is scry-render's job).

pub mod action;
pub mod edit_fact;
pub mod error;
pub mod fact;
pub mod limits;
pub mod map_line;
mod model;
pub mod name;
pub mod os_path;
pub mod query;
mod status;
pub mod tool_fact;
pub mod usage_fact;

pub use action::Action;
pub use edit_fact::EditFact;
pub use error::{Example, Message, OpError, Part};
pub use fact::{ArgProblem, Fact, Invalid};
pub use model::*;
pub use query::{ActionChoice, Query, Spot, Valid};
pub use status::*;
pub use tool_fact::ToolFact;
pub use usage_fact::UsageFact;
