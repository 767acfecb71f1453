//! gopls against `fixtures/go` (one server for all checks).

mod common;

use common::Fixture;
use common::suite::{self, Lang};

const LANG: Lang = Lang {
    qualified_restock: "Inventory.restock",
    restock_query: "restock",
    inventory_decl: ("inventory.go", "type Inventory"),
    // gopls lists methods at the top level as `(*Inventory).restock`.
    restock_nested: false,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn go_gopls() {
    let Some(fx) = Fixture::open("go", "go_gopls") else {
        return;
    };
    let checked = suite::every_check(&fx, &LANG).await;
    let def_text = fx.text(&checked.def);
    fx.shutdown().await;
    insta::assert_snapshot!("definition_total_weight_at_column", def_text);
}
