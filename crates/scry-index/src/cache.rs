//! Where a workspace's index lives and whether its documents still match
//! the disk.
//!
//! Layout: `<cache>/index/<key>/` with `<key>` a hash of the canonical
//! root: `index.scip` (what `scry index` had the indexer write) and
//! `index.db` (its converted form); a configured CI-built index is
//! converted to `ci.db` there, the `index.scip` itself never written; a
//! fetched one (`index.remote`) to `remote/<commit>.db` ([`install_remote`]).
//! [`load`] converts again when the `index.scip`'s size or time differs
//! from the one the converted file records, one conversion at a time in a
//! process.
//!
//! Freshness ([`Fresh`]): a document is current when its file is still
//! inside the root (symlinks resolved) and its size, modification time,
//! status-change time and inode are those recorded (`touch -r` cannot set
//! the last two back), else when its content hash is; a file changed,
//! missing, moved out or not verified at conversion is stale. Results are
//! remembered per stamp so a question re-hashes only files that changed
//! since the last one. [`install`] puts a new index in place only once it
//! converted; [`take`] installs a CI-built `index.scip` (copied; nothing
//! runs). Running indexers is scry-workspace's (`scry_workspace::indexing`,
//! which needs the catalogue, trust and the call's environment): this crate
//! stands on scry-base alone.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::store::convert::{self, ConvertOptions, MAX_SOURCE_BYTES};
use crate::store::read::Index;
use crate::store::stamp::{Before, content_hash, stat};
use crate::store::{Doc, IndexError};
use scry_base::disk::{Stamp, stamp};

/// The directory of `root`'s index under `cache` (`root` canonical).
pub fn dir_for(cache: &Path, root: &Path) -> PathBuf {
    let key = content_hash(root.as_os_str().as_encoded_bytes());
    cache.join("index").join(format!("{key:016x}"))
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
    match scry_base::disk::check(path, u64::MAX) {
        Err(scry_base::disk::ReadError::NotRegular { kind, .. }) => {
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
    let built_by = built_by(&dir).filter(|_| configured.is_none());
    convert::convert(
        &scip,
        &db,
        ConvertOptions {
            commit,
            built_by,
            ..ConvertOptions::new(root)
        },
    )?;
    Ok(Some((Index::open(&db)?, source)))
}

/// Who built the cache's `index.scip` (its `built-by` file: `daemon` for
/// the background refresh), `None`: `scry index`.
pub fn built_by(dir: &Path) -> Option<String> {
    std::fs::read_to_string(dir.join("built-by"))
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Convert `tmp` (a new `index.scip` beside the cache's) and only when
/// that succeeded put both in place: the converted form first, then the
/// `index.scip` renamed over the old one. A refused index leaves the
/// working one as it was (and `tmp` removed).
///
/// `commit`: the commit the tree was at; `built_by`: who built it
/// (`Some("daemon")` for the background refresh; `None`: `scry index`);
/// both recorded beside it (`commit`, `built-by`) and in its metadata;
/// `before`: the files as the indexer started (a file written since is
/// recorded stale).
pub fn install(
    cache: &Path,
    root: &Path,
    tmp: &Path,
    commit: Option<String>,
    built_by: Option<&str>,
    before: Option<&Before>,
) -> Result<Index, IndexError> {
    let dir = dir_for(cache, root);
    let scip = dir.join("index.scip");
    let db = db_for(cache, root, &Source::Built(scip.clone()));
    static INSTALLING: Mutex<()> = Mutex::new(());
    let _one = INSTALLING.lock().unwrap_or_else(|e| e.into_inner());
    let new_db = db.with_extension(format!("new{}", std::process::id()));
    let converted = convert::convert(
        tmp,
        &new_db,
        ConvertOptions {
            commit: commit.clone(),
            built_by: built_by.map(str::to_string),
            source: Some(&scip),
            before,
            ..ConvertOptions::new(root)
        },
    );
    let placed = converted.and_then(|_| {
        let io = |err| IndexError::Io {
            path: scip.clone(),
            err,
        };
        std::fs::rename(&new_db, &db).map_err(io)?;
        std::fs::rename(tmp, &scip).map_err(io)?;
        for (name, value) in [("commit", commit.as_deref()), ("built-by", built_by)] {
            let marker = dir.join(name);
            match value {
                Some(v) => std::fs::write(&marker, v).map_err(io)?,
                None => match std::fs::remove_file(&marker) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(e)),
                    _ => {}
                },
            }
        }
        Ok(())
    });
    if let Err(e) = placed {
        let _ = std::fs::remove_file(&new_db);
        let _ = std::fs::remove_file(tmp);
        return Err(e);
    }
    Index::open(&db)
}

/// Take a CI-built `from` (a regular file only: a FIFO or device is
/// refused at once, `NOT_A_REGULAR_FILE`) as `root`'s index, copied into
/// the cache and converted; the working index is replaced only when that
/// succeeded.
pub fn take(cache_dir: &Path, root: &Path, from: &Path) -> Result<Index, IndexError> {
    let mut src = convert::open_regular(from)?;
    let dir = prepare(cache_dir, root).map_err(|why| IndexError::Io {
        path: dir_for(cache_dir, root),
        err: std::io::Error::other(why),
    })?;
    let tmp = dir.join(format!("index.scip.tmp{}", std::process::id()));
    let copied = (|| {
        let mut out = std::fs::File::create(&tmp)?;
        std::io::copy(&mut src, &mut out)?;
        out.sync_all()
    })();
    if let Err(err) = copied {
        let _ = std::fs::remove_file(&tmp);
        return Err(IndexError::Io {
            path: from.to_path_buf(),
            err,
        });
    }
    // What the conversion refuses is said of the file given, not of the
    // cache's copy of it.
    install(cache_dir, root, &tmp, None, None, None).map_err(|e| e.naming(&tmp, from))
}

/// Where the converted form of a fetched index of `root` at `commit`
/// lives: `<dir>/remote/<commit>.db` (one per commit, so a second process
/// or question reuses it without the network).
pub fn remote_db(cache: &Path, root: &Path, commit: &str) -> PathBuf {
    dir_for(cache, root)
        .join("remote")
        .join(format!("{commit}.db"))
}

/// The converted fetched index of `root` at `commit`, when there is one
/// for that root and commit (`None`: not fetched yet, or unreadable).
pub fn open_remote(cache: &Path, root: &Path, commit: &str) -> Option<Index> {
    let ix = Index::open(&remote_db(cache, root, commit)).ok()?;
    let m = ix.meta();
    (m.root == root && m.commit.as_deref() == Some(commit)).then_some(ix)
}

/// Convert `scip` (a fetched, verified `index.scip` of `root` at
/// `commit`, a temporary file removed here in every case) under every rule
/// the local import follows, with `at_commit` giving each document's file
/// as it was at that commit; put in place ([`remote_db`]) only when that
/// succeeded, atomically.
pub fn install_remote(
    cache: &Path,
    root: &Path,
    commit: &str,
    scip: &Path,
    at_commit: &dyn Fn(&str) -> convert::AtCommit,
) -> Result<Index, IndexError> {
    let db = remote_db(cache, root, commit);
    let made = db
        .parent()
        .map(std::fs::create_dir_all)
        .transpose()
        .map_err(|err| IndexError::Io {
            path: db.clone(),
            err,
        });
    let new_db = db.with_extension(format!("new{}", std::process::id()));
    let converted = made.and_then(|_| {
        convert::convert(
            scip,
            &new_db,
            ConvertOptions {
                commit: Some(commit.to_string()),
                built_by: Some("remote".into()),
                at_commit: Some(at_commit),
                ..ConvertOptions::new(root)
            },
        )
    });
    let _ = std::fs::remove_file(scip);
    let placed = converted.and_then(|_| {
        std::fs::rename(&new_db, &db).map_err(|err| IndexError::Io {
            path: db.clone(),
            err,
        })
    });
    if let Err(e) = placed {
        let _ = std::fs::remove_file(&new_db);
        return Err(e);
    }
    Index::open(&db)
}

/// The fetched indexes of `root` in the cache that open as such (their
/// commit, when converted), newest first.
pub fn remote_fetched(cache: &Path, root: &Path) -> Vec<(String, std::time::SystemTime)> {
    let dir = dir_for(cache, root).join("remote");
    let mut out: Vec<(String, std::time::SystemTime)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let commit = name.strip_suffix(".db")?.to_string();
            let at = e.metadata().and_then(|m| m.modified()).ok()?;
            open_remote(cache, root, &commit)?;
            Some((commit, at))
        })
        .collect();
    out.sort_by_key(|(_, at)| std::cmp::Reverse(*at));
    out
}

/// Keep the `keep` most recently written fetched indexes of `root` and
/// remove the others, and temporary files of fetches over a day old (a
/// process that died mid-download). Best effort: what cannot be removed
/// stays.
pub fn prune_remote(cache: &Path, root: &Path, keep: usize) {
    let dir = dir_for(cache, root).join("remote");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    let now = std::time::SystemTime::now();
    let mut dbs = Vec::new();
    for e in entries.flatten() {
        let path = e.path();
        let Ok(modified) = e.metadata().and_then(|m| m.modified()) else {
            continue;
        };
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with(".db") {
            dbs.push((modified, path));
        } else if name.ends_with(".tmp")
            && now
                .duration_since(modified)
                .is_ok_and(|age| age.as_secs() > 24 * 3600)
        {
            let _ = std::fs::remove_file(&path);
        }
    }
    dbs.sort_by_key(|d| std::cmp::Reverse(d.0));
    for (_, path) in dbs.into_iter().skip(keep) {
        let _ = std::fs::remove_file(path);
    }
}

/// The directory of `root`'s index under `cache_dir`, created if needed.
pub fn prepare(cache_dir: &Path, root: &Path) -> Result<PathBuf, String> {
    let dir = dir_for(cache_dir, root);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    Ok(dir)
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

/// The stamp the index recorded of `d`'s file.
fn recorded(d: &Doc) -> Stamp {
    Stamp {
        size: d.size,
        mtime_ns: d.mtime_ns,
        ctime_ns: d.ctime_ns,
        ino: d.ino,
    }
}

/// Remembered freshness of files, by their whole [`Stamp`].
#[derive(Default)]
pub struct Fresh {
    seen: Mutex<HashMap<PathBuf, (Stamp, bool)>>,
}

impl Fresh {
    /// Whether `d`'s file under `root` (canonical) is as the index
    /// recorded it: still inside the root once symlinks are resolved (the
    /// rule edits follow), and the same stamp — size, mtime, ctime and
    /// inode — or else the same content hash.
    pub fn is_fresh(&self, root: &Path, d: &Doc) -> bool {
        if !d.verified {
            return false;
        }
        let abs = root.join(&d.path);
        if scry_base::paths::confine(root, &abs).is_err() {
            return false;
        }
        let Some(now) = stamp(&abs) else {
            return false;
        };
        if now == recorded(d) {
            return true;
        }
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&(s, f)) = seen.get(&abs)
            && s == now
        {
            return f;
        }
        // No hash: the file changed while the indexer ran; only its stamp
        // from before could match.
        let fresh = now.size == d.size
            && d.hash != 0
            && scry_base::disk::read(&abs, MAX_SOURCE_BYTES)
                .is_ok_and(|b| content_hash(&b) == d.hash);
        seen.insert(abs, (now, fresh));
        fresh
    }

    /// How many of the index's documents are no longer as recorded (stat
    /// first, content hash when the stat differs), of how many.
    pub fn changed(&self, root: &Path, ix: &Index) -> (u32, u32) {
        let n = ix.documents();
        let mut changed = 0;
        for i in 0..n {
            match ix.doc_at(i) {
                // A count, not an answer: a file whose stamp is the one
                // recorded counts as unchanged without resolving its
                // symlinks (what the answers' `is_fresh` does before using
                // a document), which cost most of a warm answer on 100,000
                // files; any other goes through `is_fresh`.
                Ok(d) if d.verified && stamp(&root.join(&d.path)) == Some(recorded(&d)) => {}
                Ok(d) if self.is_fresh(root, &d) => {}
                _ => changed += 1,
            }
        }
        (changed, n)
    }
}

/// Files under `root` written since `ix` was built that it does not cover
/// although they have the extension of a file it does (a new file of one
/// of its languages), at most `max` counted; the walk skips what the
/// walker skips (ignored, vendored, `target`, …). A file the indexer does
/// not index stays uncounted once an index newer than it is built.
pub fn new_files(root: &Path, ix: &Index, max: u32) -> u32 {
    let mut exts = std::collections::HashSet::new();
    for i in 0..ix.documents() {
        if let Ok(d) = ix.doc_at(i)
            && let Some(e) = Path::new(&d.path).extension()
        {
            exts.insert(e.to_os_string());
        }
    }
    if exts.is_empty() {
        return 0;
    }
    let built = std::time::UNIX_EPOCH + std::time::Duration::from_secs(ix.meta().built_at);
    let mut n = 0;
    for f in scry_base::walk::Walker::new()
        .skip_vendored()
        .files(root)
        .take(200_000)
    {
        if !f.extension().is_some_and(|e| exts.contains(e)) {
            continue;
        }
        let newer = std::fs::symlink_metadata(&f)
            .and_then(|m| m.modified())
            .is_ok_and(|m| m > built);
        let Ok(rel) = f.strip_prefix(root) else {
            continue;
        };
        if newer
            && rel
                .to_str()
                .is_some_and(|r| ix.document(r).ok().flatten().is_none())
        {
            n += 1;
            if n >= max {
                break;
            }
        }
    }
    n
}
