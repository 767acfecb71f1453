//! Questions about files and the workspace rather than a position:
//! document symbols, workspace symbols, capabilities, raw requests, status.
//!
//! Functions over the call context ([`Ctx`]), each given its validated
//! arguments, except `status`, which starts nothing.

use std::path::Path;
use std::sync::Arc;

use scry_base::uri::path_to_uri;
use scry_lsp_session::types as lsp;
use scry_workspace::Workspace;
use scry_workspace::catalog::ProviderKind;
use serde_json::{Value, json};

use super::locate::workspace_symbol_params;
use super::navigate::{indexing, unsupported};
use crate::call::{self, Ctx, Retry, session_error, supports, workspace_error};
use crate::convert::{self, Files};
use crate::resolve;
use scry_model::error::OpError;
use scry_model::*;

/// `symbols`: the outline of `path`, from the session's documentSymbol
/// cache when the file has not changed since it was last asked.
pub(crate) async fn document_symbols(cx: &Ctx, path: &Path) -> Result<Answer, OpError> {
    let method = call::method_of::<lsp::DocumentSymbolRequest>();
    let path = cx.resolve_path(path)?;
    let (session, _, index) = cx.open_file(&path, method).await?;
    let mut answer = Answer::new(
        Action::Symbols,
        cx.question.clone(),
        Body::Outline {
            path: path.clone(),
            symbols: Vec::new(),
        },
    );
    answer.server = Some(session.name().to_string());
    if !supports(&session, method) {
        answer.empty_reason = Some(unsupported(&session, method));
        return Ok(answer);
    }
    let v = cx
        .document_symbols(&session, &path)
        .await
        .map_err(|e| cx.fail(&session, method, e))?;
    let (symbols, _) = convert::document_symbols(&session, v, &index)?;
    answer.body = Body::Outline { path, symbols };
    if answer.body.is_empty() {
        answer.empty_reason = indexing(&session);
    }
    Ok(answer)
}

/// `workspace_symbols`: `query` asked of the server of `path`, else of
/// every server that applies to the workspace.
pub(crate) async fn workspace_symbols(
    cx: &Ctx,
    query: &str,
    path: Option<&Path>,
) -> Result<Answer, OpError> {
    let method = call::method_of::<lsp::WorkspaceSymbolRequest>();
    let mut notes = Vec::new();
    let sessions = match path {
        Some(p) => {
            let path = cx.resolve_path(p)?;
            let (s, _, _) = cx.open_file(&path, method).await?;
            vec![s]
        }
        None => cx.workspace_sessions(method, &mut notes).await?,
    };
    let mut all = Vec::new();
    let mut partial = Vec::new();
    let mut servers = Vec::new();
    for s in &sessions {
        if !supports(s, method) {
            notes.push(Reason::ActionUnsupported {
                server: s.name().to_string(),
                action: Action::WorkspaceSymbols,
            });
            continue;
        }
        servers.push(s.name().to_string());
        cx.settle(s).await;
        let mut files = Files::new(Some(s.clone()));
        let mut retry = Retry::new();
        loop {
            let r = cx
                .ask_typed::<lsp::WorkspaceSymbolRequest>(s, workspace_symbol_params(query))
                .await;
            let v = match r {
                Ok(v) => v,
                Err(e) if retry.after_error(&e).await => continue,
                Err(e) => return Err(cx.fail(s, method, e)),
            };
            let items = convert::workspace_symbols(s, v, &mut files).await;
            if !items.is_empty() || !retry.after_empty(cx, s).await {
                all.extend(items);
                break;
            }
        }
        partial.extend(indexing(s));
    }
    // Exact matches first, then prefix matches, then the rest.
    let ql = query.to_lowercase();
    all.sort_by_key(|it| {
        let n = resolve::base_name(&it.name).to_lowercase();
        let rank = if n == ql {
            0
        } else if n.starts_with(&ql) {
            1
        } else {
            2
        };
        (
            rank,
            !it.loc.path.starts_with(cx.ws.root()),
            it.loc.path.clone(),
            it.loc.line,
        )
    });
    let mut answer = Answer::new(
        Action::WorkspaceSymbols,
        cx.question.clone(),
        Body::WorkspaceSymbols {
            query: query.to_string(),
            symbols: all,
        },
    );
    answer.server = Some(servers.join(", ")).filter(|s| !s.is_empty());
    answer.notes = notes;
    let partial = match partial.len() {
        0 => None,
        1 => partial.pop(),
        _ => Some(Reason::All(partial)),
    };
    if answer.body.is_empty() {
        answer.empty_reason = partial;
    } else {
        answer.partial = partial;
    }
    Ok(answer)
}

/// `capabilities`: of the server for `path` (started), else of the first
/// running one.
pub(crate) async fn capabilities(cx: &Ctx, path: Option<&Path>) -> Result<Answer, OpError> {
    let initialize = call::method_of::<lsp::InitializeRequest>();
    let session = match path {
        Some(p) => {
            let path = cx.resolve_path(p)?;
            let route = cx
                .ws
                .route(&path)
                .map_err(|e| workspace_error(e, initialize))?;
            cx.start(&route, initialize).await?
        }
        None => {
            let running = cx.ws.running();
            let Some(s) = running.into_iter().next() else {
                return Err(OpError::InvalidArgument(
                    scry_model::Fact::NoServerRunning.message(),
                ));
            };
            s
        }
    };
    let mut answer = Answer::new(
        Action::Capabilities,
        cx.question.clone(),
        Body::Capabilities {
            server: session.name().to_string(),
            root: session.root().to_path_buf(),
            encoding: session.encoding().as_lsp().to_string(),
            capabilities: session.capabilities().clone(),
        },
    );
    answer.server = Some(session.name().to_string());
    let regs = session.state().registrations();
    if !regs.is_empty() {
        answer.notes.push(Reason::Registered {
            methods: regs.iter().map(|r| r.method.clone()).collect(),
        });
    }
    Ok(answer)
}

/// `request`: `method` with `params` as given (`"$uri"` strings replaced
/// by the URI of `path`), asked of the server of `path`, else of the first
/// server that applies to the workspace.
pub(crate) async fn raw_request(
    cx: &Ctx,
    method: &str,
    params: Option<Value>,
    path: Option<&Path>,
) -> Result<Answer, OpError> {
    let (session, uri) = match path {
        Some(p) => {
            let path = cx.resolve_path(p)?;
            let (s, _, _) = cx.open_file(&path, method).await?;
            (s, Some(path_to_uri(&path)))
        }
        None => {
            let routes = cx.ws.workspace_routes();
            let Some(r) = routes.first() else {
                return Err(OpError::NoServer(
                    scry_model::Message::new().note(Reason::NoServerApplies),
                ));
            };
            (cx.start(r, method).await?, None)
        }
    };
    let mut params = params.unwrap_or(Value::Null);
    if let Some(uri) = &uri {
        substitute_uri(&mut params, uri);
        if params.is_null() {
            params = json!({ "textDocument": { "uri": uri } });
        }
    }
    let params = if params.is_null() { None } else { Some(params) };
    let v = match tokio::time::timeout_at(cx.deadline, session.request(method, params)).await {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => return Err(session_error(e, method)),
        Err(_) => return Err(cx.timeout_error(&session, method)),
    };
    let mut answer = Answer::new(
        Action::Request,
        cx.question.clone(),
        Body::Raw {
            method: method.to_string(),
            result: v,
        },
    );
    answer.server = Some(session.name().to_string());
    Ok(answer)
}

/// Status: configured servers, installed or not, running or not, as data
/// (scry-render words it). Starts nothing.
pub(crate) async fn status(ws: &Arc<Workspace>, question: Question) -> Answer {
    let config = ws.config();
    let running = ws.running();
    let starting = ws.starting();
    let memory: std::collections::HashMap<u32, scry_workspace::ServerUse> = ws
        .usage_measured()
        .into_iter()
        .filter_map(|u| Some((u.pid?, u)))
        .collect();
    let mut servers = Vec::new();
    for spec in &config.servers {
        let installed = ws.installed(&spec.command);
        let mut run = Vec::new();
        for s in running.iter().filter(|s| s.name() == spec.id) {
            let state = if !s.is_alive() {
                RunState::Exited {
                    reason: s.exit_reason().await,
                }
            } else if let Some(progress) = s.state().indexing() {
                RunState::Indexing { progress }
            } else {
                RunState::Ready
            };
            let used = s.pid().and_then(|p| memory.get(&p));
            run.push(RunningServer {
                root: s.root().to_path_buf(),
                folders: ws.folders_of(s),
                programs: used.map(|u| u.programs.clone()).unwrap_or_default(),
                pid: s.pid(),
                state,
                encoding: Some(s.encoding().as_lsp().to_string()),
                open_documents: s.open_documents().await,
                memory_kib: used.and_then(|u| u.memory).map(|m| m.rss_kib),
                processes: used.and_then(|u| u.memory).map(|m| m.processes),
                memory_cap_kib: Some(spec.memory_cap_kib(&config.limits)),
            });
        }
        for (id, root) in &starting {
            if id == &spec.id {
                run.push(RunningServer {
                    root: root.clone(),
                    folders: Vec::new(),
                    programs: Vec::new(),
                    pid: None,
                    state: RunState::Starting,
                    encoding: None,
                    open_documents: 0,
                    memory_kib: None,
                    processes: None,
                    memory_cap_kib: Some(spec.memory_cap_kib(&config.limits)),
                });
            }
        }
        let role = match (&spec.alternative_to, spec.kind) {
            (Some(primary), _) => Some(ProviderRole::AlternativeTo {
                primary: primary.clone(),
            }),
            (None, ProviderKind::Cli) => Some(ProviderRole::CliLinter),
            _ if spec.is_linter => Some(ProviderRole::Linter),
            _ => None,
        };
        servers.push(ProviderStatus {
            id: spec.id.clone(),
            kind: match spec.kind {
                ProviderKind::Lsp => "lsp",
                ProviderKind::Cli => "cli",
            }
            .to_string(),
            command: spec.command.clone(),
            installed,
            file_types: spec.file_types.clone(),
            disabled: spec.disabled,
            role,
            running: run,
        });
    }
    let mut warnings = config.warnings.clone();
    for s in &config.sources {
        warnings.retain(|w| !w.is_empty());
        let _ = s;
    }
    let mut answer = Answer::new(
        Action::Status,
        question,
        Body::Status(StatusReport {
            workspace_root: ws.root().to_path_buf(),
            servers,
            warnings: std::mem::take(&mut warnings),
            // Trust: what was ignored, and how to trust (always, in status).
            trust_ignored: ws.trust_notice(),
            syntactic: None,
            index: None,
            index_problem: None,
            index_refresh: None,
            indexers: Vec::new(),
            memory_events: ws.memory_events().iter().map(|e| e.note()).collect(),
            memory_budget_kib: Some(config.limits.memory_budget_mib.saturating_mul(1024)),
            watcher: ws.watcher_status().map(Box::new),
        }),
    );
    if let Some(d) = ws.log_dir() {
        answer.notes.push(Reason::ServerLogs {
            dir: d.to_path_buf(),
        });
    }
    if !config.trust.project_files.is_empty() {
        answer.notes.push(Reason::WorkspaceTrust {
            trust: config.trust.trust.clone(),
        });
    }
    if !config.sources.is_empty() {
        answer.notes.push(Reason::Configuration {
            files: config.sources.clone(),
        });
    }
    answer
}

/// Replace `"$uri"` strings in raw params with the file's URI.
fn substitute_uri(v: &mut Value, uri: &str) {
    match v {
        Value::String(s) if s == "$uri" => *s = uri.to_string(),
        Value::Array(a) => a.iter_mut().for_each(|x| substitute_uri(x, uri)),
        Value::Object(o) => o.values_mut().for_each(|x| substitute_uri(x, uri)),
        _ => {}
    }
}
