//! A bounded, write-ahead journal of the edits scry applies, with their
//! before-images: for `undo`, for idempotent retries (same key, never
//! applied twice), and for recovery after a writer died mid-edit.
//!
//! Layout: `<base>/<workspace key>/<seq>-<id>/` holding `manifest.json`
//! and one `<n>.before` file per path that existed before the edit; the
//! writer lock `<base>/<workspace key>.lock` beside it ([`crate::lock`]).
//! The workspace key ([`workspace_key`]) is the root's last component and
//! a hash of the canonical root. The entry is written *before* the commit
//! (state `pending`), marked `applied` after it, removed if the commit
//! failed and was rolled back in-process, marked `rolled_back` by
//! [`Journal::recover`]. An `undo` is journaled the same way (an entry with
//! `reverts` set, removed once the reverted entry is marked `undone`). At
//! most [`MAX_ENTRIES`] entries and about [`MAX_BYTES`] of before-images
//! are kept per workspace; the oldest go first.
//!
//! Write-ahead invariants:
//! * [`Journal::begin`] returns only when the before-images and the
//!   manifest are durable: each file fsynced, then the entry directory and
//!   the directories above it up to the base (on Unix; Windows has no
//!   directory sync, its renames are write-through:
//!   [`crate::platform::replace`]). It fails (and the caller
//!   refuses the edit) otherwise, removing what it had written: a partial
//!   entry never stays behind.
//! * The staged temporary file of `files[i]` has a name that is a function
//!   of the entry ([`temp_path`]: id, index, target), so it is recorded in
//!   the manifest before it is created, next to its target (the rename
//!   into place stays atomic in one directory): recovery always finds it.
//! * An entry is counted only through a readable manifest in a directory
//!   named `<seq>-<id>` after it; a directory without one (a crash
//!   mid-`begin`) is never an entry and is removed by a later `begin` once
//!   older than [`STALE_PARTIAL`].
//!
//! Recovery ([`Journal::recover`], only ever run holding the writer lock,
//! so a `pending` entry it sees is a dead writer's): an entry whose every
//! file holds its after-image was written completely (the crash came after
//! its last replace) and is kept, marked `applied`; any other is rolled
//! back, never forward: each file holding its after-image gets its
//! before-image back (content and permission word) or, if the edit created it, is
//! removed; removed directories come back, created ones go (when empty);
//! every staged temporary file goes; the entry is marked `rolled_back`
//! (which `undo` and replays ignore). Recovery touches only paths inside
//! the workspace root (after resolving symlinks) whose content matches a
//! stamp of the manifest, plus the entry's own temporary names; a file
//! that holds neither image (changed by someone since) is left alone and
//! named. What it did is a `scry_model::Recovered` (plain data, worded by
//! scry-render).
//!
//! Base directory: [`scry_base::dirs::journal`] (`$SCRY_JOURNAL_DIR`,
//! else `<state dir>/journal`).

use std::path::{Component, Path, PathBuf};

use scry_model::Recovered;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::plan::{EditPlan, FileImage};
use crate::platform::{attrs, replace};

pub const MAX_ENTRIES: usize = 50;
pub const MAX_BYTES: u64 = 128 * 1024 * 1024;
/// Age after which an entry directory without a readable manifest is
/// debris of an interrupted `begin` (never one in progress).
pub const STALE_PARTIAL: std::time::Duration = std::time::Duration::from_secs(600);

/// FNV-1a, 64 bits: stable across processes and toolchains.
pub fn content_hash(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x100000001b3);
    }
    format!("{h:016x}")
}

/// A file's state as the journal records it (content by hash).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileState {
    pub len: u64,
    pub hash: String,
    /// The permission word ([`crate::platform::attrs`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<u32>,
}

impl FileState {
    /// Whether `path` holds this state (a regular file of this length,
    /// mode and hash; never a symlink).
    pub fn matches(&self, path: &Path) -> bool {
        let Ok(meta) = path.symlink_metadata() else {
            return false;
        };
        if !meta.is_file() || meta.len() != self.len {
            return false;
        }
        if self.mode.is_some_and(|mode| attrs::of(&meta) != mode) {
            return false;
        }
        std::fs::read(path).is_ok_and(|b| content_hash(&b) == self.hash)
    }

    pub fn of(img: &FileImage) -> FileState {
        FileState {
            len: img.bytes.len() as u64,
            hash: content_hash(&img.bytes),
            mode: img.mode,
        }
    }
}

/// Whether `path` holds `stamp` (`None`: the path does not exist).
pub fn stamp_matches(path: &Path, stamp: &Option<FileState>) -> bool {
    match stamp {
        None => path.symlink_metadata().is_err(),
        Some(s) => s.matches(path),
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalFile {
    pub path: PathBuf,
    /// `None`: the path did not exist before the edit.
    pub before: Option<FileState>,
    /// `None`: the edit removed the path.
    pub after: Option<FileState>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryState {
    Pending,
    Applied,
    Undone,
    /// A dead writer's entry that recovery rolled back: nothing of it is
    /// on disk; undo and replays ignore it.
    RolledBack,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub id: String,
    pub seq: u64,
    pub root: PathBuf,
    /// The caller's idempotency key (MCP request id, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The key of the `undo` call that reverted it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undo_key: Option<String>,
    /// One line: what the edit was (`rename `a` → `b``).
    pub title: String,
    pub state: EntryState,
    pub unix_ms: u128,
    pub files: Vec<JournalFile>,
    pub dirs_created: Vec<PathBuf>,
    pub dirs_removed: Vec<PathBuf>,
    /// For an `undo`'s own entry: the id of the entry it reverts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverts: Option<String>,
    /// The answer given when it was applied (replayed for a retry).
    #[serde(default)]
    pub report: Value,
}

/// The journal of one workspace.
#[derive(Debug, Clone)]
pub struct Journal {
    dir: PathBuf,
    root: PathBuf,
    /// Test seam: fail `begin` after writing this many before-images.
    #[cfg(any(test, feature = "test-hooks"))]
    fail_after: Option<usize>,
}

/// The journal's base directory: `$SCRY_JOURNAL_DIR`, else
/// `<state dir>/journal` ([`scry_base::dirs::journal`]).
pub fn default_base() -> Option<PathBuf> {
    scry_base::dirs::journal()
}

fn io(e: std::io::Error, what: &str) -> String {
    format!("edit journal: {what}: {e}")
}

/// The name of workspace `root`'s journal directory and writer lock: its
/// last component (made safe, at most 40 characters) and a hash of the
/// whole (canonical) root.
pub fn workspace_key(root: &Path) -> String {
    let name = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect::<String>();
    let hash = content_hash(root.as_os_str().as_encoded_bytes());
    format!("{name}-{hash}")
}

/// The staged temporary file of `files[index]` of entry `id`: beside the
/// target (one directory, so the rename into place is atomic), hidden, and
/// named by the entry so recovery always finds it.
pub fn temp_path(id: &str, index: usize, target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    target.with_file_name(format!(".{name}.scry-{id}-{index}.tmp"))
}

/// An entry id as [`Journal::begin`] makes them (so it names a directory
/// and temporary files safely).
fn valid_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 32 && id.bytes().all(|b| b.is_ascii_alphanumeric())
}

impl Journal {
    /// The journal of workspace `root` under `base`.
    pub fn open(base: &Path, root: &Path) -> Journal {
        Journal {
            dir: base.join(workspace_key(root)),
            root: root.to_path_buf(),
            #[cfg(any(test, feature = "test-hooks"))]
            fail_after: None,
        }
    }

    /// Test seam: make `begin` fail after `n` before-images.
    #[cfg(any(test, feature = "test-hooks"))]
    pub fn with_failure(mut self, fail_after: Option<usize>) -> Journal {
        self.fail_after = fail_after;
        self
    }

    /// The failure a test injects in `begin` after `written` before-images
    /// (none, and no trace of the seam, without the `test-hooks` feature).
    fn injected(&self, written: usize) -> Option<std::io::Error> {
        #[cfg(any(test, feature = "test-hooks"))]
        {
            (self.fail_after == Some(written)).then(|| std::io::Error::other("injected failure"))
        }
        #[cfg(not(any(test, feature = "test-hooks")))]
        {
            let _ = written;
            None
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn entries(&self) -> Vec<(PathBuf, Manifest)> {
        let Ok(rd) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut out: Vec<(PathBuf, Manifest)> = rd
            .flatten()
            .filter_map(|e| {
                let p = e.path();
                let text = std::fs::read_to_string(p.join("manifest.json")).ok()?;
                let m: Manifest = serde_json::from_str(&text).ok()?;
                let named = e.file_name().to_str() == Some(&format!("{:012}-{}", m.seq, m.id));
                (m.root == self.root && valid_id(&m.id) && named).then_some((p, m))
            })
            .collect();
        out.sort_by_key(|(_, m)| m.seq);
        out
    }

    /// The entry applied (or undone) under idempotency key `key`.
    pub fn find_key(&self, key: &str) -> Option<Manifest> {
        self.entries().into_iter().map(|(_, m)| m).find(|m| {
            matches!(m.state, EntryState::Applied | EntryState::Undone)
                && m.reverts.is_none()
                && m.key.as_deref() == Some(key)
        })
    }

    /// The entry an `undo` with key `key` reverted.
    pub fn find_undo_key(&self, key: &str) -> Option<Manifest> {
        self.entries()
            .into_iter()
            .map(|(_, m)| m)
            .find(|m| m.undo_key.as_deref() == Some(key))
    }

    /// The most recent applied (not undone, not rolled back) edit.
    pub fn last_applied(&self) -> Option<Manifest> {
        self.entries()
            .into_iter()
            .rev()
            .map(|(_, m)| m)
            .find(|m| m.state == EntryState::Applied && m.reverts.is_none())
    }

    /// The staged temporary file of each of `m`'s files ([`temp_path`]).
    pub fn temps(m: &Manifest) -> Vec<PathBuf> {
        m.files
            .iter()
            .enumerate()
            .map(|(i, f)| temp_path(&m.id, i, &f.path))
            .collect()
    }

    /// The `pending` entries, newest first.
    pub fn pending(&self) -> Vec<Manifest> {
        self.entries()
            .into_iter()
            .rev()
            .map(|(_, m)| m)
            .filter(|m| m.state == EntryState::Pending)
            .collect()
    }

    /// Remove entry directories without a readable manifest older than
    /// [`STALE_PARTIAL`] (debris of an interrupted `begin`).
    fn remove_partial(&self) {
        let Ok(rd) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            let readable = std::fs::read_to_string(p.join("manifest.json"))
                .ok()
                .is_some_and(|t| serde_json::from_str::<Manifest>(&t).is_ok());
            let old = e
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age >= STALE_PARTIAL);
            if !readable && old && e.file_type().is_ok_and(|t| t.is_dir()) {
                let _ = std::fs::remove_dir_all(&p);
            }
        }
    }

    fn entry_dir(&self, m: &Manifest) -> PathBuf {
        self.dir.join(format!("{:012}-{}", m.seq, m.id))
    }

    /// The before-image of `files[i]` of entry `m`.
    pub fn before_image(&self, m: &Manifest, i: usize) -> Option<FileImage> {
        let f = m.files.get(i)?;
        let stamp = f.before.as_ref()?;
        let file = self.entry_dir(m).join(format!("{i}.before"));
        // A regular file of the recorded length only (never a FIFO's wait).
        let meta = file.symlink_metadata().ok()?;
        if !meta.is_file() || meta.len() != stamp.len {
            return None;
        }
        let bytes = std::fs::read(&file).ok()?;
        (bytes.len() as u64 == stamp.len && content_hash(&bytes) == stamp.hash).then_some(
            FileImage {
                bytes,
                mode: stamp.mode,
            },
        )
    }

    /// Write a `pending` entry for `plan` before it is committed, durable
    /// (before-images, manifest and directories fsynced) when this returns
    /// `Ok`; on `Err` nothing of the entry is left.
    pub fn begin(
        &self,
        plan: &EditPlan,
        title: &str,
        key: Option<&str>,
        reverts: Option<&str>,
    ) -> Result<Manifest, String> {
        std::fs::create_dir_all(&self.dir).map_err(|e| {
            io(
                e,
                &format!("cannot create its directory {}", self.dir.display()),
            )
        })?;
        self.remove_partial();
        let seq = self.entries().last().map_or(1, |(_, m)| m.seq + 1);
        let unix_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0);
        let id = content_hash(format!("{seq}-{unix_ms}-{}-{title}", std::process::id()).as_bytes())
            [..10]
            .to_string();
        let m = Manifest {
            id,
            seq,
            root: self.root.clone(),
            key: key.map(str::to_string),
            undo_key: None,
            title: title.to_string(),
            state: EntryState::Pending,
            unix_ms,
            files: plan
                .changes
                .iter()
                .map(|c| JournalFile {
                    path: c.path.clone(),
                    before: c.before.as_ref().map(FileState::of),
                    after: c.after.as_ref().map(FileState::of),
                })
                .collect(),
            dirs_created: plan.dirs_created.clone(),
            dirs_removed: plan.dirs_removed.clone(),
            reverts: reverts.map(str::to_string),
            report: Value::Null,
        };
        let dir = self.entry_dir(&m);
        std::fs::create_dir(&dir).map_err(|e| io(e, "cannot create an entry"))?;
        match self.write_entry(plan, &m, &dir) {
            Ok(()) => Ok(m),
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                Err(e)
            }
        }
    }

    /// The before-images and the manifest of `m`, then the directories
    /// from the entry's up to the base, all fsynced.
    fn write_entry(&self, plan: &EditPlan, m: &Manifest, dir: &Path) -> Result<(), String> {
        let mut written = 0;
        for (i, c) in plan.changes.iter().enumerate() {
            if let Some(b) = &c.before {
                if let Some(e) = self.injected(written) {
                    return Err(io(e, "cannot save a before-image"));
                }
                write_synced(&dir.join(format!("{i}.before")), &b.bytes)
                    .map_err(|e| io(e, "cannot save a before-image"))?;
                written += 1;
            }
        }
        self.save(m)?;
        for d in [dir, self.dir.as_path()]
            .into_iter()
            .chain(self.dir.parent())
        {
            sync_dir(d).map_err(|e| io(e, &format!("cannot sync {}", d.display())))?;
        }
        Ok(())
    }

    /// Rewrite an entry's manifest (state, report, undo key).
    pub fn save(&self, m: &Manifest) -> Result<(), String> {
        let dir = self.entry_dir(m);
        let text = serde_json::to_vec_pretty(m).map_err(|e| format!("edit journal: {e}"))?;
        let tmp = dir.join("manifest.json.tmp");
        write_synced(&tmp, &text).map_err(|e| io(e, "cannot write a manifest"))?;
        replace::rename(&tmp, &dir.join("manifest.json"))
            .map_err(|e| io(e, "cannot write a manifest"))?;
        sync_dir(&dir).map_err(|e| io(e, "cannot sync its directory"))
    }

    /// Forget an entry (its edit was rolled back).
    pub fn discard(&self, m: &Manifest) {
        let _ = std::fs::remove_dir_all(self.entry_dir(m));
    }

    /// Keep at most [`MAX_ENTRIES`] entries and about [`MAX_BYTES`].
    pub fn prune(&self) {
        let entries = self.entries();
        let sizes: Vec<u64> = entries
            .iter()
            .map(|(p, _)| {
                std::fs::read_dir(p)
                    .map(|rd| {
                        rd.flatten()
                            .filter_map(|e| e.metadata().ok())
                            .map(|m| m.len())
                            .sum()
                    })
                    .unwrap_or(0)
            })
            .collect();
        let mut total: u64 = sizes.iter().sum();
        let mut count = entries.len();
        for ((p, _), size) in entries.iter().zip(&sizes) {
            if count <= 1 || (count <= MAX_ENTRIES && total <= MAX_BYTES) {
                break;
            }
            let _ = std::fs::remove_dir_all(p);
            count -= 1;
            total -= size;
        }
    }

    /// Whether recovery may touch `p`: below the root (not the root), only
    /// plain components, and its nearest existing ancestor resolves inside
    /// the root (no symlinked directory out of it).
    fn confined(&self, p: &Path) -> bool {
        let Ok(rel) = p.strip_prefix(&self.root) else {
            return false;
        };
        if rel.as_os_str().is_empty()
            || !rel.components().all(|c| matches!(c, Component::Normal(_)))
        {
            return false;
        }
        let Ok(root) = scry_base::paths::canonical(&self.root) else {
            return false;
        };
        let mut up = p.parent();
        while let Some(d) = up {
            if d.symlink_metadata().is_ok() {
                return scry_base::paths::canonical(d)
                    .is_ok_and(|c| scry_base::paths::is_under(&c, &root));
            }
            up = d.parent();
        }
        false
    }

    /// Resolve every `pending` entry (see the module documentation). Call
    /// it only holding the workspace's writer lock ([`crate::lock`]): then
    /// a pending entry is a dead writer's. An entry with a file that could
    /// not be restored (an I/O error) stays `pending` and is named in its
    /// [`Recovered::failed`]; the caller refuses to write on top of it.
    pub fn recover(&self) -> Vec<Recovered> {
        self.pending()
            .into_iter()
            .map(|m| self.recover_entry(m))
            .collect()
    }

    fn recover_entry(&self, mut m: Manifest) -> Recovered {
        let mut r = Recovered {
            id: m.id.clone(),
            title: m.title.clone(),
            undo: m.reverts.is_some(),
            completed: false,
            restored: Vec::new(),
            removed: Vec::new(),
            temps_removed: 0,
            left_alone: Vec::new(),
            failed: Vec::new(),
        };
        // A path it may touch: confined, and named once (a manifest naming
        // one twice is not scry's; neither image can be trusted).
        let twice = |p: &PathBuf| m.files.iter().filter(|f| f.path == *p).count() > 1;
        let ok: Vec<bool> = m
            .files
            .iter()
            .map(|f| self.confined(&f.path) && !twice(&f.path))
            .collect();
        for (f, ok) in m.files.iter().zip(&ok) {
            if !ok {
                r.failed.push((
                    f.path.clone(),
                    "outside the workspace or named twice in the journal; not touched".into(),
                ));
            }
        }
        let completed = !m.files.is_empty()
            && ok.iter().all(|o| *o)
            && m.files.iter().all(|f| stamp_matches(&f.path, &f.after));
        // 1. Staged temporary files (their names are the entry's).
        for (i, f) in m.files.iter().enumerate() {
            if !ok[i] {
                continue;
            }
            let t = temp_path(&m.id, i, &f.path);
            if t.symlink_metadata().is_ok_and(|md| !md.is_dir()) && replace::remove_file(&t).is_ok()
            {
                r.temps_removed += 1;
            }
        }
        if completed {
            r.completed = true;
            match m.reverts.clone() {
                Some(orig) => {
                    if let Some((_, mut o)) = self.entries().into_iter().find(|(_, o)| o.id == orig)
                        && o.state == EntryState::Applied
                    {
                        o.state = EntryState::Undone;
                        if let Err(e) = self.save(&o) {
                            r.failed.push((self.entry_dir(&o), e));
                            return r;
                        }
                    }
                    self.discard(&m);
                }
                None => {
                    m.state = EntryState::Applied;
                    if let Err(e) = self.save(&m) {
                        r.failed.push((self.entry_dir(&m), e));
                    }
                }
            }
            return r;
        }
        // 2. Roll back: removed directories first (files go back into them).
        let is_file = |d: &PathBuf| m.files.iter().any(|f| f.path == *d);
        for d in &m.dirs_removed {
            if self.confined(d) && !is_file(d) && d.symlink_metadata().is_err() {
                let _ = std::fs::create_dir(d);
            }
        }
        let mut io_failed = false;
        for i in (0..m.files.len()).rev() {
            let f = &m.files[i];
            if !ok[i] || stamp_matches(&f.path, &f.before) {
                continue;
            }
            if !stamp_matches(&f.path, &f.after) {
                r.left_alone.push(f.path.clone());
                continue;
            }
            match &f.before {
                None => match replace::remove_file(&f.path) {
                    Ok(()) => r.removed.push(f.path.clone()),
                    Err(e) => {
                        io_failed = true;
                        r.failed.push((f.path.clone(), e.to_string()));
                    }
                },
                Some(_) => {
                    let Some(img) = self.before_image(&m, i) else {
                        r.failed.push((
                            f.path.clone(),
                            "its before-image is missing from the journal".into(),
                        ));
                        continue;
                    };
                    match put(&f.path, &temp_path(&m.id, i, &f.path), &img) {
                        Ok(()) => r.restored.push(f.path.clone()),
                        Err(e) => {
                            io_failed = true;
                            r.failed.push((f.path.clone(), e.to_string()));
                        }
                    }
                }
            }
        }
        for d in m.dirs_created.iter().rev() {
            if self.confined(d) && !is_file(d) {
                let _ = std::fs::remove_dir(d);
            }
        }
        let mut dirs: Vec<&Path> = m
            .files
            .iter()
            .zip(&ok)
            .filter(|(_, ok)| **ok)
            .filter_map(|(f, _)| f.path.parent())
            .collect();
        dirs.sort();
        dirs.dedup();
        for d in dirs {
            let _ = sync_dir(d);
        }
        if !io_failed {
            m.state = EntryState::RolledBack;
            if let Err(e) = self.save(&m) {
                r.failed.push((self.entry_dir(&m), e));
            }
        }
        r
    }
}

/// Put `img` at `path` through the temporary file `tmp` (created anew,
/// never followed if something is there, with the image's permission
/// word, fsynced), renamed over it.
fn put(path: &Path, tmp: &Path, img: &FileImage) -> std::io::Result<()> {
    use std::io::Write;
    if tmp.symlink_metadata().is_ok() {
        replace::remove_file(tmp)?;
    }
    let mut opts = std::fs::OpenOptions::new();
    replace::private(opts.write(true).create_new(true));
    let result = (|| {
        let mut f = opts.open(tmp)?;
        f.write_all(&img.bytes)?;
        if let Some(mode) = img.mode {
            attrs::set(&f, tmp, mode)?;
        }
        f.sync_all()?;
        drop(f);
        replace::rename(tmp, path)
    })();
    if result.is_err() {
        let _ = replace::remove_file(tmp);
    }
    result
}

/// Make a directory's names durable ([`replace::sync_dir`]: fsync on
/// Unix, nothing on Windows, which has no directory sync).
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    replace::sync_dir(dir)
}

fn write_synced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut f = std::fs::File::create(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}
