//! The exclusive, non-blocking lock of an open file: the daemon's lock file
//! (one daemon per directory) and scry-edit's writer lock are made of it.
//!
//! - Unix: `flock(LOCK_EX | LOCK_NB)`, released by `flock(LOCK_UN)`. It
//!   belongs to the open file description: two opens in one process
//!   exclude each other; the kernel releases it when the last descriptor of
//!   it closes, so when its holder dies. std opens close-on-exec: a child
//!   never inherits it past its `exec`.
//! - Windows: `LockFileEx(LOCKFILE_EXCLUSIVE_LOCK |
//!   LOCKFILE_FAIL_IMMEDIATELY)` on one byte far past the end (2^62), so
//!   what the file holds (the daemon's pid) stays readable by others;
//!   released by `UnlockFileEx`. It belongs to the handle: two opens in one
//!   process exclude each other; the OS releases it when the handle closes,
//!   so when its holder dies. std opens handles that are not inheritable: a
//!   child never holds it.
//!
//! Invariants: held means no other open of the file, in this process or
//! another, can take it until [`unlock`] or the holder's death; taking it
//! never waits; a lock left by a killed holder is never stale.

use std::fs::File;
use std::io;
use std::path::Path;

/// Take the lock of `file` now: `Ok(false)` when another open holds it.
pub fn try_lock(file: &File) -> io::Result<bool> {
    imp::try_lock(file)
}

/// Release the lock of `file` (whoever else holds a copy of its
/// descriptor: a child forked by another thread before its `exec`).
pub fn unlock(file: &File) {
    imp::unlock(file)
}

/// Open (creating, the user's alone: [`crate::platform::fs::private`]) `path` and lock
/// it: `Ok(None)` when another process holds the lock. The lock is held
/// while the returned file is open.
pub fn exclusive(path: &Path) -> io::Result<Option<File>> {
    let file = crate::platform::fs::private(
        std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true),
    )
    .open(path)?;
    Ok(try_lock(&file)?.then_some(file))
}

#[cfg(unix)]
mod imp {
    use std::fs::File;
    use std::io;
    use std::os::unix::io::AsRawFd;

    pub fn try_lock(file: &File) -> io::Result<bool> {
        loop {
            // SAFETY: flock on a descriptor we own, open for the call.
            let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
            if r == 0 {
                return Ok(true);
            }
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::WouldBlock => return Ok(false),
                io::ErrorKind::Interrupted => continue,
                _ => return Err(e),
            }
        }
    }

    pub fn unlock(file: &File) {
        // SAFETY: flock on a descriptor we own, still open.
        unsafe {
            libc::flock(file.as_raw_fd(), libc::LOCK_UN);
        }
    }
}

#[cfg(windows)]
mod imp {
    use std::fs::File;
    use std::io;
    use std::os::windows::io::AsRawHandle;

    use windows_sys::Win32::Foundation::{ERROR_IO_PENDING, ERROR_LOCK_VIOLATION, HANDLE};
    use windows_sys::Win32::Storage::FileSystem::{
        LOCKFILE_EXCLUSIVE_LOCK, LOCKFILE_FAIL_IMMEDIATELY, LockFileEx, UnlockFileEx,
    };
    use windows_sys::Win32::System::IO::OVERLAPPED;

    /// The locked byte's offset (high half): 2^62, past any real content.
    const OFFSET_HIGH: u32 = 0x4000_0000;

    fn at() -> OVERLAPPED {
        // SAFETY: all-zero is a valid OVERLAPPED (offset 0, no event).
        let mut ov: OVERLAPPED = unsafe { std::mem::zeroed() };
        ov.Anonymous.Anonymous.OffsetHigh = OFFSET_HIGH;
        ov
    }

    pub fn try_lock(file: &File) -> io::Result<bool> {
        let mut ov = at();
        // SAFETY: a handle we own and an OVERLAPPED that outlives the call
        // (the file is not opened for overlapped I/O: the call completes
        // before it returns).
        let ok = unsafe {
            LockFileEx(
                file.as_raw_handle() as HANDLE,
                LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY,
                0,
                1,
                0,
                &mut ov,
            )
        };
        if ok != 0 {
            return Ok(true);
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(c) if c == ERROR_LOCK_VIOLATION as i32 || c == ERROR_IO_PENDING as i32 => {
                Ok(false)
            }
            _ => Err(e),
        }
    }

    pub fn unlock(file: &File) {
        let mut ov = at();
        // SAFETY: as in try_lock; unlocking what is not locked only fails.
        unsafe {
            UnlockFileEx(file.as_raw_handle() as HANDLE, 0, 1, 0, &mut ov);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lock_is_exclusive_and_released_with_its_holder() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("d.lock");
        let held = exclusive(&p).unwrap().expect("free");
        assert!(exclusive(&p).unwrap().is_none(), "held");
        drop(held);
        // A lock file left behind (a killed holder) is taken again.
        let again = exclusive(&p).unwrap().expect("released on close");
        // Unlocked while open, it is free for another open.
        unlock(&again);
        let other = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
        assert!(try_lock(&other).unwrap());
        assert!(!try_lock(&again).unwrap(), "held by the other open");
    }

    #[test]
    fn the_holder_s_content_stays_readable() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("d.lock");
        let held = exclusive(&p).unwrap().unwrap();
        std::io::Write::write_all(&mut &held, b"4242").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "4242");
    }
}
