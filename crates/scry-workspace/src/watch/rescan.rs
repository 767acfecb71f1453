//! After the kernel's queue of changes overflowed (changes were lost): the
//! watched directories are looked at again, a share of them at each drain,
//! and each file whose content or status changed since the last drain
//! that lost nothing (by its modification or status-change time, less a
//! margin for coarse clocks) is queued as changed, a new directory's files
//! as created.
//!
//! Invariants: bounded per drain by its time ([`Rescan::step`]) and in
//! memory by the directories watched (one path each, taken when the
//! overflow was seen); nothing is held per file. A file removed while
//! changes were lost leaves nothing to stat: it cannot be found this way,
//! so while a rescan runs the answers keep saying changes may be missed
//! (`Unseen::overflowed`).

use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use scry_base::disk::Stamp;

/// How far before the last drain that lost nothing a change is looked for
/// (file systems with coarse timestamps).
pub(super) const MARGIN: Duration = Duration::from_secs(2);

/// A rescan under way.
pub(super) struct Rescan {
    /// Changes at or after this (nanoseconds since the epoch) are queued.
    since_ns: u64,
    /// The directories left to look at.
    left: Vec<PathBuf>,
}

impl Rescan {
    /// Look again at `dirs` for changes made since `clean` (the start of
    /// the last drain that lost nothing).
    pub(super) fn new(clean: SystemTime, dirs: Vec<PathBuf>) -> Rescan {
        let since = clean.checked_sub(MARGIN).unwrap_or(UNIX_EPOCH);
        Rescan {
            since_ns: since
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64),
            left: dirs,
        }
    }

    /// The same, for more directories and the earlier of two starts (an
    /// overflow while one runs).
    pub(super) fn merge(&mut self, other: Rescan) {
        self.since_ns = self.since_ns.min(other.since_ns);
        self.left.extend(other.left);
        self.left.sort();
        self.left.dedup();
    }

    /// Look at directories until `until`, queueing into `out` what changed
    /// since; true when every directory was looked at.
    pub(super) fn step(&mut self, until: Instant, out: &mut Vec<(PathBuf, u8)>) -> bool {
        while let Some(dir) = self.left.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in entries.flatten() {
                let Ok(meta) = e.metadata() else { continue };
                if !meta.is_file() {
                    continue;
                }
                let path = e.path();
                let s = Stamp::of(&path, &meta);
                if s.mtime_ns >= self.since_ns || s.ctime_ns >= self.since_ns {
                    out.push((path, crate::platform::watch::CHANGED));
                }
            }
            if Instant::now() >= until {
                break;
            }
        }
        self.left.is_empty()
    }

    /// Directories left to look at.
    pub(super) fn left(&self) -> usize {
        self.left.len()
    }
}
