//! Operations: resolve the symbol a caller named to a position, ask the right
//! language server, and return plain answers (see [`model`]).

pub mod action;
pub(crate) mod call;
pub mod error;
pub mod model;
pub mod query;

pub use error::{Message, OpError, Part};
pub use model::*;
pub(crate) mod convert;
pub(crate) mod diagnostics;
pub mod edit;
pub mod engine;
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
pub mod isolate;
pub mod limits;
pub mod os_path;
pub mod resolve;

pub use diagnostics::{Collected, DiagnosticsBaseline, TargetKind, diagnostics_target};
pub use edit::EditOptions;
pub use engine::{Engine, MAX_TIMEOUT};
pub use query::{ActionChoice, Invalid, Problem, Query, Spot, Valid};
