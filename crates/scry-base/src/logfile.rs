//! Log files that stay bounded: servers' stderr logs and the daemon's log.
//!
//! Invariants: a log is appended to until it holds [`MAX_LOG_BYTES`]; then
//! it becomes `<name>.1` (replacing the previous generation) and a fresh
//! file starts, so one log name never takes more than twice that on disk.
//! Rotation happens when a log is opened and, for a log written through
//! [`Log`], as it grows. A log that cannot be opened or rotated is not an
//! error of the caller's operation: the caller goes on without it.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The size at which a log is rotated.
pub const MAX_LOG_BYTES: u64 = 8 * 1024 * 1024;

/// The previous generation of `path`: `<path>.1`.
pub fn previous(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(".1");
    PathBuf::from(name)
}

/// Open `path` for appending (creating it and its directory), rotating it
/// first when it already holds `max` bytes or more.
pub fn open_with(path: &Path, max: u64) -> io::Result<std::fs::File> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    if std::fs::metadata(path).is_ok_and(|m| m.len() >= max) {
        std::fs::rename(path, previous(path))?;
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
}

/// [`open_with`] at [`MAX_LOG_BYTES`].
pub fn open(path: &Path) -> io::Result<std::fs::File> {
    open_with(path, MAX_LOG_BYTES)
}

/// A log written line by line, rotated as it grows.
pub struct Log {
    path: PathBuf,
    max: u64,
    file: Option<std::fs::File>,
    written: u64,
}

impl Log {
    /// Open (see [`open_with`]); `None` when the log cannot be opened.
    pub fn open_with(path: &Path, max: u64) -> Option<Log> {
        let file = open_with(path, max).ok()?;
        let written = file.metadata().map(|m| m.len()).unwrap_or(0);
        Some(Log {
            path: path.to_path_buf(),
            max,
            file: Some(file),
            written,
        })
    }

    /// Append `line` and a newline, rotating first when the log is full.
    /// Write errors are swallowed: a log never fails its writer.
    pub fn line(&mut self, line: &str) {
        if self.written >= self.max {
            self.file = None;
            self.file = open_with(&self.path, self.max).ok();
            self.written = 0;
        }
        if let Some(f) = self.file.as_mut() {
            let ok = f
                .write_all(line.as_bytes())
                .and_then(|()| f.write_all(b"\n"));
            if ok.is_ok() {
                self.written += line.len() as u64 + 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_log_is_rotated_on_open_and_as_it_grows() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("logs").join("x.log");
        let mut log = Log::open_with(&p, 20).unwrap();
        log.line("0123456789");
        log.line("0123456789");
        assert_eq!(std::fs::read_to_string(&p).unwrap().len(), 22);
        // Full: the next line starts a fresh file, the old one is `.1`.
        log.line("next");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "next\n");
        assert_eq!(std::fs::read_to_string(previous(&p)).unwrap().len(), 22);
        drop(log);
        // Reopening a log that is not full appends.
        let mut log = Log::open_with(&p, 20).unwrap();
        log.line("more");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "next\nmore\n");
        // Opening a full one rotates it, replacing the older generation.
        std::fs::write(&p, "y".repeat(25)).unwrap();
        let f = open_with(&p, 20).unwrap();
        assert_eq!(f.metadata().unwrap().len(), 0);
        assert_eq!(
            std::fs::read_to_string(previous(&p)).unwrap(),
            "y".repeat(25)
        );
    }
}
