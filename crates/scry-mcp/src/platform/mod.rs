//! Everything in scry-mcp that differs between Unix and Windows, one
//! module per concern, each with its Unix and its Windows side side by side
//! (`#[cfg(unix)] mod imp` / `#[cfg(windows)] mod imp` inside the concern's
//! file), behind one portable signature:
//!
//! - [`files`]: the HTTP endpoint's private files (the generated token and
//!   its directory: modes 0600 and 0700 on Unix; on Windows the user's
//!   profile ACL, no mode bits) and whether a token file is private;
//! - [`signals`]: what stops `scry mcp --http` (SIGTERM or Ctrl-C on Unix;
//!   Ctrl-C on Windows);
//! - [`stdio`]: stdin and stdout as async streams (on Unix a pipe or a
//!   socket polled by the runtime itself; tokio's stdio otherwise).
//!
//! Invariant: no other module of scry-mcp names `std::os::unix`, `libc`,
//! `std::os::windows` or `tokio::signal::{unix,windows}`, nor holds a
//! platform `cfg` outside its tests' fixtures.

pub mod files;
pub mod signals;
pub mod stdio;
