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
    let checked = suite::every_check(&fx, &LANG).await;
    let refs_text = fx.text(&checked.refs);
    fx.shutdown().await;
    insta::assert_snapshot!("references_total_weight", refs_text);
}
