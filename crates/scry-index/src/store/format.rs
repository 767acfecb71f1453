//! The layout of a converted index: one file of fixed-width, sorted
//! tables, little-endian, written by `convert::write` and read by
//! [`super::read`]:
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
//! (JSON). Positions are stored 0-based in characters. The header is the
//! magic, [`FORMAT_VERSION`], and each section's (offset, count) in the
//! `S_*` order.
//!
//! Invariants: a record's width and a section's place are defined here
//! once, for the writer and the reader alike; a file of another
//! [`FORMAT_VERSION`] is refused by the reader and rebuilt by the cache;
//! a decoder is handed a whole record (read at its fixed width).

use std::io::Write;

use super::Occ;

pub(super) const MAGIC: &[u8; 8] = b"SCRYSCIP";
/// The converted form's version; a cache of another version is rebuilt.
pub const FORMAT_VERSION: u32 = 3;
pub(super) const HEADER_BYTES: u64 = 8 + 4 + 4 + SECTIONS as u64 * 16;
pub(super) const SECTIONS: usize = 10;
pub(super) const DOC_BYTES: u64 = 72;
pub(super) const OCC_BYTES: u64 = 24;
pub(super) const SYM_BYTES: u64 = 48;
pub(super) const NAME_BYTES: u64 = 16;
pub(super) const EXTENT_BYTES: u64 = 32;

/// Each section's place in the header.
pub(super) const S_DOCS: usize = 0;
pub(super) const S_OCCS: usize = 1;
pub(super) const S_SYMS: usize = 2;
pub(super) const S_NAMES: usize = 3;
pub(super) const S_SYMOCCS: usize = 4;
pub(super) const S_STRINGS: usize = 5;
pub(super) const S_BLOB: usize = 6;
pub(super) const S_IDS: usize = 7;
pub(super) const S_EXTENTS: usize = 8;
pub(super) const S_META: usize = 9;

/// Little-endian numbers at byte `i` of a record.
pub(super) fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(b[i..i + 4].try_into().unwrap_or_default())
}
pub(super) fn u64_at(b: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or_default())
}

/// An occurrence record: the occurrence and its fifth number (a
/// document's occurrence: the symbol id; a symbol's: the document id).
pub(super) fn occ_from(b: &[u8]) -> (Occ, u32) {
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

/// Write an occurrence record (`x`: the symbol id, or in the by-symbol
/// table the document id).
pub(super) fn put_occ(
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
