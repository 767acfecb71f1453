//! The directories the watcher does not watch — past
//! `limits.maxWatchedDirs`, or refused by the kernel (its limit on
//! watches, no inotify instance left) — polled instead: each kept with the
//! stamps of the files it held when last looked at, and compared again at
//! each drain, so a change there reaches the servers as a watched one does.
//!
//! Invariants: bounded: at most [`MAX_POLLED`] directories (the rest are
//! counted, [`Polled::dropped`]), each read with one `read_dir` and a
//! `stat` per file, no deeper than the directories the walk found and those
//! that appear in polled ones; a poll runs for at most the time it is given
//! and resumes where it stopped (round robin), saying how many directories
//! it did not reach; files are compared by size, modification time and
//! file number, so a rewrite touched back to its old time is still seen.

use std::collections::{BTreeMap, HashSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::platform::watch::{CHANGED, CREATED, DELETED};

/// At most this many directories are polled per workspace.
pub const MAX_POLLED: usize = 200_000;

/// One entry of a polled directory as last seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    Dir,
    File { size: u64, mtime_ns: u64, ino: u64 },
}

type Listing = BTreeMap<OsString, Seen>;

/// What one poll found.
#[derive(Debug, Default)]
pub(super) struct Found {
    /// Files created, changed or removed (directories removed too).
    pub changes: Vec<(PathBuf, u8)>,
    /// Directories that appeared in polled ones (to watch, or poll).
    pub new_dirs: Vec<PathBuf>,
    /// Polled directories that are gone.
    pub gone: Vec<PathBuf>,
    /// Directories this poll did not reach in its time.
    pub unreached: usize,
}

/// The polled directories (see the module header).
#[derive(Default)]
pub(super) struct Polled {
    dirs: Vec<(PathBuf, Listing)>,
    /// The paths of `dirs`, to ask of one at once.
    known: HashSet<PathBuf>,
    cursor: usize,
    /// Directories past [`MAX_POLLED`]: neither watched nor polled.
    pub dropped: usize,
    /// Why directories are polled (the first reason).
    pub why: Option<String>,
}

/// What `dir` holds now (regular files and directories; links, sockets
/// and the like are left out), `None` when it cannot be read (gone).
fn list(dir: &Path) -> Option<Listing> {
    let rd = std::fs::read_dir(dir).ok()?;
    let mut out = Listing::new();
    for e in rd.flatten() {
        let Ok(t) = e.file_type() else { continue };
        let name = e.file_name();
        if t.is_dir() {
            if !scry_base::walk::is_skipped(&name) {
                out.insert(name, Seen::Dir);
            }
        } else if t.is_file()
            && let Ok(m) = e.metadata()
        {
            let s = scry_base::disk::Stamp::of(&e.path(), &m);
            out.insert(
                name,
                Seen::File {
                    size: s.size,
                    mtime_ns: s.mtime_ns,
                    ino: s.ino,
                },
            );
        }
    }
    Some(out)
}

impl Polled {
    /// Poll `dir` from now on (`why` it is not watched). False past
    /// [`MAX_POLLED`] (counted).
    pub fn add(&mut self, dir: &Path, why: &str) -> bool {
        if self.known.contains(dir) {
            return true;
        }
        if self.dirs.len() >= MAX_POLLED {
            self.dropped += 1;
            return false;
        }
        self.why.get_or_insert_with(|| why.to_string());
        let listing = list(dir).unwrap_or_default();
        self.dirs.push((dir.to_path_buf(), listing));
        self.known.insert(dir.to_path_buf());
        true
    }

    pub fn len(&self) -> usize {
        self.dirs.len()
    }

    pub fn contains(&self, dir: &Path) -> bool {
        self.known.contains(dir)
    }

    /// Stop polling `dir` (it is watched now, or gone).
    pub fn remove(&mut self, dir: &Path) {
        if self.known.remove(dir) {
            self.dirs.retain(|(d, _)| d != dir);
        }
    }

    /// Stop polling `path` and every directory below it.
    pub fn remove_under(&mut self, path: &Path) {
        if self.known.iter().any(|d| d.starts_with(path)) {
            self.dirs.retain(|(d, _)| !d.starts_with(path));
            self.known.retain(|d| !d.starts_with(path));
        }
    }

    /// Compare the polled directories with what they hold now, for at most
    /// `within`, from where the last poll stopped.
    pub fn poll(&mut self, within: Duration) -> Found {
        let mut found = Found::default();
        let n = self.dirs.len();
        let started = Instant::now();
        let mut checked = 0;
        while checked < n && started.elapsed() < within {
            let i = self.cursor % n;
            self.cursor = (self.cursor + 1) % n;
            checked += 1;
            let (dir, seen) = &mut self.dirs[i];
            let Some(now) = list(dir) else {
                for (name, s) in seen.iter() {
                    if matches!(s, Seen::File { .. }) {
                        found.changes.push((dir.join(name), DELETED));
                    }
                }
                found.gone.push(dir.clone());
                continue;
            };
            for (name, s) in &now {
                match (seen.get(name), s) {
                    (None, Seen::Dir) => found.new_dirs.push(dir.join(name)),
                    (None, Seen::File { .. }) => found.changes.push((dir.join(name), CREATED)),
                    (Some(old), Seen::File { .. }) if old != s => {
                        let kind = if matches!(old, Seen::Dir) {
                            CREATED
                        } else {
                            CHANGED
                        };
                        found.changes.push((dir.join(name), kind));
                    }
                    _ => {}
                }
            }
            for (name, s) in seen.iter() {
                match (now.get(name), s) {
                    (None, _) => found.changes.push((dir.join(name), DELETED)),
                    (Some(Seen::Dir), Seen::File { .. }) => {
                        found.changes.push((dir.join(name), DELETED));
                        found.new_dirs.push(dir.join(name));
                    }
                    _ => {}
                }
            }
            *seen = now;
        }
        found.unreached = n - checked;
        for g in &found.gone {
            self.remove_under(g);
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poll_sees_files_made_changed_and_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let d = scry_base::paths::canonical(tmp.path()).unwrap();
        std::fs::write(d.join("a.py"), "x = 1\n").unwrap();
        std::fs::write(d.join("b.py"), "y = 1\n").unwrap();
        let mut p = Polled::default();
        assert!(p.add(&d, "over the bound"));
        assert!(p.poll(Duration::from_secs(5)).changes.is_empty());
        std::fs::write(d.join("a.py"), "x = 22\n").unwrap();
        std::fs::remove_file(d.join("b.py")).unwrap();
        std::fs::write(d.join("c.py"), "z\n").unwrap();
        std::fs::create_dir(d.join("sub")).unwrap();
        std::fs::create_dir(d.join("target")).unwrap();
        let mut f = p.poll(Duration::from_secs(5));
        f.changes.sort();
        assert_eq!(
            f.changes,
            vec![
                (d.join("a.py"), CHANGED),
                (d.join("b.py"), DELETED),
                (d.join("c.py"), CREATED)
            ]
        );
        assert_eq!(f.new_dirs, vec![d.join("sub")], "skipped dirs left out");
        assert_eq!(f.unreached, 0);
        // Gone: its files deleted, no longer polled.
        drop(tmp);
        let f = p.poll(Duration::from_secs(5));
        assert_eq!(f.gone, vec![d.clone()]);
        assert!(f.changes.contains(&(d.join("a.py"), DELETED)));
        assert_eq!(p.len(), 0);
    }

    #[test]
    fn a_poll_with_no_time_reaches_nothing_and_says_so() {
        let tmp = tempfile::tempdir().unwrap();
        let mut p = Polled::default();
        for i in 0..3 {
            let d = tmp.path().join(format!("d{i}"));
            std::fs::create_dir(&d).unwrap();
            p.add(&d, "why");
        }
        assert_eq!(p.poll(Duration::ZERO).unreached, 3);
        assert_eq!(p.poll(Duration::from_secs(5)).unreached, 0);
    }
}
