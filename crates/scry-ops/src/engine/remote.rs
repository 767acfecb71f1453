//! The remote SCIP index in the engine (`index.remote`): which fetched
//! index answers for the working tree now, the background search that
//! fetches it, and the translation of its positions to the working tree.
//!
//! When it is used: no local index (`scry index`'s, or `index.path`'s)
//! exists for the workspace and a remote is configured (a local one is
//! built here, from these very files: it wins). The search
//! (`scry_workspace::remote_index::fetch`) runs in the background, once
//! per HEAD; a question waits for it only as long as the caller allows
//! (`wait`, a part of its budget), and meanwhile the next sources answer
//! with a note ([`RemoteProblem::Fetching`]). When HEAD moves, the next
//! question starts a new search and the index fetched for the old HEAD
//! answers until it ends. A failed search is retried after
//! [`RETRY_AFTER`] or when HEAD moves, never on every question.
//!
//! Translation ([`RemoteLoaded::hunks`]): a document whose file changed
//! since the index's commit is answered from through that file's `git
//! diff -U0` hunks (committed and uncommitted changes), cached by the
//! file's stamp: occurrences on unchanged lines move by the hunks above
//! them, those on changed lines are dropped and counted.
//!
//! Invariants: a problem is a [`Reason::IndexRemote`] note, said once per
//! distinct problem; the fetch never holds a question past `wait`; git
//! runs off the runtime.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use scry_base::disk::{Stamp, stamp};
use scry_index::store::read::Index;
use scry_index::translate::Hunks;
use scry_model::{IndexOrigin, RemoteOrigin, RemoteProblem};
use scry_workspace::config::RemoteIndex;
use scry_workspace::remote_index::{self, Git};
use tokio::sync::watch;

use super::*;

/// How long after a failed search the same HEAD is searched again.
pub(crate) const RETRY_AFTER: Duration = Duration::from_secs(300);

/// The engine's remote index: what is loaded, the search under way or
/// last ended, the problem last said.
#[derive(Default)]
pub(crate) struct RemoteSlot {
    state: Mutex<RemoteState>,
}

#[derive(Default)]
struct RemoteState {
    loaded: Option<Arc<RemoteLoaded>>,
    search: Option<Search>,
    said: Option<RemoteProblem>,
}

/// One search, for `head`: `done` turns true when it ended; `failed`
/// holds its problem and when it ended.
struct Search {
    head: String,
    done: watch::Receiver<bool>,
    failed: Option<(RemoteProblem, Instant)>,
}

/// A fetched index, open: the commit it was built at, how far behind
/// HEAD (when it was fetched), where from and when, and the translation
/// of its positions to the working tree.
pub(crate) struct RemoteLoaded {
    pub(crate) ix: Arc<Index>,
    pub(crate) commit: String,
    pub(crate) behind: u32,
    host: String,
    fetched_at: SystemTime,
    git: Git,
    hunks: Mutex<HashMap<String, FileHunks>>,
}

/// A file's hunks (`None`: not translatable) as of its stamp.
type FileHunks = (Stamp, Option<Arc<Hunks>>);

impl RemoteLoaded {
    /// Where it came from, as an answer's origin says.
    pub(crate) fn origin(&self) -> IndexOrigin {
        let fetched_secs = SystemTime::now()
            .duration_since(self.fetched_at)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        IndexOrigin::Remote(Box::new(RemoteOrigin {
            host: self.host.clone(),
            behind: self.behind,
            fetched_secs,
        }))
    }

    /// `rel`'s hunks from the index's commit to the working tree, `None`
    /// when the file cannot be translated (missing, git cannot say).
    /// Cached by the file's stamp: an edit runs git again.
    pub(crate) fn hunks(&self, root: &Path, rel: &str) -> Option<Arc<Hunks>> {
        let now = stamp(&root.join(rel))?;
        let mut cache = self.hunks.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((s, h)) = cache.get(rel)
            && *s == now
        {
            return h.clone();
        }
        let h = self.git.hunks(&self.commit, rel).map(Arc::new);
        cache.insert(rel.to_string(), (now, h.clone()));
        h
    }

    /// The text of `rel` at the index's commit.
    pub(crate) fn text_then(&self, rel: &str) -> Option<String> {
        String::from_utf8(self.git.show(&self.commit, rel)?).ok()
    }
}

impl Engine {
    /// The remote index for the working tree now: the one loaded when it
    /// was fetched for HEAD (or a search for HEAD is under way, or failed
    /// lately), else a search is started and waited for `wait` at most.
    /// `Err(note)`: nothing to answer from, and the note to give (once per
    /// distinct problem; `Fetching` every time).
    pub(crate) async fn remote_index(
        &self,
        cache: &Path,
        remote: &RemoteIndex,
        wait: Duration,
    ) -> Result<Arc<RemoteLoaded>, Option<Reason>> {
        let root = self.ws.root().to_path_buf();
        let trusted = self.ws.config().trust.trust.is_trusted();
        let git = Git::new(&root, trusted);
        let g = git.clone();
        let head = tokio::task::spawn_blocking(move || g.head())
            .await
            .ok()
            .flatten();
        let note = |problem: RemoteProblem| Reason::IndexRemote {
            url: remote.shown(),
            problem,
        };
        let slot = &self.index.remote;
        let mut done = {
            let mut st = slot.state.lock().unwrap_or_else(|e| e.into_inner());
            let Some(head) = head else {
                st.loaded = None;
                return Err(say_once(&mut st, RemoteProblem::NoCommit).map(note));
            };
            // A search for this HEAD: none yet, another HEAD's, or one that
            // failed long enough ago starts one.
            let due = st.search.as_ref().is_none_or(|s| {
                s.head != head
                    || s.failed
                        .as_ref()
                        .is_some_and(|(_, at)| at.elapsed() > RETRY_AFTER)
            });
            if due {
                st.search = Some(self.start_search(cache, remote, &root, trusted, git, head));
            }
            // What was fetched answers (for an earlier HEAD while the new
            // search runs).
            if let Some(l) = &st.loaded {
                return Ok(l.clone());
            }
            let Some(s) = st.search.as_ref() else {
                return Err(None);
            };
            if let Some((p, _)) = s.failed.clone() {
                return Err(say_once(&mut st, p).map(note));
            }
            s.done.clone()
        };
        let _ = tokio::time::timeout(wait, done.wait_for(|d| *d)).await;
        let mut st = slot.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(l) = &st.loaded {
            return Ok(l.clone());
        }
        match st.search.as_ref().and_then(|s| s.failed.clone()) {
            Some((p, _)) => Err(say_once(&mut st, p).map(note)),
            None => Err(Some(note(RemoteProblem::Fetching))),
        }
    }

    /// Start the search for `head` in the background; its outcome lands in
    /// the slot.
    fn start_search(
        &self,
        cache: &Path,
        remote: &RemoteIndex,
        root: &Path,
        trusted: bool,
        git: Git,
        head: String,
    ) -> Search {
        let (tx, rx) = watch::channel(false);
        let engine = self.clone();
        let (cache, remote, root, h) = (
            cache.to_path_buf(),
            remote.clone(),
            root.to_path_buf(),
            head.clone(),
        );
        tokio::spawn(scry_workspace::env::carry(async move {
            let deadline = std::time::Instant::now()
                + Duration::from_millis(scry_model::limits::REMOTE_INDEX_SEARCH_MS);
            let got = remote_index::fetch(&cache, &root, trusted, &remote, deadline).await;
            let slot = &engine.index.remote;
            let mut st = slot.state.lock().unwrap_or_else(|e| e.into_inner());
            let current = st.search.as_ref().is_some_and(|s| s.head == h);
            match got {
                Ok(f) => {
                    let fetched_at =
                        std::fs::metadata(scry_index::cache::remote_db(&cache, &root, &f.commit))
                            .and_then(|m| m.modified())
                            .unwrap_or_else(|_| SystemTime::now());
                    st.loaded = Some(Arc::new(RemoteLoaded {
                        ix: Arc::new(f.index),
                        commit: f.commit,
                        behind: f.behind,
                        host: remote.host(),
                        fetched_at,
                        git,
                        hunks: Mutex::default(),
                    }));
                    st.said = None;
                }
                Err(p) if current => {
                    if let Some(s) = st.search.as_mut() {
                        s.failed = Some((p, Instant::now()));
                    }
                }
                Err(_) => {}
            }
            drop(st);
            let _ = tx.send(true);
        }));
        Search {
            head,
            done: rx,
            failed: None,
        }
    }
}

/// `p`, unless it was the last problem said.
fn say_once(st: &mut RemoteState, p: RemoteProblem) -> Option<RemoteProblem> {
    if st.said.as_ref() == Some(&p) {
        return None;
    }
    st.said = Some(p.clone());
    Some(p)
}
