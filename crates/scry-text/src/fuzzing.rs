//! The checks of the `line_index` fuzz target (`fuzz/`), shared with the
//! unit test that replays the committed corpus on stable. Not an API: only
//! compiled for tests and with the `fuzzing` feature.
//!
//! One input = a text and a list of positions, offsets and `character`s
//! (valid, past the end, inside a character). Every invariant of the crate
//! documentation is asserted: lines and terminators reproduce the text;
//! offsets are char boundaries never between `\r` and `\n`; valid positions
//! round-trip through every encoding; nothing panics out of range.

use crate::{CharPos, Encoding, LineIndex, LspPos};

const ENCODINGS: [Encoding; 3] = [Encoding::Utf8, Encoding::Utf16, Encoding::Utf32];

/// Splits the input: the first two bytes give the text's length (so that
/// libFuzzer can grow the text and the probes independently), the text is
/// the input's bytes read as UTF-8 (invalid sequences replaced), the rest
/// are probes of 4 bytes each.
fn split(data: &[u8]) -> (String, &[u8]) {
    if data.len() < 2 {
        return (String::from_utf8_lossy(data).into_owned(), &[]);
    }
    let n = usize::from(u16::from_le_bytes([data[0], data[1]]));
    let rest = &data[2..];
    let n = n.min(rest.len());
    (String::from_utf8_lossy(&rest[..n]).into_owned(), &rest[n..])
}

fn assert_offset_ok(ix: &LineIndex, o: usize, what: &str) {
    let t = ix.text();
    assert!(o <= t.len(), "{what}: offset {o} past the end {}", t.len());
    assert!(
        t.is_char_boundary(o),
        "{what}: offset {o} not a char boundary"
    );
    let b = t.as_bytes();
    assert!(
        !(o > 0 && o < b.len() && b[o - 1] == b'\r' && b[o] == b'\n'),
        "{what}: offset {o} between \\r and \\n"
    );
}

/// Run every check on one input; panics on a violated invariant.
pub fn check_line_index(data: &[u8]) {
    let (text, probes) = split(data);
    let ix = LineIndex::new(text.as_str());
    let n = ix.line_count();
    assert!(n >= 1);

    // Lines + terminators reproduce the text; terminators are what they say.
    let mut joined = String::with_capacity(text.len());
    for l in 0..n {
        let line = ix.line(l).expect("line inside the count");
        let term = ix.line_terminator(l).expect("terminator inside the count");
        assert!(!line.contains(['\n', '\r']), "line {l} holds a terminator");
        assert!(matches!(term, "\n" | "\r\n" | "\r" | ""));
        assert_eq!(
            term.is_empty(),
            l + 1 == n,
            "only the last line is unterminated"
        );
        assert_eq!(ix.line_start(l), Some(joined.len()));
        joined.push_str(line);
        assert_eq!(ix.line_end(l), Some(joined.len()));
        joined.push_str(term);
        assert_eq!(ix.line_len_chars(l), Some(line.chars().count() as u32));
        for e in ENCODINGS {
            assert_eq!(ix.line_len(l, e), Some(e.str_len(line) as u32));
        }
    }
    assert_eq!(joined, text, "lines and terminators reproduce the text");
    assert!(ix.line(n).is_none() && ix.line_terminator(n).is_none());
    assert_eq!(ix.offset(ix.end()), text.len());

    // Char boundaries round-trip (the first 64 and the end: each costs a
    // scan of its line).
    {
        for (o, _) in text.char_indices().take(64).chain([(text.len(), ' ')]) {
            let p = ix.char_pos(o);
            let b = text.as_bytes();
            let mid_crlf = o > 0 && o < b.len() && b[o - 1] == b'\r' && b[o] == b'\n';
            if !mid_crlf {
                assert_eq!(ix.offset(p), o, "offset(char_pos({o}))");
            }
            for e in ENCODINGS {
                let lsp = ix.to_lsp(p, e);
                assert_eq!(ix.from_lsp(lsp, e), p, "from_lsp(to_lsp({p:?}, {e}))");
                assert_eq!(ix.offset_to_lsp(ix.offset(p), e), lsp);
            }
        }
    }

    // Probes: any numbers, valid or not.
    for chunk in probes.chunks(4) {
        let mut c = [0u8; 4];
        c[..chunk.len()].copy_from_slice(chunk);
        // Small lines and columns mostly, huge ones sometimes.
        let line = if c[0] & 0x80 != 0 {
            u32::MAX - u32::from(c[0] & 0x7f)
        } else {
            u32::from(c[0]) % (n + 2)
        };
        let col = if c[1] == 0xff {
            u32::MAX - u32::from(c[2])
        } else {
            u32::from(u16::from_le_bytes([c[1], c[2]]))
        };
        let enc = ENCODINGS[usize::from(c[3]) % 3];
        let to = ENCODINGS[usize::from(c[3] / 3) % 3];

        // char position -> offset -> char position: a fixed point after clamping.
        let cp = CharPos::new(line, col);
        let o = ix.offset(cp);
        assert_offset_ok(&ix, o, "offset");
        let clamped = ix.char_pos(o);
        assert_eq!(ix.offset(clamped), o);
        if line < n {
            let len = ix.line_len_chars(line).unwrap_or(0);
            assert_eq!(clamped, CharPos::new(line, col.min(len)));
        } else {
            assert_eq!(clamped, ix.end());
        }

        // LSP position -> char position / offset: clamped, rounded down, consistent.
        let lp = LspPos::new(line, col);
        let from = ix.from_lsp(lp, enc);
        let lo = ix.lsp_to_offset(lp, enc);
        assert_offset_ok(&ix, lo, "lsp_to_offset");
        assert_eq!(ix.offset(from), lo, "from_lsp and lsp_to_offset agree");
        let back = ix.offset_to_lsp(lo, enc);
        assert!(back.line == lp.line || line >= n);
        if line < n {
            assert!(back.character <= lp.character, "rounds down, never up");
        }
        // Normalising twice changes nothing; conversions compose.
        let conv = ix.convert_lsp(lp, enc, to);
        assert_eq!(ix.convert_lsp(conv, to, to), conv);
        assert_eq!(ix.convert_lsp(conv, to, enc), back);
        assert_eq!(ix.from_lsp(conv, to), ix.char_pos(lo));

        // Any byte offset.
        let raw = usize::from(u16::from_le_bytes([c[1], c[2]]));
        let p = ix.char_pos(raw);
        assert_offset_ok(&ix, ix.offset(p), "offset(char_pos)");
        let l = ix.offset_to_lsp(raw, enc);
        assert_eq!(ix.from_lsp(l, enc), p);
    }
}

#[cfg(test)]
mod tests {
    /// Replays the committed fuzz corpus (`fuzz/corpus/line_index`).
    #[test]
    fn fuzz_corpus_replays() {
        scry_testkit::replay_corpus("line_index", super::check_line_index);
    }
}
