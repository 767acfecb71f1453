//! Workspace folders on the fake server: one process serves every root of
//! a server that takes folders (a second root added with
//! `workspace/didChangeWorkspaceFolders`, every folder given back at once
//! when it is restarted), and a server that takes none runs once per root.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use scry_model::{Action, Query};
use scry_ops::Engine;
use scry_workspace::Workspace;
use scry_workspace::config::Config;
use serde_json::{Value, json};

const SOURCE: &str = "fn target() {}\nfn caller() { target(); }\n";

/// A workspace with two roots (`a/` and `b/`, each holding the fake
/// server's root marker) and the fake server, taking folders or not; the
/// log of what it received.
fn workspace(takes_folders: bool) -> (tempfile::TempDir, PathBuf, PathBuf, Engine) {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = scry_base::paths::canonical(dir.path()).expect("canonical tempdir");
    let root = base.join("ws");
    for sub in ["a", "b"] {
        std::fs::create_dir_all(root.join(sub)).expect("root dir");
        std::fs::write(root.join(sub).join("fake.root"), "").expect("marker");
        std::fs::write(root.join(sub).join("x.fake"), SOURCE).expect("source");
    }
    let log = base.join("fake.log");
    let layer = json!({
        "autoDetect": false,
        "servers": {
            "fakels": {
                "command": scry_testkit::built_binary(env!("CARGO_BIN_EXE_scry-fake-lsp")),
                "fileTypes": ["fake"],
                "rootMarkers": ["fake.root"],
                "env": {
                    "FAKE_LSP_MODE": "crash-on-request",
                    "FAKE_LSP_METHOD": "textDocument/hover",
                    "FAKE_LSP_LOG": log.to_string_lossy(),
                    "FAKE_LSP_FOLDERS": if takes_folders { "1" } else { "0" },
                },
            }
        }
    });
    let config = Config::from_layers(&[(PathBuf::from("test.json"), layer.to_string())])
        .expect("test configuration");
    let ws = Arc::new(Workspace::with_config(root.clone(), config));
    (dir, root, log, Engine::new(ws))
}

fn question(root: &Path, action: Action, sub: &str) -> Query {
    let mut q = Query::new(action);
    q.path = Some(root.join(sub).join("x.fake"));
    q.symbol = Some("target".into());
    q.timeout = Some(Duration::from_secs(20));
    q
}

fn log(path: &Path) -> Vec<Value> {
    scry_testkit::fake_log(path)
}

fn uri(p: &Path) -> String {
    scry_base::uri::path_to_uri(p)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_takes_folders_serves_every_root_and_keeps_them_on_restart() {
    let (_dir, root, log_file, engine) = workspace(true);
    for sub in ["a", "b"] {
        engine
            .run_query(&question(&root, Action::Definition, sub))
            .await
            .unwrap_or_else(|e| panic!("definition in {sub}: {e}"));
    }
    let running = engine.workspace().running();
    assert_eq!(running.len(), 1, "one process for both roots");
    assert_eq!(running[0].folders(), vec![root.join("a"), root.join("b")]);
    let sent = log(&log_file);
    let added: Vec<&Value> = sent
        .iter()
        .filter(|m| m["method"] == "workspace/didChangeWorkspaceFolders")
        .collect();
    assert_eq!(added.len(), 1, "{sent:?}");
    assert_eq!(
        added[0]["params"]["event"]["added"][0]["uri"],
        uri(&root.join("b"))
    );
    // It dies (a hover it cannot take); the next question restarts it with
    // both folders at once.
    let _ = engine.run_query(&question(&root, Action::Hover, "a")).await;
    engine
        .run_query(&question(&root, Action::Definition, "b"))
        .await
        .expect("definition after the restart");
    let inits: Vec<Value> = log(&log_file)
        .into_iter()
        .filter(|m| m["method"] == "initialize")
        .collect();
    assert_eq!(inits.len(), 2, "started twice");
    let folders: Vec<&str> = inits[1]["params"]["workspaceFolders"]
        .as_array()
        .expect("workspaceFolders")
        .iter()
        .filter_map(|f| f["uri"].as_str())
        .collect();
    assert_eq!(folders, [uri(&root.join("a")), uri(&root.join("b"))]);
    assert_eq!(engine.workspace().running().len(), 1);
    engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_takes_no_folders_runs_once_per_root() {
    let (_dir, root, log_file, engine) = workspace(false);
    for sub in ["a", "b", "a"] {
        engine
            .run_query(&question(&root, Action::Definition, sub))
            .await
            .unwrap_or_else(|e| panic!("definition in {sub}: {e}"));
    }
    let mut roots: Vec<PathBuf> = engine
        .workspace()
        .running()
        .iter()
        .map(|s| s.root().to_path_buf())
        .collect();
    roots.sort();
    assert_eq!(roots, vec![root.join("a"), root.join("b")]);
    let sent = log(&log_file);
    assert!(
        !sent
            .iter()
            .any(|m| m["method"] == "workspace/didChangeWorkspaceFolders"),
        "{sent:?}"
    );
    engine.shutdown().await;
}
