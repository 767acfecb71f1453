//! Finding the position a caller means when it names a symbol: pure text and
//! symbol-tree logic, no server I/O (the engine feeds it document symbols).

use scry_text::{CharPos, LineIndex};

/// A symbol name split into qualifier segments and the name itself:
/// `Inventory::restock`, `Inventory.restock`, `mod/fn`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymbolName {
    pub qualifiers: Vec<String>,
    pub name: String,
}

impl SymbolName {
    pub fn parse(s: &str) -> SymbolName {
        let s = s.trim();
        let parts: Vec<String> = s
            .split("::")
            .flat_map(|p| p.split(['.', '/', '#']))
            .map(|p| p.trim().to_string())
            .filter(|p| !p.is_empty())
            .collect();
        match parts.split_last() {
            Some((name, quals)) => SymbolName {
                qualifiers: quals.to_vec(),
                name: name.clone(),
            },
            None => SymbolName {
                qualifiers: Vec::new(),
                name: s.to_string(),
            },
        }
    }

    pub fn is_qualified(&self) -> bool {
        !self.qualifiers.is_empty()
    }
}

pub fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// Identifier tokens of a string ("impl Shape for Square" -> [impl, Shape, for, Square]).
pub fn ident_tokens(s: &str) -> Vec<&str> {
    s.split(|c: char| !is_ident_char(c))
        .filter(|t| !t.is_empty())
        .collect()
}

/// The bare name of a decorated symbol name as servers report it:
/// `(*Inventory).Restock` -> `Restock`, `Inventory::restock` -> `restock`,
/// `restock(int)` -> `restock`, `restock` -> `restock`. Names that are not
/// an identifier at their end (`impl Shape for Square`) stay whole.
pub fn base_name(decorated: &str) -> &str {
    let mut s = decorated.trim();
    if let Some(i) = s.find('(')
        && i > 0
    {
        // "f(int, char)" -> "f", but "(*T).M" keeps going.
        s = &s[..i];
    }
    let cut = s
        .rfind("::")
        .map(|i| i + 2)
        .into_iter()
        .chain(s.rfind('.').map(|i| i + 1))
        .max()
        .unwrap_or(0);
    let tail = &s[cut..];
    if !tail.is_empty() && tail.chars().all(is_ident_char) {
        tail
    } else {
        decorated.trim()
    }
}

/// A declaration found in a document-symbol tree, flattened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declared {
    pub name: String,
    pub kind: String,
    /// Position of the name (selection range start), 0-based chars.
    pub pos: CharPos,
    /// Names of the enclosing symbols, outermost first.
    pub containers: Vec<String>,
}

impl Declared {
    pub fn container(&self) -> Option<String> {
        self.containers.last().cloned()
    }
}

/// Declarations matching `want` in document order: exact name (or bare name
/// of a decorated one), and when qualified, the last qualifier among the
/// tokens of the containers or of the decorated name.
pub fn match_declarations<'a>(decls: &'a [Declared], want: &SymbolName) -> Vec<&'a Declared> {
    let mut out: Vec<&Declared> = decls
        .iter()
        .filter(|d| d.name == want.name || base_name(&d.name) == want.name)
        .filter(|d| match want.qualifiers.last() {
            None => true,
            Some(q) => {
                let own_prefix = &d.name[..d.name.len() - base_name(&d.name).len()];
                ident_tokens(own_prefix).contains(&q.as_str())
                    || d.containers
                        .iter()
                        .any(|c| ident_tokens(c).contains(&q.as_str()))
            }
        })
        .collect();
    out.sort_by_key(|d| d.pos);
    out
}

/// Where a textual occurrence sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum OccurrenceKind {
    Code,
    /// In a string literal or a comment: tried last.
    Prose,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Occurrence {
    pub pos: CharPos,
    pub kind: OccurrenceKind,
    /// Preceded by one of the qualifiers (`Inventory::restock`, `inv.restock`).
    pub qualified: bool,
}

/// Byte offsets in `line` where `name` occurs as a whole word (not inside
/// a longer identifier).
pub fn whole_word_starts<'a>(line: &'a str, name: &'a str) -> impl Iterator<Item = usize> + 'a {
    line.match_indices(name).map(|(s, _)| s).filter(move |&s| {
        let e = s + name.len();
        let before = line[..s].chars().next_back();
        let after = line[e..].chars().next();
        !before.is_some_and(is_ident_char) && !after.is_some_and(is_ident_char)
    })
}

fn comment_start(line: &str, quote_single: bool) -> Option<usize> {
    // Byte index where a line comment starts, outside string literals.
    let mut in_str: Option<char> = None;
    let mut prev = '\0';
    for (i, c) in line.char_indices() {
        if let Some(q) = in_str {
            if c == q && prev != '\\' {
                in_str = None;
            }
        } else if c == '"' || c == '`' || (quote_single && c == '\'') {
            in_str = Some(c);
        } else if c == '/' && prev == '/' {
            return Some(i - 1);
        } else if c == '#' && (i == 0 || prev.is_whitespace()) {
            return Some(i);
        } else if c == '-' && prev == '-' && line[..i - 1].trim().is_empty() {
            return Some(i - 1);
        }
        prev = if prev == '\\' && c == '\\' { '\0' } else { c };
    }
    None
}

fn in_string(line: &str, byte: usize, quote_single: bool) -> bool {
    let mut in_str: Option<char> = None;
    let mut prev = '\0';
    for (i, c) in line.char_indices() {
        if i >= byte {
            break;
        }
        if let Some(q) = in_str {
            if c == q && prev != '\\' {
                in_str = None;
            }
        } else if c == '"' || c == '`' || (quote_single && c == '\'') {
            in_str = Some(c);
        }
        prev = if prev == '\\' && c == '\\' { '\0' } else { c };
    }
    in_str.is_some()
}

fn is_comment_line(trimmed: &str) -> bool {
    ["//", "/*", "*", "#", "--", ";", "\"\"\"", "'''"]
        .iter()
        .any(|p| trimmed.starts_with(p))
        && !trimmed.starts_with("#include")
        && !trimmed.starts_with("#define")
        && !trimmed.starts_with("#[")
        && !trimmed.starts_with("#!")
}

/// Whole-word occurrences of `name` in the text, in the order they should be
/// tried: code before strings/comments; qualified uses first; then nearest
/// to `line_hint` (0-based), else in file order.
pub fn occurrences(
    index: &LineIndex,
    want: &SymbolName,
    line_hint: Option<u32>,
    quote_single: bool,
) -> Vec<Occurrence> {
    let name = want.name.as_str();
    let mut out = Vec::new();
    if name.is_empty() {
        return out;
    }
    for l in 0..index.line_count() {
        let Some(line) = index.line(l) else { continue };
        if !line.contains(name) {
            continue;
        }
        let comment_at = comment_start(line, quote_single);
        let comment_line = is_comment_line(line.trim_start());
        for start in whole_word_starts(line, name) {
            let prose = comment_line
                || comment_at.is_some_and(|c| start >= c)
                || in_string(line, start, quote_single);
            let prefix = line[..start].trim_end_matches([':', '.', '>', '-']);
            let qualified = want
                .qualifiers
                .last()
                .is_some_and(|q| prefix.ends_with(q.as_str()))
                || (want.is_qualified() && line[..start].ends_with('.'));
            let col = line[..start].chars().count() as u32;
            out.push(Occurrence {
                pos: CharPos { line: l, col },
                kind: if prose {
                    OccurrenceKind::Prose
                } else {
                    OccurrenceKind::Code
                },
                qualified,
            });
        }
    }
    out.sort_by_key(|o| {
        let dist = line_hint.map_or(0, |h| o.pos.line.abs_diff(h));
        (o.kind, !o.qualified, dist, o.pos)
    });
    out
}

/// The position of the first identifier on a line (for a bare `line`).
pub fn first_identifier(index: &LineIndex, line: u32) -> Option<CharPos> {
    let text = index.line(line)?;
    let col = text.chars().position(|c| c.is_alphanumeric() || c == '_')?;
    Some(CharPos {
        line,
        col: col as u32,
    })
}

/// Find `name` as a whole word at or after `from` (within a few lines), for
/// servers whose symbol ranges cover the whole declaration.
pub fn find_name_from(index: &LineIndex, from: CharPos, name: &str, max_lines: u32) -> CharPos {
    let last = from.line.saturating_add(max_lines).min(index.line_count());
    for l in from.line..last {
        let Some(line) = index.line(l) else { break };
        let start_byte = if l == from.line {
            line.char_indices()
                .nth(from.col as usize)
                .map_or(line.len(), |(b, _)| b)
        } else {
            0
        };
        if let Some(s) = whole_word_starts(line, name).find(|&s| s >= start_byte) {
            return CharPos {
                line: l,
                col: line[..s].chars().count() as u32,
            };
        }
    }
    from
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_qualified_names() {
        let s = SymbolName::parse("Inventory::restock");
        assert_eq!(s.qualifiers, vec!["Inventory"]);
        assert_eq!(s.name, "restock");
        assert_eq!(SymbolName::parse("Class.method").qualifiers, vec!["Class"]);
        assert_eq!(SymbolName::parse("mod/fn").name, "fn");
        assert!(!SymbolName::parse("total").is_qualified());
    }

    #[test]
    fn base_names_of_decorated_symbols() {
        assert_eq!(base_name("(*Inventory).Restock"), "Restock");
        assert_eq!(base_name("Inventory::restock"), "restock");
        assert_eq!(base_name("restock(int)"), "restock");
        assert_eq!(base_name("impl Shape for Square"), "impl Shape for Square");
        assert_eq!(base_name("plain"), "plain");
    }

    fn decl(name: &str, line: u32, containers: &[&str]) -> Declared {
        Declared {
            name: name.into(),
            kind: "method".into(),
            pos: CharPos { line, col: 4 },
            containers: containers.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn qualified_declarations_match_containers() {
        let decls = vec![
            decl("restock", 10, &["impl Inventory"]),
            decl("restock", 30, &["impl Warehouse"]),
            decl("(*Inventory).Grow", 40, &[]),
        ];
        let m = match_declarations(&decls, &SymbolName::parse("Warehouse::restock"));
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].pos.line, 30);
        assert_eq!(
            match_declarations(&decls, &SymbolName::parse("restock")).len(),
            2
        );
        assert_eq!(
            match_declarations(&decls, &SymbolName::parse("Inventory.Grow")).len(),
            1
        );
        assert!(match_declarations(&decls, &SymbolName::parse("Nope::restock")).is_empty());
    }

    #[test]
    fn occurrences_put_code_first_and_skip_partial_words() {
        let text = "// total is summed\nlet total = 1;\nlet s = \"total\";\nlet totally = total + 1; # total\n";
        let idx = LineIndex::new(text);
        let occ = occurrences(&idx, &SymbolName::parse("total"), None, false);
        let code: Vec<(u32, u32)> = occ
            .iter()
            .filter(|o| o.kind == OccurrenceKind::Code)
            .map(|o| (o.pos.line, o.pos.col))
            .collect();
        assert_eq!(code, vec![(1, 4), (3, 14)]);
        assert_eq!(occ.len(), 5);
        assert!(occ[2..].iter().all(|o| o.kind == OccurrenceKind::Prose));
    }

    #[test]
    fn occurrences_nearest_to_hint_and_qualified_first() {
        let text = "a.restock();\nrestock();\nInventory::restock();\n";
        let idx = LineIndex::new(text);
        let occ = occurrences(&idx, &SymbolName::parse("restock"), Some(1), false);
        assert_eq!(occ[0].pos.line, 1);
        let occ = occurrences(&idx, &SymbolName::parse("Inventory::restock"), None, false);
        assert!(occ[0].qualified);
        assert_eq!(occ[0].pos.line, 0);
        assert!(occ.iter().find(|o| o.pos.line == 2).unwrap().qualified);
    }

    #[test]
    fn emoji_columns_are_characters() {
        let idx = LineIndex::new("let (l, w) = (\"📦 café\", total_weight(&inv));\n");
        let occ = occurrences(&idx, &SymbolName::parse("total_weight"), None, false);
        assert_eq!(occ.len(), 1);
        assert_eq!(occ[0].pos.col, 24);
        assert_eq!(occ[0].kind, OccurrenceKind::Code);
    }

    #[test]
    fn finds_name_inside_a_full_range() {
        let idx = LineIndex::new("pub fn total_weight(x: u32) {}\n");
        let p = find_name_from(&idx, CharPos { line: 0, col: 0 }, "total_weight", 3);
        assert_eq!(p, CharPos { line: 0, col: 7 });
    }
}
