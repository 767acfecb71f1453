//! rust-analyzer against `fixtures/rust` (one server for all checks). No
//! snapshots here: rust-analyzer's answers may vary with its index.

mod common;

use common::Fixture;
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
    fx.shutdown().await;
}
