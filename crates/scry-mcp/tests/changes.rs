//! `diagnostics` with `changes: true` over MCP (pyright on a copy of
//! fixtures/python): the session keeps the baseline between calls, so an
//! edit made with the agent's own file tool shows up as new, then resolved;
//! `changes` on another action is refused before anything runs.

mod common;

use common::*;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

async fn call(
    client: &rmcp::service::RunningService<rmcp::RoleClient, ()>,
    args: Value,
) -> (bool, String, Value) {
    let r = client
        .call_tool(
            CallToolRequestParams::new("lsp").with_arguments(args.as_object().unwrap().clone()),
        )
        .await
        .expect("tools/call");
    let text = r.content[0]
        .as_text()
        .map(|t| t.text.clone())
        .unwrap_or_default();
    (
        r.is_error == Some(true),
        text,
        r.structured_content.unwrap_or_default(),
    )
}

#[tokio::test]
async fn changes_are_kept_per_session() {
    if !have("pyright-langserver", "changes_are_kept_per_session") {
        return;
    }
    let ws = fixture("python");
    let s = server(&ws, false);
    let (client, _task) = rmcp_client(s.clone()).await;
    let ask = json!({"action": "diagnostics", "path": "inventory.py", "changes": true, "timeout_ms": 90000});

    let (err, text, _) = call(&client, ask.clone()).await;
    // A first check lists everything as new (ruff's two warnings).
    assert!(
        !err && text.contains("all new: first check of inventory.py"),
        "{text}"
    );

    let file = ws.root.join("inventory.py");
    let before = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, format!("{before}\nbad: int = \"a\"\n")).unwrap();
    let (err, text, json) = call(&client, ask.clone()).await;
    assert!(
        !err && text.starts_with("1 error new in 1 file since the previous check"),
        "{text}"
    );
    assert!(text.contains("bad: int = \"a\""), "{text}");
    assert_eq!(json["changes"]["new"], 1, "{json}");

    std::fs::write(&file, &before).unwrap();
    let (err, text, json) = call(&client, ask).await;
    assert!(
        !err && text
            .starts_with("No new problems in inventory.py since the previous check (1 resolved"),
        "{text}"
    );
    assert_eq!(json["changes"]["resolved"], 1, "{json}");

    let (err, text, _) = call(
        &client,
        json!({"action": "hover", "path": "inventory.py", "symbol": "total_weight", "changes": true}),
    )
    .await;
    assert!(err && text.contains("changes is for diagnostics"), "{text}");
    let _ = client.cancel().await;
}
