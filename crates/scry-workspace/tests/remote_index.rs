//! The remote SCIP index's fetch (`scry_workspace::remote_index`) against a
//! loopback server and a real git history: the nearest ancestor's index
//! is found, its digest checked, converted against the files as they were
//! at its commit and cached by commit (a second fetch needs no network);
//! a 404 everywhere, a tampered digest, a stall, a redirect to another
//! host, a server error, an index over the cap, garbage or a truncated
//! index each end as their problem, in time, with nothing installed; an
//! index naming paths outside the root has those documents refused.

use scry_testkit::git;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use prost::Message;
use scry_index::proto::{Document, Metadata, Occurrence, ScipIndex, ToolInfo};
use scry_model::RemoteProblem;
use scry_testkit::http::{Route, Server};
use scry_workspace::config::{RemoteHeader, RemoteIndex};
use scry_workspace::remote_index::{Git, fetch};
use sha2::Digest;

const A: &str = "fn alpha() {}\nfn beta() {\n    alpha();\n}\n";

/// A repository: commit A (`src/lib.rs` = [`A`]), then B with two lines
/// added above; returns (root, A's hash, B's hash).
fn history() -> (tempfile::TempDir, PathBuf, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let root = scry_base::paths::canonical(dir.path()).unwrap();
    git(&root, &["init", "-q"]);
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/lib.rs"), A).unwrap();
    git(&root, &["add", "."]);
    git(&root, &["commit", "-qm", "A"]);
    let a = git(&root, &["rev-parse", "HEAD"]);
    std::fs::write(root.join("src/lib.rs"), format!("// one\n// two\n{A}")).unwrap();
    git(&root, &["commit", "-qam", "B"]);
    let b = git(&root, &["rev-parse", "HEAD"]);
    (dir, root, a, b)
}

fn occ(line: i32, col: i32, end: i32, symbol: &str, roles: i32) -> Occurrence {
    Occurrence {
        range: vec![line, col, end],
        symbol: symbol.into(),
        symbol_roles: roles,
        ..Default::default()
    }
}

/// A SCIP index of [`A`] (and documents at `extra` paths).
fn scip(extra: &[&str]) -> Vec<u8> {
    let alpha = "rust-analyzer cargo t 0.1.0 alpha().";
    let beta = "rust-analyzer cargo t 0.1.0 beta().";
    let mut documents = vec![Document {
        relative_path: "src/lib.rs".into(),
        language: "rust".into(),
        occurrences: vec![
            occ(0, 3, 8, alpha, 1),
            occ(1, 3, 7, beta, 1),
            occ(2, 4, 9, alpha, 0),
        ],
        ..Default::default()
    }];
    for p in extra {
        documents.push(Document {
            relative_path: p.to_string(),
            language: "rust".into(),
            ..Default::default()
        });
    }
    ScipIndex {
        metadata: Some(Metadata {
            version: 0,
            tool_info: Some(ToolInfo {
                name: "rust-analyzer".into(),
                version: "test".into(),
                arguments: vec![],
            }),
            project_root: "file:///ci/checkout".into(),
            text_document_encoding: 0,
        }),
        documents,
        external_symbols: vec![],
    }
    .encode_to_vec()
}

fn sha256sum(bytes: &[u8]) -> Vec<u8> {
    let h: String = sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("{h}  index.scip\n").into_bytes()
}

fn remote(url: String) -> RemoteIndex {
    RemoteIndex {
        url,
        header: None,
        stall_ms: 700,
        ancestors: 10,
        max_bytes: scry_model::limits::MAX_REMOTE_INDEX_BYTES,
    }
}

/// Fetch with a fresh cache: the result, the cache, and whether it ended
/// before its deadline.
async fn fetch_fresh(
    root: &Path,
    r: &RemoteIndex,
) -> (
    Result<scry_workspace::remote_index::Fetched, RemoteProblem>,
    tempfile::TempDir,
) {
    let cache = tempfile::tempdir().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let got = fetch(cache.path(), root, true, r, deadline).await;
    assert!(
        Instant::now() < deadline,
        "the fetch ended after its deadline"
    );
    (got, cache)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_nearest_ancestors_index_is_fetched_verified_converted_at_its_commit_and_cached() {
    let (_d, root, a, b) = history();
    let server = Server::start();
    let index = scip(&[]);
    server.route(&format!("/ix/{a}.scip"), Route::Body(index.clone()));
    server.route(
        &format!("/ix/{a}.scip.sha256"),
        Route::Body(sha256sum(&index)),
    );
    let var = "SCRY_TEST_REMOTE_TOKEN_41";
    // SAFETY: this test's own variable, set before any thread reads it.
    unsafe { std::env::set_var(var, "Bearer s3cret") };
    let mut r = remote(format!("{}/ix/{{commit}}.scip", server.base()));
    r.header = Some(RemoteHeader {
        name: "Authorization".into(),
        env: var.into(),
    });
    let cache = tempfile::tempdir().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let got = fetch(cache.path(), &root, true, &r, deadline)
        .await
        .expect("A's index");
    assert_eq!((got.commit.as_str(), got.behind), (a.as_str(), 1));
    assert_eq!(got.index.meta().commit.as_deref(), Some(a.as_str()));
    // B's index was asked first (404), then A's and its digest; the header
    // carried the variable's value.
    let seen = server.seen();
    let paths: Vec<&str> = seen.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            format!("/ix/{b}.scip"),
            format!("/ix/{a}.scip"),
            format!("/ix/{a}.scip.sha256")
        ]
    );
    assert!(
        seen.iter()
            .all(|r| r.headers.get("authorization").map(String::as_str) == Some("Bearer s3cret"))
    );
    // Converted against A's text: the document is verified, with A's
    // positions, and stale against the working tree (its file changed).
    let doc = got
        .index
        .document("src/lib.rs")
        .unwrap()
        .expect("the document");
    assert!(doc.verified, "{doc:?}");
    assert_eq!(
        doc.hash,
        scry_index::store::stamp::content_hash(A.as_bytes())
    );
    assert!(!scry_index::cache::Fresh::default().is_fresh(&root, &doc));
    let occs = got.index.doc_occurrences(&doc, 0, 100).unwrap();
    assert_eq!(occs.iter().map(|o| o.line).collect::<Vec<_>>(), [0, 1, 2]);
    // The diff since A moves them two lines down; an uncommitted edit of
    // `beta`'s line makes it untranslatable, the others still move.
    let hunks = Git::new(&root, true)
        .hunks(&a, "src/lib.rs")
        .expect("hunks");
    assert_eq!((hunks.forward(0), hunks.forward(2)), (Some(2), Some(4)));
    std::fs::write(
        root.join("src/lib.rs"),
        "// one\n// two\nfn alpha() {}\nfn beta2() {\n    alpha();\n}\n",
    )
    .unwrap();
    let hunks = Git::new(&root, true)
        .hunks(&a, "src/lib.rs")
        .expect("hunks");
    assert_eq!(
        (hunks.forward(0), hunks.forward(1), hunks.forward(2)),
        (Some(2), None, Some(4))
    );

    // Cached by commit: a second fetch (another process would do the same)
    // asks the server for B's index only, and takes A's from the cache.
    drop(got);
    let before = server.seen().len();
    let again = fetch(cache.path(), &root, true, &r, deadline)
        .await
        .expect("cached");
    assert_eq!(again.commit, a);
    let asked: Vec<String> = server.seen()[before..]
        .iter()
        .map(|r| r.path.clone())
        .collect();
    assert_eq!(asked, [format!("/ix/{b}.scip")]);
    // Offline (nothing listens): the cached index still answers.
    let gone = Server::start();
    let offline = remote(format!("{}/ix/{{commit}}.scip", gone.base()));
    drop(gone);
    let again = fetch(cache.path(), &root, true, &offline, deadline)
        .await
        .expect("cached, offline");
    assert_eq!((again.commit.as_str(), again.behind), (a.as_str(), 1));
    // A digest that is absent (404) is no check.
    let server2 = Server::start();
    server2.route(&format!("/ix/{b}.scip"), Route::Body(index.clone()));
    let (got, _c) = fetch_fresh(
        &root,
        &remote(format!("{}/ix/{{commit}}.scip", server2.base())),
    )
    .await;
    assert_eq!(got.expect("no digest, no check").behind, 0);
    // A same-origin redirect is followed.
    server2.route("/moved/x.scip", Route::Body(index.clone()));
    server2.route(
        &format!("/r/{b}.scip"),
        Route::Redirect(format!("{}/moved/x.scip", server2.base())),
    );
    let (got, _c) = fetch_fresh(
        &root,
        &remote(format!("{}/r/{{commit}}.scip", server2.base())),
    )
    .await;
    assert_eq!(got.expect("followed").commit, b);
    // A file: URL.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(format!("{a}.scip")), &index).unwrap();
    let (got, _c) = fetch_fresh(
        &root,
        &remote(format!("file://{}/{{commit}}.scip", dir.path().display())),
    )
    .await;
    assert_eq!(got.expect("from a file").commit, a);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_failure_is_its_problem_in_time_and_nothing_is_installed() {
    let (_d, root, a, b) = history();
    let server = Server::start();
    let index = scip(&[]);
    let base = server.base();
    let url = |prefix: &str| remote(format!("{base}/{prefix}/{{commit}}.scip"));
    let nothing_installed = |cache: &Path| {
        for c in [&a, &b] {
            assert!(scry_index::cache::open_remote(cache, &root, c).is_none());
        }
        let left: Vec<_> =
            std::fs::read_dir(scry_index::cache::dir_for(cache, &root).join("remote"))
                .map(|d| d.flatten().map(|e| e.file_name()).collect())
                .unwrap_or_default();
        assert!(left.is_empty(), "left behind: {left:?}");
    };

    // No index for HEAD or any ancestor.
    let (got, cache) = fetch_fresh(&root, &url("none")).await;
    assert_eq!(
        got.err(),
        Some(RemoteProblem::NoIndex {
            tried: 2,
            timed_out: false
        })
    );
    nothing_installed(cache.path());

    // A tampered digest.
    server.route(&format!("/bad/{b}.scip"), Route::Body(index.clone()));
    server.route(
        &format!("/bad/{b}.scip.sha256"),
        Route::Body(sha256sum(b"something else")),
    );
    let (got, cache) = fetch_fresh(&root, &url("bad")).await;
    assert_eq!(got.err(), Some(RemoteProblem::DigestMismatch));
    nothing_installed(cache.path());
    server.route(
        &format!("/bad/{b}.scip.sha256"),
        Route::Body(b"not a digest\n".to_vec()),
    );
    let (got, _c) = fetch_fresh(&root, &url("bad")).await;
    assert_eq!(got.err(), Some(RemoteProblem::DigestUnreadable));

    // A stall (headers never come), and one mid-digest.
    server.route(&format!("/stall/{b}.scip"), Route::Stall);
    let (got, cache) = fetch_fresh(&root, &url("stall")).await;
    assert_eq!(got.err(), Some(RemoteProblem::Stalled { secs: 1 }));
    nothing_installed(cache.path());

    // A redirect to another host: not followed.
    server.route(
        &format!("/away/{b}.scip"),
        Route::Redirect(format!("http://localhost:{}/x.scip", server.port)),
    );
    let (got, cache) = fetch_fresh(&root, &url("away")).await;
    assert_eq!(
        got.err(),
        Some(RemoteProblem::Redirected {
            to: "localhost".into()
        })
    );
    nothing_installed(cache.path());

    // A header whose variable is not set: nothing is asked.
    let mut unset = url("none");
    unset.header = Some(RemoteHeader {
        name: "Authorization".into(),
        env: "SCRY_TEST_REMOTE_TOKEN_UNSET_41".into(),
    });
    let before = server.seen().len();
    let (got, _c) = fetch_fresh(&root, &unset).await;
    assert_eq!(
        got.err(),
        Some(RemoteProblem::HeaderUnset {
            env: "SCRY_TEST_REMOTE_TOKEN_UNSET_41".into()
        })
    );
    assert_eq!(server.seen().len(), before);

    // A server error.
    server.route(&format!("/err/{b}.scip"), Route::Status(500));
    let (got, _c) = fetch_fresh(&root, &url("err")).await;
    assert_eq!(got.err(), Some(RemoteProblem::Status { status: 500 }));

    // Over the cap.
    server.route(&format!("/big/{b}.scip"), Route::Body(index.clone()));
    let mut small = url("big");
    small.max_bytes = 16;
    let (got, cache) = fetch_fresh(&root, &small).await;
    assert_eq!(got.err(), Some(RemoteProblem::TooLarge { limit: 16 }));
    nothing_installed(cache.path());

    // Garbage, and a truncated index: refused by the local import's rules.
    for (name, body) in [
        ("garbage", b"\xff\xfe not protobuf at all".to_vec()),
        ("cut", index[..index.len() / 2].to_vec()),
    ] {
        server.route(&format!("/{name}/{b}.scip"), Route::Body(body));
        let (got, cache) = fetch_fresh(&root, &url(name)).await;
        match got {
            Err(RemoteProblem::Unusable { error }) => {
                assert!(error.contains("not a usable SCIP index"), "{name}: {error}")
            }
            Err(other) => panic!("{name}: {other:?}"),
            Ok(_) => panic!("{name}: accepted"),
        }
        nothing_installed(cache.path());
    }

    // Not a git checkout.
    let plain = tempfile::tempdir().unwrap();
    let plain = scry_base::paths::canonical(plain.path()).unwrap();
    let (got, _c) = fetch_fresh(&plain, &url("none")).await;
    assert_eq!(got.err(), Some(RemoteProblem::NoCommit));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn documents_outside_the_root_are_refused_in_a_fetched_index() {
    let (_d, root, _a, b) = history();
    let server = Server::start();
    let index = scip(&["../outside.rs", "/etc/passwd", "src/../../x.rs"]);
    server.route(&format!("/ix/{b}.scip"), Route::Body(index));
    let (got, _cache) = fetch_fresh(
        &root,
        &remote(format!("{}/ix/{{commit}}.scip", server.base())),
    )
    .await;
    let got = got.expect("the index, its hostile documents refused");
    assert_eq!(got.index.meta().refused, 3);
    assert_eq!(got.index.documents(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cache_keeps_the_last_fetched_commits_and_clears_old_downloads() {
    let (_d, root, _a, b) = history();
    let server = Server::start();
    server.route(&format!("/ix/{b}.scip"), Route::Body(scip(&[])));
    let cache = tempfile::tempdir().unwrap();
    let dir = scry_index::cache::dir_for(cache.path(), &root).join("remote");
    std::fs::create_dir_all(&dir).unwrap();
    let now = std::time::SystemTime::now();
    let aged = |name: &str, secs: u64| {
        let f = std::fs::File::create(dir.join(name)).unwrap();
        f.set_modified(now - Duration::from_secs(secs)).unwrap();
    };
    for i in 0..5u64 {
        aged(&format!("old{i}.db"), 36_000 - i * 60);
    }
    aged("fetch.1.1.scip.tmp", 3 * 24 * 3600);
    aged("fetch.1.2.scip.tmp", 60);
    let deadline = Instant::now() + Duration::from_secs(60);
    let r = remote(format!("{}/ix/{{commit}}.scip", server.base()));
    let got = fetch(cache.path(), &root, true, &r, deadline)
        .await
        .expect("HEAD's");
    assert_eq!(got.commit, b);
    let mut left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    let mut want = vec![
        format!("{b}.db"),
        "fetch.1.2.scip.tmp".to_string(),
        "old2.db".into(),
        "old3.db".into(),
        "old4.db".into(),
    ];
    want.sort();
    assert_eq!(left, want);
}
