//! The daemon directory made private, and checked before use.
//!
//! Unix: created with mode 0700 and refused when another user owns it or
//! others may enter it (the socket's only gate besides the peer's uid).
//!
//! Windows: no mode bits. The directory lies under the user's own profile
//! (the state directory, or `SCRY_DAEMON_DIR`), whose inherited ACL keeps
//! other users out, and it holds no socket: the daemon listens on a named
//! pipe whose ACL admits the current user only ([`super::transport`]), the
//! gate; the directory holds the lock file and the log. It is refused when
//! it is not a directory (a link or a file there).

use std::io;
use std::path::Path;

/// Create `dir` (and its parents), private to this user (see the header).
pub fn create(dir: &Path) -> io::Result<()> {
    imp::create(dir)
}

/// Why the existing directory `dir` (metadata `meta`, not followed) must
/// not be used, or `Ok`: it is ours and closed to others.
pub fn check(meta: &std::fs::Metadata) -> Result<(), String> {
    if !meta.is_dir() {
        return Err("not a directory".into());
    }
    imp::check(meta)
}

#[cfg(unix)]
mod imp {
    use std::io;
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    use std::path::Path;

    pub fn create(dir: &Path) -> io::Result<()> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        // `recursive` applies the mode to every created level; the umask
        // may have narrowed it further, never widened it.
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
    }

    pub fn check(meta: &std::fs::Metadata) -> Result<(), String> {
        // SAFETY: geteuid has no preconditions and cannot fail.
        let me = unsafe { libc::geteuid() };
        if meta.uid() != me {
            return Err(format!("owned by uid {}, not {me}", meta.uid()));
        }
        if meta.mode() & 0o077 != 0 {
            return Err(format!(
                "mode {:o} lets others in; it must be 0700",
                meta.mode() & 0o777
            ));
        }
        Ok(())
    }

    #[cfg(test)]
    mod tests {
        use super::super::*;
        use std::os::unix::fs::{MetadataExt, PermissionsExt};

        #[test]
        fn the_directory_is_created_0700_and_others_are_refused() {
            let t = tempfile::tempdir().unwrap();
            let d = t.path().join("a/b/scry");
            create(&d).unwrap();
            let meta = std::fs::symlink_metadata(&d).unwrap();
            assert_eq!(meta.mode() & 0o777, 0o700);
            check(&meta).unwrap();
            std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
            let e = check(&std::fs::symlink_metadata(&d).unwrap()).unwrap_err();
            assert!(e.contains("must be 0700"), "{e}");
        }
    }
}

#[cfg(windows)]
mod imp {
    use std::io;
    use std::path::Path;

    pub fn create(dir: &Path) -> io::Result<()> {
        std::fs::create_dir_all(dir)
    }

    pub fn check(_meta: &std::fs::Metadata) -> Result<(), String> {
        // A directory (links were refused by the caller's `is_dir` on the
        // link itself); the pipe's ACL is the gate (see the header).
        Ok(())
    }
}
