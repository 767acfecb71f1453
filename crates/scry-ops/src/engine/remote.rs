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
//! [`RETRY_AFTER`] or when HEAD moves, never on every question; so is one
//! that found only an ancestor's index (HEAD's may be published since).
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

/// One search, for `head` with the template `url`: `done` turns true when
/// it ended; `failed` holds its problem and when it ended, `found` when it
/// found an index.
struct Search {
    head: String,
    url: String,
    done: watch::Receiver<bool>,
    failed: Option<(RemoteProblem, Instant)>,
    found: Option<Instant>,
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
            // A search for this HEAD: none yet, another HEAD's or
            // template's, one that failed long enough ago, or one that
            // found only an ancestor's index long enough ago (CI may have
            // published a nearer one since) starts one.
            let behind = st.loaded.as_ref().is_some_and(|l| l.behind > 0);
            if search_due(st.search.as_ref(), &head, &remote.url, behind) {
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
        let url = remote.url.clone();
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
                    if let Some(s) = st.search.as_mut().filter(|_| current) {
                        s.found = Some(Instant::now());
                    }
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
            url,
            done: rx,
            failed: None,
            found: None,
        }
    }
}

/// Whether a new search starts: none yet, or the last was for another
/// HEAD or template, failed over [`RETRY_AFTER`] ago, or found only an
/// ancestor's index (`behind`) over [`RETRY_AFTER`] ago.
fn search_due(last: Option<&Search>, head: &str, url: &str, behind: bool) -> bool {
    let long_ago = |at: &Instant| at.elapsed() > RETRY_AFTER;
    last.is_none_or(|s| {
        s.head != head
            || s.url != url
            || s.failed.as_ref().is_some_and(|(_, at)| long_ago(at))
            || (behind && s.found.as_ref().is_some_and(long_ago))
    })
}

/// `p`, unless it was the last problem said.
fn say_once(st: &mut RemoteState, p: RemoteProblem) -> Option<RemoteProblem> {
    if st.said.as_ref() == Some(&p) {
        return None;
    }
    st.said = Some(p.clone());
    Some(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_is_due_for_a_new_head_or_template_and_again_only_after_a_while() {
        let (_tx, done) = watch::channel(true);
        let long_ago = Instant::now()
            .checked_sub(RETRY_AFTER + Duration::from_secs(1))
            .expect("a clock running for over five minutes");
        let search = |failed: Option<Instant>, found: Option<Instant>| Search {
            head: "h".into(),
            url: "u".into(),
            done: done.clone(),
            failed: failed.map(|at| (RemoteProblem::DigestMismatch, at)),
            found,
        };
        assert!(search_due(None, "h", "u", false));
        let running = search(None, None);
        assert!(!search_due(Some(&running), "h", "u", false));
        assert!(search_due(Some(&running), "h2", "u", false));
        assert!(search_due(Some(&running), "h", "u2", false));
        // Failed: not on every question, again after a while.
        assert!(!search_due(
            Some(&search(Some(Instant::now()), None)),
            "h",
            "u",
            false
        ));
        assert!(search_due(
            Some(&search(Some(long_ago), None)),
            "h",
            "u",
            false
        ));
        // Found HEAD's own: never again for this HEAD; an ancestor's: again
        // after a while.
        assert!(!search_due(
            Some(&search(None, Some(long_ago))),
            "h",
            "u",
            false
        ));
        assert!(!search_due(
            Some(&search(None, Some(Instant::now()))),
            "h",
            "u",
            true
        ));
        assert!(search_due(
            Some(&search(None, Some(long_ago))),
            "h",
            "u",
            true
        ));
    }
}
