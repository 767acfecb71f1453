//! Where the daemon lives: a per-user directory created with mode 0700
//! (`$SCRY_DAEMON_DIR`, else `$XDG_RUNTIME_DIR/scry`, else
//! `<state dir>/daemon`; never a shared `/tmp` path), and in it one socket,
//! lock file and log per scry version: one daemon per user and version.
//!
//! The version in the names means an upgraded binary never talks to an old
//! daemon (the old one idles out). Clients whose environments differ share
//! the daemon: each call carries the environment that shapes it
//! ([`scry_workspace::env::CallEnv`], sent in [`crate::proto::Call`]), and
//! the daemon opens configurations and starts servers with it. The
//! directory is refused when another user owns it or others can read it.

use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The wire protocol's version (see [`crate::proto`]).
pub const PROTOCOL: u32 = 3;
/// scry's version, carried in the socket name and the hello.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Override of the daemon directory.
pub const DIR_ENV: &str = scry_base::dirs::DAEMON_DIR_ENV;
/// `1`: never use the daemon.
pub const NO_DAEMON_ENV: &str = "SCRY_NO_DAEMON";

/// The daemon directory this environment names (not created): see
/// [`scry_base::dirs::daemon`].
pub fn dir() -> Option<PathBuf> {
    scry_base::dirs::daemon()
}

/// Whether this process should not use the daemon (`SCRY_NO_DAEMON=1`).
pub fn opted_out() -> bool {
    std::env::var_os(NO_DAEMON_ENV).is_some_and(|v| v == "1")
}

/// Create `dir` (mode 0700) if needed and check it is safe to use: a
/// directory, owned by this user, not accessible to others.
pub fn ensure_dir(dir: &Path) -> io::Result<()> {
    if !dir.exists() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        // `recursive` applies the mode to every created level; the umask
        // may have narrowed it further, never widened it.
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    check_dir(dir)
}

/// A daemon directory must be ours and closed to others.
pub fn check_dir(dir: &Path) -> io::Result<()> {
    let meta = std::fs::symlink_metadata(dir)?;
    let refuse = |why: String| {
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("daemon directory {}: {why}", dir.display()),
        ))
    };
    if !meta.is_dir() {
        return refuse("not a directory".into());
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me {
        return refuse(format!("owned by uid {}, not {me}", meta.uid()));
    }
    if meta.mode() & 0o077 != 0 {
        return refuse(format!(
            "mode {:o} lets others in; it must be 0700",
            meta.mode() & 0o777
        ));
    }
    Ok(())
}

/// The files of one daemon: socket, lock, log.
#[derive(Debug, Clone)]
pub struct Files {
    pub dir: PathBuf,
    pub socket: PathBuf,
    pub lock: PathBuf,
    pub log: PathBuf,
}

impl Files {
    /// The files for this scry version in `dir`.
    pub fn in_dir(dir: &Path) -> Files {
        Files::named(dir, VERSION, "")
    }

    /// The files of `version` in `dir`; a non-empty `tag` names another
    /// daemon of the same version (tests run their own).
    pub fn named(dir: &Path, version: &str, tag: &str) -> Files {
        let stem = if tag.is_empty() {
            format!("scry-{version}")
        } else {
            format!("scry-{version}-{tag}")
        };
        Files {
            dir: dir.to_path_buf(),
            socket: dir.join(format!("{stem}.sock")),
            lock: dir.join(format!("{stem}.lock")),
            log: dir.join(format!("{stem}.log")),
        }
    }

    /// This environment's files, or why there are none.
    pub fn locate() -> Result<Files, String> {
        let dir = dir().ok_or_else(|| {
            "no directory for the daemon (neither XDG_RUNTIME_DIR, SCRY_STATE_DIR nor HOME is set)"
                .to_string()
        })?;
        Ok(Files::in_dir(&dir))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_directory_is_created_0700_and_others_are_refused() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("a/b/scry");
        ensure_dir(&d).unwrap();
        let mode = std::fs::metadata(&d).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o700);
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
        let e = ensure_dir(&d).unwrap_err();
        assert!(e.to_string().contains("must be 0700"), "{e}");
        let f = t.path().join("file");
        std::fs::write(&f, "").unwrap();
        assert!(check_dir(&f).is_err());
    }

    #[test]
    fn names_carry_the_version_only() {
        let f = Files::named(Path::new("/d"), "1.2.3", "");
        assert_eq!(f.socket, Path::new("/d/scry-1.2.3.sock"));
        assert_eq!(f.lock, Path::new("/d/scry-1.2.3.lock"));
        let t = Files::named(Path::new("/d"), "1.2.3", "abcd0123");
        assert_eq!(t.socket, Path::new("/d/scry-1.2.3-abcd0123.sock"));
        // Whatever the environment, one daemon per version.
        assert_eq!(
            Files::in_dir(Path::new("/d")).socket,
            Path::new(&format!("/d/scry-{VERSION}.sock"))
        );
    }
}
