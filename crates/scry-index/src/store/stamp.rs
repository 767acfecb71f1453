//! What freshness compares: a file's [`Stamp`] (size, modification and
//! status-change times, inode) before hashing it, and its
//! [`content_hash`]. Recorded per document when converting
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
    /// The stamp of the file at `path` whose metadata (links followed) is
    /// `m`: the change time and file number come from
    /// `scry_base::platform::fs::change_stamp` (status-change time and
    /// inode on Unix; change time and file index on Windows).
    pub fn of(path: &Path, m: &std::fs::Metadata) -> Stamp {
        let change = scry_base::platform::fs::change_stamp(path, m);
        Stamp {
            size: m.len(),
            mtime_ns: mtime_ns(m).unwrap_or(0),
            ctime_ns: change.ctime_ns,
            ino: change.file_id,
        }
    }
}

/// A regular file's [`Stamp`] (symlinks followed).
pub fn stamp(path: &Path) -> Option<Stamp> {
    let m = std::fs::metadata(path).ok()?;
    m.is_file().then(|| Stamp::of(path, &m))
}

/// A file's modification time in nanoseconds since the epoch.
pub(super) fn mtime_ns(m: &std::fs::Metadata) -> Option<u64> {
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
