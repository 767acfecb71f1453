//! Operations: resolve the symbol a caller named to a position, ask the right
//! language server, and return plain answers (the vocabulary, questions and
//! answers alike, is scry-model's).

pub(crate) mod call;
pub(crate) mod convert;
pub(crate) mod diagnostics;
pub(crate) mod edit;
pub mod engine;
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
pub mod isolate;
pub mod resolve;

pub use diagnostics::{Collected, DiagnosticsBaseline, TargetKind, diagnostics_target};
pub use engine::{Engine, Ran, Told};
