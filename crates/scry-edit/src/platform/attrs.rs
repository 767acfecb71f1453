//! The permission word an edit keeps on a file ([`crate::plan::FileImage`]'s
//! `mode`, the journal's [`crate::journal::FileState`]): read from a file's
//! metadata, given to a staged file before it replaces its target, and the
//! word a new file gets.
//!
//! - Unix: the mode bits (`st_mode & 0o7777`); a new file gets 0o666 less
//!   the process umask (learnt once from a probe file, never by changing
//!   the umask).
//! - Windows: the read-only and hidden attributes
//!   (`FILE_ATTRIBUTE_READONLY | FILE_ATTRIBUTE_HIDDEN`; the others, such
//!   as archive, are the file system's to set); a new file gets neither.
//!   A read-only file is edited and stays read-only, as a Unix file without
//!   write permission is (the replace clears the attribute of the file it
//!   replaces: [`crate::platform::replace`]).
//!
//! Invariants: a word read here and set again here gives the file the same
//! word back (what recovery and undo rely on); the word is a per-machine
//! fact (the journal lives in the user's state directory), never compared
//! across platforms.

use std::fs::{File, Metadata};
use std::io;
use std::path::Path;

/// The permission word of the file `meta` describes.
pub fn of(meta: &Metadata) -> u32 {
    imp::of(meta)
}

/// The permission word of a file created by this process.
pub fn new_file() -> u32 {
    imp::new_file()
}

/// Give the staged file `file`, open at `path`, the permission word `mode`.
pub fn set(file: &File, path: &Path, mode: u32) -> io::Result<()> {
    imp::set(file, path, mode)
}

/// Give the file at `path` the permission word `mode` (tests set a file's
/// word up with it: `platform::testing`).
pub fn set_path(path: &Path, mode: u32) -> io::Result<()> {
    imp::set_path(path, mode)
}

#[cfg(unix)]
mod imp {
    use std::fs::{File, Metadata, OpenOptions, Permissions};
    use std::io;
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;

    pub fn of(meta: &Metadata) -> u32 {
        meta.permissions().mode() & 0o7777
    }

    pub fn new_file() -> u32 {
        static MODE: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
        *MODE.get_or_init(|| {
            // Learn the umask without changing it: create a probe file.
            let probe = std::env::temp_dir().join(format!(".scry-umask-{}", std::process::id()));
            let mode = OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .open(&probe)
                .and_then(|f| f.metadata())
                .map(|m| m.permissions().mode() & 0o777)
                .unwrap_or(0o644);
            let _ = std::fs::remove_file(&probe);
            mode
        })
    }

    pub fn set(file: &File, _path: &Path, mode: u32) -> io::Result<()> {
        file.set_permissions(Permissions::from_mode(mode))
    }

    pub fn set_path(path: &Path, mode: u32) -> io::Result<()> {
        std::fs::set_permissions(path, Permissions::from_mode(mode))
    }
}

#[cfg(windows)]
mod imp {
    use std::fs::{File, Metadata};
    use std::io;
    use std::os::windows::fs::MetadataExt;
    use std::path::Path;

    use windows_sys::Win32::Storage::FileSystem::{
        FILE_ATTRIBUTE_HIDDEN, FILE_ATTRIBUTE_NORMAL, FILE_ATTRIBUTE_READONLY, GetFileAttributesW,
        INVALID_FILE_ATTRIBUTES, SetFileAttributesW,
    };

    /// The attributes an edit keeps.
    pub const KEPT: u32 = FILE_ATTRIBUTE_READONLY | FILE_ATTRIBUTE_HIDDEN;

    pub fn of(meta: &Metadata) -> u32 {
        meta.file_attributes() & KEPT
    }

    pub fn new_file() -> u32 {
        0
    }

    pub fn set(_file: &File, path: &Path, mode: u32) -> io::Result<()> {
        set_path(path, mode)
    }

    pub fn set_path(path: &Path, mode: u32) -> io::Result<()> {
        let wide = super::super::wide(path);
        // SAFETY: a NUL-terminated UTF-16 path that outlives the calls.
        unsafe {
            let now = GetFileAttributesW(wide.as_ptr());
            if now == INVALID_FILE_ATTRIBUTES {
                return Err(io::Error::last_os_error());
            }
            let mut new = (now & !KEPT) | (mode & KEPT);
            if new == 0 {
                new = FILE_ATTRIBUTE_NORMAL;
            }
            if new != now && SetFileAttributesW(wide.as_ptr(), new) == 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }
}
