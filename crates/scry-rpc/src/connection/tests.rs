//! The JSON-RPC connection against an in-memory peer: requests answered
//! out of order, server requests always answered (a panicking handler
//! too), notifications, a dropped request cancelled, EOF and oversized or
//! broken streams failing every pending request instead of hanging.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{BufReader, DuplexStream};
use tokio::sync::mpsc;
use tokio::time::timeout;

use super::*;
use crate::framing::{read_message, write_message};

const WAIT: Duration = Duration::from_secs(5);

struct TestHandler {
    notes: mpsc::UnboundedSender<(String, Value)>,
}

impl Handler for TestHandler {
    fn on_request(&self, method: &str, params: Value) -> Result<Value, ResponseError> {
        match method {
            "workspace/configuration" => Ok(json!([{ "echo": params }])),
            "client/registerCapability" => Ok(Value::Null),
            "boom" => panic!("handler exploded"),
            _ => Err(ResponseError::method_not_found(method)),
        }
    }

    fn on_request_deferred(&self, method: &str, _params: &Value) -> Option<DeferredReply> {
        match method {
            "later" => Some(Box::pin(async { Ok(json!("done later")) })),
            "later-boom" => Some(Box::pin(async { panic!("deferred handler exploded") })),
            _ => None,
        }
    }

    fn on_notification(&self, method: &str, params: Value) {
        if method == "boom" {
            panic!("notification handler exploded");
        }
        let _ = self.notes.send((method.to_owned(), params));
    }
}

/// The far end of the pipes, playing the language server.
struct FakeServer {
    r: BufReader<DuplexStream>,
    w: DuplexStream,
}

impl FakeServer {
    async fn recv(&mut self) -> Value {
        timeout(WAIT, read_message(&mut self.r, 1 << 20))
            .await
            .expect("timed out waiting for the client")
            .expect("framing error")
            .expect("client closed its output")
    }

    async fn send(&mut self, msg: Value) {
        write_message(&mut self.w, &msg).await.unwrap();
    }
}

fn setup_with(
    opts: ConnectionOptions,
) -> (
    Connection,
    FakeServer,
    mpsc::UnboundedReceiver<(String, Value)>,
) {
    let (client_w, server_r) = tokio::io::duplex(1 << 16);
    let (server_w, client_r) = tokio::io::duplex(1 << 16);
    let (tx, rx) = mpsc::unbounded_channel();
    let conn = Connection::start(
        "fake-ls",
        client_r,
        client_w,
        Arc::new(TestHandler { notes: tx }),
        opts,
    );
    let server = FakeServer {
        r: BufReader::new(server_r),
        w: server_w,
    };
    (conn, server, rx)
}

fn setup() -> (
    Connection,
    FakeServer,
    mpsc::UnboundedReceiver<(String, Value)>,
) {
    setup_with(ConnectionOptions::default())
}

async fn wait_until(mut cond: impl FnMut() -> bool) {
    timeout(WAIT, async {
        while !cond() {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    })
    .await
    .expect("condition not reached");
}

#[tokio::test]
async fn request_response() {
    let (conn, mut server, _) = setup();
    assert_eq!(conn.name(), "fake-ls");
    let c = conn.clone();
    let call =
        tokio::spawn(async move { c.request("textDocument/hover", Some(json!({"x": 1}))).await });
    let req = server.recv().await;
    assert_eq!(
        req,
        json!({"jsonrpc": "2.0", "id": 1, "method": "textDocument/hover", "params": {"x": 1}})
    );
    wait_until(|| conn.pending_count() == 1).await;
    server
        .send(json!({"jsonrpc": "2.0", "id": 1, "result": {"contents": "hi"}}))
        .await;
    assert_eq!(call.await.unwrap().unwrap(), json!({"contents": "hi"}));
    assert_eq!(conn.pending_count(), 0);

    // Ids keep increasing.
    let c = conn.clone();
    let call = tokio::spawn(async move { c.request("shutdown", None).await });
    let req = server.recv().await;
    assert_eq!(req["id"], json!(2));
    // Missing result => null.
    server.send(json!({"jsonrpc": "2.0", "id": 2})).await;
    assert_eq!(call.await.unwrap().unwrap(), Value::Null);
}

#[tokio::test]
async fn params_none_is_omitted() {
    let (conn, mut server, _) = setup();
    let c = conn.clone();
    let call = tokio::spawn(async move { c.request("shutdown", None).await });
    let req = server.recv().await;
    assert!(req.as_object().unwrap().get("params").is_none(), "{req}");
    server
        .send(json!({"jsonrpc": "2.0", "id": req["id"], "result": null}))
        .await;
    assert_eq!(call.await.unwrap().unwrap(), Value::Null);

    conn.notify("exit", None).unwrap();
    let note = server.recv().await;
    assert_eq!(note, json!({"jsonrpc": "2.0", "method": "exit"}));

    conn.notify("initialized", Some(json!({}))).unwrap();
    let note = server.recv().await;
    assert_eq!(
        note,
        json!({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    );
}

#[tokio::test]
async fn concurrent_requests_answered_out_of_order() {
    let (conn, mut server, _) = setup();
    let calls: Vec<_> = (0..3)
        .map(|i| {
            let c = conn.clone();
            tokio::spawn(async move { c.request("m", Some(json!(i))).await })
        })
        .collect();
    let mut reqs = Vec::new();
    for _ in 0..3 {
        reqs.push(server.recv().await);
    }
    for req in reqs.iter().rev() {
        let reply = json!({"jsonrpc": "2.0", "id": req["id"], "result": {"echo": req["params"]}});
        server.send(reply).await;
    }
    for (i, call) in calls.into_iter().enumerate() {
        assert_eq!(call.await.unwrap().unwrap(), json!({ "echo": i }));
    }
    assert_eq!(conn.pending_count(), 0);
}

#[tokio::test]
async fn error_response_is_server_error() {
    let (conn, mut server, _) = setup();
    let c = conn.clone();
    let call = tokio::spawn(async move { c.request("textDocument/definition", None).await });
    let req = server.recv().await;
    server
        .send(json!({"jsonrpc": "2.0", "id": req["id"], "error": {"code": -32602, "message": "bad params", "data": [1]}}))
        .await;
    match call.await.unwrap() {
        Err(e @ RpcError::Server { .. }) => {
            let text = e.to_string();
            assert!(
                text.contains("fake-ls") && text.contains("textDocument/definition"),
                "{text}"
            );
            let RpcError::Server { error, .. } = e else {
                unreachable!()
            };
            assert_eq!(
                *error,
                ResponseError {
                    code: -32602,
                    message: "bad params".into(),
                    data: Some(json!([1]))
                }
            );
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test]
async fn server_requests_are_answered() {
    let (conn, mut server, _) = setup();
    server
        .send(json!({"jsonrpc": "2.0", "id": "abc", "method": "workspace/configuration", "params": {"items": []}}))
        .await;
    assert_eq!(
        server.recv().await,
        json!({"jsonrpc": "2.0", "id": "abc", "result": [{"echo": {"items": []}}]})
    );

    server
        .send(json!({"jsonrpc": "2.0", "id": 7, "method": "window/unknownThing"}))
        .await;
    let reply = server.recv().await;
    assert_eq!(reply["id"], json!(7));
    assert_eq!(
        reply["error"]["code"],
        json!(ResponseError::METHOD_NOT_FOUND)
    );
    assert!(reply.get("result").is_none());

    // A null result is still sent as "result": null.
    server
        .send(
            json!({"jsonrpc": "2.0", "id": 8, "method": "client/registerCapability", "params": {}}),
        )
        .await;
    assert_eq!(
        server.recv().await,
        json!({"jsonrpc": "2.0", "id": 8, "result": null})
    );

    // A panicking handler yields an internal error and the reader survives.
    server
        .send(json!({"jsonrpc": "2.0", "id": 9, "method": "boom"}))
        .await;
    let reply = server.recv().await;
    assert_eq!(reply["id"], json!(9));
    assert_eq!(reply["error"]["code"], json!(ResponseError::INTERNAL_ERROR));
    assert!(!conn.is_closed());
}

#[tokio::test]
async fn deferred_requests_are_answered_even_when_they_panic() {
    let (conn, mut server, _) = setup();
    server
        .send(json!({"jsonrpc": "2.0", "id": 1, "method": "later"}))
        .await;
    assert_eq!(
        server.recv().await,
        json!({"jsonrpc": "2.0", "id": 1, "result": "done later"})
    );
    server
        .send(json!({"jsonrpc": "2.0", "id": 2, "method": "later-boom"}))
        .await;
    let reply = server.recv().await;
    assert_eq!(reply["id"], json!(2));
    assert_eq!(reply["error"]["code"], json!(ResponseError::INTERNAL_ERROR));
    assert!(!conn.is_closed());
}

#[tokio::test]
async fn notifications_are_delivered() {
    let (conn, mut server, mut notes) = setup();
    server
        .send(json!({"jsonrpc": "2.0", "method": "boom"}))
        .await;
    server
        .send(json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": {"uri": "file:///a.rs", "diagnostics": []}}))
        .await;
    server
        .send(json!({"jsonrpc": "2.0", "method": "$/progress"}))
        .await;
    let (method, params) = timeout(WAIT, notes.recv()).await.unwrap().unwrap();
    assert_eq!(method, "textDocument/publishDiagnostics");
    assert_eq!(params, json!({"uri": "file:///a.rs", "diagnostics": []}));
    let (method, params) = timeout(WAIT, notes.recv()).await.unwrap().unwrap();
    assert_eq!((method.as_str(), params), ("$/progress", Value::Null));
    assert!(!conn.is_closed());
}

#[tokio::test]
async fn unknown_response_id_and_invalid_json_are_ignored() {
    let (conn, mut server, _) = setup();
    server
        .send(json!({"jsonrpc": "2.0", "id": 999, "result": 1}))
        .await;
    {
        use tokio::io::AsyncWriteExt;
        server
            .w
            .write_all(b"Content-Length: 5\r\n\r\n{oops")
            .await
            .unwrap();
    }
    let c = conn.clone();
    let call = tokio::spawn(async move { c.request("m", None).await });
    let req = server.recv().await;
    assert_eq!(req["id"], json!(1));
    server
        .send(json!({"jsonrpc": "2.0", "id": 1, "result": "ok"}))
        .await;
    assert_eq!(call.await.unwrap().unwrap(), json!("ok"));
    assert!(!conn.is_closed());
}

#[tokio::test]
async fn dropped_request_sends_cancel() {
    let (conn, mut server, _) = setup();
    let res = timeout(
        Duration::from_millis(50),
        conn.request("workspace/symbol", Some(json!({"query": "x"}))),
    )
    .await;
    assert!(res.is_err(), "expected a timeout");
    assert_eq!(conn.pending_count(), 0);

    let req = server.recv().await;
    assert_eq!(req["id"], json!(1));
    let cancel = server.recv().await;
    assert_eq!(
        cancel,
        json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 1}})
    );

    // The late answer is ignored; the connection keeps working.
    server
        .send(json!({"jsonrpc": "2.0", "id": 1, "error": {"code": ResponseError::REQUEST_CANCELLED, "message": "cancelled"}}))
        .await;
    let c = conn.clone();
    let call = tokio::spawn(async move { c.request("m", None).await });
    let req = server.recv().await;
    assert_eq!(req["id"], json!(2));
    server
        .send(json!({"jsonrpc": "2.0", "id": 2, "result": 5}))
        .await;
    assert_eq!(call.await.unwrap().unwrap(), json!(5));
}

#[tokio::test]
async fn eof_fails_all_pending_requests() {
    let (conn, mut server, _) = setup();
    let methods: [&'static str; 2] = ["textDocument/definition", "textDocument/references"];
    let calls: Vec<_> = methods
        .into_iter()
        .map(|m| {
            let c = conn.clone();
            tokio::spawn(async move { c.request(m, None).await })
        })
        .collect();
    server.recv().await;
    server.recv().await;
    assert_eq!(conn.pending_count(), 2);
    drop(server);

    for (call, method) in calls.into_iter().zip(methods) {
        let err = timeout(WAIT, call).await.unwrap().unwrap().unwrap_err();
        match &err {
            RpcError::Closed {
                server, method: m, ..
            } => {
                assert_eq!(server, "fake-ls");
                assert_eq!(m, method);
            }
            other => panic!("unexpected {other:?}"),
        }
        let text = err.to_string();
        assert!(
            text.contains(&format!("fake-ls exited before answering {method}")),
            "{text}"
        );
    }
    assert!(conn.is_closed());
    assert_eq!(conn.pending_count(), 0);
    let reason = timeout(WAIT, conn.closed()).await.unwrap();
    assert!(reason.contains("closed its output"), "{reason}");

    // Later calls fail at once.
    let err = timeout(WAIT, conn.request("textDocument/hover", None))
        .await
        .unwrap()
        .unwrap_err();
    assert!(
        matches!(&err, RpcError::Closed { method, .. } if method == "textDocument/hover"),
        "{err:?}"
    );
    assert!(matches!(
        conn.notify("exit", None),
        Err(RpcError::Closed { .. })
    ));
}

#[tokio::test]
async fn oversized_message_closes_connection() {
    let (conn, mut server, _) = setup_with(ConnectionOptions {
        max_message_len: 64,
    });
    let c = conn.clone();
    let call = tokio::spawn(async move { c.request("m", None).await });
    server.recv().await;
    server
        .send(json!({"jsonrpc": "2.0", "id": 1, "result": "x".repeat(100)}))
        .await;
    let err = timeout(WAIT, call).await.unwrap().unwrap().unwrap_err();
    assert!(matches!(err, RpcError::Closed { .. }), "{err:?}");
    assert!(err.to_string().contains("exceeds"), "{err}");
    assert!(conn.is_closed());
}

#[tokio::test]
async fn broken_writer_closes_connection() {
    let (conn, server, _) = setup();
    let FakeServer { r, w } = server;
    drop(r); // the server stops reading its stdin
    let err = timeout(WAIT, conn.request("m", None))
        .await
        .unwrap()
        .unwrap_err();
    assert!(matches!(err, RpcError::Closed { .. }), "{err:?}");
    assert!(conn.is_closed());
    drop(w);
}

#[tokio::test]
async fn dropping_all_handles_closes_server_input() {
    let (conn, mut server, _) = setup();
    conn.notify("exit", None).unwrap();
    assert_eq!(server.recv().await["method"], json!("exit"));
    drop(conn);
    let next = timeout(WAIT, read_message(&mut server.r, 1 << 20))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(next, None);
}

#[tokio::test]
async fn typed_request() {
    let (conn, mut server, _) = setup();
    let c = conn.clone();
    let call = tokio::spawn(async move { c.request_typed::<_, Vec<u32>>("m", &()).await });
    let req = server.recv().await;
    assert!(req.get("params").is_none());
    server
        .send(json!({"jsonrpc": "2.0", "id": req["id"], "result": [1, 2]}))
        .await;
    assert_eq!(call.await.unwrap().unwrap(), vec![1, 2]);

    let c = conn.clone();
    let call = tokio::spawn(async move { c.request_typed::<_, u32>("m", &json!({"a": 1})).await });
    let req = server.recv().await;
    assert_eq!(req["params"], json!({"a": 1}));
    server
        .send(json!({"jsonrpc": "2.0", "id": req["id"], "result": "nope"}))
        .await;
    assert!(matches!(
        call.await.unwrap(),
        Err(RpcError::Protocol { .. })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_concurrent_requests_multi_thread() {
    let (conn, mut server, _) = setup();
    let calls: Vec<_> = (0..100)
        .map(|i| {
            let c = conn.clone();
            tokio::spawn(async move { (i, c.request("m", Some(json!(i))).await) })
        })
        .collect();
    let mut reqs = Vec::new();
    for _ in 0..100 {
        reqs.push(server.recv().await);
    }
    reqs.reverse();
    for req in reqs {
        server
            .send(json!({"jsonrpc": "2.0", "id": req["id"], "result": req["params"]}))
            .await;
    }
    for call in calls {
        let (i, res) = call.await.unwrap();
        assert_eq!(res.unwrap(), json!(i));
    }
    assert_eq!(conn.pending_count(), 0);
}

#[test]
fn rpc_error_stays_small() {
    assert!(std::mem::size_of::<RpcError>() <= 128);
}
