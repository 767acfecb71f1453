//! scry-syntax: a syntactic index built with tree-sitter, for answers when
//! no language server can give them (none installed, failed to start, still
//! indexing) and for the repository map.
//!
//! Invariants: it never claims more than syntax shows (callers label its
//! answers `precision: "syntactic"`); references are identifier nodes only,
//! never text in comments or strings; files over the size limit and binary
//! files are skipped and said; syntax errors are tolerated (tree-sitter
//! recovers). The walk and its skip lists are scry-base's (`scry_base::walk`).
//! `names` checks a rename's new name against the file's language, with the
//! rules kept in the same `languages.json`.

pub mod extract;
#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
pub mod index;
pub mod lang;
pub mod names;

pub use extract::{Def, FileIndex, Implementation, Ref};
pub use index::{MAX_FILE_BYTES, Scope, Skipped, Snapshot, SyntaxIndex};
pub mod map;
pub mod query;

pub use map::{Focus, MapDef, MapFile, RepoMap};
