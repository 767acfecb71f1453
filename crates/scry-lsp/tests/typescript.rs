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
    let checked = suite::every_check(&fx, &LANG).await;
    let outline_text = fx.text(&checked.outline);
    fx.shutdown().await;
    insta::assert_snapshot!("symbols_inventory", outline_text);
}
