//! pyright-langserver against `fixtures/python` (one server for all checks).

mod common;

use common::suite::{self, Lang};
use common::{Fixture, query};
use scry_model::Action;

const LANG: Lang = Lang {
    qualified_restock: "Inventory.restock",
    restock_query: "restock",
    inventory_decl: ("inventory.py", "class Inventory"),
    restock_nested: true,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_pyright() {
    let Some(fx) = Fixture::open("python", "python_pyright") else {
        return;
    };
    let checked = suite::every_check(&fx, &LANG).await;
    errors_and_fallbacks(&fx).await;
    let refs_text = fx.text(&checked.refs);
    fx.shutdown().await;
    insta::assert_snapshot!("references_total_weight", refs_text);
}

/// Engine errors carry stable codes; a qualified name that does not occur in
/// the file is looked up in the workspace symbols.
async fn errors_and_fallbacks(fx: &Fixture) {
    let q = query(Action::Definition)
        .path("main.py")
        .symbol("no_such_name")
        .build();
    let e = fx.try_run(&q).await.expect_err("unknown name");
    assert_eq!(e.code(), "SYMBOL_NOT_FOUND", "{e}");

    let q = query(Action::Definition)
        .path("main.py")
        .symbol("total_weight")
        .line(999)
        .build();
    let e = fx.try_run(&q).await.expect_err("line past the end");
    assert_eq!(e.code(), "INVALID_ARGUMENT", "{e}");

    let q = query(Action::Definition).path("main.py").column(3).build();
    let e = fx.try_run(&q).await.expect_err("column without line");
    assert_eq!(e.code(), "INVALID_ARGUMENT", "{e}");

    // `restock` does not occur in main.py: found as a workspace symbol.
    let a = fx
        .run(
            &query(Action::Definition)
                .path("main.py")
                .symbol("Inventory.restock")
                .build(),
        )
        .await;
    let def = fx.exp_pos("/restock/definition");
    assert_eq!(fx.locs(&a), vec![def.clone()], "{}", fx.text(&a));
    let at = a.asked_at.as_ref().expect("asked_at");
    assert_eq!(fx.rel(&at.loc), def);
    assert_eq!(
        at.via,
        scry_model::Via::WorkspaceSymbol {
            kind: None,
            name: "Inventory.restock".into()
        }
    );
    assert_eq!(
        scry_render::via_text(&at.via),
        "workspace symbol `Inventory.restock`"
    );
}
