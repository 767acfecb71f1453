//! What a conversion holds while it reads: each symbol string once
//! ([`Interner`], keyed by first-seen order) and the symbols' information
//! as its JSON ([`Infos`]).
//!
//! Invariant: each holds its bytes in a few flat vectors and says how much
//! it holds ([`Interner::held`], [`Infos::held`]), which
//! [`super::convert`] counts against the memory cap.

use std::collections::HashMap;

use crate::proto;
use crate::store::SymbolInfo;
use crate::store::stamp::content_hash;

const NONE: u32 = u32::MAX;

/// The real size of a hash table of `u64 → u32` that holds `cap` entries
/// (hashbrown: a power of two of 16-byte buckets at most 7/8 full, and a
/// control byte each).
fn table_bytes(cap: usize) -> u64 {
    if cap == 0 {
        return 0;
    }
    let buckets = if cap < 8 {
        (cap + 1).next_power_of_two()
    } else {
        (cap * 8).div_ceil(7).next_power_of_two()
    };
    (buckets * 17 + 16) as u64
}

/// Symbol strings, each held once: one byte arena in first-seen order (a
/// string's key is its place), and a hash index over it.
#[derive(Default)]
pub(super) struct Interner {
    pub(super) bytes: Vec<u8>,
    /// End of each key's bytes in `bytes`.
    ends: Vec<u64>,
    /// FNV hash → the latest key with it; `next` chains the others.
    index: HashMap<u64, u32>,
    next: Vec<u32>,
    /// A local's key being made ([`Interner::symbol`]; not counted held).
    scratch: Vec<u8>,
}

impl Interner {
    pub(super) fn len(&self) -> usize {
        self.ends.len()
    }

    pub(super) fn get(&self, k: u32) -> &[u8] {
        let k = k as usize;
        let start = if k == 0 { 0 } else { self.ends[k - 1] as usize };
        &self.bytes[start..self.ends[k] as usize]
    }

    pub(super) fn str(&self, k: u32) -> &str {
        // Only ever fed `&str`s, so always UTF-8.
        std::str::from_utf8(self.get(k)).unwrap_or("")
    }

    pub(super) fn find(&self, s: &[u8]) -> Option<u32> {
        let mut k = *self.index.get(&content_hash(s))?;
        while k != NONE {
            if self.get(k) == s {
                return Some(k);
            }
            k = self.next[k as usize];
        }
        None
    }

    pub(super) fn intern(&mut self, s: &[u8]) -> u32 {
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

    /// The key of symbol `s` in the document at `path`: locals are per
    /// document, keyed with the path (`s`, NUL, `path`).
    pub(super) fn symbol(&mut self, s: &str, path: &[u8]) -> u32 {
        if crate::symbol::is_local(s) {
            let mut scratch = std::mem::take(&mut self.scratch);
            scratch.clear();
            scratch.extend_from_slice(s.as_bytes());
            scratch.push(0);
            scratch.extend_from_slice(path);
            let k = self.intern(&scratch);
            self.scratch = scratch;
            k
        } else {
            self.intern(s.as_bytes())
        }
    }

    /// Drop the hash index (no more lookups).
    pub(super) fn freeze(&mut self) {
        self.index = HashMap::new();
        self.next = Vec::new();
    }

    /// Bytes held (capacities; the hash index at its real size).
    pub(super) fn held(&self) -> u64 {
        (self.bytes.capacity() + self.ends.capacity() * 8 + self.next.capacity() * 4) as u64
            + table_bytes(self.index.capacity())
    }

    /// What [`Interner::reserve`] would allocate for `n` more keys of
    /// `bytes` in all (the old and the new hash index are both held while
    /// it is rebuilt).
    pub(super) fn growth(&self, n: usize, bytes: usize) -> u64 {
        let grown = |cap: usize, len: usize, more: usize, size: usize| {
            if len + more > cap {
                (cap * 2).max(len + more) * size
            } else {
                0
            }
        };
        let index = if self.index.len() + n > self.index.capacity() {
            table_bytes(self.index.len() + n)
        } else {
            0
        };
        (grown(self.bytes.capacity(), self.bytes.len(), bytes, 1)
            + grown(self.ends.capacity(), self.ends.len(), n, 8)
            + grown(self.next.capacity(), self.next.len(), n, 4)) as u64
            + index
    }

    /// Room for `n` more keys of `bytes` in all, so that none grows while
    /// they are added.
    pub(super) fn reserve(&mut self, n: usize, bytes: usize) {
        self.bytes.reserve(bytes);
        self.ends.reserve(n);
        self.next.reserve(n);
        self.index.reserve(n);
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
pub(super) struct Infos {
    /// Per key: (offset, length) in `blob`; length [`NONE`]: no
    /// information seen; 0: seen, nothing to say.
    at: Vec<(u64, u32)>,
    blob: Vec<u8>,
    /// (implementor key, target string's offset and length in `targets`).
    pub(super) rels: Vec<(u32, u64, u32)>,
    pub(super) targets: Vec<u8>,
}

impl Infos {
    /// Record `si` for key `k`; an external symbol's (`replace: false`)
    /// only when none was recorded.
    pub(super) fn put(&mut self, k: u32, si: &proto::SymbolInformation, replace: bool) {
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

    pub(super) fn info(&self, k: u32) -> &[u8] {
        match self.at.get(k as usize) {
            Some(&(off, len)) if len != NONE && len > 0 => {
                &self.blob[off as usize..off as usize + len as usize]
            }
            _ => &[],
        }
    }

    /// At most what [`Infos::put`] of `si` adds: its JSON (each byte of
    /// its strings escaped to at most six) and its relationships' targets,
    /// with room for the per-key table to double.
    pub(super) fn growth(&self, si: &proto::SymbolInformation) -> u64 {
        let strings: usize = si.documentation.iter().map(String::len).sum::<usize>()
            + si.display_name.len()
            + si.signature_documentation
                .as_ref()
                .map_or(0, |d| d.text.len())
            + si.relationships
                .iter()
                .map(|r| r.symbol.len())
                .sum::<usize>();
        let at = if self.at.len() == self.at.capacity() {
            self.at.capacity().max(4) * 16
        } else {
            0
        };
        (6 * strings + 256 + si.relationships.len() * 16 + at) as u64
    }

    pub(super) fn held(&self) -> u64 {
        (self.at.capacity() * 16
            + self.blob.capacity()
            + self.rels.capacity() * 16
            + self.targets.capacity()) as u64
    }
}
