//! The line index against text shapes that break naive column math: line
//! terminators (CRLF, lone CR, mixed), multi-byte and astral characters in
//! each encoding, positions inside a character (rounded down), clamping,
//! and the ASCII fast path agreeing with the slow one (proptest).

use super::*;
use proptest::prelude::*;

const ALL: [Encoding; 3] = [Encoding::Utf8, Encoding::Utf16, Encoding::Utf32];

fn cp(line: u32, col: u32) -> CharPos {
    CharPos::new(line, col)
}

fn lp(line: u32, character: u32) -> LspPos {
    LspPos::new(line, character)
}

fn lines_of(idx: &LineIndex) -> Vec<&str> {
    (0..idx.line_count())
        .map(|i| idx.line(i).unwrap())
        .collect()
}

// ---------------------------------------------------------------- encoding

#[test]
fn encoding_strings() {
    for enc in ALL {
        assert_eq!(Encoding::from_lsp(enc.as_lsp()), Some(enc));
        assert_eq!(enc.to_string(), enc.as_lsp());
    }
    assert_eq!(Encoding::from_lsp("utf-8"), Some(Encoding::Utf8));
    assert_eq!(Encoding::from_lsp("utf-16"), Some(Encoding::Utf16));
    assert_eq!(Encoding::from_lsp("utf-32"), Some(Encoding::Utf32));
    assert_eq!(Encoding::from_lsp("UTF-8"), None);
    assert_eq!(Encoding::from_lsp("utf8"), None);
    assert_eq!(Encoding::from_lsp(""), None);
    assert_eq!(Encoding::default(), Encoding::Utf16);
}

#[test]
fn encoding_lengths() {
    assert_eq!(Encoding::Utf8.char_len('😀'), 4);
    assert_eq!(Encoding::Utf16.char_len('😀'), 2);
    assert_eq!(Encoding::Utf32.char_len('😀'), 1);
    assert_eq!(Encoding::Utf8.str_len("a中😀"), 8);
    assert_eq!(Encoding::Utf16.str_len("a中😀"), 4);
    assert_eq!(Encoding::Utf32.str_len("a中😀"), 3);
}

// ---------------------------------------------------------------- line splitting

#[test]
fn empty_text() {
    let idx = LineIndex::new("");
    assert_eq!(idx.text(), "");
    assert_eq!(idx.line_count(), 1);
    assert_eq!(idx.line(0), Some(""));
    assert_eq!(idx.line(1), None);
    assert_eq!(idx.line_start(0), Some(0));
    assert_eq!(idx.line_start(1), None);
    assert_eq!(idx.line_terminator(0), Some(""));
    assert_eq!(idx.end(), cp(0, 0));
    assert_eq!(idx.char_pos(0), cp(0, 0));
    assert_eq!(idx.char_pos(100), cp(0, 0));
    assert_eq!(idx.offset(cp(0, 5)), 0);
    assert_eq!(idx.offset(cp(7, 5)), 0);
    for enc in ALL {
        assert_eq!(idx.to_lsp(cp(0, 0), enc), lp(0, 0));
        assert_eq!(idx.from_lsp(lp(0, 3), enc), cp(0, 0));
        assert_eq!(idx.from_lsp(lp(u32::MAX, u32::MAX), enc), cp(0, 0));
        assert_eq!(idx.lsp_to_offset(lp(3, 3), enc), 0);
        assert_eq!(idx.offset_to_lsp(9, enc), lp(0, 0));
    }
}

#[test]
fn no_trailing_newline() {
    let idx = LineIndex::new("ab\ncd");
    assert_eq!(idx.line_count(), 2);
    assert_eq!(lines_of(&idx), ["ab", "cd"]);
    assert_eq!(idx.line_start(1), Some(3));
    assert_eq!(idx.line_end(1), Some(5));
    assert_eq!(idx.line_terminator(0), Some("\n"));
    assert_eq!(idx.line_terminator(1), Some(""));
    assert_eq!(idx.char_pos(5), cp(1, 2));
    assert_eq!(idx.end(), cp(1, 2));
}

#[test]
fn trailing_newline() {
    let idx = LineIndex::new("ab\n");
    assert_eq!(idx.line_count(), 2);
    assert_eq!(lines_of(&idx), ["ab", ""]);
    assert_eq!(idx.line_start(1), Some(3));
    assert_eq!(idx.char_pos(2), cp(0, 2));
    assert_eq!(idx.char_pos(3), cp(1, 0));
    assert_eq!(idx.offset(cp(1, 0)), 3);
    assert_eq!(idx.offset(cp(1, 9)), 3);
    assert_eq!(idx.end(), cp(1, 0));

    let idx = LineIndex::new("\n");
    assert_eq!(lines_of(&idx), ["", ""]);
    let idx = LineIndex::new("\n\n");
    assert_eq!(lines_of(&idx), ["", "", ""]);
}

#[test]
fn crlf() {
    let idx = LineIndex::new("ab\r\ncd\r\n");
    assert_eq!(idx.line_count(), 3);
    assert_eq!(lines_of(&idx), ["ab", "cd", ""]);
    assert_eq!(idx.line_start(1), Some(4));
    assert_eq!(idx.line_start(2), Some(8));
    assert_eq!(idx.line_terminator(0), Some("\r\n"));
    // Offset 2 is the \r (terminator start), 3 is between \r and \n: rounds down.
    assert_eq!(idx.char_pos(2), cp(0, 2));
    assert_eq!(idx.char_pos(3), cp(0, 2));
    assert_eq!(idx.char_pos(4), cp(1, 0));
    // Column past the line end clamps before the terminator.
    assert_eq!(idx.offset(cp(0, 10)), 2);
    assert_eq!(idx.offset_to_lsp(3, Encoding::Utf16), lp(0, 2));
    for enc in ALL {
        assert_eq!(idx.from_lsp(lp(0, 3), enc), cp(0, 2));
        assert_eq!(idx.lsp_to_offset(lp(0, 3), enc), 2);
        assert_eq!(idx.lsp_to_offset(lp(1, 1), enc), 5);
    }
}

#[test]
fn lone_cr() {
    let idx = LineIndex::new("ab\rcd\r");
    assert_eq!(idx.line_count(), 3);
    assert_eq!(lines_of(&idx), ["ab", "cd", ""]);
    assert_eq!(idx.line_terminator(0), Some("\r"));
    assert_eq!(idx.char_pos(3), cp(1, 0));
    assert_eq!(idx.offset(cp(1, 1)), 4);

    // "\n\r" is two terminators, not one.
    let idx = LineIndex::new("a\n\rb");
    assert_eq!(lines_of(&idx), ["a", "", "b"]);
}

#[test]
fn mixed_terminators() {
    let text = "one\ntwo\r\nthree\rfour\r\n\r\n\n\rfive";
    let idx = LineIndex::new(text);
    assert_eq!(
        lines_of(&idx),
        ["one", "two", "three", "four", "", "", "", "five"]
    );
    let terms: Vec<_> = (0..idx.line_count())
        .map(|i| idx.line_terminator(i).unwrap())
        .collect();
    assert_eq!(terms, ["\n", "\r\n", "\r", "\r\n", "\r\n", "\n", "\r", ""]);
    let joined: String = (0..idx.line_count())
        .map(|i| {
            format!(
                "{}{}",
                idx.line(i).unwrap(),
                idx.line_terminator(i).unwrap()
            )
        })
        .collect();
    assert_eq!(joined, text);
    assert_eq!(idx.offset(cp(7, 2)), text.len() - 2);
    assert_eq!(idx.char_pos(text.find("four").unwrap() + 1), cp(3, 1));
}

// ---------------------------------------------------------------- unicode

#[test]
fn emoji_before_symbol() {
    let text = "fn main() {\n    let s = \"😀\"; let total = 1;\n}\n";
    let idx = LineIndex::new(text);
    let line = idx.line(1).unwrap();
    assert_eq!(line, "    let s = \"😀\"; let total = 1;");
    let byte_in_line = line.find("total").unwrap();
    assert_eq!(byte_in_line, 24);

    // Unindented line as in the spec: `let s = "😀"; let total = 1;`
    let idx2 = LineIndex::new("let s = \"😀\"; let total = 1;");
    let off = idx2.text().find("total").unwrap();
    assert_eq!(off, 20);
    let pos = idx2.char_pos(off);
    assert_eq!(pos, cp(0, 17)); // 1-based column 18 for the user
    assert_eq!(idx2.to_lsp(pos, Encoding::Utf32), lp(0, 17));
    assert_eq!(idx2.to_lsp(pos, Encoding::Utf16), lp(0, 18));
    assert_eq!(idx2.to_lsp(pos, Encoding::Utf8), lp(0, 20));
    assert_eq!(idx2.from_lsp(lp(0, 17), Encoding::Utf32), pos);
    assert_eq!(idx2.from_lsp(lp(0, 18), Encoding::Utf16), pos);
    assert_eq!(idx2.from_lsp(lp(0, 20), Encoding::Utf8), pos);
    assert_eq!(idx2.lsp_to_offset(lp(0, 18), Encoding::Utf16), off);
    assert_eq!(idx2.offset_to_lsp(off, Encoding::Utf16), lp(0, 18));
    assert_eq!(idx2.offset(pos), off);
    assert_eq!(
        idx2.convert_lsp(lp(0, 18), Encoding::Utf16, Encoding::Utf8),
        lp(0, 20)
    );

    // Same symbol on the indented line, line 1.
    let pos = idx.char_pos(idx.line_start(1).unwrap() + byte_in_line);
    assert_eq!(pos, cp(1, 21));
    assert_eq!(idx.to_lsp(pos, Encoding::Utf16), lp(1, 22));
    assert_eq!(idx.to_lsp(pos, Encoding::Utf8), lp(1, 24));
    assert_eq!(idx.to_lsp(pos, Encoding::Utf32), lp(1, 21));
    // Line length in each unit.
    assert_eq!(idx.line_len_chars(1), Some(31));
    assert_eq!(idx.line_len(1, Encoding::Utf32), Some(31));
    assert_eq!(idx.line_len(1, Encoding::Utf16), Some(32));
    assert_eq!(idx.line_len(1, Encoding::Utf8), Some(34));
}

#[test]
fn cjk() {
    let idx = LineIndex::new("// 中文注释\nlet 变量 = 1;");
    let off = idx.text().find('=').unwrap();
    let pos = idx.char_pos(off);
    assert_eq!(pos, cp(1, 7));
    assert_eq!(idx.to_lsp(pos, Encoding::Utf32), lp(1, 7));
    assert_eq!(idx.to_lsp(pos, Encoding::Utf16), lp(1, 7));
    assert_eq!(idx.to_lsp(pos, Encoding::Utf8), lp(1, 11));
    for enc in ALL {
        let l = idx.to_lsp(pos, enc);
        assert_eq!(idx.from_lsp(l, enc), pos);
        assert_eq!(idx.lsp_to_offset(l, enc), off);
    }
    // End of line 0: 7 chars, 7 utf-16 units, 3 + 4*3 = 15 bytes.
    assert_eq!(idx.to_lsp(cp(0, 99), Encoding::Utf8), lp(0, 15));
    assert_eq!(idx.to_lsp(cp(0, 99), Encoding::Utf16), lp(0, 7));
}

#[test]
fn utf16_inside_surrogate_pair_rounds_down() {
    let idx = LineIndex::new("a😀b");
    assert_eq!(idx.from_lsp(lp(0, 1), Encoding::Utf16), cp(0, 1));
    assert_eq!(idx.from_lsp(lp(0, 2), Encoding::Utf16), cp(0, 1)); // mid-pair
    assert_eq!(idx.from_lsp(lp(0, 3), Encoding::Utf16), cp(0, 2));
    assert_eq!(idx.from_lsp(lp(0, 4), Encoding::Utf16), cp(0, 3));
    assert_eq!(idx.lsp_to_offset(lp(0, 2), Encoding::Utf16), 1);
    assert_eq!(idx.lsp_to_offset(lp(0, 3), Encoding::Utf16), 5);
    assert_eq!(
        idx.convert_lsp(lp(0, 2), Encoding::Utf16, Encoding::Utf16),
        lp(0, 1)
    );
}

#[test]
fn utf8_inside_sequence_rounds_down() {
    let idx = LineIndex::new("a😀中é");
    // 'a'=0, '😀'=1..5, '中'=5..8, 'é'=8..10
    for (character, col) in [
        (0, 0),
        (1, 1),
        (2, 1),
        (3, 1),
        (4, 1),
        (5, 2),
        (6, 2),
        (7, 2),
        (8, 3),
        (9, 3),
        (10, 4),
        (11, 4),
    ] {
        assert_eq!(
            idx.from_lsp(lp(0, character), Encoding::Utf8),
            cp(0, col),
            "character {character}"
        );
    }
    // Byte offsets inside a char round down too.
    assert_eq!(idx.char_pos(3), cp(0, 1));
    assert_eq!(idx.char_pos(6), cp(0, 2));
    assert_eq!(idx.offset_to_lsp(7, Encoding::Utf16), lp(0, 3));
    assert_eq!(idx.offset_to_lsp(9, Encoding::Utf8), lp(0, 8));
}

#[test]
fn clamping() {
    let idx = LineIndex::new("héllo\nwörld\n😀x");
    // Past line end -> line end (before terminator).
    assert_eq!(idx.offset(cp(0, 50)), 6);
    assert_eq!(idx.to_lsp(cp(0, 50), Encoding::Utf16), lp(0, 5));
    assert_eq!(idx.to_lsp(cp(0, 50), Encoding::Utf8), lp(0, 6));
    for enc in ALL {
        assert_eq!(idx.from_lsp(lp(1, 50), enc), cp(1, 5));
        assert_eq!(idx.from_lsp(lp(1, u32::MAX), enc), cp(1, 5));
        assert_eq!(idx.lsp_to_offset(lp(1, 50), enc), 13);
    }
    // Past the last line -> end of text.
    let end = idx.text().len();
    assert_eq!(idx.end(), cp(2, 2));
    assert_eq!(idx.offset(cp(3, 0)), end);
    assert_eq!(idx.offset(cp(u32::MAX, u32::MAX)), end);
    assert_eq!(idx.char_pos(end + 10), cp(2, 2));
    assert_eq!(idx.char_pos(usize::MAX), cp(2, 2));
    assert_eq!(idx.to_lsp(cp(9, 0), Encoding::Utf16), lp(2, 3));
    assert_eq!(idx.to_lsp(cp(9, 0), Encoding::Utf8), lp(2, 5));
    for enc in ALL {
        assert_eq!(idx.from_lsp(lp(3, 0), enc), cp(2, 2));
        assert_eq!(idx.from_lsp(lp(u32::MAX, 0), enc), cp(2, 2));
        assert_eq!(idx.lsp_to_offset(lp(3, 0), enc), end);
        assert_eq!(idx.offset_to_lsp(usize::MAX, enc).line, 2);
    }
    assert_eq!(idx.line(3), None);
    assert_eq!(idx.line_len_chars(3), None);
    assert_eq!(idx.line_len(3, Encoding::Utf8), None);
    assert_eq!(idx.line_terminator(3), None);
    assert_eq!(idx.line_end(3), None);
}

#[test]
fn ascii_fast_path_matches_slow_path() {
    // Same content; the second has a non-ASCII line elsewhere so line 0 is still ASCII,
    // and the third forces the slow path on the line itself.
    let a = LineIndex::new("abc def\n");
    let b = LineIndex::new("abc def\né");
    for enc in ALL {
        for c in 0..10 {
            assert_eq!(a.from_lsp(lp(0, c), enc), b.from_lsp(lp(0, c), enc));
            assert_eq!(a.to_lsp(cp(0, c), enc), b.to_lsp(cp(0, c), enc));
        }
    }
    let c = LineIndex::new("abc déf");
    assert_eq!(c.from_lsp(lp(0, 6), Encoding::Utf8), cp(0, 5));
    assert_eq!(c.from_lsp(lp(0, 6), Encoding::Utf16), cp(0, 6));
}

#[test]
fn large_text_builds() {
    let line = "fn foo() { let x = \"中😀\"; }\n";
    let text = line.repeat(200_000);
    let idx = LineIndex::new(text.clone());
    assert_eq!(idx.line_count(), 200_001);
    // Col 23 is the `;` after `"中😀"`: one extra utf-16 unit for the emoji.
    let p = cp(123_456, 23);
    let off = idx.offset(p);
    assert_eq!(&idx.text()[off..off + 1], ";");
    assert_eq!(idx.char_pos(off), p);
    assert_eq!(idx.to_lsp(p, Encoding::Utf16), lp(123_456, 24));
    assert_eq!(idx.to_lsp(p, Encoding::Utf8), lp(123_456, 28));
    assert_eq!(idx.into_text(), text);
}

// ---------------------------------------------------------------- properties

/// A naive reference model: lines as Vec<Vec<char>> plus terminators.
fn model_lines(text: &str) -> Vec<(Vec<char>, String)> {
    let mut out = Vec::new();
    let mut cur = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => out.push((std::mem::take(&mut cur), "\n".to_string())),
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                    out.push((std::mem::take(&mut cur), "\r\n".to_string()));
                } else {
                    out.push((std::mem::take(&mut cur), "\r".to_string()));
                }
            }
            c => cur.push(c),
        }
    }
    out.push((cur, String::new()));
    out
}

fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(vec!["a", "b", "Z", " ", "_", "0"]).prop_map(String::from),
        2 => prop::sample::select(vec!["\n", "\r", "\r\n"]).prop_map(String::from),
        2 => prop::sample::select(vec!["é", "中", "😀", "𝕏", "ß", "\u{0}", "\u{7f}", "\u{80}", "\u{ffff}", "\u{10000}"])
            .prop_map(String::from),
        1 => any::<char>().prop_map(String::from),
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(piece(), 0..48).prop_map(|v| v.concat())
}

fn encoding() -> impl Strategy<Value = Encoding> {
    prop::sample::select(ALL.to_vec())
}

/// All valid char positions of the text.
fn valid_positions(idx: &LineIndex) -> Vec<CharPos> {
    let mut out = Vec::new();
    for line in 0..idx.line_count() {
        let n = idx.line(line).unwrap().chars().count() as u32;
        assert_eq!(idx.line_len_chars(line), Some(n));
        for col in 0..=n {
            out.push(cp(line, col));
        }
    }
    out
}

/// Offsets that are char boundaries and not between \r and \n.
fn is_valid_offset(text: &str, o: usize) -> bool {
    text.is_char_boundary(o)
        && !(o > 0 && text.as_bytes()[o - 1] == b'\r' && text.as_bytes().get(o) == Some(&b'\n'))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn prop_lsp_roundtrip(t in text()) {
        let idx = LineIndex::new(t.clone());
        for p in valid_positions(&idx) {
            for enc in ALL {
                let l = idx.to_lsp(p, enc);
                prop_assert_eq!(idx.from_lsp(l, enc), p, "enc {:?} lsp {:?}", enc, l);
                prop_assert_eq!(idx.lsp_to_offset(l, enc), idx.offset(p));
                prop_assert_eq!(idx.offset_to_lsp(idx.offset(p), enc), l);
            }
            prop_assert_eq!(idx.char_pos(idx.offset(p)), p);
        }
    }

    #[test]
    fn prop_offset_roundtrip(t in text()) {
        let idx = LineIndex::new(t.clone());
        for o in 0..=t.len() {
            let p = idx.char_pos(o);
            let back = idx.offset(p);
            if is_valid_offset(&t, o) {
                prop_assert_eq!(back, o, "offset {}", o);
            } else {
                // Rounds down to the char / terminator start.
                prop_assert!(back < o);
                prop_assert!(is_valid_offset(&t, back));
                prop_assert!(o - back <= 3);
            }
        }
        prop_assert_eq!(idx.char_pos(t.len() + 5), idx.end());
    }

    #[test]
    fn prop_from_lsp_total(
        t in text(),
        line in prop_oneof![0u32..8, any::<u32>()],
        character in prop_oneof![0u32..64, any::<u32>()],
        enc in encoding(),
    ) {
        let idx = LineIndex::new(t.clone());
        let pos = lp(line, character);
        let p = idx.from_lsp(pos, enc);
        let o = idx.lsp_to_offset(pos, enc);
        prop_assert!(o <= t.len());
        prop_assert!(is_valid_offset(&t, o));
        prop_assert_eq!(idx.offset(p), o);
        prop_assert_eq!(idx.char_pos(o), p);
        // Result is a valid position.
        prop_assert!(p.line < idx.line_count());
        prop_assert!(p.col <= idx.line_len_chars(p.line).unwrap());
        // Rounds down / clamps: never lands past the requested character.
        let back = idx.to_lsp(p, enc);
        if line < idx.line_count() {
            prop_assert_eq!(back.line, line);
            prop_assert!(back.character <= character);
        } else {
            prop_assert_eq!(p, idx.end());
        }
    }

    #[test]
    fn prop_lines_join(t in text()) {
        let idx = LineIndex::new(t.clone());
        let mut joined = String::new();
        for i in 0..idx.line_count() {
            let line = idx.line(i).unwrap();
            let term = idx.line_terminator(i).unwrap();
            prop_assert!(!line.contains(['\r', '\n']));
            prop_assert_eq!(idx.line_start(i), Some(joined.len()));
            if i + 1 < idx.line_count() {
                prop_assert!(matches!(term, "\n" | "\r\n" | "\r"));
            } else {
                prop_assert_eq!(term, "");
            }
            joined.push_str(line);
            joined.push_str(term);
        }
        prop_assert_eq!(joined, t);
        prop_assert_eq!(idx.line(idx.line_count()), None);
    }

    #[test]
    fn prop_matches_model(t in text(), enc in encoding()) {
        let idx = LineIndex::new(t.clone());
        let model = model_lines(&t);
        prop_assert_eq!(idx.line_count() as usize, model.len());
        for (i, (chars, term)) in model.iter().enumerate() {
            let i = i as u32;
            let s: String = chars.iter().collect();
            prop_assert_eq!(idx.line(i), Some(s.as_str()));
            prop_assert_eq!(idx.line_terminator(i), Some(term.as_str()));
            let mut units = 0u32;
            for (col, c) in chars.iter().enumerate() {
                prop_assert_eq!(idx.to_lsp(cp(i, col as u32), enc), lp(i, units));
                let w = enc.char_len(*c) as u32;
                // Every unit inside the char rounds down to it.
                for k in 0..w {
                    prop_assert_eq!(idx.from_lsp(lp(i, units + k), enc), cp(i, col as u32));
                }
                units += w;
            }
            prop_assert_eq!(idx.to_lsp(cp(i, chars.len() as u32), enc), lp(i, units));
            prop_assert_eq!(idx.line_len(i, enc), Some(units));
        }
    }
}
