//! The remote index at scale (issue 41, not run in CI): a generated git
//! repository of N files (default 100,000; each defines `fN` and calls the
//! next file's), its SCIP index served over loopback, and a cold engine
//! with no language server on its `PATH` asking one definition:
//!
//! ```text
//! cargo run --release -p scry-testkit --example remote_index_bench -- DIR [N]
//! target/release/examples/remote_index_bench --checkout REPO SCIP FILE SYMBOL
//! ```
//!
//! With `--checkout`, a real git checkout `REPO` (its HEAD committed) and
//! its index `SCIP` (e.g. `rust-analyzer scip`'s) are used instead, and the
//! question is the definition of `SYMBOL` asked in `FILE` (by name).
//!
//! Prints, as numbers: the index's size; the first answer's time on an
//! empty cache (search, download, digest, conversion, answer); the first
//! answer of a second cold engine once the index is cached (what another
//! daemon or call pays: HEAD's lookup, then the cached commit); a warm
//! answer; and the process's peak and current resident memory (Linux,
//! `/proc/self/status`). `DIR` is reused when it holds the repository.

use scry_testkit::git;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use prost::Message;
use scry_index::proto::{Document, Metadata, Occurrence, ToolInfo};
use scry_model::{Action, Precision, Query};
use scry_testkit::http::{Route, Server};
use scry_workspace::env::{CallContext, CallEnv};

fn occ(line: i32, col: i32, len: usize, symbol: String, roles: i32) -> Occurrence {
    Occurrence {
        range: vec![line, col, col + len as i32],
        symbol,
        symbol_roles: roles,
        ..Default::default()
    }
}

/// The repository and its index under `dir` (made once).
fn generate(dir: &Path, n: u32) -> (PathBuf, PathBuf) {
    let ws = dir.join("ws");
    let scip = dir.join("index.scip");
    if ws.join(".git").exists() && scip.exists() {
        return (ws, scip);
    }
    std::fs::create_dir_all(&ws).unwrap();
    let mut out = std::io::BufWriter::new(std::fs::File::create(&scip).unwrap());
    let field =
        |out: &mut std::io::BufWriter<std::fs::File>, tag: u32, m: &dyn Fn(&mut Vec<u8>)| {
            let mut buf = Vec::new();
            m(&mut buf);
            let mut head = Vec::new();
            prost::encoding::encode_key(tag, prost::encoding::WireType::LengthDelimited, &mut head);
            prost::encoding::encode_varint(buf.len() as u64, &mut head);
            std::io::Write::write_all(out, &head).unwrap();
            std::io::Write::write_all(out, &buf).unwrap();
        };
    let meta = Metadata {
        version: 0,
        tool_info: Some(ToolInfo {
            name: "rust-analyzer".into(),
            version: "bench".into(),
            arguments: vec![],
        }),
        project_root: "file:///ci".into(),
        text_document_encoding: 0,
    };
    field(&mut out, 1, &|b| meta.encode(b).unwrap());
    for d in 0..n {
        let rel = format!("pkg{}/m{d}.rs", d % 100);
        let (def, used) = (format!("f{d}"), format!("f{}", (d + 1) % n));
        let text = format!("pub fn {def}() {{\n    {used}();\n}}\n");
        let path = ws.join(&rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        let sym = |name: &str| format!("rust-analyzer cargo bench 0.1.0 {name}().");
        let doc = Document {
            relative_path: rel,
            language: "rust".into(),
            occurrences: vec![
                occ(0, 7, def.len(), sym(&def), 1),
                occ(1, 4, used.len(), sym(&used), 0),
            ],
            ..Default::default()
        };
        field(&mut out, 2, &|b| doc.encode(b).unwrap());
    }
    std::io::Write::flush(&mut out).unwrap();
    git(&ws, &["init", "-q"]);
    git(&ws, &["add", "."]);
    git(&ws, &["commit", "-qm", "generated"]);
    (ws, scip)
}

/// Peak and current resident memory, MiB (Linux).
fn rss_mib() -> (u64, u64) {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib = |key: &str| {
        s.lines()
            .find(|l| l.starts_with(key))
            .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
            .unwrap_or(0)
            / 1024
    };
    (kib("VmHWM:"), kib("VmRSS:"))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (dir, root, scip, n, asked) = if args.first().is_some_and(|a| a == "--checkout") {
        let [_, repo, scip, file, symbol] = args.as_slice() else {
            panic!("--checkout REPO SCIP FILE SYMBOL")
        };
        let dir = std::env::temp_dir().join(format!("remote-index-bench-{}", std::process::id()));
        let root = scry_base::paths::canonical(Path::new(repo)).unwrap();
        let q = (PathBuf::from(file), symbol.clone(), None);
        (dir, root, PathBuf::from(scip), 0, q)
    } else {
        let dir = PathBuf::from(args.first().expect("DIR"));
        let n: u32 = args.get(1).map_or(100_000, |s| s.parse().expect("N"));
        let t = Instant::now();
        let (ws, scip) = generate(&dir, n);
        println!(
            "repository and index ready in {:.1} s",
            t.elapsed().as_secs_f64()
        );
        let k = n / 2;
        let q = (
            PathBuf::from(format!("pkg{}/m{k}.rs", k % 100)),
            format!("f{}", (k + 1) % n),
            Some(2),
        );
        (dir, scry_base::paths::canonical(&ws).unwrap(), scip, n, q)
    };
    let index = std::fs::read(&scip).unwrap();
    let head = git(&root, &["rev-parse", "HEAD"]);
    let server = Server::start();
    server.route(&format!("/{head}.scip"), Route::Body(index.clone()));
    println!("index: {} bytes ({n} files generated)", index.len());

    let user = dir.join("user");
    let _ = std::fs::remove_dir_all(&user);
    let bin = user.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let git_bin = std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .flat_map(|d| [d.join("git"), d.join("git.exe")])
        .find(|p| p.is_file())
        .expect("git");
    #[cfg(unix)]
    std::os::unix::fs::symlink(git_bin, bin.join("git")).unwrap();
    #[cfg(not(unix))]
    std::fs::copy(git_bin, bin.join("git.exe")).unwrap();
    std::fs::write(
        user.join("config.json"),
        format!(
            r#"{{"index": {{"remote": "{}/{{commit}}.scip"}}}}"#,
            server.base()
        ),
    )
    .unwrap();
    let vars = [
        ("SCRY_STATE_DIR", user.join("state")),
        ("SCRY_CONFIG", user.join("config.json")),
        ("SCRY_CACHE_DIR", user.join("cache")),
        ("PATH", bin),
    ]
    .map(|(k, v)| (k.to_string(), v.display().to_string()));
    let ctx = CallContext {
        env: Arc::new(CallEnv::from_vars(vars)),
        client: "bench".into(),
    };
    let mut q = Query::new(Action::Definition);
    (q.path, q.symbol, q.line) = (Some(asked.0), Some(asked.1), asked.2);
    q.timeout = Some(Duration::from_secs(120));
    scry_workspace::env::scope(ctx, async move {
        for run in ["cold, empty cache", "cold, cached"] {
            let ws = scry_workspace::Workspace::open(&root).unwrap();
            let cache = scry_base::dirs::cache().unwrap();
            let engine = scry_ops::Engine::with_syntax_cache(Arc::new(ws), Some(&cache));
            let t = Instant::now();
            let a = engine.run_query(&q).await.expect("an answer");
            let first = t.elapsed();
            assert_eq!(a.precision, Some(Precision::Index), "{a:?}");
            let t = Instant::now();
            let _ = engine.run_query(&q).await.expect("an answer");
            let warm = t.elapsed();
            let (peak, now) = rss_mib();
            println!(
                "{run}: first answer {:.0} ms, warm {:.0} ms; resident {now} MiB (peak {peak} MiB)",
                first.as_secs_f64() * 1000.0,
                warm.as_secs_f64() * 1000.0
            );
            engine.shutdown().await;
        }
    })
    .await;
}
