//! The engine's edit service ([`Editor`]): the part of every edit that
//! needs the language servers — what the server that computed a
//! `WorkspaceEdit` saw of its files, the servers' own `workspace/applyEdit`
//! requests (the [`ApplyEditHook`], accepted only while a command of ours
//! runs), re-syncing the servers after a write and the diagnostics delta —
//! around the leaf that writes (scry-edit: plan, journal + commit, undo,
//! under its [`Writer`]). One path for every `WorkspaceEdit` (rename, code
//! action, a server's `workspace/applyEdit`, undo): plan, preview or
//! journal + commit, re-sync, diagnostics delta. It holds the edit state of
//! a session (the writer, the server edits of a running command) and
//! depends on the workspace and the diagnostics delta only, never on the
//! engine.
//!
//! The configuration files no edit may write are the configuration's facts
//! (scry-workspace), handed to the leaf here ([`PROTECTED`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

use scry_edit::plan::{FileChange, Protected, ServerView, named_paths};
use scry_edit::report::EditOptions;
use scry_edit::writer::{Against, Prepared, Writer};
use scry_lsp_session::{ApplyEditHook, DeferredReply, Session};
use scry_workspace::Workspace;
use scry_workspace::config::PROJECT_CONFIG_FILES;
use scry_workspace::seed_config::SEED_CONFIG_FILES;
use serde_json::{Value, json};

use scry_model::error::OpError;
use scry_model::{EditKind, EditReport};

/// What no edit may write besides `.git` and the user configuration file:
/// scry's project configuration files (at any depth) and the other agents'
/// files scry reads as project layers (at the root).
pub(crate) const PROTECTED: Protected<'static> = Protected {
    anywhere: &PROJECT_CONFIG_FILES,
    at_root: &SEED_CONFIG_FILES,
};

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
#[derive(Debug)]
struct EditState {
    /// The leaf that writes: journal, locks, recovery, test seams.
    writer: Writer,
    armed: Mutex<HashMap<(String, PathBuf), Armed>>,
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

impl Editor {
    pub(crate) fn new(ws: Arc<Workspace>) -> Editor {
        let writer = Writer::new(ws.root().to_path_buf());
        Editor {
            ws,
            state: Arc::new(EditState {
                writer,
                armed: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// Resolve a dead writer's pending entry when the edit service starts
    /// ([`Writer::recover_at_start`]).
    pub(crate) fn recover_at_start(&self) {
        self.state.writer.recover_at_start();
    }

    /// What recovery did since the last call, once.
    pub(crate) fn take_notices(&self) -> Vec<scry_model::Recovered> {
        self.state.writer.take_notices()
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

    /// Where the edit journal lives ([`Writer::set_journal_dir`]).
    pub(crate) fn set_journal_dir(&self, dir: Option<PathBuf>) {
        self.state.writer.set_journal_dir(dir);
    }

    /// Test seam: [`Writer::set_journal_failure`].
    #[cfg(test)]
    pub(crate) fn set_journal_failure(&self, fail_after: Option<usize>) {
        self.state.writer.set_journal_failure(fail_after);
    }

    /// Test seam: [`Writer::set_write_failure`].
    #[cfg(test)]
    pub(crate) fn set_write_failure(&self, fail_at: Option<usize>) {
        self.state.writer.set_write_failure(fail_at);
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
        // What the server saw of the files it edits.
        let mut views = HashMap::new();
        if let Some(s) = origin {
            for p in named_paths(&root, edit, &PROTECTED)? {
                if let Some((text, version)) = s.document_state(&p).await {
                    views.insert(p, ServerView { text, version });
                }
            }
        }
        let against = Against {
            encoding: origin.map_or(scry_lsp_session::Encoding::Utf16, Session::encoding),
            views: &views,
            server: &server,
            protected: &PROTECTED,
        };
        let st = self.state.clone();
        let ready = match st.writer.prepare(edit, &against, opts).await? {
            Prepared::Answered(report) => return Ok(*report),
            Prepared::Ready(ready) => ready,
        };
        let changed: Vec<PathBuf> = ready.plan.changes.iter().map(|c| c.path.clone()).collect();
        let baseline = self.diagnostics_baseline_for_edit(&changed).await;
        let (mut report, plan) = ready.commit()?;
        resync(&self.ws, &plan.changes).await;
        report.diagnostics = self.diagnostics_after_edit_hook(baseline, &changed).await;
        Ok(report)
    }

    /// Revert the last edit scry applied in this workspace, if every file
    /// is still exactly as scry left it ([`scry_edit::writer::Held::undo`]),
    /// then re-sync the servers.
    pub(crate) async fn undo_last_edit(
        &self,
        apply: bool,
        key: Option<&str>,
        deadline: Option<tokio::time::Instant>,
    ) -> Result<EditReport, OpError> {
        let st = self.state.clone();
        // Even a preview resolves a dead writer's entry first: else it
        // would show (and `undo` revert) the wrong edit.
        let held = st.writer.hold(deadline).await?;
        let (report, written) = held.undo(apply, key)?;
        if let Some(changes) = written {
            resync(&self.ws, &changes).await;
        }
        Ok(report)
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
        self.state.writer.replayed(key)
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
        for c in changes.iter().filter(|c| s.covers(&c.path)) {
            if s.document(&c.path).await.is_some()
                && let Err(e) = s.sync_file(&c.path, "").await
            {
                tracing::debug!(server = s.name(), "re-sync of {}: {e}", c.path.display());
            }
        }
    }
}
