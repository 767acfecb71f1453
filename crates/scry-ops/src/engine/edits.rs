//! The engine's edit actions: `rename`, `code_actions`, `undo` — functions
//! over the call context ([`Ctx`], its one retry policy included), the edit
//! service ([`Editor`], `crate::edit`), through which every edit goes
//! ([`Editor::apply_workspace_edit`], then the edit leaf, scry-edit), and
//! their validated arguments
//! (`new_name`'s shape — no control characters, its length — is checked by
//! `Query::validate`; that it is a name of the file's language, by
//! [`check_new_name`] here, before the server is asked to rename).

use std::path::{Path, PathBuf};
use std::time::Duration;

use scry_base::uri::path_to_uri;
use scry_lsp_session::types as lsp;
use scry_lsp_session::{CharPos, LineIndex, Session};
use serde_json::{Value, json};
use tokio::time::Instant;

use super::locate::{self, Place};
use super::navigate::{self, AskedIn};
use crate::call::{self, AskError, Ctx, method_of, supports};
use crate::edit::service::Editor;
use crate::resolve;
use scry_edit::report::{EditOptions, empty_report, merge_reports};
use scry_model::Fact;
use scry_model::error::OpError;
use scry_model::query::{ActionChoice, Spot};
use scry_model::*;

/// How many candidate positions rename tries.
const MAX_RENAME_CANDIDATES: usize = 6;

fn word_at(index: &LineIndex, pos: CharPos) -> String {
    index
        .line(pos.line)
        .unwrap_or_default()
        .chars()
        .skip(pos.col as usize)
        .take_while(|c| resolve::is_ident_char(*c))
        .collect()
}

/// The text a prepareRename answer names: its placeholder, else its range.
fn prepared_name(v: &Value, index: &LineIndex, session: &Session) -> Option<String> {
    if let Some(p) = v["placeholder"].as_str() {
        return Some(p.to_string());
    }
    let range = if v["range"].is_object() {
        &v["range"]
    } else {
        v
    };
    let pos = |p: &Value| {
        Some(scry_lsp_session::LspPos {
            line: u32::try_from(p["line"].as_u64()?).ok()?,
            character: u32::try_from(p["character"].as_u64()?).ok()?,
        })
    };
    let (s, e) = (pos(&range["start"])?, pos(&range["end"])?);
    let (s, e) = (
        index.lsp_to_offset(s, session.encoding()),
        index.lsp_to_offset(e, session.encoding()),
    );
    index.text().get(s..e).map(str::to_string)
}

/// `new_name` as a name of `path`'s language (`scry_syntax::names`: the
/// language's identifier rules and keywords from `languages.json`; Unicode
/// format characters refused in every language): else `INVALID_ARGUMENT`
/// saying which rule it breaks.
fn check_new_name(path: &Path, new_name: &str) -> Result<(), OpError> {
    scry_syntax::names::check_for(path, new_name).map_err(|e| {
        OpError::InvalidArgument(
            Fact::BadNewName {
                rule: e.to_string(),
            }
            .message(),
        )
    })
}

/// `rename` of what `spot` names to `new_name` (its shape checked by
/// `Query::validate`; a name of the file's language, [`check_new_name`]:
/// for a given file before any server is asked, for a symbol found by
/// workspace symbols as soon as its file is known, before prepareRename):
/// prepareRename (where supported) at the symbol, then
/// `textDocument/rename`, then the edit (applied, else previewed; `key`:
/// the idempotency key).
pub(crate) async fn rename(
    cx: &Ctx,
    edits: &Editor,
    spot: &Spot,
    new_name: &str,
    apply: bool,
    key: Option<&str>,
) -> Result<Answer, OpError> {
    let method = method_of::<lsp::RenameRequest>();
    if let Spot::InFile { path, .. } = spot
        && let Ok(path) = cx.resolve_path(path)
    {
        check_new_name(&path, new_name)?;
    }
    // A retry of an applied rename: the symbol may not even exist any
    // more under its old name, so replay before asking the server.
    if let Some(a) = replayed_answer(cx, edits, Action::Rename, apply, key) {
        return Ok(a);
    }
    // Notes of a workspace-symbol search are not part of an edit's answer.
    let mut notes = Vec::new();
    let t = locate::find_target(cx, Action::Rename, spot, method, &mut notes).await?;
    let (path, session, index, candidates) = (&t.path, &t.session, &t.index, &t.candidates);
    // The file a workspace-symbol search found (and, again, a given one).
    check_new_name(path, new_name)?;
    if !supports(session, method) {
        return Err(OpError::EditRejected(
            Fact::NotOffered {
                server: session.name().to_string(),
                action: Action::Rename,
            }
            .message(),
        ));
    }
    cx.settle(session).await;
    let prepare = session.capabilities()["renameProvider"]["prepareProvider"]
        .as_bool()
        .unwrap_or(false);
    let mut chosen = None;
    let mut refusals: Vec<String> = Vec::new();
    for cand in candidates.iter().take(MAX_RENAME_CANDIDATES) {
        if !prepare {
            if chosen.is_none() {
                chosen = Some((cand.clone(), word_at(index, cand.pos)));
            }
            break;
        }
        let params = lsp::PrepareRenameParams {
            work_done_progress_params: Default::default(),
            text_document_position_params: call::at(path, index, session, cand.pos),
        };
        // A null answer is a refusal, not an empty one: not asked again.
        let r = cx
            .ask_lenient_retrying::<lsp::PrepareRenameRequest>(session, params, |_| false)
            .await;
        match r {
            Ok(v) if v.is_null() => {
                refusals.push(format!(
                    "{}:{} (`{}`)",
                    cand.pos.line + 1,
                    cand.pos.col + 1,
                    word_at(index, cand.pos)
                ));
            }
            Ok(v) if v.get("defaultBehavior").is_some() => {
                chosen = Some((cand.clone(), word_at(index, cand.pos)));
                break;
            }
            Ok(v) => {
                let name =
                    prepared_name(&v, index, session).unwrap_or_else(|| word_at(index, cand.pos));
                chosen = Some((cand.clone(), name));
                break;
            }
            Err(AskError::Session(e)) if e.is_method_not_found() => {
                chosen = Some((cand.clone(), word_at(index, cand.pos)));
                break;
            }
            Err(AskError::Session(e)) if !e.is_crash() => {
                let msg = e
                    .server_message()
                    .map_or_else(|| e.to_string(), str::to_string);
                refusals.push(format!(
                    "{}:{} (`{}`): {msg}",
                    cand.pos.line + 1,
                    cand.pos.col + 1,
                    word_at(index, cand.pos)
                ));
            }
            Err(e) => {
                let prepare = method_of::<lsp::PrepareRenameRequest>();
                return Err(cx.fail(session, prepare, e));
            }
        }
    }
    let Some((cand, old_name)) = chosen else {
        let what = spot.symbol().unwrap_or("the symbol");
        return Err(OpError::EditRejected(
            Fact::CannotRename {
                what: what.to_string(),
                server: session.name().to_string(),
                path: path.clone(),
                refusals: refusals.join("; "),
            }
            .message(),
        ));
    };
    // Asked by line: the old name is known only now (`Query::validate`
    // refused a symbol named as its own new name), still before the
    // server is asked to rename.
    if old_name == new_name {
        return Err(scry_model::Invalid {
            action: Action::Rename,
            arg: scry_model::action::Arg::NewName,
            problem: scry_model::ArgProblem::Unchanged,
        }
        .into());
    }
    // A rename reaches what the server sees: what it has not loaded under
    // its folder is opened first, and what lies outside it is said after.
    let route = cx.ws.route(path).ok();
    let mut left = None;
    if let Some(route) = &route {
        left =
            super::reach::open_projects(&cx.ws, session, route, path, &old_name, cx.deadline).await;
    }
    let params = lsp::RenameParams {
        new_name: new_name.to_string(),
        work_done_progress_params: Default::default(),
        text_document_position_params: call::at(path, index, session, cand.pos),
    };
    let edit = match cx
        .ask_lenient_retrying::<lsp::RenameRequest>(session, params, Value::is_null)
        .await
    {
        Ok(v) => v,
        Err(AskError::Session(e)) if !e.is_crash() => {
            let msg = e
                .server_message()
                .map_or_else(|| e.to_string(), str::to_string);
            return Err(OpError::EditRejected(
                Fact::RenameRefused {
                    server: session.name().to_string(),
                    old_name,
                    new_name: new_name.to_string(),
                    why: msg,
                }
                .message(),
            ));
        }
        Err(e) => return Err(cx.fail(session, method, e)),
    };
    if edit.is_null() {
        return Err(OpError::EditRejected(
            Fact::NoRenameEdit {
                server: session.name().to_string(),
                old_name,
                path: path.clone(),
                line: cand.pos.line + 1,
                col: cand.pos.col + 1,
            }
            .message(),
        ));
    }
    let report = edits
        .apply_workspace_edit(
            Some(session),
            &edit,
            EditOptions {
                apply,
                key: key.map(str::to_string),
                kind: EditKind::Rename,
                title: old_name.clone(),
                new_name: Some(new_name.to_string()),
                deadline: Some(cx.deadline),
            },
        )
        .await?;
    let mut edited: Vec<PathBuf> = report.edits.iter().map(|e| e.path.clone()).collect();
    edited.sort();
    edited.dedup();
    let mut answer = Answer::new(Action::Rename, cx.question.clone(), Body::Edit(report));
    answer.server = Some(session.name().to_string());
    let unseen = match &route {
        Some(route) => super::reach::unseen(&cx.ws, route, &old_name, &edited, cx.deadline).await,
        None => Vec::new(),
    };
    let mut reached = left.into_iter().chain(unseen);
    answer.partial = reached.next();
    answer.notes.extend(reached);
    answer.asked_at = Some(navigate::asked_at(path, index, &cand));
    answer.others = t.others.clone();
    // A preview: other occurrences of the name on the asked line that
    // mean something else are named, with the argument that selects
    // each (after an applied edit the line is no longer what was asked).
    if !apply {
        let asked = AskedIn {
            session,
            path,
            index,
            candidates,
        };
        navigate::name_same_line_targets(cx, Action::Rename, spot.line(), &mut answer, asked).await;
    }
    Ok(answer)
}

/// `code_actions`: list the actions for a file, a symbol, a line or a
/// position (with the diagnostics there); apply one by number or title.
/// `at`: a symbol, a position, a line, or (none) the whole file; `choice`:
/// the action to apply (else the list); `key`: the idempotency key.
pub(crate) async fn code_actions(
    cx: &Ctx,
    edits: &Editor,
    path: &Path,
    at: Place<'_>,
    choice: Option<&ActionChoice>,
    apply: bool,
    key: Option<&str>,
) -> Result<Answer, OpError> {
    let method = method_of::<lsp::CodeActionRequest>();
    let path = cx.resolve_path(path)?;
    // A retry of an applied action: replayed before asking the server
    // (after the fix, the server may no longer offer that action).
    if choice.is_some()
        && let Some(a) = replayed_answer(cx, edits, Action::CodeActions, apply, key)
    {
        return Ok(a);
    }
    // `candidates`: the occurrences of a named symbol (empty for a
    // line or the whole file), to name the other targets on the line.
    let (session, index, start, end, asked, candidates) =
        if at.symbol.is_some() || (at.line.is_some() && at.column.is_some()) {
            let action = Action::CodeActions;
            let t = locate::target_in_file(cx, action, at, path.clone(), method).await?;
            let cand = t.candidates[0].clone();
            let len = word_at(&t.index, cand.pos).chars().count() as u32;
            let end = CharPos {
                line: cand.pos.line,
                col: cand.pos.col + len,
            };
            let asked = navigate::asked_at(&t.path, &t.index, &cand);
            (t.session, t.index, cand.pos, end, Some(asked), t.candidates)
        } else {
            let (s, _, idx) = cx.open_file(&path, method).await?;
            match at.line {
                Some(l) => {
                    let l = l - 1;
                    if l >= idx.line_count() {
                        return Err(OpError::InvalidArgument(
                            scry_model::Fact::LinePastEnd {
                                line: l + 1,
                                path,
                                lines: idx.line_count(),
                            }
                            .message(),
                        ));
                    }
                    let len = idx.line_len_chars(l).unwrap_or(0);
                    (
                        s,
                        idx,
                        CharPos { line: l, col: 0 },
                        CharPos { line: l, col: len },
                        None,
                        Vec::new(),
                    )
                }
                None => {
                    let end = idx.end();
                    (s, idx, CharPos { line: 0, col: 0 }, end, None, Vec::new())
                }
            }
        };
    let asked_in = AskedIn {
        session: &session,
        path: &path,
        index: &index,
        candidates: &candidates,
    };
    if !supports(&session, method) {
        return Err(OpError::EditRejected(
            Fact::NotOffered {
                server: session.name().to_string(),
                action: Action::CodeActions,
            }
            .message(),
        ));
    }
    cx.settle(&session).await;
    let uri = path_to_uri(&path);
    let range = lsp::Range {
        start: call::position(&index, &session, start),
        end: call::position(&index, &session, end),
    };
    let diagnostics =
        diagnostics_in_range(cx, &session, &uri, range.start.line, range.end.line).await;
    // The diagnostics go back exactly as the server published them (its
    // `data` and any field of its own included), so the context stays JSON.
    let params = json!({
        "textDocument": call::params(&call::document(&path)),
        "range": call::params(&range),
        "context": { "diagnostics": diagnostics, "triggerKind": 1 },
    });
    // Under the one retry policy: rust-analyzer answers `ContentModified`
    // while it re-analyses a file that just changed on disk.
    let v = cx
        .ask_retrying(&session, method, params, |_| false)
        .await
        .map_err(|e| cx.fail(&session, method, e))?;
    let items: Vec<Value> = v.as_array().cloned().unwrap_or_default();
    let infos: Vec<CodeActionInfo> = items
        .iter()
        .enumerate()
        .map(|(i, a)| CodeActionInfo {
            index: i + 1,
            title: a["title"].as_str().unwrap_or("(untitled)").to_string(),
            kind: a["kind"].as_str().map(str::to_string),
            preferred: a["isPreferred"].as_bool().unwrap_or(false),
            disabled: a["disabled"]["reason"].as_str().map(str::to_string),
        })
        .collect();
    let range_loc = Loc {
        path: path.clone(),
        line: start.line + 1,
        col: start.col + 1,
        end_line: end.line + 1,
        end_col: end.col + 1,
        text: crate::convert::line_text(&index, start.line, start.col),
    };
    let chosen = match choice {
        None => {
            let mut answer = Answer::new(
                Action::CodeActions,
                cx.question.clone(),
                Body::CodeActions(CodeActionList {
                    range: range_loc,
                    diagnostics: diagnostics.len(),
                    actions: infos,
                }),
            );
            answer.server = Some(session.name().to_string());
            answer.asked_at = asked;
            if answer.body.is_empty() {
                answer.empty_reason =
                    Some(
                        navigate::indexing(&session).unwrap_or_else(|| Reason::NoCodeAction {
                            server: session.name().to_string(),
                        }),
                    );
            }
            let (action, line) = (Action::CodeActions, at.line);
            navigate::name_same_line_targets(cx, action, line, &mut answer, asked_in).await;
            return Ok(answer);
        }
        Some(ActionChoice::Index(n)) => {
            if *n == 0 || *n > infos.len() {
                return Err(OpError::InvalidArgument(
                    Fact::NoCodeActionNumber {
                        n: *n,
                        server: session.name().to_string(),
                        offered: infos.len(),
                    }
                    .message(),
                ));
            }
            n - 1
        }
        Some(ActionChoice::Title(t)) => pick_by_title(&infos, t)?,
    };
    let info = infos[chosen].clone();
    if let Some(reason) = &info.disabled {
        return Err(OpError::EditRejected(
            Fact::CodeActionDisabled {
                title: info.title.clone(),
                reason: reason.clone(),
            }
            .message(),
        ));
    }
    let mut action = items[chosen].clone();
    // A bare Command, or a CodeAction.
    let is_command = action["command"].is_string();
    let resolvable = session.capabilities()["codeActionProvider"]["resolveProvider"]
        .as_bool()
        .unwrap_or(false);
    if !is_command && action["edit"].is_null() && resolvable {
        // Sent back as the server gave it (its own fields included), so
        // the action stays JSON rather than `CodeAction` params.
        let resolve = method_of::<lsp::CodeActionResolveRequest>();
        action = cx
            .ask(&session, resolve, action)
            .await
            .map_err(|e| cx.fail(&session, resolve, e))?;
    }
    let key = key.map(str::to_string);
    let mut parts = Vec::new();
    let mut notes = Vec::new();
    if !is_command && action["edit"].is_object() {
        parts.push(
            edits
                .apply_workspace_edit(
                    Some(&session),
                    &action["edit"],
                    EditOptions {
                        apply,
                        key: key.clone(),
                        kind: EditKind::CodeAction,
                        title: info.title.clone(),
                        new_name: None,
                        deadline: Some(cx.deadline),
                    },
                )
                .await?,
        );
    }
    let command = if is_command {
        Some(action.clone())
    } else {
        action["command"]
            .as_object()
            .map(|_| action["command"].clone())
    };
    // A preview never runs a server command: the command could write
    // files itself (e.g. `go mod tidy`), which a preview must not.
    if let Some(cmd) = command.as_ref().filter(|_| !apply) {
        notes.push(Reason::CommandNotPreviewed {
            command: cmd["command"].as_str().unwrap_or_default().to_string(),
            server: session.name().to_string(),
        });
    }
    if let Some(cmd) = command.filter(|_| apply) {
        edits.arm_server_edits(&session, false, key.clone(), &info.title);
        let params = lsp::ExecuteCommandParams {
            command: cmd["command"].as_str().unwrap_or_default().to_string(),
            arguments: cmd["arguments"].as_array().cloned(),
            work_done_progress_params: Default::default(),
        };
        type Execute = lsp::ExecuteCommandRequest;
        let r = cx.ask_lenient::<Execute>(&session, params).await;
        let results = edits.disarm_server_edits(&session);
        if let Err(e) = r {
            let e = cx.fail(&session, method_of::<Execute>(), e);
            if results.is_empty() && parts.is_empty() {
                return Err(e);
            }
            notes.push(Reason::CommandFailed { error: e });
        }
        for r in results {
            match r {
                Ok(rep) => parts.push(rep),
                Err(e) => {
                    return Err(OpError::EditRejected(
                        Fact::CodeActionEditRefused {
                            server: session.name().to_string(),
                            title: info.title.clone(),
                            why: e.to_string(),
                        }
                        .message(),
                    ));
                }
            }
        }
    }
    let report = merge_reports(parts, EditKind::CodeAction, &info.title)
        .unwrap_or_else(|| empty_report(EditKind::CodeAction, &info.title, apply));
    let mut answer = edit_answer(cx, &session, asked, report);
    answer.notes.extend(notes);
    if !apply {
        let (action, line) = (Action::CodeActions, at.line);
        navigate::name_same_line_targets(cx, action, line, &mut answer, asked_in).await;
    }
    Ok(answer)
}

/// The stored answer of an `action` already applied under the idempotency
/// `key` (its own edit, else the first edit its command made the server
/// send), marked replayed; `None` for previews.
fn replayed_answer(
    cx: &Ctx,
    edits: &Editor,
    action: Action,
    apply: bool,
    key: Option<&str>,
) -> Option<Answer> {
    if !apply {
        return None;
    }
    let k = key?;
    let report = edits
        .replayed_edit(k)
        .or_else(|| edits.replayed_edit(&format!("{k}#1")))?;
    Some(Answer::new(action, cx.question.clone(), Body::Edit(report)))
}

/// A code action's edit as the answer.
fn edit_answer(cx: &Ctx, session: &Session, asked: Option<AskedAt>, report: EditReport) -> Answer {
    let mut answer = Answer::new(Action::CodeActions, cx.question.clone(), Body::Edit(report));
    answer.server = Some(session.name().to_string());
    answer.asked_at = asked;
    answer
}

/// The diagnostics the server published (or, for pull servers, reports)
/// for lines `first..=last` of `uri`, as LSP values.
async fn diagnostics_in_range(
    cx: &Ctx,
    session: &Session,
    uri: &str,
    first: u32,
    last: u32,
) -> Vec<Value> {
    let state = session.state();
    let mut all = state.diagnostics(uri).map(|p| p.diagnostics);
    let pull = method_of::<lsp::DocumentDiagnosticRequest>();
    if all.is_none() && supports(session, pull) {
        let params = call::params(&lsp::DocumentDiagnosticParams {
            text_document: lsp::TextDocumentIdentifier {
                uri: lsp::Uri(uri.to_string()),
            },
            identifier: None,
            previous_result_id: None,
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
        });
        let short = Instant::now() + Duration::from_secs(3);
        if let Ok(v) = cx.ask_until(session, pull, params, short).await {
            all = v["items"].as_array().cloned();
        }
    }
    if all.is_none() {
        // Push servers publish shortly after the document opened.
        let mut rx = state.subscribe();
        let until = (Instant::now() + Duration::from_millis(1500)).min(cx.deadline);
        while state.diagnostics(uri).is_none() {
            if tokio::time::timeout_at(until, rx.changed()).await.is_err() {
                break;
            }
        }
        all = state.diagnostics(uri).map(|p| p.diagnostics);
    }
    all.unwrap_or_default()
        .into_iter()
        .filter(|d| {
            let s = d["range"]["start"]["line"].as_u64().unwrap_or(0);
            let e = d["range"]["end"]["line"].as_u64().unwrap_or(s);
            s <= u64::from(last) && e >= u64::from(first)
        })
        .collect()
}

/// `undo`: revert the last edit scry applied here (else preview it).
pub(crate) async fn undo(
    cx: &Ctx,
    edits: &Editor,
    apply: bool,
    key: Option<&str>,
) -> Result<Answer, OpError> {
    let report = edits.undo_last_edit(apply, key, Some(cx.deadline)).await?;
    Ok(Answer::new(
        Action::Undo,
        cx.question.clone(),
        Body::Edit(report),
    ))
}

fn pick_by_title(infos: &[CodeActionInfo], t: &str) -> Result<usize, OpError> {
    if let Some(i) = infos.iter().position(|a| a.title == t) {
        return Ok(i);
    }
    let tl = t.to_lowercase();
    let hits: Vec<usize> = infos
        .iter()
        .enumerate()
        .filter(|(_, a)| a.title.to_lowercase().contains(&tl))
        .map(|(i, _)| i)
        .collect();
    match hits.as_slice() {
        [i] => Ok(*i),
        [] => Err(OpError::InvalidArgument(
            Fact::NoCodeActionTitled {
                title: t.to_string(),
                available: infos
                    .iter()
                    .map(|a| format!("{}. {}", a.index, a.title))
                    .collect(),
            }
            .message(),
        )),
        many => Err(OpError::InvalidArgument(
            Fact::CodeActionTitleAmbiguous {
                title: t.to_string(),
                matches: many
                    .iter()
                    .map(|i| format!("{}. {}", infos[*i].index, infos[*i].title))
                    .collect(),
            }
            .message(),
        )),
    }
}
