//! Diagnostics answers and after-edit deltas, as text and JSON.
//!
//! Text: a summary line (`3 errors, 5 warnings in 2 files — checked by
//! pyright, ruff; eslint not installed`), then one entry per diagnostic:
//! `path:line:col  error[code] (source): message`, the source line beneath,
//! repeated messages as one entry with `(×N; also …)`, cascades as indented
//! `SECONDARY` lines; then what was left out, pending files and failed
//! providers. A clean answer says who checked what (`No problems in src/
//! (pyright, ruff)`), so "clean" and "nothing ran" never look alike.

use std::path::Path;

use scry_model::{
    ChangesSummary, Diagnostic, DiagnosticEntry, DiagnosticsDelta, DiagnosticsReport, Loc,
    ProviderOutcome, ProviderRun,
};
use serde_json::{Map, Value, json};

use crate::common::{clip, clip_line, plural};
use crate::display_path;

/// Secondary diagnostics shown under one root.
const MAX_SECONDARY: usize = 5;

fn ids(runs: &[&ProviderRun]) -> String {
    runs.iter()
        .map(|r| r.id.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn with_outcome<'a>(r: &'a DiagnosticsReport, o: &[ProviderOutcome]) -> Vec<&'a ProviderRun> {
    r.providers
        .iter()
        .filter(|p| o.contains(&p.outcome))
        .collect()
}

/// `pyright, ruff; eslint not installed; shellcheck failed` — who checked,
/// then who could not.
fn providers_phrase(r: &DiagnosticsReport, lead: &str) -> String {
    let checked = with_outcome(r, &[ProviderOutcome::Checked, ProviderOutcome::Partial]);
    let mut parts = Vec::new();
    if !checked.is_empty() {
        parts.push(format!("{lead}{}", ids(&checked)));
    }
    for (o, word) in [
        (ProviderOutcome::NotInstalled, "not installed"),
        (ProviderOutcome::TimedOut, "timed out"),
        (ProviderOutcome::Failed, "failed"),
    ] {
        let v = with_outcome(r, &[o]);
        if !v.is_empty() {
            parts.push(format!("{} {word}", ids(&v)));
        }
    }
    parts.join("; ")
}

/// The first line of a diagnostics answer.
pub(crate) fn summary(r: &DiagnosticsReport) -> String {
    let total = r.errors + r.warnings + r.infos + r.hints;
    let checked = with_outcome(r, &[ProviderOutcome::Checked, ProviderOutcome::Partial]);
    let scope = if r.scope.is_empty() {
        "the targets"
    } else {
        r.scope.as_str()
    };
    let hidden = if r.hidden > 0 {
        format!(" ({} hidden by --severity {})", r.hidden, r.filter.name())
    } else {
        String::new()
    };
    if total == 0 {
        if r.files_checked == 0 {
            return format!(
                "Nothing checked in {scope}: no language server or linter is configured for its files."
            );
        }
        if checked.is_empty() {
            let why = providers_phrase(r, "");
            return format!(
                "Nothing checked in {scope}: no provider answered{}.",
                if why.is_empty() {
                    String::new()
                } else {
                    format!(" ({why})")
                }
            );
        }
        let who = providers_phrase(r, "");
        if let Some(c) = &r.changes {
            if c.resolved == 0 && c.first_check.len() >= r.files_checked && c.unchanged == 0 {
                return format!(
                    "First check of {scope}: no problems (the baseline for the next check) — checked by {who}{hidden}."
                );
            }
            return format!(
                "No new problems in {scope} since the previous check{} — checked by {who}{hidden}.",
                changes_counts(c)
            );
        }
        if !r.pending.is_empty() {
            return format!(
                "No problems reported so far in {scope} ({who}), but results are still pending (below){hidden}."
            );
        }
        return format!("No problems in {scope} ({who}){hidden}.");
    }
    let mut counts = Vec::new();
    for (n, one, many) in [
        (r.errors, "error", "errors"),
        (r.warnings, "warning", "warnings"),
        (r.infos, "info", "infos"),
        (r.hints, "hint", "hints"),
    ] {
        if n > 0 {
            counts.push(plural(n, one, many));
        }
    }
    if let Some(c) = &r.changes {
        if c.resolved == 0 && c.first_check.len() >= r.files_checked {
            return format!(
                "{} in {}, all new: first check of {scope} (the next check lists only what changed){hidden} — {}",
                counts.join(", "),
                plural(r.files_with_problems, "file", "files"),
                providers_phrase(r, "checked by ")
            );
        }
        return format!(
            "{} new in {} since the previous check{}{hidden} — {}",
            counts.join(", "),
            plural(r.files_with_problems, "file", "files"),
            changes_counts(c),
            providers_phrase(r, "checked by ")
        );
    }
    format!(
        "{} in {}{hidden} — {}",
        counts.join(", "),
        plural(r.files_with_problems, "file", "files"),
        providers_phrase(r, "checked by ")
    )
}

/// ` (1 resolved, 3 unchanged not listed)` for a `changes` answer.
fn changes_counts(c: &ChangesSummary) -> String {
    let mut parts = Vec::new();
    if c.resolved > 0 {
        parts.push(format!("{} resolved", c.resolved));
    }
    if c.unchanged > 0 {
        parts.push(format!("{} unchanged not listed", c.unchanged));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    }
}

/// The tail line of a `changes` answer about files checked for the first time.
fn first_check_line(c: &ChangesSummary, root: &Path) -> Option<String> {
    if c.first_check.is_empty() {
        return None;
    }
    let shown: Vec<String> = c
        .first_check
        .iter()
        .take(5)
        .map(|p| display_path(p, root))
        .collect();
    let more = if c.first_check.len() > 5 {
        format!(" and {} more", c.first_check.len() - 5)
    } else {
        String::new()
    };
    Some(format!(
        "First check of {}{more}: all its current problems are listed as new.",
        shown.join(", ")
    ))
}

fn head(d: &Diagnostic, root: &Path) -> String {
    let code = d
        .code
        .as_ref()
        .map(|c| format!("[{c}]"))
        .unwrap_or_default();
    format!(
        "{}:{}:{}  {}{code} ({}): {}",
        display_path(&d.loc.path, root),
        d.loc.line,
        d.loc.col,
        d.severity.name(),
        d.source,
        d.message
    )
}

fn short_loc(l: &Loc, root: &Path) -> String {
    format!("{}:{}:{}", display_path(&l.path, root), l.line, l.col)
}

fn entry_lines(e: &DiagnosticEntry, root: &Path) -> Vec<String> {
    let mut first = head(&e.diagnostic, root);
    if e.count > 1 {
        let mut also: Vec<String> = e.also.iter().map(|l| short_loc(l, root)).collect();
        if e.count - 1 > e.also.len() {
            also.push("…".into());
        }
        first.push_str(&format!(" (×{}; also {})", e.count, also.join(", ")));
    }
    let mut lines = vec![first];
    if let Some(t) = e.diagnostic.loc.text.as_deref().map(clip_line)
        && !t.is_empty()
    {
        lines.push(format!("    {t}"));
    }
    for s in e.secondary.iter().take(MAX_SECONDARY) {
        lines.push(format!("  SECONDARY {}", head(s, root)));
    }
    if e.secondary.len() > MAX_SECONDARY {
        lines.push(format!(
            "  … {} more secondary",
            e.secondary.len() - MAX_SECONDARY
        ));
    }
    lines
}

/// Body lines (after the summary) of a diagnostics answer.
pub(crate) fn text_body(r: &DiagnosticsReport, root: &Path) -> (Vec<String>, Option<String>) {
    let mut body = Vec::new();
    for e in &r.entries {
        body.extend(entry_lines(e, root));
    }
    let marker = (r.omitted > 0).then(|| {
        format!(
            "… {} more {} left out (cap {}; name a narrower target or use --severity error)",
            r.omitted,
            if r.omitted == 1 { "entry" } else { "entries" },
            r.entries.len()
        )
    });
    (body, marker)
}

/// Lines after the list: pending files and provider failures.
pub(crate) fn text_tail(r: &DiagnosticsReport, root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(c) = &r.changes
        // (when every file is a first check, the summary line says so)
        && c.first_check.len() < r.files_checked
        && let Some(line) = first_check_line(c, root)
    {
        out.push(line);
    }
    if !r.pending.is_empty() {
        let mut by_reason: Vec<(String, Vec<String>)> = Vec::new();
        for p in &r.pending {
            let key = format!("{}: {}", p.provider, p.reason);
            let path = display_path(&p.path, root);
            match by_reason.iter_mut().find(|(k, _)| *k == key) {
                Some((_, v)) => v.push(path),
                None => by_reason.push((key, vec![path])),
            }
        }
        for (reason, paths) in by_reason {
            let shown: Vec<&String> = paths.iter().take(5).collect();
            let more = if paths.len() > 5 {
                format!(" and {} more", paths.len() - 5)
            } else {
                String::new()
            };
            out.push(format!(
                "Pending (not current yet, old results not shown): {}{more} — {}",
                shown
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                clip(&reason, 300)
            ));
        }
        out.push("Call diagnostics again shortly for the pending files.".into());
    }
    for p in &r.providers {
        if matches!(
            p.outcome,
            ProviderOutcome::Failed | ProviderOutcome::TimedOut
        ) && let Some(d) = &p.detail
        {
            let d = d.split_whitespace().collect::<Vec<_>>().join(" ");
            out.push(format!("Provider {}: {}", p.id, clip(&d, 300)));
        }
    }
    out
}

fn loc_json(l: &Loc, root: &Path) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("path".into(), display_path(&l.path, root).into());
    m.insert("line".into(), l.line.into());
    m.insert("col".into(), l.col.into());
    m.insert("end_line".into(), l.end_line.into());
    m.insert("end_col".into(), l.end_col.into());
    m
}

pub(crate) fn diagnostic_json(d: &Diagnostic, root: &Path) -> Value {
    let mut m = loc_json(&d.loc, root);
    m.insert("severity".into(), d.severity.name().into());
    m.insert("code".into(), d.code.clone().into());
    m.insert("source".into(), d.source.clone().into());
    m.insert("provider".into(), d.provider.clone().into());
    m.insert("message".into(), d.message.clone().into());
    if let Some(t) = &d.loc.text {
        m.insert("text".into(), clip_line(t).into());
    }
    Value::Object(m)
}

fn entry_json(e: &DiagnosticEntry, root: &Path) -> Value {
    let mut v = diagnostic_json(&e.diagnostic, root);
    if let Value::Object(m) = &mut v {
        m.insert("count".into(), e.count.into());
        if !e.also.is_empty() {
            m.insert(
                "also".into(),
                e.also
                    .iter()
                    .map(|l| {
                        json!({"path": display_path(&l.path, root), "line": l.line, "col": l.col})
                    })
                    .collect(),
            );
        }
        if !e.secondary.is_empty() {
            m.insert(
                "secondary".into(),
                e.secondary
                    .iter()
                    .map(|s| diagnostic_json(s, root))
                    .collect(),
            );
        }
    }
    v
}

/// The JSON fields of a diagnostics answer, with the first `n` entries.
pub(crate) fn json_fields(
    r: &DiagnosticsReport,
    root: &Path,
    n: usize,
) -> Vec<(&'static str, Value)> {
    let n = n.min(r.entries.len());
    let omitted = r.omitted + (r.entries.len() - n);
    let mut fields = vec![
        ("summary", summary(r).into()),
        ("scope", r.scope.clone().into()),
        ("severity_filter", r.filter.name().into()),
        (
            "counts",
            json!({
                "errors": r.errors,
                "warnings": r.warnings,
                "infos": r.infos,
                "hints": r.hints,
                "hidden": r.hidden,
            }),
        ),
        ("files_checked", r.files_checked.into()),
        ("files_with_problems", r.files_with_problems.into()),
        (
            "entries",
            r.entries[..n].iter().map(|e| entry_json(e, root)).collect(),
        ),
        ("omitted", omitted.into()),
        (
            "providers",
            r.providers
                .iter()
                .map(|p| serde_json::to_value(p).unwrap_or(Value::Null))
                .collect(),
        ),
        (
            "pending",
            r.pending
                .iter()
                .map(|p| {
                    json!({
                        "path": display_path(&p.path, root),
                        "provider": p.provider,
                        "reason": p.reason,
                    })
                })
                .collect(),
        ),
    ];
    if let Some(c) = &r.changes {
        fields.push((
            "changes",
            json!({
                "new": c.new,
                "resolved": c.resolved,
                "unchanged": c.unchanged,
                "first_check": c.first_check.iter().map(|p| display_path(p, root)).collect::<Vec<_>>(),
            }),
        ));
    }
    fields
}

/// The after-edit delta as text lines: a head line, `+` introduced and `-`
/// resolved diagnostics, what was left out, and the pending note.
pub fn delta_text(d: &DiagnosticsDelta, root: &Path) -> String {
    let who = if d.checked_by.is_empty() {
        String::new()
    } else {
        format!(" ({})", d.checked_by.join(", "))
    };
    let ni = d.introduced.len() + d.more_introduced;
    let nr = d.resolved.len() + d.more_resolved;
    let mut lines = vec![if ni == 0 && nr == 0 {
        if d.checked_by.is_empty() {
            "Diagnostics after the edit: none available.".to_string()
        } else {
            format!("Diagnostics after the edit: no new problems{who}.")
        }
    } else {
        format!(
            "Diagnostics after the edit: {} introduced, {} resolved{who}",
            ni, nr
        )
    }];
    for x in &d.introduced {
        lines.push(format!("  + {}", head(x, root)));
    }
    if d.more_introduced > 0 {
        lines.push(format!("  … {} more introduced", d.more_introduced));
    }
    for x in &d.resolved {
        lines.push(format!("  - {} (resolved)", head(x, root)));
    }
    if d.more_resolved > 0 {
        lines.push(format!("  … {} more resolved", d.more_resolved));
    }
    if let Some(p) = delta_pending(d, root) {
        let p = scry_base::paths::relativise_text(&p, root);
        lines.push(format!("Note: {}", clip(&p, 400)));
    }
    lines.join("\n")
}

/// What of the delta is not known yet, in one sentence: the files still
/// pending (each reason once per file), then those with no baseline.
fn delta_pending(d: &DiagnosticsDelta, root: &Path) -> Option<String> {
    let mut reasons: Vec<String> = Vec::new();
    for p in &d.pending {
        let line = format!("{} ({})", display_path(&p.path, root), p.reason);
        if !reasons.contains(&line) {
            reasons.push(line);
        }
    }
    let pending = (!reasons.is_empty()).then(|| {
        format!(
            "diagnostics still pending for {}; call diagnostics for them later",
            reasons.join(", ")
        )
    });
    let no_baseline = (!d.no_baseline.is_empty()).then(|| {
        format!(
            "no diagnostics from before the edit for {}: all its current ones are listed as introduced",
            (d.no_baseline.iter())
                .map(|p| display_path(p, root))
                .collect::<Vec<_>>()
                .join(", ")
        )
    });
    match (pending, no_baseline) {
        (Some(p), Some(n)) => Some(format!("{p}; {n}")),
        (p, n) => p.or(n),
    }
}

/// The after-edit delta as JSON.
pub fn delta_json(d: &DiagnosticsDelta, root: &Path) -> Value {
    json!({
        "introduced": d.introduced.iter().map(|x| diagnostic_json(x, root)).collect::<Vec<_>>(),
        "resolved": d.resolved.iter().map(|x| diagnostic_json(x, root)).collect::<Vec<_>>(),
        "more_introduced": d.more_introduced,
        "more_resolved": d.more_resolved,
        "pending": delta_pending(d, root),
        "checked_by": d.checked_by,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use scry_model::PendingFile;

    #[test]
    fn the_delta_says_what_is_pending_with_paths_relative() {
        let root = Path::new("/ws");
        let pending = |path: &str, provider: &str, reason: &str| PendingFile {
            path: root.join(path),
            provider: provider.into(),
            reason: reason.into(),
        };
        let mut d = DiagnosticsDelta {
            introduced: Vec::new(),
            resolved: Vec::new(),
            more_introduced: 0,
            more_resolved: 0,
            // one reason said once per file, whoever gave it
            pending: vec![
                pending("a.rs", "x", "x was still checking"),
                pending("a.rs", "y", "x was still checking"),
                pending("b.rs", "y", "no result in time"),
            ],
            no_baseline: vec![root.join("new.rs")],
            checked_by: Vec::new(),
            elapsed_ms: 0,
        };
        assert_eq!(
            delta_pending(&d, root).unwrap(),
            "diagnostics still pending for a.rs (x was still checking), b.rs (no result in time); call diagnostics for them later; no diagnostics from before the edit for new.rs: all its current ones are listed as introduced"
        );
        assert_eq!(
            delta_json(&d, root)["pending"],
            delta_pending(&d, root).unwrap()
        );
        d.pending.clear();
        assert_eq!(
            delta_pending(&d, root).unwrap(),
            "no diagnostics from before the edit for new.rs: all its current ones are listed as introduced"
        );
        d.no_baseline.clear();
        assert_eq!(delta_pending(&d, root), None);
        assert_eq!(delta_json(&d, root)["pending"], Value::Null);
    }
}
