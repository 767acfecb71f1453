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
//! - run as argv in each project root of its server's files (the roots
//!   its server's recipe gives them, [`crate::roots`]: a Cargo workspace,
//!   a uv workspace, a package; never one nothing marks), never through a
//!   shell, stdin closed, with the
//!   call's environment ([`crate::env`]); the command is found as a
//!   server's is (`Workspace::installed`: `PATH`, a project-local one only
//!   in a trusted workspace), and a project file cannot change it (`indexer`
//!   is no configuration key);
//! - bounded: each indexer is stopped (its whole process tree) past
//!   [`BuildOptions::timeout`] or when `cancel` is set;
//! - in the background, under the trust the workspace's files say when it
//!   starts ([`Workspace::config_is_current`]): one decided under a trust
//!   or configuration since changed is not started, and one running is
//!   stopped when they change (a revoke);
//! - its tree (build scripts, cargo) ends whole when the run ends or the
//!   process that started it dies, SIGKILL included, and
//!   [`BuildOptions::background`] runs it at the lowest CPU and I/O
//!   priority: how, per OS, is [`crate::platform::indexer`] (a process
//!   group and a sentinel, nice 19 and the idle I/O class on Linux; a
//!   kill-on-close Job Object and `IDLE_PRIORITY_CLASS` on Windows);
//! - the runs' indexes are joined into one ([`scry_index::join`]: paths
//!   relative to the workspace root, each file once), and the cache's
//!   `index.scip` is replaced whole (a rename) when at least one run
//!   succeeded; a run that failed is said ([`Progress::Failed`]), its
//!   files left to the other sources.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use scry_index::cache;
use scry_index::store::read::Index;

use crate::Workspace;
use crate::catalog::Indexer;
use crate::platform::indexer;

/// Why a background run did not start or was stopped: the workspace's
/// trust or configuration changed since it was read.
const STALE_CONFIG: &str =
    "the workspace's trust or configuration changed since it was read (it is read again first)";

/// How long an indexer may run unless told otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1800);

/// What [`build`] reports while it runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Progress {
    /// An indexer starts: its command line, and where.
    Running { line: String, at: PathBuf },
    /// Still running, seconds so far (every 5 s).
    Tick { command: String, secs: u64 },
    /// It finished, in seconds.
    Finished { command: String, secs: f64 },
    /// An indexer this workspace needs is not installed: what and how to
    /// install it.
    Missing(scry_model::IndexerStatus),
    /// One run failed (the others' index is used): why.
    Failed(String),
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
    /// The project roots it runs in, in path order (outer first).
    pub roots: Vec<PathBuf>,
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

/// The indexers of the workspace's languages: every enabled server with
/// an indexer whose files are in the workspace, one per indexer command,
/// each with the project roots of those files (the roots its server's
/// recipe gives them; one nothing marks is left out: an indexer would find
/// no project there). Blocking (the workspace's layout).
pub fn plan(ws: &Workspace, _root: &Path) -> Vec<Planned> {
    let config = ws.config();
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for spec in &config.servers {
        let Some(ix) = &spec.indexer else { continue };
        if spec.disabled || !seen.insert(ix.command.clone()) {
            continue;
        }
        let roots: Vec<PathBuf> = ws
            .project_roots(spec)
            .into_iter()
            .filter(|(_, why)| *why != scry_model::RootChoice::NoMarker)
            .map(|(r, _)| r)
            .collect();
        if roots.is_empty() {
            continue;
        }
        out.push(Planned {
            server: spec.id.clone(),
            indexer: ix.clone(),
            program: ws.installed(&ix.command),
            roots,
        });
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
        let mut out = std::io::BufWriter::new(
            std::fs::File::create(&tmp).map_err(scry_index::join::JoinError::Write)?,
        );
        let j = scry_index::join::join(&parts, &mut out)?;
        out.into_inner()
            .map_err(|e| scry_index::join::JoinError::Write(e.into_error()))?
            .sync_all()?;
        Ok::<_, scry_index::join::JoinError>(j)
    })();
    for part in &parts {
        let _ = std::fs::remove_file(&part.path);
    }
    let joined = joined.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot write {}: {e}", tmp.display())
    })?;
    if joined.duplicates > 0 {
        tracing::debug!(
            duplicates = joined.duplicates,
            "documents indexed by two runs kept once"
        );
    }
    let commit = clean_commit(root, &ws.child_env(&Default::default()));
    cache::install(cache_dir, root, &tmp, commit, by, Some(&before)).map_err(|e| e.to_string())
}

/// Run every planned indexer in each of its roots; the indexes written,
/// each with its root's place in the workspace. A run that fails is said
/// ([`Progress::Failed`]) and the others go on; none written is an error
/// (every run's failure, or why none ran).
fn run_indexers(
    ws: &Workspace,
    root: &Path,
    dir: &Path,
    opts: BuildOptions<'_>,
) -> Result<Vec<scry_index::join::Part>, String> {
    let BuildOptions {
        timeout,
        background,
        cancel,
        progress,
    } = opts;
    let started = Instant::now();
    let mut parts = Vec::new();
    let mut failed: Vec<String> = Vec::new();
    let mut missing = 0;
    for p in plan(ws, root) {
        let Some(program) = &p.program else {
            progress(Progress::Missing(p.status()));
            missing += 1;
            continue;
        };
        for at in &p.roots {
            let run = Run {
                ws,
                planned: &p,
                program,
                at,
                out: dir.join(format!("part{}-{}.scip", parts.len(), std::process::id())),
                // The build's budget, whatever the number of runs.
                timeout: timeout.saturating_sub(started.elapsed()),
                background,
                cancel,
            };
            match run.run(progress) {
                Ok(out) => parts.push(scry_index::join::Part {
                    path: out,
                    prefix: at
                        .strip_prefix(ws.root())
                        .map(|r| {
                            r.components()
                                .map(|c| c.as_os_str().to_string_lossy())
                                .collect::<Vec<_>>()
                                .join("/")
                        })
                        .unwrap_or_default(),
                }),
                Err(e) if cancel.is_some_and(|c| c.load(Ordering::SeqCst)) => {
                    for part in &parts {
                        let _ = std::fs::remove_file(&part.path);
                    }
                    return Err(e);
                }
                Err(e) => {
                    let e = if p.roots.len() > 1 {
                        format!("{} (in {})", e, scry_base::paths::display(at, ws.root()))
                    } else {
                        e
                    };
                    progress(Progress::Failed(e.clone()));
                    failed.push(e);
                }
            }
        }
    }
    if parts.is_empty() {
        return Err(if !failed.is_empty() {
            failed.join("; ")
        } else if missing == 0 {
            "no language with a SCIP indexer found here (rust-analyzer scip, scip-typescript, scip-python)".into()
        } else {
            "no indexer could run".into()
        });
    }
    Ok(parts)
}

/// One indexer run in one root.
struct Run<'a> {
    ws: &'a Workspace,
    planned: &'a Planned,
    program: &'a Path,
    at: &'a Path,
    out: PathBuf,
    timeout: Duration,
    background: bool,
    cancel: Option<&'a AtomicBool>,
}

impl Run<'_> {
    /// Run it to its end; the index it wrote, or why it wrote none.
    fn run(self, progress: &mut dyn FnMut(Progress)) -> Result<PathBuf, String> {
        let ix = &self.planned.indexer;
        let out = &self.out;
        let mut args: Vec<String> = ix
            .args
            .iter()
            .map(|a| a.replace("{output}", &out.to_string_lossy()))
            .collect();
        args.extend(self.project_args());
        progress(Progress::Running {
            line: format!("{} {}", ix.command, args.join(" ")),
            at: self.at.to_path_buf(),
        });
        let server_env = self
            .ws
            .config()
            .server(&self.planned.server)
            .map(|s| s.env.clone())
            .unwrap_or_default();
        let mut cmd = Command::new(self.program);
        // The call's environment, then the server's configured one, the
        // PATH cleaned (crate::env::for_child).
        self.ws.child_env(&server_env).apply(&mut cmd);
        cmd.args(&args)
            .current_dir(self.at)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        // In the background (no call decided it now), the workspace's trust
        // is what its files say at this moment: a run decided under a
        // configuration or trust no longer current is not started.
        let trusted = self.ws.config().trust.trust.is_trusted();
        if self.background && !self.ws.config_is_current() {
            return Err(STALE_CONFIG.to_string());
        }
        let started = Instant::now();
        // Its whole tree (build scripts, cargo, …) ends with the run or
        // with this process (crate::platform::indexer).
        let mut child = indexer::start(cmd, self.background)
            .map_err(|e| format!("cannot run {}: {e}", self.program.display()))?;
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
            if self.cancel.is_some_and(|c| c.load(Ordering::SeqCst)) {
                child.stop();
                let _ = std::fs::remove_file(out);
                return Err(format!("{} was stopped (scry is stopping)", ix.command));
            }
            // Trust revoked, or the configuration changed, while it runs
            // in the background: what it was started under no longer
            // stands.
            if self.background
                && (!self.ws.config_is_current()
                    || (trusted && !self.ws.config().trust.trust.is_trusted()))
            {
                child.stop();
                let _ = std::fs::remove_file(out);
                return Err(format!("{} was stopped: {STALE_CONFIG}", ix.command));
            }
            if started.elapsed() > self.timeout {
                child.stop();
                let _ = std::fs::remove_file(out);
                return Err(format!(
                    "{} ran over {} s and was stopped",
                    ix.command,
                    self.timeout.as_secs()
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
            let _ = std::fs::remove_file(out);
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
        Ok(self.out)
    }

    /// With `projectArgs` ([`Indexer::project_args`]): the projects below
    /// the root (directories holding one of its server's
    /// `projectRoot.projects` files), relative to it, when the root itself
    /// holds none.
    fn project_args(&self) -> Vec<String> {
        if !self.planned.indexer.project_args {
            return Vec::new();
        }
        let config = self.ws.config();
        let Some(spec) = config.server(&self.planned.server) else {
            return Vec::new();
        };
        let names = &spec.project_root.projects;
        if names.iter().any(|n| self.at.join(n).is_file()) {
            return Vec::new();
        }
        self.ws
            .layout()
            .holding(names)
            .into_iter()
            .filter(|d| scry_base::paths::is_under(d, self.at))
            .filter_map(|d| {
                let rel = d.strip_prefix(self.at).ok()?;
                // Never an option: a relative path that starts with `./`.
                Some(format!("./{}", rel.to_string_lossy()))
            })
            .collect()
    }
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
