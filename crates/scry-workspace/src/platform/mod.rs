//! Everything in scry-workspace that differs between platforms, one
//! module per concern, each platform's side beside the other behind one
//! portable signature:
//!
//! - [`watch`]: the file watcher under `crate::watch` (inotify read by
//!   scry itself on Linux; `notify` and a marker file elsewhere).
//!
//! Invariant: no other module of scry-workspace names `inotify` or
//! `notify`.

pub mod watch;
