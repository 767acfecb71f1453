//! What freshness compares: a file's [`Stamp`] (size, modification and
//! status-change times, inode: `scry_base::disk`'s, the one stamp) before
//! hashing it, and its [`content_hash`]. Recorded per document when converting
//! ([`super::convert`]) and compared by the cache before a document is
//! answered from.
//!
//! Invariants: only regular files get a stamp (symlinks followed); a time
//! that cannot be read is 0, never an error. [`Before`] is what the files
//! were as an indexer started: a document whose file differs from it at
//! conversion was written while the indexer ran.

use std::collections::HashMap;
use std::path::Path;
use std::time::UNIX_EPOCH;

use scry_base::disk::{Stamp, stamp};

/// FNV-1a, 64 bits, of a file's bytes: what freshness compares.
pub fn content_hash(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
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

/// The stamps of the files under a root as an indexer starts, by path
/// relative to the root: what the walker walks (ignored and vendored
/// files skipped), [`Before::MAX_FILES`] at most. A file written while the
/// indexer ran differs from its stamp here when the index is converted,
/// and is recorded stale ([`super::convert`]), not as the index's text.
#[derive(Debug, Default)]
pub struct Before(HashMap<String, Stamp>);

impl Before {
    /// The most files stamped (the walk stops there).
    pub const MAX_FILES: usize = 200_000;

    /// The files under `root` (canonical) now.
    pub fn walk(root: &Path) -> Before {
        let mut seen = HashMap::new();
        for f in scry_base::walk::Walker::new()
            .skip_vendored()
            .files(root)
            .take(Self::MAX_FILES)
        {
            let (Some(st), Ok(rel)) = (stamp(&f), f.strip_prefix(root)) else {
                continue;
            };
            if let Some(rel) = rel.to_str() {
                seen.insert(rel.to_string(), st);
            }
        }
        Before(seen)
    }

    /// `rel`'s stamp when the indexer started, when it was walked.
    pub fn get(&self, rel: &str) -> Option<&Stamp> {
        self.0.get(rel)
    }

    /// How many files were stamped.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether no file was stamped.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}
