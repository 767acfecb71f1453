//! Definition asked by name and line, when one occurrence of the name on
//! the line is itself its declaration (`let span = Span::new(lhs.span()
//! .start, …)`, `content = str(self.content, …)`): the answer is for the
//! other occurrence (a model does not ask where a name is defined when the
//! definition is right there), and the declaration is still named as
//! another target of the name on that line. Real rust-analyzer and pyright
//! on `fixtures/declared_on_line/` (skipped when missing unless
//! `SCRY_REQUIRE_SERVERS=1`).

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{TEST_TIMEOUT, copy_fixture, server_available, server_command};
use scry_model::{Action, Answer, Body, Query, Selector};
use scry_ops::Engine;
use scry_render::{RenderOptions, render_text};
use scry_workspace::Workspace;

/// `(path relative to the root, line, col)` of each location.
fn places(root: &std::path::Path, b: &Body) -> Vec<(String, u32, u32)> {
    match b {
        Body::Locations { locations } => locations
            .iter()
            .map(|l| {
                let p = l.path.strip_prefix(root).unwrap_or(&l.path);
                (p.to_string_lossy().replace('\\', "/"), l.line, l.col)
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn definition(path: &str, symbol: &str, line: u32) -> Query {
    let mut q = Query::new(Action::Definition);
    q.path = Some(path.into());
    q.symbol = Some(symbol.into());
    q.line = Some(line);
    q.timeout = Some(TEST_TIMEOUT);
    q
}

/// Asks until the server answers at all (it may still be indexing).
async fn ask(engine: &Engine, q: &Query) -> Answer {
    let mut last = None;
    for _ in 0..30 {
        match engine.run_query(q).await {
            Ok(a) if !a.body.is_empty() && a.partial.is_none() => return a,
            other => last = Some(other),
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    panic!("no full answer to {q:?}: {last:?}");
}

/// One language: the answer is `want` (the other occurrence's target),
/// asked at `asked_col`; the declaration at `decl_col` is named with its
/// own answer (itself).
async fn check(
    lang: &'static str,
    path: &str,
    symbol: &str,
    line: u32,
    (asked_col, want): (u32, (u32, u32)),
    decl_col: u32,
) {
    let test = format!("declared_on_line_{lang}");
    let dir = copy_fixture(&format!("declared_on_line/{lang}"));
    let ws = Workspace::open(dir.path()).expect("open workspace");
    if !server_available(&ws, server_command(lang), &test) {
        return;
    }
    let root = ws.root().to_path_buf();
    let engine = Engine::new(Arc::new(ws));
    let a = ask(&engine, &definition(path, symbol, line)).await;
    let text = render_text(&a, &root, &RenderOptions::default());
    assert_eq!(
        places(&root, &a.body),
        vec![(path.to_string(), want.0, want.1)],
        "[{lang}] the other occurrence's definition:\n{text}"
    );
    let asked = a.asked_at.as_ref().expect("asked_at");
    assert_eq!(
        (asked.loc.line, asked.loc.col),
        (line, asked_col),
        "[{lang}] asked at the occurrence that is not the declaration:\n{text}"
    );
    let same = a
        .same_name
        .as_ref()
        .unwrap_or_else(|| panic!("[{lang}] the declaration is named as another target:\n{text}"));
    let decl = same
        .others
        .iter()
        .find(|o| o.line == line && o.col == decl_col)
        .unwrap_or_else(|| panic!("[{lang}] the declaration at col {decl_col} is named:\n{text}"));
    assert!(
        decl.select.contains(&Selector::Column(decl_col)),
        "[{lang}] {decl:?}"
    );
    let own = decl
        .body
        .as_ref()
        .map(|b| places(&root, b))
        .unwrap_or_default();
    assert!(
        own.iter().any(|(p, l, _)| p == path && *l == line),
        "[{lang}] the declaration's own answer is itself: {own:?}\n{text}"
    );
    assert!(
        text.contains(&format!("col {decl_col} `{symbol}` (column={decl_col})")),
        "[{lang}] the text names the declaration and how to pick it:\n{text}"
    );
    let _ = tokio::time::timeout(Duration::from_secs(15), engine.shutdown()).await;
}

/// `let span = Span::new(lhs.span().start, rhs.span().end);`: `span` at
/// col 9 declares the binding; `lhs.span` (col 30) is the method on line 20.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rust_let_binding_and_method_of_the_same_name() {
    check("rust", "src/lib.rs", "span", 26, (30, (20, 12)), 9).await;
}

/// `content = str(self.content, "utf-8")`: `content` at col 9 declares the
/// local; `self.content` (col 28) is the attribute assigned on line 7.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_local_and_attribute_of_the_same_name() {
    check("python", "doc.py", "content", 12, (28, (7, 14)), 9).await;
}

/// The CLI answers the same and words the argument that selects the
/// declaration as its own flag (`--column 9`), never MCP's `column=9`.
#[test]
fn the_cli_names_the_declaration_with_its_own_flag() {
    let dir = copy_fixture("declared_on_line/python");
    let ws = Workspace::open(dir.path()).expect("open workspace");
    if !server_available(&ws, server_command("python"), "declared_on_line_cli") {
        return;
    }
    let home = tempfile::tempdir().expect("tempdir");
    let root = dir.path().to_string_lossy().into_owned();
    let mut last = String::new();
    for _ in 0..15 {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_scry"))
            .args(["def", "doc.py", "content", "--line", "12", "--root", &root])
            .env("SCRY_NO_DAEMON", "1")
            .current_dir(home.path())
            .env("XDG_CONFIG_HOME", home.path().join("config"))
            .env("XDG_STATE_HOME", home.path().join("state"))
            .env("SCRY_LOG_DIR", home.path().join("logs"))
            .env_remove("SCRY_JOURNAL_DIR")
            .env_remove("SCRY_LOG")
            .output()
            .expect("run scry");
        last = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if out.status.success() && last.contains("self.content = content") {
            break;
        }
        std::thread::sleep(Duration::from_secs(2));
    }
    assert!(
        last.contains("  7:14  self.content = content"),
        "the attribute's definition:\n{last}"
    );
    assert!(
        last.contains("col 9 `content` (--column 9)"),
        "the declaration named with the CLI's flag:\n{last}"
    );
    assert!(
        !last.contains("column=9"),
        "no MCP syntax on the CLI:\n{last}"
    );
}
