//! Positional questions (definition, references, hover, calls, …): the
//! named symbol's candidate positions ([`super::locate`]) asked in order,
//! several on one line asked each and told apart, and where the answer
//! came from said.
//!
//! Functions over the call context ([`Ctx`]), given the validated [`Spot`];
//! the first answer that is not empty wins, under the one retry policy
//! ([`Retry`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use scry_lsp_session::types as lsp;
use scry_lsp_session::{CharPos, LineIndex, Session};
use tokio::time::Instant;

use super::locate::{Candidate, find_target};
use super::method_for;
use crate::call::{self, AskError, Ctx, Retry, session_error, supports};
use crate::convert::{self, Files, Sites};
use crate::resolve;
use scry_model::action::ReplyShape;
use scry_model::error::OpError;
use scry_model::name::SymbolName;
use scry_model::query::Spot;
use scry_model::*;

/// How many candidate positions are tried before giving up.
const MAX_CANDIDATES: usize = 6;

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

/// The files an answer's locations are in (a location's, a call's and
/// its sites').
fn answered_files(body: &Body) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = match body {
        Body::Locations { locations } => locations.iter().map(|l| l.path.clone()).collect(),
        Body::Calls { calls, .. } => calls
            .iter()
            .flat_map(|c| std::iter::once(&c.item.loc).chain(&c.sites))
            .map(|l| l.path.clone())
            .collect(),
        _ => Vec::new(),
    };
    out.sort();
    out.dedup();
    out
}

/// `session` does not support `method`.
pub(crate) fn unsupported(session: &Session, method: &str) -> Reason {
    Reason::Unsupported {
        server: session.name().to_string(),
        method: method.to_string(),
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

    // An answer from all the server sees: what it has not loaded under its
    // folder is opened first, and what lies outside it is said after.
    let reach = if action.searches_workspace() {
        let name = candidates
            .first()
            .map(|c| super::reach::name_at(index, c.pos))
            .unwrap_or_default();
        match cx.ws.route(path) {
            Ok(route) => {
                let left =
                    super::reach::open_projects(&cx.ws, session, &route, path, &name, cx.deadline)
                        .await;
                Some((route, name, left))
            }
            Err(_) => None,
        }
    } else {
        None
    };

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
    if let Some((route, name, left)) = reach {
        let answered = answered_files(&answer.body);
        let unseen = super::reach::unseen(&cx.ws, &route, &name, &answered, cx.deadline).await;
        for r in left.into_iter().chain(unseen) {
            if answer.partial.is_none() {
                answer.partial = Some(r);
            } else {
                answer.notes.push(r);
            }
        }
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

/// Ask at each occurrence marked `compare` (told apart as the action table says: `Facts::occurrences`) and
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
    let Some(by) = action.facts().occurrences.split_by(action, line) else {
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
    let shows_target = action.facts().occurrences.shown();
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
        } else if Some(action) == action.facts().occurrences.split_by(action, line) {
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
    // One typed request per reply shape: its params and its reply are the
    // `gen-lsp-types` types of the shape; the method is the action
    // table's (a location-shaped reply answers five requests).
    match action.facts().reply {
        ReplyShape::Hover => {
            let p = lsp::HoverParams {
                work_done_progress_params: Default::default(),
                text_document_position_params: at,
            };
            let hover = cx.ask_typed::<lsp::HoverRequest>(session, p).await?;
            Ok(Body::Hover {
                text: hover.as_ref().map(convert::hover_text).unwrap_or_default(),
            })
        }
        ReplyShape::Calls => {
            let p = lsp::CallHierarchyPrepareParams {
                work_done_progress_params: Default::default(),
                text_document_position_params: at,
            };
            let items = cx
                .ask_typed::<lsp::CallHierarchyPrepareRequest>(session, p)
                .await?
                .unwrap_or_default();
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
        _ => {
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
                // definition, declaration, typeDefinition, implementation:
                // the position alone.
                call::params(&at)
            };
            let reply = cx
                .ask_shaped::<lsp::DefinitionResponse>(session, method_for(action), params)
                .await?;
            Ok(Body::Locations {
                locations: convert::locations(session, reply, files).await,
            })
        }
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
