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

/// pyright cannot open a file whose name is not UTF-8 (its URI's bytes are
/// not text): before, its uses were missing from references and its type
/// error from a workspace check, each answer looking complete; asked about
/// directly it was `NO_SERVER` ("no language server is configured for
/// *.py files") or `FILE_NOT_FOUND`. Now each says so, the file is asked
/// about by its shown name, and a file literally named like that escape
/// is another file.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_whose_names_are_not_utf8_are_said_never_silently_missing() {
    use scry_model::Reason;
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let root = scry_base::paths::canonical(dir.path()).unwrap();
    std::fs::write(root.join("pyrightconfig.json"), "{}").unwrap();
    std::fs::write(root.join("a.py"), "def total(x):\n    return x + 1\n").unwrap();
    let odd = root.join(std::ffi::OsStr::from_bytes(b"\xff\xfe_y.py"));
    std::fs::write(
        &odd,
        "from a import total\nprint(total(1))\nz: int = \"s\"\n",
    )
    .unwrap();
    // Named as scry shows the other one.
    let literal_name = std::path::Path::new("\\xff\\xfe_y.py");
    std::fs::write(root.join(literal_name), "w = 1\n").unwrap();
    let ws = scry_workspace::Workspace::open(&root).unwrap();
    if !common::server_available(&ws, "pyright-langserver", "not_utf8_names") {
        return;
    }
    let engine = scry_ops::Engine::new(std::sync::Arc::new(ws));
    let run = |q: scry_model::Query| {
        let engine = &engine;
        async move { engine.run_query(&q).await }
    };
    let text = |a: &scry_model::Answer| {
        scry_render::render_text(a, &root, &scry_render::RenderOptions::default())
    };

    let refs = run(query(Action::References)
        .path(root.join("a.py"))
        .symbol("total")
        .timeout(common::TEST_TIMEOUT)
        .build())
    .await
    .unwrap();
    match &refs.partial {
        Some(Reason::NotUtf8Names {
            server,
            files,
            shown,
            ..
        }) => {
            assert_eq!((server.as_str(), *files), ("pyright", 1), "{}", text(&refs));
            assert_eq!(shown, &vec![odd.clone()]);
        }
        other => panic!("references look complete: {other:?}\n{}", text(&refs)),
    }
    assert!(text(&refs).contains("\\xff\\xfe_y.py"), "{}", text(&refs));

    // Asked about by its shown name: a syntactic outline that says why.
    let outline = run(query(Action::Symbols)
        .path(scry_base::paths::unescaped(
            &root,
            std::path::Path::new("\\xff\\xfe_y.py"),
        ))
        .build())
    .await
    .unwrap();
    let t = text(&outline);
    assert!(t.contains("constant z") || t.contains(" z"), "{t}");
    assert!(
        t.contains("pyright cannot open \\xff\\xfe_y.py: its name is not UTF-8"),
        "{t}"
    );
    // The file named like the escape is its own file, answered by pyright.
    let literal = run(query(Action::Symbols)
        .path(scry_base::paths::unescaped(
            &root,
            std::path::Path::new("\\x5cxff\\x5cxfe_y.py"),
        ))
        .build())
    .await
    .unwrap();
    let t = text(&literal);
    assert!(
        t.contains("\\x5cxff\\x5cxfe_y.py") && t.contains("w"),
        "{t}"
    );
    assert_eq!(literal.server.as_deref(), Some("pyright"), "{t}");

    // A workspace check says which file it could not check.
    let mut q = query(Action::Diagnostics)
        .timeout(common::TEST_TIMEOUT)
        .build();
    q.targets = vec![scry_ops::diagnostics_target(
        std::path::Path::new("*"),
        &root,
        &root,
    )];
    let checked = run(q).await.unwrap();
    assert!(
        matches!(
            &checked.partial,
            Some(Reason::NotUtf8Names { files: 1, .. })
        ),
        "{}",
        text(&checked)
    );
    // And a check of that file, by its shown name, is not FILE_NOT_FOUND.
    let mut q = query(Action::Diagnostics)
        .timeout(common::TEST_TIMEOUT)
        .build();
    q.targets = vec![scry_ops::diagnostics_target(
        std::path::Path::new("\\xff\\xfe_y.py"),
        &root,
        &root,
    )];
    let one = run(q).await.unwrap();
    assert!(
        matches!(&one.partial, Some(Reason::NotUtf8Names { .. })),
        "{}",
        text(&one)
    );
    let _ = tokio::time::timeout(std::time::Duration::from_secs(15), engine.shutdown()).await;
}
