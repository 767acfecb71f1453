//! Positional questions (definition, references, hover, calls, …): resolve
//! the named symbol to candidate positions, ask at them in order, and say
//! where the answer came from.
use super::*;

impl Engine {
    pub(crate) async fn positional(&self, q: &Query, deadline: Instant) -> Result<Answer, OpError> {
        let method = method_for(q.action);
        let budget = self.budget(q);
        let mut notes = Vec::new();
        let target = match &q.path {
            Some(p) => {
                let path = self.resolve_path(p)?;
                self.target_in_file(q, path, deadline, method).await?
            }
            None => {
                let Some(sym) = q.symbol.as_deref().filter(|s| !s.trim().is_empty()) else {
                    return Err(OpError::InvalidArgument(format!(
                        "{} needs a symbol (and usually a path): e.g. path=src/lib.rs symbol=Config",
                        q.action.name()
                    )));
                };
                self.target_from_workspace(q, sym, deadline, method, &mut notes)
                    .await?
            }
        };
        let Target {
            path,
            session,
            index,
            candidates,
            others,
        } = target;
        let mut files = Files::new(Some(session.clone()));
        files.insert(path.clone(), index.clone());

        let mut answer = Answer::new(q.action, q.question(self.ws.root()), empty_body(q.action));
        answer.server = Some(session.name().to_string());
        answer.others = others;
        answer.notes = notes;

        if !session.supports(method) {
            answer.empty_reason = Some(format!("{} does not support {method}", session.name()));
            if let Some(c) = candidates.first() {
                answer.asked_at = Some(self.asked_at(&path, &index, c));
            }
            return Ok(answer);
        }

        self.settle(&session, deadline).await;

        let mut last_err: Option<OpError> = None;
        let mut tried = 0;
        for cand in candidates.iter().take(MAX_CANDIDATES) {
            tried += 1;
            answer.asked_at = Some(self.asked_at(&path, &index, cand));
            let mut attempt = 0;
            let body = loop {
                attempt += 1;
                match self
                    .ask_at(
                        q.action, &session, &path, &index, cand.pos, deadline, &mut files,
                    )
                    .await
                {
                    Ok(b) => break Some(b),
                    Err(AskError::Timeout) => {
                        return Err(self.timeout_error(&session, method, budget));
                    }
                    Err(AskError::Session(e)) if is_method_not_found(&e) => {
                        answer.empty_reason =
                            Some(format!("{} does not support {method}", session.name()));
                        return Ok(answer);
                    }
                    Err(AskError::Session(e)) if is_transient(&e) && attempt < 3 => {
                        tokio::time::sleep(Duration::from_millis(150)).await;
                        continue;
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
            let Some(body) = body else { continue };
            if !body.is_empty() {
                answer.body = body;
                break;
            }
            // Empty while indexing: wait for the index, ask once more here.
            if self.index_pending(&session, deadline).await
                && let Ok(b) = self
                    .ask_at(
                        q.action, &session, &path, &index, cand.pos, deadline, &mut files,
                    )
                    .await
                && !b.is_empty()
            {
                answer.body = b;
                break;
            }
        }
        if answer.body.is_empty() {
            if let Some(e) = last_err
                && tried == 1
            {
                return Err(e);
            }
            answer.empty_reason = Some(match session.state().indexing() {
                Some(ix) => format!(
                    "{} is still indexing ({ix}); ask again shortly",
                    session.name()
                ),
                None if candidates.len() > 1 => format!(
                    "{} returned nothing at the {} places tried",
                    session.name(),
                    tried
                ),
                None => format!("{} returned nothing there", session.name()),
            });
        } else if let Some(ix) = session.state().indexing() {
            answer.partial = Some(format!("{} is still indexing ({ix})", session.name()));
        }
        Ok(answer)
    }

    pub(crate) fn asked_at(&self, path: &Path, index: &LineIndex, c: &Candidate) -> AskedAt {
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
        &self,
        action: Action,
        session: &Session,
        path: &Path,
        index: &LineIndex,
        pos: CharPos,
        deadline: Instant,
        files: &mut Files,
    ) -> Result<Body, AskError> {
        let lsp_pos = index.to_lsp(pos, session.encoding());
        let mut params = json!({
            "textDocument": { "uri": path_to_uri(path) },
            "position": { "line": lsp_pos.line, "character": lsp_pos.character },
        });
        let method = method_for(action);
        if action == Action::References {
            params["context"] = json!({ "includeDeclaration": true });
        }
        let v = self.ask(session, method, params, deadline).await?;
        match action {
            Action::Hover => Ok(Body::Hover {
                text: convert::hover_text(session, v).map_err(AskError::Op)?,
            }),
            Action::IncomingCalls | Action::OutgoingCalls => {
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
                let call_method = if direction == CallDirection::Incoming {
                    "callHierarchy/incomingCalls"
                } else {
                    "callHierarchy/outgoingCalls"
                };
                let item_json = serde_json::to_value(&item).unwrap_or(Value::Null);
                let v = self
                    .ask(session, call_method, json!({ "item": item_json }), deadline)
                    .await?;
                let site_path = scry_lsp::uri_to_path(item.uri.as_ref());
                let calls = convert::calls(session, call_method, v, site_path.as_deref(), files)
                    .await
                    .map_err(AskError::Op)?;
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

    /// Resolve the question to candidate positions in `path`.
    pub(crate) async fn target_in_file(
        &self,
        q: &Query,
        path: PathBuf,
        deadline: Instant,
        method: &str,
    ) -> Result<Target, OpError> {
        let (session, route, index) = self.open_file(&path, deadline, method).await?;
        let rel = self.display(&path);
        let line_hint = q.line.map(|l| l - 1);
        if let Some(l) = line_hint
            && l >= index.line_count()
        {
            return Err(OpError::InvalidArgument(format!(
                "line {} is past the end of {rel} ({} lines)",
                l + 1,
                index.line_count()
            )));
        }
        // An exact column wins.
        if let (Some(line), Some(col)) = (q.line, q.column) {
            return Ok(Target {
                candidates: vec![Candidate {
                    pos: CharPos {
                        line: line - 1,
                        col: col - 1,
                    },
                    via: "the given line and column".into(),
                }],
                path,
                session,
                index,
                others: Vec::new(),
            });
        }
        let Some(symbol) = q.symbol.as_deref().filter(|s| !s.trim().is_empty()) else {
            // A bare line: its first identifier.
            if let Some(l) = line_hint
                && let Some(pos) = resolve::first_identifier(&index, l)
            {
                return Ok(Target {
                    candidates: vec![Candidate {
                        pos,
                        via: "the first identifier on the given line".into(),
                    }],
                    path,
                    session,
                    index,
                    others: Vec::new(),
                });
            }
            return Err(OpError::InvalidArgument(format!(
                "{} needs a symbol (or line and column) in {rel}",
                q.action.name()
            )));
        };
        let want = SymbolName::parse(symbol);
        let quote_single = !route.language_id.contains("rust");

        // 1. Declarations in the file's document symbols.
        let mut decls: Vec<Declared> = Vec::new();
        if session.supports("textDocument/documentSymbol") {
            let params = json!({ "textDocument": { "uri": path_to_uri(&path) } });
            match self
                .ask(&session, "textDocument/documentSymbol", params, deadline)
                .await
            {
                Ok(v) => {
                    if let Ok((_, flat)) = convert::document_symbols(&session, v, &index) {
                        decls = flat;
                    }
                }
                Err(AskError::Timeout) => {
                    return Err(self.timeout_error(
                        &session,
                        "textDocument/documentSymbol",
                        self.budget(q),
                    ));
                }
                Err(AskError::Session(e)) if e.is_crash() => {
                    return Err(session_error(e, "textDocument/documentSymbol"));
                }
                Err(_) => {}
            }
        }
        let mut matches = resolve::match_declarations(&decls, &want);
        if let Some(h) = line_hint {
            matches.sort_by_key(|d| (d.pos.line.abs_diff(h), d.pos));
        }
        let mut candidates = Vec::new();
        let mut others = Vec::new();
        if let Some(first) = matches.first() {
            candidates.push(Candidate {
                pos: first.pos,
                via: format!("declaration of {} `{}`", first.kind, symbol),
            });
            for d in matches.iter().skip(1) {
                others.push(Alternative {
                    name: d.name.clone(),
                    kind: d.kind.clone(),
                    line: d.pos.line + 1,
                    col: d.pos.col + 1,
                    container: d.container(),
                });
            }
        }
        // 2. Occurrences of the (last segment of the) name.
        let occ = resolve::occurrences(&index, &want, line_hint, quote_single);
        let n = occ.len();
        for (i, o) in occ.iter().enumerate() {
            if candidates.iter().any(|c| c.pos == o.pos) {
                continue;
            }
            let what = if o.kind == OccurrenceKind::Prose {
                " (in a comment or string)"
            } else {
                ""
            };
            candidates.push(Candidate {
                pos: o.pos,
                via: format!("occurrence {} of {n} of `{}`{what}", i + 1, want.name),
            });
        }
        if candidates.is_empty() && want.is_qualified() {
            // 3. Qualified and not in this file: workspace symbols.
            if let Some(found) = self
                .lookup_workspace_symbol(&want, std::slice::from_ref(&session), deadline)
                .await?
            {
                let fpath = found.loc.path.clone();
                let (s2, _, idx2) = self.open_file(&fpath, deadline, method).await?;
                return Ok(Target {
                    candidates: vec![Candidate {
                        pos: CharPos {
                            line: found.loc.line - 1,
                            col: found.loc.col - 1,
                        },
                        via: format!("workspace symbol `{symbol}`"),
                    }],
                    path: fpath,
                    session: s2,
                    index: idx2,
                    others: Vec::new(),
                });
            }
        }
        if candidates.is_empty() {
            return Err(OpError::SymbolNotFound(format!(
                "`{symbol}` does not occur in {rel}; check the spelling, or omit path to search the workspace"
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

    /// No path: find the symbol with workspace symbols, then ask there.
    pub(crate) async fn target_from_workspace(
        &self,
        q: &Query,
        symbol: &str,
        deadline: Instant,
        method: &str,
        notes: &mut Vec<String>,
    ) -> Result<Target, OpError> {
        let want = SymbolName::parse(symbol);
        let routes = self.ws.workspace_routes();
        if routes.is_empty() {
            return Err(OpError::NoServer(
                "no language server applies to this workspace (no root markers found); pass a path"
                    .into(),
            ));
        }
        let mut sessions = Vec::new();
        for r in &routes {
            match self.start(r, deadline, method).await {
                Ok(s) => sessions.push(s),
                Err(e) => notes.push(format!("{}: {e}", r.spec.id)),
            }
        }
        let Some(found) = self
            .lookup_workspace_symbol(&want, &sessions, deadline)
            .await?
        else {
            return Err(OpError::SymbolNotFound(format!(
                "no workspace symbol named `{symbol}` ({}); pass a path to search one file",
                sessions
                    .iter()
                    .map(|s| s.name().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        };
        let path = found.loc.path.clone();
        if !path.starts_with(self.ws.root()) {
            notes.push(format!("`{symbol}` was found outside the workspace"));
        }
        let (session, _, index) = self.open_file(&path, deadline, method).await?;
        let _ = q;
        Ok(Target {
            candidates: vec![Candidate {
                pos: CharPos {
                    line: found.loc.line - 1,
                    col: found.loc.col - 1,
                },
                via: format!("workspace symbol {} `{}`", found.kind, found.name),
            }],
            path,
            session,
            index,
            others: Vec::new(),
        })
    }

    /// Best workspace-symbol match for a name: exact name and matching
    /// container first, inside the workspace before outside.
    pub(crate) async fn lookup_workspace_symbol(
        &self,
        want: &SymbolName,
        sessions: &[Session],
        deadline: Instant,
    ) -> Result<Option<SymbolItem>, OpError> {
        let mut best: Option<(u8, SymbolItem)> = None;
        for s in sessions {
            if !s.supports("workspace/symbol") {
                continue;
            }
            self.settle(s, deadline).await;
            let mut files = Files::new(Some(s.clone()));
            for attempt in 0..2 {
                let v = match self
                    .ask(
                        s,
                        "workspace/symbol",
                        json!({ "query": want.name }),
                        deadline,
                    )
                    .await
                {
                    Ok(v) => v,
                    Err(_) => break,
                };
                let items = convert::workspace_symbols(s, v, &mut files).await?;
                let before = best.is_some();
                for it in items {
                    if let Some(score) = self.symbol_score(&it, want)
                        && best.as_ref().is_none_or(|(b, _)| score > *b)
                    {
                        best = Some((score, it));
                    }
                }
                // Nothing matched on a server that may still be indexing:
                // wait for it and ask once more.
                if best.is_some()
                    || before
                    || attempt == 1
                    || !self.index_pending(s, deadline).await
                {
                    break;
                }
            }
        }
        Ok(best.map(|(_, it)| it))
    }

    /// How well a workspace symbol matches a wanted name: `None` when it
    /// does not; exact names beat decorated ones, the workspace beats
    /// outside.
    pub(crate) fn symbol_score(&self, it: &SymbolItem, want: &SymbolName) -> Option<u8> {
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
        let inside = it.loc.path.starts_with(self.ws.root());
        Some((u8::from(it.name == want.name) << 1) | u8::from(inside))
    }
}
