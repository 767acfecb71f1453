//! Questions about files and the workspace rather than a position:
//! document symbols, workspace symbols, capabilities, raw requests, status.
use super::*;

impl Engine {
    pub(crate) async fn document_symbols(
        &self,
        q: &Query,
        deadline: Instant,
    ) -> Result<Answer, OpError> {
        let method = "textDocument/documentSymbol";
        let Some(p) = &q.path else {
            return Err(OpError::InvalidArgument(
                "symbols needs a path (for a search across files use workspace_symbols with a query)".into(),
            ));
        };
        let path = self.resolve_path(p)?;
        let (session, _, index) = self.open_file(&path, deadline, method).await?;
        let mut answer = Answer::new(
            q.action,
            q.question(self.ws.root()),
            Body::Outline {
                path: path.clone(),
                symbols: Vec::new(),
            },
        );
        answer.server = Some(session.name().to_string());
        if !supports(&session, method) {
            answer.empty_reason = Some(format!("{} does not support {method}", session.name()));
            return Ok(answer);
        }
        let params = json!({ "textDocument": { "uri": path_to_uri(&path) } });
        let v = match self.ask(&session, method, params, deadline).await {
            Ok(v) => v,
            Err(AskError::Timeout) => {
                return Err(self.timeout_error(&session, method, self.budget(q)));
            }
            Err(AskError::Session(e)) => return Err(session_error(e, method)),
            Err(AskError::Op(e)) => return Err(e),
        };
        let (symbols, _) = convert::document_symbols(&session, v, &index)?;
        answer.body = Body::Outline { path, symbols };
        if answer.body.is_empty() {
            answer.empty_reason = session
                .state()
                .indexing()
                .map(|ix| format!("{} is still indexing ({ix})", session.name()));
        }
        Ok(answer)
    }

    pub(crate) async fn workspace_symbols(
        &self,
        q: &Query,
        deadline: Instant,
    ) -> Result<Answer, OpError> {
        let method = "workspace/symbol";
        let Some(query) = q
            .query
            .clone()
            .or_else(|| q.symbol.clone())
            .filter(|s| !s.trim().is_empty())
        else {
            return Err(OpError::InvalidArgument(
                "workspace_symbols needs a query (part of a symbol name)".into(),
            ));
        };
        let mut notes = Vec::new();
        let sessions = match &q.path {
            Some(p) => {
                let path = self.resolve_path(p)?;
                let (s, _, _) = self.open_file(&path, deadline, method).await?;
                vec![s]
            }
            None => {
                let routes = self.ws.workspace_routes();
                if routes.is_empty() {
                    return Err(OpError::NoServer(
                        "no language server applies to this workspace (no root markers found); pass a path to pick one".into(),
                    ));
                }
                let mut v = Vec::new();
                for r in &routes {
                    match self.start(r, deadline, method).await {
                        Ok(s) => v.push(s),
                        Err(e) => notes.push(format!("{}: {e}", r.spec.id)),
                    }
                }
                v
            }
        };
        let mut all = Vec::new();
        let mut partial = Vec::new();
        let mut servers = Vec::new();
        for s in &sessions {
            if !supports(s, method) {
                notes.push(format!("{} does not support workspace symbols", s.name()));
                continue;
            }
            servers.push(s.name().to_string());
            self.settle(s, deadline).await;
            let mut files = Files::new(Some(s.clone()));
            for attempt in 0..2 {
                let v = match self
                    .ask(s, method, json!({ "query": query }), deadline)
                    .await
                {
                    Ok(v) => v,
                    Err(AskError::Timeout) => {
                        return Err(self.timeout_error(s, method, self.budget(q)));
                    }
                    Err(AskError::Session(e)) => return Err(session_error(e, method)),
                    Err(AskError::Op(e)) => return Err(e),
                };
                let items = convert::workspace_symbols(s, v, &mut files).await?;
                if !items.is_empty() || attempt == 1 || !self.index_pending(s, deadline).await {
                    all.extend(items);
                    break;
                }
            }
            if let Some(ix) = s.state().indexing() {
                partial.push(format!("{} is still indexing ({ix})", s.name()));
            }
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
                !it.loc.path.starts_with(self.ws.root()),
                it.loc.path.clone(),
                it.loc.line,
            )
        });
        let mut answer = Answer::new(
            q.action,
            q.question(self.ws.root()),
            Body::WorkspaceSymbols {
                query: query.clone(),
                symbols: all,
            },
        );
        answer.server = Some(servers.join(", ")).filter(|s| !s.is_empty());
        answer.notes = notes;
        if !partial.is_empty() {
            if answer.body.is_empty() {
                answer.empty_reason = Some(partial.join("; "));
            } else {
                answer.partial = Some(partial.join("; "));
            }
        }
        Ok(answer)
    }

    pub(crate) async fn capabilities(
        &self,
        q: &Query,
        deadline: Instant,
    ) -> Result<Answer, OpError> {
        let session = match &q.path {
            Some(p) => {
                let path = self.resolve_path(p)?;
                let route = self
                    .ws
                    .route(&path)
                    .map_err(|e| workspace_error(e, "initialize"))?;
                self.start(&route, deadline, "initialize").await?
            }
            None => {
                let running = self.ws.running();
                let Some(s) = running.into_iter().next() else {
                    return Err(OpError::InvalidArgument(
                        "no server is running in this process; pass a path to start the server for that file".into(),
                    ));
                };
                s
            }
        };
        let mut answer = Answer::new(
            q.action,
            q.question(self.ws.root()),
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
            answer.notes.push(format!(
                "registered dynamically: {}",
                regs.iter()
                    .map(|r| r.method.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        Ok(answer)
    }

    pub(crate) async fn raw_request(
        &self,
        q: &Query,
        deadline: Instant,
    ) -> Result<Answer, OpError> {
        let Some(method) = q.method.clone().filter(|m| !m.trim().is_empty()) else {
            return Err(OpError::InvalidArgument(
                "request needs a method (e.g. textDocument/foldingRange) and JSON params".into(),
            ));
        };
        let (session, uri) = match &q.path {
            Some(p) => {
                let path = self.resolve_path(p)?;
                let (s, _, _) = self.open_file(&path, deadline, &method).await?;
                (s, Some(path_to_uri(&path)))
            }
            None => {
                let routes = self.ws.workspace_routes();
                let Some(r) = routes.first() else {
                    return Err(OpError::NoServer(
                        "no language server applies to this workspace; pass a path to pick one"
                            .into(),
                    ));
                };
                (self.start(r, deadline, &method).await?, None)
            }
        };
        let mut params = q.params.clone().unwrap_or(Value::Null);
        if let Some(uri) = &uri {
            substitute_uri(&mut params, uri);
            if params.is_null() {
                params = json!({ "textDocument": { "uri": uri } });
            }
        }
        let params = if params.is_null() { None } else { Some(params) };
        let v = match tokio::time::timeout_at(deadline, session.request(&method, params)).await {
            Ok(Ok(v)) => v,
            Ok(Err(e)) => return Err(session_error(e, &method)),
            Err(_) => return Err(self.timeout_error(&session, &method, self.budget(q))),
        };
        let mut answer = Answer::new(
            q.action,
            q.question(self.ws.root()),
            Body::Raw { method, result: v },
        );
        answer.server = Some(session.name().to_string());
        Ok(answer)
    }

    /// Status: configured servers, installed or not, running or not. Starts
    /// nothing.
    pub(crate) async fn status(&self, q: &Query) -> Answer {
        let config = self.ws.config();
        let running = self.ws.running();
        let starting = self.ws.starting();
        let mut servers = Vec::new();
        for spec in &config.servers {
            let installed = self.ws.installed(&spec.command);
            let mut run = Vec::new();
            for s in running.iter().filter(|s| s.name() == spec.id) {
                let state = if !s.is_alive() {
                    format!(
                        "exited: {}",
                        s.exit_reason().await.unwrap_or_else(|| "unknown".into())
                    )
                } else if let Some(ix) = s.state().indexing() {
                    format!("indexing: {ix}")
                } else {
                    "ready".to_string()
                };
                run.push(RunningServer {
                    root: s.root().to_path_buf(),
                    pid: s.pid(),
                    state,
                    encoding: Some(s.encoding().as_lsp().to_string()),
                    open_documents: s.open_documents().await,
                });
            }
            for (id, root) in &starting {
                if id == &spec.id {
                    run.push(RunningServer {
                        root: root.clone(),
                        pid: None,
                        state: "starting".into(),
                        encoding: None,
                        open_documents: 0,
                    });
                }
            }
            let note = match (&spec.alternative_to, spec.kind) {
                (Some(primary), _) => Some(format!(
                    "alternative to {primary}: used only when {primary} is not installed"
                )),
                (None, ProviderKind::Cli) => Some("command-line linter (diagnostics only)".into()),
                _ if spec.is_linter => Some("linter (diagnostics only)".into()),
                _ => None,
            };
            servers.push(ServerStatus {
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
                note,
                running: run,
            });
        }
        let mut warnings = config.warnings.clone();
        for s in &config.sources {
            warnings.retain(|w| !w.is_empty());
            let _ = s;
        }
        // Trust: what was ignored, and how to trust (always, in status).
        if let Some(n) = self.ws.trust_notice() {
            warnings.push(n);
        }
        let mut answer = Answer::new(
            q.action,
            q.question(self.ws.root()),
            Body::Status(StatusReport {
                workspace_root: self.ws.root().to_path_buf(),
                servers,
                warnings: std::mem::take(&mut warnings),
                syntactic: None,
            }),
        );
        if let Some(d) = self.ws.log_dir() {
            answer.notes.push(format!("server logs: {}", d.display()));
        }
        if !config.trust.project_files.is_empty() {
            answer
                .notes
                .push(format!("workspace {}", config.trust.trust.describe()));
        }
        if !config.sources.is_empty() {
            answer.notes.push(format!(
                "configuration: {}",
                config
                    .sources
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        answer
    }
}
