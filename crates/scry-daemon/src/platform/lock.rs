//! The daemon's lock file: taken exclusively, without waiting, and held
//! while the returned file is open; the OS releases it when the holder
//! dies, so a lock left by a killed daemon is never stale.
//!
//! Unix: `flock(LOCK_EX | LOCK_NB)` on a file created with mode 0600.
//! Windows: `LockFileEx(LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY)`
//! on one byte far past the end (2^62), so the pid written in the file
//! stays readable by others.

use std::fs::File;
use std::io;
use std::path::Path;

/// Open (creating) `path` and lock it: `Ok(None)` when another process
/// holds the lock.
pub fn exclusive(path: &Path) -> io::Result<Option<File>> {
    let file = imp::open(path)?;
    Ok(imp::try_lock(&file)?.then_some(file))
}

#[cfg(unix)]
mod imp {
    use std::fs::File;
    use std::io;
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::AsRawFd;
    use std::path::Path;

    pub fn open(path: &Path) -> io::Result<File> {
        std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(path)
    }

    pub fn try_lock(file: &File) -> io::Result<bool> {
        // SAFETY: flock on a descriptor we own.
        let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if r == 0 {
            return Ok(true);
        }
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::WouldBlock {
            Ok(false)
        } else {
            Err(e)
        }
    }
}

#[cfg(windows)]
mod imp {
    use std::fs::File;
    use std::io;
    use std::os::windows::io::AsRawHandle;
    use std::path::Path;

    use windows_sys::Win32::Foundation::{ERROR_IO_PENDING, ERROR_LOCK_VIOLATION};
    use windows_sys::Win32::Storage::FileSystem::{
        LOCKFILE_EXCLUSIVE_LOCK, LOCKFILE_FAIL_IMMEDIATELY, LockFileEx,
    };
    use windows_sys::Win32::System::IO::OVERLAPPED;

    pub fn open(path: &Path) -> io::Result<File> {
        std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
    }

    pub fn try_lock(file: &File) -> io::Result<bool> {
        // SAFETY: all-zero is a valid OVERLAPPED.
        let mut at: OVERLAPPED = unsafe { std::mem::zeroed() };
        at.Anonymous.Anonymous.OffsetHigh = 0x4000_0000;
        // SAFETY: a handle we own and an OVERLAPPED that outlives the call
        // (the file is not opened for overlapped I/O: the call completes).
        let ok = unsafe {
            LockFileEx(
                file.as_raw_handle(),
                LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY,
                0,
                1,
                0,
                &mut at,
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
        // A lock file left behind (a killed daemon) is taken again.
        assert!(exclusive(&p).unwrap().is_some());
    }
}
