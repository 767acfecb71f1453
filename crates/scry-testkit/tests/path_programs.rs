//! Servers keyed by what decides their answers (issue 38): two clients
//! whose `PATH`s find a program the server runs (pyright's `python`) at
//! other places get a server each, and clients alike in it share one;
//! `daemon status`'s data says where each finds it.
#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use scry_model::{Action, Query};
use scry_ops::Engine;
use scry_workspace::Workspace;
use scry_workspace::config::Config;
use scry_workspace::env::{CallContext, CallEnv};
use serde_json::json;

/// A directory `bin` holding an executable `fakepy`.
fn bin_with_fakepy(dir: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let p = bin.join("fakepy");
    std::fs::write(&p, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

/// The definition of `target`, asked by a client whose `PATH` starts
/// with `first`.
async fn ask(engine: &Engine, root: &Path, first: &Path) {
    let path = format!(
        "{}:{}",
        first.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let ctx = CallContext {
        env: Arc::new(CallEnv::from_vars([("PATH".to_string(), path)])),
        client: first.display().to_string(),
    };
    let mut q = Query::new(Action::Definition);
    q.path = Some(root.join("x.fake"));
    q.symbol = Some("target".into());
    q.timeout = Some(Duration::from_secs(20));
    scry_workspace::env::scope(ctx, engine.run_query(&q))
        .await
        .expect("definition");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_whose_path_finds_the_servers_program_elsewhere_get_a_server_each() {
    let dir = tempfile::tempdir().unwrap();
    let base = scry_base::paths::canonical(dir.path()).unwrap();
    let root = base.join("ws");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(
        root.join("x.fake"),
        "fn target() {}\nfn caller() { target(); }\n",
    )
    .unwrap();
    let (a, b) = (
        bin_with_fakepy(&base.join("venvA")),
        bin_with_fakepy(&base.join("venvB")),
    );
    let layer = json!({
        "autoDetect": false,
        "servers": {
            "fakels": {
                "command": scry_testkit::built_binary(env!("CARGO_BIN_EXE_scry-fake-lsp")),
                "fileTypes": ["fake"],
                "readsEnv": [],
                "pathPrograms": ["fakepy"],
            }
        }
    });
    let config = Config::from_layers(&[(PathBuf::from("test.json"), layer.to_string())])
        .expect("test configuration");
    let engine = Engine::new(Arc::new(Workspace::with_config(root.clone(), config)));
    ask(&engine, &root, &a).await;
    ask(&engine, &root, &a).await;
    assert_eq!(engine.workspace().running().len(), 1, "alike: one server");
    ask(&engine, &root, &b).await;
    assert_eq!(
        engine.workspace().running().len(),
        2,
        "another python: its own server"
    );
    ask(&engine, &root, &a).await;
    assert_eq!(engine.workspace().running().len(), 2);
    let mut found: Vec<PathBuf> = engine
        .workspace()
        .usage()
        .into_iter()
        .flat_map(|u| u.programs.into_iter().map(|p| p.path))
        .collect();
    found.sort();
    assert_eq!(found, vec![a.join("fakepy"), b.join("fakepy")]);
    engine.shutdown().await;
}
