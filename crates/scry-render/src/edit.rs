//! Edits (rename, code action, undo) and code-action lists, as text and
//! JSON.
//!
//! Text of an applied edit:
//!
//! ```text
//! Renamed `total_weight` → `weight_sum`: 5 edits in 3 files; renamed src/report.rs → src/summary.rs — rust-analyzer
//! src/inventory.rs:17:8  pub fn weight_sum(inv: &Inventory) -> u32 {
//! src/main.rs:7:17  use inventory::{weight_sum, Inventory};
//! Renamed file: src/report.rs → src/summary.rs
//! Diagnostics after the edit: …
//! ```
//!
//! A preview says that nothing was written and shows the unified diff of
//! every file instead of the edit lines.
//!
//! The first line names every resource operation (created, overwritten,
//! renamed, deleted files; at most [`NAMES_IN_HEADER`] names each, then a
//! count): an edit that only creates, replaces or removes files never reads
//! as "no file changes", and one whose text edits leave every file as it
//! was leads with "changes nothing".

use std::collections::BTreeSet;
use std::path::Path;

use scry_model::{CodeActionList, EditKind, EditReport, EditedLine};
use serde_json::{Map, Value, json};

use crate::common::{clip_line, plural};
use crate::display_path;
use crate::words::Dialect;

/// Most file names of one kind of resource operation in the first line.
pub(crate) const NAMES_IN_HEADER: usize = 3;

/// `a.rs, b.rs and 2 more`.
fn names(mut items: Vec<String>) -> String {
    let more = items.len().saturating_sub(NAMES_IN_HEADER);
    items.truncate(NAMES_IN_HEADER);
    let mut s = items.join(", ");
    if more > 0 {
        s.push_str(&format!(" and {more} more"));
    }
    s
}

/// The resource operations for the first line: `created a.rs; overwrote
/// b.rs; renamed c.rs → d.rs; deleted e.rs` (empty when there are none).
fn resource_summary(r: &EditReport, root: &Path) -> Vec<String> {
    let (created, deleted) = if r.kind == EditKind::Undo {
        ("restored", "removed")
    } else {
        ("created", "deleted")
    };
    let shown = |ps: &[std::path::PathBuf]| ps.iter().map(|p| display_path(p, root)).collect();
    let mut out = Vec::new();
    if !r.created.is_empty() {
        out.push(format!("{created} {}", names(shown(&r.created))));
    }
    if !r.overwritten.is_empty() {
        out.push(format!("overwrote {}", names(shown(&r.overwritten))));
    }
    if !r.renamed.is_empty() {
        let moves = r
            .renamed
            .iter()
            .map(|m| {
                format!(
                    "{} → {}",
                    display_path(&m.from, root),
                    display_path(&m.to, root)
                )
            })
            .collect();
        out.push(format!("renamed {}", names(moves)));
    }
    if !r.deleted.is_empty() {
        out.push(format!("{deleted} {}", names(shown(&r.deleted))));
    }
    out
}

/// `4 edits in 3 files; created a.rs; renamed b.rs → c.rs` (the edit count
/// left out when there are no text edits but resource operations).
fn edit_count(r: &EditReport, root: &Path) -> String {
    let files: BTreeSet<&Path> = r.edits.iter().map(|e| e.path.as_path()).collect();
    let mut parts = Vec::new();
    let resources = resource_summary(r, root);
    if !r.edits.is_empty() || resources.is_empty() {
        parts.push(format!(
            "{} in {}",
            plural(r.edits.len(), "edit", "edits"),
            plural(files.len(), "file", "files")
        ));
    }
    parts.extend(resources);
    parts.join("; ")
}

/// What the edit was, for the header.
fn what(r: &EditReport) -> String {
    match r.kind {
        EditKind::Rename => format!("`{}` → `{}`", r.title, r.new_name.as_deref().unwrap_or("?")),
        EditKind::CodeAction => format!("code action `{}`", r.title),
        EditKind::ServerEdit => format!("the server's edit `{}`", r.title),
        // The journal title already reads "rename `a` → `b`".
        EditKind::Undo => r.title.clone(),
    }
}

/// The first line.
pub(crate) fn header(r: &EditReport, root: &Path, server: &str) -> String {
    let edit_count = |r: &EditReport| edit_count(r, root);
    let resources = !(r.created.is_empty()
        && r.overwritten.is_empty()
        && r.renamed.is_empty()
        && r.deleted.is_empty());
    let unchanged = r.files_changed == 0 && !resources && r.kind != EditKind::Undo;
    // A server's edits that write what is there (a rename to the same name
    // spelled otherwise, `r#name`): nothing changes, and the header leads
    // with that, not with a count of edits as if something did.
    if unchanged && !r.edits.is_empty() {
        let doing = match r.kind {
            EditKind::Rename => format!("Renaming {}", what(r)),
            _ => format!("Applying {}", what(r)),
        };
        let mut s = format!(
            "{doing} changes nothing: the server's {} write what is already there",
            edit_count(r)
        );
        s.push_str(server);
        return s;
    }
    let mut s = match (r.kind, r.applied) {
        (EditKind::Undo, true) => format!(
            "Undid {}: restored {}",
            what(r),
            plural(r.files_changed, "file", "files")
        ),
        (EditKind::Undo, false) => format!(
            "Preview of undoing {} (nothing written): {}",
            what(r),
            plural(r.files_changed, "file", "files")
        ),
        (EditKind::Rename, true) => format!("Renamed {}: {}", what(r), edit_count(r)),
        (EditKind::Rename, false) => format!(
            "Preview of renaming {} (nothing written): {}",
            what(r),
            edit_count(r)
        ),
        (_, true) => format!("Applied {}: {}", what(r), edit_count(r)),
        (_, false) => format!(
            "Preview of {} (nothing written): {}",
            what(r),
            edit_count(r)
        ),
    };
    if unchanged {
        s.push_str(" — no file changes");
    }
    s.push_str(server);
    if r.replayed {
        s.push_str(" (replayed: an earlier call with the same request id already did this; nothing was applied again)");
    }
    s
}

fn edit_line(e: &EditedLine, root: &Path) -> String {
    let t = clip_line(&e.text);
    let at = format!("{}:{}:{}", display_path(&e.path, root), e.line, e.col);
    if t.is_empty() {
        at
    } else {
        format!("{at}  {t}")
    }
}

fn sorted(r: &EditReport, root: &Path) -> Vec<(String, u32, u32, usize)> {
    let mut v: Vec<(String, u32, u32, usize)> = r
        .edits
        .iter()
        .enumerate()
        .map(|(i, e)| (display_path(&e.path, root), e.line, e.col, i))
        .collect();
    v.sort();
    v
}

/// Resource operations as lines.
fn resource_lines(r: &EditReport, root: &Path) -> Vec<String> {
    let (created, deleted) = if r.kind == EditKind::Undo {
        ("Restored", "Removed")
    } else {
        ("Created", "Deleted")
    };
    let mut out = Vec::new();
    for p in &r.created {
        out.push(format!("{created} file: {}", display_path(p, root)));
    }
    for p in &r.overwritten {
        out.push(format!(
            "Overwrote file: {} (its old content replaced)",
            display_path(p, root)
        ));
    }
    for m in &r.renamed {
        out.push(format!(
            "Renamed file: {} → {}",
            display_path(&m.from, root),
            display_path(&m.to, root)
        ));
    }
    for p in &r.deleted {
        out.push(format!("{deleted} file: {}", display_path(p, root)));
    }
    out
}

/// Body lines (within `budget` characters and `max_items` edit lines) and
/// the marker of what was left out.
pub(crate) fn text_body(
    r: &EditReport,
    root: &Path,
    max_items: usize,
    budget: usize,
) -> (Vec<String>, Option<String>) {
    let mut lines = Vec::new();
    let mut used = 0usize;
    let marker = None;
    if r.applied || r.previews.is_empty() {
        let edits = sorted(r, root);
        let mut shown = 0;
        for (_, _, _, i) in &edits {
            let l = edit_line(&r.edits[*i], root);
            let cost = l.chars().count() + 1;
            if shown >= max_items || used + cost + 80 > budget {
                break;
            }
            used += cost;
            shown += 1;
            lines.push(l);
        }
        if shown < edits.len() {
            let rest: BTreeSet<&str> = edits[shown..].iter().map(|e| e.0.as_str()).collect();
            let n = edits.len() - shown;
            lines.push(format!(
                "… {n} more {} in {} (see them with the JSON output or a preview)",
                if n == 1 { "edit" } else { "edits" },
                plural(rest.len(), "file", "files")
            ));
        }
    }
    lines.extend(resource_lines(r, root));
    for p in &r.previews {
        lines.extend(p.diff.trim_end_matches('\n').lines().map(str::to_string));
    }
    if let Some(d) = &r.diagnostics {
        lines.extend(
            crate::diagnostics::delta_text(d, root)
                .lines()
                .map(str::to_string),
        );
    }
    if r.applied && r.kind != EditKind::Undo && r.journal_id.is_some() && !r.replayed {
        lines.push("Undo with `scry undo` (or the `undo` action).".to_string());
    }
    (lines, marker)
}

pub(crate) fn json_fields(
    r: &EditReport,
    root: &Path,
    n: usize,
    max_locations: usize,
) -> Vec<(&'static str, Value)> {
    let edits = sorted(r, root);
    let shown: Vec<Value> = edits
        .iter()
        .take(n)
        .map(|(p, line, col, i)| {
            json!({"path": p, "line": line, "col": col, "text": clip_line(&r.edits[*i].text)})
        })
        .collect();
    let mut fields: Vec<(&'static str, Value)> = vec![
        (
            "edit_kind",
            serde_json::to_value(r.kind).unwrap_or(Value::Null),
        ),
        ("title", r.title.clone().into()),
        ("new_name", r.new_name.clone().into()),
        ("applied", r.applied.into()),
        ("replayed", r.replayed.into()),
        ("total_edits", r.edits.len().into()),
        ("files_changed", r.files_changed.into()),
        ("edits", Value::Array(shown)),
        (
            "created",
            r.created.iter().map(|p| display_path(p, root)).collect(),
        ),
        (
            "renamed",
            r.renamed
                .iter()
                .map(|m| json!({"from": display_path(&m.from, root), "to": display_path(&m.to, root)}))
                .collect(),
        ),
        (
            "deleted",
            r.deleted.iter().map(|p| display_path(p, root)).collect(),
        ),

        (
            "previews",
            r.previews
                .iter()
                .map(|p| json!({"path": display_path(&p.path, root), "diff": p.diff}))
                .collect(),
        ),
        ("journal_id", r.journal_id.clone().into()),
        (
            "diagnostics",
            r.diagnostics
                .as_ref()
                .map_or(Value::Null, |d| crate::diagnostics::delta_json(d, root)),
        ),
    ];
    if !r.overwritten.is_empty() {
        fields.push((
            "overwritten",
            r.overwritten
                .iter()
                .map(|p| display_path(p, root))
                .collect(),
        ));
    }
    if n < edits.len() {
        let files: BTreeSet<&str> = edits[n..].iter().map(|e| e.0.as_str()).collect();
        fields.push((
            "omitted",
            json!({
                "count": edits.len() - n,
                "files": files.len(),
                "reason": if n >= max_locations { "max_locations" } else { "max_chars" },
            }),
        ));
    }
    fields
}

/// The list of code actions.
pub(crate) fn actions_text(
    l: &CodeActionList,
    root: &Path,
    server: &str,
    dialect: Dialect,
) -> (String, Vec<String>) {
    let at = if l.range.line == l.range.end_line {
        format!("{}:{}", display_path(&l.range.path, root), l.range.line)
    } else {
        format!(
            "{}:{}-{}",
            display_path(&l.range.path, root),
            l.range.line,
            l.range.end_line
        )
    };
    let diag = if l.diagnostics > 0 {
        format!(
            " (with {} there)",
            plural(l.diagnostics, "diagnostic", "diagnostics")
        )
    } else {
        String::new()
    };
    let header = format!(
        "{} for {at}{diag}{server}",
        plural(l.actions.len(), "code action", "code actions")
    );
    let mut body = Vec::new();
    for a in &l.actions {
        let mut tags = Vec::new();
        if let Some(k) = &a.kind {
            tags.push(k.clone());
        }
        if a.preferred {
            tags.push("preferred".into());
        }
        let tags = if tags.is_empty() {
            String::new()
        } else {
            format!(" [{}]", tags.join(", "))
        };
        let mut line = format!("  {}. {}{tags}", a.index, a.title);
        if let Some(d) = &a.disabled {
            line.push_str(&format!(" — disabled: {d}"));
        }
        body.push(line);
    }
    if !l.actions.is_empty() {
        body.push(apply_one(dialect).into());
    }
    (header, body)
}

/// How to apply a listed code action, in the front end's syntax: the CLI
/// applies with `--apply`, MCP with `lsp_edit` (the `lsp` tool previews).
fn apply_one(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Cli => {
            "Apply one by number or title (`--apply N`, `--apply TITLE`); preview it with `--dry-run`."
        }
        Dialect::Mcp => {
            "Apply one by number or title (`action_index`, `action_title` of lsp_edit); preview it with `apply=false`."
        }
    }
}

pub(crate) fn actions_json(l: &CodeActionList, root: &Path) -> Vec<(&'static str, Value)> {
    let mut range = Map::new();
    range.insert("path".into(), display_path(&l.range.path, root).into());
    range.insert("line".into(), l.range.line.into());
    range.insert("col".into(), l.range.col.into());
    range.insert("end_line".into(), l.range.end_line.into());
    range.insert("end_col".into(), l.range.end_col.into());
    vec![
        ("range", Value::Object(range)),
        ("diagnostics", l.diagnostics.into()),
        (
            "actions",
            serde_json::to_value(&l.actions).unwrap_or(Value::Null),
        ),
    ]
}
