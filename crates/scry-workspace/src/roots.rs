//! Roots: the directory a server is started in for a file, found by walking
//! up from the file to the nearest directory holding one of the server's
//! root markers.
//!
//! Invariants: a root is never outside the workspace root (paths compared
//! after [`scry_base::paths::normalise`]); markers naming a parent (`..`) never
//! match; a marker holds at most one `*`.

use std::path::{Component, Path, PathBuf};

use crate::catalog::ServerSpec;
use scry_base::paths::{is_under, normalise, same};

/// Match a file name against a pattern with at most one `*`.
fn wildcard_match(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((pre, post)) => {
            name.len() >= pre.len() + post.len() && name.starts_with(pre) && name.ends_with(post)
        }
    }
}

fn has_marker(dir: &Path, markers: &[String]) -> bool {
    markers.iter().any(|m| {
        if m.is_empty() || Path::new(m).components().any(|c| c == Component::ParentDir) {
            return false;
        }
        if m.contains('*') {
            std::fs::read_dir(dir).is_ok_and(|rd| {
                rd.flatten()
                    .any(|e| e.file_name().to_str().is_some_and(|n| wildcard_match(m, n)))
            })
        } else {
            dir.join(m).exists()
        }
    })
}

/// The root for a server and file: walk up from the file's directory to (and
/// including) the workspace root; the nearest directory containing any of
/// `spec.root_markers` wins; none found → `workspace_root`. Never returns a
/// directory outside `workspace_root` (paths are compared lexically, by the
/// OS's rules: `scry_base::paths::is_under`; a relative `file` is taken
/// relative to `workspace_root`).
pub fn find_root(spec: &ServerSpec, file: &Path, workspace_root: &Path) -> PathBuf {
    let root = normalise(workspace_root);
    let file = normalise(&root.join(file));
    if !is_under(&file, &root) || spec.root_markers.is_empty() {
        return root;
    }
    let mut dir: &Path = if file.is_dir() {
        &file
    } else {
        match file.parent() {
            Some(p) => p,
            None => return root,
        }
    };
    while is_under(dir, &root) {
        if has_marker(dir, &spec.root_markers) {
            return dir.to_path_buf();
        }
        if same(dir, &root) {
            break;
        }
        match dir.parent() {
            Some(p) => dir = p,
            None => break,
        }
    }
    root
}

/// Like [`find_root`], but `None` when no directory between the file and
/// the workspace root (inclusive) holds one of `spec.root_markers` (and
/// `Some(workspace_root)` when the spec has no markers at all). Linters use
/// it: a linter whose root markers are absent does not apply.
pub fn marker_root(spec: &ServerSpec, file: &Path, workspace_root: &Path) -> Option<PathBuf> {
    let root = normalise(workspace_root);
    if spec.root_markers.is_empty() {
        return Some(root);
    }
    let found = find_root(spec, file, workspace_root);
    (found != root || has_marker(&root, &spec.root_markers)).then_some(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog;
    use std::fs;

    #[test]
    fn find_root_nearest_marker_inside_workspace() {
        let tmp = tempfile::tempdir().unwrap();
        let outer = tmp.path();
        fs::write(outer.join("Cargo.toml"), "").unwrap();
        let ws = outer.join("ws");
        fs::create_dir_all(ws.join("crates/a/src/deep")).unwrap();
        fs::create_dir_all(ws.join("other")).unwrap();
        fs::write(ws.join("crates/a/Cargo.toml"), "").unwrap();
        let ra = catalog::builtins()
            .into_iter()
            .find(|s| s.id == "rust-analyzer")
            .unwrap();
        let file = ws.join("crates/a/src/deep/x.rs");
        assert_eq!(find_root(&ra, &file, &ws), ws.join("crates/a"));
        assert_eq!(
            find_root(&ra, Path::new("crates/a/src/lib.rs"), &ws),
            ws.join("crates/a")
        );
        // the marker above the workspace is never used
        assert_eq!(find_root(&ra, &ws.join("other/x.rs"), &ws), ws);
        assert_eq!(find_root(&ra, &outer.join("x.rs"), &ws), ws);
        assert_eq!(find_root(&ra, &ws.join("../x.rs"), &ws), ws);
        // the workspace root itself counts, and nearer wins
        fs::write(ws.join("Cargo.toml"), "").unwrap();
        assert_eq!(find_root(&ra, &ws.join("other/x.rs"), &ws), ws);
        assert_eq!(find_root(&ra, &file, &ws), ws.join("crates/a"));
        // wildcard markers
        let spec = ServerSpec {
            root_markers: vec!["*.csproj".into()],
            ..Default::default()
        };
        fs::write(ws.join("other/App.csproj"), "").unwrap();
        assert_eq!(
            find_root(&spec, &ws.join("other/x.cs"), &ws),
            ws.join("other")
        );
        assert_eq!(find_root(&spec, &file, &ws), ws);
    }
}
