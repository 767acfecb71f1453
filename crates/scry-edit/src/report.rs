//! What an edit is asked to be ([`EditOptions`]) and what its answer says
//! (scry-model's `EditReport`): made from a validated plan ([`report_of`],
//! with previews for a dry run), merged for a code action whose command made
//! the server send more edits ([`merge_reports`]), replayed from the journal
//! for a retried key ([`replay`]), or said of an undo ([`undo_report`]).
//!
//! Invariants: plain data in, plain data out (no disk, no server); the
//! count of files changed is always the distinct files the report names
//! ([`files_touched`]), after a merge too.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use scry_model::EditFact;
use scry_model::error::OpError;
use scry_model::{EditKind, EditReport, EditedLine, FileMove, FilePreview};

use crate::diff::plan_diffs;
use crate::journal::Manifest;
use crate::plan::EditPlan;

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
    /// (then `BUSY`); `None`: the writer's `DEFAULT_WRITER_WAIT`.
    pub deadline: Option<tokio::time::Instant>,
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

/// The report of `plan` carried out as `opts` says (previews when it is
/// not applied).
pub fn report_of(plan: &EditPlan, opts: &EditOptions, root: &Path) -> EditReport {
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
        r.previews = previews(plan, root);
    }
    // A file whose text edits leave it as it was (a rename to the same name
    // spelled otherwise, `r#name`) is in no change of the plan: not counted.
    let unchanged = |p: &Path| !plan.changes.iter().any(|c| c.path == p);
    let mut counted = r.clone();
    counted.edits.retain(|e| !unchanged(&e.path));
    r.files_changed = files_touched(&counted);
    r
}

/// The previews of `plan`, one per changed file.
pub(crate) fn previews(plan: &EditPlan, root: &Path) -> Vec<FilePreview> {
    plan_diffs(plan, root)
        .into_iter()
        .map(|d| FilePreview {
            path: d.path,
            diff: d.diff,
        })
        .collect()
}

/// Merge the reports of one code action (its edit, then the edits its
/// command made the server send).
pub fn merge_reports(
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

/// The title of an edit's journal entry.
pub(crate) fn journal_title(opts: &EditOptions) -> String {
    match (&opts.kind, &opts.new_name) {
        (EditKind::Rename, Some(n)) => format!("rename `{}` → `{n}`", opts.title),
        (EditKind::CodeAction, _) => format!("code action `{}`", opts.title),
        _ => opts.title.clone(),
    }
}

/// The stored answer of the edit of entry `m`, marked replayed.
pub fn replay(m: &Manifest) -> Result<EditReport, OpError> {
    let mut r: EditReport = serde_json::from_value(m.report.clone()).map_err(|e| {
        OpError::EditRejected(EditFact::ReplayUnreadable { why: e.to_string() }.message())
    })?;
    r.replayed = true;
    Ok(r)
}

/// A report of an edit that changes nothing (yet).
pub fn empty_report(kind: EditKind, title: &str, applied: bool) -> EditReport {
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

/// The report of the undo of entry `m`.
pub(crate) fn undo_report(m: &Manifest, applied: bool) -> EditReport {
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
