//! Finding the position a caller means when it names a symbol: pure text and
//! symbol-tree logic, no server I/O (the engine feeds it document symbols).
//!
//! What is found from a document's text is kept with it, so a question
//! asked again on an unchanged file finds its name in what is already
//! known: [`Declarations`] (a document's declarations, indexed by name,
//! built once per text with the converted symbols) and [`Scans`]
//! (occurrence scans, kept by the text scanned and the question).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use scry_lsp_session::{CharPos, LineIndex};
use scry_model::name::SymbolName;

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

/// Declarations matching `want` in document order, by walking every one:
/// what [`Declarations::matching`] must agree with (its tests' oracle).
#[cfg(test)]
fn match_declarations<'a>(decls: &'a [Declared], want: &SymbolName) -> Vec<&'a Declared> {
    matching(decls.iter(), want)
}

/// The declarations among `candidates` that match `want`, in document
/// order: exact name (or bare name of a decorated one), and when
/// qualified, the last qualifier among the tokens of the containers or of
/// the decorated name.
fn matching<'a>(
    candidates: impl Iterator<Item = &'a Declared>,
    want: &SymbolName,
) -> Vec<&'a Declared> {
    let mut out: Vec<&Declared> = candidates
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

/// A document's declarations, flattened, with an index by name (each
/// one's name and bare name): built once per document text, so matching a
/// name looks at the declarations of that name only.
#[derive(Debug, Default)]
pub struct Declarations {
    list: Vec<Declared>,
    by_name: HashMap<String, Vec<usize>>,
}

impl Declarations {
    pub fn new(list: Vec<Declared>) -> Declarations {
        let mut by_name: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, d) in list.iter().enumerate() {
            by_name.entry(d.name.clone()).or_default().push(i);
            let base = base_name(&d.name);
            if base != d.name {
                by_name.entry(base.to_string()).or_default().push(i);
            }
        }
        Declarations { list, by_name }
    }

    pub fn list(&self) -> &[Declared] {
        &self.list
    }

    /// The declarations matching `want` ([`matching`]), looking only at
    /// those indexed under its name. A declaration stands once under a
    /// key (its name and its bare name are two keys when they differ), in
    /// list order.
    pub fn matching(&self, want: &SymbolName) -> Vec<&Declared> {
        let Some(found) = self.by_name.get(&want.name) else {
            return Vec::new();
        };
        matching(found.iter().map(|&i| &self.list[i]), want)
    }
}

/// Where a textual match of the name sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum MatchKind {
    Code,
    /// In a string literal or a comment: tried last.
    Prose,
}

/// The asked name written in the file's text, whole word (in code or in
/// prose); not an LSP or SCIP occurrence (`scry_index::proto::Occurrence`):
/// nothing resolved it yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameMatch {
    pub pos: CharPos,
    pub kind: MatchKind,
    /// Written with a qualifier: the asked one (`Inventory::restock`), or
    /// any receiver when the asked name is qualified (`inv.restock`).
    pub qualified: bool,
    /// Written with exactly the asked qualifier (`self.span` for `self.span`).
    pub exact: bool,
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

/// Where strings and a line comment sit on one line, computed in one pass:
/// `strings` are byte ranges inside string literals (sorted, disjoint),
/// `comment` the byte where a line comment starts, outside strings.
#[derive(Debug, Default)]
struct LineShape {
    strings: Vec<(usize, usize)>,
    comment: Option<usize>,
}

fn line_shape(line: &str, quote_single: bool) -> LineShape {
    let mut shape = LineShape::default();
    let first_non_ws = line.find(|c: char| !c.is_whitespace());
    let mut in_str: Option<(char, usize)> = None;
    let mut prev = '\0';
    for (i, c) in line.char_indices() {
        if let Some((q, from)) = in_str {
            if c == q && prev != '\\' {
                shape.strings.push((from, i + c.len_utf8()));
                in_str = None;
            }
        } else if c == '"' || c == '`' || (quote_single && c == '\'') {
            in_str = Some((c, i));
        } else if c == '/' && prev == '/' {
            shape.comment = Some(i - 1);
            break;
        } else if c == '#' && (i == 0 || prev.is_whitespace()) {
            shape.comment = Some(i);
            break;
        } else if c == '-' && prev == '-' && first_non_ws == Some(i - 1) {
            shape.comment = Some(i - 1);
            break;
        }
        prev = if prev == '\\' && c == '\\' { '\0' } else { c };
    }
    if let Some((_, from)) = in_str {
        shape.strings.push((from, line.len()));
    }
    shape
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

const SEPARATORS: [&str; 4] = ["::", "->", ".", "#"];

/// The separator and identifier written right before byte `start`
/// (`HirKind::Literal` -> (`HirKind`, `::`), `self.span` -> (`self`, `.`)).
fn qualifier_parts(line: &str, start: usize) -> Option<(&str, &'static str)> {
    let before = line[..start].trim_end();
    let sep = SEPARATORS.iter().find(|s| before.ends_with(**s))?;
    let rest = before[..before.len() - sep.len()].trim_end();
    let tok_start = rest
        .char_indices()
        .rev()
        .take_while(|(_, c)| is_ident_char(*c))
        .last()
        .map(|(i, _)| i)?;
    Some((&rest[tok_start..], sep))
}

/// The identifier written right before byte `start` across one `::`, `.`,
/// `->` or `#` separator, if any.
pub fn qualifier_before(line: &str, start: usize) -> Option<&str> {
    qualifier_parts(line, start).map(|(q, _)| q)
}

/// The form an occurrence is written in on its line, with at most one
/// qualifier: `hir::Literal`, `self.span`, `Literal`.
pub fn written_form(line: &str, start: usize, name: &str) -> String {
    match qualifier_parts(line, start) {
        Some((q, sep)) => format!("{q}{sep}{name}"),
        None => name.to_string(),
    }
}

/// The ordered, capped result of an occurrence scan.
#[derive(Debug, Clone, Default)]
pub struct NameMatches {
    /// At most `cap` occurrences, in the order they should be tried.
    pub list: Vec<NameMatch>,
    /// How many occurrences were found in all.
    pub total: usize,
    /// The scan stopped at the deadline: `list` covers the lines before it.
    pub timed_out: bool,
}

/// How many occurrence scans [`Scans`] keeps.
const SCANS_KEPT: usize = 32;

/// One kept scan: the text it scanned (held, so it is never another's),
/// the question, and what it found.
struct Scan {
    text: Arc<LineIndex>,
    want: SymbolName,
    line_hint: Option<u32>,
    quote_single: bool,
    cap: usize,
    found: Arc<NameMatches>,
}

/// Occurrence scans kept by the text they scanned (a session keeps one
/// `LineIndex` per document version: the same while the file is unchanged)
/// and the question (name, line, quoting, cap): a question asked again on
/// an unchanged file scans nothing. The [`SCANS_KEPT`] most recent; a scan
/// cut by its deadline is never kept.
#[derive(Default)]
pub struct Scans {
    kept: Mutex<VecDeque<Scan>>,
}

impl Scans {
    /// [`occurrences`], kept.
    pub fn occurrences(
        &self,
        index: &Arc<LineIndex>,
        want: &SymbolName,
        line_hint: Option<u32>,
        quote_single: bool,
        cap: usize,
        deadline: Option<std::time::Instant>,
    ) -> Arc<NameMatches> {
        let same = |s: &Scan| {
            Arc::ptr_eq(&s.text, index)
                && s.want == *want
                && s.line_hint == line_hint
                && s.quote_single == quote_single
                && s.cap == cap
        };
        {
            let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(i) = kept.iter().position(same)
                && let Some(s) = kept.remove(i)
            {
                let found = s.found.clone();
                kept.push_front(s);
                return found;
            }
        }
        let found = Arc::new(occurrences(
            index,
            want,
            line_hint,
            quote_single,
            cap,
            deadline,
        ));
        if !found.timed_out {
            let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
            kept.push_front(Scan {
                text: index.clone(),
                want: want.clone(),
                line_hint,
                quote_single,
                cap,
                found: found.clone(),
            });
            kept.truncate(SCANS_KEPT);
        }
        found
    }
}

/// Whole-word occurrences of `name` in the text, in the order they should be
/// tried. With a `line_hint` (0-based): the occurrences on that line first
/// (code before strings/comments, qualified before bare, in column order),
/// then the others, nearest first. Without: code before strings/comments,
/// qualified uses first, then file order.
///
/// Linear in the text: each line holding the name is walked once (string
/// and comment spans are found in one pass, columns counted incrementally),
/// and at most `cap` occurrences are kept. `deadline` is checked every few
/// thousand lines or occurrences.
pub fn occurrences(
    index: &LineIndex,
    want: &SymbolName,
    line_hint: Option<u32>,
    quote_single: bool,
    cap: usize,
    deadline: Option<std::time::Instant>,
) -> NameMatches {
    let name = want.name.as_str();
    let mut res = NameMatches::default();
    if name.is_empty() {
        return res;
    }
    let past = |ticks: usize| {
        ticks.is_multiple_of(4096) && deadline.is_some_and(|d| std::time::Instant::now() >= d)
    };
    let mut all = Vec::new();
    let mut ticks = 0usize;
    'lines: for l in 0..index.line_count() {
        ticks += 1;
        if past(ticks) {
            res.timed_out = true;
            break;
        }
        let Some(line) = index.line(l) else { continue };
        if !line.contains(name) {
            continue;
        }
        let shape = line_shape(line, quote_single);
        let comment_line = is_comment_line(line.trim_start());
        let mut string_i = 0;
        let (mut counted_byte, mut counted_chars) = (0usize, 0u32);
        for start in whole_word_starts(line, name) {
            ticks += 1;
            if past(ticks) {
                res.timed_out = true;
                break 'lines;
            }
            while string_i < shape.strings.len() && shape.strings[string_i].1 <= start {
                string_i += 1;
            }
            let in_string = shape
                .strings
                .get(string_i)
                .is_some_and(|&(a, b)| a < start && start < b);
            let prose = comment_line || shape.comment.is_some_and(|c| start >= c) || in_string;
            let exact = want
                .qualifiers
                .last()
                .is_some_and(|q| qualifier_before(line, start) == Some(q.as_str()));
            let qualified =
                exact || (want.is_qualified() && line[..start].trim_end().ends_with('.'));
            counted_chars += line[counted_byte..start].chars().count() as u32;
            counted_byte = start;
            all.push(NameMatch {
                pos: CharPos {
                    line: l,
                    col: counted_chars,
                },
                kind: if prose {
                    MatchKind::Prose
                } else {
                    MatchKind::Code
                },
                qualified,
                exact,
            });
        }
    }
    res.total = all.len();
    let key = |o: &NameMatch| {
        let off_line = line_hint.is_some_and(|h| o.pos.line != h);
        let dist = line_hint.map_or(0, |h| o.pos.line.abs_diff(h));
        (off_line, o.kind, !o.exact, !o.qualified, dist, o.pos)
    };
    if all.len() > cap {
        all.select_nth_unstable_by_key(cap, key);
        all.truncate(cap);
    }
    all.sort_by_key(key);
    res.list = all;
    res
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
        // The index finds the same, in the same order.
        let indexed = Declarations::new(decls.clone());
        for name in [
            "Warehouse::restock",
            "restock",
            "Inventory.Grow",
            "Grow",
            "Nope::restock",
            "(*Inventory).Grow",
        ] {
            let want = SymbolName::parse(name);
            assert_eq!(
                indexed.matching(&want),
                match_declarations(&decls, &want),
                "{name}"
            );
        }
    }

    #[test]
    fn a_scan_is_kept_for_the_same_text_and_question_only() {
        let text = Arc::new(LineIndex::new("let total = 1;\nprint(total)\n"));
        let scans = Scans::default();
        let want = SymbolName::parse("total");
        let a = scans.occurrences(&text, &want, None, true, 8, None);
        let b = scans.occurrences(&text, &want, None, true, 8, None);
        assert!(Arc::ptr_eq(&a, &b), "kept");
        assert_eq!(a.total, 2);
        let c = scans.occurrences(&text, &want, Some(1), true, 8, None);
        assert!(!Arc::ptr_eq(&a, &c), "another line hint");
        // The same words in another text (another version) are scanned.
        let other = Arc::new(LineIndex::new("let total = 1;\nprint(total)\n"));
        let d = scans.occurrences(&other, &want, None, true, 8, None);
        assert!(!Arc::ptr_eq(&a, &d));
        assert_eq!(d.total, 2);
    }

    #[test]
    fn occurrences_put_code_first_and_skip_partial_words() {
        let text = "// total is summed\nlet total = 1;\nlet s = \"total\";\nlet totally = total + 1; # total\n";
        let idx = LineIndex::new(text);
        let occ = occurrences(&idx, &SymbolName::parse("total"), None, false, 100, None).list;
        let code: Vec<(u32, u32)> = occ
            .iter()
            .filter(|o| o.kind == MatchKind::Code)
            .map(|o| (o.pos.line, o.pos.col))
            .collect();
        assert_eq!(code, vec![(1, 4), (3, 14)]);
        assert_eq!(occ.len(), 5);
        assert!(occ[2..].iter().all(|o| o.kind == MatchKind::Prose));
    }

    #[test]
    fn occurrences_nearest_to_hint_and_qualified_first() {
        let text = "a.restock();\nrestock();\nInventory::restock();\n";
        let idx = LineIndex::new(text);
        let occ = occurrences(
            &idx,
            &SymbolName::parse("restock"),
            Some(1),
            false,
            100,
            None,
        )
        .list;
        assert_eq!(occ[0].pos.line, 1);
        let occ = occurrences(
            &idx,
            &SymbolName::parse("Inventory::restock"),
            None,
            false,
            100,
            None,
        )
        .list;
        assert!(occ[0].exact);
        assert_eq!(occ[0].pos.line, 2);
        assert!(occ[1].qualified && !occ[1].exact);
        assert!(occ.iter().find(|o| o.pos.line == 2).unwrap().qualified);
    }

    #[test]
    fn emoji_columns_are_characters() {
        let idx = LineIndex::new("let (l, w) = (\"📦 café\", total_weight(&inv));\n");
        let occ = occurrences(
            &idx,
            &SymbolName::parse("total_weight"),
            None,
            false,
            100,
            None,
        )
        .list;
        assert_eq!(occ.len(), 1);
        assert_eq!(occ[0].pos.col, 24);
        assert_eq!(occ[0].kind, MatchKind::Code);
    }

    #[test]
    fn finds_name_inside_a_full_range() {
        let idx = LineIndex::new("pub fn total_weight(x: u32) {}\n");
        let p = find_name_from(&idx, CharPos { line: 0, col: 0 }, "total_weight", 3);
        assert_eq!(p, CharPos { line: 0, col: 7 });
    }

    #[test]
    fn the_hinted_line_comes_first_code_before_prose() {
        let text = "fn span() {}\nlet s = \"span\"; self.span(); // span\nspan();\n";
        let idx = LineIndex::new(text);
        let occ = occurrences(&idx, &SymbolName::parse("span"), Some(1), false, 100, None);
        let got: Vec<(u32, u32, MatchKind)> = occ
            .list
            .iter()
            .map(|o| (o.pos.line, o.pos.col, o.kind))
            .collect();
        assert_eq!(got[0], (1, 21, MatchKind::Code));
        assert_eq!(got[1].0, 1);
        assert_eq!(got[2].0, 1);
        assert!(got[1..3].iter().all(|g| g.2 == MatchKind::Prose));
        assert_eq!(occ.total, 5);
    }

    #[test]
    fn receiver_and_path_forms_pick_their_occurrence() {
        let line = "HirKind::Literal(hir::Literal(ref bytes)) => self.span(), other.span()";
        let idx = LineIndex::new(line);
        let occ = occurrences(
            &idx,
            &SymbolName::parse("hir::Literal"),
            Some(0),
            false,
            100,
            None,
        );
        assert!(occ.list[0].exact);
        assert_eq!(occ.list[0].pos.col, 22);
        let occ = occurrences(
            &idx,
            &SymbolName::parse("other.span"),
            Some(0),
            false,
            100,
            None,
        );
        assert_eq!(
            occ.list[0].pos.col,
            line.find("other.span").unwrap() as u32 + 6
        );
        let b = line.find("hir::Literal").unwrap() + 5;
        assert_eq!(written_form(line, b, "Literal"), "hir::Literal");
        assert_eq!(written_form(line, 9, "Literal"), "HirKind::Literal");
        assert_eq!(written_form(line, 0, "HirKind"), "HirKind");
    }

    #[test]
    fn occurrences_are_capped_and_counted() {
        let line = "x ".repeat(10_000);
        let idx = LineIndex::new(&line);
        let occ = occurrences(&idx, &SymbolName::parse("x"), Some(0), false, 8, None);
        assert_eq!(occ.total, 10_000);
        assert_eq!(occ.list.len(), 8);
        assert_eq!(occ.list[0].pos.col, 0);
        assert_eq!(occ.list[7].pos.col, 14);
        // A deadline already past stops the scan.
        let past = std::time::Instant::now();
        let occ = occurrences(&idx, &SymbolName::parse("x"), Some(0), false, 8, Some(past));
        assert!(occ.timed_out);
    }
}
