//! The checks of the `syntax_extract` fuzz target (`fuzz/`), shared with the
//! unit test that replays the committed corpus on stable. Not an API: only
//! compiled for tests and with the `fuzzing` feature.
//!
//! One input = a language (the first byte, modulo the languages of
//! `languages.json`) and a text (the other bytes read as UTF-8, invalid
//! sequences replaced). The text is indexed by [`index_text`] and every
//! invariant of the extractor is asserted, against the LSP line model
//! (lines end at `\n`, `\r\n` or a lone `\r`; columns count characters):
//! - nothing panics, whatever the bytes;
//! - `lines` is the number of lines (a final terminator ends the last one);
//! - a reference is a distinct name made of identifier characters, and the
//!   text at its line and column is that name;
//! - a definition's name is written at its line and column (`end_col` after
//!   it when the name is on one line), inside the definition's lines; its
//!   parent comes before it, so the containers terminate;
//! - locals are references; implementations sit inside the text; imports are
//!   sorted and distinct; signatures are clipped;
//! - the lookups on a file ([`name_at`], [`first_name_on`],
//!   [`local_binding`], [`references`]) find what the index holds and stay
//!   within it.

use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::Arc;

use tree_sitter::Parser;

use crate::extract::{FileIndex, index_text, is_ident_char};
use crate::index::Snapshot;
use crate::lang::{lang, specs};
use crate::query::{first_name_on, local_binding, name_at, references};

/// The lines of `text` as LSP counts them: `\n`, `\r\n` and a lone `\r`
/// end a line; the content excludes the terminator.
pub fn lsp_lines(text: &str) -> Vec<&str> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\n' || b[i] == b'\r' {
            out.push(&text[start..i]);
            i += if b[i] == b'\r' && b.get(i + 1) == Some(&b'\n') {
                2
            } else {
                1
            };
            start = i;
        } else {
            i += 1;
        }
    }
    out.push(&text[start..]);
    out
}

/// The text of `line` from character `col`, if the position is inside it.
fn at<'a>(lines: &[&'a str], line: u32, col: u32) -> Option<&'a str> {
    let l = lines.get(line as usize)?;
    if col == 0 {
        return Some(l);
    }
    match l.char_indices().nth(col as usize) {
        Some((b, _)) => Some(&l[b..]),
        None => (l.chars().count() == col as usize).then_some(""),
    }
}

/// Splits an input into a language id and a text.
pub fn split(data: &[u8]) -> Option<(&'static str, String)> {
    let (&first, rest) = data.split_first()?;
    let all = specs();
    let spec = &all[usize::from(first) % all.len()];
    Some((spec.id.as_str(), String::from_utf8_lossy(rest).into_owned()))
}

/// Indexes `text` as language `id` with a parser kept per thread.
pub fn index(id: &str, text: &str) -> FileIndex {
    thread_local! {
        static PARSER: RefCell<Parser> = RefCell::new(Parser::new());
    }
    let l = lang(id).unwrap_or_else(|| panic!("language {id} compiles"));
    PARSER.with(|p| index_text(&l, &mut p.borrow_mut(), text))
}

/// The `syntax_extract` check.
pub fn check_extract(data: &[u8]) {
    let Some((id, text)) = split(data) else {
        return;
    };
    if crate::lang::not_built_in().iter().any(|s| s.id == id) {
        return; // left out of this build (a `without-*` feature)
    }
    let file = index(id, &text);
    check_file_index(&text, &file);
}

/// Every invariant of one file's index over its text.
pub fn check_file_index(text: &str, file: &FileIndex) {
    let lines = lsp_lines(text);
    let want_lines = lines.len() - usize::from(text.ends_with(['\n', '\r']));
    assert_eq!(file.lines as usize, want_lines, "line count");

    // Names: distinct identifiers.
    let mut seen = std::collections::HashSet::new();
    for n in &file.names {
        assert!(!n.is_empty(), "an empty name");
        assert!(n.chars().all(is_ident_char), "name {n:?} is no identifier");
        assert!(seen.insert(n.as_str()), "name {n:?} interned twice");
    }
    for r in &file.refs {
        assert!((r.name_id() as usize) < file.names.len(), "ref {r:?}");
        let name = file.name(*r);
        let here = at(&lines, r.line(), r.col())
            .unwrap_or_else(|| panic!("ref {name:?} at {r:?} outside the text"));
        assert!(
            here.starts_with(name),
            "ref {name:?} at {}:{} but the text there is {:?}",
            r.line(),
            r.col(),
            here.chars().take(40).collect::<String>()
        );
        assert_eq!(
            name_at(file, r.line(), r.col()),
            Some(name),
            "name_at {r:?}"
        );
        assert!(
            first_name_on(file, r.line()).is_some(),
            "first_name_on {r:?}"
        );
        if let Some((l, c)) = local_binding(file, name, r.line(), r.col()) {
            assert!((l, c) <= (r.line(), r.col()), "a binding after its use");
            assert!(
                file.locals
                    .iter()
                    .any(|x| (x.line(), x.col()) == (l, c) && file.name(*x) == name),
                "local_binding {name:?} -> ({l}, {c}) is no local"
            );
        }
    }
    for x in &file.locals {
        assert!(file.refs.contains(x), "local {x:?} is no reference");
    }

    for (i, d) in file.defs.iter().enumerate() {
        assert!(!d.name.trim().is_empty(), "def {i}: empty name");
        assert!(
            d.start_line <= d.line && d.line <= d.end_line,
            "def {:?}: name line {} outside {}..={}",
            d.name,
            d.line,
            d.start_line,
            d.end_line
        );
        assert!(
            (d.end_line as usize) < lines.len(),
            "def {:?} end line",
            d.name
        );
        let here = at(&lines, d.line, d.col)
            .unwrap_or_else(|| panic!("def {:?} at {}:{} outside", d.name, d.line, d.col));
        let first = d.name.lines().next().unwrap_or("");
        assert!(
            here.starts_with(first),
            "def {:?} at {}:{} but the text there is {:?}",
            d.name,
            d.line,
            d.col,
            here.chars().take(40).collect::<String>()
        );
        assert!(d.col <= d.end_col, "def {:?}: end before start", d.name);
        if !d.name.contains(['\n', '\r']) {
            assert_eq!(
                d.end_col - d.col,
                d.name.chars().count() as u32,
                "def {:?}: end_col",
                d.name
            );
        }
        if let Some(p) = d.parent {
            assert!((p as usize) < i, "def {i}: parent {p} not before it");
        }
        let _ = file.containers(i);
        assert!(d.signature.chars().count() <= 200, "signature not clipped");
        assert!(!d.signature.contains(['\n']), "signature spans lines");
    }
    for m in &file.impls {
        assert!(
            at(&lines, m.line, m.col).is_some(),
            "impl {m:?} outside the text"
        );
    }
    assert!(
        file.imports.windows(2).all(|w| w[0] < w[1]),
        "imports not sorted and distinct"
    );

    // The snapshot-level lookup over this one file.
    let snap = Snapshot {
        root: PathBuf::from("/"),
        files: [(PathBuf::from("f"), Arc::new(file.clone()))]
            .into_iter()
            .collect(),
        ..Snapshot::default()
    };
    for n in file.names.iter().take(8) {
        let occ = references(&snap, n);
        assert!(!occ.is_empty(), "references({n:?}) finds nothing");
        assert!(occ.windows(2).all(|w| w[0] < w[1]), "references unsorted");
        for o in occ {
            let here = at(&lines, o.line, o.col).expect("a reference inside the text");
            assert!(here.starts_with(n.as_str()), "reference of {n:?} at {o:?}");
        }
    }
}

#[cfg(test)]
mod tests {
    /// Replays the committed fuzz corpus (`fuzz/corpus/syntax_extract`).
    #[test]
    fn fuzz_corpus_replays() {
        scry_testkit::replay_corpus("syntax_extract", super::check_extract);
    }

    #[test]
    fn lsp_lines_split_like_lsp() {
        assert_eq!(super::lsp_lines("a\r\nb\rc\n"), vec!["a", "b", "c", ""]);
        assert_eq!(super::lsp_lines(""), vec![""]);
    }
}
