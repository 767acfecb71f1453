//! The writer of one workspace ([`Writer`]): the one sequence every write
//! takes, whoever asked for it (a rename, a code action, a server's own
//! `workspace/applyEdit`, an undo). It holds what outlives one edit: where
//! the journal lives, the test seams (compiled with the `test-hooks`
//! feature only: the dev-dependencies of the crates whose tests inject
//! failures enable it, a release never has them), what recovery did (said
//! once).
//!
//! Every write (an edit, an undo, a recovery) runs holding the writer's
//! in-process lock and then the workspace's cross-process writer lock
//! ([`crate::lock`], waited for until the call's deadline, else `BUSY`):
//! [`Writer::hold`] takes both and first resolves a dead writer's
//! `pending` journal entry ([`Journal::recover`]); so does starting the
//! writer ([`Writer::recover_at_start`], when no other writer holds the
//! lock). While [`Held`]: [`Held::commit`] journals the before-images
//! (write-ahead: durable before the first file is replaced, or the edit is
//! refused), commits, marks the entry applied; [`Held::undo`] reverts the
//! last applied entry only if every file is as scry left it, journaled the
//! same way. What recovery did is a note on the next answer
//! ([`Writer::take_notices`]).
//!
//! Invariants: nothing here talks to a server or knows the workspace's
//! configuration (the engine re-syncs the servers and measures the
//! diagnostics delta around these calls); the crash test hook's points
//! ([`crate::crash`]) are passed in the order its header lists.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use scry_text::Encoding;

use scry_model::edit_fact::Unrecovered;
use scry_model::error::OpError;
use scry_model::{EditFact, EditReport, Recovered};
use serde_json::Value;

use crate::apply::{WriteOptions, commit_staged};
use crate::journal::{self, EntryState, Journal, stamp_matches};
use crate::lock::{self, WriterLock};
use crate::plan::{EditPlan, FileChange, FileImage, Protected, ServerView, build_plan};
use crate::report::{EditOptions, journal_title, previews, replay, report_of, undo_report};

/// How long a write without a deadline waits for another writer.
pub const DEFAULT_WRITER_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// The edit state of one workspace (its canonical root). One per engine;
/// share it (`Arc`) between the callers of that engine.
#[derive(Debug)]
pub struct Writer {
    root: PathBuf,
    /// One edit at a time per writer.
    lock: tokio::sync::Mutex<()>,
    journal_base: Mutex<Option<PathBuf>>,
    /// Test seam: the journal fails after this many before-images.
    #[cfg(any(test, feature = "test-hooks"))]
    journal_fail_after: Mutex<Option<usize>>,
    write: Mutex<WriteOptions>,
    /// What recovery did, for the next answer (said once).
    notices: Mutex<Vec<Recovered>>,
}

/// A write in progress: the in-process lock, the workspace's writer lock
/// (none when there is no per-user state directory at all) and the journal
/// (none when disabled). Dropping it releases both locks.
pub struct Held<'a> {
    writer: &'a Writer,
    _guard: tokio::sync::MutexGuard<'a, ()>,
    _lock: Option<WriterLock>,
    journal: Option<Journal>,
}

impl Writer {
    /// The writer of the workspace at `root`, its journal at the default
    /// place ([`journal::default_base`]).
    pub fn new(root: PathBuf) -> Writer {
        Writer {
            root,
            lock: tokio::sync::Mutex::new(()),
            journal_base: Mutex::new(journal::default_base()),
            #[cfg(any(test, feature = "test-hooks"))]
            journal_fail_after: Mutex::new(None),
            write: Mutex::new(WriteOptions::default()),
            notices: Mutex::new(Vec::new()),
        }
    }

    fn journal(&self) -> Option<Journal> {
        let base = self
            .journal_base
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()?;
        let journal = Journal::open(&base, &self.root);
        #[cfg(any(test, feature = "test-hooks"))]
        let journal = journal.with_failure(
            *self
                .journal_fail_after
                .lock()
                .unwrap_or_else(|e| e.into_inner()),
        );
        Some(journal)
    }

    /// The workspace's writer lock file: beside its journal, else beside
    /// where the journal would be by default (`None` when there is no
    /// per-user state directory at all: in-process serialization only).
    fn lock_path(&self) -> Option<PathBuf> {
        let base = self
            .journal_base
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .or_else(journal::default_base)?;
        Some(lock::lock_path(&base, &self.root))
    }

    fn notify(&self, notes: impl IntoIterator<Item = Recovered>) {
        self.notices
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(notes);
    }

    fn write_options(&self) -> WriteOptions {
        self.write.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Start a write: take the in-process lock, then the workspace's writer
    /// lock (waiting for another process's write until `deadline`, else
    /// `BUSY`; `None`: [`DEFAULT_WRITER_WAIT`]), then resolve what a dead
    /// writer left pending.
    pub async fn hold(&self, deadline: Option<tokio::time::Instant>) -> Result<Held<'_>, OpError> {
        let guard = self.lock.lock().await;
        let held = match self.lock_path() {
            Some(p) => {
                let deadline =
                    deadline.unwrap_or_else(|| tokio::time::Instant::now() + DEFAULT_WRITER_WAIT);
                Some(lock::acquire(&p, &self.root, deadline).await?)
            }
            None => None,
        };
        let journal = self.journal();
        if let Some(j) = &journal {
            self.recover_locked(j)?;
        }
        Ok(Held {
            writer: self,
            _guard: guard,
            _lock: held,
            journal,
        })
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
        self.notify(done.iter().cloned());
        if !j.pending().is_empty() {
            let failed = done
                .iter()
                .flat_map(|r| {
                    r.failed.iter().map(|(p, e)| Unrecovered {
                        title: r.title.clone(),
                        id: r.id.clone(),
                        path: p.clone(),
                        why: e.to_string(),
                    })
                })
                .collect();
            return Err(OpError::WriteFailed(
                EditFact::RecoveryFailed {
                    failed,
                    journal: j.dir().to_path_buf(),
                }
                .message(),
            ));
        }
        Ok(())
    }

    /// Resolve a dead writer's pending entry when the writer starts (the
    /// daemon or an in-process engine opening the workspace), if no other
    /// process holds the writer lock now (then the entry may be a live
    /// writer's; the next write resolves it under the lock).
    pub fn recover_at_start(&self) {
        let (Some(p), Some(j)) = (self.lock_path(), self.journal()) else {
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
    pub fn take_notices(&self) -> Vec<Recovered> {
        std::mem::take(&mut *self.notices.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Where the edit journal lives (default: `$SCRY_JOURNAL_DIR`, else
    /// `$XDG_STATE_HOME/scry/journal`, else `~/.local/state/scry/journal`);
    /// `None` disables it (no undo, no idempotent replay).
    pub fn set_journal_dir(&self, dir: Option<PathBuf>) {
        *self.journal_base.lock().unwrap_or_else(|e| e.into_inner()) = dir;
        // A journal elsewhere may hold a dead writer's entry.
        self.recover_at_start();
    }

    /// Test seam: make the journal fail after writing `n` before-images
    /// of every following edit; `None` turns it off.
    #[cfg(any(test, feature = "test-hooks"))]
    pub fn set_journal_failure(&self, fail_after: Option<usize>) {
        *self
            .journal_fail_after
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = fail_after;
    }

    /// Test seam: make the writer fail at file `k` (0-based) of every
    /// following commit; `None` turns it off.
    #[cfg(any(test, feature = "test-hooks"))]
    pub fn set_write_failure(&self, fail_at: Option<usize>) {
        self.write.lock().unwrap_or_else(|e| e.into_inner()).fail_at = fail_at;
    }

    /// The stored answer of an earlier edit under `key`, if any (a retried
    /// call replays it instead of applying again).
    pub fn replayed(&self, key: &str) -> Option<EditReport> {
        let j = self.journal()?;
        j.find_key(key).and_then(|m| replay(&m).ok())
    }
}

/// What a `WorkspaceEdit` is planned against: the encoding of its
/// positions, what the server that computed it saw of its files, the
/// server's name (for refusals) and the files no edit may write.
pub struct Against<'a> {
    pub encoding: Encoding,
    pub views: &'a HashMap<PathBuf, ServerView>,
    pub server: &'a str,
    pub protected: &'a Protected<'a>,
}

/// A `WorkspaceEdit` prepared ([`Writer::prepare`]): answered already (a
/// preview, an edit that changes nothing, a replay under its key), or
/// ready to write.
pub enum Prepared<'a> {
    Answered(Box<EditReport>),
    Ready(Box<Ready<'a>>),
}

/// An edit validated and planned under the writer's locks, not written
/// yet: what the caller does before the write (a diagnostics baseline of
/// the files it changes) goes between [`Writer::prepare`] and
/// [`Ready::commit`].
pub struct Ready<'a> {
    held: Held<'a>,
    pub plan: EditPlan,
    report: EditReport,
    opts: EditOptions,
}

impl Ready<'_> {
    /// Write it ([`Held::commit`]): the report (with its journal entry's
    /// id) and the plan written.
    pub fn commit(self) -> Result<(EditReport, EditPlan), OpError> {
        let mut report = self.report;
        self.held.commit(&self.plan, &self.opts, &mut report)?;
        Ok((report, self.plan))
    }
}

impl Writer {
    /// The one path of every `WorkspaceEdit` up to its write: under the
    /// writer's locks when it applies (waiting until `opts.deadline`), a
    /// replay of the edit already applied under `opts.key`, else the
    /// validated plan of `edit` against `against`, and its report.
    pub async fn prepare(
        &self,
        edit: &Value,
        against: &Against<'_>,
        opts: EditOptions,
    ) -> Result<Prepared<'_>, OpError> {
        let held = if opts.apply {
            Some(self.hold(opts.deadline).await?)
        } else {
            None
        };
        if let (Some(h), Some(key)) = (&held, &opts.key)
            && let Some(replayed) = h.replay(key)
        {
            return replayed.map(|r| Prepared::Answered(Box::new(r)));
        }
        let plan = build_plan(
            &self.root,
            edit,
            against.encoding,
            against.views,
            against.server,
            against.protected,
        )?;
        let report = report_of(&plan, &opts, &self.root);
        Ok(match held.filter(|_| !plan.is_empty()) {
            None => Prepared::Answered(Box::new(report)),
            Some(held) => Prepared::Ready(Box::new(Ready {
                held,
                plan,
                report,
                opts,
            })),
        })
    }
}

impl Held<'_> {
    /// The stored answer of an edit already applied under `key`, if any.
    pub fn replay(&self, key: &str) -> Option<Result<EditReport, OpError>> {
        let m = self.journal.as_ref()?.find_key(key)?;
        Some(replay(&m))
    }

    /// Write `plan` (validated, not empty) as `opts` asks: journal its
    /// before-images first (or refuse the edit), commit it transactionally,
    /// then mark the entry applied with `report` (which gets the entry's
    /// id) as its stored answer.
    pub fn commit(
        &self,
        plan: &EditPlan,
        opts: &EditOptions,
        report: &mut EditReport,
    ) -> Result<(), OpError> {
        let journal = &self.journal;
        // Write-ahead: the before-images are durable before the first
        // file is replaced, or the edit does not happen.
        crate::crash::point("before-journal");
        let entry = match journal {
            Some(j) => match j.begin(plan, &journal_title(opts), opts.key.as_deref(), None) {
                Ok(m) => Some(m),
                Err(e) => {
                    return Err(OpError::WriteFailed(
                        EditFact::JournalUnwritable {
                            why: e.to_string(),
                            undo: false,
                        }
                        .message(),
                    ));
                }
            },
            None => None,
        };
        crate::crash::point("after-journal");
        let temps = entry.as_ref().map(Journal::temps);
        if let Err(e) = commit_staged(plan, &self.writer.write_options(), temps.as_deref()) {
            if let (Some(j), Some(m)) = (journal, &entry) {
                j.discard(m);
            }
            return Err(e);
        }
        crate::crash::point("before-close");
        report.journal_id = entry.as_ref().map(|m| m.id.clone());
        if let (Some(j), Some(mut m)) = (journal, entry) {
            m.state = EntryState::Applied;
            m.report = serde_json::to_value(&*report).unwrap_or(Value::Null);
            if let Err(e) = j.save(&m) {
                tracing::warn!("{e}");
            }
            j.prune();
        }
        Ok(())
    }

    /// Revert the last edit scry applied in this workspace, if every file
    /// is still exactly as scry left it (`apply` false: its preview).
    /// Journaled like an edit (an entry that `reverts` the undone one), so
    /// a crash mid-undo is rolled back too and the edit stays undoable.
    /// The report, and the files written (`None` when nothing was: a
    /// preview, a replay under `key`).
    pub fn undo(
        &self,
        apply: bool,
        key: Option<&str>,
    ) -> Result<(EditReport, Option<Vec<FileChange>>), OpError> {
        let root = &self.writer.root;
        let Some(journal) = &self.journal else {
            return Err(OpError::EditRejected(
                EditFact::NothingToUndo {
                    root: root.clone(),
                    journal: None,
                }
                .message(),
            ));
        };
        if apply
            && let Some(k) = key
            && let Some(m) = journal.find_undo_key(k)
        {
            let mut r = undo_report(&m, true);
            r.replayed = true;
            return Ok((r, None));
        }
        let Some(mut m) = journal.last_applied() else {
            return Err(OpError::EditRejected(
                EditFact::NothingToUndo {
                    root: root.clone(),
                    journal: Some(journal.dir().to_path_buf()),
                }
                .message(),
            ));
        };
        let mut plan = EditPlan::default();
        for (i, f) in m.files.iter().enumerate() {
            if !stamp_matches(&f.path, &f.after) {
                return Err(OpError::FileChanged(
                    EditFact::ChangedSinceEdit {
                        path: f.path.clone(),
                        title: m.title.clone(),
                    }
                    .message(),
                ));
            }
            let before = match &f.before {
                None => None,
                Some(_) => Some(journal.before_image(&m, i).ok_or_else(|| {
                    OpError::EditRejected(
                        EditFact::JournalLost {
                            path: f.path.clone(),
                        }
                        .message(),
                    )
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
            let mut r = undo_report(&m, false);
            r.previews = previews(&plan, root);
            return Ok((r, None));
        }
        let title = format!("undo of {}", m.title);
        let own = journal
            .begin(&plan, &title, None, Some(&m.id))
            .map_err(|e| {
                OpError::WriteFailed(
                    EditFact::JournalUnwritable {
                        why: e.to_string(),
                        undo: true,
                    }
                    .message(),
                )
            })?;
        crate::crash::point("after-journal");
        let temps = Journal::temps(&own);
        if let Err(e) = commit_staged(&plan, &self.writer.write_options(), Some(&temps)) {
            journal.discard(&own);
            return Err(e);
        }
        crate::crash::point("before-close");
        m.state = EntryState::Undone;
        m.undo_key = key.map(str::to_string);
        if let Err(e) = journal.save(&m) {
            // Recovery finds the undo's own entry complete and marks it.
            tracing::warn!("{e}");
        } else {
            journal.discard(&own);
        }
        Ok((undo_report(&m, true), Some(plan.changes)))
    }
}

fn file_mode(p: &Path) -> Option<u32> {
    p.symlink_metadata()
        .ok()
        .map(|m| crate::platform::attrs::of(&m))
}
