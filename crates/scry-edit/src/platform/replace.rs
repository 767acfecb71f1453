//! Putting a staged file in place, removing a file, creating a private
//! staged file and making a directory's names durable: the steps of
//! [`crate::apply`] and of the journal's recovery that the OS decides.
//!
//! - Unix: `rename(2)` (atomic in one directory), `unlink(2)`, a staged
//!   file created 0600 (its word is set before it is renamed:
//!   [`crate::platform::attrs`]), and `fsync` of the directory (a file
//!   system that cannot sync directories, `EINVAL`, is not an error).
//! - Windows: `MoveFileExW(MOVEFILE_REPLACE_EXISTING |
//!   MOVEFILE_WRITE_THROUGH)` (atomic on one volume; write-through: it
//!   returns once the rename is on disk) and `DeleteFileW` (through std).
//!   A language server or an editor that holds the file open without
//!   sharing makes both fail with a sharing, lock or access violation: they
//!   are retried with a short backoff for at most [`RETRY_FOR`] in all,
//!   then the error is the caller's (the commit rolls back). The read-only
//!   attribute, which makes both fail, is cleared first, as Unix ignores a
//!   file's own write permission when it replaces or removes it (put back
//!   if the call still fails; the staged file brings the word the file
//!   keeps). A staged file gets the directory's inherited ACL, as its
//!   target has. Windows has no directory sync: the names are made durable
//!   by the write-through rename, [`sync_dir`] does nothing.
//!
//! File contents are made durable by `File::sync_all` in the callers:
//! `fsync` on Unix, `FlushFileBuffers` on Windows.

use std::fs::OpenOptions;
use std::io;
use std::path::Path;

/// The longest a Windows replace or removal keeps retrying while another
/// process holds the file (no wait on Unix).
pub const RETRY_FOR: std::time::Duration = std::time::Duration::from_secs(1);

/// Replace (or create) `to` by `from`, atomically: `to` holds either its old
/// content or `from`'s, whatever happens.
pub fn rename(from: &Path, to: &Path) -> io::Result<()> {
    imp::rename(from, to)
}

/// Remove the file `path` (read-only or not).
pub fn remove_file(path: &Path) -> io::Result<()> {
    imp::remove_file(path)
}

/// Make `opts` create a file only this user can read (a staged file, until
/// it gets its word).
pub fn private(opts: &mut OpenOptions) -> &mut OpenOptions {
    imp::private(opts)
}

/// Make the names in `dir` durable (renames into it, removals).
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    imp::sync_dir(dir)
}

#[cfg(unix)]
mod imp {
    use std::fs::OpenOptions;
    use std::io;
    use std::os::unix::fs::OpenOptionsExt;
    use std::path::Path;

    pub fn rename(from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
    }

    pub fn remove_file(path: &Path) -> io::Result<()> {
        std::fs::remove_file(path)
    }

    pub fn private(opts: &mut OpenOptions) -> &mut OpenOptions {
        opts.mode(0o600)
    }

    pub fn sync_dir(dir: &Path) -> io::Result<()> {
        match std::fs::File::open(dir)?.sync_all() {
            Err(e) if e.kind() == io::ErrorKind::InvalidInput => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::Unsupported => Ok(()),
            r => r,
        }
    }
}

#[cfg(windows)]
mod imp {
    use std::fs::OpenOptions;
    use std::io;
    use std::path::Path;
    use std::time::{Duration, Instant};

    use windows_sys::Win32::Foundation::{
        ERROR_ACCESS_DENIED, ERROR_LOCK_VIOLATION, ERROR_SHARING_VIOLATION,
    };
    use windows_sys::Win32::Storage::FileSystem::{
        FILE_ATTRIBUTE_NORMAL, FILE_ATTRIBUTE_READONLY, GetFileAttributesW,
        INVALID_FILE_ATTRIBUTES, MOVEFILE_REPLACE_EXISTING, MOVEFILE_WRITE_THROUGH, MoveFileExW,
        SetFileAttributesW,
    };

    use super::super::wide;
    use super::RETRY_FOR;

    pub fn rename(from: &Path, to: &Path) -> io::Result<()> {
        let (src, dst) = (wide(from), wide(to));
        retrying(to, || {
            // SAFETY: NUL-terminated UTF-16 paths that outlive the call.
            let ok = unsafe {
                MoveFileExW(
                    src.as_ptr(),
                    dst.as_ptr(),
                    MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH,
                )
            };
            if ok == 0 {
                Err(io::Error::last_os_error())
            } else {
                Ok(())
            }
        })
    }

    pub fn remove_file(path: &Path) -> io::Result<()> {
        retrying(path, || std::fs::remove_file(path))
    }

    pub fn private(opts: &mut OpenOptions) -> &mut OpenOptions {
        opts
    }

    pub fn sync_dir(_dir: &Path) -> io::Result<()> {
        // No directory sync on Windows: MOVEFILE_WRITE_THROUGH made the
        // rename durable, NTFS journals the names.
        Ok(())
    }

    /// Run `op` (a replace or removal of `target`), clearing `target`'s
    /// read-only attribute once when access is denied and retrying while
    /// another process holds it, for at most [`RETRY_FOR`].
    fn retrying(target: &Path, mut op: impl FnMut() -> io::Result<()>) -> io::Result<()> {
        let start = Instant::now();
        let mut wait = Duration::from_millis(5);
        let mut cleared: Option<u32> = None;
        loop {
            let e = match op() {
                Ok(()) => return Ok(()),
                Err(e) => e,
            };
            let code = e.raw_os_error().and_then(|c| u32::try_from(c).ok());
            if code == Some(ERROR_ACCESS_DENIED)
                && cleared.is_none()
                && let Some(was) = clear_read_only(target)
            {
                cleared = Some(was);
                continue;
            }
            let busy = matches!(
                code,
                Some(ERROR_SHARING_VIOLATION | ERROR_LOCK_VIOLATION | ERROR_ACCESS_DENIED)
            );
            if busy && start.elapsed() + wait <= RETRY_FOR {
                std::thread::sleep(wait);
                wait = (wait * 2).min(Duration::from_millis(200));
                continue;
            }
            if let Some(was) = cleared {
                // SAFETY: a NUL-terminated UTF-16 path that outlives the call.
                unsafe { SetFileAttributesW(wide(target).as_ptr(), was) };
            }
            return Err(e);
        }
    }

    /// Clear `path`'s read-only attribute; its attributes before, or `None`
    /// when it had none to clear (or cannot be read).
    fn clear_read_only(path: &Path) -> Option<u32> {
        let w = wide(path);
        // SAFETY: a NUL-terminated UTF-16 path that outlives the calls.
        unsafe {
            let was = GetFileAttributesW(w.as_ptr());
            if was == INVALID_FILE_ATTRIBUTES || was & FILE_ATTRIBUTE_READONLY == 0 {
                return None;
            }
            let mut now = was & !FILE_ATTRIBUTE_READONLY;
            if now == 0 {
                now = FILE_ATTRIBUTE_NORMAL;
            }
            (SetFileAttributesW(w.as_ptr(), now) != 0).then_some(was)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_only(p: &Path, yes: bool) {
        let mut perm = std::fs::metadata(p).unwrap().permissions();
        perm.set_readonly(yes);
        std::fs::set_permissions(p, perm).unwrap();
    }

    /// A read-only target is replaced (as Unix ignores a file's own write
    /// permission when its directory allows), and a read-only file removed.
    #[test]
    fn a_read_only_file_is_replaced_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let (target, staged) = (dir.path().join("t.txt"), dir.path().join("s.tmp"));
        std::fs::write(&target, "old").unwrap();
        read_only(&target, true);
        std::fs::write(&staged, "new").unwrap();
        read_only(&staged, true);
        rename(&staged, &target).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        assert!(std::fs::metadata(&target).unwrap().permissions().readonly());
        assert!(!staged.exists());
        remove_file(&target).unwrap();
        assert!(!target.exists());
    }

    /// A file another process holds open without sharing (a server, an
    /// editor) is replaced once it lets go within the retry bound; held
    /// past it, the replace fails and leaves the file as it was, its
    /// read-only attribute included.
    #[cfg(windows)]
    #[test]
    fn a_file_held_without_sharing_is_retried_then_refused() {
        use std::os::windows::fs::OpenOptionsExt;
        let dir = tempfile::tempdir().unwrap();
        let (target, staged) = (dir.path().join("t.txt"), dir.path().join("s.tmp"));
        std::fs::write(&target, "old").unwrap();
        let hold = || {
            std::fs::OpenOptions::new()
                .read(true)
                .share_mode(0)
                .open(&target)
                .unwrap()
        };
        // Released after 150 ms: the replace waits for it.
        std::fs::write(&staged, "new").unwrap();
        let held = hold();
        let release = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(150));
            drop(held);
        });
        rename(&staged, &target).unwrap();
        release.join().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        // Held past RETRY_FOR: refused, nothing changed.
        read_only(&target, true);
        std::fs::write(&staged, "newer").unwrap();
        let held = hold();
        let start = std::time::Instant::now();
        assert!(rename(&staged, &target).is_err());
        assert!(start.elapsed() <= RETRY_FOR + std::time::Duration::from_millis(500));
        drop(held);
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        assert!(std::fs::metadata(&target).unwrap().permissions().readonly());
        assert!(staged.exists());
    }
}
