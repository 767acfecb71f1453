//! The checks of the `journal_recover` fuzz target (`fuzz/`), shared with
//! the unit test that replays its committed corpus on stable. Not an API.
//!
//! One input = the content of a workspace's journal directory and the
//! state of the files it names, as a dead writer could leave them or
//! worse: the input as a manifest when it is a JSON object (`${ROOT}`
//! standing for the workspace root's path), else a manifest built from the
//! bytes (paths inside the root, `..` escapes, a symlinked directory out of
//! it; before/after stamps that match or not; files holding the before-
//! or after-image, other bytes, or nothing; before-images right, wrong,
//! missing or a directory; stranded temporary files, directories and
//! symlinks under the entry's temp names; any state), plus the bytes as a
//! second, garbage manifest. Then [`crate::journal::Journal::recover`] runs,
//! and:
//! - it never panics and never changes anything outside the workspace
//!   root (the directory beside it, the secret behind the symlink);
//! - inside the root it changes only a file named by the manifest that
//!   held its after-image (it then holds its before-image, or is gone if
//!   the edit had created it), the entry's own temporary names, and
//!   directories the manifest names (created when missing, removed when
//!   empty);
//! - run again, it changes nothing (recovery is idempotent).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::Value;

use super::{Bytes, Snap, snapshot};
use crate::journal::{
    EntryState, FileState, Journal, JournalFile, Manifest, content_hash, stamp_matches, temp_path,
};
use crate::platform::testing;

const PATHS: &[&str] = &[
    "a.txt",
    "b.py",
    "sub/c.rs",
    "sub",
    "new.txt",
    "newdir",
    "newdir/n.txt",
    "link_dir/secret.txt",
    "../outside/secret.txt",
    "sub/../../outside/x.txt",
    "",
];

const TEXTS: &[&[u8]] = &[b"", b"alpha\n", b"beta\r\n", b"\xff\xfe bytes", b"new\n"];

fn stamp(bytes: &[u8], mode: Option<u32>) -> FileState {
    FileState {
        len: bytes.len() as u64,
        hash: content_hash(bytes),
        mode,
    }
}

fn write_mode(p: &Path, bytes: &[u8], mode: Option<u32>) {
    if let Some(parent) = p.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    if std::fs::write(p, bytes).is_ok() {
        let _ = testing::set_word(p, mode.unwrap_or(0o644));
    }
}

/// The fresh world: `<base>/ws` (a.txt, b.py, sub/c.rs, link_dir →
/// ../outside), `<base>/outside/secret.txt`, an empty `<base>/journal`.
fn fresh(base: &Path) -> PathBuf {
    let _ = std::fs::remove_dir_all(base);
    let root = base.join("ws");
    for (f, t) in [
        ("a.txt", "a\n"),
        ("b.py", "b = 1\n"),
        ("sub/c.rs", "fn c() {}\n"),
    ] {
        write_mode(&root.join(f), t.as_bytes(), Some(0o644));
    }
    write_mode(&base.join("outside/secret.txt"), b"secret\n", Some(0o600));
    let _ = testing::symlink(Path::new("../outside"), &root.join("link_dir"));
    std::fs::create_dir_all(base.join("journal")).expect("journal dir");
    scry_base::paths::canonical(&root).expect("a canonical root")
}

/// Build the manifest, the entry's files and the workspace state from the
/// bytes; returns the manifest text and the entry directory's name.
fn decode(root: &Path, entry_files: &mut Vec<(String, Vec<u8>)>, data: &[u8]) -> (String, String) {
    let mut b = Bytes(data.iter());
    let id = ["a1b2c3d4e5", "x", "../../x", ""][usize::from(b.next() % 4)].to_string();
    let state = [
        EntryState::Pending,
        EntryState::Pending,
        EntryState::Applied,
        EntryState::RolledBack,
    ][usize::from(b.next() % 4)]
    .clone();
    let seq = u64::from(b.next() % 3);
    let mut files = Vec::new();
    let mut dirs = [Vec::new(), Vec::new()];
    while !b.done() && files.len() < 6 {
        let tag = b.next();
        let rel = PATHS[usize::from(b.next()) % PATHS.len()];
        let path = if rel.is_empty() {
            root.to_path_buf()
        } else {
            root.join(rel)
        };
        if tag % 8 == 7 {
            dirs[usize::from(tag >> 7)].push(path);
            continue;
        }
        let mode = [Some(0o644), Some(0o600), Some(0o755), None][usize::from(tag >> 6)];
        let tb = TEXTS[usize::from(b.next()) % TEXTS.len()];
        let ta = TEXTS[usize::from(b.next()) % TEXTS.len()];
        let before = (tag & 1 != 0).then(|| stamp(tb, mode));
        let after = (tag & 2 != 0).then(|| stamp(ta, mode));
        let i = files.len();
        // The before-image in the entry: right, wrong, missing, a directory.
        match b.next() % 4 {
            0 => entry_files.push((format!("{i}.before"), tb.to_vec())),
            1 => entry_files.push((format!("{i}.before"), b"wrong".to_vec())),
            2 => {}
            _ => entry_files.push((format!("{i}.before/"), Vec::new())),
        }
        // The file now: its before-image, its after-image, other bytes,
        // absent, or the fixture as it is (never outside the root).
        let inside = path.starts_with(root) && !rel.contains("..") && !rel.starts_with("link");
        if inside && !rel.is_empty() {
            match b.next() % 5 {
                0 => write_mode(&path, tb, mode),
                1 => write_mode(&path, ta, mode),
                2 => write_mode(&path, b"someone else's", mode),
                3 => {
                    let _ = std::fs::remove_file(&path);
                }
                _ => {}
            }
            // A stranded temporary file under the entry's name.
            let t = temp_path(&id, i, &path);
            match b.next() % 4 {
                0 => write_mode(&t, &ta[..ta.len() / 2], Some(0o600)),
                1 => {
                    let _ = std::fs::create_dir_all(&t);
                }
                2 => {
                    let _ = testing::symlink(&root.join("../outside/secret.txt"), &t);
                }
                _ => {}
            }
        }
        files.push(JournalFile {
            path,
            before,
            after,
        });
    }
    let [dirs_created, dirs_removed] = dirs;
    let m = Manifest {
        id: id.clone(),
        seq,
        root: root.to_path_buf(),
        key: None,
        undo_key: None,
        title: "fuzz".into(),
        state,
        unix_ms: 0,
        files,
        dirs_created,
        dirs_removed,
        reverts: None,
        report: Value::Null,
    };
    let text = serde_json::to_string(&m).unwrap_or_default();
    (text, format!("{seq:012}-{id}"))
}

/// What recovery may change, from the manifest and the state before it.
fn allowed(m: &Manifest, root: &Path, path: &Path, pre: &Snap, post: &Snap) -> bool {
    if !path.starts_with(root) {
        return false;
    }
    for (i, f) in m.files.iter().enumerate() {
        if path == temp_path(&m.id, i, &f.path) {
            return true;
        }
        if path == f.path {
            // It held the after-image; it now holds the before-image.
            let held_after = match (&f.after, pre.get(path)) {
                (None, None) => true,
                (Some(s), Some(('f', bytes, mode))) => {
                    content_hash(bytes) == s.hash && s.mode.is_none_or(|x| mode & 0o7777 == x)
                }
                _ => false,
            };
            let now_before = match (&f.before, post.get(path)) {
                (None, None) => true,
                (Some(s), Some(('f', bytes, _))) => content_hash(bytes) == s.hash,
                _ => false,
            };
            return held_after && now_before;
        }
    }
    let named_dir = m
        .dirs_created
        .iter()
        .chain(&m.dirs_removed)
        .any(|d| d == path);
    let empty_dir = |s: &Snap| matches!(s.get(path), Some(('d', _, _)) | None);
    named_dir && empty_dir(pre) && empty_dir(post)
}

/// Run every check on one input; panics on a violated property.
pub fn check_recover(data: &[u8]) {
    static LOCK: Mutex<()> = Mutex::new(());
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    static BASE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let base = BASE.get_or_init(|| scry_base::dirs::scratch("scry-fuzz-journal"));
    let root = fresh(base);
    let base = root.parent().expect("a base").to_path_buf();
    let jbase = base.join("journal");
    let journal = Journal::open(&jbase, &root);
    let mut entry_files = Vec::new();
    let (text, dir_name) = match data.split_first() {
        Some((_, rest))
            if std::str::from_utf8(rest).is_ok_and(|t| t.trim_start().starts_with('{')) =>
        {
            let t = std::str::from_utf8(rest)
                .unwrap_or_default()
                .replace("${ROOT}", &root.to_string_lossy());
            let name = serde_json::from_str::<Manifest>(&t)
                .ok()
                .filter(|m| m.id.bytes().all(|c| c.is_ascii_alphanumeric()) && !m.id.is_empty())
                .map_or("000000000001-garbage".to_string(), |m| {
                    format!("{:012}-{}", m.seq, m.id)
                });
            (t, name)
        }
        _ => decode(&root, &mut entry_files, data),
    };
    // The entry directory (only under a safe name: the test writes it).
    let safe = |n: &str| !n.contains('/') && !n.contains("..");
    let dir_name = if safe(&dir_name) {
        dir_name
    } else {
        "000000000001-unsafe".into()
    };
    let edir = journal.dir().join(&dir_name);
    std::fs::create_dir_all(&edir).expect("entry dir");
    std::fs::write(edir.join("manifest.json"), &text).expect("manifest");
    for (name, bytes) in &entry_files {
        if let Some(d) = name.strip_suffix('/') {
            let _ = std::fs::create_dir_all(edir.join(d));
        } else {
            let _ = std::fs::write(edir.join(name), bytes);
        }
    }
    // The raw bytes as a second, garbage entry.
    let g = journal.dir().join("000000000009-garbage0");
    std::fs::create_dir_all(&g).expect("entry dir");
    std::fs::write(g.join("manifest.json"), data).expect("manifest");

    let pre = snapshot(&base, Some(&jbase));
    let _ = journal.recover();
    let post = snapshot(&base, Some(&jbase));
    let parsed: Option<Manifest> = serde_json::from_str(&text).ok();
    let paths: std::collections::BTreeSet<&PathBuf> = pre.keys().chain(post.keys()).collect();
    for p in paths {
        if pre.get(p) == post.get(p) {
            continue;
        }
        let ok = parsed
            .as_ref()
            .is_some_and(|m| m.root == root && allowed(m, &root, p, &pre, &post));
        assert!(
            ok,
            "recovery changed {} ({:?} → {:?})",
            p.display(),
            pre.get(p).map(|x| x.0),
            post.get(p).map(|x| x.0)
        );
    }
    // Idempotent: a second run changes nothing.
    let _ = journal.recover();
    assert_eq!(
        snapshot(&base, Some(&jbase)),
        post,
        "a second recovery changed files"
    );
    // Every file it restored holds a stamp of the manifest.
    if let Some(m) = &parsed {
        for f in &m.files {
            if pre.get(&f.path) != post.get(&f.path) && f.path.starts_with(&root) {
                assert!(
                    stamp_matches(&f.path, &f.before),
                    "{} was changed to something other than its before-image",
                    f.path.display()
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    /// Replays the committed fuzz corpus (`fuzz/corpus/journal_recover`).
    #[test]
    fn fuzz_corpus_replays() {
        scry_testkit::replay_corpus("journal_recover", super::check_recover);
    }

    /// A quick sweep of generated inputs (the fuzzer goes further).
    #[test]
    fn generated_inputs_hold_the_properties() {
        let mut next = scry_testkit::xorshift(0x9e3779b97f4a7c15);
        for len in 0..200usize {
            let data: Vec<u8> = (0..len % 48).map(|_| next() as u8).collect();
            super::check_recover(&data);
        }
    }
}
