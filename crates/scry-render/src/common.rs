//! Pieces shared by the text and JSON renderers: sorting, clipping, names,
//! and the parts of a text rendering
//! ([`Rendered`]).

use std::collections::HashSet;
use std::path::Path;

use scry_model::{Action, Answer, Body, Loc, SymbolNode};

use crate::display_path;

/// Source lines are clipped to this many characters (the `…` included).
pub(crate) const MAX_LINE_CHARS: usize = 200;

/// A text rendering's parts (the text renderer and the map's): header, body lines, and the "… N more" marker.
pub(crate) struct Rendered {
    pub(crate) header: String,
    pub(crate) body: Vec<String>,
    pub(crate) marker: Option<String>,
}

/// A location with its display path, ready to sort and print.
pub(crate) struct Placed<'a> {
    pub loc: &'a Loc,
    pub path: String,
    pub outside: bool,
    /// Index of the item the location came from.
    pub idx: usize,
}

pub(crate) fn is_inside(path: &Path, root: &Path) -> bool {
    !path.is_absolute() || scry_base::paths::is_under(path, root)
}

pub(crate) fn place<'a>(loc: &'a Loc, root: &Path, idx: usize) -> Placed<'a> {
    Placed {
        loc,
        idx,
        path: display_path(&loc.path, root),
        outside: !is_inside(&loc.path, root),
    }
}

/// Workspace files first (alphabetically), then outside paths; by line and
/// column within a file; duplicates (same path, line, col) dropped.
pub(crate) fn sort_dedup<'a, I>(items: I) -> Vec<Placed<'a>>
where
    I: IntoIterator<Item = Placed<'a>>,
{
    let mut v: Vec<Placed<'a>> = items.into_iter().collect();
    v.sort_by(|a, b| {
        (
            a.outside,
            &a.path,
            a.loc.line,
            a.loc.col,
            a.loc.end_line,
            a.loc.end_col,
        )
            .cmp(&(
                b.outside,
                &b.path,
                b.loc.line,
                b.loc.col,
                b.loc.end_line,
                b.loc.end_col,
            ))
    });
    v.dedup_by(|b, a| {
        a.loc.path == b.loc.path && a.loc.line == b.loc.line && a.loc.col == b.loc.col
    });
    v
}

/// How many locations were found in all: the engine's count when it kept
/// only the first of them (`Reason::NameMatchesCapped`), else `listed`.
pub(crate) fn found_total(answer: &Answer, listed: usize) -> usize {
    answer
        .notes
        .iter()
        .find_map(|n| match n {
            scry_model::Reason::NameMatchesCapped { found, .. } => Some(*found),
            _ => None,
        })
        .map_or(listed, |found| found.max(listed))
}

/// Whether the server listed more locations than were kept
/// (`Reason::ServerCapped`): the count is then a lower bound.
pub(crate) fn server_capped(answer: &Answer) -> bool {
    answer
        .notes
        .iter()
        .any(|n| matches!(n, scry_model::Reason::ServerCapped { .. }))
}

/// For a list that is capped (more than `max_locations`, or fewer kept than
/// found): the locations in the file the question was asked in first,
/// each part in its order (a cap never leaves the asked file out).
pub(crate) fn asked_file_first(placed: &mut [Placed], answer: &Answer, root: &Path, capped: bool) {
    if !capped {
        return;
    }
    let asked = match (&answer.asked_at, &answer.question.path) {
        (Some(a), _) => &a.loc.path,
        (None, Some(p)) => p,
        (None, None) => return,
    };
    let asked = display_path(&scry_base::paths::normalise(&root.join(asked)), root);
    placed.sort_by_key(|p| p.path != asked);
}

/// Number of distinct files among `items`.
pub(crate) fn distinct_files<'a, 'b: 'a>(items: impl IntoIterator<Item = &'a Placed<'b>>) -> usize {
    items
        .into_iter()
        .map(|p| p.path.as_str())
        .collect::<HashSet<_>>()
        .len()
}

/// A source line trimmed and clipped to [`MAX_LINE_CHARS`].
pub(crate) fn clip_line(text: &str) -> String {
    clip(text.trim(), MAX_LINE_CHARS)
}

/// `s` cut to at most `max` characters, ending in `…` when cut.
pub(crate) fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some(_) => {
            let keep = max.saturating_sub(1);
            let end = s.char_indices().nth(keep).map_or(s.len(), |(i, _)| i);
            format!("{}…", &s[..end])
        }
    }
}

pub(crate) fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Singular and plural noun for what a locations answer lists.
pub(crate) fn location_noun(action: Action) -> (&'static str, &'static str) {
    match action {
        Action::References => ("reference", "references"),
        Action::Definition => ("definition", "definitions"),
        Action::Declaration => ("declaration", "declarations"),
        Action::TypeDefinition => ("type definition", "type definitions"),
        Action::Implementation => ("implementation", "implementations"),
        _ => ("location", "locations"),
    }
}

/// The identifier at 1-based character column `col` of `text`.
fn word_at(text: &str, col: u32) -> Option<String> {
    let chars: Vec<char> = text.chars().collect();
    let is_word = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    let idx = (col as usize).checked_sub(1)?;
    if !chars.get(idx).is_some_and(|c| is_word(*c)) {
        return None;
    }
    let mut start = idx;
    while start > 0 && is_word(chars[start - 1]) {
        start -= 1;
    }
    let mut end = idx;
    while end < chars.len() && is_word(chars[end]) {
        end += 1;
    }
    Some(chars[start..end].iter().collect())
}

/// The name the question is about: the symbol asked for, the call-hierarchy
/// item, or the identifier under the asked position.
pub(crate) fn subject_name(answer: &Answer) -> Option<String> {
    if let Some(s) = &answer.question.symbol {
        return Some(s.clone());
    }
    if let Body::Calls {
        item: Some(item), ..
    } = &answer.body
    {
        return Some(item.name.clone());
    }
    let asked = answer.asked_at.as_ref()?;
    word_at(asked.loc.text.as_deref()?, asked.loc.col)
}

/// `src/a.rs:12:8` for where the question was asked (asked_at, else the
/// question's own path/line/column), without the `via`.
pub(crate) fn asked_position(answer: &Answer, root: &Path) -> Option<String> {
    if let Some(a) = &answer.asked_at {
        return Some(format!(
            "{}:{}:{}",
            display_path(&a.loc.path, root),
            a.loc.line,
            a.loc.col
        ));
    }
    let q = &answer.question;
    let path = display_path(q.path.as_ref()?, root);
    Some(match (q.line, q.column) {
        (Some(l), Some(c)) => format!("{path}:{l}:{c}"),
        (Some(l), None) => format!("{path}:{l}"),
        _ => path,
    })
}

/// Pre-order flattening of an outline, children sorted by position.
pub(crate) fn flatten_outline(symbols: &[SymbolNode]) -> Vec<(usize, &SymbolNode)> {
    fn walk<'a>(nodes: &'a [SymbolNode], depth: usize, out: &mut Vec<(usize, &'a SymbolNode)>) {
        let mut sorted: Vec<&SymbolNode> = nodes.iter().collect();
        sorted.sort_by_key(|n| (n.line, n.col));
        for n in sorted {
            out.push((depth, n));
            walk(&n.children, depth + 1, out);
        }
    }
    let mut out = Vec::new();
    walk(symbols, 0, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_counts_chars() {
        assert_eq!(clip("héllo", 5), "héllo");
        assert_eq!(clip("héllo!", 5), "héll…");
        assert_eq!(clip_line(&"é".repeat(300)).chars().count(), MAX_LINE_CHARS);
    }

    #[test]
    fn word_at_finds_identifiers() {
        assert_eq!(
            word_at("let w = total_weight(&inv);", 9).as_deref(),
            Some("total_weight")
        );
        assert_eq!(
            word_at("let w = total_weight(&inv);", 20).as_deref(),
            Some("total_weight")
        );
        assert_eq!(word_at("let w = total_weight(&inv);", 21), None);
        assert_eq!(word_at("🎉 ok", 3).as_deref(), Some("ok"));
        assert_eq!(word_at("x", 0), None);
    }
}
