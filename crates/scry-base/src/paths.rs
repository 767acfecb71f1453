//! Paths inside a workspace: the one place that normalises `.` and `..`,
//! shows a path relative to the workspace root, and confines a path to the
//! workspace (symlinks resolved).
//!
//! Invariants:
//! - [`normalise`] never touches the file system. `..` removes the previous
//!   normal component; at the root of an absolute path it is dropped (`/..`
//!   is `/`); at the start of a relative path (or after another leading
//!   `..`) it is kept, since there is nothing to remove.
//! - [`display`] is the only spelling of a path relative to the root: `/`
//!   separators, `.` for the root itself, the path as given when it is not
//!   under the root. A name that is not UTF-8 is shown with each byte that
//!   is no part of a UTF-8 character escaped as `\xNN` ([`escape_bytes`]:
//!   `\xff_x.rb`), never replaced by U+FFFD: the one visible spelling of
//!   such a name on every route (text, JSON, errors).
//! - [`relativise_text`] is the only place text is rewritten, and it only
//!   ever sees text scry did not write: the foreign parts of an error
//!   message (a server's, a linter's, a configuration error's text), and
//!   the after-edit diagnostics note (`DiagnosticsDelta::pending`), whose
//!   reasons are servers' words around paths already shown with [`display`].
//!   scry's own messages carry paths as paths (`scry_model::Message`) and are
//!   shown with [`display`]; they are never string-replaced.
//! - [`confine`] compares canonical paths: `root` must be canonical, and a
//!   path is inside only when its real location (symlinks resolved, through
//!   the nearest existing ancestor for a path that does not exist yet) is
//!   under `root`.
//! - [`project_local`] is the one test of whether a program or a `PATH`
//!   entry lies inside the workspace (as written or with symlinks resolved:
//!   what an untrusted workspace may not run).
//! - Whether a path lies under another, and what is left below it, follow
//!   the OS's rules ([`Os`], `crate::platform::OS`): on Unix
//!   byte-exact components; on Windows [`windows`]' rules (case, either
//!   separator, the `\\?\` prefix, drive letters, UNC shares), written as
//!   plain functions over text so they are tested on every platform.
//! - [`canonical`] is the one canonical spelling of a real path: symlinks
//!   resolved, and on Windows the `\\?\` prefix that `canonicalize` adds
//!   taken away where the path means the same without it (what a server or
//!   a person sees).

pub mod windows;

use std::borrow::Cow;
use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};

use crate::platform::{self, Os};

/// `path` below `root` by the OS's rules ([`Os`]): what is left of
/// `path` past `root`'s components, spelled as `path` spells it.
fn below<'a>(path: &'a Path, root: &Path) -> Option<Cow<'a, Path>> {
    match platform::OS {
        Os::Unix => path.strip_prefix(root).ok().map(Cow::Borrowed),
        Os::Windows => match (path.to_str(), root.to_str()) {
            (Some(p), Some(r)) => windows::strip_root(p, r)
                .map(|rest| Cow::Owned(rest.into_iter().collect::<PathBuf>())),
            // A name that is not Unicode compares exactly.
            _ => path.strip_prefix(root).ok().map(Cow::Borrowed),
        },
    }
}

/// The canonical spelling of `path`'s real location (symlinks resolved,
/// which it must exist for): `canonicalize`, less the `\\?\` prefix on
/// Windows where the path means the same without it
/// ([`windows::strip_verbatim`]).
pub fn canonical(path: &Path) -> std::io::Result<PathBuf> {
    let real = path.canonicalize()?;
    Ok(match platform::OS {
        Os::Unix => real,
        Os::Windows => match real.to_str().map(windows::strip_verbatim) {
            Some(plain) if plain.len() != real.as_os_str().len() => {
                PathBuf::from(plain.into_owned())
            }
            _ => real,
        },
    })
}

/// `path` with `.` and `..` resolved lexically (no file system access).
pub fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => match out.components().next_back() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                Some(Component::ParentDir | Component::CurDir) | None => out.push(".."),
            },
            other => out.push(other),
        }
    }
    out
}

/// `rel` with `.` and `..` resolved lexically, when it stays inside the
/// directory it is relative to; `None` when it climbs out of it or is not
/// relative.
pub fn normalise_within(rel: &Path) -> Option<PathBuf> {
    if rel.has_root() || rel.components().any(|c| matches!(c, Component::Prefix(_))) {
        return None;
    }
    let out = normalise(rel);
    match out.components().next() {
        Some(Component::ParentDir) => None,
        _ => Some(out),
    }
}

/// Whether `path` lies under `root` (lexically; `root` itself counts), by
/// the OS's rules ([`Os`]: on Windows `C:\Repo\a` is under `c:\repo`).
pub fn is_under(path: &Path, root: &Path) -> bool {
    below(path, root).is_some()
}

/// Whether `a` and `b` name one place, lexically, by the OS's rules
/// ([`Os`]: on Windows `C:\Repo` and `c:\repo\` are one; on Unix the
/// components compare exactly). For identity (a trust record's root, a
/// workspace's), of paths in one spelling: both canonical, or both as given.
pub fn same(a: &Path, b: &Path) -> bool {
    is_under(a, b) && is_under(b, a)
}

/// Whether `path` lies inside the workspace at `root`, as written or with
/// symlinks resolved: what is there is project-local (needs `scry trust`
/// to run), however it was reached — a project bin dir, an absolute
/// `PATH` entry, a symlink from elsewhere.
pub fn project_local(path: &Path, root: &Path) -> bool {
    let root_real = canonical(root).unwrap_or_else(|_| normalise(root));
    let lexical = std::path::absolute(path)
        .map(|p| normalise(&p))
        .unwrap_or_else(|_| path.to_path_buf());
    is_under(&lexical, root)
        || is_under(&lexical, &root_real)
        || canonical(path).is_ok_and(|p| is_under(&p, &root_real))
}

/// `path` as shown to a reader: relative to `root` when under it (with `/`
/// separators, `.` for the root itself), else as given (`/` separators for a
/// relative path). An empty `root` relativises nothing.
pub fn display(path: &Path, root: &Path) -> String {
    let rel = if root.as_os_str().is_empty() {
        None
    } else {
        below(path, root)
    };
    match rel {
        Some(rel) if rel.as_os_str().is_empty() => ".".to_string(),
        Some(rel) => slash_join(&rel),
        None if path.is_absolute() => escape_bytes(path.as_os_str()).into_owned(),
        None => slash_join(path),
    }
}

/// `name` as text: its UTF-8 characters as they are, every byte that is no
/// part of one as `\xNN` (two lower-case hex digits, as Rust writes a byte
/// escape), and (where `/` separates) a `\` before an `x` as `\x5c`, so
/// that no two names are shown alike. Borrowed (no copy) when the name is
/// UTF-8 and holds no `\x`.
pub fn escape_bytes(name: &OsStr) -> Cow<'_, str> {
    use std::fmt::Write;
    // Where `\` separates (Windows) no name holds one: nothing to tell apart.
    let literal_backslash = std::path::MAIN_SEPARATOR == '/';
    if let Some(s) = name.to_str()
        && !(literal_backslash && s.contains("\\x"))
    {
        return Cow::Borrowed(s);
    }
    let mut out = String::new();
    for chunk in platform::os_str::to_bytes(name).utf8_chunks() {
        // A `\` before an `x` is itself escaped (`\x5c`), so that a name
        // written like an escape is never shown as the name it spells.
        let valid = chunk.valid();
        let mut rest = valid;
        while let Some(i) = rest.find("\\x").filter(|_| literal_backslash) {
            out.push_str(&rest[..i]);
            out.push_str("\\x5c");
            rest = &rest[i + 1..];
        }
        out.push_str(rest);
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    Cow::Owned(out)
}

/// Whether `path`'s part below `root` (all of it when not below) is UTF-8:
/// what a language server or a tool, which name files as text, can open.
pub fn text_below(root: &Path, path: &Path) -> bool {
    path.strip_prefix(root).unwrap_or(path).to_str().is_some()
}

/// The file `given` names when it was written the way scry shows a name
/// that is not UTF-8 ([`escape_bytes`]: `\xff_x.rb`): when the path with
/// each `\xNN` read as its byte (taken against `base` if relative) exists,
/// that path; else `given` as it is. So a name copied from an answer asks
/// about the file the answer listed, and one literally named like an
/// escape (shown `\x5cxff_x.rb`) is asked about as shown.
pub fn unescaped(base: &Path, given: &Path) -> PathBuf {
    let Some(text) = given.to_str().filter(|t| t.contains("\\x")) else {
        return given.to_path_buf();
    };
    let b = text.as_bytes();
    let mut bytes = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'\\'
            && b.get(i + 1) == Some(&b'x')
            && let (Some(h), Some(l)) = (
                b.get(i + 2).copied().and_then(hex),
                b.get(i + 3).copied().and_then(hex),
            )
        {
            bytes.push((h * 16 + l) as u8);
            i += 4;
        } else {
            bytes.push(b[i]);
            i += 1;
        }
    }
    // Bytes that make no name on this OS (not WTF-8, on Windows): as given.
    let Some(candidate) = platform::os_str::from_bytes(bytes).map(PathBuf::from) else {
        return given.to_path_buf();
    };
    // The shown spelling first: a file literally named like the escape is
    // shown with its `\` escaped, so `given` names it only when the other
    // does not exist.
    let exists = |p: &Path| base.join(p).symlink_metadata().is_ok();
    let shown_escaped = std::path::MAIN_SEPARATOR == '/';
    if candidate.as_os_str() != given.as_os_str()
        && exists(&candidate)
        && (shown_escaped || !exists(given))
    {
        candidate
    } else {
        given.to_path_buf()
    }
}

/// Text scry did not write (a server's or a tool's message) with the paths
/// under `root` shown relative: every `root` + separator removed. Nothing
/// is removed for an empty root or the file system root; on Windows the
/// root matches with either separator and in any case
/// ([`windows::relativise_text`]). Only foreign text
/// comes here (the foreign parts of an error message): scry's own messages
/// never do, they carry paths as paths and show them with [`display`].
pub fn relativise_text<'a>(text: &'a str, root: &Path) -> Cow<'a, str> {
    if root.as_os_str().is_empty() || root.parent().is_none() {
        return Cow::Borrowed(text);
    }
    if platform::OS == Os::Windows {
        // Either separator, any case (servers write `c:/repo/…`).
        return match root.to_str() {
            Some(r) => windows::relativise_text(text, r),
            None => Cow::Borrowed(text),
        };
    }
    let prefix = format!("{}{}", root.display(), std::path::MAIN_SEPARATOR);
    if text.contains(&prefix) {
        Cow::Owned(text.replace(&prefix, ""))
    } else {
        Cow::Borrowed(text)
    }
}

/// The components of a relative path joined with `/`.
fn slash_join(rel: &Path) -> String {
    rel.components()
        .map(|c| match c {
            Component::Normal(s) => escape_bytes(s).into_owned(),
            Component::CurDir => ".".to_string(),
            Component::ParentDir => "..".to_string(),
            Component::RootDir | Component::Prefix(_) => String::new(),
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Why a path was not confined to the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unconfined {
    /// Its real location is not under the root.
    Outside,
    /// It (or an ancestor) is a symbolic link that leads nowhere.
    DanglingLink,
}

/// The real location of `path` (relative paths are taken against `root`):
/// `..` and symlinks resolved; for a path that does not exist (yet),
/// through its nearest existing ancestor, with the rest appended. Errors
/// only for a dangling symlink, or a path with no existing ancestor.
pub fn real_path(root: &Path, path: &Path) -> Result<PathBuf, Unconfined> {
    let abs = if path.is_absolute() {
        normalise(path)
    } else {
        normalise(&root.join(path))
    };
    let mut existing = abs.as_path();
    let mut rest: Vec<&OsStr> = Vec::new();
    let canon = loop {
        match canonical(existing) {
            Ok(c) => break c,
            Err(_) => {
                // A dangling symlink: canonicalize fails but the link exists.
                if existing.symlink_metadata().is_ok() {
                    return Err(Unconfined::DanglingLink);
                }
                let Some(name) = existing.file_name() else {
                    return Err(Unconfined::Outside);
                };
                rest.push(name);
                existing = existing.parent().ok_or(Unconfined::Outside)?;
            }
        }
    };
    let mut full = canon;
    for name in rest.iter().rev() {
        full.push(name);
    }
    Ok(full)
}

/// [`real_path`] when it lies under `root` (canonical; `root` itself
/// counts). The path need not exist.
pub fn confine(root: &Path, path: &Path) -> Result<PathBuf, Unconfined> {
    let full = real_path(root, path)?;
    if is_under(&full, root) {
        Ok(full)
    } else {
        Err(Unconfined::Outside)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `s` normalised, with `/` separators (`\` on Windows is one too).
    fn n(s: &str) -> String {
        normalise(Path::new(s))
            .to_string_lossy()
            .replace(std::path::MAIN_SEPARATOR, "/")
    }

    #[test]
    fn normalise_resolves_dots() {
        assert_eq!(n("/a/./b/../c"), "/a/c");
        assert_eq!(n("a/b/.."), "a");
        assert_eq!(n("a/.."), "");
        // At the root of an absolute path `..` stays at the root.
        assert_eq!(n("/.."), "/");
        assert_eq!(n("/../a"), "/a");
        assert_eq!(n("/a/../../b"), "/b");
        // A leading `..` of a relative path cannot be resolved: kept.
        assert_eq!(n("../a"), "../a");
        assert_eq!(n("../../a"), "../../a");
        assert_eq!(n("a/../../b"), "../b");
        assert_eq!(n("./../x/./y/.."), "../x");
    }

    #[test]
    fn normalise_within_refuses_climbing_out() {
        assert_eq!(
            normalise_within(Path::new("src/../lib/*.rs")),
            Some(PathBuf::from("lib/*.rs"))
        );
        assert_eq!(normalise_within(Path::new("src/../..")), None);
        assert_eq!(normalise_within(Path::new("../x")), None);
        assert_eq!(normalise_within(Path::new("/abs")), None);
        assert_eq!(normalise_within(Path::new(".")), Some(PathBuf::new()));
    }

    #[test]
    fn display_relativises() {
        let root = Path::new("/ws/proj");
        assert_eq!(display(Path::new("/ws/proj/src/a.rs"), root), "src/a.rs");
        assert_eq!(display(Path::new("/ws/proj"), root), ".");
        assert_eq!(
            display(Path::new("/ws/project/a.rs"), root),
            "/ws/project/a.rs"
        );
        assert_eq!(display(Path::new("/other/a.rs"), root), "/other/a.rs");
        assert_eq!(display(Path::new("./src//a.rs"), root), "./src/a.rs");
        assert_eq!(
            display(Path::new("/ws/proj/a.rs"), Path::new("")),
            "/ws/proj/a.rs"
        );
    }

    #[cfg(unix)]
    #[test]
    fn names_that_are_not_utf8_are_shown_escaped() {
        use std::ffi::OsStr;
        use std::os::unix::ffi::OsStrExt;
        let root = Path::new("/ws/proj");
        let p = |b: &[u8]| PathBuf::from(OsStr::from_bytes(b));
        assert_eq!(display(&p(b"/ws/proj/\xff_x.rb"), root), "\\xff_x.rb");
        assert_eq!(
            display(&p(b"/ws/proj/d\xc3/caf\xc3\xa9\xe2\x82.rb"), root),
            "d\\xc3/café\\xe2\\x82.rb"
        );
        assert_eq!(display(&p(b"/else/\x80.py"), root), "/else/\\x80.py");
        assert_eq!(display(&p(b"rel/\xfe"), root), "rel/\\xfe");
        assert_eq!(escape_bytes(OsStr::new("café")), "café");
        assert!(matches!(escape_bytes(OsStr::new("a.rb")), Cow::Borrowed(_)));
    }

    #[cfg(unix)]
    #[test]
    fn a_name_written_escaped_names_the_file_it_was_shown_for() {
        use std::os::unix::ffi::OsStrExt;
        let t = tempfile::tempdir().unwrap();
        let odd = PathBuf::from(OsStr::from_bytes(b"\xff_x.rb"));
        std::fs::write(t.path().join(&odd), "").unwrap();
        let shown = display(&t.path().join(&odd), t.path());
        assert_eq!(shown, "\\xff_x.rb");
        assert_eq!(unescaped(t.path(), Path::new(&shown)), odd);
        let abs = t.path().join(&shown);
        assert_eq!(unescaped(t.path(), &abs), t.path().join(&odd));
        // A file really named so is itself; no file either way: as given.
        let literal = Path::new("\\x41.rb");
        std::fs::write(t.path().join(literal), "").unwrap();
        assert_eq!(unescaped(t.path(), literal), literal);
        assert_eq!(
            unescaped(t.path(), Path::new("\\xfe.rb")),
            Path::new("\\xfe.rb")
        );
        assert_eq!(
            unescaped(t.path(), Path::new("\\xZ.rb")),
            Path::new("\\xZ.rb")
        );
    }

    /// A file literally named like the escape of another's name is shown
    /// apart from it, and each shown name asks about its own file.
    #[cfg(unix)]
    #[test]
    fn a_name_spelled_like_an_escape_is_not_the_file_it_spells() {
        use std::os::unix::ffi::OsStrExt;
        let t = tempfile::tempdir().unwrap();
        let odd = PathBuf::from(OsStr::from_bytes(b"\xff\xfe_y.py"));
        let literal = PathBuf::from("\\xff\\xfe_y.py");
        std::fs::write(t.path().join(&odd), "").unwrap();
        std::fs::write(t.path().join(&literal), "").unwrap();
        let shown_odd = display(&t.path().join(&odd), t.path());
        let shown_literal = display(&t.path().join(&literal), t.path());
        assert_eq!(shown_odd, "\\xff\\xfe_y.py");
        assert_eq!(shown_literal, "\\x5cxff\\x5cxfe_y.py");
        assert_eq!(unescaped(t.path(), Path::new(&shown_odd)), odd);
        assert_eq!(unescaped(t.path(), Path::new(&shown_literal)), literal);
        // A backslash before anything else is left as it is.
        assert_eq!(escape_bytes(OsStr::new("a\\b")), "a\\b");
    }

    #[cfg(windows)]
    #[test]
    fn windows_paths_compare_and_show_by_windows_rules() {
        let root = Path::new(r"C:\Repo");
        assert_eq!(display(Path::new(r"c:\repo\Src\a.rs"), root), "Src/a.rs");
        assert_eq!(display(Path::new(r"\\?\C:\Repo"), root), ".");
        assert!(is_under(Path::new("C:/REPO/x"), root));
        assert!(!is_under(Path::new(r"C:\Repository\x"), root));
        assert_eq!(normalise_within(Path::new(r"src\..\..\x")), None);
        assert_eq!(
            normalise_within(Path::new(r"src/..\lib")),
            Some(PathBuf::from("lib"))
        );
        assert_eq!(normalise_within(Path::new(r"C:x")), None);
        let t = tempfile::tempdir().unwrap();
        let c = canonical(t.path()).unwrap();
        assert!(!c.to_string_lossy().starts_with(r"\\?\"), "{}", c.display());
    }

    #[test]
    fn relativise_text_strips_the_root() {
        let root = Path::new("/ws/proj");
        assert_eq!(
            relativise_text("failed on /ws/proj/src/a.rs and /ws/project/b.rs", root),
            "failed on src/a.rs and /ws/project/b.rs"
        );
        // The file system root relativises nothing (URLs stay whole).
        assert_eq!(
            relativise_text("see https://x.org/a", Path::new("/")),
            "see https://x.org/a"
        );
        assert_eq!(relativise_text("/ws/proj/a", Path::new("")), "/ws/proj/a");
    }

    #[test]
    fn confine_resolves_symlinks_and_missing_files() {
        let dir = tempfile::tempdir().unwrap();
        let base = canonical(dir.path()).unwrap();
        let root = base.join("ws");
        let outside = base.join("out");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(root.join("src/a.rs"), "").unwrap();
        std::fs::write(outside.join("b.rs"), "").unwrap();

        assert_eq!(
            confine(&root, Path::new("src/a.rs")),
            Ok(root.join("src/a.rs"))
        );
        assert_eq!(confine(&root, &root), Ok(root.clone()));
        // Not there yet: confined through the nearest existing ancestor.
        assert_eq!(
            confine(&root, Path::new("src/new/x.rs")),
            Ok(root.join("src/new/x.rs"))
        );
        // Climbing out, whether the target exists or not.
        assert_eq!(
            confine(&root, Path::new("../out/b.rs")),
            Err(Unconfined::Outside)
        );
        assert_eq!(
            confine(&root, Path::new("src/../../missing.rs")),
            Err(Unconfined::Outside)
        );
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
            assert_eq!(
                confine(&root, Path::new("link/b.rs")),
                Err(Unconfined::Outside)
            );
            // A missing file behind a link that leads out is outside too.
            assert_eq!(
                confine(&root, Path::new("link/missing.rs")),
                Err(Unconfined::Outside)
            );
            std::os::unix::fs::symlink(base.join("nowhere"), root.join("dangling")).unwrap();
            assert_eq!(
                confine(&root, Path::new("dangling")),
                Err(Unconfined::DanglingLink)
            );
        }
    }
}
