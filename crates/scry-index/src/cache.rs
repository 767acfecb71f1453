//! Where a workspace's index lives and whether its documents still match
//! the disk.
//!
//! Layout: `<cache>/index/<key>/` with `<key>` a hash of the canonical
//! root: `index.scip` (what `scry index` had the indexer write) and
//! `index.db` (its converted form); a configured CI-built index is
//! converted to `ci.db` there, the `index.scip` itself never written.
//! [`load`] converts again when the `index.scip`'s size or time differs
//! from the one the converted file records.
//!
//! Freshness ([`Fresh`]): a document is current when its file's size and
//! modification time are those recorded, else when its content hash is;
//! a file changed, missing or not verified at conversion is stale. Results
//! are remembered per (size, mtime) so a question re-hashes only files that
//! changed since the last one.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::store::{self, ConvertOptions, Doc, Index, IndexError, content_hash, stat};

/// The directory of `root`'s index under `cache` (`root` canonical).
pub fn dir_for(cache: &Path, root: &Path) -> PathBuf {
    let key = content_hash(root.as_os_str().as_encoded_bytes());
    cache.join("index").join(format!("{key:016x}"))
}

/// The default cache directory (`$SCRY_CACHE_DIR`, XDG, `~/.cache/scry`).
pub fn default_cache() -> Option<PathBuf> {
    scry_workspace::dirs::cache()
}

/// Where an index comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// Built by `scry index` into the cache.
    Built(PathBuf),
    /// A configured (CI-built) `index.scip`, read as is.
    Configured(PathBuf),
}

impl Source {
    pub fn scip(&self) -> &Path {
        match self {
            Source::Built(p) | Source::Configured(p) => p,
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Source::Built(_) => "built by `scry index`".into(),
            Source::Configured(p) => format!("configured file {}", p.display()),
        }
    }
}

/// The index of `root` (canonical) from `configured` when given, else the
/// one `scry index` built; converted first when the converted form is
/// missing, of another format or older than its `index.scip`. `Ok(None)`
/// when there is none.
pub fn load(
    cache: &Path,
    root: &Path,
    configured: Option<&Path>,
) -> Result<Option<(Index, Source)>, IndexError> {
    let dir = dir_for(cache, root);
    let (scip, db, source) = match configured {
        Some(p) => (
            p.to_path_buf(),
            dir.join("ci.db"),
            Source::Configured(p.to_path_buf()),
        ),
        None => (
            dir.join("index.scip"),
            dir.join("index.db"),
            Source::Built(dir.join("index.scip")),
        ),
    };
    let Some((size, mtime)) = stat(&scip) else {
        if configured.is_some() {
            return Err(IndexError::Io {
                path: scip,
                err: std::io::Error::new(std::io::ErrorKind::NotFound, "not found"),
            });
        }
        return Ok(None);
    };
    if let Ok(ix) = Index::open(&db) {
        let m = ix.meta();
        if m.source == scip && m.source_size == size && m.source_mtime_ns == mtime && m.root == root
        {
            return Ok(Some((ix, source)));
        }
    }
    let commit = std::fs::read_to_string(dir.join("commit"))
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty() && configured.is_none());
    store::convert(
        &scip,
        &db,
        ConvertOptions {
            root,
            commit,
            progress: &mut |_| {},
        },
    )?;
    Ok(Some((Index::open(&db)?, source)))
}

/// Remembered freshness of files, by (size, mtime).
#[derive(Default)]
pub struct Fresh {
    seen: Mutex<HashMap<PathBuf, (u64, u64, bool)>>,
}

impl Fresh {
    /// Whether `d`'s file under `root` is as the index recorded it.
    pub fn is_fresh(&self, root: &Path, d: &Doc) -> bool {
        if !d.verified {
            return false;
        }
        let abs = root.join(&d.path);
        let Some((size, mtime)) = stat(&abs) else {
            return false;
        };
        if size == d.size && mtime == d.mtime_ns {
            return true;
        }
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&(s, m, f)) = seen.get(&abs)
            && s == size
            && m == mtime
        {
            return f;
        }
        let fresh = size == d.size
            && size <= store::MAX_SOURCE_BYTES
            && std::fs::read(&abs).is_ok_and(|b| content_hash(&b) == d.hash);
        seen.insert(abs, (size, mtime, fresh));
        fresh
    }

    /// How many of the index's documents are no longer as recorded (stat
    /// first, content hash when the stat differs), of how many.
    pub fn changed(&self, root: &Path, ix: &Index) -> (u32, u32) {
        let n = ix.documents();
        let mut changed = 0;
        for i in 0..n {
            match ix.doc_at(i) {
                Ok(d) if self.is_fresh(root, &d) => {}
                _ => changed += 1,
            }
        }
        (changed, n)
    }
}
