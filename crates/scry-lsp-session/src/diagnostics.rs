//! Diagnostics that belong to the content the server has now.
//!
//! A document is synced from disk first ([`Session::sync_file`]); then
//! [`Session::wait_diagnostics`] gets its diagnostics:
//!
//! - **pull** (`textDocument/diagnostic`) when the server supports it
//!   statically (`diagnosticProvider`) or registered it dynamically (pyright
//!   does). The answer is computed for what the server has, so it is current
//!   by construction. Any error (Debian's gopls answers -32700) falls back to
//!   push; transient ones (content modified, server cancelled) are retried.
//! - **push** (`textDocument/publishDiagnostics`, stored by
//!   [`crate::ServerState`]): a publication counts only when it was made for
//!   the synced content: its `version` is at least the synced version when
//!   the server echoes versions, else it arrived after that version was sent.
//!   Then the server must be ready (no indexing progress, such as
//!   rust-analyzer's `cargo check`) and quiet (no publication or indexing
//!   progress for [`WaitOptions::quiet`]), so that a server which publishes
//!   in several passes is not cut off after the first.
//! - servers that only check on save get `didSave` ([`Session::did_save`]);
//!   after one, push results are waited for even when pull succeeded
//!   (rust-analyzer pushes its `cargo check` results).
//!
//! Everything is bounded by the caller's deadline; when it passes before
//! current diagnostics came, the answer says so ([`DocDiagnostics::fresh`]
//! false with a reason) and carries no old results.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use scry_rpc::{ResponseError, RpcError};
use serde_json::{Value, json};

use crate::session::{Session, SessionError};
use scry_base::uri::{path_to_uri, uri_to_path};

/// How [`Session::wait_diagnostics`] decides that publishing is over.
#[derive(Debug, Clone, Copy)]
pub struct WaitOptions {
    /// How long publications and indexing progress must have stopped.
    pub quiet: Duration,
    /// `didSave` was sent for this content: wait for push results (the
    /// check it triggers) even when pull answered.
    pub saved: bool,
}

impl Default for WaitOptions {
    fn default() -> Self {
        WaitOptions {
            quiet: Duration::from_millis(400),
            saved: false,
        }
    }
}

/// The diagnostics of one document for the content the server has.
#[derive(Debug, Clone, PartialEq)]
pub struct DocDiagnostics {
    pub path: PathBuf,
    /// The synced version they are for.
    pub version: Option<i32>,
    /// Raw LSP `Diagnostic` objects (pull and push together; the same
    /// diagnostic may appear twice when a server does both).
    pub items: Vec<Value>,
    /// False when no result for the current content came in time: `items`
    /// is then empty and `pending` says why.
    pub fresh: bool,
    /// Whether a pull request answered.
    pub pulled: bool,
    /// Why the result is missing or may be incomplete (the server was still
    /// checking when the deadline passed).
    pub pending: Option<String>,
    /// How long the wait took.
    pub waited: Duration,
}

fn transient(e: &SessionError) -> bool {
    matches!(e, SessionError::Rpc(RpcError::Server { error, .. })
        if error.code == ResponseError::CONTENT_MODIFIED
            || error.code == ResponseError::SERVER_CANCELLED
            || error.code == ResponseError::REQUEST_CANCELLED)
}

/// Items of a full document diagnostic report; `None` for anything else.
fn report_items(v: &Value) -> Option<Vec<Value>> {
    match v["kind"].as_str() {
        Some("full") | None => v["items"].as_array().cloned(),
        _ => None,
    }
}

impl Session {
    /// Whether the server wants `didSave` (`textDocumentSync.save`, or a
    /// dynamic registration), and whether with the text.
    pub fn wants_save(&self) -> Option<bool> {
        if let Some(r) = self
            .state()
            .registrations()
            .into_iter()
            .find(|r| r.method == "textDocument/didSave")
        {
            return Some(r.options["includeText"].as_bool().unwrap_or(false));
        }
        match &self.capabilities()["textDocumentSync"]["save"] {
            Value::Bool(true) => Some(false),
            Value::Object(o) => Some(o.get("includeText").and_then(Value::as_bool) == Some(true)),
            _ => None,
        }
    }

    /// Send `didSave` for an open document when the server wants it.
    /// Returns whether it was sent.
    pub async fn did_save(&self, path: &Path) -> Result<bool, SessionError> {
        let Some(include_text) = self.wants_save() else {
            return Ok(false);
        };
        if self.synced(path).await.is_none() {
            return Ok(false);
        }
        let mut params = json!({ "textDocument": { "uri": path_to_uri(path) } });
        if include_text && let Some(ix) = self.document(path).await {
            params["text"] = Value::String(ix.text().to_string());
        }
        self.notify("textDocument/didSave", Some(params))?;
        Ok(true)
    }

    /// Whether `textDocument/diagnostic` can be asked.
    pub fn pulls_diagnostics(&self) -> bool {
        self.supports("textDocument/diagnostic", "diagnosticProvider")
    }

    /// Whether `workspace/diagnostic` can be asked.
    pub fn pulls_workspace_diagnostics(&self) -> bool {
        let dynamic = self.state().registrations().into_iter().any(|r| {
            r.method == "textDocument/diagnostic"
                && r.options["workspaceDiagnostics"].as_bool() == Some(true)
        });
        dynamic || self.capabilities()["diagnosticProvider"]["workspaceDiagnostics"] == true
    }

    /// `textDocument/diagnostic` for an open document, bounded by
    /// `deadline`. `None` when the server does not support it, fails (any
    /// error: the caller falls back to push) or does not answer in time.
    pub async fn pull_diagnostics(
        &self,
        path: &Path,
        deadline: tokio::time::Instant,
    ) -> Option<Vec<Value>> {
        if !self.pulls_diagnostics() {
            return None;
        }
        let params = json!({ "textDocument": { "uri": path_to_uri(path) } });
        loop {
            let ask = self.request("textDocument/diagnostic", Some(params.clone()));
            match tokio::time::timeout_at(deadline, ask).await {
                Ok(Ok(v)) => return report_items(&v),
                Ok(Err(e)) if transient(&e) => {
                    let next = tokio::time::Instant::now() + Duration::from_millis(100);
                    if next >= deadline {
                        return None;
                    }
                    tokio::time::sleep_until(next).await;
                }
                Ok(Err(e)) => {
                    tracing::debug!(server = %self.name(), "pull diagnostics failed, using push: {e}");
                    return None;
                }
                Err(_) => return None,
            }
        }
    }

    /// `workspace/diagnostic` (full reports only), bounded by `deadline`:
    /// `(path, version, items)` per document. `None` when unsupported or
    /// failed.
    pub async fn pull_workspace_diagnostics(
        &self,
        deadline: tokio::time::Instant,
    ) -> Option<Vec<(PathBuf, Option<i64>, Vec<Value>)>> {
        if !self.pulls_workspace_diagnostics() {
            return None;
        }
        let ask = self.request(
            "workspace/diagnostic",
            Some(json!({ "previousResultIds": [] })),
        );
        let v = match tokio::time::timeout_at(deadline, ask).await {
            Ok(Ok(v)) => v,
            Ok(Err(e)) => {
                tracing::debug!(server = %self.name(), "workspace diagnostics failed: {e}");
                return None;
            }
            Err(_) => return None,
        };
        let items = v["items"].as_array()?;
        Some(
            items
                .iter()
                .filter_map(|r| {
                    let path = uri_to_path(r["uri"].as_str()?)?;
                    Some((path, r["version"].as_i64(), report_items(r)?))
                })
                .collect(),
        )
    }

    /// The diagnostics of an open document for the content the server has
    /// now (see the module documentation), waiting at most until `deadline`.
    pub async fn wait_diagnostics(
        &self,
        path: &Path,
        deadline: tokio::time::Instant,
        opts: WaitOptions,
    ) -> DocDiagnostics {
        let start = Instant::now();
        let mut out = DocDiagnostics {
            path: path.to_path_buf(),
            version: None,
            items: Vec::new(),
            fresh: false,
            pulled: false,
            pending: None,
            waited: Duration::ZERO,
        };
        let Some((version, since)) = self.synced(path).await else {
            out.pending = Some(format!("{} does not have the file open", self.name()));
            return out;
        };
        out.version = Some(version);
        let uri = path_to_uri(path);
        // Pull and push race: a pull that the server is slow to answer
        // (still loading the project) does not hold up a current push, and
        // a push never comes from servers that pull (pyright).
        type Pull<'a> =
            std::pin::Pin<Box<dyn std::future::Future<Output = Option<Vec<Value>>> + Send + 'a>>;
        let mut pull: Option<Pull<'_>> = None;
        let mut pull_tried = false;
        let mut pulled: Option<Vec<Value>> = None;
        let state = self.state().clone();
        let mut rx = state.subscribe();
        loop {
            // Servers that register pull dynamically (pyright) may do so
            // after the document was opened.
            if !pull_tried && self.pulls_diagnostics() {
                pull_tried = true;
                pull = Some(Box::pin(self.pull_diagnostics(path, deadline)));
            }
            let now = Instant::now();
            let push = state.diagnostics(&uri).filter(|p| match p.version {
                Some(v) => v >= i64::from(version),
                None => p.at >= since,
            });
            let ready = state.is_ready();
            let quiet_from = state.last_activity().map_or(since, |a| a.max(since));
            let quiet_at = quiet_from + opts.quiet;
            let settled = ready && now >= quiet_at;
            let done = match &pulled {
                Some(_) => !opts.saved || settled,
                None => push.is_some() && settled,
            };
            let timed_out = tokio::time::Instant::now() >= deadline;
            if done || timed_out {
                out.waited = start.elapsed();
                out.pulled = pulled.is_some();
                if pulled.is_none() && push.is_none() {
                    let mut why = format!(
                        "{} had not published diagnostics for the current content",
                        self.name()
                    );
                    if let Some(ix) = state.indexing() {
                        why.push_str(&format!(" (still busy: {ix})"));
                    }
                    out.pending = Some(why);
                    return out;
                }
                out.fresh = true;
                if !done {
                    out.pending = Some(match state.indexing() {
                        Some(ix) => format!("{} was still checking ({ix})", self.name()),
                        None => format!("{} was still publishing", self.name()),
                    });
                }
                out.items = pulled.unwrap_or_default();
                if let Some(p) = push {
                    out.items.extend(p.diagnostics);
                }
                return out;
            }
            let wake = if ready && quiet_at > now {
                tokio::time::Instant::from_std(quiet_at).min(deadline)
            } else {
                deadline
            };
            match pull.as_mut() {
                Some(f) => {
                    tokio::select! {
                        r = f => {
                            pull = None;
                            pulled = r;
                        }
                        _ = tokio::time::timeout_at(wake, rx.changed()) => {}
                    }
                }
                None => {
                    let _ = tokio::time::timeout_at(wake, rx.changed()).await;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_items_reads_full_reports_only() {
        let full = json!({"kind": "full", "items": [{"message": "x"}]});
        assert_eq!(report_items(&full).unwrap().len(), 1);
        assert!(report_items(&json!({"kind": "unchanged", "resultId": "1"})).is_none());
        assert!(report_items(&json!(null)).is_none());
    }
}
