//! The SCIP index source on `fixtures/rust` with the real `rust-analyzer
//! scip`: `scry index` builds it; a cold engine answers from it at once,
//! labelled; its answers equal the live server's at the same places once
//! the server is ready; a changed file is never answered from it, and
//! locations in changed files are left out with a count; a corrupt index is
//! a note and the other sources answer.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::process::scry_in;
use common::{Fixture, query};
use scry_ops::{Action, Answer, Engine, Precision, Query};
use scry_workspace::Workspace;

fn engine(root: &Path, cache: &Path) -> Engine {
    let ws = Workspace::open(root).expect("open workspace");
    Engine::with_syntax_cache(Arc::new(ws), Some(cache))
}

/// The answer's notes as the renderer words them, one a line.
fn notes_text(root: &Path, a: &Answer) -> String {
    a.notes
        .iter()
        .map(|n| scry_render::reason_text(n, root))
        .collect::<Vec<_>>()
        .join("\n")
}

fn locs(fx: &Fixture, a: &Answer) -> BTreeSet<(String, u32, u32)> {
    fx.locs(a)
        .into_iter()
        .map(|p| (p.path, p.line, p.col))
        .collect()
}

fn questions() -> Vec<Query> {
    vec![
        query(Action::References)
            .path("src/main.rs")
            .symbol("total_weight")
            .line(13)
            .build(),
        query(Action::Definition)
            .path("src/report.rs")
            .symbol("restock")
            .build(),
        query(Action::Definition)
            .path("src/main.rs")
            .symbol("total_weight")
            .line(13)
            .column(33)
            .build(),
        query(Action::References)
            .path("src/inventory.rs")
            .symbol("Inventory")
            .build(),
        query(Action::References)
            .path("src/report.rs")
            .symbol("report")
            .build(),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn index_answers_cold_equal_the_live_server_and_never_from_changed_files() {
    let Some(fx) = Fixture::open("rust", "scip_rust_analyzer") else {
        return;
    };
    let base = tempfile::tempdir().unwrap();
    let cache = base.path().join("cache");
    std::fs::write(base.path().join("config.json"), "{}").unwrap();
    let out = scry_in(base.path(), &fx.root, &["index"])
        .output()
        .expect("run scry index");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "scry index failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("SCIP index (rust-analyzer"), "{stdout}");

    // A cold engine: every question answered from the index, labelled.
    let cold = engine(&fx.root, &cache);
    let mut from_index = Vec::new();
    for q in questions() {
        let t = Instant::now();
        let a = cold.run_query(&q).await.expect("index answer");
        assert_eq!(a.precision, Some(Precision::Index), "{q:?}: {a:?}");
        let server = a.server.clone().unwrap_or_default();
        assert!(server.starts_with("SCIP index (rust-analyzer "), "{server}");
        assert!(server.contains(" ago at "), "{server}");
        assert!(!fx.locs(&a).is_empty(), "{q:?}: empty");
        // Generous: the index answers without the server.
        assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
        from_index.push(locs(&fx, &a));
    }
    let json = scry_render::render_json(
        &cold.run_query(&questions()[0]).await.unwrap(),
        &fx.root,
        &Default::default(),
    );
    assert_eq!(json["precision"], "index", "{json}");

    // The live server, once ready, gives the same places.
    for (q, want) in questions().iter().zip(&from_index) {
        let give_up = Instant::now() + Duration::from_secs(240);
        let live = loop {
            let a = fx.run(q).await;
            if a.precision.is_none() && !fx.locs(&a).is_empty() {
                break a;
            }
            assert!(Instant::now() < give_up, "no live answer for {q:?}: {a:?}");
            tokio::time::sleep(Duration::from_millis(500)).await;
        };
        assert_eq!(&locs(&fx, &live), want, "{q:?}");
    }

    // Edit report.rs: never answered from the index at its old positions.
    let report = fx.root.join("src/report.rs");
    let text = std::fs::read_to_string(&report).unwrap();
    std::fs::write(&report, format!("// moved down\n{text}")).unwrap();
    let cold = engine(&fx.root, &cache);
    // A question about an unchanged file: report.rs's locations left out,
    // counted, and the changed file said.
    let a = cold.run_query(&questions()[0]).await.expect("answer");
    assert_eq!(a.precision, Some(Precision::Index), "{a:?}");
    let got = locs(&fx, &a);
    assert!(got.iter().all(|l| l.0 != "src/report.rs"), "{got:?}");
    let notes = notes_text(&fx.root, &a);
    assert!(
        notes.contains("changed since the index were left out"),
        "{notes}"
    );
    assert!(notes.contains("1 of "), "{notes}");
    // Then the changed file itself: not from the index.
    let a = cold
        .run_query(
            &query(Action::Definition)
                .path("src/report.rs")
                .symbol("restock")
                .build(),
        )
        .await;
    if let Ok(a) = &a {
        assert_ne!(a.precision, Some(Precision::Index), "{a:?}");
    }
    cold.shutdown().await;

    // A corrupt index: a note once, the other sources answer.
    let dir = scry_index::cache::dir_for(&cache, &fx.root);
    std::fs::write(dir.join("index.scip"), b"\x0a\xff\xff\xff garbage").unwrap();
    let cold = engine(&fx.root, &cache);
    let a = cold.run_query(&questions()[0]).await.expect("answer");
    assert_ne!(a.precision, Some(Precision::Index));
    let notes = notes_text(&fx.root, &a);
    assert!(notes.contains("SCIP index is not usable"), "{notes}");
    cold.shutdown().await;
    fx.shutdown().await;
}
