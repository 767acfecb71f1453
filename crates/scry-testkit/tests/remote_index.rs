//! The remote SCIP index end to end (issue 41): a real project
//! (`fixtures/rust`) in a real git history, its index built by
//! `rust-analyzer scip` at commit A and served by a loopback server; B and
//! C add lines above functions and change one, and an edit is left
//! uncommitted. With fresh state and no language server on the call's
//! `PATH`, definitions and references are answered from A's index at the
//! working tree's positions, labelled with where it came from; a
//! reference on a line changed since A is dropped and the answer says so;
//! a tampered index, a 404, a stall and a redirect to another host each
//! end in time with a note and the syntactic answer.
//!
#![cfg(unix)]
//! A missing `rust-analyzer` (to build A's index) skips the test, or fails
//! it under `SCRY_REQUIRE_SERVERS=1`.
#![cfg(unix)]

use scry_testkit::git;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use scry_model::{Action, Answer, Body, Precision, Query};
use scry_ops::Engine;
use scry_testkit::http::{Route, Server};
use scry_workspace::Workspace;
use scry_workspace::env::{CallContext, CallEnv};
use sha2::Digest;

/// Replace `from` by `to` in `root/rel` (exactly once).
fn edit(root: &Path, rel: &str, from: &str, to: &str) {
    let p = root.join(rel);
    let text = std::fs::read_to_string(&p).unwrap();
    assert_eq!(text.matches(from).count(), 1, "{rel}: {from:?}");
    std::fs::write(&p, text.replacen(from, to, 1)).unwrap();
}

/// The 1-based lines of `rel` in the working tree that `pred` holds for.
fn lines_where(root: &Path, rel: &str, pred: impl Fn(&str) -> bool) -> Vec<u32> {
    std::fs::read_to_string(root.join(rel))
        .unwrap()
        .lines()
        .enumerate()
        .filter(|(_, l)| pred(l))
        .map(|(i, _)| i as u32 + 1)
        .collect()
}

/// Where an answer points: (relative path, line), sorted.
fn places(root: &Path, a: &Answer) -> Vec<(String, u32)> {
    let Body::Locations { locations } = &a.body else {
        panic!("not locations: {a:?}")
    };
    let mut v: Vec<(String, u32)> = locations
        .iter()
        .map(|l| {
            let rel = l.path.strip_prefix(root).unwrap_or(&l.path);
            (rel.display().to_string(), l.line)
        })
        .collect();
    v.sort();
    v
}

/// Every location's text in the working tree starts with `name` at its
/// column: the positions are the working tree's, not A's.
fn all_name(a: &Answer, name: &str) {
    let Body::Locations { locations } = &a.body else {
        panic!("not locations: {a:?}")
    };
    for l in locations {
        let text = std::fs::read_to_string(&l.path).unwrap();
        let line = text.lines().nth(l.line as usize - 1).unwrap_or("");
        let at: String = line.chars().skip(l.col as usize - 1).collect();
        assert!(
            at.starts_with(name),
            "{}:{}:{} is {line:?}",
            l.path.display(),
            l.line,
            l.col
        );
    }
}

fn notes(root: &Path, a: &Answer) -> String {
    a.notes
        .iter()
        .map(|n| scry_render::reason_text(n, root))
        .collect::<Vec<_>>()
        .join("\n")
}

fn q(action: Action, path: &str, symbol: &str, line: Option<u32>, secs: u64) -> Query {
    let mut q = Query::new(action);
    q.path = Some(PathBuf::from(path));
    q.symbol = Some(symbol.into());
    q.line = line;
    q.timeout = Some(Duration::from_secs(secs));
    q
}

/// The call's environment: per-user places under `base`, the user's
/// configuration `config`, and a `PATH` with git but no language server.
fn context(base: &Path, config: &str) -> CallContext {
    let dir = base.join(format!("user-{}", config.len() ^ rand_tag()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.json"), config).unwrap();
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let git_bin = which("git").expect("git on PATH");
    std::os::unix::fs::symlink(&git_bin, bin.join("git")).unwrap();
    let vars = [
        ("SCRY_STATE_DIR", dir.join("state")),
        ("SCRY_CONFIG", dir.join("config.json")),
        ("SCRY_CACHE_DIR", dir.join("cache")),
        ("PATH", bin.clone()),
    ]
    .map(|(k, v)| (k.to_string(), v.display().to_string()));
    CallContext {
        env: Arc::new(CallEnv::from_vars(vars)),
        client: "t".into(),
    }
}

fn rand_tag() -> usize {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(1);
    N.fetch_add(1, Ordering::Relaxed) << 20
}

fn which(cmd: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(cmd))
        .find(|p| p.is_file())
}

/// A fresh engine on `root` in `ctx`, asking `q`: the answer, and whether
/// it came before the question's deadline.
async fn ask(ctx: &CallContext, root: &Path, queries: &[Query]) -> Vec<(Answer, bool)> {
    let root = root.to_path_buf();
    let queries = queries.to_vec();
    scry_workspace::env::scope(ctx.clone(), async move {
        let ws = Workspace::open(&root).expect("open workspace");
        let cache = scry_base::dirs::cache().expect("a cache dir");
        let engine = Engine::with_syntax_cache(Arc::new(ws), Some(&cache));
        let mut out = Vec::new();
        for q in &queries {
            let started = Instant::now();
            let a = engine.run_query(q).await.expect("an answer");
            // Ends before its deadline (with the engine's grace to render).
            let in_time = started.elapsed() < q.timeout.unwrap() + Duration::from_secs(1);
            out.push((a, in_time));
        }
        engine.shutdown().await;
        out
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fetched_index_of_an_earlier_commit_answers_for_the_working_tree() {
    let test = "remote_index_e2e";
    if !scry_testkit::require_on_path("rust-analyzer", test) {
        return;
    }
    let (_t, base) = scry_testkit::canonical_tempdir();
    let root = base.join("ws");
    scry_testkit::copy_fixture_to("rust", &root);
    let root = scry_base::paths::canonical(&root).unwrap();
    std::fs::write(root.join(".gitignore"), "target/\nCargo.lock\n").unwrap();
    git(&root, &["init", "-q"]);
    git(&root, &["add", "."]);
    git(&root, &["commit", "-qm", "A"]);
    let commit_a = git(&root, &["rev-parse", "HEAD"]);
    let a = commit_a.as_str();

    // A's index, as CI would build it.
    let scip = base.join("a.scip");
    let ra = which("rust-analyzer").unwrap();
    let out = Command::new(&ra)
        .args(["scip", "."])
        .arg("--output")
        .arg(&scip)
        .current_dir(&root)
        .output()
        .expect("rust-analyzer scip");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let index = std::fs::read(&scip).unwrap();

    // B: lines above `item_weight`. C: lines above `restock`, and
    // `total_weight`'s body changed (its call of `item_weight` with it).
    edit(
        &root,
        "src/inventory.rs",
        "pub fn item_weight",
        "// one\n// two\n// three\npub fn item_weight",
    );
    git(&root, &["commit", "-qam", "B"]);
    edit(
        &root,
        "src/inventory.rs",
        "    pub fn restock",
        "    // four\n    // five\n    pub fn restock",
    );
    edit(
        &root,
        "src/inventory.rs",
        "inv.items.iter().map(|&i| item_weight(i)).sum()",
        "inv.items.iter().map(|&i| item_weight(i) + 0).sum()",
    );
    // ... and report.rs no longer calls total_weight on its line 8.
    edit(
        &root,
        "src/report.rs",
        "let w = total_weight(inv);",
        "let w = inv.items.len();",
    );
    git(&root, &["commit", "-qam", "C"]);
    // Uncommitted: two lines at the top of main.rs.
    edit(
        &root,
        "src/main.rs",
        "//! File C.\n",
        "//! File C.\n// six\n// seven\n",
    );

    let server = Server::start();
    let digest: String = sha2::Sha256::digest(&index)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    server.route(&format!("/ok/{a}.scip"), Route::Body(index.clone()));
    server.route(
        &format!("/ok/{a}.scip.sha256"),
        Route::Body(format!("{digest}  index.scip\n").into_bytes()),
    );
    let config = |prefix: &str| {
        format!(
            r#"{{"index": {{"remote": {{"url": "{}/{prefix}/{{commit}}.scip", "stallMs": 1000}}}}}}"#,
            server.base()
        )
    };

    // From A's index, at the working tree's positions.
    let ctx = context(&base, &config("ok"));
    let asked = [
        q(
            Action::References,
            "src/report.rs",
            "total_weight",
            Some(3),
            30,
        ),
        q(Action::Definition, "src/report.rs", "restock", Some(6), 30),
        q(
            Action::References,
            "src/inventory.rs",
            "item_weight",
            None,
            30,
        ),
        q(Action::Definition, "src/main.rs", "total_weight", None, 30),
    ];
    let mut status = Query::new(Action::Status);
    status.timeout = Some(Duration::from_secs(30));
    let mut answers = ask(&ctx, &root, &[asked.to_vec(), vec![status]].concat()).await;
    // `status` names the commit, the remote, the fetch's age.
    let (status, _) = answers.pop().unwrap();
    let text = scry_render::render_text(&status, &root, &Default::default());
    assert!(
        text.contains(&format!(" ago at {}; ", &commit_a[..12])),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "from the remote index (127.0.0.1:{}), fetched ",
            server.port
        )) && text.contains(" ago, 2 commits behind"),
        "{text}"
    );
    for (a, in_time) in &answers {
        assert!(in_time, "late: {a:?}");
        assert_eq!(
            a.precision,
            Some(Precision::Index),
            "{a:?}\n{}",
            notes(&root, a)
        );
        let label = scry_render::index_label(a.from_index.as_ref().unwrap(), &root);
        assert!(
            label.starts_with(&format!(
                "SCIP index @{} (2 commits behind; rust-analyzer ",
                &commit_a[..12]
            )),
            "{label}"
        );
        let from = format!("; fetched from 127.0.0.1:{})", server.port);
        assert!(label.ends_with(&from), "{label}");
    }
    // total_weight: its definition (inventory.rs, moved by B and C), its
    // uses in main.rs (moved by the uncommitted edit) and report.rs's
    // `use`; its call on the line C rewrote without it is left out, and
    // the answer says so.
    let refs = &answers[0].0;
    all_name(refs, "total_weight");
    // Its uses in code (not in a comment or a string).
    let in_code = |l: &str| {
        l.contains("total_weight") && !l.trim_start().starts_with("//") && !l.contains("println!")
    };
    let mut want: Vec<(String, u32)> = Vec::new();
    for f in ["src/inventory.rs", "src/main.rs", "src/report.rs"] {
        for line in lines_where(&root, f, in_code) {
            want.push((f.to_string(), line));
        }
    }
    want.sort();
    assert_eq!(places(&root, refs), want, "{refs:?}");
    let n = notes(&root, refs);
    assert!(
        n.contains("were moved to their lines now across the git diff"),
        "{n}"
    );
    assert!(
        n.contains("; 1 on lines changed since were left out"),
        "{n}"
    );
    // restock's definition, moved by C.
    let def = &answers[1].0;
    all_name(def, "restock");
    assert_eq!(
        places(&root, def),
        [(
            "src/inventory.rs".to_string(),
            lines_where(&root, "src/inventory.rs", |l| l.contains("pub fn restock"))[0]
        )]
    );
    // item_weight: its definition moved; its use on the line C changed
    // (still calling it) found again by name there, and the answer says so.
    let iw = &answers[2].0;
    all_name(iw, "item_weight");
    assert_eq!(
        places(&root, iw),
        lines_where(&root, "src/inventory.rs", |l| l.contains("item_weight"))
            .into_iter()
            .map(|l| ("src/inventory.rs".to_string(), l))
            .collect::<Vec<_>>()
    );
    let n = notes(&root, iw);
    assert!(
        n.contains("; 1 on lines changed since were found again by name on the line they became"),
        "{n}"
    );
    assert!(!n.contains("left out"), "{n}");
    // Asked in the file with an uncommitted edit, by name.
    let d = &answers[3].0;
    all_name(d, "total_weight");
    assert_eq!(
        places(&root, d),
        [(
            "src/inventory.rs".to_string(),
            lines_where(&root, "src/inventory.rs", |l| l
                .contains("pub fn total_weight"))[0]
        )]
    );

    // `doctor` names the remote, what was fetched, and that it answers.
    let r = root.clone();
    let doctor = scry_workspace::env::scope(ctx.clone(), async move {
        let ws = Workspace::open(&r).unwrap();
        let cache = scry_base::dirs::cache().unwrap();
        scry_ops::engine::indexed::doctor_indexes(Some(&cache), &ws.config(), &r)
    })
    .await;
    match doctor.as_slice() {
        [
            scry_model::DoctorIndex::Remote {
                url,
                cached: 1,
                newest: Some((commit, _)),
                answers: true,
            },
        ] => {
            assert_eq!(commit, &commit_a);
            assert_eq!(url, &format!("{}/ok/{{commit}}.scip", server.base()));
        }
        other => panic!("{other:?}"),
    }

    // A second engine (another process would do the same) takes A's index
    // from the cache: the server is asked only for HEAD's.
    let before = server.seen().len();
    let again = ask(&ctx, &root, &asked[1..2]).await;
    assert_eq!(again[0].0.precision, Some(Precision::Index));
    let paths: Vec<String> = server.seen()[before..]
        .iter()
        .map(|r| r.path.clone())
        .collect();
    assert!(paths.iter().all(|p| !p.contains(a)), "{paths:?}");

    // Each failure: in time, the syntactic answer, and a note saying why.
    server.route(&format!("/bad/{a}.scip"), Route::Body(index.clone()));
    server.route(
        &format!("/bad/{a}.scip.sha256"),
        Route::Body(format!("{}  index.scip\n", "0".repeat(64)).into_bytes()),
    );
    server.route(
        &format!("/stall/{}.scip", git(&root, &["rev-parse", "HEAD"])),
        Route::Stall,
    );
    server.route(
        &format!("/away/{}.scip", git(&root, &["rev-parse", "HEAD"])),
        Route::Redirect(format!("http://localhost:{}/ok/{a}.scip", server.port)),
    );
    for (prefix, says) in [
        (
            "bad",
            "does not match the SHA-256 its .sha256 file gives: refused",
        ),
        ("none", "has no index for HEAD or the 2 commit(s) before it"),
        ("stall", "sent nothing for 1 s; the fetch was given up"),
        (
            "away",
            "redirected to another host (localhost); not followed",
        ),
    ] {
        let ctx = context(&base, &config(prefix));
        // The note comes once the search ended: ask until it does.
        let mut said = String::new();
        for _ in 0..10 {
            let mut short = asked[1].clone();
            short.timeout = Some(Duration::from_secs(6));
            let got = ask(&ctx, &root, &[short]).await;
            let (a, in_time) = &got[0];
            assert!(in_time, "{prefix}: late: {a:?}");
            assert_eq!(a.precision, Some(Precision::Syntactic), "{prefix}: {a:?}");
            assert!(!places(&root, a).is_empty(), "{prefix}: {a:?}");
            said = notes(&root, a);
            if said.contains(says) {
                break;
            }
            assert!(
                said.contains("is being fetched in the background"),
                "{prefix}: {said}"
            );
        }
        assert!(said.contains(says), "{prefix}: {said}");
        assert!(
            said.contains(&format!(
                "the remote SCIP index ({}/{prefix}/{{commit}}.scip)",
                server.base()
            )),
            "{said}"
        );
    }
}
