//! The converted on-disk form of a SCIP index and its reader.
//!
//! [`convert`] streams an `index.scip` once (one document in memory at a
//! time, read through a bounded buffered reader; kept: each symbol string
//! once, 24 bytes per occurrence plus 12 for the by-symbol order, symbol
//! information as its JSON — about 2× the input, counted as it grows and
//! refused above [`ConvertOptions::max_memory`], `INDEX_TOO_LARGE`) and
//! writes the tables straight to one file of fixed-width, sorted tables:
//!
//! | section | record | sorted by |
//! |---|---|---|
//! | documents | path, content hash, size, mtime, occurrences slice | path |
//! | occurrences | line, col, end line, end col, symbol id, roles | document, then position |
//! | symbols | name, occurrences slice, info, implementors | symbol string |
//! | names | lower-cased source name, symbol id | name |
//! | symbol occurrences | document id, range, roles | symbol, then document, position |
//! | extents | document id, position, symbol id, enclosing range | document, then position |
//!
//! plus a string blob, an id blob, per-symbol JSON info and the metadata
//! (JSON). Positions are stored 0-based in characters (converted from the
//! document's encoding against the file on disk when converting). One
//! addition to what the indexer wrote: a Rust `Self` inside an impl block
//! is also a reference of the block's self type, and the block is defined
//! where its header names that type, as the live server counts them (see
//! `impl_blocks`); a `Self` in a trait is defined at the trait's name
//! (`trait_selves`).
//!
//! [`Index::open`] reads the fixed header and the metadata only; every
//! lookup is a binary search by `read_at` over one table, so opening costs
//! the same whatever the index holds and memory held is the header, the
//! metadata and what one answer reads (bounded by the caller's caps).
//! An index is untrusted input: a document whose path leaves the root
//! (`..`, absolute, or through a symlink, resolved as edits are by
//! `paths::confine`) is refused and counted ([`Meta::refused`]); the input
//! and the documents' files are read only when regular files; each
//! document records its file's [`Stamp`] (size, mtime, ctime, inode) and
//! content hash.
//! Invariants: a document whose file was missing, unreadable or did not
//! fit its occurrences when converting is recorded `verified: false` and
//! never answered from; a file that is not a converted index of this
//! format version is refused ([`IndexError::Format`]); reads are checked
//! against the file's length (a truncated file is an error, not garbage).

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Write};
use std::os::unix::fs::FileExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::proto::{self, Field, Stream, StreamError};

const MAGIC: &[u8; 8] = b"SCRYSCIP";
/// The converted form's version; a cache of another version is rebuilt.
pub const FORMAT_VERSION: u32 = 3;
const HEADER_BYTES: u64 = 8 + 4 + 4 + SECTIONS as u64 * 16;
const SECTIONS: usize = 10;
const DOC_BYTES: u64 = 72;
const OCC_BYTES: u64 = 24;
const SYM_BYTES: u64 = 48;
const NAME_BYTES: u64 = 16;
const EXTENT_BYTES: u64 = 32;
/// Largest file read to hash and check positions while converting.
pub const MAX_SOURCE_BYTES: u64 = 16 * 1024 * 1024;

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
    /// `touch -r` cannot set back (see [`Stamp`]).
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

/// Figures of a conversion.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Built {
    pub documents: u64,
    pub unverified: u64,
    pub symbols: u64,
    pub occurrences: u64,
    /// Documents refused for leaving the root.
    pub refused: u64,
}

/// FNV-1a, 64 bits, of a file's bytes: what freshness compares.
pub fn content_hash(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// What freshness compares before hashing a file: its size and
/// modification time, and the status-change time and inode, which
/// `touch -r` (`utimes`) cannot set back — a file rewritten and touched
/// back to its old time differs in these and is hashed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Stamp {
    pub size: u64,
    pub mtime_ns: u64,
    pub ctime_ns: u64,
    pub ino: u64,
}

impl Stamp {
    pub fn of(m: &std::fs::Metadata) -> Stamp {
        use std::os::unix::fs::MetadataExt;
        Stamp {
            size: m.len(),
            mtime_ns: mtime_ns(m).unwrap_or(0),
            ctime_ns: (m.ctime().max(0) as u64)
                .saturating_mul(1_000_000_000)
                .saturating_add(m.ctime_nsec().max(0) as u64),
            ino: m.ino(),
        }
    }
}

/// A regular file's [`Stamp`] (symlinks followed).
pub fn stamp(path: &Path) -> Option<Stamp> {
    let m = std::fs::metadata(path).ok()?;
    m.is_file().then(|| Stamp::of(&m))
}

fn mtime_ns(m: &std::fs::Metadata) -> Option<u64> {
    Some(
        m.modified()
            .ok()?
            .duration_since(UNIX_EPOCH)
            .ok()?
            .as_nanos() as u64,
    )
}

/// A regular file's size and modification time (ns), not following a
/// symlink at the end.
pub fn stat(path: &Path) -> Option<(u64, u64)> {
    let m = std::fs::metadata(path).ok()?;
    if !m.is_file() {
        return None;
    }
    let mtime = m
        .modified()
        .ok()?
        .duration_since(UNIX_EPOCH)
        .ok()?
        .as_nanos() as u64;
    Some((m.len(), mtime))
}

/// A document's relative path, refused when it could leave the root.
fn safe_relative(p: &str) -> Option<PathBuf> {
    let path = Path::new(p);
    if p.is_empty() || path.is_absolute() {
        return None;
    }
    path.components()
        .all(|c| matches!(c, Component::Normal(_)))
        .then(|| path.to_path_buf())
}

/// Column `c` in `enc` units of `line` as a character column.
fn char_col(line: &str, c: i32, enc: i32) -> Option<u32> {
    if c < 0 {
        return None;
    }
    let c = c as usize;
    match enc {
        // UTF-16 (also taken for "unspecified": LSP's default).
        0 | 2 => {
            let mut units = 0;
            for (i, ch) in line.chars().enumerate() {
                if units == c {
                    return Some(i as u32);
                }
                units += ch.len_utf16();
                if units > c {
                    return None;
                }
            }
            (units == c).then(|| line.chars().count() as u32)
        }
        1 => line
            .is_char_boundary(c)
            .then(|| line[..c].chars().count() as u32),
        3 => (c <= line.chars().count()).then_some(c as u32),
        _ => None,
    }
}

/// A SCIP range as `(line, col, end_line, end_col)` in characters against
/// the file's lines, `None` when it does not fit them.
fn fit(range: &[i32], lines: &[&str], enc: i32) -> Option<(u32, u32, u32, u32)> {
    let (sl, sc, el, ec) = match *range {
        [l, s, e] => (l, s, l, e),
        [sl, sc, el, ec] => (sl, sc, el, ec),
        _ => return None,
    };
    let line = |l: i32| -> Option<&str> { lines.get(usize::try_from(l).ok()?).copied() };
    let a = char_col(line(sl)?, sc, enc)?;
    let b = char_col(line(el)?, ec, enc)?;
    if (el, b) < (sl, a) {
        return None;
    }
    Some((sl as u32, a, el as u32, b))
}

/// An occurrence while converting: six numbers (see its users).
type Row = (u32, u32, u32, u32, u32, u32);

struct DocBuild {
    path: String,
    hash: u64,
    size: u64,
    mtime_ns: u64,
    ctime_ns: u64,
    ino: u64,
    verified: bool,
    lang: u32,
    /// (line, col, end_line, end_col, symbol key, roles).
    occs: Vec<Row>,
    /// Occurrences in the by-symbol table only (see [`impl_blocks`]).
    extra: Vec<Row>,
    /// (line, col, symbol key, enclosing range): see [`Extent`].
    extents: Vec<(u32, u32, u32, Range)>,
}

/// `(line, col, end_line, end_col)`, 0-based, characters.
type Range = (u32, u32, u32, u32);
/// `(line, col)`, 0-based, characters.
type Pos = (u32, u32);

/// One occurrence while converting a document.
struct Fitted<'a> {
    range: Range,
    symbol: &'a str,
    roles: u32,
    enclosing: Option<Range>,
}

/// What [`impl_blocks`] found in a document.
#[derive(Default)]
struct ImplBlocks<'a> {
    /// Occurrences for the by-symbol table only: (symbol, range, roles).
    extra: Vec<(&'a str, Range, u32)>,
    /// Each block: its symbol, where its header names the self type (or the
    /// block's start), its range.
    blocks: Vec<(&'a str, Pos, Range)>,
}

/// An impl block found from its `Self` occurrences.
struct SelfBlock<'a> {
    symbol: &'a str,
    at: Pos,
    range: Range,
    /// The self type's symbol, when the header names it.
    self_type: Option<&'a str>,
}

/// rust-analyzer gives `Self` inside an impl block the impl's own symbol
/// (`…impl#[`Either<L, R>`][Iterator]`, enclosing range: the block). The
/// live server counts such a `Self` among the references of the impl's self
/// type (`Either`), and asked at `Self` it answers for the block: its
/// definition is where the header names the self type, its references that
/// and the block's `Self`s. So each such `Self` is also a reference of the
/// self type, and the block gets a definition at its header's self type —
/// the last occurrence, before the block's first `{`, of a type named as the
/// impl's first type parameter — both in the by-symbol table only (asked at
/// a position, the document's own occurrence answers).
///
/// The blocks are also returned for outlines: from their `Self`
/// occurrences (whose enclosing range is the block), else from their
/// members' definitions (the header: the last occurrence of the self type
/// before the first member; the end: the first `}` line after the last
/// member).
fn impl_blocks<'a>(occs: &[Fitted<'a>], lines: &[&str]) -> ImplBlocks<'a> {
    use crate::symbol::{Suffix, descriptors, impl_self_type, parent};
    let mut order: Vec<usize> = (0..occs.len()).collect();
    order.sort_by_key(|&i| (occs[i].range.0, occs[i].range.1));
    let pos = |f: &Fitted<'_>| (f.range.0, f.range.1);
    // The last occurrence before `end` (and from `start`) of a type named `head`.
    let named_before = |occs: &[Fitted<'a>], start: (u32, u32), end: (u32, u32), head: &str| {
        let from = order.partition_point(|&j| pos(&occs[j]) < start);
        let to = order.partition_point(|&j| pos(&occs[j]) < end);
        order[from..to].iter().rev().copied().find(|&j| {
            descriptors(occs[j].symbol)
                .last()
                .is_some_and(|(n, s)| n == head && *s == Suffix::Type)
        })
    };
    let mut blocks: Vec<SelfBlock<'a>> = Vec::new();
    let mut extra = Vec::new();
    for i in 0..occs.len() {
        let (Some(e), symbol) = (occs[i].enclosing, occs[i].symbol) else {
            continue;
        };
        let Some(head) = impl_self_type(symbol) else {
            continue;
        };
        let found = blocks
            .iter()
            .find(|b| b.symbol == symbol && b.range == e)
            .map(|b| b.self_type);
        let self_type = match found {
            Some(t) => t,
            None => {
                let start = (e.0, e.1);
                let end = header_end(lines, start).unwrap_or((e.2, e.3));
                let named = named_before(occs, start, end, &head);
                let at = named.map_or(start, |j| pos(&occs[j]));
                let t = named.map(|j| occs[j].symbol);
                if let Some(j) = named {
                    extra.push((symbol, occs[j].range, proto::ROLE_DEFINITION as u32));
                }
                blocks.push(SelfBlock {
                    symbol,
                    at,
                    range: e,
                    self_type: t,
                });
                t
            }
        };
        let (l, c, _, ec) = occs[i].range;
        let is_self = lines.get(l as usize).is_some_and(|t| {
            t.chars()
                .skip(c as usize)
                .take(ec.saturating_sub(c) as usize)
                .eq("Self".chars())
        });
        if let Some(t) = self_type
            && is_self
        {
            extra.push((t, occs[i].range, occs[i].roles));
        }
    }
    // Blocks with no `Self`: from their members' definitions.
    // (impl symbol, first member's start, last member's end).
    let mut members: Vec<(String, Pos, Pos)> = Vec::new();
    for f in occs
        .iter()
        .filter(|f| f.roles & proto::ROLE_DEFINITION as u32 != 0)
    {
        let Some(p) = parent(f.symbol).filter(|p| impl_self_type(p).is_some()) else {
            continue;
        };
        let (start, end) = match f.enclosing {
            Some(e) => ((e.0, e.1), (e.2, e.3)),
            None => (pos(f), (f.range.2, f.range.3)),
        };
        match members.iter_mut().find(|m| m.0 == p) {
            Some(m) => {
                m.1 = m.1.min(start);
                m.2 = m.2.max(end);
            }
            None => members.push((p, start, end)),
        }
    }
    let mut out: Vec<(&'a str, Pos, Range)> = blocks
        .into_iter()
        .map(|b| (b.symbol, b.at, b.range))
        .collect();
    for (p, start, end) in members {
        if out.iter().any(|b| b.0 == p) {
            continue;
        }
        // The impl symbol as one of this document's strings (a member's
        // symbol starts with it).
        let Some(symbol) = occs
            .iter()
            .find(|f| f.symbol.starts_with(p.as_str()))
            .map(|f| &f.symbol[..p.len()])
        else {
            continue;
        };
        let Some(head) = impl_self_type(symbol) else {
            continue;
        };
        let Some(j) = named_before(occs, (0, 0), start, &head) else {
            continue;
        };
        let at = pos(&occs[j]);
        let close = lines
            .iter()
            .enumerate()
            .skip(end.0 as usize)
            .take(64)
            .find(|(l, t)| {
                let skip = if *l == end.0 as usize {
                    end.1 as usize
                } else {
                    0
                };
                t.chars().skip(skip).any(|c| c == '}')
            })
            .map_or(end.0, |(l, _)| l as u32);
        out.push((symbol, at, (at.0, 0, close, 0)));
    }
    ImplBlocks { extra, blocks: out }
}

/// A range over a quoted name (scip-typescript's `T['name']`) narrowed to
/// the name, where the live servers place it.
fn unquoted(r: Range, lines: &[&str]) -> Range {
    let (l, c, el, ec) = r;
    if l != el || ec < c + 3 {
        return r;
    }
    let Some(text) = lines.get(l as usize) else {
        return r;
    };
    let mut chars = text.chars().skip(c as usize).take((ec - c) as usize);
    let first = chars.next();
    let last = chars.last();
    match (first, last) {
        (Some(q @ ('\'' | '"' | '`')), Some(e)) if q == e => (l, c + 1, el, ec - 1),
        _ => r,
    }
}

/// rust-analyzer gives `Self` inside a trait a local symbol (display name
/// `Self`, enclosing symbol the trait) with no definition; the live server
/// answers for the trait: defined at its name, which is among the
/// references. Each such local gets that definition, in the by-symbol
/// table only (as [`impl_blocks`] does for impl blocks).
fn trait_selves<'a>(
    occs: &[Fitted<'a>],
    symbols: &'a [proto::SymbolInformation],
) -> Vec<(&'a str, Range, u32)> {
    let def = proto::ROLE_DEFINITION as u32;
    symbols
        .iter()
        .filter(|si| {
            si.display_name == "Self"
                && crate::symbol::is_local(&si.symbol)
                && !si.enclosing_symbol.is_empty()
        })
        .filter_map(|si| {
            let at = occs
                .iter()
                .find(|f| f.symbol == si.enclosing_symbol && f.roles & def != 0)?;
            Some((si.symbol.as_str(), at.range, def))
        })
        .collect()
}

/// The position of the first `{` at or after `from`.
fn header_end(lines: &[&str], from: (u32, u32)) -> Option<(u32, u32)> {
    for (l, text) in lines.iter().enumerate().skip(from.0 as usize).take(64) {
        let skip = if l == from.0 as usize {
            from.1 as usize
        } else {
            0
        };
        if let Some(c) = text.chars().skip(skip).position(|ch| ch == '{') {
            return Some((l as u32, (skip + c) as u32));
        }
    }
    None
}

/// The default cap on the memory one conversion's tables take while they
/// are built; an index that would need more is refused
/// ([`IndexError::TooLarge`], `INDEX_TOO_LARGE`).
pub const MAX_CONVERT_MEMORY: u64 = 2 * 1024 * 1024 * 1024;

/// Options of one conversion.
pub struct ConvertOptions<'a> {
    /// The tree the documents' paths are relative to (canonical): a
    /// document whose real location is not under it is refused.
    pub root: &'a Path,
    pub commit: Option<String>,
    /// Called with the number of documents read so far.
    pub progress: &'a mut dyn FnMut(u64),
    /// The most memory the tables being built may take
    /// ([`MAX_CONVERT_MEMORY`]).
    pub max_memory: u64,
    /// Who built the `index.scip` when not the user's `scry index`
    /// ([`Meta::built_by`]).
    pub built_by: Option<String>,
    /// The path recorded as the source (default: the file converted), for
    /// a temporary file converted before it is put there.
    pub source: Option<&'a Path>,
}

impl<'a> ConvertOptions<'a> {
    /// Defaults for `root`: no commit, no progress, the default cap.
    pub fn new(root: &'a Path) -> ConvertOptions<'a> {
        ConvertOptions {
            root,
            commit: None,
            // A zero-sized closure: leaking it allocates nothing.
            progress: Box::leak(Box::new(|_| {})),
            max_memory: MAX_CONVERT_MEMORY,
            built_by: None,
            source: None,
        }
    }
}

/// Open `path` for reading only when it is a regular file (itself or what
/// its symlinks lead to), never blocking on a FIFO swapped in.
pub fn open_regular(path: &Path) -> Result<File, IndexError> {
    use scry_base::disk::{self, ReadError};
    let refuse = |e: ReadError| match e {
        ReadError::NotRegular { kind, .. } => IndexError::NotRegular {
            path: path.to_path_buf(),
            kind,
        },
        ReadError::Io { source, .. } => IndexError::Io {
            path: path.to_path_buf(),
            err: source,
        },
        other => IndexError::Io {
            path: path.to_path_buf(),
            err: std::io::Error::other(other.to_string()),
        },
    };
    disk::check(path, u64::MAX).map_err(refuse)?;
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let file = opts.open(path).map_err(|err| IndexError::Io {
        path: path.to_path_buf(),
        err,
    })?;
    let m = file.metadata().map_err(|err| IndexError::Io {
        path: path.to_path_buf(),
        err,
    })?;
    if !m.is_file() {
        return Err(IndexError::NotRegular {
            path: path.to_path_buf(),
            kind: "not a regular file",
        });
    }
    Ok(file)
}

const NONE: u32 = u32::MAX;

/// Symbol strings, each held once: one byte arena in first-seen order (a
/// string's key is its place), and a hash index over it.
#[derive(Default)]
struct Interner {
    bytes: Vec<u8>,
    /// End of each key's bytes in `bytes`.
    ends: Vec<u64>,
    /// FNV hash → the latest key with it; `next` chains the others.
    index: HashMap<u64, u32>,
    next: Vec<u32>,
}

impl Interner {
    fn len(&self) -> usize {
        self.ends.len()
    }

    fn get(&self, k: u32) -> &[u8] {
        let k = k as usize;
        let start = if k == 0 { 0 } else { self.ends[k - 1] as usize };
        &self.bytes[start..self.ends[k] as usize]
    }

    fn str(&self, k: u32) -> &str {
        // Only ever fed `&str`s, so always UTF-8.
        std::str::from_utf8(self.get(k)).unwrap_or("")
    }

    fn find(&self, s: &[u8]) -> Option<u32> {
        let mut k = *self.index.get(&content_hash(s))?;
        while k != NONE {
            if self.get(k) == s {
                return Some(k);
            }
            k = self.next[k as usize];
        }
        None
    }

    fn intern(&mut self, s: &[u8]) -> u32 {
        let h = content_hash(s);
        let first = self.index.get(&h).copied();
        let mut k = first.unwrap_or(NONE);
        while k != NONE {
            if self.get(k) == s {
                return k;
            }
            k = self.next[k as usize];
        }
        let k = self.ends.len() as u32;
        self.bytes.extend_from_slice(s);
        self.ends.push(self.bytes.len() as u64);
        self.next.push(first.unwrap_or(NONE));
        self.index.insert(h, k);
        k
    }

    /// Drop the hash index (no more lookups).
    fn freeze(&mut self) {
        self.index = HashMap::new();
        self.next = Vec::new();
    }

    /// Bytes held (capacities; a hash entry taken as 16 bytes).
    fn held(&self) -> u64 {
        (self.bytes.capacity() + self.ends.capacity() * 8 + self.next.capacity() * 4) as u64
            + self.index.capacity() as u64 * 16
    }
}

/// What a symbol's information becomes in the converted form: its JSON
/// (`None` when it says nothing beyond the default).
fn info_json(si: &proto::SymbolInformation) -> Option<Vec<u8>> {
    let info = SymbolInfo {
        display_name: si.display_name.clone(),
        documentation: si.documentation.clone(),
        signature: si
            .signature_documentation
            .as_ref()
            .map(|d| d.text.clone())
            .filter(|t| !t.is_empty()),
        type_definitions: si
            .relationships
            .iter()
            .filter(|r| r.is_type_definition)
            .map(|r| r.symbol.clone())
            .collect(),
        kind: si.kind,
    };
    (info != SymbolInfo::default()).then(|| serde_json::to_vec(&info).unwrap_or_default())
}

/// Symbols' information while converting: JSON in one blob, and the
/// implementation relationships with their targets' strings.
#[derive(Default)]
struct Infos {
    /// Per key: (offset, length) in `blob`; length [`NONE`]: no
    /// information seen; 0: seen, nothing to say.
    at: Vec<(u64, u32)>,
    blob: Vec<u8>,
    /// (implementor key, target string's offset and length in `targets`).
    rels: Vec<(u32, u64, u32)>,
    targets: Vec<u8>,
}

impl Infos {
    /// Record `si` for key `k`; an external symbol's (`replace: false`)
    /// only when none was recorded.
    fn put(&mut self, k: u32, si: &proto::SymbolInformation, replace: bool) {
        let k = k as usize;
        if self.at.len() <= k {
            self.at.resize(k + 1, (0, NONE));
        }
        if !replace && self.at[k].1 != NONE {
            return;
        }
        self.at[k] = match info_json(si) {
            Some(j) => {
                let off = self.blob.len() as u64;
                self.blob.extend_from_slice(&j);
                (off, j.len() as u32)
            }
            None => (0, 0),
        };
        for r in si.relationships.iter().filter(|r| r.is_implementation) {
            let off = self.targets.len() as u64;
            self.targets.extend_from_slice(r.symbol.as_bytes());
            self.rels.push((k as u32, off, r.symbol.len() as u32));
        }
    }

    fn info(&self, k: u32) -> &[u8] {
        match self.at.get(k as usize) {
            Some(&(off, len)) if len != NONE && len > 0 => {
                &self.blob[off as usize..off as usize + len as usize]
            }
            _ => &[],
        }
    }

    fn held(&self) -> u64 {
        (self.at.capacity() * 16
            + self.blob.capacity()
            + self.rels.capacity() * 16
            + self.targets.capacity()) as u64
    }
}

/// Convert `scip` (an `index.scip`) into `out` (written to a temporary file
/// beside it, then renamed: a reader never sees half a file).
///
/// Memory: the input is read one document at a time through a buffered
/// reader; what is kept is each symbol string once, each occurrence as 24
/// bytes (plus 12 for the by-symbol order), the symbols' information as
/// its JSON; the tables are then written straight to the file, section by
/// section. Held memory is counted as it grows and an index that would
/// take over [`ConvertOptions::max_memory`] is refused.
pub fn convert(scip: &Path, out: &Path, opts: ConvertOptions<'_>) -> Result<Built, IndexError> {
    let io = |err| IndexError::Io {
        path: scip.to_path_buf(),
        err,
    };
    let file = open_regular(scip)?;
    let (source_size, source_mtime_ns) = file
        .metadata()
        .ok()
        .and_then(|m| Some((m.len(), mtime_ns(&m)?)))
        .unwrap_or_default();
    let mut stream = Stream::new(BufReader::with_capacity(1 << 20, file));
    let scip_err = |why: String| IndexError::Scip {
        path: scip.to_path_buf(),
        why,
    };
    let too_large = |need: u64| IndexError::TooLarge {
        path: scip.to_path_buf(),
        need,
        limit: opts.max_memory,
    };
    let root = opts.root;
    let mut meta: Option<proto::Metadata> = None;
    let mut keys = Interner::default();
    let mut infos = Infos::default();
    let mut docs: Vec<DocBuild> = Vec::new();
    let mut langs: Vec<String> = Vec::new();
    let mut refused = Refused::default();
    // What `docs` holds.
    let mut docs_held = 0u64;
    let mut scratch: Vec<u8> = Vec::new();
    let mut read = 0u64;
    loop {
        let field = match stream.next_field() {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(StreamError::Io(e)) => return Err(io(e)),
            Err(e) => return Err(scip_err(format!("{e} (at byte {})", stream.offset))),
        };
        match field {
            Field::Metadata(m) => {
                if m.version != 0 {
                    return Err(IndexError::WrongVersion {
                        path: scip.to_path_buf(),
                        version: m.version,
                    });
                }
                meta = Some(m);
            }
            Field::ExternalSymbol(si) => {
                let k = keys.intern(si.symbol.as_bytes());
                infos.put(k, &si, false);
                let held = docs_held + keys.held() + infos.held();
                if k % 4096 == 0 && held > opts.max_memory {
                    return Err(too_large(held));
                }
            }
            Field::Document(d) => {
                read += 1;
                (opts.progress)(read);
                // Confined as an edit is: `..`, absolute paths and paths
                // through a symlink that leaves the root are refused.
                let Some(rel) = safe_relative(&d.relative_path) else {
                    refused.add(&d.relative_path);
                    continue;
                };
                let abs = root.join(&rel);
                if scry_base::paths::confine(root, &abs).is_err() {
                    refused.add(&d.relative_path);
                    continue;
                }
                let read_file = scry_base::disk::read_with_meta(&abs, MAX_SOURCE_BYTES).ok();
                let st = read_file
                    .as_ref()
                    .map(|(_, m)| Stamp::of(m))
                    .or_else(|| stamp(&abs))
                    .unwrap_or_default();
                let text = read_file.map(|(b, _)| b);
                let hash = text.as_deref().map(content_hash).unwrap_or(0);
                let s = text
                    .as_deref()
                    .and_then(|b| std::str::from_utf8(b).ok())
                    .unwrap_or("");
                let lines: Vec<&str> = s
                    .split('\n')
                    .map(|l| l.strip_suffix('\r').unwrap_or(l))
                    .collect();
                let mut verified = text.is_some();
                // Each occurrence fitted to the file: range, symbol, roles,
                // enclosing range (when given and it fits).
                let mut fitted: Vec<Fitted<'_>> = Vec::with_capacity(d.occurrences.len());
                for o in &d.occurrences {
                    if o.symbol.is_empty() {
                        continue;
                    }
                    let Some(range) = verified
                        .then(|| fit(&o.range, &lines, d.position_encoding))
                        .flatten()
                    else {
                        verified = false;
                        break;
                    };
                    let range = unquoted(range, &lines);
                    let enclosing = if o.enclosing_range.is_empty() {
                        None
                    } else {
                        fit(&o.enclosing_range, &lines, d.position_encoding)
                    };
                    fitted.push(Fitted {
                        range,
                        symbol: &o.symbol,
                        roles: o.symbol_roles as u32,
                        enclosing,
                    });
                }
                if !verified {
                    fitted.clear();
                }
                let mut found = impl_blocks(&fitted, &lines);
                found.extra.extend(trait_selves(&fitted, &d.symbols));
                // Locals are per document: keyed with the path.
                let path = d.relative_path.as_bytes();
                let mut key = |s: &str, keys: &mut Interner| {
                    if crate::symbol::is_local(s) {
                        scratch.clear();
                        scratch.extend_from_slice(s.as_bytes());
                        scratch.push(0);
                        scratch.extend_from_slice(path);
                        keys.intern(&scratch)
                    } else {
                        keys.intern(s.as_bytes())
                    }
                };
                let mut occs = Vec::with_capacity(fitted.len());
                let mut extents = Vec::new();
                for f in &fitted {
                    let k = key(f.symbol, &mut keys);
                    let (l, c, el, ec) = f.range;
                    occs.push((l, c, el, ec, k, f.roles));
                    if f.roles & proto::ROLE_DEFINITION as u32 != 0
                        && let Some(e) = f.enclosing
                    {
                        extents.push((l, c, k, e));
                    }
                }
                for (symbol, (l, c), e) in found.blocks {
                    extents.push((l, c, key(symbol, &mut keys), e));
                }
                let extra: Vec<Row> = found
                    .extra
                    .into_iter()
                    .map(|(symbol, (l, c, el, ec), roles)| {
                        (l, c, el, ec, key(symbol, &mut keys), roles)
                    })
                    .collect();
                if !verified {
                    occs.clear();
                }
                for si in &d.symbols {
                    let k = key(&si.symbol, &mut keys);
                    infos.put(k, si, true);
                }
                let lang = match langs.iter().position(|l| *l == d.language) {
                    Some(i) => i as u32,
                    None => {
                        langs.push(d.language.clone());
                        (langs.len() - 1) as u32
                    }
                };
                occs.sort_unstable();
                extents.sort_unstable();
                occs.shrink_to_fit();
                extents.shrink_to_fit();
                docs_held += (occs.len() + extra.len()) as u64 * 24
                    + extents.len() as u64 * 28
                    + rel.as_os_str().len() as u64
                    + std::mem::size_of::<DocBuild>() as u64;
                docs.push(DocBuild {
                    path: rel.to_string_lossy().into_owned(),
                    hash,
                    size: st.size,
                    mtime_ns: st.mtime_ns,
                    ctime_ns: st.ctime_ns,
                    ino: st.ino,
                    verified,
                    lang,
                    occs,
                    extra,
                    extents,
                });
                let held = docs_held + keys.held() + infos.held();
                if held > opts.max_memory {
                    return Err(too_large(held));
                }
            }
        }
    }
    let Some(meta) = meta else {
        return Err(scip_err("no metadata (not a SCIP index?)".into()));
    };
    let tool = meta.tool_info.unwrap_or_default();
    // The same path twice: the last one wins.
    docs.sort_by(|a, b| a.path.cmp(&b.path));
    docs.dedup_by(|later, earlier| {
        if later.path == earlier.path {
            std::mem::swap(later, earlier);
            true
        } else {
            false
        }
    });
    // Implementation relationships whose target is a symbol of the index,
    // as keys (`A is_implementation B` makes A an implementor of B).
    let rels: Vec<(u32, u32)> = infos
        .rels
        .iter()
        .filter_map(|&(k, off, len)| {
            let t = &infos.targets[off as usize..off as usize + len as usize];
            keys.find(t).map(|t| (t, k))
        })
        .collect();
    infos.rels = Vec::new();
    infos.targets = Vec::new();
    keys.freeze();
    let nsyms = keys.len();
    let rows: usize = docs.iter().map(|d| d.occs.len() + d.extra.len()).sum();
    let held = docs_held + keys.held() + infos.held() + nsyms as u64 * 8 + rows as u64 * 12;
    if held > opts.max_memory {
        return Err(too_large(held));
    }
    // Symbol ids: keys in symbol-string order.
    let mut order: Vec<u32> = (0..nsyms as u32).collect();
    order.sort_unstable_by(|&a, &b| keys.get(a).cmp(keys.get(b)));
    let mut id_of = vec![0u32; nsyms];
    for (id, &k) in order.iter().enumerate() {
        id_of[k as usize] = id as u32;
    }
    let mut implementors: Vec<(u32, u32)> = rels
        .into_iter()
        .map(|(t, k)| (id_of[t as usize], id_of[k as usize]))
        .collect();
    implementors.sort_unstable();
    implementors.dedup();
    // The by-symbol order: (symbol id, document, row in the document's
    // occurrences then extra ones), sorted by symbol, document, position.
    let row = |&(_, d, i): &(u32, u32, u32)| -> Row {
        let d = &docs[d as usize];
        let i = i as usize;
        if i < d.occs.len() {
            d.occs[i]
        } else {
            d.extra[i - d.occs.len()]
        }
    };
    let mut bysym: Vec<(u32, u32, u32)> = Vec::with_capacity(rows);
    for (di, d) in docs.iter().enumerate() {
        for (i, r) in d.occs.iter().chain(&d.extra).enumerate() {
            bysym.push((id_of[r.4 as usize], di as u32, i as u32));
        }
    }
    bysym.sort_unstable_by(|a, b| {
        (a.0, a.1)
            .cmp(&(b.0, b.1))
            .then_with(|| row(a).cmp(&row(b)))
    });
    bysym.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1 && row(a) == row(b));
    // Names: the lower-cased source names of symbols defined in the index.
    let mut name_bytes: Vec<u8> = Vec::new();
    let mut name_rows: Vec<(u64, u32, u32)> = Vec::new();
    for run in bysym.chunk_by(|a, b| a.0 == b.0) {
        let id = run[0].0;
        let s = keys.str(order[id as usize]);
        if !s.contains('\u{0}')
            && crate::symbol::impl_self_type(s).is_none()
            && run
                .iter()
                .any(|o| row(o).5 & proto::ROLE_DEFINITION as u32 != 0)
            && let Some((n, _)) = crate::symbol::name_and_kind(s)
        {
            let n = n.to_lowercase();
            name_rows.push((name_bytes.len() as u64, n.len() as u32, id));
            name_bytes.extend_from_slice(n.as_bytes());
        }
    }
    let name_of = |r: &(u64, u32, u32)| &name_bytes[r.0 as usize..r.0 as usize + r.1 as usize];
    name_rows.sort_unstable_by(|a, b| name_of(a).cmp(name_of(b)).then(a.2.cmp(&b.2)));

    let occ_total: u64 = docs.iter().map(|d| d.occs.len() as u64).sum();
    let unverified = docs.iter().filter(|d| !d.verified).count() as u64;
    let built_at = source_size_time(scip);
    let (first_refused, refused_n) = (refused.first.take(), refused.count);
    let meta = Meta {
        format: FORMAT_VERSION,
        tool: tool.name,
        tool_version: tool.version,
        source: opts.source.unwrap_or(scip).to_path_buf(),
        source_size,
        source_mtime_ns,
        built_at,
        commit: opts.commit,
        root: root.to_path_buf(),
        documents: docs.len() as u64,
        verified: docs.len() as u64 - unverified,
        symbols: nsyms as u64,
        occurrences: occ_total,
        languages: langs,
        refused: refused_n,
        refused_first: first_refused,
        built_by: opts.built_by,
    };
    let meta_json = serde_json::to_vec(&meta).map_err(|e| io(std::io::Error::other(e)))?;
    // Section sizes, then the sections in order, straight to the file.
    let paths_len: u64 = docs.iter().map(|d| d.path.len() as u64).sum();
    let blob_len: u64 = (0..nsyms as u32).map(|k| infos.info(k).len() as u64).sum();
    let extents_n: u64 = docs.iter().map(|d| d.extents.len() as u64).sum();
    let lens: [(u64, u64); SECTIONS] = [
        (docs.len() as u64 * DOC_BYTES, docs.len() as u64),
        (occ_total * OCC_BYTES, occ_total),
        (nsyms as u64 * SYM_BYTES, nsyms as u64),
        (name_rows.len() as u64 * NAME_BYTES, name_rows.len() as u64),
        (bysym.len() as u64 * OCC_BYTES, bysym.len() as u64),
        (
            paths_len + keys.bytes.len() as u64 + name_bytes.len() as u64,
            paths_len + keys.bytes.len() as u64 + name_bytes.len() as u64,
        ),
        (blob_len, blob_len),
        (implementors.len() as u64 * 4, implementors.len() as u64),
        (extents_n * EXTENT_BYTES, extents_n),
        (meta_json.len() as u64, meta_json.len() as u64),
    ];
    let write = |f: &mut dyn Write| -> std::io::Result<()> {
        let mut head = Vec::with_capacity(HEADER_BYTES as usize);
        head.extend(MAGIC);
        head.extend(FORMAT_VERSION.to_le_bytes());
        head.extend(0u32.to_le_bytes());
        let mut off = HEADER_BYTES;
        for (bytes, count) in &lens {
            head.extend(off.to_le_bytes());
            head.extend(count.to_le_bytes());
            off += bytes;
        }
        f.write_all(&head)?;
        // Documents.
        let (mut path_off, mut occ_off) = (0u64, 0u64);
        for d in &docs {
            let mut rec = Vec::with_capacity(DOC_BYTES as usize);
            rec.extend(path_off.to_le_bytes());
            rec.extend((d.path.len() as u32).to_le_bytes());
            rec.extend((u32::from(d.verified) | (d.lang << 1)).to_le_bytes());
            rec.extend(d.hash.to_le_bytes());
            rec.extend(d.size.to_le_bytes());
            rec.extend(d.mtime_ns.to_le_bytes());
            rec.extend(occ_off.to_le_bytes());
            rec.extend((d.occs.len() as u32).to_le_bytes());
            rec.extend(0u32.to_le_bytes());
            rec.extend(d.ctime_ns.to_le_bytes());
            rec.extend(d.ino.to_le_bytes());
            f.write_all(&rec)?;
            path_off += d.path.len() as u64;
            occ_off += d.occs.len() as u64 * OCC_BYTES;
        }
        // Occurrences, by document.
        for d in &docs {
            for &(l, c, el, ec, k, r) in &d.occs {
                put_occ(f, l, c, el, ec, id_of[k as usize], r)?;
            }
        }
        // Symbols, in id order.
        let (mut name_off, mut info_off) = (paths_len, 0u64);
        let (mut at, mut imp) = (0usize, 0usize);
        for (id, &k) in order.iter().enumerate() {
            let id = id as u32;
            let s = keys.get(k);
            let occ_from = at;
            while at < bysym.len() && bysym[at].0 == id {
                at += 1;
            }
            let imp_from = imp;
            while imp < implementors.len() && implementors[imp].0 == id {
                imp += 1;
            }
            let info_len = infos.info(k).len() as u64;
            let mut rec = Vec::with_capacity(SYM_BYTES as usize);
            rec.extend(name_off.to_le_bytes());
            rec.extend((s.len() as u32).to_le_bytes());
            rec.extend(((at - occ_from) as u32).to_le_bytes());
            rec.extend((occ_from as u64 * OCC_BYTES).to_le_bytes());
            rec.extend(if info_len > 0 { info_off } else { 0 }.to_le_bytes());
            rec.extend((info_len as u32).to_le_bytes());
            rec.extend(((imp - imp_from) as u32).to_le_bytes());
            rec.extend((imp_from as u64 * 4).to_le_bytes());
            f.write_all(&rec)?;
            name_off += s.len() as u64;
            info_off += info_len;
        }
        // Names.
        let mut off = paths_len + keys.bytes.len() as u64;
        for r in &name_rows {
            f.write_all(&off.to_le_bytes())?;
            f.write_all(&r.1.to_le_bytes())?;
            f.write_all(&r.2.to_le_bytes())?;
            off += r.1 as u64;
        }
        // Occurrences by symbol.
        for o in &bysym {
            let (l, c, el, ec, _, r) = row(o);
            put_occ(f, l, c, el, ec, o.1, r)?;
        }
        // Strings: paths, symbols (id order), names (name order).
        for d in &docs {
            f.write_all(d.path.as_bytes())?;
        }
        for &k in &order {
            f.write_all(keys.get(k))?;
        }
        for r in &name_rows {
            f.write_all(name_of(r))?;
        }
        // Information, implementors, extents, metadata.
        for &k in &order {
            f.write_all(infos.info(k))?;
        }
        for &(_, i) in &implementors {
            f.write_all(&i.to_le_bytes())?;
        }
        for (di, d) in docs.iter().enumerate() {
            for &(l, c, k, (sl, sc, el, ec)) in &d.extents {
                for n in [di as u32, l, c, id_of[k as usize], sl, sc, el, ec] {
                    f.write_all(&n.to_le_bytes())?;
                }
            }
        }
        f.write_all(&meta_json)
    };
    write_atomically(out, write).map_err(|err| IndexError::Io {
        path: out.to_path_buf(),
        err,
    })?;
    Ok(Built {
        documents: docs.len() as u64,
        unverified,
        symbols: nsyms as u64,
        occurrences: occ_total,
        refused: refused_n,
    })
}

/// When an `index.scip` was written (seconds since the epoch; now when
/// unknown).
fn source_size_time(scip: &Path) -> u64 {
    std::fs::metadata(scip)
        .and_then(|m| m.modified())
        .unwrap_or_else(|_| SystemTime::now())
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Documents refused for where they point: how many, and the first.
#[derive(Default)]
struct Refused {
    count: u64,
    first: Option<String>,
}

impl Refused {
    fn add(&mut self, path: &str) {
        self.count += 1;
        if self.first.is_none() {
            self.first = Some(path.chars().take(200).collect());
        }
    }
}

fn put_occ(
    f: &mut dyn Write,
    l: u32,
    c: u32,
    el: u32,
    ec: u32,
    x: u32,
    r: u32,
) -> std::io::Result<()> {
    let mut b = [0u8; OCC_BYTES as usize];
    for (i, n) in [l, c, el, ec, x, r].into_iter().enumerate() {
        b[i * 4..i * 4 + 4].copy_from_slice(&n.to_le_bytes());
    }
    f.write_all(&b)
}

/// Write `out` through `write` into a temporary file beside it, flushed to
/// disk, then renamed over it: a reader never sees half a file, and a
/// failure leaves the old one.
fn write_atomically(
    out: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = out.with_extension(format!("tmp{}", std::process::id()));
    let r = (|| {
        let mut f = std::io::BufWriter::with_capacity(1 << 20, File::create(&tmp)?);
        write(&mut f)?;
        let f = f.into_inner().map_err(|e| e.into_error())?;
        f.sync_all()
    })();
    if let Err(e) = r {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    std::fs::rename(&tmp, out)
}

/// A converted index, open for lookups.
pub struct Index {
    file: File,
    path: PathBuf,
    len: u64,
    /// (offset, count) of each section, in [`Writer::finish`]'s order.
    sections: [(u64, u64); SECTIONS],
    meta: Meta,
    /// Bytes read since opening, and the largest single read (the memory
    /// one lookup holds): for the memory-bound test and `status`.
    read_total: AtomicU64,
    read_max: AtomicU64,
}

const S_DOCS: usize = 0;
const S_OCCS: usize = 1;
const S_SYMS: usize = 2;
const S_NAMES: usize = 3;
const S_SYMOCCS: usize = 4;
const S_STRINGS: usize = 5;
const S_BLOB: usize = 6;
const S_IDS: usize = 7;
const S_EXTENTS: usize = 8;
const S_META: usize = 9;

fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(b[i..i + 4].try_into().unwrap_or_default())
}
fn u64_at(b: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or_default())
}

fn occ_from(b: &[u8]) -> (Occ, u32) {
    let o = Occ {
        line: u32_at(b, 0),
        col: u32_at(b, 4),
        end_line: u32_at(b, 8),
        end_col: u32_at(b, 12),
        symbol: u32_at(b, 16),
        roles: u32_at(b, 20),
    };
    (o, o.symbol)
}

/// Most records one lookup reads at once (a document's or a symbol's
/// occurrences beyond this are read in further slices by the caller).
pub const MAX_RECORDS_PER_READ: u64 = 65_536;

impl Index {
    /// Open a converted index: reads the header and the metadata only.
    pub fn open(path: &Path) -> Result<Index, IndexError> {
        let fmt = |why: &str| IndexError::Format {
            path: path.to_path_buf(),
            why: why.to_string(),
        };
        let file = File::open(path).map_err(|err| IndexError::Io {
            path: path.to_path_buf(),
            err,
        })?;
        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
        if len < HEADER_BYTES {
            return Err(fmt("shorter than its header"));
        }
        let mut head = vec![0u8; HEADER_BYTES as usize];
        file.read_exact_at(&mut head, 0)
            .map_err(|_| fmt("header unreadable"))?;
        if &head[..8] != MAGIC {
            return Err(fmt("wrong magic"));
        }
        if u32_at(&head, 8) != FORMAT_VERSION {
            return Err(fmt("another format version"));
        }
        let mut sections = [(0u64, 0u64); SECTIONS];
        for (i, s) in sections.iter_mut().enumerate() {
            *s = (u64_at(&head, 16 + i * 16), u64_at(&head, 24 + i * 16));
        }
        let (moff, mlen) = sections[S_META];
        if moff.checked_add(mlen).is_none_or(|e| e != len) || mlen > 64 * 1024 * 1024 {
            return Err(fmt("truncated (its sections do not end at its length)"));
        }
        let mut ix = Index {
            file,
            path: path.to_path_buf(),
            len,
            sections,
            meta: Meta {
                format: 0,
                tool: String::new(),
                tool_version: String::new(),
                source: PathBuf::new(),
                source_size: 0,
                source_mtime_ns: 0,
                built_at: 0,
                commit: None,
                root: PathBuf::new(),
                documents: 0,
                verified: 0,
                symbols: 0,
                occurrences: 0,
                languages: Vec::new(),
                refused: 0,
                refused_first: None,
                built_by: None,
            },
            read_total: AtomicU64::new(0),
            read_max: AtomicU64::new(0),
        };
        let m = ix
            .read(moff, mlen)
            .map_err(|_| fmt("metadata unreadable"))?;
        ix.meta = serde_json::from_slice(&m).map_err(|_| fmt("metadata does not parse"))?;
        if ix.meta.documents != sections[S_DOCS].1 || ix.meta.symbols != sections[S_SYMS].1 {
            return Err(fmt("metadata and tables disagree"));
        }
        Ok(ix)
    }

    pub fn meta(&self) -> &Meta {
        &self.meta
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// (total bytes read since opening, largest single read).
    pub fn reads(&self) -> (u64, u64) {
        (
            self.read_total.load(Ordering::Relaxed),
            self.read_max.load(Ordering::Relaxed),
        )
    }

    fn read(&self, off: u64, n: u64) -> std::io::Result<Vec<u8>> {
        if off.checked_add(n).is_none_or(|e| e > self.len) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "read past the end of the index",
            ));
        }
        let mut buf = vec![0u8; n as usize];
        self.file.read_exact_at(&mut buf, off)?;
        self.read_total.fetch_add(n, Ordering::Relaxed);
        self.read_max.fetch_max(n, Ordering::Relaxed);
        Ok(buf)
    }

    fn record(&self, section: usize, size: u64, i: u64) -> std::io::Result<Vec<u8>> {
        let (off, count) = self.sections[section];
        if i >= count {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "record out of range",
            ));
        }
        self.read(off + i * size, size)
    }

    fn string(&self, off: u64, len: u64) -> std::io::Result<String> {
        let (base, count) = self.sections[S_STRINGS];
        if off.checked_add(len).is_none_or(|e| e > count) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "string out of range",
            ));
        }
        String::from_utf8(self.read(base + off, len)?)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
    }

    /// The number of documents.
    pub fn documents(&self) -> u32 {
        self.sections[S_DOCS].1 as u32
    }

    /// Document `i` (in path order).
    pub fn doc_at(&self, i: u32) -> std::io::Result<Doc> {
        let b = self.record(S_DOCS, DOC_BYTES, i as u64)?;
        let flags = u32_at(&b, 12);
        let lang = (flags >> 1) as usize;
        let d = Doc {
            id: i,
            path: self.string(u64_at(&b, 0), u32_at(&b, 8) as u64)?,
            verified: flags & 1 == 1,
            language: self.meta.languages.get(lang).cloned().unwrap_or_default(),
            hash: u64_at(&b, 16),
            size: u64_at(&b, 24),
            mtime_ns: u64_at(&b, 32),
            occ_off: u64_at(&b, 40),
            occ_count: u32_at(&b, 48),
            ctime_ns: u64_at(&b, 56),
            ino: u64_at(&b, 64),
        };
        let (_, total) = self.sections[S_OCCS];
        if d.occ_off / OCC_BYTES + d.occ_count as u64 > total {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "document occurrences out of range",
            ));
        }
        Ok(d)
    }

    /// The document at `path` (relative to the root).
    pub fn document(&self, path: &str) -> std::io::Result<Option<Doc>> {
        let (mut lo, mut hi) = (0u64, self.sections[S_DOCS].1);
        while lo < hi {
            let mid = (lo + hi) / 2;
            let b = self.record(S_DOCS, DOC_BYTES, mid)?;
            let p = self.string(u64_at(&b, 0), u32_at(&b, 8) as u64)?;
            match p.as_str().cmp(path) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return self.doc_at(mid as u32).map(Some),
            }
        }
        Ok(None)
    }

    /// Occurrences `from..from+n` of a document (position order).
    pub fn doc_occurrences(&self, d: &Doc, from: u32, n: u32) -> std::io::Result<Vec<Occ>> {
        let from = from.min(d.occ_count);
        let n = (n.min(d.occ_count - from) as u64).min(MAX_RECORDS_PER_READ);
        let base = self.sections[S_OCCS].0 + d.occ_off;
        let b = self.read(base + from as u64 * OCC_BYTES, n * OCC_BYTES)?;
        Ok(b.chunks_exact(OCC_BYTES as usize)
            .map(|c| occ_from(c).0)
            .collect())
    }

    /// The occurrences on `line` (0-based) of a document: a binary search
    /// over its records, then the line's run.
    pub fn occurrences_on_line(&self, d: &Doc, line: u32) -> std::io::Result<Vec<Occ>> {
        let base = self.sections[S_OCCS].0 + d.occ_off;
        let at = |i: u32| -> std::io::Result<Occ> {
            Ok(occ_from(&self.read(base + i as u64 * OCC_BYTES, OCC_BYTES)?).0)
        };
        let (mut lo, mut hi) = (0u32, d.occ_count);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if at(mid)?.line < line {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let mut out = Vec::new();
        let mut i = lo;
        while i < d.occ_count && out.len() < 4096 {
            let o = at(i)?;
            if o.line != line {
                break;
            }
            out.push(o);
            i += 1;
        }
        Ok(out)
    }

    /// A document's extents (definitions and impl blocks with the range
    /// they enclose), in position order, at most [`MAX_RECORDS_PER_READ`].
    pub fn extents(&self, d: &Doc) -> std::io::Result<Vec<Extent>> {
        let count = self.sections[S_EXTENTS].1;
        let doc_of = |i: u64| -> std::io::Result<u32> {
            Ok(u32_at(&self.record(S_EXTENTS, EXTENT_BYTES, i)?, 0))
        };
        let (mut lo, mut hi) = (0u64, count);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if doc_of(mid)? < d.id {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let mut out = Vec::new();
        let mut i = lo;
        while i < count && (out.len() as u64) < MAX_RECORDS_PER_READ {
            let n = (count - i).min(1024);
            let base = self.sections[S_EXTENTS].0 + i * EXTENT_BYTES;
            let b = self.read(base, n * EXTENT_BYTES)?;
            for r in b.chunks_exact(EXTENT_BYTES as usize) {
                if u32_at(r, 0) != d.id {
                    return Ok(out);
                }
                let at = |k: usize| u32_at(r, 4 * k);
                out.push(Extent {
                    line: at(1),
                    col: at(2),
                    symbol: at(3),
                    start_line: at(4),
                    start_col: at(5),
                    end_line: at(6),
                    end_col: at(7),
                });
            }
            i += n;
        }
        Ok(out)
    }

    /// The number of symbols.
    pub fn symbols(&self) -> u32 {
        self.sections[S_SYMS].1 as u32
    }

    /// Symbol `id`.
    pub fn symbol_at(&self, id: u32) -> std::io::Result<Sym> {
        let b = self.record(S_SYMS, SYM_BYTES, id as u64)?;
        Ok(Sym {
            id,
            symbol: self.string(u64_at(&b, 0), u32_at(&b, 8) as u64)?,
            occ_count: u32_at(&b, 12),
            occ_off: u64_at(&b, 16),
            info_off: u64_at(&b, 24),
            info_len: u32_at(&b, 32),
            impl_count: u32_at(&b, 36),
            impl_off: u64_at(&b, 40),
        })
    }

    /// The symbol named exactly `symbol` (a SCIP symbol string).
    pub fn symbol(&self, symbol: &str) -> std::io::Result<Option<Sym>> {
        let (mut lo, mut hi) = (0u64, self.sections[S_SYMS].1);
        while lo < hi {
            let mid = (lo + hi) / 2;
            let b = self.record(S_SYMS, SYM_BYTES, mid)?;
            let s = self.string(u64_at(&b, 0), u32_at(&b, 8) as u64)?;
            match s.as_str().cmp(symbol) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return self.symbol_at(mid as u32).map(Some),
            }
        }
        Ok(None)
    }

    /// A symbol's occurrences `from..from+n` (document, then position).
    pub fn symbol_occurrences(&self, s: &Sym, from: u32, n: u32) -> std::io::Result<Vec<SymOcc>> {
        let from = from.min(s.occ_count);
        let n = (n.min(s.occ_count - from) as u64).min(MAX_RECORDS_PER_READ);
        let (base, count) = self.sections[S_SYMOCCS];
        if s.occ_off / OCC_BYTES + from as u64 + n > count {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "symbol occurrences out of range",
            ));
        }
        let b = self.read(base + s.occ_off + from as u64 * OCC_BYTES, n * OCC_BYTES)?;
        Ok(b.chunks_exact(OCC_BYTES as usize)
            .map(|c| {
                let (mut occ, doc) = occ_from(c);
                occ.symbol = s.id;
                SymOcc { doc, occ }
            })
            .collect())
    }

    /// What the index says about a symbol beyond its occurrences.
    pub fn info(&self, s: &Sym) -> std::io::Result<SymbolInfo> {
        if s.info_len == 0 {
            return Ok(SymbolInfo::default());
        }
        let (base, count) = self.sections[S_BLOB];
        if s.info_off + s.info_len as u64 > count {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "symbol info out of range",
            ));
        }
        let b = self.read(base + s.info_off, s.info_len as u64)?;
        serde_json::from_slice(&b)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
    }

    /// The symbols that implement `s` (at most `max`).
    pub fn implementors(&self, s: &Sym, max: u32) -> std::io::Result<Vec<u32>> {
        let n = s.impl_count.min(max) as u64;
        let (base, count) = self.sections[S_IDS];
        if s.impl_off / 4 + n > count {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "implementors out of range",
            ));
        }
        let b = self.read(base + s.impl_off, n * 4)?;
        Ok(b.chunks_exact(4).map(|c| u32_at(c, 0)).collect())
    }

    /// Symbols defined in the index whose source name starts with `prefix`
    /// (case-insensitive), at most `max`, in name order.
    pub fn symbols_named(&self, prefix: &str, max: usize) -> std::io::Result<Vec<u32>> {
        let want = prefix.to_lowercase();
        let name_at = |i: u64| -> std::io::Result<(String, u32)> {
            let b = self.record(S_NAMES, NAME_BYTES, i)?;
            Ok((
                self.string(u64_at(&b, 0), u32_at(&b, 8) as u64)?,
                u32_at(&b, 12),
            ))
        };
        let count = self.sections[S_NAMES].1;
        let (mut lo, mut hi) = (0u64, count);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if name_at(mid)?.0.as_str() < want.as_str() {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let mut out = Vec::new();
        let mut i = lo;
        while i < count && out.len() < max {
            let (n, id) = name_at(i)?;
            if !n.starts_with(&want) {
                break;
            }
            out.push(id);
            i += 1;
        }
        Ok(out)
    }
}
