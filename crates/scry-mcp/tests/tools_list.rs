//! tools/list: the schema snapshot, its size, and which languages it names.

mod common;

use common::*;
use rmcp::model::CallToolRequestParams;
use scry_mcp::tools;
use serde_json::{Value, json};

/// A workspace whose only server is `/bin/sh` posing as a "Fake" language
/// server (never started here): the listing is then independent of what
/// this machine has installed.
fn sh_workspace(extra: Value) -> Ws {
    let mut servers = json!({
        "fake": {"command": "/bin/sh", "fileTypes": ["fake"], "languages": ["Fake"]}
    });
    if let (Some(s), Some(e)) = (servers.as_object_mut(), extra.as_object()) {
        s.extend(e.clone());
    }
    workspace(
        Some(json!({"autoDetect": false, "servers": servers})),
        &[("a.fake", "alpha\n")],
    )
}

#[tokio::test]
async fn tools_list_snapshot_and_size() {
    let ws = sh_workspace(json!({}));
    let (client, _task) = rmcp_client(server(&ws, false)).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    let json = serde_json::to_value(&tools).unwrap();
    insta::assert_json_snapshot!("tools_list", json);

    let lsp = serde_json::to_string(&json[0]).unwrap();
    let edit = serde_json::to_string(&json[1]).unwrap();
    let (l, e) = (lsp.chars().count(), edit.chars().count());
    eprintln!(
        "tools/list sizes: lsp {l} chars, lsp_edit {e} chars, {} in all",
        l + e
    );
    // Every character is paid on every model request: both tools together
    // at most 1,500 (issue 39; 2,751 before).
    assert!(l + e <= 1500, "{} chars: {lsp}\n{edit}", l + e);
    assert_eq!(json[0]["annotations"]["readOnlyHint"], json!(true));
    assert_eq!(json[1]["annotations"]["readOnlyHint"], json!(false));
    let _ = client.cancel().await;
}

/// Worst case: every language of the catalogue installed.
#[test]
fn lsp_tool_is_small_with_every_language() {
    let mut langs: Vec<String> = Vec::new();
    for s in scry_workspace::catalog::builtins() {
        for l in s.languages {
            if !langs.contains(&l) {
                langs.push(l);
            }
        }
    }
    let t = tools::lsp_tool(&langs);
    let n = serde_json::to_string(&t).unwrap().chars().count();
    eprintln!(
        "lsp tool with all {} catalogue languages: {n} chars",
        langs.len()
    );
    assert!(n < 1100, "{n} chars");
}

#[test]
fn action_list_comes_from_scry_ops() {
    let names: Vec<&str> = tools::lsp_actions().iter().map(|a| a.name()).collect();
    for must in [
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
        "status",
        "capabilities",
    ] {
        assert!(names.contains(&must), "{must} missing from {names:?}");
    }
    // diagnostics is offered exactly when scry-ops knows it.
    let has = scry_model::Action::parse("diagnostics").is_some_and(|a| a.name() == "diagnostics");
    assert_eq!(names.contains(&"diagnostics"), has);
    // Edits: previewed by lsp, applied (and undone) by lsp_edit.
    assert!(names.contains(&"rename") && names.contains(&"code_actions"));
    let edit: Vec<&str> = tools::edit_actions().iter().map(|a| a.name()).collect();
    assert_eq!(
        edit,
        ["rename", "code_actions", "undo", "request", "reload"]
    );
    for write_only in ["request", "reload", "undo"] {
        assert!(!names.contains(&write_only), "{write_only} in lsp");
    }
}

#[tokio::test]
async fn description_names_installed_languages_only() {
    let ws = sh_workspace(json!({
        "ghost": {"command": "scry-no-such-server-xyz", "fileTypes": ["ghost"], "languages": ["Ghostlang"]}
    }));
    let s = server(&ws, false);
    let desc = s.tools()[0].description.clone().unwrap_or_default();
    assert!(desc.contains("Fake"), "{desc}");
    assert!(!desc.contains("Ghostlang"), "{desc}");
    assert_eq!(s.languages().installed, ["Fake"]);
    assert_eq!(
        s.languages().missing,
        [(
            "Ghostlang".to_string(),
            "scry-no-such-server-xyz".to_string()
        )]
    );
}

#[tokio::test]
async fn real_catalogue_names_what_this_machine_has() {
    let ws = workspace(None, &[]);
    let s = server(&ws, false);
    let desc = s
        .tools()
        .first()
        .and_then(|t| t.description.clone())
        .unwrap_or_default();
    let have_py = scry_workspace::command::resolve_command("pyright-langserver", &ws.root)
        .is_some()
        || scry_workspace::command::resolve_command("pylsp", &ws.root).is_some()
        || scry_workspace::command::resolve_command("basedpyright-langserver", &ws.root).is_some()
        || scry_workspace::command::resolve_command("jedi-language-server", &ws.root).is_some();
    assert_eq!(desc.contains("Python"), have_py, "{desc}");
    let have_go = scry_workspace::command::resolve_command("gopls", &ws.root).is_some();
    assert_eq!(desc.contains("Go"), have_go, "{desc}");
}

/// No server installed: `lsp` is still offered (never an empty tool list
/// while an answer is possible), says its answers are syntactic, and
/// answers so (issue 39); there is no edit tool.
#[tokio::test]
async fn with_no_server_lsp_is_offered_and_answers_syntactically() {
    let ws = workspace(
        Some(json!({"autoDetect": false, "servers": {}})),
        &[("a.py", "def total_weight(x):\n    return x\n")],
    );
    let (client, _task) = rmcp_client(server(&ws, false)).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["lsp"]);
    let desc = tools[0].description.clone().unwrap_or_default();
    assert!(desc.contains("syntactic"), "{desc}");
    let info = client.peer_info().expect("server info");
    let instr = info.instructions.clone().unwrap_or_default();
    assert!(instr.contains("no installed language server"), "{instr}");
    assert!(instr.contains("PATH"), "{instr}");
    let mut args = serde_json::Map::new();
    args.insert("action".into(), json!("symbols"));
    args.insert("path".into(), json!("a.py"));
    let r = client
        .call_tool(CallToolRequestParams::new("lsp").with_arguments(args))
        .await
        .expect("tool result");
    assert_eq!(r.is_error, Some(false), "{r:?}");
    let text = format!("{:?}", r.content);
    assert!(
        text.contains("total_weight") && text.contains("syntactic"),
        "{text}"
    );
    let _ = client.cancel().await;
}

#[tokio::test]
async fn read_only_lists_no_edit_tool() {
    let ws = sh_workspace(json!({}));
    let (client, _task) = rmcp_client(server(&ws, true)).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["lsp"]);
    let _ = client.cancel().await;
}
