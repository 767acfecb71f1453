//! The workspace's layout: which directories hold which root markers and
//! workspace files, and which hold source files of which types — what it
//! takes to know every project of a language in the workspace, so that a
//! server's partial view of it can be told ([`crate::Workspace::
//! outside_view`]) and the packages of a folder of several counted
//! ([`crate::roots::choose`]). And [`mentions`]: the files of some
//! directories that write a name, as a whole word.
//!
//! Invariants: one walk with the workspace walker (`.gitignore` respected,
//! skipped and vendored directories left out), bounded by [`MAX_ENTRIES`]
//! and [`WALK_WITHIN`] (`cut` says when it stopped short); a layout is
//! dropped when the watcher sees a change that may make it wrong
//! ([`Layout::changed_by`]: a marker, a directory, a file of a type new to
//! its directory), never for a source file written, and after
//! [`KEPT_FOR`] in any case; [`mentions`] reads regular
//! files only, through `scry_base::disk`, within its file, byte and time
//! bounds, and says when it stopped short.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use scry_base::walk::Walker;

/// At most this many entries (files and directories) are walked.
pub const MAX_ENTRIES: usize = 200_000;

/// A walk stops after this long.
pub const WALK_WITHIN: Duration = Duration::from_secs(3);

/// At most this many files whose names are not UTF-8 are kept a type.
pub const MAX_UNNAMED: usize = 64;

/// A layout is walked again after this long, whatever the watcher saw.
pub const KEPT_FOR: Duration = Duration::from_secs(60);

/// The directories of a workspace by what they hold.
#[derive(Debug, Default)]
pub struct Layout {
    /// The file names and types it was walked for.
    names: BTreeSet<String>,
    types: BTreeSet<String>,
    /// Directories holding one of the names asked for, with those names.
    markers: BTreeMap<PathBuf, BTreeSet<String>>,
    /// Directories holding files of each type (extension, or a whole
    /// name for a type without a dot such as `Makefile`).
    by_type: HashMap<String, BTreeSet<PathBuf>>,
    /// Files of each type whose paths (from the root) are not UTF-8: a
    /// server names files as text and cannot open them (at most
    /// [`MAX_UNNAMED`] a type; `unnamed_count` counts them all).
    unnamed: HashMap<String, Vec<PathBuf>>,
    unnamed_count: HashMap<String, usize>,
    /// The walk stopped at its bounds: what it did not reach is unknown.
    pub cut: bool,
    made: Option<Instant>,
    /// Roots computed per (server, directory), kept with the layout.
    roots: Mutex<HashMap<(String, PathBuf), PathBuf>>,
}

impl Layout {
    /// Walk `root`, noting the directories that hold one of `names` and
    /// the files of `types`.
    pub fn walk(root: &Path, names: &BTreeSet<String>, types: &BTreeSet<String>) -> Layout {
        let started = Instant::now();
        let mut out = Layout {
            names: names.clone(),
            types: types.clone(),
            made: Some(started),
            ..Layout::default()
        };
        for (n, e) in Walker::new().skip_vendored().entries(root).enumerate() {
            if n >= MAX_ENTRIES || (n % 1024 == 0 && started.elapsed() > WALK_WITHIN) {
                out.cut = true;
                tracing::warn!(
                    root = %root.display(),
                    entries = n,
                    "workspace layout: walk stopped at its bounds"
                );
                break;
            }
            if e.is_dir {
                continue;
            }
            let (Some(dir), Some(name)) = (e.path.parent(), e.path.file_name()) else {
                continue;
            };
            let name = name.to_string_lossy();
            if names.contains(name.as_ref()) {
                out.markers
                    .entry(dir.to_path_buf())
                    .or_default()
                    .insert(name.to_string());
            }
            let ty = match name.rsplit_once('.') {
                Some((_, ext)) => ext,
                None => name.as_ref(),
            };
            if types.contains(ty) {
                out.by_type
                    .entry(ty.to_string())
                    .or_default()
                    .insert(dir.to_path_buf());
                if e.path
                    .strip_prefix(root)
                    .unwrap_or(&e.path)
                    .to_str()
                    .is_none()
                {
                    *out.unnamed_count.entry(ty.to_string()).or_default() += 1;
                    let kept = out.unnamed.entry(ty.to_string()).or_default();
                    if kept.len() < MAX_UNNAMED {
                        kept.push(e.path.clone());
                    }
                }
            }
        }
        out
    }

    /// Whether the change `kind` (`crate::watch::{CREATED, CHANGED,
    /// DELETED}`) of `path` may make this layout wrong: a root marker or
    /// workspace file made, changed or removed; a directory made or
    /// removed; a file of a type noted made where none of that type was.
    /// Any other change (a source file written, a temporary file) keeps it.
    pub fn changed_by(&self, path: &Path, kind: u8) -> bool {
        let Some(name) = path.file_name() else {
            return false;
        };
        // A name that is not UTF-8, made or removed: the layout lists them.
        let Some(name) = name.to_str() else {
            return kind != crate::platform::watch::CHANGED;
        };
        if self.names.contains(name) {
            return true;
        }
        let ty = name.rsplit_once('.').map_or(name, |(_, ext)| ext);
        match kind {
            crate::platform::watch::CREATED => {
                path.is_dir()
                    || (self.types.contains(ty)
                        && path.parent().is_none_or(|dir| {
                            !self.by_type.get(ty).is_some_and(|d| d.contains(dir))
                        }))
            }
            crate::platform::watch::DELETED => {
                // A directory the layout holds (it knows no other).
                self.markers.contains_key(path)
                    || self.by_type.values().any(|dirs| dirs.contains(path))
            }
            _ => false,
        }
    }

    /// Whether it is older than [`KEPT_FOR`].
    pub fn expired(&self) -> bool {
        self.made.is_none_or(|m| m.elapsed() > KEPT_FOR)
    }

    /// The directories holding one of `names`, sorted.
    pub fn holding(&self, names: &[String]) -> Vec<PathBuf> {
        self.markers
            .iter()
            .filter(|(_, held)| names.iter().any(|n| held.contains(n)))
            .map(|(d, _)| d.clone())
            .collect()
    }

    /// The directories holding files of one of `types` (a type's last
    /// extension: `d.ts` is `ts`), sorted.
    pub fn with_types(&self, types: &[String]) -> Vec<PathBuf> {
        let mut out = BTreeSet::new();
        for t in types {
            let t = t.rsplit('.').next().unwrap_or(t);
            if let Some(dirs) = self.by_type.get(t) {
                out.extend(dirs.iter().cloned());
            }
        }
        out.into_iter().collect()
    }

    /// The files of `types` whose paths are not UTF-8 (the first
    /// [`MAX_UNNAMED`] a type, in walk order), and how many there are.
    pub fn not_utf8(&self, types: &[String]) -> (Vec<PathBuf>, usize) {
        let (mut files, mut count) = (Vec::new(), 0);
        let mut seen = BTreeSet::new();
        for t in types {
            let t = t.rsplit('.').next().unwrap_or(t);
            if seen.insert(t) {
                files.extend(self.unnamed.get(t).into_iter().flatten().cloned());
                count += self.unnamed_count.get(t).copied().unwrap_or(0);
            }
        }
        (files, count)
    }

    /// The root `compute` gives `dir` for `server`, computed once per
    /// layout.
    pub fn root_of(&self, server: &str, dir: &Path, compute: impl FnOnce() -> PathBuf) -> PathBuf {
        let key = (server.to_string(), dir.to_path_buf());
        if let Some(r) = self
            .roots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return r.clone();
        }
        let r = compute();
        self.roots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, r.clone());
        r
    }
}

/// At most this many files are read by one [`mentions`].
pub const MENTIONS_FILES: usize = 5_000;

/// At most this many bytes are read by one [`mentions`].
pub const MENTIONS_BYTES: u64 = 128 * 1024 * 1024;

/// What [`mentions`] found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Mentions {
    /// The files that write the name, in the order of the directories.
    pub files: Vec<PathBuf>,
    /// Every file there was read (false: it stopped at a bound).
    pub complete: bool,
}

/// The files directly in `dirs` of one of `types` that write `name` as a
/// whole word (not inside a longer identifier), each at most `file_limit`
/// bytes; at most `want` of them, the search ending at [`MENTIONS_FILES`],
/// [`MENTIONS_BYTES`] or `until`. Blocking.
pub fn mentions(
    dirs: &[PathBuf],
    types: &[String],
    name: &str,
    file_limit: u64,
    want: usize,
    until: Instant,
) -> Mentions {
    let mut out = Mentions {
        files: Vec::new(),
        complete: true,
    };
    if name.is_empty() {
        return out;
    }
    let (mut files, mut bytes) = (0usize, 0u64);
    for dir in dirs {
        let Ok(rd) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut entries: Vec<PathBuf> = rd
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .map(|e| e.path())
            .filter(|p| of_types(p, types))
            .collect();
        entries.sort();
        for p in entries {
            if files >= MENTIONS_FILES || bytes >= MENTIONS_BYTES || Instant::now() >= until {
                out.complete = false;
                return out;
            }
            files += 1;
            let Ok(text) = scry_base::disk::read(&p, file_limit) else {
                continue;
            };
            bytes += text.len() as u64;
            if writes_word(&text, name.as_bytes()) {
                out.files.push(p);
                if out.files.len() >= want {
                    // Enough to say so; the rest is not needed.
                    return out;
                }
            }
        }
    }
    out
}

/// Whether `path`'s name ends in one of `types` (`.ts`, `.d.ts`) or is
/// one (`Makefile`).
fn of_types(path: &Path, types: &[String]) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    types.iter().any(|t| {
        name == t
            || name
                .strip_suffix(t.as_str())
                .is_some_and(|stem| stem.ends_with('.') && stem.len() > 1)
    })
}

/// Whether `word` occurs in `hay` with no identifier character right
/// before or after it (ASCII letters, digits, `_`, `$` and any non-ASCII
/// byte count as identifier characters).
pub fn writes_word(hay: &[u8], word: &[u8]) -> bool {
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80;
    let Some((&first, rest)) = word.split_first() else {
        return false;
    };
    let mut from = 0;
    while let Some(i) = hay[from..].iter().position(|&b| b == first) {
        let at = from + i;
        if hay[at + 1..].starts_with(rest) {
            let end = at + word.len();
            let before_ok = at == 0 || !ident(hay[at - 1]);
            let after_ok = end >= hay.len() || !ident(hay[end]);
            if before_ok && after_ok {
                return true;
            }
        }
        from = at + 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn a_walk_notes_markers_and_types() {
        let tmp = tempfile::tempdir().unwrap();
        let root = scry_base::paths::canonical(tmp.path()).unwrap();
        fs::create_dir_all(root.join("a/src")).unwrap();
        fs::create_dir_all(root.join("b")).unwrap();
        fs::create_dir_all(root.join("node_modules/x")).unwrap();
        fs::write(root.join("a/pyproject.toml"), "").unwrap();
        fs::write(root.join("a/src/m.py"), "").unwrap();
        fs::write(root.join("b/setup.py"), "").unwrap();
        fs::write(root.join("node_modules/x/pyproject.toml"), "").unwrap();
        fs::write(root.join("Makefile"), "").unwrap();
        let names: BTreeSet<String> = ["pyproject.toml", "setup.py"].map(String::from).into();
        let types: BTreeSet<String> = ["py", "Makefile"].map(String::from).into();
        let l = Layout::walk(&root, &names, &types);
        assert!(!l.cut);
        assert_eq!(
            l.holding(&["pyproject.toml".into(), "setup.py".into()]),
            vec![root.join("a"), root.join("b")]
        );
        assert_eq!(l.holding(&["setup.py".into()]), vec![root.join("b")]);
        assert_eq!(
            l.with_types(&["py".into(), "pyi".into()]),
            vec![root.join("a/src"), root.join("b")]
        );
        assert_eq!(l.with_types(&["Makefile".into()]), vec![root.clone()]);
        assert!(!l.expired());
        // What may change it, and what does not.
        use crate::platform::watch::{CHANGED, CREATED, DELETED};
        assert!(l.changed_by(&root.join("c/pyproject.toml"), CREATED));
        assert!(l.changed_by(&root.join("a/pyproject.toml"), CHANGED));
        assert!(l.changed_by(&root.join("a/src"), DELETED));
        assert!(
            l.changed_by(&root.join("b/sub/n.py"), CREATED),
            "a type new there"
        );
        std::fs::create_dir(root.join("a/new")).unwrap();
        assert!(l.changed_by(&root.join("a/new"), CREATED));
        assert!(!l.changed_by(&root.join("a/src/m.py"), CHANGED));
        assert!(!l.changed_by(&root.join("a/src/other.py"), CREATED));
        assert!(!l.changed_by(&root.join("a/src/m.py"), DELETED));
        assert!(!l.changed_by(&root.join("a/src/.m.py.swp"), CREATED));
        let mut computed = 0;
        for _ in 0..2 {
            l.root_of("s", &root.join("a"), || {
                computed += 1;
                root.clone()
            });
        }
        assert_eq!(computed, 1);
    }

    #[test]
    fn whole_words_only() {
        assert!(writes_word(b"use a::shared_helper;", b"shared_helper"));
        assert!(writes_word(b"shared_helper", b"shared_helper"));
        assert!(!writes_word(b"my_shared_helper()", b"shared_helper"));
        assert!(!writes_word(b"shared_helpers", b"shared_helper"));
        assert!(!writes_word(b"$x", b"x"));
        assert!(writes_word(b"a.x(", b"x"));
        assert!(!writes_word(b"", b"x"));
        assert!(!writes_word(b"x", b""));
    }

    #[test]
    fn mentions_reads_within_its_bounds() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path().to_path_buf();
        fs::write(d.join("a.ts"), "import { sharedHelper } from 'x';").unwrap();
        fs::write(
            d.join("b.d.ts"),
            "export declare function sharedHelper(): void;",
        )
        .unwrap();
        fs::write(d.join("c.ts"), "nothing here").unwrap();
        fs::write(d.join("d.py"), "sharedHelper").unwrap();
        let types = vec!["ts".to_string(), "d.ts".to_string()];
        let later = Instant::now() + Duration::from_secs(10);
        let m = mentions(
            std::slice::from_ref(&d),
            &types,
            "sharedHelper",
            1 << 20,
            10,
            later,
        );
        assert_eq!(m.files, vec![d.join("a.ts"), d.join("b.d.ts")]);
        assert!(m.complete);
        let m = mentions(
            std::slice::from_ref(&d),
            &types,
            "sharedHelper",
            1 << 20,
            1,
            later,
        );
        assert_eq!(m.files.len(), 1);
        let m = mentions(&[d], &types, "sharedHelper", 1 << 20, 10, Instant::now());
        assert!(!m.complete);
    }
}
