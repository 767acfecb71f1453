//! Edits through MCP on pyright (copies of fixtures/python; the journal in
//! the test's temp dir): `lsp` previews and never writes, `lsp_edit`
//! applies, a retried request id never applies twice, `undo` restores the
//! bytes, read-only refuses every apply. Diagnostics through `lsp` give the
//! CLI's text. A `new_name` that is no name of the file's language is
//! refused before any server starts.

mod common;

use std::path::Path;
use std::time::Duration;

use common::*;
use scry_model::{Action, Query, SeverityFilter};
use scry_render::{RenderOptions, render_json, render_text};
use serde_json::{Value, json};

/// pyright may start slowly on a loaded machine.
const SLOW: Duration = Duration::from_secs(120);

const FILES: [&str; 3] = ["inventory.py", "main.py", "report.py"];

fn bytes(root: &Path) -> Vec<Vec<u8>> {
    FILES
        .iter()
        .map(|f| std::fs::read(root.join(f)).unwrap())
        .collect()
}

fn read(root: &Path, f: &str) -> String {
    std::fs::read_to_string(root.join(f)).unwrap()
}

fn rename_args() -> Value {
    json!({
        "action": "rename", "path": "inventory.py", "symbol": "total_weight",
        "new_name": "weight_sum", "timeout_ms": 90000
    })
}

async fn answer(raw: &mut Raw, id: Value, tool: &str, args: Value) -> Value {
    raw.call(id.clone(), tool, args).await;
    raw.try_response(id.clone(), SLOW)
        .await
        .unwrap_or_else(|| panic!("no response for id {id}"))
}

fn structured(r: &Value) -> &Value {
    &result(r)["structuredContent"]
}

/// The rename as applied: every use renamed, nothing else.
fn assert_renamed(root: &Path) {
    assert!(read(root, "inventory.py").contains("def weight_sum(inv: Inventory) -> int:"));
    assert!(read(root, "main.py").contains("from inventory import Inventory, weight_sum"));
    assert!(read(root, "main.py").contains("\"📦 café\", weight_sum(inv)"));
    assert!(read(root, "report.py").contains("w = weight_sum(inv)"));
    for f in FILES {
        let text = read(root, f);
        // Only the comment in report.py and the f-string label keep the old
        // name (they are not references).
        let left = text.matches("total_weight").count();
        let allowed = match f {
            "report.py" => 1,
            "main.py" => 1,
            _ => 0,
        };
        assert_eq!(left, allowed, "{f}:\n{text}");
    }
}

#[tokio::test]
async fn preview_with_lsp_apply_with_lsp_edit_replay_and_undo() {
    if !have("pyright-langserver", "preview_apply_replay_undo") {
        return;
    }
    let ws = fixture("python");
    let s = server(&ws, false);
    let mut raw = Raw::start(s.clone()).await;
    let original = bytes(&ws.root);

    // 1. Preview through the read-only tool: a diff, nothing written.
    let p = answer(&mut raw, json!(1), "lsp", rename_args()).await;
    assert!(!is_error(&p), "{p}");
    let t = text(&p);
    assert!(
        t.starts_with("Preview of renaming `total_weight` → `weight_sum` (nothing written)"),
        "{t}"
    );
    assert!(
        t.contains("+from inventory import Inventory, weight_sum"),
        "{t}"
    );
    assert_eq!(structured(&p)["applied"], json!(false), "{p}");
    assert_eq!(bytes(&ws.root), original, "a preview wrote to disk");

    // lsp never applies, even when asked to.
    let mut args = rename_args();
    args["apply"] = json!(true);
    let r = answer(&mut raw, json!(2), "lsp", args).await;
    assert_eq!(error_code(&r), "INVALID_ARGUMENT", "{r}");
    assert!(text(&r).contains("lsp_edit"), "{}", text(&r));
    assert_eq!(bytes(&ws.root), original);

    // 2. Apply through lsp_edit.
    let a = answer(&mut raw, json!(3), "lsp_edit", rename_args()).await;
    assert!(!is_error(&a), "{a}");
    let t = text(&a);
    assert!(
        t.starts_with("Renamed `total_weight` → `weight_sum`: 5 edits in 3 files"),
        "{t}"
    );
    assert_eq!(structured(&a)["applied"], json!(true), "{a}");
    assert_eq!(structured(&a)["replayed"], json!(false), "{a}");
    assert_renamed(&ws.root);
    let after = bytes(&ws.root);
    let runs = s.executions();

    // 3. The same request id again: the first answer, not a second edit.
    let again = answer(&mut raw, json!(3), "lsp_edit", rename_args()).await;
    assert_eq!(again, a, "a retried id is answered with the first result");
    assert_eq!(s.executions(), runs, "replayed, not run again");
    assert_eq!(bytes(&ws.root), after, "the retry changed files");

    // 4. Undo through lsp_edit: byte for byte as before; a retried undo id
    // does not undo anything else.
    let u = answer(&mut raw, json!(4), "lsp_edit", json!({"action": "undo"})).await;
    assert!(!is_error(&u), "{u}");
    assert!(
        text(&u).starts_with("Undid rename `total_weight` → `weight_sum`"),
        "{}",
        text(&u)
    );
    assert_eq!(bytes(&ws.root), original, "undo did not restore the bytes");
    let u2 = answer(&mut raw, json!(4), "lsp_edit", json!({"action": "undo"})).await;
    assert_eq!(u2, u);
    assert_eq!(bytes(&ws.root), original);
    // A new undo has nothing left to revert.
    let u3 = answer(&mut raw, json!(5), "lsp_edit", json!({"action": "undo"})).await;
    assert_eq!(error_code(&u3), "EDIT_REJECTED", "{u3}");
    assert_eq!(bytes(&ws.root), original);

    // Every lsp_edit call is in the session's journal.
    let j = s.journal();
    let actions: Vec<&str> = j.iter().map(|e| e.action.as_str()).collect();
    assert_eq!(actions, ["rename", "undo", "undo"], "{j:?}");
    assert_eq!(j[2].outcome, "error EDIT_REJECTED");
    s.engine().shutdown().await;
}

/// With the session's replay map out of the way (capacity 0), a retried id
/// reaches the engine, whose edit journal answers it: replayed, nothing
/// applied twice. Another id, or another session reusing the id, is not a
/// retry.
#[tokio::test]
async fn retried_id_is_replayed_from_the_edit_journal() {
    if !have(
        "pyright-langserver",
        "retried_id_is_replayed_from_the_edit_journal",
    ) {
        return;
    }
    let ws = fixture("python");
    let opts = scry_mcp::Options {
        replay_capacity: 0,
        ..scry_mcp::Options::default()
    };
    let s = scry_mcp::ScryMcp::new(ws.engine.clone(), opts.clone());
    let mut raw = Raw::start(s.clone()).await;
    let a = answer(&mut raw, json!("r1"), "lsp_edit", rename_args()).await;
    assert!(!is_error(&a), "{a}");
    assert_renamed(&ws.root);
    let after = bytes(&ws.root);

    let again = answer(&mut raw, json!("r1"), "lsp_edit", rename_args()).await;
    assert!(!is_error(&again), "{again}");
    assert_eq!(s.executions(), 2, "the retry reached the engine");
    assert_eq!(structured(&again)["replayed"], json!(true), "{again}");
    assert!(text(&again).contains("(replayed"), "{}", text(&again));
    assert_eq!(
        structured(&again)["total_edits"],
        structured(&a)["total_edits"]
    );
    assert_eq!(bytes(&ws.root), after, "the retry applied the edit again");

    // Same id, other arguments: not a retry of that edit.
    let mut other = rename_args();
    other["new_name"] = json!("weight_total");
    let r = answer(&mut raw, json!("r1"), "lsp_edit", other).await;
    assert!(
        result(&r)["structuredContent"]["replayed"] != json!(true),
        "{r}"
    );
    assert_eq!(bytes(&ws.root), after);

    // Another session numbering its requests the same way is not a retry
    // either: the old name is gone, so the rename is refused.
    let s2 = scry_mcp::ScryMcp::new(ws.engine.clone(), opts);
    let mut raw2 = Raw::start(s2).await;
    let r = answer(&mut raw2, json!("r1"), "lsp_edit", rename_args()).await;
    assert!(is_error(&r), "another session's id was replayed: {r}");
    assert_eq!(bytes(&ws.root), after);
    s.engine().shutdown().await;
}

#[tokio::test]
async fn read_only_previews_but_refuses_every_apply() {
    if !have(
        "pyright-langserver",
        "read_only_previews_but_refuses_every_apply",
    ) {
        return;
    }
    let ws = fixture("python");
    let s = server(&ws, true);
    let mut raw = Raw::start(s.clone()).await;
    let original = bytes(&ws.root);

    let mut apply = rename_args();
    apply["apply"] = json!(true);
    let r = answer(&mut raw, json!(1), "lsp", apply).await;
    assert_eq!(error_code(&r), "READ_ONLY", "{r}");
    for (id, args) in [
        rename_args(),
        json!({"action": "undo"}),
        json!({"action": "code_actions", "path": "main.py", "action_index": 1}),
        json!({"action": "rename", "path": "inventory.py", "symbol": "total_weight",
               "new_name": "weight_sum", "apply": false}),
    ]
    .into_iter()
    .enumerate()
    {
        let r = answer(&mut raw, json!(10 + id), "lsp_edit", args.clone()).await;
        assert_eq!(error_code(&r), "READ_ONLY", "{args}: {r}");
    }
    assert_eq!(s.executions(), 0, "a refused call ran");
    assert_eq!(bytes(&ws.root), original);

    // The preview still works, and writes nothing.
    let p = answer(&mut raw, json!(3), "lsp", rename_args()).await;
    assert!(!is_error(&p), "{p}");
    assert!(text(&p).contains("(nothing written)"), "{}", text(&p));
    assert_eq!(bytes(&ws.root), original);
    s.engine().shutdown().await;
}

/// `lsp` diagnostics on fixtures/diagnostics/python give exactly the text
/// (and JSON) of the same question as the CLI builds it.
#[tokio::test]
async fn diagnostics_match_the_cli_text() {
    if !have("pyright-langserver", "diagnostics_match_the_cli_text") {
        return;
    }
    let ws = fixture("diagnostics/python");
    let s = server(&ws, false);
    let mut raw = Raw::start(s.clone()).await;
    let opts = RenderOptions::default();
    // (MCP arguments, the CLI's targets and --severity)
    let cases: Vec<(Value, Vec<String>, Option<SeverityFilter>)> = vec![
        (json!({"path": "app.py"}), vec!["app.py".into()], None),
        (json!({"path": "*"}), vec!["*".into()], None),
        (
            json!({"path": "*.py", "severity": "error"}),
            vec!["*.py".into()],
            Some(SeverityFilter::Error),
        ),
        (
            json!({"severity": "all"}),
            vec![],
            Some(SeverityFilter::All),
        ),
        (json!({"path": "."}), vec!["*".into()], None),
    ];
    for (i, (args, targets, severity)) in cases.into_iter().enumerate() {
        let mut call = args.clone();
        call["action"] = json!("diagnostics");
        call["timeout_ms"] = json!(90000);
        let r = answer(&mut raw, json!(i), "lsp", call).await;
        assert!(!is_error(&r), "{args}: {r}");
        let got = text(&r);
        // What `scry diag TARGET... [--severity S]` asks, run in the root.
        let mut q = Query::new(Action::Diagnostics);
        q.targets = targets
            .iter()
            .map(|t| if t == "*" { t.into() } else { ws.root.join(t) })
            .collect();
        q.severity = severity;
        q.timeout = Some(Duration::from_secs(90));
        let a = s.engine().run_query(&q).await.expect("diagnostics");
        assert_eq!(got, render_text(&a, &ws.root, &opts), "{args}");
        let mut got_json = structured(&r).clone();
        let mut want_json = render_json(&a, &ws.root, &opts);
        untimed(&mut got_json);
        untimed(&mut want_json);
        assert_eq!(got_json, want_json, "{args}");
        eprintln!("--- {args}\n{got}");
    }
    // The known problems are there: the type error and the import.
    let r = answer(
        &mut raw,
        json!("e"),
        "lsp",
        json!({"action": "diagnostics", "path": "app.py", "severity": "error"}),
    )
    .await;
    let t = text(&r);
    assert!(t.starts_with("2 errors in 1 file"), "{t}");
    assert!(t.contains("reportMissingImports"), "{t}");
    assert!(t.contains("app.py:12:20  error[reportArgumentType]"), "{t}");
    // Bad targets are refused before anything runs.
    for (args, code) in [
        (json!({"path": "../outside"}), "OUTSIDE_WORKSPACE"),
        (json!({"path": "/etc/*.conf"}), "OUTSIDE_WORKSPACE"),
        (json!({"path": "nope.py"}), "FILE_NOT_FOUND"),
        (
            json!({"path": "app.py", "severity": "fatal"}),
            "INVALID_ARGUMENT",
        ),
    ] {
        let mut call = args.clone();
        call["action"] = json!("diagnostics");
        let r = answer(&mut raw, json!(format!("bad{args}")), "lsp", call).await;
        assert_eq!(error_code(&r), code, "{args}: {r}");
    }
    s.engine().shutdown().await;
}

/// Issue 11: a `new_name` with a line break (or any control character, or
/// too long) is refused before a server is asked; nothing changes.
#[tokio::test]
async fn bad_new_names_are_refused_before_the_server_is_asked() {
    let ws = fixture("python");
    let s = server(&ws, false);
    let mut raw = Raw::start(s.clone()).await;
    let original = bytes(&ws.root);
    let long = "w".repeat(257);
    for (i, bad) in [
        "weight\nsum",
        "weight_sum\r\n",
        "\u{1b}[2Jx",
        "",
        long.as_str(),
    ]
    .into_iter()
    .enumerate()
    {
        for tool in ["lsp_edit", "lsp"] {
            let mut args = rename_args();
            args["new_name"] = json!(bad);
            let r = answer(&mut raw, json!(format!("{tool}-{i}")), tool, args).await;
            assert_eq!(error_code(&r), "INVALID_ARGUMENT", "{bad:?}: {r}");
            assert!(text(&r).contains("new_name"), "{}", text(&r));
            assert_eq!(bytes(&ws.root), original, "{bad:?} changed a file");
        }
    }
}

/// Issue 20: a `new_name` that is no Python name — the injection of the
/// issue, a keyword, a leading digit, the bidi override, the zero-width
/// space — is refused saying which rule it breaks, before any server is
/// started or asked; nothing changes.
#[tokio::test]
async fn new_names_that_are_no_names_of_the_language_are_refused_before_any_server() {
    let ws = fixture("python");
    let s = server(&ws, false);
    let mut raw = Raw::start(s.clone()).await;
    let original = bytes(&ws.root);
    for (i, (bad, rule)) in [
        (
            r#"x = __import__("os").system("echo INJECTED")"#,
            "cannot be a Python name: it contains a space",
        ),
        ("class", "`class` is a Python keyword"),
        (
            "1abc",
            "`1abc` cannot be a Python name: it starts with a digit",
        ),
        ("a.b", "it contains `.`"),
        (
            "weight\u{202e}sum",
            "U+202E RIGHT-TO-LEFT OVERRIDE, a Unicode format character",
        ),
        ("weight\u{200b}sum", "U+200B ZERO WIDTH SPACE"),
        ("\u{feff}weight", "U+FEFF ZERO WIDTH NO-BREAK SPACE"),
    ]
    .into_iter()
    .enumerate()
    {
        for tool in ["lsp_edit", "lsp"] {
            let mut args = rename_args();
            args["new_name"] = json!(bad);
            let r = answer(&mut raw, json!(format!("{tool}-{i}")), tool, args).await;
            assert_eq!(error_code(&r), "INVALID_ARGUMENT", "{bad:?}: {r}");
            let t = text(&r);
            assert!(
                t.contains(rule) && t.contains("nothing was changed"),
                "{bad:?}: {t}"
            );
            assert!(!t.contains('\u{202e}') && !t.contains('\u{200b}'), "{t:?}");
            assert_eq!(bytes(&ws.root), original, "{bad:?} changed a file");
        }
    }
    assert!(
        ws.engine.workspace().running().is_empty(),
        "a server was started for a refused name"
    );
}
