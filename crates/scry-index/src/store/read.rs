//! An open converted index ([`Index`]): its header and metadata, checked
//! reads at an offset, and the records decoded ([`Index::doc_at`],
//! [`Index::symbol_at`]). Lookups over it are in [`super::query`].
//!
//! Invariants: opening reads the fixed header and the metadata only, so it
//! costs the same whatever the index holds, and memory held is the header,
//! the metadata and what one answer reads; a file that is not a converted
//! index of this format version, or whose sections do not end at its
//! length, is refused ([`IndexError::Format`]); every read is checked
//! against the file's length and every record and string against its
//! section (a truncated or corrupt file is an error, not garbage).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::format::{
    DOC_BYTES, FORMAT_VERSION, HEADER_BYTES, MAGIC, OCC_BYTES, S_DOCS, S_META, S_OCCS, S_STRINGS,
    S_SYMS, SECTIONS, SYM_BYTES, u32_at, u64_at,
};
use super::{Doc, IndexError, Meta, Sym};

/// A converted index, open for lookups.
pub struct Index {
    file: File,
    path: PathBuf,
    len: u64,
    /// (offset, count) of each section, in the header's order
    /// ([`super::format`]).
    pub(super) sections: [(u64, u64); SECTIONS],
    meta: Meta,
    /// Bytes read since opening, and the largest single read (the memory
    /// one lookup holds): for the memory-bound test and `status`.
    read_total: AtomicU64,
    read_max: AtomicU64,
}

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
        scry_base::platform::fs::read_exact_at(&file, &mut head, 0)
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

    pub(super) fn read(&self, off: u64, n: u64) -> std::io::Result<Vec<u8>> {
        if off.checked_add(n).is_none_or(|e| e > self.len) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "read past the end of the index",
            ));
        }
        let mut buf = vec![0u8; n as usize];
        scry_base::platform::fs::read_exact_at(&self.file, &mut buf, off)?;
        self.read_total.fetch_add(n, Ordering::Relaxed);
        self.read_max.fetch_max(n, Ordering::Relaxed);
        Ok(buf)
    }

    pub(super) fn record(&self, section: usize, size: u64, i: u64) -> std::io::Result<Vec<u8>> {
        let (off, count) = self.sections[section];
        if i >= count {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "record out of range",
            ));
        }
        self.read(off + i * size, size)
    }

    pub(super) fn string(&self, off: u64, len: u64) -> std::io::Result<String> {
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
}
