//! The two tools, their schemas, and which languages their descriptions
//! name (the words themselves are scry-render's: `scry_render::mcp`).
//!
//! What a model reads on every request is kept short: one schema and one
//! description per tool, naming only the languages whose servers are
//! installed. Which actions each tool offers
//! and which arguments it takes come from scry-ops' action table
//! (`scry_model::action`).

use std::sync::{Arc, OnceLock};

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use scry_model::Action;
use scry_model::action::{self, Arg, Writes};
use scry_workspace::Workspace;
use scry_workspace::catalog::ProviderKind;
use serde_json::{Value, json};

/// The read-only tool.
pub const LSP: &str = "lsp";
/// The tool that changes state: applies renames and code actions, undoes
/// them, sends raw requests, reloads.
pub const LSP_EDIT: &str = "lsp_edit";

/// The actions `lsp` accepts, in schema order (the action table's): those
/// that never write, and the edits it previews.
pub fn lsp_actions() -> Vec<Action> {
    action::actions_writing(&[Writes::Never, Writes::Previewable])
}

/// The actions `lsp_edit` accepts, in schema order: the edits it applies,
/// and what changes state.
pub fn edit_actions() -> Vec<Action> {
    action::actions_writing(&[Writes::Previewable, Writes::Always])
}

/// The arguments a tool's schema offers: `action`, then those its actions
/// take (in the table's argument order) that a caller names.
fn tool_args(actions: &[Action], lsp: bool) -> Vec<Arg> {
    action::args_of(actions)
        .into_iter()
        // lsp never applies (an `apply` sent anyway is answered in `args`).
        .filter(|a| a.in_mcp() && !(lsp && *a == Arg::Apply))
        .collect()
}

fn arg_names(args: Vec<Arg>) -> Vec<&'static str> {
    std::iter::once(action::ACTION)
        .chain(args.into_iter().map(Arg::name))
        .collect()
}

/// The argument names `lsp` accepts (anything else is refused).
pub fn lsp_args() -> &'static [&'static str] {
    static A: OnceLock<Vec<&'static str>> = OnceLock::new();
    A.get_or_init(|| arg_names(tool_args(&lsp_actions(), true)))
}

/// The argument names `lsp_edit` accepts.
pub fn edit_args() -> &'static [&'static str] {
    static A: OnceLock<Vec<&'static str>> = OnceLock::new();
    A.get_or_init(|| arg_names(tool_args(&edit_actions(), false)))
}

/// An argument's schema; `described`: with the short hints `lsp` gives.
/// Bounds are checked when a call is parsed (`args`), not spelled out
/// here, and a name (a path, a symbol) has no type: every character is
/// paid on every model request, and a model writes names as strings.
fn property(arg: Arg, described: bool) -> Value {
    let mut p = match arg {
        Arg::Line | Arg::Column | Arg::ActionIndex | Arg::Timeout => json!({"type": "integer"}),
        Arg::Severity => json!({"enum": ["error", "warning", "all"]}),
        Arg::Changes | Arg::Apply => json!({"type": "boolean"}),
        Arg::Params => json!({"type": "object"}),
        _ => json!({}),
    };
    if let Some(h) = scry_render::mcp::arg_hint(arg).filter(|_| described) {
        p["description"] = json!(h);
    }
    p
}

/// A tool's input schema: the action enum, then each argument (unknown
/// ones are refused when a call is parsed). `lsp_edit`'s lists only what
/// `lsp` does not (its description says it takes `lsp`'s arguments too).
fn schema(actions: &[Action], lsp: bool) -> Value {
    let mut props = json!({action::ACTION: {"enum": names(actions)}});
    let shared = if lsp {
        Vec::new()
    } else {
        tool_args(&lsp_actions(), true)
    };
    for a in tool_args(actions, lsp) {
        if !shared.contains(&a) {
            props[a.name()] = property(a, lsp);
        }
    }
    json!({
        "type": "object",
        "properties": props,
        "required": [action::ACTION]
    })
}

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
        scry_render::mcp::missing_languages(&self.missing)
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

/// The `lsp` tool for these installed languages; with none, its answers
/// are syntactic (tree-sitter) until a server is installed.
pub fn lsp_tool(languages: &[String]) -> Tool {
    let d = scry_render::mcp::lsp_description(languages);
    let schema = schema(&lsp_actions(), true);
    Tool::new(LSP, d, object(schema)).with_annotations(ToolAnnotations::new().read_only(true))
}

/// The `lsp_edit` tool.
pub fn edit_tool() -> Tool {
    let actions = edit_actions();
    let d = scry_render::mcp::edit_description();
    let schema = schema(&actions, false);
    Tool::new(LSP_EDIT, d, object(schema)).with_annotations(ToolAnnotations::new().read_only(false))
}

/// The server's `instructions`: the workflow when tools exist, else why
/// there are none and how to fix it.
pub fn instructions(languages: &Languages, read_only: bool) -> String {
    scry_render::mcp::instructions(&languages.installed, &languages.missing, read_only)
}
