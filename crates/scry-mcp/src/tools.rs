//! The two tools, their schemas and descriptions.
//!
//! Everything a model reads on every request lives here, so it is kept
//! short: one schema and one description per tool, naming only the
//! languages whose servers are installed.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use scry_ops::Action;
use scry_workspace::Workspace;
use scry_workspace::catalog::ProviderKind;
use serde_json::{Value, json};

/// The read-only tool.
pub const LSP: &str = "lsp";
/// The tool that changes state (raw requests, reload; rename and code
/// actions with the edits issue).
pub const LSP_EDIT: &str = "lsp_edit";

/// Upper bound of `timeout_ms` (the engine's maximum budget).
pub const MAX_TIMEOUT_MS: u64 = 120_000;
/// Default of `timeout_ms` (the configuration may change it).
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;

/// The actions of `lsp`, in schema order: the single place to list them.
/// A name only appears when `scry_ops::Action::parse` knows it under that
/// canonical name (so `diagnostics` shows up once scry-ops has it).
const LSP_ACTION_NAMES: &[&str] = &[
    "definition",
    "declaration",
    "type_definition",
    "implementation",
    "references",
    "hover",
    "symbols",
    "workspace_symbols",
    "incoming_calls",
    "outgoing_calls",
    "diagnostics",
    "status",
    "capabilities",
];

/// The actions of `lsp_edit`, in schema order.
const EDIT_ACTION_NAMES: &[&str] = &["request", "reload"];

fn known(names: &[&str]) -> Vec<Action> {
    names
        .iter()
        .filter_map(|n| Action::parse(n).filter(|a| a.name() == *n))
        .collect()
}

/// The actions `lsp` accepts.
pub fn lsp_actions() -> Vec<Action> {
    known(LSP_ACTION_NAMES)
}

/// The actions `lsp_edit` accepts.
pub fn edit_actions() -> Vec<Action> {
    known(EDIT_ACTION_NAMES)
}

/// The argument names each tool accepts (anything else is refused).
pub const LSP_ARGS: &[&str] = &[
    "action",
    "path",
    "symbol",
    "line",
    "column",
    "query",
    "timeout_ms",
];
pub const EDIT_ARGS: &[&str] = &["action", "path", "method", "params", "timeout_ms"];

/// Which languages the installed servers cover, and which are missing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Languages {
    /// Languages with an installed, enabled navigation server, in catalogue
    /// order, without duplicates.
    pub installed: Vec<String>,
    /// Languages whose servers are all missing (or disabled but not
    /// installed), with the commands that would serve them.
    pub missing: Vec<(String, String)>,
}

impl Languages {
    /// Look at the configured servers: enabled LSP servers that are not
    /// linters count; a server without `languages` counts by its file types.
    pub fn detect(ws: &Workspace) -> Languages {
        let config = ws.config();
        let mut installed: Vec<String> = Vec::new();
        let mut missing: Vec<(String, String)> = Vec::new();
        for spec in &config.servers {
            if spec.disabled || spec.kind != ProviderKind::Lsp || spec.is_linter {
                continue;
            }
            let langs: Vec<String> = if spec.languages.is_empty() {
                spec.file_types.iter().map(|t| format!(".{t}")).collect()
            } else {
                spec.languages.clone()
            };
            let present = ws.installed(&spec.command).is_some();
            for l in langs {
                if present {
                    if !installed.contains(&l) {
                        installed.push(l);
                    }
                } else if !missing.iter().any(|(m, _)| *m == l) {
                    missing.push((l, spec.command.clone()));
                }
            }
        }
        missing.retain(|(l, _)| !installed.contains(l));
        Languages { installed, missing }
    }

    /// One line about what is missing, for the log (None when nothing is).
    pub fn missing_line(&self) -> Option<String> {
        if self.missing.is_empty() {
            return None;
        }
        let parts: Vec<String> = self
            .missing
            .iter()
            .map(|(l, c)| format!("{l} ({c})"))
            .collect();
        Some(format!(
            "no language server installed for: {}; these languages are left out of the tool description",
            parts.join(", ")
        ))
    }
}

fn object(v: Value) -> Arc<JsonObject> {
    match v {
        Value::Object(m) => Arc::new(m),
        _ => Arc::new(JsonObject::new()),
    }
}

fn names(actions: &[Action]) -> Vec<&'static str> {
    actions.iter().map(|a| a.name()).collect()
}

/// The `lsp` tool for these installed languages.
pub fn lsp_tool(languages: &[String]) -> Tool {
    let actions = lsp_actions();
    let has_diagnostics = actions.iter().any(|a| a.name() == "diagnostics");
    let mut d = format!(
        "Code intelligence from real language servers ({}). Name the symbol \
         (path + symbol, e.g. Config or Config::load) instead of counting columns; \
         line only picks an occurrence. Run references before changing a shared symbol",
        languages.join(", ")
    );
    if has_diagnostics {
        d.push_str("; diagnostics after an edit");
    }
    d.push_str(
        ". Lines and columns are 1-based, columns count characters; paths are relative \
         to the workspace root.",
    );
    let schema = json!({
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": names(&actions)},
            "path": {"type": "string", "description": "file in the workspace"},
            "symbol": {"type": "string", "description": "name, may be qualified (Type::method)"},
            "line": {"type": "integer", "minimum": 1, "description": "hint: which occurrence"},
            "column": {"type": "integer", "minimum": 1, "description": "with line: ask exactly there"},
            "query": {"type": "string", "description": "workspace_symbols search"},
            "timeout_ms": {"type": "integer", "minimum": 1, "maximum": MAX_TIMEOUT_MS}
        },
        "required": ["action"],
        "additionalProperties": false
    });
    Tool::new(LSP, d, object(schema)).with_annotations(
        ToolAnnotations::new()
            .read_only(true)
            .destructive(false)
            .idempotent(true)
            .open_world(false),
    )
}

/// The `lsp_edit` tool.
pub fn edit_tool() -> Tool {
    let actions = edit_actions();
    let d = "Acts on the language servers (not read-only). request: send any LSP \
             method with params (\"$uri\" stands for path's URI) to the server of path; \
             reload: stop the servers and reread the configuration. Use lsp for questions.";
    let schema = json!({
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": names(&actions)},
            "path": {"type": "string"},
            "method": {"type": "string", "description": "LSP method, e.g. textDocument/foldingRange"},
            "params": {"type": "object"},
            "timeout_ms": {"type": "integer", "minimum": 1, "maximum": MAX_TIMEOUT_MS}
        },
        "required": ["action"],
        "additionalProperties": false
    });
    Tool::new(LSP_EDIT, d, object(schema)).with_annotations(
        ToolAnnotations::new()
            .read_only(false)
            .destructive(true)
            .idempotent(false)
            .open_world(false),
    )
}

/// The server's `instructions`: the workflow when tools exist, else why
/// there are none and how to fix it.
pub fn instructions(languages: &Languages, read_only: bool) -> String {
    if languages.installed.is_empty() {
        let mut s = String::from(
            "scry found no installed language server, so it offers no tools. Install one \
             (rust-analyzer, pyright, typescript-language-server, gopls, clangd, ...) so that \
             it is on PATH, or configure one in .scry.json, then restart this MCP server.",
        );
        if let Some(m) = languages.missing_line() {
            s.push(' ');
            s.push_str(&m);
            s.push('.');
        }
        return s;
    }
    let mut s = format!(
        "scry answers code questions with real language servers ({}): call lsp with an \
         action, a path and the symbol's name. Check references before changing a shared \
         symbol.",
        languages.installed.join(", ")
    );
    if read_only {
        s.push_str(" Read-only: lsp_edit is not available.");
    }
    s
}
