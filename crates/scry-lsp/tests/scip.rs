//! The SCIP index source with the real indexers on the fixtures —
//! `rust-analyzer scip` on `fixtures/rust`, `scip-python` on
//! `fixtures/python`, `scip-typescript` on `fixtures/typescript`: `scry
//! index` builds it; a cold engine answers from it at once, labelled; its
//! definitions, references, hovers and outlines equal the live server's at
//! the same places once the server is ready (the outline nested as the
//! server nests it); a changed file is never answered from it, and
//! locations in changed files are left out with a count; a corrupt index is
//! a note and the other sources answer.
//!
//! A missing indexer skips a test, or fails it under
//! `SCRY_REQUIRE_SERVERS=1` (`scripts/install-language-servers.sh`
//! installs them).

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::process::scry_in;
use common::{Fixture, query};
use scry_model::{Action, Answer, Body, DoctorIndex, IndexOrigin, Precision, Query, SymbolNode};
use scry_ops::Engine;
use scry_workspace::Workspace;

fn engine(root: &Path, cache: &Path) -> Engine {
    let ws = Workspace::open(root).expect("open workspace");
    Engine::with_syntax_cache(Arc::new(ws), Some(cache))
}

/// The answer's notes as the renderer words them, one a line.
fn notes_text(root: &Path, a: &Answer) -> String {
    a.notes
        .iter()
        .map(|n| scry_render::reason_text(n, root))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Who an index answer says answered: `SCIP index (…)`, as rendered.
fn index_label(a: &Answer, root: &Path) -> String {
    (a.from_index.as_ref())
        .map(|ix| scry_render::index_label(ix, root))
        .unwrap_or_default()
}

fn locs(fx: &Fixture, a: &Answer) -> BTreeSet<(String, u32, u32)> {
    fx.locs(a)
        .into_iter()
        .map(|p| (p.path, p.line, p.col))
        .collect()
}

/// Every node of an outline as (name, line, parent's name).
fn outline(nodes: &[SymbolNode]) -> BTreeSet<(String, u32, String)> {
    fn walk(nodes: &[SymbolNode], parent: &str, out: &mut BTreeSet<(String, u32, String)>) {
        for n in nodes {
            out.insert((n.name.clone(), n.line, parent.to_string()));
            walk(&n.children, &n.name, out);
        }
    }
    let mut out = BTreeSet::new();
    walk(nodes, "", &mut out);
    out
}

/// The 1-based character column of `name` on 1-based `line` of `path`.
fn column_of(root: &Path, path: &str, line: u32, name: &str) -> u32 {
    let text = std::fs::read_to_string(root.join(path)).unwrap();
    let l = text.lines().nth(line as usize - 1).unwrap();
    let byte = l.find(name).unwrap();
    l[..byte].chars().count() as u32 + 1
}

/// One language's fixture layout: where each question asks.
struct Case {
    lang: &'static str,
    indexer: &'static str,
    /// main (uses `total_weight` on `weight_line`, after non-ASCII text),
    /// report (calls `restock`), inventory (defines `Inventory`).
    main: &'static str,
    weight_line: u32,
    report: &'static str,
    inventory: &'static str,
    /// The file edited to check freshness (not `main`).
    edited: &'static str,
    /// (name, parent) pairs the outline of `inventory` nests.
    nested: &'static [(&'static str, &'static str)],
    /// More references questions: (path, symbol, line).
    more: &'static [(&'static str, &'static str, u32)],
}

fn questions(c: &Case, root: &Path) -> Vec<Query> {
    let more = c.more.iter().map(|(path, symbol, line)| {
        query(Action::References)
            .path(path)
            .symbol(symbol)
            .line(*line)
            .build()
    });
    let mut qs = vec![
        query(Action::References)
            .path(c.main)
            .symbol("total_weight")
            .line(c.weight_line)
            .build(),
        query(Action::Definition)
            .path(c.report)
            .symbol("restock")
            .build(),
        query(Action::Definition)
            .path(c.main)
            .symbol("total_weight")
            .line(c.weight_line)
            .column(column_of(root, c.main, c.weight_line, "total_weight("))
            .build(),
        query(Action::References)
            .path(c.inventory)
            .symbol("Inventory")
            .build(),
        query(Action::References)
            .path(c.report)
            .symbol("report")
            .build(),
    ];
    qs.extend(more);
    qs
}

/// The live answer to `q` once the server is ready (not partial, not from
/// another source, not empty).
async fn live(fx: &Fixture, q: &Query) -> Answer {
    let give_up = Instant::now() + Duration::from_secs(240);
    loop {
        let a = fx.run(q).await;
        if a.precision.is_none() && a.partial.is_none() && !a.body.is_empty() {
            return a;
        }
        assert!(Instant::now() < give_up, "no live answer for {q:?}: {a:?}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// `scry index` in `fx` (per-user places under `base`).
fn build_index(fx: &Fixture, base: &Path, c: &Case) {
    std::fs::write(base.join("config.json"), "{}").unwrap();
    let out = scry_in(base, &fx.root, &["index"])
        .output()
        .expect("run scry index");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "scry index failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(&format!("SCIP index ({}", c.indexer)),
        "{stdout}"
    );
}

/// The whole check for one language; returns the cache for more checks.
async fn index_agrees_with_the_live_server(c: &Case) -> Option<(Fixture, tempfile::TempDir)> {
    let test = format!("scip_{}", c.lang);
    if !scry_testkit::require_on_path(c.indexer, &test) {
        return None;
    }
    let fx = Fixture::open(c.lang, &test)?;
    let base = tempfile::tempdir().unwrap();
    let cache = base.path().join("cache");
    build_index(&fx, base.path(), c);
    let qs = questions(c, &fx.root);

    // A cold engine: every question answered from the index, labelled.
    let cold = engine(&fx.root, &cache);
    let mut from_index = Vec::new();
    for q in &qs {
        let t = Instant::now();
        let a = cold.run_query(q).await.expect("index answer");
        assert_eq!(a.precision, Some(Precision::Index), "{q:?}: {a:?}");
        let server = index_label(&a, &fx.root);
        assert!(
            server.starts_with(&format!("SCIP index ({} ", c.indexer)),
            "{server}"
        );
        assert!(server.contains(" ago at "), "{server}");
        assert!(!fx.locs(&a).is_empty(), "{q:?}: empty");
        // Generous: the index answers without the server.
        assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
        from_index.push(locs(&fx, &a));
    }
    let json = scry_render::render_json(
        &cold.run_query(&qs[0]).await.unwrap(),
        &fx.root,
        &Default::default(),
    );
    assert_eq!(json["precision"], "index", "{json}");
    let restock = query(Action::Hover)
        .path(c.report)
        .symbol("restock")
        .build();
    let hover_ix = cold.run_query(&restock).await.expect("index hover");
    assert_eq!(hover_ix.precision, Some(Precision::Index), "{hover_ix:?}");
    let outline_q = query(Action::Symbols).path(c.inventory).build();
    let outline_ix = cold.run_query(&outline_q).await.expect("index outline");
    assert_eq!(
        outline_ix.precision,
        Some(Precision::Index),
        "{outline_ix:?}"
    );
    cold.shutdown().await;

    // The live server, once ready, gives the same places.
    for (q, want) in qs.iter().zip(&from_index) {
        assert_eq!(&locs(&fx, &live(&fx, q).await), want, "{q:?}");
    }
    // Hover: both give the signature (the wording around it is each
    // tool's own).
    let hover_live = live(&fx, &restock).await;
    for a in [&hover_ix, &hover_live] {
        let Body::Hover { text } = &a.body else {
            panic!("{a:?}")
        };
        assert!(text.contains("restock") && text.contains("n:"), "{text}");
    }
    // The outline: every index node is the live server's node of the same
    // name, line and parent; members are nested under their type.
    let Body::Outline {
        symbols: ix_nodes, ..
    } = &outline_ix.body
    else {
        panic!("{outline_ix:?}")
    };
    let live_outline = live(&fx, &outline_q).await;
    let Body::Outline {
        symbols: live_nodes,
        ..
    } = &live_outline.body
    else {
        panic!("{live_outline:?}")
    };
    let (ix_set, live_set) = (outline(ix_nodes), outline(live_nodes));
    assert!(
        ix_set.is_subset(&live_set),
        "index outline {ix_set:?}\nlive outline {live_set:?}"
    );
    for (name, parent) in c.nested {
        assert!(
            ix_set.iter().any(|(n, _, p)| n == name && p == parent),
            "{name} not nested under {parent}: {ix_set:?}"
        );
    }

    // Edit a file: never answered from the index at its old positions.
    let edited = fx.root.join(c.edited);
    let text = std::fs::read_to_string(&edited).unwrap();
    std::fs::write(&edited, format!("\n{text}")).unwrap();
    let cold = engine(&fx.root, &cache);
    // A question about an unchanged file: the edited file's locations left
    // out, counted, and the changed file said.
    let a = cold.run_query(&qs[0]).await.expect("answer");
    assert_eq!(a.precision, Some(Precision::Index), "{a:?}");
    let got = locs(&fx, &a);
    assert!(got.iter().all(|l| l.0 != c.edited), "{got:?}");
    let notes = notes_text(&fx.root, &a);
    assert!(
        notes.contains("changed since the index were left out"),
        "{notes}"
    );
    assert!(notes.contains("1 of "), "{notes}");
    // In-process nothing rebuilds it: the answer says so, and how.
    assert!(
        notes.contains("the index is stale and nothing rebuilds it by itself here (no daemon, or `index.refresh` off); rebuild it with `scry index`"),
        "{notes}"
    );
    // Then the changed file itself: not from the index.
    let a = cold
        .run_query(
            &query(Action::Definition)
                .path(c.edited)
                .symbol("restock")
                .build(),
        )
        .await;
    if let Ok(a) = &a {
        assert_ne!(a.precision, Some(Precision::Index), "{a:?}");
    }
    cold.shutdown().await;
    Some((fx, base))
}

/// fixtures/rust: where each question asks.
const RUST: Case = Case {
    lang: "rust",
    indexer: "rust-analyzer",
    main: "src/main.rs",
    weight_line: 13,
    report: "src/report.rs",
    inventory: "src/inventory.rs",
    edited: "src/report.rs",
    nested: &[("items", "Inventory"), ("restock", "impl Inventory")],
    // A trait method: its references include the implementing method; a
    // module: its `mod` line and uses, not its file's whole-text definition.
    more: &[("src/shapes.rs", "area", 4), ("src/main.rs", "shapes", 5)],
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rust_index_answers_cold_equal_the_live_server_and_never_from_changed_files() {
    let c = RUST;
    let Some((fx, base)) = index_agrees_with_the_live_server(&c).await else {
        return;
    };
    let cache = base.path().join("cache");
    // The index has no definition to give: `report`'s only one is in the
    // changed src/report.rs. The next source answers (not "No definition
    // found" from the index).
    let cold = engine(&fx.root, &cache);
    let q = query(Action::Definition)
        .path("src/main.rs")
        .symbol("report")
        .line(12)
        .column(column_of(&fx.root, "src/main.rs", 12, "report("))
        .build();
    let a = cold.run_query(&q).await.expect("answer");
    assert_ne!(a.precision, Some(Precision::Index), "{a:?}");
    assert!(
        locs(&fx, &a).iter().any(|l| l.0 == "src/report.rs"),
        "{a:?}"
    );
    cold.shutdown().await;
    // A corrupt index: a note once, the other sources answer.
    let dir = scry_index::cache::dir_for(&cache, &fx.root);
    std::fs::write(dir.join("index.scip"), b"\x0a\xff\xff\xff garbage").unwrap();
    let cold = engine(&fx.root, &cache);
    let a = cold
        .run_query(&questions(&c, &fx.root)[0])
        .await
        .expect("answer");
    assert_ne!(a.precision, Some(Precision::Index));
    let notes = notes_text(&fx.root, &a);
    assert!(notes.contains("SCIP index is not usable"), "{notes}");
    cold.shutdown().await;
    fx.shutdown().await;
}

/// The index `rust-analyzer scip` writes for `root`, as a CI job would
/// (`scry index` with a throw-away cache, its `index.scip` taken).
fn ci_index(root: &Path) -> Vec<u8> {
    let base = tempfile::tempdir().unwrap();
    std::fs::write(base.path().join("config.json"), "{}").unwrap();
    let out = scry_in(base.path(), root, &["index"])
        .output()
        .expect("run scry index");
    assert!(
        out.status.success(),
        "scry index failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = scry_index::cache::dir_for(&base.path().join("cache"), root);
    std::fs::read(dir.join("index.scip")).unwrap()
}

fn engine_with(root: &Path, cache: &Path, policy: scry_workspace::trust::TrustPolicy) -> Engine {
    let ws = Workspace::open_with_policy(root, policy).expect("open workspace");
    Engine::with_syntax_cache(Arc::new(ws), Some(cache))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_ci_index_answers_cold_only_when_trusted_and_inside() {
    use scry_workspace::trust::TrustPolicy;
    let Some(fx) = Fixture::open("rust", "scip_configured") else {
        return;
    };
    let scip = ci_index(&fx.root);
    std::fs::create_dir_all(fx.root.join("build")).unwrap();
    std::fs::write(fx.root.join("build/index.scip"), &scip).unwrap();
    std::fs::write(
        fx.root.join(".scry.json"),
        r#"{"index": {"path": "build/index.scip"}}"#,
    )
    .unwrap();
    let q = &questions(&RUST, &fx.root)[1];
    // Where the index must not answer, the other sources get a short budget.
    let mut short = q.clone();
    short.timeout = Some(Duration::from_secs(3));

    // Trusted: the first cold question is answered from it, labelled with
    // its source; nothing was copied by hand into the cache.
    let cache = tempfile::tempdir().unwrap();
    let cold = engine_with(&fx.root, cache.path(), TrustPolicy::Trusted);
    let a = cold.run_query(q).await.expect("index answer");
    assert_eq!(a.precision, Some(Precision::Index), "{a:?}");
    let server = index_label(&a, &fx.root);
    assert!(server.starts_with("SCIP index (rust-analyzer "), "{server}");
    assert!(server.ends_with(", CI index build/index.scip)"), "{server}");
    assert!(!fx.locs(&a).is_empty(), "{a:?}");
    let status = cold
        .run_query(&query(Action::Status).build())
        .await
        .expect("status");
    let text = scry_render::render_text(&status, &fx.root, &Default::default());
    assert!(
        text.contains(" files covered, 0 changed since; from CI index build/index.scip\n"),
        "{text}"
    );
    assert!(
        text.contains("SCIP indexer: rust-analyzer (for rust-analyzer): installed, "),
        "{text}"
    );
    // doctor's indexes: the CI index answers; none was built by scry index.
    let indexes = scry_ops::engine::indexed::doctor_indexes(
        Some(cache.path()),
        &cold.workspace().config(),
        &fx.root,
    );
    match indexes.as_slice() {
        [
            DoctorIndex::Current {
                status,
                answers: true,
            },
        ] => {
            assert_eq!(status.about.tool, "rust-analyzer", "{status:?}");
            assert_eq!(status.changed, 0, "{status:?}");
            assert_eq!(
                status.about.origin,
                IndexOrigin::Configured {
                    path: fx.root.join("build/index.scip")
                }
            );
        }
        other => panic!("{other:?}"),
    }
    cold.shutdown().await;

    // Not from the index, and what the answer says (with a fresh cache).
    let not_from_index = async |policy| {
        let cache = tempfile::tempdir().unwrap();
        let cold = engine_with(&fx.root, cache.path(), policy);
        let a = cold
            .run_query(&short)
            .await
            .expect("an answer from the other sources");
        assert_ne!(a.precision, Some(Precision::Index), "{a:?}");
        let converted = scry_index::cache::dir_for(cache.path(), &fx.root)
            .join("ci.db")
            .exists();
        assert!(!converted, "an index that must not be read was converted");
        cold.shutdown().await;
        notes_text(&fx.root, &a)
    };

    // Untrusted: the project's path is ignored, and that is said.
    let notes = not_from_index(TrustPolicy::Untrusted).await;
    assert!(
        notes.contains(".scry.json: index.path \"build/index.scip\""),
        "{notes}"
    );

    // A path outside the workspace: refused and said, not read.
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("index.scip"), &scip).unwrap();
    std::fs::write(
        fx.root.join(".scry.json"),
        format!(
            r#"{{"index": {{"path": "{}"}}}}"#,
            outside.path().join("index.scip").display()
        ),
    )
    .unwrap();
    let notes = not_from_index(TrustPolicy::Trusted).await;
    assert!(
        notes.contains("is outside the workspace: not read"),
        "{notes}"
    );
    fx.shutdown().await;
}

/// Modification time of `p` (nanoseconds), 0 when missing.
fn mtime(p: &Path) -> u128 {
    std::fs::metadata(p)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_daemon_rebuilds_a_stale_index_when_the_workspace_is_idle() {
    let Some(fx) = Fixture::open("rust", "scip_refresh") else {
        return;
    };
    let base = tempfile::tempdir().unwrap();
    // A short idle time; polling the cache (not asking the daemon, which
    // would be a call) until the index is rebuilt, with a generous bound.
    std::fs::write(
        base.path().join("config.json"),
        r#"{"limits": {"indexRefreshIdleMs": 1000}}"#,
    )
    .unwrap();
    let out = scry_in(base.path(), &fx.root, &["index"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let scip = scry_index::cache::dir_for(&base.path().join("cache"), &fx.root).join("index.scip");
    let built = mtime(&scip);
    assert!(built > 0);
    let status = |what: &str| {
        let out = scry_in(base.path(), &fx.root, &["status"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "{what}: {text}");
        text
    };
    // A call through the daemon opens the workspace there.
    let before = status("first status");
    assert!(
        before.contains(" files covered, 0 changed since; from scry index\n"),
        "{before}"
    );

    // A new file of the index's language makes a refresh due (no indexed
    // file changed).
    let report = fx.root.join("src/report.rs");
    std::fs::write(fx.root.join("src/added.rs"), "pub fn added() {}\n").unwrap();
    common::process::wait_until("the background refresh", Duration::from_secs(300), || {
        mtime(&scip) > built
    });
    // The conversion follows the rename at once; `status` (a call: it
    // never waits for a refresh) shows the newer build and its outcome.
    let give_up = Instant::now() + Duration::from_secs(60);
    let after = loop {
        let t = status("status after the refresh");
        if t.contains("SCIP index refresh: last run") || Instant::now() > give_up {
            break t;
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    assert!(after.contains("SCIP index refresh: last run "), "{after}");
    assert!(after.contains(": rebuilt in "), "{after}");
    assert!(after.contains(" files covered, 0 changed since"), "{after}");
    // Said as the daemon's build, not the user's `scry index`.
    assert!(
        after.contains(" changed since; from the daemon's background refresh\n"),
        "{after}"
    );
    // doctor shows the index and the indexer (it starts and converts
    // nothing).
    let out = scry_in(base.path(), &fx.root, &["doctor"])
        .output()
        .unwrap();
    let doctor = String::from_utf8_lossy(&out.stdout);
    assert!(
        doctor.contains("\n  SCIP index: rust-analyzer ")
            && doctor.contains(
                " files covered, 0 changed since; from the daemon's background refresh; answers cold questions"
            ),
        "{doctor}"
    );
    assert!(doctor.contains("— rust-analyzer: installed, "), "{doctor}");

    // A failing indexer (first on the PATH of the calls that follow): the
    // calls are answered as ever, the failure is in status.
    let bin = base.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let fake = bin.join("rust-analyzer");
    std::fs::write(&fake, "#!/bin/sh\necho 'boom: cannot index' >&2\nexit 3\n").unwrap();
    common::process::make_executable(&fake);
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let status_failing = || {
        let out = scry_in(base.path(), &fx.root, &["status"])
            .env("PATH", &path)
            .output()
            .unwrap();
        let t = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "{t}");
        t
    };
    // One call in that environment before the change: a refresh runs in
    // the environment of the last call, and `doctor` is none (it only
    // reads the daemon's status), so without it a refresh could start
    // between the change and the next call with the working indexer.
    status_failing();
    let rebuilt = mtime(&scip);
    let text = std::fs::read_to_string(&report).unwrap();
    std::fs::write(&report, format!("// moved again\n{text}")).unwrap();
    let give_up = Instant::now() + Duration::from_secs(300);
    let failed = loop {
        // Each status is a call; the pauses between them are idle time.
        let t = status_failing();
        if t.contains("SCIP index refresh: last run ") && t.contains("boom: cannot index") {
            break t;
        }
        assert!(
            Instant::now() < give_up,
            "no failed refresh in status: {t}\ndaemon log:\n{}",
            common::process::daemon_log(base.path())
        );
        std::thread::sleep(Duration::from_millis(2500));
    };
    assert!(failed.contains(" failed after "), "{failed}");
    assert!(
        failed.contains("rust-analyzer failed (exit status: 3)"),
        "{failed}"
    );
    assert!(
        failed.contains(" files covered, 1 changed since"),
        "{failed}"
    );
    assert_eq!(mtime(&scip), rebuilt, "a failed refresh replaced the index");
    let _ = scry_in(base.path(), &fx.root, &["daemon", "stop"]).output();
    fx.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_index_answers_cold_equal_the_live_server() {
    let c = Case {
        lang: "python",
        indexer: "scip-python",
        main: "main.py",
        weight_line: 11,
        report: "report.py",
        inventory: "inventory.py",
        edited: "report.py",
        nested: &[("items", "Inventory"), ("restock", "Inventory")],
        more: &[],
    };
    if let Some((fx, _base)) = index_agrees_with_the_live_server(&c).await {
        fx.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_index_answers_cold_equal_the_live_server() {
    let c = Case {
        lang: "typescript",
        indexer: "scip-typescript",
        main: "src/main.ts",
        weight_line: 10,
        report: "src/report.ts",
        inventory: "src/inventory.ts",
        edited: "src/report.ts",
        nested: &[("items", "Inventory"), ("restock", "Inventory")],
        more: &[],
    };
    if let Some((fx, _base)) = index_agrees_with_the_live_server(&c).await {
        fx.shutdown().await;
    }
}

#[test]
fn scry_index_from_a_fifo_is_refused_at_once() {
    let base = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(ws.path().join("pipe.scip"))
        .status()
        .unwrap();
    assert!(made.success());
    let mut child = scry_in(base.path(), ws.path(), &["index", "--from", "pipe.scip"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // A generous bound: it must not wait for a writer.
    let until = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > until {
            let _ = child.kill();
            panic!("scry index --from FIFO blocked");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(err.contains("error[NOT_A_REGULAR_FILE]"), "{err}");
    assert!(
        err.contains("pipe.scip is not a regular file (a named pipe)"),
        "{err}"
    );
}

/// `scry index --output FILE` writes the index.scip it built to FILE (what
/// CI publishes per commit for `index.remote`), byte for byte the one it
/// converted; one root only.
#[test]
fn scry_index_writes_the_index_to_a_given_file() {
    if !scry_testkit::require_on_path("rust-analyzer", "scip_output") {
        return;
    }
    let ws = scry_testkit::temp_copy("rust");
    let root = scry_base::paths::canonical(ws.path()).unwrap();
    let base = tempfile::tempdir().unwrap();
    std::fs::write(base.path().join("config.json"), "{}").unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("ix.scip");
    let o = scry_in(base.path(), &root, &["index", "--output"])
        .arg(&out)
        .output()
        .expect("run scry index");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(stdout.contains("written to "), "{stdout}");
    let cached = scry_index::cache::dir_for(&base.path().join("cache"), &root).join("index.scip");
    let written = std::fs::read(&out).unwrap();
    assert!(!written.is_empty());
    assert_eq!(written, std::fs::read(cached).unwrap());
    // Nothing else left beside it.
    let beside: Vec<_> = std::fs::read_dir(out_dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(beside, [std::ffi::OsString::from("ix.scip")]);
    let o = scry_in(
        base.path(),
        &root,
        &["index", "--output", "x.scip", ".", "."],
    )
    .output()
    .expect("run scry index");
    assert_eq!(o.status.code(), Some(2));
}
