//! One writer per workspace across processes: an exclusive lock
//! ([`scry_base::platform::lock`]: `flock` on Unix, `LockFileEx` on Windows) on
//! `<journal base>/<workspace key>.lock` (the key is the
//! journal's: [`crate::journal::workspace_key`], so whoever shares a
//! workspace's journal shares its lock), held by every edit, undo and
//! recovery, whichever process runs it (the daemon, a `--no-daemon` CLI, an
//! MCP server in-process, another environment's daemon).
//!
//! Invariants:
//! - The OS releases the lock when its holder dies, so a lock is never
//!   stale: a `pending` journal entry seen while holding it is a dead
//!   writer's, and only then is it recovered.
//! - The lock belongs to one open of the file (a `flock`'s open file
//!   description, a `LockFileEx`'s handle): two opens in one process
//!   exclude each other too (two engines on one workspace).
//! - Waiting never blocks a runtime thread: [`acquire`] polls a
//!   non-blocking try-lock with short sleeps and gives up at its deadline
//!   with `BUSY`, having changed nothing. The descriptor is close-on-exec
//!   (the handle not inheritable), so a language server started meanwhile
//!   never inherits the lock.
//! - Dropping the lock unlocks it before closing: on Unix a child forked
//!   by another thread holds a copy of every descriptor until its `exec`
//!   closes them, and a `flock` belongs to the open file description, so a
//!   plain close would leave the lock held for that window (another
//!   writer, or the recovery at start, would see a live writer that is
//!   gone).

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::time::Instant;

use scry_model::EditFact;
use scry_model::error::OpError;

use scry_base::platform::lock as file_lock;

/// How long between two tries while another writer holds the lock.
const POLL: Duration = Duration::from_millis(25);

/// The held lock; released when dropped (or when the process dies).
#[derive(Debug)]
pub struct WriterLock {
    file: File,
}

impl Drop for WriterLock {
    fn drop(&mut self) {
        file_lock::unlock(&self.file);
    }
}

/// The lock file of workspace `root` under the journal base `base`.
pub fn lock_path(base: &Path, root: &Path) -> PathBuf {
    base.join(format!("{}.lock", crate::journal::workspace_key(root)))
}

/// Take the lock now, or `Ok(None)` when another writer holds it.
pub fn try_lock(path: &Path) -> std::io::Result<Option<WriterLock>> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    Ok(file_lock::try_lock(&file)?.then_some(WriterLock { file }))
}

/// Take the lock, waiting for another writer until `deadline`; `BUSY`
/// after it (nothing was changed).
pub async fn acquire(path: &Path, root: &Path, deadline: Instant) -> Result<WriterLock, OpError> {
    loop {
        match try_lock(path) {
            Ok(Some(l)) => return Ok(l),
            Ok(None) => {}
            Err(e) => {
                return Err(OpError::WriteFailed(
                    EditFact::LockFailed {
                        lock: path.to_path_buf(),
                        why: e.to_string(),
                    }
                    .message(),
                ));
            }
        }
        let now = Instant::now();
        if now >= deadline {
            return Err(OpError::Busy(
                EditFact::Busy {
                    root: root.to_path_buf(),
                    lock: path.to_path_buf(),
                }
                .message(),
            ));
        }
        tokio::time::sleep(POLL.min(deadline - now)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A copy of the descriptor alive elsewhere (what a child forked by
    /// another thread holds until its `exec`) does not keep a dropped lock
    /// held.
    #[test]
    fn a_dropped_lock_is_free_while_a_copy_of_its_descriptor_lives() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.lock");
        let held = try_lock(&path).unwrap().expect("free at first");
        assert!(
            try_lock(&path).unwrap().is_none(),
            "held: a second open waits"
        );
        let copy = held.file.try_clone().unwrap();
        drop(held);
        assert!(
            try_lock(&path).unwrap().is_some(),
            "still held after its drop: a copy of its descriptor kept it"
        );
        drop(copy);
    }
}
