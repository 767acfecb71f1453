//! Monorepos against the real servers, on the layouts of
//! `fixtures/monorepo` (a Cargo workspace of three members beside an
//! excluded crate that is a workspace of its own; a uv workspace; a folder
//! of packages with one `pyrightconfig.json`; npm and pnpm workspaces with
//! TypeScript project references, the pnpm one with a solution
//! `tsconfig.json`; a `go.work` of two modules; C with one compilation
//! database at the top): references asked at the declaration and at a use
//! in another package list the same, complete locations; one server per
//! language serves the workspace, its folders and what chose them in
//! `status`; what a server's folder leaves out of the workspace is said
//! (`Partial`), never an answer that only looks complete.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::{TEST_TIMEOUT, query, rel_path, server_available};
use scry_model::{Action, Answer, Body, Reason, RootChoice, RunningServer};
use scry_ops::Engine;
use scry_workspace::Workspace;

/// One layout's copy and its engine.
struct Layout {
    _dir: tempfile::TempDir,
    root: PathBuf,
    engine: Engine,
}

impl Layout {
    /// Copy `fixtures/monorepo/<name>`, let `prepare` finish it (what a
    /// package manager would have made: links in `node_modules`, a
    /// compilation database), and open it; `None` when `command` is not
    /// installed and servers are not required.
    fn open(name: &str, command: &str, test: &str, prepare: impl FnOnce(&Path)) -> Option<Layout> {
        let dir = scry_testkit::temp_copy(&format!("monorepo/{name}"));
        let root = scry_base::paths::canonical(dir.path()).expect("canonical copy");
        prepare(&root);
        let ws = Workspace::open(&root).expect("open workspace");
        if !server_available(&ws, command, test) {
            return None;
        }
        Some(Layout {
            _dir: dir,
            root,
            engine: Engine::new(Arc::new(ws)),
        })
    }

    async fn refs(&self, path: &str, symbol: &str) -> Answer {
        let q = query(Action::References)
            .path(self.root.join(path))
            .symbol(symbol)
            .timeout(TEST_TIMEOUT)
            .build();
        match self.engine.run_query(&q).await {
            Ok(a) => a,
            Err(e) => panic!("refs {path} {symbol}: {}: {e}", e.code()),
        }
    }

    /// The locations of an answer as `path:line:col`.
    fn locs(&self, a: &Answer) -> BTreeSet<String> {
        match &a.body {
            Body::Locations { locations } => locations
                .iter()
                .map(|l| format!("{}:{}:{}", rel_path(&l.path, &self.root), l.line, l.col))
                .collect(),
            other => panic!("expected locations, got {other:?}"),
        }
    }

    /// References at both ends: the same complete set, from the server,
    /// with no partial view.
    async fn same_from_both_ends(&self, ends: [(&str, &str); 2], want: &[&str]) {
        let want: BTreeSet<String> = want.iter().map(|s| s.to_string()).collect();
        for (path, symbol) in ends {
            let a = self.refs(path, symbol).await;
            assert!(
                a.precision.is_none(),
                "{path}: not the server's answer: {a:?}"
            );
            assert_eq!(
                self.locs(&a),
                want,
                "references of `{symbol}` asked in {path}"
            );
            assert!(a.partial.is_none(), "{path}: partial: {:?}", a.partial);
        }
    }

    /// The running processes of server `id` (`status`).
    async fn running(&self, id: &str) -> Vec<RunningServer> {
        let q = query(Action::Status).build();
        let a = self.engine.run_query(&q).await.expect("status");
        let Body::Status(s) = a.body else {
            panic!("status answered {:?}", a.body)
        };
        s.servers
            .into_iter()
            .find(|p| p.id == id)
            .map(|p| p.running)
            .unwrap_or_default()
    }

    /// One process of `id`, serving exactly `folders` (relative), the
    /// first chosen by `first_by` (relative to the root).
    async fn one_server(&self, id: &str, folders: &[&str], first_by: &str) {
        let run = self.running(id).await;
        assert_eq!(run.len(), 1, "{id}: one process for the workspace: {run:?}");
        let got: Vec<String> = run[0]
            .folders
            .iter()
            .map(|f| rel_or_dot(&f.path, &self.root))
            .collect();
        assert_eq!(got, folders, "{id}'s folders");
        match &run[0].folders[0].chosen_by {
            RootChoice::Workspace { file, .. } => {
                assert_eq!(rel_path(file, &self.root), first_by)
            }
            other => panic!("{id}: its root chosen by {other:?}, not {first_by}"),
        }
    }

    async fn shutdown(self) {
        let _ =
            tokio::time::timeout(std::time::Duration::from_secs(15), self.engine.shutdown()).await;
    }
}

fn rel_or_dot(p: &Path, root: &Path) -> String {
    let r = rel_path(p, root);
    if r.is_empty() { ".".into() } else { r }
}

/// A symbolic link `at` → `to` (what npm and pnpm make for a workspace
/// package).
fn link(at: &Path, to: &str) {
    std::fs::create_dir_all(at.parent().expect("a parent")).expect("create dir");
    #[cfg(unix)]
    std::os::unix::fs::symlink(to, at).expect("symlink");
    #[cfg(windows)]
    std::os::windows::fs::symlink_dir(to, at).expect("symlink");
}

/// The files a partial answer says lie outside the server's view.
fn outside_files(a: &Answer, root: &Path) -> Vec<String> {
    match &a.partial {
        Some(Reason::OutsideServerView { shown, .. }) => {
            shown.iter().map(|p| rel_path(p, root)).collect()
        }
        other => panic!("expected a partial view, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cargo_workspace_one_rust_analyzer_and_the_excluded_crate_said() {
    let Some(l) = Layout::open("cargo", "rust-analyzer", "cargo_workspace", |_| {}) else {
        return;
    };
    let want = [
        "crates/app/src/main.rs:1:15",
        "crates/app/src/main.rs:4:13",
        "crates/core/src/lib.rs:2:8",
        "crates/core/src/lib.rs:7:5",
        "crates/tools/src/lib.rs:2:15",
        "crates/tools/src/lib.rs:2:39",
    ];
    let want: BTreeSet<String> = want.iter().map(|s| s.to_string()).collect();
    for (path, symbol) in [
        ("crates/core/src/lib.rs", "shared_helper"),
        ("crates/app/src/main.rs", "shared_helper"),
    ] {
        let a = l.refs(path, symbol).await;
        assert_eq!(l.locs(&a), want, "references asked in {path}");
        // The excluded crate, a workspace of its own, uses it too: said.
        assert_eq!(
            outside_files(&a, &l.root),
            ["scratch/src/main.rs"],
            "{path}"
        );
    }
    // Asked there, the same process serves it as a second folder.
    let a = l.refs("scratch/src/main.rs", "shared_helper").await;
    assert!(l.locs(&a).contains("scratch/src/main.rs:3:30"), "{a:?}");
    l.one_server("rust-analyzer", &[".", "scratch"], "Cargo.toml")
        .await;
    l.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_uv_workspace_and_a_root_pyrightconfig() {
    let want = [
        "packages/app/src/app/main.py:1:22",
        "packages/app/src/app/main.py:5:12",
        "packages/app/src/app/main.py:5:32",
        "packages/core/src/core_lib/__init__.py:1:5",
        "packages/core/src/core_lib/__init__.py:7:12",
    ];
    let ends = [
        ("packages/core/src/core_lib/__init__.py", "shared_helper"),
        ("packages/app/src/app/main.py", "shared_helper"),
    ];
    for (layout, chosen_by) in [("uv", "pyproject.toml"), ("pyright", "pyrightconfig.json")] {
        let Some(l) = Layout::open(layout, "pyright-langserver", "python_workspaces", |_| {})
        else {
            return;
        };
        l.same_from_both_ends(ends, &want).await;
        l.one_server("pyright", &["."], chosen_by).await;
        l.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_npm_and_pnpm_workspaces() {
    let want = [
        "packages/app/src/main.ts:1:10",
        "packages/app/src/main.ts:4:10",
        "packages/app/src/main.ts:4:29",
        "packages/core/src/index.ts:2:17",
        "packages/core/src/index.ts:7:10",
    ];
    let ends = [
        ("packages/core/src/index.ts", "sharedHelper"),
        ("packages/app/src/main.ts", "sharedHelper"),
    ];
    // npm: links in the root's node_modules, no solution tsconfig (a
    // file of the other project is opened for the question).
    let npm = |root: &Path| link(&root.join("node_modules/@fx/core"), "../../packages/core");
    // pnpm: links in the package's node_modules, a solution tsconfig.
    let pnpm = |root: &Path| {
        link(
            &root.join("packages/app/node_modules/@fx/core"),
            "../../../core",
        )
    };
    type Prepare<'a> = &'a dyn Fn(&Path);
    let prepared: [(&str, Prepare, &str); 2] = [
        ("npm", &npm, "package.json"),
        ("pnpm", &pnpm, "pnpm-workspace.yaml"),
    ];
    for (layout, prepare, chosen_by) in prepared {
        let Some(l) = Layout::open(
            layout,
            "typescript-language-server",
            "typescript_workspaces",
            prepare,
        ) else {
            return;
        };
        l.same_from_both_ends(ends, &want).await;
        l.one_server("typescript-language-server", &["."], chosen_by)
            .await;
        l.shutdown().await;
    }
}

/// Without a workspace file each package is its own root, and
/// typescript-language-server (no workspace folders) runs once per
/// package: the answer from one says what the other holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_packages_without_a_workspace_say_what_they_miss() {
    let Some(l) = Layout::open(
        "npm",
        "typescript-language-server",
        "ts_no_workspace",
        |root| {
            link(&root.join("node_modules/@fx/core"), "../../packages/core");
            std::fs::write(
                root.join("package.json"),
                r#"{"name": "fx", "private": true}"#,
            )
            .expect("write package.json");
        },
    ) else {
        return;
    };
    let a = l.refs("packages/core/src/index.ts", "sharedHelper").await;
    assert_eq!(
        l.locs(&a),
        [
            "packages/core/src/index.ts:2:17",
            "packages/core/src/index.ts:7:10"
        ]
        .map(String::from)
        .into(),
    );
    assert_eq!(outside_files(&a, &l.root), ["packages/app/src/main.ts"]);
    let a = l.refs("packages/app/src/main.ts", "sharedHelper").await;
    assert!(l.locs(&a).contains("packages/app/src/main.ts:4:29"));
    assert_eq!(l.running("typescript-language-server").await.len(), 2);
    l.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn go_work_of_two_modules() {
    let Some(l) = Layout::open("go", "gopls", "go_work", |_| {}) else {
        return;
    };
    l.same_from_both_ends(
        [
            ("core/core.go", "SharedHelper"),
            ("app/main.go", "SharedHelper"),
        ],
        &[
            "app/main.go:10:19",
            "app/main.go:10:43",
            "core/core.go:5:6",
            "core/core.go:11:9",
        ],
    )
    .await;
    l.one_server("gopls", &["."], "go.work").await;
    l.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clangd_with_one_compilation_database() {
    let cdb = |root: &Path| {
        let entry = |dir: &str, file: &str, include: &str| {
            serde_json::json!({
                "directory": root.join(dir),
                "file": file,
                "arguments": ["cc", "-std=c11", include, "-c", file],
            })
        };
        let entries = serde_json::json!([
            entry("libs/core", "core.c", "-I."),
            entry("app", "main.c", "-I../libs/core"),
        ]);
        std::fs::write(root.join("compile_commands.json"), entries.to_string())
            .expect("write compile_commands.json");
    };
    let Some(l) = Layout::open("c", "clangd", "clangd_cdb", cdb) else {
        return;
    };
    l.same_from_both_ends(
        [
            ("libs/core/core.c", "shared_helper"),
            ("app/main.c", "shared_helper"),
        ],
        &[
            "app/main.c:5:20",
            "app/main.c:5:40",
            "libs/core/core.c:3:5",
            "libs/core/core.c:5:31",
            "libs/core/core.h:3:5",
        ],
    )
    .await;
    l.one_server("clangd", &["."], "compile_commands.json")
        .await;
    l.shutdown().await;
}

/// `scry index` builds one index for the workspace: each project root's
/// indexer run (the Cargo workspace, the excluded crate's own workspace;
/// the npm workspace's packages as scip-typescript's projects), its paths
/// joined under the workspace root.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_index_for_the_workspace_whatever_its_projects() {
    for (layout, indexer, want) in [
        (
            "cargo",
            "rust-analyzer",
            &[
                "crates/app/src/main.rs",
                "crates/core/src/lib.rs",
                "scratch/src/main.rs",
            ][..],
        ),
        (
            "npm",
            "scip-typescript",
            &["packages/app/src/main.ts", "packages/core/src/index.ts"][..],
        ),
    ] {
        let dir = scry_testkit::temp_copy(&format!("monorepo/{layout}"));
        let root = scry_base::paths::canonical(dir.path()).expect("canonical copy");
        let ws = Workspace::open(&root).expect("open workspace");
        if !server_available(&ws, indexer, "one_index_for_the_workspace") {
            return;
        }
        let cache = tempfile::tempdir().expect("cache dir");
        let mut said = Vec::new();
        let ix = scry_workspace::indexing::build(
            cache.path(),
            &ws,
            &root,
            scry_workspace::indexing::BuildOptions {
                timeout: std::time::Duration::from_secs(300),
                background: false,
                cancel: None,
                progress: &mut |p| said.push(format!("{p:?}")),
            },
        )
        .unwrap_or_else(|e| panic!("{layout}: {e}"));
        let paths: BTreeSet<String> = (0..ix.documents())
            .map(|i| ix.doc_at(i).expect("document").path)
            .collect();
        for w in want {
            assert!(
                paths.contains(*w),
                "{layout}: {w} not in {paths:?} ({said:?})"
            );
        }
        assert!(
            !said.iter().any(|s| s.starts_with("Failed")),
            "{layout}: {said:?}"
        );
    }
}
