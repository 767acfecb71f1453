//! Workspaces for the edit layer's tests (scry-edit's, and scry-ops's
//! through the engine): a temporary root with files and a directory
//! outside it holding a secret (what a hostile edit aims at), an LSP
//! `TextEdit` as JSON, every file under a directory with its bytes (to
//! prove a refused edit wrote nothing), and the fact an edit error says.
//!
//! Invariant: everything lives in a temporary directory dropped with the
//! [`Ws`]; paths are canonical (as scry's roots are).

use std::path::{Path, PathBuf};

use scry_model::error::OpError;
use scry_model::{EditFact, Fact};
use serde_json::{Value, json};
use tempfile::TempDir;

/// The one fact an edit error says (what a test matches; the sentence is
/// scry-render's, tested there). Panics on any other error.
pub fn edit_fact(err: &OpError) -> &EditFact {
    match err.fact() {
        Some(Fact::Edit(f)) => f,
        _ => panic!("not one edit fact: {err:?}"),
    }
}

/// A workspace root and a directory beside it, outside it.
pub struct Ws {
    _dir: TempDir,
    pub root: PathBuf,
    pub outside: PathBuf,
}

/// A workspace holding `files` (relative path, text), and `outside/secret.txt`
/// beside it.
pub fn ws(files: &[(&str, &str)]) -> Ws {
    let dir = tempfile::tempdir().unwrap();
    let base = scry_base::paths::canonical(dir.path()).unwrap();
    let root = base.join("ws");
    let outside = base.join("outside");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "secret\n").unwrap();
    for (name, text) in files {
        let p = root.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    Ws {
        _dir: dir,
        root,
        outside,
    }
}

/// An LSP `TextEdit` (0-based lines and UTF-16 columns).
pub fn edit(line: u32, col: u32, eline: u32, ecol: u32, text: &str) -> Value {
    json!({"range": {"start": {"line": line, "character": col}, "end": {"line": eline, "character": ecol}}, "newText": text})
}

/// Every file under `dir` with its bytes (a directory with none, a link
/// as `<link>`), sorted.
pub fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.symlink_metadata().unwrap().is_dir() {
                stack.push(p.clone());
                out.push((p, Vec::new()));
            } else if p.symlink_metadata().unwrap().is_file() {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            } else {
                out.push((p, b"<link>".to_vec()));
            }
        }
    }
    out.sort();
    out
}
