//! The converted on-disk form of a SCIP index, by job:
//!
//! - [`convert`]: the one streaming pass over an `index.scip`, each step a
//!   function, with its parts (positions fitted to the file, Rust's `Self`
//!   in impl blocks and traits, each symbol string held once, the tables
//!   ordered and written out atomically).
//! - [`format`](mod@format): the file's layout: header, sections,
//!   fixed-width records.
//! - [`read`]: [`read::Index`], an open converted index: its header and
//!   metadata, checked reads and the records decoded.
//! - [`query`]: lookups over an open index, each a binary search by
//!   `read_at`.
//! - [`stamp`]: what freshness compares (size, times, inode, content hash).
//!
//! This file: what the other files hand out — the records ([`Doc`],
//! [`Occ`], [`SymOcc`], [`Extent`], [`Sym`]), a symbol's information, the
//! metadata ([`Meta`]) and the errors ([`IndexError`]).
//!
//! Invariants, each kept in the file named: nothing panics on a hostile
//! index, and reads are checked against the file's length (a truncated
//! file is an error, not garbage; [`read`], [`query`]); a file that is not
//! a converted index of this format version is refused
//! ([`IndexError::Format`]; [`format`](mod@format), [`read`]); a document
//! whose path leaves the root is refused and counted, the input and the
//! documents' files are read only when regular files, conversion holds one
//! document at a time and refuses an index over its memory cap, positions
//! are 0-based characters checked against the file and a document that
//! did not fit is `verified: false` ([`convert`]; never answered from: the
//! cache); what one lookup holds is bounded by the caller's caps and
//! [`query::MAX_RECORDS_PER_READ`] ([`query`]).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::proto;

pub mod convert;
pub mod format;
pub mod query;
pub mod read;
pub mod stamp;

#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("cannot read {path}: {err}")]
    Io { path: PathBuf, err: std::io::Error },
    #[error("{path} is not a usable SCIP index: {why}")]
    Scip { path: PathBuf, why: String },
    #[error("{path} uses SCIP protocol version {version}; scry reads version 0")]
    WrongVersion { path: PathBuf, version: i32 },
    #[error("{path} is not a converted index scry can read: {why}")]
    Format { path: PathBuf, why: String },
    #[error("{path} is not a regular file ({kind}); scry reads an index only from a regular file")]
    NotRegular { path: PathBuf, kind: &'static str },
    #[error(
        "{path} is too large to convert: its tables would take over {} MiB (the limit is {} MiB); index a smaller tree (fewer roots or languages)",
        need / (1024 * 1024), limit / (1024 * 1024)
    )]
    TooLarge {
        path: PathBuf,
        need: u64,
        limit: u64,
    },
}

impl IndexError {
    /// The same error naming `now` where it named `was` (a copy of the
    /// file the user gave is converted: the error names what they gave).
    pub fn naming(mut self, was: &Path, now: &Path) -> IndexError {
        let path = match &mut self {
            IndexError::Io { path, .. }
            | IndexError::Scip { path, .. }
            | IndexError::WrongVersion { path, .. }
            | IndexError::Format { path, .. }
            | IndexError::NotRegular { path, .. }
            | IndexError::TooLarge { path, .. } => path,
        };
        if path == was {
            *path = now.to_path_buf();
        }
        self
    }

    /// A stable code: `INDEX_TOO_LARGE`, `NOT_A_REGULAR_FILE`,
    /// `INDEX_UNREADABLE`, `INDEX_CORRUPT` or `INDEX_VERSION`.
    pub fn code(&self) -> &'static str {
        match self {
            IndexError::Io { err, .. } if err.kind() == std::io::ErrorKind::NotFound => {
                "FILE_NOT_FOUND"
            }
            IndexError::Io { .. } => "INDEX_UNREADABLE",
            IndexError::Scip { .. } | IndexError::Format { .. } => "INDEX_CORRUPT",
            IndexError::WrongVersion { .. } => "INDEX_VERSION",
            IndexError::NotRegular { .. } => "NOT_A_REGULAR_FILE",
            IndexError::TooLarge { .. } => "INDEX_TOO_LARGE",
        }
    }
}

/// Where an index came from and what built it (the converted file's
/// metadata, JSON).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Meta {
    pub format: u32,
    /// The indexer (`ToolInfo.name`, `version`).
    pub tool: String,
    pub tool_version: String,
    /// The `index.scip` converted.
    pub source: PathBuf,
    pub source_size: u64,
    pub source_mtime_ns: u64,
    /// When the `index.scip` was written (seconds since the epoch).
    pub built_at: u64,
    /// The commit the tree was at, when known.
    pub commit: Option<String>,
    /// The root the documents' relative paths start from.
    pub root: PathBuf,
    pub documents: u64,
    /// Documents whose file matched the index when converting.
    pub verified: u64,
    pub symbols: u64,
    pub occurrences: u64,
    pub languages: Vec<String>,
    /// Documents refused because their path leaves the root (`..`, an
    /// absolute path, a symlink out of the workspace), and the first.
    #[serde(default)]
    pub refused: u64,
    #[serde(default)]
    pub refused_first: Option<String>,
    /// Who built the `index.scip`, when not the user's `scry index`
    /// (`daemon`: the daemon's background refresh).
    #[serde(default)]
    pub built_by: Option<String>,
}

/// What the index says about one symbol, beyond its occurrences.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct SymbolInfo {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub display_name: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub documentation: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// Symbols this one's type is (`is_type_definition` relationships).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub type_definitions: Vec<String>,
    /// SCIP `Kind`, 0 when unspecified.
    #[serde(default)]
    pub kind: i32,
}

/// One document's entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Doc {
    pub id: u32,
    pub path: String,
    pub hash: u64,
    pub size: u64,
    pub mtime_ns: u64,
    /// The file's status-change time and inode when converting: what
    /// `touch -r` cannot set back (see `scry_base::disk::Stamp`).
    pub ctime_ns: u64,
    pub ino: u64,
    pub verified: bool,
    pub language: String,
    occ_off: u64,
    pub occ_count: u32,
}

/// One occurrence in a document, 0-based, columns in characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Occ {
    pub line: u32,
    pub col: u32,
    pub end_line: u32,
    pub end_col: u32,
    pub symbol: u32,
    pub roles: u32,
}

impl Occ {
    pub fn is_definition(&self) -> bool {
        self.roles & proto::ROLE_DEFINITION as u32 != 0
    }
}

/// One occurrence of a symbol: its document and range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SymOcc {
    pub doc: u32,
    pub occ: Occ,
}

/// What a definition (or a Rust impl block) in a document encloses: the
/// SCIP `enclosing_range` of its definition occurrence (for an impl block,
/// of its `Self` occurrences), for nested outlines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extent {
    /// Where it is named (0-based; an impl block: its self type in the header).
    pub line: u32,
    pub col: u32,
    pub symbol: u32,
    /// The whole range it encloses.
    pub start_line: u32,
    pub start_col: u32,
    pub end_line: u32,
    pub end_col: u32,
}

/// One symbol's entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Sym {
    pub id: u32,
    pub symbol: String,
    occ_off: u64,
    pub occ_count: u32,
    info_off: u64,
    info_len: u32,
    impl_off: u64,
    pub impl_count: u32,
}
