//! The daemon's background index refresh runs a workspace's own indexer
//! only while the workspace is trusted as its files say when the refresh
//! starts — not as its last call found them (issue 38: a revoke with no
//! call after it still ran the project's `scip-python`).
#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use prost::Message;
use scry_index::proto::{Document, Metadata, ScipIndex, ToolInfo};
use scry_ops::Engine;
use scry_workspace::Workspace;
use scry_workspace::env::{CallContext, CallEnv};
use scry_workspace::indexing::{self, BuildOptions};

/// A workspace with one Python file and its own `scip-python` (in
/// `node_modules/.bin`, found only while trusted), which notes each run in
/// `ran` and writes a one-document index.
fn workspace(base: &Path, delay_secs: u32) -> (PathBuf, PathBuf) {
    let root = base.join("ws");
    let bin = root.join("node_modules/.bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(root.join("a.py"), "x = 1\n").unwrap();
    std::fs::write(root.join("pyproject.toml"), "[project]\nname = \"ws\"\n").unwrap();
    let prebuilt = base.join("prebuilt.scip");
    let ix = ScipIndex {
        metadata: Some(Metadata {
            tool_info: Some(ToolInfo {
                name: "scip-python".into(),
                version: "0".into(),
                ..Default::default()
            }),
            project_root: scry_base::uri::path_to_uri(&root),
            ..Default::default()
        }),
        documents: vec![Document {
            relative_path: "a.py".into(),
            ..Default::default()
        }],
        external_symbols: Vec::new(),
    };
    std::fs::write(&prebuilt, ix.encode_to_vec()).unwrap();
    let ran = base.join("ran");
    let script = bin.join("scip-python");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho ran >> '{}'\n[ -f '{}' ] && sleep {delay_secs}\nout=\nwhile [ $# -gt 0 ]; do [ \"$1\" = --output ] && out=\"$2\"; shift; done\ncp '{}' \"$out\"\n",
            ran.display(),
            base.join("slow").display(),
            prebuilt.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (root, ran)
}

fn runs(ran: &Path) -> usize {
    std::fs::read_to_string(ran)
        .unwrap_or_default()
        .lines()
        .count()
}

/// The call environment of a test under `base`: its own state (the trust
/// store), user configuration (a refresh due after 100 ms idle) and cache.
fn call_context(base: &Path) -> CallContext {
    std::fs::write(
        base.join("config.json"),
        r#"{"limits": {"indexRefreshIdleMs": 100}}"#,
    )
    .unwrap();
    let vars = [
        ("SCRY_STATE_DIR", base.join("state")),
        ("SCRY_CONFIG", base.join("config.json")),
        ("SCRY_CACHE_DIR", base.join("cache")),
    ]
    .map(|(k, v)| (k.to_string(), v.display().to_string()))
    .into_iter()
    .chain(std::env::var("PATH").map(|p| ("PATH".to_string(), p)));
    CallContext {
        env: Arc::new(CallEnv::from_vars(vars)),
        client: "t".into(),
    }
}

/// Trust `root`, build its index with the project's indexer, and open an
/// engine on it (in the call's scope); the trust store.
fn trusted_and_indexed(root: &Path, ran: &Path) -> (Engine, PathBuf) {
    let store = scry_workspace::trust::store_path().unwrap();
    let layers = scry_workspace::config::project_layers(root).unwrap();
    scry_workspace::trust::record(&store, root, &layers).unwrap();
    let ws = Workspace::open(root).unwrap();
    assert!(ws.config().trust.trust.is_trusted());
    let cache = scry_base::dirs::cache().unwrap();
    indexing::build(
        &cache,
        &ws,
        root,
        BuildOptions {
            timeout: Duration::from_secs(60),
            background: false,
            cancel: None,
            progress: &mut |_| {},
        },
    )
    .expect("the trusted build");
    assert_eq!(runs(ran), 1, "the project's indexer built the index");
    (Engine::new(Arc::new(ws)), store)
}

/// Whether the workspace's own indexer ran for a refresh after the file
/// changed, the workspace trusted (`trusted`) or revoked since the index
/// was built — with no call between.
async fn project_indexer_ran_on_refresh(trusted: bool) -> bool {
    let tmp = tempfile::tempdir().unwrap();
    let base = scry_base::paths::canonical(tmp.path()).unwrap();
    let (root, ran) = workspace(&base, 0);
    scry_workspace::env::scope(call_context(&base), async move {
        let (engine, store) = trusted_and_indexed(&root, &ran);
        if !trusted {
            scry_workspace::trust::revoke(&store, &root).unwrap();
        }
        // The file changes after the index: a refresh is due.
        tokio::time::sleep(Duration::from_millis(50)).await;
        std::fs::write(root.join("a.py"), "x = 2\n").unwrap();
        engine.refresh_index_if_due(Duration::from_secs(60)).await;
        let ran_again = runs(&ran) > 1;
        engine.shutdown().await;
        ran_again
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoke_with_no_call_after_it_keeps_the_projects_indexer_from_running() {
    assert!(
        project_indexer_ran_on_refresh(true).await,
        "trusted: the refresh runs the project's indexer"
    );
    assert!(
        !project_indexer_ran_on_refresh(false).await,
        "revoked: the project's indexer must not run"
    );
}

/// A revoke while the project's indexer runs in the background stops it
/// (its whole tree) at once, with no call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoke_stops_the_projects_indexer_running_in_the_background() {
    let tmp = tempfile::tempdir().unwrap();
    let base = scry_base::paths::canonical(tmp.path()).unwrap();
    let (root, ran) = workspace(&base, 30);
    let ctx = call_context(&base);
    scry_workspace::env::scope(ctx.clone(), async move {
        let (engine, store) = trusted_and_indexed(&root, &ran);
        // From now on the project's indexer takes 30 s.
        std::fs::write(base.join("slow"), "").unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        std::fs::write(root.join("a.py"), "x = 2\n").unwrap();
        let e = engine.clone();
        let refresh = tokio::spawn(scry_workspace::env::scope(ctx, async move {
            e.refresh_index_if_due(Duration::from_secs(60)).await
        }));
        let until = std::time::Instant::now() + Duration::from_secs(20);
        while runs(&ran) < 2 {
            assert!(
                std::time::Instant::now() < until,
                "the refresh never started"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        scry_workspace::trust::revoke(&store, &root).unwrap();
        let stopped = tokio::time::timeout(Duration::from_secs(5), refresh).await;
        assert!(
            stopped.is_ok(),
            "the project's indexer still runs after the revoke"
        );
        engine.shutdown().await;
    })
    .await;
}
