//! What a server sees of the workspace: the workspace's layout
//! ([`crate::layout::Layout`], walked when first needed, dropped when the
//! watcher sees a change that may make it wrong), the parts of the workspace holding a
//! server's files that lie outside its folders ([`Workspace::
//! outside_view`]), the projects under its folders that a server loading
//! projects on open has not loaded ([`Workspace::projects_under`]), and
//! the settings that put a workspace's members before the server
//! ([`Workspace::settings_for`]).
//!
//! Invariants: a root is the one [`crate::roots::choose`] gives a file in
//! that directory, computed once per directory and layout; nothing here
//! reads more than the layout's walk and the root recipes' files.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::{FolderOf, Workspace};
use crate::catalog::{ProviderKind, ServerSpec};
use crate::layout::Layout;
use crate::roots;
use scry_base::paths::{is_under, same};

/// The parts of the workspace holding a server's files that it does not
/// see: each a root scry would give it for them, with the directories of
/// those files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OutsideView {
    pub parts: Vec<(PathBuf, Vec<PathBuf>)>,
    /// The layout's walk stopped short: parts beyond it are unknown.
    pub cut: bool,
}

impl Workspace {
    /// The workspace's layout: the one kept, or a new walk when none is or
    /// it expired. Blocking (a bounded walk: [`crate::layout`]).
    pub fn layout(&self) -> Arc<Layout> {
        let mut kept = self.layout.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(l) = kept.as_ref()
            && !l.expired()
        {
            return l.clone();
        }
        let (names, types) = self.layout_names();
        let l = Arc::new(Layout::walk(&self.root, &names, &types));
        *kept = Some(l.clone());
        l
    }

    /// Drop the kept layout when one of `changes` may make it wrong
    /// ([`Layout::changed_by`]): the next need walks again.
    pub(crate) fn forget_layout_if(&self, changes: &[&(PathBuf, u8)]) {
        let mut kept = self.layout.lock().unwrap_or_else(|e| e.into_inner());
        if kept
            .as_ref()
            .is_some_and(|l| changes.iter().any(|(p, k)| l.changed_by(p, *k)))
        {
            *kept = None;
        }
    }

    /// The file names the layout notes (every navigation server's root
    /// markers, workspace files, package and project files) and the file
    /// types it notes (theirs).
    fn layout_names(&self) -> (BTreeSet<String>, BTreeSet<String>) {
        let config = self.config();
        let mut names = BTreeSet::new();
        let mut types = BTreeSet::new();
        for s in config
            .servers
            .iter()
            .filter(|s| !s.disabled && s.kind == ProviderKind::Lsp && !s.is_linter)
        {
            let r = &s.project_root;
            names.extend(s.root_markers.iter().filter(|m| !m.contains('*')).cloned());
            names.extend(r.workspaces.iter().filter_map(|w| {
                Path::new(&w.file)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
            }));
            names.extend(r.several_packages.iter().cloned());
            names.extend(r.projects.iter().cloned());
            types.extend(
                s.file_types
                    .iter()
                    .map(|t| t.rsplit('.').next().unwrap_or(t).to_string()),
            );
        }
        (names, types)
    }

    /// The root `spec` gets for files in `dir` (kept with the layout;
    /// asked of the directory itself, as of a file in it).
    fn root_for_dir(&self, layout: &Layout, spec: &ServerSpec, dir: &Path) -> PathBuf {
        layout.root_of(&spec.id, dir, || {
            roots::choose(spec, dir, &self.root, &self.root_files, &|names| {
                layout.holding(names)
            })
            .root
        })
    }

    /// The parts of the workspace holding files of `spec`'s types whose
    /// root is none of `folders`: what a server serving `folders` does not
    /// see. Blocking (the layout).
    pub fn outside_view(&self, spec: &ServerSpec, folders: &[PathBuf]) -> OutsideView {
        let layout = self.layout();
        let mut parts: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
        for dir in layout.with_types(&spec.file_types) {
            let root = self.root_for_dir(&layout, spec, &dir);
            if !folders.iter().any(|f| same(f, &root)) {
                parts.entry(root).or_default().push(dir);
            }
        }
        OutsideView {
            parts: parts.into_iter().collect(),
            cut: layout.cut,
        }
    }

    /// Every root `spec` gets for the workspace's files of its types, with
    /// what chose each, in path order. Blocking (the layout).
    pub fn project_roots(&self, spec: &ServerSpec) -> Vec<(PathBuf, scry_model::RootChoice)> {
        let layout = self.layout();
        let mut out: BTreeMap<PathBuf, scry_model::RootChoice> = BTreeMap::new();
        for dir in layout.with_types(&spec.file_types) {
            let root = self.root_for_dir(&layout, spec, &dir);
            out.entry(root).or_insert_with(|| {
                roots::choose(spec, &dir, &self.root, &self.root_files, &|n| {
                    layout.holding(n)
                })
                .why
            });
        }
        out.into_iter().collect()
    }

    /// The projects under `folders` (directories holding one of
    /// `spec.project_root.projects`), each with the directories of `spec`'s
    /// files whose nearest project it is. Blocking (the layout).
    pub fn projects_under(
        &self,
        spec: &ServerSpec,
        folders: &[PathBuf],
    ) -> Vec<(PathBuf, Vec<PathBuf>)> {
        let names = &spec.project_root.projects;
        if names.is_empty() {
            return Vec::new();
        }
        let layout = self.layout();
        let projects: Vec<PathBuf> = layout
            .holding(names)
            .into_iter()
            .filter(|p| folders.iter().any(|f| is_under(p, f)))
            .collect();
        let mut out: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
        for dir in layout.with_types(&spec.file_types) {
            // The nearest project at or above the directory.
            if let Some(p) = projects
                .iter()
                .filter(|p| is_under(&dir, p))
                .max_by_key(|p| p.components().count())
            {
                out.entry(p.clone()).or_default().push(dir);
            }
        }
        out.into_iter().collect()
    }

    /// The settings of a server serving `folders`: its configured ones,
    /// with each folder's members on its `projectRoot.memberPaths` setting
    /// (appended to what is configured there, absolute, once each).
    pub(super) fn settings_for(&self, spec: &ServerSpec, folders: &[FolderOf]) -> Value {
        let mut settings = spec.settings.clone();
        let Some(mp) = &spec.project_root.member_paths else {
            return settings;
        };
        let mut paths: Vec<String> = Vec::new();
        for f in folders {
            for m in roots::member_dirs(&f.path, &f.members) {
                let found = mp.dirs.iter().map(|d| m.join(d)).find(|p| p.is_dir());
                if let Some(p) = found {
                    let p = scry_base::paths::normalise(&p)
                        .to_string_lossy()
                        .into_owned();
                    if !paths.contains(&p) {
                        paths.push(p);
                    }
                }
            }
        }
        if paths.is_empty() {
            return settings;
        }
        append_at(&mut settings, &mp.setting, paths);
        settings
    }
}

/// Append `items` to the list at the dotted `key` of `v` (made an object
/// and a list where it is not one), leaving out those already there.
fn append_at(v: &mut Value, key: &str, items: Vec<String>) {
    let mut at = v;
    for part in key.split('.').filter(|p| !p.is_empty()) {
        if !at.is_object() {
            *at = Value::Object(Default::default());
        }
        at = at
            .as_object_mut()
            .expect("made an object")
            .entry(part.to_string())
            .or_insert(Value::Null);
    }
    if !at.is_array() {
        *at = Value::Array(Vec::new());
    }
    let list = at.as_array_mut().expect("made a list");
    for i in items {
        if !list.iter().any(|x| x.as_str() == Some(i.as_str())) {
            list.push(Value::String(i));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn member_paths_are_appended_to_the_setting() {
        let mut v =
            json!({"python": {"analysis": {"autoSearchPaths": true, "extraPaths": ["/mine"]}}});
        append_at(
            &mut v,
            "python.analysis.extraPaths",
            vec!["/a".into(), "/mine".into()],
        );
        assert_eq!(
            v["python"]["analysis"]["extraPaths"],
            json!(["/mine", "/a"])
        );
        assert_eq!(v["python"]["analysis"]["autoSearchPaths"], json!(true));
        let mut v = Value::Null;
        append_at(&mut v, "a.b", vec!["/x".into()]);
        assert_eq!(v, json!({"a": {"b": ["/x"]}}));
    }
}
