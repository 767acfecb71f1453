//! The MCP front end's standing words: what a model reads on every request
//! (the two tools' descriptions and argument hints) and once per session
//! (the server's `instructions`). Kept short: every character is paid on
//! every model request.
//!
//! Invariant: the languages named are the installed servers' (the caller
//! passes them); nothing here names a language scry cannot answer in.

use scry_model::action::Arg;

/// The `lsp` tool's description, for these installed languages (none:
/// syntactic answers until a server is installed).
pub fn lsp_description(languages: &[String]) -> String {
    let by = if languages.is_empty() {
        "no language server installed: syntactic answers (tree-sitter), labelled; \
         `scry doctor` says how to add one"
            .to_string()
    } else {
        format!("language servers: {}", languages.join(", "))
    };
    format!(
        "Code navigation ({by}): path + symbol (qualified ok: A::f), never columns; \
         line picks the occurrence. references before changing a symbol, diagnostics \
         after edits; rename, code_actions preview (lsp_edit applies); map: overview."
    )
}

/// The `lsp_edit` tool's description.
pub fn edit_description() -> &'static str {
    "Writes files; lsp's arguments: rename (new_name), code_actions \
     (action_index|action_title), apply:false previews; undo: scry's last edit; \
     request: LSP method+params; reload: restart servers."
}

/// The short hint `lsp`'s schema gives an argument, if any.
pub fn arg_hint(arg: Arg) -> Option<&'static str> {
    match arg {
        Arg::Path => Some("file (diagnostics: dir, glob, *)"),
        Arg::Timeout => Some("wait for a loading server"),
        _ => None,
    }
}

/// One line about the languages whose servers are missing (each with the
/// command that would serve it), for the log and the instructions; `None`
/// when none is.
pub fn missing_languages(missing: &[(String, String)]) -> Option<String> {
    if missing.is_empty() {
        return None;
    }
    let parts: Vec<String> = missing.iter().map(|(l, c)| format!("{l} ({c})")).collect();
    Some(format!(
        "no language server installed for: {}; these languages are left out of the tool description",
        parts.join(", ")
    ))
}

/// The server's `instructions`: the workflow when servers are installed
/// (`installed`), else why answers are syntactic and how to fix it.
pub fn instructions(installed: &[String], missing: &[(String, String)], read_only: bool) -> String {
    if installed.is_empty() {
        let mut s = String::from(
            "scry found no installed language server: lsp answers from its syntactic index \
             (tree-sitter: definitions, references, symbols, hover by name, and map), each \
             answer labelled so. For exact answers install a server (rust-analyzer, pyright, \
             typescript-language-server, gopls, clangd, ...) on PATH, or configure one in \
             .scry.json, then restart this MCP server.",
        );
        if let Some(m) = missing_languages(missing) {
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
        installed.join(", ")
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
