//! One file → its [`FileIndex`]: definitions (from the language's query),
//! references (identifier nodes), implementations (`impl Trait for T`,
//! `extends`, `implements`) and the names its imports mention.
//!
//! Invariants: positions are 0-based, columns count characters (never
//! bytes); a reference is the text of an identifier node, so nothing inside
//! a comment or a string literal is ever one (interpolated code is code);
//! a name captured by several patterns is one definition (scry's own
//! patterns win over the grammar's tags, specific kinds over `variable`);
//! a tree with syntax errors is still indexed, and says so.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use streaming_iterator::StreamingIterator;
use tree_sitter::{Node, Parser, QueryCursor};

use crate::lang::Lang;

/// A definition. Lines and columns 0-based, columns in characters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Def {
    pub name: String,
    /// "function", "method", "struct", "class", "interface", "impl", …
    pub kind: String,
    /// The name's position.
    pub line: u32,
    pub col: u32,
    pub end_col: u32,
    /// The whole definition's lines.
    pub start_line: u32,
    pub end_line: u32,
    /// Index of the enclosing definition in the same file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<u32>,
    /// The enclosing type as written (a Go method's receiver, a C++
    /// `Class::method`), else the enclosing definition's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
    /// The source line holding the name, trimmed (clipped).
    pub signature: String,
    /// The doc comment (or docstring) above it, markers stripped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc: Option<String>,
}

/// An identifier occurrence: (name id in [`FileIndex::names`], line, col),
/// 0-based, columns in characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ref(pub u32, pub u32, pub u32);

impl Ref {
    pub fn name_id(self) -> u32 {
        self.0
    }
    pub fn line(self) -> u32 {
        self.1
    }
    pub fn col(self) -> u32 {
        self.2
    }
}

/// `name` implements or extends `parent`, at the position of `name`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Implementation {
    pub name: String,
    pub parent: String,
    pub line: u32,
    pub col: u32,
}

/// What the index holds for one file.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct FileIndex {
    /// The language id ("rust").
    pub language: String,
    pub lines: u32,
    pub defs: Vec<Def>,
    /// Distinct identifier names of the references.
    pub names: Vec<String>,
    pub refs: Vec<Ref>,
    /// The references that bind a local name (parameters, `let`,
    /// assignments in a function), in document order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub locals: Vec<Ref>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub impls: Vec<Implementation>,
    /// Identifier tokens of the import/use statements, sorted, distinct.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub imports: Vec<String>,
    /// The parse recovered from syntax errors.
    #[serde(default)]
    pub syntax_errors: bool,
}

impl FileIndex {
    pub fn name(&self, r: Ref) -> &str {
        self.names.get(r.0 as usize).map_or("", |s| s.as_str())
    }

    /// The id of `name` among the references, if it occurs.
    pub fn name_id(&self, name: &str) -> Option<u32> {
        self.names.iter().position(|n| n == name).map(|i| i as u32)
    }

    /// Enclosing definition names of `defs[i]`, outermost first.
    pub fn containers(&self, i: usize) -> Vec<String> {
        let mut out = Vec::new();
        let mut cur = self.defs.get(i).and_then(|d| d.parent);
        while let Some(p) = cur {
            let Some(d) = self.defs.get(p as usize) else {
                break;
            };
            out.push(d.name.clone());
            cur = d.parent;
        }
        out.reverse();
        if let Some(c) = self.defs.get(i).and_then(|d| d.container.clone())
            && out.last() != Some(&c)
        {
            out.push(c);
        }
        out
    }

    /// Rough heap size in bytes (for the memory figure).
    pub fn heap_bytes(&self) -> usize {
        let defs: usize = self
            .defs
            .iter()
            .map(|d| {
                std::mem::size_of::<Def>()
                    + d.name.len()
                    + d.kind.len()
                    + d.signature.len()
                    + d.doc.as_ref().map_or(0, |s| s.len())
                    + d.container.as_ref().map_or(0, |s| s.len())
            })
            .sum();
        let names: usize = self.names.iter().map(|n| n.len() + 24).sum();
        defs + names + self.refs.len() * std::mem::size_of::<Ref>()
    }
}

const MAX_SIGNATURE: usize = 200;
const MAX_DOC_LINES: usize = 12;

/// Byte → (line, character column) conversion, lines as LSP counts them:
/// `\n`, `\r\n` and a lone `\r` end a line (tree-sitter's rows count
/// `\n` only, so its points are never used for positions).
///
/// Linear over a file whatever its lines: whether a line is ASCII is known
/// from one pass over the text, and on other lines the character count is
/// carried on from the last conversion on the same line (references come
/// in document order), so a long line with many names is walked once, not
/// once per name.
struct Lines<'a> {
    text: &'a str,
    starts: Vec<usize>,
    /// Per line: holds a byte over 0x7f.
    wide: Vec<bool>,
    /// The last conversion: (row, byte, characters before byte).
    memo: std::cell::Cell<(usize, usize, u32)>,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Lines<'a> {
        let mut starts = vec![0];
        let mut wide = Vec::new();
        let mut w = false;
        let b = text.as_bytes();
        for (i, &c) in b.iter().enumerate() {
            if c == b'\n' || (c == b'\r' && b.get(i + 1) != Some(&b'\n')) {
                starts.push(i + 1);
                wide.push(w);
                w = false;
            } else if c > 0x7f {
                w = true;
            }
        }
        wide.push(w);
        Lines {
            text,
            starts,
            wide,
            memo: std::cell::Cell::new((usize::MAX, 0, 0)),
        }
    }

    /// The number of lines (a final terminator ends the last one).
    fn count(&self) -> usize {
        self.starts.len() - usize::from(self.text.ends_with(['\n', '\r']))
    }

    fn line(&self, row: usize) -> &'a str {
        let Some(&s) = self.starts.get(row) else {
            return "";
        };
        let e = self.starts.get(row + 1).copied().unwrap_or(self.text.len());
        self.text[s..e].trim_end_matches(['\n', '\r'])
    }

    /// The line holding byte `byte`.
    fn row(&self, byte: usize) -> usize {
        self.starts
            .partition_point(|&s| s <= byte)
            .saturating_sub(1)
    }

    /// (line, column in characters) of byte `byte`.
    fn pos(&self, byte: usize) -> (u32, u32) {
        let row = self.row(byte);
        let line = self.line(row);
        let mut b = byte.saturating_sub(self.starts[row]).min(line.len());
        if !self.wide.get(row).copied().unwrap_or(false) {
            return (row as u32, b as u32);
        }
        while b > 0 && !line.is_char_boundary(b) {
            b -= 1;
        }
        let (mrow, mbyte, mchars) = self.memo.get();
        let (from, before) = if mrow == row && mbyte <= b {
            (mbyte, mchars)
        } else {
            (0, 0)
        };
        let chars = before + line[from..b].chars().count() as u32;
        self.memo.set((row, b, chars));
        (row as u32, chars)
    }
}

/// At most `max` characters of `s` (bounded work on a long line).
fn clip(s: &str, max: usize) -> String {
    if s.char_indices().nth(max).is_none() {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max - 1).collect();
    out.push('…');
    out
}

/// Candidate definition before deduplication.
struct RawDef<'t> {
    node: Node<'t>,
    name: Node<'t>,
    kind: String,
    container: Option<String>,
    priority: (bool, bool, std::cmp::Reverse<usize>),
}

/// Kinds that lose to any other capture of the same name.
const GENERIC_KINDS: &[&str] = &["variable"];

/// Index one file's text.
pub fn index_text(lang: &Lang, parser: &mut Parser, text: &str) -> FileIndex {
    let mut out = FileIndex {
        language: lang.spec.id.clone(),
        ..FileIndex::default()
    };
    if parser.set_language(&lang.language).is_err() {
        return out;
    }
    let Some(tree) = parser.parse(text, None) else {
        return out;
    };
    let lines = Lines::new(text);
    out.lines = lines.count() as u32;
    let root = tree.root_node();
    out.syntax_errors = root.has_error();
    let src = text.as_bytes();
    let node_text = |n: Node| n.utf8_text(src).unwrap_or("");

    // Definitions and implementations from the query.
    let names = lang.query.capture_names();
    let mut raw: HashMap<usize, RawDef> = HashMap::new();
    let mut local_starts: std::collections::HashSet<usize> = std::collections::HashSet::new();
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(&lang.query, root, src);
    while let Some(m) = matches.next() {
        let mut def: Option<(Node, &str)> = None;
        let mut name: Option<Node> = None;
        let mut container: Option<Node> = None;
        let mut impl_name: Option<Node> = None;
        let mut impl_parent: Option<Node> = None;
        for c in m.captures() {
            let cap = names[c.index as usize];
            match cap {
                "name" => name = Some(c.node),
                "container" => container = Some(c.node),
                "impl.name" => impl_name = Some(c.node),
                "impl.parent" => impl_parent = Some(c.node),
                "local" => {
                    local_starts.insert(c.node.start_byte());
                }
                _ => {
                    if let Some(k) = cap.strip_prefix("definition.") {
                        def = Some((c.node, k));
                    }
                }
            }
        }
        if let (Some(n), Some(p)) = (impl_name, impl_parent) {
            let (line, col) = lines.pos(n.start_byte());
            out.impls.push(Implementation {
                name: node_text(n).to_string(),
                parent: node_text(p).to_string(),
                line,
                col,
            });
        }
        let (Some((node, kind)), Some(name)) = (def, name) else {
            continue;
        };
        if node_text(name).trim().is_empty() {
            continue;
        }
        let priority = (
            !GENERIC_KINDS.contains(&kind),
            m.pattern_index < lang.own_patterns,
            std::cmp::Reverse(m.pattern_index),
        );
        let cand = RawDef {
            node,
            name,
            kind: kind.to_string(),
            container: container.map(|c| node_text(c).to_string()),
            priority,
        };
        match raw.get(&name.start_byte()) {
            Some(old) if old.priority >= cand.priority => {}
            _ => {
                raw.insert(name.start_byte(), cand);
            }
        }
    }
    out.impls.sort_by_key(|a| (a.line, a.col));

    out.impls.dedup();

    let mut raw: Vec<RawDef> = raw.into_values().collect();
    raw.sort_by_key(|d| {
        (
            d.node.start_byte(),
            std::cmp::Reverse(d.node.end_byte()),
            d.name.start_byte(),
        )
    });
    let mut stack: Vec<(usize, usize)> = Vec::new(); // (index, end byte)
    for (i, d) in raw.iter().enumerate() {
        while let Some(&(_, end)) = stack.last() {
            if end <= d.node.start_byte() {
                stack.pop();
            } else {
                break;
            }
        }
        let parent = stack.last().map(|&(p, _)| p as u32);
        stack.push((i, d.node.end_byte()));
        let (line, col) = lines.pos(d.name.start_byte());
        let (end_line, end) = lines.pos(d.name.end_byte());
        let name = node_text(d.name).to_string();
        let end_col = if end_line == line {
            end
        } else {
            col + name.chars().count() as u32
        };
        let container = d
            .container
            .clone()
            .or_else(|| parent.map(|p| node_text(raw[p as usize].name).to_string()));
        out.defs.push(Def {
            name,
            kind: d.kind.clone(),
            line,
            col,
            end_col,
            start_line: lines.row(d.node.start_byte()) as u32,
            end_line: lines.row(d.node.end_byte()) as u32,
            parent,
            container,
            signature: clip(lines.line(line as usize).trim(), MAX_SIGNATURE),
            doc: doc_for(lang, d.node, &lines, src),
        });
    }

    // References: identifier nodes, and the identifier tokens of imports.
    let ident_kinds: Vec<u16> = lang
        .spec
        .identifiers
        .iter()
        .map(|k| lang.language.id_for_node_kind(k, true))
        .filter(|id| *id != 0)
        .collect();
    let import_kinds: Vec<u16> = lang
        .spec
        .imports
        .iter()
        .map(|k| lang.language.id_for_node_kind(k, true))
        .filter(|id| *id != 0)
        .collect();
    let mut interned: HashMap<&str, u32> = HashMap::new();
    let mut imports: Vec<String> = Vec::new();
    let mut walk = root.walk();
    'outer: loop {
        let node = walk.node();
        let kid = node.kind_id();
        let mut descend = true;
        if ident_kinds.contains(&kid) {
            descend = false;
            let t = node_text(node);
            if !t.is_empty() && t.chars().all(is_ident_char) {
                let next = interned.len() as u32;
                let id = *interned.entry(t).or_insert(next);
                let (line, col) = lines.pos(node.start_byte());
                let r = Ref(id, line, col);
                out.refs.push(r);
                if local_starts.contains(&node.start_byte()) {
                    out.locals.push(r);
                }
            }
        } else if import_kinds.contains(&kid) {
            imports.extend(
                node_text(node)
                    .split(|c: char| !is_ident_char(c))
                    .filter(|t| !t.is_empty())
                    .map(str::to_string),
            );
        }
        if descend && walk.goto_first_child() {
            continue;
        }
        loop {
            if walk.goto_next_sibling() {
                continue 'outer;
            }
            if !walk.goto_parent() {
                break 'outer;
            }
        }
    }
    let mut names = vec![String::new(); interned.len()];
    for (n, id) in interned {
        names[id as usize] = n.to_string();
    }
    out.names = names;
    imports.sort();
    imports.dedup();
    out.imports = imports;
    out
}

pub fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// The comment block right above a definition (attributes and decorators
/// between them skipped), else a docstring as the first statement of its
/// body.
fn doc_for(lang: &Lang, node: Node, lines: &Lines, src: &[u8]) -> Option<String> {
    let mut anchor = node;
    while let Some(p) = anchor.parent()
        && lang.spec.wrappers.iter().any(|w| w == p.kind())
    {
        anchor = p;
    }
    let mut next_row = anchor.start_position().row;
    let mut parts: Vec<String> = Vec::new();
    let mut sib = anchor.prev_sibling();
    while let Some(s) = sib {
        let kind = s.kind();
        if lang.spec.doc_skip.iter().any(|k| k == kind) {
            next_row = s.start_position().row;
            sib = s.prev_sibling();
            continue;
        }
        if !lang.spec.comments.iter().any(|k| k == kind) {
            break;
        }
        if end_row(s) + 1 < next_row {
            break;
        }
        // A trailing comment on a line of code belongs to that code.
        if let Some(before) = s.prev_sibling()
            && !lang.spec.comments.iter().any(|k| k == before.kind())
            && end_row(before) == s.start_position().row
        {
            break;
        }
        parts.push(s.utf8_text(src).unwrap_or("").trim_end().to_string());
        next_row = s.start_position().row;
        sib = s.prev_sibling();
    }
    parts.reverse();
    if parts.is_empty() {
        // A docstring: the body's first statement is a string.
        let body = node.child_by_field_name("body")?;
        let first = body.named_child(0)?;
        if first.kind() != "expression_statement" {
            return None;
        }
        let s = first.named_child(0)?;
        if s.kind() != "string" {
            return None;
        }
        parts.push(s.utf8_text(src).unwrap_or("").to_string());
    }
    let _ = lines;
    let doc = clean_doc(&parts.join("\n"));
    (!doc.is_empty()).then_some(doc)
}

/// The last row a node covers (a node ending with its newline ends on
/// the row before).
fn end_row(n: Node) -> usize {
    let e = n.end_position();
    if e.column == 0 && e.row > n.start_position().row {
        e.row - 1
    } else {
        e.row
    }
}

fn clean_doc(raw: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    for line in raw.lines() {
        let mut l = line.trim();
        for p in [
            "///", "//!", "//", "/**", "/*!", "/*", "*/", "#", "--", "\"\"\"", "'''", "*",
        ] {
            if let Some(rest) = l.strip_prefix(p) {
                l = rest;
                break;
            }
        }
        for s in ["*/", "\"\"\"", "'''"] {
            if let Some(rest) = l.strip_suffix(s) {
                l = rest;
            }
        }
        let l = l.trim();
        if l.is_empty() && out.last().is_none_or(|p: &String| p.is_empty()) {
            continue;
        }
        out.push(l.to_string());
    }
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    if out.len() > MAX_DOC_LINES {
        out.truncate(MAX_DOC_LINES);
        out.push("…".into());
    }
    out.join("\n")
}

#[cfg(test)]
mod tests;
