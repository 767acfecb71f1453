//! The async form of the one reader of workspace files
//! ([`scry_base::disk`]), for the layers on a runtime: [`read_within`].
//! Everything else of the reader (`read`, `read_text`, `check`,
//! `ReadError`, the size limit) is used from [`scry_base::disk`] itself.
//!
//! Invariants: those of [`scry_base::disk`]; and [`read_within`] runs the
//! read on the blocking pool, bounded by a deadline: a stuck syscall never
//! holds an async runtime worker, and the caller gets
//! [`ReadError::TimedOut`] at the deadline.

use std::fs::Metadata;
use std::path::Path;
use std::time::Instant;

use scry_base::disk::{ReadError, read_with_meta};

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
    async fn read_within_reads_files() {
        let d = tempfile::tempdir().unwrap();
        let q = d.path().join("g.py");
        std::fs::write(&q, "z").unwrap();
        assert_eq!(read_within(&q, 100, None).await.unwrap().0, b"z");
    }
}
