//! scry-index: precise answers from a SCIP index (`index.scip`, written by
//! `rust-analyzer scip`, `scip-typescript`, `scip-python`, …) before — or
//! without — a live language server.
//!
//! - [`proto`]: the SCIP messages scry reads (hand-written `prost`
//!   structs over the published `scip.proto`) and a streaming reader.
//! - [`store`]: the one-time conversion into sorted on-disk tables and the
//!   reader that answers by range reads ([`store::read::Index`]); each
//!   type by its one path (`scry_index::store::Doc`, no re-export at the
//!   root).
//! - [`symbol`]: names and kinds from SCIP symbol strings.
//! - [`cache`]: where a workspace's converted index lives (per-user cache,
//!   keyed by the canonical root) and the freshness of its documents.
//! - [`translate`]: a line moved across a file's git diff hunks (an index
//!   built at an earlier commit answering for the working tree).
//! - [`join`]: the indexes of several project roots as one, paths relative
//!   to the workspace root.
//!
//! Stands on scry-base alone (paths, the walker, the reader, the cache
//! directory); running indexers needs the workspace and lives above it
//! (`scry_workspace::indexing`).
//!
//! Invariants: nothing here panics on a hostile index (corrupt, truncated,
//! another version: an error naming the file); positions handed out are
//! 0-based character columns checked against the file when converting; a
//! document is only used while its file's content hash is the one recorded.

pub mod cache;
pub mod join;
pub mod proto;
pub mod store;
pub mod symbol;
pub mod translate;
