//! `diagnostics` with `changes: true`: only what is new in the files since
//! this session's previous diagnostics of them, plus how many were resolved.
//!
//! Identity is the after-edit delta's (see [`super::delta`]): per file,
//! severity + code + normalised message, as a multiset, never the position,
//! so a line shift does not replay an old error. The baseline of a file is
//! what the previous `changes` check of it found (all severities); a file
//! with no baseline yet (checked for the first time) has all its current
//! diagnostics reported as new (errors first) and they become its baseline:
//! an agent's first edit of a file is never hidden (the answer says it was
//! a first check). Files whose
//! results are pending keep their old baseline. The baseline lives with the
//! engine (shared by its clones: one MCP session); the CLI saves it between
//! runs with [`ChangesBaseline::to_json`] / [`ChangesBaseline::from_json`].

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::diagnostics::merge;
use scry_model::{ChangesSummary, Diagnostic, Severity, SeverityFilter};

type Identity = (Severity, Option<String>, String);

fn identity(d: &Diagnostic) -> Identity {
    (d.severity, d.code.clone(), merge::normalise(&d.message))
}

/// Per file, the identities of its diagnostics at the previous check.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChangesBaseline {
    files: BTreeMap<PathBuf, Vec<Identity>>,
}

impl ChangesBaseline {
    /// Compare `now` (deduplicated diagnostics of `files`, all severities)
    /// with the baseline, then make `now` the baseline of `files`. Returns
    /// the new diagnostics (all severities; the caller filters) and the
    /// summary counted under `filter`.
    pub fn update(
        &mut self,
        files: &[PathBuf],
        now: &[Diagnostic],
        filter: SeverityFilter,
    ) -> (Vec<Diagnostic>, ChangesSummary) {
        let mut summary = ChangesSummary::default();
        let mut new = Vec::new();
        for f in files {
            let current: Vec<&Diagnostic> = now.iter().filter(|d| &d.loc.path == f).collect();
            let ids: Vec<Identity> = current.iter().map(|d| identity(d)).collect();
            match self.files.get(f) {
                // Nothing seen of this file yet (an agent's first edit of
                // it): everything it has now is new to the caller.
                None => {
                    summary.first_check.push(f.clone());
                    summary.new += current.iter().filter(|d| filter.admits(d.severity)).count();
                    new.extend(current.iter().map(|d| (*d).clone()));
                }
                Some(was) => {
                    let mut before: HashMap<&Identity, usize> = HashMap::new();
                    for id in was {
                        *before.entry(id).or_default() += 1;
                    }
                    let mut seen: HashMap<&Identity, usize> = HashMap::new();
                    for (d, id) in current.iter().zip(&ids) {
                        let n = seen.entry(id).or_default();
                        *n += 1;
                        let admitted = filter.admits(d.severity);
                        if *n > before.get(id).copied().unwrap_or(0) {
                            if admitted {
                                summary.new += 1;
                            }
                            new.push((*d).clone());
                        } else if admitted {
                            summary.unchanged += 1;
                        }
                    }
                    for (id, n) in &before {
                        let still = seen.get(id).copied().unwrap_or(0);
                        if n > &still && filter.admits(id.0) {
                            summary.resolved += n - still;
                        }
                    }
                }
            }
            self.files.insert(f.clone(), ids);
        }
        merge::sort(&mut new);
        (new, summary)
    }

    /// The baseline as JSON (paths relative to `root` where inside it).
    pub fn to_json(&self, root: &Path) -> Value {
        let files: serde_json::Map<String, Value> = self
            .files
            .iter()
            .map(|(p, ids)| {
                let key = p
                    .strip_prefix(root)
                    .unwrap_or(p)
                    .to_string_lossy()
                    .into_owned();
                let list = ids
                    .iter()
                    .map(|(s, c, m)| json!([s.name(), c, m]))
                    .collect();
                (key, Value::Array(list))
            })
            .collect();
        json!({ "version": 1, "files": files })
    }

    /// A baseline from [`ChangesBaseline::to_json`]; anything unreadable is
    /// left out.
    pub fn from_json(v: &Value, root: &Path) -> ChangesBaseline {
        let mut out = ChangesBaseline::default();
        if v.get("version").and_then(Value::as_u64) != Some(1) {
            return out;
        }
        let Some(files) = v.get("files").and_then(Value::as_object) else {
            return out;
        };
        for (k, list) in files {
            let Some(list) = list.as_array() else {
                continue;
            };
            let ids = list
                .iter()
                .filter_map(|item| {
                    let a = item.as_array()?;
                    let sev: Severity = serde_json::from_value(a.first()?.clone()).ok()?;
                    let code = a.get(1)?.as_str().map(str::to_string);
                    let msg = a.get(2)?.as_str()?.to_string();
                    Some((sev, code, msg))
                })
                .collect();
            out.files.insert(root.join(k), ids);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(line: u32, sev: Severity, code: &str, msg: &str) -> Diagnostic {
        crate::diagnostics::delta::tests::d("/w/a.py", line, sev, code, msg)
    }

    #[test]
    fn new_then_resolved_then_new_again() {
        let f = vec![PathBuf::from("/w/a.py")];
        let old = d(1, Severity::Error, "E0", "old problem");
        let mut b = ChangesBaseline::default();
        // First check: everything is new (the first edit of a file is
        // never hidden), and becomes the baseline.
        let (new, s) = b.update(&f, std::slice::from_ref(&old), SeverityFilter::Warning);
        assert_eq!(new, vec![old.clone()]);
        assert_eq!((s.first_check.len(), s.new, s.unchanged), (1, 1, 0));
        let (new, s) = b.update(&f, std::slice::from_ref(&old), SeverityFilter::Warning);
        assert!(new.is_empty());
        assert_eq!((s.first_check.len(), s.new, s.unchanged), (0, 0, 1));
        // introduced, old one shifted down a line
        let mut shifted = old.clone();
        shifted.loc.line = 2;
        let err = d(5, Severity::Error, "E1", "bad  type.");
        let (new, s) = b.update(&f, &[shifted.clone(), err.clone()], SeverityFilter::Warning);
        assert_eq!(new, vec![err.clone()]);
        assert_eq!((s.new, s.resolved, s.unchanged), (1, 0, 1));
        // fixed
        let (new, s) = b.update(&f, std::slice::from_ref(&shifted), SeverityFilter::Warning);
        assert!(new.is_empty());
        assert_eq!((s.new, s.resolved, s.unchanged), (0, 1, 1));
        // again, elsewhere
        let again = d(9, Severity::Error, "E1", "bad type");
        let (new, s) = b.update(&f, &[shifted, again.clone()], SeverityFilter::Warning);
        assert_eq!(new, vec![again]);
        assert_eq!((s.new, s.resolved), (1, 0));
        // survives a JSON round trip
        let root = Path::new("/w");
        assert_eq!(ChangesBaseline::from_json(&b.to_json(root), root), b);
    }
}
