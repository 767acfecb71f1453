//! A bounded journal of the edits scry applied, with their before-images:
//! for `undo`, and so that a retried call (same idempotency key) never
//! applies an edit twice.
//!
//! Layout: `<base>/<workspace-hash>/<seq>-<id>/` holding `manifest.json`
//! and one `<n>.before` file per path that existed before the edit. The
//! entry is written *before* the commit (state `pending`), marked `applied`
//! after it, removed if the commit failed and was rolled back. At most
//! [`MAX_ENTRIES`] entries and about [`MAX_BYTES`] of before-images are kept
//! per workspace; the oldest go first.
//!
//! Write-ahead invariants:
//! * [`Journal::begin`] returns only when the before-images and the
//!   manifest are durable: each file fsynced, then the entry directory and
//!   the directories above it up to the base. It fails (and the caller
//!   refuses the edit) otherwise, removing what it had written: a partial
//!   entry never stays behind.
//! * An entry is counted only through a readable manifest; a directory
//!   without one (a crash mid-`begin`) is never an entry and is removed by
//!   a later `begin` once older than [`STALE_PARTIAL`].
//! * A `pending` entry whose files all hold their after-images (the commit
//!   finished but marking it `applied` failed) is still undoable.
//!
//! Base directory: [`scry_workspace::dirs::journal`] (`$SCRY_JOURNAL_DIR`,
//! else `<state dir>/journal`).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::plan::{EditPlan, FileImage};

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
pub struct Stamp {
    pub len: u64,
    pub hash: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<u32>,
}

impl Stamp {
    pub fn of(img: &FileImage) -> Stamp {
        Stamp {
            len: img.bytes.len() as u64,
            hash: content_hash(&img.bytes),
            mode: img.mode,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalFile {
    pub path: PathBuf,
    /// `None`: the path did not exist before the edit.
    pub before: Option<Stamp>,
    /// `None`: the edit removed the path.
    pub after: Option<Stamp>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryState {
    Pending,
    Applied,
    Undone,
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
    fail_after: Option<usize>,
}

/// The journal's base directory: `$SCRY_JOURNAL_DIR`, else
/// `<state dir>/journal` ([`scry_workspace::dirs::journal`]).
pub fn default_base() -> Option<PathBuf> {
    scry_workspace::dirs::journal()
}

fn io(e: std::io::Error, what: &str) -> String {
    format!("edit journal: {what}: {e}")
}

impl Journal {
    /// The journal of workspace `root` under `base`.
    pub fn open(base: &Path, root: &Path) -> Journal {
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
        Journal {
            dir: base.join(format!("{name}-{hash}")),
            root: root.to_path_buf(),
            fail_after: None,
        }
    }

    /// Test seam: make `begin` fail after `n` before-images.
    pub fn with_failure(mut self, fail_after: Option<usize>) -> Journal {
        self.fail_after = fail_after;
        self
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn entries(&self) -> Vec<(PathBuf, Manifest)> {
        let Ok(rd) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut out: Vec<(PathBuf, Manifest)> = rd
            .flatten()
            .filter_map(|e| {
                let p = e.path();
                let text = std::fs::read_to_string(p.join("manifest.json")).ok()?;
                let m: Manifest = serde_json::from_str(&text).ok()?;
                (m.root == self.root).then_some((p, m))
            })
            .collect();
        out.sort_by_key(|(_, m)| m.seq);
        out
    }

    /// The entry applied (or undone) under idempotency key `key`.
    pub fn find_key(&self, key: &str) -> Option<Manifest> {
        self.entries()
            .into_iter()
            .map(|(_, m)| m)
            .find(|m| m.state != EntryState::Pending && m.key.as_deref() == Some(key))
    }

    /// The entry an `undo` with key `key` reverted.
    pub fn find_undo_key(&self, key: &str) -> Option<Manifest> {
        self.entries()
            .into_iter()
            .map(|(_, m)| m)
            .find(|m| m.undo_key.as_deref() == Some(key))
    }

    /// The most recent applied (not undone) entry; a `pending` one counts
    /// when `committed` says its edit is on disk (marking it failed).
    pub fn last_applied(&self, committed: impl Fn(&Manifest) -> bool) -> Option<Manifest> {
        self.entries().into_iter().rev().map(|(_, m)| m).find(|m| {
            m.state == EntryState::Applied
                || (m.state == EntryState::Pending && !m.files.is_empty() && committed(m))
        })
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
        let bytes = std::fs::read(self.entry_dir(m).join(format!("{i}.before"))).ok()?;
        (content_hash(&bytes) == stamp.hash).then_some(FileImage {
            bytes,
            mode: stamp.mode,
        })
    }

    /// Write a `pending` entry for `plan` before it is committed, durable
    /// (before-images, manifest and directories fsynced) when this returns
    /// `Ok`; on `Err` nothing of the entry is left.
    pub fn begin(
        &self,
        plan: &EditPlan,
        title: &str,
        key: Option<&str>,
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
                    before: c.before.as_ref().map(Stamp::of),
                    after: c.after.as_ref().map(Stamp::of),
                })
                .collect(),
            dirs_created: plan.dirs_created.clone(),
            dirs_removed: plan.dirs_removed.clone(),
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
                if self.fail_after == Some(written) {
                    return Err(io(
                        std::io::Error::other("injected failure"),
                        "cannot save a before-image",
                    ));
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
        std::fs::rename(&tmp, dir.join("manifest.json"))
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
}

/// fsync a directory (its entries' names); a file system that cannot
/// sync directories (`EINVAL`) is not an error.
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    match std::fs::File::open(dir)?.sync_all() {
        Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::Unsupported => Ok(()),
        r => r,
    }
}

fn write_synced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut f = std::fs::File::create(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}
