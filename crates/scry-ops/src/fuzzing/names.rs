//! The checks of the `name_lookup` fuzz target (`fuzz/`), shared with the
//! unit test that replays the committed corpus on stable. Not an API.
//!
//! One input = flags, a name (bytes of the input, or an identifier of the
//! text, optionally qualified by the one before it) and a text. Over the
//! text's [`LineIndex`], the name lookups of [`crate::resolve`] and of
//! scry-syntax are asserted to be properties, not answers, so they hold
//! whatever the implementation:
//! - nothing panics, whatever the bytes and the name;
//! - [`occurrences`] keeps at most `cap`, says how many it found, puts the
//!   hinted line first, and each occurrence is on a line of the text, at a
//!   column inside it, where the name is written as a whole word (no
//!   identifier character either side); for an identifier name, every
//!   whole-word occurrence is counted; a deadline already past cuts the
//!   scan short without inventing anything;
//! - [`whole_word_starts`] gives char boundaries where the name is written
//!   as a whole word; the qualifier before one is an identifier written
//!   before it; [`find_name_from`] and [`first_identifier`] answer inside
//!   the text; [`base_name`] is part of what it was given;
//! - the syntactic index's references of the name sit where the text, as
//!   LSP counts lines, has the name.

use std::sync::Arc;

use scry_lsp_session::{CharPos, LineIndex};
use scry_model::name::SymbolName;

use crate::resolve::{
    base_name, find_name_from, first_identifier, ident_tokens, is_ident_char, occurrences,
    qualifier_before, whole_word_starts, written_form,
};

const CAPS: [usize; 8] = [0, 1, 2, 3, 5, 8, 64, 10_000];

struct Input {
    text: String,
    name: String,
    quote_single: bool,
    hint: Option<u32>,
    cap: usize,
    syntax: Option<&'static str>,
    aux: u8,
}

/// byte 0: flags (bit 0 single quotes are strings, bit 1 a line hint, bit 2
/// the name is an identifier of the text, bit 3 index the text
/// syntactically, bits 4..7 the cap); byte 1: the name's length in bytes,
/// or which identifier (bit 7: qualified by the one before); byte 2: the
/// hinted line and the language; the rest: the name's bytes and the text.
fn split(data: &[u8]) -> Option<Input> {
    let (&[flags, b1, b2], rest) = data.split_first_chunk::<3>()?;
    let (name, text) = if flags & 4 == 0 {
        let n = usize::from(b1).min(rest.len());
        (
            String::from_utf8_lossy(&rest[..n]).into_owned(),
            String::from_utf8_lossy(&rest[n..]).into_owned(),
        )
    } else {
        let text = String::from_utf8_lossy(rest).into_owned();
        let toks = ident_tokens(&text);
        let name = if toks.is_empty() {
            "x".to_string()
        } else {
            let k = usize::from(b1 & 0x7f) % toks.len();
            if b1 & 0x80 != 0 && k > 0 {
                format!("{}.{}", toks[k - 1], toks[k])
            } else {
                toks[k].to_string()
            }
        };
        (name, text)
    };
    let specs = scry_syntax::lang::specs();
    Some(Input {
        text,
        name,
        quote_single: flags & 1 != 0,
        hint: (flags & 2 != 0).then_some(u32::from(b2 % 16)),
        cap: CAPS[usize::from(flags >> 4) % CAPS.len()],
        syntax: (flags & 8 != 0).then(|| specs[usize::from(b2) % specs.len()].id.as_str()),
        aux: b2,
    })
}

/// The byte offset of character `col` of `line`, if inside (or at its end).
fn byte_at(line: &str, col: u32) -> Option<usize> {
    let col = col as usize;
    match line.char_indices().nth(col) {
        Some((b, _)) => Some(b),
        None => (line.chars().count() == col).then_some(line.len()),
    }
}

/// `name` at byte `s` of `line`, with no identifier character either side.
fn is_whole_word(line: &str, s: usize, name: &str) -> bool {
    line.is_char_boundary(s)
        && line[s..].starts_with(name)
        && !line[..s].chars().next_back().is_some_and(is_ident_char)
        && !line[s + name.len()..]
            .chars()
            .next()
            .is_some_and(is_ident_char)
}

/// Is `part` a sub-slice of `whole` (same memory)?
fn within(whole: &str, part: &str) -> bool {
    let (w, p) = (whole.as_ptr() as usize, part.as_ptr() as usize);
    p >= w && p + part.len() <= w + whole.len()
}

/// The `name_lookup` check.
pub fn check_names(data: &[u8]) {
    let Some(inp) = split(data) else {
        return;
    };
    let index = LineIndex::new(inp.text.as_str());
    let raw = inp.name.as_str();

    // Parsing the name.
    let want = SymbolName::parse(raw);
    assert!(within(raw, base_name(raw)), "base_name invents text");
    for t in ident_tokens(raw) {
        assert!(!t.is_empty() && t.chars().all(is_ident_char), "token {t:?}");
    }
    let name = want.name.as_str();

    // Occurrences: bounded, real, whole words, complete for identifiers.
    let occ = occurrences(&index, &want, inp.hint, inp.quote_single, inp.cap, None);
    assert!(!occ.timed_out, "timed out without a deadline");
    assert!(occ.list.len() <= inp.cap, "more than the cap");
    assert!(occ.list.len() <= occ.total, "more kept than found");
    if occ.total <= inp.cap {
        assert_eq!(occ.list.len(), occ.total, "dropped under the cap");
    }
    let mut seen = std::collections::HashSet::new();
    for o in &occ.list {
        assert!(seen.insert(o.pos), "{:?} twice", o.pos);
        let line = index
            .line(o.pos.line)
            .unwrap_or_else(|| panic!("{:?} past the last line", o.pos));
        let b = byte_at(line, o.pos.col).unwrap_or_else(|| panic!("{:?} past the line", o.pos));
        assert!(
            is_whole_word(line, b, name),
            "{:?}: {name:?} is not written there as a word: {line:?}",
            o.pos
        );
        assert!(!o.exact || o.qualified, "exact but not qualified");
    }
    // The hinted line first, then code before strings and comments.
    let on = inp.hint.map_or(0, |h| {
        occ.list.iter().take_while(|o| o.pos.line == h).count()
    });
    if let Some(h) = inp.hint {
        assert!(
            occ.list[on..].iter().all(|o| o.pos.line != h),
            "the hinted line's occurrences are not first"
        );
    }
    for part in [&occ.list[..on], &occ.list[on..]] {
        assert!(
            part.windows(2).all(|w| w[0].kind <= w[1].kind),
            "prose before code"
        );
    }
    if !name.is_empty() && name.chars().all(is_ident_char) {
        let naive: usize = (0..index.line_count())
            .filter_map(|l| index.line(l))
            .map(|line| {
                line.char_indices()
                    .filter(|&(s, _)| is_whole_word(line, s, name))
                    .count()
            })
            .sum();
        assert_eq!(
            occ.total, naive,
            "whole-word occurrences of {name:?} missed"
        );
    }
    let cut = occurrences(
        &index,
        &want,
        inp.hint,
        inp.quote_single,
        inp.cap,
        Some(std::time::Instant::now()),
    );
    assert!(cut.list.len() <= inp.cap && cut.total <= occ.total.max(cut.total));
    for o in &cut.list {
        let line = index.line(o.pos.line).expect("a line");
        let b = byte_at(line, o.pos.col).expect("a column");
        assert!(is_whole_word(line, b, name), "{:?} after a deadline", o.pos);
    }

    // Per-line helpers, with the name as given too.
    let lines = index.line_count().min(64);
    for l in 0..lines {
        let line = index.line(l).expect("a line");
        for n in [name, raw] {
            for s in whole_word_starts(line, n).take(64) {
                assert!(is_whole_word(line, s, n), "whole_word_starts {s} {n:?}");
                if let Some(q) = qualifier_before(line, s) {
                    assert!(
                        !q.is_empty() && q.chars().all(is_ident_char),
                        "qualifier {q:?}"
                    );
                    assert!(within(&line[..s], q), "qualifier not before the name");
                }
                assert!(written_form(line, s, n).ends_with(n), "written_form");
            }
        }
        if let Some(p) = first_identifier(&index, l) {
            assert_eq!(p.line, l);
            let c = line.chars().nth(p.col as usize).expect("inside the line");
            assert!(c.is_alphanumeric() || c == '_', "first_identifier {c:?}");
            assert!(
                !line
                    .chars()
                    .take(p.col as usize)
                    .any(|c| c.is_alphanumeric() || c == '_'),
                "an identifier before first_identifier"
            );
        }
    }
    let from = CharPos::new(inp.hint.unwrap_or(0), u32::from(inp.aux % 32));
    let found = find_name_from(&index, from, name, u32::from(inp.aux % 8));
    if found != from {
        // A column past the line's end counts as its end.
        let len = index.line_len_chars(from.line).unwrap_or(0);
        let start = CharPos::new(from.line, from.col.min(len));
        assert!(
            found >= start,
            "find_name_from went back: {found:?} < {start:?}"
        );
        let line = index.line(found.line).expect("found on a line");
        let b = byte_at(line, found.col).expect("found inside the line");
        assert!(is_whole_word(line, b, name), "find_name_from {found:?}");
    }

    // The syntactic index: its references of the name are where LSP's lines
    // have the name.
    if let Some(id) = inp.syntax {
        let file = scry_syntax::fuzzing::index(id, &inp.text);
        let snap = scry_syntax::Snapshot {
            files: [(std::path::PathBuf::from("f"), Arc::new(file))]
                .into_iter()
                .collect(),
            ..scry_syntax::Snapshot::default()
        };
        let file = snap.files.values().next().expect("one file");
        for o in scry_syntax::query::references(&snap, name) {
            let line = index
                .line(o.line)
                .unwrap_or_else(|| panic!("syntax reference {o:?} past the last line"));
            let b = byte_at(line, o.col)
                .unwrap_or_else(|| panic!("syntax reference {o:?} past the line {line:?}"));
            assert!(
                line[b..].starts_with(name),
                "syntax reference of {name:?} at {}:{} but the line is {line:?}",
                o.line,
                o.col
            );
            let _ = scry_syntax::query::name_at(file, o.line, o.col);
            let _ = scry_syntax::query::local_binding(file, name, o.line, o.col);
        }
    }
}

#[cfg(test)]
mod tests {
    /// Replays the committed fuzz corpus (`fuzz/corpus/name_lookup`).
    #[test]
    fn fuzz_corpus_replays() {
        scry_testkit::replay_corpus("name_lookup", super::check_names);
    }
}
