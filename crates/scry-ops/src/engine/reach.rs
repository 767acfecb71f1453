//! What a server's answer reaches, for the questions answered from all it
//! sees (references, implementations, callers, a rename:
//! `Action::searches_workspace`): before asking, the projects under the
//! folder it answers from that a server loading projects on open has not
//! loaded are opened ([`open_projects`]; catalogue `projectRoot.projects`,
//! tsserver); after, the parts of the workspace holding files of its
//! languages outside that folder which write the name are said, and so
//! are its files whose names are not UTF-8, which a server cannot open
//! ([`unseen`], one scan): an answer from a partial view never looks
//! complete.
//!
//! Invariants: both are bounded by the call's deadline (a share of what is
//! left of it) and by the layout's and the name scan's own bounds
//! (`scry_workspace::layout`); the blocking work runs off the runtime's
//! workers; neither fails the call — what they could not finish in time
//! is left unsaid, logged; a file opened for a project is one that writes
//! the name.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use scry_lsp_session::{CharPos, LineIndex, Session};
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

/// What a scan is given: the route's server, its root, the name, the
/// largest file read, and when it stops (a quarter of what is left of the
/// call).
struct Scan {
    ws: Arc<Workspace>,
    spec: scry_workspace::catalog::ServerSpec,
    root: PathBuf,
    name: String,
    limit: u64,
    until: std::time::Instant,
}

impl Scan {
    fn new(ws: &Arc<Workspace>, route: &Route, name: &str, deadline: Instant) -> Scan {
        let left = deadline.saturating_duration_since(Instant::now());
        Scan {
            ws: ws.clone(),
            spec: route.spec.clone(),
            root: route.root.clone(),
            name: name.to_string(),
            limit: ws.config().limits.max_file_bytes,
            until: std::time::Instant::now() + left / 4,
        }
    }

    /// The files of `dirs` of the server's types that write the name, at
    /// most `want` (`scry_workspace::layout::mentions`).
    fn mentions(&self, dirs: &[PathBuf], want: usize) -> scry_workspace::layout::Mentions {
        mentions(
            dirs,
            &self.spec.file_types,
            &self.name,
            self.limit,
            want,
            self.until,
        )
    }

    /// `work` on this scan off the runtime's workers, given up at
    /// `deadline` (`None` then, said in the log as `what`).
    async fn run<T: Send + 'static>(
        self,
        deadline: Instant,
        what: &str,
        work: impl FnOnce(&Scan) -> T + Send + 'static,
    ) -> Option<T> {
        let server = self.spec.id.clone();
        let task = tokio::task::spawn_blocking(move || work(&self));
        match tokio::time::timeout_at(deadline, task).await {
            Ok(Ok(t)) => Some(t),
            _ => {
                tracing::debug!(%server, "{what}: not done in time");
                None
            }
        }
    }
}

/// Open, in each project under the route's root that has no document open
/// (the question's, `asked`, among them) and writes `name`, one file that
/// does, so a server that searches only loaded projects searches it (at
/// most [`MAX_OPENED`]): a project loaded by an earlier question is not
/// read again. The projects left unopened past that, when any.
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
    // A project with a document open is loaded already (the asked file's
    // among them): not read again for this question.
    let mut open: Vec<PathBuf> = session
        .open_paths()
        .await
        .into_iter()
        .filter_map(|p| p.parent().map(Path::to_path_buf))
        .collect();
    open.extend(asked.parent().map(Path::to_path_buf));
    let found = Scan::new(ws, route, name, deadline)
        .run(deadline, "projects to open", move |scan| {
            let projects = scan
                .ws
                .projects_under(&scan.spec, std::slice::from_ref(&scan.root));
            let mut files: Vec<(PathBuf, PathBuf)> = Vec::new();
            for (project, dirs) in projects {
                if open.iter().any(|d| dirs.contains(d)) {
                    continue;
                }
                if let Some(f) = scan.mentions(&dirs, 1).files.into_iter().next() {
                    files.push((project, f));
                }
                if std::time::Instant::now() >= scan.until {
                    break;
                }
            }
            files
        })
        .await?;
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

/// What the route's server could not see of the workspace's files that
/// write `name` — but for the files the answer has locations in
/// (`answered`) —, as the answer's `Partial` reasons, in one scan off the
/// runtime: the parts outside the root it answered from (`route.root`),
/// and the files whose names are not UTF-8, which it cannot open. Empty
/// when there are none (or they could not be read in time).
pub(crate) async fn unseen(
    ws: &Arc<Workspace>,
    route: &Route,
    name: &str,
    answered: &[PathBuf],
    deadline: Instant,
) -> Vec<Reason> {
    if name.is_empty() {
        return Vec::new();
    }
    let answered = answered.to_vec();
    let found = Scan::new(ws, route, name, deadline)
        .run(deadline, "what the server does not see", move |scan| {
            let unanswered = |f: &PathBuf| !answered.iter().any(|a| scry_base::paths::same(a, f));
            (outside(scan, &unanswered), not_utf8(scan, &unanswered))
        })
        .await;
    let Some(((parts, files, complete), odd)) = found else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if !files.is_empty() {
        out.push(Reason::OutsideServerView {
            server: route.spec.id.clone(),
            name: name.to_string(),
            folders: vec![route.root.clone()],
            parts,
            files: files.len(),
            shown: files.into_iter().take(SHOWN).collect(),
            complete,
        });
    }
    if !odd.is_empty() {
        out.push(Reason::NotUtf8Names {
            server: route.spec.id.clone(),
            name: name.to_string(),
            files: odd.len(),
            shown: odd.into_iter().take(SHOWN).collect(),
        });
    }
    out
}

/// The parts of the workspace with files of the scan's server outside its
/// root that write the name (those `unanswered` lets through), the files,
/// and whether every such file was read.
fn outside(
    scan: &Scan,
    unanswered: &dyn Fn(&PathBuf) -> bool,
) -> (Vec<PathBuf>, Vec<PathBuf>, bool) {
    let view = scan
        .ws
        .outside_view(&scan.spec, std::slice::from_ref(&scan.root));
    let mut parts = Vec::new();
    let mut files = Vec::new();
    let mut complete = true;
    for (i, (part, dirs)) in view.parts.iter().enumerate() {
        let want = COUNTED.saturating_sub(files.len()).max(1);
        let m = scan.mentions(dirs, want);
        complete &= m.complete && m.files.len() < want;
        let left: Vec<PathBuf> = m.files.into_iter().filter(|f| unanswered(f)).collect();
        if !left.is_empty() {
            parts.push(part.clone());
            files.extend(left);
        }
        if files.len() >= COUNTED || std::time::Instant::now() >= scan.until {
            // Stopped before the last part: not every file was read.
            complete &= i + 1 == view.parts.len();
            break;
        }
    }
    (parts, files, complete)
}

/// The workspace's files of the scan's server whose names are not UTF-8
/// (which it cannot open) that write the name (those `unanswered` lets
/// through): at most `layout::MAX_UNNAMED` a type, each read within the
/// file limit, until the scan's time is up.
fn not_utf8(scan: &Scan, unanswered: &dyn Fn(&PathBuf) -> bool) -> Vec<PathBuf> {
    let (files, _) = scan.ws.layout().not_utf8(&scan.spec.file_types);
    files
        .into_iter()
        .filter(|f| unanswered(f))
        .take_while(|_| std::time::Instant::now() < scan.until)
        .filter(|f| {
            scry_base::disk::read(f, scan.limit)
                .is_ok_and(|text| scry_workspace::layout::writes_word(&text, scan.name.as_bytes()))
        })
        .collect()
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
