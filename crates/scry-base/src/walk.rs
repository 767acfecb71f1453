//! Walking the workspace: the one walker (and the one list of directories
//! never entered) used by the file watcher, `diagnostics` over directories
//! and the syntactic index.
//!
//! Invariants: `.gitignore` (and `.ignore`, and the ignore files of parent
//! directories) is respected whether or not the tree is a git repository;
//! symbolic links are not followed; a directory named in [`SKIPPED_DIRS`]
//! is never entered, at any depth, hidden files or not; directories named
//! in [`VENDORED_DIRS`] are skipped as well only when asked
//! ([`Walker::skip_vendored`]).
//!
//! Bounded on hostile trees: an ignore file ([`IGNORE_FILES`]) that is a
//! FIFO, a socket or a device (or a link to one) is never opened — opening a
//! FIFO blocks until someone writes to it. A directory below the walked one
//! holding such a file is not entered; when the walked directory or one of
//! its parents holds one, the walk reads no ignore files at all (everything
//! not in the skip lists is listed). Both are logged.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// The ignore files the walker reads in a directory it enters (and in the
/// walked directory's parents).
pub const IGNORE_FILES: &[&str] = &[".gitignore", ".ignore", ".git/info/exclude"];

/// The ignore file in `dir` that is not a regular file, a directory or a
/// missing one — a FIFO, socket or device, links followed; what
/// `crate::platform::fs` calls special — if any (checked by its name and
/// metadata, never opened).
pub fn special_ignore_file(dir: &Path) -> Option<PathBuf> {
    IGNORE_FILES.iter().map(|f| dir.join(f)).find(|p| {
        crate::platform::fs::special_name(p).is_some()
            || std::fs::metadata(p).is_ok_and(|m| crate::platform::fs::special_kind(&m).is_some())
    })
}

/// Directories never walked nor watched: version control, build outputs,
/// dependencies, virtual environments and caches.
pub const SKIPPED_DIRS: &[&str] = &[
    ".git",
    "target",
    "node_modules",
    ".cache",
    "__pycache__",
    ".venv",
    "venv",
    ".mypy_cache",
];

/// Vendored third-party source: still watched and checked, but left out of
/// the syntactic index.
pub const VENDORED_DIRS: &[&str] = &["vendor", "third_party"];

/// Whether a directory with this name is never entered.
pub fn is_skipped(name: &OsStr) -> bool {
    SKIPPED_DIRS.iter().any(|s| name == *s)
}

/// Whether `path` lies inside a skipped directory below `root` (a path not
/// under `root` counts as skipped).
pub fn in_skipped_dir(root: &Path, path: &Path) -> bool {
    path.strip_prefix(root)
        .map(|rel| rel.components().any(|c| is_skipped(c.as_os_str())))
        .unwrap_or(true)
}

/// One entry found by a walk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub path: PathBuf,
    pub is_dir: bool,
    /// A regular file (not a directory, not a symbolic link).
    pub is_file: bool,
}

/// How to walk: which entries besides [`SKIPPED_DIRS`] are left out.
#[derive(Debug, Clone, Copy, Default)]
pub struct Walker {
    hidden: bool,
    vendored: bool,
}

impl Walker {
    /// Hidden files and directories left out; vendored ones entered.
    pub fn new() -> Walker {
        Walker::default()
    }

    /// Enter hidden files and directories as well (the skipped ones aside).
    pub fn with_hidden(mut self) -> Walker {
        self.hidden = true;
        self
    }

    /// Leave out [`VENDORED_DIRS`] too.
    pub fn skip_vendored(mut self) -> Walker {
        self.vendored = true;
        self
    }

    /// Every entry below `dir` (`dir` itself first), directories included,
    /// in the walker's order. Unreadable entries are passed over.
    pub fn entries(&self, dir: &Path) -> impl Iterator<Item = Entry> + use<> {
        let vendored = self.vendored;
        let hostile = dir.ancestors().find_map(special_ignore_file);
        if let Some(p) = &hostile {
            tracing::warn!(path = %p.display(), "an ignore file is not a regular file: walking without ignore files");
        }
        let read_ignores = hostile.is_none();
        ignore::WalkBuilder::new(dir)
            .hidden(!self.hidden)
            .parents(read_ignores)
            .git_ignore(read_ignores)
            .git_exclude(read_ignores)
            .git_global(read_ignores)
            .ignore(read_ignores)
            .require_git(false)
            .follow_links(false)
            .filter_entry(move |e| {
                if !e.file_type().is_some_and(|t| t.is_dir()) {
                    return true;
                }
                if is_skipped(e.file_name())
                    || (vendored && VENDORED_DIRS.iter().any(|v| e.file_name() == *v))
                {
                    return false;
                }
                // Checked before the walker reads the directory's ignore
                // files (the filter runs before it descends).
                if read_ignores && let Some(p) = special_ignore_file(e.path()) {
                    tracing::warn!(path = %p.display(), "an ignore file is not a regular file: its directory is not walked");
                    return false;
                }
                true
            })
            .build()
            .flatten()
            .map(|e| Entry {
                is_dir: e.file_type().is_some_and(|t| t.is_dir()),
                is_file: e.file_type().is_some_and(|t| t.is_file()),
                path: e.into_path(),
            })
    }

    /// The regular files below `dir` (symbolic links left out).
    pub fn files(&self, dir: &Path) -> impl Iterator<Item = PathBuf> + use<> {
        self.entries(dir).filter(|e| e.is_file).map(|e| e.path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, rel: &str) {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "x").unwrap();
    }

    fn rels(root: &Path, it: impl Iterator<Item = PathBuf>) -> Vec<String> {
        let mut v: Vec<String> = it.map(|p| crate::paths::display(&p, root)).collect();
        v.sort();
        v
    }

    #[test]
    fn one_skip_list_for_every_walk() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for f in [
            "src/a.rs",
            "venv/lib/x.py",
            ".mypy_cache/x.json",
            "a/node_modules/b.js",
            "target/debug/gen.rs",
            "vendor/dep/c.go",
            ".github/ci.yml",
            "ignored.rs",
        ] {
            write(root, f);
        }
        std::fs::write(root.join(".gitignore"), "ignored.rs\n").unwrap();
        assert_eq!(
            rels(root, Walker::new().files(root)),
            ["src/a.rs", "vendor/dep/c.go"]
        );
        assert_eq!(
            rels(root, Walker::new().skip_vendored().files(root)),
            ["src/a.rs"]
        );
        assert_eq!(
            rels(root, Walker::new().with_hidden().files(root)),
            [
                ".github/ci.yml",
                ".gitignore",
                "src/a.rs",
                "vendor/dep/c.go"
            ]
        );
        assert!(
            Walker::new()
                .entries(root)
                .any(|e| e.is_dir && e.path == root.join("vendor/dep"))
        );
    }

    /// `f` on another thread; `None` when it did not end within 20 s.
    #[cfg(unix)]
    fn bounded<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(f());
        });
        rx.recv_timeout(std::time::Duration::from_secs(20)).ok()
    }

    #[cfg(unix)]
    fn mkfifo(p: &Path) {
        let ok = std::process::Command::new("mkfifo")
            .arg(p)
            .status()
            .unwrap()
            .success();
        assert!(ok, "mkfifo {}", p.display());
    }

    // Unix only: Windows has no FIFO in its file system (its named pipes
    // live in the device namespace, refused by name: platform::fs).
    #[cfg(unix)]
    #[test]
    fn a_fifo_ignore_file_never_blocks_the_walk() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        write(&root, "src/a.rs");
        write(&root, "odd/b.rs");
        write(&root, "ignored.rs");
        std::fs::write(root.join(".ignore"), "ignored.rs\n").unwrap();
        mkfifo(&root.join("odd/.gitignore"));
        let r = root.clone();
        let got = bounded(move || rels(&r, Walker::new().with_hidden().files(&r)))
            .expect("the walk ends (a FIFO .gitignore below the root is never opened)");
        assert_eq!(got, [".ignore", "src/a.rs"], "its directory is left out");

        // At the root (or above): no ignore file is read.
        mkfifo(&root.join(".gitignore"));
        let r = root.clone();
        let got = bounded(move || rels(&r, Walker::new().files(&r)))
            .expect("the walk ends (a FIFO .gitignore at the root is never opened)");
        assert_eq!(got, ["ignored.rs", "odd/b.rs", "src/a.rs"]);
        let sub = root.join("src");
        let got = bounded(move || Walker::new().files(&sub).count())
            .expect("a parent's FIFO is never opened either");
        assert_eq!(got, 1);
        assert_eq!(special_ignore_file(&root), Some(root.join(".gitignore")));
        assert_eq!(special_ignore_file(&root.join("src")), None);
    }

    #[test]
    fn skipped_directories() {
        let root = Path::new("/w");
        assert!(in_skipped_dir(root, Path::new("/w/target/debug/x")));
        assert!(in_skipped_dir(root, Path::new("/w/a/node_modules/b.js")));
        assert!(in_skipped_dir(root, Path::new("/w/venv/lib/x.py")));
        assert!(in_skipped_dir(root, Path::new("/w/.mypy_cache/x")));
        assert!(!in_skipped_dir(root, Path::new("/w/src/a.rs")));
        assert!(in_skipped_dir(root, Path::new("/elsewhere/a.rs")));
    }
}
