//! Everything in scry-workspace that differs between Unix and Windows, one
//! module per concern, each with its Unix and its Windows side side by side
//! (`#[cfg(unix)] mod imp` / `#[cfg(windows)] mod imp` inside the concern's
//! file), behind one portable signature:
//!
//! - [`indexer`]: how a SCIP indexer runs — its whole process tree ended
//!   together (a process group and a sentinel on Linux, a kill-on-close Job
//!   Object on Windows), in the background at the lowest priority (nice 19
//!   and the idle I/O class; `IDLE_PRIORITY_CLASS`);
//! - [`env`]: how variable names compare (exactly; ignoring case on
//!   Windows, whose search path is `Path`);
//! - [`watch`]: the file watcher under `crate::watch` (inotify read by
//!   scry itself on Linux, see that module for why; `notify` and a marker
//!   file elsewhere).
//!
//! What differs below this crate stays there: files, locks and path rules
//! in `scry_base::platform`, servers' containment and memory in
//! `scry_lsp_session::process`.
//!
//! [`gaps`]: what the concerns here cannot do on this OS that they do on
//! others, for `scry doctor` (each concern says its own).
//!
//! Invariant: no other module of scry-workspace names `std::os::unix`,
//! `std::os::windows`, `libc` or `windows-sys`, nor carries a
//! `cfg(unix)`/`cfg(windows)` (tests that make Unix-only files aside), and
//! none names `inotify` or `notify`.

pub mod env;
pub mod indexer;
pub mod watch;

/// What scry does on other systems and cannot do on this one (`scry
/// doctor` words them).
pub fn gaps() -> Vec<scry_model::PlatformGap> {
    indexer::GAPS.to_vec()
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_gap_is_said_where_it_is() {
        let gaps = super::gaps();
        if cfg!(windows) {
            assert!(
                gaps.contains(&scry_model::PlatformGap::IndexerDiskPriority),
                "{gaps:?}"
            );
        } else {
            assert!(gaps.is_empty(), "{gaps:?}");
        }
    }
}
