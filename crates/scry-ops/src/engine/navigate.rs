//! Positional questions (definition, references, hover, calls, …): resolve
//! the named symbol to candidate positions, ask at them in order, and say
//! where the answer came from.
//!
//! Functions over the call context ([`Ctx`]), given the validated [`Spot`];
//! the first answer that is not empty wins, under the one retry policy
//! ([`Retry`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use scry_lsp::types as lsp;
use scry_lsp::{CharPos, LineIndex, Session};
use tokio::time::Instant;

use super::method_for;
use crate::call::{self, AskError, Ctx, Retry, method_of, session_error, supports};
use crate::convert::{self, Files, Sites};
use crate::resolve::{self, Declared, OccurrenceKind};
use scry_model::action::{Arg, ReplyShape};
use scry_model::error::OpError;
use scry_model::name::SymbolName;
use scry_model::query::Spot;
use scry_model::*;
use scry_model::{msg, msgf};

/// How many candidate positions are tried before giving up.
const MAX_CANDIDATES: usize = 6;
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

/// Where an edit's question was asked: the server, the file, its text as
/// the server has it, and the candidate positions of the name (none for a
/// bare line or a whole file).
#[derive(Clone, Copy)]
pub(crate) struct AskedIn<'a> {
    pub(crate) session: &'a Session,
    pub(crate) path: &'a Path,
    pub(crate) index: &'a Arc<LineIndex>,
    pub(crate) candidates: &'a [Candidate],
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

/// `session` does not support `method`.
pub(crate) fn unsupported(session: &Session, method: &str) -> Reason {
    Reason::Unsupported {
        server: session.name().to_string(),
        what: method.to_string(),
    }
}

/// `Some` while `session` is indexing: the reason an answer may be
/// empty or incomplete.
pub(crate) fn indexing(session: &Session) -> Option<Reason> {
    session.state().indexing().map(|progress| Reason::Indexing {
        server: session.name().to_string(),
        progress,
    })
}

/// A positional `action` (definition, references, hover, calls, …) at
/// `spot`.
pub(crate) async fn positional(cx: &Ctx, action: Action, spot: &Spot) -> Result<Answer, OpError> {
    let method = method_for(action);
    let line = spot.line();
    let mut notes = Vec::new();
    let t = find_target(cx, action, spot, method, &mut notes).await?;
    let (path, session, index, candidates) = (&t.path, &t.session, &t.index, &t.candidates);
    let mut files = Files::new(Some(session.clone()));
    files.insert(path.clone(), index.clone());

    let mut answer = Answer::new(action, cx.question.clone(), empty_body(action));
    answer.server = Some(session.name().to_string());
    answer.others = t.others.clone();
    answer.notes = notes;

    if !supports(session, method) {
        answer.empty_reason = Some(unsupported(session, method));
        if let Some(c) = candidates.first() {
            answer.asked_at = Some(asked_at(path, index, c));
        }
        return Ok(answer);
    }

    cx.settle(session).await;

    // The name occurs several times on the asked line (or is only used
    // in the file): ask each and compare their targets.
    let (split, mut asked) = split_targets(
        cx, action, line, session, path, index, candidates, &mut files,
    )
    .await;
    if Instant::now() >= cx.deadline {
        return Err(cx.timeout_error(session, method));
    }
    // Where a name is defined, asked by line, when the line itself defines
    // one occurrence (`let span = Span::new(lhs.span().start, …)`): the
    // model means the other occurrence; the declaration stays named.
    let reordered;
    let candidates = match split
        .as_ref()
        .and(line)
        .and(declared_first(action, path, candidates, &asked))
    {
        Some(i) => {
            reordered = promote(candidates, i);
            &reordered[..]
        }
        None => &candidates[..],
    };

    let mut last_err: Option<OpError> = None;
    let mut tried = 0;
    for cand in candidates.iter().take(MAX_CANDIDATES) {
        tried += 1;
        answer.asked_at = Some(asked_at(path, index, cand));
        // Already asked while comparing the occurrences: not again.
        if let Some(i) = asked.iter().position(|(p, _)| *p == cand.pos) {
            let (_, b) = asked.swap_remove(i);
            if !b.is_empty() {
                answer.body = b;
                break;
            }
        }
        let mut retry = Retry::new();
        // Asked again after the index: a failure then is the empty
        // answer it follows (the next candidate reports a dead server).
        let mut reasked = false;
        let body = loop {
            let r = ask_at(cx, action, session, path, index, cand.pos, &mut files).await;
            match r {
                Ok(b) if b.is_empty() && retry.after_empty(cx, session).await => {
                    reasked = true;
                }
                Ok(b) => break Some(b),
                Err(e) if retry.after_error(&e).await => {}
                Err(_) if reasked => break None,
                Err(AskError::Timeout) => {
                    return Err(cx.timeout_error(session, method));
                }
                Err(AskError::Session(e)) if e.is_method_not_found() => {
                    answer.empty_reason = Some(unsupported(session, method));
                    return Ok(answer);
                }
                Err(AskError::Session(e)) => {
                    if e.is_crash() {
                        return Err(session_error(e, method));
                    }
                    last_err = Some(session_error(e, method));
                    break None;
                }
                Err(AskError::Op(e)) => return Err(e),
            }
        };
        if let Some(body) = body
            && !body.is_empty()
        {
            answer.body = body;
            break;
        }
    }
    if let Body::Locations { locations } = &answer.body
        && locations.len() >= convert::MAX_SERVER_LOCATIONS
    {
        answer.notes.push(Reason::ServerCapped {
            server: session.name().to_string(),
            kept: convert::MAX_SERVER_LOCATIONS,
        });
    }
    if answer.body.is_empty() {
        if let Some(e) = last_err
            && tried == 1
        {
            return Err(e);
        }
        answer.empty_reason = Some(match indexing(session) {
            Some(r) => r,
            None => Reason::NothingThere {
                server: session.name().to_string(),
                places: if candidates.len() > 1 { tried } else { 1 },
            },
        });
    } else {
        answer.partial = indexing(session);
    }
    if let Some(groups) = split {
        name_other_targets(
            cx,
            action,
            line,
            &mut answer,
            groups,
            session,
            path,
            index,
            &mut files,
        )
        .await;
    }
    Ok(answer)
}

/// The candidate to ask first instead of the first one, for a definition
/// (or declaration) asked by name and line: `Some(i)` when the first
/// candidate's own answer is itself (the occurrence declares the name) and
/// candidate `i` is the first compared one whose answer is elsewhere.
/// `answers` are the compared occurrences' answers to `action`.
pub(crate) fn declared_first(
    action: Action,
    path: &Path,
    candidates: &[Candidate],
    answers: &[(CharPos, Body)],
) -> Option<usize> {
    if !matches!(action, Action::Definition | Action::Declaration) {
        return None;
    }
    let answer_of = |c: &Candidate| {
        answers
            .iter()
            .find(|(p, _)| *p == c.pos)
            .and_then(|(_, b)| match b {
                Body::Locations { locations } if !locations.is_empty() => Some(locations),
                _ => None,
            })
    };
    let declares =
        |c: &Candidate| answer_of(c).is_some_and(|ls| ls.iter().any(|l| is_at(l, path, c.pos)));
    let first = candidates.first()?;
    if !first.compare || !declares(first) {
        return None;
    }
    candidates
        .iter()
        .position(|c| c.compare && !declares(c) && answer_of(c).is_some())
}

/// Whether `loc` is the occurrence at `pos` (0-based) of `path`: on its
/// line, its range covering the occurrence's first character.
fn is_at(loc: &Loc, path: &Path, pos: CharPos) -> bool {
    let (line, col) = (pos.line + 1, pos.col + 1);
    loc.path == path
        && loc.line == line
        && loc.col <= col
        && (col < loc.end_col || loc.end_line > line || loc.col == col)
}

/// `candidates` with candidate `i` moved to the front.
fn promote(candidates: &[Candidate], i: usize) -> Vec<Candidate> {
    let mut v = candidates.to_vec();
    let c = v.remove(i);
    v.insert(0, c);
    v
}

/// For answers that act on one occurrence (rename and code-action
/// previews, code-action lists): when the name occurs on the asked line
/// with different targets, fill `answer.same_name` (the answered one is
/// `answer.asked_at`). Callers skip it after an applied edit.
pub(crate) async fn name_same_line_targets(
    cx: &Ctx,
    action: Action,
    line: Option<u32>,
    answer: &mut Answer,
    asked: AskedIn<'_>,
) {
    let AskedIn {
        session,
        path,
        index,
        candidates,
    } = asked;
    if line.is_none() {
        return;
    }
    let mut files = Files::new(Some(session.clone()));
    files.insert(path.to_path_buf(), index.clone());
    let (split, _) = split_targets(
        cx, action, line, session, path, index, candidates, &mut files,
    )
    .await;
    if let Some(groups) = split {
        name_other_targets(
            cx, action, line, answer, groups, session, path, index, &mut files,
        )
        .await;
    }
}

/// Ask at each occurrence marked `compare` (see [`split_action`]) and
/// group them by target: `Some` (the first of each group, in candidate
/// order, with its answer) when they resolve to more than one target.
/// Also returns the answers taken for the question's own action, so
/// that they are not asked again.
#[allow(clippy::too_many_arguments)]
async fn split_targets(
    cx: &Ctx,
    action: Action,
    line: Option<u32>,
    session: &Session,
    path: &Path,
    index: &LineIndex,
    candidates: &[Candidate],
    files: &mut Files,
) -> (Option<Vec<(Candidate, Body)>>, Vec<(CharPos, Body)>) {
    let mut own = Vec::new();
    let compare: Vec<&Candidate> = candidates.iter().filter(|c| c.compare).collect();
    let Some(by) = split_action(action, line) else {
        return (None, own);
    };
    if compare.len() < 2 || !supports(session, method_for(by)) {
        return (None, own);
    }
    let mut groups: Vec<(TargetKey, Candidate, Body)> = Vec::new();
    for c in compare {
        let body = match ask_at(cx, by, session, path, index, c.pos, files).await {
            Ok(body) => body,
            // A dead or slow server: stop comparing, the question
            // itself reports it.
            Err(AskError::Timeout) => return (None, own),
            Err(AskError::Session(e)) if e.is_crash() => return (None, own),
            Err(_) => continue,
        };
        if by == action {
            own.push((c.pos, body.clone()));
        }
        let Body::Locations { locations } = &body else {
            continue;
        };
        let mut key: TargetKey = locations
            .iter()
            .map(|l| (l.path.clone(), l.line, l.col))
            .collect();
        key.sort();
        key.dedup();
        if key.is_empty() || groups.iter().any(|(k, _, _)| *k == key) {
            continue;
        }
        groups.push((key, c.clone(), body));
    }
    let split = (groups.len() > 1).then(|| groups.into_iter().map(|(_, c, b)| (c, b)).collect());
    (split, own)
}

/// Fill `answer.same_name` from the groups of [`split_targets`]: each
/// other target named with the argument that selects it, and with its
/// own answer for the actions that show a target.
#[allow(clippy::too_many_arguments)]
async fn name_other_targets(
    cx: &Ctx,
    action: Action,
    line: Option<u32>,
    answer: &mut Answer,
    groups: Vec<(Candidate, Body)>,
    session: &Session,
    path: &Path,
    index: &LineIndex,
    files: &mut Files,
) {
    let asked = answer.asked_at.as_ref().map(|a| (a.loc.line, a.loc.col));
    let Some(first) = groups
        .iter()
        .find(|(c, _)| Some((c.pos.line + 1, c.pos.col + 1)) == asked)
        .or(groups.first())
    else {
        return;
    };
    let answered_form = first.0.form.clone().unwrap_or_default();
    let answered_pos = first.0.pos;
    let forms: Vec<String> = groups
        .iter()
        .map(|(c, _)| c.form.clone().unwrap_or_default())
        .collect();
    let shows_target = matches!(
        action,
        Action::Definition
            | Action::Declaration
            | Action::TypeDefinition
            | Action::Implementation
            | Action::Hover
    );
    let mut others = Vec::new();
    for (c, def) in groups.iter().filter(|(c, _)| c.pos != answered_pos) {
        let form = c.form.clone().unwrap_or_default();
        let mut select = Vec::new();
        if line.is_none() {
            select.push(Selector::Line(c.pos.line + 1));
        }
        select.push(Selector::Column(c.pos.col + 1));
        if form != answered_form
            && form.len() > SymbolName::parse(&form).name.len()
            && forms.iter().filter(|f| **f == form).count() == 1
        {
            select.push(Selector::Symbol(form.clone()));
        }
        let body = if !shows_target {
            None
        } else if Some(action) == split_action(action, line) {
            Some(def.clone())
        } else {
            ask_at(cx, action, session, path, index, c.pos, files)
                .await
                .ok()
        };
        others.push(SameNameOccurrence {
            line: c.pos.line + 1,
            col: c.pos.col + 1,
            form,
            select,
            body,
        });
    }
    if let Some(a) = answer.asked_at.as_mut() {
        let name = SymbolName::parse(&answered_form).name;
        let k = others.len() + 1;
        a.via = Via::OneOfTargets {
            form: answered_form.clone(),
            name: name.to_string(),
            targets: k,
            line,
            at_line: answered_pos.line + 1,
            col: answered_pos.col + 1,
        };
    }
    answer.same_name = Some(SameName {
        line,
        answered_form,
        others,
    });
}

pub(crate) fn asked_at(path: &Path, index: &LineIndex, c: &Candidate) -> AskedAt {
    let line = index.line(c.pos.line).unwrap_or_default();
    let name_len = line
        .chars()
        .skip(c.pos.col as usize)
        .take_while(|ch| resolve::is_ident_char(*ch))
        .count() as u32;
    AskedAt {
        loc: Loc {
            path: path.to_path_buf(),
            line: c.pos.line + 1,
            col: c.pos.col + 1,
            end_line: c.pos.line + 1,
            end_col: c.pos.col + 1 + name_len,
            text: Some(line.to_string()),
        },
        via: c.via.clone(),
    }
}

#[allow(clippy::too_many_arguments)]
pub(crate) async fn ask_at(
    cx: &Ctx,
    action: Action,
    session: &Session,
    path: &Path,
    index: &LineIndex,
    pos: CharPos,
    files: &mut Files,
) -> Result<Body, AskError> {
    let at = call::at(path, index, session, pos);
    let params = if action == Action::References {
        call::params(&lsp::ReferenceParams {
            context: lsp::ReferenceContext {
                include_declaration: true,
            },
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
            text_document_position_params: at,
        })
    } else {
        // definition, declaration, typeDefinition, implementation,
        // hover, prepareCallHierarchy: the position alone.
        call::params(&at)
    };
    let method = method_for(action);
    let v = cx.ask(session, method, params).await?;
    match action.facts().reply {
        ReplyShape::Hover => Ok(Body::Hover {
            text: convert::hover_text(session, v).map_err(AskError::Op)?,
        }),
        ReplyShape::Calls => {
            let items: Vec<scry_lsp::types::CallHierarchyItem> = if v.is_null() {
                Vec::new()
            } else {
                convert::parse(session, method, v).map_err(AskError::Op)?
            };
            let direction = if action == Action::IncomingCalls {
                CallDirection::Incoming
            } else {
                CallDirection::Outgoing
            };
            let Some(item) = items.into_iter().next() else {
                return Ok(Body::Calls {
                    direction,
                    item: None,
                    calls: Vec::new(),
                });
            };
            let site_path = scry_base::uri::uri_to_path(item.uri.as_ref());
            // A `null` reply is no calls.
            let calls = if direction == CallDirection::Incoming {
                let params = lsp::CallHierarchyIncomingCallsParams {
                    item: item.clone(),
                    work_done_progress_params: Default::default(),
                    partial_result_params: Default::default(),
                };
                let list = cx
                    .ask_typed::<lsp::CallHierarchyIncomingCallsRequest>(session, params)
                    .await?
                    .unwrap_or_default();
                let list = list.into_iter().map(|c| (c.from, c.from_ranges));
                convert::calls(session, list.collect(), Sites::Caller, files).await
            } else {
                let params = lsp::CallHierarchyOutgoingCallsParams {
                    item: item.clone(),
                    work_done_progress_params: Default::default(),
                    partial_result_params: Default::default(),
                };
                let list = cx
                    .ask_typed::<lsp::CallHierarchyOutgoingCallsRequest>(session, params)
                    .await?
                    .unwrap_or_default();
                let list = list.into_iter().map(|c| (c.to, c.from_ranges));
                let sites = Sites::Item(site_path.as_deref());
                convert::calls(session, list.collect(), sites, files).await
            };
            let item = convert::call_item(session, &item, files).await;
            Ok(Body::Calls {
                direction,
                item,
                calls,
            })
        }
        _ => Ok(Body::Locations {
            locations: convert::locations(session, method, v, files)
                .await
                .map_err(AskError::Op)?,
        }),
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
        return Err(OpError::InvalidArgument(msg!(
            format!("line {} is past the end of ", l + 1),
            path(&path),
            format!(" ({} lines)", index.line_count())
        )));
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
        return Err(OpError::InvalidArgument(msg!(
            format!("{} needs a ", action.name()),
            arg(Arg::Symbol),
            " (or ",
            arg(Arg::Line),
            " and ",
            arg(Arg::Column),
            ") in ",
            path(&path)
        )));
    };
    let want = SymbolName::parse(symbol);
    let quote_single = !route.spec.single_quote_is_char;

    // 1. Declarations in the file's document symbols.
    let mut decls: Arc<Vec<Declared>> = Arc::default();
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
    let mut matches = resolve::match_declarations(&decls, &want);
    if let Some(h) = line_hint {
        matches.sort_by_key(|d| (d.pos.line.abs_diff(h), d.pos));
    }
    // 2. Occurrences of the (last segment of the) name: linear, capped,
    //    and within the cx.deadline.
    let occ = resolve::occurrences(
        &index,
        &want,
        line_hint,
        quote_single,
        MAX_OCCURRENCES,
        Some(cx.deadline.into_std()),
    );
    if occ.timed_out {
        return Err(OpError::Timeout(msg!(
            "scanning ",
            path(&path),
            format!(
                " for `{}` ran past the time budget ({} occurrences seen); pass ",
                want.name, occ.total
            ),
            arg(scry_model::action::Arg::Line),
            " and ",
            arg(scry_model::action::Arg::Column)
        )));
    }
    let n = occ.total;
    let form_of = |o: &resolve::Occurrence| {
        let line = index.line(o.pos.line).unwrap_or_default();
        let byte = line
            .char_indices()
            .nth(o.pos.col as usize)
            .map_or(line.len(), |(b, _)| b);
        resolve::written_form(line, byte, &want.name)
    };
    let occ_candidate = |o: &resolve::Occurrence, via: Via| Candidate {
        pos: o.pos,
        via,
        form: Some(form_of(o)),
        compare: false,
    };
    let prose = |o: &resolve::Occurrence| o.kind == OccurrenceKind::Prose;
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
            let on_line: Vec<&resolve::Occurrence> =
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
                let exact: Vec<&resolve::Occurrence> =
                    on_line.iter().copied().filter(|o| o.exact).collect();
                let chosen = if exact.is_empty() { on_line } else { exact };
                let code = chosen
                    .iter()
                    .filter(|o| o.kind == OccurrenceKind::Code)
                    .count();
                for (i, o) in chosen.iter().enumerate() {
                    let via = Via::OnLine {
                        n: i + 1,
                        of: chosen.len(),
                        name: want.name.clone(),
                        prose: prose(o),
                    };
                    let mut c = occ_candidate(o, via);
                    c.compare = code > 1 && i < MAX_SAME_LINE && o.kind == OccurrenceKind::Code;
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
        return Err(OpError::SymbolNotFound(msg!(
            format!("`{symbol}` does not occur in "),
            path(&path),
            "; check the spelling, or omit path to search the workspace"
        )));
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
    let routes = cx.ws.workspace_routes();
    if routes.is_empty() {
        return Err(OpError::NoServer(scry_model::msg!(note(
            Reason::NoServerApplies
        ))));
    }
    let mut sessions = Vec::new();
    for r in &routes {
        match cx.start(r, method).await {
            Ok(s) => sessions.push(s),
            Err(error) => notes.push(Reason::Failed {
                provider: r.spec.id.clone(),
                error,
            }),
        }
    }
    let Some(found) = lookup_workspace_symbol(cx, &want, &sessions).await? else {
        return Err(OpError::SymbolNotFound(msgf!(
            "no workspace symbol named `{symbol}` ({}); pass a path to search one file",
            sessions
                .iter()
                .map(|s| s.name().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )));
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

/// How the occurrences marked `compare` are told apart: by the action's own
/// answer when it shows a target; by `definition` for hover, references and
/// calls, and then only for several occurrences on the asked line (without
/// a line, those questions are not multiplied into definition requests).
fn split_action(action: Action, line: Option<u32>) -> Option<Action> {
    match action {
        Action::Definition
        | Action::Declaration
        | Action::TypeDefinition
        | Action::Implementation => Some(action),
        _ if line.is_some() => Some(Action::Definition),
        _ => None,
    }
}

/// The targets an occurrence resolves to, sorted: what tells occurrences apart.
type TargetKey = Vec<(PathBuf, u32, u32)>;

pub(crate) fn empty_body(action: Action) -> Body {
    match action.facts().reply {
        ReplyShape::Hover => Body::Hover {
            text: String::new(),
        },
        ReplyShape::Calls => Body::Calls {
            direction: if action == Action::IncomingCalls {
                CallDirection::Incoming
            } else {
                CallDirection::Outgoing
            },
            item: None,
            calls: Vec::new(),
        },
        _ => Body::Locations {
            locations: Vec::new(),
        },
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

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(line: u32, col: u32, compare: bool) -> Candidate {
        Candidate {
            pos: CharPos { line, col },
            via: Via::Unsaid,
            form: None,
            compare,
        }
    }

    fn at(path: &str, line: u32, col: u32, len: u32) -> Body {
        Body::Locations {
            locations: vec![Loc {
                path: PathBuf::from(path),
                line,
                col,
                end_line: line,
                end_col: col + len,
                text: None,
            }],
        }
    }

    /// `let span = Span::new(lhs.span().start, rhs.span().end);` on line 7:
    /// `span` at col 9 declares itself, `lhs.span` (col 26) and `rhs.span`
    /// (col 45) are the method.
    #[test]
    fn a_line_that_declares_the_name_answers_the_other_occurrence_first() {
        let path = Path::new("/ws/src/lib.rs");
        let cands = [cand(6, 8, true), cand(6, 25, true), cand(6, 44, true)];
        let answers = vec![
            (cands[0].pos, at("/ws/src/lib.rs", 7, 9, 4)),
            (cands[1].pos, at("/ws/src/lib.rs", 3, 12, 4)),
            (cands[2].pos, at("/ws/src/lib.rs", 3, 12, 4)),
        ];
        assert_eq!(
            declared_first(Action::Definition, path, &cands, &answers),
            Some(1)
        );
        assert_eq!(
            declared_first(Action::Declaration, path, &cands, &answers),
            Some(1)
        );
        let promoted = promote(&cands, 1);
        let order: Vec<u32> = promoted.iter().map(|c| c.pos.col).collect();
        assert_eq!(order, [25, 8, 44], "the declaration stays, second");
        // Only where-is-it-defined questions: references and hover of the
        // declaration are what was asked.
        for action in [Action::References, Action::Hover, Action::TypeDefinition] {
            assert_eq!(declared_first(action, path, &cands, &answers), None);
        }
    }

    #[test]
    fn no_change_when_the_first_occurrence_is_not_a_declaration() {
        let path = Path::new("/ws/a.py");
        // `x = f(x)`-like line where the first occurrence resolves elsewhere.
        let cands = [cand(4, 4, true), cand(4, 12, true)];
        let answers = vec![
            (cands[0].pos, at("/ws/a.py", 2, 5, 1)),
            (cands[1].pos, at("/ws/a.py", 5, 13, 1)),
        ];
        assert_eq!(
            declared_first(Action::Definition, path, &cands, &answers),
            None
        );
        // Another file at the same place is not the occurrence itself.
        let answers = vec![
            (cands[0].pos, at("/ws/b.py", 5, 5, 1)),
            (cands[1].pos, at("/ws/a.py", 5, 13, 1)),
        ];
        assert_eq!(
            declared_first(Action::Definition, path, &cands, &answers),
            None
        );
    }

    #[test]
    fn no_change_without_another_answered_occurrence() {
        let path = Path::new("/ws/a.py");
        let cands = [cand(4, 4, true), cand(4, 12, true), cand(4, 20, false)];
        // The other compared occurrence has no answer; the third is not
        // compared (a comment): the declaration is answered.
        let answers = vec![
            (cands[0].pos, at("/ws/a.py", 5, 5, 7)),
            (cands[1].pos, Body::Locations { locations: vec![] }),
        ];
        assert_eq!(
            declared_first(Action::Definition, path, &cands, &answers),
            None
        );
        // Not compared at all (a single occurrence): nothing to choose.
        let single = [cand(4, 4, false)];
        assert_eq!(
            declared_first(Action::Definition, path, &single, &answers[..1]),
            None
        );
    }

    #[test]
    fn a_declaration_range_covering_the_occurrence_counts() {
        let path = Path::new("/ws/a.rs");
        let loc = |line, col, end_line, end_col| Loc {
            path: path.to_path_buf(),
            line,
            col,
            end_line,
            end_col,
            text: None,
        };
        let pos = CharPos { line: 6, col: 8 };
        assert!(is_at(&loc(7, 9, 7, 13), path, pos));
        assert!(is_at(&loc(7, 5, 9, 2), path, pos), "a whole item's range");
        assert!(!is_at(&loc(7, 10, 7, 13), path, pos));
        assert!(!is_at(&loc(8, 9, 8, 13), path, pos));
        assert!(is_at(&loc(7, 9, 7, 9), path, pos), "an empty range at it");
    }
}
