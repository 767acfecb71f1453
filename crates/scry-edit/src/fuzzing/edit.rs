//! The checks of the `workspace_edit` fuzz target (`fuzz/`), shared with the
//! unit test that replays the committed corpus on stable. Not an API.
//!
//! One input = a `WorkspaceEdit` (the input as JSON when it is an object,
//! `${ROOT}` standing for the workspace's URI; else one built from the bytes:
//! text edits with ranges in and out of the text, create / rename / delete
//! with their options, on files, directories, new paths, `..` escapes,
//! symlinks out of the root, `.git`, the root itself, foreign URIs), a
//! position encoding and a failure to inject at commit. Over a temporary
//! workspace with a directory beside it:
//! - a refused edit changes nothing anywhere;
//! - an accepted plan names only paths inside the root (not the root, not
//!   `.git`);
//! - a commit that fails (injected at file k) leaves everything byte for
//!   byte (and mode for mode) as it was;
//! - a commit that succeeds writes exactly the plan's after-images and
//!   nothing else;
//! - the reverse plan (what undo commits) restores everything byte-exact.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use scry_base::uri::path_to_uri;
use scry_text::Encoding;
use serde_json::{Value, json};

use super::{Bytes, snapshot};
use crate::apply::{WriteOptions, commit};
use crate::plan::{EditPlan, FileChange, Protected, build_plan};
use crate::platform::testing;

/// The check's workspace holds no configuration file: `.git` (the leaf's
/// own rule) is what it protects.
const PROTECTED: Protected = Protected {
    anywhere: &[],
    at_root: &[],
};

struct Fixture {
    base: PathBuf,
    root: PathBuf,
}

const FILES: &[(&str, &str)] = &[
    ("a.txt", "alpha\nbeta\ngamma\n"),
    ("crlf.rs", "fn a() {}\r\nfn b() {}\r\n"),
    ("u.py", "\u{feff}é😀 = 1\nx = 2"),
    ("sub/b.txt", "b\n"),
    ("sub/deep/c.txt", "c"),
    ("empty.txt", ""),
    (".git/config", "[core]\n"),
];

/// The workspace, made once per process (every check leaves it as it was,
/// or panics).
fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let base = scry_base::dirs::scratch("scry-fuzz-edit");
        let root = base.join("ws");
        for (f, text) in FILES {
            let p = root.join(f);
            std::fs::create_dir_all(p.parent().expect("a parent")).expect("fixture dirs");
            std::fs::write(p, text).expect("fixture files");
        }
        std::fs::create_dir_all(base.join("outside")).expect("fixture dirs");
        std::fs::write(base.join("outside/secret.txt"), "secret\n").expect("fixture files");
        // Links where the OS lets this user make them (Windows may not).
        let _ = testing::symlink(Path::new("../outside"), &root.join("link_dir"));
        let _ = testing::symlink(Path::new("../outside/secret.txt"), &root.join("link_file"));
        testing::set_word(&root.join("a.txt"), testing::KEPT).expect("a permission word");
        let base = scry_base::paths::canonical(&base).expect("canonical base");
        Fixture {
            root: base.join("ws"),
            base,
        }
    })
}

const PATHS: &[&str] = &[
    "a.txt",
    "crlf.rs",
    "u.py",
    "sub/b.txt",
    "sub/deep/c.txt",
    "empty.txt",
    "sub",
    "sub/deep",
    "new.txt",
    "newdir/n.txt",
    "sub/new.rs",
    "a.txt/x",
    ".git/config",
    ".git/hooks/pre-commit",
    "link_dir/secret.txt",
    "link_file",
    "link_dir",
    "../outside/secret.txt",
    "sub/../../outside/new.txt",
    "",
    ".",
    "-h.py",
];

const RAW_URIS: &[&str] = &[
    "file:///etc/passwd",
    "untitled:Untitled-1",
    "file://host/share/x.txt",
    "a.txt",
    "file:",
    "file:///",
    "%2e%2e",
];

const TEXTS: &[&str] = &[
    "",
    "X",
    "\n",
    "é",
    "\r\n",
    "😀",
    "line\nline\n",
    "\u{feff}",
    "\r",
];

fn uri(f: &Fixture, b: &mut Bytes) -> Value {
    let i = usize::from(b.next());
    if i >= 240 {
        let raw = RAW_URIS[i % RAW_URIS.len()];
        if raw == "%2e%2e" {
            return Value::String(format!(
                "{}/%2e%2e/outside/secret.txt",
                path_to_uri(&f.root)
            ));
        }
        return Value::String(raw.to_string());
    }
    let rel = PATHS[i % PATHS.len()];
    let p = if rel.is_empty() {
        f.root.clone()
    } else {
        f.root.join(rel)
    };
    Value::String(path_to_uri(&p))
}

fn pos(b: &mut Bytes) -> Value {
    let l = b.next();
    let c = b.next();
    let line = if l == 0xff {
        u64::from(u32::MAX) + 1
    } else {
        u64::from(l % 6)
    };
    let character = if c >= 0xf0 {
        u64::from(c) * 1000
    } else {
        u64::from(c % 14)
    };
    json!({"line": line, "character": character})
}

fn text_edits(b: &mut Bytes) -> Value {
    let n = b.next() % 4;
    Value::Array(
        (0..n)
            .map(|_| {
                let t = TEXTS[usize::from(b.next()) % TEXTS.len()];
                json!({"range": {"start": pos(b), "end": pos(b)}, "newText": t})
            })
            .collect(),
    )
}

fn options(b: &mut Bytes, names: [&str; 2]) -> Value {
    let o = b.next();
    let mut m = serde_json::Map::new();
    if o & 1 != 0 {
        m.insert(names[0].into(), Value::Bool(o & 2 != 0));
    }
    if o & 4 != 0 {
        m.insert(names[1].into(), Value::Bool(o & 8 != 0));
    }
    Value::Object(m)
}

/// The edit, the position encoding and the failure to inject.
fn decode(f: &Fixture, data: &[u8]) -> (Value, Encoding, Option<usize>) {
    let Some((&head, rest)) = data.split_first() else {
        return (json!({}), Encoding::Utf16, None);
    };
    let enc = [Encoding::Utf8, Encoding::Utf16, Encoding::Utf32][usize::from(head % 3)];
    let fail_at = (head & 0x30 != 0).then_some(usize::from(head >> 6));
    if let Ok(text) = std::str::from_utf8(rest) {
        let text = text.replace("${ROOT}", &path_to_uri(&f.root));
        if let Ok(v @ Value::Object(_)) = serde_json::from_str::<Value>(&text) {
            return (v, enc, fail_at);
        }
    }
    let mut b = Bytes(rest.iter());
    let document_changes = head & 8 != 0;
    let mut ops = Vec::new();
    let mut changes = serde_json::Map::new();
    while !b.done() && ops.len() + changes.len() < 8 {
        let tag = b.next();
        match (document_changes, tag % 4) {
            (false, _) | (true, 0) => {
                let u = uri(f, &mut b);
                let edits = text_edits(&mut b);
                if document_changes {
                    let version = match b.next() % 3 {
                        0 => Value::Null,
                        1 => json!(1),
                        _ => json!(-7),
                    };
                    ops.push(
                        json!({"textDocument": {"uri": u, "version": version}, "edits": edits}),
                    );
                } else if let Value::String(u) = u {
                    changes.insert(u, edits);
                }
            }
            (true, 1) => ops.push(json!({"kind": "create", "uri": uri(f, &mut b),
                "options": options(&mut b, ["overwrite", "ignoreIfExists"])})),
            (true, 2) => ops.push(
                json!({"kind": "rename", "oldUri": uri(f, &mut b), "newUri": uri(f, &mut b),
                "options": options(&mut b, ["overwrite", "ignoreIfExists"])}),
            ),
            _ => ops.push(json!({"kind": "delete", "uri": uri(f, &mut b),
                "options": options(&mut b, ["recursive", "ignoreIfNotExists"])})),
        }
    }
    let edit = if document_changes {
        json!({"documentChanges": ops})
    } else {
        json!({"changes": changes})
    };
    (edit, enc, fail_at)
}

/// The plan that undoes `plan` once it is committed (what `undo` commits).
fn reverse(plan: &EditPlan) -> EditPlan {
    EditPlan {
        changes: plan
            .changes
            .iter()
            .map(|c| FileChange {
                path: c.path.clone(),
                before: c.after.clone(),
                after: c.before.clone(),
            })
            .collect(),
        dirs_created: plan.dirs_removed.iter().rev().cloned().collect(),
        dirs_removed: plan.dirs_created.iter().rev().cloned().collect(),
        ..Default::default()
    }
}

fn inside(f: &Fixture, p: &Path) -> bool {
    p.starts_with(&f.root)
        && p != f.root
        && !p
            .strip_prefix(&f.root)
            .is_ok_and(|r| r.components().any(|c| c.as_os_str() == ".git"))
}

/// Run every check on one input; panics on a violated property.
pub fn check_edit(data: &[u8]) {
    // One check at a time: they share the workspace.
    static LOCK: Mutex<()> = Mutex::new(());
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let f = fixture();
    let (edit, enc, fail_at) = decode(f, data);
    let before = snapshot(&f.base, None);
    let plan = match build_plan(&f.root, &edit, enc, &HashMap::new(), "fuzz", &PROTECTED) {
        Err(_) => {
            assert_eq!(
                snapshot(&f.base, None),
                before,
                "a refused edit changed files"
            );
            return;
        }
        Ok(p) => p,
    };
    assert_eq!(snapshot(&f.base, None), before, "planning wrote files");
    for c in &plan.changes {
        assert!(inside(f, &c.path), "the plan changes {}", c.path.display());
        assert_ne!(c.before, c.after, "a no-op change in the plan");
    }
    for d in plan.dirs_created.iter().chain(&plan.dirs_removed) {
        assert!(inside(f, d), "the plan changes directory {}", d.display());
    }
    let opts = WriteOptions { fail_at };
    match commit(&plan, &opts) {
        Err(e) => {
            let now = snapshot(&f.base, None);
            assert_eq!(now, before, "a failed commit ({e}) left changes");
        }
        Ok(()) => {
            let now = snapshot(&f.base, None);
            // Exactly the plan's after-images, nothing else.
            let mut expected = before.clone();
            for d in &plan.dirs_removed {
                expected.remove(d);
            }
            for c in &plan.changes {
                match &c.after {
                    None => {
                        expected.remove(&c.path);
                    }
                    Some(img) => {
                        let got = now.get(&c.path).expect("a written file exists");
                        assert_eq!(got.1, img.bytes, "{} holds other bytes", c.path.display());
                        if let Some(m) = img.mode {
                            assert_eq!(
                                got.2 & 0o7777,
                                m,
                                "{} lost its permission word",
                                c.path.display()
                            );
                        }
                        expected.insert(c.path.clone(), got.clone());
                    }
                }
            }
            for d in &plan.dirs_created {
                if let Some(got) = now.get(d) {
                    expected.insert(d.clone(), got.clone());
                }
            }
            assert_eq!(now, expected, "the commit changed more than the plan");
            // Undo restores byte-exact.
            let undo = reverse(&plan);
            commit(&undo, &WriteOptions::default()).expect("the reverse plan commits");
            assert_eq!(
                snapshot(&f.base, None),
                before,
                "undo did not restore byte-exact"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    /// Replays the committed fuzz corpus (`fuzz/corpus/workspace_edit`).
    #[test]
    fn fuzz_corpus_replays() {
        scry_testkit::replay_corpus("workspace_edit", super::check_edit);
    }
}
