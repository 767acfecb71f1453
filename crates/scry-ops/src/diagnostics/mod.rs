//! The `diagnostics` action: fresh diagnostics from language servers and
//! command-line linters, merged into one answer.
//!
//! 1. Targets (files, directories, globs, `*`) become files, walking with
//!    `.gitignore` respected; only files some provider serves are kept.
//! 2. Providers per file come from the configuration
//!    (`Config::providers_for` with linters): language servers (routed to
//!    their root; one session per server and root, shared with navigation)
//!    and CLI linters (whose root markers must be present).
//! 3. Every provider runs concurrently within the action's deadline:
//!    sessions sync the files from disk, send `didSave` for changed ones,
//!    and wait for diagnostics of exactly that content
//!    (`Session::wait_diagnostics`); linters run once per root ([`cli`]) and
//!    their output is parsed ([`parse`]).
//! 4. Positions become 1-based characters (with the text the server synced,
//!    or the disk for linters); [`merge`] deduplicates, orders, groups and
//!    caps.
//!
//! A file whose current diagnostics did not come in time is listed as
//! pending, never answered with older ones. [`delta`] builds the after-edit
//! API on the same collection.

pub mod changes;
pub mod cli;
pub mod delta;
pub mod merge;
pub mod parse;
pub mod target;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use scry_base::paths::{self, Unconfined};
use scry_base::walk::Walker;
use scry_lsp_session::{Encoding, LineIndex, LspPos, Session, WaitOptions};
use scry_workspace::catalog::{ProviderKind, ServerSpec};
use scry_workspace::roots::marker_root;
use scry_workspace::{Route, Workspace};
use serde_json::Value;
use tokio::time::Instant;

use crate::call::Ctx;
use crate::diagnostics::changes::ChangesBaseline;
use scry_model::error::OpError;
use scry_model::*;

pub use delta::DiagnosticsBaseline;
pub use merge::ReportParts;
pub use parse::Raw;
pub use target::{TargetKind, diagnostics_target};

/// How long publications must have stopped before push results count as
/// complete.
pub const QUIET_WINDOW: Duration = Duration::from_millis(400);

/// Diagnostics collected from every provider, not yet merged.
#[derive(Debug, Clone, Default)]
pub struct Collected {
    pub diagnostics: Vec<Diagnostic>,
    pub providers: Vec<ProviderRun>,
    pub pending: Vec<PendingFile>,
    pub files_checked: usize,
    pub notes: Vec<Reason>,
}

impl Collected {
    /// Files with at least one provider whose results are missing.
    pub fn pending_files(&self) -> HashSet<PathBuf> {
        self.pending.iter().map(|p| p.path.clone()).collect()
    }

    /// Providers that answered, in order.
    pub fn checked_by(&self) -> Vec<String> {
        self.providers
            .iter()
            .filter(|p| {
                matches!(
                    p.outcome,
                    ProviderOutcome::Checked | ProviderOutcome::Partial
                )
            })
            .map(|p| p.id.clone())
            .collect()
    }
}

/// Files to check, as expanded from targets.
#[derive(Debug, Clone)]
pub struct Targets {
    pub files: Vec<PathBuf>,
    /// `*`: the whole workspace.
    pub whole: bool,
    /// How to name what was checked (`src/`, `the workspace`, `a.py`).
    pub scope: String,
    pub notes: Vec<Reason>,
}

/// One provider's share of the work: a spec, its root (and, for a
/// server, what chose it) and files.
#[derive(Debug, Clone)]
struct Job {
    spec: ServerSpec,
    program: PathBuf,
    root: PathBuf,
    chosen: Option<scry_workspace::roots::Chosen>,
    files: Vec<PathBuf>,
}

/// What one job brought back.
struct JobResult {
    run: ProviderRun,
    diagnostics: Vec<Diagnostic>,
    pending: Vec<PendingFile>,
}

/// Walk `dir` for files some provider serves (the workspace walker:
/// `.gitignore` respected, hidden and skipped directories left out).
fn walk(ws: &Workspace, dir: &Path, out: &mut Vec<PathBuf>, glob: Option<&globset::GlobMatcher>) {
    let config = ws.config();
    let root = ws.root().to_path_buf();
    let any = |_: &ServerSpec| true;
    for p in Walker::new().files(dir) {
        if let Some(g) = glob {
            let rel = p.strip_prefix(&root).unwrap_or(&p);
            if !g.is_match(rel) {
                continue;
            }
        }
        if !config.providers_for(&p, true, &any).is_empty() {
            out.push(p);
        }
    }
}

/// Expand targets: files, directories, globs, `*` (empty: the
/// workspace). Paths must stay inside the workspace.
pub fn expand_targets(ws: &Workspace, targets: &[PathBuf]) -> Result<Targets, OpError> {
    let root = ws.root().to_path_buf();
    let mut files = Vec::new();
    let mut whole = false;
    let mut names = Vec::new();
    let targets: Vec<PathBuf> = if targets.is_empty() {
        vec![PathBuf::from("*")]
    } else {
        targets.to_vec()
    };
    for t in &targets {
        let s = t.to_string_lossy().to_string();
        let rel = t.strip_prefix(&root).map(Path::to_path_buf).ok();
        let kind = TargetKind::of(t);
        if matches!(kind, TargetKind::Whole | TargetKind::Here) || t == &root {
            whole = true;
            names.push("the workspace".to_string());
            walk(ws, &root, &mut files, None);
        } else if kind == TargetKind::Glob {
            // A glob is confined like a path: absolute elsewhere, or
            // climbing out with `..`, it is outside the workspace.
            let outside = || OpError::OutsideWorkspace {
                path: t.clone(),
                root: root.clone(),
            };
            let rel = match rel {
                Some(r) => r,
                None if t.is_absolute() => return Err(outside()),
                None => t.clone(),
            };
            let rel = paths::normalise_within(&rel).ok_or_else(outside)?;
            let pattern = rel.to_string_lossy().to_string();
            let glob = globset::Glob::new(&pattern)
                .map_err(|e| {
                    OpError::InvalidArgument(
                        scry_model::Fact::BadGlob {
                            glob: s.to_string(),
                            why: e.to_string(),
                        }
                        .message(),
                    )
                })?
                .compile_matcher();
            names.push(pattern);
            walk(ws, &root, &mut files, Some(&glob));
        } else {
            let outside = || OpError::OutsideWorkspace {
                path: t.clone(),
                root: root.clone(),
            };
            let canon = match paths::confine(&root, t) {
                Ok(c) if c.exists() => c,
                Ok(_) | Err(Unconfined::DanglingLink) => {
                    return Err(OpError::FileNotFound(t.clone()));
                }
                Err(Unconfined::Outside) => {
                    return Err(crate::call::special_link(&root, t).unwrap_or_else(outside));
                }
            };
            if canon.is_dir() {
                if canon == root {
                    whole = true;
                    names.push("the workspace".into());
                } else {
                    names.push(format!("{}/", paths::display(&canon, &root)));
                }
                walk(ws, &canon, &mut files, None);
            } else {
                // Never a FIFO, socket or device; never over the limit.
                scry_base::disk::check(&canon, ws.config().limits.max_file_bytes)?;
                names.push(paths::display(&canon, &root));
                files.push(canon);
            }
        }
    }
    let mut seen = HashSet::new();
    files.retain(|f| seen.insert(f.clone()));
    files.sort();
    let mut notes = Vec::new();
    let max = ws.config().limits.max_open_documents.max(1);
    if files.len() > max {
        notes.push(Reason::FilesCapped {
            checked: max,
            files: files.len(),
        });
        files.truncate(max);
    }
    names.dedup();
    let scope = if names.len() > 3 {
        format!("{} and {} more", names[..3].join(", "), names.len() - 3)
    } else {
        names.join(", ")
    };
    Ok(Targets {
        files,
        whole,
        scope,
        notes,
    })
}

/// The files whose names are not UTF-8, by the provider that would have
/// checked each first: every provider names files as text and cannot
/// open them.
type Unopened = BTreeMap<String, Vec<PathBuf>>;

/// Plan the jobs for `files`: (provider, root) → files. Providers that
/// apply but are not installed come back as runs; a file whose name is
/// not UTF-8 goes to no provider and comes back in [`Unopened`].
fn plan(ws: &Workspace, files: &[PathBuf]) -> (Vec<Job>, Vec<ProviderRun>, Unopened) {
    let config = ws.config();
    let root = ws.root().to_path_buf();
    let installed = |s: &ServerSpec| ws.installed(&s.command).is_some();
    let mut jobs: BTreeMap<(String, PathBuf), Job> = BTreeMap::new();
    let mut order: Vec<(String, PathBuf)> = Vec::new();
    let mut missing: BTreeMap<String, (String, usize)> = BTreeMap::new();
    // A server's root by the file's directory: chosen once per directory.
    let mut chosen_in: HashMap<(String, PathBuf), scry_workspace::roots::Chosen> = HashMap::new();
    let mut unopened = Unopened::new();
    for f in files {
        if !paths::text_below(&root, f) {
            if let Some(spec) = config.providers_for(f, true, &installed).first() {
                unopened.entry(spec.id.clone()).or_default().push(f.clone());
            }
            continue;
        }
        for spec in config.providers_for(f, true, &installed) {
            let (pr_root, chosen) = match spec.kind {
                ProviderKind::Lsp => {
                    let dir = f.parent().unwrap_or(f).to_path_buf();
                    let c = chosen_in
                        .entry((spec.id.clone(), dir))
                        .or_insert_with(|| ws.choose_root(spec, f))
                        .clone();
                    (c.root.clone(), Some(c))
                }
                ProviderKind::Cli => match marker_root(spec, f, &root) {
                    Some(r) => (r, None),
                    None => continue,
                },
            };
            let Some(program) = ws.installed(&spec.command) else {
                let kind = kind_name(spec.kind).to_string();
                missing.entry(spec.id.clone()).or_insert((kind, 0)).1 += 1;
                continue;
            };
            let key = (spec.id.clone(), pr_root.clone());
            let job = jobs.entry(key.clone()).or_insert_with(|| {
                order.push(key.clone());
                Job {
                    spec: spec.clone(),
                    program,
                    root: pr_root,
                    chosen,
                    files: Vec::new(),
                }
            });
            job.files.push(f.clone());
        }
    }
    let runs = missing
        .into_iter()
        .map(|(id, (kind, files))| ProviderRun {
            id,
            kind,
            outcome: ProviderOutcome::NotInstalled,
            files,
            detail: None,
            elapsed_ms: 0,
        })
        .collect();
    let jobs = order.into_iter().filter_map(|k| jobs.remove(&k)).collect();
    (jobs, runs, unopened)
}

/// Run every provider for `files` within `deadline`, concurrently.
pub async fn collect(
    ws: &Arc<Workspace>,
    files: &[PathBuf],
    whole: bool,
    deadline: Instant,
) -> Collected {
    let (jobs, mut runs, unopened) = plan(ws, files);
    let mut set = tokio::task::JoinSet::new();
    for job in jobs {
        let ws = ws.clone();
        let whole_root = whole.then(|| ws.root().to_path_buf());
        // In the calling client's environment (the daemon's servers are
        // keyed by it: see scry_workspace::env).
        set.spawn(scry_workspace::env::carry(async move {
            match job.spec.kind {
                ProviderKind::Lsp => lsp_job(ws, job, deadline, whole_root).await,
                ProviderKind::Cli => cli_job(&ws, job, deadline, whole_root).await,
            }
        }));
    }
    let mut diagnostics = Vec::new();
    let mut pending = Vec::new();
    let mut by_id: BTreeMap<String, ProviderRun> = BTreeMap::new();
    let mut order = Vec::new();
    while let Some(r) = set.join_next().await {
        let Ok(r) = r else { continue };
        diagnostics.extend(r.diagnostics);
        pending.extend(r.pending);
        match by_id.get_mut(&r.run.id) {
            Some(run) => {
                run.files += r.run.files;
                run.elapsed_ms = run.elapsed_ms.max(r.run.elapsed_ms);
                if outcome_rank(&r.run.outcome) > outcome_rank(&run.outcome) {
                    run.outcome = r.run.outcome;
                    run.detail = r.run.detail;
                }
            }
            None => {
                order.push(r.run.id.clone());
                by_id.insert(r.run.id.clone(), r.run);
            }
        }
    }
    order.sort();
    let mut providers: Vec<ProviderRun> = order
        .into_iter()
        .filter_map(|id| by_id.remove(&id))
        .collect();
    providers.append(&mut runs);
    Collected {
        diagnostics,
        providers,
        pending,
        files_checked: files.len(),
        notes: unopened
            .into_iter()
            .map(|(server, files)| Reason::NotUtf8Names {
                server,
                name: String::new(),
                files: files.len(),
                shown: files.into_iter().take(3).collect(),
            })
            .collect(),
    }
}

/// The `diagnostics` action, for the files of `t` (expanded from
/// `targets`, else `path`, as given); `baseline` is the session's for
/// `changes: true`.
pub(crate) async fn answer(
    cx: &Ctx,
    targets: &[PathBuf],
    path: Option<&Path>,
    severity: Option<SeverityFilter>,
    changes_only: bool,
    t: Targets,
    baseline: &Mutex<ChangesBaseline>,
) -> Result<Answer, OpError> {
    let mut collected = collect(&cx.ws, &t.files, t.whole, cx.deadline).await;
    collected.notes.extend(t.notes);
    let limits = cx.ws.config().limits;
    let checked_by = collected.checked_by();
    let mut changes = None;
    if changes_only {
        let (new, summary) = changes_since_last(baseline, &t.files, &collected, severity);
        collected.diagnostics = new;
        changes = Some(summary);
    }
    let mut report = merge::report(
        collected.diagnostics,
        ReportParts {
            scope: t.scope,
            filter: severity.unwrap_or_default(),
            cap: limits.max_diagnostics,
            files_checked: collected.files_checked,
            providers: collected.providers,
            pending: collected.pending,
        },
    );
    let question = Question {
        path: path.map(|p| {
            if p.is_absolute() {
                p.to_path_buf()
            } else {
                cx.ws.root().join(p)
            }
        }),
        query: (!targets.is_empty()).then(|| {
            targets
                .iter()
                .map(|t| match t.strip_prefix(cx.ws.root()) {
                    Ok(_) => paths::display(t, cx.ws.root()),
                    Err(_) => t.to_string_lossy().into_owned(),
                })
                .collect::<Vec<_>>()
                .join(" ")
        }),
        ..Question::default()
    };
    report.changes = changes;
    let mut answer = Answer::new(Action::Diagnostics, question, Body::Diagnostics(report));
    answer.server = Some(checked_by.join(", ")).filter(|s| !s.is_empty());
    answer.notes = collected.notes;
    // Files no provider could open: what was checked is not all there is.
    if let Some(i) = answer
        .notes
        .iter()
        .position(|n| matches!(n, Reason::NotUtf8Names { .. }))
    {
        answer.partial = Some(answer.notes.remove(i));
    }
    Ok(answer)
}

fn kind_name(k: ProviderKind) -> &'static str {
    match k {
        ProviderKind::Lsp => "lsp",
        ProviderKind::Cli => "cli",
    }
}

fn outcome_rank(o: &ProviderOutcome) -> u8 {
    match o {
        ProviderOutcome::Checked => 0,
        ProviderOutcome::Partial => 1,
        ProviderOutcome::NotInstalled => 2,
        ProviderOutcome::TimedOut => 3,
        ProviderOutcome::Failed => 4,
    }
}

fn elapsed_ms(start: Instant) -> u64 {
    start.elapsed().as_millis() as u64
}

fn failed(job: &Job, outcome: ProviderOutcome, detail: String, start: Instant) -> JobResult {
    JobResult {
        pending: job
            .files
            .iter()
            .map(|f| PendingFile {
                path: f.clone(),
                provider: job.spec.id.clone(),
                reason: detail.clone(),
            })
            .collect(),
        run: ProviderRun {
            id: job.spec.id.clone(),
            kind: kind_name(job.spec.kind).into(),
            outcome,
            files: job.files.len(),
            detail: Some(detail),
            elapsed_ms: elapsed_ms(start),
        },
        diagnostics: Vec::new(),
    }
}

/// A raw diagnostic to the model: 1-based characters, the source line, the
/// message compacted.
pub fn convert_raw(r: &Raw, index: Option<&LineIndex>, provider: &str) -> Diagnostic {
    let to_char = |line: u32, col: u32| match index {
        Some(ix) => {
            let c = ix.from_lsp(
                LspPos {
                    line,
                    character: col,
                },
                r.unit,
            );
            (c.line, c.col)
        }
        None => (line, col),
    };
    let (l, c) = to_char(r.line, r.col);
    let (el, ec) = to_char(r.end_line, r.end_col);
    let source = r
        .source
        .clone()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| provider.to_string());
    Diagnostic {
        loc: Loc {
            path: r.path.clone(),
            line: l + 1,
            col: c + 1,
            end_line: el + 1,
            end_col: ec + 1,
            text: index.and_then(|ix| crate::convert::line_text(ix, l, c)),
        },
        severity: r.severity,
        code: r.code.clone(),
        source,
        provider: provider.to_string(),
        message: merge::compact(&r.message, merge::MAX_MESSAGE),
    }
}

/// An LSP `Diagnostic` object to a raw one.
pub fn raw_from_lsp(path: &Path, v: &Value, unit: Encoding) -> Option<Raw> {
    let range = &v["range"];
    let n = |x: &Value| x.as_u64().map(|n| n as u32);
    let line = n(&range["start"]["line"])?;
    let col = n(&range["start"]["character"]).unwrap_or(0);
    let code = match &v["code"] {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    Some(Raw {
        path: path.to_path_buf(),
        line,
        col,
        end_line: n(&range["end"]["line"]).unwrap_or(line),
        end_col: n(&range["end"]["character"]).unwrap_or(col),
        unit,
        severity: Severity::from_lsp(v["severity"].as_u64()),
        code,
        source: v["source"].as_str().map(str::to_string),
        message: v["message"].as_str().unwrap_or("").to_string(),
    })
}

async fn lsp_job(
    ws: Arc<Workspace>,
    job: Job,
    deadline: Instant,
    whole_root: Option<PathBuf>,
) -> JobResult {
    let start = Instant::now();
    let id = job.spec.id.clone();
    let chosen = job.chosen.clone();
    let route = Route {
        spec: job.spec.clone(),
        program: job.program.clone(),
        root: job.root.clone(),
        language_id: job.spec.language_id.clone().unwrap_or_default(),
        why: chosen
            .as_ref()
            .map_or(scry_model::RootChoice::NoMarker, |c| c.why.clone()),
        members: chosen.map(|c| c.members).unwrap_or_default(),
    };
    let session = match tokio::time::timeout_at(deadline, ws.session(&route)).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => return failed(&job, ProviderOutcome::Failed, e.to_string(), start),
        Err(_) => {
            return failed(
                &job,
                ProviderOutcome::TimedOut,
                format!("{id} did not finish starting in time"),
                start,
            );
        }
    };
    // What the server had before this call: a file whose content changes
    // now (here or in the re-check of open documents) gets `didSave`.
    let mut before = HashMap::new();
    for f in &job.files {
        before.insert(f.clone(), session.synced(f).await);
    }
    // Files changed outside scry that no server has open: announced first.
    ws.announce_changes(&[]).await;
    if let Err(e) = session.sync_open_documents().await {
        return failed(&job, ProviderOutcome::Failed, e.to_string(), start);
    }
    // Sync every file first (the server works on them together), then save
    // the changed ones for servers that check on save.
    let mut synced = Vec::new();
    let mut pending = Vec::new();
    let mut saved = HashSet::new();
    for f in &job.files {
        match session.sync_file(f, &job.spec.language_id_for(f)).await {
            Ok(_) => {
                let after = session.synced(f).await;
                let was = before.get(f).cloned().flatten();
                if was != after && session.did_save(f).await.unwrap_or(false) {
                    saved.insert(f.clone());
                }
                synced.push(f.clone());
            }
            Err(e) if e.is_crash() => {
                return failed(&job, ProviderOutcome::Failed, e.to_string(), start);
            }
            Err(e) => pending.push(PendingFile {
                path: f.clone(),
                provider: id.clone(),
                reason: e.to_string(),
            }),
        }
    }
    let unit = session.encoding();
    let mut diagnostics = Vec::new();
    let mut fresh_files = 0;
    for f in &synced {
        let opts = WaitOptions {
            quiet: QUIET_WINDOW,
            saved: saved.contains(f),
        };
        let got = session.wait_diagnostics(f, deadline, opts).await;
        tracing::debug!(server = %id, path = %f.display(), waited_ms = got.waited.as_millis() as u64, fresh = got.fresh, pulled = got.pulled, n = got.items.len(), "diagnostics");
        if !got.fresh {
            pending.push(PendingFile {
                path: f.clone(),
                provider: id.clone(),
                reason: got.pending.unwrap_or_else(|| "no result in time".into()),
            });
            continue;
        }
        if let Some(why) = got.pending {
            pending.push(PendingFile {
                path: f.clone(),
                provider: id.clone(),
                reason: format!("{why}; more may follow"),
            });
        }
        fresh_files += 1;
        let index = session.document(f).await;
        diagnostics.extend(
            got.items
                .iter()
                .filter_map(|v| raw_from_lsp(f, v, unit))
                .map(|r| convert_raw(&r, index.as_deref(), &id)),
        );
    }
    if let Some(ws_root) = whole_root {
        workspace_pull(&session, &job, &ws_root, deadline, &mut diagnostics).await;
    }
    let outcome = if pending.is_empty() {
        ProviderOutcome::Checked
    } else if fresh_files > 0 {
        ProviderOutcome::Partial
    } else {
        ProviderOutcome::TimedOut
    };
    let detail = (!pending.is_empty()).then(|| pending[0].reason.clone());
    JobResult {
        run: ProviderRun {
            id,
            kind: "lsp".into(),
            outcome,
            files: job.files.len(),
            detail,
            elapsed_ms: elapsed_ms(start),
        },
        diagnostics,
        pending,
    }
}

/// `workspace/diagnostic` for `*`: reports for workspace files the job did
/// not open itself (beyond the file cap), where the server supports it.
/// Documents scry has open are covered by the per-file wait; the others are
/// as the disk holds them, which is what the server analysed.
async fn workspace_pull(
    session: &Session,
    job: &Job,
    ws_root: &Path,
    deadline: Instant,
    out: &mut Vec<Diagnostic>,
) {
    if !session.pulls_workspace_diagnostics() {
        return;
    }
    let Some(reports) = session.pull_workspace_diagnostics(deadline).await else {
        return;
    };
    let ours: HashSet<&PathBuf> = job.files.iter().collect();
    let unit = session.encoding();
    for (path, _version, items) in reports {
        if ours.contains(&path)
            || !path.starts_with(ws_root)
            || session.synced(&path).await.is_some()
        {
            continue;
        }
        let index = read_index(&path);
        out.extend(
            items
                .iter()
                .filter_map(|v| raw_from_lsp(&path, v, unit))
                .map(|r| convert_raw(&r, index.as_ref(), session.name())),
        );
    }
}

async fn cli_job(
    ws: &Workspace,
    job: Job,
    deadline: Instant,
    whole_root: Option<PathBuf>,
) -> JobResult {
    let start = Instant::now();
    let id = job.spec.id.clone();
    let workspace_mode = job.spec.mode.as_deref() == Some("workspace");
    let files = cli::file_args(&job.files, &job.root);
    let args = cli::expand_args(&job.spec.args, &files, workspace_mode);
    // The calling client's variables, then the linter's configured ones,
    // the PATH cleaned (scry_workspace::env::for_child).
    let env = ws.child_env(&job.spec.env);
    let parser = job.spec.parser.clone().unwrap_or_else(|| "generic".into());
    let out = match cli::run(&job.program, &args, &env, &job.root, deadline).await {
        Ok(o) => o,
        Err(cli::CliError::Spawn(e)) => return failed(&job, ProviderOutcome::Failed, e, start),
        Err(cli::CliError::Timeout(t)) => {
            return failed(
                &job,
                ProviderOutcome::TimedOut,
                format!(
                    "{id} did not finish within the time budget ({} ms); it was stopped",
                    t.as_millis()
                ),
                start,
            );
        }
    };
    let parsed = if out.truncated {
        Err(format!(
            "output over {} MiB; not parsed",
            cli::MAX_OUTPUT / (1024 * 1024)
        ))
    } else if out.stdout.trim().is_empty() && out.exit_code == Some(0) {
        Ok(Vec::new())
    } else {
        parse::parse(&parser, &out.stdout, &job.root)
    };
    let raws = match parsed {
        Ok(r) => r,
        Err(e) => {
            let mut detail = format!("{id}: {e}");
            if let Some(c) = out.exit_code.filter(|c| *c != 0) {
                detail.push_str(&format!(" (exit status {c})"));
            }
            if !out.stderr_tail.is_empty() {
                detail.push_str(&format!("; stderr: {}", out.stderr_tail));
            }
            return failed(&job, ProviderOutcome::Failed, detail, start);
        }
    };
    // Workspace-mode linters report on everything: keep what was asked.
    let wanted: HashSet<&PathBuf> = job.files.iter().collect();
    let mut cache: HashMap<PathBuf, Option<LineIndex>> = HashMap::new();
    let mut diagnostics = Vec::new();
    for r in raws {
        let path = normalise_path(&r.path);
        let keep = wanted.contains(&path)
            || (workspace_mode && whole_root.as_ref().is_some_and(|w| path.starts_with(w)));
        if !keep {
            continue;
        }
        let index = cache
            .entry(path.clone())
            .or_insert_with(|| read_index(&path));
        let mut r = r;
        r.path = path;
        diagnostics.push(convert_raw(&r, index.as_ref(), &id));
    }
    JobResult {
        run: ProviderRun {
            id,
            kind: "cli".into(),
            outcome: ProviderOutcome::Checked,
            files: job.files.len(),
            detail: None,
            elapsed_ms: elapsed_ms(start),
        },
        diagnostics,
        pending: Vec::new(),
    }
}

/// Canonical when it exists (linters print paths as they like), else
/// lexically cleaned.
fn normalise_path(p: &Path) -> PathBuf {
    paths::canonical(p).unwrap_or_else(|_| paths::normalise(p))
}

/// `changes: true`: the new diagnostics of the checked (not pending)
/// files since the session's previous check of them; updates the baseline.
fn changes_since_last(
    changes: &Mutex<ChangesBaseline>,
    files: &[PathBuf],
    collected: &Collected,
    severity: Option<SeverityFilter>,
) -> (Vec<Diagnostic>, scry_model::ChangesSummary) {
    let pending = collected.pending_files();
    let mut checked: Vec<PathBuf> = files
        .iter()
        .filter(|f| !pending.contains(*f))
        .cloned()
        .collect();
    for d in &collected.diagnostics {
        if !pending.contains(&d.loc.path) && !checked.contains(&d.loc.path) {
            checked.push(d.loc.path.clone());
        }
    }
    let now = merge::dedup(collected.diagnostics.clone());
    let mut baseline = changes.lock().unwrap_or_else(|e| e.into_inner());
    baseline.update(&checked, &now, severity.unwrap_or_default())
}

/// A file's text for diagnostics' source lines, through the one safe reader
/// (a file over the default limit gets no source lines).
fn read_index(path: &Path) -> Option<LineIndex> {
    scry_base::disk::read_text(path, scry_base::disk::DEFAULT_MAX_FILE_BYTES)
        .ok()
        .flatten()
        .map(LineIndex::new)
}
