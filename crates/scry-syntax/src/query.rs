//! Questions over a [`Snapshot`]: definitions of a name (ranked), its
//! references, workspace symbols, implementations, the name at a position.
//!
//! Invariants: matching is by name only (plus the last qualifier against the
//! enclosing definitions when one is given), so answers may include
//! unrelated symbols of the same name — callers label them syntactic;
//! results are sorted deterministically.

use std::path::Path;

use crate::extract::{Def, FileIndex, Implementation};
use crate::index::Snapshot;

/// How a definition relates to the file the question came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tier {
    SameFile,
    /// The asking file's imports name the definition's module.
    Imported,
    Elsewhere,
}

#[derive(Debug, Clone)]
pub struct DefHit<'a> {
    /// Relative to the root.
    pub path: &'a Path,
    pub file: &'a FileIndex,
    /// Index in `file.defs`.
    pub index: usize,
    pub def: &'a Def,
    pub tier: Tier,
}

impl DefHit<'_> {
    pub fn containers(&self) -> Vec<String> {
        self.file.containers(self.index)
    }
}

/// The module names a file can be imported by: its stem, and its
/// directory's name for `mod.rs`, `__init__.py`, `index.ts` and the like.
fn module_names(path: &Path) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(stem) = path.file_stem().and_then(|s| s.to_str()) {
        if matches!(stem, "mod" | "__init__" | "index" | "lib" | "main")
            && let Some(dir) = path
                .parent()
                .and_then(|d| d.file_name())
                .and_then(|s| s.to_str())
        {
            out.push(dir.to_string());
        }
        out.push(stem.to_string());
    }
    out
}

/// Definitions of `name`, ranked: the asking file, then modules it
/// imports, then elsewhere; within a tier by path and line. With
/// qualifiers, only definitions whose enclosing names include the last one.
/// `impl` blocks count only when nothing else is found.
pub fn definitions<'a>(
    snap: &'a Snapshot,
    name: &str,
    qualifiers: &[String],
    from: Option<&Path>,
) -> Vec<DefHit<'a>> {
    let from_file = from.and_then(|p| snap.files.get(p));
    let mut hits: Vec<DefHit> = Vec::new();
    for (path, file) in &snap.files {
        for (i, d) in file.defs.iter().enumerate() {
            if d.name != name {
                continue;
            }
            if let Some(q) = qualifiers.last()
                && !file.containers(i).iter().any(|c| {
                    c.split(|ch: char| !crate::extract::is_ident_char(ch))
                        .any(|t| t == q)
                })
            {
                continue;
            }
            let tier = if Some(path.as_path()) == from {
                Tier::SameFile
            } else if from_file.is_some_and(|f| {
                module_names(path)
                    .iter()
                    .any(|m| f.imports.binary_search(m).is_ok())
            }) {
                Tier::Imported
            } else {
                Tier::Elsewhere
            };
            hits.push(DefHit {
                path,
                file,
                index: i,
                def: d,
                tier,
            });
        }
    }
    if hits.iter().any(|h| h.def.kind != "impl") {
        hits.retain(|h| h.def.kind != "impl");
    }
    hits.sort_by(|a, b| {
        (a.tier, a.path, a.def.line, a.def.col).cmp(&(b.tier, b.path, b.def.line, b.def.col))
    });
    hits
}

/// An occurrence: path (relative), line, column (0-based, characters), and
/// the name's length in characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Mention<'a> {
    pub path: &'a Path,
    pub line: u32,
    pub col: u32,
    pub len: u32,
}

/// Every identifier occurrence of `name` in code, definitions included,
/// sorted by path and position.
pub fn references<'a>(snap: &'a Snapshot, name: &str) -> Vec<Mention<'a>> {
    let len = name.chars().count() as u32;
    let mut out = Vec::new();
    for (path, file) in &snap.files {
        if let Some(id) = file.name_id(name) {
            out.extend(
                file.refs
                    .iter()
                    .filter(|r| r.name_id() == id)
                    .map(|r| Mention {
                        path,
                        line: r.line(),
                        col: r.col(),
                        len,
                    }),
            );
        }
        out.extend(
            file.defs
                .iter()
                .filter(|d| d.name == name)
                .map(|d| Mention {
                    path,
                    line: d.line,
                    col: d.col,
                    len,
                }),
        );
    }
    out.sort();
    out.dedup();
    out
}

/// Definitions whose name matches `query`: exact, then case-insensitive
/// exact, prefix, substring; at most `limit`.
pub fn workspace_symbols<'a>(snap: &'a Snapshot, query: &str, limit: usize) -> Vec<DefHit<'a>> {
    let q = query.trim().to_lowercase();
    let mut hits: Vec<(u8, DefHit)> = Vec::new();
    for (path, file) in &snap.files {
        for (i, d) in file.defs.iter().enumerate() {
            if d.kind == "impl" {
                continue;
            }
            let lower = d.name.to_lowercase();
            let rank = if d.name == query.trim() {
                0
            } else if lower == q {
                1
            } else if lower.starts_with(&q) {
                2
            } else if lower.contains(&q) {
                3
            } else {
                continue;
            };
            hits.push((
                rank,
                DefHit {
                    path,
                    file,
                    index: i,
                    def: d,
                    tier: Tier::Elsewhere,
                },
            ));
        }
    }
    hits.sort_by(|(ra, a), (rb, b)| {
        (ra, a.def.name.len(), a.path, a.def.line).cmp(&(rb, b.def.name.len(), b.path, b.def.line))
    });
    hits.into_iter().take(limit).map(|(_, h)| h).collect()
}

/// Types that implement or extend `name` (`impl Name for T`,
/// `implements Name`, `extends Name`, `class T < Name`).
pub fn implementations<'a>(snap: &'a Snapshot, name: &str) -> Vec<(&'a Path, &'a Implementation)> {
    let mut out: Vec<(&Path, &Implementation)> = snap
        .files
        .iter()
        .flat_map(|(p, f)| {
            f.impls
                .iter()
                .filter(|i| i.parent == name)
                .map(move |i| (p.as_path(), i))
        })
        .collect();
    out.sort_by(|a, b| (a.0, a.1.line, a.1.col).cmp(&(b.0, b.1.line, b.1.col)));
    out
}

/// The identifier at (line, col) of a file (0-based, characters), if any.
pub fn name_at(file: &FileIndex, line: u32, col: u32) -> Option<&str> {
    let hit = |start: u32, name: &str| col >= start && col < start + name.chars().count() as u32;
    file.refs
        .iter()
        .find(|r| r.line() == line && hit(r.col(), file.name(**r)))
        .map(|r| file.name(*r))
        .or_else(|| {
            file.defs
                .iter()
                .find(|d| d.line == line && hit(d.col, &d.name))
                .map(|d| d.name.as_str())
        })
}

/// The first identifier on a line, if any.
pub fn first_name_on(file: &FileIndex, line: u32) -> Option<&str> {
    let r = file
        .refs
        .iter()
        .filter(|r| r.line() == line)
        .min_by_key(|r| r.col())
        .map(|r| (r.col(), file.name(*r)));
    let d = file
        .defs
        .iter()
        .filter(|d| d.line == line)
        .min_by_key(|d| d.col)
        .map(|d| (d.col, d.name.as_str()));
    match (r, d) {
        (Some(a), Some(b)) => Some(if b.0 <= a.0 { b.1 } else { a.1 }),
        (a, b) => a.or(b).map(|x| x.1),
    }
}

/// The local binding (parameter, `let`, assignment) that a use of `name` at
/// (line, col) of `file` most likely refers to: the nearest one before it
/// inside the innermost definition enclosing the use. 0-based.
pub fn local_binding(file: &FileIndex, name: &str, line: u32, col: u32) -> Option<(u32, u32)> {
    let id = file.name_id(name)?;
    let scope = file
        .defs
        .iter()
        .filter(|d| d.start_line <= line && line <= d.end_line && d.end_line > d.start_line)
        .max_by_key(|d| (d.start_line, std::cmp::Reverse(d.end_line)))?;
    file.locals
        .iter()
        .filter(|r| {
            r.name_id() == id && r.line() >= scope.start_line && (r.line(), r.col()) <= (line, col)
        })
        .max_by_key(|r| (r.line(), r.col()))
        .map(|r| (r.line(), r.col()))
}
