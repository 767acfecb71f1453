//! `scry index [PATH…] [--from FILE] [--timeout SECS]`: build the SCIP
//! index of each workspace root given (default: the current directory)
//! with its languages' indexers, or take a CI-built `index.scip` as is, and
//! convert it for scry (`scry_index::cache`: the per-user cache, keyed by
//! the canonical root). Later questions answer from it while the live
//! server starts or indexes (`scry_ops::engine::indexed`).
//!
//! Indexers are catalogue data (`indexer`: command, args with `{output}`,
//! install commands); they are run as argv in the root, stdin closed, under
//! the same rule as servers: a command is found on `PATH` (a project-local
//! one only in a trusted workspace, `Workspace::installed`), never through
//! a shell. Progress and errors go to stderr, the summary to stdout; exit 0
//! done, 1 nothing built, 2 bad usage. Several indexers' outputs are
//! concatenated (SCIP's repeated fields make that one valid index).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use clap::Parser;
use scry_index::cache;
use scry_workspace::Workspace;

#[derive(Parser, Debug)]
#[command(
    name = "scry index",
    version,
    about = "Build a precise SCIP index of a workspace (rust-analyzer scip, scip-typescript, scip-python) \
             so answers are precise from the first call, before the language server is ready.",
    after_help = "The index lives in the per-user cache (SCRY_CACHE_DIR, else ~/.cache/scry/index). \
                  A file changed since the index is never answered from it. \
                  --from takes an index.scip built elsewhere (CI) as is."
)]
struct IndexCli {
    /// Workspace roots (default: the current directory).
    paths: Vec<PathBuf>,
    /// Use this index.scip (built in CI, say) instead of running an indexer.
    #[arg(long, value_name = "FILE")]
    from: Option<PathBuf>,
    /// Longest an indexer may run, in seconds.
    #[arg(long, default_value_t = 1800)]
    timeout: u64,
}

pub fn main() -> ExitCode {
    let args =
        std::iter::once(std::ffi::OsString::from("scry index")).chain(std::env::args_os().skip(2));
    let cli: IndexCli = match crate::argv::parse(args) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let Some(cache_dir) = cache::default_cache() else {
        eprintln!("scry index: no cache directory (set SCRY_CACHE_DIR or HOME)");
        return ExitCode::from(1);
    };
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let paths = if cli.paths.is_empty() {
        vec![cwd.clone()]
    } else {
        cli.paths.iter().map(|p| cwd.join(p)).collect()
    };
    if cli.from.is_some() && paths.len() > 1 {
        eprintln!("scry index: --from takes one workspace root (see scry index --help)");
        return ExitCode::from(2);
    }
    let mut ok = true;
    for p in paths {
        let root = match std::fs::canonicalize(&p) {
            Ok(r) if r.is_dir() => r,
            _ => {
                eprintln!(
                    "scry index: {} is not a directory (see scry index --help)",
                    p.display()
                );
                return ExitCode::from(2);
            }
        };
        let from = cli.from.as_ref().map(|f| cwd.join(f));
        if let Err(e) = index_root(&cache_dir, &root, from.as_deref(), cli.timeout) {
            eprintln!("scry index: {}: {e}", root.display());
            ok = false;
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Build (or take) and convert the index of one root.
fn index_root(
    cache_dir: &Path,
    root: &Path,
    from: Option<&Path>,
    timeout: u64,
) -> Result<(), String> {
    let dir = cache::dir_for(cache_dir, root);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let target = dir.join("index.scip");
    let tmp = dir.join(format!("index.scip.tmp{}", std::process::id()));
    let commit = dir.join("commit");
    match from {
        Some(f) => {
            std::fs::copy(f, &tmp).map_err(|e| format!("cannot read {}: {e}", f.display()))?;
            let _ = std::fs::remove_file(&commit);
        }
        None => {
            let ws = Workspace::open(root).map_err(|e| e.to_string())?;
            let parts = run_indexers(&ws, root, &dir, Duration::from_secs(timeout))?;
            let mut out = std::fs::File::create(&tmp).map_err(|e| e.to_string())?;
            for part in &parts {
                let mut f = std::fs::File::open(part).map_err(|e| e.to_string())?;
                std::io::copy(&mut f, &mut out).map_err(|e| e.to_string())?;
                let _ = std::fs::remove_file(part);
            }
            out.sync_all().map_err(|e| e.to_string())?;
            match clean_commit(root) {
                Some(c) => std::fs::write(&commit, c).map_err(|e| e.to_string())?,
                None => {
                    let _ = std::fs::remove_file(&commit);
                }
            }
        }
    }
    std::fs::rename(&tmp, &target).map_err(|e| e.to_string())?;
    let t = Instant::now();
    let (ix, _) = cache::load(cache_dir, root, None)
        .map_err(|e| e.to_string())?
        .ok_or("the index vanished while converting")?;
    let m = ix.meta();
    println!(
        "{}: {} files ({} match the disk), {} symbols, {} occurrences; converted in {} ms",
        root.display(),
        m.documents,
        m.verified,
        m.symbols,
        m.occurrences,
        t.elapsed().as_millis()
    );
    println!("  {}", scry_ops::engine::indexed::label(&ix));
    Ok(())
}

/// Run every indexer whose server's root markers are in `root`; the paths
/// of the indexes written.
fn run_indexers(
    ws: &Workspace,
    root: &Path,
    dir: &Path,
    timeout: Duration,
) -> Result<Vec<PathBuf>, String> {
    let config = ws.config();
    let mut parts = Vec::new();
    let mut missing = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for spec in &config.servers {
        let Some(ix) = &spec.indexer else { continue };
        if spec.disabled || !seen.insert(ix.command.clone()) {
            continue;
        }
        let marked = spec
            .root_markers
            .iter()
            .filter(|m| m.as_str() != ".git")
            .any(|m| root.join(m).exists());
        if !marked {
            continue;
        }
        let Some(program) = ws.installed(&ix.command) else {
            let how = ix
                .install
                .0
                .first()
                .map(|(_, c)| format!("; install: {c}"))
                .unwrap_or_default();
            missing.push(format!(
                "{} (for {}) is not installed{how}",
                ix.command, spec.id
            ));
            continue;
        };
        let out = dir.join(format!("part{}-{}.scip", parts.len(), std::process::id()));
        let args: Vec<String> = ix
            .args
            .iter()
            .map(|a| a.replace("{output}", &out.to_string_lossy()))
            .collect();
        eprintln!(
            "scry index: running {} {} in {}",
            ix.command,
            args.join(" "),
            root.display()
        );
        let started = Instant::now();
        let mut child = Command::new(&program)
            .args(&args)
            .current_dir(root)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
        // The indexer's own messages, last lines kept for an error.
        let stderr = child.stderr.take();
        let tail = std::thread::spawn(move || {
            use std::io::BufRead;
            let mut last: Vec<String> = Vec::new();
            if let Some(e) = stderr {
                for line in std::io::BufReader::new(e).lines().map_while(Result::ok) {
                    last.push(line);
                    if last.len() > 10 {
                        last.remove(0);
                    }
                }
            }
            last
        });
        let mut shown = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(s)) => break s,
                Ok(None) => {}
                Err(e) => return Err(e.to_string()),
            }
            if started.elapsed() > timeout {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{} ran over {} s and was stopped",
                    ix.command,
                    timeout.as_secs()
                ));
            }
            if shown.elapsed() >= Duration::from_secs(5) {
                eprint!(
                    "\rscry index: {} … {} s",
                    ix.command,
                    started.elapsed().as_secs()
                );
                let _ = std::io::stderr().flush();
                shown = Instant::now();
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        let last = tail.join().unwrap_or_default();
        eprintln!(
            "\rscry index: {} finished in {:.1} s",
            ix.command,
            started.elapsed().as_secs_f64()
        );
        if !status.success() || !out.is_file() {
            return Err(format!(
                "{} failed ({status}){}",
                ix.command,
                if last.is_empty() {
                    String::new()
                } else {
                    format!(": {}", last.join(" | "))
                }
            ));
        }
        parts.push(out);
    }
    for m in &missing {
        eprintln!("scry index: {m}");
    }
    if parts.is_empty() {
        return Err(if missing.is_empty() {
            "no language with a SCIP indexer found here (rust-analyzer scip, scip-typescript, scip-python)".into()
        } else {
            "no indexer could run".into()
        });
    }
    Ok(parts)
}

/// `git rev-parse HEAD` when the tree has no local changes (argv, stdin
/// closed); `None` otherwise.
fn clean_commit(root: &Path) -> Option<String> {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(root)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"])?;
    if !dirty.is_empty() {
        return None;
    }
    git(&["rev-parse", "HEAD"]).filter(|c| !c.is_empty())
}
