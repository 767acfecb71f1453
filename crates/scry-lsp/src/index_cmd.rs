//! `scry index [--root DIR]… [--from FILE] [--output FILE] [--timeout-ms N]`: build the
//! SCIP index of each workspace root given (`--root`, repeatable, or
//! positional roots; default: the current directory)
//! with its languages' indexers, or take a CI-built `index.scip` as is, and
//! convert it for scry (`scry_index::cache`: the per-user cache, keyed by
//! the canonical root). Later questions answer from it while the live
//! server starts or indexes (`scry_ops::engine::indexed`). `--output`
//! also writes the `index.scip` to a file (CI publishes it per commit for
//! `index.remote`), atomically.
//!
//! The indexers are run by `scry_workspace::indexing` (catalogue data, argv, the
//! same trust rule as servers; the daemon's background refresh runs them
//! through the same function). Progress and errors go to stderr, the
//! summary to stdout; exit 0 done, 1 nothing built, 2 bad usage.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use scry_index::cache;
use scry_workspace::Workspace;
use scry_workspace::indexing::{self, BuildOptions, Progress};

#[derive(Parser, Debug)]
#[command(
    name = "scry index",
    version,
    about = "Build a precise SCIP index of a workspace (rust-analyzer scip, scip-typescript, scip-python) \
             so answers are precise from the first call, before the language server is ready.",
    after_help = "The index lives in the per-user cache (SCRY_CACHE_DIR, else ~/.cache/scry; \
                  %LOCALAPPDATA%\\scry\\cache on Windows), below index/. \
                  A file changed since the index is never answered from it. \
                  --from takes an index.scip built elsewhere (CI) as is; or name it in the \
                  configuration, \"index\": {\"path\": \"build/index.scip\"}, and every call reads it. \
                  The daemon rebuilds a stale index when the workspace is idle (\"index\": {\"refresh\": false} turns it off). \
                  In CI, --output FILE writes the index.scip too, to publish it per commit for \"index\": {\"remote\": {\"url\": \"https://…/{commit}.scip\"}}."
)]
struct IndexCli {
    /// Workspace roots, as with --root.
    #[arg(value_name = "ROOT")]
    paths: Vec<PathBuf>,
    /// Workspace root (default: the current directory); repeatable.
    #[arg(long = "root", value_name = "DIR")]
    roots: Vec<PathBuf>,
    /// Use this index.scip (built in CI, say) instead of running an indexer.
    #[arg(long, value_name = "FILE")]
    from: Option<PathBuf>,
    /// Also write the index.scip to FILE (replaced atomically), e.g. to
    /// publish it for `index.remote`; one root only.
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
    #[arg(long = "timeout-ms", value_name = "N", help = timeout_help(),
          value_parser = crate::argv::positive_number)]
    timeout_ms: Option<u64>,
    /// The old spelling of the budget, in seconds (kept for scripts).
    #[arg(long, value_name = "SECS", hide = true, conflicts_with = "timeout_ms",
          value_parser = crate::argv::positive_number)]
    timeout: Option<u64>,
}

/// `--timeout-ms`'s help, from the indexers' default budget.
fn timeout_help() -> String {
    format!(
        "Longest an indexer may run, in milliseconds (default {})",
        indexing::DEFAULT_TIMEOUT.as_millis()
    )
}

pub fn main() -> ExitCode {
    let args =
        std::iter::once(std::ffi::OsString::from("scry index")).chain(std::env::args_os().skip(2));
    let cli: IndexCli = match crate::argv::parse(args) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let Some(cache_dir) = scry_base::dirs::cache() else {
        eprintln!("scry index: no cache directory (set SCRY_CACHE_DIR or HOME)");
        return ExitCode::from(1);
    };
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let timeout = match (cli.timeout_ms, cli.timeout) {
        (Some(ms), _) => Duration::from_millis(ms),
        (None, Some(secs)) => Duration::from_secs(secs),
        (None, None) => indexing::DEFAULT_TIMEOUT,
    };
    let given: Vec<&PathBuf> = cli.roots.iter().chain(&cli.paths).collect();
    let paths = if given.is_empty() {
        vec![cwd.clone()]
    } else {
        given.iter().map(|p| cwd.join(p)).collect()
    };
    if cli.from.is_some() && paths.len() > 1 {
        eprintln!("scry index: --from takes one workspace root (see scry index --help)");
        return ExitCode::from(2);
    }
    if cli.output.is_some() && paths.len() > 1 {
        eprintln!("scry index: --output takes one workspace root (see scry index --help)");
        return ExitCode::from(2);
    }
    let output = cli.output.as_ref().map(|o| cwd.join(o));
    let mut ok = true;
    for p in paths {
        let Some(root) = crate::argv::workspace_dir(&p) else {
            return crate::argv::not_a_directory("index", &p);
        };
        let from = cli.from.as_ref().map(|f| cwd.join(f));
        if let Err(e) = index_root(
            &cache_dir,
            &root,
            from.as_deref(),
            output.as_deref(),
            timeout,
        ) {
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

/// Build (or take) and convert the index of one root; with `output`,
/// write its `index.scip` there too.
fn index_root(
    cache_dir: &Path,
    root: &Path,
    from: Option<&Path>,
    output: Option<&Path>,
    timeout: Duration,
) -> Result<(), String> {
    let t = Instant::now();
    let ix = match from {
        Some(f) => {
            cache::take(cache_dir, root, f).map_err(|e| format!("error[{}]: {e}", e.code()))?
        }
        None => {
            let ws = Workspace::open(root).map_err(|e| e.to_string())?;
            let mut progress = |p: Progress| match p {
                Progress::Running { line, at } => {
                    eprintln!("scry index: running {line} in {}", at.display())
                }
                Progress::Failed(why) => eprintln!("scry index: {why}; its files are left out"),
                Progress::Tick { command, secs } => {
                    eprint!("\rscry index: {command} … {secs} s");
                    let _ = std::io::stderr().flush();
                }
                Progress::Finished { command, secs } => {
                    eprintln!("\rscry index: {command} finished in {secs:.1} s")
                }
                Progress::Missing(m) => {
                    eprintln!("scry index: {}", scry_render::indexer_missing(&m))
                }
            };
            indexing::build(
                cache_dir,
                &ws,
                root,
                BuildOptions {
                    timeout,
                    background: false,
                    cancel: None,
                    progress: &mut progress,
                },
            )?
        }
    };
    let m = ix.meta();
    println!(
        "{}: {} files ({} match the disk), {} symbols, {} occurrences; built and converted in {} ms",
        root.display(),
        m.documents,
        m.verified,
        m.symbols,
        m.occurrences,
        t.elapsed().as_millis()
    );
    let source = cache::Source::Built(cache::dir_for(cache_dir, root).join("index.scip"));
    let about = scry_ops::engine::indexed::about(&ix, &source);
    println!("  {}", scry_render::index_label(&about, root));
    if let Some(out) = output {
        write_output(source.scip(), out)?;
        println!("  written to {}", out.display());
    }
    Ok(())
}

/// Copy `scip` to `out` through a temporary file beside it, renamed over
/// it: a reader (a static server publishing it) never sees half a file.
fn write_output(scip: &Path, out: &Path) -> Result<(), String> {
    let name = out.file_name().unwrap_or_default().to_string_lossy();
    let tmp = out.with_file_name(format!(".{name}.tmp{}", std::process::id()));
    let copied = std::fs::copy(scip, &tmp)
        .and_then(|_| std::fs::File::open(&tmp)?.sync_all())
        .and_then(|_| std::fs::rename(&tmp, out));
    copied.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot write {}: {e}", out.display())
    })
}
