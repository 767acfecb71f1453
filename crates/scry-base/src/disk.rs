//! The one reader of workspace files: every place scry reads a file the
//! workspace holds (document sync, the syntactic index, occurrence scans,
//! source lines of answers, diagnostics, edits' before-images) reads it
//! through [`read`] or [`read_text`] (or scry-lsp's `disk_async::read_within`,
//! the same read on the blocking pool under a deadline), and walkers ask
//! [`check`].
//!
//! It lives here, in scry-base, below every crate that reads workspace
//! files, and is named by this one path everywhere (no crate above
//! re-exports it).
//!
//! Invariants:
//! - A special file (FIFO, socket, character or block device, or a symlink
//!   to one) is never opened: the path is `stat`ed first (the link itself,
//!   then its target) and refused with [`ReadError::NotRegular`]
//!   (`NOT_A_REGULAR_FILE`, naming the path and what it is).
//! - A file is opened without blocking on a special file and checked again
//!   through the open descriptor (`crate::platform::fs`: on Unix
//!   `O_NONBLOCK | O_NOCTTY` and `fstat`; on Windows `GetFileType`): a path
//!   swapped for a FIFO between the `stat` and the `open` is refused too,
//!   and never blocks the open.
//! - What is special is `crate::platform::fs`'s one answer: FIFOs, sockets
//!   and devices on Unix; devices, pipes, reparse points that are not links
//!   and device names (`CON`, `NUL`, `COM1`, refused by name, never
//!   `stat`ed) on Windows.
//! - A file over the limit is refused ([`ReadError::TooLarge`],
//!   `FILE_TOO_LARGE`, with its size and the limit) before a byte is read;
//!   one that grows while read is cut at the limit and refused the same way.

use std::fs::{File, Metadata};
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::platform;

/// Default largest workspace file scry reads (4 MiB); `limits.maxFileBytes`
/// changes it.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// Why a workspace file was not read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// A FIFO, socket, device, directory or a symlink to one.
    #[error("{} is not a regular file ({kind}); scry reads only regular files", path.display())]
    NotRegular { path: PathBuf, kind: &'static str },
    /// Larger than the limit.
    #[error(
        "{} is {} KiB, over the {} KiB file limit (limits.maxFileBytes); it is not read",
        path.display(), len.div_ceil(1024), limit / 1024
    )]
    TooLarge { path: PathBuf, len: u64, limit: u64 },
    /// The read did not finish by the deadline (a stuck file system).
    #[error("reading {} did not finish in time", path.display())]
    TimedOut { path: PathBuf },
    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl ReadError {
    /// A stable code: `NOT_A_REGULAR_FILE`, `FILE_TOO_LARGE`, `TIMEOUT`,
    /// `FILE_NOT_FOUND` (missing) or `READ_FAILED`.
    pub fn code(&self) -> &'static str {
        match self {
            ReadError::NotRegular { .. } => "NOT_A_REGULAR_FILE",
            ReadError::TooLarge { .. } => "FILE_TOO_LARGE",
            ReadError::TimedOut { .. } => "TIMEOUT",
            ReadError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                "FILE_NOT_FOUND"
            }
            ReadError::Io { .. } => "READ_FAILED",
        }
    }

    /// The path the error is about.
    pub fn path(&self) -> &Path {
        match self {
            ReadError::NotRegular { path, .. }
            | ReadError::TooLarge { path, .. }
            | ReadError::TimedOut { path }
            | ReadError::Io { path, .. } => path,
        }
    }

    /// True when the file is missing.
    pub fn is_not_found(&self) -> bool {
        matches!(self, ReadError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    }
}

/// What a file that is not regular is, in a word, for a refusal.
fn kind_of(meta: &Metadata) -> &'static str {
    if meta.file_type().is_dir() {
        return "a directory";
    }
    platform::fs::special_kind(meta).unwrap_or("not a regular file")
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ReadError + '_ {
    move |source| ReadError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn regular(path: &Path, meta: &Metadata, limit: u64) -> Result<(), ReadError> {
    if !meta.is_file() || platform::fs::special_kind(meta).is_some() {
        return Err(ReadError::NotRegular {
            path: path.to_path_buf(),
            kind: kind_of(meta),
        });
    }
    if meta.len() > limit {
        return Err(ReadError::TooLarge {
            path: path.to_path_buf(),
            len: meta.len(),
            limit,
        });
    }
    Ok(())
}

/// Whether `path` may be read: a regular file (itself, or what its symlinks
/// lead to) of at most `limit` bytes. Only `stat`s; opens nothing. Returns
/// the target's metadata.
pub fn check(path: &Path, limit: u64) -> Result<Metadata, ReadError> {
    // A name the OS makes a device (Windows' `CON`) is refused unstatted.
    if let Some(kind) = platform::fs::special_name(path) {
        return Err(ReadError::NotRegular {
            path: path.to_path_buf(),
            kind,
        });
    }
    let link = path.symlink_metadata().map_err(io(path))?;
    let meta = if link.file_type().is_symlink() {
        std::fs::metadata(path).map_err(io(path))?
    } else {
        link
    };
    regular(path, &meta, limit)?;
    Ok(meta)
}

/// Open a checked path without ever blocking on it (a FIFO swapped in
/// after the check), and check the opened file again.
fn open(path: &Path, limit: u64) -> Result<(File, Metadata), ReadError> {
    check(path, limit)?;
    let file = platform::fs::open_read(path).map_err(io(path))?;
    let meta = file.metadata().map_err(io(path))?;
    if let Some(kind) = platform::fs::opened_kind(&file, &meta) {
        return Err(ReadError::NotRegular {
            path: path.to_path_buf(),
            kind,
        });
    }
    regular(path, &meta, limit)?;
    Ok((file, meta))
}

/// The bytes of a regular file of at most `limit` bytes, with the metadata
/// of the opened file. Blocking: see `scry_lsp_session::disk_async::read_within` for async callers.
pub fn read_with_meta(path: &Path, limit: u64) -> Result<(Vec<u8>, Metadata), ReadError> {
    let (file, meta) = open(path, limit)?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // One byte past the limit tells a file that grew past it.
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io(path))?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge {
            path: path.to_path_buf(),
            len: bytes.len() as u64,
            limit,
        });
    }
    Ok((bytes, meta))
}

/// The bytes of a regular file of at most `limit` bytes.
pub fn read(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    read_with_meta(path, limit).map(|(b, _)| b)
}

/// The text of a regular UTF-8 file of at most `limit` bytes; `None` for
/// text that is not UTF-8.
pub fn read_text(path: &Path, limit: u64) -> Result<Option<String>, ReadError> {
    Ok(String::from_utf8(read(path, limit)?).ok())
}

/// What a file's metadata says of its content, compared before reading or
/// hashing it again: its size and modification time, and the
/// status-change time and file number, which `touch -r` (`utimes`) cannot
/// set back — a file rewritten and touched back to its old time differs in
/// these.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Stamp {
    pub size: u64,
    pub mtime_ns: u64,
    pub ctime_ns: u64,
    pub ino: u64,
}

/// How much older than a read a file's modification must be for its text
/// to stand for every later read under the same [`Stamp`] (see
/// [`Stamp::settled`]): file times move in clock ticks (a few ms on Linux,
/// 2 s on FAT), so a write just before or after a read may leave the same
/// times behind.
pub const SETTLED_AFTER: std::time::Duration = std::time::Duration::from_secs(3);

impl Stamp {
    /// The stamp of the file at `path` whose metadata (links followed) is
    /// `m`: the change time and file number come from
    /// [`platform::fs::change_stamp`] (status-change time and inode on
    /// Unix; change time and file index on Windows).
    pub fn of(path: &Path, m: &Metadata) -> Stamp {
        let change = platform::fs::change_stamp(path, m);
        Stamp {
            size: m.len(),
            mtime_ns: mtime_ns(m).unwrap_or(0),
            ctime_ns: change.ctime_ns,
            ino: change.file_id,
        }
    }

    /// Whether a text read under this stamp, the read begun at `read_at`,
    /// is the file's text whenever its stamp is this one again: its
    /// modification is older than the read by [`SETTLED_AFTER`] (a write
    /// that came later moves the times; one within a clock tick of the read
    /// could have left them as they were, so such a text is read again
    /// until it has settled).
    pub fn settled(&self, read_at: std::time::SystemTime) -> bool {
        let Ok(read) = read_at.duration_since(std::time::UNIX_EPOCH) else {
            return false;
        };
        self.mtime_ns != 0 && u128::from(self.mtime_ns) + SETTLED_AFTER.as_nanos() < read.as_nanos()
    }
}

/// A regular file's [`Stamp`] (symlinks followed).
pub fn stamp(path: &Path) -> Option<Stamp> {
    let m = std::fs::metadata(path).ok()?;
    m.is_file().then(|| Stamp::of(path, &m))
}

/// A file's modification time in nanoseconds since the epoch.
pub fn mtime_ns(m: &Metadata) -> Option<u64> {
    Some(
        m.modified()
            .ok()?
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?
            .as_nanos() as u64,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    #[test]
    fn reads_a_regular_file() {
        let d = dir();
        let p = d.path().join("a.py");
        std::fs::write(&p, "x = 1\n").unwrap();
        assert_eq!(read(&p, 100).unwrap(), b"x = 1\n");
        assert_eq!(read_text(&p, 100).unwrap().as_deref(), Some("x = 1\n"));
    }

    #[cfg(unix)]
    #[test]
    fn refuses_a_fifo_without_opening_it() {
        let d = dir();
        let p = d.path().join("fifo.py");
        let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let t = std::time::Instant::now();
        let e = read(&p, DEFAULT_MAX_FILE_BYTES).unwrap_err();
        assert!(t.elapsed().as_secs() < 5, "must not block");
        assert_eq!(e.code(), "NOT_A_REGULAR_FILE");
        assert!(e.to_string().contains("fifo.py"), "{e}");
        assert!(e.to_string().contains("named pipe"), "{e}");
        assert_eq!(check(&p, 10).unwrap_err().code(), "NOT_A_REGULAR_FILE");
    }

    #[cfg(unix)]
    #[test]
    fn refuses_a_socket() {
        let d = dir();
        let p = d.path().join("sock.rb");
        let _l = std::os::unix::net::UnixListener::bind(&p).unwrap();
        let e = read(&p, DEFAULT_MAX_FILE_BYTES).unwrap_err();
        assert_eq!(e.code(), "NOT_A_REGULAR_FILE");
        assert!(e.to_string().contains("socket"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn refuses_a_device_and_a_symlink_to_one() {
        let e = read(Path::new("/dev/zero"), DEFAULT_MAX_FILE_BYTES).unwrap_err();
        assert_eq!(e.code(), "NOT_A_REGULAR_FILE");
        assert!(e.to_string().contains("character device"), "{e}");
        let d = dir();
        let p = d.path().join("zero.py");
        std::os::unix::fs::symlink("/dev/zero", &p).unwrap();
        let e = read(&p, DEFAULT_MAX_FILE_BYTES).unwrap_err();
        assert_eq!(e.code(), "NOT_A_REGULAR_FILE");
        assert_eq!(e.path(), p);
        assert_eq!(check(&p, 10).unwrap_err().code(), "NOT_A_REGULAR_FILE");
    }

    #[cfg(unix)]
    #[test]
    fn follows_a_symlink_to_a_regular_file() {
        let d = dir();
        let real = d.path().join("real.py");
        std::fs::write(&real, "y\n").unwrap();
        let p = d.path().join("link.py");
        std::os::unix::fs::symlink(&real, &p).unwrap();
        assert_eq!(read(&p, 10).unwrap(), b"y\n");
    }

    #[cfg(windows)]
    #[test]
    fn refuses_device_names_without_opening_them() {
        let d = dir();
        for name in ["CON", "nul.txt", "COM1.py", "aux"] {
            let p = d.path().join(name);
            let e = read(&p, DEFAULT_MAX_FILE_BYTES).unwrap_err();
            assert_eq!(e.code(), "NOT_A_REGULAR_FILE", "{name}");
            assert!(e.to_string().contains("a device name"), "{e}");
        }
        let e = check(Path::new(r"\\.\pipe\scry"), 10).unwrap_err();
        assert!(e.to_string().contains("a device path"), "{e}");
    }

    #[test]
    fn refuses_a_directory() {
        let d = dir();
        assert_eq!(read(d.path(), 10).unwrap_err().code(), "NOT_A_REGULAR_FILE");
    }

    #[test]
    fn refuses_a_file_over_the_limit() {
        let d = dir();
        let p = d.path().join("big.js");
        std::fs::write(&p, vec![b'a'; 5000]).unwrap();
        let e = read(&p, 4096).unwrap_err();
        assert_eq!(e.code(), "FILE_TOO_LARGE");
        assert!(e.to_string().contains("big.js"), "{e}");
        assert!(e.to_string().contains("5 KiB, over the 4 KiB"), "{e}");
        assert_eq!(check(&p, 4096).unwrap_err().code(), "FILE_TOO_LARGE");
        // At the limit exactly: read.
        assert_eq!(read(&p, 5000).unwrap().len(), 5000);
    }

    #[test]
    fn a_missing_file_is_not_found() {
        let d = dir();
        let e = read(&d.path().join("gone.rs"), 10).unwrap_err();
        assert!(e.is_not_found());
        assert_eq!(e.code(), "FILE_NOT_FOUND");
    }
}
