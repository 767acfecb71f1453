//! Call semantics against the fake server: error codes, validation before
//! anything runs, read-only, the journal, idempotency by request id,
//! cancellation reaching the server, the in-flight limit, progress.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::*;
use scry_mcp::{Options, ScryMcp, ToolError};
use scry_model::OpError;
use serde_json::{Value, json};

fn def(symbol: &str) -> Value {
    json!({"action": "definition", "path": "a.fake", "symbol": symbol})
}

/// With a line, one definition request per execution (without one, a name
/// the file only uses is asked at each of its first uses and compared).
fn def_on_line(symbol: &str, line: u32) -> Value {
    json!({"action": "definition", "path": "a.fake", "symbol": symbol, "line": line})
}

// ------------------------------------------------------------------ errors

#[tokio::test]
async fn invalid_arguments_are_refused_before_anything_runs() {
    let Some(ws) = fake_workspace("invalid_arguments", "normal", &[]) else {
        return;
    };
    let s = server(&ws, false);
    let mut raw = Raw::start(s.clone()).await;
    let cases: Vec<(Value, &str)> = vec![
        (json!({}), "needs an action"),
        (json!({"action": "teleport"}), "unknown action `teleport`"),
        (json!({"action": "reload"}), "action of lsp_edit"),
        (
            json!({"action": "definition", "path": "a.fake"}),
            "needs a symbol",
        ),
        (json!({"action": "definition"}), "needs a symbol"),
        (
            json!({"action": "definition", "path": "a.fake", "symbol": "alpha", "line": 0}),
            "1-based",
        ),
        (
            json!({"action": "definition", "path": "a.fake", "line": 1, "column": -3}),
            "positive",
        ),
        (
            json!({"action": "definition", "path": "a.fake", "column": 2}),
            "column needs line",
        ),
        (
            json!({"action": "hover", "path": "a.fake", "symbol": "alpha", "file": "x"}),
            "unknown argument `file`",
        ),
        (
            json!({"action": "hover", "path": "a.fake", "symbol": 7}),
            "symbol must be a string",
        ),
        (
            json!({"action": "hover", "path": "a.fake", "symbol": "alpha", "timeout_ms": 999999}),
            "at most 120000",
        ),
        (json!({"action": "symbols"}), "symbols needs a path"),
        (json!({"action": "workspace_symbols"}), "needs a query"),
        // Edits (previews in lsp) and diagnostics.
        (json!({"action": "undo"}), "action of lsp_edit"),
        (
            json!({"action": "rename", "path": "a.fake", "symbol": "alpha"}),
            "rename needs new_name",
        ),
        (
            json!({"action": "rename", "path": "a.fake", "new_name": "omega"}),
            "rename needs a symbol",
        ),
        // Issue 26: the name it already has; a line past the largest.
        (
            json!({"action": "rename", "path": "a.fake", "symbol": "alpha", "new_name": "alpha"}),
            "new_name is the name the symbol already has",
        ),
        (
            json!({"action": "hover", "path": "a.fake", "symbol": "alpha", "line": 4294967296u64}),
            "line 4294967296 is out of range: at most 4294967295",
        ),
        (
            json!({"action": "hover", "path": "a.fake", "symbol": "alpha", "new_name": "x"}),
            "new_name is for rename",
        ),
        (
            json!({"action": "code_actions"}),
            "code_actions needs a path",
        ),
        (
            json!({"action": "code_actions", "path": "a.fake", "action_index": 0}),
            "positive",
        ),
        (
            json!({"action": "code_actions", "path": "a.fake", "action_index": 1, "action_title": "Fix"}),
            "not both",
        ),
        (
            json!({"action": "hover", "path": "a.fake", "symbol": "alpha", "action_index": 1}),
            "pick a code action",
        ),
        (
            json!({"action": "diagnostics", "path": "a.fake", "severity": "loud"}),
            "severity must be error, warning or all",
        ),
        (
            json!({"action": "symbols", "path": "a.fake", "severity": "error"}),
            "severity is for diagnostics",
        ),
        (
            json!({"action": "rename", "path": "a.fake", "symbol": "alpha", "new_name": "omega", "apply": true}),
            "apply it with lsp_edit",
        ),
    ];
    for (i, (args, want)) in cases.iter().enumerate() {
        let id = json!(1000 + i);
        raw.call(id.clone(), "lsp", args.clone()).await;
        let r = raw.response(id).await;
        assert_eq!(error_code(&r), "INVALID_ARGUMENT", "{args}: {r}");
        let t = text(&r);
        assert!(t.contains(want), "{args}: `{t}` lacks `{want}`");
        assert!(t.starts_with("error[INVALID_ARGUMENT]: "), "{t}");
        assert!(!t.contains('\n'), "{t}");
    }
    // lsp_edit with an lsp action, and a request without a method.
    raw.call(json!("e1"), "lsp_edit", json!({"action": "hover"}))
        .await;
    assert_eq!(
        error_code(&raw.response(json!("e1")).await),
        "INVALID_ARGUMENT"
    );
    raw.call(json!("e2"), "lsp_edit", json!({"action": "request"}))
        .await;
    assert_eq!(
        error_code(&raw.response(json!("e2")).await),
        "INVALID_ARGUMENT"
    );
    for (i, (args, want)) in [
        (
            json!({"action": "code_actions", "path": "a.fake"}),
            "pass action_index",
        ),
        (
            json!({"action": "rename", "path": "a.fake", "symbol": "alpha", "new_name": "o", "apply": "maybe"}),
            "apply must be true or false",
        ),
        (
            json!({"action": "rename", "path": "a.fake", "symbol": "alpha", "new_name": "o", "query": "x"}),
            "unknown argument `query`",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let id = json!(format!("e{}", 10 + i));
        raw.call(id.clone(), "lsp_edit", args.clone()).await;
        let r = raw.response(id).await;
        assert_eq!(error_code(&r), "INVALID_ARGUMENT", "{args}: {r}");
        assert!(text(&r).contains(want), "{args}: {}", text(&r));
    }
    assert_eq!(s.executions(), 0, "nothing may run on bad arguments");
    assert!(
        ws.engine.workspace().running().is_empty(),
        "no server started"
    );
    assert_eq!(fake_count(&ws.root, "initialize"), 0);
}

#[tokio::test]
async fn path_errors() {
    let Some(ws) = fake_workspace("path_errors", "normal", &[]) else {
        return;
    };
    std::fs::write(ws.root.join("notes.txt"), "hello\n").unwrap();
    let s = server(&ws, false);
    let mut raw = Raw::start(s.clone()).await;
    let outside = std::env::temp_dir().join("scry-mcp-outside.fake");
    std::fs::write(&outside, "alpha\n").unwrap();
    let cases = [
        (
            json!({"action": "hover", "path": "nope.fake", "symbol": "alpha"}),
            "FILE_NOT_FOUND",
        ),
        (
            json!({"action": "hover", "path": outside.to_string_lossy(), "symbol": "alpha"}),
            "OUTSIDE_WORKSPACE",
        ),
        (
            json!({"action": "hover", "path": "../../../../etc/passwd", "symbol": "root"}),
            "OUTSIDE_WORKSPACE",
        ),
    ];
    for (i, (args, code)) in cases.iter().enumerate() {
        let id = json!(i);
        raw.call(id.clone(), "lsp", args.clone()).await;
        let r = raw.response(id).await;
        assert_eq!(error_code(&r), *code, "{args}: {r}");
    }
    assert_eq!(s.executions(), 0, "path errors are found before running");
    // A file no configured server serves.
    raw.call(
        json!("ns"),
        "lsp",
        json!({"action": "hover", "path": "notes.txt", "symbol": "hello"}),
    )
    .await;
    let r = raw.response(json!("ns")).await;
    assert_eq!(error_code(&r), "NO_SERVER", "{r}");
    assert!(text(&r).contains(".scry.json"), "actionable: {}", text(&r));
}

#[tokio::test]
async fn symbol_not_found() {
    let Some(ws) = fake_workspace("symbol_not_found", "normal", &[]) else {
        return;
    };
    let mut raw = Raw::start(server(&ws, false)).await;
    raw.call(json!(1), "lsp", def("omega")).await;
    let r = raw.response(json!(1)).await;
    assert_eq!(error_code(&r), "SYMBOL_NOT_FOUND", "{r}");
}

#[tokio::test]
async fn server_crash_is_a_tool_error() {
    let Some(ws) = fake_workspace("server_crash", "crash-on-request", &[]) else {
        return;
    };
    let mut raw = Raw::start(server(&ws, false)).await;
    raw.call(json!(1), "lsp", def("alpha")).await;
    let r = raw.response(json!(1)).await;
    assert_eq!(error_code(&r), "SERVER_CRASHED", "{r}");
    assert!(!text(&r).contains('\n'));
}

#[tokio::test]
async fn timeout_is_a_tool_error() {
    let Some(ws) = fake_workspace("timeout", "hang", &[]) else {
        return;
    };
    let mut raw = Raw::start(server(&ws, false)).await;
    let mut args = def("alpha");
    args["timeout_ms"] = json!(1500);
    raw.call(json!(1), "lsp", args).await;
    let r = raw.response(json!(1)).await;
    assert_eq!(error_code(&r), "TIMEOUT", "{r}");
    assert!(text(&r).contains("1500 ms"), "{}", text(&r));
}

/// Codes no fake fault produces on demand: the mapping keeps the engine's
/// code, and the text is the CLI's one line.
#[test]
fn every_op_error_keeps_its_code() {
    let root = Path::new("/ws");
    let cases = [
        (OpError::InvalidArgument("bad".into()), "INVALID_ARGUMENT"),
        (
            OpError::FileNotFound(PathBuf::from("/ws/a.rs")),
            "FILE_NOT_FOUND",
        ),
        (
            OpError::OutsideWorkspace {
                path: PathBuf::from("/etc/x"),
                root: root.into(),
            },
            "OUTSIDE_WORKSPACE",
        ),
        (OpError::NoServer("none".into()), "NO_SERVER"),
        (OpError::SymbolNotFound("x".into()), "SYMBOL_NOT_FOUND"),
        (OpError::ServerCrashed("died".into()), "SERVER_CRASHED"),
        (OpError::Timeout("slow".into()), "TIMEOUT"),
        (
            OpError::MalformedResponse("rust-analyzer sent a malformed reply:\n{...}".into()),
            "MALFORMED_RESPONSE",
        ),
        (OpError::ServerError("boom".into()), "SERVER_ERROR"),
        (
            OpError::EditRejected("`x` cannot be renamed; nothing was changed".into()),
            "EDIT_REJECTED",
        ),
        (
            OpError::FileChanged("/ws/a.rs changed since the server saw it".into()),
            "FILE_CHANGED",
        ),
        (
            OpError::WriteFailed("disk full; every file was restored".into()),
            "WRITE_FAILED",
        ),
    ];
    for (e, code) in cases {
        let t = ToolError::from_op(&e, root, &[]);
        assert_eq!(t.code, code);
        assert!(!t.text().contains('\n'), "{}", t.text());
        assert_eq!(t.json()["error"]["code"], json!(code));
    }
    let t = ToolError::from_op(&OpError::FileNotFound(PathBuf::from("/ws/a.rs")), root, &[]);
    assert_eq!(t.text(), "error[FILE_NOT_FOUND]: file not found: a.rs");
    // Edit errors name files relative to the workspace, like the CLI.
    let t = ToolError::from_op(
        &OpError::FileChanged(
            scry_model::EditFact::ChangedSinceRead {
                path: PathBuf::from("/ws/src/a.rs"),
                server: "rust-analyzer".into(),
            }
            .message(),
        ),
        root,
        &[],
    );
    assert_eq!(
        t.text(),
        "error[FILE_CHANGED]: src/a.rs changed on disk since rust-analyzer read it; nothing was written — ask again"
    );
    // Secrets from the environment never come back.
    let secret = "hunter2-very-secret".to_string();
    let t = ToolError::from_op(
        &OpError::ServerError(format!("auth failed with key {secret}\nstack: ...").into()),
        root,
        std::slice::from_ref(&secret),
    );
    assert!(!t.message.contains(&secret), "{}", t.message);
    assert!(!t.message.contains("stack"), "{}", t.message);
}

// ------------------------------------------------------------- permission

#[tokio::test]
async fn read_only_refuses_writes() {
    let Some(ws) = fake_workspace("read_only", "normal", &[]) else {
        return;
    };
    let s = server(&ws, true);
    let mut raw = Raw::start(s.clone()).await;
    raw.call(json!(1), "lsp_edit", json!({"action": "reload"}))
        .await;
    let r = raw.response(json!(1)).await;
    assert_eq!(error_code(&r), "READ_ONLY", "{r}");
    assert!(text(&r).contains("--read-only"));
    assert_eq!(s.executions(), 0);
    assert!(s.journal().is_empty());
    // Reading still works.
    raw.call(json!(2), "lsp", json!({"action": "status"})).await;
    assert!(!is_error(&raw.response(json!(2)).await));
}

#[tokio::test]
async fn writes_are_journaled() {
    let Some(ws) = fake_workspace("journal", "normal", &[]) else {
        return;
    };
    let s = server(&ws, false);
    let mut raw = Raw::start(s.clone()).await;
    raw.call(
        json!(1),
        "lsp_edit",
        json!({
            "action": "request", "path": "a.fake", "method": "textDocument/hover",
            "params": {"textDocument": {"uri": "$uri"}, "position": {"line": 0, "character": 1}}
        }),
    )
    .await;
    let r = raw.response(json!(1)).await;
    assert!(!is_error(&r), "{r}");
    assert!(text(&r).contains("fake alpha"), "{}", text(&r));
    raw.call(json!(2), "lsp_edit", json!({"action": "reload"}))
        .await;
    let r = raw.response(json!(2)).await;
    assert!(!is_error(&r), "{r}");
    let j = s.journal();
    assert_eq!(j.len(), 2, "{j:?}");
    assert_eq!(j[0].action, "request");
    assert_eq!(j[0].method.as_deref(), Some("textDocument/hover"));
    assert_eq!(j[0].path.as_deref(), Some("a.fake"));
    assert_eq!(j[0].outcome, "ok");
    assert_eq!(j[0].request_id, "1");
    assert_eq!(j[1].action, "reload");
    // Reads are not journaled.
    raw.call(json!(3), "lsp", json!({"action": "status"})).await;
    raw.response(json!(3)).await;
    assert_eq!(s.journal().len(), 2);
}

// ------------------------------------------------------------ idempotency

#[tokio::test]
async fn finished_id_is_replayed_not_rerun() {
    let Some(ws) = fake_workspace("replay", "normal", &[]) else {
        return;
    };
    let s = server(&ws, false);
    let mut raw = Raw::start(s.clone()).await;
    raw.call(json!(5), "lsp", def("alpha")).await;
    let first = raw.response(json!(5)).await;
    assert!(!is_error(&first), "{first}");
    assert_eq!(s.executions(), 1);
    let asked = fake_count(&ws.root, "textDocument/definition");
    raw.call(json!(5), "lsp", def("alpha")).await;
    let second = raw.response(json!(5)).await;
    assert_eq!(first, second);
    assert_eq!(s.executions(), 1, "replayed, not run again");
    assert_eq!(fake_count(&ws.root, "textDocument/definition"), asked);
    // The same id for another call is refused, not run.
    raw.call(json!(5), "lsp", def("beta")).await;
    let other = raw.response(json!(5)).await;
    assert_eq!(error_code(&other), "INVALID_ARGUMENT");
    assert!(text(&other).contains("already used"), "{}", text(&other));
    assert_eq!(s.executions(), 1);
    // A new id runs.
    raw.call(json!(6), "lsp", def("alpha")).await;
    assert_eq!(text(&raw.response(json!(6)).await), text(&first));
    assert_eq!(s.executions(), 2);
}

#[tokio::test]
async fn duplicate_id_in_flight_runs_once_and_both_are_answered() {
    let Some(ws) = fake_workspace("duplicate", "slow", &[("FAKE_LSP_DELAY_MS", "1500")]) else {
        return;
    };
    let s = server(&ws, false);
    let mut raw = Raw::start(s.clone()).await;
    raw.call(json!("dup"), "lsp", def_on_line("alpha", 1)).await;
    let root = ws.root.clone();
    until("the first call to reach the server", || {
        fake_count(&root, "textDocument/definition") == 1
    })
    .await;
    raw.call(json!("dup"), "lsp", def_on_line("alpha", 1)).await;
    let a = raw.response(json!("dup")).await;
    let b = raw.response(json!("dup")).await;
    assert!(!is_error(&a), "{a}");
    assert_eq!(a, b);
    assert_eq!(s.executions(), 1);
    assert_eq!(fake_count(&ws.root, "textDocument/definition"), 1);
}

// ------------------------------------------------------------ cancellation

#[tokio::test]
async fn cancel_reaches_the_server_and_nothing_is_written() {
    let Some(ws) = fake_workspace("cancel", "hang", &[]) else {
        return;
    };
    let s = server(&ws, false);
    let mut raw = Raw::start(s.clone()).await;
    raw.call(json!(11), "lsp", def("alpha")).await;
    let root = ws.root.clone();
    until("the request to reach the server", || {
        fake_count(&root, "textDocument/definition") == 1
    })
    .await;
    let lsp_id = fake_log(&ws.root)
        .into_iter()
        .find(|m| m["method"] == "textDocument/definition")
        .map(|m| m["id"].clone())
        .unwrap();
    raw.cancel(json!(11)).await;
    until("$/cancelRequest at the server", || {
        fake_log(&root)
            .iter()
            .any(|m| m["method"] == "$/cancelRequest" && m["params"]["id"] == lsp_id)
    })
    .await;
    assert!(
        raw.try_response(json!(11), Duration::from_millis(800))
            .await
            .is_none(),
        "no answer after a cancel"
    );
    // The session goes on.
    raw.call(json!(12), "lsp", json!({"action": "status"}))
        .await;
    assert!(!is_error(&raw.response(json!(12)).await));
    // A cancelled write is journaled as such.
    raw.call(
        json!(13),
        "lsp_edit",
        json!({"action": "request", "path": "a.fake", "method": "textDocument/definition",
               "params": {"textDocument": {"uri": "$uri"}, "position": {"line": 0, "character": 0}}}),
    )
    .await;
    until("the write to reach the server", || {
        fake_count(&root, "textDocument/definition") == 2
    })
    .await;
    raw.cancel(json!(13)).await;
    let journal_has_it = || {
        s.journal()
            .iter()
            .any(|e| e.request_id == "13" && e.outcome.starts_with("cancelled"))
    };
    until("the cancelled write in the journal", journal_has_it).await;
    assert!(
        raw.try_response(json!(13), Duration::from_millis(500))
            .await
            .is_none()
    );
}

// ------------------------------------------------------------ limits

#[tokio::test]
async fn the_33rd_call_in_flight_is_busy() {
    let Some(ws) = fake_workspace("busy", "hang", &[]) else {
        return;
    };
    let s = server(&ws, false);
    let mut raw = Raw::start(s.clone()).await;
    for i in 0..32 {
        raw.call(json!(100 + i), "lsp", def("alpha")).await;
    }
    let s2 = s.clone();
    until("32 calls running", || s2.executions() == 32).await;
    // Every call must have reached the server before one is cancelled, or
    // the cancel has no request to reach (a call still syncing files ends
    // without one).
    let root = ws.root.clone();
    until("32 requests at the server", || {
        fake_count(&root, "textDocument/definition") >= 32
    })
    .await;
    let t0 = std::time::Instant::now();
    raw.call(json!(200), "lsp", def("alpha")).await;
    let r = raw.response(json!(200)).await;
    assert!(t0.elapsed() < Duration::from_secs(2), "BUSY is immediate");
    assert_eq!(error_code(&r), "BUSY", "{r}");
    assert_eq!(s.executions(), 32);
    // Cancelling one frees a slot; a BUSY id may then be retried.
    raw.cancel(json!(100)).await;
    until("the cancel", || fake_count(&root, "$/cancelRequest") >= 1).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    raw.call(json!(200), "lsp", json!({"action": "status"}))
        .await;
    let r = raw.response(json!(200)).await;
    assert!(!is_error(&r), "{r}");
    for i in 1..32 {
        raw.cancel(json!(100 + i)).await;
    }
}

#[tokio::test]
async fn limit_is_configurable() {
    let Some(ws) = fake_workspace("limit", "hang", &[]) else {
        return;
    };
    let s = ScryMcp::new(
        ws.engine.clone(),
        Options {
            max_in_flight: 1,
            ..Options::default()
        },
    );
    let mut raw = Raw::start(s.clone()).await;
    raw.call(json!(1), "lsp", def("alpha")).await;
    let s2 = s.clone();
    until("one call running", || s2.executions() == 1).await;
    raw.call(json!(2), "lsp", json!({"action": "status"})).await;
    assert_eq!(error_code(&raw.response(json!(2)).await), "BUSY");
    raw.cancel(json!(1)).await;
}

// ------------------------------------------------------------ progress

#[tokio::test]
async fn progress_while_the_server_indexes() {
    let Some(ws) = fake_workspace("progress", "indexing", &[("FAKE_LSP_INDEX_MS", "2500")]) else {
        return;
    };
    let s = ScryMcp::new(
        ws.engine.clone(),
        Options {
            progress_interval: std::time::Duration::from_millis(200),
            ..Options::default()
        },
    );
    let mut raw = Raw::start(s).await;
    raw.call_with_meta(
        json!(1),
        "lsp",
        def("alpha"),
        Some(json!({"progressToken": "tok-1"})),
    )
    .await;
    let r = raw.response(json!(1)).await;
    assert!(!is_error(&r), "{r}");
    let progress: Vec<Value> = raw
        .seen
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .cloned()
        .collect();
    assert!(!progress.is_empty(), "no progress: {:?}", raw.seen);
    assert!(
        progress
            .iter()
            .all(|p| p["params"]["progressToken"] == "tok-1")
    );
    let msgs: Vec<&str> = progress
        .iter()
        .filter_map(|p| p["params"]["message"].as_str())
        .collect();
    assert!(
        msgs.iter().any(|m| m.contains("fake is still indexing")),
        "{msgs:?}"
    );
    let nums: Vec<f64> = progress
        .iter()
        .filter_map(|p| p["params"]["progress"].as_f64())
        .collect();
    assert!(nums.windows(2).all(|w| w[0] < w[1]), "increasing: {nums:?}");

    // Without a token: no progress notifications.
    raw.call(json!(2), "lsp", def("gamma")).await;
    raw.response(json!(2)).await;
    assert!(!raw.seen.iter().any(
        |m| m["method"] == "notifications/progress" && m["params"]["progressToken"] != "tok-1"
    ));
}

// ------------------------------------------------------------ lifecycle

#[tokio::test]
async fn servers_stop_when_the_client_goes_away() {
    let Some(ws) = fake_workspace("lifecycle", "normal", &[]) else {
        return;
    };
    let s = server(&ws, false);
    let raw = Raw::start(s.clone()).await;
    let mut raw = raw;
    raw.call(json!(1), "lsp", def("alpha")).await;
    assert!(!is_error(&raw.response(json!(1)).await));
    let pid = ws.engine.workspace().running()[0].pid().expect("pid");
    let Raw {
        mut write, task, ..
    } = raw;
    tokio::io::AsyncWriteExt::shutdown(&mut write)
        .await
        .unwrap(); // the client closes its side
    tokio::time::timeout(Duration::from_secs(15), task)
        .await
        .expect("serve ends when the client goes away")
        .unwrap()
        .unwrap();
    assert!(ws.engine.workspace().running().is_empty());
    assert!(fake_count(&ws.root, "shutdown") >= 1 || fake_count(&ws.root, "exit") >= 1);
    let gone = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| s.split_whitespace().nth(2) == Some("Z"))
            .unwrap_or(true)
    };
    until("the fake server to exit", gone).await;
}
