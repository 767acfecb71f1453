//! `scry mcp --http`: the gate (token → 401, Origin → 403, Host → 403,
//! path → 404, body limit → 413, session limit → 503) with plain HTTP
//! requests, and real calls through rmcp's streamable HTTP client: the same
//! answers as over stdio, several sessions sharing one language server,
//! which stops with the HTTP server. The limits that keep a client with the
//! token from being starved: a slow-header attack on 64 connections while a
//! real client is served, the header and body read timeouts, the
//! unauthenticated pool apart from the authenticated one. Everything binds
//! 127.0.0.1 port 0.

mod common;

use std::time::Duration;

use common::*;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use scry_mcp::{HttpOptions, HttpServer, Options};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn http_options(ws: &Ws) -> HttpOptions {
    HttpOptions {
        state_dir: Some(ws.dir.path().join("state/scry")),
        ..HttpOptions::default()
    }
}

async fn start(ws: &Ws, http: HttpOptions) -> (HttpServer, String) {
    let server = HttpServer::start(ws.engine.clone(), Options::default(), http)
        .await
        .expect("the HTTP server starts");
    let token = std::fs::read_to_string(server.token_file())
        .expect("the token file")
        .trim()
        .to_string();
    (server, token)
}

/// One HTTP/1.1 request; returns the status and the head (status line and
/// headers, lower-cased names) of the answer.
async fn raw(server: &HttpServer, head: &str, body: &str) -> (u16, String) {
    let mut s = tokio::net::TcpStream::connect(server.local_addr())
        .await
        .expect("connect");
    let req = format!(
        "{head}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await.expect("send");
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    // The head is enough (an SSE body may stay open).
    let read = tokio::time::timeout(WAIT, async {
        while !got.windows(4).any(|w| w == b"\r\n\r\n") {
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    });
    read.await.expect("an answer in time");
    let text = String::from_utf8_lossy(&got).to_string();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {text:?}"));
    (status, text.to_ascii_lowercase())
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;

fn post(server: &HttpServer, path: &str, extra: &str) -> String {
    let mut h = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream",
        server.local_addr().port()
    );
    if !extra.is_empty() {
        h.push_str("\r\n");
        h.push_str(extra);
    }
    h
}

#[tokio::test]
async fn the_gate_refuses_what_it_must() {
    let ws = workspace(None, &[("a.py", "x = 1\n")]);
    let http = HttpOptions {
        max_sessions: 2,
        max_body_bytes: 64 * 1024,
        ..http_options(&ws)
    };
    let (server, token) = start(&ws, http).await;
    assert_eq!(token.len(), 64);
    assert!(
        server
            .token_file()
            .starts_with(ws.dir.path().join("state/scry"))
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(server.token_file())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "the token file is private");
    }
    let auth = format!("Authorization: Bearer {token}");

    // No token, a wrong one, another scheme: 401, saying how.
    let (st, head) = raw(&server, &post(&server, "/mcp", ""), INIT).await;
    assert_eq!(st, 401, "{head}");
    assert!(head.contains("www-authenticate: bearer"), "{head}");
    let wrong = format!("Authorization: Bearer {}", "0".repeat(64));
    assert_eq!(
        raw(&server, &post(&server, "/mcp", &wrong), INIT).await.0,
        401
    );
    let basic = format!("Authorization: Basic {token}");
    assert_eq!(
        raw(&server, &post(&server, "/mcp", &basic), INIT).await.0,
        401
    );

    // A present, invalid Origin: 403, with or without the token.
    for extra in [
        format!("{auth}\r\nOrigin: http://evil.example"),
        "Origin: http://evil.example".to_string(),
        format!("{auth}\r\nOrigin: null"),
        format!(
            "{auth}\r\nOrigin: http://127.0.0.1:{}",
            server.local_addr().port()
        ),
    ] {
        let (st, head) = raw(&server, &post(&server, "/mcp", &extra), INIT).await;
        assert_eq!(st, 403, "{extra}: {head}");
    }

    // A foreign Host (DNS rebinding): 403.
    let rebound = format!(
        "POST /mcp HTTP/1.1\r\nHost: evil.example:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{auth}",
        server.local_addr().port()
    );
    assert_eq!(raw(&server, &rebound, INIT).await.0, 403);

    // Another path: 404. A body over the limit: 413.
    assert_eq!(
        raw(&server, &post(&server, "/other", &auth), INIT).await.0,
        404
    );
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(70 * 1024)
    );
    assert_eq!(
        raw(&server, &post(&server, "/mcp", &auth), &big).await.0,
        413
    );

    // The token opens it; two sessions, then 503 for a third.
    for _ in 0..2 {
        let (st, head) = raw(&server, &post(&server, "/mcp", &auth), INIT).await;
        assert_eq!(st, 200, "{head}");
        assert!(head.contains("mcp-session-id:"), "{head}");
    }
    let (st, head) = raw(&server, &post(&server, "/mcp", &auth), INIT).await;
    assert_eq!(st, 503, "{head}");
    server.shutdown().await;
}

#[tokio::test]
async fn refuses_remote_addresses_and_bad_token_files() {
    let ws = workspace(None, &[("a.py", "x = 1\n")]);
    let remote = HttpOptions {
        addr: "0.0.0.0:0".parse().unwrap(),
        ..http_options(&ws)
    };
    let e = HttpServer::start(ws.engine.clone(), Options::default(), remote)
        .await
        .err()
        .expect("a non-loopback address is refused");
    assert!(e.to_string().contains("--allow-remote"), "{e}");

    let file = ws.dir.path().join("token");
    std::fs::write(&file, "a-token-of-sufficient-length\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let opts = HttpOptions {
            token_file: Some(file.clone()),
            ..http_options(&ws)
        };
        let e = HttpServer::start(ws.engine.clone(), Options::default(), opts)
            .await
            .err()
            .expect("a token file others can read is refused");
        assert!(e.to_string().contains("chmod 600"), "{e}");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let opts = HttpOptions {
        token_file: Some(file.clone()),
        ..http_options(&ws)
    };
    let (server, token) = start(&ws, opts).await;
    assert_eq!(token, "a-token-of-sufficient-length");
    assert_eq!(server.token_file(), file);
    let auth = format!("Authorization: Bearer {token}");
    assert_eq!(
        raw(&server, &post(&server, "/mcp", &auth), INIT).await.0,
        200
    );
    server.shutdown().await;
}

fn client_config(server: &HttpServer, token: Option<&str>) -> StreamableHttpClientTransportConfig {
    // The rmcp client's reqwest is the workspace's, built without a TLS
    // provider of its own (scry's remote index installs ring): this
    // process installs it too before a client is built (ring, as scry:
    // `scry_workspace::remote_index`).
    #[allow(deprecated)]
    let _ = rustls::crypto::ring::default_provider().install_default();
    let c = StreamableHttpClientTransportConfig::with_uri(server.url());
    match token {
        Some(t) => c.auth_header(t),
        None => c,
    }
}

#[tokio::test]
async fn rmcp_client_calls_tools_like_stdio() {
    if !have("pyright-langserver", "rmcp_client_calls_tools_like_stdio") {
        return;
    }
    let ws = fixture("python");
    let (server, token) = start(&ws, http_options(&ws)).await;

    // Without the token rmcp's client cannot even initialize.
    let denied = ()
        .serve(StreamableHttpClientTransport::from_config(client_config(
            &server, None,
        )))
        .await;
    assert!(denied.is_err(), "initialized without a token");

    let a = ()
        .serve(StreamableHttpClientTransport::from_config(client_config(
            &server,
            Some(&token),
        )))
        .await
        .expect("initialize over HTTP");
    let tools = a.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["lsp", "lsp_edit"]);

    let args = json!({"action": "symbols", "path": "inventory.py", "timeout_ms": 90000});
    let call =
        || CallToolRequestParams::new("lsp").with_arguments(args.as_object().unwrap().clone());
    let over_http = tokio::time::timeout(Duration::from_secs(120), a.call_tool(call()))
        .await
        .expect("in time")
        .expect("tools/call over HTTP");
    assert_ne!(over_http.is_error, Some(true), "{over_http:?}");
    let http_text = over_http.content[0].as_text().expect("text").text.clone();
    assert!(http_text.contains("total_weight"), "{http_text}");

    // The same call over stdio, same engine: the same answer.
    let (stdio, _task) = rmcp_client(server_for_stdio(&ws)).await;
    let over_stdio = stdio
        .call_tool(call())
        .await
        .expect("tools/call over stdio");
    assert_eq!(
        over_stdio.content[0].as_text().expect("text").text,
        http_text
    );
    let mut h = over_http.structured_content.clone().expect("structured");
    let mut s = over_stdio.structured_content.clone().expect("structured");
    untimed(&mut h);
    untimed(&mut s);
    assert_eq!(h, s);

    // A second HTTP session shares the running server; a bad argument is
    // a coded tool error, as over stdio.
    let b = ()
        .serve(StreamableHttpClientTransport::from_config(client_config(
            &server,
            Some(&token),
        )))
        .await
        .expect("a second session");
    let again = b.call_tool(call()).await.expect("tools/call, session 2");
    assert_eq!(again.content[0].as_text().unwrap().text, http_text);
    assert_eq!(
        ws.engine.workspace().running().len(),
        1,
        "one pyright for all sessions"
    );
    let bad = b
        .call_tool(
            CallToolRequestParams::new("lsp")
                .with_arguments(json!({"action": "fly"}).as_object().unwrap().clone()),
        )
        .await
        .expect("a tool result");
    assert_eq!(bad.is_error, Some(true));
    assert!(
        bad.content[0]
            .as_text()
            .unwrap()
            .text
            .contains("INVALID_ARGUMENT")
    );

    let _ = a.cancel().await;
    let _ = b.cancel().await;
    let _ = stdio.cancel().await;
    server.shutdown().await;
    assert!(
        ws.engine.workspace().running().is_empty(),
        "the language servers stop with the HTTP server"
    );
}

fn server_for_stdio(ws: &Ws) -> scry_mcp::ScryMcp {
    server(ws, false)
}

// ------------------------------------------- duplicates and hang-ups over HTTP

/// One POST to `/mcp` read to its end: the head (lower-cased) and the
/// JSON-RPC messages of its body (plain JSON or SSE `data:` lines).
async fn exchange(
    server: &HttpServer,
    token: &str,
    session: Option<&str>,
    body: &serde_json::Value,
) -> (String, Vec<serde_json::Value>) {
    let mut extra = format!("Authorization: Bearer {token}");
    if let Some(s) = session {
        extra.push_str(&format!(
            "\r\nMcp-Session-Id: {s}\r\nMcp-Protocol-Version: 2025-06-18"
        ));
    }
    let body = body.to_string();
    let mut s = tokio::net::TcpStream::connect(server.local_addr())
        .await
        .expect("connect");
    let req = format!(
        "{}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        post(server, "/mcp", &extra),
        body.len()
    );
    s.write_all(req.as_bytes()).await.expect("send");
    let mut got = Vec::new();
    tokio::time::timeout(Duration::from_secs(60), s.read_to_end(&mut got))
        .await
        .expect("the answer in time")
        .expect("read");
    scry_testkit::mcp_http::answer(&String::from_utf8_lossy(&got))
}

/// A new MCP session over raw HTTP; its id.
async fn raw_session(server: &HttpServer, token: &str) -> String {
    let init: serde_json::Value = serde_json::from_str(INIT).unwrap();
    let (head, _) = exchange(server, token, None, &init).await;
    let id = head
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id:"))
        .unwrap_or_else(|| panic!("no session id in {head}"))
        .trim()
        .to_string();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (head, _) = exchange(server, token, Some(&id), &initialized).await;
    assert!(head.starts_with("http/1.1 202"), "{head}");
    id
}

fn definition_call(id: serde_json::Value) -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "lsp", "arguments": {"action": "definition", "path": "a.fake",
        "symbol": "alpha", "line": 1}}})
}

/// The answer to `id` among `messages`.
fn answer_to(messages: &[serde_json::Value], id: &serde_json::Value) -> serde_json::Value {
    messages
        .iter()
        .find(|m| &m["id"] == id && (m.get("result").is_some() || m.get("error").is_some()))
        .cloned()
        .unwrap_or_else(|| panic!("no answer to {id} in {messages:?}"))
}

#[tokio::test]
async fn a_duplicate_id_in_flight_over_http_runs_once_and_both_posts_are_answered() {
    let Some(ws) = fake_workspace("http_duplicate", "slow", &[("FAKE_LSP_DELAY_MS", "1500")])
    else {
        return;
    };
    let (server, token) = start(&ws, http_options(&ws)).await;
    let server = std::sync::Arc::new(server);
    let session = raw_session(&server, &token).await;
    let id = json!("dup");
    let first = {
        let (server, token, session, id) =
            (server.clone(), token.clone(), session.clone(), id.clone());
        tokio::spawn(async move {
            exchange(&server, &token, Some(&session), &definition_call(id)).await
        })
    };
    let root = ws.root.clone();
    until("the first call to reach the server", || {
        fake_count(&root, "textDocument/definition") == 1
    })
    .await;
    // The client retries the same id while the first is running.
    let (head_b, b) = exchange(
        &server,
        &token,
        Some(&session),
        &definition_call(id.clone()),
    )
    .await;
    let (head_a, a) = first.await.unwrap();
    assert!(head_a.starts_with("http/1.1 200"), "{head_a}");
    assert!(head_b.starts_with("http/1.1 200"), "{head_b}");
    let (a, b) = (answer_to(&a, &id), answer_to(&b, &id));
    assert_eq!(a["result"]["isError"], json!(false), "{a}");
    assert_eq!(a, b, "both copies get the one answer");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        fake_count(&ws.root, "textDocument/definition"),
        1,
        "the tool ran once"
    );
    // The id is finished now: a repeat replays it, still without running.
    let (_, c) = exchange(
        &server,
        &token,
        Some(&session),
        &definition_call(id.clone()),
    )
    .await;
    assert_eq!(answer_to(&c, &id), a);
    assert_eq!(fake_count(&ws.root, "textDocument/definition"), 1);
    std::sync::Arc::into_inner(server)
        .expect("no other handle")
        .shutdown()
        .await;
}

#[tokio::test]
async fn a_post_the_client_hangs_up_on_cancels_the_call_at_the_server() {
    let Some(ws) = fake_workspace("http_hangup", "hang", &[]) else {
        return;
    };
    let (server, token) = start(&ws, http_options(&ws)).await;
    let session = raw_session(&server, &token).await;
    let body = definition_call(json!(5)).to_string();
    let mut s = tokio::net::TcpStream::connect(server.local_addr())
        .await
        .unwrap();
    let extra = format!(
        "Authorization: Bearer {token}\r\nMcp-Session-Id: {session}\r\nMcp-Protocol-Version: 2025-06-18"
    );
    let req = format!(
        "{}\r\nContent-Length: {}\r\n\r\n{body}",
        post(&server, "/mcp", &extra),
        body.len()
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let root = ws.root.clone();
    until("the request to reach the server", || {
        fake_count(&root, "textDocument/definition") == 1
    })
    .await;
    drop(s);
    until("$/cancelRequest at the server", || {
        fake_count(&root, "$/cancelRequest") == 1
    })
    .await;
    // The session goes on.
    let status = json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {
        "name": "lsp", "arguments": {"action": "status"}}});
    let (_, m) = exchange(&server, &token, Some(&session), &status).await;
    assert_eq!(answer_to(&m, &json!(6))["result"]["isError"], json!(false));
    server.shutdown().await;
}

// ------------------------------------------------ nobody without the token starves a client

/// One attacker connection after another, each sending a request line and
/// then a header line every `drip`, never finishing its head; a closed
/// connection is replaced (noticed when a write fails). Stops when `stop`
/// is set, after `max_connections`, or at `until`. Returns how many
/// connections it opened.
async fn slow_header_attacker(
    addr: std::net::SocketAddr,
    drip: Duration,
    max_connections: usize,
    until: tokio::time::Instant,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> usize {
    use std::sync::atomic::Ordering;
    let mut opened = 0;
    while opened < max_connections
        && !stop.load(Ordering::SeqCst)
        && tokio::time::Instant::now() < until
    {
        let Ok(mut s) = tokio::net::TcpStream::connect(addr).await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        opened += 1;
        let head = format!("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n", addr.port());
        let mut n = 0u32;
        let mut line = head.into_bytes();
        while !stop.load(Ordering::SeqCst) && tokio::time::Instant::now() < until {
            if s.write_all(&line).await.is_err() {
                break;
            }
            n += 1;
            line = format!("X-Drip-{n}: a\r\n").into_bytes();
            tokio::time::sleep(drip).await;
        }
        // Anything the server said to a head it never got whole is a bug.
        let mut buf = [0u8; 64];
        if let Ok(Ok(k)) = tokio::time::timeout(Duration::from_millis(1), s.read(&mut buf)).await {
            assert!(
                k == 0 || !buf[..k].starts_with(b"HTTP/1.1 2"),
                "an attacker was served: {:?}",
                String::from_utf8_lossy(&buf[..k])
            );
        }
    }
    opened
}

/// Issue 20: 64 connections dripping header bytes (the slow-header attack),
/// replaced as soon as they are closed, while a real MCP client with the
/// token initializes, lists the tools and asks a question: it is served,
/// well within the header read timeout, without waiting the attack out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_header_attack_does_not_starve_a_client_with_the_token() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let ws = workspace(None, &[("notes.txt", "alpha\n")]);
    let (server, token) = start(&ws, http_options(&ws)).await;
    let defaults = HttpOptions::default();
    assert_eq!(defaults.max_connections, 64);
    assert_eq!(defaults.max_unauthenticated, 16);
    assert_eq!(defaults.header_read_timeout, Duration::from_secs(10));

    let stop = std::sync::Arc::new(AtomicBool::new(false));
    // Bounded in count and time whatever happens below.
    let until = tokio::time::Instant::now() + Duration::from_secs(90);
    let attackers: Vec<_> = (0..64)
        .map(|_| {
            tokio::spawn(slow_header_attacker(
                server.local_addr(),
                Duration::from_secs(1),
                200,
                until,
                stop.clone(),
            ))
        })
        .collect();
    // Let the attack take every place it can.
    tokio::time::sleep(Duration::from_secs(2)).await;

    let started = std::time::Instant::now();
    let served = tokio::time::timeout(Duration::from_secs(60), async {
        let client = ()
            .serve(StreamableHttpClientTransport::from_config(client_config(
                &server,
                Some(&token),
            )))
            .await
            .expect("initialize while under attack");
        let tools = client.list_all_tools().await.expect("tools/list");
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, ["lsp", "lsp_edit"]);
        let args = json!({"action": "status"});
        let status = client
            .call_tool(
                CallToolRequestParams::new("lsp").with_arguments(args.as_object().unwrap().clone()),
            )
            .await
            .expect("tools/call while under attack");
        assert_ne!(status.is_error, Some(true), "{status:?}");
        let text = status.content[0].as_text().expect("text").text.clone();
        let _ = client.cancel().await;
        text
    })
    .await
    .expect("the client is served while the attack goes on");
    let took = started.elapsed();
    assert!(!served.is_empty());
    // Served without waiting for the attackers' heads to time out (10 s).
    assert!(
        took < Duration::from_secs(9),
        "the client waited {took:?} under the attack"
    );

    // The attack was still on: its connections are still being replaced.
    assert!(
        !attackers.iter().all(|a| a.is_finished()),
        "the attack ended before the client was done"
    );
    stop.store(true, Ordering::SeqCst);
    let mut opened = 0;
    for a in attackers {
        opened += a.await.expect("an attacker task");
    }
    assert!(opened >= 64, "{opened} attacker connections");
    server.shutdown().await;
}

/// Read until the peer closes (EOF or reset) or `within` passes; what was
/// read, and whether it closed.
async fn read_until_closed(s: &mut tokio::net::TcpStream, within: Duration) -> (String, bool) {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let closed = tokio::time::timeout(within, async {
        loop {
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await
    .is_ok();
    (String::from_utf8_lossy(&got).to_string(), closed)
}

/// The limits one by one: a head that never ends is closed at the header
/// read timeout, a late body gets 408, the oldest unauthenticated
/// connection makes room for a new one, an authenticated connection is
/// never pushed out, and the authenticated cap holds on its own.
#[tokio::test]
async fn read_timeouts_and_the_two_pools() {
    let ws = workspace(None, &[("notes.txt", "alpha\n")]);
    let opts = HttpOptions {
        header_read_timeout: Duration::from_secs(1),
        body_read_timeout: Duration::from_secs(1),
        ..http_options(&ws)
    };
    let (server, token) = start(&ws, opts).await;
    let addr = server.local_addr();
    let auth = format!("Authorization: Bearer {token}");

    // A head that never ends: closed, without an answer worth the name.
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .await
        .unwrap();
    let (said, closed) = read_until_closed(&mut s, Duration::from_secs(15)).await;
    assert!(closed, "a head that never ends keeps its connection");
    assert!(!said.starts_with("HTTP/1.1 2"), "{said}");

    // A body that never ends: 408 once its time is up.
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "{}\r\nContent-Length: {}\r\n\r\n",
        post(&server, "/mcp", &auth),
        INIT.len()
    );
    s.write_all(head.as_bytes()).await.unwrap();
    s.write_all(&INIT.as_bytes()[..10]).await.unwrap();
    let (said, closed) = read_until_closed(&mut s, Duration::from_secs(15)).await;
    assert!(closed, "a late body keeps its connection");
    assert!(said.starts_with("HTTP/1.1 408"), "{said}");
    assert!(said.contains("did not arrive within 1 s"), "{said}");
    server.shutdown().await;

    let opts = HttpOptions {
        max_unauthenticated: 2,
        max_connections: 1,
        ..http_options(&ws)
    };
    let (server, token) = start(&ws, opts).await;
    let addr = server.local_addr();
    let auth = format!("Authorization: Bearer {token}");
    let delete = format!(
        "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n{auth}\r\nContent-Length: 0\r\n\r\n",
        addr.port()
    );
    // One authenticated, kept-alive connection (its request is refused by
    // rmcp, but it passed the token check).
    let mut kept = tokio::net::TcpStream::connect(addr).await.unwrap();
    kept.write_all(delete.as_bytes()).await.unwrap();
    let mut buf = [0u8; 4096];
    let n = tokio::time::timeout(WAIT, kept.read(&mut buf))
        .await
        .expect("an answer")
        .unwrap();
    let first = String::from_utf8_lossy(&buf[..n]).to_string();
    assert!(first.starts_with("HTTP/1.1 "), "{first}");
    assert!(
        !first.to_ascii_lowercase().contains("connection: close"),
        "{first}"
    );

    // Silent connections beyond the unauthenticated pool push out the
    // oldest of them, never the authenticated one.
    let mut silent = Vec::new();
    for _ in 0..3 {
        silent.push(tokio::net::TcpStream::connect(addr).await.unwrap());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (_, closed) = read_until_closed(&mut silent[0], Duration::from_secs(15)).await;
    assert!(closed, "the oldest unauthenticated connection makes room");
    let (_, closed) = read_until_closed(&mut silent[2], Duration::from_millis(300)).await;
    assert!(!closed, "the newest stays");
    kept.write_all(delete.as_bytes()).await.unwrap();
    let status_line = first.lines().next().unwrap().to_string();
    let mut again = String::new();
    tokio::time::timeout(WAIT, async {
        // (what is left of the first answer comes first)
        while !again.contains(&status_line) {
            match kept.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => again.push_str(&String::from_utf8_lossy(&buf[..n])),
            }
        }
    })
    .await
    .expect("the authenticated connection is still served");
    assert!(again.contains(&status_line), "{again}");

    // The authenticated pool is full (1): a second connection with the
    // token gets 503 and is closed.
    let mut second = tokio::net::TcpStream::connect(addr).await.unwrap();
    second.write_all(delete.as_bytes()).await.unwrap();
    let (said, closed) = read_until_closed(&mut second, Duration::from_secs(15)).await;
    assert!(said.starts_with("HTTP/1.1 503"), "{said}");
    assert!(closed);
    // Without the token: 401, and the connection is closed.
    let mut anon = tokio::net::TcpStream::connect(addr).await.unwrap();
    let no_token = format!(
        "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: 0\r\n\r\n",
        addr.port()
    );
    anon.write_all(no_token.as_bytes()).await.unwrap();
    let (said, closed) = read_until_closed(&mut anon, Duration::from_secs(15)).await;
    assert!(said.starts_with("HTTP/1.1 401"), "{said}");
    assert!(closed, "a refused unauthenticated connection stays open");
    drop(kept);
    server.shutdown().await;
}
