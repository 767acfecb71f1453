//! Every `lsp` action once on pyright (a copy of fixtures/python), through
//! rmcp's client: the text content is exactly what `render_text` gives for
//! the same query, and `structuredContent` is `render_json`'s.

mod common;

use common::*;
use rmcp::model::CallToolRequestParams;
use scry_model::{Action, Query};
use scry_render::{RenderOptions, render_json, render_text};
use serde_json::{Value, json};

fn query(action: Action, args: &Value, root: &std::path::Path) -> Query {
    let mut q = Query::new(action);
    q.path = args["path"].as_str().map(Into::into);
    q.symbol = args["symbol"].as_str().map(Into::into);
    q.query = args["query"].as_str().map(Into::into);
    q.line = args["line"].as_u64().map(|n| n as u32);
    q.timeout = Some(std::time::Duration::from_secs(90));
    // Diagnostics take targets, as the CLI passes them (absolute).
    if action == Action::Diagnostics
        && let Some(p) = q.path.take()
    {
        q.targets = vec![root.join(p)];
    }
    q
}

#[tokio::test]
async fn every_action_matches_the_cli_text() {
    if !have("pyright-langserver", "every_action_matches_the_cli_text") {
        return;
    }
    let ws = fixture("python");
    let s = server(&ws, false);
    let (client, _task) = rmcp_client(s.clone()).await;
    let cases: Vec<(&str, Value)> = vec![
        // First, so the server is warm for the rest.
        (
            "references",
            json!({"path": "inventory.py", "symbol": "total_weight"}),
        ),
        (
            "definition",
            json!({"path": "main.py", "symbol": "total_weight"}),
        ),
        (
            "declaration",
            json!({"path": "main.py", "symbol": "Inventory"}),
        ),
        (
            "type_definition",
            json!({"path": "main.py", "symbol": "inv", "line": 9}),
        ),
        (
            "implementation",
            json!({"path": "shapes.py", "symbol": "Shape"}),
        ),
        (
            "hover",
            json!({"path": "inventory.py", "symbol": "total_weight"}),
        ),
        ("symbols", json!({"path": "inventory.py"})),
        ("workspace_symbols", json!({"query": "restock"})),
        (
            "incoming_calls",
            json!({"path": "inventory.py", "symbol": "item_weight"}),
        ),
        (
            "outgoing_calls",
            json!({"path": "main.py", "symbol": "main"}),
        ),
        ("capabilities", json!({"path": "main.py"})),
        ("diagnostics", json!({"path": "main.py"})),
        ("status", json!({})),
    ];
    let opts = RenderOptions::default();
    for (action, args) in cases {
        let mut call_args = args.as_object().unwrap().clone();
        call_args.insert("action".into(), json!(action));
        call_args.insert("timeout_ms".into(), json!(90000));
        let r = client
            .call_tool(CallToolRequestParams::new("lsp").with_arguments(call_args))
            .await
            .unwrap_or_else(|e| panic!("{action}: protocol error {e}"));
        let got = r.content[0]
            .as_text()
            .map(|t| t.text.clone())
            .unwrap_or_default();
        // The same question straight to the engine (same servers).
        let q = query(Action::parse(action).unwrap(), &args, &ws.root);
        let want = match s.engine().run_query(&q).await {
            Ok(a) => (
                render_text(&a, &ws.root, &opts),
                render_json(&a, &ws.root, &opts),
                false,
            ),
            Err(e) => {
                let t = scry_mcp::ToolError::from_op(&e, &ws.root, &[]);
                (t.text(), t.json(), true)
            }
        };
        assert_eq!(r.is_error, Some(want.2), "{action}: {got}");
        assert_eq!(got, want.0, "{action}: MCP text differs from the CLI's");
        if action != "status" {
            let mut got_json = r.structured_content.clone().unwrap_or_default();
            let mut want_json = want.1.clone();
            untimed(&mut got_json);
            untimed(&mut want_json);
            assert_eq!(got_json, want_json, "{action}");
        }
        eprintln!("--- {action}\n{got}");
    }
    let _ = client.cancel().await;
}
