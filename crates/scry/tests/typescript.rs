//! typescript-language-server against `fixtures/typescript` (one server for
//! all checks).

mod common;

use common::Fixture;
use common::suite::{self, Lang};

const LANG: Lang = Lang {
    qualified_restock: "Inventory.restock",
    restock_query: "restock",
    inventory_decl: ("src/inventory.ts", "class Inventory"),
    restock_nested: true,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_tsserver() {
    let Some(fx) = Fixture::open("typescript", "typescript_tsserver") else {
        return;
    };
    suite::references_by_name(&fx).await;
    suite::definition_from_main(&fx).await;
    suite::qualified_definition(&fx, &LANG).await;
    suite::definition_without_path(&fx, &LANG).await;
    suite::hover(&fx).await;
    let outline = suite::document_symbols(&fx, &LANG).await;
    suite::workspace_symbols(&fx, &LANG).await;
    suite::implementation(&fx).await;
    suite::call_hierarchy(&fx).await;
    let outline_text = fx.text(&outline);
    fx.shutdown().await;
    insta::assert_snapshot!("symbols_inventory", outline_text);
}
