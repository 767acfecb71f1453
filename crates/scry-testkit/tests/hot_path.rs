//! The per-request shortcuts of the hot path never answer from stale
//! content (issue 9, item 6), against the fake server:
//! - the `documentSymbol` reply used to resolve a name is asked once per
//!   document version: asked again after the file changed on disk, never
//!   while it did not;
//! - a file written just before a request reaches a server that registered
//!   file watchers before that request (the drain waits for the watcher);
//!   a server that registered none is told nothing (and the drain does not
//!   wait).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use scry_model::{Action, Query};
use scry_ops::Engine;
use scry_workspace::Workspace;
use scry_workspace::config::Config;
use serde_json::{Value, json};
use tempfile::TempDir;

struct Fx {
    _dir: TempDir,
    root: PathBuf,
    log: PathBuf,
    engine: Engine,
}

fn fixture(watch: bool) -> Fx {
    let (dir, base) = scry_testkit::canonical_tempdir();
    let root = base.join("ws");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("a.fake"), "alpha beta\nlet gamma = alpha\n").unwrap();
    let log = base.join("fake.log");
    let mut env = json!({ "FAKE_LSP_LOG": log.to_string_lossy() });
    if watch {
        env["FAKE_LSP_WATCH"] = json!("1");
    }
    let layer = json!({
        "autoDetect": false,
        "servers": { "fakels": {
            "command": scry_testkit::built_binary(env!("CARGO_BIN_EXE_scry-fake-lsp")),
            "fileTypes": ["fake"],
            "env": env,
        }}
    });
    let config = Config::from_layers(&[(PathBuf::from("t.json"), layer.to_string())]).unwrap();
    let engine = Engine::new(Arc::new(Workspace::with_config(root.clone(), config)));
    Fx {
        _dir: dir,
        root,
        log,
        engine,
    }
}

fn by_name() -> Query {
    let mut q = Query::new(Action::References);
    q.path = Some("a.fake".into());
    q.symbol = Some("alpha".into());
    q.timeout = Some(Duration::from_secs(20));
    q
}

fn log(path: &Path) -> Vec<Value> {
    scry_testkit::fake_log(path)
}

fn count(path: &Path, method: &str) -> usize {
    log(path).iter().filter(|m| m["method"] == method).count()
}

async fn until(what: &str, cond: impl Fn() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn document_symbols_are_asked_once_per_version() {
    let fx = fixture(false);
    let sym = "textDocument/documentSymbol";
    fx.engine.run_query(&by_name()).await.unwrap();
    assert_eq!(count(&fx.log, sym), 1);
    // Unchanged: the reply kept for this version is used.
    fx.engine.run_query(&by_name()).await.unwrap();
    fx.engine.run_query(&by_name()).await.unwrap();
    assert_eq!(count(&fx.log, sym), 1);
    // Changed on disk: synced (a new version), asked again.
    std::fs::write(fx.root.join("a.fake"), "beta alpha\nalpha\n").unwrap();
    fx.engine.run_query(&by_name()).await.unwrap();
    assert_eq!(count(&fx.log, sym), 2);
    assert_eq!(count(&fx.log, "textDocument/didChange"), 1);
    fx.engine.run_query(&by_name()).await.unwrap();
    assert_eq!(count(&fx.log, sym), 2);
    fx.engine.shutdown().await;
}

/// Index in the log of the first message matching `f`.
fn first(log: &[Value], f: impl Fn(&Value) -> bool) -> Option<usize> {
    log.iter().position(f)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_written_just_before_reaches_a_watching_server_first() {
    let fx = fixture(true);
    fx.engine.run_query(&by_name()).await.unwrap();
    let session = fx.engine.workspace().running().pop().expect("running");
    until("the watcher registration", || {
        session
            .state()
            .has_registration("workspace/didChangeWatchedFiles")
    })
    .await;
    for round in 0..5 {
        let name = format!("new{round}.fake");
        let uri = scry_base::uri::path_to_uri(&fx.root.join(&name));
        let before = log(&fx.log).len();
        std::fs::write(fx.root.join(&name), "alpha\n").unwrap();
        fx.engine.run_query(&by_name()).await.unwrap();
        let after = log(&fx.log)[before..].to_vec();
        let told = first(&after, |m| {
            m["method"] == "workspace/didChangeWatchedFiles"
                && m["params"]["changes"]
                    .as_array()
                    .is_some_and(|c| c.iter().any(|c| c["uri"] == uri.as_str()))
        });
        let asked = first(&after, |m| m["method"] == "textDocument/references");
        let (Some(told), Some(asked)) = (told, asked) else {
            panic!("round {round}: told {told:?}, asked {asked:?}: {after:#?}");
        };
        assert!(told < asked, "round {round}: {after:#?}");
    }
    fx.engine.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_file_watchers_is_told_nothing() {
    let fx = fixture(false);
    fx.engine.run_query(&by_name()).await.unwrap();
    std::fs::write(fx.root.join("new.fake"), "alpha\n").unwrap();
    fx.engine.run_query(&by_name()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    fx.engine.run_query(&by_name()).await.unwrap();
    assert_eq!(count(&fx.log, "workspace/didChangeWatchedFiles"), 0);
    assert_eq!(count(&fx.log, "textDocument/references"), 3);
    fx.engine.shutdown().await;
}
