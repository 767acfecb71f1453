//! Where a workspace's index lives and whether its documents still match
//! the disk.
//!
//! Layout: `<cache>/index/<key>/` with `<key>` a hash of the canonical
//! root: `index.scip` (what `scry index` had the indexer write) and
//! `index.db` (its converted form); a configured CI-built index is
//! converted to `ci.db` there, the `index.scip` itself never written.
//! [`load`] converts again when the `index.scip`'s size or time differs
//! from the one the converted file records, one conversion at a time in a
//! process.
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

    /// `scry index`, or `CI index build/index.scip` (relative to `root`).
    pub fn describe(&self, root: &Path) -> String {
        match self {
            Source::Built(_) => "scry index".into(),
            Source::Configured(p) => {
                format!("CI index {}", scry_workspace::paths::display(p, root))
            }
        }
    }
}

/// Which index of `root` to read: `configured` (a CI-built `index.scip`)
/// when it is newer than the one `scry index` built, or there is none;
/// `None`: the built one. A configured file that is missing is picked only
/// when nothing was built (so that its absence is said).
pub fn pick<'a>(cache: &Path, root: &Path, configured: Option<&'a Path>) -> Option<&'a Path> {
    let c = configured?;
    let built = stat(&dir_for(cache, root).join("index.scip"));
    match (stat(c), built) {
        (Some((_, cm)), Some((_, bm))) => (cm >= bm).then_some(c),
        (None, Some(_)) => None,
        (_, None) => Some(c),
    }
}

/// Why an index file that [`stat`] did not find as a regular file cannot
/// be read: "not found", or what it is instead, in the words every
/// refusal of a special file uses ("not a regular file (a named pipe);
/// scry reads only regular files"); only `stat`s, never opens it.
pub fn unreadable(path: &Path) -> String {
    match scry_workspace::disk::check(path, u64::MAX) {
        Err(scry_workspace::disk::ReadError::NotRegular { kind, .. }) => {
            format!("not a regular file ({kind}); scry reads only regular files")
        }
        _ => "not found".to_string(),
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
    let source = match configured {
        Some(p) => Source::Configured(p.to_path_buf()),
        None => Source::Built(dir.join("index.scip")),
    };
    let (scip, db) = (source.scip().to_path_buf(), db_for(cache, root, &source));
    let Some((size, mtime)) = stat(&scip) else {
        if configured.is_some() {
            let err = std::io::Error::new(std::io::ErrorKind::NotFound, unreadable(&scip));
            return Err(IndexError::Io { path: scip, err });
        }
        return Ok(None);
    };
    if let Some(ix) = open_current(&db, &scip, (size, mtime), root) {
        return Ok(Some((ix, source)));
    }
    // One conversion at a time in this process (a question and the
    // daemon's refresh may both find the index new; they would write the
    // same temporary file); the second finds the first's result.
    static CONVERTING: Mutex<()> = Mutex::new(());
    let _one = CONVERTING.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(ix) = open_current(&db, &scip, (size, mtime), root) {
        return Ok(Some((ix, source)));
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

/// The converted `db` when it is `scip`'s of that (size, mtime) for `root`.
pub fn open_current(db: &Path, scip: &Path, stat: (u64, u64), root: &Path) -> Option<Index> {
    let ix = Index::open(db).ok()?;
    let m = ix.meta();
    (m.source == scip && (m.source_size, m.source_mtime_ns) == stat && m.root == root).then_some(ix)
}

/// The converted form of each source: `ci.db` for a configured index,
/// `index.db` for the built one.
pub fn db_for(cache: &Path, root: &Path, source: &Source) -> PathBuf {
    dir_for(cache, root).join(match source {
        Source::Configured(_) => "ci.db",
        Source::Built(_) => "index.db",
    })
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
