//! What kind of file a path is, and the open that never blocks on a
//! special one: the file facts under `disk` (the one reader) and `walk`
//! (ignore files never opened when special).
//!
//! - Unix: a FIFO, a socket, a character or a block device is special;
//!   the open is `O_NONBLOCK | O_NOCTTY` (a FIFO swapped in after the
//!   check never blocks the open, a terminal never becomes the
//!   controlling one) and the opened descriptor is `fstat`ed again.
//! - Windows: a device (`FILE_ATTRIBUTE_DEVICE`), a reparse point that is
//!   not a link (`FILE_ATTRIBUTE_REPARSE_POINT` after links are followed:
//!   cloud placeholders that download on open, app execution aliases, …)
//!   and a name the OS turns into a device (`CON`, `NUL`, `COM1`, … in any
//!   directory, with any extension — [`crate::paths::windows::device_name`] —
//!   and `\\.\` device paths) are special; the opened handle must be a
//!   disk file (`GetFileType` is `FILE_TYPE_DISK`: not a console, a
//!   serial port, a pipe).
//!
//!
//! Plus whether a file is a program ([`is_executable`]: the execute bits
//! on Unix, a program extension on Windows) and the names a command is
//! looked for under in one directory ([`program_candidates`]: the name
//! itself on Unix; on Windows the name with each `PATHEXT` extension,
//! npm's `tsserver.cmd` for `tsserver`), the creation of a file only
//! its user may read ([`private`]: mode
//! 0600 on Unix, the directory's ACL on Windows), and what a file's
//! identity is beyond its size and modification time
//! ([`change_stamp`]: the status-change time and inode on Unix, the change
//! time and file index on Windows, read through a handle opened for its
//! attributes only) and positional reads ([`read_exact_at`]: `pread` on
//! Unix, `ReadFile` at an offset on Windows, neither moving a cursor that
//! another reader relies on).
//!
//! Invariants: a regular file, a directory and a symbolic link (itself)
//! are never special; every answer is a phrase for a refusal ("a named
//! pipe"), the same words on every platform where the kinds meet.

use std::fs::{File, Metadata};
use std::io;
use std::path::Path;

/// What the file `meta` describes is, when it is special (neither a
/// regular file, a directory nor a symbolic link): a phrase for a refusal.
pub fn special_kind(meta: &Metadata) -> Option<&'static str> {
    imp::special_kind(meta)
}

/// What `path` is by its name alone, when its name makes it special
/// whatever the disk holds (Windows' device names); `None` on Unix.
pub fn special_name(path: &Path) -> Option<&'static str> {
    imp::special_name(path)
}

/// `path` opened for reading without ever blocking on a special file.
pub fn open_read(path: &Path) -> io::Result<File> {
    imp::open_read(path)
}

/// What the opened `file` (whose metadata is `meta`) is, when special.
pub fn opened_kind(file: &File, meta: &Metadata) -> Option<&'static str> {
    imp::opened_kind(file, meta)
}

/// What a rewrite changes and setting a file's times back does not: the
/// status-change time (ns, on the OS's own epoch) and the file's number on
/// its volume. 0 for what cannot be read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChangeStamp {
    pub ctime_ns: u64,
    pub file_id: u64,
}

/// The [`ChangeStamp`] of the file at `path`, whose metadata (links
/// followed) is `meta`.
pub fn change_stamp(path: &Path, meta: &Metadata) -> ChangeStamp {
    imp::change_stamp(path, meta)
}

/// Whether `path` is a program this OS can start: a regular file (links
/// followed) with an execute bit on Unix; on Windows, which has none, one
/// whose name has a program extension
/// ([`crate::paths::windows::runnable`]: `.exe`, `.com`, `.bat`, `.cmd`).
pub fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && imp::executable(path, &m))
}

/// The paths under which the program `path` (a directory joined with a
/// command name, or a path a configuration names) is looked for, in the
/// order they are tried: `path` itself on Unix; on Windows the names of
/// [`crate::paths::windows::program_names`] by `pathext` (the `PATHEXT`
/// of the caller's environment: the call's, not necessarily this
/// process's), so an extensionless file (npm's `sh` twin of a `.cmd`
/// shim) is never tried. Always `path` or `path` with an extension added.
pub fn program_candidates(
    path: &Path,
    pathext: Option<&std::ffi::OsStr>,
) -> Vec<std::path::PathBuf> {
    imp::program_candidates(path, pathext)
}

/// Make `opts` create a file only this user can read: mode 0600 on Unix;
/// on Windows nothing to add, the file inheriting the ACL of its directory
/// (scry's places lie in the user's own profile, [`crate::dirs`]).
pub fn private(opts: &mut std::fs::OpenOptions) -> &mut std::fs::OpenOptions {
    imp::private(opts)
}

/// Fill `buf` from `file` at `offset`, or fail (`UnexpectedEof` when the
/// file ends first).
pub fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    imp::read_exact_at(file, buf, offset)
}

#[cfg(unix)]
mod imp {
    use std::fs::{File, Metadata};
    use std::io;
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    use std::path::Path;

    pub fn special_kind(meta: &Metadata) -> Option<&'static str> {
        let t = meta.file_type();
        if t.is_fifo() {
            Some("a named pipe")
        } else if t.is_socket() {
            Some("a socket")
        } else if t.is_char_device() {
            Some("a character device")
        } else if t.is_block_device() {
            Some("a block device")
        } else {
            None
        }
    }

    pub fn special_name(_path: &Path) -> Option<&'static str> {
        None
    }

    pub fn open_read(path: &Path) -> io::Result<File> {
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(path)
    }

    pub fn opened_kind(_file: &File, meta: &Metadata) -> Option<&'static str> {
        special_kind(meta)
    }

    pub fn change_stamp(_path: &Path, meta: &Metadata) -> super::ChangeStamp {
        use std::os::unix::fs::MetadataExt;
        super::ChangeStamp {
            ctime_ns: (meta.ctime().max(0) as u64)
                .saturating_mul(1_000_000_000)
                .saturating_add(meta.ctime_nsec().max(0) as u64),
            file_id: meta.ino(),
        }
    }

    pub fn private(opts: &mut std::fs::OpenOptions) -> &mut std::fs::OpenOptions {
        opts.mode(0o600)
    }

    pub fn program_candidates(
        path: &Path,
        _pathext: Option<&std::ffi::OsStr>,
    ) -> Vec<std::path::PathBuf> {
        vec![path.to_path_buf()]
    }

    pub fn executable(_path: &Path, meta: &Metadata) -> bool {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode() & 0o111 != 0
    }

    pub fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
        use std::os::unix::fs::FileExt;
        file.read_exact_at(buf, offset)
    }
}

#[cfg(windows)]
mod imp {
    use std::fs::{File, Metadata};
    use std::io;
    use std::os::windows::fs::MetadataExt;
    use std::os::windows::io::AsRawHandle;
    use std::path::Path;
    use windows_sys::Win32::Storage::FileSystem::{
        FILE_ATTRIBUTE_DEVICE, FILE_ATTRIBUTE_REPARSE_POINT, FILE_TYPE_CHAR, FILE_TYPE_DISK,
        FILE_TYPE_PIPE, GetFileType,
    };

    pub fn special_kind(meta: &Metadata) -> Option<&'static str> {
        let attrs = meta.file_attributes();
        if meta.file_type().is_symlink() {
            None
        } else if attrs & FILE_ATTRIBUTE_DEVICE != 0 {
            Some("a device")
        } else if attrs & FILE_ATTRIBUTE_REPARSE_POINT != 0 {
            Some("a reparse point")
        } else {
            None
        }
    }

    pub fn special_name(path: &Path) -> Option<&'static str> {
        let text = path.to_string_lossy();
        if crate::paths::windows::device_path(&text) {
            return Some("a device path");
        }
        path.file_name()
            .and_then(|n| n.to_str())
            .filter(|n| crate::paths::windows::device_name(n))
            .map(|_| "a device name")
    }

    pub fn open_read(path: &Path) -> io::Result<File> {
        // std's default share mode (read, write, delete) lets a server or
        // an editor go on writing and renaming the file while scry reads.
        std::fs::OpenOptions::new().read(true).open(path)
    }

    pub fn opened_kind(file: &File, meta: &Metadata) -> Option<&'static str> {
        // SAFETY: the handle is open for as long as `file` lives.
        match unsafe { GetFileType(file.as_raw_handle()) } {
            FILE_TYPE_DISK => special_kind(meta),
            FILE_TYPE_CHAR => Some("a character device"),
            FILE_TYPE_PIPE => Some("a named pipe"),
            _ => Some("not a disk file"),
        }
    }

    pub fn change_stamp(path: &Path, _meta: &Metadata) -> super::ChangeStamp {
        use std::os::windows::fs::OpenOptionsExt;
        use windows_sys::Win32::Storage::FileSystem::{
            BY_HANDLE_FILE_INFORMATION, FILE_BASIC_INFO, FILE_READ_ATTRIBUTES, FileBasicInfo,
            GetFileInformationByHandle, GetFileInformationByHandleEx,
        };
        let Ok(file) = std::fs::OpenOptions::new()
            .access_mode(FILE_READ_ATTRIBUTES)
            .open(path)
        else {
            return super::ChangeStamp::default();
        };
        let h = file.as_raw_handle();
        // SAFETY: both structs are plain data the calls fill; the handle
        // is open for as long as `file` lives.
        let (basic, by_handle) = unsafe {
            let mut basic: FILE_BASIC_INFO = std::mem::zeroed();
            let ok_basic = GetFileInformationByHandleEx(
                h,
                FileBasicInfo,
                (&raw mut basic).cast(),
                std::mem::size_of::<FILE_BASIC_INFO>() as u32,
            ) != 0;
            let mut info: BY_HANDLE_FILE_INFORMATION = std::mem::zeroed();
            let ok_info = GetFileInformationByHandle(h, &mut info) != 0;
            (ok_basic.then_some(basic), ok_info.then_some(info))
        };
        super::ChangeStamp {
            // 100 ns ticks since 1601.
            ctime_ns: basic.map_or(0, |b| (b.ChangeTime.max(0) as u64).saturating_mul(100)),
            file_id: by_handle.map_or(0, |i| {
                (u64::from(i.nFileIndexHigh) << 32) | u64::from(i.nFileIndexLow)
            }),
        }
    }

    pub fn private(opts: &mut std::fs::OpenOptions) -> &mut std::fs::OpenOptions {
        opts
    }

    pub fn program_candidates(
        path: &Path,
        pathext: Option<&std::ffi::OsStr>,
    ) -> Vec<std::path::PathBuf> {
        use crate::paths::windows::{program_extensions, program_names};
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            return Vec::new();
        };
        let exts = program_extensions(pathext.and_then(|v| v.to_str()));
        program_names(name, &exts)
            .into_iter()
            .map(|n| path.with_file_name(n))
            .collect()
    }

    pub fn executable(path: &Path, _meta: &Metadata) -> bool {
        path.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(crate::paths::windows::runnable)
    }

    pub fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
        use std::os::windows::fs::FileExt;
        while !buf.is_empty() {
            match file.seek_read(buf, offset) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the file ended before the read did",
                    ));
                }
                Ok(n) => {
                    buf = &mut buf[n..];
                    offset += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_is_a_file_the_os_can_start() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path();
        std::fs::create_dir(dir.join("d.exe")).unwrap();
        assert!(!is_executable(&dir.join("d.exe")), "a directory is none");
        assert!(!is_executable(&dir.join("missing.exe")));
        let write = |name: &str| {
            let p = dir.join(name);
            std::fs::write(&p, "x").unwrap();
            p
        };
        let (tool, plain) = (write("tool.exe"), write("tool"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            // The execute bits decide, whatever the name.
            assert!(!is_executable(&tool));
            std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o755)).unwrap();
            assert!(is_executable(&plain));
        }
        #[cfg(windows)]
        {
            // The extension decides.
            assert!(is_executable(&tool));
            assert!(!is_executable(&plain));
            assert!(is_executable(&write("npm.CMD")));
            assert!(!is_executable(&write("tool.js")));
        }
    }

    #[test]
    fn a_command_is_looked_for_under_its_program_names() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path();
        let pathext = Some(std::ffi::OsStr::new(".CMD;.EXE"));
        let c = program_candidates(&dir.join("tool"), pathext);
        if cfg!(windows) {
            assert_eq!(c, [dir.join("tool.cmd"), dir.join("tool.exe")]);
            assert_eq!(
                program_candidates(&dir.join("tool.Exe"), pathext),
                [dir.join("tool.Exe")]
            );
        } else {
            assert_eq!(c, [dir.join("tool")], "PATHEXT means nothing here");
        }
    }

    #[test]
    fn a_private_file_is_its_users_alone() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("secret");
        let f = private(std::fs::OpenOptions::new().write(true).create_new(true)).open(&p);
        assert!(f.is_ok());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&p).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }
}
