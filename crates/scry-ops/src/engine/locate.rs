//! Where the named symbol is: a question's name, line or column in a file
//! resolved to candidate positions in the order they are asked (an exact
//! column; else the file's declarations of the name and its occurrences,
//! those on the asked line first, several there marked to be compared),
//! or, with no path, the best workspace-symbol match; the file opened and
//! synced with its server ([`Target`]).
//!
//! Invariants: a line past the file's end is an invalid argument naming
//! its line count; the scan for occurrences keeps at most
//! `MAX_OCCURRENCES` and ends by the call's deadline; a name that does not
//! occur is `SYMBOL_NOT_FOUND`, never a guess at another; a workspace
//! symbol matches the name exactly or decorated (and its qualifier, when
//! one is given), the workspace's before the outside's.

use std::path::PathBuf;
use std::sync::Arc;

use scry_lsp_session::types as lsp;
use scry_lsp_session::{CharPos, LineIndex, Session};

use crate::call::{AskError, Ctx, Retry, method_of, session_error, supports};
use crate::convert::{self, Files};
use crate::resolve::{self, Declared, MatchKind};
use scry_model::error::OpError;
use scry_model::name::SymbolName;
use scry_model::query::Spot;
use scry_model::*;

/// How many occurrences of a name are kept as candidates (the scan counts
/// them all, but keeps only the best this many).
const MAX_OCCURRENCES: usize = 32;
/// How many occurrences on the asked line are asked each and compared.
const MAX_SAME_LINE: usize = 4;

/// A position to ask at, and how it was found.
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    pub(crate) pos: CharPos,
    pub(crate) via: Via,
    /// How the name is written there (`hir::Literal`), for occurrences.
    pub(crate) form: Option<String>,
    /// One of the occurrences that are asked each, and compared, because
    /// the name occurs several times on the asked line (or, without a line,
    /// is only used in the file): see `split_targets`.
    pub(crate) compare: bool,
}

/// What a question names in a file it gives (1-based): a symbol, a line,
/// or both; a column only with a line.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Place<'a> {
    pub(crate) symbol: Option<&'a str>,
    pub(crate) line: Option<u32>,
    pub(crate) column: Option<u32>,
}

/// The file a positional question is about, synced.
pub(crate) struct Target {
    pub(crate) path: PathBuf,
    pub(crate) session: Session,
    pub(crate) index: Arc<LineIndex>,
    pub(crate) candidates: Vec<Candidate>,
    pub(crate) others: Vec<Alternative>,
}

/// Where a found symbol starts (0-based).
fn start_of(loc: &Loc) -> CharPos {
    CharPos {
        line: loc.line - 1,
        col: loc.col - 1,
    }
}

impl Target {
    /// One position, found as `via` says.
    fn at(
        path: PathBuf,
        session: Session,
        index: Arc<LineIndex>,
        pos: CharPos,
        via: Via,
    ) -> Target {
        Target {
            candidates: vec![Candidate {
                pos,
                via,
                form: None,
                compare: false,
            }],
            path,
            session,
            index,
            others: Vec::new(),
        }
    }
}

/// Resolve what `action` names in `path` to candidate positions.
pub(crate) async fn target_in_file(
    cx: &Ctx,
    action: Action,
    at: Place<'_>,
    path: PathBuf,
    method: &str,
) -> Result<Target, OpError> {
    let (session, route, index) = cx.open_file(&path, method).await?;
    let line_hint = at.line.map(|l| l - 1);
    if let Some(l) = line_hint
        && l >= index.line_count()
    {
        return Err(OpError::InvalidArgument(
            Fact::LinePastEnd {
                line: l + 1,
                path,
                lines: index.line_count(),
            }
            .message(),
        ));
    }
    // An exact column wins.
    if let (Some(line), Some(col)) = (at.line, at.column) {
        let pos = CharPos {
            line: line - 1,
            col: col - 1,
        };
        return Ok(Target::at(path, session, index, pos, Via::GivenPosition));
    }
    let Some(symbol) = at.symbol else {
        // A bare line: its first identifier (validated: a symbol or a line).
        if let Some(l) = line_hint
            && let Some(pos) = resolve::first_identifier(&index, l)
        {
            return Ok(Target::at(path, session, index, pos, Via::FirstIdentifier));
        }
        return Err(OpError::InvalidArgument(
            Fact::NothingToAskAt { action, path }.message(),
        ));
    };
    let want = SymbolName::parse(symbol);
    let quote_single = !route.spec.single_quote_is_char;

    // 1. Declarations in the file's document symbols.
    let mut decls: Arc<resolve::Declarations> = Arc::default();
    let symbols_method = method_of::<lsp::DocumentSymbolRequest>();
    if supports(&session, symbols_method) {
        // Asked and converted once per document text (scry-lsp keeps them).
        match cx.declarations(&session, &path, &index).await {
            Ok(d) => decls = d,
            Err(AskError::Timeout) => {
                return Err(cx.timeout_error(&session, symbols_method));
            }
            Err(AskError::Session(e)) if e.is_crash() => {
                return Err(session_error(e, symbols_method));
            }
            Err(_) => {}
        }
    }
    let mut matches = decls.matching(&want);
    if let Some(h) = line_hint {
        matches.sort_by_key(|d| (d.pos.line.abs_diff(h), d.pos));
    }
    // 2. Occurrences of the (last segment of the) name: linear, capped,
    //    and within the cx.deadline; kept for the same text and question.
    let occ = cx.scans.occurrences(
        &index,
        &want,
        line_hint,
        quote_single,
        MAX_OCCURRENCES,
        Some(cx.deadline.into_std()),
    );
    if occ.timed_out {
        return Err(OpError::Timeout(
            Fact::ScanTimedOut {
                path,
                name: want.name.to_string(),
                seen: occ.total,
            }
            .message(),
        ));
    }
    let n = occ.total;
    let form_of = |o: &resolve::NameMatch| {
        let line = index.line(o.pos.line).unwrap_or_default();
        let byte = line
            .char_indices()
            .nth(o.pos.col as usize)
            .map_or(line.len(), |(b, _)| b);
        resolve::written_form(line, byte, &want.name)
    };
    let occ_candidate = |o: &resolve::NameMatch, via: Via| Candidate {
        pos: o.pos,
        via,
        form: Some(form_of(o)),
        compare: false,
    };
    let prose = |o: &resolve::NameMatch| o.kind == MatchKind::Prose;
    let mut candidates: Vec<Candidate> = Vec::new();
    let mut others = Vec::new();
    let decl_candidate = |d: &Declared| Candidate {
        pos: d.pos,
        via: Via::Declaration {
            kind: d.kind.clone(),
            name: symbol.to_string(),
        },
        form: None,
        compare: false,
    };
    match line_hint {
        None => {
            // Without a line: the first declaration, the others listed.
            if let Some(first) = matches.first() {
                candidates.push(decl_candidate(first));
                others.extend(matches.iter().skip(1).map(|d| alternative(d)));
            }
            for (i, o) in occ.list.iter().enumerate() {
                if candidates.iter().any(|c| c.pos == o.pos) {
                    continue;
                }
                let via = Via::Occurrence {
                    n: i + 1,
                    of: n,
                    name: want.name.clone(),
                    prose: prose(o),
                };
                candidates.push(occ_candidate(o, via));
            }
            // Only used here (no declaration): its code uses are asked
            // each and compared.
            if matches.is_empty() {
                for c in candidates
                    .iter_mut()
                    .filter(|c| !c.via.in_prose())
                    .take(MAX_SAME_LINE)
                {
                    c.compare = true;
                }
            }
        }
        Some(h) => {
            // With a line: the occurrences on it first (code before
            // comments and strings), else the nearest one, said so.
            let on_line: Vec<&resolve::NameMatch> =
                occ.list.iter().filter(|o| o.pos.line == h).collect();
            if on_line.is_empty() {
                for (i, o) in occ.list.iter().enumerate() {
                    let via = Via::NotOnLine {
                        name: want.name.clone(),
                        asked: h + 1,
                        line: o.pos.line + 1,
                        first: i == 0,
                        prose: prose(o),
                    };
                    candidates.push(occ_candidate(o, via));
                }
            } else {
                // A qualified question picks the occurrences written
                // with its qualifier, when the line has some.
                let exact: Vec<&resolve::NameMatch> =
                    on_line.iter().copied().filter(|o| o.exact).collect();
                let chosen = if exact.is_empty() { on_line } else { exact };
                let code = chosen.iter().filter(|o| o.kind == MatchKind::Code).count();
                for (i, o) in chosen.iter().enumerate() {
                    let via = Via::OnLine {
                        n: i + 1,
                        of: chosen.len(),
                        name: want.name.clone(),
                        prose: prose(o),
                    };
                    let mut c = occ_candidate(o, via);
                    c.compare = code > 1 && i < MAX_SAME_LINE && o.kind == MatchKind::Code;
                    candidates.push(c);
                }
            }
            for d in &matches {
                if !candidates.iter().any(|c| c.pos == d.pos) {
                    candidates.push(decl_candidate(d));
                }
            }
            if matches.len() > 1 {
                let asked = candidates.first().map(|c| c.pos);
                others.extend(
                    matches
                        .iter()
                        .filter(|d| Some(d.pos) != asked)
                        .map(|d| alternative(d)),
                );
            }
        }
    }
    if candidates.is_empty() && want.is_qualified() {
        // 3. Qualified and not in this file: workspace symbols.
        if let Some(found) =
            lookup_workspace_symbol(cx, &want, std::slice::from_ref(&session)).await?
        {
            let fpath = found.loc.path.clone();
            let (s2, _, idx2) = cx.open_file(&fpath, method).await?;
            let via = Via::WorkspaceSymbol {
                kind: None,
                name: symbol.to_string(),
            };
            return Ok(Target::at(fpath, s2, idx2, start_of(&found.loc), via));
        }
    }
    if candidates.is_empty() {
        return Err(OpError::SymbolNotFound(
            Fact::NotInFile {
                symbol: symbol.to_string(),
                path,
            }
            .message(),
        ));
    }
    Ok(Target {
        path,
        session,
        index,
        candidates,
        others,
    })
}

/// The target of a question: in the file it names, else (no path) where
/// workspace symbols find its symbol.
pub(crate) async fn find_target(
    cx: &Ctx,
    action: Action,
    spot: &Spot,
    method: &str,
    notes: &mut Vec<Reason>,
) -> Result<Target, OpError> {
    match spot {
        Spot::InFile {
            path,
            symbol,
            line,
            column,
        } => {
            let path = cx.resolve_path(path)?;
            let at = Place {
                symbol: symbol.as_deref(),
                line: *line,
                column: *column,
            };
            target_in_file(cx, action, at, path, method).await
        }
        Spot::Named { symbol } => target_from_workspace(cx, symbol, method, notes).await,
    }
}

/// No path: find the symbol with workspace symbols, then ask there.
pub(crate) async fn target_from_workspace(
    cx: &Ctx,
    symbol: &str,
    method: &str,
    notes: &mut Vec<Reason>,
) -> Result<Target, OpError> {
    let want = SymbolName::parse(symbol);
    let sessions = cx.workspace_sessions(method, notes).await?;
    let Some(found) = lookup_workspace_symbol(cx, &want, &sessions).await? else {
        let servers: Vec<&str> = sessions.iter().map(|s| s.name()).collect();
        return Err(OpError::SymbolNotFound(
            Fact::NoWorkspaceSymbol {
                symbol: symbol.to_string(),
                servers: servers.into_iter().map(String::from).collect(),
            }
            .message(),
        ));
    };
    let path = found.loc.path.clone();
    if !path.starts_with(cx.ws.root()) {
        notes.push(Reason::OutsideWorkspace {
            symbol: symbol.to_string(),
        });
    }
    let (session, _, index) = cx.open_file(&path, method).await?;
    let via = Via::WorkspaceSymbol {
        kind: Some(found.kind.clone()),
        name: found.name.clone(),
    };
    Ok(Target::at(path, session, index, start_of(&found.loc), via))
}

/// Best workspace-symbol match for a name: exact name and matching
/// container first, inside the workspace before outside.
pub(crate) async fn lookup_workspace_symbol(
    cx: &Ctx,
    want: &SymbolName,
    sessions: &[Session],
) -> Result<Option<SymbolItem>, OpError> {
    let mut best: Option<(u8, SymbolItem)> = None;
    for s in sessions {
        if !supports(s, method_of::<lsp::WorkspaceSymbolRequest>()) {
            continue;
        }
        cx.settle(s).await;
        let mut files = Files::new(Some(s.clone()));
        let mut retry = Retry::new();
        loop {
            let params = workspace_symbol_params(&want.name);
            let v = match cx.ask_typed::<lsp::WorkspaceSymbolRequest>(s, params).await {
                Ok(v) => v,
                Err(e) if retry.after_error(&e).await => continue,
                // A malformed reply is the question's error, not this
                // server's silence.
                Err(AskError::Op(e)) => return Err(e),
                Err(_) => break,
            };
            let items = convert::workspace_symbols(s, v, &mut files).await;
            let before = best.is_some();
            for it in items {
                if let Some(score) = symbol_score(cx, &it, want)
                    && best.as_ref().is_none_or(|(b, _)| score > *b)
                {
                    best = Some((score, it));
                }
            }
            // Nothing matched on a server that may still be indexing:
            // wait for it and ask once more.
            if best.is_some() || before || !retry.after_empty(cx, s).await {
                break;
            }
        }
    }
    Ok(best.map(|(_, it)| it))
}

/// How well a workspace symbol matches a wanted name: `None` when it
/// does not; exact names beat decorated ones, the workspace beats
/// outside.
pub(crate) fn symbol_score(cx: &Ctx, it: &SymbolItem, want: &SymbolName) -> Option<u8> {
    if resolve::base_name(&it.name) != want.name && it.name != want.name {
        return None;
    }
    if let Some(qual) = want.qualifiers.last() {
        let in_container = it
            .container
            .as_deref()
            .is_some_and(|c| resolve::ident_tokens(c).contains(&qual.as_str()));
        if !in_container && !resolve::ident_tokens(&it.name).contains(&qual.as_str()) {
            return None;
        }
    }
    let inside = it.loc.path.starts_with(cx.ws.root());
    Some((u8::from(it.name == want.name) << 1) | u8::from(inside))
}

fn alternative(d: &Declared) -> Alternative {
    Alternative {
        name: d.name.clone(),
        kind: d.kind.clone(),
        line: d.pos.line + 1,
        col: d.pos.col + 1,
        container: d.container(),
    }
}

/// `workspace/symbol` params for a query.
pub(crate) fn workspace_symbol_params(query: &str) -> lsp::WorkspaceSymbolParams {
    lsp::WorkspaceSymbolParams {
        query: query.to_string(),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    }
}
