//! Diagnostics after an edit: what the edit introduced and what it
//! resolved, within a short budget.
//!
//! Usage by an edit operation:
//!
//! ```ignore
//! let before = delta::baseline(&ws, &files, None).await;   // before writing
//! /* write the files */
//! let delta = delta::after_edit(&ws, &before, &files, None).await;
//! // delta.introduced / delta.resolved (≤ 8 each), delta.pending
//! ```
//!
//! Identity is per file by severity, code and normalised message (a
//! multiset), never by position: an edit that shifts lines does not replay
//! an old error as new. Errors and warnings only. The delta never fails:
//! when results do not come within the budget (default
//! `limits.diagnosticsDeltaMs`, 2 s) it lists the files still pending (and
//! those with no baseline), data with absolute paths that scry-render
//! words, and a later `diagnostics` call gives them.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use scry_workspace::Workspace;
use tokio::time::Instant;

use crate::diagnostics::{Collected, collect, merge};
use scry_model::limits::MAX_DELTA_ITEMS;
use scry_model::{Diagnostic, DiagnosticsDelta, Severity, SeverityFilter};

/// Diagnostics of some files before an edit.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DiagnosticsBaseline {
    /// Files whose diagnostics are known (every provider answered), with
    /// them (errors and warnings).
    pub files: BTreeMap<PathBuf, Vec<Diagnostic>>,
    /// Files whose diagnostics were not complete in time.
    pub unknown: BTreeSet<PathBuf>,
}

impl DiagnosticsBaseline {
    /// A baseline from diagnostics already at hand (e.g. the last
    /// `diagnostics` answer): every file in `files` is known, with the
    /// diagnostics of `diags` that are in it.
    pub fn from_diagnostics(files: &[PathBuf], diags: &[Diagnostic]) -> DiagnosticsBaseline {
        let mut b = DiagnosticsBaseline::default();
        for f in files {
            b.files.insert(
                f.clone(),
                diags.iter().filter(|d| &d.loc.path == f).cloned().collect(),
            );
        }
        b
    }

    fn from_collected(files: &[PathBuf], c: Collected) -> DiagnosticsBaseline {
        let unknown = c.pending_files();
        let diags: Vec<Diagnostic> = merge::dedup(c.diagnostics)
            .into_iter()
            .filter(|d| SeverityFilter::Warning.admits(d.severity))
            .collect();
        let mut b = DiagnosticsBaseline::default();
        for f in files {
            if unknown.contains(f) {
                b.unknown.insert(f.clone());
            } else {
                b.files.insert(
                    f.clone(),
                    diags.iter().filter(|d| &d.loc.path == f).cloned().collect(),
                );
            }
        }
        b
    }
}

type Identity = (Severity, Option<String>, String);

fn identity(d: &Diagnostic) -> Identity {
    (d.severity, d.code.clone(), merge::normalise(&d.message))
}

/// Per-file multiset difference: `(introduced, resolved)`. An identity that
/// appears n times before and m times after is introduced m-n times (the
/// last ones after) or resolved n-m times.
pub fn delta(before: &[Diagnostic], after: &[Diagnostic]) -> (Vec<Diagnostic>, Vec<Diagnostic>) {
    fn bucket(v: &[Diagnostic]) -> HashMap<(PathBuf, Identity), Vec<&Diagnostic>> {
        let mut m: HashMap<(PathBuf, Identity), Vec<&Diagnostic>> = HashMap::new();
        for d in v {
            m.entry((d.loc.path.clone(), identity(d)))
                .or_default()
                .push(d);
        }
        m
    }
    let b = bucket(before);
    let a = bucket(after);
    let mut introduced = Vec::new();
    let mut resolved = Vec::new();
    for (k, now) in &a {
        let was = b.get(k).map_or(0, Vec::len);
        introduced.extend(now.iter().skip(was).map(|d| (*d).clone()));
    }
    for (k, was) in &b {
        let now = a.get(k).map_or(0, Vec::len);
        resolved.extend(was.iter().skip(now).map(|d| (*d).clone()));
    }
    merge::sort(&mut introduced);
    merge::sort(&mut resolved);
    (introduced, resolved)
}

/// Diagnostics of `files` now (before an edit), within `budget`
/// (default `limits.diagnosticsDeltaMs`). Files without complete
/// results are marked unknown. Paths absolute or relative to the
/// workspace root; files that do not exist are known and clean (an edit
/// may create them).
pub async fn baseline(
    ws: &Arc<Workspace>,
    files: &[PathBuf],
    budget: Option<Duration>,
) -> DiagnosticsBaseline {
    let deadline = Instant::now() + delta_budget(ws, budget);
    let (existing, absent) = edit_files(ws, files);
    let c = collect(ws, &existing, false, deadline).await;
    let mut b = DiagnosticsBaseline::from_collected(&existing, c);
    for f in absent {
        b.files.insert(f, Vec::new());
    }
    b
}

/// What an edit of `changed` introduced and resolved compared with
/// `baseline`, within `budget` (default `limits.diagnosticsDeltaMs`,
/// 2 s). Never fails: files whose results are missing are listed in
/// `pending`. Files with no baseline list all their current diagnostics
/// as introduced (and are listed in `no_baseline`).
pub async fn after_edit(
    ws: &Arc<Workspace>,
    baseline: &DiagnosticsBaseline,
    changed: &[PathBuf],
    budget: Option<Duration>,
) -> DiagnosticsDelta {
    let start = Instant::now();
    let deadline = start + delta_budget(ws, budget);
    let (existing, absent) = edit_files(ws, changed);
    let c = collect(ws, &existing, false, deadline).await;
    let checked_by = c.checked_by();
    let pending_files = c.pending_files();
    let pending = c.pending.clone();
    let after: Vec<Diagnostic> = merge::dedup(c.diagnostics)
        .into_iter()
        .filter(|d| SeverityFilter::Warning.admits(d.severity))
        .collect();
    let mut before = Vec::new();
    let mut after_known = Vec::new();
    let mut no_baseline = Vec::new();
    for f in existing.iter().chain(absent.iter()) {
        if pending_files.contains(f) {
            continue;
        }
        let now = after.iter().filter(|d| &d.loc.path == f).cloned();
        match baseline.files.get(f) {
            Some(was) => {
                before.extend(was.iter().cloned());
                after_known.extend(now);
            }
            None => {
                no_baseline.push(f.clone());
                after_known.extend(now);
            }
        }
    }
    let (introduced, resolved) = delta(&before, &after_known);
    let cap = |mut v: Vec<Diagnostic>| {
        let more = v.len().saturating_sub(MAX_DELTA_ITEMS);
        v.truncate(MAX_DELTA_ITEMS);
        (v, more)
    };
    let (introduced, more_introduced) = cap(introduced);
    let (resolved, more_resolved) = cap(resolved);
    DiagnosticsDelta {
        introduced,
        resolved,
        more_introduced,
        more_resolved,
        pending,
        no_baseline,
        checked_by,
        elapsed_ms: start.elapsed().as_millis() as u64,
    }
}

fn delta_budget(ws: &Workspace, budget: Option<Duration>) -> Duration {
    budget
        .unwrap_or_else(|| Duration::from_millis(ws.config().limits.diagnostics_delta_ms))
        .min(scry_model::limits::MAX_TIMEOUT)
}

/// Absolute paths of `files`, split into existing files and absent ones.
fn edit_files(ws: &Workspace, files: &[PathBuf]) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let root = ws.root();
    let mut existing = Vec::new();
    let mut absent = Vec::new();
    for f in files {
        let abs = if f.is_absolute() {
            f.clone()
        } else {
            root.join(f)
        };
        match scry_base::paths::canonical(&abs) {
            Ok(c) if c.is_file() && scry_base::paths::is_under(&c, root) => existing.push(c),
            Ok(_) => {}
            Err(_) => absent.push(abs),
        }
    }
    existing.sort();
    existing.dedup();
    (existing, absent)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::diagnostics::merge::loc;

    /// A diagnostic at column 1 of `line`, for tests here and in `changes`.
    pub(crate) fn d(path: &str, line: u32, sev: Severity, code: &str, msg: &str) -> Diagnostic {
        Diagnostic {
            loc: loc(path, line, 1, None),
            severity: sev,
            code: Some(code.into()),
            source: "x".into(),
            provider: "x".into(),
            message: msg.into(),
        }
    }

    #[test]
    fn a_line_shift_is_not_a_new_error() {
        let before = vec![
            d("/w/a.py", 10, Severity::Error, "E1", "bad type"),
            d("/w/a.py", 20, Severity::Warning, "W1", "unused x"),
        ];
        // two lines inserted above: same errors, shifted; one new, one fixed
        let after = vec![
            d("/w/a.py", 12, Severity::Error, "E1", "bad type"),
            d("/w/a.py", 3, Severity::Error, "E2", "undefined name y"),
        ];
        let (intro, res) = delta(&before, &after);
        assert_eq!(intro.len(), 1);
        assert_eq!(intro[0].code.as_deref(), Some("E2"));
        assert_eq!(res.len(), 1);
        assert_eq!(res[0].code.as_deref(), Some("W1"));
    }

    #[test]
    fn identity_is_a_multiset_per_file() {
        let one = d("/w/a.py", 1, Severity::Error, "E1", "bad");
        let before = vec![one.clone()];
        let mut two = one.clone();
        two.loc.line = 5;
        let after = vec![one.clone(), two.clone()];
        let (intro, res) = delta(&before, &after);
        assert_eq!((intro.len(), res.len()), (1, 0));
        // the same message in another file is another identity
        let mut other = one.clone();
        other.loc.path = "/w/b.py".into();
        let (intro, res) = delta(&before, &[other]);
        assert_eq!((intro.len(), res.len()), (1, 1));
    }

    #[test]
    fn baseline_from_diagnostics() {
        let a = d("/w/a.py", 1, Severity::Error, "E1", "bad");
        let b = DiagnosticsBaseline::from_diagnostics(&["/w/a.py".into(), "/w/c.py".into()], &[a]);
        assert_eq!(b.files[&PathBuf::from("/w/a.py")].len(), 1);
        assert!(b.files[&PathBuf::from("/w/c.py")].is_empty());
        assert!(b.unknown.is_empty());
    }
}
