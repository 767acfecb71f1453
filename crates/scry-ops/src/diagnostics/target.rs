//! What a diagnostics target names, decided from its text once
//! ([`TargetKind::of`]), and the form a front end hands the engine
//! ([`diagnostics_target`]): the CLI, MCP and the engine's expansion all
//! call these; none decides it again.
//!
//! Invariants: pure (no file is touched, nothing runs); the engine form of
//! a target is `*` (the whole workspace) or an absolute path or glob.

use std::path::{Path, PathBuf};

/// What a target names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetKind {
    /// `*` or `**`: the whole workspace.
    Whole,
    /// `.` or `./`: the directory it is read from (the whole workspace
    /// when that is the root).
    Here,
    /// A glob (`src/**/*.py`): it holds `*`, `?`, `[` or `{`.
    Glob,
    /// A file or directory.
    Path,
}

impl TargetKind {
    /// The kind of `given` (surrounding spaces ignored).
    pub fn of(given: &Path) -> TargetKind {
        let s = given.to_string_lossy();
        match s.trim() {
            "*" | "**" => TargetKind::Whole,
            "." | "./" => TargetKind::Here,
            s if s.contains(['*', '?', '[', '{']) => TargetKind::Glob,
            _ => TargetKind::Path,
        }
    }
}

/// `given` in the form the engine expands: `*` for the whole workspace
/// (also `.` read at the root), else absolute, a relative target read from
/// `base` (the CLI: the current directory; MCP: the root).
pub fn diagnostics_target(given: &Path, base: &Path, root: &Path) -> PathBuf {
    match TargetKind::of(given) {
        TargetKind::Whole => PathBuf::from("*"),
        TargetKind::Here if base == root => PathBuf::from("*"),
        // A name copied from an answer, written escaped (`\xff_x.py`): the
        // file it was shown for.
        TargetKind::Path => base.join(scry_base::paths::unescaped(base, given)),
        _ => base.join(given),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_from_the_text_alone() {
        for (s, k) in [
            ("*", TargetKind::Whole),
            ("**", TargetKind::Whole),
            (" * ", TargetKind::Whole),
            (".", TargetKind::Here),
            ("./", TargetKind::Here),
            ("src/*.py", TargetKind::Glob),
            ("a?.rs", TargetKind::Glob),
            ("src/[ab].c", TargetKind::Glob),
            ("src/{a,b}.c", TargetKind::Glob),
            ("/w/**/*.ts", TargetKind::Glob),
            ("src", TargetKind::Path),
            ("src/a.py", TargetKind::Path),
            ("..", TargetKind::Path),
            ("/w/a.py", TargetKind::Path),
        ] {
            assert_eq!(TargetKind::of(Path::new(s)), k, "{s}");
        }
    }

    #[test]
    fn engine_form() {
        let root = Path::new("/w");
        let sub = Path::new("/w/src");
        let t = |g: &str, base: &Path| diagnostics_target(Path::new(g), base, root);
        assert_eq!(t("*", sub), PathBuf::from("*"));
        assert_eq!(t("**", root), PathBuf::from("*"));
        assert_eq!(t(".", root), PathBuf::from("*"));
        assert_eq!(t("./", root), PathBuf::from("*"));
        assert_eq!(t(".", sub), PathBuf::from("/w/src/."));
        assert_eq!(t("a.py", sub), PathBuf::from("/w/src/a.py"));
        assert_eq!(t("*.py", sub), PathBuf::from("/w/src/*.py"));
        assert_eq!(t("../x/*.py", root), PathBuf::from("/w/../x/*.py"));
        assert_eq!(t("/etc/*.conf", sub), PathBuf::from("/etc/*.conf"));
        assert_eq!(t("/w/b.py", sub), PathBuf::from("/w/b.py"));
    }
}
