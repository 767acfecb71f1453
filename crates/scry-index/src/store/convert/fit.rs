//! Positions while converting: a SCIP range (in the document's encoding)
//! fitted to the file's lines as 0-based character columns, or refused.
//!
//! Invariant: a range is only handed out when both ends fall on the
//! file's lines and characters (a column inside a UTF-16 pair or a UTF-8
//! sequence, or past a line's end, does not fit) and its start is not
//! after its end; a document any of whose occurrences does not fit is
//! recorded unverified by [`super::convert`].

use crate::proto;

/// `(line, col, end_line, end_col)`, 0-based, characters.
pub(super) type Range = (u32, u32, u32, u32);
/// `(line, col)`, 0-based, characters.
pub(super) type Pos = (u32, u32);

/// One occurrence while converting a document.
pub(super) struct Fitted<'a> {
    pub(super) range: Range,
    pub(super) symbol: &'a str,
    pub(super) roles: u32,
    pub(super) enclosing: Option<Range>,
}

/// Column `c` in `enc` units of `line` as a character column.
fn char_col(line: &str, c: i32, enc: i32) -> Option<u32> {
    if c < 0 {
        return None;
    }
    let c = c as usize;
    match enc {
        // UTF-16 (also taken for "unspecified": LSP's default).
        0 | 2 => {
            let mut units = 0;
            for (i, ch) in line.chars().enumerate() {
                if units == c {
                    return Some(i as u32);
                }
                units += ch.len_utf16();
                if units > c {
                    return None;
                }
            }
            (units == c).then(|| line.chars().count() as u32)
        }
        1 => line
            .is_char_boundary(c)
            .then(|| line[..c].chars().count() as u32),
        3 => (c <= line.chars().count()).then_some(c as u32),
        _ => None,
    }
}

/// A SCIP range as `(line, col, end_line, end_col)` in characters against
/// the file's lines, `None` when it does not fit them.
fn fit(range: &[i32], lines: &[&str], enc: i32) -> Option<(u32, u32, u32, u32)> {
    let (sl, sc, el, ec) = match *range {
        [l, s, e] => (l, s, l, e),
        [sl, sc, el, ec] => (sl, sc, el, ec),
        _ => return None,
    };
    let line = |l: i32| -> Option<&str> { lines.get(usize::try_from(l).ok()?).copied() };
    let a = char_col(line(sl)?, sc, enc)?;
    let b = char_col(line(el)?, ec, enc)?;
    if (el, b) < (sl, a) {
        return None;
    }
    Some((sl as u32, a, el as u32, b))
}

/// A range over a quoted name (scip-typescript's `T['name']`) narrowed to
/// the name, where the live servers place it.
fn unquoted(r: Range, lines: &[&str]) -> Range {
    let (l, c, el, ec) = r;
    if l != el || ec < c + 3 {
        return r;
    }
    let Some(text) = lines.get(l as usize) else {
        return r;
    };
    let mut chars = text.chars().skip(c as usize).take((ec - c) as usize);
    let first = chars.next();
    let last = chars.last();
    match (first, last) {
        (Some(q @ ('\'' | '"' | '`')), Some(e)) if q == e => (l, c + 1, el, ec - 1),
        _ => r,
    }
}

/// A document's occurrences that name a symbol, fitted to its file's
/// `lines` (a quoted name narrowed to the name), each with its enclosing
/// range when given and it fits; `None` when one does not fit.
pub(super) fn occurrences<'a>(
    d: &proto::DocumentView<'a>,
    lines: &[&str],
) -> Option<Vec<Fitted<'a>>> {
    let mut fitted = Vec::with_capacity(d.named_occurrences);
    for o in d.occurrences() {
        if o.symbol.is_empty() {
            continue;
        }
        let range = unquoted(fit(o.range.as_slice(), lines, d.position_encoding)?, lines);
        let enclosing = if o.enclosing_range.is_empty() {
            None
        } else {
            fit(o.enclosing_range.as_slice(), lines, d.position_encoding)
        };
        fitted.push(Fitted {
            range,
            symbol: o.symbol,
            roles: o.symbol_roles as u32,
            enclosing,
        });
    }
    Some(fitted)
}
