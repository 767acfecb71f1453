//! Portable helpers for the tests of scry-edit and scry-ops (compiled for
//! tests and with the `test-hooks` feature only): a file's permission word
//! as the tests compare it, a word an edit must keep that no new file has,
//! links, a directory's modification time. Not an API.
//!
//! - Unix: the word as `stat` reports it (type bits included), [`KEPT`]
//!   0o755 (an executable script), `symlink(2)`.
//! - Windows: the read-only and hidden attributes
//!   ([`crate::platform::attrs`]), [`KEPT`] both, `CreateSymbolicLinkW`
//!   (which needs developer mode or the privilege: a test that needs a
//!   link skips that part when it fails, [`link_or_skip`]).

use std::io;
use std::path::Path;

/// A permission word an edit keeps, that no file gets by default.
pub const KEPT: u32 = imp::KEPT;

/// The permission word of the file at `path` (links not followed), as the
/// tests compare it before and after an edit.
pub fn word(path: &Path) -> io::Result<u32> {
    imp::word(path)
}

/// Give the file at `path` the permission word `mode`.
pub fn set_word(path: &Path, mode: u32) -> io::Result<()> {
    super::attrs::set_path(path, mode)
}

/// Make `link` a symbolic link to `target` (a directory link when `target`
/// is a directory).
pub fn symlink(target: &Path, link: &Path) -> io::Result<()> {
    imp::symlink(target, link)
}

/// Set the modification time of the directory (or file) at `path`.
pub fn set_modified(path: &Path, time: std::time::SystemTime) -> io::Result<()> {
    imp::open_for_times(path)?.set_modified(time)
}

/// [`symlink`] for a test that checks links where the OS lets this user
/// make them: `true` when made; on Unix a failure panics, on Windows
/// (links need developer mode or a privilege) it is said and `false`.
pub fn link_or_skip(target: &Path, link: &Path) -> bool {
    match symlink(target, link) {
        Ok(()) => true,
        Err(e) => imp::no_link(link, e),
    }
}

#[cfg(unix)]
mod imp {
    use std::io;
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;

    pub const KEPT: u32 = 0o755;

    pub fn word(path: &Path) -> io::Result<u32> {
        Ok(path.symlink_metadata()?.permissions().mode())
    }

    pub fn symlink(target: &Path, link: &Path) -> io::Result<()> {
        std::os::unix::fs::symlink(target, link)
    }

    pub fn open_for_times(path: &Path) -> io::Result<std::fs::File> {
        std::fs::File::open(path)
    }

    pub fn no_link(link: &Path, e: io::Error) -> bool {
        panic!("cannot make the link {}: {e}", link.display())
    }
}

#[cfg(windows)]
mod imp {
    use std::io;
    use std::path::Path;

    use windows_sys::Win32::Storage::FileSystem::{FILE_ATTRIBUTE_HIDDEN, FILE_ATTRIBUTE_READONLY};

    pub const KEPT: u32 = FILE_ATTRIBUTE_READONLY | FILE_ATTRIBUTE_HIDDEN;

    pub fn word(path: &Path) -> io::Result<u32> {
        Ok(super::super::attrs::of(&path.symlink_metadata()?))
    }

    pub fn symlink(target: &Path, link: &Path) -> io::Result<()> {
        // A relative target is resolved from the link's directory.
        let resolved = link
            .parent()
            .map_or(target.to_path_buf(), |d| d.join(target));
        if resolved.is_dir() {
            std::os::windows::fs::symlink_dir(target, link)?;
        } else {
            std::os::windows::fs::symlink_file(target, link)?;
        }
        // Wine 8 answers success and makes nothing: a link that is not
        // there is not made.
        match link.symlink_metadata() {
            Ok(m) if m.file_type().is_symlink() => Ok(()),
            Ok(_) => Err(io::Error::other("not made as a link")),
            Err(e) => Err(e),
        }
    }

    pub fn open_for_times(path: &Path) -> io::Result<std::fs::File> {
        use std::os::windows::fs::OpenOptionsExt;
        use windows_sys::Win32::Storage::FileSystem::FILE_FLAG_BACKUP_SEMANTICS;
        // A directory opens only with backup semantics; times need write
        // access.
        std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(FILE_FLAG_BACKUP_SEMANTICS)
            .open(path)
    }

    pub fn no_link(link: &Path, e: io::Error) -> bool {
        eprintln!("skipping the link {}: {e}", link.display());
        false
    }
}
