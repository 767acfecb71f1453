//! Where the daemon lives: a per-user directory created with mode 0700
//! (`$SCRY_DAEMON_DIR`, else `$XDG_RUNTIME_DIR/scry`, else
//! `<state dir>/daemon`; never a shared `/tmp` path), and in it one socket,
//! lock file and log per (scry version, environment tag).
//!
//! The version in the names means an upgraded binary never talks to an old
//! daemon (the old one idles out). The environment tag is a hash of the
//! variables that change what scry does (`PATH`, `HOME`, the XDG
//! directories, every `SCRY_*` but the daemon's own switches): a client
//! whose environment differs gets its own daemon rather than answers shaped
//! by another environment. The directory is refused when another user owns
//! it or others can read it.

use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The wire protocol's version (see [`crate::proto`]).
pub const PROTOCOL: u32 = 2;
/// scry's version, carried in the socket name and the hello.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Override of the daemon directory.
pub const DIR_ENV: &str = scry_workspace::dirs::DAEMON_DIR_ENV;
/// `1`: never use the daemon.
pub const NO_DAEMON_ENV: &str = "SCRY_NO_DAEMON";

/// Variables that are not part of the environment tag: they choose the
/// daemon itself or only its logging.
const UNTAGGED: [&str; 5] = [
    NO_DAEMON_ENV,
    DIR_ENV,
    "SCRY_LOG",
    "SCRY_DAEMON_IDLE_MS",
    "SCRY_DAEMON_START_MS",
];

/// The daemon directory this environment names (not created): see
/// [`scry_workspace::dirs::daemon`].
pub fn dir() -> Option<PathBuf> {
    scry_workspace::dirs::daemon()
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

/// A hash of the variables that shape scry's answers (see the module
/// header), as 8 hex digits.
pub fn env_tag() -> String {
    env_tag_of(std::env::vars_os().map(|(k, v)| {
        (
            k.to_string_lossy().into_owned(),
            v.to_string_lossy().into_owned(),
        )
    }))
}

fn env_tag_of(vars: impl Iterator<Item = (String, String)>) -> String {
    use std::hash::{Hash, Hasher};
    let mut tagged: Vec<(String, String)> = vars
        .filter(|(k, _)| {
            matches!(
                k.as_str(),
                "PATH"
                    | "HOME"
                    | "XDG_CONFIG_HOME"
                    | "XDG_STATE_HOME"
                    | "XDG_CACHE_HOME"
                    | "XDG_DATA_HOME"
            ) || (k.starts_with("SCRY_") && !UNTAGGED.contains(&k.as_str()))
        })
        .collect();
    tagged.sort();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    tagged.hash(&mut h);
    format!("{:08x}", h.finish() as u32)
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
    /// The files for this scry version and environment in `dir`.
    pub fn in_dir(dir: &Path) -> Files {
        Files::named(dir, VERSION, &env_tag())
    }

    pub fn named(dir: &Path, version: &str, tag: &str) -> Files {
        let stem = format!("scry-{version}-{tag}");
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
    fn names_carry_the_version_and_the_environment_tag() {
        let f = Files::named(Path::new("/d"), "1.2.3", "abcd0123");
        assert_eq!(f.socket, Path::new("/d/scry-1.2.3-abcd0123.sock"));
        let a = env_tag_of([("PATH".to_string(), "/bin".to_string())].into_iter());
        let b = env_tag_of(
            [
                ("PATH".to_string(), "/bin".to_string()),
                ("SCRY_NO_DAEMON".to_string(), "0".to_string()),
                ("TERM".to_string(), "xterm".to_string()),
            ]
            .into_iter(),
        );
        let c = env_tag_of(
            [
                ("PATH".to_string(), "/bin".to_string()),
                ("SCRY_TRUST".to_string(), "1".to_string()),
            ]
            .into_iter(),
        );
        assert_eq!(
            a, b,
            "switches and unrelated variables do not change the tag"
        );
        assert_ne!(a, c, "SCRY_* variables do");
    }
}
