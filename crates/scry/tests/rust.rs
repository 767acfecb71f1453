//! rust-analyzer against `fixtures/rust` (one server for all checks). No
//! snapshots here: rust-analyzer's answers may vary with its index.

mod common;

use std::time::{Duration, Instant};

use common::Fixture;
use common::process::scry_in;
use common::suite::{self, Lang};

const LANG: Lang = Lang {
    qualified_restock: "Inventory::restock",
    restock_query: "restock",
    inventory_decl: ("src/inventory.rs", "struct Inventory"),
    // rust-analyzer nests methods under `impl Inventory`.
    restock_nested: true,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rust_rust_analyzer() {
    let Some(fx) = Fixture::open("rust", "rust_rust_analyzer") else {
        return;
    };
    suite::every_check(&fx, &LANG).await;
    a_rename_to_the_raw_spelling_changes_nothing_and_says_so(&fx).await;
    fx.shutdown().await;
}

/// Renaming `total_weight` to `r#total_weight`: rust-analyzer answers
/// text edits that write the same name (`r#` dropped where it is not
/// needed); the answer says nothing changes, never "N edits in M files",
/// and no file is written.
async fn a_rename_to_the_raw_spelling_changes_nothing_and_says_so(fx: &Fixture) {
    let before = std::fs::read_to_string(fx.root.join("src/main.rs")).unwrap();
    let mut q = common::query(scry_model::Action::Rename)
        .path(fx.root.join("src/inventory.rs"))
        .symbol("total_weight")
        .build();
    q.new_name = Some("r#total_weight".into());
    q.apply = true;
    let a = fx.run(&q).await;
    let t = fx.text(&a);
    assert!(
        t.starts_with("Renaming `total_weight` → `r#total_weight` changes nothing: the server's"),
        "{t}"
    );
    assert_eq!(
        std::fs::read_to_string(fx.root.join("src/main.rs")).unwrap(),
        before
    );
}

/// The first call on a cold daemon (a fresh copy, no `target/`, a new
/// rust-analyzer) with a short budget is answered, never `TIMEOUT`: by
/// rust-analyzer (precise) when it is ready in time, else by the syntactic
/// index, labelled, within the budget (the syntactic answer is prepared
/// alongside the server's start).
#[test]
fn a_cold_first_call_with_a_short_budget_is_answered_never_timeout() {
    let Some(fx) = Fixture::open("rust", "rust_cold_first_call") else {
        return;
    };
    let base = tempfile::tempdir().unwrap();
    std::fs::write(base.path().join("config.json"), "{}").unwrap();
    let t0 = Instant::now();
    let out = scry_in(
        base.path(),
        &fx.root,
        &[
            "references",
            "src/inventory.rs",
            "Inventory",
            "--timeout-ms",
            "6000",
        ],
    )
    .output()
    .expect("run scry");
    let took = t0.elapsed();
    let _ = scry_in(base.path(), &fx.root, &["daemon", "stop"]).output();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(!stderr.contains("TIMEOUT"), "{stderr}");
    let header = stdout.lines().next().unwrap_or_default();
    assert!(
        header.ends_with("— rust-analyzer") || header.contains("syntactic"),
        "{stdout}"
    );
    assert!(stdout.contains("src/main.rs"), "{stdout}");
    // Generous: the daemon's start (20 s at most) and the 6 s budget.
    assert!(took < Duration::from_secs(30), "took {took:?}");
}
