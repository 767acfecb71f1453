//! Roots: the directory a server is started in (its workspace folder) for
//! a file, as the catalogue's recipe says ([`crate::catalog::ProjectRoot`]):
//! the outermost directory whose workspace file (a Cargo `[workspace]`, a
//! `go.work`, a package manager's workspace, a solution `tsconfig.json`, a
//! `pyrightconfig.json`, a compilation database) claims the file; else,
//! for a server that asks for it, the workspace root when it holds several
//! packages; else the nearest root marker ([`find_root`], also what
//! linters use); else the workspace root. What chose it is said
//! ([`scry_model::RootChoice`]) for `status`.
//!
//! Invariants: a root is never outside the workspace root (paths compared
//! after [`scry_base::paths::normalise`]); markers naming a parent (`..`)
//! never match; a marker holds at most one `*`; workspace files are read,
//! never run (no `cargo metadata`: the workspace may be untrusted), named
//! by a path below the directory only (no `..`, nothing absolute), through
//! [`files::RootFiles`] (bounded, parsed once per version); a file that
//! cannot be read claims nothing.

use std::path::{Component, Path, PathBuf};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use scry_base::paths::{is_under, normalise, same};
use scry_model::RootChoice;

use crate::catalog::{RootStrategy, ServerSpec, WorkspaceFile};

pub mod files;

pub use files::RootFiles;
use files::{Parsed, select, strings};

/// Match a file name against a pattern with at most one `*`.
fn wildcard_match(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((pre, post)) => {
            name.len() >= pre.len() + post.len() && name.starts_with(pre) && name.ends_with(post)
        }
    }
}

/// The first of `markers` that `dir` holds.
fn marker_in(dir: &Path, markers: &[String]) -> Option<PathBuf> {
    markers.iter().find_map(|m| {
        if m.is_empty() || Path::new(m).components().any(|c| c == Component::ParentDir) {
            return None;
        }
        if m.contains('*') {
            std::fs::read_dir(dir).ok()?.flatten().find_map(|e| {
                let n = e.file_name();
                let n = n.to_str()?;
                wildcard_match(m, n).then(|| dir.join(n))
            })
        } else {
            let p = dir.join(m);
            p.exists().then_some(p)
        }
    })
}

/// The directory a question about `file` starts from: itself when it is a
/// directory, else its parent.
fn start_dir(file: &Path) -> Option<&Path> {
    if file.is_dir() {
        Some(file)
    } else {
        file.parent()
    }
}

/// The nearest directory from `file` up to `root` (inclusive) holding one
/// of `markers`, and the marker found.
fn nearest(markers: &[String], file: &Path, root: &Path) -> Option<(PathBuf, PathBuf)> {
    if markers.is_empty() {
        return None;
    }
    let mut dir = start_dir(file)?;
    while is_under(dir, root) {
        if let Some(m) = marker_in(dir, markers) {
            return Some((dir.to_path_buf(), m));
        }
        if same(dir, root) {
            break;
        }
        dir = dir.parent()?;
    }
    None
}

/// The root for a server and file by its root markers alone: walk up from
/// the file's directory to (and including) the workspace root; the nearest
/// directory containing any of `spec.root_markers` wins; none found →
/// `workspace_root`. Never returns a directory outside `workspace_root`
/// (paths are compared lexically, by the OS's rules:
/// `scry_base::paths::is_under`; a relative `file` is taken relative to
/// `workspace_root`).
pub fn find_root(spec: &ServerSpec, file: &Path, workspace_root: &Path) -> PathBuf {
    let root = normalise(workspace_root);
    let file = normalise(&root.join(file));
    if !is_under(&file, &root) {
        return root;
    }
    nearest(&spec.root_markers, &file, &root).map_or(root, |(dir, _)| dir)
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
    let file = normalise(&root.join(file));
    if !is_under(&file, &root) {
        return None;
    }
    nearest(&spec.root_markers, &file, &root).map(|(dir, _)| dir)
}

/// A server's root for a file, what chose it, and the members to put on
/// the server's setting ([`crate::catalog::MemberPaths`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chosen {
    pub root: PathBuf,
    pub why: RootChoice,
    pub members: Members,
}

/// The members of the workspace that chose a root.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Members {
    /// Not listed (the workspace claims everything below it, or none chose
    /// the root).
    #[default]
    None,
    /// Globs relative to the root, and the ones excluded.
    Globs {
        include: Vec<String>,
        exclude: Vec<String>,
    },
    /// These directories (the packages of a workspace root holding
    /// several).
    Dirs(Vec<PathBuf>),
}

/// The root of `spec` for `file` in the workspace `workspace_root` (see the
/// module header). `packages(names)`: the directories of the workspace
/// holding one of `names` (for [`crate::catalog::ProjectRoot::
/// several_packages`]; asked only when no workspace file claims the file).
pub fn choose(
    spec: &ServerSpec,
    file: &Path,
    workspace_root: &Path,
    files: &RootFiles,
    packages: &dyn Fn(&[String]) -> Vec<PathBuf>,
) -> Chosen {
    let root = normalise(workspace_root);
    let file = normalise(&root.join(file));
    let at_root = |why| Chosen {
        root: root.clone(),
        why,
        members: Members::None,
    };
    if !is_under(&file, &root) {
        return at_root(RootChoice::NoMarker);
    }
    let recipe = &spec.project_root;
    let package = nearest(&spec.root_markers, &file, &root);
    let by_package = |package: Option<(PathBuf, PathBuf)>| match package {
        Some((dir, marker)) => Chosen {
            root: dir,
            why: RootChoice::Package { marker },
            members: Members::None,
        },
        None => at_root(RootChoice::NoMarker),
    };
    match recipe.strategy {
        RootStrategy::Root => return at_root(RootChoice::Configured),
        RootStrategy::Package => return by_package(package),
        RootStrategy::Workspace => {}
    }
    if let Some(start) = start_dir(&file) {
        let mut ancestors: Vec<&Path> = start
            .ancestors()
            .take_while(|d| is_under(d, &root))
            .collect();
        ancestors.reverse();
        let package_dir = package.as_ref().map(|(d, _)| d.as_path());
        for dir in ancestors {
            for w in &recipe.workspaces {
                if let Some(members) = claims(w, dir, &file, package_dir, files) {
                    return Chosen {
                        root: dir.to_path_buf(),
                        why: RootChoice::Workspace {
                            file: dir.join(&w.file),
                            key: w.key.clone(),
                        },
                        members,
                    };
                }
            }
        }
    }
    if !recipe.several_packages.is_empty() {
        let found = packages(&recipe.several_packages);
        if found.len() >= 2 {
            return Chosen {
                root: root.clone(),
                why: RootChoice::SeveralPackages {
                    packages: found.len(),
                },
                members: Members::Dirs(found),
            };
        }
    }
    by_package(package)
}

/// Whether the workspace file `w` in `dir` claims `file` (whose package,
/// the nearest root marker's directory, is `package`); its members when it
/// does.
fn claims(
    w: &WorkspaceFile,
    dir: &Path,
    file: &Path,
    package: Option<&Path>,
    files: &RootFiles,
) -> Option<Members> {
    // A path below the directory only: never absolute, never `..`.
    if w.file.is_empty()
        || !Path::new(&w.file)
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
    {
        return None;
    }
    let parsed = files.get(&dir.join(&w.file), w.lists)?;
    match &*parsed {
        Parsed::Unreadable => None,
        Parsed::Listing(l) => {
            let pkg = package.or_else(|| start_dir(file))?;
            (l.too_large || l.files.contains(file) || l.dirs.iter().any(|d| is_under(d, pkg)))
                .then_some(Members::None)
        }
        Parsed::Doc(doc) => {
            if let Some(key) = &w.key
                && !select(doc, key).into_iter().any(written)
            {
                return None;
            }
            if w.members.is_empty() && w.default_members.is_empty() {
                return Some(Members::None);
            }
            let mut listed: Option<Vec<String>> = None;
            for sel in &w.members {
                if let Some(s) = strings(doc, sel) {
                    listed.get_or_insert_with(Vec::new).extend(s);
                }
            }
            let listed = listed.unwrap_or_else(|| w.default_members.clone());
            let (mut exclude, include): (Vec<String>, Vec<String>) = listed
                .into_iter()
                .partition(|g| g.trim_start().starts_with('!'));
            for g in &mut exclude {
                *g = g.trim_start().trim_start_matches('!').to_string();
            }
            for sel in &w.exclude {
                exclude.extend(strings(doc, sel).unwrap_or_default());
            }
            let members = Members::Globs { include, exclude };
            if package.is_some_and(|p| same(p, dir)) {
                return Some(members);
            }
            let Members::Globs { include, exclude } = &members else {
                return None;
            };
            let (inc, exc) = (globs(include), globs(exclude));
            let rel: Vec<&Path> = start_dir(file)?
                .ancestors()
                .take_while(|a| is_under(a, dir) && !same(a, dir))
                .filter_map(|a| a.strip_prefix(dir).ok())
                .collect();
            if rel.iter().any(|r| exc.is_match(r)) {
                return None;
            }
            rel.iter().any(|r| inc.is_match(r)).then_some(members)
        }
    }
}

/// A key that is written: not null, `false` or an empty list (an empty
/// table is: Cargo's `[workspace]` alone is a workspace).
fn written(v: &serde_json::Value) -> bool {
    use serde_json::Value;
    match v {
        Value::Null | Value::Bool(false) => false,
        Value::Array(a) => !a.is_empty(),
        _ => true,
    }
}

/// A member glob as it matches a directory relative to the workspace:
/// `./` and a trailing `/` dropped, a file (`…/tsconfig.json`) its
/// directory; one naming a parent never matches.
fn member_pattern(g: &str) -> Option<String> {
    let mut g = g.trim().replace('\\', "/");
    while let Some(rest) = g.strip_prefix("./") {
        g = rest.to_string();
    }
    while g.ends_with('/') {
        g.pop();
    }
    if g.ends_with(".json") {
        g = match g.rsplit_once('/') {
            Some((dir, _)) => dir.to_string(),
            None => String::new(),
        };
    }
    if g.is_empty() || g == "." || g.split('/').any(|c| c == "..") || g.starts_with('/') {
        return None;
    }
    Some(g)
}

/// The globs of `patterns` (those that compile), `*` not crossing `/`.
fn globs(patterns: &[String]) -> GlobSet {
    let mut b = GlobSetBuilder::new();
    for p in patterns.iter().filter_map(|p| member_pattern(p)) {
        match GlobBuilder::new(&p).literal_separator(true).build() {
            Ok(g) => {
                b.add(g);
            }
            Err(e) => tracing::debug!(pattern = %p, "member glob not used: {e}"),
        }
    }
    b.build().unwrap_or_else(|_| {
        GlobSetBuilder::new()
            .build()
            .expect("an empty glob set builds")
    })
}

/// How many directories [`member_dirs`] looks at, at most.
const MEMBER_WALK: usize = 20_000;

/// The member directories below `root` (absolute, sorted): the listed
/// directories, or those the globs match (walked with the workspace
/// walker, at most [`MEMBER_WALK`] directories).
pub fn member_dirs(root: &Path, members: &Members) -> Vec<PathBuf> {
    match members {
        Members::None => Vec::new(),
        Members::Dirs(d) => d.clone(),
        Members::Globs { include, exclude } => {
            let (inc, exc) = (globs(include), globs(exclude));
            if inc.is_empty() {
                return Vec::new();
            }
            let mut out: Vec<PathBuf> = scry_base::walk::Walker::new()
                .entries(root)
                .filter(|e| e.is_dir)
                .take(MEMBER_WALK)
                .filter(|e| {
                    e.path.strip_prefix(root).is_ok_and(|r| {
                        !r.as_os_str().is_empty() && inc.is_match(r) && !exc.is_match(r)
                    })
                })
                .map(|e| e.path)
                .collect();
            out.sort();
            out
        }
    }
}

#[cfg(test)]
mod tests;
