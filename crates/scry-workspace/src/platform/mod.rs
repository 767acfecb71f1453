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
//!   Windows, whose search path is `Path`).
//!
//! What differs below this crate stays there: files, locks and path rules
//! in `scry_base::platform`, servers' containment and memory in
//! `scry_lsp::process`.
//!
//! [`gaps`]: what the concerns here cannot do on this OS that they do on
//! others, for `scry doctor` (each concern says its own).
//!
//! Invariant: no other module of scry-workspace names `std::os::unix`,
//! `std::os::windows`, `libc` or `windows-sys`, nor carries a
//! `cfg(unix)`/`cfg(windows)` (tests that make Unix-only files aside).

pub mod env;
pub mod indexer;

/// What scry does on other systems and cannot do on this one, each a
/// sentence naming the feature and why (`scry doctor` shows them).
pub fn gaps() -> Vec<&'static str> {
    indexer::GAPS.to_vec()
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_gap_is_said_where_it_is() {
        let gaps = super::gaps();
        if cfg!(windows) {
            assert!(gaps.iter().any(|g| g.contains("disk priority")), "{gaps:?}");
        } else {
            assert!(gaps.is_empty(), "{gaps:?}");
        }
    }
}
