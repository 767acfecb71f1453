//! Everything in scry-base that differs between Unix and Windows, one
//! module per concern, each with its Unix and its Windows side side by side
//! (`#[cfg(unix)] mod unix` / `#[cfg(windows)] mod windows` inside the
//! concern's file), behind one portable signature:
//!
//! - [`fs`]: what kind of file a path or an open file is (FIFOs, sockets
//!   and devices on Unix; devices, pipes, reparse points and reserved
//!   device names on Windows) and the open that never blocks on one;
//! - [`lock`]: the exclusive, non-blocking lock of an open file (the
//!   daemon's lock file, scry-edit's writer lock);
//! - [`os_str`]: the bytes of an OS string and back (raw bytes on Unix,
//!   WTF-8 on Windows);
//! - [`process`]: whether a process is running, by its pid (`/proc`,
//!   `kill(pid, 0)`; its exit code on Windows);
//! - [`OS`]: which OS's rules scry follows, an [`Os`]: the path syntax of
//!   [`crate::paths`] and where per-user places lie ([`crate::dirs`]: below
//!   the home directory, or below `%APPDATA%` and `%LOCALAPPDATA%`).
//!
//! Invariants: no other module of scry-base names `std::os::unix`,
//! `std::os::windows`, `libc` or `windows-sys` (tests aside); the rules
//! themselves (path syntax, device names, WTF-8) are plain functions in
//! [`crate::paths`] and here that run, and are tested, on every platform.

pub mod fs;
pub mod lock;
pub mod os_str;
pub mod process;

/// Which OS's rules a path or a per-user place follows. The rules are
/// plain functions over an `Os` ([`crate::paths`], [`crate::uri`],
/// [`crate::dirs`]), so both are tested on every platform.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    /// `/` separates and names compare byte for byte; per-user places lie
    /// below the home directory (`~/.config`, `~/.local/state`, `~/.cache`).
    Unix,
    /// `\` and `/` separate; drives, UNC shares and `\\?\`; names compare
    /// ignoring case ([`crate::paths::windows`]); per-user places lie below
    /// the known folders `%APPDATA%` (roaming: the configuration) and
    /// `%LOCALAPPDATA%` (this machine's: state, caches).
    Windows,
}

/// The OS scry runs on.
#[cfg(unix)]
pub const OS: Os = Os::Unix;
/// The OS scry runs on.
#[cfg(windows)]
pub const OS: Os = Os::Windows;
