//! The async form of the one reader of workspace files
//! ([`scry_base::disk`]), for the layers on a runtime: [`read_within`].
//! Everything else of the reader (`read`, `read_text`, `check`,
//! `ReadError`, the size limit) is used from [`scry_base::disk`] itself.
//!
//! Also [`Texts`]: files' texts kept while their [`Stamp`] shows them
//! unchanged (the source lines of an answer's locations in files the
//! server does not have open), so a question asked again reads nothing.
//!
//! Invariants: those of [`scry_base::disk`]; and [`read_within`] runs the
//! read on the blocking pool, bounded by a deadline: a stuck syscall never
//! holds an async runtime worker, and the caller gets
//! [`ReadError::TimedOut`] at the deadline. A kept text is used only while
//! the file's stamp is the one it was read under and that read came
//! [`scry_base::disk::SETTLED_AFTER`] after the file's last modification
//! ([`Stamp::settled`]); [`Texts`] is bounded in files and bytes.

use std::collections::HashMap;
use std::fs::Metadata;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};

use scry_base::disk::{ReadError, Stamp, read_with_meta};
use scry_text::LineIndex;

/// [`read_with_meta`] on the blocking pool, given up at `deadline`: the
/// caller's runtime worker is never held by the read, and a read stuck in
/// the kernel past the deadline is [`ReadError::TimedOut`] (its thread is
/// left to finish on its own).
pub async fn read_within(
    path: &Path,
    limit: u64,
    deadline: Option<Instant>,
) -> Result<(Vec<u8>, Metadata), ReadError> {
    let owned = path.to_path_buf();
    let task = tokio::task::spawn_blocking(move || read_with_meta(&owned, limit));
    let joined = match deadline {
        Some(d) => match tokio::time::timeout_at(tokio::time::Instant::from_std(d), task).await {
            Ok(j) => j,
            Err(_) => {
                return Err(ReadError::TimedOut {
                    path: path.to_path_buf(),
                });
            }
        },
        None => task.await,
    };
    joined.unwrap_or_else(|e| {
        Err(ReadError::Io {
            path: path.to_path_buf(),
            source: std::io::Error::other(e.to_string()),
        })
    })
}

/// Most files [`Texts`] keeps.
const TEXTS_KEPT: usize = 512;
/// Most bytes of text [`Texts`] keeps.
const TEXT_BYTES_KEPT: usize = 32 * 1024 * 1024;

/// One kept text.
struct Kept {
    stamp: Stamp,
    index: Arc<LineIndex>,
    used: u64,
}

/// Texts of files kept while unchanged (see the module header).
#[derive(Default)]
pub struct Texts {
    inner: Mutex<TextsInner>,
}

#[derive(Default)]
struct TextsInner {
    kept: HashMap<PathBuf, Kept>,
    bytes: usize,
    clock: u64,
}

impl Texts {
    /// The text of `path` (UTF-8, at most `limit` bytes): the one kept when
    /// the file's stamp says it is unchanged (a `stat`), else read (off the
    /// runtime, [`read_within`]) and kept when it has settled. `None`: not
    /// a readable regular text file.
    pub async fn get(&self, path: &Path, limit: u64) -> Option<Arc<LineIndex>> {
        let meta = std::fs::metadata(path).ok().filter(Metadata::is_file)?;
        let now = Stamp::of(path, &meta);
        {
            let mut t = self.inner.lock().unwrap_or_else(|e| e.into_inner());
            t.clock += 1;
            let clock = t.clock;
            if let Some(k) = t.kept.get_mut(path)
                && k.stamp == now
            {
                k.used = clock;
                return Some(k.index.clone());
            }
        }
        let read_at = SystemTime::now();
        let (bytes, meta) = read_within(path, limit, None).await.ok()?;
        let index = Arc::new(LineIndex::new(String::from_utf8(bytes).ok()?));
        let stamp = Stamp::of(path, &meta);
        if stamp.settled(read_at) {
            self.keep(path, stamp, index.clone());
        }
        Some(index)
    }

    fn keep(&self, path: &Path, stamp: Stamp, index: Arc<LineIndex>) {
        let len = index.text().len();
        if len > TEXT_BYTES_KEPT {
            return;
        }
        let mut t = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        t.clock += 1;
        let used = t.clock;
        if let Some(old) = t
            .kept
            .insert(path.to_path_buf(), Kept { stamp, index, used })
        {
            t.bytes -= old.index.text().len();
        }
        t.bytes += len;
        while t.kept.len() > TEXTS_KEPT || t.bytes > TEXT_BYTES_KEPT {
            let Some(oldest) = t
                .kept
                .iter()
                .min_by_key(|(_, k)| k.used)
                .map(|(p, _)| p.clone())
            else {
                break;
            };
            if let Some(k) = t.kept.remove(&oldest) {
                t.bytes -= k.index.text().len();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[tokio::test]
    async fn read_within_refuses_a_fifo_at_once() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f.py");
        let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let deadline = Instant::now() + std::time::Duration::from_secs(5);
        let e = read_within(&p, 100, Some(deadline)).await.unwrap_err();
        assert_eq!(e.code(), "NOT_A_REGULAR_FILE");
    }

    #[tokio::test]
    async fn texts_are_kept_while_their_stamp_holds_and_only_once_settled() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.py");
        std::fs::write(&p, "one\n").unwrap();
        let texts = Texts::default();
        // Just written: read every time (not settled), never kept.
        assert_eq!(texts.get(&p, 100).await.unwrap().text(), "one\n");
        assert!(texts.inner.lock().unwrap().kept.is_empty());
        // Written long ago: kept after one read, and the kept text is used.
        let old = SystemTime::now() - std::time::Duration::from_secs(60);
        let set_old = || {
            std::fs::File::options()
                .write(true)
                .open(&p)
                .unwrap()
                .set_modified(old)
                .unwrap()
        };
        set_old();
        let first = texts.get(&p, 100).await.unwrap();
        let again = texts.get(&p, 100).await.unwrap();
        assert!(Arc::ptr_eq(&first, &again), "the kept text");
        // Rewritten and set back to the same old time, same size: the
        // status-change time differs, so it is read again.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&p, "two\n").unwrap();
        set_old();
        assert_eq!(texts.get(&p, 100).await.unwrap().text(), "two\n");
    }

    #[tokio::test]
    async fn read_within_reads_files() {
        let d = tempfile::tempdir().unwrap();
        let q = d.path().join("g.py");
        std::fs::write(&q, "z").unwrap();
        assert_eq!(read_within(&q, 100, None).await.unwrap().0, b"z");
    }
}
