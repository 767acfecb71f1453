//! Committing an [`EditPlan`] transactionally.
//!
//! 1. Every before-image is checked against the disk again (nothing written
//!    if a file changed since the plan was made).
//! 2. New directories are created; every new content is staged in a temp
//!    file next to its target (same directory, so the final rename is
//!    atomic), with the target's permissions, and fsynced. A journaled edit
//!    stages under the names its journal entry recorded before the first
//!    was created ([`crate::journal::temp_path`]), so a crash never strands
//!    one where recovery would not find it.
//! 3. The commit renames each temp file over its target (or removes a
//!    deleted file), then removes directories the edit deletes, then fsyncs
//!    every directory involved.
//! 4. If anything fails, every file already committed is restored to its
//!    before-image (the same way: temp file + rename), staged temp files and
//!    created directories are removed, removed directories come back.
//!
//! What the OS decides (the atomic replace, retried on Windows while a
//! server holds the file; the staged file's permission word; directory
//! sync, which Windows has none of) is [`crate::platform`]'s.
//!
//! The test hook [`crate::crash`] can kill the process after each staged
//! file (`after-stage-N`) and each replace (`after-replace-N`).

use std::collections::BTreeSet;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::plan::{EditPlan, FileChange, FileImage};
use crate::platform::{attrs, replace};
use scry_model::EditFact;
use scry_model::edit_fact::{Unrestored, WriteStep};
use scry_model::error::OpError;

/// Knobs of the writer; the failure seam is for tests (compiled with the
/// `test-hooks` feature only, never into a release).
#[derive(Debug, Clone, Default)]
pub struct WriteOptions {
    /// Test seam: fail the commit of file `k` (0-based, in plan order), after
    /// files `0..k` were committed.
    #[cfg(any(test, feature = "test-hooks"))]
    pub fail_at: Option<usize>,
}

impl WriteOptions {
    /// The failure a test injects in the commit of file `k` of `n` (none,
    /// and no trace of the seam, without the `test-hooks` feature).
    fn injected(&self, k: usize, n: usize) -> Option<std::io::Error> {
        #[cfg(any(test, feature = "test-hooks"))]
        {
            (self.fail_at == Some(k)).then(|| {
                std::io::Error::other(format!("injected failure at file {} of {n}", k + 1))
            })
        }
        #[cfg(not(any(test, feature = "test-hooks")))]
        {
            let _ = (k, n);
            None
        }
    }
}

static TEMP_SEQ: AtomicU64 = AtomicU64::new(0);

fn temp_path(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let n = TEMP_SEQ.fetch_add(1, Ordering::Relaxed);
    target.with_file_name(format!(".{name}.scry-{}-{n}.tmp", std::process::id()))
}

fn fsync_dir(dir: &Path) {
    let _ = replace::sync_dir(dir);
}

/// Write `image` to the new temp file `tmp`, fsynced, with the image's
/// permissions (a file left there by a dead writer is replaced, never
/// followed). Returns the temp path.
fn stage(tmp: &Path, image: &FileImage) -> std::io::Result<PathBuf> {
    let tmp = tmp.to_path_buf();
    if tmp.symlink_metadata().is_ok_and(|m| !m.is_dir()) {
        replace::remove_file(&tmp)?;
    }
    let mut opts = OpenOptions::new();
    replace::private(opts.write(true).create_new(true));
    let result = (|| {
        let mut f = opts.open(&tmp)?;
        f.write_all(&image.bytes)?;
        let mode = image.mode.unwrap_or_else(attrs::new_file);
        attrs::set(&f, &tmp, mode)?;
        f.sync_all()
    })();
    match result {
        Ok(()) => Ok(tmp),
        Err(e) => {
            let _ = replace::remove_file(&tmp);
            Err(e)
        }
    }
}

/// Whether the disk still holds `expected` at `path` (content and
/// permissions).
fn disk_matches(path: &Path, expected: &Option<FileImage>) -> bool {
    let meta = path.symlink_metadata();
    match (expected, meta) {
        (None, Err(e)) => e.kind() == std::io::ErrorKind::NotFound,
        (None, Ok(_)) => false,
        (Some(_), Err(_)) => false,
        (Some(img), Ok(m)) => {
            if !m.is_file() || m.len() != img.bytes.len() as u64 {
                return false;
            }
            if img.mode.is_some_and(|mode| attrs::of(&m) != mode) {
                return false;
            }
            std::fs::read(path).is_ok_and(|b| b == img.bytes)
        }
    }
}

/// What the commit did so far, for the rollback.
#[derive(Default)]
struct Done {
    dirs_created: Vec<PathBuf>,
    staged: Vec<Option<PathBuf>>,
    committed: Vec<usize>,
    dirs_removed: Vec<PathBuf>,
}

/// Restore one path to `image` (absent or content), staging under `tmp`.
fn restore(path: &Path, image: &Option<FileImage>, tmp: &Path) -> std::io::Result<()> {
    match image {
        None => match replace::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        },
        Some(img) => {
            let tmp = stage(tmp, img)?;
            replace::rename(&tmp, path).inspect_err(|_| {
                let _ = replace::remove_file(&tmp);
            })
        }
    }
}

fn rollback(changes: &[FileChange], temps: &[PathBuf], done: &Done) -> Vec<Unrestored> {
    let mut failed = Vec::new();
    for d in &done.dirs_removed {
        let _ = std::fs::create_dir(d);
    }
    for &k in done.committed.iter().rev() {
        let c = &changes[k];
        if let Err(e) = restore(&c.path, &c.before, &temps[k]) {
            failed.push(Unrestored {
                path: c.path.clone(),
                why: e.to_string(),
            });
        }
    }
    for t in done.staged.iter().flatten() {
        let _ = replace::remove_file(t);
    }
    for d in done.dirs_created.iter().rev() {
        let _ = std::fs::remove_dir(d);
    }
    let mut dirs: BTreeSet<PathBuf> = changes
        .iter()
        .filter_map(|c| c.path.parent().map(Path::to_path_buf))
        .collect();
    dirs.extend(
        done.dirs_created
            .iter()
            .filter_map(|d| d.parent().map(Path::to_path_buf)),
    );
    for d in dirs {
        fsync_dir(&d);
    }
    failed
}

/// Commit `plan` (see the module documentation). On error nothing of the
/// edit remains on disk — or, if even the restore failed, the error names
/// the files that could not be restored.
pub fn commit(plan: &EditPlan, opts: &WriteOptions) -> Result<(), OpError> {
    commit_staged(plan, opts, None)
}

/// [`commit`], staging `plan.changes[i]` in `temps[i]` when given (the
/// names a journal entry recorded), else in a fresh name beside it.
pub fn commit_staged(
    plan: &EditPlan,
    opts: &WriteOptions,
    temps: Option<&[PathBuf]>,
) -> Result<(), OpError> {
    let temps: Vec<PathBuf> = match temps {
        Some(t) if t.len() == plan.changes.len() => t.to_vec(),
        _ => plan.changes.iter().map(|c| temp_path(&c.path)).collect(),
    };
    // 1. Still as planned?
    for c in &plan.changes {
        if !disk_matches(&c.path, &c.before) {
            return Err(OpError::FileChanged(
                EditFact::ChangedWhilePrepared {
                    path: c.path.clone(),
                }
                .message(),
            ));
        }
    }
    let mut done = Done::default();
    let fail = |step: WriteStep, done: &Done| {
        let unrestored = rollback(&plan.changes, &temps, done);
        OpError::WriteFailed(EditFact::WriteFailed { step, unrestored }.message())
    };
    // 2. Directories, then staged contents.
    for d in &plan.dirs_created {
        if d.is_dir() {
            continue;
        }
        if let Err(e) = std::fs::create_dir(d) {
            return Err(fail(
                WriteStep::CreateDir {
                    path: d.clone(),
                    why: e.to_string(),
                },
                &done,
            ));
        }
        done.dirs_created.push(d.clone());
    }
    for (k, c) in plan.changes.iter().enumerate() {
        match &c.after {
            Some(img) => {
                // A changed file keeps its permissions (the plan carries them).
                match stage(&temps[k], img) {
                    Ok(t) => {
                        done.staged.push(Some(t));
                        crate::crash::point_n("after-stage", k + 1);
                    }
                    Err(e) => {
                        return Err(fail(
                            WriteStep::Stage {
                                path: c.path.clone(),
                                why: e.to_string(),
                            },
                            &done,
                        ));
                    }
                }
            }
            None => done.staged.push(None),
        }
    }
    // 3. Commit.
    let n = plan.changes.len();
    for (k, c) in plan.changes.iter().enumerate() {
        let result = if let Some(e) = opts.injected(k, n) {
            Err(e)
        } else {
            match &done.staged[k] {
                Some(t) => replace::rename(t, &c.path),
                None => replace::remove_file(&c.path),
            }
        };
        match result {
            Ok(()) => {
                done.committed.push(k);
                done.staged[k] = None;
                crate::crash::point_n("after-replace", k + 1);
            }
            Err(e) => {
                return Err(fail(
                    WriteStep::Replace {
                        path: c.path.clone(),
                        k: k + 1,
                        n,
                        why: e.to_string(),
                    },
                    &done,
                ));
            }
        }
    }
    for d in &plan.dirs_removed {
        match std::fs::remove_dir(d) {
            Ok(()) => done.dirs_removed.push(d.clone()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(fail(
                    WriteStep::RemoveDir {
                        path: d.clone(),
                        why: e.to_string(),
                    },
                    &done,
                ));
            }
        }
    }
    // 4. Durable: the directories that hold the changed names.
    let mut dirs: BTreeSet<PathBuf> = plan
        .changes
        .iter()
        .filter_map(|c| c.path.parent().map(Path::to_path_buf))
        .collect();
    dirs.extend(
        plan.dirs_created
            .iter()
            .chain(&plan.dirs_removed)
            .filter_map(|d| d.parent().map(Path::to_path_buf)),
    );
    for d in dirs {
        fsync_dir(&d);
    }
    Ok(())
}
