//! The syntactic fallback (scry-syntax behind scry-ops): it answers, labelled
//! `precision: "syntactic"`, only when no server can — (a) none configured or
//! the server disabled, (b) the server exits at once, (c) the server is still
//! indexing when the deadline comes (partial) — and never when a server
//! answers. Java and Ruby (no server in the catalogue) answer definition,
//! references, symbols, hover and implementation from the fixtures.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use scry_model::{Action, Answer, Body, Loc, OpError, Precision, Query, Reason};
use scry_ops::Engine;
use scry_render::{RenderOptions, reason_text, render_json, render_text};
use scry_workspace::Workspace;
use scry_workspace::config::Config;
use serde_json::json;
use tempfile::TempDir;

const SERVER: &str = "fakels";
const RUST_SOURCE: &str = "/// The target.\nfn target() {}\n// target in a comment\nfn caller() { target(); let s = \"target\"; }\n";

/// Fields drop in order: the engine (its servers, the syntactic cache
/// it holds open) before the directory, which Windows cannot remove while
/// a file in it is open (std's removal then never ends under wine).
struct Ws {
    engine: Engine,
    root: PathBuf,
    _dir: TempDir,
}

/// A workspace with `servers` as the only configuration (no auto-detect),
/// holding a copy of `fixture` (under the repository's `fixtures/`) or
/// `files`.
fn workspace(servers: serde_json::Value, fixture: Option<&str>, files: &[(&str, &str)]) -> Ws {
    let dir = tempfile::tempdir().unwrap();
    let base = scry_base::paths::canonical(dir.path()).unwrap();
    let root = base.join("ws");
    std::fs::create_dir(&root).unwrap();
    if let Some(f) = fixture {
        scry_testkit::copy_fixture_to(f, &root);
    }
    for (name, text) in files {
        std::fs::write(root.join(name), text).unwrap();
    }
    let layer = json!({ "autoDetect": false, "servers": servers });
    let config = Config::from_layers(&[(PathBuf::from("test.json"), layer.to_string())]).unwrap();
    let ws = Arc::new(Workspace::with_config(root.clone(), config));
    let engine = Engine::with_syntax_cache(ws, Some(&base.join("cache")));
    Ws {
        engine,
        root,
        _dir: dir,
    }
}

fn fake(mode: &str, file_types: &[&str], env: &[(&str, &str)]) -> serde_json::Value {
    let mut vars = serde_json::Map::new();
    vars.insert("FAKE_LSP_MODE".into(), mode.into());
    for (k, v) in env {
        vars.insert((*k).into(), (*v).into());
    }
    json!({ SERVER: {
        "command": scry_testkit::built_binary(env!("CARGO_BIN_EXE_scry-fake-lsp")),
        "fileTypes": file_types,
        "env": vars,
    }})
}

fn query(action: Action, path: &str, symbol: &str, timeout_ms: u64) -> Query {
    let mut q = Query::new(action);
    q.path = Some(PathBuf::from(path));
    q.symbol = Some(symbol.to_string());
    q.timeout = Some(Duration::from_millis(timeout_ms));
    q
}

/// (relative path, line, col) of each location.
fn places(ws: &Ws, a: &Answer) -> Vec<(String, u32, u32)> {
    let Body::Locations { locations } = &a.body else {
        panic!("expected locations, got {:?}", a.body);
    };
    locations
        .iter()
        .map(|l: &Loc| {
            (
                // `/`-separated on every OS, as the expectations are.
                l.path
                    .strip_prefix(&ws.root)
                    .unwrap()
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/"),
                l.line,
                l.col,
            )
        })
        .collect()
}

/// The notes as the answer words them, one per line.
fn notes(ws: &Ws, a: &Answer) -> String {
    let said: Vec<String> = a.notes.iter().map(|n| reason_text(n, &ws.root)).collect();
    said.join("\n")
}

/// A reason as the answer words it ("" for none).
fn said(ws: &Ws, r: &Option<Reason>) -> String {
    r.as_ref()
        .map(|r| reason_text(r, &ws.root))
        .unwrap_or_default()
}

fn assert_syntactic(ws: &Ws, a: &Answer) {
    assert_eq!(a.precision, Some(Precision::Syntactic));
    let text = render_text(a, &ws.root, &RenderOptions::default());
    assert!(text.lines().next().unwrap().contains("syntactic"), "{text}");
    let json = render_json(a, &ws.root, &RenderOptions::default());
    assert_eq!(json["precision"], "syntactic", "{json}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn java_answers_without_a_server() {
    let ws = workspace(json!({}), Some("java"), &[]);
    let dir = "src/main/java/shop";
    let def = ws
        .engine
        .run_query(&query(
            Action::Definition,
            &format!("{dir}/Report.java"),
            "totalWeight",
            5000,
        ))
        .await
        .unwrap();
    assert_syntactic(&ws, &def);
    assert_eq!(
        places(&ws, &def),
        vec![(format!("{dir}/Inventory.java"), 20, 23)]
    );
    let note = notes(&ws, &def);
    assert!(
        note.contains("no language server is configured for *.java"),
        "{note}"
    );

    // References: code only; the comment in Report.java (line 7) and the
    // string in Main.java (line 9) are not references.
    let refs = ws
        .engine
        .run_query(&query(
            Action::References,
            &format!("{dir}/Inventory.java"),
            "totalWeight",
            5000,
        ))
        .await
        .unwrap();
    assert_syntactic(&ws, &refs);
    assert_eq!(
        places(&ws, &refs),
        vec![
            (format!("{dir}/Inventory.java"), 20, 23),
            (format!("{dir}/Main.java"), 8, 52),
            (format!("{dir}/Report.java"), 8, 27),
        ]
    );

    let mut sym = Query::new(Action::Symbols);
    sym.path = Some(PathBuf::from(format!("{dir}/Inventory.java")));
    let outline = ws.engine.run_query(&sym).await.unwrap();
    assert_syntactic(&ws, &outline);
    let Body::Outline { symbols, .. } = &outline.body else {
        panic!()
    };
    assert_eq!(symbols.len(), 1);
    assert_eq!(
        (symbols[0].name.as_str(), symbols[0].kind.as_str()),
        ("Inventory", "class")
    );
    let kids: Vec<(&str, &str)> = symbols[0]
        .children
        .iter()
        .map(|c| (c.name.as_str(), c.kind.as_str()))
        .collect();
    assert_eq!(
        kids,
        vec![
            ("items", "field"),
            ("restock", "method"),
            ("itemWeight", "method"),
            ("totalWeight", "method")
        ]
    );

    let hover = ws
        .engine
        .run_query(&query(
            Action::Hover,
            &format!("{dir}/Main.java"),
            "restock",
            5000,
        ))
        .await
        .unwrap();
    let Body::Hover { text } = &hover.body else {
        panic!()
    };
    assert!(text.contains("public void restock(int n) {"), "{text}");
    assert!(text.contains("Adds an item of weight n."), "{text}");

    let imp = ws
        .engine
        .run_query(&query(
            Action::Implementation,
            &format!("{dir}/Shape.java"),
            "Shape",
            5000,
        ))
        .await
        .unwrap();
    assert_eq!(
        places(&ws, &imp),
        vec![(format!("{dir}/Square.java"), 4, 14)]
    );

    // Qualified names resolve by the enclosing class.
    let q = ws
        .engine
        .run_query(&query(
            Action::Definition,
            &format!("{dir}/Main.java"),
            "Square.area",
            5000,
        ))
        .await
        .unwrap();
    assert_eq!(
        places(&ws, &q),
        vec![(format!("{dir}/Square.java"), 12, 19)]
    );

    let mut wsq = Query::new(Action::WorkspaceSymbols);
    wsq.query = Some("weight".into());
    let found = ws.engine.run_query(&wsq).await.unwrap();
    assert_syntactic(&ws, &found);
    let Body::WorkspaceSymbols { symbols, .. } = &found.body else {
        panic!()
    };
    let names: Vec<&str> = symbols.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, vec!["itemWeight", "totalWeight"]);

    // A name nothing defines: the server's error stands.
    let err = ws
        .engine
        .run_query(&query(
            Action::Definition,
            &format!("{dir}/Main.java"),
            "nowhere",
            5000,
        ))
        .await
        .unwrap_err();
    assert!(matches!(err, OpError::NoServer(_)), "{err:?}");

    // `status` says how much is indexed and how big the cache is.
    let st = ws
        .engine
        .run_query(&Query::new(Action::Status))
        .await
        .unwrap();
    let text = render_text(&st, &ws.root, &RenderOptions::default());
    let line = text
        .lines()
        .find(|l| l.starts_with("Syntactic index: "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.starts_with("Syntactic index: 5 files indexed (") && line.contains("disk cache"),
        "{line}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ruby_answers_without_a_server() {
    let ws = workspace(json!({}), Some("ruby"), &[]);
    let def = ws
        .engine
        .run_query(&query(
            Action::Definition,
            "lib/main.rb",
            "total_weight",
            5000,
        ))
        .await
        .unwrap();
    assert_syntactic(&ws, &def);
    assert_eq!(
        places(&ws, &def),
        vec![("lib/inventory.rb".to_string(), 21, 5)]
    );
    let refs = ws
        .engine
        .run_query(&query(
            Action::References,
            "lib/inventory.rb",
            "total_weight",
            5000,
        ))
        .await
        .unwrap();
    // Not the comment (report.rb:6) nor the string (main.rb:10).
    assert_eq!(
        places(&ws, &refs),
        vec![
            ("lib/inventory.rb".to_string(), 21, 5),
            ("lib/main.rb".to_string(), 9, 24),
            ("lib/report.rb".to_string(), 7, 7),
        ]
    );
    let mut sym = Query::new(Action::Symbols);
    sym.path = Some(PathBuf::from("lib/shapes.rb"));
    let outline = ws.engine.run_query(&sym).await.unwrap();
    let Body::Outline { symbols, .. } = &outline.body else {
        panic!()
    };
    let tops: Vec<&str> = symbols.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(tops, vec!["Shape", "Square"]);
    let imp = ws
        .engine
        .run_query(&query(
            Action::Implementation,
            "lib/shapes.rb",
            "Shape",
            5000,
        ))
        .await
        .unwrap();
    assert_eq!(
        places(&ws, &imp),
        vec![("lib/shapes.rb".to_string(), 11, 7)]
    );
}

/// (a) A configured but disabled server: the syntactic answer names it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disabled_server_falls_back() {
    let mut servers = fake("normal", &["rs"], &[]);
    servers[SERVER]["disabled"] = true.into();
    let ws = workspace(servers, None, &[("a.rs", RUST_SOURCE)]);
    let a = ws
        .engine
        .run_query(&query(Action::References, "a.rs", "target", 5000))
        .await
        .unwrap();
    assert_syntactic(&ws, &a);
    // The comment and the string are not references.
    assert_eq!(
        places(&ws, &a),
        vec![("a.rs".to_string(), 2, 4), ("a.rs".to_string(), 4, 15)]
    );
}

/// (b) A server that exits during start-up: the reason is given.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_exiting_at_once_falls_back_with_the_reason() {
    let ws = workspace(
        fake("exit-during-init", &["rs"], &[]),
        None,
        &[("a.rs", RUST_SOURCE)],
    );
    let a = ws
        .engine
        .run_query(&query(Action::Definition, "a.rs", "target", 5000))
        .await
        .unwrap();
    assert_syntactic(&ws, &a);
    assert_eq!(places(&ws, &a), vec![("a.rs".to_string(), 2, 4)]);
    let note = notes(&ws, &a);
    assert!(note.contains("fakels failed to start"), "{note}");
    let text = render_text(&a, &ws.root, &RenderOptions::default());
    assert!(text.contains("failed to start"), "{text}");
}

/// (c) A server still indexing when the deadline comes: a partial
/// syntactic answer within the budget.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn indexing_past_the_deadline_gives_a_partial_syntactic_answer() {
    let ws = workspace(
        fake("indexing", &["rs"], &[("FAKE_LSP_INDEX_MS", "30000")]),
        None,
        &[("a.rs", RUST_SOURCE)],
    );
    let t0 = Instant::now();
    let a = ws
        .engine
        .run_query(&query(Action::Definition, "a.rs", "target", 3000))
        .await
        .unwrap();
    let took = t0.elapsed();
    assert!(took < Duration::from_millis(4000), "took {took:?}");
    assert_syntactic(&ws, &a);
    assert_eq!(places(&ws, &a), vec![("a.rs".to_string(), 2, 4)]);
    assert!(
        matches!(&a.partial, Some(Reason::Indexing { server, .. }) if server == "fakels"),
        "{:?}",
        a.partial
    );
    let text = render_text(&a, &ws.root, &RenderOptions::default());
    let partial = text
        .lines()
        .find(|l| l.starts_with("Partial: "))
        .expect("a Partial line");
    assert!(
        partial.starts_with("Partial: fakels is still indexing (")
            && partial.ends_with("); syntactic answer — ask again for the exact one."),
        "{partial}"
    );
    ws.engine.shutdown().await;
}

/// Both cores held busy while `f` runs (bounded: the threads stop when it
/// returns, or after two minutes whatever happens).
async fn with_busy_cores<T>(f: impl std::future::Future<Output = T>) -> T {
    use std::sync::atomic::{AtomicBool, Ordering};
    let stop = Arc::new(AtomicBool::new(false));
    let busy: Vec<_> = (0..2)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let t0 = Instant::now();
                let mut x = 0u64;
                while !stop.load(Ordering::Relaxed) && t0.elapsed() < Duration::from_secs(120) {
                    x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
                }
            })
        })
        .collect();
    let out = f.await;
    stop.store(true, Ordering::Relaxed);
    for t in busy {
        t.join().unwrap();
    }
    out
}

/// A generated tree of `n` Rust files of about 150 lines each, every one
/// using `target` (defined in `a.rs`).
fn large_tree(n: usize) -> Vec<(String, String)> {
    (0..n)
        .map(|i| {
            let mut text = format!("//! File {i}.\n");
            for f in 0..30 {
                text.push_str(&format!(
                    "/// Function {f}.\npub fn f{i}_{f}(x: u32) -> u32 {{\n    let y = x + {f};\n    target();\n    y * 2\n}}\n"
                ));
            }
            (format!("m{i:03}.rs"), text)
        })
        .collect()
}

/// The first call never ends in TIMEOUT when a syntactic answer exists: a
/// server that never answers, both cores busy, a tree of 600 files: the
/// call ends by its deadline with a labelled syntactic answer (the
/// syntactic index is built alongside the server's request, not after it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_answers_on_busy_cores_gets_a_syntactic_answer_by_the_deadline() {
    let tree = large_tree(600);
    let mut files: Vec<(&str, &str)> = tree.iter().map(|(n, t)| (n.as_str(), t.as_str())).collect();
    files.push(("a.rs", RUST_SOURCE));
    let ws = workspace(
        fake(
            "hang",
            &["rs"],
            &[("FAKE_LSP_METHOD", "textDocument/references")],
        ),
        None,
        &files,
    );
    let budget = Duration::from_secs(8);
    let t0 = Instant::now();
    let a = with_busy_cores(ws.engine.run_query(&query(
        Action::References,
        "a.rs",
        "target",
        budget.as_millis() as u64,
    )))
    .await;
    let took = t0.elapsed();
    let a = a.expect("an answer, not TIMEOUT");
    // Generous: "by the deadline", not a benchmark.
    assert!(
        took <= budget + scry_ops::engine::DEADLINE_GRACE,
        "took {took:?}"
    );
    assert_syntactic(&ws, &a);
    let Body::Locations { locations } = &a.body else {
        panic!("{a:?}")
    };
    assert!(locations.len() > 600, "{}", locations.len());
    // Partial, saying what the server was doing.
    assert!(
        matches!(&a.partial, Some(Reason::ServerStarting { server } | Reason::Indexing { server, .. }) if server == SERVER),
        "{:?}",
        a.partial
    );
    ws.engine.shutdown().await;
}

/// A server slower than the syntactic index but within the budget: its
/// answer, precise, wins over the syntactic one prepared meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_answering_in_time_wins_over_the_prepared_syntactic_answer() {
    let ws = workspace(
        fake("slow", &["rs"], &[("FAKE_LSP_DELAY_MS", "1500")]),
        None,
        &[("a.rs", RUST_SOURCE)],
    );
    let a = ws
        .engine
        .run_query(&query(Action::Definition, "a.rs", "target", 10_000))
        .await
        .unwrap();
    assert_eq!(a.precision, None, "{a:?}");
    assert_eq!(a.partial, None, "{a:?}");
    assert_eq!(a.server.as_deref(), Some(SERVER));
    ws.engine.shutdown().await;
}

/// A server that never answers, and no lower source with an answer: the
/// error says how long the server was waited for, truthfully (the budget
/// less the margin kept to answer, not the whole budget).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_timeout_error_states_how_long_the_server_was_waited_for() {
    // `target` only in a comment: the syntactic index has no answer.
    let ws = workspace(
        fake("hang", &["rs"], &[]),
        None,
        &[("a.rs", "// target, in a comment only\nfn other() {}\n")],
    );
    let e = ws
        .engine
        .run_query(&query(Action::Definition, "a.rs", "target", 2000))
        .await
        .unwrap_err();
    assert_eq!(e.code(), "TIMEOUT", "{e}");
    let shown = scry_render::render_error(&e, &ws.root);
    assert!(
        shown.contains("fakels did not answer textDocument/definition within 1800 ms of the call's 2000 ms budget"),
        "{shown}"
    );
    ws.engine.shutdown().await;
}

/// A server that answers is never replaced.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_working_server_answers_itself() {
    let ws = workspace(fake("normal", &["rs"], &[]), None, &[("a.rs", RUST_SOURCE)]);
    let a = ws
        .engine
        .run_query(&query(Action::Definition, "a.rs", "target", 5000))
        .await
        .unwrap();
    assert_eq!(a.precision, None);
    assert_eq!(a.server.as_deref(), Some(SERVER));
    ws.engine.shutdown().await;
}

/// Huge and binary files are skipped and said; a file with syntax errors
/// still answers, with a note.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_binary_and_broken_files() {
    let mut huge = String::from("class Huge {\n");
    while huge.len() <= 1024 * 1024 {
        huge.push_str("  int filler;\n");
    }
    huge.push_str("}\n");
    let ws = workspace(
        json!({}),
        None,
        &[
            ("Huge.java", &huge),
            (
                "Broken.java",
                "class Broken {\n  void ok() {}\n  void bad( {\n}\nclass After {}\n",
            ),
            (
                "Uses.java",
                "class Uses { void f() { new Broken().ok(); } }\n",
            ),
        ],
    );
    std::fs::write(ws.root.join("Bin.java"), b"class Bin {}\0\x01").unwrap();
    let mut sym = Query::new(Action::Symbols);
    sym.path = Some(PathBuf::from("Huge.java"));
    let a = ws.engine.run_query(&sym).await.unwrap();
    let reason = said(&ws, &a.empty_reason);
    assert!(
        reason
            .contains("Huge.java is not in the syntactic index: 1025 KiB, over the 1024 KiB limit"),
        "{reason}"
    );
    sym.path = Some(PathBuf::from("Bin.java"));
    let a = ws.engine.run_query(&sym).await.unwrap();
    assert!(said(&ws, &a.empty_reason).contains("binary"), "binary said");
    let d = ws
        .engine
        .run_query(&query(Action::Definition, "Uses.java", "ok", 5000))
        .await
        .unwrap();
    assert_eq!(places(&ws, &d), vec![("Broken.java".to_string(), 2, 8)]);
    let d = ws
        .engine
        .run_query(&query(Action::References, "Broken.java", "ok", 5000))
        .await
        .unwrap();
    assert!(
        notes(&ws, &d).contains("Broken.java has syntax errors"),
        "{:?}",
        d.notes
    );
}
