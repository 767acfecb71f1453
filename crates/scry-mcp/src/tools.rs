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
/// The tool that changes state: applies renames and code actions, undoes
/// them, sends raw requests, reloads.
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
    "rename",
    "code_actions",
    "map",
    "status",
    "capabilities",
];

/// The actions of `lsp_edit`, in schema order.
const EDIT_ACTION_NAMES: &[&str] = &["rename", "code_actions", "undo", "request", "reload"];

/// Actions of both tools that edit files: previews in `lsp`, applied by
/// `lsp_edit`.
pub const EDIT_PREVIEWS: &[&str] = &["rename", "code_actions"];

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
    "severity",
    "changes",
    "new_name",
    "action_index",
    "action_title",
    "timeout_ms",
];
pub const EDIT_ARGS: &[&str] = &[
    "action",
    "path",
    "symbol",
    "line",
    "column",
    "new_name",
    "action_index",
    "action_title",
    "apply",
    "method",
    "params",
    "timeout_ms",
];

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
    let has = |n: &str| actions.iter().any(|a| a.name() == n);
    let mut d = format!(
        "Code intelligence from real language servers ({}). Name the symbol \
         (path + symbol, may be qualified: Config::load), don't count columns; line \
         picks its occurrence (not on it: nearest, said; several targets on it: each named, \
         column=). Run references before changing a shared symbol",
        languages.join(", ")
    );
    if has("diagnostics") {
        d.push_str("; diagnostics after an edit (changes:true: only new)");
    }
    d.push('.');
    if has("rename") {
        d.push_str(" rename/code_actions here only preview; apply with lsp_edit.");
    }
    if has("map") {
        d.push_str(" map: repo overview, no server needed.");
    }
    d.push_str(" Lines, columns 1-based; paths relative to the root.");
    let mut props = json!({
        "action": {"type": "string", "enum": names(&actions)},
        "path": {"type": "string", "description": "file (diagnostics: also dir, glob, *)"},
        "symbol": {"type": "string"},
        "line": {"type": "integer", "minimum": 1},
        "column": {"type": "integer", "minimum": 1, "description": "with line: exact spot"},
        "query": {"type": "string", "description": "workspace_symbols search"},
    });
    if has("diagnostics") {
        props["severity"] = json!({"type": "string", "enum": ["error", "warning", "all"]});
        props["changes"] = json!({"type": "boolean"});
    }
    if has("rename") {
        props["new_name"] = json!({"type": "string"});
    }
    if has("code_actions") {
        props["action_index"] = json!({"type": "integer", "minimum": 1});
        props["action_title"] = json!({"type": "string"});
    }
    props["timeout_ms"] = json!({"type": "integer", "minimum": 1, "maximum": MAX_TIMEOUT_MS});
    let schema = json!({
        "type": "object",
        "properties": props,
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
    let d = "Writes files. rename (new_name), code_actions (action_index or action_title): \
             apply the edit (apply:false: preview only). undo: revert scry's last edit. \
             request: any LSP method with params (\"$uri\" = path's URI). reload: restart \
             servers. Preview with lsp first; diagnostics after.";
    let schema = json!({
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": names(&actions)},
            "path": {"type": "string"},
            "symbol": {"type": "string"},
            "line": {"type": "integer", "minimum": 1},
            "column": {"type": "integer", "minimum": 1},
            "new_name": {"type": "string"},
            "action_index": {"type": "integer", "minimum": 1},
            "action_title": {"type": "string"},
            "apply": {"type": "boolean"},
            "method": {"type": "string"},
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
         symbol; run diagnostics after an edit.",
        languages.installed.join(", ")
    );
    if read_only {
        s.push_str(
            " Read-only: rename and code_actions in lsp preview edits; lsp_edit is not \
             available and nothing is written.",
        );
    } else {
        s.push_str(" Preview a rename with lsp, apply it with lsp_edit (undo reverts it).");
    }
    s
}
