//! Everything in scry-daemon that differs between Unix and Windows, one
//! module per concern, each with its Unix and its Windows side side by side
//! (`#[cfg(unix)] mod unix` / `#[cfg(windows)] mod windows` inside the
//! concern's file), behind one portable signature:
//!
//! - [`transport`]: where the daemon listens and how a client connects (a
//!   Unix socket in the daemon directory; a named pipe per user, version
//!   and daemon directory whose ACL admits the current user only), and who
//!   may connect;
//! - [`dir`]: the daemon directory made private and checked (mode 0700 and
//!   our uid; on Windows a plain directory, the pipe's ACL being the gate);
//! - [`spawn`]: the daemon started detached (its own session; a detached
//!   process in its own process group, without a console);
//! - [`signals`]: what asks the daemon to stop (SIGTERM, SIGINT; Ctrl-C,
//!   Ctrl-Break, console close, system shutdown).
//!
//! The lock file held for the daemon's life (the one-daemon rule) is
//! `scry_base::platform::lock`, shared with scry-edit's writer lock.
//!
//! Invariants: no other module of scry-daemon names `std::os::unix`,
//! `std::os::windows`, `tokio::net::Unix*`, `tokio::net::windows`,
//! `tokio::signal::{unix,windows}`, `libc` or `windows-sys`, nor holds a
//! `cfg` on the platform; the protocol runs over any
//! `AsyncRead + AsyncWrite` stream and does not know the transport.

pub mod dir;
pub mod signals;
pub mod spawn;
pub mod transport;
