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
//! - [`PATH_SYNTAX`]: which path rules of [`crate::paths`] the OS follows;
//! - [`DIRS`]: where per-user places lie by the OS's convention
//!   ([`crate::dirs`]: below the home directory, or below `%APPDATA%` and
//!   `%LOCALAPPDATA%`).
//!
//! Invariants: no other module of scry-base names `std::os::unix`,
//! `std::os::windows`, `libc` or `windows-sys` (tests aside); the rules
//! themselves (path syntax, device names, WTF-8) are plain functions in
//! [`crate::paths`] and here that run, and are tested, on every platform.

pub mod fs;
pub mod lock;
pub mod os_str;
pub mod process;

use crate::dirs::Convention;
use crate::paths::Syntax;

/// The path syntax of the OS scry runs on: separators, prefixes, case.
#[cfg(unix)]
pub const PATH_SYNTAX: Syntax = Syntax::Unix;
/// The path syntax of the OS scry runs on: separators, prefixes, case.
#[cfg(windows)]
pub const PATH_SYNTAX: Syntax = Syntax::Windows;

/// Where per-user places lie when no variable says ([`crate::dirs`]).
#[cfg(unix)]
pub const DIRS: Convention = Convention::Unix;
/// Where per-user places lie when no variable says ([`crate::dirs`]).
#[cfg(windows)]
pub const DIRS: Convention = Convention::Windows;
