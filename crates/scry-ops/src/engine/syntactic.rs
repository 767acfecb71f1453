//! Answers from the syntactic index (scry-syntax, tree-sitter) when no
//! language server can give them, and the `map` action.
//!
//! When it answers (decided in `order`, the one place of the answer order,
//! never instead of a server that can answer; it is prepared alongside the
//! server's request and dropped when the server answers):
//! - (a) no server is configured or installed for the file type (`NO_SERVER`):
//!   the note carries the workspace's message naming the server and command;
//! - (b) the server failed to start or crashed (`SERVER_CRASHED`): the note
//!   gives the reason;
//! - (c) the server is still starting or indexing and the call's deadline
//!   came (a timeout, or an empty answer while indexing): marked partial.
//!
//! Invariants: every such answer has `precision: "syntactic"`, the header
//! names the syntactic index, and a note says why and how far to trust it;
//! when the index has nothing either, the server's own error or empty answer
//! is returned unchanged (no silent empty answer); the positions come from
//! the index, the source lines from the file on disk.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use scry_syntax::query::{self as sq, DefHit};
use scry_syntax::{Scope, Snapshot, map::Focus};

use scry_lsp_session::LineIndex;

use super::lower::{Label, Unlabelled};
use super::navigate::empty_body;
use super::*;
use scry_model::limits::MAX_WORKSPACE_SYMBOLS;
use scry_model::name::SymbolName;

/// How the header names the answerer.
pub const LABEL: &str = "tree-sitter (syntactic)";
/// The languages scry-syntax has grammars for, as `map` names them.
const GRAMMAR_LANGUAGES: [&str; 12] = [
    "Rust",
    "Python",
    "Go",
    "TypeScript",
    "JavaScript",
    "C",
    "C++",
    "Bash",
    "Java",
    "Ruby",
    "C#",
    "PHP",
];
/// Most references by name an answer considers (a note says when more were
/// found): each becomes a location with its source line.
pub const MAX_REFERENCES: usize = 10_000;

/// Whether a path has a grammar in this build.
pub(crate) fn has_grammar(path: &Path) -> bool {
    scry_syntax::lang::spec_for(path).is_some_and(scry_syntax::lang::built_in)
}

impl Engine {
    /// The index, brought up to date with the disk (off the async runtime).
    pub(crate) async fn syntax_snapshot(&self) -> Arc<Snapshot> {
        self.syntax_scoped(Scope::default()).await
    }

    /// The index holding at least what `scope` wants, up to date with the
    /// disk (off the async runtime): a cold question parses only the files
    /// that can answer it.
    async fn syntax_scoped(&self, scope: Scope) -> Arc<Snapshot> {
        let ix = self.syntax.clone();
        match tokio::task::spawn_blocking(move || ix.refresh_scoped(&scope)).await {
            Ok(s) => s,
            Err(_) => Arc::new(Snapshot::default()),
        }
    }

    /// The asked file and its size, when it is over the syntactic index's
    /// limit (the index leaves it out).
    pub(crate) fn too_large_for_index(&self, asked: &AskedPath) -> Option<(PathBuf, u64)> {
        let path = self.resolve_asked(asked)?.ok()?;
        let len = std::fs::metadata(&path).ok()?.len();
        (len > scry_syntax::index::MAX_FILE_BYTES).then_some((path, len))
    }

    /// The server serving the question's file (or any running one), when it
    /// reports indexing.
    pub(crate) fn indexing_server(&self, asked: &AskedPath) -> Option<Reason> {
        let route = self
            .resolve_asked(asked)
            .and_then(Result::ok)
            .and_then(|p| self.ws.route(&p).ok());
        self.ws.running().into_iter().find_map(|s| {
            if let Some(r) = &route
                && (s.name() != r.spec.id || !s.has_folder(&r.root))
            {
                return None;
            }
            super::navigate::indexing(&s)
        })
    }

    /// The syntactic answer, or `None` when the index has nothing; why it
    /// answers is added when that is known (`Unlabelled::label`).
    pub(crate) async fn syntactic(
        &self,
        q: &Valid,
        asked: &AskedPath,
    ) -> Result<Option<Unlabelled>, OpError> {
        let root = self.ws.root().to_path_buf();
        let rel_path = match self.resolve_asked(asked) {
            Some(abs) => {
                let abs = abs?;
                Some(abs.strip_prefix(&root).unwrap_or(&abs).to_path_buf())
            }
            None => None,
        };
        // What the question needs: the whole index for workspace symbols,
        // else the asked file and the files holding the name.
        let scope = match q.action() {
            Action::WorkspaceSymbols => Scope::default(),
            Action::Symbols => Scope {
                file: rel_path.clone(),
                name: None,
            },
            _ => Scope {
                file: rel_path.clone(),
                name: q
                    .symbol()
                    .filter(|s| !s.trim().is_empty())
                    .map(|s| SymbolName::parse(s).name),
            },
        };
        let named = scope.name.is_some();
        let mut snap = self.syntax_scoped(scope).await;
        let mut lines = SourceLines::new(&root, self.ws.config().limits.max_file_bytes);
        let mut answer = Answer::new(q.action(), q.question(&root), empty_body(q.action()));
        let skipped = rel_path
            .as_ref()
            .and_then(|rel| snap.skipped.iter().find(|s| &s.path == rel))
            .map(|s| Reason::NotIndexed {
                path: root.join(&s.path),
                why: s.why.clone(),
            });
        let body = match q.action() {
            Action::Symbols => {
                let Some(rel) = &rel_path else {
                    return Ok(None);
                };
                let Some(file) = snap.files.get(rel) else {
                    let Some(reason) = skipped else {
                        return Ok(None);
                    };
                    // Said, not silently empty.
                    answer.server = Some(LABEL.to_string());
                    answer.precision = Some(Precision::Syntactic);
                    answer.body = Body::Outline {
                        path: root.join(rel),
                        symbols: Vec::new(),
                    };
                    answer.empty_reason = Some(reason);
                    return Ok(Some(Unlabelled {
                        answer,
                        label: Label::Said { at: 0 },
                    }));
                };
                Body::Outline {
                    path: root.join(rel),
                    symbols: outline(file),
                }
            }
            Action::WorkspaceSymbols => {
                let query = q.query().unwrap_or_default().to_string();
                let hits = sq::workspace_symbols(&snap, &query, MAX_WORKSPACE_SYMBOLS);
                Body::WorkspaceSymbols {
                    symbols: hits
                        .iter()
                        .map(|h| SymbolItem {
                            name: h.def.name.clone(),
                            kind: h.def.kind.clone(),
                            container: h.containers().last().cloned(),
                            loc: lines.def_loc(h),
                        })
                        .collect(),
                    query,
                }
            }
            _ => {
                let Some(name) = self.name_asked(q, &snap, rel_path.as_deref())? else {
                    return Ok(None);
                };
                if !named {
                    // Asked by position: the name is known now.
                    snap = self
                        .syntax_scoped(Scope {
                            file: rel_path.clone(),
                            name: Some(name.name.clone()),
                        })
                        .await;
                }
                match q.action() {
                    Action::References => {
                        let mut found = sq::references(&snap, &name.name);
                        if found.len() > MAX_REFERENCES {
                            // Those in the asked file first (then path
                            // order): the cap never leaves it out.
                            found.sort_by_key(|o| Some(o.path) != rel_path.as_deref());
                            answer.notes.push(Reason::NameMatchesCapped {
                                name: name.name.clone(),
                                found: found.len(),
                                kept: MAX_REFERENCES,
                            });
                        }
                        Body::Locations {
                            locations: found
                                .into_iter()
                                .take(MAX_REFERENCES)
                                .map(|o| lines.loc(o.path, o.line, o.col, o.col + o.len))
                                .collect(),
                        }
                    }
                    Action::Implementation => Body::Locations {
                        locations: sq::implementations(&snap, &name.name)
                            .into_iter()
                            .map(|(p, i)| {
                                let len = i.name.chars().count() as u32;
                                lines.loc(p, i.line, i.col, i.col + len)
                            })
                            .collect(),
                    },
                    _ if let Some((rel, l, c)) =
                        local_use(q, &snap, rel_path.as_deref(), &name) =>
                    {
                        // A use inside a function of a name bound there.
                        let len = name.name.chars().count() as u32;
                        let loc = lines.loc(&rel, l, c, c + len);
                        answer.notes.push(Reason::LocalBinding {
                            name: name.name.clone(),
                        });
                        if q.action() == Action::Hover {
                            let lang = snap.files.get(&rel).map_or("", |f| f.language.as_str());
                            Body::Hover {
                                text: format!(
                                    "```{lang}\n{}\n```\n\nlocal binding",
                                    loc.text.as_deref().unwrap_or_default().trim()
                                ),
                            }
                        } else {
                            Body::Locations {
                                locations: vec![loc],
                            }
                        }
                    }
                    _ => {
                        let hits =
                            self.ranked_definitions(&snap, &name, rel_path.as_deref(), q.line());
                        if q.action() == Action::Hover {
                            Body::Hover {
                                text: hits.first().map(|h| hover_text(h)).unwrap_or_default(),
                            }
                        } else {
                            Body::Locations {
                                locations: hits.iter().map(|h| lines.def_loc(h)).collect(),
                            }
                        }
                    }
                }
            }
        };
        if body.is_empty() {
            return Ok(None);
        }
        answer.body = body;
        answer.server = Some(LABEL.to_string());
        answer.precision = Some(Precision::Syntactic);
        let at = answer.notes.len();
        answer.notes.extend(skipped);
        if let Some(rel) = &rel_path
            && snap.files.get(rel).is_some_and(|f| f.syntax_errors)
        {
            answer.notes.push(Reason::SyntaxErrors {
                path: root.join(rel),
            });
        }
        Ok(Some(Unlabelled {
            answer,
            label: Label::Syntactic { at },
        }))
    }

    /// The name a positional question is about.
    fn name_asked(
        &self,
        q: &Valid,
        snap: &Snapshot,
        rel: Option<&Path>,
    ) -> Result<Option<SymbolName>, OpError> {
        if let Some(s) = q.symbol().filter(|s| !s.trim().is_empty()) {
            return Ok(Some(SymbolName::parse(s)));
        }
        let (Some(rel), Some(line)) = (rel, q.line()) else {
            return Ok(None);
        };
        let Some(file) = snap.files.get(rel) else {
            return Ok(None);
        };
        let name = match q.column() {
            Some(c) => sq::name_at(file, line - 1, c - 1),
            None => sq::first_name_on(file, line - 1),
        };
        Ok(name.map(SymbolName::parse))
    }

    /// Definitions of the name, ranked, with a line hint in the asking file
    /// first.
    fn ranked_definitions<'a>(
        &self,
        snap: &'a Snapshot,
        name: &SymbolName,
        rel: Option<&Path>,
        line: Option<u32>,
    ) -> Vec<DefHit<'a>> {
        let mut hits = sq::definitions(snap, &name.name, &name.qualifiers, rel);
        if let Some(l) = line {
            hits.sort_by_key(|h| !(h.tier == sq::Tier::SameFile && h.def.line + 1 == l));
        }
        hits
    }

    /// `map`: the repository map, biased to the given paths and symbols.
    /// `paths`, `symbols` and `budget` as [`scry_model::Valid::Map`] holds them.
    pub(crate) async fn map(
        &self,
        q: &Valid,
        paths: &[PathBuf],
        symbols: &[String],
        budget: usize,
    ) -> Result<Answer, OpError> {
        let root = self.ws.root().to_path_buf();
        let mut focus = Focus::default();
        let mut shown_focus = Vec::new();
        for p in paths {
            let abs = if p.is_absolute() {
                p.clone()
            } else {
                root.join(p)
            };
            let canon =
                scry_base::paths::canonical(&abs).map_err(|_| OpError::FileNotFound(p.clone()))?;
            if !scry_base::paths::is_under(&canon, &root) {
                return Err(OpError::OutsideWorkspace {
                    path: p.clone(),
                    root: root.clone(),
                });
            }
            // A directory or a file to focus on; a FIFO, socket or device
            // is refused as everywhere (`NOT_A_REGULAR_FILE`), never
            // opened. Its size does not matter: the map reads no file
            // the index left out.
            if !canon.is_dir() {
                scry_base::disk::check(&canon, u64::MAX)?;
            }
            let rel = canon.strip_prefix(&root).unwrap_or(&canon).to_path_buf();
            shown_focus.push(if rel.as_os_str().is_empty() {
                ".".to_string()
            } else {
                scry_base::paths::display(&rel, Path::new(""))
            });
            focus.paths.push(rel);
        }
        for s in symbols {
            shown_focus.push(format!("`{s}`"));
            focus.symbols.push(SymbolName::parse(s).name);
        }
        let snap = self.syntax_snapshot().await;
        let m = tokio::task::spawn_blocking({
            let snap = snap.clone();
            move || scry_syntax::map::map(&snap, &focus, budget)
        })
        .await
        .map_err(|e| {
            OpError::InvalidArgument(scry_model::Fact::MapFailed { why: e.to_string() }.message())
        })?;
        let report = RepoMapReport {
            focus: shown_focus,
            files: m
                .files
                .into_iter()
                .map(|f| MapFileEntry {
                    path: root.join(&f.path),
                    definitions: f
                        .defs
                        .into_iter()
                        .map(|d| MapEntry {
                            line: d.line,
                            kind: d.kind,
                            name: d.name,
                            signature: d.signature,
                        })
                        .collect(),
                })
                .collect(),
            total_files: m.total_files,
            omitted_files: m.omitted_files,
            omitted_definitions: m.omitted_defs,
            budget,
            skipped: snap.skipped.clone(),
        };
        let mut answer = Answer::new(q.action(), q.question(&root), Body::Map(report));
        answer.server = Some(LABEL.to_string());
        answer.precision = Some(Precision::Syntactic);
        if snap.files.is_empty() {
            answer.empty_reason = Some(Reason::NoGrammarFiles {
                languages: GRAMMAR_LANGUAGES.iter().map(|l| l.to_string()).collect(),
            });
        }
        Ok(answer)
    }

    /// What `status` says of the syntactic index (worded by scry-render).
    pub(crate) fn syntactic_status(&self) -> SyntacticStatus {
        let cache_bytes = self.syntax.cache_bytes();
        match self.syntax.last() {
            Some(s) => SyntacticStatus::Built {
                files: s.files.len(),
                lines: s.lines(),
                skipped: s.skipped.len(),
                cache_bytes,
            },
            None => match self.syntax.disk_summary() {
                Some((files, lines)) => SyntacticStatus::OnDisk {
                    files,
                    lines,
                    cache_bytes,
                },
                None => SyntacticStatus::NotBuilt { cache_bytes },
            },
        }
    }
}

/// Where the use asked about binds locally, when the question gives its
/// position (line and column, or line and the name): (file, line, col),
/// 0-based.
fn local_use(
    q: &Valid,
    snap: &Snapshot,
    rel: Option<&Path>,
    name: &SymbolName,
) -> Option<(PathBuf, u32, u32)> {
    if name.is_qualified() {
        return None;
    }
    let rel = rel?;
    let file = snap.files.get(rel)?;
    let line = q.line()? - 1;
    let col = match q.column() {
        Some(c) => c - 1,
        None => {
            let id = file.name_id(&name.name)?;
            file.refs
                .iter()
                .find(|r| r.name_id() == id && r.line() == line)?
                .col()
        }
    };
    let (l, c) = sq::local_binding(file, &name.name, line, col)?;
    Some((rel.to_path_buf(), l, c))
}

/// Hover text: the signature in a code block, then the doc comment.
fn hover_text(h: &DefHit) -> String {
    let mut s = format!("```{}\n{}\n```", h.file.language, h.def.signature);
    if let Some(doc) = &h.def.doc {
        s.push_str("\n\n");
        s.push_str(doc);
    }
    s
}

/// A file's definitions as an outline tree.
fn outline(file: &scry_syntax::FileIndex) -> Vec<SymbolNode> {
    fn node(
        file: &scry_syntax::FileIndex,
        i: usize,
        kids: &HashMap<u32, Vec<usize>>,
    ) -> SymbolNode {
        let d = &file.defs[i];
        SymbolNode {
            name: d.name.clone(),
            kind: d.kind.clone(),
            detail: None,
            line: d.line + 1,
            col: d.col + 1,
            end_line: d.end_line + 1,
            children: kids
                .get(&(i as u32))
                .map(|v| v.iter().map(|&k| node(file, k, kids)).collect())
                .unwrap_or_default(),
        }
    }
    let mut kids: HashMap<u32, Vec<usize>> = HashMap::new();
    let mut tops = Vec::new();
    for (i, d) in file.defs.iter().enumerate() {
        match d.parent {
            Some(p) => kids.entry(p).or_default().push(i),
            None => tops.push(i),
        }
    }
    tops.into_iter().map(|i| node(file, i, &kids)).collect()
}

/// Source lines of the files an answer cites, read once each from disk
/// (through the one safe reader, under the size limit), each location's
/// line clipped around its column ([`crate::convert::line_text`]).
pub(super) struct SourceLines {
    root: PathBuf,
    limit: u64,
    files: HashMap<PathBuf, Option<Arc<LineIndex>>>,
}

impl SourceLines {
    pub(super) fn new(root: &Path, limit: u64) -> SourceLines {
        SourceLines {
            root: root.to_path_buf(),
            limit,
            files: HashMap::new(),
        }
    }

    pub(super) fn loc(&mut self, rel: &Path, line: u32, col: u32, end_col: u32) -> Loc {
        let abs = self.root.join(rel);
        let limit = self.limit;
        let index = self
            .files
            .entry(abs.clone())
            .or_insert_with(|| {
                scry_base::disk::read_text(&abs, limit)
                    .ok()
                    .flatten()
                    .map(|t| Arc::new(LineIndex::new(t)))
            })
            .clone();
        Loc {
            path: abs,
            line: line + 1,
            col: col + 1,
            end_line: line + 1,
            end_col: end_col + 1,
            text: index.and_then(|ix| crate::convert::line_text(&ix, line, col)),
        }
    }

    fn def_loc(&mut self, h: &DefHit) -> Loc {
        self.loc(h.path, h.def.line, h.def.col, h.def.end_col)
    }
}
