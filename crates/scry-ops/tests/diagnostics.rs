//! `diagnostics` against real language servers and linters, on copies of
//! `fixtures/` in temporary directories. A missing tool skips its test with
//! a message, unless `SCRY_REQUIRE_SERVERS=1` (CI), where it fails.
//!
//! Timings are printed (`cargo test -- --nocapture`) so the report can say
//! how long each server takes to give fresh diagnostics.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use scry_model::{
    Action, Answer, Body, Diagnostic, DiagnosticEntry, DiagnosticsReport, ProviderOutcome, Query,
    Severity, SeverityFilter,
};
use scry_ops::Engine;
use scry_workspace::Workspace;

use scry_testkit::fixtures_dir as fixtures;

struct Fx {
    _dir: tempfile::TempDir,
    root: PathBuf,
    engine: Engine,
}

impl Fx {
    /// A copy of `fixtures/<rel>` with one engine; `None` when a command
    /// is missing (and servers are not required).
    fn open(rel: &str, needs: &[&str], test: &str) -> Option<Fx> {
        Fx::at(scry_testkit::temp_copy(rel), needs, test, false)
    }

    /// `trusted`: the test's own project configuration names commands,
    /// which run only in a trusted workspace.
    fn at(dir: tempfile::TempDir, needs: &[&str], test: &str, trusted: bool) -> Option<Fx> {
        let ws = if trusted {
            Workspace::open_trusted(dir.path()).unwrap()
        } else {
            Workspace::open(dir.path()).unwrap()
        };
        for c in needs {
            if ws.installed(c).is_none() {
                scry_testkit::skip_or_fail(format_args!("{test}: `{c}` is not installed"));
                return None;
            }
        }
        let root = ws.root().to_path_buf();
        Some(Fx {
            _dir: dir,
            root,
            engine: Engine::new(Arc::new(ws)),
        })
    }

    fn write(&self, rel: &str, text: &str) {
        std::fs::write(self.root.join(rel), text).unwrap();
    }

    async fn diag(&self, targets: &[&str], filter: SeverityFilter) -> (DiagnosticsReport, Answer) {
        let mut q = Query::new(Action::Diagnostics);
        q.targets = targets.iter().map(PathBuf::from).collect();
        q.severity = Some(filter);
        q.timeout = Some(Duration::from_secs(20));
        let t = Instant::now();
        let a = self.engine.run_query(&q).await.expect("diagnostics answer");
        let Body::Diagnostics(r) = &a.body else {
            panic!("not a diagnostics body: {:?}", a.body)
        };
        eprintln!(
            "diagnostics {targets:?}: {} ms, providers {:?}",
            t.elapsed().as_millis(),
            r.providers
                .iter()
                .map(|p| format!("{} {:?} {} ms", p.id, p.outcome, p.elapsed_ms))
                .collect::<Vec<_>>()
        );
        (r.clone(), a)
    }
}

/// Every diagnostic of a report: entries, grouped ones (main only) and
/// secondaries.
fn all(r: &DiagnosticsReport) -> Vec<&Diagnostic> {
    let mut v = Vec::new();
    for e in &r.entries {
        v.push(&e.diagnostic);
        v.extend(e.secondary.iter());
    }
    v
}

fn find<'a>(
    r: &'a DiagnosticsReport,
    file: &str,
    pred: impl Fn(&Diagnostic) -> bool,
) -> Option<&'a Diagnostic> {
    all(r)
        .into_iter()
        .find(|d| d.loc.path.ends_with(file) && pred(d))
}

fn outcome(r: &DiagnosticsReport, id: &str) -> Option<ProviderOutcome> {
    r.providers
        .iter()
        .find(|p| p.id == id)
        .map(|p| p.outcome.clone())
}

fn entry_for(
    r: &DiagnosticsReport,
    pred: impl Fn(&DiagnosticEntry) -> bool,
) -> Option<&DiagnosticEntry> {
    r.entries.iter().find(|e| pred(e))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_pyright_and_ruff_merged_with_cascades_and_fresh() {
    let Some(fx) = Fx::open(
        "diagnostics/python",
        &["pyright-langserver", "ruff"],
        "python_pyright_and_ruff",
    ) else {
        return;
    };
    let (r, _) = fx.diag(&[], SeverityFilter::Warning).await;
    assert_eq!(
        outcome(&r, "pyright"),
        Some(ProviderOutcome::Checked),
        "{r:#?}"
    );
    assert_eq!(
        outcome(&r, "ruff"),
        Some(ProviderOutcome::Checked),
        "{r:#?}"
    );
    assert!(r.pending.is_empty(), "{:?}", r.pending);
    // the unresolved import is the root, ruff's unused import beneath it
    let root = entry_for(&r, |e| {
        e.diagnostic.message.contains("missing_helpers") && e.diagnostic.provider == "pyright"
    })
    .unwrap_or_else(|| panic!("no unresolved import: {r:#?}"));
    assert_eq!(root.diagnostic.severity, Severity::Error);
    assert_eq!((root.diagnostic.loc.line, root.diagnostic.loc.col), (1, 6));
    assert_eq!(
        root.diagnostic.loc.text.as_deref(),
        Some("from missing_helpers import tidy, scrub")
    );
    assert!(
        root.secondary
            .iter()
            .any(|s| s.provider == "ruff" && s.code.as_deref() == Some("F401")),
        "{root:#?}"
    );
    // the type error, at the string list
    let ty = find(&r, "app.py", |d| {
        d.provider == "pyright" && d.loc.line == 12
    })
    .unwrap_or_else(|| panic!("no type error: {r:#?}"));
    assert_eq!(ty.severity, Severity::Error);
    assert_eq!(ty.loc.col, 20);
    assert!(!ty.message.contains('\n'));
    // errors first
    assert_eq!(r.entries[0].diagnostic.severity, Severity::Error);
    assert!(find(&r, "clean.py", |_| true).is_none());
    assert!(r.errors >= 2 && r.files_with_problems == 1, "{r:#?}");

    // Freshness: introduce an error on disk → it appears; fix it → gone.
    fx.write(
        "clean.py",
        "def double(n: int) -> int:\n    return n * \"2\" + undefined_name\n",
    );
    let t = Instant::now();
    let (r, _) = fx.diag(&["clean.py"], SeverityFilter::Warning).await;
    eprintln!(
        "pyright+ruff fresh after change: {} ms",
        t.elapsed().as_millis()
    );
    assert!(r.pending.is_empty(), "{:?}", r.pending);
    let undefined = find(&r, "clean.py", |d| {
        d.message.contains("undefined_name") && d.provider == "pyright"
    });
    assert!(undefined.is_some(), "{r:#?}");
    assert!(
        find(&r, "clean.py", |d| d.provider == "ruff"
            && d.code.as_deref() == Some("F821"))
        .is_some()
    );
    fx.write("clean.py", "def double(n: int) -> int:\n    return n * 2\n");
    let t = Instant::now();
    let (r, a) = fx.diag(&["clean.py"], SeverityFilter::Warning).await;
    eprintln!(
        "pyright+ruff fresh after fix: {} ms",
        t.elapsed().as_millis()
    );
    assert!(r.entries.is_empty(), "stale leftovers: {r:#?}");
    assert!(r.pending.is_empty());
    assert_eq!(a.server.as_deref(), Some("pyright, ruff"));
    // and again, several cycles on one engine
    for i in 0..3 {
        fx.write(
            "clean.py",
            &format!("def double(n: int) -> int:\n    return n * \"{i}\"\n"),
        );
        let (r, _) = fx.diag(&["clean.py"], SeverityFilter::Error).await;
        assert_eq!(r.errors, 1, "cycle {i}: {r:#?}");
        assert!(
            r.entries[0]
                .diagnostic
                .loc
                .text
                .as_deref()
                .unwrap()
                .contains(&format!("\"{i}\""))
        );
        fx.write("clean.py", "def double(n: int) -> int:\n    return n * 2\n");
        let (r, _) = fx.diag(&["clean.py"], SeverityFilter::Error).await;
        assert_eq!(r.errors, 0, "cycle {i}: {r:#?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_edit_delta_tracks_identity_not_lines() {
    let Some(fx) = Fx::open(
        "diagnostics/python",
        &["pyright-langserver", "ruff"],
        "delta",
    ) else {
        return;
    };
    let files = vec![PathBuf::from("app.py")];
    let base = fx
        .engine
        .diagnostics_baseline(&files, Some(Duration::from_secs(30)))
        .await;
    assert!(base.unknown.is_empty(), "{base:?}");
    let app = fx.root.join("app.py");
    assert!(base.files[&app].len() >= 3, "{base:?}");
    // shift everything down two lines and add one new error
    let old = std::fs::read_to_string(&app).unwrap();
    fx.write("app.py", &format!("# header\n\n{old}\nbad: str = 1\n"));
    let t = Instant::now();
    let d = fx.engine.diagnostics_after_edit(&base, &files, None).await;
    eprintln!("delta (2 s budget): {} ms, {d:?}", t.elapsed().as_millis());
    assert!(d.pending.is_empty() && d.no_baseline.is_empty(), "{d:?}");
    assert_eq!(d.introduced.len(), 1, "{d:#?}");
    assert_eq!(d.introduced[0].loc.line, old.lines().count() as u32 + 4);
    assert!(d.resolved.is_empty(), "{d:#?}");
    // fix the type error: resolved, nothing introduced
    let base2 = fx.engine.diagnostics_baseline(&files, None).await;
    let now = std::fs::read_to_string(&app).unwrap();
    fx.write(
        "app.py",
        &now.replace("total([\"a\", \"b\"])", "total([1, 2])"),
    );
    let d = fx.engine.diagnostics_after_edit(&base2, &files, None).await;
    assert!(d.introduced.is_empty(), "{d:#?}");
    assert_eq!(d.resolved.len(), 1, "{d:#?}");
    assert_eq!(d.resolved[0].severity, Severity::Error);
    // a budget too short: pending, never a failure
    fx.write("app.py", &now);
    let d = fx
        .engine
        .diagnostics_after_edit(&base2, &files, Some(Duration::from_millis(1)))
        .await;
    assert!(
        !d.pending.is_empty() && d.pending.iter().all(|p| p.path.is_absolute()),
        "{d:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_server_and_eslint() {
    let Some(fx) = Fx::open(
        "diagnostics/typescript",
        &["typescript-language-server", "eslint"],
        "typescript_server_and_eslint",
    ) else {
        return;
    };
    let (r, _) = fx.diag(&["src"], SeverityFilter::Warning).await;
    assert_eq!(r.scope, "src/");
    assert_eq!(
        outcome(&r, "eslint"),
        Some(ProviderOutcome::Checked),
        "{r:#?}"
    );
    assert_eq!(
        outcome(&r, "typescript-language-server"),
        Some(ProviderOutcome::Checked),
        "{r:#?}"
    );
    let ts = find(&r, "main.ts", |d| d.code.as_deref() == Some("2345"))
        .unwrap_or_else(|| panic!("no TS2345: {r:#?}"));
    assert_eq!((ts.loc.line, ts.loc.col), (5, 37));
    assert_eq!(ts.severity, Severity::Error);
    let unused = find(&r, "util.js", |d| {
        d.code.as_deref() == Some("no-unused-vars")
    })
    .unwrap();
    assert_eq!(
        (unused.loc.line, unused.loc.col, unused.severity),
        (2, 9, Severity::Error)
    );
    let eq = find(&r, "util.js", |d| d.code.as_deref() == Some("eqeqeq")).unwrap();
    assert_eq!(
        (eq.loc.line, eq.loc.col, eq.severity),
        (3, 12, Severity::Warning)
    );
    assert!(find(&r, "util.js", |d| d.code.as_deref() == Some("no-undef")).is_some());
    // fix the TS error: gone on the next call
    fx.write("src/main.ts", "export function area(width: number, height: number): number {\n  return width * height;\n}\n\nexport const size: number = area(3, 4);\n");
    let t = Instant::now();
    let (r, _) = fx.diag(&["src/main.ts"], SeverityFilter::Warning).await;
    eprintln!("typescript fresh after fix: {} ms", t.elapsed().as_millis());
    assert!(r.entries.is_empty(), "{r:#?}");
    assert!(r.pending.is_empty(), "{r:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rust_native_and_cargo_check() {
    let Some(fx) = Fx::open("rust", &["rust-analyzer"], "rust_native_and_cargo_check") else {
        return;
    };
    let t = Instant::now();
    let (r, _) = fx.diag(&["src/shapes.rs"], SeverityFilter::Warning).await;
    eprintln!(
        "rust-analyzer clean (cold): {} ms; pending {:?}",
        t.elapsed().as_millis(),
        r.pending
    );
    assert_eq!(r.errors, 0, "{r:#?}");
    let shapes = std::fs::read_to_string(fx.root.join("src/shapes.rs")).unwrap();
    // a type error (rustc via cargo check) and an unresolved path (native)
    fx.write(
        "src/shapes.rs",
        &format!("{shapes}\npub fn broken() -> u32 {{\n    \"text\"\n}}\n\npub fn gone() -> u32 {{\n    nowhere::thing()\n}}\n"),
    );
    let t = Instant::now();
    let (r, _) = fx.diag(&["src/shapes.rs"], SeverityFilter::Error).await;
    eprintln!("pending: {:?}", r.pending);
    eprintln!(
        "rust-analyzer errors after change: {} ms: {:?}",
        t.elapsed().as_millis(),
        all(&r)
            .iter()
            .map(|d| format!(
                "{}:{} {} {:?} {}",
                d.loc.line, d.loc.col, d.source, d.code, d.message
            ))
            .collect::<Vec<_>>()
    );
    let line = shapes.lines().count() as u32 + 3;
    assert!(
        find(&r, "shapes.rs", |d| d.code.as_deref() == Some("E0308")
            && d.loc.line == line)
        .is_some(),
        "no cargo check E0308: {r:#?}"
    );
    assert!(
        find(&r, "shapes.rs", |d| d.message.contains("nowhere")).is_some(),
        "no unresolved path: {r:#?}"
    );
    fx.write("src/shapes.rs", &shapes);
    let t = Instant::now();
    let (r, _) = fx.diag(&["src/shapes.rs"], SeverityFilter::Error).await;
    eprintln!(
        "rust-analyzer clean after fix: {} ms",
        t.elapsed().as_millis()
    );
    assert_eq!(r.errors, 0, "stale leftovers: {r:#?}");
    assert!(r.pending.is_empty(), "{r:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn go_and_c_servers() {
    if let Some(fx) = Fx::open("go", &["gopls"], "go_and_c_servers") {
        let main = std::fs::read_to_string(fx.root.join("main.go")).unwrap();
        fx.write("main.go", &format!("{main}\nvar broken int = \"s\"\n"));
        let t = Instant::now();
        let (r, _) = fx.diag(&["main.go"], SeverityFilter::Error).await;
        eprintln!("gopls error: {} ms", t.elapsed().as_millis());
        let line = main.lines().count() as u32 + 2;
        let d = find(&r, "main.go", |d| d.loc.line == line)
            .unwrap_or_else(|| panic!("no gopls error: {r:#?}"));
        assert_eq!(d.loc.col, 18);
        fx.write("main.go", &main);
        let (r, _) = fx.diag(&["main.go"], SeverityFilter::Error).await;
        assert_eq!(r.errors, 0, "{r:#?}");
        assert!(r.pending.is_empty(), "{r:#?}");
    }
    if let Some(fx) = Fx::open("c", &["clangd"], "go_and_c_servers") {
        std::fs::remove_file(fx.root.join("compile_commands.json")).unwrap();
        let main = std::fs::read_to_string(fx.root.join("report.c")).unwrap();
        fx.write(
            "report.c",
            &format!("{main}\nint broken(void) {{ return undefined_thing; }}\n"),
        );
        let t = Instant::now();
        let (r, _) = fx.diag(&["report.c"], SeverityFilter::Error).await;
        eprintln!("clangd error: {} ms", t.elapsed().as_millis());
        let d = find(&r, "report.c", |d| d.message.contains("undefined_thing"))
            .unwrap_or_else(|| panic!("no clangd error: {r:#?}"));
        assert_eq!(d.loc.col, 27);
        fx.write("report.c", &main);
        let (r, _) = fx.diag(&["report.c"], SeverityFilter::Error).await;
        assert_eq!(r.errors, 0, "{r:#?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shellcheck_as_cli_provider() {
    let Some(fx) = Fx::open("diagnostics/shell", &["shellcheck"], "shellcheck") else {
        return;
    };
    let (r, _) = fx.diag(&["*.sh"], SeverityFilter::All).await;
    assert_eq!(
        outcome(&r, "shellcheck"),
        Some(ProviderOutcome::Checked),
        "{r:#?}"
    );
    let d = find(&r, "run.sh", |d| d.code.as_deref() == Some("SC2086"))
        .unwrap_or_else(|| panic!("{r:#?}"));
    assert_eq!((d.loc.line, d.loc.col, d.severity), (3, 4, Severity::Info));
    // bash-language-server reports the same finding: merged into one
    let n = all(&r)
        .iter()
        .filter(|d| d.code.as_deref() == Some("SC2086"))
        .count();
    assert_eq!(n, 1, "{r:#?}");
    // infos are hidden by the default filter, and counted as hidden
    let (r, _) = fx.diag(&["run.sh"], SeverityFilter::Warning).await;
    assert!(r.entries.is_empty() && r.hidden >= 1, "{r:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hanging_and_garbage_linters_are_bounded_and_reported() {
    let dir = tempfile::Builder::new()
        .prefix("scry-diag-")
        .tempdir()
        .unwrap();
    let root = scry_base::paths::canonical(dir.path()).unwrap();
    std::fs::write(
        root.join("a.txt"),
        "alpha\nbeta\ngamma\ndelta\nepsilon frob\nzeta\n",
    )
    .unwrap();
    let sarif = std::fs::read_to_string(fixtures().join("diagnostics/sample.sarif"))
        .unwrap()
        .replace("file:///ws/", &format!("file://{}/", root.display()))
        .replace("src/app.py", "a.txt");
    std::fs::write(root.join("report.sarif"), sarif).unwrap();
    std::fs::write(
        root.join(".scry.json"),
        r#"{
            "autoDetect": false,
            "linters": {
                "hang": { "command": "sleep", "args": ["60"], "fileTypes": ["txt"], "parser": "generic", "mode": "workspace" },
                "garbage": { "command": "echo", "args": ["{{{ not json", "{files}"], "fileTypes": ["txt"], "parser": "eslint-json" },
                "sarif-tool": { "command": "cat", "args": ["report.sarif"], "fileTypes": ["txt"], "parser": "sarif", "mode": "workspace" },
                "generic-tool": { "command": "echo", "args": ["{files}:2:3: error: beta is bad [B1]"], "fileTypes": ["txt"], "parser": "generic" }
            }
        }"#,
    )
    .unwrap();
    let Some(fx) = Fx::at(dir, &["sleep", "echo", "cat"], "hanging_linter", true) else {
        return;
    };
    let mut q = Query::new(Action::Diagnostics);
    q.targets = vec![PathBuf::from("a.txt")];
    q.severity = Some(SeverityFilter::All);
    q.timeout = Some(Duration::from_millis(1500));
    let t = Instant::now();
    let a = fx.engine.run_query(&q).await.unwrap();
    let took = t.elapsed();
    assert!(took < Duration::from_secs(4), "{took:?}");
    let Body::Diagnostics(r) = &a.body else {
        panic!()
    };
    assert_eq!(
        outcome(r, "hang"),
        Some(ProviderOutcome::TimedOut),
        "{r:#?}"
    );
    assert_eq!(
        outcome(r, "garbage"),
        Some(ProviderOutcome::Failed),
        "{r:#?}"
    );
    let g = r.providers.iter().find(|p| p.id == "garbage").unwrap();
    assert!(g.detail.as_deref().unwrap().contains("not JSON"), "{g:?}");
    assert_eq!(
        outcome(r, "sarif-tool"),
        Some(ProviderOutcome::Checked),
        "{r:#?}"
    );
    let s = find(r, "a.txt", |d| d.code.as_deref() == Some("PY001")).unwrap();
    assert_eq!((s.loc.line, s.loc.col, s.severity), (5, 9, Severity::Error));
    assert_eq!(s.source, "demo-analyzer");
    let gn = find(r, "a.txt", |d| d.code.as_deref() == Some("B1")).unwrap();
    assert_eq!((gn.loc.line, gn.loc.col), (2, 3));
    assert_eq!(gn.loc.text.as_deref(), Some("beta"));
    assert!(r.pending.iter().any(|p| p.provider == "hang"), "{r:#?}");
}

/// Every file under `root` with its bytes (the tree "hash": compared whole).
fn tree(root: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    fn walk(dir: &Path, root: &Path, out: &mut std::collections::BTreeMap<PathBuf, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                walk(&e.path(), root, out);
            } else {
                let rel = e.path().strip_prefix(root).unwrap().to_path_buf();
                out.insert(rel, std::fs::read(e.path()).unwrap());
            }
        }
    }
    let mut out = std::collections::BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// Issue 11, item 1: file names that look like options reach ruff, eslint
/// and shellcheck as paths (`./`-prefixed, after `--`): nothing is written,
/// no usage text, no foreign config loaded, and the seeded problems in those
/// very files are reported where they are.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn option_like_file_names_never_become_linter_options() {
    let dir = tempfile::Builder::new()
        .prefix("scry-diag-")
        .tempdir()
        .unwrap();
    let root = dir.path();
    let files: &[(&str, &str)] = &[
        ("ruff.toml", "[lint]\nselect = [\"F\"]\n"),
        (
            "eslint.config.js",
            "export default [{ files: [\"**/*.js\"], rules: { \"no-unused-vars\": \"error\" } }];\n",
        ),
        // the language servers are not what is tested here
        (
            ".scry.json",
            r#"{ "servers": { "pyright": false, "basedpyright": false, "pylsp": false,
                 "jedi-language-server": false, "typescript-language-server": false,
                 "bash-language-server": false } }"#,
        ),
        ("--output-file=x.py", "import sys\n"),
        ("-h.py", "\nimport os\n"),
        ("-V.sh", "#!/bin/sh\necho $1\n"),
        ("-h.js", "var unused = 1;\n"),
        ("--output-file=app.js", "\nvar u2 = 2;\n"),
        // eslint would load (and run) evil.js as its config
        ("--config=evil.js", "var e3 = 3;\n"),
        (
            "evil.js",
            "require('fs').writeFileSync('pwned', 'x');\nexport default [];\n",
        ),
        ("--config=evil.toml", "[lint]\nselect = [\"E501\"]\n"),
        ("evil.toml", "[lint]\nselect = [\"E501\"]\n"),
        ("x.py", "print('x')\n"),
        ("app.js", "console.log(1);\n"),
    ];
    for (name, text) in files {
        std::fs::write(root.join(name), text).unwrap();
    }
    let before = tree(root);
    let Some(fx) = Fx::at(
        dir,
        &["ruff", "eslint", "shellcheck"],
        "option_like_names",
        false,
    ) else {
        return;
    };
    let targets = [
        "--output-file=x.py",
        "-h.py",
        "-V.sh",
        "-h.js",
        "--output-file=app.js",
        "--config=evil.js",
    ];
    for t in [&targets[..], &["*"]] {
        let (r, _) = fx.diag(t, SeverityFilter::All).await;
        for id in ["ruff", "eslint", "shellcheck"] {
            assert_eq!(
                outcome(&r, id),
                Some(ProviderOutcome::Checked),
                "{id}: {r:#?}"
            );
        }
        assert_eq!(
            tree(&fx.root),
            before,
            "a diagnostics call changed the tree"
        );
        let at = |file: &str, code: &str| {
            let d = all(&r)
                .into_iter()
                .find(|d| {
                    d.loc.path.file_name().and_then(|n| n.to_str()) == Some(file)
                        && d.code.as_deref() == Some(code)
                })
                .unwrap_or_else(|| panic!("no {code} in {file}: {r:#?}"));
            (d.loc.line, d.loc.col, d.provider.clone())
        };
        assert_eq!(at("--output-file=x.py", "F401"), (1, 8, "ruff".into()));
        assert_eq!(at("-h.py", "F401"), (2, 8, "ruff".into()));
        assert_eq!(at("-V.sh", "SC2086"), (2, 6, "shellcheck".into()));
        assert_eq!(at("-h.js", "no-unused-vars"), (1, 5, "eslint".into()));
        assert_eq!(
            at("--output-file=app.js", "no-unused-vars"),
            (2, 5, "eslint".into())
        );
        assert_eq!(
            at("--config=evil.js", "no-unused-vars"),
            (1, 5, "eslint".into())
        );
        // ruff.toml (select F) was used, not evil.toml (E501)
        assert!(all(&r).iter().all(|d| d.code.as_deref() != Some("E501")));
    }
    assert!(!fx.root.join("pwned").exists());
}
