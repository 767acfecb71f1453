//! clangd against `fixtures/c` (one server for all checks). The copy gets a
//! `compile_commands.json` with its absolute directory so clangd's
//! background index runs and cross-file answers land in `inventory.c`.

mod common;

use common::Fixture;
use common::suite::{self, Lang};

const LANG: Lang = Lang {
    qualified_restock: "inventory_restock",
    restock_query: "inventory_restock",
    inventory_decl: ("inventory.h", "struct Inventory"),
    restock_nested: false,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c_clangd() {
    let Some(fx) = Fixture::open("c", "c_clangd") else {
        return;
    };
    assert_eq!(fx.exp["implementation"], "not applicable");
    let refs = suite::references_by_name(&fx).await;
    suite::definition_from_main(&fx).await;
    suite::qualified_definition(&fx, &LANG).await;
    suite::definition_without_path(&fx, &LANG).await;
    suite::hover(&fx).await;
    suite::document_symbols(&fx, &LANG).await;
    suite::workspace_symbols(&fx, &LANG).await;
    suite::call_hierarchy(&fx).await;
    let refs_text = fx.text(&refs);
    fx.shutdown().await;
    insta::assert_snapshot!("references_total_weight", refs_text);
}
