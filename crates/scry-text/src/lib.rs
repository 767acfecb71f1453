//! Line index and exact position conversion for scry.
//!
//! scry talks to users in 1-based line / 1-based column, where a column counts
//! Unicode scalar values (`char`s). LSP servers talk in 0-based line / 0-based
//! `character`, where `character` counts code units of the negotiated position
//! encoding (UTF-8 bytes, UTF-16 code units, or UTF-32 = chars). This crate
//! converts between the two exactly. The API is 0-based everywhere
//! ([`CharPos`] columns are 0-based chars); callers add/subtract 1 at the edge.
//!
//! # Invariants
//!
//! * Lines end at `\n`, `\r\n` (one terminator) or a lone `\r` (LSP 3.17).
//!   `""` has one line; a text ending in a terminator has a final empty line.
//!   Concatenating every [`LineIndex::line`] with its
//!   [`LineIndex::line_terminator`] reproduces the text exactly.
//! * Every byte offset returned by this crate is a char boundary of the text
//!   and never lies between the `\r` and `\n` of a `\r\n`.
//! * For every valid position `p` (line `< line_count`, col `<=` the line's
//!   char length) and every encoding `e`:
//!   `from_lsp(to_lsp(p, e), e) == p` and `char_pos(offset(p)) == p`.
//! * Out-of-range inputs never panic: positions past the line end clamp to the
//!   line end (before the terminator), lines past the last line clamp to the
//!   end of the text, and offsets/`character`s landing inside a character
//!   (a UTF-8 sequence or a UTF-16 surrogate pair) round *down* to the start
//!   of that character.
//! * Conversions cost `O(log lines)` to find the line plus `O(line length)`
//!   inside it; pure-ASCII lines take an `O(1)` fast path.

use std::fmt;

/// An LSP position encoding (`PositionEncodingKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Encoding {
    /// `character` counts UTF-8 code units (bytes).
    Utf8,
    /// `character` counts UTF-16 code units (the LSP default).
    #[default]
    Utf16,
    /// `character` counts Unicode scalar values (chars).
    Utf32,
}

impl Encoding {
    /// Parses an LSP `PositionEncodingKind` string: `"utf-8"`, `"utf-16"` or `"utf-32"`.
    pub fn from_lsp(s: &str) -> Option<Encoding> {
        match s {
            "utf-8" => Some(Encoding::Utf8),
            "utf-16" => Some(Encoding::Utf16),
            "utf-32" => Some(Encoding::Utf32),
            _ => None,
        }
    }

    /// The LSP `PositionEncodingKind` string for this encoding.
    pub fn as_lsp(self) -> &'static str {
        match self {
            Encoding::Utf8 => "utf-8",
            Encoding::Utf16 => "utf-16",
            Encoding::Utf32 => "utf-32",
        }
    }

    /// Number of code units `c` occupies in this encoding.
    pub fn char_len(self, c: char) -> usize {
        match self {
            Encoding::Utf8 => c.len_utf8(),
            Encoding::Utf16 => c.len_utf16(),
            Encoding::Utf32 => 1,
        }
    }

    /// Number of code units `s` occupies in this encoding.
    pub fn str_len(self, s: &str) -> usize {
        match self {
            Encoding::Utf8 => s.len(),
            Encoding::Utf16 => s.chars().map(char::len_utf16).sum(),
            Encoding::Utf32 => s.chars().count(),
        }
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_lsp())
    }
}

/// An LSP position: 0-based line, 0-based `character` in some encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct LspPos {
    pub line: u32,
    pub character: u32,
}

impl LspPos {
    pub const fn new(line: u32, character: u32) -> LspPos {
        LspPos { line, character }
    }
}

/// A character position: 0-based line, 0-based column in chars (Unicode scalar values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct CharPos {
    pub line: u32,
    pub col: u32,
}

impl CharPos {
    pub const fn new(line: u32, col: u32) -> CharPos {
        CharPos { line, col }
    }
}

/// One line: `text[start..end]` is the content, `text[end..next start]` the terminator.
#[derive(Debug, Clone, Copy)]
struct Line {
    start: usize,
    end: usize,
    ascii: bool,
}

/// Owns the text and the byte ranges of its lines.
#[derive(Debug, Clone)]
pub struct LineIndex {
    text: String,
    lines: Vec<Line>,
}

/// Saturating `usize -> u32`.
fn sat_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl LineIndex {
    /// Indexes `text` in a single pass.
    pub fn new(text: impl Into<String>) -> LineIndex {
        let text = text.into();
        let bytes = text.as_bytes();
        let mut lines = Vec::new();
        let mut start = 0usize;
        while let Some(rel) = bytes[start..]
            .iter()
            .position(|&b| b == b'\n' || b == b'\r')
        {
            let end = start + rel;
            let next = if bytes[end] == b'\r' && bytes.get(end + 1) == Some(&b'\n') {
                end + 2
            } else {
                end + 1
            };
            lines.push(Line {
                start,
                end,
                ascii: bytes[start..end].is_ascii(),
            });
            start = next;
        }
        lines.push(Line {
            start,
            end: bytes.len(),
            ascii: bytes[start..].is_ascii(),
        });
        LineIndex { text, lines }
    }

    /// The indexed text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Consumes the index, returning the text.
    pub fn into_text(self) -> String {
        self.text
    }

    /// Number of lines. `""` has 1 line; `"a\n"` has 2 lines (the last empty), like LSP.
    pub fn line_count(&self) -> u32 {
        sat_u32(self.lines.len())
    }

    fn get(&self, line: u32) -> Option<&Line> {
        self.lines.get(usize::try_from(line).ok()?)
    }

    /// Line content without its terminator (`\n`, `\r\n` or lone `\r`); `None` past the end.
    pub fn line(&self, line: u32) -> Option<&str> {
        self.get(line).map(|l| &self.text[l.start..l.end])
    }

    /// The terminator of `line`: `"\n"`, `"\r\n"`, `"\r"`, or `""` for the last line;
    /// `None` past the end.
    pub fn line_terminator(&self, line: u32) -> Option<&str> {
        let idx = usize::try_from(line).ok()?;
        let l = self.lines.get(idx)?;
        let next = self.lines.get(idx + 1).map_or(l.end, |n| n.start);
        Some(&self.text[l.end..next])
    }

    /// Byte offset of the start of `line`, `None` past the end.
    pub fn line_start(&self, line: u32) -> Option<usize> {
        self.get(line).map(|l| l.start)
    }

    /// Byte offset of the end of `line`'s content (before its terminator), `None` past the end.
    pub fn line_end(&self, line: u32) -> Option<usize> {
        self.get(line).map(|l| l.end)
    }

    /// Length of `line`'s content in chars, `None` past the end.
    pub fn line_len_chars(&self, line: u32) -> Option<u32> {
        self.get(line).map(|l| self.char_len(l))
    }

    /// Length of `line`'s content in code units of `enc`, `None` past the end.
    pub fn line_len(&self, line: u32, enc: Encoding) -> Option<u32> {
        self.get(line).map(|l| {
            if l.ascii {
                sat_u32(l.end - l.start)
            } else {
                sat_u32(enc.str_len(&self.text[l.start..l.end]))
            }
        })
    }

    /// The char position of the end of the text.
    pub fn end(&self) -> CharPos {
        let last = self.lines.len() - 1;
        CharPos {
            line: sat_u32(last),
            col: self.char_len(&self.lines[last]),
        }
    }

    fn char_len(&self, l: &Line) -> u32 {
        if l.ascii {
            sat_u32(l.end - l.start)
        } else {
            sat_u32(self.text[l.start..l.end].chars().count())
        }
    }

    /// Finds the line containing `offset` (clamped to the text) and rounds the
    /// offset down to a char boundary inside the line content.
    fn locate(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        // lines[0].start == 0 <= offset, so the partition point is >= 1.
        let idx = self.lines.partition_point(|l| l.start <= offset) - 1;
        let l = &self.lines[idx];
        let mut o = offset.min(l.end);
        while !self.text.is_char_boundary(o) {
            o -= 1;
        }
        (idx, o)
    }

    /// Byte offset -> char position. Offsets past the end clamp to the end; an offset inside a
    /// multi-byte char or between `\r` and `\n` rounds down to the char/terminator start.
    pub fn char_pos(&self, offset: usize) -> CharPos {
        let (idx, o) = self.locate(offset);
        let l = &self.lines[idx];
        let col = if l.ascii {
            o - l.start
        } else {
            self.text[l.start..o].chars().count()
        };
        CharPos {
            line: sat_u32(idx),
            col: sat_u32(col),
        }
    }

    /// Char position -> byte offset. Line past the end clamps to end of text; column past the
    /// end of the line clamps to the line end (before the terminator).
    pub fn offset(&self, pos: CharPos) -> usize {
        let Some(l) = self.get(pos.line) else {
            return self.text.len();
        };
        let col = usize::try_from(pos.col).unwrap_or(usize::MAX);
        if l.ascii {
            return l.start + col.min(l.end - l.start);
        }
        self.text[l.start..l.end]
            .char_indices()
            .nth(col)
            .map_or(l.end, |(i, _)| l.start + i)
    }

    /// Code units of `enc` in `text[l.start..o]` (`o` a char boundary within the line).
    fn units(&self, l: &Line, o: usize, enc: Encoding) -> u32 {
        if l.ascii {
            sat_u32(o - l.start)
        } else {
            sat_u32(enc.str_len(&self.text[l.start..o]))
        }
    }

    /// Char position -> LSP position in `enc` (clamped as [`LineIndex::offset`]).
    pub fn to_lsp(&self, pos: CharPos, enc: Encoding) -> LspPos {
        self.offset_to_lsp(self.offset(pos), enc)
    }

    /// Resolves `pos` to `(byte offset, char col)` within its line, with clamping and
    /// rounding down; `None` when the line is past the end.
    fn resolve_lsp(&self, pos: LspPos, enc: Encoding) -> Option<(usize, u32)> {
        let l = self.get(pos.line)?;
        let character = usize::try_from(pos.character).unwrap_or(usize::MAX);
        if l.ascii {
            let col = character.min(l.end - l.start);
            return Some((l.start + col, sat_u32(col)));
        }
        let mut units = 0usize;
        let mut col = 0usize;
        for (i, c) in self.text[l.start..l.end].char_indices() {
            let next = units + enc.char_len(c);
            if next > character {
                return Some((l.start + i, sat_u32(col)));
            }
            units = next;
            col += 1;
        }
        Some((l.end, sat_u32(col)))
    }

    /// LSP position in `enc` -> char position. Clamps past line end / past last line;
    /// a `character` that lands inside a surrogate pair (utf-16) or inside a UTF-8 sequence
    /// (utf-8) rounds DOWN to the start of that character. Never panics on any input.
    pub fn from_lsp(&self, pos: LspPos, enc: Encoding) -> CharPos {
        match self.resolve_lsp(pos, enc) {
            Some((_, col)) => CharPos {
                line: pos.line,
                col,
            },
            None => self.end(),
        }
    }

    /// LSP position -> byte offset (same clamping/rounding as [`LineIndex::from_lsp`]).
    pub fn lsp_to_offset(&self, pos: LspPos, enc: Encoding) -> usize {
        match self.resolve_lsp(pos, enc) {
            Some((o, _)) => o,
            None => self.text.len(),
        }
    }

    /// Byte offset -> LSP position (same clamping/rounding as [`LineIndex::char_pos`]).
    pub fn offset_to_lsp(&self, offset: usize, enc: Encoding) -> LspPos {
        let (idx, o) = self.locate(offset);
        LspPos {
            line: sat_u32(idx),
            character: self.units(&self.lines[idx], o, enc),
        }
    }

    /// Converts an LSP position between encodings (clamped/rounded as [`LineIndex::from_lsp`],
    /// so it also normalises when `from == to`).
    pub fn convert_lsp(&self, pos: LspPos, from: Encoding, to: Encoding) -> LspPos {
        self.offset_to_lsp(self.lsp_to_offset(pos, from), to)
    }
}

impl From<String> for LineIndex {
    fn from(text: String) -> LineIndex {
        LineIndex::new(text)
    }
}

impl From<&str> for LineIndex {
    fn from(text: &str) -> LineIndex {
        LineIndex::new(text)
    }
}

#[cfg(test)]
mod tests;

#[cfg(any(test, feature = "fuzzing"))]
#[doc(hidden)]
pub mod fuzzing;
