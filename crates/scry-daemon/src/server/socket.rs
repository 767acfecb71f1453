//! The daemon's listening end: the one-daemon rule, binding, and who may
//! connect — the order of the steps; how each is done on this OS is
//! [`crate::platform`]'s.
//!
//! Invariants:
//! - One daemon per address: the lock file is held for the daemon's life
//!   ([`scry_base::platform::lock`]: the OS releases it when the process dies,
//!   so a lock left by a killed daemon is never stale); only the holder of
//!   the lock binds (on Unix removing a dead daemon's socket first), and at
//!   exit it removes only what is still its own
//!   ([`crate::platform::transport::Listener::close`]).
//! - Only the daemon's own user is served: the peer is checked on accept
//!   ([`crate::platform::transport::check_peer`]: its uid on Unix; on
//!   Windows the pipe's ACL and the refusal of remote clients), besides
//!   the private directory ([`crate::paths::ensure_dir`]).

use std::path::{Path, PathBuf};

use crate::paths::{self, Files};
use crate::platform::transport::Listener;

/// Why the daemon did not run.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// Another daemon holds the lock (not an error for whoever started
    /// this one: clients connect to that one).
    #[error("a scry daemon is already running for {}", .0.display())]
    AlreadyRunning(PathBuf),
    #[error("{0}")]
    Io(String),
}

/// Take the daemon lock on `path`, held while the returned file is open.
pub fn lock(path: &Path) -> Result<std::fs::File, StartError> {
    match scry_base::platform::lock::exclusive(path) {
        Ok(Some(file)) => Ok(file),
        Ok(None) => Err(StartError::AlreadyRunning(path.to_path_buf())),
        Err(e) => Err(StartError::Io(format!(
            "cannot lock {}: {e}",
            path.display()
        ))),
    }
}

/// The daemon's listener, bound while its lock is held.
pub(super) struct Bound {
    /// The lock file, locked (and holding the daemon's pid) while open.
    pub(super) lock: std::fs::File,
    pub(super) listener: Listener,
}

/// Make the private directory, take the lock, bind, and write the
/// daemon's pid into the lock file.
pub(super) fn bind(files: &Files) -> Result<Bound, StartError> {
    paths::ensure_dir(&files.dir).map_err(|e| StartError::Io(e.to_string()))?;
    let lock_file = lock(&files.lock)?;
    let listener = Listener::bind(&files.socket)
        .map_err(|e| StartError::Io(format!("cannot listen on {}: {e}", files.socket.display())))?;
    {
        use std::io::Write;
        let mut f = &lock_file;
        let _ = f.write_all(format!("{}\n", std::process::id()).as_bytes());
    }
    Ok(Bound {
        lock: lock_file,
        listener,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lock itself is `scry_base::platform::lock`'s (tested there);
    /// here, a held one is said as another daemon running.
    #[test]
    fn a_held_lock_is_another_daemon_running() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("d.lock");
        let _held = lock(&p).unwrap();
        assert!(matches!(lock(&p), Err(StartError::AlreadyRunning(_))));
    }
}
