//! Where the daemon lives: a per-user private directory (mode 0700 on
//! Unix; see [`crate::platform::dir`]) (`$SCRY_DAEMON_DIR`, else
//! `$XDG_RUNTIME_DIR/scry`, else `<state dir>/daemon`; never a shared
//! `/tmp` path), and in it one lock file and log per scry version, with one
//! address to listen on ([`crate::platform::transport::address`]: a socket
//! there on Unix, a named pipe of the user, version and directory on
//! Windows): one daemon per user and version.
//!
//! The version in the names means an upgraded binary never talks to an old
//! daemon (the old one idles out). Clients whose environments differ share
//! the daemon: each call carries the environment that shapes it
//! ([`scry_workspace::env::CallEnv`], sent in [`crate::proto::Call`]), and
//! the daemon opens configurations and starts servers with it. The
//! directory is refused when it is not private (not a directory; on Unix
//! owned by another user or open to others).

use std::io;
use std::path::{Path, PathBuf};

use crate::platform;

/// The wire protocol's version (see [`crate::proto`]).
pub const PROTOCOL: u32 = 7;
/// scry's version, carried in the address and the hello.
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

/// Create `dir` (private, see [`platform::dir`]) if needed and check it
/// is safe to use.
pub fn ensure_dir(dir: &Path) -> io::Result<()> {
    if !dir.exists() {
        platform::dir::create(dir)?;
    }
    check_dir(dir)
}

/// A daemon directory must be ours and closed to others.
pub fn check_dir(dir: &Path) -> io::Result<()> {
    let meta = std::fs::symlink_metadata(dir)?;
    platform::dir::check(&meta).map_err(|why| {
        io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("daemon directory {}: {why}", dir.display()),
        )
    })
}

/// The files of one daemon: address, lock, log.
#[derive(Debug, Clone)]
pub struct Files {
    pub dir: PathBuf,
    /// Where the daemon listens: a socket path on Unix, a pipe name on
    /// Windows ([`platform::transport::address`]).
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
        let name = if tag.is_empty() {
            version.to_string()
        } else {
            format!("{version}-{tag}")
        };
        let stem = format!("scry-{name}");
        Files {
            dir: dir.to_path_buf(),
            socket: platform::transport::address(dir, &name),
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
    fn the_directory_is_created_and_a_file_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("a/b/scry");
        ensure_dir(&d).unwrap();
        ensure_dir(&d).unwrap();
        let f = t.path().join("file");
        std::fs::write(&f, "").unwrap();
        let e = check_dir(&f).unwrap_err();
        assert!(e.to_string().contains("not a directory"), "{e}");
    }

    #[test]
    fn names_carry_the_version_only() {
        let d = Path::new("/d");
        let f = Files::named(d, "1.2.3", "");
        assert_eq!(f.socket, platform::transport::address(d, "1.2.3"));
        assert_eq!(f.lock, d.join("scry-1.2.3.lock"));
        assert_eq!(f.log, d.join("scry-1.2.3.log"));
        let t = Files::named(d, "1.2.3", "abcd0123");
        assert_eq!(t.socket, platform::transport::address(d, "1.2.3-abcd0123"));
        assert_ne!(t.socket, f.socket);
        // Whatever the environment, one daemon per version.
        assert_eq!(
            Files::in_dir(d).socket,
            platform::transport::address(d, VERSION)
        );
    }
}
