//! Files changed on disk outside scry (never opened by it) reach a running
//! server through the workspace's file watcher: one engine, pyright on a
//! copy of `fixtures/python`.

mod common;

use std::time::{Duration, Instant};

use common::{Fixture, Pos, query};
use scry_model::Action;

async fn references(fx: &Fixture) -> Vec<Pos> {
    let a = fx
        .run(
            &query(Action::References)
                .path("inventory.py")
                .symbol("total_weight")
                .build(),
        )
        .await;
    fx.locs(&a)
}

/// Ask until `done` holds (pyright re-reads its file list a moment after a
/// watched-file event; scry has delivered the event before the first ask).
async fn references_until(fx: &Fixture, done: impl Fn(&[Pos]) -> bool) -> Vec<Pos> {
    let until = Instant::now() + Duration::from_secs(15);
    loop {
        let got = references(fx).await;
        if done(&got) || Instant::now() > until {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_file_written_outside_scry_is_seen() {
    let Some(fx) = Fixture::open("python", "new_file_written_outside_scry_is_seen") else {
        return;
    };
    let before = references(&fx).await;
    assert_eq!(before.len(), 5, "{before:?}");
    let in_extra = |locs: &[Pos]| locs.iter().any(|p| p.path.starts_with("pkg/extra.py"));

    // A new file in a new directory, written behind scry's back.
    std::fs::create_dir_all(fx.root.join("pkg")).unwrap();
    std::fs::write(
        fx.root.join("pkg/extra.py"),
        "from inventory import Inventory, total_weight\n\n\ndef extra(inv: Inventory) -> int:\n    return total_weight(inv)\n",
    )
    .unwrap();
    let after = references_until(&fx, |l| in_extra(l)).await;
    assert!(
        in_extra(&after),
        "the call in pkg/extra.py is missing: {after:?}"
    );
    assert_eq!(after.len(), 7, "{after:?}");

    std::fs::remove_file(fx.root.join("pkg/extra.py")).unwrap();
    let gone = references_until(&fx, |l| !in_extra(l)).await;
    assert!(!in_extra(&gone), "pkg/extra.py is deleted: {gone:?}");
    assert_eq!(gone.len(), 5, "{gone:?}");
    fx.shutdown().await;
}

/// Past the bound on watched directories (`limits.maxWatchedDirs`, here
/// 1: only the root is watched), a directory is polled before each
/// request, and what changes in it reaches the server as a watched
/// change does (issue 38: such changes were never seen, the answers stale
/// without a word); `status` says what is polled and why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_written_in_a_directory_past_the_watch_bound_is_seen() {
    let dir = common::copy_fixture("python");
    std::fs::create_dir_all(dir.path().join("pkg")).unwrap();
    std::fs::write(
        dir.path().join(".scry.json"),
        r#"{"limits": {"maxWatchedDirs": 1}}"#,
    )
    .unwrap();
    let ws = scry_workspace::Workspace::open(dir.path()).expect("open workspace");
    if !common::server_available(&ws, "pyright-langserver", "watch_bound") {
        return;
    }
    let root = ws.root().to_path_buf();
    let fx = Fixture {
        lang: "python",
        dir,
        root: root.clone(),
        engine: scry_ops::Engine::new(std::sync::Arc::new(ws)),
        exp: common::expected()["python"].clone(),
    };
    let before = references(&fx).await;
    assert_eq!(before.len(), 5, "{before:?}");
    let status = fx.run(&query(Action::Status).build()).await;
    let scry_model::Body::Status(report) = &status.body else {
        panic!("status: {status:?}");
    };
    let watcher = report.watcher.as_ref().expect("the watcher polls");
    assert_eq!((watcher.watched, watcher.polled), (1, 1), "{watcher:?}");
    let in_extra = |locs: &[Pos]| locs.iter().any(|p| p.path.starts_with("pkg/extra.py"));
    std::fs::write(
        root.join("pkg/extra.py"),
        "from inventory import Inventory, total_weight\n\n\ndef extra(inv: Inventory) -> int:\n    return total_weight(inv)\n",
    )
    .unwrap();
    let after = references_until(&fx, |l| in_extra(l)).await;
    assert!(
        in_extra(&after),
        "the call in the polled pkg/extra.py is missing: {after:?}"
    );
    std::fs::remove_file(root.join("pkg/extra.py")).unwrap();
    let gone = references_until(&fx, |l| !in_extra(l)).await;
    assert!(!in_extra(&gone), "pkg/extra.py is deleted: {gone:?}");
    fx.shutdown().await;
}
