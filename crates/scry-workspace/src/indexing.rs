//! Building a workspace's index: run the catalogue's indexers into the
//! per-user cache ([`scry_index::cache`]) and convert it (a CI-built
//! `index.scip` is taken by [`scry_index::cache::take`], which runs
//! nothing). The one place indexers are run: `scry index` and the daemon's
//! background refresh both call [`build`]. Here, above scry-index, because
//! running them takes the workspace: the catalogue, where commands are
//! installed, trust and the call's environment.
//!
//! Indexers are catalogue data (`indexer`: command, args with `{output}`,
//! install commands). Invariants:
//! - run as argv in the root, never through a shell, stdin closed, with the
//!   call's environment ([`crate::env`]); the command is found as a
//!   server's is (`Workspace::installed`: `PATH`, a project-local one only
//!   in a trusted workspace), and a project file cannot change it (`indexer`
//!   is no configuration key);
//! - bounded: each indexer is stopped (its whole process tree) past
//!   [`BuildOptions::timeout`] or when `cancel` is set;
//! - its tree (build scripts, cargo) ends whole when the run ends or the
//!   process that started it dies, SIGKILL included, and
//!   [`BuildOptions::background`] runs it at the lowest CPU and I/O
//!   priority: how, per OS, is [`crate::platform::indexer`] (a process
//!   group and a sentinel, nice 19 and the idle I/O class on Linux; a
//!   kill-on-close Job Object and `IDLE_PRIORITY_CLASS` on Windows);
//! - the cache's `index.scip` is replaced whole (a rename) only when every
//!   indexer that ran succeeded; several indexers' outputs are
//!   concatenated (SCIP's repeated fields make that one valid index).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use scry_index::cache;
use scry_index::store::read::Index;

use crate::Workspace;
use crate::catalog::Indexer;
use crate::platform::indexer;

/// How long an indexer may run unless told otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1800);

/// What [`build`] reports while it runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Progress {
    /// An indexer starts: its command line.
    Running(String),
    /// Still running, seconds so far (every 5 s).
    Tick { command: String, secs: u64 },
    /// It finished, in seconds.
    Finished { command: String, secs: f64 },
    /// An indexer this workspace needs is not installed: what and how to
    /// install it.
    Missing(scry_model::IndexerStatus),
}

pub struct BuildOptions<'a> {
    pub timeout: Duration,
    /// Lowest CPU and I/O priority, own process group (the daemon).
    pub background: bool,
    /// Set to stop the indexer (the daemon stopping).
    pub cancel: Option<&'a AtomicBool>,
    pub progress: &'a mut dyn FnMut(Progress),
}

/// One indexer that applies to a root: the server it indexes for, its
/// catalogue entry, and where its command was found (`None`: missing).
#[derive(Debug, Clone)]
pub struct Planned {
    pub server: String,
    pub indexer: Indexer,
    pub program: Option<PathBuf>,
}

impl Planned {
    /// What `status` and `scry index` say of it (worded by scry-render):
    /// its command, the server it indexes for, where it was found, how to
    /// install it.
    pub fn status(&self) -> scry_model::IndexerStatus {
        scry_model::IndexerStatus {
            command: self.indexer.command.clone(),
            server: self.server.clone(),
            program: self.program.clone(),
            install: self.indexer.install.0.first().map(|(_, c)| c.clone()),
        }
    }
}

/// The indexers of `root`'s languages: every enabled server with an
/// indexer whose root markers (besides `.git`) are in `root`, one per
/// indexer command.
pub fn plan(ws: &Workspace, root: &Path) -> Vec<Planned> {
    let config = ws.config();
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
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
        if marked {
            out.push(Planned {
                server: spec.id.clone(),
                indexer: ix.clone(),
                program: ws.installed(&ix.command),
            });
        }
    }
    out
}

/// Run `root`'s indexers ([`plan`]) into the cache under `cache_dir` and
/// convert the result; the converted index.
pub fn build(
    cache_dir: &Path,
    ws: &Workspace,
    root: &Path,
    opts: BuildOptions<'_>,
) -> Result<Index, String> {
    let dir = cache::prepare(cache_dir, root)?;
    let tmp = dir.join(format!("index.scip.tmp{}", std::process::id()));
    let by = opts.background.then_some("daemon");
    // The files as the indexers start: one written while they run is
    // recorded stale, not as what they indexed.
    let before = scry_index::store::stamp::Before::walk(root);
    let parts = run_indexers(ws, root, &dir, opts)?;
    let joined = (|| {
        let mut out = std::fs::File::create(&tmp)?;
        for part in &parts {
            let mut f = std::fs::File::open(part)?;
            std::io::copy(&mut f, &mut out)?;
        }
        out.sync_all()
    })();
    for part in &parts {
        let _ = std::fs::remove_file(part);
    }
    joined.map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    let commit = clean_commit(root, &ws.child_env(&Default::default()));
    cache::install(cache_dir, root, &tmp, commit, by, Some(&before)).map_err(|e| e.to_string())
}

/// Run every planned indexer; the paths of the indexes written.
fn run_indexers(
    ws: &Workspace,
    root: &Path,
    dir: &Path,
    opts: BuildOptions<'_>,
) -> Result<Vec<PathBuf>, String> {
    let BuildOptions {
        timeout,
        background,
        cancel,
        progress,
    } = opts;
    let mut parts = Vec::new();
    let mut missing = 0;
    for p in plan(ws, root) {
        let Some(program) = &p.program else {
            progress(Progress::Missing(p.status()));
            missing += 1;
            continue;
        };
        let ix = &p.indexer;
        let out = dir.join(format!("part{}-{}.scip", parts.len(), std::process::id()));
        let args: Vec<String> = ix
            .args
            .iter()
            .map(|a| a.replace("{output}", &out.to_string_lossy()))
            .collect();
        progress(Progress::Running(format!(
            "{} {}",
            ix.command,
            args.join(" ")
        )));
        let server_env = ws
            .config()
            .server(&p.server)
            .map(|s| s.env.clone())
            .unwrap_or_default();
        let mut cmd = Command::new(program);
        // The call's environment, then the server's configured one, the
        // PATH cleaned (crate::env::for_child).
        ws.child_env(&server_env).apply(&mut cmd);
        cmd.args(&args)
            .current_dir(root)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let started = Instant::now();
        // Its whole tree (build scripts, cargo, …) ends with the run or
        // with this process (crate::platform::indexer).
        let mut child = indexer::start(cmd, background)
            .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
        // The indexer's own messages, last lines kept for an error.
        let stderr = child.take_stderr();
        let tail = std::thread::spawn(move || {
            use std::io::BufRead;
            let mut last: Vec<String> = Vec::new();
            if let Some(e) = stderr {
                for line in std::io::BufReader::new(e).lines().map_while(Result::ok) {
                    last.push(line.chars().take(400).collect());
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
            if cancel.is_some_and(|c| c.load(Ordering::SeqCst)) {
                child.stop();
                let _ = std::fs::remove_file(&out);
                return Err(format!("{} was stopped (scry is stopping)", ix.command));
            }
            if started.elapsed() > timeout {
                child.stop();
                let _ = std::fs::remove_file(&out);
                return Err(format!(
                    "{} ran over {} s and was stopped",
                    ix.command,
                    timeout.as_secs()
                ));
            }
            if shown.elapsed() >= Duration::from_secs(5) {
                progress(Progress::Tick {
                    command: ix.command.clone(),
                    secs: started.elapsed().as_secs(),
                });
                shown = Instant::now();
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        let last = tail.join().unwrap_or_default();
        progress(Progress::Finished {
            command: ix.command.clone(),
            secs: started.elapsed().as_secs_f64(),
        });
        if !status.success() || !out.is_file() {
            let _ = std::fs::remove_file(&out);
            for part in &parts {
                let _ = std::fs::remove_file(part);
            }
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
    if parts.is_empty() {
        return Err(if missing == 0 {
            "no language with a SCIP indexer found here (rust-analyzer scip, scip-typescript, scip-python)".into()
        } else {
            "no indexer could run".into()
        });
    }
    Ok(parts)
}

/// `git rev-parse HEAD` when the tree has no local changes (argv, stdin
/// closed, `env` the workspace's child environment: its `PATH` finds
/// `git`); `None` otherwise.
fn clean_commit(root: &Path, env: &crate::env::ChildEnv) -> Option<String> {
    let git = |args: &[&str]| {
        let mut cmd = Command::new("git");
        env.apply(&mut cmd);
        cmd.args(args)
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
