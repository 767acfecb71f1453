//! The checks of scry-edit's fuzz targets (`fuzz/`), one file per target,
//! shared with the unit tests that replay each target's committed corpus on
//! stable (`scry_testkit::replay_corpus`). Not an API: only compiled for
//! tests and with the `fuzzing` feature.
//!
//! - [`edit`]: `workspace_edit` (plan, commit with an injected failure,
//!   undo);
//! - [`journal`]: `journal_recover` (recovery of a dead writer's entry).
//!
//! Here too what they share: the reader of an input's bytes and the
//! snapshot of a directory tree the checks compare before and after.

pub mod edit;
pub mod journal;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// An input's bytes, read one at a time; past the end, zeros.
struct Bytes<'a>(std::slice::Iter<'a, u8>);

impl Bytes<'_> {
    fn next(&mut self) -> u8 {
        self.0.next().copied().unwrap_or(0)
    }
    fn done(&self) -> bool {
        self.0.len() == 0
    }
}

/// Every path under a directory: its kind (`f`ile, `d`irectory, `l`ink),
/// bytes (a link's target) and mode.
type Snap = BTreeMap<PathBuf, (char, Vec<u8>, u32)>;

/// The [`Snap`] of `dir`, leaving out `skip` and what is below it.
fn snapshot(dir: &Path, skip: Option<&Path>) -> Snap {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if skip.is_some_and(|s| p == s) {
                continue;
            }
            let Ok(m) = p.symlink_metadata() else {
                continue;
            };
            let mode = crate::platform::testing::word(&p).unwrap_or(0);
            if m.file_type().is_symlink() {
                let t = std::fs::read_link(&p).unwrap_or_default();
                out.insert(p, ('l', t.as_os_str().as_encoded_bytes().to_vec(), 0));
            } else if m.is_dir() {
                stack.push(p.clone());
                out.insert(p, ('d', Vec::new(), mode));
            } else {
                let bytes = std::fs::read(&p).unwrap_or_default();
                out.insert(p, ('f', bytes, mode));
            }
        }
    }
    out
}
