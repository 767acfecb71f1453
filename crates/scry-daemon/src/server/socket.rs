//! The daemon's socket: the one-daemon rule, binding, and who may connect.
//!
//! Invariants:
//! - One daemon per socket: the lock file is `flock`ed for the daemon's
//!   life (the kernel releases it when the process dies, so a lock left by
//!   a killed daemon is never stale); the holder of the lock removes a
//!   stale socket before binding, and at exit removes the socket only while
//!   it is still the one it bound (same inode).
//! - Only the daemon's own user is served: the peer's uid is checked on
//!   accept (`SO_PEERCRED`, [`check_peer`]), besides the 0700 directory
//!   ([`crate::paths::ensure_dir`]).

use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use tokio::net::{UnixListener, UnixStream};

use crate::paths::{self, Files};

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

/// Whether a peer with `peer_uid` may talk to a daemon run by `own_uid`.
pub fn peer_allowed(peer_uid: u32, own_uid: u32) -> bool {
    peer_uid == own_uid
}

/// The uid check on one accepted connection.
pub fn check_peer(stream: &UnixStream) -> Result<(), String> {
    let cred = stream
        .peer_cred()
        .map_err(|e| format!("cannot read the peer's credentials: {e}"))?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if peer_allowed(cred.uid(), me) {
        Ok(())
    } else {
        Err(format!(
            "refused a connection from uid {} (the daemon serves uid {me} only)",
            cred.uid()
        ))
    }
}

/// Take the daemon lock: an exclusive `flock` on `path`, held while the
/// returned file is open.
pub fn lock(path: &Path) -> Result<std::fs::File, StartError> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| StartError::Io(format!("cannot open {}: {e}", path.display())))?;
    // SAFETY: flock on a descriptor we own.
    let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if r != 0 {
        let e = std::io::Error::last_os_error();
        return Err(if e.kind() == std::io::ErrorKind::WouldBlock {
            StartError::AlreadyRunning(path.to_path_buf())
        } else {
            StartError::Io(format!("cannot lock {}: {e}", path.display()))
        });
    }
    Ok(file)
}

/// The daemon's socket, bound while its lock is held.
pub(super) struct Bound {
    /// The lock file, `flock`ed (and holding the daemon's pid) while open.
    pub(super) lock: std::fs::File,
    pub(super) listener: UnixListener,
    /// The bound socket's inode: another one there is not ours.
    pub(super) ino: Option<u64>,
}

/// Make the 0700 directory, take the lock, remove a dead daemon's socket,
/// bind, and write the daemon's pid into the lock file.
pub(super) fn bind(files: &Files) -> Result<Bound, StartError> {
    paths::ensure_dir(&files.dir).map_err(|e| StartError::Io(e.to_string()))?;
    let lock_file = lock(&files.lock)?;
    // We hold the lock: a socket file there is a dead daemon's.
    let _ = std::fs::remove_file(&files.socket);
    let listener = UnixListener::bind(&files.socket)
        .map_err(|e| StartError::Io(format!("cannot listen on {}: {e}", files.socket.display())))?;
    let ino = socket_ino(&files.socket);
    {
        use std::io::Write;
        let mut f = &lock_file;
        let _ = f.write_all(format!("{}\n", std::process::id()).as_bytes());
    }
    Ok(Bound {
        lock: lock_file,
        listener,
        ino,
    })
}

/// Remove the socket at `path` at exit, only while it is still the one
/// bound (inode `ino`): a newer daemon's is left alone.
pub(super) fn remove_if_ours(path: &Path, ino: Option<u64>) {
    if socket_ino(path) == ino {
        let _ = std::fs::remove_file(path);
    }
}

/// The inode of the socket file at `path`, if there is one.
pub(super) fn socket_ino(path: &Path) -> Option<u64> {
    std::fs::metadata(path).map(|m| m.ino()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_same_uid_is_served() {
        assert!(peer_allowed(1000, 1000));
        assert!(!peer_allowed(0, 1000));
        assert!(!peer_allowed(1001, 1000));
    }

    #[tokio::test]
    async fn the_peer_check_reads_the_connecting_uid() {
        let (a, _b) = UnixStream::pair().unwrap();
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        assert_eq!(a.peer_cred().unwrap().uid(), me);
        check_peer(&a).unwrap();
    }

    #[test]
    fn the_lock_is_exclusive_and_released_with_its_holder() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("d.lock");
        let held = lock(&p).unwrap();
        assert!(matches!(lock(&p), Err(StartError::AlreadyRunning(_))));
        drop(held);
        // A lock file left behind (a killed daemon) is taken again.
        lock(&p).unwrap();
    }
}
