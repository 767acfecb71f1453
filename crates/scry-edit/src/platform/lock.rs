//! The exclusive, non-blocking lock of an open file that the writer lock
//! ([`crate::lock`]) is made of.
//!
//! - Unix: `flock(LOCK_EX | LOCK_NB)` (through `libc`), released by
//!   `flock(LOCK_UN)`. It belongs to the open file description: two opens
//!   in one process exclude each other; the kernel releases it when the
//!   last descriptor of it closes, so when its holder dies. std opens
//!   close-on-exec: a child never inherits it past its `exec`.
//! - Windows: `LockFileEx(LOCKFILE_EXCLUSIVE_LOCK |
//!   LOCKFILE_FAIL_IMMEDIATELY)` on the file's first byte, released by
//!   `UnlockFileEx`. It belongs to the handle: two opens in one process
//!   exclude each other; the OS releases it when the handle closes, so
//!   when its holder dies. std opens handles that are not inheritable: a
//!   child never holds it.
//!
//! Invariants: held means no other open of the file, in this process or
//! another, can take it until [`unlock`] or the holder's death; taking it
//! never waits.

use std::fs::File;
use std::io;

/// Take the lock of `file` now: `Ok(false)` when another open holds it.
pub fn try_lock(file: &File) -> io::Result<bool> {
    imp::try_lock(file)
}

/// Release the lock of `file` (whoever else holds a copy of its
/// descriptor: a child forked by another thread before its `exec`).
pub fn unlock(file: &File) {
    imp::unlock(file)
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

    use windows_sys::Win32::Foundation::{ERROR_LOCK_VIOLATION, HANDLE};
    use windows_sys::Win32::Storage::FileSystem::{
        LOCKFILE_EXCLUSIVE_LOCK, LOCKFILE_FAIL_IMMEDIATELY, LockFileEx, UnlockFileEx,
    };
    use windows_sys::Win32::System::IO::OVERLAPPED;

    pub fn try_lock(file: &File) -> io::Result<bool> {
        // SAFETY: a zeroed OVERLAPPED is offset 0, no event; the handle is
        // ours and open (synchronous, so the call completes before it
        // returns).
        let ok = unsafe {
            let mut ov: OVERLAPPED = std::mem::zeroed();
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
        if e.raw_os_error() == i32::try_from(ERROR_LOCK_VIOLATION).ok() {
            Ok(false)
        } else {
            Err(e)
        }
    }

    pub fn unlock(file: &File) {
        // SAFETY: as in try_lock; unlocking what is not locked only fails.
        unsafe {
            let mut ov: OVERLAPPED = std::mem::zeroed();
            UnlockFileEx(file.as_raw_handle() as HANDLE, 0, 1, 0, &mut ov);
        }
    }
}
