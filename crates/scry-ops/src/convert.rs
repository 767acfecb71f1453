//! LSP results (parsed through `scry_lsp_session::types`) into the answer model:
//! ranges converted from the server's encoding to 1-based character
//! columns, with the source line attached.
//!
//! [`line_text`] is the one place a location's source line is made: a long
//! line is clipped to a window around the column (`…` on each cut side),
//! so an answer never carries a copy of a whole long line per location.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use scry_base::uri::uri_to_path;
use scry_lsp_session::types as lsp;
use scry_lsp_session::{Encoding, LineIndex, LspPos, Session};
use serde_json::Value;

use crate::resolve::{Declared, find_name_from};
use scry_model::error::OpError;
use scry_model::{CallEdge, CallItem, Loc, SymbolItem, SymbolNode};

/// Texts of files, as the server has them when open, else from disk (the
/// session keeps those while unchanged); read at most once per answer.
pub struct Files {
    session: Option<Session>,
    cache: HashMap<PathBuf, Option<Arc<LineIndex>>>,
}

impl Files {
    pub fn new(session: Option<Session>) -> Files {
        Files {
            session,
            cache: HashMap::new(),
        }
    }

    pub fn insert(&mut self, path: PathBuf, index: Arc<LineIndex>) {
        self.cache.insert(path, Some(index));
    }

    pub async fn get(&mut self, path: &Path) -> Option<Arc<LineIndex>> {
        if let Some(v) = self.cache.get(path) {
            return v.clone();
        }
        // Through the one safe reader (regular files under the size limit
        // only), off the runtime's workers: the session's text (open, or
        // kept while unchanged), else read.
        let found = match &self.session {
            Some(s) => s.text(path).await,
            None => scry_lsp_session::disk_async::read_within(
                path,
                scry_base::disk::DEFAULT_MAX_FILE_BYTES,
                None,
            )
            .await
            .ok()
            .and_then(|(b, _)| String::from_utf8(b).ok())
            .map(|t| Arc::new(LineIndex::new(t))),
        };
        self.cache.insert(path.to_path_buf(), found.clone());
        found
    }
}

pub fn malformed(session: &Session, method: &str, e: impl std::fmt::Display) -> OpError {
    OpError::MalformedResponse(
        scry_model::Fact::MalformedReply {
            server: session.name().to_string(),
            method: method.to_string(),
            detail: e.to_string(),
        }
        .message(),
    )
}

pub fn parse<T: serde::de::DeserializeOwned>(
    session: &Session,
    method: &str,
    v: Value,
) -> Result<T, OpError> {
    serde_json::from_value(v).map_err(|e| malformed(session, method, e))
}

/// A range in a file to a `Loc` (1-based, characters), with the line text.
pub async fn loc(files: &mut Files, enc: Encoding, path: PathBuf, range: &lsp::Range) -> Loc {
    let start = LspPos {
        line: range.start.line,
        character: range.start.character,
    };
    let end = LspPos {
        line: range.end.line,
        character: range.end.character,
    };
    match files.get(&path).await {
        Some(idx) => {
            let s = idx.from_lsp(start, enc);
            let e = idx.from_lsp(end, enc);
            Loc {
                text: line_text(&idx, s.line, s.col),
                path,
                line: s.line + 1,
                col: s.col + 1,
                end_line: e.line + 1,
                end_col: e.col + 1,
            }
        }
        None => Loc {
            path,
            line: start.line + 1,
            col: start.character + 1,
            end_line: end.line + 1,
            end_col: end.character + 1,
            text: None,
        },
    }
}

/// Most locations kept from one server reply; an answer that reaches it says
/// so.
pub const MAX_SERVER_LOCATIONS: usize = 10_000;

/// Most characters of a source line a location carries: a longer line is
/// clipped to this many around the column, with `…` on each cut side.
pub const LINE_WINDOW: u32 = 160;

/// The source line `line` (0-based) as a location at character column
/// `col` (0-based) shows it: whole when at most [`LINE_WINDOW`] characters,
/// else a window of that many characters holding the column, marked `…`
/// where cut. Constant work on ASCII lines (the index's offsets), one walk
/// of the line otherwise.
pub fn line_text(index: &LineIndex, line: u32, col: u32) -> Option<String> {
    let text = index.line(line)?;
    if text.len() <= LINE_WINDOW as usize {
        return Some(text.to_string());
    }
    let len = index.line_len_chars(line)?;
    if len <= LINE_WINDOW {
        return Some(text.to_string());
    }
    let col = col.min(len);
    // A third of the window before the column, the rest after it.
    let from = col.saturating_sub(LINE_WINDOW / 3).min(len - LINE_WINDOW);
    let to = from + LINE_WINDOW;
    let at = |c: u32| index.offset(scry_lsp_session::CharPos { line, col: c });
    let start = index.line_start(line)?;
    let (a, b) = (at(from) - start, at(to) - start);
    let mut out = String::with_capacity(b - a + 8);
    if from > 0 {
        out.push('…');
    }
    out.push_str(&text[a..b]);
    if to < len {
        out.push('…');
    }
    Some(out)
}

fn uri_path(uri: &lsp::Uri) -> Option<PathBuf> {
    uri_to_path(uri.as_ref())
}

/// Any of the location-shaped results: `Location`, `Location[]`,
/// `LocationLink[]`, null (`None`).
pub async fn locations(
    session: &Session,
    reply: Option<lsp::DefinitionResponse>,
    files: &mut Files,
) -> Vec<Loc> {
    let Some(resp) = reply else {
        return Vec::new();
    };
    let mut pairs: Vec<(PathBuf, lsp::Range)> = Vec::new();
    match resp {
        lsp::DefinitionResponse::Definition(lsp::Definition::Location(l)) => {
            pairs.extend(uri_path(&l.uri).map(|p| (p, l.range)));
        }
        lsp::DefinitionResponse::Definition(lsp::Definition::LocationList(ls)) => {
            pairs.extend(
                ls.into_iter()
                    .filter_map(|l| uri_path(&l.uri).map(|p| (p, l.range))),
            );
        }
        lsp::DefinitionResponse::DefinitionLinkList(links) => {
            pairs.extend(
                links
                    .into_iter()
                    .filter_map(|l| uri_path(&l.target_uri).map(|p| (p, l.target_selection_range))),
            );
        }
    }
    let enc = session.encoding();
    // Bounded whatever the server sent (the caller says so when the list
    // reached the cap: [`MAX_SERVER_LOCATIONS`]).
    pairs.truncate(MAX_SERVER_LOCATIONS);
    let mut out = Vec::with_capacity(pairs.len());
    for (p, r) in pairs {
        out.push(loc(files, enc, p, &r).await);
    }
    out
}

pub fn kind_name(k: lsp::SymbolKind) -> String {
    use lsp::SymbolKind as K;
    match k {
        K::File => "file",
        K::Module => "module",
        K::Namespace => "namespace",
        K::Package => "package",
        K::Class => "class",
        K::Method => "method",
        K::Property => "property",
        K::Field => "field",
        K::Constructor => "constructor",
        K::Enum => "enum",
        K::Interface => "interface",
        K::Function => "function",
        K::Variable => "variable",
        K::Constant => "constant",
        K::String => "string",
        K::Number => "number",
        K::Boolean => "boolean",
        K::Array => "array",
        K::Object => "object",
        K::Key => "key",
        K::Null => "null",
        K::EnumMember => "enum member",
        K::Struct => "struct",
        K::Event => "event",
        K::Operator => "operator",
        K::TypeParameter => "type parameter",
        K::Custom(n) => return format!("kind {n}"),
    }
    .to_string()
}

/// A document-symbol result as an outline tree plus a flat declaration list
/// (0-based positions) for symbol resolution.
pub fn document_symbols(
    session: &Session,
    v: Value,
    index: &LineIndex,
) -> Result<(Vec<SymbolNode>, Vec<Declared>), OpError> {
    if v.is_null() {
        return Ok((Vec::new(), Vec::new()));
    }
    let enc = session.encoding();
    let resp: lsp::DocumentSymbolResponse = parse(
        session,
        <lsp::DocumentSymbolRequest as lsp::Request>::METHOD.as_str(),
        v,
    )?;
    let pos = |p: &lsp::Position| {
        index.from_lsp(
            LspPos {
                line: p.line,
                character: p.character,
            },
            enc,
        )
    };
    let mut flat = Vec::new();
    let nodes = match resp {
        lsp::DocumentSymbolResponse::DocumentSymbolList(list) => {
            fn walk(
                list: &[lsp::DocumentSymbol],
                containers: &mut Vec<String>,
                flat: &mut Vec<Declared>,
                pos: &dyn Fn(&lsp::Position) -> scry_lsp_session::CharPos,
            ) -> Vec<SymbolNode> {
                let mut out = Vec::new();
                for s in list {
                    let sel = pos(&s.selection_range.start);
                    let end = pos(&s.range.end);
                    flat.push(Declared {
                        name: s.name.clone(),
                        kind: kind_name(s.kind),
                        pos: sel,
                        containers: containers.clone(),
                    });
                    containers.push(s.name.clone());
                    let children =
                        walk(s.children.as_deref().unwrap_or(&[]), containers, flat, pos);
                    containers.pop();
                    out.push(SymbolNode {
                        name: s.name.clone(),
                        kind: kind_name(s.kind),
                        detail: s.detail.clone().filter(|d| !d.trim().is_empty()),
                        line: sel.line + 1,
                        col: sel.col + 1,
                        end_line: end.line + 1,
                        children,
                    });
                }
                out
            }
            let mut containers = Vec::new();
            walk(&list, &mut containers, &mut flat, &pos)
        }
        lsp::DocumentSymbolResponse::SymbolInformationList(list) => {
            let mut out = Vec::new();
            for s in list {
                let base = &s.base_symbol_information;
                let start = pos(&s.location.range.start);
                let at = find_name_from(index, start, crate::resolve::base_name(&base.name), 5);
                let end = pos(&s.location.range.end);
                let containers: Vec<String> = base.container_name.iter().cloned().collect();
                flat.push(Declared {
                    name: base.name.clone(),
                    kind: kind_name(base.kind),
                    pos: at,
                    containers,
                });
                out.push(SymbolNode {
                    name: base.name.clone(),
                    kind: kind_name(base.kind),
                    detail: base.container_name.clone().map(|c| format!("in {c}")),
                    line: at.line + 1,
                    col: at.col + 1,
                    end_line: end.line + 1,
                    children: Vec::new(),
                });
            }
            out
        }
    };
    Ok((nodes, flat))
}

/// name, kind, container, file, range (absent for `LocationUriOnly`).
type RawSymbol = (
    String,
    lsp::SymbolKind,
    Option<String>,
    PathBuf,
    Option<lsp::Range>,
);

/// Workspace-symbol results (`None`: the server's `null`).
pub async fn workspace_symbols(
    session: &Session,
    resp: Option<lsp::WorkspaceSymbolResponse>,
    files: &mut Files,
) -> Vec<SymbolItem> {
    let enc = session.encoding();
    let mut raw: Vec<RawSymbol> = Vec::new();
    match resp {
        None => {}
        Some(lsp::WorkspaceSymbolResponse::SymbolInformationList(list)) => {
            for s in list {
                let b = s.base_symbol_information;
                if let Some(p) = uri_path(&s.location.uri) {
                    raw.push((b.name, b.kind, b.container_name, p, Some(s.location.range)));
                }
            }
        }
        Some(lsp::WorkspaceSymbolResponse::WorkspaceSymbolList(list)) => {
            for s in list {
                let b = s.base_symbol_information;
                let (uri, range) = match s.location {
                    lsp::WorkspaceSymbolLocation::Location(l) => (l.uri, Some(l.range)),
                    lsp::WorkspaceSymbolLocation::LocationUriOnly(l) => (l.uri, None),
                };
                if let Some(p) = uri_path(&uri) {
                    raw.push((b.name, b.kind, b.container_name, p, range));
                }
            }
        }
    }
    let mut out = Vec::with_capacity(raw.len());
    for (name, kind, container, path, range) in raw {
        let range = range.unwrap_or_default();
        let mut l = loc(files, enc, path.clone(), &range).await;
        // Ranges may cover the whole declaration: point at the name.
        if let Some(idx) = files.get(&path).await {
            let start = scry_lsp_session::CharPos {
                line: l.line - 1,
                col: l.col - 1,
            };
            let at = find_name_from(&idx, start, crate::resolve::base_name(&name), 5);
            l.line = at.line + 1;
            l.col = at.col + 1;
            l.text = idx.line(at.line).map(str::to_string);
        }
        out.push(SymbolItem {
            name,
            kind: kind_name(kind),
            container: container.filter(|c| !c.is_empty()),
            loc: l,
        });
    }
    out
}

/// Hover contents as plain text (markdown kept; the renderer normalises).
/// `MarkedString` is deprecated in LSP but still sent by servers.
#[allow(deprecated)]
pub fn hover_text(h: &lsp::Hover) -> String {
    fn marked(m: &lsp::MarkedString) -> String {
        match m {
            lsp::MarkedString::String(s) => s.clone(),
            lsp::MarkedString::MarkedStringWithLanguage(l) => {
                format!("```{}\n{}\n```", l.language, l.value)
            }
        }
    }
    match &h.contents {
        lsp::Contents::MarkupContent(m) => m.value.clone(),
        lsp::Contents::MarkedString(m) => marked(m),
        lsp::Contents::MarkedStringList(list) => list
            .iter()
            .map(marked)
            .collect::<Vec<_>>()
            .join("\n\n---\n\n"),
    }
}

pub async fn call_item(
    session: &Session,
    item: &lsp::CallHierarchyItem,
    files: &mut Files,
) -> Option<CallItem> {
    let path = uri_path(&item.uri)?;
    Some(CallItem {
        name: item.name.clone(),
        kind: kind_name(item.kind),
        detail: item.detail.clone().filter(|d| !d.trim().is_empty()),
        loc: loc(files, session.encoding(), path, &item.selection_range).await,
    })
}

/// Where the call sites of [`calls`] are.
#[derive(Debug, Clone, Copy)]
pub enum Sites<'a> {
    /// Incoming calls: in each caller's own file.
    Caller,
    /// Outgoing calls: in the asked item's file (none when unknown).
    Item(Option<&'a Path>),
}

/// Incoming or outgoing calls: each other item (the caller or the callee)
/// with its `fromRanges`, the call sites, in the file `sites` says.
pub async fn calls(
    session: &Session,
    list: Vec<(lsp::CallHierarchyItem, Vec<lsp::Range>)>,
    sites: Sites<'_>,
    files: &mut Files,
) -> Vec<CallEdge> {
    let enc = session.encoding();
    let mut out = Vec::new();
    for (other, ranges) in list {
        let Some(item) = call_item(session, &other, files).await else {
            continue;
        };
        let file = match sites {
            Sites::Caller => Some(item.loc.path.clone()),
            Sites::Item(p) => p.map(Path::to_path_buf),
        };
        let mut at = Vec::new();
        if let Some(f) = file {
            for r in &ranges {
                at.push(loc(files, enc, f.clone(), r).await);
            }
        }
        out.push(CallEdge { item, sites: at });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_lines_are_whole() {
        let ix = LineIndex::new("fn main() {}\nlet x = 1;\n");
        assert_eq!(line_text(&ix, 0, 3).as_deref(), Some("fn main() {}"));
        assert_eq!(line_text(&ix, 1, 0).as_deref(), Some("let x = 1;"));
        assert_eq!(line_text(&ix, 5, 0), None);
    }

    #[test]
    fn long_lines_are_clipped_around_the_column() {
        let line = "target;".repeat(150_000);
        let ix = LineIndex::new(format!("def target\nend\n{line}\n"));
        let col = 7 * 70_000;
        let t = line_text(&ix, 2, col).unwrap();
        assert!(t.starts_with('…') && t.ends_with('…'), "{t}");
        assert_eq!(t.chars().count(), LINE_WINDOW as usize + 2);
        // The column's word is inside the window.
        let inner: String = t.chars().skip(1).take(LINE_WINDOW as usize).collect();
        let at = (col - col.saturating_sub(LINE_WINDOW / 3)) as usize;
        assert!(inner[at..].starts_with("target;"), "{inner}");
        // At the start: cut on the right only; at the end: on the left only.
        let s = line_text(&ix, 2, 0).unwrap();
        assert!(!s.starts_with('…') && s.ends_with('…'));
        assert!(s.starts_with("target;target;"));
        let e = line_text(&ix, 2, 7 * 150_000 - 1).unwrap();
        assert!(e.starts_with('…') && !e.ends_with('…'));
        assert!(e.ends_with("target;"));
    }

    #[test]
    fn clipping_counts_characters_not_bytes() {
        let line = "é".repeat(1000) + "needle" + &"ü".repeat(1000);
        let ix = LineIndex::new(line.clone());
        let t = line_text(&ix, 0, 1000).unwrap();
        assert_eq!(t.chars().count(), LINE_WINDOW as usize + 2);
        assert!(t.contains("needle"), "{t}");
        // Exactly the window: whole.
        let w = "é".repeat(LINE_WINDOW as usize);
        let ix = LineIndex::new(w.clone());
        assert_eq!(line_text(&ix, 0, 10), Some(w));
    }
}
