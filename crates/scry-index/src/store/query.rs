//! Lookups over an open converted index: a document by path, a
//! document's occurrences (a slice, or one line's) and extents, a symbol
//! by its string, its occurrences, information and implementors, and
//! symbols by source-name prefix.
//!
//! Invariants: every lookup is a binary search by `read_at` over one
//! table, then a bounded run; what one lookup reads is at most
//! [`MAX_RECORDS_PER_READ`] records (a line's occurrences: 4096), the
//! caller reading further slices; a slice or offset outside its section is
//! an error (`InvalidData`), never a panic.

use super::format::{
    DOC_BYTES, EXTENT_BYTES, NAME_BYTES, OCC_BYTES, S_BLOB, S_DOCS, S_EXTENTS, S_IDS, S_NAMES,
    S_OCCS, S_SYMOCCS, S_SYMS, SYM_BYTES, occ_from, u32_at, u64_at,
};
use super::read::Index;
use super::{Doc, Extent, Occ, Sym, SymOcc, SymbolInfo};

/// Most records one lookup reads at once (a document's or a symbol's
/// occurrences beyond this are read in further slices by the caller).
pub const MAX_RECORDS_PER_READ: u64 = 65_536;

impl Index {
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
