//! Renames and code actions against real language servers, on copies of
//! `fixtures/<lang>` in temp dirs (the repository's fixtures are never
//! edited). A test whose server is not installed is skipped with a message
//! (or fails under `SCRY_REQUIRE_SERVERS=1`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use scry_model::{Action, Body, EditReport, Query};
use scry_ops::Engine;
use scry_workspace::Workspace;
use tempfile::TempDir;

struct Fx {
    _dir: TempDir,
    root: PathBuf,
    engine: Engine,
}

fn fixture(lang: &str, command: &str) -> Option<Fx> {
    let (dir, base) = scry_testkit::canonical_tempdir();
    let root = base.join(lang);
    scry_testkit::copy_fixture_to(lang, &root);
    let ws = Arc::new(Workspace::open(&root).unwrap());
    if ws.installed(command).is_none() {
        scry_testkit::skip_or_fail(format_args!("`{command}` is not installed"));
        return None;
    }
    let engine = Engine::new(ws);
    engine.set_journal_dir(Some(base.join("journal")));
    Some(Fx {
        _dir: dir,
        root,
        engine,
    })
}

fn rename(path: &str, symbol: &str, new_name: &str, apply: bool) -> Query {
    let mut q = Query::new(Action::Rename);
    q.path = Some(path.into());
    q.symbol = Some(symbol.into());
    q.new_name = Some(new_name.into());
    q.apply = apply;
    q.timeout = Some(Duration::from_secs(90));
    q
}

fn report(a: &scry_model::Answer) -> &EditReport {
    match &a.body {
        Body::Edit(r) => r,
        other => panic!("not an edit: {other:?}"),
    }
}

fn read(fx: &Fx, p: &str) -> String {
    std::fs::read_to_string(fx.root.join(p)).unwrap()
}

fn snapshot(root: &Path, files: &[&str]) -> Vec<String> {
    files
        .iter()
        .map(|f| std::fs::read_to_string(root.join(f)).unwrap_or_default())
        .collect()
}

async fn undo(fx: &Fx) -> EditReport {
    let mut q = Query::new(Action::Undo);
    q.timeout = Some(Duration::from_secs(30));
    report(&fx.engine.run_query(&q).await.unwrap()).clone()
}

#[tokio::test]
async fn rust_analyzer_renames_across_files_and_modules_and_undoes() {
    let Some(fx) = fixture("rust", "rust-analyzer") else {
        return;
    };
    let files = ["src/main.rs", "src/report.rs", "src/inventory.rs"];
    let original = snapshot(&fx.root, &files);
    // Preview first: exact diff, nothing written.
    let p = fx
        .engine
        .run_query(&rename(
            "src/inventory.rs",
            "total_weight",
            "weight_sum",
            false,
        ))
        .await
        .unwrap();
    let r = report(&p);
    assert!(!r.applied);
    assert!(
        r.previews.iter().any(|d| d
            .diff
            .contains("-use inventory::{total_weight, Inventory};")
            && d.diff.contains("+use inventory::{weight_sum, Inventory};")),
        "{:?}",
        r.previews
    );
    assert_eq!(original, snapshot(&fx.root, &files));

    let a = fx
        .engine
        .run_query(&rename(
            "src/inventory.rs",
            "total_weight",
            "weight_sum",
            true,
        ))
        .await
        .unwrap();
    let r = report(&a);
    assert!(r.applied && r.title == "total_weight");
    assert!(r.files_changed >= 3, "{r:?}");
    assert!(read(&fx, "src/main.rs").contains("let (label, w) = (\"📦 café\", weight_sum(&inv));"));
    assert!(read(&fx, "src/report.rs").contains("let w = weight_sum(inv);"));
    assert!(read(&fx, "src/inventory.rs").contains("pub fn weight_sum("));
    assert!(!read(&fx, "src/main.rs").contains("total_weight(&inv)"));

    // A module: rust-analyzer renames its file through a RenameFile.
    let a = fx
        .engine
        .run_query(&rename("src/main.rs", "report", "summary", true))
        .await
        .unwrap();
    let r = report(&a);
    assert!(
        r.renamed
            .iter()
            .any(|m| m.from.ends_with("src/report.rs") && m.to.ends_with("src/summary.rs")),
        "{r:?}"
    );
    assert!(fx.root.join("src/summary.rs").exists() && !fx.root.join("src/report.rs").exists());
    assert!(read(&fx, "src/main.rs").contains("mod summary;"));
    assert!(read(&fx, "src/main.rs").contains("summary::report(&mut inv)"));

    // Undo both, newest first: byte for byte as before.
    undo(&fx).await;
    assert!(fx.root.join("src/report.rs").exists() && !fx.root.join("src/summary.rs").exists());
    undo(&fx).await;
    assert_eq!(original, snapshot(&fx.root, &files));

    // A symbol that cannot be renamed (a std item) is a clear refusal.
    let e = fx
        .engine
        .run_query(&rename("src/main.rs", "println", "say", true))
        .await
        .unwrap_err();
    assert_eq!(e.code(), "EDIT_REJECTED", "{e}");
    assert_eq!(original, snapshot(&fx.root, &files));
    fx.engine.shutdown().await;
}

#[tokio::test]
async fn pyright_renames_across_files() {
    let Some(fx) = fixture("python", "pyright-langserver") else {
        return;
    };
    let a = fx
        .engine
        .run_query(&rename("inventory.py", "total_weight", "weight_sum", true))
        .await
        .unwrap();
    let r = report(&a);
    assert!(r.applied && r.files_changed >= 3, "{r:?}");
    assert!(read(&fx, "main.py").contains("from inventory import Inventory, weight_sum"));
    assert!(read(&fx, "main.py").contains("\"📦 café\", weight_sum(inv)"));
    assert!(read(&fx, "report.py").contains("weight_sum("));
    fx.engine.shutdown().await;
}

/// Issue 26: renaming to the name it already has (asked by line, so the
/// old name is known only from prepareRename) reported 181 edits and wrote
/// nothing; it is refused before `textDocument/rename` is asked, and no
/// file changes.
#[tokio::test]
async fn pyright_rename_to_the_same_name_is_refused_before_the_rename() {
    let Some(fx) = fixture("python", "pyright-langserver") else {
        return;
    };
    let files = ["inventory.py", "main.py", "report.py"];
    let before = snapshot(&fx.root, &files);
    let mut q = rename("inventory.py", "total_weight", "total_weight", true);
    q.symbol = None;
    q.line = Some(18);
    q.column = Some(5);
    let e = fx.engine.run_query(&q).await.unwrap_err();
    assert_eq!(e.code(), "INVALID_ARGUMENT", "{e}");
    // The refusal as data (scry-render words it: its tests).
    assert!(e.to_string().contains("new_name: Unchanged"), "{e}");
    assert_eq!(snapshot(&fx.root, &files), before);
    fx.engine.shutdown().await;
}

#[tokio::test]
async fn typescript_renames_across_files() {
    let Some(fx) = fixture("typescript", "typescript-language-server") else {
        return;
    };
    let a = fx
        .engine
        .run_query(&rename(
            "src/inventory.ts",
            "total_weight",
            "weightSum",
            true,
        ))
        .await
        .unwrap();
    let r = report(&a);
    assert!(r.applied && r.files_changed >= 3, "{r:?}");
    assert!(
        read(&fx, "src/main.ts").contains("import { Inventory, weightSum } from \"./inventory\";")
    );
    assert!(read(&fx, "src/main.ts").contains("[\"📦 café\", weightSum(inv)]"));
    assert!(read(&fx, "src/report.ts").contains("const w = weightSum(inv);"));
    fx.engine.shutdown().await;
}

#[tokio::test]
async fn rust_analyzer_code_action_adds_a_missing_import() {
    let Some(fx) = fixture("rust", "rust-analyzer") else {
        return;
    };
    let main = fx.root.join("src/main.rs");
    let text = read(&fx, "src/main.rs").replace(
        "fn main() {\n",
        "fn main() {\n    let _m: HashMap<u32, u32> = HashMap::new();\n",
    );
    std::fs::write(&main, text).unwrap();
    let mut q = Query::new(Action::CodeActions);
    q.path = Some("src/main.rs".into());
    q.symbol = Some("HashMap".into());
    q.timeout = Some(Duration::from_secs(90));
    let list = fx.engine.run_query(&q).await.unwrap();
    let Body::CodeActions(l) = &list.body else {
        panic!("{list:?}")
    };
    let Some(import) = l
        .actions
        .iter()
        .find(|a| a.title.contains("std::collections::HashMap"))
    else {
        panic!("no import action: {:?}", l.actions);
    };
    q.action_index = Some(import.index);
    let done = fx.engine.run_query(&q).await.unwrap();
    assert!(report(&done).applied);
    assert!(read(&fx, "src/main.rs").contains("use std::collections::HashMap;"));
    fx.engine.shutdown().await;
}

#[tokio::test]
async fn typescript_quick_fix_from_a_diagnostic() {
    let Some(fx) = fixture("typescript", "typescript-language-server") else {
        return;
    };
    // A missing import: `item_weight` is used but not imported.
    let main = fx.root.join("src/main.ts");
    let text = read(&fx, "src/main.ts");
    let text = format!("{text}\nexport const probe = item_weight(2);\n");
    std::fs::write(&main, &text).unwrap();
    let line = text.lines().count() as u32;
    let mut q = Query::new(Action::CodeActions);
    q.path = Some("src/main.ts".into());
    q.symbol = Some("item_weight".into());
    q.line = Some(line);
    q.timeout = Some(Duration::from_secs(90));
    let mut found = None;
    for _ in 0..5 {
        let list = fx.engine.run_query(&q).await.unwrap();
        if let Body::CodeActions(l) = &list.body
            && let Some(a) = l.actions.iter().find(|a| {
                a.title.contains("import") && a.title.contains("item_weight")
                    || a.title.contains("Update import")
            })
        {
            found = Some(a.index);
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let Some(n) = found else {
        panic!("no import quick fix offered");
    };
    q.action_index = Some(n);
    let done = fx.engine.run_query(&q).await.unwrap();
    assert!(report(&done).applied);
    let now = read(&fx, "src/main.ts");
    assert!(
        now.contains("item_weight") && now.contains("from \"./inventory\""),
        "{now}"
    );
    assert!(
        now.lines()
            .any(|l| l.starts_with("import") && l.contains("item_weight")),
        "{now}"
    );
    fx.engine.shutdown().await;
}

/// Issue 8: a rename preview asked by name and line, where the name occurs
/// twice on that line with different targets, answers for the first and
/// names the other with the argument that selects it; nothing is written.
#[tokio::test]
async fn pyright_rename_preview_names_the_other_target_on_the_line() {
    let Some(fx) = fixture("python", "pyright-langserver") else {
        return;
    };
    let src = "class A:\n    size = 1\n\n\nclass B:\n    size = 2\n\n\ndef f(a: A, b: B) -> int:\n    return a.size + b.size\n";
    std::fs::write(fx.root.join("same.py"), src).unwrap();
    let mut q = rename("same.py", "size", "length", false);
    q.line = Some(10);
    let a = fx.engine.run_query(&q).await.unwrap();
    let r = report(&a);
    assert!(!r.applied, "{r:?}");
    assert_eq!(read(&fx, "same.py"), src, "a preview writes nothing");
    let asked = a.asked_at.as_ref().expect("asked_at");
    assert_eq!((asked.loc.line, asked.loc.col), (10, 14), "{asked:?}");
    let same = a.same_name.as_ref().expect("the other target is named");
    assert_eq!(same.others.len(), 1, "{same:?}");
    let other = &same.others[0];
    assert_eq!((other.line, other.col), (10, 23), "{other:?}");
    assert!(
        other.select.contains(&scry_model::Selector::Column(23)),
        "{other:?}"
    );
    assert!(other.body.is_none(), "an edit preview only names the other");
    fx.engine.shutdown().await;
}

/// Issue 8: listing code actions by name and line names the other targets
/// of the name on that line too, and an applied rename does not (its line
/// changed).
#[tokio::test]
async fn pyright_code_actions_name_the_other_target_and_applied_rename_does_not() {
    let Some(fx) = fixture("python", "pyright-langserver") else {
        return;
    };
    let src = "class A:\n    size = 1\n\n\nclass B:\n    size = 2\n\n\ndef f(a: A, b: B) -> int:\n    return a.size + b.size\n";
    std::fs::write(fx.root.join("same.py"), src).unwrap();
    let mut q = Query::new(Action::CodeActions);
    q.path = Some("same.py".into());
    q.symbol = Some("size".into());
    q.line = Some(10);
    q.timeout = Some(Duration::from_secs(90));
    let a = fx.engine.run_query(&q).await.unwrap();
    let same = a.same_name.as_ref().expect("the other target is named");
    assert_eq!(
        (same.others[0].line, same.others[0].col),
        (10, 23),
        "{same:?}"
    );
    let mut q = rename("same.py", "size", "length", true);
    q.line = Some(10);
    let a = fx.engine.run_query(&q).await.unwrap();
    assert!(report(&a).applied);
    assert!(a.same_name.is_none(), "{:?}", a.same_name);
    fx.engine.shutdown().await;
}
