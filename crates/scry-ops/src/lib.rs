//! Operations: resolve the symbol a caller named to a position, ask the right
//! language server, and return plain answers (see [`model`]).

pub mod error;
pub mod model;

pub use error::OpError;
pub use model::*;
