//! Everything in scry-edit that differs between Unix and Windows, one
//! module per concern, each with its Unix and its Windows side side by side
//! (`#[cfg(unix)] mod imp` / `#[cfg(windows)] mod imp` inside the concern's
//! file), behind one portable signature:
//!
//! - [`attrs`]: the permission word an edit keeps on a file (the mode bits
//!   on Unix; the read-only and hidden attributes on Windows): read, set on
//!   a staged file, compared;
//! - [`replace`]: the atomic replace of a file by a staged one, the removal
//!   of a file, the creation of a private staged file and the durability of
//!   a directory's names (fsync on Unix; on Windows `MoveFileExW` with
//!   `MOVEFILE_WRITE_THROUGH`, retried while another process holds the
//!   file, and no directory sync, which Windows has no call for);
//! - [`process`]: the crash test hook's death (SIGKILL on Unix,
//!   `TerminateProcess` on Windows) and how a parent recognises it.
//!
//! The writer lock's cross-process lock of an open file is
//! `scry_base::platform::lock`, shared with the daemon's lock file.
//!
//! `testing` (tests and the `test-hooks` feature only) holds the portable
//! helpers the tests of this crate and of scry-ops use to set and read
//! those words and to make links.
//!
//! Invariants: no other module of scry-edit names `std::os::unix`,
//! `std::os::windows`, `libc` or `windows-sys`, nor carries a
//! `cfg(unix)`/`cfg(windows)`; a file's bytes are never touched here except
//! by the callers' staged writes (CRLF, a BOM and the trailing newline are
//! plan facts, the same on every platform).

pub mod attrs;
pub mod process;
pub mod replace;
#[cfg(any(test, feature = "test-hooks"))]
pub mod testing;

/// `path` as a NUL-terminated UTF-16 string, for the `W` calls.
#[cfg(windows)]
fn wide(path: &std::path::Path) -> Vec<u16> {
    use std::os::windows::ffi::OsStrExt;
    path.as_os_str().encode_wide().chain(Some(0)).collect()
}
