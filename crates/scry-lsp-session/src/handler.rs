//! Answers to server→client requests, and routing of server notifications
//! into [`ServerState`]. Every request gets an answer: servers built on
//! vscode-languageserver exit when a request they rely on is rejected.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use scry_rpc::{DeferredReply, Handler, ResponseError};
use serde_json::{Value, json};

use crate::state::{Registration, ServerState};
use scry_base::uri::path_to_uri;

pub(crate) struct ClientHandler {
    pub name: String,
    pub view: Arc<View>,
    pub state: Arc<ServerState>,
    pub edit_hook: EditHookSlot,
}

/// What a server is told it serves: its folders (the first is its root)
/// and its settings, both of which grow when a folder is added
/// ([`crate::Session::add_folder`]). Read by the server's requests
/// (`workspace/workspaceFolders`, `workspace/configuration`).
#[derive(Debug)]
pub(crate) struct View {
    folders: RwLock<Vec<PathBuf>>,
    settings: RwLock<Value>,
}

impl View {
    pub(crate) fn new(folders: Vec<PathBuf>, settings: Value) -> View {
        View {
            folders: RwLock::new(folders),
            settings: RwLock::new(settings),
        }
    }

    pub(crate) fn folders(&self) -> Vec<PathBuf> {
        self.folders
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Add `folder`; false when it was there.
    pub(crate) fn add(&self, folder: &Path) -> bool {
        let mut f = self.folders.write().unwrap_or_else(|e| e.into_inner());
        if f.iter().any(|x| x == folder) {
            return false;
        }
        f.push(folder.to_path_buf());
        true
    }

    pub(crate) fn root(&self) -> PathBuf {
        self.folders
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .first()
            .cloned()
            .unwrap_or_default()
    }

    pub(crate) fn settings(&self) -> Value {
        self.settings
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub(crate) fn set_settings(&self, v: Value) {
        *self.settings.write().unwrap_or_else(|e| e.into_inner()) = v;
    }
}

/// A folder as LSP's `WorkspaceFolder`.
pub(crate) fn workspace_folder(p: &Path) -> Value {
    json!({ "uri": path_to_uri(p), "name": folder_name(p) })
}

/// What answers a server's `workspace/applyEdit`. Installed by the layer
/// that knows how to apply edits safely (scry-ops); scry-lsp only routes.
pub trait ApplyEditHook: Send + Sync {
    /// Apply (or refuse) the edit `server` (running for `root`) asks for;
    /// resolves to an `ApplyWorkspaceEditResult` (`{applied, failureReason?}`).
    fn apply_edit(&self, server: &str, root: &Path, params: Value) -> DeferredReply;
}

/// A shared, settable place for the [`ApplyEditHook`]: the workspace holds
/// one and hands it to every session it starts.
#[derive(Clone, Default)]
pub struct EditHookSlot(Arc<RwLock<Option<Arc<dyn ApplyEditHook>>>>);

impl EditHookSlot {
    pub fn set(&self, hook: Option<Arc<dyn ApplyEditHook>>) {
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = hook;
    }

    pub fn get(&self) -> Option<Arc<dyn ApplyEditHook>> {
        self.0.read().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl std::fmt::Debug for EditHookSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.get().is_some() {
            "EditHookSlot(set)"
        } else {
            "EditHookSlot(empty)"
        })
    }
}

/// Walk a dotted section ("python.analysis") through the settings. An empty
/// or missing section is the whole settings object.
pub fn lookup_section(settings: &Value, section: Option<&str>) -> Value {
    let Some(section) = section.filter(|s| !s.is_empty()) else {
        return settings.clone();
    };
    let mut cur = settings;
    for part in section.split('.') {
        match cur.get(part) {
            Some(v) => cur = v,
            None => {
                // Settings may also be written with dotted keys at one level
                // ({"python.analysis": {...}}).
                return settings.get(section).cloned().unwrap_or(Value::Null);
            }
        }
    }
    cur.clone()
}

impl Handler for ClientHandler {
    fn on_request(&self, method: &str, params: Value) -> Result<Value, ResponseError> {
        tracing::debug!(server = %self.name, method, "server request");
        match method {
            "workspace/configuration" => {
                let items = params["items"].as_array().cloned().unwrap_or_default();
                let settings = self.view.settings();
                Ok(Value::Array(
                    items
                        .iter()
                        .map(|it| lookup_section(&settings, it["section"].as_str()))
                        .collect(),
                ))
            }
            "window/workDoneProgress/create" => {
                match &params["token"] {
                    Value::String(s) => self.state.token_created(s.clone()),
                    Value::Number(n) => self.state.token_created(n.to_string()),
                    _ => {}
                }
                Ok(Value::Null)
            }
            "client/registerCapability" => {
                let regs = params["registrations"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .map(|r| Registration {
                                id: r["id"].as_str().unwrap_or_default().to_string(),
                                method: r["method"].as_str().unwrap_or_default().to_string(),
                                options: r["registerOptions"].clone(),
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                self.state.on_register(regs);
                Ok(Value::Null)
            }
            "client/unregisterCapability" => {
                // The spec's field is misspelt "unregisterations".
                let list = params["unregisterations"]
                    .as_array()
                    .or_else(|| params["unregistrations"].as_array());
                let ids: Vec<String> = list
                    .map(|a| {
                        a.iter()
                            .filter_map(|r| r["id"].as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default();
                self.state.on_unregister(&ids);
                Ok(Value::Null)
            }
            "workspace/workspaceFolders" => Ok(Value::Array(
                self.view
                    .folders()
                    .iter()
                    .map(|f| workspace_folder(f))
                    .collect(),
            )),
            "window/showMessageRequest" => {
                if let Some(m) = params["message"].as_str() {
                    self.state.on_message(m.to_string());
                }
                Ok(Value::Null)
            }
            "window/showDocument" => Ok(json!({ "success": false })),
            // With a hook installed this is answered by `on_request_deferred`.
            "workspace/applyEdit" => Ok(json!({
                "applied": false,
                "failureReason": "scry applies workspace edits only when asked to (rename/code action)",
            })),
            m if m.ends_with("/refresh") => Ok(Value::Null),
            _ => Err(ResponseError {
                code: ResponseError::METHOD_NOT_FOUND,
                message: format!("scry does not handle {method}"),
                data: None,
            }),
        }
    }

    fn on_request_deferred(&self, method: &str, params: &Value) -> Option<DeferredReply> {
        if method != "workspace/applyEdit" {
            return None;
        }
        let hook = self.edit_hook.get()?;
        Some(hook.apply_edit(&self.name, &self.view.root(), params.clone()))
    }

    fn on_notification(&self, method: &str, params: Value) {
        match method {
            "$/progress" => self.state.on_progress(&params),
            "experimental/serverStatus" => self.state.on_server_status(&params),
            "textDocument/publishDiagnostics" => self.state.on_diagnostics(&params),
            "window/logMessage" | "window/showMessage" => {
                let msg = params["message"].as_str().unwrap_or_default();
                tracing::debug!(server = %self.name, "{msg}");
                if method == "window/showMessage" {
                    self.state.on_message(msg.to_string());
                } else {
                    self.state.on_log(msg);
                }
            }
            _ => tracing::trace!(server = %self.name, method, "notification ignored"),
        }
    }
}

pub(crate) fn folder_name(root: &std::path::Path) -> String {
    root.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "root".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn handler(settings: Value) -> ClientHandler {
        ClientHandler {
            name: "t".into(),
            view: Arc::new(View::new(vec![PathBuf::from("/w/proj")], settings)),
            state: Arc::new(ServerState::default()),
            edit_hook: EditHookSlot::default(),
        }
    }

    #[test]
    fn configuration_walks_dotted_sections() {
        let h = handler(json!({"python": {"analysis": {"mode": "x"}}, "a.b": 1}));
        let r = h
            .on_request(
                "workspace/configuration",
                json!({"items": [{"section": "python.analysis"}, {"section": "python.missing"}, {}, {"section": "a.b"}]}),
            )
            .unwrap();
        assert_eq!(r[0], json!({"mode": "x"}));
        assert_eq!(r[1], Value::Null);
        assert_eq!(r[2]["python"]["analysis"]["mode"], "x");
        assert_eq!(r[3], json!(1));
    }

    #[test]
    fn every_known_request_is_answered() {
        let h = handler(Value::Null);
        assert_eq!(
            h.on_request("window/workDoneProgress/create", json!({"token": "x"}))
                .unwrap(),
            Value::Null
        );
        assert_eq!(
            h.on_request("client/registerCapability", json!({"registrations": [{"id": "1", "method": "workspace/didChangeWatchedFiles", "registerOptions": {"watchers": []}}]})).unwrap(),
            Value::Null
        );
        assert!(h.state.has_registration("workspace/didChangeWatchedFiles"));
        h.on_request(
            "client/unregisterCapability",
            json!({"unregisterations": [{"id": "1", "method": "workspace/didChangeWatchedFiles"}]}),
        )
        .unwrap();
        assert!(!h.state.has_registration("workspace/didChangeWatchedFiles"));
        let f = h
            .on_request("workspace/workspaceFolders", Value::Null)
            .unwrap();
        assert_eq!(f[0]["uri"], "file:///w/proj");
        assert!(h.view.add(Path::new("/w/other")));
        assert!(!h.view.add(Path::new("/w/other")));
        let f = h
            .on_request("workspace/workspaceFolders", Value::Null)
            .unwrap();
        assert_eq!(f[1], json!({"uri": "file:///w/other", "name": "other"}));
        assert_eq!(h.view.root(), PathBuf::from("/w/proj"));
        assert_eq!(
            h.on_request("window/showMessageRequest", json!({"message": "m"}))
                .unwrap(),
            Value::Null
        );
        assert_eq!(
            h.on_request("window/showDocument", json!({})).unwrap()["success"],
            false
        );
        assert_eq!(
            h.on_request("workspace/semanticTokens/refresh", Value::Null)
                .unwrap(),
            Value::Null
        );
        assert_eq!(
            h.on_request("workspace/diagnostic/refresh", Value::Null)
                .unwrap(),
            Value::Null
        );
        let e = h.on_request("foo/bar", Value::Null).unwrap_err();
        assert_eq!(e.code, ResponseError::METHOD_NOT_FOUND);
    }
}
