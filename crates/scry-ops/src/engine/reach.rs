//! What a server's answer reaches, for the questions answered from all it
//! sees (references, implementations, callers, a rename:
//! `Action::searches_workspace`): before asking, the projects under the
//! folder it answers from that a server loading projects on open has not
//! loaded are opened ([`open_projects`]; catalogue `projectRoot.projects`,
//! tsserver); after, the parts of the workspace holding files of its
//! languages outside that folder which write the name are said
//! ([`outside`]): an answer from a partial view never looks complete.
//!
//! Invariants: both are bounded by the call's deadline (a share of what is
//! left of it) and by the layout's and the name scan's own bounds
//! (`scry_workspace::layout`); the blocking work runs off the runtime's
//! workers; neither fails the call — what they could not finish in time
//! is left unsaid, logged; a file opened for a project is one that writes
//! the name.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use scry_lsp::{CharPos, LineIndex, Session};
use scry_model::Reason;
use scry_workspace::layout::mentions;
use scry_workspace::{Route, Workspace};
use tokio::time::Instant;

use crate::resolve;

/// At most this many projects are opened for one question.
pub(crate) const MAX_OPENED: usize = 16;

/// At most this many files outside the view are listed by name.
const SHOWN: usize = 3;

/// The files outside the view looked for, at most (then it says "…").
const COUNTED: usize = 20;

/// The name a question is about at `pos` in `index`: the identifier
/// around it.
pub(crate) fn name_at(index: &LineIndex, pos: CharPos) -> String {
    let Some(line) = index.line(pos.line) else {
        return String::new();
    };
    let chars: Vec<char> = line.chars().collect();
    let mut start = (pos.col as usize).min(chars.len());
    while start > 0 && resolve::is_ident_char(chars[start - 1]) {
        start -= 1;
    }
    chars[start..]
        .iter()
        .take_while(|c| resolve::is_ident_char(**c))
        .collect()
}

/// A share of what is left of the call for this work: a quarter of it.
fn share(deadline: Instant) -> std::time::Instant {
    let left = deadline.saturating_duration_since(Instant::now());
    std::time::Instant::now() + left / 4
}

/// Open, in each project under the route's root that has no file of the
/// question (`asked`) and writes `name`, one file that does, so a server
/// that searches only loaded projects searches it (at most
/// [`MAX_OPENED`]). The projects left unopened past that, when any.
pub(crate) async fn open_projects(
    ws: &Arc<Workspace>,
    session: &Session,
    route: &Route,
    asked: &Path,
    name: &str,
    deadline: Instant,
) -> Option<Reason> {
    if route.spec.project_root.projects.is_empty() || name.is_empty() {
        return None;
    }
    let until = share(deadline);
    let limit = ws.config().limits.max_file_bytes;
    let (w, spec, root, asked_owned, name_owned) = (
        ws.clone(),
        route.spec.clone(),
        route.root.clone(),
        asked.to_path_buf(),
        name.to_string(),
    );
    let found = tokio::task::spawn_blocking(move || {
        let projects = w.projects_under(&spec, std::slice::from_ref(&root));
        let asked_dir = asked_owned.parent().map(Path::to_path_buf);
        let mut files: Vec<(PathBuf, PathBuf)> = Vec::new();
        for (project, dirs) in projects {
            if asked_dir.as_ref().is_some_and(|d| dirs.contains(d)) {
                continue;
            }
            let m = mentions(&dirs, &spec.file_types, &name_owned, limit, 1, until);
            if let Some(f) = m.files.into_iter().next() {
                files.push((project, f));
            }
            if std::time::Instant::now() >= until {
                break;
            }
        }
        files
    });
    let found = match tokio::time::timeout_at(deadline, found).await {
        Ok(Ok(f)) => f,
        _ => {
            tracing::debug!(server = %route.spec.id, "projects to open: not found in time");
            return None;
        }
    };
    let mut opened = 0;
    for (_, file) in found.iter().take(MAX_OPENED) {
        if Instant::now() >= deadline {
            break;
        }
        match session
            .sync_file(file, &route.spec.language_id_for(file))
            .await
        {
            Ok(_) => opened += 1,
            Err(e) => tracing::debug!(file = %file.display(), "not opened for its project: {e}"),
        }
    }
    tracing::debug!(server = %route.spec.id, opened, "projects opened for a workspace-wide question");
    let left: Vec<PathBuf> = found.iter().skip(opened).map(|(p, _)| p.clone()).collect();
    (!left.is_empty()).then(|| Reason::ProjectsNotLoaded {
        server: route.spec.id.clone(),
        name: name.to_string(),
        count: left.len(),
        projects: left.into_iter().take(SHOWN).collect(),
    })
}

/// The parts of the workspace with files of the route's server outside the
/// root it answered from (`route.root`) that write `name` — but for the
/// files the answer has locations in (`answered`) —, as the answer's
/// `Partial` reason; `None` when there are none (or they could not be
/// read in time).
pub(crate) async fn outside(
    ws: &Arc<Workspace>,
    route: &Route,
    name: &str,
    answered: &[PathBuf],
    deadline: Instant,
) -> Option<Reason> {
    if name.is_empty() {
        return None;
    }
    let until = share(deadline);
    let limit = ws.config().limits.max_file_bytes;
    let (w, spec, root, name_owned, answered) = (
        ws.clone(),
        route.spec.clone(),
        route.root.clone(),
        name.to_string(),
        answered.to_vec(),
    );
    let scan = tokio::task::spawn_blocking(move || {
        let view = w.outside_view(&spec, std::slice::from_ref(&root));
        let mut parts = Vec::new();
        let mut files = Vec::new();
        let mut complete = true;
        for (part, dirs) in &view.parts {
            let want = COUNTED.saturating_sub(files.len()).max(1);
            let m = mentions(dirs, &spec.file_types, &name_owned, limit, want, until);
            complete &= m.complete && m.files.len() < want;
            let unanswered: Vec<PathBuf> = m
                .files
                .into_iter()
                .filter(|f| !answered.iter().any(|a| scry_base::paths::same(a, f)))
                .collect();
            if !unanswered.is_empty() {
                parts.push(part.clone());
                files.extend(unanswered);
            }
            if files.len() >= COUNTED || std::time::Instant::now() >= until {
                complete = complete && view.parts.last().is_some_and(|(p, _)| p == part);
                break;
            }
        }
        (parts, files, complete)
    });
    let (parts, files, complete) = match tokio::time::timeout_at(deadline, scan).await {
        Ok(Ok(found)) => found,
        _ => {
            tracing::debug!(server = %route.spec.id, "what the server does not see: not read in time");
            return None;
        }
    };
    if files.is_empty() {
        return None;
    }
    Some(Reason::OutsideServerView {
        server: route.spec.id.clone(),
        name: name.to_string(),
        folders: vec![route.root.clone()],
        parts,
        files: files.len(),
        shown: files.into_iter().take(SHOWN).collect(),
        complete,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_around_a_position() {
        let ix = LineIndex::new("let n = core_lib::shared_helper(21);\n");
        let at = |col| name_at(&ix, CharPos { line: 0, col });
        assert_eq!(at(18), "shared_helper");
        assert_eq!(at(24), "shared_helper");
        assert_eq!(at(4), "n");
        assert_eq!(at(3), "let");
        assert_eq!(at(200), "");
        assert_eq!(name_at(&ix, CharPos { line: 9, col: 0 }), "");
    }
}
