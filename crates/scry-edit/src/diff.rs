//! Previews: a unified diff per changed file (created, deleted, renamed
//! files included).

use std::path::Path;

use scry_base::paths;
use similar::TextDiff;

use crate::plan::{EditPlan, FileChange};

/// A file's preview.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    /// Path of the file after the edit (before, for a deleted file).
    pub path: std::path::PathBuf,
    /// The unified diff (`--- a/x`, `+++ b/x`, hunks with 3 lines of
    /// context); a one-line note for binary content.
    pub diff: String,
}

/// A unified diff of `before` → `after` with the given header names.
pub fn unified(old_name: &str, new_name: &str, before: &[u8], after: &[u8]) -> String {
    match (std::str::from_utf8(before), std::str::from_utf8(after)) {
        (Ok(b), Ok(a)) => TextDiff::from_lines(b, a)
            .unified_diff()
            .context_radius(3)
            .missing_newline_hint(true)
            .header(old_name, new_name)
            .to_string(),
        _ => format!(
            "Binary content of {new_name} changes ({} → {} bytes)\n",
            before.len(),
            after.len()
        ),
    }
}

/// One diff per changed file. A renamed file shows as its deletion and its
/// creation unless the content is the same, then as one `rename` line.
pub fn plan_diffs(plan: &EditPlan, root: &Path) -> Vec<FileDiff> {
    let mut out = Vec::new();
    let mut paired = std::collections::HashSet::new();
    for (from, to) in &plan.renamed {
        let src = plan
            .changes
            .iter()
            .find(|c| &c.path == from && c.after.is_none());
        let dst = plan
            .changes
            .iter()
            .find(|c| &c.path == to && c.before.is_none());
        if let (Some(s), Some(d)) = (src, dst) {
            let (b, a) = (s.before.as_ref(), d.after.as_ref());
            if let (Some(b), Some(a)) = (b, a) {
                paired.insert(from.clone());
                paired.insert(to.clone());
                let header = format!(
                    "rename {} → {}\n",
                    paths::display(from, root),
                    paths::display(to, root)
                );
                let body = if b.bytes == a.bytes {
                    String::new()
                } else {
                    unified(
                        &format!("a/{}", paths::display(from, root)),
                        &format!("b/{}", paths::display(to, root)),
                        &b.bytes,
                        &a.bytes,
                    )
                };
                out.push(FileDiff {
                    path: to.clone(),
                    diff: header + &body,
                });
            }
        }
    }
    for c in &plan.changes {
        if paired.contains(&c.path) {
            continue;
        }
        out.push(FileDiff {
            path: c.path.clone(),
            diff: change_diff(c, root),
        });
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

fn change_diff(c: &FileChange, root: &Path) -> String {
    let r = paths::display(&c.path, root);
    let empty: &[u8] = &[];
    match (&c.before, &c.after) {
        (None, Some(a)) => format!(
            "new file {r}\n{}",
            unified("/dev/null", &format!("b/{r}"), empty, &a.bytes)
        ),
        (Some(b), None) => format!(
            "deleted file {r}\n{}",
            unified(&format!("a/{r}"), "/dev/null", &b.bytes, empty)
        ),
        (Some(b), Some(a)) => {
            let mut s = unified(&format!("a/{r}"), &format!("b/{r}"), &b.bytes, &a.bytes);
            if b.mode != a.mode {
                s.push_str(&format!("mode {:?} → {:?}\n", b.mode, a.mode));
            }
            s
        }
        (None, None) => String::new(),
    }
}
