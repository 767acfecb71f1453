//! The edit service ([`Editor`]): one path for every `WorkspaceEdit`
//! (rename, code action, a server's `workspace/applyEdit`, undo) — plan,
//! preview or journal + commit, re-sync the servers, diagnostics delta. It
//! holds the edit state of a session (journal location, the server edits of
//! a running command, test seams) and depends on the workspace and the
//! diagnostics delta only, never on the engine; the pure edit modules
//! (plan, apply, journal, diff, lock) depend on nothing above them.
//!
//! Every write (an edit, an undo, a recovery) runs holding the editor's
//! in-process lock and then the workspace's cross-process writer lock
//! ([`super::lock`], waited for until the call's deadline, else `BUSY`),
//! and first resolves a dead writer's `pending` journal entry
//! ([`Journal::recover`]); so does starting the edit service
//! ([`Editor::recover_at_start`], when no other writer holds the lock).
//! What recovery did is said once, as a note on the next answer
//! ([`Editor::take_notices`]).

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

use scry_lsp::{ApplyEditHook, DeferredReply, Session};
use scry_workspace::Workspace;
use serde_json::{Value, json};

use super::apply::{WriteOptions, commit_staged};
use super::diff::plan_diffs;
use super::journal::{self, EntryState, Journal, Manifest, stamp_matches};
use super::lock::{self, WriterLock};
use super::plan::{EditPlan, FileChange, FileImage, ServerView, build_plan, named_paths};
use scry_model::error::OpError;
use scry_model::msg;
use scry_model::{EditKind, EditReport, EditedLine, FileMove, FilePreview};

/// How one edit is to be carried out.
#[derive(Debug, Clone)]
pub struct EditOptions {
    /// False: preview only (nothing written).
    pub apply: bool,
    /// The caller's idempotency key: an edit already applied under it is
    /// not applied again; its answer is replayed.
    pub key: Option<String>,
    pub kind: EditKind,
    pub title: String,
    pub new_name: Option<String>,
    /// How long to wait for another process's write in this workspace
    /// (then `BUSY`); `None`: [`DEFAULT_WRITER_WAIT`].
    pub deadline: Option<tokio::time::Instant>,
}

/// How long a write without a deadline waits for another writer.
pub const DEFAULT_WRITER_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// A command of ours running at a server: its `workspace/applyEdit`s are
/// applied (or captured, for a preview) on our behalf.
#[derive(Debug, Default)]
struct Armed {
    preview: bool,
    key: Option<String>,
    title: String,
    results: Vec<Result<EditReport, String>>,
}

/// Shared by all clones of an editor.
#[derive(Debug, Default)]
struct EditState {
    /// One edit at a time per editor.
    lock: tokio::sync::Mutex<()>,
    journal_base: Mutex<Option<PathBuf>>,
    /// Test seam: the journal fails after this many before-images.
    journal_fail_after: Mutex<Option<usize>>,
    write: Mutex<WriteOptions>,
    armed: Mutex<HashMap<(String, PathBuf), Armed>>,
    /// What recovery did, for the next answer (said once).
    notices: Mutex<Vec<scry_model::Recovered>>,
}

impl EditState {
    fn new() -> EditState {
        EditState {
            journal_base: Mutex::new(journal::default_base()),
            ..EditState::default()
        }
    }

    fn journal(&self, root: &Path) -> Option<Journal> {
        let base = self
            .journal_base
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()?;
        let fail = *self
            .journal_fail_after
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        Some(Journal::open(&base, root).with_failure(fail))
    }

    /// The workspace's writer lock file: beside its journal, else beside
    /// where the journal would be by default (`None` when there is no
    /// per-user state directory at all: in-process serialization only).
    fn lock_path(&self, root: &Path) -> Option<PathBuf> {
        let base = self
            .journal_base
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .or_else(journal::default_base)?;
        Some(lock::lock_path(&base, root))
    }

    fn notify(&self, notes: impl IntoIterator<Item = scry_model::Recovered>) {
        self.notices
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(notes);
    }

    fn write_options(&self) -> WriteOptions {
        self.write.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// Answers servers' `workspace/applyEdit` through the same path as every
/// other edit.
struct Hook {
    editor: WeakEditor,
}

/// An editor without keeping its workspace alive (the workspace holds the
/// hook).
#[derive(Clone)]
struct WeakEditor {
    ws: Weak<Workspace>,
    state: Arc<EditState>,
}

/// The edit service of a workspace. Cheap to clone; clones share the state.
#[derive(Clone)]
pub(crate) struct Editor {
    ws: Arc<Workspace>,
    state: Arc<EditState>,
}

impl ApplyEditHook for Hook {
    fn apply_edit(&self, server: &str, root: &Path, params: Value) -> DeferredReply {
        let weak = self.editor.clone();
        let key = (server.to_string(), root.to_path_buf());
        Box::pin(async move {
            let refuse = |reason: String| Ok(json!({ "applied": false, "failureReason": reason }));
            let Some(ws) = weak.ws.upgrade() else {
                return refuse("scry is shutting down".into());
            };
            let editor = Editor {
                ws,
                state: weak.state.clone(),
            };
            let (preview, key_base, title, n) = {
                let armed = editor.state.armed.lock().unwrap_or_else(|e| e.into_inner());
                match armed.get(&key) {
                    None => {
                        return refuse(
                            "scry applies a server's edits only while running a code action it was asked to apply"
                                .into(),
                        );
                    }
                    Some(a) => (a.preview, a.key.clone(), a.title.clone(), a.results.len()),
                }
            };
            let session = editor
                .ws
                .running()
                .into_iter()
                .find(|s| s.name() == key.0 && s.root() == key.1);
            let label = params["label"].as_str().map(str::to_string);
            let opts = EditOptions {
                apply: !preview,
                key: key_base.map(|k| format!("{k}#{}", n + 1)),
                kind: EditKind::ServerEdit,
                title: label.unwrap_or(title),
                new_name: None,
                deadline: None,
            };
            let result = editor
                .apply_workspace_edit(session.as_ref(), &params["edit"], opts)
                .await;
            let reply = match &result {
                Ok(_) if preview => json!({
                    "applied": false,
                    "failureReason": "preview only (dry run): scry did not apply the edit",
                }),
                Ok(_) => json!({ "applied": true }),
                Err(e) => json!({ "applied": false, "failureReason": e.to_string() }),
            };
            if let Some(a) = editor
                .state
                .armed
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get_mut(&key)
            {
                a.results.push(result.map_err(|e| e.to_string()));
            }
            Ok(reply)
        })
    }
}

/// Distinct files an edit touches, as reported.
fn files_touched(report: &EditReport) -> usize {
    let mut set: BTreeSet<&Path> = report.edits.iter().map(|e| e.path.as_path()).collect();
    set.extend(report.created.iter().map(PathBuf::as_path));
    set.extend(report.deleted.iter().map(PathBuf::as_path));
    set.extend(report.renamed.iter().map(|m| m.to.as_path()));
    set.extend(report.overwritten.iter().map(PathBuf::as_path));
    set.len()
}

fn report_of(plan: &EditPlan, opts: &EditOptions, root: &Path) -> EditReport {
    let mut r = EditReport {
        kind: opts.kind,
        title: opts.title.clone(),
        new_name: opts.new_name.clone(),
        applied: opts.apply,
        edits: plan
            .edits
            .iter()
            .map(|e| EditedLine {
                path: e.path.clone(),
                line: e.line,
                col: e.col,
                text: e.text.clone(),
            })
            .collect(),
        files_changed: 0,
        created: plan.created.clone(),
        renamed: plan
            .renamed
            .iter()
            .map(|(from, to)| FileMove {
                from: from.clone(),
                to: to.clone(),
            })
            .collect(),
        deleted: plan.deleted.clone(),
        overwritten: plan.overwritten.clone(),
        previews: Vec::new(),
        diagnostics: None,
        journal_id: None,
        replayed: false,
    };
    if !opts.apply {
        r.previews = plan_diffs(plan, root)
            .into_iter()
            .map(|d| FilePreview {
                path: d.path,
                diff: d.diff,
            })
            .collect();
    }
    r.files_changed = files_touched(&r);
    r
}

/// Merge the reports of one code action (its edit, then the edits its
/// command made the server send).
pub(crate) fn merge_reports(
    mut parts: Vec<EditReport>,
    kind: EditKind,
    title: &str,
) -> Option<EditReport> {
    if parts.is_empty() {
        return None;
    }
    let mut out = parts.remove(0);
    for p in parts {
        out.applied &= p.applied;
        out.edits.extend(p.edits);
        out.created.extend(p.created);
        out.renamed.extend(p.renamed);
        out.deleted.extend(p.deleted);
        out.overwritten.extend(p.overwritten);
        out.previews.extend(p.previews);
        out.replayed |= p.replayed;
        if p.journal_id.is_some() {
            out.journal_id = p.journal_id;
        }
        if out.diagnostics.is_none() {
            out.diagnostics = p.diagnostics;
        }
    }
    out.kind = kind;
    out.title = title.to_string();
    out.files_changed = files_touched(&out);
    Some(out)
}

impl Editor {
    pub(crate) fn new(ws: Arc<Workspace>) -> Editor {
        Editor {
            ws,
            state: Arc::new(EditState::new()),
        }
    }

    /// Take the workspace's writer lock (waiting for another process's
    /// write until `deadline`, else `BUSY`), then resolve what a dead writer
    /// left pending. Call holding the in-process lock.
    async fn writer(
        &self,
        deadline: Option<tokio::time::Instant>,
    ) -> Result<Option<WriterLock>, OpError> {
        let root = self.ws.root();
        let held = match self.state.lock_path(root) {
            Some(p) => {
                let deadline =
                    deadline.unwrap_or_else(|| tokio::time::Instant::now() + DEFAULT_WRITER_WAIT);
                Some(lock::acquire(&p, root, deadline).await?)
            }
            None => None,
        };
        if let Some(j) = self.state.journal(root) {
            self.recover_locked(&j)?;
        }
        Ok(held)
    }

    /// [`Journal::recover`], its notes kept for the next answer; an error
    /// when an entry could not be resolved (nothing is written on top of
    /// it).
    fn recover_locked(&self, j: &Journal) -> Result<(), OpError> {
        let done = j.recover();
        if done.is_empty() {
            return Ok(());
        }
        for r in &done {
            tracing::warn!(
                entry = %r.id,
                title = %r.title,
                completed = r.completed,
                restored = r.restored.len(),
                left_alone = r.left_alone.len(),
                failed = r.failed.len(),
                "recovered an interrupted edit"
            );
        }
        self.state.notify(done.iter().cloned());
        if !j.pending().is_empty() {
            let mut m = scry_model::error::Message::new();
            for r in &done {
                for (p, e) in &r.failed {
                    m = m
                        .text(format!(
                            "recovery of the interrupted edit {} (journal entry {}) could not restore ",
                            r.title, r.id
                        ))
                        .path(p)
                        .text(": ")
                        .foreign(e)
                        .text("; ");
                }
            }
            return Err(OpError::WriteFailed(m.append(msg!(
                "scry writes nothing in this workspace until that is resolved (the \
                 before-images are in ",
                path(j.dir()),
                ")"
            ))));
        }
        Ok(())
    }

    /// Resolve a dead writer's pending entry when the edit service starts
    /// (the daemon or an in-process engine opening the workspace), if no
    /// other process holds the writer lock now (then the entry may be a
    /// live writer's; the next write resolves it under the lock).
    pub(crate) fn recover_at_start(&self) {
        let root = self.ws.root();
        let (Some(p), Some(j)) = (self.state.lock_path(root), self.state.journal(root)) else {
            return;
        };
        if j.pending().is_empty() {
            return;
        }
        match lock::try_lock(&p) {
            Ok(Some(_held)) => {
                let _ = self.recover_locked(&j);
            }
            Ok(None) => {}
            Err(e) => tracing::debug!("writer lock {}: {e}", p.display()),
        }
    }

    /// What recovery did since the last call, once.
    pub(crate) fn take_notices(&self) -> Vec<scry_model::Recovered> {
        std::mem::take(&mut *self.state.notices.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Answer the workspace's servers' `workspace/applyEdit` requests
    /// through this service.
    pub(crate) fn install_hook(&self) {
        let hook = Hook {
            editor: WeakEditor {
                ws: Arc::downgrade(&self.ws),
                state: self.state.clone(),
            },
        };
        self.ws.set_apply_edit_hook(Some(Arc::new(hook)));
    }

    /// Where the edit journal lives (default: `$SCRY_JOURNAL_DIR`, else
    /// `$XDG_STATE_HOME/scry/journal`, else `~/.local/state/scry/journal`);
    /// `None` disables it (no undo, no idempotent replay).
    pub(crate) fn set_journal_dir(&self, dir: Option<PathBuf>) {
        *self
            .state
            .journal_base
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = dir;
        // A journal elsewhere may hold a dead writer's entry.
        self.recover_at_start();
    }

    /// Test seam: make the journal fail after writing `n` before-images
    /// of every following edit; `None` turns it off.
    pub(crate) fn set_journal_failure(&self, fail_after: Option<usize>) {
        *self
            .state
            .journal_fail_after
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = fail_after;
    }

    /// Test seam: make the writer fail at file `k` (0-based) of every
    /// following commit; `None` turns it off.
    pub(crate) fn set_write_failure(&self, fail_at: Option<usize>) {
        self.state
            .write
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .fail_at = fail_at;
    }

    /// Apply (or preview) a `WorkspaceEdit` that `origin` (the server that
    /// computed it) sent: the one path every edit takes. Validates it
    /// completely before writing, journals the before-images, commits
    /// transactionally, re-syncs the servers and appends the diagnostics
    /// delta.
    pub(crate) async fn apply_workspace_edit(
        &self,
        origin: Option<&Session>,
        edit: &Value,
        opts: EditOptions,
    ) -> Result<EditReport, OpError> {
        let root = self.ws.root().to_path_buf();
        let server = origin.map_or("the server", |s| s.name()).to_string();
        let st = self.state.clone();
        let _guard = if opts.apply {
            Some(st.lock.lock().await)
        } else {
            None
        };
        let _writer = if opts.apply {
            self.writer(opts.deadline).await?
        } else {
            None
        };
        let journal = st.journal(&root);
        if opts.apply
            && let (Some(key), Some(j)) = (&opts.key, &journal)
            && let Some(m) = j.find_key(key)
        {
            return replay(&m);
        }
        // What the server saw of the files it edits.
        let mut views = HashMap::new();
        if let Some(s) = origin {
            for p in named_paths(&root, edit)? {
                if let Some((text, version)) = s.document_state(&p).await {
                    views.insert(p, ServerView { text, version });
                }
            }
        }
        let encoding = origin.map_or(scry_lsp::Encoding::Utf16, Session::encoding);
        let plan = build_plan(&root, edit, encoding, &views, &server)?;
        let mut report = report_of(&plan, &opts, &root);
        if !opts.apply || plan.is_empty() {
            return Ok(report);
        }
        let changed: Vec<PathBuf> = plan.changes.iter().map(|c| c.path.clone()).collect();
        let baseline = self.diagnostics_baseline_for_edit(&changed).await;
        // Write-ahead: the before-images are durable before the first
        // file is replaced, or the edit does not happen.
        super::crash::point("before-journal");
        let entry = match &journal {
            Some(j) => match j.begin(&plan, &journal_title(&opts), opts.key.as_deref(), None) {
                Ok(m) => Some(m),
                Err(e) => {
                    return Err(OpError::WriteFailed(msg!(
                        foreign(e),
                        "; the edit was refused and nothing was changed (undo needs the \
                         journal: free space there, or set SCRY_JOURNAL_DIR to a writable directory)"
                    )));
                }
            },
            None => None,
        };
        super::crash::point("after-journal");
        let temps = entry.as_ref().map(Journal::temps);
        if let Err(e) = commit_staged(&plan, &st.write_options(), temps.as_deref()) {
            if let (Some(j), Some(m)) = (&journal, &entry) {
                j.discard(m);
            }
            return Err(e);
        }
        super::crash::point("before-close");
        report.journal_id = entry.as_ref().map(|m| m.id.clone());
        if let (Some(j), Some(mut m)) = (&journal, entry) {
            m.state = EntryState::Applied;
            m.report = serde_json::to_value(&report).unwrap_or(Value::Null);
            if let Err(e) = j.save(&m) {
                tracing::warn!("{e}");
            }
            j.prune();
        }
        resync(&self.ws, &plan.changes).await;
        report.diagnostics = self.diagnostics_after_edit_hook(baseline, &changed).await;
        Ok(report)
    }

    /// Revert the last edit scry applied in this workspace, if every file
    /// is still exactly as scry left it.
    /// Journaled like an edit (an entry that `reverts` the undone one), so
    /// a crash mid-undo is rolled back too and the edit stays undoable.
    pub(crate) async fn undo_last_edit(
        &self,
        apply: bool,
        key: Option<&str>,
        deadline: Option<tokio::time::Instant>,
    ) -> Result<EditReport, OpError> {
        let root = self.ws.root().to_path_buf();
        let st = self.state.clone();
        let _guard = st.lock.lock().await;
        // Even a preview resolves a dead writer's entry first: else it
        // would show (and `undo` revert) the wrong edit.
        let _writer = self.writer(deadline).await?;
        let Some(journal) = st.journal(&root) else {
            return Err(OpError::EditRejected(
                "nothing to undo: the edit journal is disabled (no state directory)".into(),
            ));
        };
        if apply
            && let Some(k) = key
            && let Some(m) = journal.find_undo_key(k)
        {
            let mut r = undo_report(&m, &root, true);
            r.replayed = true;
            return Ok(r);
        }
        let Some(mut m) = journal.last_applied() else {
            return Err(OpError::EditRejected(msg!(
                format!(
                    "nothing to undo: scry has applied no edit in {} (journal ",
                    root.display()
                ),
                path(journal.dir()),
                ")"
            )));
        };
        let mut plan = EditPlan::default();
        for (i, f) in m.files.iter().enumerate() {
            if !stamp_matches(&f.path, &f.after) {
                return Err(OpError::FileChanged(msg!(
                    path(&f.path),
                    " changed since scry's edit `",
                    foreign(&m.title),
                    "`; undo refused, nothing was written"
                )));
            }
            let before = match &f.before {
                None => None,
                Some(_) => Some(journal.before_image(&m, i).ok_or_else(|| {
                    OpError::EditRejected(msg!(
                        "the journal lost the previous content of ",
                        path(&f.path),
                        "; undo refused"
                    ))
                })?),
            };
            // The current file (as scry left it), with its real permissions.
            let current = f.after.as_ref().map(|st| FileImage {
                bytes: std::fs::read(&f.path).unwrap_or_default(),
                mode: file_mode(&f.path).or(st.mode),
            });
            plan.changes.push(FileChange {
                path: f.path.clone(),
                before: current,
                after: before,
            });
        }
        plan.dirs_created = m.dirs_removed.iter().rev().cloned().collect();
        plan.dirs_removed = m.dirs_created.iter().rev().cloned().collect();
        if !apply {
            let mut r = undo_report(&m, &root, false);
            r.previews = plan_diffs(&plan, &root)
                .into_iter()
                .map(|d| FilePreview {
                    path: d.path,
                    diff: d.diff,
                })
                .collect();
            return Ok(r);
        }
        let title = format!("undo of {}", m.title);
        let own = journal
            .begin(&plan, &title, None, Some(&m.id))
            .map_err(|e| {
                OpError::WriteFailed(msg!(
                    foreign(e),
                    "; undo refused, nothing was changed (free space there, or set \
                     SCRY_JOURNAL_DIR to a writable directory)"
                ))
            })?;
        super::crash::point("after-journal");
        let temps = Journal::temps(&own);
        if let Err(e) = commit_staged(&plan, &st.write_options(), Some(&temps)) {
            journal.discard(&own);
            return Err(e);
        }
        super::crash::point("before-close");
        m.state = EntryState::Undone;
        m.undo_key = key.map(str::to_string);
        if let Err(e) = journal.save(&m) {
            // Recovery finds the undo's own entry complete and marks it.
            tracing::warn!("{e}");
        } else {
            journal.discard(&own);
        }
        resync(&self.ws, &plan.changes).await;
        Ok(undo_report(&m, &root, true))
    }

    /// Start applying the `workspace/applyEdit`s that `session` sends (or
    /// capturing them, for a preview) while a command of ours runs.
    pub(crate) fn arm_server_edits(
        &self,
        session: &Session,
        preview: bool,
        key: Option<String>,
        title: &str,
    ) {
        self.state
            .armed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(
                (session.name().to_string(), session.root().to_path_buf()),
                Armed {
                    preview,
                    key,
                    title: title.to_string(),
                    results: Vec::new(),
                },
            );
    }

    /// Stop accepting `session`'s edits; what they gave.
    pub(crate) fn disarm_server_edits(&self, session: &Session) -> Vec<Result<EditReport, String>> {
        self.state
            .armed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&(session.name().to_string(), session.root().to_path_buf()))
            .map(|a| a.results)
            .unwrap_or_default()
    }

    /// The stored answer of an earlier edit under `key`, if any (a retried
    /// call replays it instead of applying again).
    pub(crate) fn replayed_edit(&self, key: &str) -> Option<EditReport> {
        let j = self.state.journal(self.ws.root())?;
        j.find_key(key).and_then(|m| replay(&m).ok())
    }

    async fn diagnostics_baseline_for_edit(
        &self,
        changed: &[PathBuf],
    ) -> crate::diagnostics::delta::DiagnosticsBaseline {
        crate::diagnostics::delta::baseline(&self.ws, changed, None).await
    }

    /// The single integration point with the diagnostics delta (issue 4):
    /// what the edit introduced and resolved in the changed files, within
    /// its short budget. Never fails the edit.
    async fn diagnostics_after_edit_hook(
        &self,
        baseline: crate::diagnostics::delta::DiagnosticsBaseline,
        changed: &[PathBuf],
    ) -> Option<scry_model::DiagnosticsDelta> {
        let existing: Vec<PathBuf> = changed.iter().filter(|p| p.exists()).cloned().collect();
        if existing.is_empty() {
            return None;
        }
        Some(crate::diagnostics::delta::after_edit(&self.ws, &baseline, &existing, None).await)
    }
}

fn file_mode(p: &Path) -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        p.symlink_metadata()
            .ok()
            .map(|m| m.permissions().mode() & 0o7777)
    }
    #[cfg(not(unix))]
    {
        let _ = p;
        None
    }
}

fn journal_title(opts: &EditOptions) -> String {
    match (&opts.kind, &opts.new_name) {
        (EditKind::Rename, Some(n)) => format!("rename `{}` → `{n}`", opts.title),
        (EditKind::CodeAction, _) => format!("code action `{}`", opts.title),
        _ => opts.title.clone(),
    }
}

fn replay(m: &Manifest) -> Result<EditReport, OpError> {
    let mut r: EditReport = serde_json::from_value(m.report.clone()).map_err(|e| {
        OpError::EditRejected(msg!(
            "an edit was already applied under this idempotency key, but its answer cannot be read back: ",
            foreign(e)
        ))
    })?;
    r.replayed = true;
    Ok(r)
}

/// A report of an edit that changes nothing (yet).
pub(crate) fn empty_report(kind: EditKind, title: &str, applied: bool) -> EditReport {
    EditReport {
        kind,
        title: title.to_string(),
        new_name: None,
        applied,
        edits: Vec::new(),
        files_changed: 0,
        created: Vec::new(),
        renamed: Vec::new(),
        deleted: Vec::new(),
        overwritten: Vec::new(),
        previews: Vec::new(),
        diagnostics: None,
        journal_id: None,
        replayed: false,
    }
}

fn undo_report(m: &Manifest, root: &Path, applied: bool) -> EditReport {
    let _ = root;
    let mut r = empty_report(EditKind::Undo, &m.title, applied);
    r.files_changed = m.files.len();
    r.journal_id = Some(m.id.clone());
    for f in &m.files {
        match (&f.before, &f.after) {
            // Undo recreates what the edit deleted and deletes what it created.
            (Some(_), None) => r.created.push(f.path.clone()),
            (None, Some(_)) => r.deleted.push(f.path.clone()),
            _ => {}
        }
    }
    r
}

/// Tell every running server about the changed files: watched-file events
/// for all (merged with what the workspace's watcher saw, so nothing is
/// announced twice), a `didChange`/`didClose` for those it has open.
pub(crate) async fn resync(ws: &Workspace, changes: &[FileChange]) {
    let own: Vec<(PathBuf, u8)> = changes
        .iter()
        .map(|c| {
            let kind = match (&c.before, &c.after) {
                (None, _) => 1,
                (_, None) => 3,
                _ => 2,
            };
            (c.path.clone(), kind)
        })
        .collect();
    ws.announce_changes(&own).await;
    for s in ws.running() {
        for c in changes.iter().filter(|c| c.path.starts_with(s.root())) {
            if s.document(&c.path).await.is_some()
                && let Err(e) = s.sync_file(&c.path, "").await
            {
                tracing::debug!(server = s.name(), "re-sync of {}: {e}", c.path.display());
            }
        }
    }
}
