//! The stdio transport answers everything it can, as JSON-RPC says: an
//! oversized message gets -32600 with its id (never silence), a line that
//! is not JSON gets -32700 with a null id, `tools/call` without params (or
//! with params of the wrong shape) gets -32602 — and the session goes on.

mod common;

use common::{Raw, server, workspace};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

fn code(v: &Value) -> i64 {
    v["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error: {v}"))
}

async fn still_answers(raw: &mut Raw, id: &str) {
    raw.call(json!(id), "lsp", json!({"action": "status"}))
        .await;
    let r = raw.response(json!(id)).await;
    assert_eq!(r["result"]["isError"], json!(false), "{r}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_message_gets_an_error_with_its_id() {
    let ws = workspace(None, &[("a.txt", "x\n")]);
    let mut raw = Raw::start(server(&ws, true)).await;
    let limit = 16 * 1024 * 1024;
    let big = "a".repeat(limit + 1024);
    // the id first ...
    let line = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":77,\"method\":\"tools/call\",\"params\":{{\"name\":\"lsp\",\"arguments\":{{\"action\":\"hover\",\"path\":\"{big}\"}}}}}}\n"
    );
    raw.write.write_all(line.as_bytes()).await.unwrap();
    let r = raw.response(json!(77)).await;
    assert_eq!(code(&r), -32600, "{r}");
    let msg = r["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("over the limit") && msg.contains("nothing was run"),
        "{msg}"
    );
    assert_eq!(r["error"]["data"]["limit"], limit);
    // ... or last
    let line = format!(
        "{{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{{\"name\":\"lsp\",\"arguments\":{{\"path\":\"{big}\"}}}},\"id\":\"late\"}}\n"
    );
    raw.write.write_all(line.as_bytes()).await.unwrap();
    let r = raw.response(json!("late")).await;
    assert_eq!(code(&r), -32600, "{r}");
    // no readable id: still an answer, with a null id
    let line = format!("{{\"params\":\"{big}\"\n");
    raw.write.write_all(line.as_bytes()).await.unwrap();
    let r = raw.response(Value::Null).await;
    assert_eq!(code(&r), -32600, "{r}");
    still_answers(&mut raw, "after").await;
}

#[tokio::test]
async fn malformed_lines_follow_json_rpc() {
    let ws = workspace(None, &[("a.txt", "x\n")]);
    let mut raw = Raw::start(server(&ws, true)).await;
    raw.write.write_all(b"this is not json\n").await.unwrap();
    let r = raw.response(Value::Null).await;
    assert_eq!(code(&r), -32700, "{r}");
    raw.write
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\n")
        .await
        .unwrap();
    let r = raw.response(Value::Null).await;
    assert_eq!(code(&r), -32700, "{r}");
    raw.write
        .write_all(b"[{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}]\n")
        .await
        .unwrap();
    let r = raw.response(Value::Null).await;
    assert_eq!(code(&r), -32600, "{r}");
    // a well-formed request with a bad envelope keeps its id
    raw.send(json!({"jsonrpc": "1.0", "id": 5, "method": "ping"}))
        .await;
    assert_eq!(code(&raw.response(json!(5)).await), -32600);
    // tools/call without params, with params of the wrong shape
    raw.send(json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call"}))
        .await;
    let r = raw.response(json!(6)).await;
    assert_eq!(code(&r), -32602, "{r}");
    raw.send(
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"arguments": {}}}),
    )
    .await;
    assert_eq!(code(&raw.response(json!(7)).await), -32602);
    raw.send(json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
        "params": {"name": "lsp", "arguments": 5}}))
        .await;
    assert_eq!(code(&raw.response(json!(8)).await), -32602);
    // an unknown method is still "method not found"
    raw.send(json!({"jsonrpc": "2.0", "id": 9, "method": "no/such"}))
        .await;
    assert_eq!(code(&raw.response(json!(9)).await), -32601);
    still_answers(&mut raw, "after").await;
}
